//! Named random streams derived from the run's seed (`vcsim-rng`).

pub use vcsim_rng::{stream, stream_seed, SimRng};
