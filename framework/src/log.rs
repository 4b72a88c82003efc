//! The run's log: lines for the user (a disk suspension, a refusal, what a
//! policy logs), in simulated-time order, at most [`MAX_LINES`] a run.
//!
//! It lives beside the state, not in it: a policy reaches it only through
//! a live [`crate::View`] (one at the current step), so that evaluations at
//! projected times never write into it.

use crate::time::{format_time, Time};
use std::cell::RefCell;

/// At most this many lines a run; the last one says that more were dropped.
pub const MAX_LINES: usize = 10_000;

#[derive(Debug, Default)]
pub struct RunLog {
    lines: RefCell<Vec<String>>,
    dropped: RefCell<u64>,
}

impl RunLog {
    /// Adds `who: msg`, stamped with `t`.
    pub fn push(&self, t: Time, who: &str, msg: &str) {
        let mut lines = self.lines.borrow_mut();
        if lines.len() < MAX_LINES {
            lines.push(format!("{}: {who}: {msg}", format_time(t)));
        } else {
            *self.dropped.borrow_mut() += 1;
        }
    }

    /// Where the log stands, to [`RunLog::rewind`] to.
    pub(crate) fn mark(&self) -> (usize, u64) {
        (self.lines.borrow().len(), *self.dropped.borrow())
    }

    /// Forgets the lines written since `mark`.
    pub(crate) fn rewind(&self, mark: (usize, u64)) {
        self.lines.borrow_mut().truncate(mark.0);
        *self.dropped.borrow_mut() = mark.1;
    }

    /// The lines, with a last one counting those dropped over the limit.
    pub fn into_lines(self) -> Vec<String> {
        let mut lines = self.lines.into_inner();
        let dropped = self.dropped.into_inner();
        if dropped > 0 {
            lines.push(format!(
                "the run's log holds at most {MAX_LINES} lines: {dropped} later lines were dropped"
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
        assert!(lines[MAX_LINES].contains("5 later lines were dropped"));
    }
}
