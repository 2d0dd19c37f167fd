//! The one error type of the core. The binding crate maps each variant to a Python exception
//! in a single place, so callers see a stable hierarchy rooted at `CtxfastError`.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum CoreError {
    /// An encoding name that the token engine does not know.
    #[error("unknown encoding {0:?}; expected one of: cl100k_base, o200k_base, approx")]
    UnknownEncoding(String),
    /// Arguments that are well-typed but semantically invalid.
    #[error("{0}")]
    InvalidArgument(String),
    /// Token ids that do not decode to valid UTF-8 text or are out of the vocabulary.
    #[error("{0}")]
    Decode(String),
    /// Filesystem or database trouble, with the path or operation in the message.
    #[error("{0}")]
    Io(String),
    /// A run stopped on request (Ctrl-C) before it finished; nothing was written.
    #[error("cancelled")]
    Cancelled,
    /// The index database is damaged (corrupt pages, not a database, a missing table): the
    /// graph builder answers it by rebuilding from scratch.
    #[error("{0}")]
    Corrupt(String),
}

pub type CoreResult<T> = Result<T, CoreError>;
