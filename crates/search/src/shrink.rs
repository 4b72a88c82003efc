//! Shrinking: the worst point found, made as simple as it can be while the
//! loss stays significant. Each pass lists simpler variants in order of
//! preference — a parameter back to the base scenario's own value, fewer
//! projects, no GPU, smaller integers, rounder numbers, a shorter run —
//! evaluates them a chunk at a time, and takes the first whose loss is
//! still significant. Passes repeat until none is, or the shrinking
//! budget is spent. Every variant tried goes into the trail.

use crate::evaluate::Contest;
use crate::method::{Visit, BATCH};
use crate::point::Point;
use crate::space::{Range, Space, Value};

/// `x` to `digits` significant digits.
fn round_to(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let mag = 10f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    (x * mag).round() / mag
}

/// The simpler variants of `p`, the most wanted first.
fn variants(space: &Space, p: &Point) -> Vec<Point> {
    let mut out: Vec<Point> = Vec::new();
    let mut push = |q: Point| {
        if q != *p && !out.contains(&q) {
            out.push(q);
        }
    };
    for k in 0..space.dims.len() {
        if p.values[k].is_some() {
            let mut q = p.clone();
            q.values[k] = None;
            push(q);
        }
    }
    if let Ok(scn) = p.scenario(space) {
        // Fewer projects and no GPU remove projects: a variant that leaves
        // none (every project kept needs a GPU) is no scenario, and is not
        // proposed.
        let runs = |q: &Point| q.scenario(space).is_ok();
        let n = scn.projects.len();
        for keep in [1, n / 2, n.saturating_sub(1)] {
            if keep >= 1 && keep < n {
                let mut q = p.clone();
                q.projects = Some(keep);
                if runs(&q) {
                    push(q);
                }
            }
        }
        if !scn.host.gpus.is_empty() && !p.no_gpu {
            let mut q = p.clone();
            q.no_gpu = true;
            if runs(&q) {
                push(q);
            }
        }
    }
    for (k, d) in space.dims.iter().enumerate() {
        match (d.range, p.values[k]) {
            (Range::Int(lo, _), Some(Value::Int(v))) if v > lo => {
                for w in [lo, lo + (v - lo) / 2, v - 1] {
                    let mut q = p.clone();
                    q.values[k] = Some(Value::Int(w));
                    push(q);
                }
            }
            (Range::Float(..), Some(Value::Float(v))) => {
                for digits in [1, 2] {
                    let mut q = p.clone();
                    q.values[k] = Some(d.clamp(round_to(v, digits)));
                    push(q);
                }
            }
            _ => {}
        }
    }
    let days = p.duration_days;
    for shorter in [(days / 2.0).round().max(1.0), days.round().max(1.0)] {
        if shorter < days {
            let mut q = p.clone();
            q.duration_days = shorter;
            push(q);
        }
    }
    out
}

/// How a shrinking went.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shrunk {
    /// The index in the trail of the simplest point kept (`start` if no
    /// variant kept the loss significant, or none was tried).
    pub kept: usize,
    /// Variants evaluated.
    pub tried: usize,
    /// When the budget stopped the shrinking before its first variant: the
    /// runs the first batch of variants needed.
    pub first_batch_runs: Option<u64>,
}

/// Shrinks the point at `trail[start]` (a significant loss) within
/// `budget` runs, adding what it tries to `trail`.
pub fn shrink(
    space: &Space,
    contest: &Contest,
    trail: &mut Vec<Visit>,
    start: usize,
    budget: u64,
    progress: &dyn Fn(u64),
) -> Shrunk {
    let per = contest.runs_per_point();
    let mut kept = start;
    let mut spent = 0;
    let mut tried = 0;
    let mut first_batch_runs = None;
    let mut runs = trail.last().map_or(0, |v| v.runs);
    'passes: loop {
        let list = variants(space, &trail[kept].point);
        for chunk in list.chunks(BATCH / 2) {
            let cost = per * chunk.len() as u64;
            if spent + cost > budget {
                if tried == 0 {
                    first_batch_runs = Some(cost);
                }
                break 'passes;
            }
            let scored = contest.evaluate(space, chunk);
            let mut taken = None;
            for (q, e) in chunk.iter().zip(scored) {
                // Runs made are spent, whether or not one failed.
                runs += e.runs;
                spent += e.runs;
                tried += 1;
                let good = matches!(e.scored, Ok(o) if o.significant());
                trail.push(Visit {
                    phase: "shrink",
                    point: q.clone(),
                    scored: e.scored,
                    runs,
                });
                if good && taken.is_none() {
                    taken = Some(trail.len() - 1);
                }
            }
            progress(runs);
            if let Some(t) = taken {
                kept = t;
                continue 'passes;
            }
        }
        break;
    }
    Shrunk {
        kept,
        tried,
        first_batch_runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A space around a shipped scenario.
    fn space_around(name: &str) -> Space {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios")
            .join(name);
        let base = vcsim_framework::Scenario::load(&path).unwrap();
        Space::around(base, path)
    }

    #[test]
    fn no_variant_removes_every_project() {
        // gpu-speed-3's first project has a GPU app only, and `mix` makes
        // every project from the first: "no GPU" left none, and the
        // shrinker tried it as a point ("needs at least one [[project]]").
        let space = space_around("gpu-speed-3.toml");
        let mix = space
            .dims
            .iter()
            .position(|d| d.param.name() == "mix")
            .unwrap();
        for base in [None, Some(Value::Int(2))] {
            let mut values = vec![None; space.dims.len()];
            values[mix] = base;
            let p = Point::of(&space, values);
            for fewer in [None, Some(1)] {
                let p = Point {
                    projects: fewer,
                    ..p.clone()
                };
                assert!(p.scenario(&space).is_ok());
                for q in variants(&space, &p) {
                    if q.projects != p.projects || q.no_gpu != p.no_gpu {
                        let r = q.scenario(&space);
                        assert!(r.is_ok(), "{}: {r:?}", q.describe(&space));
                    }
                }
            }
        }
        // Where some project keeps a CPU app, "no GPU" is still proposed.
        let p = Point::of(&space, vec![None; space.dims.len()]);
        assert!(variants(&space, &p).iter().any(|q| q.no_gpu));
    }

    #[test]
    fn rounding_keeps_significant_digits() {
        assert_eq!(round_to(1.734, 1), 2.0);
        assert_eq!(round_to(1.734, 2), 1.7);
        assert_eq!(round_to(0.0456, 1), 0.05);
        assert_eq!(round_to(1234.0, 2), 1200.0);
    }
}
