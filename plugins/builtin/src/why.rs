//! Small helpers for the policies' reasons (asked only in explained runs).

use vcsim_framework::View;

/// The view index of job `id`.
pub fn index_of(v: &View, id: u64) -> Option<usize> {
    v.jobs().iter().position(|j| j.id == id)
}

/// Bytes for a sentence: `1.2 GB`, `300 MB`.
pub fn bytes(x: f64) -> String {
    let n = vcsim_framework::explain::short_number;
    if x.abs() >= 1e9 {
        format!("{} GB", n((x / 1e9 * 100.0).round() / 100.0))
    } else if x.abs() >= 1e6 {
        format!("{} MB", n((x / 1e6 * 10.0).round() / 10.0))
    } else {
        format!("{} kB", n((x / 1e3).round()))
    }
}

/// Joins the parts of a reason's sentence.
pub fn join(parts: &[String]) -> String {
    parts.join("; ")
}
