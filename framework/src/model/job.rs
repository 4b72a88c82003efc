//! A job on the host. Its progress is stored as "FLOPs left at `since`,
//! advancing at `speed`", so a view can read it at any later time.

use super::host::{HostInfo, Rsc, CPU};
use crate::time::Time;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Downloaded, never started.
    Queued,
    Running,
    /// Started once, not running now (kept in memory: no work is lost).
    Preempted,
    /// Done computing; waits to be reported.
    Finished,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    /// Chosen by the weighted round-robin (debt) rule.
    RoundRobin,
    /// Chosen earliest-deadline-first because it is in deadline trouble.
    Deadline,
}

#[derive(Debug, Clone)]
pub struct Job {
    pub id: u64,
    pub project: usize,
    pub app: usize,
    pub cpus: f64,
    pub gpu: Option<(Rsc, f64)>,
    /// The project's FLOPs estimate.
    pub flops_estimate: f64,
    /// FLOPs the job really takes (known to the simulator; the client sees
    /// only the fraction done, as in BOINC's simulator).
    pub(crate) flops_real: f64,
    /// Peak FLOPS the job computes at.
    pub speed: f64,
    pub received: Time,
    pub deadline: Time,
    pub state: JobState,
    pub mode: RunMode,
    /// Set once the job has run in deadline mode.
    pub ever_deadline_mode: bool,
    /// When it last started or resumed.
    pub last_started: Time,
    pub finished_at: Time,
    /// The job crashed instead of finishing.
    pub failed: bool,
    pub(crate) fail_at_flops: Option<f64>,
    // Progress as of `since`; a running job advances at `speed` from there.
    pub(crate) flops_left: f64,
    pub(crate) run_seconds: f64,
    pub(crate) since: Time,
    /// Seconds computed before the run began (an initial job's progress):
    /// part of its run time, but not of this run's accounting.
    pub(crate) prior_seconds: f64,
}

impl Job {
    pub fn rsc(&self) -> Rsc {
        self.gpu.map_or(CPU, |(r, _)| r)
    }
    /// Instances of resource `r` the job holds while it runs.
    pub fn instances(&self, r: Rsc) -> f64 {
        if r == CPU {
            self.cpus
        } else {
            self.gpu.filter(|(g, _)| *g == r).map_or(0.0, |(_, n)| n)
        }
    }
    pub fn is_runnable(&self) -> bool {
        matches!(
            self.state,
            JobState::Queued | JobState::Running | JobState::Preempted
        )
    }
    pub fn has_started(&self) -> bool {
        matches!(self.state, JobState::Running | JobState::Preempted) || self.run_seconds > 0.0
    }
    /// Seconds it has computed during this run (for the accounting).
    pub fn seconds_this_run(&self) -> f64 {
        self.run_seconds - self.prior_seconds
    }
    /// Peak FLOPS of the instances the job holds while it runs.
    pub fn peak_flops(&self, host: &HostInfo) -> f64 {
        self.cpus * host.cpu_flops + self.gpu.map_or(0.0, |(r, n)| n * host.instance_flops(r))
    }
    /// Seconds of computing so far, at time `t` (not before the last event).
    pub fn run_seconds_at(&self, t: Time) -> f64 {
        if self.state == JobState::Running {
            self.run_seconds + (t - self.since).max(0.0)
        } else {
            self.run_seconds
        }
    }
    pub fn flops_left_at(&self, t: Time) -> f64 {
        if self.state == JobState::Running {
            (self.flops_left - self.speed * (t - self.since).max(0.0)).max(0.0)
        } else {
            self.flops_left
        }
    }
    /// Fraction done at `t`, exact as in BOINC's simulator.
    pub fn fraction_done_at(&self, t: Time) -> f64 {
        if self.state == JobState::Finished {
            1.0
        } else {
            (1.0 - self.flops_left_at(t) / self.flops_real).clamp(0.0, 1.0)
        }
    }
    /// The project's estimate of the job's run time on this host, without correction.
    pub fn estimated_seconds(&self) -> f64 {
        self.flops_estimate / self.speed
    }
}
