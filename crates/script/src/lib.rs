//! Policies written as rhai scripts for vcsim (placeholder).
