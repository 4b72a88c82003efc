//! `vcsim search`: where does policy A lose to policy B? A search over a
//! space of scenarios (random points, then local moves around the worst
//! loss, see [`method`]) for the largest significant loss on one metric,
//! paired over K seeds; then the worst point found is shrunk to the
//! simplest scenario that still shows it ([`shrink`]), written as a
//! scenario file.

#![forbid(unsafe_code)]

pub mod evaluate;
pub mod method;
pub mod output;
pub mod point;
pub mod shrink;
pub mod space;

pub use evaluate::{Contest, Outcome};
pub use method::Visit;
pub use space::{Space, SpaceError};

use vcsim_framework::Scenario;

/// What a search found.
pub struct Found {
    pub trail: Vec<Visit>,
    /// The index in `trail` of the worst loss found by the search, before
    /// shrinking (None if no point ran).
    pub worst: Option<usize>,
    /// The index of the shrunk point and its scenario, when the worst loss
    /// is significant.
    pub shrunk: Option<(usize, Scenario)>,
    /// How the shrinking went, when it ran.
    pub shrinking: Option<shrink::Shrunk>,
    /// The runs the shrinking could spend.
    pub shrink_budget: u64,
}

/// Searches within `budget` runs (the shrinking gets at most half as many
/// again), from the stream `seed`.
pub fn run(
    space: &Space,
    contest: &Contest,
    budget: u64,
    seed: u64,
    progress: &dyn Fn(u64),
) -> Found {
    let trail = search_part(space, contest, budget, seed, 0, progress);
    shrink_worst(space, contest, trail, budget / 2, progress)
}

/// The search without shrinking, from stream `index` of `seed`: one shard
/// of a search cut into independent parts (`index` 0 is an uncut search).
pub fn search_part(
    space: &Space,
    contest: &Contest,
    budget: u64,
    seed: u64,
    index: u64,
    progress: &dyn Fn(u64),
) -> Vec<Visit> {
    let mut rng = vcsim_rng::stream(seed, "search", index);
    method::search(space, contest, budget, &mut rng, progress)
}

/// Finds the worst loss in `trail` and, if it is significant, shrinks it
/// within `budget` runs.
pub fn shrink_worst(
    space: &Space,
    contest: &Contest,
    mut trail: Vec<Visit>,
    budget: u64,
    progress: &dyn Fn(u64),
) -> Found {
    let worst = method::worst(&trail);
    let mut shrinking = None;
    let shrunk = worst
        .filter(|&i| matches!(trail[i].scored, Ok(o) if o.significant()))
        .and_then(|i| {
            let s = shrink::shrink(space, contest, &mut trail, i, budget, progress);
            shrinking = Some(s);
            trail[s.kept]
                .point
                .scenario(space)
                .ok()
                .map(|scn| (s.kept, scn))
        });
    Found {
        trail,
        worst,
        shrunk,
        shrinking,
        shrink_budget: budget,
    }
}
