// A stand-in for the `vscode` module, enough for the extension and vscode-languageclient to run in
// plain node (test/fake-host.js): settings, documents, events, diagnostics, output, messages,
// commands and the language status item are real objects the host can drive and inspect; any
// other part of the API is an inert placeholder (a function that returns placeholders, whose
// `on...` events never fire), so that registering providers the test does not look at works.

"use strict";

const fs = require("fs");
const path = require("path");
const { URL, pathToFileURL, fileURLToPath } = require("url");

// ---------------------------------------------------------------------------------------------
// Placeholders for the parts of the API the tests do not use.

const noop = () => undefined;
function placeholder(name) {
  const target = function () {};
  return new Proxy(target, {
    get(_t, prop) {
      if (prop === "then") return undefined; // not a promise
      if (prop === Symbol.iterator) return function* () {};
      if (prop === Symbol.toPrimitive) return () => 0;
      if (prop === "dispose") return noop;
      if (prop === "prototype") return target.prototype;
      if (prop === "toString") return () => `[placeholder ${name}]`;
      return placeholder(`${name}.${String(prop)}`);
    },
    apply: () => placeholder(`${name}()`),
    construct: () => placeholder(`new ${name}`),
  });
}

// ---------------------------------------------------------------------------------------------
// Real pieces

class Disposable {
  constructor(fn) {
    this._fn = fn;
  }
  static from(...items) {
    return new Disposable(() => items.forEach((d) => d && d.dispose && d.dispose()));
  }
  dispose() {
    if (this._fn) this._fn();
    this._fn = undefined;
  }
}

class EventEmitter {
  constructor() {
    this._listeners = new Set();
    this.event = (listener, thisArg, disposables) => {
      const entry = thisArg ? listener.bind(thisArg) : listener;
      this._listeners.add(entry);
      const d = new Disposable(() => this._listeners.delete(entry));
      if (Array.isArray(disposables)) disposables.push(d);
      return d;
    };
  }
  fire(value) {
    for (const l of [...this._listeners]) l(value);
  }
  dispose() {
    this._listeners.clear();
  }
}

class Uri {
  constructor(scheme, p) {
    this.scheme = scheme;
    this.path = p;
    this.authority = "";
    this.query = "";
    this.fragment = "";
  }
  static file(p) {
    return new Uri("file", p);
  }
  static parse(text) {
    if (text.startsWith("file:")) return new Uri("file", fileURLToPath(text));
    const u = new URL(text);
    return new Uri(u.protocol.replace(/:$/, ""), decodeURIComponent(u.pathname));
  }
  get fsPath() {
    return this.path;
  }
  with(change) {
    return new Uri(change.scheme ?? this.scheme, change.path ?? this.path);
  }
  toString() {
    return this.scheme === "file" ? pathToFileURL(this.path).href : `${this.scheme}:${this.path}`;
  }
  toJSON() {
    return this.toString();
  }
}

class Position {
  constructor(line, character) {
    this.line = line;
    this.character = character;
  }
}

class Range {
  constructor(a, b, c, d) {
    if (typeof a === "number") {
      this.start = new Position(a, b);
      this.end = new Position(c, d);
    } else {
      this.start = a;
      this.end = b;
    }
  }
}

class Diagnostic {
  constructor(range, message, severity = 0) {
    this.range = range;
    this.message = message;
    this.severity = severity;
  }
}

const DiagnosticSeverity = { Error: 0, Warning: 1, Information: 2, Hint: 3 };
const LanguageStatusSeverity = { Information: 0, Warning: 1, Error: 2 };
const LogLevel = { Off: 0, Trace: 1, Debug: 2, Info: 3, Warning: 4, Error: 5 };

class CancellationTokenSource {
  constructor() {
    const emitter = new EventEmitter();
    this.token = { isCancellationRequested: false, onCancellationRequested: emitter.event };
    this._emitter = emitter;
  }
  cancel() {
    this.token.isCancellationRequested = true;
    this._emitter.fire();
  }
  dispose() {}
}

class CancellationError extends Error {}

