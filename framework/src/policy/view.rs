//! The read-only view a policy gets of the client's state.
//!
//! A view may look at a time later than the state's last event (the
//! simulator projects running jobs forward to find the step at which work is
//! first needed); every time-dependent getter uses the view's time. Only a
//! *live* view — one at the current step, made by the simulator for a real
//! decision — can write to the run's log.

use super::{CompletionEstimator, PolicyError, PolicyResult};
use crate::family::Family;
use crate::log::RunLog;
use crate::model::{
    ClientState, DiskState, FileInfo, HostInfo, Job, JobState, Prefs, ProjectState, Rsc,
};
use crate::time::Time;

#[derive(Clone, Copy)]
pub struct View<'a> {
    at: Time,
    st: &'a ClientState,
    est: &'a dyn CompletionEstimator,
    log: Option<&'a RunLog>,
    /// The projects' total resource share (summed once: policies divide by
    /// it per project).
    total_share: f64,
    /// The run explains its decisions: the policy will be asked why.
    explaining: bool,
}

impl<'a> View<'a> {
    /// A view of `st` at time `at` (not before the state's last event),
    /// estimating with `est`. Its `log` writes nothing.
    pub fn new(st: &'a ClientState, est: &'a dyn CompletionEstimator, at: Time) -> View<'a> {
        View {
            at,
            st,
            est,
            log: None,
            total_share: st.total_share(),
            explaining: false,
        }
    }
    /// The same view, in a run that explains (or not) its decisions.
    pub fn explained(self, explaining: bool) -> View<'a> {
        View { explaining, ..self }
    }
    /// Whether the run explains its decisions (`vcsim explain`): a policy
    /// that prepares reasons while it decides may skip that work otherwise.
    pub fn explaining(&self) -> bool {
        self.explaining
    }
    /// The same view, writing its `log` lines to `log`.
    pub fn live(self, log: &'a RunLog) -> View<'a> {
        View {
            log: Some(log),
            ..self
        }
    }
    /// Whether `log` reaches the run's log (a view of the current step).
    pub fn is_live(&self) -> bool {
        self.log.is_some()
    }
    /// The run's seed: policies that draw at random derive their streams
    /// from it (see `rng::stream`).
    pub fn seed(&self) -> u64 {
        self.st.seed
    }
    /// The index of the step the view is at.
    pub fn step(&self) -> u64 {
        (self.at / self.st.prefs.step).round() as u64
    }
    /// Adds a line to the run's log (`vcsim run` prints it as a note),
    /// stamped with the simulated time; nothing for a view at a projected
    /// time. At most [`crate::log::MAX_LINES`] lines and
    /// [`crate::log::MAX_BYTES`] bytes a run.
    pub fn log(&self, policy: &str, msg: &str) {
        if let Some(l) = self.log {
            l.push(self.at, policy, msg);
        }
    }
    /// The current simulated time.
    pub fn now(&self) -> Time {
        self.at
    }
    /// The same state seen at time `t` (not before the state's last event):
    /// running jobs projected forward. It does not write to the run's log.
    pub fn at(&self, t: Time) -> View<'a> {
        View {
            at: t,
            log: None,
            ..*self
        }
    }
    pub fn host(&self) -> &'a HostInfo {
        &self.st.host
    }
    pub fn prefs(&self) -> &'a Prefs {
        &self.st.prefs
    }
    pub fn projects(&self) -> &'a [ProjectState] {
        &self.st.projects
    }
    pub fn project(&self, p: usize) -> &'a ProjectState {
        &self.st.projects[p]
    }
    /// Jobs on the host in arrival order.
    pub fn jobs(&self) -> &'a [Job] {
        &self.st.jobs
    }
    pub fn job(&self, id: u64) -> Option<&'a Job> {
        self.st.job(id)
    }
    /// The files on the host and the user's disk limits.
    pub fn disk(&self) -> &'a DiskState {
        &self.st.disk
    }
    /// The file cannot be deleted: a job on the host needs it, or it is the
    /// output of a result waiting to be reported.
    pub fn file_referenced(&self, f: &FileInfo) -> bool {
        self.st.file_referenced(f)
    }
    /// The job may be deleted to free its files: queued, never started.
    pub fn job_deletable(&self, j: &Job) -> bool {
        self.st.job_deletable(j)
    }
    /// The client runs (the host is on) at the last event.
    pub fn host_on(&self) -> bool {
        self.st.host_on
    }
    /// When the CPU scheduler last ran (-infinity: never).
    pub fn last_schedule(&self) -> Time {
        self.st.last_schedule
    }
    /// When the client last made a scheduler RPC, to any project.
    pub fn last_rpc(&self) -> Option<Time> {
        self.st.last_rpc
    }
    /// The host is online every this many seconds (0: always).
    pub fn connection_interval(&self) -> f64 {
        self.st.connection_interval
    }
    pub fn fraction_done(&self, j: &Job) -> f64 {
        j.fraction_done_at(self.at)
    }
    pub fn run_seconds(&self, j: &Job) -> f64 {
        j.run_seconds_at(self.at)
    }
    /// How fast the job's fraction done grows, per second (0 unless it
    /// computes now): what a client sees of its progress.
    pub fn fraction_done_rate(&self, j: &Job) -> f64 {
        if j.progresses() {
            j.rate / j.flops_real
        } else {
            0.0
        }
    }
    /// Whether the job computes now (running, and allowed to).
    pub fn progresses(&self, j: &Job) -> bool {
        j.progresses()
    }
    /// The estimator's remaining run time of `j`.
    pub fn remaining_seconds(&self, j: &Job) -> PolicyResult<f64> {
        if j.state == JobState::Finished {
            return Ok(0.0);
        }
        let x = self
            .est
            .remaining_seconds(self, j)
            .map_err(|e| e.of(Family::Estimate))?;
        if x.is_finite() && x >= 0.0 {
            Ok(x)
        } else {
            Err(PolicyError::new(format!(
                "invalid decision: remaining time {x} for job {} (must be finite, 0 or more)",
                j.id
            ))
            .of(Family::Estimate))
        }
    }
    /// Bounds of the estimator's remaining time of `j` from now to `until`
    /// (see `CompletionEstimator::remaining_bounds`); a finished job's is 0.
    pub fn remaining_bounds(&self, j: &Job, until: Time) -> PolicyResult<Option<(f64, f64)>> {
        if j.state == JobState::Finished {
            return Ok(Some((0.0, 0.0)));
        }
        self.est
            .remaining_bounds(self, j, until)
            .map_err(|e| e.of(Family::Estimate))
    }
    /// The estimator's correction of new estimates of `p` (BOINC's DCF).
    pub fn correction(&self, p: usize) -> PolicyResult<f64> {
        let x = self
            .est
            .correction(self, p)
            .map_err(|e| e.of(Family::Estimate))?;
        if x.is_finite() && x > 0.0 {
            Ok(x)
        } else {
            Err(PolicyError::new(format!(
                "invalid decision: correction {x} for project {p} (must be positive and finite)"
            ))
            .of(Family::Estimate))
        }
    }
    /// The corrected static estimate: FLOPs estimate / speed x correction.
    pub fn static_estimate(&self, j: &Job) -> PolicyResult<f64> {
        Ok(j.estimated_seconds() * self.correction(j.project)?)
    }
    /// Some project or app has a max_concurrent cap.
    pub fn any_max_concurrent(&self) -> bool {
        self.st.any_max_concurrent
    }
    /// Sum of all projects' resource shares.
    pub fn total_share(&self) -> f64 {
        self.total_share
    }
    /// Resource share of `p` as a fraction of all projects' shares.
    pub fn share_fraction(&self, p: usize) -> f64 {
        self.st.projects[p].resource_share / self.total_share
    }
    pub fn project_has_runnable(&self, p: usize) -> bool {
        self.st
            .jobs
            .iter()
            .any(|j| j.project == p && j.is_runnable())
    }
    /// No back-off or requested delay keeps the client from contacting `p` now.
    pub fn contactable(&self, p: usize) -> bool {
        self.st.projects[p].rpc.contactable(self.at)
    }
    /// Instance-seconds of resource `r` that `p`'s jobs have used since the
    /// run began (CPUs counted as they computed: scaled while over-committed).
    pub fn usage_seconds(&self, p: usize, r: Rsc) -> f64 {
        let pr = &self.st.projects[p];
        pr.usage[r] + pr.usage_rate[r] * (self.at - self.st.usage_mark).max(0.0)
    }
    /// Seconds in which the host could compute since the run began.
    pub fn available_seconds(&self) -> f64 {
        let extra = if self.st.cpu_allowed {
            (self.at - self.st.usage_mark).max(0.0)
        } else {
            0.0
        };
        self.st.available_seconds + extra
    }
    /// `p`'s exponentially averaged CPU seconds (BOINC's `exp_avg_cpu`).
    pub fn exp_avg_cpu(&self, p: usize) -> f64 {
        self.st.exp_avg_cpu_at(p, self.at)
    }
    /// `p`'s recent estimated credit (today's client's REC), in credits per
    /// day: an exponential average, with the scenario's half-life, of the
    /// peak FLOPs its jobs computed with.
    pub fn rec(&self, p: usize) -> f64 {
        self.st.rec_at(p, self.at)
    }
    /// Computing is allowed now (the host is on and the user lets BOINC compute).
    pub fn cpu_allowed(&self) -> bool {
        self.st.cpu_allowed
    }
    /// GPU computing is allowed now.
    pub fn gpu_allowed(&self) -> bool {
        self.st.gpu_allowed
    }
    /// The fraction of time the client expects the host to compute: 1 unless
    /// the scenario lets it learn availability (`client.learn_availability`).
    pub fn on_fraction(&self) -> f64 {
        if self.st.prefs.learn_availability {
            self.st.observed_on_fraction.clamp(0.01, 1.0)
        } else {
            1.0
        }
    }
    /// [`View::on_fraction`] for the jobs of resource `r`: on a GPU, the
    /// fraction of time GPU computing was allowed, by which today's BOINC
    /// client scales GPU jobs (`overall_gpu_frac`; the CPU's for the CPU).
    pub fn on_fraction_of(&self, r: Rsc) -> f64 {
        if r == crate::model::CPU || !self.st.prefs.learn_availability {
            self.on_fraction()
        } else {
            self.st.observed_gpu_fraction.clamp(0.01, 1.0)
        }
    }
    /// Instances of `r` that no running job holds.
    pub fn idle_instances(&self, r: Rsc) -> f64 {
        let used: f64 = self
            .st
            .projects
            .iter()
            .map(|p| p.running_instances[r])
            .sum();
        (self.st.host.ninstances(r) - used).max(0.0)
    }
}
