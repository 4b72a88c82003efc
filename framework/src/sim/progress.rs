//! Between visited steps: running jobs progress, the accounts and the
//! monotony sums grow, jobs finish; the host comes and goes, and computing
//! (all of it, or on GPUs) is allowed or not.
//!
//! Everything that grows with time is stored as "the value at `usage_mark`
//! plus a rate", and is folded forward ([`Simulation::fold`]) only at a step
//! where something changes (a job finishes, the host flips, a decision is
//! applied). A step where nothing happens changes nothing, so the numbers do
//! not depend on whether the simulator visited it: the fixed-step and the
//! event-driven runs fold at the same steps, with the same spans.

use super::{live_view, SimError, Simulation};
use crate::availability::OnOffProcess;
use crate::metrics;
use crate::model::{Job, JobState, CPU};
use crate::policy::admission::EPS;
use crate::policy::{StaticEstimate, View};
use crate::registry::Family;
use crate::rng::stream;
use crate::rpc;
use crate::scenario::Scenario;
use crate::time::{Clock, NEVER};

/// The host's three on/off processes: the client runs (`on`), computing is
/// allowed (`active`, BOINC's `active_frac`), GPU computing is allowed
/// (`gpu`, BOINC's `gpu_active_frac` / `active_frac`, within `active`). The
/// last two are fractions of on-time, drawn independently of the first,
/// with the same mean period.
pub(super) struct HostAvailability {
    procs: [OnOffProcess; 3],
    next: [Option<u64>; 3],
    /// Each process's state since its last flip. A process is sampled only
    /// at its own flips: seeking its next flip consumed it up to there, so
    /// sampling it at another process's flip (earlier) would read the state
    /// it flips to, not the one it is in.
    state: [bool; 3],
}

impl HostAvailability {
    pub fn new(scn: &Scenario, seed: u64, clock: &Clock) -> HostAvailability {
        let a = &scn.host.availability;
        let gpu_of_active = if a.active_fraction > 0.0 {
            (a.gpu_active() / a.active_fraction).min(1.0)
        } else {
            0.0
        };
        let mut procs = [
            OnOffProcess::new(
                a.fraction,
                a.mean_on_seconds,
                stream(seed, "host-availability", 0),
            ),
            OnOffProcess::new(
                a.active_fraction,
                a.mean_on_seconds,
                stream(seed, "host-active", 0),
            ),
            OnOffProcess::new(
                gpu_of_active,
                a.mean_on_seconds,
                stream(seed, "host-gpu-active", 0),
            ),
        ];
        // (Before the flips are sought: they consume the processes.)
        let start = [0, 1, 2].map(|i| procs[i].state_at(0.0));
        let next = [0, 1, 2].map(|i| procs[i].next_flip_step(0, clock.dt, clock.nsteps));
        HostAvailability {
            procs,
            next,
            state: start,
        }
    }

    /// The three states at the start: a process that never flips (a
    /// fraction of 0 or 1) is never sampled at a flip, so its state is set
    /// here (`gpu_active_fraction = 0` on an always-active host ran the
    /// GPUs as if it were 1). Draws nothing.
    pub fn at_start(&self) -> [bool; 3] {
        // (Before the first flip the states are the start's.)
        self.state
    }

    /// The next step at which some process flips.
    pub fn next_flip(&self) -> Option<u64> {
        self.next.iter().flatten().min().copied()
    }

    /// Samples the three states at step `k` (a flip step) and finds the
    /// next flips: (on, active, gpu active).
    fn sample(&mut self, k: u64, clock: &Clock) -> [bool; 3] {
        let t = clock.time(k);
        for i in 0..3 {
            if self.next[i] == Some(k) {
                self.state[i] = self.procs[i].state_at(t);
                self.next[i] = self.procs[i].next_flip_step(k, clock.dt, clock.nsteps);
            }
        }
        self.state
    }
}

/// What the three states `[on, active, GPU active]` allow: computing, and
/// GPU computing.
pub(super) fn allowed([on, active, gpu]: [bool; 3]) -> (bool, bool) {
    (on && active, on && active && gpu)
}

/// The timeline's periods at these states: computing not allowed while the
/// host is on, and GPU computing not allowed while computing is (on a host
/// with GPUs).
pub(super) fn not_allowed(states: [bool; 3], gpus: bool) -> (bool, bool) {
    let (cpu, gpu) = allowed(states);
    (states[0] && !cpu, gpus && cpu && !gpu)
}

/// FLOPs a running job computes before it ends: all that is left, or up to
/// the point where it crashes.
fn flops_to_end(j: &Job) -> f64 {
    j.fail_at_flops.map_or(j.flops_left, |f| {
        (j.flops_left - (j.flops_real - f)).max(0.0)
    })
}

impl Simulation {
    /// The step at which a running job finishes (or crashes), if it keeps
    /// computing as it does now.
    pub(super) fn job_done_step(&self, j: &Job) -> u64 {
        if !j.progresses() || j.rate <= 0.0 {
            return NEVER;
        }
        self.clock
            .step_at_or_after(j.since + flops_to_end(j) / j.rate)
    }

