//! Paired comparisons: every policy runs on the same seeds; per metric, each
//! policy's mean with its 95% interval, and each policy's paired difference
//! from the baseline (the first policy) with its interval and a verdict.

use serde::Serialize;
use std::sync::{Arc, Mutex, PoisonError};
use vcsim_framework::{Metrics, RunReport};

// The statistics are shared with sweeps.
pub use vcsim_sweep::stats::{verdict, Estimate, Verdict};

#[derive(Debug, Clone, Serialize)]
pub struct MetricSummary {
    pub metric: String,
    pub mean: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// Each replication's value, in seed order (for `--watch`'s paired
    /// differences between two runs of the comparison).
    #[serde(skip)]
    pub values: Vec<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    pub policy: String,
    pub baseline: String,
    pub metric: String,
    pub mean: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Serialize)]
pub struct PolicySummary {
    /// The policy's label (`PolicySpec::label`).
    pub policy: String,
    /// The whole spec (`PolicySpec::display`).
    pub spec: String,
    pub metrics: Vec<MetricSummary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub scenario: String,
    pub replications: u32,
    pub seeds: Vec<u64>,
    pub policies: Vec<PolicySummary>,
    pub differences: Vec<Difference>,
    /// Policies whose runs failed: left out of `policies` and
    /// `differences` (the first that ran is then the baseline).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<FailedPolicy>,
}

/// A policy of a comparison that failed, with the first error of its runs.
#[derive(Debug, Clone, Serialize)]
pub struct FailedPolicy {
    pub policy: String,
    pub spec: String,
    pub error: String,
}

impl Comparison {
    /// The failure to report after printing a comparison some of whose
    /// policies failed: names them, their errors, and the policies that ran.
    pub fn failure(&self) -> Option<crate::Failure> {
        if self.failed.is_empty() {
            return None;
        }
        let ran: Vec<&str> = self.policies.iter().map(|p| p.policy.as_str()).collect();
        let what: Vec<String> = self
            .failed
            .iter()
            .map(|f| format!("policy `{}` failed: {}", f.spec, f.error))
            .collect();
        if ran.is_empty() {
            return Some(crate::Failure::running(what.join("\n")));
        }
        Some(crate::Failure::running(format!(
            "{}\n{} of {} policies ran and are shown: {}",
            what.join("\n"),
            ran.len(),
            ran.len() + self.failed.len(),
            ran.join(", ")
        )))
    }
}

/// What a comparison keeps of one run: the figures it prints, a few
/// numbers, not the report (whose projects make it 830 KB with 1,000).
#[derive(Debug, Clone)]
pub struct Sample {
    /// `RunReport::metric(key).unwrap_or(0.0)` for each of `shape.keys`.
    values: Box<[f64]>,
    shape: Arc<Shape>,
}

/// The figures a run has (the aggregate metrics, then each resource's
/// idleness) and those a comparison prints if it comes first.
#[derive(Debug)]
struct Shape {
    keys: Vec<String>,
    /// `RunReport::metric_names`.
    names: Vec<String>,
}

impl Sample {
    /// As `RunReport::metric(name).unwrap_or(0.0)` (`at`: `name`'s place
    /// in this sample's keys).
    fn value(&self, at: Option<usize>) -> f64 {
        at.map_or(0.0, |k| self.values[k])
    }
}

/// Gives the runs of one host a single `Shape`, so that a sample holds a
/// pointer, not strings. Shapes are found by content, so the order in
/// which threads bring them changes no output.
#[derive(Debug, Default)]
pub struct Shapes(Mutex<Vec<Arc<Shape>>>);

impl Shapes {
    /// The figures of `r`, to keep instead of `r`.
    pub fn sample(&self, r: &RunReport) -> Sample {
        let keys: Vec<String> = Metrics::NAMES
            .iter()
            .map(|m| m.to_string())
            .chain(r.resources.keys().map(|k| format!("idleness.{k}")))
            .collect();
        let values = keys.iter().map(|k| r.metric(k).unwrap_or(0.0)).collect();
        let mut known = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let shape = match known.iter().find(|s| s.keys == keys) {
            Some(s) => Arc::clone(s),
            None => {
                let s = Arc::new(Shape {
                    keys,
                    names: r.metric_names(),
                });
                known.push(Arc::clone(&s));
                s
            }
        };
        Sample { values, shape }
    }
}

/// Each run's value of the figure `name`, in seed order.
fn column(runs: &[Sample], name: &str) -> Vec<f64> {
    // The runs of one comparison share a shape: look the name up once.
    let mut last: Option<(&Arc<Shape>, Option<usize>)> = None;
    runs.iter()
        .map(|s| {
            let at = match last {
                Some((shape, at)) if Arc::ptr_eq(shape, &s.shape) => at,
                _ => {
                    let at = s.shape.keys.iter().position(|k| k == name);
                    last = Some((&s.shape, at));
                    at
                }
            };
            s.value(at)
        })
        .collect()
}

