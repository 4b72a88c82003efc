//! The four outputs of a sweep, and merging shards.
//!
//! `results.csv` keeps every metric at full precision (Rust prints the
//! shortest text that reads back to the same `f64`), so that [`merge`],
//! which reads the shards' rows back, computes the very same summary and
//! plots as an unsharded run.

use crate::data::{Definition, Manifest, Row};
use crate::summary::{summarize, SummaryLine};
use std::path::{Path, PathBuf};
use vcsim_framework::metrics::round6;
use vcsim_framework::Metrics;

fn io_err(path: &Path, e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(format!("{}: {e}", path.display()))
}

fn opt(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite())
        .map(|v| format!("{}", round6(v)))
        .unwrap_or_default()
}

fn results_csv(def: &Definition, rows: &[Row]) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let mut header: Vec<String> = vec!["cell".into()];
    header.extend(def.axes.iter().map(|a| a.param.clone()));
    header.extend(["policy", "replication", "seed", "status"].map(String::from));
    header.extend(Metrics::NAMES.map(String::from));
    header.push("error".into());
    w.write_record(&header)?;
    for r in rows {
        let mut rec: Vec<String> = vec![r.cell.to_string()];
        rec.extend(r.labels.iter().cloned());
        rec.extend([
            r.policy.clone(),
            r.replication.to_string(),
            r.seed.to_string(),
        ]);
        match &r.outcome {
            Ok(vals) => {
                rec.push("ok".into());
                rec.extend(vals.iter().map(|v| format!("{v}")));
                rec.push(String::new());
            }
            Err(e) => {
                rec.push("failed".into());
                rec.extend(Metrics::NAMES.iter().map(|_| String::new()));
                rec.push(e.clone());
            }
        }
        w.write_record(&rec)?;
    }
    w.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

fn summary_csv(def: &Definition, lines: &[SummaryLine]) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let mut header: Vec<String> = vec!["cell".into()];
    header.extend(def.axes.iter().map(|a| a.param.clone()));
    header.extend(
        [
            "policy",
            "metric",
            "n",
            "mean",
            "ci_low",
            "ci_high",
            "diff_mean",
            "diff_ci_low",
            "diff_ci_high",
            "verdict",
        ]
        .map(String::from),
    );
    w.write_record(&header)?;
    for s in lines {
        let mut rec: Vec<String> = vec![s.cell.to_string()];
        rec.extend(s.labels.iter().cloned());
        rec.extend([s.policy.clone(), s.metric.clone(), s.n.to_string()]);
        rec.extend([opt(s.mean), opt(s.ci_low), opt(s.ci_high)]);
        rec.extend([
            opt(s.diff.map(|d| d.mean)),
            opt(s.diff.and_then(|d| d.low())),
            opt(s.diff.and_then(|d| d.high())),
            s.verdict.unwrap_or("").to_string(),
        ]);
        w.write_record(&rec)?;
    }
    w.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

/// Writes `results.csv`, `summary.csv`, `<metric>.svg` for the sweep's
/// metrics and `manifest.json` into `dir` (created if missing). Returns the
/// manifest written, with its run counts filled in.
pub fn write_outputs(dir: &Path, manifest: &Manifest, rows: &[Row]) -> std::io::Result<Manifest> {
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let def = &manifest.sweep;
    let p = dir.join("results.csv");
    std::fs::write(&p, results_csv(def, rows).map_err(|e| io_err(&p, e))?)
        .map_err(|e| io_err(&p, e))?;
    let summary = summarize(def, rows);
    let p = dir.join("summary.csv");
    std::fs::write(&p, summary_csv(def, &summary).map_err(|e| io_err(&p, e))?)
        .map_err(|e| io_err(&p, e))?;
    for m in &def.metrics {
        let p = dir.join(format!("{m}.svg"));
        let svg = crate::plot::svg(def, m, &summary);
        std::fs::write(&p, svg).map_err(|e| io_err(&p, e))?;
    }
    let mut man = manifest.clone();
    man.runs = rows.len();
    man.failed_runs = rows.iter().filter(|r| r.outcome.is_err()).count();
    let p = dir.join("manifest.json");
    let mut text = serde_json::to_string_pretty(&man).map_err(|e| io_err(&p, e))?;
    text.push('\n');
    std::fs::write(&p, text).map_err(|e| io_err(&p, e))?;
    Ok(man)
}

