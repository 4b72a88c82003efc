//! The host and the user's preferences, as the client knows them.

/// Index of a processing resource: 0 is the CPU, `1 + k` the host's k-th GPU type.
pub type Rsc = usize;
pub const CPU: Rsc = 0;

#[derive(Debug, Clone)]
pub struct GpuInfo {
    pub kind: String,
    pub count: f64,
    pub flops: f64,
}

/// What the client knows of its host.
#[derive(Debug, Clone)]
pub struct HostInfo {
    /// CPUs the client may use.
    pub ncpus: f64,
    pub cpu_flops: f64,
    pub gpus: Vec<GpuInfo>,
    pub disk_bytes: f64,
    /// The user limits the CPUs BOINC may use (`max_ncpus_pct` below 100):
    /// then no job may push the CPUs in use past `ncpus`; otherwise BOINC
    /// over-commits them (see `policy::admission`).
    pub strict_cpus: bool,
}

impl HostInfo {
    pub fn nrsc(&self) -> usize {
        1 + self.gpus.len()
    }
    pub fn ninstances(&self, r: Rsc) -> f64 {
        if r == CPU {
            self.ncpus
        } else {
            self.gpus[r - 1].count
        }
    }
    /// Peak FLOPS of one instance of `r`.
    pub fn instance_flops(&self, r: Rsc) -> f64 {
        if r == CPU {
            self.cpu_flops
        } else {
            self.gpus[r - 1].flops
        }
    }
    pub fn rsc_name(&self, r: Rsc) -> &str {
        if r == CPU {
            "cpu"
        } else {
            &self.gpus[r - 1].kind
        }
    }
    pub fn rsc_by_name(&self, name: &str) -> Option<Rsc> {
        if name == "cpu" {
            Some(CPU)
        } else {
            self.gpus.iter().position(|g| g.kind == name).map(|i| i + 1)
        }
    }
}

/// The user's preferences, in seconds.
#[derive(Debug, Clone)]
pub struct Prefs {
    pub sched_period: f64,
    pub work_buf_min: f64,
    pub work_buf_additional: f64,
    pub learn_availability: bool,
    pub step: f64,
    /// The half-life of recent estimated credit (REC), in seconds.
    pub rec_half_life: f64,
}

impl Prefs {
    /// BOINC's `Btot`: the whole buffer, at least one second.
    pub fn work_buf_total(&self) -> f64 {
        (self.work_buf_min + self.work_buf_additional).max(1.0)
    }
}
