//! Free instances per resource while a scheduler fills the host.

use vcsim_framework::{Job, View, CPU};

/// Tolerance for fractional CPUs adding up.
const EPS: f64 = 1e-9;

#[derive(Debug, Clone)]
pub struct Capacity {
    pub free: Vec<f64>,
}

impl Capacity {
    pub fn of_host(v: &View) -> Capacity {
        let h = v.host();
        Capacity {
            free: (0..h.nrsc()).map(|r| h.ninstances(r)).collect(),
        }
    }
    pub fn fits(&self, j: &Job) -> bool {
        j.cpus <= self.free[CPU] + EPS && j.gpu.is_none_or(|(r, n)| n <= self.free[r] + EPS)
    }
    pub fn take(&mut self, j: &Job) {
        self.free[CPU] -= j.cpus;
        if let Some((r, n)) = j.gpu {
            self.free[r] -= n;
        }
    }
    pub fn give(&mut self, j: &Job) {
        self.free[CPU] += j.cpus;
        if let Some((r, n)) = j.gpu {
            self.free[r] += n;
        }
    }
    /// Can any more job of any kind start? (Some CPU or GPU left.)
    pub fn any_free(&self) -> bool {
        self.free.iter().any(|f| *f > EPS)
    }
}
