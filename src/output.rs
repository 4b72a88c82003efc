//! Rendering: tables for people, JSON and CSV for programs.

use crate::compare::{Comparison, Verdict};
use comfy_table::{presets::ASCII_MARKDOWN, Table};
use serde::Serialize;
use vcsim_framework::metrics::{DiskMetrics, ProjectMetrics};
use vcsim_framework::{Metrics, PolicySpec, RunReport};

/// Writes `text` to standard output: all the commands' output goes
/// through here (or [`emitln`]), never through `print!`, which panics on a
/// write error. A closed pipe (`vcsim compare ... | head`) ends the command
/// quietly with status 0 ([`crate::Failure::closed`]); any other write
/// error is a failure, status 1, naming it.
pub fn emit(text: &str) -> Result<(), crate::Failure> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| stdout_error(&e))
}

/// [`emit`] with a line break.
pub fn emitln(line: &str) -> Result<(), crate::Failure> {
    emit(&format!("{line}\n"))
}

/// The failure a write to standard output ends in: quiet (status 0) when
/// the reader has gone, status 1 otherwise.
pub fn stdout_error(e: &std::io::Error) -> crate::Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        crate::Failure::closed()
    } else {
        crate::Failure::running(format!("cannot write to standard output: {e}"))
    }
}

/// A line for standard error (notes, warnings, errors). A standard error
/// that cannot be written to is ignored: there is nowhere to say so.
pub fn note(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// A run's log, as notes on standard error.
pub fn print_log(log: &[String]) {
    for line in log {
        note(&format!("note: {}", printable(line)));
    }
}

fn table(header: Vec<String>) -> Table {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN)
        .set_header(header.iter().map(|h| name_cell(h)).collect::<Vec<_>>());
    t
}

/// `s` with every control character escaped as Rust writes it (`\u{1b}`,
/// `\r`, `\n`, ...), so that a name from a file (a scenario, a project, a
/// policy or script path) cannot move the cursor, recolour or clear the
/// terminal it is printed on; and a text that is one line of the output
/// (an explained decision, a policy's reason) cannot start another.
pub fn name(s: &str) -> String {
    vcsim_framework::text::escape_controls(s)
}

/// A path for a message: as [`name`] (a control character in `--out`
/// must not reach the terminal).
pub fn path(p: &std::path::Path) -> String {
    name(&p.display().to_string())
}

/// A name in a table's cell: as [`name`], and `|` escaped (`\|`), which
/// would otherwise end the cell of the Markdown table.
fn name_cell(s: &str) -> String {
    name(s).replace('|', "\\|")
}

/// A message for the terminal: control characters escaped as in [`name`],
/// but line breaks kept (a message may have several lines).
pub fn printable(s: &str) -> String {
    vcsim_framework::text::escape_controls_but_newlines(s)
}

/// The file formats of `--timeline`, by extension.
pub const TIMELINE_EXTENSIONS: [&str; 3] = ["html", "htm", "csv"];

/// A timeline path that names an HTML page (`.html`, `.htm`).
pub fn is_html(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"))
}

/// Refuses, before any run, a `--timeline` file whose extension does not
/// say HTML or CSV: the error names the extension.
pub fn check_timeline_path(path: &std::path::Path) -> Result<(), crate::Failure> {
    let ext = path.extension().map(|e| e.to_string_lossy().to_lowercase());
    match ext {
        Some(e) if TIMELINE_EXTENSIONS.contains(&e.as_str()) => Ok(()),
        Some(e) => Err(crate::Failure::input(format!(
            "{}: --timeline does not know the extension `.{}`; use .html (a page) or .csv (a table)",
            name(&path.display().to_string()),
            name(&e)
        ))),
        None => Err(crate::Failure::input(format!(
            "{}: --timeline needs an extension, .html (a page) or .csv (a table)",
            name(&path.display().to_string())
        ))),
    }
}

