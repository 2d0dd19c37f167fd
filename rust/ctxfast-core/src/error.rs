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
    /// Filesystem trouble. The message names the path (see [`IoContext`]); the
    /// [`std::io::ErrorKind`] is kept so the binding can raise `FileNotFoundError`,
    /// `PermissionError` or a plain `OSError`.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// SQLite trouble in the index database or the parse cache. Damage (corrupt pages, not a
    /// database, a table gone) is told apart by [`CoreError::damage`].
    #[error("SQLite: {0}")]
    Db(#[from] rusqlite::Error),
    /// A run stopped on request (Ctrl-C) before it finished; nothing was written.
    #[error("cancelled")]
    Cancelled,
    /// The index database is damaged in a way SQLite does not report itself (a table of the
    /// current schema missing): the graph builder answers it by rebuilding from scratch.
    #[error("{0}")]
    Corrupt(String),
}

impl CoreError {
    /// An I/O error with what was being done (usually a path) in front of its message, its
    /// kind kept.
    pub fn io(e: &std::io::Error, what: &str) -> CoreError {
        CoreError::Io(std::io::Error::new(e.kind(), format!("{what}: {e}")))
    }

    /// Why the database behind this error cannot be trusted, if the error is damage rather
    /// than trouble (busy, unreadable, full disk): the graph builder then rebuilds the index
    /// from scratch instead of failing.
    pub fn damage(&self) -> Option<String> {
        use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
        match self {
            CoreError::Corrupt(why) => Some(why.clone()),
            CoreError::Db(e)
                if matches!(e.sqlite_error_code(), Some(DatabaseCorrupt | NotADatabase))
                    || e.to_string().contains("no such table") =>
            {
                Some(format!("recon.db: {e}"))
            }
            _ => None,
        }
    }
}

/// Adds what was being done (usually a path) to an I/O error without losing its kind.
pub trait IoContext<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T, std::io::Error>;
}

impl<T> IoContext<T> for Result<T, std::io::Error> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T, std::io::Error> {
        self.map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", what())))
    }
}

pub type CoreResult<T> = Result<T, CoreError>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::ErrorKind;

    #[test]
    fn io_context_keeps_the_kind_and_names_the_path() {
        let missing = std::fs::read("/nonexistent/ctxfast/x").context(|| "cannot read x".into());
        let e = CoreError::from(missing.unwrap_err());
        let CoreError::Io(io) = &e else {
            panic!("{e:?}")
        };
        assert_eq!(io.kind(), ErrorKind::NotFound);
        assert!(e.to_string().starts_with("cannot read x: "), "{e}");
    }

    #[test]
    fn only_damage_asks_for_a_rebuild() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let gone = conn.prepare("SELECT * FROM nodes").unwrap_err();
        assert!(CoreError::from(gone).damage().is_some());
        let bad_sql = conn.prepare("SELEC 1").unwrap_err();
        assert!(CoreError::from(bad_sql).damage().is_none());
        assert!(CoreError::Corrupt("x".into()).damage().is_some());
        let io = std::io::Error::new(ErrorKind::PermissionDenied, "no");
        assert!(CoreError::from(io).damage().is_none());
    }
}
