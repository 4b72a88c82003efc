//! The four outputs of a sweep, and merging shards.
//!
//! `results.csv` keeps every metric at full precision (Rust prints the
//! shortest text that reads back to the same `f64`), so that [`merge`],
//! which reads the shards' rows back, computes the very same summary and
//! plots as an unsharded run.

use crate::data::{label_of, sha256_hex, Definition, Manifest, Row, MAX_CELLS, MAX_RUNS};
use crate::plot::PlotPoint;
use crate::summary::summarize_each;
use std::path::{Path, PathBuf};
use vcsim_framework::input;
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

fn results_header(def: &Definition) -> Vec<String> {
    let mut header: Vec<String> = vec!["cell".into()];
    header.extend(def.axes.iter().map(|a| a.param.clone()));
    header.extend(["policy", "spec", "replication", "seed", "status"].map(String::from));
    header.extend(Metrics::NAMES.map(String::from));
    header.push("error".into());
    header
}

/// The label of each of the sweep's policies (by whole spec), computed once.
fn labels(def: &Definition) -> std::collections::BTreeMap<&str, String> {
    def.policies
        .iter()
        .map(|p| (p.as_str(), label_of(p)))
        .collect()
}

/// The label of `spec`, from `known` (or computed, for a spec the sweep
/// does not have).
fn label_in(known: &std::collections::BTreeMap<&str, String>, spec: &str) -> String {
    known.get(spec).cloned().unwrap_or_else(|| label_of(spec))
}

fn results_csv(def: &Definition, rows: &[Row]) -> Result<Vec<u8>, csv::Error> {
    let known = labels(def);
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    w.write_record(results_header(def))?;
    for r in rows {
        let mut rec: Vec<String> = vec![r.cell.to_string()];
        rec.extend(r.labels.iter().cloned());
        rec.extend([
            label_in(&known, &r.policy),
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
                // The message as the terminal shows it: a script's thrown
                // text must not drive the terminal `cat` shows the file on.
                rec.push(vcsim_framework::text::escape_controls_but_newlines(e));
            }
        }
        w.write_record(&rec)?;
    }
    w.into_inner().map_err(|e| csv::Error::from(e.into_error()))
}

