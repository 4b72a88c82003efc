//! Between visited steps: running jobs progress, the accounts and the
//! monotony sums grow, jobs finish; the host comes and goes.

use super::SimError;
use super::Simulation;
use crate::metrics;
use crate::model::{Job, JobState, CPU};
use crate::policy::StaticEstimate;
use crate::policy::View;
use crate::registry::Family;
use crate::rpc;
use crate::time::NEVER;

impl Simulation {
    pub(super) fn flip_host(&mut self, k: u64) {
        let t = self.time(k);
        self.st.host_on = !self.st.host_on;
        self.host_flip = self.host.next_flip_step(k, self.clock.dt);
        if t > 0.0 {
            self.st.observed_on_fraction = self.acc.on_seconds / t;
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
                    self.done_step[i] = NEVER;
                }
            }
            if let Some(tl) = &mut self.timeline {
                tl.host_off.push((t, f64::INFINITY));
            }
            self.close_segments(t);
        }
    }

    /// The step at which a running job finishes (or crashes).
    pub(super) fn job_done_step(&self, j: &Job) -> u64 {
        self.clock
            .step_at_or_after(j.since + flops_to_end(j) / j.speed)
    }

    /// Brings progress and accounting up to the boundary of step `k`.
    pub(super) fn settle(&mut self, k: u64) {
        if k <= self.mark_k {
            return;
        }
        let t = self.time(k);
        let nsteps = k - self.mark_k;
        let span = t - self.time(self.mark_k);
        if self.st.host_on {
            let nrsc = self.st.host.nrsc();
            let np = self.st.projects.len();
            // On the stack for the usual sizes: settle runs at every visited step.
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
                if self.st.jobs[i].state != JobState::Running {
                    continue;
                }
                let done = self.done_step[i] <= k;
                let j = &mut self.st.jobs[i];
                let ran_s = if done {
                    (flops_to_end(j) / j.speed).min(span)
                } else {
                    span
                };
                j.flops_left = (j.flops_left - j.speed * ran_s).max(0.0);
                j.run_seconds += ran_s;
                j.since = t;
                ran[j.project] = true;
                let pr = &mut self.st.projects[j.project];
                pr.usage[CPU] += j.cpus * ran_s;
                busy[CPU] += j.cpus * ran_s;
                if let Some((r, n)) = j.gpu {
                    pr.usage[r] += n * ran_s;
                    busy[r] += n * ran_s;
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
                    self.done_step[i] = NEVER;
                    self.finished_now.push(i);
                    if self.st.disk.tracked {
                        self.disk.outputs_pending.push(j.id);
                    }
                }
            }
            self.acc.available(&self.st, span, busy);
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
        self.st.on_seconds = self.acc.on_seconds;
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
            let v = View::new(&self.st, &StaticEstimate, self.st.now).live(&self.log);
            let r = self.pol.estimate.on_job_finished(&v, &self.st.jobs[i]);
            r.map_err(|e| self.policy_err(Family::Estimate, e))?;
        }
        self.finished_now = finished;
        self.finished_now.clear();
        Ok(())
    }
}

/// FLOPs a running job computes before it ends: all that is left, or up to
/// the point where it crashes.
fn flops_to_end(j: &Job) -> f64 {
    j.fail_at_flops.map_or(j.flops_left, |f| {
        (j.flops_left - (j.flops_real - f)).max(0.0)
    })
}
