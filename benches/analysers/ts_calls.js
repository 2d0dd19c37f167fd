// Call sites of a TypeScript or JavaScript tree with the declarations the TypeScript compiler
// resolves them to: the independent reference of `ctxfast eval fidelity` for TypeScript and
// JavaScript.
//
// usage: node ts_calls.js ROOT [TYPESCRIPT_MODULE] [js]   (one JSON object per line on stdout)
// Every `f(...)`, `x.f(...)` and `new C(...)` in the tree's .ts/.tsx/.mts/.cts files (with
// `js`: its .js/.jsx/.mjs/.cjs files, read as the compiler reads JavaScript, `require` and
// `module.exports` included; not node_modules, not tests, not minified or bundled files) is
// written with the declarations of its callee's symbol (aliases followed); a callee the
// compiler cannot resolve has no targets. Declarations are reported at the line of their name,
// so they compare with the graph's definition spans.
"use strict";
const fs = require("fs");
const path = require("path");
const ts = require(process.argv[3] || "typescript");

const root = path.resolve(process.argv[2]);
const JS = process.argv[4] === "js";
const SOURCE = JS ? /\.(js|jsx|mjs|cjs)$/ : /\.(ts|tsx|mts|cts)$/;
const SKIP_DIRS = new Set(["node_modules", "dist", "coverage", "vendor"]);
const TEST_DIRS = new Set(["test", "tests", "__tests__", "e2e"]);
const files = [];
(function walk(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    // Tests are left out, as by the Go and Java analysers: the scores are about the product.
    if (e.name.startsWith(".") || SKIP_DIRS.has(e.name) || TEST_DIRS.has(e.name)) continue;
    if (/\.(test|spec)\.[cm]?[jt]sx?$/.test(e.name) || /\.min\.[cm]?js$/.test(e.name)) continue;
    const p = path.join(dir, e.name);
    if (e.isSymbolicLink()) continue;
    if (e.isDirectory()) walk(p);
    else if (SOURCE.test(e.name) && !e.name.endsWith(".d.ts")) files.push(p);
  }
})(root);

const program = ts.createProgram(files, {
  noEmit: true, allowJs: JS, checkJs: false, skipLibCheck: true, noResolve: false, types: [],
  target: ts.ScriptTarget.ESNext, module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.NodeJs, jsx: ts.JsxEmit.Preserve,
  experimentalDecorators: true,
});
const checker = program.getTypeChecker();
const CALLABLE = new Set([
  ts.SyntaxKind.FunctionDeclaration, ts.SyntaxKind.MethodDeclaration, ts.SyntaxKind.MethodSignature,
  ts.SyntaxKind.ClassDeclaration, ts.SyntaxKind.Constructor, ts.SyntaxKind.FunctionExpression,
  ts.SyntaxKind.ArrowFunction, ts.SyntaxKind.GetAccessor, ts.SyntaxKind.SetAccessor,
]);

function rel(p) {
  const r = path.relative(root, p);
  return r.startsWith("..") || path.isAbsolute(r) ? null : r.split(path.sep).join("/");
}

// The callee's declarations, or null when the compiler does not know the callee.
function targets(nameNode) {
  let sym = checker.getSymbolAtLocation(nameNode);
  if (!sym) return null;
  if (sym.flags & ts.SymbolFlags.Alias) {
    try { sym = checker.getAliasedSymbol(sym); } catch (e) { return null; }
  }
  // A variable that names another value (`var dQuote = utils.dQuote`, `const f = g`) is
  // that value when called, as the compiler resolves the call's signature: followed, a few
  // hops at most.
  for (let hop = 0; hop < 4 && sym && sym.declarations && sym.declarations.length === 1; hop++) {
    const d = sym.declarations[0];
    const init = ts.isVariableDeclaration(d) && d.initializer;
    if (!init || !(ts.isIdentifier(init) || ts.isPropertyAccessExpression(init))) break;
    let next = checker.getSymbolAtLocation(ts.isPropertyAccessExpression(init) ? init.name : init);
    if (next && next.flags & ts.SymbolFlags.Alias) {
      try { next = checker.getAliasedSymbol(next); } catch (e) { next = null; }
    }
    if (!next || next === sym) break;
    sym = next;
  }
  if (!sym || !sym.declarations || sym.declarations.length === 0) return null;
  // Overloads: the implementation (the declaration with a body) is the callee.
  let decls = sym.declarations;
  const bodied = decls.filter((d) => d.body);
  if (bodied.length) decls = bodied;
  const out = [];
  for (const d of decls) {
    let kind = d.kind;
    let node = d;
    // `const f = () => ...` / `f = function () {...}`: the variable is the function.
    if ((ts.isVariableDeclaration(d) || ts.isPropertyDeclaration(d) || ts.isPropertyAssignment(d)) && d.initializer) {
      kind = d.initializer.kind;
    }
    // JavaScript's `exports.f = function () {...}` / `Foo.prototype.m = (...) => ...`.
    if (ts.isBinaryExpression(d)) kind = d.right.kind;
    else if (ts.isPropertyAccessExpression(d) && d.parent && ts.isBinaryExpression(d.parent)) {
      kind = d.parent.right.kind;
    }
    const sf = d.getSourceFile();
    // JavaScript described by a `.d.ts` beside it (postcss's `result.d.ts` for `result.js`):
    // the checker binds the call to the description, not to the code that runs, so the call
    // has no reference to score.
    if (JS && sf.isDeclarationFile && rel(sf.fileName)) return null;
    const file = rel(sf.fileName);
    if (!file) continue; // outside the tree (lib.d.ts): not part of the graph
    const at = (node.name || node).getStart(sf);
    out.push({ file, line: sf.getLineAndCharacterOfPosition(at).line + 1, callable: CALLABLE.has(kind) });
  }
  return out;
}

for (const sf of program.getSourceFiles()) {
  const file = rel(sf.fileName);
  if (!file || sf.isDeclarationFile) continue;
  (function visit(node) {
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      let e = node.expression;
      let name = null;
      if (ts.isIdentifier(e)) name = e;
      else if (ts.isPropertyAccessExpression(e)) name = e.name;
      if (name && ts.isIdentifier(name)) {
        const pos = sf.getLineAndCharacterOfPosition(name.getStart(sf));
        const found = targets(name);
        process.stdout.write(JSON.stringify({
          file, line: pos.line + 1, col: pos.character, name: name.text,
          targets: found || [], resolved: found !== null,
        }) + "\n");
      }
    }
    ts.forEachChild(node, visit);
  })(sf);
}