    /// A job finishes at step `k`, or the host flips there: the state must
    /// be folded up to it.
    pub(super) fn something_happens_at(&self, k: u64) -> bool {
        self.host.next_flip() == Some(k)
            || self
                .st
                .jobs
                .iter()
                .zip(&self.done_step)
                .any(|(j, d)| j.state == JobState::Running && *d <= k)
    }

    /// Brings progress and accounting up to the boundary of step `k`; jobs
    /// whose completion step is `k` finish (their instances are idle for the
    /// rest of the step they finished in).
    pub(super) fn fold(&mut self, k: u64) {
        if k <= self.mark_k {
            return;
        }
        let t = self.time(k);
        let nsteps = k - self.mark_k;
        let span = t - self.time(self.mark_k);
        let nrsc = self.st.host.nrsc();
        let np = self.st.projects.len();
        // On the stack for the usual sizes: this runs at every visited step
        // where something happens.
        let (mut busy_a, mut busy_v) = ([0.0f64; 8], Vec::new());
        let busy: &mut [f64] = if nrsc <= 8 {
            &mut busy_a[..nrsc]
        } else {
            busy_v.resize(nrsc, 0.0);
            &mut busy_v
        };
        let (mut ran_a, mut ran_v) = ([false; 64], Vec::new());
        let ran: &mut [bool] = if np <= 64 {
            &mut ran_a[..np]
        } else {
            ran_v.resize(np, false);
            &mut ran_v
        };
        for i in 0..self.st.jobs.len() {
            let j = &mut self.st.jobs[i];
            if j.state != JobState::Running {
                continue;
            }
            if !j.progresses {
                j.since = t;
                continue;
            }
            let done = self.done_step[i] <= k;
            let ran_s = if done {
                (flops_to_end(j) / j.rate).min(span)
            } else {
                span
            };
            j.flops_left = (j.flops_left - j.rate * ran_s).max(0.0);
            j.run_seconds += ran_s;
            j.since = t;
            j.cpu_seconds += j.cpu_share * ran_s;
            ran[j.project] = true;
            let pr = &mut self.st.projects[j.project];
            pr.usage[CPU] += j.cpu_share * ran_s;
            pr.held[CPU] += j.cpus * ran_s;
            busy[CPU] += j.cpu_share * ran_s;
            if let Some((r, n)) = j.gpu {
                j.gpu_seconds += n * ran_s;
                pr.usage[r] += n * ran_s;
                pr.held[r] += n * ran_s;
                busy[r] += n * ran_s;
            }
            if done {
                j.finished_at = t - span + ran_s;
                j.state = JobState::Finished;
                j.progresses = false;
                if j.fail_at_flops.is_some() {
                    j.failed = true;
                }
                pr.running_instances[CPU] -= j.cpus;
                if let Some((r, n)) = j.gpu {
                    pr.running_instances[r] -= n;
                }
                self.done_step[i] = NEVER;
                self.finished_now.push(i);
                if self.st.disk.tracked {
                    self.disk.outputs_pending.push(j.id);
                }
            }
        }
        let allowed = |r: usize| {
            if r == CPU {
                self.st.cpu_allowed
            } else {
                self.st.gpu_allowed
            }
        };
        self.acc.available(&self.st, span, busy, allowed);
        let cpu_allowed = self.st.cpu_allowed;
        for (p, pr) in self.st.projects.iter_mut().enumerate() {
            if cpu_allowed {
                let s = &mut pr.stats;
                if ran[p] {
                    s.steps_since_ran = 0;
                } else {
                    s.q_steps += metrics::idle_steps_sum(s.steps_since_ran, nsteps);
                    s.steps_since_ran += nsteps;
                }
            }
            // Today's client's recent estimated credit: it decays on and off.
            // It credits the instances the jobs hold, CPUs unslowed by
            // over-commitment (BOINC's `accumulate_inst_sec`: `avg_ncpus`).
            let host = &self.st.host;
            let credit = crate::rec::credit(
                (pr.held.iter().zip(&pr.rec_mark).enumerate())
                    .map(|(r, (u, m))| (u - m, host.instance_flops(r))),
            );
            pr.rec = crate::rec::fold(pr.rec, span, credit, self.st.prefs.rec_half_life);
            pr.rec_mark.copy_from_slice(&pr.held);
            if self.st.host_on {
                // The RPC document's exponentially averaged CPU time.
                let d = pr.usage[CPU] - pr.exp_mark;
                pr.exp_avg_cpu = rpc::decay_exp_avg(pr.exp_avg_cpu, span, d);
                pr.exp_mark = pr.usage[CPU];
            }
        }
        if let Some(tl) = &mut self.timeline {
            for &i in &self.finished_now {
                let j = &self.st.jobs[i];
                tl.end_segment(j.id, j.finished_at);
            }
        }
        self.mark_k = k;
        self.st.usage_mark = t;
        self.st.available_seconds = self.acc.available_seconds;
        if !self.finished_now.is_empty() {
            self.update_rates();
        }
    }

