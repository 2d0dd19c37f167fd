//! TypeScript and JavaScript calls on values whose class a declaration gives: a parameter,
//! a field or interface property of another class, a destructured property, a `this`
//! parameter, a cast, a default import, `super` (the misses `ctxfast eval fidelity
//! --language typescript` found against the TypeScript checker in ajv, yup and got).

use super::*;

/// Each invoke edge of `file` as (the call's line, its target's qualname), in line order.
fn calls(db: &Path, file: &str) -> Vec<(u32, String)> {
    let mut out: Vec<(u32, String)> = pairs(
        db,
        &format!(
            "SELECT CAST(r.line AS TEXT), n.qualname FROM edges e JOIN nodes r ON r.id = e.src \
             JOIN nodes n ON n.id = e.dst WHERE e.type = 'invoke' AND r.file = '{file}'"
        ),
    )
    .into_iter()
    .map(|(l, q)| (l.parse().unwrap(), q))
    .collect();
    out.sort();
    out
}

/// `(line, qualname)` pairs as [`calls`] gives them.
fn want(v: &[(u32, &str)]) -> Vec<(u32, String)> {
    v.iter().map(|(l, q)| (*l, (*q).to_string())).collect()
}

/// The generator and the contexts holding it, as ajv writes them.
const GEN: (&str, &str) = (
    "src/gen.ts",
    "export class CodeGen {\n  const(n: string) {}\n  name(n: string) {}\n}\n\
     export class Scope {\n  value() {}\n}\n",
);
const CXT: (&str, &str) = (
    "src/cxt.ts",
    concat!(
        "import { CodeGen, Scope } from './gen';\n", // 1
        "export interface SchemaCxt {\n",            // 2
        "  readonly gen: CodeGen;\n",                // 3
        "  scope?: Scope | undefined;\n",            // 4
        "}\n",                                       // 5
        "export interface SchemaObjCxt extends SchemaCxt {}\n", // 6
        "export class KeywordCxt {\n",               // 7
        "  readonly gen: CodeGen;\n",                // 8
        "  private scope = new Scope();\n",          // 9
        "  either: CodeGen | Scope;\n",              // 10
        "  constructor(private it: SchemaObjCxt) {}\n", // 11
        "  run() {\n",                               // 12
        "    this.scope.value();\n",                 // 13
        "    this.it.gen.name('x');\n",              // 14
        "    this.either.name('y');\n",              // 15
        "  }\n",                                     // 16
        "}\n",                                       // 17
    ),
);

#[test]
fn parameters_and_fields_typed_by_another_class_reach_its_methods() {
    let (_d, db) = indexed(&[
        GEN,
        CXT,
        (
            "src/use.ts",
            concat!(
                "import { CodeGen } from './gen';\n",                                     // 1
                "import { SchemaObjCxt, KeywordCxt } from './cxt';\n",                    // 2
                "export function f(gen: CodeGen | undefined, it: SchemaObjCxt, cxt: KeywordCxt) {\n", // 3
                "  gen.const('a');\n",                                                    // 4
                "  it.gen.name('b');\n",                                                  // 5
                "  cxt.gen.const('c');\n",                                                // 6
                "  it.scope.value();\n",                                                  // 7
                "}\n",                                                                    // 8
                "type Defaults = { readonly gen: CodeGen };\n",                           // 9
                "export function g(d: Defaults) {\n",                                     // 10
                "  d.gen.name('e');\n",                                                   // 11
                "}\n",
            ),
        ),
    ]);
    // A union with `undefined`, an interface property (inherited through `extends`, and
    // optional), a field of another class, a property of an object type alias.
    assert_eq!(
        calls(&db, "src/use.ts"),
        want(&[
            (4, "src.gen.CodeGen.const"),
            (5, "src.gen.CodeGen.name"),
            (6, "src.gen.CodeGen.const"),
            (7, "src.gen.Scope.value"),
            (11, "src.gen.CodeGen.name"),
        ])
    );
    // A field holding what it constructs, a constructor's parameter property; a union of
    // two classes is neither. (Line 6 is the interface's base, line 9 the construction.)
    assert_eq!(
        calls(&db, "src/cxt.ts"),
        want(&[
            (6, "src.cxt.SchemaCxt"),
            (9, "src.gen.Scope"),
            (13, "src.gen.Scope.value"),
            (14, "src.gen.CodeGen.name"),
        ])
    );
}