/// Checks, before any run, that `path` can be written as the output `flag`
/// names: a file that cannot be written is bad input (status 2), found
/// before the work rather than after it. An existing file is opened without
/// being truncated; a file the probe created is removed again.
pub fn check_writable(path: &std::path::Path, flag: &str) -> Result<(), crate::Failure> {
    if path.is_dir() {
        return Err(unwritable(path, flag, &"it is a directory"));
    }
    // A FIFO or a device (`/dev/stdout`) is written as named, and not
    // probed: opening a FIFO waits for a reader, and closing it ends the
    // reader's input before the output is written.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return Ok(());
    }
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| unwritable(path, flag, &e))?;
    if !existed {
        std::fs::remove_file(path).map_err(|e| unwritable(path, flag, &e))?;
    }
    Ok(())
}

/// Checks, before any run, that no two outputs name one file and that no
/// output is a file the command reads (`inputs`): the later write would
/// silently replace the other output, or the input (status 2). Paths are
/// compared as the file system resolves them (`..`, symbolic links).
pub fn check_distinct(
    outputs: &[(&str, &std::path::Path)],
    inputs: &[(&str, &std::path::Path)],
) -> Result<(), crate::Failure> {
    let ids: Vec<Option<std::path::PathBuf>> = outputs.iter().map(|(_, p)| resolved(p)).collect();
    for (i, (flag, path)) in outputs.iter().enumerate() {
        let Some(id) = &ids[i] else { continue };
        let clash = |what: String| {
            crate::Failure::input(format!(
                "{}: {flag} and {what} name the same file",
                name(&path.display().to_string())
            ))
        };
        if let Some(j) = (0..i).find(|&j| ids[j].as_ref() == Some(id)) {
            return Err(clash(outputs[j].0.to_string()));
        }
        if let Some((what, _)) = inputs
            .iter()
            .find(|(_, p)| resolved(p).as_ref() == Some(id))
        {
            return Err(clash(format!("{what} (which it reads)")));
        }
    }
    for (flag, path) in outputs {
        not_an_input(path, flag)?;
    }
    Ok(())
}

/// Refuses an output at a file the command has read (by any name: a
/// script, a BOINC file beside the one named, a hard link): writing would
/// replace the input (status 2).
pub fn not_an_input(path: &std::path::Path, flag: &str) -> Result<(), crate::Failure> {
    match vcsim_framework::input::read_as(path) {
        Some(input) => Err(crate::Failure::input(format!(
            "{}: {flag} and {} (which it reads) name the same file",
            name(&path.display().to_string()),
            name(&input.display().to_string())
        ))),
        None => Ok(()),
    }
}

/// `p` as the file system resolves it: the file's own path if it exists,
/// else its directory's joined with its name; None if neither resolves.
fn resolved(p: &std::path::Path) -> Option<std::path::PathBuf> {
    if let Ok(c) = p.canonicalize() {
        return Some(c);
    }
    let file = p.file_name()?;
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.canonicalize().ok()?,
        _ => std::env::current_dir().ok()?,
    };
    Some(dir.join(file))
}

/// Writes an output file the user named with `flag`; a failure is bad
/// input (status 2), as [`check_writable`] would have said.
pub fn write_output(
    path: &std::path::Path,
    flag: &str,
    text: impl AsRef<[u8]>,
) -> Result<(), crate::Failure> {
    not_an_input(path, flag)?;
    std::fs::write(path, text).map_err(|e| unwritable(path, flag, &e))
}

/// The error of an output file that cannot be written: bad input (status 2).
fn unwritable(path: &std::path::Path, flag: &str, e: &dyn std::fmt::Display) -> crate::Failure {
    crate::Failure::input(format!(
        "{}: {flag} cannot be written there: {e}",
        name(&path.display().to_string())
    ))
}

/// A number for people: integers as they are, others to 4 significant
/// digits (scientific notation when very small or large).
fn num(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        return format!("{}", x as i64);
    }
    let a = x.abs();
    if !(1e-3..1e6).contains(&a) {
        return format!("{x:.3e}");
    }
    let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// What a table's policy labels stand for: a `label: spec` line for each
