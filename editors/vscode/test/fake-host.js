#!/usr/bin/env node
// Runs the packaged extension (dist/extension.js) in plain node against test/fake-vscode.js and
// a real language server process, and reports what a user would have seen, as JSON on stdout.
//
//   node test/fake-host.js SCENARIO < request.json
//   request: {"extension": "path/to/extension/folder", "workspace": "/dir", "settings": {...},
//             "document": {"path": "/dir/a.tap", "text": "..."}, "serverLog": "/tmp/log.jsonl"}
//   SCENARIO: lifecycle | fails-to-start | disabled | tcp
//
// The server's own log (one JSON line per start: pid, arguments, cwd) is how the host finds the
// process to kill; tests/lsp_stub_server.py writes it.

"use strict";

const fs = require("fs");
const Module = require("module");
const path = require("path");

const FAKE = path.join(__dirname, "fake-vscode.js");
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === "vscode" ? FAKE : resolve.call(this, request, ...rest);
};
const vscode = require("vscode");
const { state, events, loadDefaults, changeSettings, openDocument, Uri } = vscode.__test;

const request = JSON.parse(fs.readFileSync(0, "utf8"));
const report = { steps: [] };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, predicate, timeoutMs = 20000) {
  const start = Date.now();
  while (Date.now() - start < timeoutMs) {
    if (predicate()) return true;
    await sleep(25);
  }
  throw new Error(`timed out waiting for ${what}; status ${JSON.stringify(status())}; output:\n${state.output.slice(-15).join("\n")}`);
}

const status = () => (state.statusItems[0] ? { text: state.statusItems[0].text, severity: state.statusItems[0].severity } : null);
const starts = () =>
  fs.existsSync(request.serverLog)
    ? fs.readFileSync(request.serverLog, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
    : [];
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const diagnosticsOf = (doc) => state.diagnostics.get(doc.uri.toString()) || [];
function step(name, extra = {}) {
  report.steps.push({ name, status: status(), starts: starts().length, messages: state.messages.length, ...extra });
}

async function main() {
  const scenario = process.argv[2];
  loadDefaults(path.join(request.extension, "package.json"));
  Object.assign(state.settings, request.settings || {});
  state.workspaceFolders = [{ uri: Uri.file(request.workspace), name: "ws", index: 0 }];
  const extension = require(path.join(request.extension, "dist", "extension.js"));
  const context = { subscriptions: [], extensionPath: request.extension };

  extension.activate(context);
  if (scenario === "fails-to-start") {
    await until("the failure to be shown", () => status()?.text === "Tapir: server stopped" && state.messages.length > 0);
    await sleep(300); // time for a second message, which should not come
    step("activated");
  } else if (scenario === "disabled") {
    await until("the server to be off", () => status()?.text === "Tapir: server off");
    await sleep(300);
    step("activated");
  } else if (scenario === "lifecycle" || scenario === "tcp") {
    await until("the server to be ready", () => status()?.text === "Tapir: ready");
    step("ready");
    const doc = openDocument(request.document.path, request.document.text);
    await until("diagnostics", () => diagnosticsOf(doc).length > 0);
    step("diagnostics", { diagnostics: diagnosticsOf(doc) });

    if (scenario === "lifecycle") {
      // The server dies: it is started again and gets the open document again.
      for (let crash = 1; crash <= 6; crash++) {
        const before = starts();
        const victim = before[before.length - 1].pid;
        state.diagnostics.clear();
        process.kill(victim, "SIGKILL");
        if (crash <= 5) {
          await until(`restart ${crash}`, () => starts().length === before.length + 1 && status()?.text === "Tapir: ready");
          await until(`diagnostics after restart ${crash}`, () => diagnosticsOf(doc).length > 0);
          step(`restarted after crash ${crash}`, { diagnostics: diagnosticsOf(doc).length });
        } else {
          await until("giving up", () => status()?.text === "Tapir: server stopped");
          await sleep(1000); // long enough for a restart that should not happen
          step("gave up", { lastMessage: state.messages[state.messages.length - 1] });
        }
      }
      // The user clicks Restart.
      await vscode.commands.executeCommand("tapir.restartServer");
      await until("ready after the restart command", () => status()?.text === "Tapir: ready");
      step("restarted by command");
      // A settings change restarts the server with the new settings.
      const before = starts().length;
      changeSettings({ "tapir.server.args": ["--changed"] });
      await until("a start with the new arguments", () => starts().length === before + 1);
      await until("ready after the settings change", () => status()?.text === "Tapir: ready");
      step("restarted for new settings", { argv: starts()[before].argv });
      // An unrelated setting changes nothing.
      changeSettings({ "editor.fontSize": 20 });
      await sleep(500);
      step("unrelated setting");
    }
    if (scenario === "tcp") {
      // The user's server goes away: the client says so and does not try to start one.
      process.kill(starts()[0].pid, "SIGKILL");
      await until("the client to notice", () => status()?.text === "Tapir: server stopped");
      step("server gone", { lastMessage: state.messages[state.messages.length - 1] });
    }
    const last = starts()[starts().length - 1];
    await extension.deactivate();
    if (scenario === "lifecycle") await until("the server to exit after deactivate", () => !alive(last.pid), 5000);
    step("deactivated", { serverAlive: alive(last.pid) });
  } else {
    throw new Error(`unknown scenario ${scenario}`);
  }
  report.messages = state.messages;
  report.starts = starts();
  report.output = state.output;
  process.stdout.write(JSON.stringify(report));
  // The client may keep timers alive (a server that is being killed); the report is complete.
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.stdout.write(JSON.stringify({ ...report, error: String(err.stack || err), output: state.output }));
  process.exit(1);
});

void events;
