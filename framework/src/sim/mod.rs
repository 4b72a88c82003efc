//! The one shared simulator of a host attached to several projects.
//!
//! Time moves in steps of `step_seconds` (the paper's delta); every decision
//! falls on a step boundary, as in BOINC's client simulator. The simulator is
//! event-driven: it jumps from one step where something can happen to the
//! next (a job finishes, the host comes or goes, a scheduling period ends, a
//! back-off expires, a result becomes overdue, the work fetcher first wants
//! work). [`Stepping::FixedStep`] visits every step instead.
//!
//! Job progress is kept as "left at `since`, advancing at `speed`", so the
//! arithmetic of a job is the same whether the steps between two of its
//! events are visited or jumped.
//!
//! The files of this module, one job each: `progress` (running jobs and the
//! host's availability between steps), `accounts` (the FLOPs that the
//! figures of merit count), `schedule` (the CPU scheduler's run list,
//! validated and applied), `client_rpc` (when the client makes which RPC,
//! and the reports), `server` (the project's feeder and sender, new jobs),
//! `disk` (the files), `events` (the next step to visit), `report` (the
//! figures of merit at the end).

mod accounts;
mod arrivals;
mod client_rpc;
mod disk;
mod events;
mod explain;
mod progress;
mod report;
mod schedule;
mod server;

use crate::explain::Explanation;
use crate::log::RunLog;
use crate::model::{ClientState, RunMode};
use crate::policy::{PolicyError, PolicySet, RunList};
use crate::registry::Family;
use crate::rng::{stream, SimRng};
use crate::rpc::ClientRules;
use crate::scenario::Scenario;
use crate::time::{format_time, Clock, Time};
use crate::timeline::Timeline;
use accounts::Accounts;
use disk::DiskBook;
use progress::HostAvailability;
use server::Servers;
use std::fmt;

pub use crate::metrics::RunReport;

/// How the simulator moves through time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stepping {
    /// Jump between steps where something can happen (the default).
    #[default]
    EventDriven,
    /// Visit every step, like BOINC's simulator; for cross-checks.
    FixedStep,
}

#[derive(Debug, Clone, Default)]
pub struct SimOptions {
    pub stepping: Stepping,
    pub timeline: bool,
    /// Override the scenario's seed.
    pub seed: Option<u64>,
    /// Keep a trace of the simulator's actions (RPCs, deletions) in
    /// [`RunOutput::trace`].
    pub trace: bool,
    /// Record every decision with its policy's reason, and the outcomes
    /// (`vcsim explain`, `vcsim diverge`), in [`RunOutput::explanation`].
    pub explain: bool,
    /// In an explained run, keep a copy of the client's state
    /// ([`Explanation::snapshot`]) as it is when the record of this index is
    /// about to be made, or at the end of the step at this time if that
    /// comes first: where two runs part, what `vcsim diverge` shows.
    pub snapshot_at: Option<(usize, Time)>,
    /// End the run at its first event after this time, as a run of that
    /// length (`vcsim explain --to`): what happened up to it is the full
    /// run's, since nothing before depends on what comes after.
    pub stop_after: Option<Time>,
    /// In an explained run, keep only the records made at this time or
    /// later (`vcsim explain --from`): earlier ones are made as in the full
    /// run but not kept, so that the record bound counts what is shown and
    /// a window late in a long run can be explained. (Not with
    /// `snapshot_at`, whose index counts every record.)
    pub keep_from: Option<Time>,
    /// How much an explained run, a timeline and a trace may record.
    pub bounds: RecordBounds,
}

/// The most lines a run's trace keeps; the last one says the rest were dropped.
pub const MAX_TRACE_LINES: usize = 1_000_000;

/// What a run may record, which grows with the run (and the host): past
/// `records` or `segments` the run stops with an error saying to record a
/// shorter one; past `trace_lines` the trace's last line says the rest were
/// dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordBounds {
    pub records: usize,
    pub segments: usize,
    pub trace_lines: usize,
}

impl Default for RecordBounds {
    fn default() -> RecordBounds {
        RecordBounds {
            records: crate::explain::MAX_RECORDS,
            segments: crate::timeline::MAX_SEGMENTS,
            trace_lines: MAX_TRACE_LINES,
        }
    }
}

