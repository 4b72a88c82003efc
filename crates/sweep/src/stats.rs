//! Means, 95% intervals (Student's t) and verdicts on paired differences,
//! shared by `vcsim compare` and sweeps.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};
use vcsim_framework::Metrics;

/// Mean and 95% confidence interval (Student's t) of a sample.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    /// Half-width of the 95% interval; absent with one value.
    pub half_width: Option<f64>,
}

impl Estimate {
    pub fn of(xs: &[f64]) -> Estimate {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        if xs.len() < 2 {
            return Estimate {
                mean,
                half_width: None,
            };
        }
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let t = StudentsT::new(0.0, 1.0, n - 1.0)
            .map(|d| d.inverse_cdf(0.975))
            .unwrap_or(f64::NAN);
        Estimate {
            mean,
            half_width: Some(t * (var / n).sqrt()),
        }
    }
    pub fn low(&self) -> Option<f64> {
        self.half_width.map(|h| self.mean - h)
    }
    pub fn high(&self) -> Option<f64> {
        self.half_width.map(|h| self.mean + h)
    }
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    NoSignificantDifference,
    /// One replication: no interval, no verdict.
    Undecided,
}

impl Verdict {
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::NoSignificantDifference => "no significant difference",
            Verdict::Undecided => "n/a (1 replication)",
        }
    }
}

/// The verdict on a paired difference (policy - baseline) of `metric`.
pub fn verdict(metric: &str, diff: &Estimate) -> Verdict {
    let (Some(lo), Some(hi)) = (diff.low(), diff.high()) else {
        return if diff.mean == 0.0 {
            Verdict::NoSignificantDifference
        } else {
            Verdict::Undecided
        };
    };
    let lower_better = Metrics::lower_is_better(metric);
    if lo > 0.0 {
        if lower_better {
            Verdict::Worse
        } else {
            Verdict::Better
        }
    } else if hi < 0.0 {
        if lower_better {
            Verdict::Better
        } else {
            Verdict::Worse
        }
    } else {
        Verdict::NoSignificantDifference
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_of_a_known_sample() {
        // 1..5: mean 3, sd sqrt(2.5), t(0.975, 4) = 2.776: half-width 1.963.
        let e = Estimate::of(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(e.mean, 3.0);
        assert!((e.half_width.unwrap() - 1.9632).abs() < 1e-3);
    }

    #[test]
    fn a_constant_sample_has_a_zero_interval() {
        let e = Estimate::of(&[0.5, 0.5, 0.5]);
        assert_eq!(e.half_width, Some(0.0));
        // A difference that is always the same is significant...
        assert_eq!(verdict("waste", &e), Verdict::Worse);
        // ...unless it is always 0.
        let zero = Estimate::of(&[0.0, 0.0]);
        assert_eq!(verdict("waste", &zero), Verdict::NoSignificantDifference);
    }
}
