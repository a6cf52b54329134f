// @ts-check
// The Tapir extension: the language itself (id, configuration, grammar) is declared in
// package.json; this file starts `tapir lsp` over stdio (or connects to `tapir lsp --tcp PORT`)
// with vscode-languageclient, restarts it when it dies (unless it keeps dying), and restarts it
// when its settings change. Bundled into dist/extension.js by esbuild (`npm run bundle`).

"use strict";

const net = require("net");
const os = require("os");
const vscode = require("vscode");
const {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  State,
} = require("vscode-languageclient/node");
const { describeStartFailure, findExecutable, serverLaunch, SettingsError } = require("./launch");
const { RestartPolicy } = require("./restart");

const CLIENT_ID = "tapir"; // also the prefix of `tapir.trace.server`, read by the client itself
const STOP_TIMEOUT_MS = 2000;

/** @type {vscode.LogOutputChannel} */
let output;
/** @type {vscode.LanguageStatusItem} */
let status;
/** @type {LanguageClient | undefined} */
let client;
/** Starts, stops and restarts run one at a time, in the order asked. */
let queue = Promise.resolve();
const policy = new RestartPolicy();

/** @param {vscode.ExtensionContext} context */
function activate(context) {
  output = vscode.window.createOutputChannel("Tapir", { log: true });
  status = vscode.languages.createLanguageStatusItem("tapir.server", { language: "tapir" });
  status.name = "Tapir language server";
  context.subscriptions.push(
    output,
    status,
    vscode.commands.registerCommand("tapir.restartServer", () => {
      policy.reset();
      return schedule(start);
    }),
    vscode.commands.registerCommand("tapir.showOutput", () => output.show(true)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("tapir.server")) {
        output.info("tapir.server settings changed: restarting the server");
        policy.reset();
        schedule(start);
      }
    }),
  );
  // Not awaited: activation should not wait for a server that may take its time (or hang).
  void schedule(start);
}

function deactivate() {
  return schedule(stop);
}

/**
 * @param {() => Promise<void>} job
 * @returns {Promise<void>}
 */
function schedule(job) {
  queue = queue.then(job, job);
  return queue;
}

/** @param {string} text @param {vscode.LanguageStatusSeverity} severity @param {vscode.Command} [command] */
function showStatus(text, severity, command) {
  status.text = text;
  status.severity = severity;
  status.command = command;
}

async function stop() {
  const old = client;
  client = undefined;
  if (!old) return;
  try {
    if (old.state !== State.Stopped) await old.stop(STOP_TIMEOUT_MS);
  } catch (err) {
    output.warn(`stopping the server: ${err}`);
  }
  await old.dispose(STOP_TIMEOUT_MS).catch(() => undefined);
}

/** (Re)starts the client with the current settings. */
async function start() {
  await stop();
  const config = vscode.workspace.getConfiguration("tapir.server");
  if (!config.get("enabled", true)) {
    showStatus("Tapir: server off", vscode.LanguageStatusSeverity.Information);
    output.info("tapir.server.enabled is false: not starting the server");
    return;
  }
  const folder = vscode.workspace.workspaceFolders?.[0];
  let launch;
  try {
    launch = serverLaunch(
      { path: config.get("path"), args: config.get("args"), env: config.get("env"), tcpPort: config.get("tcpPort") },
      { workspaceFolder: folder?.uri.scheme === "file" ? folder.uri.fsPath : undefined, homedir: os.homedir(), env: process.env },
    );
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    failed(err.message);
    return;
  }

  /** @type {import("vscode-languageclient/node").ServerOptions} */
  let serverOptions;
  if (launch.kind === "tcp") {
    const { host, port } = launch;
    output.info(`connecting to the server on ${host}:${port}`);
    // The first connection is made here, so that nothing listening gets one clear message
    // instead of the client's generic one; the Restart command connects again.
    /** @type {net.Socket | undefined} */
    let first;
    try {
      first = await connect(host, port);
    } catch (err) {
      failed(describeStartFailure(err, launch));
      return;
    }
    serverOptions = async () => {
      const socket = first ?? (await connect(host, port));
      first = undefined;
      return { reader: socket, writer: socket };
    };
  } else {
    if (!findExecutable(launch.command, launch.env)) {
      failed(describeStartFailure(Object.assign(new Error("not found"), { code: "ENOENT" }), launch));
      return;
    }
    output.info(`starting ${[launch.command, ...launch.args].join(" ")}${launch.cwd ? ` in ${launch.cwd}` : ""}`);
    // No `transport`: with TransportKind.stdio the client would append `--stdio` to the
    // arguments, and `tapir lsp` speaks stdio without being asked.
    serverOptions = { command: launch.command, args: launch.args, options: { cwd: launch.cwd, env: launch.env } };
  }

  const next = new LanguageClient(CLIENT_ID, "Tapir language server", serverOptions, {
    documentSelector: [
      { scheme: "file", language: "tapir" },
      { scheme: "untitled", language: "tapir" },
    ],
    // The server re-checks the scripts that use an app document or tapir.toml when it changes.
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/{*.yaml,*.yml,*.json,tapir.toml}") },
    outputChannel: output,
    // Failures get one message of ours with buttons (see `failed`); the log stays in the channel.
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    errorHandler: {
      error: (_error, _message, count) => ({ action: count && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown }),
      closed: () => {
        if (launch.kind === "tcp") {
          // Not ours to restart: the user started it (and a pygls server serves one connection).
          failed(`The Tapir language server on port ${launch.port} closed the connection.`);
          return { action: CloseAction.DoNotRestart, handled: true };
        }
        const decision = policy.crashed();
        if (decision.restart) {
          output.warn(`the server stopped unexpectedly (${decision.crashes} recently): restarting it`);
          showStatus("Tapir: restarting", vscode.LanguageStatusSeverity.Warning);
          return { action: CloseAction.Restart, handled: true };
        }
        failed(`The Tapir language server stopped ${decision.crashes} times in a few minutes and will not be restarted.`);
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    },
  });
  next.onDidChangeState(({ newState }) => {
    if (newState === State.Running) {
      showStatus("Tapir: ready", vscode.LanguageStatusSeverity.Information, {
        title: "Restart",
        command: "tapir.restartServer",
      });
    } else if (newState === State.Starting) {
      showStatus("Tapir: starting", vscode.LanguageStatusSeverity.Information);
    }
  });
  client = next;
  try {
    await next.start();
  } catch (err) {
    failed(describeStartFailure(err, launch));
  }
}

/**
 * @param {string} host
 * @param {number} port
 * @returns {Promise<net.Socket>}
 */
function connect(host, port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port }, () => {
      socket.off("error", reject);
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

/** Tells the user that the server is not running and offers what can fix it. @param {string} message */
function failed(message) {
  output.error(message);
  showStatus("Tapir: server stopped", vscode.LanguageStatusSeverity.Error, {
    title: "Restart",
    command: "tapir.restartServer",
  });
  void vscode.window.showErrorMessage(message, "Restart", "Open Settings", "Show Output").then((choice) => {
    if (choice === "Restart") vscode.commands.executeCommand("tapir.restartServer");
    else if (choice === "Open Settings") vscode.commands.executeCommand("workbench.action.openSettings", "tapir.server");
    else if (choice === "Show Output") output.show(true);
  });
}

module.exports = { activate, deactivate };
