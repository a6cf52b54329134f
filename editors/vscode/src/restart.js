// @ts-check
// When to restart a server that died: always, unless it died too often lately (then it is
// probably broken, not unlucky, and restarting it again would loop). No `vscode` import.
//
//   const policy = new RestartPolicy({ maxRestarts: 5, windowMs: 3 * 60_000 });
//   policy.crashed()   // => { restart: true, crashes: 1 } ... the 6th within 3 minutes: restart: false

"use strict";

class RestartPolicy {
  /**
   * @param {{ maxRestarts?: number, windowMs?: number, now?: () => number }} [options]
   */
  constructor(options = {}) {
    this.maxRestarts = options.maxRestarts ?? 5;
    this.windowMs = options.windowMs ?? 3 * 60 * 1000;
    this.now = options.now ?? Date.now;
    /** @type {number[]} times of the crashes still inside the window */
    this.crashes = [];
  }

  /**
   * Records a crash and says whether to restart.
   * @returns {{ restart: boolean, crashes: number }} crashes: how many inside the window, this one included
   */
  crashed() {
    const t = this.now();
    this.crashes = this.crashes.filter((c) => t - c < this.windowMs);
    this.crashes.push(t);
    return { restart: this.crashes.length <= this.maxRestarts, crashes: this.crashes.length };
  }

  /** Forgets past crashes: the user restarted the server or changed its settings. */
  reset() {
    this.crashes = [];
  }
}

module.exports = { RestartPolicy };
