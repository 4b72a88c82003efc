//! A job on the host. Its progress is stored as "FLOPs left at `since`,
//! advancing at `rate`", so a view can read it at any later time; the
//! simulator folds it forward only at steps where something happens, so the
//! numbers do not depend on how many steps it visited in between.

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
    /// Peak FLOPS of the instances it computes on (its GPU instances' for a
    /// GPU job, else its CPUs').
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
    /// It failed because a file of its did not fit on the disk.
    pub(crate) disk_full: bool,
    pub(crate) fail_at_flops: Option<f64>,
    // Progress as of `since`; a running job advances from there at `rate`
    // FLOPS, and its elapsed time with the clock, while it `progresses`.
    pub(crate) flops_left: f64,
    pub(crate) run_seconds: f64,
    pub(crate) since: Time,
    /// It computes now: running, and its resources allowed to compute.
    pub(crate) progresses: bool,
    /// FLOPS it computes at while it progresses: `speed`, slowed for a CPU
    /// job while the CPUs are over-committed.
    pub(crate) rate: f64,
    /// CPUs it occupies while it progresses (its `cpus`, scaled like `rate`
    /// for a CPU job while the CPUs are over-committed).
    pub(crate) cpu_share: f64,
    /// Instance-seconds it has occupied during this run, CPU and GPU (what
    /// the figures of merit count when it is reported).
    pub(crate) cpu_seconds: f64,
    pub(crate) gpu_seconds: f64,
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
    /// Instance-seconds of resource `r` it has occupied during this run.
    pub fn instance_seconds(&self, r: Rsc) -> f64 {
        if r == CPU {
            self.cpu_seconds
        } else if self.gpu.is_some_and(|(g, _)| g == r) {
            self.gpu_seconds
        } else {
            0.0
        }
    }
    /// Peak FLOPS of the instances the job holds while it runs.
    pub fn peak_flops(&self, host: &HostInfo) -> f64 {
        self.cpus * host.cpu_flops + self.gpu.map_or(0.0, |(r, n)| n * host.instance_flops(r))
    }
    /// Peak FLOPs of the instances it has occupied during this run (what a
    /// report counts as used or wasted).
    pub fn flops_this_run(&self, host: &HostInfo) -> f64 {
        self.cpu_seconds * host.cpu_flops
            + self
                .gpu
                .map_or(0.0, |(r, _)| self.gpu_seconds * host.instance_flops(r))
    }
    /// Whether it computes now (running, and allowed to).
    pub fn progresses(&self) -> bool {
        self.state == JobState::Running && self.progresses
    }
    /// Seconds of computing so far (elapsed time, BOINC's), at time `t` (not
    /// before the last event).
    pub fn run_seconds_at(&self, t: Time) -> f64 {
        if self.progresses() {
            self.run_seconds + (t - self.since).max(0.0)
        } else {
            self.run_seconds
        }
    }
    pub fn flops_left_at(&self, t: Time) -> f64 {
        if self.progresses() {
            (self.flops_left - self.rate * (t - self.since).max(0.0)).max(0.0)
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
