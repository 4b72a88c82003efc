//! The one shared simulator of a host attached to several projects.
//!
//! Time moves in steps of `step_seconds` (the paper's delta); every decision
//! falls on a step boundary, as in BOINC's client simulator. The simulator is
//! event-driven: it jumps from one step where something can happen to the
//! next (a job finishes, the host comes or goes, a scheduling period ends, a
//! back-off expires, a result becomes overdue, the work fetcher first wants
//! work). [`Stepping::FixedStep`] visits every step instead; both give the
//! same results to the bit, which a test checks.
//!
//! Job progress is kept as "left at `since`, advancing at `speed`", so the
//! arithmetic of a job is the same whether the steps between two of its
//! events are visited or jumped.

use crate::availability::OnOffProcess;
use crate::metrics::{self, DiskMetrics, Metrics, ProjectMetrics, ResourceMetrics, RunReport};
use crate::model::{ClientState, FileInfo, FileKind, Job, JobState, RunMode, Time, CPU};
use crate::policy::{
    Candidate, DiskPlan, PolicyError, PolicySet, ReportedJob, RpcReply, RscStatus, RunList,
    ServerRequest, Verdict, WorkRequest,
};
use crate::registry::Family;
use crate::rng::{stream, SimRng};
use crate::rpc;
use crate::scenario::Scenario;
use crate::timeline::{Timeline, TimelineRpc};
use crate::view::View;
use rand::Rng;
use rand_distr::{Distribution, Normal};
use std::fmt;

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

/// `3d 04:05:00` for a number of seconds.
pub fn format_time(t: Time) -> String {
    let s = t.max(0.0).round() as u64;
    format!(
        "{}d {:02}:{:02}:{:02} (t={}s)",
        s / 86400,
        s / 3600 % 24,
        s / 60 % 60,
        s % 60,
        t
    )
}

/// The outcome of a run: the report, and the timeline when asked for.
pub struct RunOutput {
    pub report: RunReport,
    pub timeline: Option<Timeline>,
    /// Messages for the user (suspensions, refusals...), in time order.
    pub log: Vec<String>,
    /// Steps at which the simulator did work (for benchmarks and tests).
    pub steps_visited: u64,
}

/// At most this many RPCs in one step, so that a policy that keeps asking
/// cannot loop for ever.
const MAX_RPCS_PER_STEP: usize = 32;
/// At most this many jobs in one reply.
const MAX_JOBS_PER_REPLY: usize = 2000;

struct ProjectServers {
    project: OnOffProcess,
    schedulers: Vec<OnOffProcess>,
}

pub struct Simulation {
    st: ClientState,
    pol: PolicySet,
    policy_name: String,
    scenario_name: String,
    seed: u64,
    opts: SimOptions,
    dt: f64,
    nsteps: u64,
    k: u64,
    host: OnOffProcess,
    host_flip: Option<u64>,
    on_seconds: f64,
    servers: Vec<ProjectServers>,
    job_rng: Vec<SimRng>,
    backoff_rng: SimRng,
    request_delay: Vec<f64>,
    next_job_id: u64,
    jobs_created: u64,
    jobs_reported: u64,
    // Step index of the last settle, and the availability accounting.
    mark_k: u64,
    avail_seconds: f64,
    avail_flops: Vec<f64>,
    idle_flops: Vec<f64>,
    used_flops: Vec<f64>,
    wasted_flops: Vec<f64>,
    reschedule: bool,
    done_step: Vec<u64>,
    runlist: RunList,
    finished_now: Vec<usize>,
    workload: Vec<ReportedJob>,
    sent: Vec<Candidate>,
    timeline: Option<Timeline>,
    log: Vec<String>,
    steps_visited: u64,
    disk: DiskBook,
}

/// The simulator's side of the disk: what changed since the last poll and
/// the figures of the report.
#[derive(Default)]
struct DiskBook {
    /// Files changed since the last poll.
    dirty: bool,
    /// Jobs that finished and whose output is still to be written.
    outputs_pending: Vec<u64>,
    jobs_discarded: u64,
    bytes_deleted: f64,
    jobs_refused: u64,
    /// An invalid plan of `make_room`, reported at the next check.
    plan_error: Option<SimError>,
    suspended_since: Option<Time>,
    suspended_seconds: f64,
    peak: f64,
    peak_project: Vec<f64>,
}

impl Simulation {
    pub fn new(scn: &Scenario, pol: PolicySet, policy_name: &str, opts: SimOptions) -> Simulation {
        let seed = opts.seed.unwrap_or(scn.seed);
        let mut st = ClientState::new(scn);
        st.seed = seed;
        let nrsc = st.host.nrsc();
        let dt = scn.step_seconds;
        let nsteps = ((scn.duration_days * 86400.0 / dt).ceil() as u64).max(1);
        let mut host = OnOffProcess::new(
            scn.host.availability.fraction,
            scn.host.availability.mean_on_seconds,
            stream(seed, "host-availability", 0),
        );
        let host_flip = host.next_flip_step(0, dt);
        let servers = scn
            .projects
            .iter()
            .enumerate()
            .map(|(i, p)| ProjectServers {
                project: OnOffProcess::new(
                    p.availability.fraction,
                    p.availability.mean_up_hours * 3600.0,
                    stream(seed, "project-availability", i as u64),
                ),
                schedulers: p
                    .schedulers
                    .iter()
                    .enumerate()
                    .map(|(j, s)| {
                        OnOffProcess::new(
                            s.availability.fraction,
                            s.availability.mean_up_hours * 3600.0,
                            stream(
                                seed,
                                "scheduler-availability",
                                ((i as u64) << 16) | j as u64,
                            ),
                        )
                    })
                    .collect(),
            })
            .collect();
        let job_rng = (0..scn.projects.len())
            .map(|i| stream(seed, "jobs", i as u64))
            .collect();
        let mut sim = Simulation {
            st,
            pol,
            policy_name: policy_name.to_string(),
            scenario_name: scn.name.clone(),
            seed,
            dt,
            nsteps,
            k: 0,
            host,
            host_flip,
            on_seconds: 0.0,
            servers,
            job_rng,
            backoff_rng: stream(seed, "backoff", 0),
            request_delay: scn
                .projects
                .iter()
                .map(|p| p.request_delay_seconds)
                .collect(),
            next_job_id: 0,
            jobs_created: 0,
            jobs_reported: 0,
            mark_k: 0,
            avail_seconds: 0.0,
            avail_flops: vec![0.0; nrsc],
            idle_flops: vec![0.0; nrsc],
            used_flops: vec![0.0; nrsc],
            wasted_flops: vec![0.0; nrsc],
            reschedule: true,
            done_step: Vec::new(),
            runlist: RunList::default(),
            finished_now: Vec::new(),
            workload: Vec::new(),
            sent: Vec::new(),
            timeline: opts.timeline.then(Timeline::default),
            log: Vec::new(),
            steps_visited: 0,
            disk: DiskBook::default(),
            opts,
        };
        if sim.pol.disk.enforces() {
            sim.st.track_files(scn);
            sim.disk.dirty = true;
            sim.disk.peak_project = vec![0.0; sim.st.projects.len()];
        }
        sim.add_initial_jobs(scn);
        sim.done_step = vec![u64::MAX; sim.st.jobs.len()];
        sim
    }