/// A run that could not finish: a policy's error or invalid decision.
#[derive(Debug, Clone, PartialEq)]
pub struct SimError {
    pub time: Time,
    /// The family and name of the policy at fault, if a policy is.
    pub policy: Option<(Family, String)>,
    pub message: String,
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at simulated time {}", format_time(self.time))?;
        if let Some((fam, name)) = &self.policy {
            write!(f, ", {fam} policy `{name}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for SimError {}

/// The outcome of a run: the report, and the timeline when asked for.
pub struct RunOutput {
    pub report: RunReport,
    pub timeline: Option<Timeline>,
    /// Messages for the user (suspensions, refusals, policies' lines), in
    /// time order.
    pub log: Vec<String>,
    /// The simulator's actions, when [`SimOptions::trace`] asked for them.
    pub trace: Vec<String>,
    /// What the user should know about the run's validity (a GPU the policy
    /// left idle...).
    pub warnings: Vec<String>,
    /// Steps at which the simulator did work (for benchmarks and tests).
    pub steps_visited: u64,
    /// The decisions and their reasons, when [`SimOptions::explain`] asked.
    pub explanation: Option<Explanation>,
}

/// A view of the current step that writes to the run's log. A macro, so
/// that it borrows only the fields it reads and a policy of another field
/// can be called with it.
macro_rules! live_view {
    ($sim:expr) => {
        $crate::policy::View::new(&$sim.st, $sim.pol.estimate.as_ref(), $sim.st.now)
            .live(&$sim.log)
            .explained($sim.explanation.is_some())
    };
}
pub(crate) use live_view;

pub struct Simulation {
    st: ClientState,
    pol: PolicySet,
    policy_name: String,
    scenario_name: String,
    seed: u64,
    opts: SimOptions,
    clock: Clock,
    /// The step being visited.
    k: u64,
    /// The step up to which progress and accounts are settled.
    mark_k: u64,
    /// The host's on/off, computing-allowed and GPU-allowed processes.
    host: HostAvailability,
    servers: Servers,
    backoff_rng: SimRng,
    acc: Accounts,
    /// The CPU scheduler must run at this step (jobs finished or arrived).
    reschedule: bool,
    /// Per job (same order as `st.jobs`): the step at which it finishes if it
    /// keeps running, or [`crate::time::NEVER`].
    done_step: Vec<u64>,
    /// Jobs (indices) that finished at this step and are not yet handled.
    finished_now: Vec<usize>,
    runlist: RunList,
    /// Per job (by place in the job list): its mode in the run list being
    /// applied, if listed.
    listed: Vec<Option<RunMode>>,
    /// Per resource: some RPC asked for its work by resource.
    asked: Vec<bool>,
    /// Some RPC asked for seconds of work of any kind (the old request).
    asked_seconds: bool,
    timeline: Option<Timeline>,
    log: RunLog,
    trace: Vec<String>,
    steps_visited: u64,
    disk: DiskBook,
    /// The fetcher certified, at this step's last question, that it asks
    /// for nothing up to this time (event-driven mode).
    quiet_through: Option<Time>,
    /// Steps at which the RPC loop reached `MAX_RPCS_PER_STEP`.
    rpc_cap_steps: u64,
    /// The fetcher's client's rules of reporting and RPCs a step.
    client: ClientRules,
    /// This step's RPC loop stopped at its count of RPCs a step.
    rpcs_left: bool,
    explanation: Option<Explanation>,
    /// The scenario's own warnings (`Scenario::warnings`), first in the run's.
    scenario_warnings: Vec<String>,
}

impl Simulation {
    pub fn new(
        scn: &Scenario,
        pol: PolicySet,
        policy_name: &str,
        opts: SimOptions,
    ) -> Result<Simulation, SimError> {
        let seed = opts.seed.unwrap_or(scn.seed);
        let mut st = ClientState::new(scn);
        st.seed = seed;
        let nrsc = st.host.nrsc();
        let clock = Clock::new(scn.duration_days * 86400.0, scn.step_seconds);
        let host = HostAvailability::new(scn, seed, &clock);
        let states = host.at_start();
        st.host_on = states[0];
        (st.cpu_allowed, st.gpu_allowed) = progress::allowed(states);
        let client = pol.fetch.client_rules();
        let mut sim = Simulation {
            client,
            rpcs_left: false,
            st,
            pol,
            policy_name: policy_name.to_string(),
            scenario_name: scn.name.clone(),
            seed,
            clock,
            k: 0,
            mark_k: 0,
            host,
            servers: Servers::new(scn, seed),
            backoff_rng: stream(seed, "backoff", 0),
            acc: Accounts::new(nrsc),
            reschedule: true,
            done_step: Vec::new(),
            finished_now: Vec::new(),
            runlist: RunList::default(),
            listed: Vec::new(),
            asked: vec![false; nrsc],
            asked_seconds: false,
            timeline: opts.timeline.then(Timeline::default),
            log: RunLog::default(),
            trace: Vec::new(),
            steps_visited: 0,
            quiet_through: None,
            rpc_cap_steps: 0,
            disk: DiskBook::default(),
            explanation: opts.explain.then(Explanation::default),
            scenario_warnings: scn.warnings(),
            opts,
        };
        // (GPU computing may be never allowed: a process that never flips.)
        if let Some(tl) = &mut sim.timeline {
            let (cpu, gpu) = progress::not_allowed(states, nrsc > 1);
            tl.allowed_at(0.0, cpu, gpu);
        }
        let enforces = {
            let v = live_view!(sim);
            sim.pol.disk.enforces(&v)
        };
        if enforces.map_err(|e| sim.policy_err(Family::Disk, e))? {
            sim.st.track_files(scn);
            sim.disk.dirty = true;
            sim.disk.peak_project = vec![0.0; sim.st.projects.len()];
        }
        sim.add_initial_jobs(scn)?;
        sim.done_step = vec![crate::time::NEVER; sim.st.jobs.len()];
        Ok(sim)
    }

    fn time(&self, k: u64) -> Time {
        self.clock.time(k)
    }

    /// The error of a policy of `fam`; the family the error names itself
    /// (an estimator's error met inside a scheduler) wins.
    fn policy_err(&self, fam: Family, e: PolicyError) -> SimError {
        self.policy_err_at(fam, e, self.st.now)
    }

    /// A policy's error met in a view of time `time` (a step the event-driven
    /// mode looks ahead to, where the fixed-step run would meet it).
    fn policy_err_at(&self, fam: Family, e: PolicyError, time: Time) -> SimError {
        let fam = e.family.unwrap_or(fam);
        SimError {
            time,
            policy: Some((fam, self.pol.names[fam.index()].clone())),
            message: e.message,
        }
    }

    fn invalid(&self, fam: Family, msg: String) -> SimError {
        SimError {
            time: self.st.now,
            policy: Some((fam, self.pol.names[fam.index()].clone())),
            message: format!("invalid decision: {msg}"),
        }
    }

    fn broken(&self, message: String) -> SimError {
        SimError {
            time: self.st.now,
            policy: None,
            message,
        }
    }

    /// Runs to the end and reports.
    pub fn run(self) -> Result<RunOutput, SimError> {
        self.run_keeping().map_err(|(e, _)| e)
    }

    /// [`Self::run`], and on failure what the run recorded before it (see
    /// [`Kept`]): the decisions and log lines that led there are what a
    /// policy's author needs.
    pub fn run_keeping(mut self) -> Result<RunOutput, (SimError, Kept)> {
        if let Err(e) = self.run_steps() {
            return Err((e, self.kept()));
        }
        self.finish()
    }

    fn kept(&mut self) -> Kept {
        Kept {
            explanation: self.explanation.take().map(Box::new),
            log: std::mem::take(&mut self.log).into_lines(),
        }
    }

    fn run_steps(&mut self) -> Result<(), SimError> {
        loop {
            if let Some((_, at)) = self.opts.snapshot_at {
                if self.time(self.k) > at {
                    self.snapshot(at);
                }
            }
            self.step(self.k)?;
            self.records_within_bounds()?;
            self.steps_visited += 1;
            if cfg!(debug_assertions) {
                self.check_invariants().map_err(|m| self.broken(m))?;
            }
            let next = self.next_event_step()?;
            if next >= self.clock.nsteps {
                break;
            }
            if self.opts.stop_after.is_some_and(|t| self.time(next) > t) {
                self.clock.nsteps = next;
                break;
            }
            self.k = next;
        }
        Ok(())
    }

    /// Ends the run: settles the last stretch and reports.
    fn finish(mut self) -> Result<RunOutput, (SimError, Kept)> {
        if let Some((_, at)) = self.opts.snapshot_at {
            self.snapshot(at);
        }
        self.st.now = self.time(self.clock.nsteps);
        self.fold(self.clock.nsteps);
        self.disk.end_suspension(self.st.now);
        self.close_timeline();
        if let Err(m) = self.check_invariants() {
            let e = self.broken(m);
            return Err((e, self.kept()));
        }
        let report = match self.report() {
            Ok(r) => r,
            Err(e) => return Err((e, self.kept())),
        };
        let mut warnings = std::mem::take(&mut self.scenario_warnings);
        warnings.extend(self.warnings());
        if self.disk.files_not_written > 1 {
            let msg = format!(
                "{} files in all did not fit on the disk, and failed their jobs",
                self.disk.files_not_written
            );
            self.log.push(self.st.now, "disk", &msg);
        }
        if self.rpc_cap_steps > 1 {
            let msg = format!(
                "{} RPCs in one step, at {} steps in all",
                crate::rpc::MAX_RPCS_PER_STEP,
                self.rpc_cap_steps
            );
            self.log.push(self.st.now, "simulator", &msg);
        }
        Ok(RunOutput {
            report,
            timeline: self.timeline,
            log: self.log.into_lines(),
            trace: self.trace,
            warnings,
            steps_visited: self.steps_visited,
            explanation: self.explanation,
        })
    }

    /// Everything that happens at the boundary of step `k`. The state is
    /// folded forward only if something changes here (see `progress`).
    fn step(&mut self, k: u64) -> Result<(), SimError> {
        let t = self.time(k);
        self.st.now = t;
        if self.something_happens_at(k) {
            self.fold(k);
            if self.host.next_flip() == Some(k) {
                self.flip_host(k);
            }
        }
        if self.st.disk.tracked {
            self.write_outputs()?;
            if self.disk_poll()? {
                self.reschedule = true;
            }
        }
        if !self.st.host_on {
            return Ok(());
        }
        self.after_completions()?;
        if self.reschedule || t - self.st.last_schedule >= self.st.prefs.sched_period {
            self.schedule()?;
        }
        self.rpc_loop()
    }

    fn traced(&mut self, line: impl FnOnce() -> String) {
        if !self.opts.trace {
            return;
        }
        let max = self.opts.bounds.trace_lines;
        if self.trace.len() + 1 < max {
            self.trace.push(line());
        } else if self.trace.len() + 1 == max {
            self.trace.push(format!(
                "t={} the trace keeps at most {max} lines; later ones were dropped",
                self.st.now
            ));
        }
    }

    /// What an explained run or a timeline records grows with the run: past
    /// its bound, the run stops and says what to shorten.
    fn records_within_bounds(&mut self) -> Result<(), SimError> {
        let over = |what: &str, max: usize| {
            self.broken(format!(
                "{what} keeps at most {max} records, and this run reached them: record a shorter run (`--set duration_days=N`; `explain` keeps only its window, `--from` to `--to`) or a smaller host"
            ))
        };
        let b = self.opts.bounds;
        if let Some(ex) = &self.explanation {
            if ex.records.len() >= b.records {
                let e = over(
                    "an explained run (explain, diverge, an HTML timeline)",
                    b.records,
                );
                // A step may make many records: the kept ones, which a
                // failed `explain` prints, stop at the bound it states.
                if let Some(ex) = &mut self.explanation {
                    ex.records.truncate(b.records);
                }
                return Err(e);
            }
        }
        if let Some(tl) = &self.timeline {
            if tl.segments.len() >= b.segments {
                return Err(over("a timeline", b.segments));
            }
        }
        Ok(())
    }
}

/// Runs a scenario under a policy set.
pub fn run(
    scn: &Scenario,
    pol: PolicySet,
    policy_name: &str,
    opts: SimOptions,
) -> Result<RunOutput, SimError> {
    Simulation::new(scn, pol, policy_name, opts)?.run()
}

/// What a failed run recorded before its failure.
#[derive(Debug, Default)]
pub struct Kept {
    /// An explained run's records.
    pub explanation: Option<Box<Explanation>>,
    /// The run's log, as [`RunOutput::log`].
    pub log: Vec<String>,
}

/// [`run`], keeping on failure what the run recorded before it.
pub fn run_keeping(
    scn: &Scenario,
    pol: PolicySet,
    policy_name: &str,
    opts: SimOptions,
) -> Result<RunOutput, (SimError, Kept)> {
    Simulation::new(scn, pol, policy_name, opts)
        .map_err(|e| (e, Kept::default()))?
        .run_keeping()
}
