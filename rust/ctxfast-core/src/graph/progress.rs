//! Progress of one `index` run, readable from another thread while the run is going.
//!
//! The indexer never calls back into its caller (the Python binding would have to take the
//! GIL from inside rayon workers); it only bumps atomics, and whoever wants a progress bar
//! polls [`Progress::snapshot`] from its own thread. The same object carries the way back:
//! [`Progress::cancel`] asks the run to stop, and the indexer checks it between files.

use crate::error::{CoreError, CoreResult};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The stages of an index run, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Discover,
    Parse,
    Resolve,
    Write,
    Done,
}

impl Stage {
    const ALL: [Stage; 5] = [
        Stage::Discover,
        Stage::Parse,
        Stage::Resolve,
        Stage::Write,
        Stage::Done,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Discover => "discover",
            Stage::Parse => "parse",
            Stage::Resolve => "resolve",
            Stage::Write => "write",
            Stage::Done => "done",
        }
    }
}

/// `(path, sha256, language)` of a file the index records with a content key.
pub type ContentRow = (String, String, String);

/// Shared counters: the current stage and how many of the files to parse are done, plus a
/// cancel flag the run checks between files, and the content rows a cold build publishes
/// as soon as every file is written ([`Progress::content_rows`]).
#[derive(Debug, Default)]
pub struct Progress {
    stage: AtomicU8,
    done: AtomicUsize,
    total: AtomicUsize,
    cancelled: AtomicBool,
    content: OnceLock<Vec<ContentRow>>,
}

impl Progress {
    pub fn new() -> Progress {
        Progress::default()
    }

    pub(crate) fn set_stage(&self, stage: Stage) {
        self.stage.store(stage as u8, Ordering::Relaxed);
    }

    pub(crate) fn set_total(&self, total: usize) {
        self.total.store(total, Ordering::Relaxed);
    }

    pub(crate) fn tick(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
    }

    /// Asks the run to stop at its next check (between two files); it then returns
    /// [`CoreError::Cancelled`] and leaves the index as it was before the run.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// `Err(Cancelled)` once [`Progress::cancel`] was called.
    pub(crate) fn check(&self) -> CoreResult<()> {
        if self.is_cancelled() {
            Err(CoreError::Cancelled)
        } else {
            Ok(())
        }
    }

    pub(crate) fn publish_content_rows(&self, rows: Vec<ContentRow>) {
        let _ = self.content.set(rows);
    }

    /// The rows `files` will hold with a content key once a cold build commits, sorted by
    /// path, published when every file's rows are written, before the run sorts the nodes
    /// and builds the indexes (a second in Django's cold build, on one core): a caller can
    /// start then what depends only on the files' content (the retrieval state's text
    /// pieces, keyed by these rows, so they serve only an index of this content). `None`
    /// before that, and for a refresh.
    pub fn content_rows(&self) -> Option<&[ContentRow]> {
        self.content.get().map(Vec::as_slice)
    }

    /// `(stage, files done, files to look at)`; `done <= total` once the total is known.
    pub fn snapshot(&self) -> (Stage, usize, usize) {
        let stage = Stage::ALL[usize::from(self.stage.load(Ordering::Relaxed)).min(4)];
        (
            stage,
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        )
    }
}

/// How often [`while_running`] looks at the cancel flag.
const CANCEL_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// Runs `work` (one long SQLite statement or batch) while a watcher thread interrupts the
/// connection of `interrupt` as soon as `progress` is cancelled; an interrupted `work`
/// returns [`CoreError::Cancelled`].
pub(crate) fn while_running<T>(
    progress: &Progress,
    interrupt: &rusqlite::InterruptHandle,
    work: impl FnOnce() -> CoreResult<T>,
) -> CoreResult<T> {
    let done = AtomicBool::new(false);
    let out = std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                if progress.is_cancelled() {
                    interrupt.interrupt();
                    return;
                }
                std::thread::sleep(CANCEL_POLL);
            }
        });
        let out = work();
        done.store(true, Ordering::Relaxed);
        out
    });
    progress.check()?;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_follows_the_updates() {
        let p = Progress::new();
        assert_eq!(p.snapshot(), (Stage::Discover, 0, 0));
        p.set_stage(Stage::Parse);
        p.set_total(3);
        p.tick();
        p.tick();
        assert_eq!(p.snapshot(), (Stage::Parse, 2, 3));
        p.set_stage(Stage::Done);
        assert_eq!(p.snapshot().0.as_str(), "done");
    }

    #[test]
    fn cancel_turns_the_check_into_an_error() {
        let p = Progress::new();
        assert!(p.check().is_ok());
        p.cancel();
        assert!(p.is_cancelled());
        assert!(matches!(p.check(), Err(CoreError::Cancelled)));
    }

    #[test]
    fn a_cancel_interrupts_a_running_statement() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let p = Progress::new();
        let slow =
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1e10) \
                    SELECT COUNT(*) FROM c";
        let out = std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                p.cancel();
            });
            while_running(&p, &conn.get_interrupt_handle(), || {
                conn.query_row(slow, [], |r| r.get::<_, i64>(0))
                    .map_err(CoreError::from)
            })
        });
        assert!(matches!(out, Err(CoreError::Cancelled)));
        let quick = while_running(&Progress::new(), &conn.get_interrupt_handle(), || Ok(7));
        assert_eq!(quick.unwrap(), 7);
    }
}
