// @ts-check
// How to reach the language server, from the `tapir.server.*` settings. No `vscode` import, so
// that node's own test runner can check it (test/launch.test.js).
//
//   serverLaunch({ path: "tapir", args: [], env: {}, tcpPort: null },
//                { workspaceFolder: "/home/me/app", homedir: "/home/me", env: process.env })
//   // => { kind: "process", command: "tapir", args: ["lsp"], cwd: "/home/me/app", env: {...} }

"use strict";

const fs = require("fs");
const path = require("path");

/**
 * @typedef {{ path?: unknown, args?: unknown, env?: unknown, tcpPort?: unknown }} ServerSettings
 * @typedef {{ workspaceFolder?: string, homedir: string, env: Record<string, string | undefined> }} LaunchContext
 * @typedef {{ kind: "process", command: string, args: string[], cwd?: string, env: Record<string, string> }} ProcessLaunch
 * @typedef {{ kind: "tcp", host: string, port: number }} TcpLaunch
 */

/** A setting the server cannot be started with; the message names the setting. */
class SettingsError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "SettingsError";
  }
}

/**
 * Expands `~` (leading), `${userHome}`, `${workspaceFolder}` and `${env:NAME}` in one setting value.
 * @param {string} value
 * @param {LaunchContext} ctx
 * @param {string} setting the setting's name, for the error message
 * @returns {string}
 */
function expand(value, ctx, setting) {
  let out = value.replace(/\$\{(userHome|workspaceFolder|env:([^}]*))\}/g, (_all, name, envName) => {
    if (name === "userHome") return ctx.homedir;
    if (name === "workspaceFolder") {
      if (!ctx.workspaceFolder) {
        throw new SettingsError(`${setting} uses \${workspaceFolder}, but no folder is open`);
      }
      return ctx.workspaceFolder;
    }
    return ctx.env[envName] ?? "";
  });
  if (out === "~" || out.startsWith("~/") || out.startsWith("~\\")) out = ctx.homedir + out.slice(1);
  return out;
}

/**
 * The executable to run: a bare name is looked up on PATH by the system; a relative path with a
 * directory part (`.venv/bin/tapir`) is taken from the first workspace folder.
 * @param {unknown} raw
 * @param {LaunchContext} ctx
 */
function resolveCommand(raw, ctx) {
  if (raw !== undefined && raw !== null && typeof raw !== "string") {
    throw new SettingsError(`tapir.server.path must be a string, not ${JSON.stringify(raw)}`);
  }
  const value = expand((raw ?? "").trim() || "tapir", ctx, "tapir.server.path");
  const hasDirectory = value.includes("/") || value.includes("\\");
  if (!hasDirectory || path.isAbsolute(value)) return value;
  if (!ctx.workspaceFolder) {
    throw new SettingsError(`tapir.server.path '${value}' is relative, but no folder is open to resolve it in`);
  }
  return path.resolve(ctx.workspaceFolder, value);
}

/**
 * @param {ServerSettings} settings the `tapir.server` section
 * @param {LaunchContext} ctx
 * @returns {ProcessLaunch | TcpLaunch}
 */
function serverLaunch(settings, ctx) {
  const port = settings.tcpPort;
  if (port !== undefined && port !== null) {
    if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) {
      throw new SettingsError(`tapir.server.tcpPort must be a port number from 1 to 65535, not ${JSON.stringify(port)}`);
    }
    return { kind: "tcp", host: "127.0.0.1", port };
  }
  const rawArgs = settings.args ?? [];
  if (!Array.isArray(rawArgs) || !rawArgs.every((a) => typeof a === "string")) {
    throw new SettingsError(`tapir.server.args must be a list of strings, not ${JSON.stringify(rawArgs)}`);
  }
  const rawEnv = settings.env ?? {};
  if (typeof rawEnv !== "object" || Array.isArray(rawEnv) || rawEnv === null) {
    throw new SettingsError(`tapir.server.env must be an object of strings, not ${JSON.stringify(rawEnv)}`);
  }
  /** @type {Record<string, string>} */
  const env = {};
  for (const [k, v] of Object.entries(ctx.env)) if (v !== undefined) env[k] = v;
  for (const [k, v] of Object.entries(rawEnv)) {
    if (typeof v !== "string") {
      throw new SettingsError(`tapir.server.env.${k} must be a string, not ${JSON.stringify(v)}`);
    }
    env[k] = expand(v, ctx, `tapir.server.env.${k}`);
  }
  return {
    kind: "process",
    command: resolveCommand(settings.path, ctx),
    args: ["lsp", ...rawArgs.map((a) => expand(a, ctx, "tapir.server.args"))],
    cwd: ctx.workspaceFolder,
    env,
  };
}

/**
 * Where the system would find `command`, or undefined: a path is checked as it is, a bare name
 * on PATH (with PATHEXT's extensions on Windows). Checked before starting, so that a missing
 * executable gets one clear message instead of the client's generic "couldn't create connection".
 * @param {string} command
 * @param {Record<string, string | undefined>} env
 * @param {NodeJS.Platform} [platform]
 * @returns {string | undefined}
 */
function findExecutable(command, env, platform = process.platform) {
  const windows = platform === "win32";
  const extensions = windows ? ["", ...(env.PATHEXT ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean)] : [""];
  const runnable = (/** @type {string} */ file) => {
    try {
      if (!fs.statSync(file).isFile()) return false;
      if (!windows) fs.accessSync(file, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  const candidates = (/** @type {string} */ base) => extensions.map((ext) => base + ext);
  if (command.includes("/") || (windows && command.includes("\\"))) {
    return candidates(command).find(runnable);
  }
  for (const dir of (env.PATH ?? env.Path ?? "").split(windows ? ";" : ":")) {
    if (!dir) continue;
    const found = candidates(path.join(dir, command)).find(runnable);
    if (found) return found;
  }
  return undefined;
}

/**
 * What to tell the user when the server could not be started at all.
 * @param {unknown} error what `LanguageClient.start()` rejected with
 * @param {ProcessLaunch | TcpLaunch} launch
 * @returns {string}
 */
function describeStartFailure(error, launch) {
  const code = /** @type {{ code?: unknown }} */ (error ?? {}).code;
  const text = error instanceof Error ? error.message : String(error);
  if (launch.kind === "tcp") {
    if (code === "ECONNREFUSED" || /ECONNREFUSED/.test(text)) {
      return `Nothing is listening on port ${launch.port}: start the server with \`tapir lsp --tcp ${launch.port}\`, or clear tapir.server.tcpPort to let VS Code start it.`;
    }
    return `Could not connect to the Tapir language server on port ${launch.port}: ${text}`;
  }
  if (code === "ENOENT" || /\bENOENT\b/.test(text)) {
    return `The Tapir executable '${launch.command}' was not found. Install Tapir where VS Code can find it (\`python3 -m pip install -e .\` in the Tapir repository), or set tapir.server.path to the executable, e.g. .venv/bin/tapir.`;
  }
  if (code === "EACCES" || /\bEACCES\b/.test(text)) {
    return `'${launch.command}' cannot be run (permission denied): check tapir.server.path.`;
  }
  return `The Tapir language server (${[launch.command, ...launch.args].join(" ")}) did not start: ${text}`;
}

module.exports = { SettingsError, serverLaunch, describeStartFailure, expand, findExecutable };
