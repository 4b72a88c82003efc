//! The plain data that the other modules share: a sweep's definition as its
//! manifest records it, a shard, one run's row and the manifest. Nothing
//! here depends on another module of the crate, so data flows one way:
//! `data` → `summary` → `plot` → `output`, and `lib` (loading and running)
//! uses them all.

use serde::{Deserialize, Serialize};

/// vcsim's version, written into every manifest.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The most runs one sweep process makes (a shard's, with `--shard`): each
/// keeps a row of results in memory until the files are written, about
/// 250 MB for a million. A larger sweep is run in shards and merged.
pub const MAX_RUNS: u64 = 1_000_000;

/// The most cells one sweep process runs (a shard's, with `--shard`): each
/// cell run keeps its rows, its labels and its plotted points until the
/// files are written, about 1.1 KB for a cell of one policy and one
/// replication (200,000 took 279 MB, loading included): half a million
/// stay under 1 GB with the whole sweep's cells loaded.
pub const MAX_PROCESS_CELLS: usize = 500_000;

/// The most cells (points of the axes' product) a sweep file may have.
/// Loading checks every cell's scenario, in every shard: beyond a million
/// cells that alone would take minutes and gigabytes, and they are more
/// than one process may run even once each.
pub const MAX_CELLS: usize = 1_000_000;

/// One axis: a parameter and its values, in the file's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    pub param: String,
    pub values: Vec<serde_json::Value>,
}

/// An input file of the sweep and its SHA-256, as named relative to the
/// sweep file's directory (so manifests do not depend on where they ran).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Input {
    pub path: String,
    pub sha256: String,
}

/// The definition of a sweep, as written in its manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Definition {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub file: String,
    pub scenario: String,
    pub policies: Vec<String>,
    pub replications: u32,
    pub metrics: Vec<String>,
    pub set: std::collections::BTreeMap<String, serde_json::Value>,
    pub axes: Vec<Axis>,
}

impl Definition {
    /// Cells of the sweep: the product of the axes' lengths (1 without an
    /// axis: the scenario itself). Saturates: a manifest may name any axes.
    pub fn cell_count(&self) -> usize {
        self.axes
            .iter()
            .fold(1usize, |n, a| n.saturating_mul(a.values.len()))
    }

    /// The index of each axis's value at `cell`.
    pub fn value_indices(&self, cell: usize) -> Vec<usize> {
        value_indices(&self.axes, cell)
    }

    /// The value of each axis at `cell`, as the CSV files write it.
    pub fn cell_labels(&self, cell: usize) -> Vec<String> {
        self.value_indices(cell)
            .iter()
            .zip(&self.axes)
            .map(|(&j, a)| value_label(&a.values[j]))
            .collect()
    }
}

/// The index of each axis's value at `cell`: cells number the axes'
/// product with the last axis varying fastest. Without an axis, cell 0 is
/// the one cell and has no values.
pub fn value_indices(axes: &[Axis], cell: usize) -> Vec<usize> {
    let mut idx = Vec::with_capacity(axes.len());
    let mut rest = cell;
    for a in axes.iter().rev() {
        idx.push(rest % a.values.len());
        rest /= a.values.len();
    }
    idx.reverse();
    idx
}

/// Shows a TOML value as the CSV files and plots name it.
pub fn value_label(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => match n.as_f64() {
            // Extremes in exponent form: `1e300` rather than 301 digits.
            Some(f) if n.is_f64() && f != 0.0 && !(1e-4..1e15).contains(&f.abs()) => {
                format!("{f:e}")
            }
            Some(f) if n.is_f64() => format!("{f}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// The label of a policy as a sweep's definition writes it (its whole
/// spec): [`vcsim_framework::PolicySpec::label`], or the text itself if it
/// does not parse.
pub fn label_of(spec: &str) -> String {
    vcsim_framework::PolicySpec::parse(spec).map_or_else(|_| spec.to_string(), |s| s.label())
}

/// A deterministic slice of the cells: shard K of N runs cells i with
/// `i % N == K - 1` (round robin, so that slow regions of an axis spread).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

impl Shard {
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || format!("--shard takes K/N with 1 <= K <= N (like 2/4), found `{s}`");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        if n == 0 || k == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
    pub fn contains(&self, cell: usize) -> bool {
        cell % self.n == self.k - 1
    }
}

/// One run: a cell, a policy, a replication.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub cell: usize,
    /// The value of each axis, as text.
    pub labels: Vec<String>,
    /// The policy's whole spec, as [`Definition::policies`] writes it (the
    /// CSV files show its label beside it).
    pub policy: String,
    pub replication: u32,
    pub seed: u64,
    /// The metrics in [`vcsim_framework::Metrics::NAMES`] order, or why the run failed.
    pub outcome: Result<Vec<f64>, String>,
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub vcsim_version: String,
    pub sweep: Definition,
    pub inputs: Vec<Input>,
    pub seeds: Vec<u64>,
    /// Cells of the whole sweep (a shard runs some of them).
    pub cells: usize,
    /// Which slice this directory holds; `null` for a whole sweep.
    pub shard: Option<Shard>,
    /// The cells whose runs `results.csv` holds, ascending (every cell
    /// for a whole sweep).
    #[serde(default)]
    pub cell_ids: Vec<usize>,
    /// Runs written to `results.csv`, and how many of them failed.
    pub runs: usize,
    pub failed_runs: usize,
    /// SHA-256 of `results.csv` as written, so that `merge` can tell a
    /// file changed or cut short after the sweep wrote it. (Empty in a
    /// manifest written before vcsim recorded it.)
    #[serde(default)]
    pub results_sha256: String,
}

/// SHA-256 as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use crate::data::value_label;
    use serde_json::json;

    #[test]
    fn values_print_as_people_write_them() {
        assert_eq!(value_label(&json!(0.25)), "0.25");
        assert_eq!(value_label(&json!(5)), "5");
        assert_eq!(value_label(&json!(0.0)), "0");
        assert_eq!(value_label(&json!("CS2")), "CS2");
        // Not 301 digits.
        assert_eq!(value_label(&json!(1e300)), "1e300");
        assert_eq!(value_label(&json!(-1.3e-296)), "-1.3e-296");
    }
}