    /// The host's processes at flip step `k` (the state is folded to `k`).
    pub(super) fn flip_host(&mut self, k: u64) {
        let t = self.time(k);
        let states = self.host.sample(k, &self.clock);
        let on = states[0];
        let was_on = self.st.host_on;
        self.st.host_on = on;
        (self.st.cpu_allowed, self.st.gpu_allowed) = allowed(states);
        if t > 0.0 {
            self.st.observed_on_fraction = self.acc.available_seconds / t;
            self.st.observed_gpu_fraction = self.acc.gpu_available_seconds / t;
        }
        let gpus = self.st.host.nrsc() > 1;
        if let Some(tl) = &mut self.timeline {
            if was_on && !on {
                tl.host_off.push((t, f64::INFINITY));
            } else if !was_on && on {
                if let Some(last) = tl.host_off.last_mut() {
                    last.1 = t;
                }
            }
            let (cpu, gpu) = not_allowed(states, gpus);
            tl.allowed_at(t, cpu, gpu);
        }
        self.update_rates();
        // The work's rate changes here too, not only at a schedule: the
        // series stays linear between its points (see `diverge`'s shares).
        self.explain_work_done();
    }

    /// Which running jobs compute, and how fast: after any change to the
    /// running jobs or to what is allowed. While the CPUs are over-committed
    /// (the running jobs use more than `ncpus`), CPU jobs compute at
    /// `(ncpus - CPUs of GPU jobs) / CPUs of CPU jobs` of their speed, as
    /// in BOINC's emulator, so that no FLOPs are made from nothing; GPU jobs
    /// are never slowed (when they alone hold more than `ncpus`, each is
    /// counted on `ncpus / their CPUs` of what it holds).
    pub(super) fn update_rates(&mut self) {
        let (cpu_ok, gpu_ok) = (self.st.cpu_allowed, self.st.gpu_allowed);
        let computes =
            |j: &Job| j.state == JobState::Running && if j.gpu.is_some() { gpu_ok } else { cpu_ok };
        let (mut gpu_cpus, mut cpu_cpus) = (0.0, 0.0);
        for j in self.st.jobs.iter().filter(|j| computes(j)) {
            if j.gpu.is_some() {
                gpu_cpus += j.cpus;
            } else {
                cpu_cpus += j.cpus;
            }
        }
        let n = self.st.host.ncpus;
        let scale = if gpu_cpus + cpu_cpus > n + EPS && cpu_cpus > 0.0 {
            ((n - gpu_cpus) / cpu_cpus).clamp(0.0, 1.0)
        } else {
            1.0
        };
        // GPU jobs alone may hold more CPUs than the host has (each is
        // admitted while `used + its CPUs <= ncpus + 1`): they are not
        // slowed, but share the CPUs they hold, and are counted so.
        let gpu_scale = if gpu_cpus > n + EPS {
            n / gpu_cpus
        } else {
            1.0
        };
        for pr in self.st.projects.iter_mut() {
            pr.usage_rate.iter_mut().for_each(|x| *x = 0.0);
            pr.held_extra_cpus = 0.0;
        }
        let now = self.time(self.mark_k);
        for i in 0..self.st.jobs.len() {
            let j = &mut self.st.jobs[i];
            let (was, old_share) = (j.progresses, j.cpu_share);
            j.progresses = computes(j);
            if j.progresses {
                let s = if j.gpu.is_some() { 1.0 } else { scale };
                j.rate = j.speed * s;
                j.cpu_share = j.cpus * if j.gpu.is_some() { gpu_scale } else { s };
                let pr = &mut self.st.projects[j.project];
                pr.usage_rate[CPU] += j.cpu_share;
                // REC credits the CPUs held, not the share left after slowing.
                pr.held_extra_cpus += j.cpus - j.cpu_share;
                if let Some((r, n)) = j.gpu {
                    pr.usage_rate[r] += n;
                }
            } else {
                j.rate = 0.0;
                j.cpu_share = 0.0;
            }
            // The timeline's stretches are the spans in which a job computes
            // at one share of the CPUs.
            if let Some(tl) = &mut self.timeline {
                if was && (!j.progresses || j.cpu_share != old_share) {
                    tl.end_segment(j.id, now);
                }
                if j.progresses {
                    tl.ensure_segment(j, now);
                }
            }
            let d = self.job_done_step(&self.st.jobs[i]);
            self.done_step[i] = d;
        }
    }

    /// Tells the estimator of finished jobs; backs off projects whose job failed.
    pub(super) fn after_completions(&mut self) -> Result<(), SimError> {
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
            let before = if self.explaining() {
                let v = live_view!(self);
                let r = v.correction(project);
                Some(r.map_err(|e| self.policy_err(Family::Estimate, e))?)
            } else {
                None
            };
            let v = View::new(&self.st, &StaticEstimate, self.st.now).live(&self.log);
            let r = self.pol.estimate.on_job_finished(&v, &self.st.jobs[i]);
            r.map_err(|e| self.policy_err(Family::Estimate, e))?;
            if let Some(before) = before {
                let id = self.st.jobs[i].id;
                self.explain_dcf(project, id, before)?;
            }
        }
        self.finished_now = finished;
        self.finished_now.clear();
        Ok(())
    }
}