/// label that is not its whole spec (none for the paper's notation), in
/// the order given, each once; empty when there is none.
pub fn legend<'a>(specs: impl IntoIterator<Item = &'a str>) -> String {
    let mut lines: Vec<String> = Vec::new();
    for spec in specs {
        let line = match PolicySpec::parse(spec) {
            Ok(p) => p.legend_line(),
            Err(_) => None,
        };
        if let Some(line) = line.map(|l| name(&l)) {
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    format!("\n{}\n", lines.join("\n"))
}

/// The run's table; `spec` is the policy it ran (the report names it by
/// its label).
pub fn run_table(r: &RunReport, spec: &PolicySpec) -> String {
    let mut out = format!(
        "scenario {} · policy {} · seed {}\n\n",
        name(&r.scenario),
        name(&r.policy),
        r.seed
    );
    let mut t = table(vec!["metric".into(), "value".into()]);
    for m in r.metric_names() {
        t.add_row(vec![name(&m), num(r.metric(&m).unwrap_or(0.0))]);
    }
    out += &format!("{t}\n\n");
    let mut t = table(vec![
        "resource".into(),
        "idleness".into(),
        "flops_used".into(),
        "flops_wasted".into(),
    ]);
    for (rname, v) in &r.resources {
        let g = |k: &str| v.get(k).and_then(|x| x.as_f64()).unwrap_or(0.0);
        t.add_row(vec![
            name_cell(rname),
            num(g("idleness")),
            format!("{:.4e}", g("flops_used")),
            format!("{:.4e}", g("flops_wasted")),
        ]);
    }
    out += &format!("{t}\n\n");
    let rsc: Vec<String> = r.resources.keys().cloned().collect();
    let mut header: Vec<String> = vec!["project".into(), "share".into(), "flops_fraction".into()];
    header.extend(rsc.iter().map(|k| format!("usage.{k}")));
    header.extend(["on_time", "late", "failed", "rpcs"].map(String::from));
    let mut t = table(header);
    for p in &r.projects {
        let mut row = vec![name_cell(&p.name), num(p.share), num(p.flops_fraction)];
        row.extend(
            rsc.iter()
                .map(|k| num(p.usage.get(k).and_then(|x| x.as_f64()).unwrap_or(0.0))),
        );
        row.extend([p.jobs_on_time, p.jobs_late, p.jobs_failed, p.rpcs].map(|x| x.to_string()));
        t.add_row(row);
    }
    out += &format!("{t}\n");
    if let Some(d) = &r.disk {
        let mut t = table(vec!["disk".into(), "value".into()]);
        t.add_row(vec!["limit_gb".into(), num(d.limit_gb)]);
        t.add_row(vec!["peak_used_gb".into(), num(d.peak_used_gb)]);
        t.add_row(vec!["bytes_deleted".into(), num(d.bytes_deleted)]);
        t.add_row(vec!["jobs_refused".into(), d.jobs_refused.to_string()]);
        t.add_row(vec!["suspended_hours".into(), num(d.suspended_hours)]);
        t.add_row(vec![
            "jobs_failed_disk_full".into(),
            d.jobs_failed_disk_full.to_string(),
        ]);
        out += &format!("\n{t}\n");
    }
    out += &legend([spec.display().as_str()]);
    out
}

/// `run --format json`: the report, with the whole spec after the label.
#[derive(Serialize)]
struct RunJson<'a> {
    scenario: &'a str,
    policy: &'a str,
    spec: String,
    seed: u64,
    metrics: &'a Metrics,
    resources: &'a serde_json::Map<String, serde_json::Value>,
    projects: &'a [ProjectMetrics],
    #[serde(skip_serializing_if = "Option::is_none")]
    disk: Option<&'a DiskMetrics>,
}

pub fn run_json(r: &RunReport, spec: &PolicySpec) -> String {
    // Every field of the report, named: one added to `RunReport` fails to
    // compile here until it is written out.
    let RunReport {
        scenario,
        policy,
        seed,
        metrics,
        resources,
        projects,
        disk,
    } = r;
    let json = RunJson {
        scenario,
        policy,
        spec: spec.display(),
        seed: *seed,
        metrics,
        resources,
        projects,
        disk: disk.as_ref(),
    };
    serde_json::to_string_pretty(&json).expect("plain data") + "\n"
}

/// One header line and one row: the aggregate metrics.
pub fn run_csv(r: &RunReport, spec: &PolicySpec) -> String {
    let mut w = csv::Writer::from_writer(vec![]);
    let mut header = vec![
        "scenario".to_string(),
        "policy".into(),
        "spec".into(),
        "seed".into(),
    ];
    header.extend(Metrics::NAMES.iter().map(|s| s.to_string()));
    w.write_record(&header).expect("in memory");
    // Names escaped as everywhere on the terminal: a script's path must
    // not drive it (the JSON escapes them as JSON does).
    let mut row = vec![
        name(&r.scenario),
        name(&r.policy),
        name(&spec.display()),
        r.seed.to_string(),
    ];
    row.extend(
        Metrics::NAMES
            .iter()
            .map(|m| csv_num(r.metrics.get(m).unwrap_or(0.0))),
    );
    w.write_record(&row).expect("in memory");
    String::from_utf8(w.into_inner().expect("in memory")).expect("utf-8")
}

/// A number for programs: 6 significant digits, as the JSON and a sweep's
/// CSV files write it (the 4 of [`num`] are for people).
fn csv_num(x: f64) -> String {
    vcsim_framework::metrics::round6(x).to_string()
}

fn cell(mean: f64, lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(l), Some(h)) => format!("{} ± {}", num(mean), num((h - l) / 2.0)),
        _ => num(mean),
    }
}

