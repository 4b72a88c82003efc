//! The summary of a sweep: per cell, policy and metric, the mean with its
//! 95% interval and the paired difference from the first policy. Computed
//! from rows; written to `summary.csv` by [`crate::output`] and drawn by
//! [`crate::plot`], neither of which depends on the other.

use crate::data::{Definition, Row};
use crate::stats::{verdict, Estimate};
use vcsim_framework::Metrics;

/// One line of `summary.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryLine {
    pub cell: usize,
    pub labels: Vec<String>,
    pub policy: String,
    pub metric: String,
    pub n: usize,
    pub mean: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// Paired difference from the first policy (absent for the first).
    pub diff: Option<Estimate>,
    pub verdict: Option<&'static str>,
}

/// Per cell and policy, per metric: mean, interval and the paired difference
/// from the first policy. Rows must be in (cell, policy, replication) order.
pub fn summarize(def: &Definition, rows: &[Row]) -> Vec<SummaryLine> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        let cell = rows[i].cell;
        let mut j = i;
        while j < rows.len() && rows[j].cell == cell {
            j += 1;
        }
        let group = &rows[i..j];
        let base_policy = &def.policies[0];
        for policy in &def.policies {
            let mine: Vec<&Row> = group.iter().filter(|r| &r.policy == policy).collect();
            if mine.is_empty() {
                continue;
            }
            for (k, m) in Metrics::NAMES.iter().enumerate() {
                let xs: Vec<f64> = mine
                    .iter()
                    .filter_map(|r| r.outcome.as_ref().ok().map(|v| v[k]))
                    .collect();
                let e = (!xs.is_empty()).then(|| Estimate::of(&xs));
                let diff = if policy == base_policy {
                    None
                } else {
                    let d: Vec<f64> = mine
                        .iter()
                        .filter_map(|r| {
                            let b = group.iter().find(|b| {
                                &b.policy == base_policy && b.replication == r.replication
                            })?;
                            Some(r.outcome.as_ref().ok()?[k] - b.outcome.as_ref().ok()?[k])
                        })
                        .collect();
                    (!d.is_empty()).then(|| Estimate::of(&d))
                };
                out.push(SummaryLine {
                    cell,
                    labels: mine[0].labels.clone(),
                    policy: policy.clone(),
                    metric: m.to_string(),
                    n: xs.len(),
                    mean: e.map(|e| e.mean),
                    ci_low: e.and_then(|e| e.low()),
                    ci_high: e.and_then(|e| e.high()),
                    verdict: diff.map(|d| verdict(m, &d).text()),
                    diff,
                });
            }
        }
        i = j;
    }
    out
}
