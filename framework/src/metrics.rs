//! The figures of merit of `metrics.md`: idleness, waste, share violation,
//! monotony, RPCs and jobs on time, per resource and per project.

use serde::Serialize;

/// The aggregate figures of one run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Metrics {
    pub idleness: f64,
    pub waste: f64,
    pub share_violation: f64,
    pub monotony: f64,
    pub rpcs: u64,
    /// rpcs / jobs reported (BOINC's emulator prints rpcs / (2 jobs)).
    pub rpcs_per_job: f64,
    pub jobs_on_time: u64,
    pub jobs_late: u64,
}

impl Metrics {
    /// The metrics by name, in a fixed order (tables, CSV, sweeps).
    pub const NAMES: [&'static str; 8] = [
        "idleness",
        "waste",
        "share_violation",
        "monotony",
        "rpcs",
        "rpcs_per_job",
        "jobs_on_time",
        "jobs_late",
    ];

    pub fn get(&self, name: &str) -> Option<f64> {
        Some(match name {
            "idleness" => self.idleness,
            "waste" => self.waste,
            "share_violation" => self.share_violation,
            "monotony" => self.monotony,
            "rpcs" => self.rpcs as f64,
            "rpcs_per_job" => self.rpcs_per_job,
            "jobs_on_time" => self.jobs_on_time as f64,
            "jobs_late" => self.jobs_late as f64,
            _ => return None,
        })
    }

    /// Whether a smaller value of the metric is better (for verdicts).
    pub fn lower_is_better(name: &str) -> bool {
        name != "jobs_on_time"
    }
}