/// The widest a table is printed: wider ones are cut into several, each
/// with the metric column and as many policies as fit.
pub const MAX_WIDTH: usize = 100;

/// `rows[k][i]` is row k's cell of column i (column 0 the metric); the
/// table printed once, or cut into tables of as many columns as fit in
/// [`MAX_WIDTH`] (at least one policy each).
fn fitted(header: &[String], rows: &[Vec<String>]) -> String {
    let render = |cols: &[usize]| {
        let mut t = table(cols.iter().map(|&i| header[i].clone()).collect());
        for r in rows {
            t.add_row(cols.iter().map(|&i| r[i].clone()).collect::<Vec<_>>());
        }
        format!("{t}\n")
    };
    let width = |text: &str| text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    // A Markdown table's width is the metric column's plus each policy
    // column's, whatever its neighbours: measured once per column, so that
    // choosing the columns of each table costs no render (it cost a render
    // per candidate width: a compare of 500 policies took minutes).
    let alone = width(&render(&[0]));
    let extra: Vec<usize> = (0..header.len())
        .map(|i| {
            if i == 0 {
                0
            } else {
                width(&render(&[0, i])).saturating_sub(alone)
            }
        })
        .collect();
    let mut out = String::new();
    let mut next = 1;
    while next < header.len() {
        // The most policies from `next` on that fit (one at least).
        let mut take = 1;
        let mut w = alone + extra[next];
        while next + take < header.len() && w + extra[next + take] <= MAX_WIDTH {
            w += extra[next + take];
            take += 1;
        }
        // (Rendered to check: were a width not the sum, fewer are tried.)
        let text = loop {
            let cols: Vec<usize> = std::iter::once(0).chain(next..next + take).collect();
            let text = render(&cols);
            if take == 1 || width(&text) <= MAX_WIDTH {
                break text;
            }
            take -= 1;
        };
        if !out.is_empty() {
            out.push('\n');
        }
        out += &text;
        next += take;
    }
    out
}

