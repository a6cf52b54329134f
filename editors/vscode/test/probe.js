#!/usr/bin/env node
// Runs the extension's declarative parts the way VS Code runs them, for the Python tests to check.
//
//   node test/probe.js tokenize < request.json
//       request: {"texts": [{"name": "a.tap", "text": "..."}]}
//       answer:  {"a.tap": [[[start, end, [scope, ...]], ...], ...]}  one list of tokens a line;
//                offsets are UTF-16 code units, as in VS Code
//   node test/probe.js language-configuration < request.json
//       request: {"lines": ["if x:", ...], "words": ["tap($a__b)", ...]}
//       answer:  {"increase": [bool, ...], "decrease": [bool, ...], "outdentAfter": [bool, ...],
//                 "words": [["tap", "$a__b"], ...]}
//
// Tokenizing uses vscode-textmate with the Oniguruma WebAssembly build that VS Code ships
// (vscode-oniguruma), so a pattern that Oniguruma rejects or reads differently fails here too.
// The language configuration's patterns are JavaScript regular expressions in VS Code; they are
// compiled here with the same flags VS Code uses.

"use strict";

const fs = require("fs");
const path = require("path");

const ROOT = path.resolve(__dirname, "..");

function readStdin() {
  return JSON.parse(fs.readFileSync(0, "utf8"));
}

async function loadGrammar() {
  const vsctm = require("vscode-textmate");
  const oniguruma = require("vscode-oniguruma");
  const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm")).buffer;
  await oniguruma.loadWASM(wasm);
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
  const files = Object.fromEntries(pkg.contributes.grammars.map((g) => [g.scopeName, path.join(ROOT, g.path)]));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) => {
      const file = files[scopeName];
      if (!file) return null;
      return vsctm.parseRawGrammar(fs.readFileSync(file, "utf8"), file);
    },
  });
  const grammar = await registry.loadGrammar("source.tapir");
  if (!grammar) throw new Error("package.json contributes no grammar for source.tapir");
  return { vsctm, grammar };
}

async function tokenize(request) {
  const { vsctm, grammar } = await loadGrammar();
  const answer = {};
  for (const { name, text } of request.texts) {
    let state = vsctm.INITIAL;
    const lines = [];
    // VS Code splits on \r\n, \r and \n alike.
    for (const line of text.split(/\r\n|\r|\n/)) {
      const result = grammar.tokenizeLine(line, state, 5000);
      if (result.stoppedEarly) throw new Error(`${name}: tokenizing a line took more than 5 s`);
      lines.push(result.tokens.map((t) => [t.startIndex, Math.min(t.endIndex, line.length), t.scopes]));
      state = result.ruleStack;
    }
    answer[name] = lines;
  }
  return answer;
}

function compile(pattern) {
  // A pattern is a string (compiled without flags, as VS Code does) or {pattern, flags}.
  if (typeof pattern === "string") return new RegExp(pattern);
  return new RegExp(pattern.pattern, pattern.flags || "");
}

function languageConfiguration(request) {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
  const file = path.join(ROOT, pkg.contributes.languages[0].configuration);
  const config = JSON.parse(fs.readFileSync(file, "utf8"));
  const increase = compile(config.indentationRules.increaseIndentPattern);
  const decrease = compile(config.indentationRules.decreaseIndentPattern);
  const outdent = (config.onEnterRules || [])
    .filter((r) => r.action && r.action.indent === "outdent")
    .map((r) => compile(r.beforeText));
  // VS Code adds the global flag to the word pattern itself.
  const word = config.wordPattern;
  const wordRe = typeof word === "string" ? new RegExp(word, "g") : new RegExp(word.pattern, (word.flags || "") + "g");
  return {
    increase: request.lines.map((l) => increase.test(l)),
    decrease: request.lines.map((l) => decrease.test(l)),
    outdentAfter: request.lines.map((l) => outdent.some((re) => re.test(l))),
    words: (request.words || []).map((w) => w.match(wordRe) || []),
  };
}

async function main() {
  const command = process.argv[2];
  const request = readStdin();
  let answer;
  if (command === "tokenize") answer = await tokenize(request);
  else if (command === "language-configuration") answer = languageConfiguration(request);
  else throw new Error(`unknown command ${JSON.stringify(command)}: tokenize or language-configuration`);
  process.stdout.write(JSON.stringify(answer));
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
