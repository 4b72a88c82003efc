//! `Key`: an `f64` that heaps can order (debts, finish times), for the
//! policies that pick the largest or the earliest of many.

use std::cmp::Ordering;

/// An `f64` ordered as numbers are: never NaN (the policies' quantities are
/// checked finite or infinite), and 0 and -0 tie, as `<` sees them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Key(pub f64);

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.partial_cmp(&other.0).unwrap_or(Ordering::Equal)
    }
}
