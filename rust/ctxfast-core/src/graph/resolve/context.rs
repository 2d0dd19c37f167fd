//! What resolution reads from outside the indexed files: the Go module path (`go.mod` at the
//! root) and the names of the Rust crates (each crate root's `Cargo.toml`).
//!
//! Neither file is part of the graph, yet both decide edges: `import "example.com/m/pkg"`
//! reaches `pkg/` only under module `example.com/m`, and `use my_crate::x` reaches a crate
//! only by its package name. A refresh therefore compares the context with the one the index
//! was written under (`meta.resolve_context`, [`Context::stamp`]) and resolves every file
//! again when it moved — after an edit of `go.mod`, and above all when an index is seeded from
//! another tree's ([`crate::graph::seed`]), whose files may match while its module path does
//! not.

use super::symbols::rust_root;
use crate::graph::discover;
use crate::graph::lang::{module_qualname, Lang};
use rustc_hash::FxHashMap;
use std::fmt::Write as _;
use std::path::Path;

/// The resolution context of one tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Context {
    pub(super) go_module: String,
    /// Cargo package (and `[lib]`) names, `-` as `_`, → the crate root's module.
    pub(super) cargo_crates: FxHashMap<String, String>,
}

impl Context {
    /// Reads the context of the tree at `root` whose Rust files (relative paths) are
    /// `rust_files`: the module line of `go.mod`, and the `Cargo.toml` next to each crate
    /// root (a `lib.rs` or `main.rs`, or its `src/` folder's parent).
    pub fn read<'a>(root: &Path, rust_files: impl IntoIterator<Item = &'a str>) -> Context {
        let mut roots: Vec<String> = rust_files.into_iter().filter_map(rust_root).collect();
        roots.sort();
        roots.dedup();
        let mut cargo_crates = FxHashMap::default();
        for dir in roots {
            let krate = dir.strip_suffix("src/").unwrap_or(&dir);
            let Ok(text) = std::fs::read_to_string(root.join(krate).join("Cargo.toml")) else {
                continue;
            };
            let module = module_qualname(&format!("{dir}lib.rs"), Lang::Rust);
            for name in cargo_names(&text) {
                cargo_crates.entry(name).or_insert_with(|| module.clone());
            }
        }
        Context {
            go_module: go_module(root),
            cargo_crates,
        }
    }

    /// The context as one line per fact, sorted: what `meta.resolve_context` holds.
    pub fn stamp(&self) -> String {
        let mut crates: Vec<_> = self.cargo_crates.iter().collect();
        crates.sort();
        let mut out = format!("go {}\n", self.go_module);
        for (name, module) in crates {
            let _ = writeln!(out, "crate {name} {module}");
        }
        out
    }
}

/// The module path `go.mod` at `root` declares (`""` without one).
fn go_module(root: &Path) -> String {
    discover::read_regular(&root.join("go.mod"), discover::DEFAULT_MAX_FILE_BYTES)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.trim()
                    .strip_prefix("module ")
                    .map(|m| m.trim().trim_matches('"').to_string())
            })
        })
        .unwrap_or_default()
}

/// The `name`s of a Cargo manifest's `[package]` and `[lib]` tables, `-` written as `_` (how
/// code names the crate).
fn cargo_names(manifest: &str) -> Vec<String> {
    let mut section = "";
    let mut out = vec![];
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line;
            continue;
        }
        if section != "[package]" && section != "[lib]" {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            let v = v.trim().trim_matches('"');
            if k.trim() == "name" && !v.is_empty() && !v.contains(['{', '[']) {
                let name = v.replace('-', "_");
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        }
    }
    out
}
