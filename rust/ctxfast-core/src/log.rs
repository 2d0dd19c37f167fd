//! Messages of the core for its embedder's log, without a logging framework.
//!
//! The core never prints. It records what a developer may want to see (stage timings of an
//! index run) here, and the Python binding drains the queue into the `ctxfast` logger after
//! each native call. The queue is bounded, so a program that never drains it keeps only the
//! latest messages.

use std::collections::VecDeque;
use std::sync::Mutex;

/// Messages kept when nobody drains them; older ones are dropped first.
pub const MAX_QUEUED: usize = 1000;

/// How much a message matters, as Python's logging levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Debug,
    Info,
    Warning,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warning => "warning",
        }
    }
}

static QUEUE: Mutex<VecDeque<(Level, String)>> = Mutex::new(VecDeque::new());

/// Records one message for the embedder's log.
pub fn push(level: Level, message: String) {
    let mut q = QUEUE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if q.len() == MAX_QUEUED {
        q.pop_front();
    }
    q.push_back((level, message));
}

/// Every message recorded since the last drain, oldest first.
pub fn drain() -> Vec<(Level, String)> {
    let mut q = QUEUE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    q.drain(..).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_drained_in_order_and_the_queue_is_bounded() {
        drain();
        push(Level::Info, "first".into());
        push(Level::Debug, "second".into());
        let got = drain();
        assert!(got.ends_with(&[
            (Level::Info, "first".into()),
            (Level::Debug, "second".into())
        ]));
        for i in 0..MAX_QUEUED + 5 {
            push(Level::Debug, i.to_string());
        }
        let got = drain();
        assert_eq!(got.len(), MAX_QUEUED);
        assert_eq!(got.last().unwrap().1, (MAX_QUEUED + 4).to_string());
        assert!(drain().is_empty());
    }
}
