//! The disk manager that enforces nothing: every server is told the whole
//! disk is free, and nothing is ever deleted. It is the default until the
//! `share` manager of `disk-management` is chosen.

use vcsim_framework::{ClientState, DiskManager};

#[derive(Default)]
pub struct NoDiskLimits;

impl DiskManager for NoDiskLimits {
    fn free_space(&self, st: &ClientState, _project: usize) -> [f64; 3] {
        [st.host.disk_bytes; 3]
    }
}
