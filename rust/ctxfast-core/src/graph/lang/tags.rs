//! The generic tier: languages the graph reads through the tags query their grammar crate
//! ships (`queries/tags.scm`, the query GitHub's code navigation and Aider's repo map run),
//! not through a visitor of their own; Kotlin's crate ships none, and reads through one of
//! ours (`queries/kotlin-tags.scm`). One table row per language — extensions, grammar,
//! query — and one extractor for all of them.
//!
//! A tags query names definitions (`@definition.<kind>` around the node, `@name` on its
//! name) and references (`@reference.<kind>`). The rows it yields are read the way
//! tree-sitter's own `tree-sitter-tags` reads them, so a query means here what its authors
//! tested: one tag per name node, the earliest pattern that tags a node wins, and a match
//! holding `@ignore` claims its node for nothing (Elixir's `def`, `alias`, ... are calls
//! the query then keeps from being references). Three departures, all about line spans,
//! which `tree-sitter-tags` does not use but the graph does:
//! * a name tagged by several definition patterns spans the smallest of their nodes (Swift's
//!   query tags a method both by its class, `@definition.method` around the whole class, and
//!   on its own);
//! * a definition whose node is another definition's too (Swift's `init` inside its class)
//!   spans the largest node around its name that holds no other definition's name;
//! * a definition tagged on a declaration's `signature` spans the declaration (Dart's query
//!   tags a method's signature, whose body is the signature's sibling).
//!
//! Definitions nest by their spans; a variable, field or property inside a function is a
//! local and is dropped. A reference is a bare name (`Repo.get` → `get`): the resolver
//! matches it by name within the repository (`resolve/tags.rs`).

use super::{cap, collapse, first_paragraph, Builder, Fields};
use crate::graph::raw::{DefKind, RawRef, NO_ARITY};
use std::sync::OnceLock;
use tree_sitter::{Node, Query, QueryCursor, StreamingIterator};

/// One language of the generic tier.
pub struct Tagged {
    /// The language's name in the index (`files.language`) and in the lexical globs.
    pub name: &'static str,
    /// File extensions, exactly as written (no dot).
    pub extensions: &'static [&'static str],
    pub grammar: fn() -> tree_sitter::Language,
    /// The tags query, as the grammar crate ships it; a copy of the crate's file where its
    /// bindings do not export it (Scala's), or our own where the crate ships none (Kotlin's),
    /// both in `queries/`.
    pub query: &'static str,
    /// Patterns added to the query: references it lacks (Swift's query tags definitions
    /// only: without them the language's files would hold no edge; Scala's has no member
    /// calls; Solidity's no modifiers), and definitions it misses (Scala's abstract `def`,
    /// Solidity's library functions, modifiers and state variables).
    pub references: &'static str,
}

/// Every language of the tier. `Lang::Tagged(i)` is row `i`: rows are only appended, and a
/// row's position is part of no stored format (the index stores `name`).
pub const TAGGED: &[Tagged] = &[
    Tagged {
        name: "csharp",
        extensions: &["cs"],
        grammar: || tree_sitter_c_sharp::LANGUAGE.into(),
        query: tree_sitter_c_sharp::TAGS_QUERY,
        references: "",
    },
    Tagged {
        name: "swift",
        extensions: &["swift"],
        grammar: || tree_sitter_swift::LANGUAGE.into(),
        query: tree_sitter_swift::TAGS_QUERY,
        references: SWIFT_REFERENCES,
    },
    Tagged {
        name: "lua",
        extensions: &["lua"],
        grammar: || tree_sitter_lua::LANGUAGE.into(),
        query: tree_sitter_lua::TAGS_QUERY,
        references: "",
    },
    Tagged {
        name: "elixir",
        extensions: &["ex", "exs"],
        grammar: || tree_sitter_elixir::LANGUAGE.into(),
        query: tree_sitter_elixir::TAGS_QUERY,
        references: "",
    },
    Tagged {
        name: "dart",
        extensions: &["dart"],
        grammar: || tree_sitter_dart::LANGUAGE.into(),
        query: tree_sitter_dart::TAGS_QUERY,
        references: "",
    },
    Tagged {
        name: "ocaml",
        extensions: &["ml"],
        grammar: || tree_sitter_ocaml::LANGUAGE_OCAML.into(),
        query: tree_sitter_ocaml::TAGS_QUERY,
        references: "",
    },
    Tagged {
        name: "r",
        extensions: &["r", "R"],
        grammar: || tree_sitter_r::LANGUAGE.into(),
        query: tree_sitter_r::TAGS_QUERY,
        references: "",
    },
    Tagged {
        name: "elm",
        extensions: &["elm"],
        grammar: || tree_sitter_elm::LANGUAGE.into(),
        query: tree_sitter_elm::TAGS_QUERY,
        references: "",
    },
    Tagged {
        name: "kotlin",
        extensions: &["kt", "kts"],
        grammar: || tree_sitter_kotlin_ng::LANGUAGE.into(),
        query: include_str!("queries/kotlin-tags.scm"),
        references: "",
    },
    Tagged {
        name: "scala",
        extensions: &["scala", "sc"],
        grammar: || tree_sitter_scala::LANGUAGE.into(),
        query: include_str!("queries/scala-tags.scm"),
        references: SCALA_EXTRA,
    },
    Tagged {
        name: "solidity",
        extensions: &["sol"],
        grammar: || tree_sitter_solidity::LANGUAGE.into(),
        query: tree_sitter_solidity::TAGS_QUERY,
        references: SOLIDITY_EXTRA,
    },
];