pub fn compare_table(c: &Comparison) -> String {
    let seeds = match c.seeds.as_slice() {
        [one] => format!("seed {one}"),
        s => format!("seeds {}..{}", s[0], s[s.len() - 1]),
    };
    let mut out = format!(
        "scenario {} · {} replication{} ({seeds}, paired)\n\n",
        name(&c.scenario),
        c.replications,
        if c.replications == 1 { "" } else { "s" }
    );
    let mut header = vec!["metric".to_string()];
    header.extend(c.policies.iter().map(|p| p.policy.clone()));
    // With every policy failed, the table has no column but the metrics'.
    let names: Vec<String> = c.policies.first().map_or_else(
        || Metrics::NAMES.map(String::from).to_vec(),
        |p| p.metrics.iter().map(|m| m.metric.clone()).collect(),
    );
    let mut rows = Vec::new();
    for (mi, m) in names.iter().enumerate() {
        let mut row = vec![name(m)];
        for p in &c.policies {
            let s = &p.metrics[mi];
            row.push(cell(s.mean, s.ci_low, s.ci_high));
        }
        rows.push(row);
    }
    out += &fitted(&header, &rows);
    for f in &c.failed {
        out += &format!("\npolicy {} failed: no results\n", name(&f.policy));
    }
    if c.policies.len() > 1 {
        let base = &c.policies[0].policy;
        out += &format!(
            "\ndifference from {} (paired; 95% interval; verdict)\n\n",
            name(base)
        );
        let mut header = vec!["metric".to_string()];
        header.extend(c.policies.iter().skip(1).map(|p| p.policy.clone()));
        let mut rows = Vec::new();
        for m in &names {
            let mut row = vec![name(m)];
            for p in c.policies.iter().skip(1) {
                let d = c
                    .differences
                    .iter()
                    .find(|d| d.policy == p.policy && &d.metric == m)
                    .expect("one per metric");
                let v = if d.verdict == Verdict::Undecided {
                    String::new()
                } else {
                    format!(" {}", d.verdict.text())
                };
                let iv = match (d.ci_low, d.ci_high) {
                    (Some(l), Some(h)) => format!(" [{}, {}]", num(l), num(h)),
                    _ => String::new(),
                };
                row.push(format!(
                    "{}{}{iv}{v}",
                    if d.mean >= 0.0 { "+" } else { "" },
                    num(d.mean)
                ));
            }
            rows.push(row);
        }
        out += &fitted(&header, &rows);
    }
    out += &legend(
        c.policies
            .iter()
            .map(|p| p.spec.as_str())
            .chain(c.failed.iter().map(|f| f.spec.as_str())),
    );
    out
}

pub fn compare_json(c: &Comparison) -> String {
    serde_json::to_string_pretty(c).expect("plain data") + "\n"
}

/// One row per policy and metric, with the difference from the baseline.
pub fn compare_csv(c: &Comparison) -> String {
    let mut w = csv::Writer::from_writer(vec![]);
    w.write_record([
        "scenario",
        "policy",
        "spec",
        "metric",
        "mean",
        "ci_low",
        "ci_high",
        "diff_mean",
        "diff_ci_low",
        "diff_ci_high",
        "verdict",
    ])
    .expect("in memory");
    let opt = |x: Option<f64>| x.map(csv_num).unwrap_or_default();
    for p in &c.policies {
        for s in &p.metrics {
            let d = c
                .differences
                .iter()
                .find(|d| d.policy == p.policy && d.metric == s.metric);
            w.write_record([
                name(&c.scenario),
                name(&p.policy),
                name(&p.spec),
                s.metric.clone(),
                csv_num(s.mean),
                opt(s.ci_low),
                opt(s.ci_high),
                d.map(|d| csv_num(d.mean)).unwrap_or_default(),
                opt(d.and_then(|d| d.ci_low)),
                opt(d.and_then(|d| d.ci_high)),
                d.map(|d| d.verdict.text().to_string()).unwrap_or_default(),
            ])
            .expect("in memory");
        }
    }
    String::from_utf8(w.into_inner().expect("in memory")).expect("utf-8")
}

/// Writes the timeline as CSV (`.csv`) or a self-contained HTML page.
pub fn write_timeline(
    path: &std::path::Path,
    tl: &vcsim_framework::timeline::Timeline,
    r: &RunReport,
    ex: Option<&vcsim_framework::explain::Explanation>,
) -> Result<(), crate::Failure> {
    let is_csv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let text = if is_csv {
        tl.to_csv()
            .map_err(|e| unwritable(path, "--timeline", &e))?
    } else {
        let page = crate::timeline_html::render(tl, r, ex);
        for n in &page.notes {
            note(n);
        }
        page.html
    };
    write_output(path, "--timeline", text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(name("plain ü"), "plain ü");
        assert_eq!(name("a\u{1b}[2J\r\n"), "a\\u{1b}[2J\\r\\n");
        assert_eq!(printable("x\u{7}\ny"), "x\\u{7}\ny");
    }

    /// A line separator ends a line in editors and some terminals: in a
    /// name or a one-line record it is escaped, like a newline.
    #[test]
    fn unicode_line_separators_are_escaped() {
        assert_eq!(name("a\u{2028}b\u{2029}"), "a\\u{2028}b\\u{2029}");
    }
}
