// Unit tests of src/launch.js and src/restart.js (no VS Code needed): `npm test`.
"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { test } = require("node:test");
const { SettingsError, describeStartFailure, findExecutable, serverLaunch } = require("../src/launch");
const { RestartPolicy } = require("../src/restart");

const ctx = { workspaceFolder: "/ws", homedir: "/home/me", env: { PATH: "/usr/bin", HOME: "/home/me", VENV: "/opt/venv" } };

test("defaults start `tapir lsp` from PATH in the workspace folder", () => {
  const launch = serverLaunch({}, ctx);
  assert.deepEqual(launch, { kind: "process", command: "tapir", args: ["lsp"], cwd: "/ws", env: ctx.env });
});

test("an empty path means the default", () => {
  assert.equal(/** @type {any} */ (serverLaunch({ path: "  " }, ctx)).command, "tapir");
});

test("extra arguments follow `lsp` and variables are expanded", () => {
  const launch = /** @type {any} */ (serverLaunch({ args: ["--log-file", "${workspaceFolder}/lsp.log", "~/x"] }, ctx));
  assert.deepEqual(launch.args, ["lsp", "--log-file", "/ws/lsp.log", "/home/me/x"]);
});

test("paths: absolute, relative to the workspace folder, ~, ${userHome}, ${env:NAME}", () => {
  const command = (/** @type {string} */ p) => /** @type {any} */ (serverLaunch({ path: p }, ctx)).command;
  assert.equal(command("/usr/local/bin/tapir"), "/usr/local/bin/tapir");
  assert.equal(command(".venv/bin/tapir"), "/ws/.venv/bin/tapir");
  assert.equal(command("~/bin/tapir"), "/home/me/bin/tapir");
  assert.equal(command("${userHome}/bin/tapir"), "/home/me/bin/tapir");
  assert.equal(command("${env:VENV}/bin/tapir"), "/opt/venv/bin/tapir");
  assert.equal(command("${workspaceFolder}/t"), "/ws/t");
});

test("a relative path or ${workspaceFolder} without an open folder is a settings error", () => {
  const noFolder = { ...ctx, workspaceFolder: undefined };
  assert.throws(() => serverLaunch({ path: ".venv/bin/tapir" }, noFolder), SettingsError);
  assert.throws(() => serverLaunch({ path: "${workspaceFolder}/tapir" }, noFolder), /no folder is open/);
  assert.equal(/** @type {any} */ (serverLaunch({}, noFolder)).cwd, undefined);
});

test("server env is added to the inherited environment", () => {
  const launch = /** @type {any} */ (serverLaunch({ env: { ANDROID_SERIAL: "sim", HOME: "${env:VENV}" } }, ctx));
  assert.equal(launch.env.ANDROID_SERIAL, "sim");
  assert.equal(launch.env.HOME, "/opt/venv");
  assert.equal(launch.env.PATH, "/usr/bin");
});

test("ill-typed settings name the setting", () => {
  assert.throws(() => serverLaunch({ path: 3 }, ctx), /tapir\.server\.path must be a string/);
  assert.throws(() => serverLaunch({ args: "--x" }, ctx), /tapir\.server\.args must be a list of strings/);
  assert.throws(() => serverLaunch({ args: [1] }, ctx), /tapir\.server\.args/);
  assert.throws(() => serverLaunch({ env: { A: 1 } }, ctx), /tapir\.server\.env\.A must be a string/);
  assert.throws(() => serverLaunch({ env: ["A"] }, ctx), /tapir\.server\.env must be an object/);
  assert.throws(() => serverLaunch({ tcpPort: 70000 }, ctx), /tcpPort must be a port number/);
  assert.throws(() => serverLaunch({ tcpPort: "2087" }, ctx), /tcpPort/);
});

test("a TCP port connects instead of starting a process", () => {
  assert.deepEqual(serverLaunch({ tcpPort: 2087, path: "ignored" }, ctx), { kind: "tcp", host: "127.0.0.1", port: 2087 });
  assert.equal(serverLaunch({ tcpPort: null }, ctx).kind, "process");
});

test("findExecutable looks on PATH and checks that the file can be run", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tapir-launch-"));
  try {
    const exe = path.join(dir, "tapir");
    fs.writeFileSync(exe, "#!/bin/sh\n");
    fs.chmodSync(exe, 0o755);
    const plain = path.join(dir, "notes");
    fs.writeFileSync(plain, "");
    fs.chmodSync(plain, 0o644);
    const env = { PATH: ["/nonexistent", dir].join(path.delimiter) };
    assert.equal(findExecutable("tapir", env, "linux"), exe);
    assert.equal(findExecutable(exe, {}, "linux"), exe);
    assert.equal(findExecutable("notes", env, "linux"), undefined);
    assert.equal(findExecutable("tapir-missing", env, "linux"), undefined);
    assert.equal(findExecutable(path.join(dir, "missing"), env, "linux"), undefined);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("start failures are explained in words", () => {
  const proc = /** @type {any} */ (serverLaunch({}, ctx));
  const missing = Object.assign(new Error("spawn tapir ENOENT"), { code: "ENOENT" });
  assert.match(describeStartFailure(missing, proc), /'tapir' was not found.*tapir\.server\.path/);
  assert.match(describeStartFailure(new Error("spawn x EACCES"), proc), /permission denied/);
  assert.match(describeStartFailure(new Error("boom"), proc), /tapir lsp\) did not start: boom/);
  const tcp = serverLaunch({ tcpPort: 2087 }, ctx);
  assert.match(describeStartFailure(Object.assign(new Error("x"), { code: "ECONNREFUSED" }), tcp), /tapir lsp --tcp 2087/);
});

test("the restart policy restarts until the server dies too often within the window", () => {
  let now = 0;
  const policy = new RestartPolicy({ maxRestarts: 3, windowMs: 1000, now: () => now });
  assert.deepEqual([1, 2, 3].map(() => policy.crashed()), [
    { restart: true, crashes: 1 },
    { restart: true, crashes: 2 },
    { restart: true, crashes: 3 },
  ]);
  assert.deepEqual(policy.crashed(), { restart: false, crashes: 4 });
  now = 5000; // the old crashes have left the window
  assert.deepEqual(policy.crashed(), { restart: true, crashes: 1 });
  policy.crashed();
  policy.crashed();
  policy.reset();
  assert.deepEqual(policy.crashed(), { restart: true, crashes: 1 });
});