/// Swift's calls (`price(x)`, `p.round(x)`) and supertypes, in the query's own terms.
const SWIFT_REFERENCES: &str = r"
(call_expression (simple_identifier) @name) @reference.call
(call_expression
  (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @name))) @reference.call
(inheritance_specifier inherits_from: (user_type (type_identifier) @name)) @reference.class
";

/// Scala's member calls (`p.round(x)`) and abstract methods (`def price: Int` in a trait),
/// which its crate's query leaves out.
const SCALA_EXTRA: &str = r"
(call_expression function: (field_expression field: (identifier) @name)) @reference.call
(function_declaration name: (identifier) @name) @definition.function
";

/// Solidity's definitions its crate's query leaves out — the functions of interfaces and
/// libraries (it tags a contract's alone), modifiers, custom errors (classes, as its query
/// makes events), user-defined value types, state variables and file-level constants — and
/// the references to them: modifiers and base constructors named in a function's header
/// (`onlyOwner`, `ERC20("T", "T")`), `new Pricing()`, `revert Empty()`.
const SOLIDITY_EXTRA: &str = r"
(function_definition name: (identifier) @name) @definition.function
(modifier_definition name: (identifier) @name) @definition.function
(error_declaration name: (identifier) @name) @definition.class
(user_defined_type_definition name: (identifier) @name) @definition.type
(state_variable_declaration name: (identifier) @name) @definition.property
(constant_variable_declaration name: (identifier) @name) @definition.constant
(modifier_invocation (identifier) @name) @reference.call
(new_expression name: (type_name (user_defined_type (identifier) @name .))) @reference.class
(revert_statement error: (expression (identifier) @name)) @reference.class
";

/// What a capture of a tags query stands for.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    Name,
    Ignore,
    Doc,
    Def(DefKind),
    Ref,
    /// Captures only predicates read (`@_ignore`) or that mean nothing here (C#'s `@module`).
    Other,
}

/// A row's query, compiled once per process, with the role of each capture.
struct Compiled {
    query: Query,
    roles: Vec<Role>,
}

/// In-progress matches the cursor keeps at once: bounds the work on hostile input (a pattern
/// whose prefix matches at every node of a deeply nested tree); a real file needs far fewer.
const MATCH_LIMIT: u32 = 1024;

fn compiled(row: usize) -> Result<&'static Compiled, String> {
    static COMPILED: [OnceLock<Result<Compiled, String>>; TAGGED.len()] =
        [const { OnceLock::new() }; TAGGED.len()];
    let t = &TAGGED[row];
    COMPILED[row]
        .get_or_init(|| {
            let query = Query::new(&(t.grammar)(), &format!("{}{}", t.query, t.references))
                .map_err(|e| format!("the {} tags query does not compile: {e}", t.name))?;
            let roles = query.capture_names().iter().map(|c| role(c)).collect();
            Ok(Compiled { query, roles })
        })
        .as_ref()
        .map_err(Clone::clone)
}

fn role(capture: &str) -> Role {
    if let Some(kind) = capture.strip_prefix("definition.") {
        return Role::Def(def_kind(kind));
    }
    match capture {
        "name" => Role::Name,
        "ignore" => Role::Ignore,
        "doc" => Role::Doc,
        c if c.starts_with("reference.") => Role::Ref,
        _ => Role::Other,
    }
}

/// The graph's kind of a `@definition.<kind>`: containers are classes, callables functions,
/// everything else (constants, fields, properties, enum cases) variables.
fn def_kind(kind: &str) -> DefKind {
    match kind {
        "class" | "interface" | "module" | "struct" | "enum" | "type" | "object" | "trait"
        | "union" | "namespace" | "protocol" | "record" | "implementation" => DefKind::Class,
        "function" | "method" | "macro" | "operator" | "constructor" | "getter" | "setter" => {
            DefKind::Function
        }
        _ => DefKind::Var,
    }
}