// ---------------------------------------------------------------------------------------------
// What the host drives and inspects

const state = {
  settings: {}, // "tapir.server.path" -> value; unset keys take package.json's defaults
  defaults: {},
  messages: [], // {level, text, items}
  answers: [], // what the next showXMessage calls return (the button the user "clicks")
  output: [], // lines written to output channels
  statusItems: [],
  diagnostics: new Map(), // uri string -> [{line, character, message, severity}]
  commands: new Map(),
  documents: [],
  workspaceFolders: [],
};

const events = {
  didOpen: new EventEmitter(),
  didClose: new EventEmitter(),
  didChange: new EventEmitter(),
  didChangeConfiguration: new EventEmitter(),
};

function loadDefaults(packageJson) {
  const props = JSON.parse(fs.readFileSync(packageJson, "utf8")).contributes.configuration.properties;
  for (const [key, spec] of Object.entries(props)) state.defaults[key] = spec.default;
}

function getConfiguration(section) {
  const full = (key) => (section ? `${section}.${key}` : key);
  return {
    get(key, fallback) {
      const k = full(key);
      if (k in state.settings) return state.settings[k];
      if (k in state.defaults) return state.defaults[k];
      return fallback;
    },
    has: (key) => full(key) in state.settings || full(key) in state.defaults,
    inspect: () => undefined,
    update: async () => undefined,
  };
}

function changeSettings(change) {
  Object.assign(state.settings, change);
  const keys = Object.keys(change);
  events.didChangeConfiguration.fire({
    affectsConfiguration: (section) => keys.some((k) => k === section || k.startsWith(section + ".")),
  });
}

function message(level) {
  return (text, ...items) => {
    state.messages.push({ level, text, items: items.filter((i) => typeof i === "string") });
    return Promise.resolve(state.answers.shift());
  };
}

function outputChannel(name) {
  const write = (level) => (text) => state.output.push(`${name} [${level}] ${text}`);
  return {
    name,
    logLevel: LogLevel.Info,
    onDidChangeLogLevel: new EventEmitter().event,
    append: write("append"),
    appendLine: write("line"),
    replace: noop,
    clear: noop,
    show: noop,
    hide: noop,
    dispose: noop,
    trace: write("trace"),
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: (e) => write("error")(e instanceof Error ? e.message : e),
  };
}

function matchSelector(selector, document) {
  const selectors = Array.isArray(selector) ? selector : [selector];
  return selectors.some((s) => {
    if (typeof s === "string") return s === document.languageId ? 10 : 0;
    if (s.language && s.language !== document.languageId) return false;
    if (s.scheme && s.scheme !== document.uri.scheme) return false;
    return true;
  })
    ? 10
    : 0;
}

function createDocument(file, text, languageId = "tapir") {
  let content = text;
  let version = 1;
  const doc = {
    uri: Uri.file(file),
    fileName: file,
    languageId,
    isUntitled: false,
    isDirty: false,
    isClosed: false,
    eol: 1,
    get version() {
      return version;
    },
    get lineCount() {
      return content.split("\n").length;
    },
    getText: () => content,
    save: async () => true,
    _set(newText) {
      content = newText;
      version += 1;
    },
  };
  return doc;
}

function openDocument(file, text) {
  const doc = createDocument(file, text);
  state.documents.push(doc);
  events.didOpen.fire(doc);
  return doc;
}

function changeDocument(doc, text) {
  const old = doc.getText();
  doc._set(text);
  const lines = old.split("\n");
  events.didChange.fire({
    document: doc,
    reason: undefined,
    contentChanges: [
      {
        range: new Range(0, 0, lines.length - 1, lines[lines.length - 1].length),
        rangeOffset: 0,
        rangeLength: old.length,
        text,
      },
    ],
  });
}

