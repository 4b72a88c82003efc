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
///
/// Linear in the rows: each cell's rows are put in per-policy lists once,
/// and a run finds its baseline partner by replication in a map (a scan of
/// the cell per run made 100,000 replications of two policies take minutes).
pub fn summarize(def: &Definition, rows: &[Row]) -> Vec<SummaryLine> {
    let mut out = Vec::new();
    summarize_each(def, rows, |l| out.push(l));
    out
}

/// [`summarize`], each line given to `each` as it is made, so that a big
/// sweep's summary goes to its file without being held (some 300 bytes a
/// line, eight metrics a cell: a million cells held took gigabytes).
pub fn summarize_each(def: &Definition, rows: &[Row], mut each: impl FnMut(SummaryLine)) {
    use std::collections::HashMap;
    // Each policy's list, by its first place in the definition (a policy
    // listed twice reads the same rows twice, as it always did).
    let mut slot: HashMap<&str, usize> = HashMap::new();
    for (p, policy) in def.policies.iter().enumerate() {
        slot.entry(policy.as_str()).or_insert(p);
    }
    let mut i = 0;
    while i < rows.len() {
        let cell = rows[i].cell;
        let mut j = i;
        while j < rows.len() && rows[j].cell == cell {
            j += 1;
        }
        let group = &rows[i..j];
        let mut mine_of: Vec<Vec<&Row>> = vec![Vec::new(); def.policies.len()];
        for r in group {
            count_visit();
            if let Some(&p) = slot.get(r.policy.as_str()) {
                mine_of[p].push(r);
            }
        }
        // The baseline's run of each replication: the first in the cell.
        let base_policy = &def.policies[0];
        let mut base: HashMap<u32, &Row> = HashMap::new();
        for b in &mine_of[0] {
            base.entry(b.replication).or_insert(b);
        }
        for policy in &def.policies {
            let mine = &mine_of[slot[policy.as_str()]];
            if mine.is_empty() {
                continue;
            }
            // Each run with its baseline partner, found once for all metrics.
            let pairs: Vec<(&Row, &Row)> = if policy == base_policy {
                Vec::new()
            } else {
                mine.iter()
                    .filter_map(|r| {
                        count_visit();
                        Some((*r, *base.get(&r.replication)?))
                    })
                    .collect()
            };
            for (k, m) in Metrics::NAMES.iter().enumerate() {
                let xs: Vec<f64> = mine
                    .iter()
                    .filter_map(|r| r.outcome.as_ref().ok().map(|v| v[k]))
                    .collect();
                let e = (!xs.is_empty()).then(|| Estimate::of(&xs));
                let diff = if policy == base_policy {
                    None
                } else {
                    let d: Vec<f64> = pairs
                        .iter()
                        .filter_map(|(r, b)| {
                            Some(r.outcome.as_ref().ok()?[k] - b.outcome.as_ref().ok()?[k])
                        })
                        .collect();
                    (!d.is_empty()).then(|| Estimate::of(&d))
                };
                each(SummaryLine {
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
}

#[cfg(test)]
thread_local! {
    /// Rows read by [`summarize`] on this thread, for the test that keeps it
    /// linear (a count, not a timing, so that a loaded machine cannot fail it).
    static VISITS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn count_visit() {
    #[cfg(test)]
    VISITS.with(|v| v.set(v.get() + 1));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(policies: &[&str]) -> Definition {
        Definition {
            name: "t".into(),
            description: String::new(),
            file: "t.toml".into(),
            scenario: "base.toml".into(),
            policies: policies.iter().map(|p| p.to_string()).collect(),
            replications: 0,
            metrics: Metrics::NAMES.map(String::from).to_vec(),
            set: Default::default(),
            axes: Vec::new(),
        }
    }

    /// A run whose every metric is `v` (or a failed run).
    fn row(cell: usize, policy: &str, replication: u32, v: Option<f64>) -> Row {
        Row {
            cell,
            labels: Vec::new(),
            policy: policy.into(),
            replication,
            seed: u64::from(replication),
            outcome: v
                .map(|v| vec![v; Metrics::NAMES.len()])
                .ok_or_else(|| "failed".to_string()),
        }
    }

    #[test]
    fn the_difference_pairs_runs_by_replication() {
        // B - A per replication: 1, 2, 3 (replication 3 of A failed, so B's
        // run 3 has no partner). Unpaired, the means would differ by 2.5.
        let rows = vec![
            row(0, "A", 0, Some(10.0)),
            row(0, "A", 1, Some(20.0)),
            row(0, "A", 2, Some(30.0)),
            row(0, "A", 3, None),
            row(0, "B", 0, Some(11.0)),
            row(0, "B", 1, Some(22.0)),
            row(0, "B", 2, Some(33.0)),
            row(0, "B", 3, Some(99.0)),
            row(1, "A", 0, Some(1.0)),
            row(1, "B", 0, Some(1.0)),
        ];
        let s = summarize(&def(&["A", "B"]), &rows);
        assert_eq!(s.len(), 2 * 2 * Metrics::NAMES.len());
        let b0 = s
            .iter()
            .find(|l| l.cell == 0 && l.policy == "B" && l.metric == "waste")
            .unwrap();
        assert_eq!(b0.n, 4);
        assert_eq!(b0.mean, Some(41.25));
        assert_eq!(b0.diff, Some(Estimate::of(&[1.0, 2.0, 3.0])));
        let a0 = s.iter().find(|l| l.cell == 0 && l.policy == "A").unwrap();
        assert_eq!((a0.n, a0.diff, a0.verdict), (3, None, None));
        // One pair, difference 0: no interval, no significant difference.
        let b1 = s.iter().find(|l| l.cell == 1 && l.policy == "B").unwrap();
        assert_eq!(b1.diff, Some(Estimate::of(&[0.0])));
        assert_eq!(b1.verdict, Some("no significant difference"));
    }

    #[test]
    fn the_summary_reads_each_run_a_bounded_number_of_times() {
        // Counted, not timed: a search of the cell for each run's baseline
        // partner read 3 x 2,000 x 6,000 rows here; pairing by a map reads
        // each run at most twice.
        let (np, nr) = (3, 2000u32);
        let policies = ["A", "B", "C"];
        let rows: Vec<Row> = policies
            .iter()
            .flat_map(|p| (0..nr).map(move |r| row(0, p, r, Some(f64::from(r)))))
            .collect();
        VISITS.with(|v| v.set(0));
        let s = summarize(&def(&policies), &rows);
        let visits = VISITS.with(|v| v.get());
        assert_eq!(s.len(), np * Metrics::NAMES.len());
        assert!(
            visits <= 2 * rows.len(),
            "{visits} row visits for {} rows",
            rows.len()
        );
        assert!(s.iter().skip(Metrics::NAMES.len()).all(|l| l.diff
            == Some(Estimate {
                mean: 0.0,
                half_width: Some(0.0)
            })));
    }
}
