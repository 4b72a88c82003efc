//! The CPU scheduler's run list: asked for, checked (jobs on the host,
//! runnable, listed once, admitted by BOINC's rules: CPUs over-committed by
//! at most one job, GPUs never, max_concurrent), applied.

use super::{live_view, SimError, Simulation};
use crate::model::{Job, JobState, RunMode, CPU};
use crate::policy::admission::Admission;
use crate::policy::RunList;
use crate::registry::Family;

impl Simulation {
    pub(super) fn schedule(&mut self) -> Result<(), SimError> {
        self.reschedule = false;
        let now = self.st.now;
        {
            let v = live_view!(self);
            let r = self.pol.fetch.account(&v);
            r.map_err(|e| self.policy_err(Family::Fetch, e))?;
        }
        let mut out = std::mem::take(&mut self.runlist);
        out.clear();
        {
            let v = live_view!(self);
            let r = self.pol.cpu.schedule(&v, &mut out);
            r.map_err(|e| self.policy_err(Family::Cpu, e))?;
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

    /// Checks the run list, and marks in `self.listed` each listed job's
    /// mode by its place in the job list (linear in the jobs, which a
    /// 256-CPU host needs).
    fn validate_run_list(&mut self, out: &RunList) -> Result<(), SimError> {
        let mut listed = std::mem::take(&mut self.listed);
        listed.clear();
        listed.resize(self.st.jobs.len(), None);
        let r = self.mark_run_list(out, &mut listed);
        self.listed = listed;
        r
    }

    fn mark_run_list(&self, out: &RunList, listed: &mut [Option<RunMode>]) -> Result<(), SimError> {
        let mut jobs: Vec<&Job> = Vec::with_capacity(out.jobs.len());
        for &(id, mode) in &out.jobs {
            let Some(i) = self.st.job_index(id) else {
                return Err(self.invalid(Family::Cpu, format!("job {id} is not on the host")));
            };
            let j = &self.st.jobs[i];
            if !j.is_runnable() {
                return Err(
                    self.invalid(Family::Cpu, format!("job {id} has finished and cannot run"))
                );
            }
            if listed[i].replace(mode).is_some() {
                return Err(self.invalid(Family::Cpu, format!("job {id} is listed twice")));
            }
            jobs.push(j);
        }
        Admission::admits_all(&self.st.host, &self.st.projects, &jobs)
            .map_err(|m| self.invalid(Family::Cpu, m))
    }

    fn apply_schedule(&mut self, out: &RunList) -> Result<(), SimError> {
        self.validate_run_list(out)?;
        self.fold(self.k);
        if self.explaining() {
            self.explain_schedule(out)?;
        }
        let now = self.st.now;
        for i in 0..self.st.jobs.len() {
            let id = self.st.jobs[i].id;
            let listed = self.listed[i];
            let j = &mut self.st.jobs[i];
            let pr = &mut self.st.projects[j.project];
            match (j.state, listed) {
                (JobState::Running, None) => {
                    j.state = JobState::Preempted;
                    pr.running_instances[CPU] -= j.cpus;
                    if let Some((r, n)) = j.gpu {
                        pr.running_instances[r] -= n;
                    }
                }
                (JobState::Queued | JobState::Preempted, Some(mode)) => {
                    j.state = JobState::Running;
                    j.since = now;
                    j.last_started = now;
                    j.mode = mode;
                    j.ever_deadline_mode |= mode == RunMode::Deadline;
                    pr.running_instances[CPU] += j.cpus;
                    if let Some((r, n)) = j.gpu {
                        pr.running_instances[r] += n;
                    }
                }
                (JobState::Running, Some(mode)) => {
                    if j.mode != mode {
                        // A new stretch of the timeline, in the new mode.
                        if let Some(tl) = &mut self.timeline {
                            tl.end_segment(id, now);
                        }
                        j.mode = mode;
                        if let Some(tl) = &mut self.timeline {
                            if j.progresses {
                                tl.ensure_segment(j, now);
                            }
                        }
                    }
                    j.ever_deadline_mode |= mode == RunMode::Deadline;
                }
                _ => {}
            }
        }
        if self.done_step.len() < self.st.jobs.len() {
            self.done_step
                .resize(self.st.jobs.len(), crate::time::NEVER);
        }
        self.update_rates();
        self.explain_work_done();
        Ok(())
    }
}
