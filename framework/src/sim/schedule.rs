//! The CPU scheduler's run list: asked for, validated (jobs on the host,
//! runnable, listed once, no resource over-committed), applied.

use super::{live_view, SimError, Simulation};
use crate::model::{JobState, CPU};
use crate::policy::RunList;
use crate::registry::Family;
use crate::time::NEVER;

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

    fn validate_run_list(&self, out: &RunList) -> Result<(), SimError> {
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
        Ok(())
    }

    fn apply_schedule(&mut self, out: &RunList) -> Result<(), SimError> {
        self.validate_run_list(out)?;
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
                    j.ever_deadline_mode |= mode == crate::model::RunMode::Deadline;
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
                    j.ever_deadline_mode |= mode == crate::model::RunMode::Deadline;
                }
                _ => {}
            }
        }
        if self.done_step.len() < self.st.jobs.len() {
            self.done_step.resize(self.st.jobs.len(), NEVER);
        }
        for i in 0..self.st.jobs.len() {
            let j = &self.st.jobs[i];
            self.done_step[i] = if j.state == JobState::Running {
                self.job_done_step(j)
            } else {
                NEVER
            };
            if j.state == JobState::Running {
                if let Some(tl) = &mut self.timeline {
                    tl.ensure_segment(j, now);
                }
            }
        }
        Ok(())
    }
}
