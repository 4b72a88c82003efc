//! A project as the client knows it: its apps, its RPC state, its counters.

use super::disk::DeletionPolicy;
use super::host::{HostInfo, Rsc, CPU};
use crate::rpc::RpcState;

#[derive(Debug, Clone)]
pub struct AppInfo {
    pub name: String,
    pub cpus: f64,
    /// The coprocessor it uses and how many instances, if any.
    pub gpu: Option<(Rsc, f64)>,
    /// Set when the app needs a GPU type this host lacks.
    pub missing_gpu: Option<String>,
    pub flops_estimate: f64,
    pub flops_mean: f64,
    pub flops_stddev: f64,
    pub weight: f64,
    pub input_bytes: f64,
    pub output_bytes: f64,
    pub failure_fraction: f64,
    /// Its jobs' input files stay after the job is reported.
    pub sticky_input: bool,
    pub sticky_priority: u8,
    /// Seconds from download to expiry of its files.
    pub sticky_expiry: f64,
    /// Its jobs' latency bound in seconds: the app's own, else the project's.
    pub latency_bound: f64,
    /// At most this many of its jobs run at once (0: no cap).
    pub max_concurrent: u32,
}

impl AppInfo {
    /// The resource whose shortfall this app's jobs fill.
    pub fn rsc(&self) -> Rsc {
        self.gpu.map_or(CPU, |(r, _)| r)
    }
    /// Peak FLOPS a job of this app computes at on `host`: its GPU
    /// instances' if it uses a GPU, else its CPUs'.
    pub fn speed(&self, host: &HostInfo) -> f64 {
        match self.gpu {
            Some((r, n)) => n * host.instance_flops(r),
            None => self.cpus * host.cpu_flops,
        }
    }
    pub fn runs_on_host(&self) -> bool {
        self.missing_gpu.is_none()
    }
}

/// Counters kept per project for the figures of merit.
#[derive(Debug, Clone, Default)]
pub struct ProjectStats {
    pub jobs_on_time: u64,
    pub jobs_late: u64,
    pub jobs_failed: u64,
    pub rpcs: u64,
    pub rpc_failures: u64,
    /// Peak FLOPs of reported jobs, by outcome.
    pub flops_used: f64,
    pub flops_wasted: f64,
    /// Busy instance-seconds of reported jobs, per resource.
    pub busy_seconds: Vec<f64>,
    /// Monotony's stepped sums, in steps: R (steps since a job last ran) and sum of R^2.
    pub steps_since_ran: u64,
    pub q_steps: u128,
}

#[derive(Debug, Clone)]
pub struct ProjectState {
    pub name: String,
    pub resource_share: f64,
    pub latency_bound: f64,
    pub apps: Vec<AppInfo>,
    pub rpc: RpcState,
    /// Instance-seconds used per resource, cumulative to `usage_mark`.
    pub(crate) usage: Vec<f64>,
    /// Instances its running jobs use per second now, per resource (CPUs
    /// scaled while over-committed; 0 while not allowed to compute).
    pub(crate) usage_rate: Vec<f64>,
    /// Instances held now per resource by running jobs (what they claim,
    /// whether or not they compute).
    pub running_instances: Vec<f64>,
    /// Exponentially averaged CPU seconds (the RPC document's `exp_avg_cpu`)
    /// as of `usage_mark`; `View::exp_avg_cpu` projects it to the view's time.
    pub(crate) exp_avg_cpu: f64,
    pub(crate) exp_mark: f64,
    /// Recent estimated credit (today's client's REC), in credits per day,
    /// as of `usage_mark`; `View::rec` projects it to the view's time.
    pub(crate) rec: f64,
    /// Instance-seconds its computing jobs held per resource, cumulative to
    /// `usage_mark`: each job's CPUs and GPUs as it claims them, not slowed
    /// while the CPUs are over-committed (what REC credits, as BOINC's
    /// `accumulate_inst_sec` counts `avg_ncpus`).
    pub(crate) held: Vec<f64>,
    /// CPUs its computing jobs hold now beyond what `usage_rate` counts
    /// (those over-commitment slows away; GPUs are never slowed): the rate
    /// of `held` is `usage_rate`, plus this on the CPU.
    pub(crate) held_extra_cpus: f64,
    /// `held` when REC was last folded.
    pub(crate) rec_mark: Vec<f64>,
    pub stats: ProjectStats,
    pub has_rsc_apps: Vec<bool>,
    /// The server gives the three-state answer per resource.
    pub reports_resource_support: bool,
    /// The project's `deletion_policy`.
    pub deletion_policy: DeletionPolicy,
    /// The server makes a third pass with the space this project's own files hold.
    pub delete_from_self: bool,
    /// At most this many of its jobs run at once (0: no cap).
    pub max_concurrent: u32,
}