/// Shard directories that cannot be joined.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeError {
    pub dir: Option<PathBuf>,
    pub message: String,
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.dir {
            Some(d) => write!(f, "{}: {}", d.display(), self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for MergeError {}

/// Reads a sweep directory back: its manifest and rows.
pub fn read_dir(dir: &Path) -> Result<(Manifest, Vec<Row>), MergeError> {
    let e = |m: String| MergeError {
        dir: Some(dir.to_path_buf()),
        message: m,
    };
    let mp = dir.join("manifest.json");
    let text =
        std::fs::read_to_string(&mp).map_err(|x| e(format!("cannot read manifest.json: {x}")))?;
    let man: Manifest = serde_json::from_str(&text)
        .map_err(|x| e(format!("manifest.json is not a sweep manifest: {x}")))?;
    let rp = dir.join("results.csv");
    let mut rd = csv::ReaderBuilder::new()
        .from_path(&rp)
        .map_err(|x| e(format!("cannot read results.csv: {x}")))?;
    let naxes = man.sweep.axes.len();
    let nm = Metrics::NAMES.len();
    let width = 1 + naxes + 4 + nm + 1;
    let mut rows = Vec::new();
    for (i, rec) in rd.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|x| e(format!("results.csv:{line}: {x}")))?;
        if rec.len() != width {
            return Err(e(format!(
                "results.csv:{line}: {} columns, expected {width}",
                rec.len()
            )));
        }
        let bad = |what: &str| e(format!("results.csv:{line}: bad {what}"));
        let cell: usize = rec[0].parse().map_err(|_| bad("cell"))?;
        let labels: Vec<String> = (0..naxes).map(|a| rec[1 + a].to_string()).collect();
        let b = 1 + naxes;
        let policy = rec[b].to_string();
        let replication: u32 = rec[b + 1].parse().map_err(|_| bad("replication"))?;
        let seed: u64 = rec[b + 2].parse().map_err(|_| bad("seed"))?;
        let outcome = match &rec[b + 3] {
            "ok" => Ok((0..nm)
                .map(|k| {
                    rec[b + 4 + k]
                        .parse::<f64>()
                        .map_err(|_| bad(Metrics::NAMES[k]))
                })
                .collect::<Result<Vec<f64>, _>>()?),
            "failed" => Err(rec[width - 1].to_string()),
            _ => return Err(bad("status")),
        };
        rows.push(Row {
            cell,
            labels,
            policy,
            replication,
            seed,
            outcome,
        });
    }
    Ok((man, rows))
}

/// Joins the shard directories of one sweep into `out`, which then holds
/// exactly what an unsharded run would have written.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Manifest, MergeError> {
    if dirs.is_empty() {
        return Err(MergeError {
            dir: None,
            message: "name the shard directories to merge".into(),
        });
    }
    let mut parts = Vec::new();
    for d in dirs {
        parts.push((d.clone(), read_dir(d)?));
    }
    let first = parts[0].1 .0.clone();
    let first = &first;
    let n = first.shard.map_or(1, |s| s.n);
    let mut seen = vec![false; n];
    for (d, (m, _)) in &parts {
        let e = |msg: String| MergeError {
            dir: Some(d.clone()),
            message: msg,
        };
        if m.sweep != first.sweep
            || m.inputs != first.inputs
            || m.seeds != first.seeds
            || m.cells != first.cells
        {
            return Err(e(format!(
                "is not a shard of the same sweep as {} (definitions, inputs or seeds differ)",
                dirs[0].display()
            )));
        }
        if m.vcsim_version != first.vcsim_version {
            return Err(e(format!(
                "was made by vcsim {}, not {}",
                m.vcsim_version, first.vcsim_version
            )));
        }
        let (k, mn) = m.shard.map_or((1, 1), |s| (s.k, s.n));
        if mn != n {
            return Err(e(format!(
                "is shard {k}/{mn}, but the first directory is of {n} shards"
            )));
        }
        if seen[k - 1] {
            return Err(e(format!("shard {k}/{n} is given twice")));
        }
        seen[k - 1] = true;
    }
    if let Some(k) = seen.iter().position(|s| !s) {
        return Err(MergeError {
            dir: None,
            message: format!("shard {}/{n} is missing", k + 1),
        });
    }
    let order = |p: &str| {
        first
            .sweep
            .policies
            .iter()
            .position(|q| q == p)
            .unwrap_or(usize::MAX)
    };
    let mut rows: Vec<Row> = parts.into_iter().flat_map(|(_, (_, r))| r).collect();
    rows.sort_by(|a, b| {
        (a.cell, order(&a.policy), a.replication).cmp(&(b.cell, order(&b.policy), b.replication))
    });
    let mut man = first.clone();
    man.shard = None;
    write_outputs(out, &man, &rows).map_err(|x| MergeError {
        dir: Some(out.to_path_buf()),
        message: x.to_string(),
    })
}