impl RunReport {
    /// The figures that tables and comparisons show: the aggregate metrics,
    /// and on a host with GPUs each resource's idleness (`idleness.cpu`,
    /// `idleness.nvidia`...) right after the headline.
    pub fn metric_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for m in Metrics::NAMES {
            names.push(m.to_string());
            if m == "idleness" && self.resources.len() > 1 {
                names.extend(self.resources.keys().map(|r| format!("idleness.{r}")));
            }
        }
        names
    }

    /// A figure by name: a metric, or `idleness.<resource>`.
    pub fn metric(&self, name: &str) -> Option<f64> {
        match name.strip_prefix("idleness.") {
            Some(r) => self
                .resources
                .get(r)
                .and_then(|v| v.get("idleness"))
                .and_then(|x| x.as_f64()),
            None => self.metrics.get(name),
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ResourceMetrics {
    pub idleness: f64,
    /// Peak FLOPs of jobs reported on time.
    pub flops_used: f64,
    pub flops_wasted: f64,
    pub flops_idle: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ProjectMetrics {
    pub name: String,
    pub share: f64,
    pub flops: f64,
    pub flops_fraction: f64,
    /// Per resource: this project's part of the busy instance-seconds.
    pub usage: serde_json::Map<String, serde_json::Value>,
    pub jobs_on_time: u64,
    pub jobs_late: u64,
    pub jobs_failed: u64,
    pub rpcs: u64,
    /// With a disk manager that enforces limits: `project_limit(p)` and the
    /// project's peak usage, in GB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_limit_gb: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_peak_gb: Option<f64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DiskMetrics {
    /// `total_limit`, the user's limit on BOINC's usage.
    pub limit_gb: f64,
    /// The most BOINC's files used after any poll.
    pub peak_used_gb: f64,
    /// Bytes of files the disk manager deleted.
    pub bytes_deleted: f64,
    /// Jobs a server withheld for lack of space (in the last pass it made).
    pub jobs_refused: u64,
    /// Time computation was suspended because nothing more could be deleted.
    pub suspended_hours: f64,
    /// Jobs that failed because a file of theirs did not fit on the disk
    /// (also in their projects' `jobs_failed`).
    pub jobs_failed_disk_full: u64,
}

/// Everything a run reports (`run --format json`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunReport {
    pub scenario: String,
    pub policy: String,
    pub seed: u64,
    pub metrics: Metrics,
    pub resources: serde_json::Map<String, serde_json::Value>,
    pub projects: Vec<ProjectMetrics>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk: Option<DiskMetrics>,
}

/// `sum_p |F_p - F s_p / sum s| / F`; 0 when nothing was done.
pub fn share_violation(flops: &[f64], shares: &[f64]) -> f64 {
    let f: f64 = flops.iter().sum();
    let s: f64 = shares.iter().sum();
    if f <= 0.0 || s <= 0.0 {
        return 0.0;
    }
    flops
        .iter()
        .zip(shares)
        .map(|(fp, sp)| (fp - f * sp / s).abs())
        .sum::<f64>()
        / f
}

/// Monotony from each project's stepped sum `Q_p` (seconds cubed), the
/// available time `a` and the scheduling period, as in BOINC's simulators.
pub fn monotony(q: &[f64], available_seconds: f64, sched_period: f64) -> f64 {
    let n = q.len() as f64;
    if q.is_empty() || available_seconds <= 0.0 {
        return 0.0;
    }
    let sum_s: f64 = q.iter().map(|qp| (qp / available_seconds).sqrt()).sum();
    let x = (sum_s / n) / (sched_period * n);
    1.0 - 1.0 / (x + 1.0)
}

/// The stepped monotony sum over `k` steps in which the project did not
/// compute, starting `r` steps after it last did: `sum of j^2` for j in r+1..=r+k.
/// Kept in whole steps so that jumping and stepping agree to the bit.
pub fn idle_steps_sum(r: u64, k: u64) -> u128 {
    let s = |n: u64| -> u128 {
        let n = n as u128;
        n * (n + 1) * (2 * n + 1) / 6
    };
    s(r + k) - s(r)
}

/// `num / den`, 0 when the denominator is 0.
pub fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

/// Rounds to 6 significant digits, so that reports are readable and diffs
/// of snapshots show real movements.
pub fn round6(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let digits = 6 - 1 - x.abs().log10().floor() as i32;
    if digits > 15 {
        // Tiny values: Rust's formatting rounds exactly (a power of ten
        // past 10^22 is not exact, and these were written unrounded).
        return format!("{x:.5e}").parse().unwrap_or(x);
    }
    // Scaled by an exact power of ten: 10^-9 is not one, and 5.46e14
    // scaled by it and back came out one ulp short (545999999999999.94).
    let r = if digits >= 0 {
        let m = 10f64.powi(digits);
        (x * m).round() / m
    } else {
        let m = 10f64.powi(-digits);
        (x / m).round() * m
    };
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_violation_is_zero_when_shares_are_met() {
        assert_eq!(share_violation(&[75.0, 25.0], &[3.0, 1.0]), 0.0);
    }

    #[test]
    fn share_violation_worked_by_hand() {
        // F = 100, shares 1:1 want 50/50; done 80/20: |80-50| + |20-50| = 60 -> 0.6.
        assert!((share_violation(&[80.0, 20.0], &[1.0, 1.0]) - 0.6).abs() < 1e-12);
        // Its largest value is 2 (1 - min share): all to the smallest project.
        assert!((share_violation(&[0.0, 100.0], &[3.0, 1.0]) - 2.0 * (1.0 - 0.25)).abs() < 1e-12);
    }

    #[test]
    fn monotony_of_one_project_that_always_computes_is_zero() {
        assert_eq!(monotony(&[0.0], 86400.0, 3600.0), 0.0);
    }

    #[test]
    fn monotony_worked_by_hand() {
        // Two projects, dt = 60 s, 10 available steps (A = 600 s). Project 0
        // computes every step; project 1 never: R = 60, 120, ..., 600 and
        // Q = 60 * sum (60 k)^2 = 60^3 * 385.
        let q1 = 60f64.powi(3) * idle_steps_sum(0, 10) as f64;
        assert_eq!(idle_steps_sum(0, 10), 385);
        let s1 = (q1 / 600.0).sqrt();
        let x = (s1 / 2.0) / (3600.0 * 2.0);
        let want = 1.0 - 1.0 / (x + 1.0);
        assert!((monotony(&[0.0, q1], 600.0, 3600.0) - want).abs() < 1e-15);
    }

    #[test]
    fn the_closed_form_equals_the_stepped_sum() {
        let (mut r, mut q) = (3u64, 0u128);
        for _ in 0..50 {
            r += 1;
            q += (r as u128) * (r as u128);
        }
        assert_eq!(q, idle_steps_sum(3, 50));
    }

    #[test]
    fn rounding_keeps_six_significant_digits() {
        assert_eq!(round6(0.123456789), 0.123457);
        assert_eq!(round6(123456789.0), 123457000.0);
        // Large values: a run's FLOPs came out one ulp short.
        assert_eq!(round6(545999999999999.94), 546000000000000.0);
        assert_eq!(round6(272999999999999.97), 273000000000000.0);
        assert_eq!(round6(5.46e14).to_string(), "546000000000000");
        assert_eq!(round6(0.0), 0.0);
        // Tiny ones too (they were written unrounded, 16 digits).
        assert_eq!(
            round6(-7.706459122474748e-18).to_string(),
            "-0.00000000000000000770646"
        );
        assert_eq!(round6(1.23456789e-30), 1.23457e-30);
    }
}