/// `runs[i][r]`: policy i, replication r (same seed across i); `names[i]`
/// its label, `specs[i]` its whole spec. Each policy's samples are dropped
/// once its columns are drawn.
pub fn summarize(
    scenario: &str,
    seeds: &[u64],
    names: &[String],
    specs: &[String],
    runs: Vec<Vec<Sample>>,
) -> Comparison {
    let r6 = vcsim_framework::metrics::round6;
    // The aggregate metrics, and per-resource idleness on a host with GPUs.
    let names_of_metrics = runs.first().and_then(|r| r.first()).map_or_else(
        || Metrics::NAMES.map(String::from).to_vec(),
        |s| s.shape.names.clone(),
    );
    let policies: Vec<PolicySummary> = names
        .iter()
        .zip(runs)
        .enumerate()
        .map(|(i, (name, runs))| PolicySummary {
            policy: name.clone(),
            spec: specs[i].clone(),
            metrics: names_of_metrics
                .iter()
                .map(|m| {
                    let xs = column(&runs, m);
                    let e = Estimate::of(&xs);
                    MetricSummary {
                        metric: m.to_string(),
                        mean: r6(e.mean),
                        ci_low: e.low().map(r6),
                        ci_high: e.high().map(r6),
                        values: xs,
                    }
                })
                .collect(),
        })
        .collect();
    let mut differences = Vec::new();
    for p in policies.iter().skip(1) {
        for (k, m) in names_of_metrics.iter().enumerate() {
            let base = &policies[0].metrics[k].values;
            let d: Vec<f64> = p.metrics[k]
                .values
                .iter()
                .zip(base)
                .map(|(a, b)| a - b)
                .collect();
            let e = Estimate::of(&d);
            differences.push(Difference {
                policy: p.policy.clone(),
                baseline: names[0].clone(),
                metric: m.to_string(),
                mean: r6(e.mean),
                ci_low: e.low().map(r6),
                ci_high: e.high().map(r6),
                verdict: verdict(m.split('.').next().unwrap_or(m), &e),
            });
        }
    }
    Comparison {
        scenario: scenario.to_string(),
        replications: seeds.len() as u32,
        seeds: seeds.to_vec(),
        policies,
        differences,
        failed: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vcsim_framework::metrics::{ProjectMetrics, ResourceMetrics};

    /// A report of `projects` projects on a host of `resources`.
    fn report(seed: u64, resources: &[&str], projects: usize) -> RunReport {
        let x = seed as f64;
        RunReport {
            scenario: "s".into(),
            policy: "p".into(),
            seed,
            metrics: Metrics {
                idleness: x / 10.0,
                waste: x / 20.0,
                share_violation: x / 30.0,
                monotony: 0.5,
                rpcs: seed,
                rpcs_per_job: 0.25,
                jobs_on_time: 3 * seed,
                jobs_late: 1,
            },
            resources: resources
                .iter()
                .enumerate()
                .map(|(k, r)| {
                    let m = ResourceMetrics {
                        idleness: x / (k + 2) as f64,
                        flops_used: 1.0,
                        flops_wasted: 0.0,
                        flops_idle: 0.0,
                    };
                    (r.to_string(), serde_json::to_value(m).unwrap())
                })
                .collect(),
            projects: (0..projects)
                .map(|p| ProjectMetrics {
                    name: format!("project {p}"),
                    share: 1.0 / projects as f64,
                    flops: 1.0,
                    flops_fraction: 1.0 / projects as f64,
                    usage: serde_json::Map::new(),
                    jobs_on_time: 1,
                    jobs_late: 0,
                    jobs_failed: 0,
                    rpcs: 1,
                    disk_limit_gb: None,
                    disk_peak_gb: None,
                })
                .collect(),
            disk: None,
        }
    }

    #[test]
    fn a_run_is_kept_as_a_few_numbers_whatever_its_projects() {
        // A comparison of reports kept 830 KB a run with 1,000 projects.
        let shapes = Shapes::default();
        let small = shapes.sample(&report(1, &["cpu", "nvidia"], 1));
        let big = shapes.sample(&report(2, &["cpu", "nvidia"], 1000));
        assert_eq!(big.values.len(), Metrics::NAMES.len() + 2);
        assert_eq!(big.values.len(), small.values.len());
        assert!(Arc::ptr_eq(&big.shape, &small.shape));
        assert_eq!(shapes.0.lock().unwrap().len(), 1);
    }

    #[test]
    fn samples_give_the_figures_of_their_reports() {
        // Hosts that differ between runs: the first run's figures are shown,
        // 0 where a run lacks one, as when the reports were kept.
        let reports = [
            report(1, &["cpu", "nvidia"], 2),
            report(2, &["cpu"], 2),
            report(3, &["nvidia", "amd"], 2),
            report(4, &["cpu", "nvidia"], 2),
        ];
        let shapes = Shapes::default();
        let samples: Vec<Sample> = reports.iter().map(|r| shapes.sample(r)).collect();
        let names = reports[0].metric_names();
        assert!(names.contains(&"idleness.nvidia".to_string()), "{names:?}");
        for m in &names {
            let want: Vec<f64> = reports.iter().map(|r| r.metric(m).unwrap_or(0.0)).collect();
            assert_eq!(column(&samples, m), want, "{m}");
        }
        let c = summarize(
            "s",
            &[1, 2, 3, 4],
            &["A".into()],
            &["A".into()],
            vec![samples],
        );
        let shown: Vec<&str> = c.policies[0]
            .metrics
            .iter()
            .map(|m| m.metric.as_str())
            .collect();
        assert_eq!(shown, names);
    }

    #[test]
    fn verdicts_follow_the_direction_of_the_metric() {
        let worse = Estimate {
            mean: 0.1,
            half_width: Some(0.05),
        };
        assert_eq!(verdict("waste", &worse), Verdict::Worse);
        assert_eq!(verdict("jobs_on_time", &worse), Verdict::Better);
        let unclear = Estimate {
            mean: 0.1,
            half_width: Some(0.2),
        };
        assert_eq!(verdict("waste", &unclear), Verdict::NoSignificantDifference);
        assert_eq!(
            verdict(
                "waste",
                &Estimate {
                    mean: 0.1,
                    half_width: None
                }
            ),
            Verdict::Undecided
        );
        assert_eq!(
            verdict(
                "waste",
                &Estimate {
                    mean: 0.0,
                    half_width: None
                }
            ),
            Verdict::NoSignificantDifference
        );
    }
}
