//! Paired comparisons: every policy runs on the same seeds; per metric, each
//! policy's mean with its 95% interval, and each policy's paired difference
//! from the baseline (the first policy) with its interval and a verdict.

use serde::Serialize;
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
        Some(crate::Failure::running(format!(
            "{}\n{} of {} policies ran and are shown: {}",
            what.join("\n"),
            ran.len(),
            ran.len() + self.failed.len(),
            ran.join(", ")
        )))
    }
}

/// `runs[i][r]`: policy i, replication r (same seed across i); `names[i]`
/// its label, `specs[i]` its whole spec.
pub fn compare(
    scenario: &str,
    seeds: &[u64],
    names: &[String],
    specs: &[String],
    runs: &[Vec<RunReport>],
) -> Comparison {
    let r6 = vcsim_framework::metrics::round6;
    let values = |i: usize, m: &str| -> Vec<f64> {
        runs[i].iter().map(|r| r.metric(m).unwrap_or(0.0)).collect()
    };
    // The aggregate metrics, and per-resource idleness on a host with GPUs.
    let names_of_metrics = runs.first().and_then(|r| r.first()).map_or_else(
        || Metrics::NAMES.map(String::from).to_vec(),
        |r| r.metric_names(),
    );
    let policies = names
        .iter()
        .enumerate()
        .map(|(i, name)| PolicySummary {
            policy: name.clone(),
            spec: specs[i].clone(),
            metrics: names_of_metrics
                .iter()
                .map(|m| {
                    let xs = values(i, m);
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
    for (i, name) in names.iter().enumerate().skip(1) {
        for m in &names_of_metrics {
            let base = values(0, m);
            let d: Vec<f64> = values(i, m).iter().zip(&base).map(|(a, b)| a - b).collect();
            let e = Estimate::of(&d);
            differences.push(Difference {
                policy: name.clone(),
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
