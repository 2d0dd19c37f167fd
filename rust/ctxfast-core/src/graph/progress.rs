//! Progress of one `index` run, readable from another thread while the run is going.
//!
//! The indexer never calls back into its caller (the Python binding would have to take the
//! GIL from inside rayon workers); it only bumps atomics, and whoever wants a progress bar
//! polls [`Progress::snapshot`] from its own thread. The same object carries the way back:
//! [`Progress::cancel`] asks the run to stop, and the indexer checks it between files.

use crate::error::{CoreError, CoreResult};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

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

/// Shared counters: the current stage and how many of the files to parse are done, plus a
/// cancel flag the run checks between files.
#[derive(Debug, Default)]
pub struct Progress {
    stage: AtomicU8,
    done: AtomicUsize,
    total: AtomicUsize,
    cancelled: AtomicBool,
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
}
