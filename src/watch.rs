//! `compare --watch` (issue 7).

use crate::compare::Comparison;
use crate::Failure;
use std::path::Path;

/// Runs `once`, then (with issue 7) re-runs whenever a watched file changes.
pub fn watch<F, S>(_scenario: &Path, _policies: &[String], once: F, show: S) -> Result<(), Failure>
where
    F: Fn() -> Result<Comparison, Failure>,
    S: Fn(&Comparison) -> String,
{
    print!("{}", show(&once()?));
    Err(Failure::input("--watch is not supported by this build yet"))
}