/// One tagged name node: what the winning pattern made of it.
struct Tag<'t> {
    name: Node<'t>,
    /// The winning pattern's index: a lower one takes the node over.
    pattern: usize,
    /// `None` for a reference, or a node an `@ignore` match claimed (`ignored`).
    kind: Option<DefKind>,
    ignored: bool,
    /// The definition's node: the smallest any definition pattern tagged this name with.
    node: Option<Node<'t>>,
    doc: Option<Node<'t>>,
}

/// Extracts row `row`'s definitions and references from the parse of `b.src`. `Err` when
/// the query does not compile against the grammar: the file then keeps its module alone.
pub fn walk(b: &mut Builder<'_>, root: Node<'_>, row: usize) -> Result<(), String> {
    let c = compiled(row)?;
    let tags = collect(b.src, root, c);
    let (defs, refs): (Vec<&Tag<'_>>, Vec<&Tag<'_>>) = tags
        .iter()
        .filter(|t| !t.ignored)
        .partition(|t| t.kind.is_some());
    let spans = spans(&defs);
    emit(b, &defs, &spans, &refs);
    Ok(())
}

/// Every tagged name node, in source order (see the module documentation for the rules).
fn collect<'t>(src: &[u8], root: Node<'t>, c: &Compiled) -> Vec<Tag<'t>> {
    let mut by_name: rustc_hash::FxHashMap<(usize, usize), Tag<'t>> =
        rustc_hash::FxHashMap::default();
    let mut cursor = QueryCursor::new();
    cursor.set_match_limit(MATCH_LIMIT);
    let mut matches = cursor.matches(&c.query, root, src);
    while let Some(m) = matches.next() {
        let (mut name, mut node, mut kind, mut doc) = (None, None, None, None);
        let (mut ignored, mut tagged) = (false, false);
        for cap in m.captures() {
            match c.roles[cap.index as usize] {
                Role::Name => name = Some(cap.node),
                Role::Ignore => {
                    ignored = true;
                    name = name.or(Some(cap.node));
                }
                Role::Doc => doc = doc.or(Some(cap.node)),
                Role::Def(k) => {
                    tagged = true;
                    kind = Some(k);
                    node = Some(cap.node);
                }
                Role::Ref => tagged = true,
                Role::Other => {}
            }
        }
        let Some(name) = name else { continue };
        if (!tagged && !ignored) || name.has_error() {
            continue;
        }
        let ignored = ignored && !tagged;
        let key = (name.start_byte(), name.end_byte());
        let t = by_name.entry(key).or_insert(Tag {
            name,
            pattern: m.pattern_index,
            kind,
            ignored,
            node: None,
            doc,
        });
        if m.pattern_index < t.pattern {
            t.pattern = m.pattern_index;
            t.kind = kind;
            t.ignored = ignored;
            t.doc = doc.or(t.doc);
        }
        if let Some(n) = node {
            if t.node
                .is_none_or(|old| n.byte_range().len() < old.byte_range().len())
            {
                t.node = Some(n);
            }
        }
    }
    let mut tags: Vec<Tag<'t>> = by_name.into_values().collect();
    tags.sort_unstable_by_key(|t| (t.name.start_byte(), t.name.end_byte()));
    tags
}

/// Each definition's span node: its tagged node, narrowed where another definition shares
/// it and names it first (the container).
fn spans<'t>(defs: &[&Tag<'t>]) -> Vec<Node<'t>> {
    let names: Vec<usize> = defs.iter().map(|d| d.name.start_byte()).collect();
    let mut owner: rustc_hash::FxHashMap<usize, usize> = rustc_hash::FxHashMap::default();
    for (i, d) in defs.iter().enumerate() {
        let n = d.node.unwrap_or(d.name);
        owner.entry(n.id()).or_insert(i);
    }
    defs.iter()
        .enumerate()
        .map(|(i, d)| {
            let shared = d.node.unwrap_or(d.name);
            if owner[&shared.id()] == i {
                return declaration(shared);
            }
            let holds_other = |n: Node<'_>| {
                let lo = names.partition_point(|&s| s < n.start_byte());
                names[lo..]
                    .iter()
                    .take_while(|&&s| s < n.end_byte())
                    .any(|&s| s != names[i])
            };
            let mut span = d.name;
            while let Some(p) = span.parent() {
                if p.id() == shared.id() || holds_other(p) {
                    break;
                }
                span = p;
            }
            span
        })
        .collect()
}

