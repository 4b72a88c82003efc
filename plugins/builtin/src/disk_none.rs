//! The disk manager that enforces nothing: every server is told the whole
//! disk is free, and nothing is ever deleted. It is the default until the
//! `share` manager of `disk-management` is chosen.

use vcsim_framework::{DiskManager, PolicyResult, View};

#[derive(Default)]
pub struct NoDiskLimits;

impl DiskManager for NoDiskLimits {
    fn free_space(&self, v: &View, _project: usize) -> PolicyResult<[f64; 3]> {
        Ok([v.host().disk_bytes; 3])
    }
}
