//! The run's log: lines for the user (a disk suspension, a refusal, what a
//! policy logs), in simulated-time order, at most [`MAX_LINES`] lines and
//! [`MAX_BYTES`] bytes a run.
//!
//! It lives beside the state, not in it: a policy reaches it only through
//! a live [`crate::View`] (one at the current step), so that evaluations at
//! projected times never write into it.

use crate::time::{format_time, Time};
use std::cell::{Cell, RefCell};

/// At most this many lines a run; the last one says that more were dropped.
pub const MAX_LINES: usize = 10_000;

/// At most this many bytes of lines a run (the stamps included): a policy
/// may log strings of 64 KB, and 10,000 of them would hold 650 MB a run.
/// The first line that would go over is dropped with every later one, and
/// the last line says so. Eight runs in parallel hold at most 32 MB of logs.
pub const MAX_BYTES: usize = 4_000_000;

#[derive(Debug, Default)]
pub struct RunLog {
    lines: RefCell<Vec<String>>,
    /// Bytes of `lines`.
    bytes: Cell<usize>,
    dropped: Cell<u64>,
}

/// Where a [`RunLog`] stands, to [`RunLog::rewind`] to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LogMark {
    lines: usize,
    bytes: usize,
    dropped: u64,
}

impl RunLog {
    /// Adds `who: msg`, stamped with `t`; once a line is over a bound,
    /// it and every later line are only counted.
    pub fn push(&self, t: Time, who: &str, msg: &str) {
        let mut lines = self.lines.borrow_mut();
        if self.dropped.get() == 0 && lines.len() < MAX_LINES {
            let stamp = format_time(t);
            let len = stamp.len() + 2 + who.len() + 2 + msg.len();
            if self.bytes.get() + len <= MAX_BYTES {
                lines.push(format!("{stamp}: {who}: {msg}"));
                self.bytes.set(self.bytes.get() + len);
                return;
            }
        }
        self.dropped.set(self.dropped.get() + 1);
    }

    /// Where the log stands, to [`RunLog::rewind`] to.
    pub(crate) fn mark(&self) -> LogMark {
        LogMark {
            lines: self.lines.borrow().len(),
            bytes: self.bytes.get(),
            dropped: self.dropped.get(),
        }
    }

    /// Forgets the lines written since `mark`.
    pub(crate) fn rewind(&self, mark: LogMark) {
        self.lines.borrow_mut().truncate(mark.lines);
        self.bytes.set(mark.bytes);
        self.dropped.set(mark.dropped);
    }

    /// The lines, with a last one counting those dropped over a bound.
    pub fn into_lines(self) -> Vec<String> {
        let mut lines = self.lines.into_inner();
        let dropped = self.dropped.into_inner();
        if dropped > 0 {
            let bound = if lines.len() >= MAX_LINES {
                format!("{MAX_LINES} lines")
            } else {
                format!("{MAX_BYTES} bytes")
            };
            lines.push(format!(
                "the run's log holds at most {bound}: {dropped} later lines were dropped"
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_per_run_and_said_once() {
        let log = RunLog::default();
        for i in 0..MAX_LINES + 5 {
            log.push(i as f64, "p", "x");
        }
        let lines = log.into_lines();
        assert_eq!(lines.len(), MAX_LINES + 1);
        assert!(lines[MAX_LINES].contains("at most 10000 lines: 5 later lines were dropped"));
    }

    #[test]
    fn the_bytes_are_capped_too_and_said_once() {
        let log = RunLog::default();
        let big = "z".repeat(65_000);
        for i in 0..1000 {
            log.push(i as f64, "p", &big);
            // A short line after the bound is dropped too: the log keeps
            // a prefix of the run's lines.
            log.push(i as f64, "p", "x");
        }
        let lines = log.into_lines();
        let kept: usize = lines.iter().map(String::len).sum();
        assert!(kept <= MAX_BYTES + 200, "{kept} bytes");
        let said: Vec<&String> = lines.iter().filter(|l| l.contains("at most")).collect();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains(&format!("at most {MAX_BYTES} bytes")),
            "{said:?}"
        );
        assert_eq!(lines.last(), Some(said[0]));
    }

    #[test]
    fn a_rewind_forgets_the_bytes_too() {
        let log = RunLog::default();
        log.push(0.0, "p", "a");
        let mark = log.mark();
        log.push(1.0, "p", &"z".repeat(MAX_BYTES));
        log.rewind(mark);
        log.push(2.0, "p", "b");
        let lines = log.into_lines();
        assert_eq!(lines.len(), 2, "{lines:?}");
    }
}