#[test]
fn destructured_properties_hold_what_their_class_declares() {
    let (_d, db) = indexed(&[
        GEN,
        CXT,
        (
            "src/use.ts",
            concat!(
                "import { KeywordCxt, SchemaCxt } from './cxt';\n", // 1
                "function name() {}\n",                             // 2
                "export function g(cxt: KeywordCxt) {\n",           // 3
                "  const { gen, it: inner } = cxt;\n",              // 4
                "  gen.const('a');\n",                              // 5
                "  inner.gen.name('b');\n",                         // 6
                "  const { it: { gen: g2 } } = cxt;\n",             // 7
                "  g2.name('c');\n",                                // 8
                "  const [name] = [cxt];\n",                        // 9
                "  name();\n",                                      // 10
                "}\n",                                              // 11
                "export function h({ gen, scope = undefined }: SchemaCxt) {\n", // 12
                "  gen.const('d');\n",                              // 13
                "  scope.value();\n",                               // 14
                "}\n",                                              // 15
                "export function j({ name }) {\n",                  // 16
                "  name();\n",                                      // 17
                "}\n",                                              // 18
            ),
        ),
    ]);
    let got = calls(&db, "src/use.ts");
    let expected = want(&[
        (5, "src.gen.CodeGen.const"),
        (6, "src.gen.CodeGen.name"),
        (8, "src.gen.CodeGen.name"),
        (13, "src.gen.CodeGen.const"),
        (14, "src.gen.Scope.value"),
    ]);
    // Lines 10 and 17: a destructured `name` is a local (of no known class), not the
    // module's function of that name.
    assert_eq!(got, expected);
}

#[test]
fn a_this_parameter_and_a_cast_give_their_class() {
    let (_d, db) = indexed(&[
        GEN,
        CXT,
        (
            "src/use.ts",
            concat!(
                "import { CodeGen } from './gen';\n",           // 1
                "import { SchemaCxt } from './cxt';\n",         // 2
                "export class Ajv {\n  compile() {}\n}\n",      // 3-5
                "export function compileSchema(this: Ajv) {\n", // 6
                "  this.compile();\n",                          // 7
                "}\n",                                          // 8
                "export function k(x: unknown) {\n",            // 9
                "  const g = x as CodeGen;\n",                  // 10
                "  g.const('e');\n",                            // 11
                "  const { gen } = x as SchemaCxt;\n",          // 12
                "  gen.name('f');\n",                           // 13
                "}\n",
            ),
        ),
    ]);
    let got = calls(&db, "src/use.ts");
    let expected = want(&[
        (7, "src.use.Ajv.compile"),
        (11, "src.gen.CodeGen.const"),
        (13, "src.gen.CodeGen.name"),
    ]);
    assert_eq!(got, expected);
}

