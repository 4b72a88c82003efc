//! Hand-made states for unit tests of policies (here and in other crates):
//! a scenario's client state with jobs placed by hand, as in the documents'
//! worked examples.

use crate::model::{ClientState, Job, JobState, RunMode, Time, CPU};
use crate::scenario::Scenario;
use std::path::Path;

/// A job to place on the host.
#[derive(Debug, Clone)]
pub struct JobSpec {
    pub project: usize,
    pub app: usize,
    /// The project's estimate and what the job really takes.
    pub flops_estimate: f64,
    pub flops: f64,
    pub deadline: Time,
    pub fraction_done: f64,
    pub state: JobState,
    pub received: Time,
}

impl JobSpec {
    /// A queued job of `project` that takes its estimate exactly.
    pub fn queued(project: usize, flops: f64, deadline: Time) -> JobSpec {
        JobSpec {
            project,
            app: 0,
            flops_estimate: flops,
            flops,
            deadline,
            fraction_done: 0.0,
            state: JobState::Queued,
            received: 0.0,
        }
    }
    pub fn running(mut self, fraction_done: f64) -> JobSpec {
        self.state = JobState::Running;
        self.fraction_done = fraction_done;
        self
    }
}

/// The client state of a scenario given as TOML text; panics on a bad text
/// (tests only).
pub fn state(toml: &str) -> ClientState {
    let scn =
        Scenario::from_toml_str(toml, Path::new("test.toml")).unwrap_or_else(|e| panic!("{e}"));
    ClientState::new(&scn)
}

/// Places a job; returns its id. Running jobs hold their instances.
pub fn add_job(st: &mut ClientState, s: JobSpec) -> u64 {
    let id = st.jobs.iter().map(|j| j.id + 1).max().unwrap_or(0);
    let app = &st.projects[s.project].apps[s.app];
    let speed = app.speed(&st.host);
    let job = Job {
        id,
        project: s.project,
        app: s.app,
        cpus: app.cpus,
        gpu: app.gpu,
        flops_estimate: s.flops_estimate,
        flops_real: s.flops,
        speed,
        received: s.received,
        deadline: s.deadline,
        state: s.state,
        mode: RunMode::RoundRobin,
        ever_deadline_mode: false,
        last_started: st.now,
        finished_at: 0.0,
        failed: false,
        disk_full: false,
        fail_at_flops: None,
        flops_left: s.flops * (1.0 - s.fraction_done),
        run_seconds: s.flops * s.fraction_done / speed,
        since: st.now,
        // A running job computes at full speed (no over-commitment here).
        progresses: s.state == JobState::Running,
        rate: if s.state == JobState::Running {
            speed
        } else {
            0.0
        },
        cpu_share: if s.state == JobState::Running {
            app.cpus
        } else {
            0.0
        },
        cpu_seconds: 0.0,
        gpu_seconds: 0.0,
    };
    if job.state == JobState::Running {
        let pr = &mut st.projects[job.project];
        pr.running_instances[CPU] += job.cpus;
        pr.usage_rate[CPU] += job.cpus;
        if let Some((r, n)) = job.gpu {
            pr.running_instances[r] += n;
            pr.usage_rate[r] += n;
        }
    }
    st.jobs.push(job);
    id
}

/// Moves the clock (the state's own time; running jobs are not advanced).
pub fn set_now(st: &mut ClientState, t: Time) {
    st.now = t;
    st.usage_mark = t;
}

/// Sets project `p`'s recent estimated credit (REC) as of now.
pub fn set_rec(st: &mut ClientState, p: usize, rec: f64) {
    st.projects[p].rec = rec;
}

/// Makes running job `id` compute at rate 0 (its CPUs all held by GPU
/// jobs): its elapsed time grows, its fraction done does not.
pub fn stall(st: &mut ClientState, id: u64) {
    if let Some(j) = st.jobs.iter_mut().find(|j| j.id == id) {
        j.rate = 0.0;
    }
}
