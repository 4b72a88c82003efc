//! The search: random points over the whole space, then local moves around
//! the worst found so far, with random restarts. Points are drawn in
//! batches of a fixed size from one seeded stream and each batch is drawn
//! from what the previous ones found, so a search is the same on any
//! number of threads.
//!
//! Why this method rather than an optimisation crate: the objective is a
//! paired difference over a few seeds (noisy, and flat wherever the two
//! policies decide alike), the space mixes integers and reals, and the
//! losses worth finding are often needles (one CPU count, one slack
//! band). Gradient and surrogate methods need smoothness this does not
//! have; random points find the needles' neighbourhoods, and coordinate
//! moves (one parameter at a time) stay on them.

use crate::evaluate::{Contest, Outcome, Scored};
use crate::point::Point;
use crate::space::{Range, Space, Value};
use rand::Rng;
use rand_distr::{Distribution, Normal};
use vcsim_rng::SimRng;

/// Points drawn (and evaluated in parallel) at once.
pub const BATCH: usize = 16;

/// One evaluated point of the trail.
#[derive(Debug, Clone)]
pub struct Visit {
    pub phase: &'static str,
    pub point: Point,
    pub scored: Scored,
    /// Runs spent so far, this point's included.
    pub runs: u64,
}

/// The index in `trail` of the worst loss (significant first).
pub fn worst(trail: &[Visit]) -> Option<usize> {
    let mut best: Option<(usize, Outcome)> = None;
    for (i, v) in trail.iter().enumerate() {
        if let Ok(o) = v.scored {
            if best.is_none_or(|(_, b)| o.key() > b.key()) {
                best = Some((i, o));
            }
        }
    }
    best.map(|(i, _)| i)
}

fn random_point(space: &Space, rng: &mut SimRng) -> Point {
    let values = space
        .dims
        .iter()
        .map(|d| {
            Some(match d.range {
                Range::Int(lo, hi) => Value::Int(rng.gen_range(lo..=hi)),
                Range::Float(lo, hi) if lo < hi => Value::Float(rng.gen_range(lo..=hi)),
                Range::Float(lo, _) => Value::Float(lo),
            })
        })
        .collect();
    Point::of(space, values)
}

/// A move from `from`: one parameter (half the time) or all of them,
/// by a normal step of `scale` times the range's width (at least one for
/// integers).
fn local_move(space: &Space, from: &Point, scale: f64, rng: &mut SimRng) -> Point {
    let n = space.dims.len();
    let one = rng.gen_bool(0.5).then(|| rng.gen_range(0..n));
    let mut p = from.clone();
    for (k, d) in space.dims.iter().enumerate() {
        if one.is_some_and(|o| o != k) {
            continue;
        }
        let x = p.values[k].map_or(d.low(), Value::as_f64);
        let sd = match d.range {
            Range::Int(..) => (scale * d.width()).max(0.75),
            Range::Float(..) => scale * d.width(),
        };
        let step = Normal::new(0.0, sd.max(f64::MIN_POSITIVE))
            .map(|nd| nd.sample(rng))
            .unwrap_or(0.0);
        p.values[k] = Some(d.clamp(x + step));
    }
    p
}

/// Runs the search within `budget` runs; `progress` is told the runs spent
/// after each batch.
pub fn search(
    space: &Space,
    contest: &Contest,
    budget: u64,
    rng: &mut SimRng,
    progress: &dyn Fn(u64),
) -> Vec<Visit> {
    let per = contest.runs_per_point();
    let npoints = (budget / per).max(1) as usize;
    // Two fifths of the points explore the whole space.
    let nrandom = (npoints * 2 / 5).max(npoints.min(BATCH));
    let mut trail: Vec<Visit> = Vec::with_capacity(npoints);
    let mut runs = 0;
    while trail.len() < npoints {
        let take = BATCH.min(npoints - trail.len());
        let done = trail.len();
        let from = worst(&trail).map(|i| trail[i].point.clone());
        let mut batch = Vec::with_capacity(take);
        let mut phases = Vec::with_capacity(take);
        for i in 0..take {
            let explore = done + i < nrandom || from.is_none() || rng.gen_bool(0.15);
            if explore {
                batch.push(random_point(space, rng));
                phases.push(if done + i < nrandom {
                    "random"
                } else {
                    "restart"
                });
            } else {
                // Steps shrink from a fifth of each range to a fiftieth.
                let f = (done + i - nrandom) as f64 / (npoints - nrandom).max(1) as f64;
                let scale = 0.2 * (0.1f64).powf(f);
                batch.push(local_move(
                    space,
                    from.as_ref().expect("a start"),
                    scale,
                    rng,
                ));
                phases.push("local");
            }
        }
        let scored = contest.evaluate(space, &batch);
        for ((point, e), phase) in batch.into_iter().zip(scored).zip(phases) {
            // Runs made count, whether or not one failed.
            runs += e.runs;
            trail.push(Visit {
                phase,
                point,
                scored: e.scored,
                runs,
            });
        }
        progress(runs);
    }
    trail
}