/// The declaration `n` is the signature of, or `n` itself.
fn declaration(n: Node<'_>) -> Node<'_> {
    match n.parent() {
        Some(p) if p.field("signature").is_some_and(|s| s.id() == n.id()) => p,
        _ => n,
    }
}

/// A name as the graph keeps it: the last segment of a qualified name (`Foo.Bar` → `Bar`,
/// `List.map` → `map`), without type arguments or quotes (R's `"f" <- function`).
fn bare_name(text: &str) -> String {
    let t = text.split(['<', '(']).next().unwrap_or("");
    let t = t.trim_matches(|c: char| c == '"' || c == '\'' || c == '`' || c.is_whitespace());
    let last = if t.chars().any(char::is_alphanumeric) {
        t.rsplit(['.', ':'])
            .find(|s| !s.trim().is_empty())
            .unwrap_or("")
    } else {
        t
    };
    cap(collapse(last), 200)
}

/// Adds the definitions (nested by span, locals dropped) and the references (each in the
/// innermost definition around it) to `b`.
fn emit(b: &mut Builder<'_>, defs: &[&Tag<'_>], spans: &[Node<'_>], refs: &[&Tag<'_>]) {
    let mut order: Vec<usize> = (0..defs.len()).collect();
    order.sort_by_key(|&i| {
        (
            spans[i].start_byte(),
            std::cmp::Reverse(spans[i].end_byte()),
        )
    });
    // Open definitions: (index in `b.out.defs`, end byte), outermost first.
    let mut open: Vec<(u32, usize)> = vec![];
    let mut next_ref = 0;
    let scope_at = |open: &mut Vec<(u32, usize)>, at: usize| {
        while open.last().is_some_and(|&(_, end)| end <= at) {
            open.pop();
        }
        open.last().map_or(0, |&(d, _)| d)
    };
    for i in order {
        let (d, span) = (defs[i], spans[i]);
        while next_ref < refs.len() && refs[next_ref].name.start_byte() < span.start_byte() {
            let at = refs[next_ref].name.start_byte();
            let scope = scope_at(&mut open, at);
            reference(b, refs[next_ref], scope);
            next_ref += 1;
        }
        let parent = scope_at(&mut open, span.start_byte());
        let kind = d.kind.unwrap_or(DefKind::Var);
        let in_function = b.out.defs[parent as usize].kind == DefKind::Function;
        let name = bare_name(&b.text(d.name));
        if name.is_empty() || (kind == DefKind::Var && in_function) {
            continue;
        }
        let idx = definition(b, d, span, kind, name, parent);
        open.push((idx, span.end_byte()));
    }
    for r in &refs[next_ref..] {
        let scope = scope_at(&mut open, r.name.start_byte());
        reference(b, r, scope);
    }
}

fn definition(
    b: &mut Builder<'_>,
    d: &Tag<'_>,
    span: Node<'_>,
    kind: DefKind,
    name: String,
    parent: u32,
) -> u32 {
    let doc = d.doc.map_or(String::new(), |n| {
        let t = b.text(n);
        first_paragraph(t.trim_start_matches("(*").trim_end_matches("*)"))
    });
    // The query's nesting, not the visitor's, decides the parent: define under it.
    let saved = std::mem::replace(&mut b.scope, parent);
    let idx = b.def(kind, name, span, name_line(b.src, d.name));
    b.scope = saved;
    b.out.defs[idx as usize].doc = doc;
    idx
}

/// The source line holding `name`, trimmed and capped: the header a reader recognises
/// (`public async Task<User> Find(int id)`, `def handle_call(msg, _from, state) do`).
fn name_line(src: &[u8], name: Node<'_>) -> String {
    let at = name.start_byte().min(src.len());
    let start = memchr::memrchr(b'\n', &src[..at]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &src[at..]).map_or(src.len(), |i| at + i);
    let line = String::from_utf8_lossy(&src[start..end]);
    cap(collapse(&line), 200)
}

fn reference(b: &mut Builder<'_>, r: &Tag<'_>, scope: u32) {
    let name = bare_name(&b.text(r.name));
    if name.is_empty() {
        return;
    }
    let p = r.name.start_position();
    b.out.refs.push(RawRef {
        path: vec![name],
        line: p.row as u32 + 1,
        col: p.column as u32,
        scope,
        arity: NO_ARITY,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles_against_its_grammar() {
        for (i, t) in TAGGED.iter().enumerate() {
            assert!(compiled(i).is_ok(), "{}: {:?}", t.name, compiled(i).err());
        }
    }

    #[test]
    fn names_are_bare() {
        assert_eq!(bare_name("MyApp.Accounts"), "Accounts");
        assert_eq!(bare_name("\"handler\""), "handler");
        assert_eq!(bare_name("IEnumerable<T>"), "IEnumerable");
        assert_eq!(bare_name("|>"), "|>");
        assert_eq!(bare_name("List.map"), "map");
    }
}
