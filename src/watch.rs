//! `compare --watch`: re-runs the comparison whenever the scenario or a
//! script it uses changes, and prints how each metric moved since the last
//! run, so that a policy author can iterate without restarting.
//!
//! Files are polled (modification time and size) a few times a second.
//! The loop ends when standard input closes (Ctrl-D, or `q` and Enter;
//! Enter alone forces a re-run), or after `VCSIM_WATCH_MAX_RUNS` runs, so
//! that a test can drive it.

use crate::compare::Comparison;
use crate::output::name;
use crate::Failure;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};
use vcsim_framework::Metrics;

/// How often the files are looked at.
const POLL: Duration = Duration::from_millis(200);

/// The files a comparison depends on: the scenario and every script named
/// in the policy specs (`cpu=policies/x.rhai,...`).
pub fn watched_files(scenario: &Path, policies: &[String]) -> Vec<PathBuf> {
    let mut files = vec![scenario.to_path_buf()];
    for p in policies {
        for part in p.split(',') {
            let name = part.split_once('=').map_or(part, |(_, v)| v).trim();
            if name.ends_with(".rhai") {
                let path = PathBuf::from(name);
                if !files.contains(&path) {
                    files.push(path);
                }
            }
        }
    }
    files
}

type Stamp = Vec<Option<(SystemTime, u64)>>;

fn stamp(files: &[PathBuf]) -> Stamp {
    files
        .iter()
        .map(|f| {
            std::fs::metadata(f)
                .ok()
                .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()))
        })
        .collect()
}

/// How each metric of each policy moved from `old` to `new`: one line per
/// policy and metric, with the direction judged by the metric's sense
/// (lower is better except for jobs on time). Policies absent from `old`
/// are marked new.
pub fn diff(old: &Comparison, new: &Comparison) -> String {
    let mut out = String::from("changes since the last run:\n");
    let mut any = false;
    for p in &new.policies {
        let before = old.policies.iter().find(|o| o.policy == p.policy);
        let Some(before) = before else {
            out.push_str(&format!("  {}: new policy\n", name(&p.policy)));
            any = true;
            continue;
        };
        for m in &p.metrics {
            let Some(b) = before.metrics.iter().find(|x| x.metric == m.metric) else {
                continue;
            };
            let d = m.mean - b.mean;
            let how = if d == 0.0 {
                "unchanged".to_string()
            } else {
                let better = (d < 0.0) == Metrics::lower_is_better(&m.metric);
                any = true;
                format!("{d:+.6} ({})", if better { "better" } else { "worse" })
            };
            out.push_str(&format!(
                "  {:<28} {:<16} {:>14.6} -> {:>14.6}  {how}\n",
                name(&p.policy),
                name(&m.metric),
                b.mean,
                m.mean
            ));
        }
    }
    if !any {
        out.push_str("  (nothing moved)\n");
    }
    out
}

enum Event {
    /// Standard input closed, or the user typed `q`.
    Quit,
    /// The user pressed Enter: re-run now.
    Rerun,
}

fn max_runs() -> Option<u64> {
    std::env::var("VCSIM_WATCH_MAX_RUNS")
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

/// Runs `once`, then re-runs it whenever a watched file changes, printing
/// the comparison and how each metric moved. A failing run (a script with a
/// syntax error, say) is reported on standard error and the watch goes on;
/// the watch ends with the status of its last run (2 if its input could not
/// be used, 1 if a run failed, 0 otherwise).
pub fn watch<F, S>(scenario: &Path, policies: &[String], once: F, show: S) -> Result<(), Failure>
where
    F: Fn() -> Result<Comparison, Failure>,
    S: Fn(&Comparison) -> String,
{
    use std::io::Write;
    let files = watched_files(scenario, policies);
    let limit = max_runs();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut lines = stdin.lock();
        let mut line = String::new();
        loop {
            line.clear();
            match lines.read_line(&mut line) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(Event::Quit);
                    return;
                }
                Ok(_) if line.trim() == "q" => {
                    let _ = tx.send(Event::Quit);
                    return;
                }
                Ok(_) => {
                    if tx.send(Event::Rerun).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let names: Vec<String> = files
        .iter()
        .map(|f| name(&f.display().to_string()))
        .collect();
    let mut last: Option<Comparison> = None;
    let mut runs = 0u64;
    let mut seen = stamp(&files);
    // The status of the last run: the watch ends with it.
    let mut status: u8;
    let end = |status: u8| {
        if status == 0 {
            Ok(())
        } else {
            Err(Failure {
                status,
                message: "the watch ended on a failed run (its error is above)".into(),
            })
        }
    };
    loop {
        runs += 1;
        match once() {
            Ok(c) => {
                print!("{}", show(&c));
                if let Some(prev) = &last {
                    print!("{}", diff(prev, &c));
                }
                status = 0;
                if let Some(f) = c.failure() {
                    eprintln!("error: {}", crate::output::printable(&f.message));
                    status = f.status;
                }
                last = Some(c);
            }
            Err(f) => {
                eprintln!("error: {}", crate::output::printable(&f.message));
                status = f.status;
            }
        }
        let _ = std::io::stdout().flush();
        if limit.is_some_and(|n| runs >= n) {
            return end(status);
        }
        println!(
            "watching {} (Enter re-runs, Ctrl-D or q ends)",
            names.join(", ")
        );
        let _ = std::io::stdout().flush();
        // Wait for a change, a re-run request or the end.
        loop {
            match rx.recv_timeout(POLL) {
                Ok(Event::Quit) => return end(status),
                Ok(Event::Rerun) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return end(status),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            let now = stamp(&files);
            if now != seen {
                seen = now;
                println!("changed: re-running");
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{MetricSummary, PolicySummary};

    fn comp(idleness: f64, on_time: f64) -> Comparison {
        Comparison {
            scenario: "s".into(),
            replications: 1,
            seeds: vec![1],
            policies: vec![PolicySummary {
                policy: "cpu=x.rhai".into(),
                metrics: vec![
                    MetricSummary {
                        metric: "idleness".into(),
                        mean: idleness,
                        ci_low: None,
                        ci_high: None,
                    },
                    MetricSummary {
                        metric: "jobs_on_time".into(),
                        mean: on_time,
                        ci_low: None,
                        ci_high: None,
                    },
                ],
            }],
            differences: vec![],
            failed: vec![],
        }
    }

    #[test]
    fn diff_judges_each_metric_by_its_sense() {
        let d = diff(&comp(0.2, 10.0), &comp(0.1, 9.0));
        assert!(d.contains("-0.100000 (better)"), "{d}");
        assert!(d.contains("-1.000000 (worse)"), "{d}");
        let same = diff(&comp(0.2, 10.0), &comp(0.2, 10.0));
        assert!(
            same.contains("unchanged") && same.contains("nothing moved"),
            "{same}"
        );
    }

    #[test]
    fn scripts_in_specs_are_watched() {
        let f = watched_files(
            Path::new("s.toml"),
            &[
                "cpu=a.rhai,fetch=wf2".into(),
                "CS2_WF2".into(),
                "fetch=a.rhai".into(),
            ],
        );
        assert_eq!(f, vec![PathBuf::from("s.toml"), PathBuf::from("a.rhai")]);
    }
}
