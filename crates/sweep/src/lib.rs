//! Parameter sweeps, summaries, plots and shards for vcsim (placeholder).