const api = {
  version: "1.91.0",
  env: { appName: "fake-vscode", language: "en", machineId: "test", sessionId: "test", openExternal: async () => true },
  Disposable,
  EventEmitter,
  Uri,
  Position,
  Range,
  Diagnostic,
  DiagnosticSeverity,
  LanguageStatusSeverity,
  LogLevel,
  CancellationTokenSource,
  CancellationError,
  workspace: {
    getConfiguration,
    get workspaceFolders() {
      return state.workspaceFolders;
    },
    get textDocuments() {
      return state.documents;
    },
    notebookDocuments: [],
    onDidOpenTextDocument: events.didOpen.event,
    onDidCloseTextDocument: events.didClose.event,
    onDidChangeTextDocument: events.didChange.event,
    onDidChangeConfiguration: events.didChangeConfiguration.event,
    getWorkspaceFolder: (uri) => state.workspaceFolders.find((f) => uri.fsPath.startsWith(f.uri.fsPath)),
    createFileSystemWatcher: () => ({
      onDidCreate: new EventEmitter().event,
      onDidChange: new EventEmitter().event,
      onDidDelete: new EventEmitter().event,
      dispose: noop,
    }),
  },
  window: {
    createOutputChannel: outputChannel,
    showErrorMessage: message("error"),
    showWarningMessage: message("warning"),
    showInformationMessage: message("information"),
    activeTextEditor: undefined,
    visibleTextEditors: [],
    tabGroups: { all: [], onDidChangeTabs: new EventEmitter().event, onDidChangeTabGroups: new EventEmitter().event },
  },
  languages: {
    match: matchSelector,
    createDiagnosticCollection(name) {
      const own = new Set();
      return {
        name,
        set(uri, diagnostics) {
          if (Array.isArray(uri)) {
            for (const [u, d] of uri) this.set(u, d);
            return;
          }
          own.add(uri.toString());
          state.diagnostics.set(
            uri.toString(),
            (diagnostics || []).map((d) => ({
              line: d.range.start.line,
              character: d.range.start.character,
              message: d.message,
              severity: d.severity,
            })),
          );
        },
        delete: (uri) => state.diagnostics.delete(uri.toString()),
        clear: () => own.forEach((u) => state.diagnostics.delete(u)),
        forEach: noop,
        get: (uri) => state.diagnostics.get(uri.toString()),
        has: (uri) => state.diagnostics.has(uri.toString()),
        dispose() {
          this.clear();
        },
      };
    },
    createLanguageStatusItem(id, selector) {
      const item = { id, selector, name: undefined, text: "", severity: 0, command: undefined, busy: false };
      item.dispose = noop;
      state.statusItems.push(item);
      return item;
    },
  },
  commands: {
    registerCommand(name, fn) {
      state.commands.set(name, fn);
      return new Disposable(() => state.commands.delete(name));
    },
    executeCommand: async (name, ...args) => {
      const fn = state.commands.get(name);
      return fn ? fn(...args) : undefined;
    },
  },
};

// Everything else: placeholders (classes to extend, enums, namespaces and functions).
function withPlaceholders(obj, name) {
  return new Proxy(obj, {
    get(target, prop) {
      if (prop in target) return target[prop];
      // `__importStar(require("vscode"))` copies only own keys, unless the module says it is ES.
      if (prop === "__esModule") return name === "vscode";
      if (typeof prop !== "string" || prop === "then") return undefined;
      if (/^[A-Z]/.test(prop)) {
        // A class or an enum: a class whose static members are placeholders.
        const cls = class {
          constructor(...args) {
            this.args = args;
          }
        };
        const wrapped = new Proxy(cls, {
          get: (t, p) => (p in t ? t[p] : typeof p === "string" ? placeholder(`${name}.${prop}.${p}`) : undefined),
        });
        target[prop] = wrapped;
        return wrapped;
      }
      if (prop.startsWith("on")) return () => new Disposable();
      if (prop.startsWith("register") || prop.startsWith("create")) return () => new Disposable();
      return placeholder(`${name}.${prop}`);
    },
  });
}
for (const ns of ["workspace", "window", "languages", "commands", "env"]) api[ns] = withPlaceholders(api[ns], ns);

module.exports = withPlaceholders(api, "vscode");
module.exports.__test = { state, events, loadDefaults, changeSettings, openDocument, changeDocument, Uri };