    fn add_initial_jobs(&mut self, scn: &Scenario) {
        for (p, sp) in scn.projects.iter().enumerate() {
            for ij in &sp.jobs {
                let a = sp
                    .apps
                    .iter()
                    .position(|a| a.name == ij.app)
                    .expect("validated app name");
                let app = &self.st.projects[p].apps[a];
                if !app.runs_on_host() {
                    self.log.push(format!(
                        "initial job of project `{}` needs a `{}` GPU the host lacks: left out",
                        sp.name,
                        app.missing_gpu.clone().unwrap_or_default()
                    ));
                    continue;
                }
                let est = ij.flops_estimate.unwrap_or(app.flops_estimate);
                let real = ij.flops.unwrap_or(app.flops_mean);
                let mut job = self.make_job(p, a, est, real, 0.0, ij.deadline_days * 86400.0);
                if ij.fraction_done > 0.0 {
                    job.flops_left = real * (1.0 - ij.fraction_done);
                    job.run_seconds = real * ij.fraction_done / job.speed;
                    job.prior_seconds = job.run_seconds;
                    job.state = JobState::Preempted;
                }
                let (id, now) = (job.id, job.received);
                self.st.jobs.push(job);
                self.add_input_file(p, a, id, now, false);
            }
        }
    }

    fn make_job(
        &mut self,
        p: usize,
        a: usize,
        est: f64,
        real: f64,
        now: Time,
        deadline: Time,
    ) -> Job {
        let app = &self.st.projects[p].apps[a];
        let speed = app.speed(&self.st.host);
        let id = self.next_job_id;
        self.next_job_id += 1;
        self.jobs_created += 1;
        Job {
            id,
            project: p,
            app: a,
            cpus: app.cpus,
            gpu: app.gpu,
            flops_estimate: est,
            flops_real: real,
            speed,
            received: now,
            deadline,
            state: JobState::Queued,
            mode: RunMode::RoundRobin,
            ever_deadline_mode: false,
            last_started: now,
            finished_at: 0.0,
            failed: false,
            fail_at_flops: None,
            flops_left: real,
            run_seconds: 0.0,
            since: now,
            prior_seconds: 0.0,
        }
    }

    fn time(&self, k: u64) -> Time {
        k as f64 * self.dt
    }

    /// The first step whose boundary is at or after `t`.
    fn step_at_or_after(&self, t: Time) -> u64 {
        if t <= 0.0 {
            return 0;
        }
        let mut k = (t / self.dt).ceil() as u64;
        while (k as f64) * self.dt < t {
            k += 1;
        }
        k
    }

    fn policy_err(&self, fam: Family, e: PolicyError) -> SimError {
        SimError {
            time: self.st.now,
            policy: Some((fam, self.pol.names[fam.index()].clone())),
            message: e.0,
        }
    }

    fn invalid(&self, fam: Family, msg: String) -> SimError {
        SimError {
            time: self.st.now,
            policy: Some((fam, self.pol.names[fam.index()].clone())),
            message: format!("invalid decision: {msg}"),
        }
    }

    /// The first error a policy met in a method that cannot fail
    /// (`correction`, the disk calls, ...): it fails the run at the step
    /// where it happened, like any other policy error.
    fn faults(&self) -> Result<(), SimError> {
        let (fam, e) = if let Some(e) = self.pol.estimate.fault() {
            (Family::Estimate, e)
        } else if let Some(e) = self.pol.disk.fault() {
            (Family::Disk, e)
        } else if let Some(e) = self.pol.fetch.fault() {
            (Family::Fetch, e)
        } else {
            return Ok(());
        };
        Err(self.policy_err(fam, e))
    }

    /// Runs to the end and reports.
    pub fn run(mut self) -> Result<RunOutput, SimError> {
        loop {
            let r = self.step(self.k);
            // A fault comes first: it is the cause of what follows it.
            self.faults()?;
            r?;
            self.steps_visited += 1;
            if cfg!(debug_assertions) {
                self.check_invariants().map_err(|m| SimError {
                    time: self.st.now,
                    policy: None,
                    message: m,
                })?;
            }
            let next = self.next_event_step();
            self.faults()?;
            let next = next?;
            if next >= self.nsteps {
                break;
            }
            self.k = next;
        }
        self.settle(self.nsteps);
        self.st.now = self.time(self.nsteps);
        if let Some(t0) = self.disk.suspended_since.take() {
            self.disk.suspended_seconds += self.st.now - t0;
        }
        self.close_timeline();
        self.check_invariants().map_err(|m| SimError {
            time: self.st.now,
            policy: None,
            message: m,
        })?;
        let report = self.report();
        self.faults()?;
        Ok(RunOutput {
            report,
            timeline: self.timeline,
            log: self.log,
            steps_visited: self.steps_visited,
        })
    }

    /// Everything that happens at the boundary of step `k`.
    fn step(&mut self, k: u64) -> Result<(), SimError> {
        let r = self.step_inner(k);
        // Policies' log lines join the run's log in time order.
        let lines = std::mem::take(&mut *self.st.policy_log.borrow_mut());
        self.log.extend(lines);
        r
    }

