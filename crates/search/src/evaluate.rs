//! How much worse policy A is than policy B at a point: both run on the
//! same K seeds (seed, seed+1, ..., as `vcsim compare --replications K`
//! does), and the paired differences give a mean and a 95% interval.

use crate::point::Point;
use crate::space::Space;
use rayon::prelude::*;
use vcsim_framework::{run_spec, Metrics, PolicySpec, Registry, SimOptions};
use vcsim_sweep::stats::Estimate;

/// What the search compares.
pub struct Contest<'a> {
    pub registry: &'a Registry,
    /// A, then B: the search looks for points where A is worse.
    pub policies: [PolicySpec; 2],
    pub metric: String,
    pub seeds: u32,
}

/// A point's result: A's loss to B (positive: A is worse), paired over
/// the seeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

impl Outcome {
    /// A loss whose 95% interval excludes zero.
    pub fn significant(&self) -> bool {
        self.low > 0.0
    }
    /// Orders outcomes: significant losses first, then the larger mean.
    pub fn key(&self) -> (bool, f64) {
        (self.significant(), self.mean)
    }
}

/// A point evaluated: its outcome, or why it could not run.
pub type Scored = Result<Outcome, String>;

/// A point evaluated, and the runs it cost: 2 x seeds if its scenario was
/// valid (the runs were made, even if one failed), 0 if it was not.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluated {
    pub scored: Scored,
    pub runs: u64,
}

impl Contest<'_> {
    pub fn runs_per_point(&self) -> u64 {
        2 * self.seeds as u64
    }

    /// Evaluates `points` in parallel (in the pool the caller installed);
    /// the result is in their order, whatever the number of threads.
    pub fn evaluate(&self, space: &Space, points: &[Point]) -> Vec<Evaluated> {
        let scenarios: Vec<Result<_, String>> = points.iter().map(|p| p.scenario(space)).collect();
        let k = self.seeds as usize;
        let tasks: Vec<(usize, usize, u64)> = scenarios
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_ok())
            .flat_map(|(i, s)| {
                let seed = s.as_ref().map_or(0, |s| s.seed);
                (0..2).flat_map(move |pol| (0..k).map(move |r| (i, pol, seed + r as u64)))
            })
            .collect();
        let values: Vec<Result<f64, String>> = tasks
            .par_iter()
            .map(|&(i, pol, seed)| {
                let scn = scenarios[i].as_ref().expect("only runnable points");
                let opts = SimOptions {
                    seed: Some(seed),
                    ..Default::default()
                };
                let out = run_spec(scn, self.registry, &self.policies[pol], opts)?;
                out.report
                    .metric(&self.metric)
                    .ok_or_else(|| format!("the run has no metric `{}`", self.metric))
            })
            .collect();
        let mut by_point: Vec<Vec<Result<f64, String>>> = vec![Vec::new(); points.len()];
        for ((i, _, _), v) in tasks.iter().zip(values) {
            by_point[*i].push(v);
        }
        let sign = if Metrics::lower_is_better(self.metric.split('.').next().unwrap_or("")) {
            1.0
        } else {
            -1.0
        };
        let per = self.runs_per_point();
        scenarios
            .into_iter()
            .zip(by_point)
            .map(|(s, vals)| {
                let runs = if s.is_ok() { per } else { 0 };
                let scored = (|| {
                    s?;
                    let vals: Vec<f64> = vals.into_iter().collect::<Result<_, _>>()?;
                    let (a, b) = vals.split_at(k);
                    let losses: Vec<f64> = a.iter().zip(b).map(|(a, b)| sign * (a - b)).collect();
                    let e = Estimate::of(&losses);
                    let o = Outcome {
                        mean: e.mean,
                        low: e.low().unwrap_or(f64::NEG_INFINITY),
                        high: e.high().unwrap_or(f64::INFINITY),
                    };
                    // A trail holds finite numbers only (`vcsim merge`
                    // refuses any other): a loss that is none is no loss.
                    if [o.mean, o.low, o.high].iter().all(|x| x.is_finite()) {
                        Ok(o)
                    } else {
                        Err(format!(
                            "the loss on `{}` is not a finite number ({} [{}, {}])",
                            self.metric, o.mean, o.low, o.high
                        ))
                    }
                })();
                Evaluated { scored, runs }
            })
            .collect()
    }
}