#[test]
fn a_default_import_is_what_the_module_exports_as_default() {
    let (_d, db) = indexed(&[
        (
            "src/schema.ts",
            "export default abstract class Schema<T> {\n  clone(): this { return this; }\n  \
             static isSchema(x: any) { return true; }\n}\n",
        ),
        (
            "src/ref.ts",
            "class Reference {\n  static isRef(v: any) { return true; }\n}\nexport default Reference;\n",
        ),
        (
            "src/local.ts",
            "class Local {\n  run() {}\n}\nexport { Local as default };\n",
        ),
        ("src/index.ts", "export { default as Ref } from './ref';\n"),
        // CommonJS has no default export: Node hands over `module.exports`.
        (
            "src/util.js",
            "exports.helper = function helper() {};\n",
        ),
        (
            "src/use.ts",
            concat!(
                "import Schema from './schema';\n",           // 1
                "import { Ref } from './index';\n",           // 2
                "import Local from './local';\n",             // 3
                "import util from './util';\n",               // 4
                "export function use(s: Schema<any>) {\n",    // 5
                "  s.clone();\n",                             // 6
                "  Schema.isSchema(s);\n",                    // 7
                "  Ref.isRef(s);\n",                          // 8
                "  new Local().run();\n",                     // 9
                "  util.helper();\n",                         // 10
                "}\n",
            ),
        ),
    ]);
    let got = calls(&db, "src/use.ts");
    let expected = want(&[
        (6, "src.schema.Schema.clone"),
        (7, "src.schema.Schema.isSchema"),
        (8, "src.ref.Reference.isRef"),
        (9, "src.local.Local"),
        (9, "src.local.Local.run"),
        (10, "src.util.helper"),
    ]);
    assert_eq!(got, expected);
    // The file's own `export default` imports nothing.
    let self_imports = count(
        &db,
        "SELECT count(*) FROM edges e JOIN nodes s ON s.id = e.src JOIN nodes d ON d.id = e.dst \
         WHERE e.type = 'import' AND s.file = d.file",
    );
    assert_eq!(self_imports, 0);
}

#[test]
fn super_member_calls_reach_the_base_class_method() {
    let (_d, db) = indexed(&[
        (
            "src/base.ts",
            "export class Base {\n  render(o: any) { return ''; }\n  clone() { return this; }\n}\n",
        ),
        (
            "src/try.ts",
            concat!(
                "import { Base } from './base';\n",           // 1
                "export class Try extends Base {\n",          // 2
                "  render(o: any) {\n",                       // 3
                "    return 'catch' + super.render(o);\n",    // 4
                "  }\n",                                      // 5
                "  copy() {\n",                               // 6
                "    return [1].map(() => super.clone());\n", // 7
                "  }\n",                                      // 8
                "}\n",
            ),
        ),
    ]);
    let got = calls(&db, "src/try.ts");
    let expected = want(&[
        (2, "src.base.Base"),
        (4, "src.base.Base.render"),
        (7, "src.base.Base.clone"),
    ]);
    assert_eq!(got, expected);
}

#[test]
fn a_module_level_alias_or_required_call_is_no_definition_of_its_own() {
    let (_d, db) = indexed(&[
        (
            "lib/utils.js",
            "exports.dQuote = function dQuote(s) { return s; };\n\
             exports.type = function type(x) { return x; };\n",
        ),
        (
            "lib/factory.js",
            "module.exports = function factory(o) { return function made() {}; };\n",
        ),
        (
            "lib/runner.js",
            concat!(
                "var utils = require('./utils');\n",               // 1
                "var debug = require('debug')('mocha:runner');\n", // 2
                "var dQuote = utils.dQuote;\n",                    // 3
                "const { type } = utils;\n",                       // 4
                "var make = require('./factory')({ x: 1 });\n",    // 5
                "function run(x) {\n",                             // 6
                "  debug('run');\n",                               // 7
                "  make();\n",                                     // 8
                "  type(x);\n",                                    // 9
                "  return dQuote(x);\n",                           // 10
                "}\n",
            ),
        ),
    ]);
    // An alias reaches what it names; what a required module returns is nothing the graph
    // defines, so calling it reaches nothing.
    assert_eq!(
        calls(&db, "lib/runner.js"),
        want(&[(9, "lib.utils.type"), (10, "lib.utils.dQuote")])
    );
    let defs = pairs(
        &db,
        "SELECT qualname, kind FROM nodes WHERE file = 'lib/runner.js' AND kind IN ('var', 'function')",
    );
    assert_eq!(
        defs,
        vec![("lib.runner.run".to_string(), "function".to_string())]
    );
}
