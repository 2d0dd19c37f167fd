//! The directory names every walk prunes: vendored trees and ctxfast's own index.
//!
//! One list for the indexer's discovery ([`crate::graph::discover`]), the lexical search
//! ([`crate::lexical`]) and, through the binding, the Python side (`ctxfast.text`): a file
//! under one of these directories at any depth is third-party code, version-control data or
//! ctxfast's index, never the project's source. The lexical walk also skips hidden entries
//! (ripgrep's default), so `.git` and `.ctxfast` are pruned there twice over.

/// Directory names pruned at any depth below the root.
pub const VENDORED_DIRS: &[&str] = &[
    "vendor",
    "node_modules",
    "site-packages",
    "third_party",
    "external",
    ".git",
    ".ctxfast",
];
