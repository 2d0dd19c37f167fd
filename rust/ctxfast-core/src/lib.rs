//! ctxfast-core: the pure-Rust algorithms behind ctxfast.
//!
//! Nothing here depends on Python; the `ctxfast-py` crate is a thin binding over these
//! functions. Every public function is deterministic and returns [`CoreError`] instead of
//! panicking on bad input.

pub mod bm25;
pub mod bundles;
pub mod codetok;
mod cursor;
pub mod def_docs;
pub mod deftable;
pub mod doc_terms;
pub mod error;
pub mod graph;
pub mod identity;
pub mod lexical;
pub mod literals;
pub mod log;
pub mod pagerank;
pub mod tokens;
pub mod truncate;
pub mod vendored;
pub mod window;

pub use error::{CoreError, CoreResult};
