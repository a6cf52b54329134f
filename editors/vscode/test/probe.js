#!/usr/bin/env node
// Runs the extension's declarative parts the way VS Code runs them, for the Python tests to check.
//
//   node test/probe.js tokenize < request.json
//       request: {"texts": [{"name": "a.tap", "text": "..."}]}
//       answer:  {"a.tap": [[[start, end, [scope, ...]], ...], ...]}  one list of tokens a line;
//                offsets are UTF-16 code units, as in VS Code
//   node test/probe.js token-types < request.json
//       request: as for tokenize;  answer: {"a.tap": [[[start, type], ...], ...]} where type is the
//                standard token type VS Code derives (0 other, 1 comment, 2 string), which decides
//                where brackets match and quotes auto-close; package.json's tokenTypes applies
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

const STANDARD_TOKEN_TYPES = { other: 0, comment: 1, string: 2, regex: 3 };

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
  // As VS Code does: the grammar's tokenTypes from package.json, as standard token types.
  const contributed = pkg.contributes.grammars.find((g) => g.scopeName === "source.tapir") || {};
  const tokenTypes = {};
  for (const [selector, type] of Object.entries(contributed.tokenTypes || {})) {
    if (!(type in STANDARD_TOKEN_TYPES)) throw new Error(`unknown token type ${type} for ${selector}`);
    tokenTypes[selector] = STANDARD_TOKEN_TYPES[type];
  }
  const grammar = await registry.loadGrammarWithConfiguration("source.tapir", 1, { tokenTypes });
  if (!grammar) throw new Error("package.json contributes no grammar for source.tapir");
  return { vsctm, grammar };
}

async function tokenize(request, binary) {
  const { vsctm, grammar } = await loadGrammar();
  const answer = {};
  for (const { name, text } of request.texts) {
    let state = vsctm.INITIAL;
    const lines = [];
    // VS Code splits on \r\n, \r and \n alike.
    for (const line of text.split(/\r\n|\r|\n/)) {
      const result = binary ? grammar.tokenizeLine2(line, state, 5000) : grammar.tokenizeLine(line, state, 5000);
      if (result.stoppedEarly) throw new Error(`${name}: tokenizing a line took more than 5 s`);
      if (binary) {
        // [start, metadata, start, metadata, ...]; the token type is bits 8-9 of the metadata.
        const pairs = [];
        for (let i = 0; i < result.tokens.length; i += 2) pairs.push([result.tokens[i], (result.tokens[i + 1] >>> 8) & 3]);
        lines.push(pairs);
      } else {
        lines.push(result.tokens.map((t) => [t.startIndex, Math.min(t.endIndex, line.length), t.scopes]));
      }
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
  if (command === "tokenize") answer = await tokenize(request, false);
  else if (command === "token-types") answer = await tokenize(request, true);
  else if (command === "language-configuration") answer = languageConfiguration(request);
  else throw new Error(`unknown command ${JSON.stringify(command)}: tokenize, token-types or language-configuration`);
  process.stdout.write(JSON.stringify(answer));
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
