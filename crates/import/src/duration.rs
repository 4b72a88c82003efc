//! How long an imported scenario runs. BOINC's files do not say; a run
//! should see several jobs of every app finish and several deadlines pass,
//! or the figures of merit say little (a 1-day run of a host whose jobs
//! take days shows no job on time and many RPCs per job).

use crate::emit::num;

/// A number of days as written in notes: whole ones without a decimal point.
fn d(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e9 {
        format!("{v:.0}")
    } else {
        num(v)
    }
}
use vcsim_framework::scenario::{Host, Project};

/// Days at least: several scheduling periods, buffer refills and deadlines
/// of short jobs.
pub const MIN_DURATION_DAYS: f64 = 10.0;
/// Days at most: the paper's runs; a 100-day run of a host takes about a
/// second.
pub const MAX_DURATION_DAYS: f64 = 100.0;
/// Latency bounds a run spans: jobs fetched during the run meet or miss
/// several deadlines each.
pub const LATENCY_BOUNDS: f64 = 5.0;
/// Jobs of the slowest app, one after the other, that a run spans.
pub const JOB_TIMES: f64 = 3.0;

/// One app's bound and job time, for the choice and the warnings.
struct AppTimes<'p> {
    project: &'p str,
    app: &'p str,
    latency_days: f64,
    /// Days of wall-clock time one job takes on this host: its FLOPs at the
    /// app's speed, over the fraction of time it may compute.
    job_days: f64,
    /// That fraction: on, and computing (on GPUs: GPU computing) allowed.
    computing: f64,
}

/// The run length and a note on how it was chosen, with a warning for each
/// app of which the run cannot finish a single job. `explicit`: the user's.
pub fn choose(
    host: &Host,
    projects: &[Project],
    explicit: Option<f64>,
) -> (f64, String, Vec<String>) {
    let av = &host.availability;
    let mut apps = Vec::new();
    for p in projects {
        for a in &p.apps {
            let (speed, frac) = match &a.gpu {
                Some(g) => match host.gpus.iter().find(|h| h.kind == g.kind) {
                    Some(h) => (g.count * h.flops, av.fraction * av.gpu_active()),
                    // Never sent: the host lacks the GPU.
                    None => continue,
                },
                None => (a.cpus * host.cpu_flops, av.fraction * av.active_fraction),
            };
            if speed <= 0.0 || frac <= 0.0 {
                continue;
            }
            apps.push(AppTimes {
                project: &p.name,
                app: &a.name,
                latency_days: a.latency_bound_days.unwrap_or(p.latency_bound_days),
                job_days: a.flops_mean / speed / frac / 86400.0,
                computing: frac,
            });
        }
    }
    let longest = |f: fn(&AppTimes) -> f64| {
        apps.iter()
            .max_by(|x, y| f(x).total_cmp(&f(y)))
            .map(|a| (f(a), a))
    };
    let (days, note) = match explicit {
        Some(d) => (d, "given to the import".to_string()),
        None => {
            let mut days = MIN_DURATION_DAYS;
            let mut why = format!("at least {} days", d(MIN_DURATION_DAYS));
            if let Some((l, a)) = longest(|a| a.latency_days) {
                if LATENCY_BOUNDS * l > days {
                    days = LATENCY_BOUNDS * l;
                    why = format!(
                        "{} x the longest latency bound, {} days of app `{}` of `{}`",
                        d(LATENCY_BOUNDS),
                        d((l * 1000.0).round() / 1000.0),
                        a.app,
                        a.project
                    );
                }
            }
            if let Some((j, a)) = longest(|a| a.job_days) {
                if JOB_TIMES * j > days {
                    days = JOB_TIMES * j;
                    why = format!(
                        "{} x the longest job, about {} days for one of app `{}` of `{}` on this host",
                        d(JOB_TIMES),
                        d((j * 100.0).round() / 100.0),
                        a.app,
                        a.project
                    );
                }
            }
            let days = days.ceil();
            if days > MAX_DURATION_DAYS {
                (
                    MAX_DURATION_DAYS,
                    format!("{why}, capped at {} days", d(MAX_DURATION_DAYS)),
                )
            } else {
                (days, why)
            }
        }
    };
    let warnings = apps
        .iter()
        .filter(|a| a.job_days > days)
        .map(|a| {
            format!(
                "a {}-day run is too short to finish one job of app `{}` of `{}` (about {} days each on this host, computing {}% of the time): set duration_days to at least {}",
                d(days),
                a.app,
                a.project,
                d((a.job_days * 10.0).round() / 10.0),
                d((a.computing * 1000.0).round() / 10.0),
                d(a.job_days.ceil())
            )
        })
        .collect();
    (days, note, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use vcsim_framework::Scenario;

    fn scenario(latency: f64, flops: f64, extra: &str) -> Scenario {
        let text = format!(
            "name = \"t\"\nduration_days = 1\n[host]\nncpus = 2\ncpu_flops = 1e9\n\
             [host.availability]\nfraction = 0.5\nactive_fraction = 0.5\ngpu_active_fraction = 0.5\n\
             [[project]]\nname = \"P\"\nresource_share = 1\nlatency_bound_days = {latency}\n\
             [[project.app]]\nname = \"a\"\nflops_estimate = {flops}\nflops_mean = {flops}\n{extra}"
        );
        Scenario::from_toml_str(&text, std::path::Path::new("t.toml")).unwrap()
    }

    #[test]
    fn chosen_from_latency_bounds_and_job_times() {
        // Short jobs, short bounds: the floor.
        let s = scenario(1.0, 1e12, "");
        let (d, note, w) = choose(&s.host, &s.projects, None);
        assert_eq!((d, note.as_str()), (10.0, "at least 10 days"));
        assert!(w.is_empty());
        // Five latency bounds, rounded up to whole days.
        let s = scenario(7.5, 1e12, "");
        assert_eq!(choose(&s.host, &s.projects, None).0, 38.0);
        // An app's own bound counts.
        let s = scenario(1.0, 1e12, "latency_bound_days = 4\n");
        let (d, note, _) = choose(&s.host, &s.projects, None);
        assert_eq!(d, 20.0);
        assert!(note.contains("app `a` of `P`"), "{note}");
        // A job of 8.64e14 FLOPs at 1e9, computing a quarter of the time:
        // 40 days; three of them, capped.
        let s = scenario(1.0, 8.64e14, "");
        let (d, note, w) = choose(&s.host, &s.projects, None);
        assert_eq!(d, 100.0);
        assert!(
            note.contains("3 x the longest job, about 40 days"),
            "{note}"
        );
        assert!(note.ends_with("capped at 100 days"), "{note}");
        assert!(w.is_empty());
        // Too short, explicitly.
        let (d, note, w) = choose(&s.host, &s.projects, Some(1.0));
        assert_eq!((d, note.as_str()), (1.0, "given to the import"));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("a 1-day run is too short to finish one job of app `a` of `P` (about 40 days each on this host, computing 25% of the time): set duration_days to at least 40"),
            "{}",
            w[0]
        );
    }
}
