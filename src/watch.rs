//! `compare --watch`: re-runs the comparison whenever the scenario or a
//! script it uses changes, and prints how each metric moved since the last
//! run, so that a policy author can iterate without restarting.
//!
//! Files are polled (modification time and size) a few times a second.
//! On a terminal the loop ends when standard input closes (Ctrl-D, or `q`
//! and Enter; Enter alone forces a re-run); without one it goes on until it
//! is stopped. Either way it ends after `VCSIM_WATCH_MAX_RUNS` runs when
//! that is set, so that a test can drive it.

use crate::compare::{verdict, Comparison, Estimate};
use crate::output::name;
use crate::Failure;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

/// How often the files are looked at.
const POLL: Duration = Duration::from_millis(200);

/// The files a comparison depends on: the scenario and every script named
/// in the policy specs (`cpu=policies/x.rhai,...`; a `label=` is no file).
pub fn watched_files(scenario: &Path, policies: &[String]) -> Vec<PathBuf> {
    let mut files = vec![scenario.to_path_buf()];
    for p in policies {
        for part in p.split(',') {
            if part
                .split_once('=')
                .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("label"))
            {
                continue;
            }
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
/// policy and metric. A move is called better or worse (by the metric's
/// sense: lower is better except for jobs on time) only when the paired
/// difference over the replications (same seeds, before and after) has a
/// 95% interval that excludes zero; otherwise "no significant difference",
/// or "n/a" with one replication. Policies absent from `old` are marked new.
pub fn diff(old: &Comparison, new: &Comparison) -> String {
    let mut out = String::from("changes since the last run:\n");
    let mut any = false;
    let paired = old.seeds == new.seeds;
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
            let how = if d == 0.0 && m.values == b.values {
                "unchanged".to_string()
            } else {
                any = true;
                let verdict = if paired && m.values.len() == b.values.len() {
                    let diffs: Vec<f64> =
                        m.values.iter().zip(&b.values).map(|(x, y)| x - y).collect();
                    let e = Estimate::of(&diffs);
                    let span = match (e.low(), e.high()) {
                        (Some(lo), Some(hi)) => format!(" [{lo:+.6}, {hi:+.6}]"),
                        _ => String::new(),
                    };
                    format!("{span} {}", verdict(&m.metric, &e).text())
                } else {
                    " n/a (other seeds)".to_string()
                };
                format!("{d:+.6}{verdict}")
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

/// The runs after which the watch ends, if `VCSIM_WATCH_MAX_RUNS` is set;
/// a value that is not a positive whole number is bad input (ignored, it
/// left a watch that was meant to end running for ever).
fn max_runs() -> Result<Option<u64>, Failure> {
    match std::env::var_os("VCSIM_WATCH_MAX_RUNS") {
        None => Ok(None),
        Some(v) => match v.to_str().and_then(|s| s.trim().parse::<u64>().ok()) {
            Some(n) if n > 0 => Ok(Some(n)),
            _ => Err(Failure::input(format!(
                "VCSIM_WATCH_MAX_RUNS={}: must be a positive whole number of runs",
                crate::output::name(&v.to_string_lossy())
            ))),
        },
    }
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
    let limit = max_runs()?;
    let files = watched_files(scenario, policies);
    let (tx, rx) = mpsc::channel();
    // Without a terminal (a pipe, /dev/null, a CI job) standard input is no
    // keyboard: the watch goes on until it is killed or has made
    // `VCSIM_WATCH_MAX_RUNS` runs, instead of ending at once on end of file.
    let keyboard = std::io::IsTerminal::is_terminal(&std::io::stdin());
    // Kept so that, without a keyboard, the channel stays open.
    let _sender = tx.clone();
    let _keys = keyboard.then(|| {
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
        })
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
                crate::output::emit(&show(&c))?;
                if let Some(prev) = &last {
                    crate::output::emit(&diff(prev, &c))?;
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
        crate::output::emitln(&format!(
            "watching {} (Enter re-runs, Ctrl-D or q ends)",
            names.join(", ")
        ))?;
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
                crate::output::emitln("changed: re-running")?;
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
        comp_n(&[idleness], &[on_time])
    }

    /// A comparison of one policy over replications (seeds 1..).
    fn comp_n(idleness: &[f64], on_time: &[f64]) -> Comparison {
        let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
        Comparison {
            scenario: "s".into(),
            replications: idleness.len() as u32,
            seeds: (1..=idleness.len() as u64).collect(),
            policies: vec![PolicySummary {
                policy: "x_WF2_WS2_JC2".into(),
                spec: "cpu=x.rhai,fetch=wf2,send=ws2,estimate=jc2,disk=none".into(),
                metrics: vec![
                    MetricSummary {
                        metric: "idleness".into(),
                        mean: mean(idleness),
                        ci_low: None,
                        ci_high: None,
                        values: idleness.to_vec(),
                    },
                    MetricSummary {
                        metric: "jobs_on_time".into(),
                        mean: mean(on_time),
                        ci_low: None,
                        ci_high: None,
                        values: on_time.to_vec(),
                    },
                ],
            }],
            differences: vec![],
            failed: vec![],
        }
    }

    #[test]
    fn a_move_is_better_or_worse_only_when_its_paired_interval_excludes_zero() {
        // Three seeds; idleness falls on every seed: better. Jobs on time
        // fall by 1 on average, but rise on one seed: not significant.
        let d = diff(
            &comp_n(&[0.20, 0.30, 0.25], &[10.0, 12.0, 11.0]),
            &comp_n(&[0.10, 0.21, 0.14], &[7.0, 13.0, 10.0]),
        );
        assert!(d.contains("better"), "{d}");
        assert!(d.contains("no significant difference"), "{d}");
        assert!(!d.contains("worse"), "{d}");
        // With one replication there is no interval: no verdict.
        let one = diff(&comp(0.2, 10.0), &comp(0.1, 9.0));
        assert!(one.contains("-0.100000 n/a (1 replication)"), "{one}");
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