    fn step_inner(&mut self, k: u64) -> Result<(), SimError> {
        let t = self.time(k);
        self.settle(k);
        self.st.now = t;
        if self.host_flip == Some(k) {
            self.flip_host(k);
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

    fn flip_host(&mut self, k: u64) {
        let t = self.time(k);
        self.st.host_on = !self.st.host_on;
        self.host_flip = self.host.next_flip_step(k, self.dt);
        if t > 0.0 {
            self.st.observed_on_fraction = self.on_seconds / t;
        }
        if self.st.host_on {
            for (i, j) in self.st.jobs.iter().enumerate() {
                if j.state == JobState::Running {
                    let d = self.job_done_step(j);
                    self.done_step[i] = d;
                }
            }
            if let Some(tl) = &mut self.timeline {
                if let Some(last) = tl.host_off.last_mut() {
                    last.1 = t;
                }
            }
        } else {
            for (i, j) in self.st.jobs.iter().enumerate() {
                if j.state == JobState::Running {
                    self.done_step[i] = u64::MAX;
                }
            }
            if let Some(tl) = &mut self.timeline {
                tl.host_off.push((t, f64::INFINITY));
            }
            self.close_segments(t);
        }
    }

    fn job_done_step(&self, j: &Job) -> u64 {
        let left = j.fail_at_flops.map_or(j.flops_left, |f| {
            (j.flops_left - (j.flops_real - f)).max(0.0)
        });
        self.step_at_or_after(j.since + left / j.speed)
    }

    /// Brings progress and accounting up to the boundary of step `k`.
    fn settle(&mut self, k: u64) {
        if k <= self.mark_k {
            return;
        }
        let t = self.time(k);
        let nsteps = k - self.mark_k;
        let span = t - self.time(self.mark_k);
        if self.st.host_on {
            self.avail_seconds += span;
            self.on_seconds += span;
            let nrsc = self.st.host.nrsc();
            let mut busy = [0.0f64; 8];
            let mut busy_v = vec![];
            let busy_r: &mut [f64] = if nrsc <= 8 {
                &mut busy[..nrsc]
            } else {
                busy_v.resize(nrsc, 0.0);
                &mut busy_v
            };
            let mut ran_project = [false; 64];
            let mut ran_v = vec![];
            let np = self.st.projects.len();
            let ran: &mut [bool] = if np <= 64 {
                &mut ran_project[..np]
            } else {
                ran_v.resize(np, false);
                &mut ran_v
            };
            for i in 0..self.st.jobs.len() {
                if self.st.jobs[i].state != JobState::Running {
                    continue;
                }
                let done = self.done_step[i] <= k;
                let j = &mut self.st.jobs[i];
                let ran_s = if done {
                    let left = j.fail_at_flops.map_or(j.flops_left, |f| {
                        (j.flops_left - (j.flops_real - f)).max(0.0)
                    });
                    (left / j.speed).min(span)
                } else {
                    span
                };
                j.flops_left = (j.flops_left - j.speed * ran_s).max(0.0);
                j.run_seconds += ran_s;
                j.since = t;
                ran[j.project] = true;
                let pr = &mut self.st.projects[j.project];
                pr.usage[CPU] += j.cpus * ran_s;
                busy_r[CPU] += j.cpus * ran_s;
                if let Some((r, n)) = j.gpu {
                    pr.usage[r] += n * ran_s;
                    busy_r[r] += n * ran_s;
                }
                if done {
                    j.finished_at = j.since - span + ran_s;
                    j.state = JobState::Finished;
                    if j.fail_at_flops.is_some() {
                        j.failed = true;
                    }
                    pr.running_instances[CPU] -= j.cpus;
                    if let Some((r, n)) = j.gpu {
                        pr.running_instances[r] -= n;
                    }
                    self.done_step[i] = u64::MAX;
                    self.finished_now.push(i);
                    if self.st.disk.tracked {
                        self.disk.outputs_pending.push(j.id);
                    }
                }
            }
            for (r, busy) in busy_r.iter().enumerate() {
                let cap = self.st.host.ninstances(r) * self.st.host.instance_flops(r) * span;
                self.avail_flops[r] += cap;
                self.idle_flops[r] += cap - busy * self.st.host.instance_flops(r);
            }
            for (p, pr) in self.st.projects.iter_mut().enumerate() {
                let s = &mut pr.stats;
                if ran[p] {
                    s.steps_since_ran = 0;
                } else {
                    s.q_steps += metrics::idle_steps_sum(s.steps_since_ran, nsteps);
                    s.steps_since_ran += nsteps;
                }
                // The RPC document's exponentially averaged CPU time.
                let d = pr.usage[CPU] - pr.exp_mark;
                pr.exp_avg_cpu = rpc::decay_exp_avg(pr.exp_avg_cpu, span, d);
                pr.exp_mark = pr.usage[CPU];
            }
            if let Some(tl) = &mut self.timeline {
                for &i in &self.finished_now {
                    let j = &self.st.jobs[i];
                    tl.end_segment(j.id, j.finished_at);
                }
            }
        } else {
            for j in self
                .st
                .jobs
                .iter_mut()
                .filter(|j| j.state == JobState::Running)
            {
                j.since = t;
            }
        }
        self.mark_k = k;
        self.st.usage_mark = t;
        self.st.on_seconds = self.on_seconds;
    }

    /// Tells the estimator of finished jobs; backs off projects whose job failed.
    fn after_completions(&mut self) -> Result<(), SimError> {
        if self.finished_now.is_empty() {
            return Ok(());
        }
        self.reschedule = true;
        let finished = std::mem::take(&mut self.finished_now);
        for &i in &finished {
            let (project, failed) = (self.st.jobs[i].project, self.st.jobs[i].failed);
            if failed {
                let now = self.st.now;
                self.st.projects[project]
                    .rpc
                    .backoff(now, &mut self.backoff_rng);
                continue;
            }
            // The estimator cannot read itself while it learns: its view
            // estimates with the uncorrected static estimate.
            let v = View::new(&self.st, &crate::policy::StaticEstimate, self.st.now);
            let r = self.pol.estimate.on_job_finished(&v, &self.st.jobs[i]);
            r.map_err(|e| self.policy_err(Family::Estimate, e))?;
        }
        self.finished_now = finished;
        self.finished_now.clear();
        Ok(())
    }

    fn view(&self) -> View<'_> {
        View::new(&self.st, self.pol.estimate.as_ref(), self.st.now)
    }

    fn schedule(&mut self) -> Result<(), SimError> {
        self.reschedule = false;
        let now = self.st.now;
        {
            let v = View::new(&self.st, self.pol.estimate.as_ref(), now);
            self.pol
                .fetch
                .account(&v)
                .map_err(|e| self.policy_err(Family::Fetch, e))?;
        }
        let mut out = std::mem::take(&mut self.runlist);
        out.clear();
        {
            let v = View::new(&self.st, self.pol.estimate.as_ref(), now);
            self.pol
                .cpu
                .schedule(&v, &mut out)
                .map_err(|e| self.policy_err(Family::Cpu, e))?;
        }
        if self.st.disk.suspended {
            // Computation is suspended for lack of disk space.
            out.clear();
        }
        let r = self.apply_schedule(&out);
        self.runlist = out;
        r?;
        self.st.last_schedule = now;
        Ok(())
    }

    fn apply_schedule(&mut self, out: &RunList) -> Result<(), SimError> {
        let nrsc = self.st.host.nrsc();
        let mut used = vec![0.0; nrsc];
        for (n, &(id, _)) in out.jobs.iter().enumerate() {
            let Some(j) = self.st.job(id) else {
                return Err(self.invalid(Family::Cpu, format!("job {id} is not on the host")));
            };
            if !j.is_runnable() {
                return Err(
                    self.invalid(Family::Cpu, format!("job {id} has finished and cannot run"))
                );
            }
            if out.jobs[..n].iter().any(|(o, _)| *o == id) {
                return Err(self.invalid(Family::Cpu, format!("job {id} is listed twice")));
            }
            used[CPU] += j.cpus;
            if let Some((r, c)) = j.gpu {
                used[r] += c;
            }
        }
        for (r, u) in used.iter().enumerate() {
            if *u > self.st.host.ninstances(r) + 1e-9 {
                return Err(self.invalid(
                    Family::Cpu,
                    format!(
                        "the jobs it runs need {u} {} instances; the host has {}",
                        self.st.host.rsc_name(r),
                        self.st.host.ninstances(r)
                    ),
                ));
            }
        }
        let now = self.st.now;
        for i in 0..self.st.jobs.len() {
            let id = self.st.jobs[i].id;
            let listed = out.jobs.iter().find(|(j, _)| *j == id).map(|(_, m)| *m);
            let j = &mut self.st.jobs[i];
            match (j.state, listed) {
                (JobState::Running, None) => {
                    j.state = JobState::Preempted;
                    let pr = &mut self.st.projects[j.project];
                    pr.running_instances[CPU] -= j.cpus;
                    if let Some((r, n)) = j.gpu {
                        pr.running_instances[r] -= n;
                    }
                    if let Some(tl) = &mut self.timeline {
                        tl.end_segment(id, now);
                    }
                }
                (JobState::Queued | JobState::Preempted, Some(mode)) => {
                    j.state = JobState::Running;
                    j.since = now;
                    j.last_started = now;
                    j.mode = mode;
                    j.ever_deadline_mode |= mode == RunMode::Deadline;
                    let pr = &mut self.st.projects[j.project];
                    pr.running_instances[CPU] += j.cpus;
                    if let Some((r, n)) = j.gpu {
                        pr.running_instances[r] += n;
                    }
                }
                (JobState::Running, Some(mode)) => {
                    if j.mode != mode {
                        if let Some(tl) = &mut self.timeline {
                            tl.end_segment(id, now);
                        }
                    }
                    j.mode = mode;
                    j.ever_deadline_mode |= mode == RunMode::Deadline;
                }
                _ => {}
            }
        }
        if self.done_step.len() < self.st.jobs.len() {
            self.done_step.resize(self.st.jobs.len(), u64::MAX);
        }
        for i in 0..self.st.jobs.len() {
            let j = &self.st.jobs[i];
            self.done_step[i] = if j.state == JobState::Running {
                self.job_done_step(j)
            } else {
                u64::MAX
            };
            if j.state == JobState::Running {
                if let Some(tl) = &mut self.timeline {
                    tl.ensure_segment(j, now);
                }
            }
        }
        Ok(())
    }

    fn connection_blocked(&self, t: Time) -> bool {
        let ci = self.st.connection_interval;
        match self.st.last_rpc {
            Some(l) if ci > 0.0 => t - l > 0.0 && t - l < ci,
            _ => false,
        }
    }

    /// The report trigger time of a finished job (BOINC's overdue results).
    fn report_due(&self, j: &Job) -> Time {
        let cushion = rpc::REPORT_DEADLINE_CUSHION.max(self.st.prefs.work_buf_min);
        (j.deadline - cushion).min(j.finished_at + rpc::REPORT_MAX_WAIT)
    }

    /// A project with overdue results that can be contacted now: the one with
    /// the greatest resource debt (share / exponentially averaged CPU).
    fn overdue_project(&self) -> Option<usize> {
        let now = self.st.now;
        let mut best: Option<(usize, f64)> = None;
        for (p, pr) in self.st.projects.iter().enumerate() {
            if !pr.rpc.contactable(now) {
                continue;
            }
            let overdue = self.st.jobs.iter().any(|j| {
                j.project == p && j.state == JobState::Finished && now >= self.report_due(j)
            });
            if overdue {
                let d = rpc::resource_debt(pr.resource_share, pr.exp_avg_cpu);
                if best.is_none_or(|(_, bd)| d > bd) {
                    best = Some((p, d));
                }
            }
        }
        best.map(|(p, _)| p)
    }

    fn rpc_loop(&mut self) -> Result<(), SimError> {
        let now = self.st.now;
        for _ in 0..MAX_RPCS_PER_STEP {
            if self.connection_blocked(now) {
                return Ok(());
            }
            let req = if let Some(p) = self.overdue_project() {
                let v = self.view();
                let r = self
                    .pol
                    .fetch
                    .piggyback(&v, p)
                    .map_err(|e| self.policy_err(Family::Fetch, e))?;
                r.filter(|r| r.project == p)
                    .unwrap_or_else(|| WorkRequest::report_only(p, self.st.host.nrsc()))
            } else {
                let v = self.view();
                match self
                    .pol
                    .fetch
                    .request(&v)
                    .map_err(|e| self.policy_err(Family::Fetch, e))?
                {
                    Some(r) => r,
                    None => return Ok(()),
                }
            };
            self.validate_request(&req)?;
            {
                let v = View::new(&self.st, self.pol.estimate.as_ref(), now);
                self.pol
                    .fetch
                    .account(&v)
                    .map_err(|e| self.policy_err(Family::Fetch, e))?;
            }
            if std::env::var("VCSIM_TRACE").is_ok() {
                eprintln!(
                    "t={} rpc p={} req={} queue={}",
                    now,
                    req.project,
                    req.work_req_seconds,
                    self.st.jobs.len()
                );
            }
            let got_jobs = self.do_rpc(req)?;
            let suspension_changed = self.st.disk.tracked && self.disk_poll()?;
            if got_jobs || suspension_changed {
                self.schedule()?;
            }
        }
        self.log.push(format!(
            "{}: {} RPCs in one step; the rest of this step's requests were dropped",
            format_time(now),
            MAX_RPCS_PER_STEP
        ));
        Ok(())
    }

    fn validate_request(&self, r: &WorkRequest) -> Result<(), SimError> {
        let np = self.st.projects.len();
        if r.project >= np {
            return Err(self.invalid(
                Family::Fetch,
                format!("project {} does not exist ({} projects)", r.project, np),
            ));
        }
        if !self.st.projects[r.project].rpc.contactable(self.st.now) {
            return Err(self.invalid(
                Family::Fetch,
                format!(
                    "project `{}` is backed off until {}",
                    self.st.projects[r.project].name,
                    format_time(self.st.projects[r.project].rpc.min_rpc_time)
                ),
            ));
        }
        if r.rsc.len() != self.st.host.nrsc() {
            return Err(self.invalid(
                Family::Fetch,
                format!(
                    "{} resource requests for {} resources",
                    r.rsc.len(),
                    self.st.host.nrsc()
                ),
            ));
        }
        let bad = |x: f64| !x.is_finite() || x < 0.0;
        if bad(r.work_req_seconds)
            || r.rsc
                .iter()
                .any(|x| bad(x.req_seconds) || bad(x.req_ninstances))
        {
            return Err(self.invalid(
                Family::Fetch,
                "a requested amount is negative or not a number".into(),
            ));
        }
        Ok(())
    }

    /// One scheduler RPC; returns whether jobs arrived.
    fn do_rpc(&mut self, req: WorkRequest) -> Result<bool, SimError> {
        let now = self.st.now;
        let p = req.project;
        self.st.last_rpc = Some(now);
        self.st.projects[p].rpc.last_rpc = Some(now);
        let nrsc = self.st.host.nrsc();
        let mut reply = RpcReply {
            project: p,
            request: req,
            reached: false,
            jobs: vec![0; nrsc],
            rsc_status: vec![RscStatus::Unknown; nrsc],
        };
        let servers = &mut self.servers[p];
        let project_up = servers.project.state_at(now);
        if self.st.projects[p].rpc.master_fetch_pending {
            // Re-read the master file (the scheduler list) first.
            self.st.projects[p].rpc.master_fetched(project_up);
        }
        let reached = project_up
            && !self.st.projects[p].rpc.master_fetch_pending
            && (servers.schedulers.is_empty()
                || servers.schedulers.iter_mut().any(|s| s.state_at(now)));
        if let Some(tl) = &mut self.timeline {
            tl.rpcs.push(TimelineRpc {
                time: now,
                project: p,
                reached,
                jobs: 0,
            });
        }
        if !reached {
            self.st.projects[p].stats.rpc_failures += 1;
            self.st.projects[p].rpc.backoff(now, &mut self.backoff_rng);
            let r = {
                let v = View::new(&self.st, self.pol.estimate.as_ref(), now);
                self.pol.fetch.on_reply(&v, &reply)
            };
            r.map_err(|e| self.policy_err(Family::Fetch, e))?;
            return Ok(false);
        }
        reply.reached = true;
        self.st.projects[p].stats.rpcs += 1;
        self.report_finished(p, now);
        let wants_work = reply.request.wants_work();
        let njobs = if wants_work {
            self.send_work(&reply.request, &mut reply.jobs)?
        } else {
            0
        };
        if let Some(tl) = &mut self.timeline {
            if let Some(last) = tl.rpcs.last_mut() {
                last.jobs = njobs;
            }
        }
        if self.st.projects[p].reports_resource_support {
            for (r, status) in reply.rsc_status.iter_mut().enumerate() {
                *status = if reply.jobs[r] > 0 {
                    RscStatus::WorkReturned
                } else if self.st.projects[p].has_rsc_apps[r] {
                    RscStatus::NoWorkButSupported
                } else {
                    RscStatus::NotSupported
                };
            }
        }
        let empty = wants_work && njobs == 0;
        if empty && self.pol.fetch.backoff_on_empty_reply() {
            self.st.projects[p].rpc.backoff(now, &mut self.backoff_rng);
        } else {
            let delay = self.request_delay[p];
            self.st.projects[p].rpc.succeeded(now, delay);
        }
        let r = {
            let v = View::new(&self.st, self.pol.estimate.as_ref(), now);
            self.pol.fetch.on_reply(&v, &reply)
        };
        r.map_err(|e| self.policy_err(Family::Fetch, e))?;
        if njobs > 0 {
            self.reschedule = true;
        }
        Ok(njobs > 0)
    }

    fn report_finished(&mut self, p: usize, now: Time) {
        let host = &self.st.host;
        let mut reported = 0;
        for j in self
            .st
            .jobs
            .iter()
            .filter(|j| j.project == p && j.state == JobState::Finished)
        {
            let secs = j.seconds_this_run();
            let flops = secs * j.peak_flops(host);
            let pr = &mut self.st.projects[p];
            let s = &mut pr.stats;
            let late = now > j.deadline;
            if j.failed {
                s.jobs_failed += 1;
            } else if late {
                s.jobs_late += 1;
            } else {
                s.jobs_on_time += 1;
            }
            let wasted = j.failed || late;
            if wasted {
                s.flops_wasted += flops;
            } else {
                s.flops_used += flops;
            }
            let per_rsc = |r: usize| -> f64 {
                if r == CPU {
                    j.cpus * secs
                } else {
                    j.gpu
                        .filter(|(g, _)| *g == r)
                        .map_or(0.0, |(_, n)| n * secs)
                }
            };
            for r in 0..host.nrsc() {
                let inst = per_rsc(r);
                s.busy_seconds[r] += inst;
                let f = inst * host.instance_flops(r);
                if wasted {
                    self.wasted_flops[r] += f;
                } else {
                    self.used_flops[r] += f;
                }
            }
            if let Some(tl) = &mut self.timeline {
                tl.reported(j.id, now, late && !j.failed);
            }
            reported += 1;
        }
        if reported > 0 {
            self.jobs_reported += reported;
            let mut i = 0;
            let done_step = &mut self.done_step;
            self.st.jobs.retain(|j| {
                let keep = !(j.project == p && j.state == JobState::Finished);
                if !keep {
                    done_step.remove(i);
                } else {
                    i += 1;
                }
                keep
            });
            if self.st.disk.tracked {
                self.release_files(p, now);
            }
        }
    }

    /// After a report: outputs and non-sticky inputs of `p`'s jobs that left
    /// the host are deleted (the server has them); sticky inputs stay.
    fn release_files(&mut self, p: usize, now: Time) {
        let jobs = &self.st.jobs;
        let gone = |f: &FileInfo| {
            f.project == p
                && f.job
                    .is_some_and(|id| jobs.binary_search_by_key(&id, |j| j.id).is_err())
        };
        let mut changed = false;
        self.st.disk.files.retain_mut(|f| {
            if !gone(f) {
                return true;
            }
            changed = true;
            if f.kind == FileKind::Input && f.sticky {
                f.job = None;
                f.last_used = now;
                true
            } else {
                false
            }
        });
        self.disk.dirty |= changed;
    }

    /// Writes a job's input file on arrival, making room first.
    fn add_input_file(&mut self, p: usize, a: usize, job: u64, now: Time, make_room: bool) {
        if !self.st.disk.tracked {
            return;
        }
        let app = &self.st.projects[p].apps[a];
        let f = FileInfo {
            id: 0,
            project: p,
            kind: FileKind::Input,
            bytes: app.input_bytes,
            job: Some(job),
            sticky: app.sticky_input,
            priority: if app.sticky_input {
                app.sticky_priority
            } else {
                crate::model::P_LOW
            },
            created: now,
            last_used: now,
            expires: now + app.sticky_expiry,
        };
        self.write_file(f, make_room);
    }

    /// Writes a file, after the deletions the disk manager asks for to make
    /// room. Errors in the plan are kept for the next poll to report.
    fn write_file(&mut self, f: FileInfo, make_room: bool) {
        if f.bytes <= 0.0 {
            return;
        }
        if make_room {
            let plan = self.pol.disk.make_room(&self.st, f.project, f.bytes);
            if let Err(e) = self.apply_disk_plan(&plan) {
                self.disk.plan_error.get_or_insert(e);
            }
        }
        self.st.add_file(f);
        self.disk.dirty = true;
    }

    /// The outputs of jobs that finished since the last step.
    fn write_outputs(&mut self) -> Result<(), SimError> {
        let pending = std::mem::take(&mut self.disk.outputs_pending);
        for &id in &pending {
            let Some(j) = self.st.job(id) else { continue };
            let (p, a, at) = (j.project, j.app, j.finished_at);
            for f in self.st.disk.files.iter_mut() {
                if f.job == Some(id) {
                    f.last_used = at;
                }
            }
            let app = &self.st.projects[p].apps[a];
            let f = FileInfo {
                id: 0,
                project: p,
                kind: FileKind::Output,
                bytes: app.output_bytes,
                job: Some(id),
                sticky: false,
                priority: crate::model::P_LOW,
                created: at,
                last_used: at,
                expires: at + app.sticky_expiry,
            };
            self.write_file(f, true);
        }
        self.disk.outputs_pending = pending;
        self.disk.outputs_pending.clear();
        if let Some(e) = self.disk.plan_error.take() {
            return Err(e);
        }
        Ok(())
    }

    /// Applies a disk manager's deletions after checking them.
    fn apply_disk_plan(&mut self, plan: &DiskPlan) -> Result<(), SimError> {
        for &id in &plan.delete_jobs {
            let Ok(i) = self.st.jobs.binary_search_by_key(&id, |j| j.id) else {
                return Err(self.invalid(Family::Disk, format!("job {id} is not on the host")));
            };
            if !self.st.job_deletable(&self.st.jobs[i]) {
                return Err(self.invalid(
                    Family::Disk,
                    format!("job {id} has started or finished and cannot be deleted"),
                ));
            }
            let j = self.st.jobs.remove(i);
            self.done_step.remove(i);
            // Finished jobs not yet handled are kept by index.
            for x in self.finished_now.iter_mut().filter(|x| **x > i) {
                *x -= 1;
            }
            self.disk.jobs_discarded += 1;
            self.reschedule = true;
            for f in self.st.disk.files.iter_mut() {
                if f.job == Some(id) {
                    f.job = None;
                }
            }
            self.log.push(format!(
                "{}: disk: deleted queued job {id} of project `{}` to free space",
                format_time(self.st.now),
                self.st.projects[j.project].name
            ));
        }
        for &id in &plan.delete_files {
            let Ok(i) = self.st.disk.files.binary_search_by_key(&id, |f| f.id) else {
                return Err(self.invalid(Family::Disk, format!("file {id} is not on the host")));
            };
            if self.st.file_referenced(&self.st.disk.files[i]) {
                return Err(self.invalid(
                    Family::Disk,
                    format!("file {id} is referenced by a job on the host and cannot be deleted"),
                ));
            }
            let f = self.st.disk.files.remove(i);
            if std::env::var("VCSIM_TRACE").is_ok() {
                eprintln!(
                    "t={} disk delete p={} file={} {:?} bytes={} prio={}",
                    self.st.now, f.project, f.id, f.kind, f.bytes, f.priority
                );
            }
            self.disk.bytes_deleted += f.bytes;
            self.disk.dirty = true;
        }
        Ok(())
    }

    /// `data_manager_poll` after files changed; returns whether computation
    /// was suspended or resumed.
    fn disk_poll(&mut self) -> Result<bool, SimError> {
        if !self.disk.dirty {
            return Ok(false);
        }
        self.disk.dirty = false;
        let plan = self.pol.disk.poll(&self.st);
        self.apply_disk_plan(&plan)?;
        self.disk.dirty = false;
        let d = &self.st.disk;
        let used = d.usage();
        self.disk.peak = self.disk.peak.max(used);
        for (p, peak) in self.disk.peak_project.iter_mut().enumerate() {
            *peak = peak.max(d.project_usage(p));
        }
        let now = self.st.now;
        if plan.suspend == d.suspended {
            return Ok(false);
        }
        self.st.disk.suspended = plan.suspend;
        if plan.suspend {
            self.disk.suspended_since = Some(now);
            self.log.push(format!(
                "{}: disk: BOINC uses {:.3} GB, more than the {:.3} GB the user allows, and nothing more can be deleted: computation suspended",
                format_time(now),
                used / 1e9,
                self.st.disk.total_limit / 1e9
            ));
        } else {
            if let Some(t0) = self.disk.suspended_since.take() {
                self.disk.suspended_seconds += now - t0;
            }
            self.log.push(format!(
                "{}: disk: usage {:.3} GB is within the limit again: computation resumed",
                format_time(now),
                used / 1e9
            ));
        }
        Ok(true)
    }

    /// The server side of an RPC: the feeder offers candidates, the sender picks.
    fn send_work(&mut self, req: &WorkRequest, jobs: &mut [u32]) -> Result<u32, SimError> {
        let now = self.st.now;
        let p = req.project;
        let pr = &self.st.projects[p];
        let eligible: Vec<usize> = (0..pr.apps.len())
            .filter(|&a| {
                pr.apps[a].runs_on_host()
                    && pr.apps[a].weight > 0.0
                    && req.asks_for(pr.apps[a].rsc())
            })
            .collect();
        if eligible.is_empty() {
            return Ok(0);
        }
        let total_w: f64 = eligible.iter().map(|&a| pr.apps[a].weight).sum();
        // The host's workload as the request lists it.
        self.workload.clear();
        {
            let v = View::new(&self.st, self.pol.estimate.as_ref(), now);
            for j in self.st.jobs.iter().filter(|j| j.is_runnable()) {
                let rem = v
                    .remaining_seconds(j)
                    .map_err(|e| self.policy_err(Family::Estimate, e))?;
                self.workload.push(ReportedJob {
                    project: j.project,
                    rsc: j.rsc(),
                    cpus: j.cpus,
                    gpu_count: j.gpu.map_or(0.0, |g| g.1),
                    deadline: j.deadline,
                    remaining_seconds: rem,
                });
            }
        }
        let dcf = self.pol.estimate.correction(p);
        let free = self.pol.disk.free_space(&self.st, p);
        let workload = std::mem::take(&mut self.workload);
        let sreq = ServerRequest {
            now,
            project: p,
            project_name: &pr.name,
            latency_bound: pr.latency_bound,
            host: &self.st.host,
            request: req,
            dcf,
            work_buf_min: self.st.prefs.work_buf_min,
            workload: &workload,
            free_bytes: free,
        };
        // With an enforcing disk manager the server makes passes against the
        // three free-space amounts: the next only when the last sent nothing
        // and withheld something for lack of space; the third only for a
        // project that deletes from itself.
        let enforce = self.st.disk.tracked;
        let npasses = match (enforce, pr.delete_from_self) {
            (false, _) => 1,
            (true, false) => 2,
            (true, true) => 3,
        };
        let smallest = eligible
            .iter()
            .map(|&a| pr.apps[a].input_bytes + pr.apps[a].output_bytes)
            .fold(f64::INFINITY, f64::min);
        let mut sent = std::mem::take(&mut self.sent);
        let mut result = Ok(());
        let mut refused = 0u64;
        for &budget in free.iter().take(npasses) {
            sent.clear();
            refused = 0;
            let mut used = 0.0;
            let mut skips = 0;
            let max_skips = 2 * eligible.len() + 2;
            let rng = &mut self.job_rng[p];
            while sent.len() < MAX_JOBS_PER_REPLY {
                let mut x = rng.gen::<f64>() * total_w;
                let mut a = *eligible.last().expect("non-empty");
                for &e in &eligible {
                    x -= pr.apps[e].weight;
                    if x < 0.0 {
                        a = e;
                        break;
                    }
                }
                let app = &pr.apps[a];
                let speed = app.speed(&self.st.host);
                let cand = Candidate {
                    app: a,
                    rsc: app.rsc(),
                    cpus: app.cpus,
                    gpu_count: app.gpu.map_or(0.0, |g| g.1),
                    flops_estimate: app.flops_estimate,
                    est_seconds: app.flops_estimate / speed * dcf,
                    deadline: now + pr.latency_bound,
                };
                match self.pol.send.consider(&sreq, &sent, &cand) {
                    Ok(Verdict::Send) => {
                        let bytes = app.input_bytes + app.output_bytes;
                        if enforce && used + bytes > budget {
                            // Withheld for lack of space; the pass ends when
                            // not even the smallest job would fit.
                            refused += 1;
                            skips += 1;
                            if skips > max_skips || used + smallest > budget {
                                break;
                            }
                        } else {
                            used += bytes;
                            sent.push(cand);
                        }
                    }
                    Ok(Verdict::Skip) => {
                        skips += 1;
                        if skips > max_skips {
                            break;
                        }
                    }
                    Ok(Verdict::Stop) => break,
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
            if result.is_err() || !sent.is_empty() || refused == 0 {
                break;
            }
        }
        self.disk.jobs_refused += refused;
        self.workload = workload;
        if let Err(e) = result {
            self.sent = sent;
            return Err(self.policy_err(Family::Send, e));
        }
        let n = sent.len() as u32;
        for c in &sent {
            let app = &self.st.projects[p].apps[c.app];
            let (mean, sd, ff) = (app.flops_mean, app.flops_stddev, app.failure_fraction);
            let rng = &mut self.job_rng[p];
            let real = draw_flops(rng, mean, sd);
            let fail = ff > 0.0 && rng.gen::<f64>() < ff;
            let fail_at = fail.then(|| real * rng.gen::<f64>());
            let mut job = self.make_job(p, c.app, c.flops_estimate, real, now, c.deadline);
            job.fail_at_flops = fail_at;
            jobs[c.rsc] += 1;
            let id = job.id;
            self.st.jobs.push(job);
            self.done_step.push(u64::MAX);
            self.add_input_file(p, c.app, id, now, true);
        }
        self.sent = sent;
        if let Some(e) = self.disk.plan_error.take() {
            return Err(e);
        }
        Ok(n)
    }

    /// The next step at which something can happen.
    fn next_event_step(&mut self) -> Result<u64, SimError> {
        let k = self.k;
        if self.opts.stepping == Stepping::FixedStep {
            return Ok(k + 1);
        }
        let mut n = self.nsteps;
        if let Some(f) = self.host_flip {
            n = n.min(f);
        }
        if !self.st.host_on {
            return Ok(n.max(k + 1));
        }
        let t = self.time(k);
        for (i, j) in self.st.jobs.iter().enumerate() {
            if j.state == JobState::Running {
                n = n.min(self.done_step[i]);
            }
        }
        n = n.min(self.step_at_or_after(self.st.last_schedule + self.st.prefs.sched_period));
        for pr in &self.st.projects {
            if pr.rpc.min_rpc_time > t {
                n = n.min(self.step_at_or_after(pr.rpc.min_rpc_time));
            }
        }
        for j in self
            .st
            .jobs
            .iter()
            .filter(|j| j.state == JobState::Finished)
        {
            let due = self.report_due(j);
            if due > t {
                n = n.min(self.step_at_or_after(due));
            }
        }
        let ci = self.st.connection_interval;
        let mut blocked_until = None;
        if let Some(l) = self.st.last_rpc {
            if ci > 0.0 && l + ci > t {
                let s = self.step_at_or_after(l + ci);
                n = n.min(s);
                blocked_until = Some(s);
            }
        }
        n = n.max(k + 1);
        // The first step before `n` at which the fetcher wants work. Between
        // events the fetcher's answer only moves one way (queued work only
        // drains), so one look at the last step and a bisection find it.
        let blocked = blocked_until.is_some();
        if n > k + 1 && !blocked {
            let want = |s: u64, sim: &Simulation| -> Result<bool, SimError> {
                let v = View::new(&sim.st, sim.pol.estimate.as_ref(), sim.time(s));
                sim.pol
                    .fetch
                    .request(&v)
                    .map(|r| r.is_some())
                    .map_err(|e| sim.policy_err(Family::Fetch, e))
            };
            if want(n - 1, self)? {
                let (mut lo, mut hi) = (k + 1, n - 1);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if want(mid, self)? {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                n = lo;
            }
        }
        Ok(n)
    }

    fn close_segments(&mut self, t: Time) {
        if let Some(tl) = &mut self.timeline {
            for j in self.st.jobs.iter().filter(|j| j.state == JobState::Running) {
                tl.end_segment(j.id, t);
            }
        }
    }

    fn close_timeline(&mut self) {
        let t = self.st.now;
        self.close_segments(t);
        if let Some(tl) = &mut self.timeline {
            if let Some(last) = tl.host_off.last_mut() {
                if last.1.is_infinite() {
                    last.1 = t;
                }
            }
            tl.finish(&self.st);
        }
    }

    /// available = used + wasted + idle + FLOPs of jobs not yet reported;
    /// no resource over-committed; every job reported at most once.
    fn check_invariants(&self) -> Result<(), String> {
        let host = &self.st.host;
        let unreported: f64 = self
            .st
            .jobs
            .iter()
            .map(|j| j.seconds_this_run() * j.peak_flops(host))
            .sum();
        let avail: f64 = self.avail_flops.iter().sum();
        let accounted: f64 = self.used_flops.iter().sum::<f64>()
            + self.wasted_flops.iter().sum::<f64>()
            + self.idle_flops.iter().sum::<f64>()
            + unreported;
        if (avail - accounted).abs() > 1e-6 * avail.max(1.0) {
            return Err(format!("accounting broken: available {avail} != used + wasted + idle + unreported {accounted}"));
        }
        for r in 0..host.nrsc() {
            let used: f64 = self
                .st
                .projects
                .iter()
                .map(|p| p.running_instances[r])
                .sum();
            if used > host.ninstances(r) + 1e-9 {
                return Err(format!(
                    "{} over-committed: {used} of {}",
                    host.rsc_name(r),
                    host.ninstances(r)
                ));
            }
        }
        if self.jobs_reported + self.disk.jobs_discarded + self.st.jobs.len() as u64
            != self.jobs_created
        {
            return Err(format!(
                "jobs lost or reported twice: {} created, {} reported, {} on the host",
                self.jobs_created,
                self.jobs_reported,
                self.st.jobs.len()
            ));
        }
        Ok(())
    }

    fn report(&self) -> RunReport {
        let host = &self.st.host;
        let nrsc = host.nrsc();
        let used: f64 = self.used_flops.iter().sum();
        let wasted: f64 = self.wasted_flops.iter().sum();
        let idle: f64 = self.idle_flops.iter().sum();
        let total = used + wasted + idle;
        let flops: Vec<f64> = self
            .st
            .projects
            .iter()
            .map(|p| p.stats.flops_used + p.stats.flops_wasted)
            .collect();
        let shares: Vec<f64> = self.st.projects.iter().map(|p| p.resource_share).collect();
        let dt3 = self.dt.powi(3);
        let q: Vec<f64> = self
            .st
            .projects
            .iter()
            .map(|p| p.stats.q_steps as f64 * dt3)
            .collect();
        let on_time: u64 = self.st.projects.iter().map(|p| p.stats.jobs_on_time).sum();
        let late: u64 = self.st.projects.iter().map(|p| p.stats.jobs_late).sum();
        let failed: u64 = self.st.projects.iter().map(|p| p.stats.jobs_failed).sum();
        let rpcs: u64 = self.st.projects.iter().map(|p| p.stats.rpcs).sum();
        let r6 = metrics::round6;
        let m = Metrics {
            idleness: r6(metrics::ratio(idle, total)),
            waste: r6(metrics::ratio(wasted, total)),
            share_violation: r6(metrics::share_violation(&flops, &shares)),
            monotony: r6(metrics::monotony(
                &q,
                self.avail_seconds,
                self.st.prefs.sched_period,
            )),
            rpcs,
            rpcs_per_job: r6(metrics::ratio(
                rpcs as f64,
                (on_time + late + failed) as f64,
            )),
            jobs_on_time: on_time,
            jobs_late: late,
        };
        let mut resources = serde_json::Map::new();
        for r in 0..nrsc {
            let t = self.used_flops[r] + self.wasted_flops[r] + self.idle_flops[r];
            let rm = ResourceMetrics {
                idleness: r6(metrics::ratio(self.idle_flops[r], t)),
                flops_used: r6(self.used_flops[r]),
                flops_wasted: r6(self.wasted_flops[r]),
                flops_idle: r6(self.idle_flops[r]),
            };
            resources.insert(
                host.rsc_name(r).to_string(),
                serde_json::to_value(rm).expect("plain data"),
            );
        }
        let total_f: f64 = flops.iter().sum();
        let total_share: f64 = shares.iter().sum();
        let projects = self
            .st
            .projects
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut usage = serde_json::Map::new();
                for r in 0..nrsc {
                    let all: f64 = self.st.projects.iter().map(|q| q.usage[r]).sum();
                    usage.insert(
                        host.rsc_name(r).to_string(),
                        serde_json::json!(r6(metrics::ratio(p.usage[r], all))),
                    );
                }
                ProjectMetrics {
                    name: p.name.clone(),
                    share: r6(p.resource_share / total_share),
                    flops: r6(flops[i]),
                    flops_fraction: r6(metrics::ratio(flops[i], total_f)),
                    usage,
                    jobs_on_time: p.stats.jobs_on_time,
                    jobs_late: p.stats.jobs_late,
                    jobs_failed: p.stats.jobs_failed,
                    rpcs: p.stats.rpcs,
                    disk_limit_gb: self
                        .st
                        .disk
                        .tracked
                        .then(|| self.pol.disk.project_limit(&self.st, i))
                        .flatten()
                        .map(|b| r6(b / 1e9)),
                    disk_peak_gb: self
                        .st
                        .disk
                        .tracked
                        .then(|| r6(self.disk.peak_project[i] / 1e9)),
                }
            })
            .collect();
        let disk = self.st.disk.tracked.then(|| DiskMetrics {
            limit_gb: r6(self.st.disk.total_limit / 1e9),
            peak_used_gb: r6(self.disk.peak / 1e9),
            bytes_deleted: self.disk.bytes_deleted.round(),
            jobs_refused: self.disk.jobs_refused,
            suspended_hours: r6(self.disk.suspended_seconds / 3600.0),
        });
        RunReport {
            scenario: self.scenario_name.clone(),
            policy: self.policy_name.clone(),
            seed: self.seed,
            metrics: m,
            resources,
            projects,
            disk,
        }
    }
}

/// A job's real FLOPs: normal(mean, sd), redrawn until positive (a truncated
/// normal); after many misses, the mean (only reachable with sd >> mean).
fn draw_flops(rng: &mut SimRng, mean: f64, sd: f64) -> f64 {
    if sd <= 0.0 {
        return mean;
    }
    let n = Normal::new(mean, sd).expect("finite, non-negative sd");
    for _ in 0..64 {
        let x = n.sample(rng);
        if x > 0.0 {
            return x;
        }
    }
    mean
}

/// Runs a scenario under a policy set.
pub fn run(
    scn: &Scenario,
    pol: PolicySet,
    policy_name: &str,
    opts: SimOptions,
) -> Result<RunOutput, SimError> {
    Simulation::new(scn, pol, policy_name, opts).run()
}