/// Writes `summary.csv` line by line as the summary is made, and returns
/// the points of the metrics to plot (none without an axis).
fn summary_csv(
    def: &Definition,
    rows: &[Row],
    out: impl std::io::Write,
) -> Result<Vec<PlotPoint>, csv::Error> {
    let known = labels(def);
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(out);
    let mut header: Vec<String> = vec!["cell".into()];
    header.extend(def.axes.iter().map(|a| a.param.clone()));
    header.extend(
        [
            "policy",
            "spec",
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
    let mut kept = Vec::new();
    let mut failed = None;
    summarize_each(def, rows, |s| {
        if failed.is_some() {
            return;
        }
        let mut rec: Vec<String> = vec![s.cell.to_string()];
        rec.extend(s.labels.iter().cloned());
        rec.extend([
            label_in(&known, &s.policy),
            s.policy.clone(),
            s.metric.clone(),
            s.n.to_string(),
        ]);
        rec.extend([opt(s.mean), opt(s.ci_low), opt(s.ci_high)]);
        rec.extend([
            opt(s.diff.map(|d| d.mean)),
            opt(s.diff.and_then(|d| d.low())),
            opt(s.diff.and_then(|d| d.high())),
            s.verdict.unwrap_or("").to_string(),
        ]);
        if let Err(e) = w.write_record(&rec) {
            failed = Some(e);
        } else if !def.axes.is_empty() {
            kept.extend(PlotPoint::of(def, &s));
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    w.flush()?;
    Ok(kept)
}

/// The names vcsim owns in an output directory: `results.csv`,
/// `summary.csv`, `manifest.json`, and `<metric>.svg` for every metric
/// vcsim knows (whether or not this sweep plots it).
pub fn owned_files() -> Vec<String> {
    let mut v: Vec<String> = ["manifest.json", "results.csv", "summary.csv"]
        .map(String::from)
        .to_vec();
    v.extend(Metrics::NAMES.iter().map(|m| format!("{m}.svg")));
    v
}

/// Checks, before the first run, that `dir` can take a sweep's outputs
/// ([`owned_files`]): see [`prepare_outputs`].
pub fn prepare_dir(dir: &Path) -> Result<(), String> {
    let names = owned_files();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    prepare_outputs(dir, "sweep", &names)
}

/// Checks, before the first run, that `dir` can take the outputs `names`
/// of a `command` (named in the errors):
/// the directory is created if missing and written to (a probe file), and
/// each output is absent or a regular file that can be written and that
/// this process has not read (an input: the base scenario through a link).
/// A directory, a FIFO (whose writer would wait for ever for a reader), a
/// socket or a device in an output's place is refused, naming it.
pub fn prepare_outputs(dir: &Path, command: &str, names: &[&str]) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| {
        format!(
            "{}: cannot write the outputs there: {e}; choose another --out",
            dir.display()
        )
    };
    if dir.exists() && !dir.is_dir() {
        return Err(fail(&"it is not a directory"));
    }
    std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
    let probe = dir.join(format!(".vcsim-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| fail(&e))?;
    std::fs::remove_file(&probe).map_err(|e| fail(&e))?;
    for name in names {
        let p = dir.join(name);
        let fail = |why: String| {
            format!(
                "{}: cannot write the {command}'s `{name}` there: {why}; remove it or choose another --out",
                p.display()
            )
        };
        match std::fs::metadata(&p) {
            Ok(m) if m.is_file() => {
                if let Some(input) = input::read_as(&p) {
                    return Err(fail(format!(
                        "it is {}, which this command reads",
                        input.display()
                    )));
                }
                // Opened to append: the file is not changed, only tried.
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(&p)
                    .map_err(|e| fail(e.to_string()))?;
            }
            Ok(m) => {
                let kind = if m.is_dir() {
                    "it is a directory"
                } else {
                    "it is not a regular file (a FIFO, a socket or a device)"
                };
                return Err(fail(kind.into()));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if std::fs::symlink_metadata(&p).is_ok() {
                    return Err(fail("it is a symbolic link to nothing".into()));
                }
            }
            Err(e) => return Err(fail(e.to_string())),
        }
    }
    Ok(())
}

/// Removes `path` if it is a symbolic link, so that the output written
/// next replaces the link (as a sweep replaces its own old files) and never
/// goes through it to a file outside the output directory.
pub fn unlink_if_symlink(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::remove_file(path),
        _ => Ok(()),
    }
}

/// `bytes` written to `path`, replacing a symbolic link there rather than
/// writing through it (see [`unlink_if_symlink`]).
pub fn write_output(path: &Path, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    unlink_if_symlink(path)?;
    std::fs::write(path, bytes)
}

/// Writes `results.csv`, `summary.csv`, `<metric>.svg` for the sweep's
/// metrics and `manifest.json` into `dir` (created if missing). Returns the
/// manifest written, with its run counts and the checksum of `results.csv`
/// filled in. The manifest is written last: a directory without one is not
/// a finished output.
///
/// The files of [`owned_files`] that a previous sweep left in `dir` are
/// removed first (the manifest first of all), so that a reused directory
/// holds no plot of a metric this sweep no longer draws; any other file is
/// left alone.
pub fn write_outputs(dir: &Path, manifest: &Manifest, rows: &[Row]) -> std::io::Result<Manifest> {
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    for name in owned_files() {
        let p = dir.join(name);
        if p.is_file() {
            std::fs::remove_file(&p).map_err(|e| io_err(&p, e))?;
        }
    }
    let def = &manifest.sweep;
    let p = dir.join("results.csv");
    let results = results_csv(def, rows).map_err(|e| io_err(&p, e))?;
    std::fs::write(&p, &results).map_err(|e| io_err(&p, e))?;
    let p = dir.join("summary.csv");
    let file = std::fs::File::create(&p).map_err(|e| io_err(&p, e))?;
    let summary =
        summary_csv(def, rows, std::io::BufWriter::new(file)).map_err(|e| io_err(&p, e))?;
    // Without an axis there is no line to draw: no plot.
    for m in def.metrics.iter().filter(|_| !def.axes.is_empty()) {
        let p = dir.join(format!("{m}.svg"));
        let svg = crate::plot::svg(def, m, &summary);
        std::fs::write(&p, svg).map_err(|e| io_err(&p, e))?;
    }
    let mut man = manifest.clone();
    man.runs = rows.len();
    man.failed_runs = rows.iter().filter(|r| r.outcome.is_err()).count();
    man.results_sha256 = sha256_hex(&results);
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

/// Reads a sweep directory back: its manifest and rows, after checking that
/// `results.csv` is the file the manifest describes ([`verify`]).
pub fn read_dir(dir: &Path) -> Result<(Manifest, Vec<Row>), MergeError> {
    let e = |m: String| MergeError {
        dir: Some(dir.to_path_buf()),
        message: m,
    };
    let mp = dir.join("manifest.json");
    let text = input::read_text(&mp, input::MAX_TEXT_BYTES)
        .map_err(|x| e(format!("cannot read manifest.json: {x}")))?;
    let man: Manifest = serde_json::from_str(&text)
        .map_err(|x| e(format!("manifest.json is not a sweep manifest: {x}")))?;
    let bytes = input::read_bounded(&dir.join("results.csv"), input::MAX_RESULTS_BYTES)
        .map_err(|x| e(format!("cannot read results.csv: {x}")))?;
    let rows = parse_results(&man.sweep, &bytes).map_err(e)?;
    verify(&man, &rows, &bytes).map_err(e)?;
    Ok((man, rows))
}

/// The rows of a `results.csv`; an error names the line and what is wrong.
fn parse_results(def: &Definition, bytes: &[u8]) -> Result<Vec<Row>, String> {
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let naxes = def.axes.len();
    let nm = Metrics::NAMES.len();
    let header = results_header(def);
    let known = labels(def);
    let width = header.len();
    let mut rows = Vec::new();
    let mut header_seen = false;
    for (i, rec) in rd.records().enumerate() {
        let line = i + 1;
        let rec = rec.map_err(|x| format!("results.csv:{line}: {x}"))?;
        if rec.len() != width {
            return Err(format!(
                "results.csv:{line}: {} column{}, expected {width}; the file is damaged or cut short",
                rec.len(),
                if rec.len() == 1 { "" } else { "s" }
            ));
        }
        if line == 1 {
            if rec.iter().ne(header.iter().map(String::as_str)) {
                return Err(format!(
                    "results.csv:1: the header is not `{}`",
                    header.join(",")
                ));
            }
            header_seen = true;
            continue;
        }
        let bad = |what: &str| {
            let k = header.iter().position(|h| h == what).unwrap_or(0);
            format!("results.csv:{line}: bad {what} `{}`", &rec[k])
        };
        let cell: usize = rec[0].parse().map_err(|_| bad("cell"))?;
        let labels: Vec<String> = (0..naxes).map(|a| rec[1 + a].to_string()).collect();
        let b = 1 + naxes;
        // The label, then the whole spec the row stands for.
        let policy = rec[b + 1].to_string();
        if rec[b] != label_in(&known, &policy) {
            return Err(format!(
                "results.csv:{line}: policy `{}` is not the label of `{policy}`",
                &rec[b]
            ));
        }
        let replication: u32 = rec[b + 2].parse().map_err(|_| bad("replication"))?;
        let seed: u64 = rec[b + 3].parse().map_err(|_| bad("seed"))?;
        let outcome = match &rec[b + 4] {
            // A run's metrics are finite: `nan`, `inf` or `1e999` is an
            // edit, and would make a mean of n values that is no number.
            "ok" => Ok((0..nm)
                .map(|k| {
                    rec[b + 5 + k]
                        .parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite())
                        .ok_or_else(|| bad(Metrics::NAMES[k]))
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
    if !header_seen {
        return Err("results.csv is empty".into());
    }
    Ok(rows)
}

/// Checks that `rows`, read from `results_csv`, are what `man` says the
/// directory holds: its checksum, its run counts, and exactly one row for
/// every (cell, policy, replication) of its cells, with the cell's axis
/// values and the replication's seed.
pub fn verify(man: &Manifest, rows: &[Row], results_csv: &[u8]) -> Result<(), String> {
    let def = &man.sweep;
    if man.results_sha256.is_empty() {
        return Err(
            "manifest.json has no `results_sha256` (written by an older vcsim); \
             run this sweep or shard again"
                .into(),
        );
    }
    if def.cell_count() != man.cells {
        return Err(format!(
            "manifest.json says {} cells, but its axes make {}",
            man.cells,
            def.cell_count()
        ));
    }
    // Bounded before anything is allocated by them, as a sweep bounds them.
    if man.cells > MAX_CELLS {
        return Err(format!(
            "manifest.json says {} cells; a sweep has at most {}",
            man.cells, MAX_CELLS
        ));
    }
    if let Some(s) = man.shard {
        if s.k == 0 || s.k > s.n || s.n > MAX_CELLS {
            return Err(format!(
                "manifest.json says shard {}/{}, but a sweep is cut into 1 to {MAX_CELLS} shards, numbered from 1",
                s.k, s.n
            ));
        }
    }
    let expected: Vec<usize> = (0..man.cells)
        .filter(|&c| man.shard.is_none_or(|s| s.contains(c)))
        .collect();
    if man.cell_ids != expected {
        return Err(format!(
            "manifest.json lists cells {:?}, but {} holds cells {:?}",
            man.cell_ids,
            match man.shard {
                Some(s) => format!("shard {}/{}", s.k, s.n),
                None => "a whole sweep".into(),
            },
            expected
        ));
    }
    let np = def.policies.len();
    let nr = def.replications as usize;
    if man.seeds.len() != nr {
        return Err(format!(
            "manifest.json has {} seeds for {nr} replications",
            man.seeds.len()
        ));
    }
    let runs = man
        .cell_ids
        .len()
        .checked_mul(np)
        .and_then(|r| r.checked_mul(nr))
        .filter(|&r| r as u64 <= MAX_RUNS);
    let Some(runs) = runs else {
        return Err(format!(
            "manifest.json describes {} cells x {np} policies x {nr} replications; one sweep process makes at most {} runs",
            man.cell_ids.len(),
            MAX_RUNS
        ));
    };
    // seen[cell position][policy][replication]
    let mut seen = vec![false; runs];
    for (i, r) in rows.iter().enumerate() {
        let line = i + 2;
        let at = |m: String| format!("results.csv:{line}: {m}");
        let Ok(ci) = man.cell_ids.binary_search(&r.cell) else {
            return Err(at(format!(
                "cell {} is not one of this directory's cells",
                r.cell
            )));
        };
        let Some(p) = def.policies.iter().position(|q| q == &r.policy) else {
            return Err(at(format!(
                "policy `{}` is not one of the sweep's",
                r.policy
            )));
        };
        let rep = r.replication as usize;
        if rep >= nr {
            return Err(at(format!(
                "replication {rep}, but the sweep has {nr} (0 to {})",
                nr - 1
            )));
        }
        if r.seed != man.seeds[rep] {
            return Err(at(format!(
                "seed {} for replication {rep}, whose seed is {}",
                r.seed, man.seeds[rep]
            )));
        }
        if r.labels != def.cell_labels(r.cell) {
            return Err(at(format!(
                "the axis values of cell {} are {}, not {}",
                r.cell,
                def.cell_labels(r.cell).join(","),
                r.labels.join(",")
            )));
        }
        let k = (ci * np + p) * nr + rep;
        if std::mem::replace(&mut seen[k], true) {
            return Err(at(format!(
                "cell {}, policy `{}`, replication {rep} appears twice",
                r.cell, r.policy
            )));
        }
    }
    if let Some(k) = seen.iter().position(|s| !s) {
        let (ci, rest) = (k / (np * nr), k % (np * nr));
        return Err(format!(
            "results.csv has {} of the {} runs of its cells (the first missing: cell {}, policy `{}`, replication {}); the file is incomplete",
            rows.len(),
            seen.len(),
            man.cell_ids[ci],
            def.policies[rest / nr],
            rest % nr
        ));
    }
    if rows.len() != man.runs {
        return Err(format!(
            "results.csv has {} runs, manifest.json says {}",
            rows.len(),
            man.runs
        ));
    }
    let failed = rows.iter().filter(|r| r.outcome.is_err()).count();
    if failed != man.failed_runs {
        return Err(format!(
            "results.csv has {failed} failed runs, manifest.json says {}",
            man.failed_runs
        ));
    }
    let sum = sha256_hex(results_csv);
    if sum != man.results_sha256 {
        return Err(format!(
            "results.csv does not match manifest.json (SHA-256 {sum}, recorded {}): it was changed after the sweep wrote it",
            man.results_sha256
        ));
    }
    Ok(())
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
    // Writing into a shard directory would replace the shard with the
    // merged result; refuse rather than lose it.
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    if let Some(d) = dirs
        .iter()
        .find(|d| canon(d).is_some() && canon(d) == canon(out))
    {
        return Err(MergeError {
            dir: Some(d.clone()),
            message: "is also the --out directory; merge into a new directory".into(),
        });
    }
    let mut parts = Vec::new();
    for d in dirs {
        parts.push((d.clone(), read_dir(d)?));
    }
    let first = parts[0].1 .0.clone();
    let first = &first;
    let n = first.shard.map_or(1, |s| s.n);
    let mut seen: Vec<Option<&PathBuf>> = vec![None; n];
    for (d, (m, _)) in &parts {
        let e = |msg: String| MergeError {
            dir: Some(d.clone()),
            message: msg,
        };
        if m.vcsim_version != first.vcsim_version {
            return Err(e(format!(
                "was made by vcsim {}, {} by vcsim {}",
                m.vcsim_version,
                dirs[0].display(),
                first.vcsim_version
            )));
        }
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
        let (k, mn) = m.shard.map_or((1, 1), |s| (s.k, s.n));
        if mn != n {
            return Err(e(format!(
                "is shard {k}/{mn}, but {} is one of {n} shards",
                dirs[0].display()
            )));
        }
        if let Some(other) = seen[k - 1].replace(d) {
            return Err(e(format!(
                "shard {k}/{n} is given twice (also as {})",
                other.display()
            )));
        }
    }
    if let Some(k) = seen.iter().position(|s| s.is_none()) {
        // A few are named; the rest are counted, not listed.
        const LISTED: usize = 10;
        let count = seen.iter().filter(|s| s.is_none()).count();
        let mut missing: Vec<String> = seen
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_none())
            .take(LISTED)
            .map(|(i, _)| format!("{}/{n}", i + 1))
            .collect();
        if count > LISTED {
            missing.push(format!("and {} more", count - LISTED));
        }
        return Err(MergeError {
            dir: None,
            message: format!(
                "shard {}/{n} is missing{}; make it with `vcsim sweep {} --shard {}/{n}`",
                k + 1,
                if count > 1 {
                    format!(" ({count} missing: {})", missing.join(", "))
                } else {
                    String::new()
                },
                first.sweep.file,
                k + 1
            ),
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
    prepare_dir(out).map_err(|message| MergeError { dir: None, message })?;
    let mut man = first.clone();
    man.shard = None;
    man.cell_ids = (0..man.cells).collect();
    write_outputs(out, &man, &rows).map_err(|x| MergeError {
        dir: Some(out.to_path_buf()),
        message: x.to_string(),
    })
}
