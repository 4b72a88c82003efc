//! Jobs arriving on the host: the scenario's initial jobs, and the jobs a
//! reply sends, with their real size drawn from the project's job stream.

use super::{SimError, Simulation};
use crate::model::{Job, JobState, RunMode};
use crate::policy::Candidate;
use crate::rng::SimRng;
use crate::scenario::Scenario;
use crate::time::{Time, NEVER};
use rand::Rng;
use rand_distr::{Distribution, Normal};

impl Simulation {
    /// Adds a job to the host's list, which stays in id order (so that
    /// `State::job_index` can search it).
    fn push_job(&mut self, job: Job) {
        debug_assert!(self.st.jobs.last().is_none_or(|l| l.id < job.id));
        self.st.jobs.push(job);
    }

    pub(super) fn add_initial_jobs(&mut self, scn: &Scenario) -> Result<(), SimError> {
        for (p, sp) in scn.projects.iter().enumerate() {
            for ij in &sp.jobs {
                let Some(a) = sp.apps.iter().position(|a| a.name == ij.app) else {
                    // The scenario's validation names the app; a scenario
                    // built in code may not have been validated.
                    return Err(self.broken(format!(
                        "initial job of project `{}` names no app of it: `{}`",
                        sp.name, ij.app
                    )));
                };
                let app = &self.st.projects[p].apps[a];
                if !app.runs_on_host() {
                    let msg = format!(
                        "initial job of project `{}` needs a `{}` GPU the host lacks: left out",
                        sp.name,
                        app.missing_gpu.clone().unwrap_or_default()
                    );
                    self.log.push(0.0, "simulator", &msg);
                    continue;
                }
                let est = ij.flops_estimate.unwrap_or(app.flops_estimate);
                let real = ij.flops.unwrap_or(app.flops_mean);
                let mut job = self.make_job(p, a, est, real, 0.0, ij.deadline_days * 86400.0);
                if ij.fraction_done > 0.0 {
                    job.flops_left = real * (1.0 - ij.fraction_done);
                    // Computed before the run: part of its elapsed time, not
                    // of this run's accounting (its instance-seconds start at 0).
                    job.run_seconds = real * ij.fraction_done / job.speed;
                    job.state = JobState::Preempted;
                }
                let (id, now) = (job.id, job.received);
                self.push_job(job);
                self.add_input_file(p, a, id, now, false)?;
            }
        }
        Ok(())
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
        let id = self.acc.jobs_created;
        self.acc.jobs_created += 1;
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
            disk_full: false,
            fail_at_flops: None,
            flops_left: real,
            run_seconds: 0.0,
            since: now,
            progresses: false,
            rate: 0.0,
            cpu_share: 0.0,
            cpu_seconds: 0.0,
            gpu_seconds: 0.0,
        }
    }

    /// The jobs of a reply arrive: real sizes and crashes drawn from `p`'s
    /// job stream, input files written. `jobs[r]` counts them per resource.
    pub(super) fn arrive(
        &mut self,
        p: usize,
        sent: &[Candidate],
        jobs: &mut [u32],
    ) -> Result<(), SimError> {
        let now = self.st.now;
        for c in sent {
            let app = &self.st.projects[p].apps[c.app];
            let (mean, sd, ff) = (app.flops_mean, app.flops_stddev, app.failure_fraction);
            let rng = &mut self.servers.job_rng[p];
            let real = draw_flops(rng, mean, sd);
            let fail = ff > 0.0 && rng.gen::<f64>() < ff;
            let fail_at = fail.then(|| real * rng.gen::<f64>());
            let mut job = self.make_job(p, c.app, c.flops_estimate, real, now, c.deadline);
            debug_assert!(c.deadline.is_finite());
            job.fail_at_flops = fail_at;
            jobs[c.rsc] += 1;
            let id = job.id;
            self.push_job(job);
            self.done_step.push(NEVER);
            self.add_input_file(p, c.app, id, now, true)?;
        }
        Ok(())
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
