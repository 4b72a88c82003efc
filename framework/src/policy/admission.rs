//! BOINC's rules for which jobs may run together (its current client's
//! `enforce_run_list`), shared by the simulator, which checks every run
//! list against them, and by the schedulers, which fill the host with them:
//!
//! - **GPUs** are never over-committed: a job's GPU instances must be free.
//! - **CPUs are over-committed by one job**: a CPU job (single- or
//!   multi-threaded) is admitted if the CPUs in use are below the CPU count
//!   *before* it is added, so the last one may push the total past the count
//!   by up to its own CPU use; a GPU job is admitted while the total stays
//!   within the CPU count plus one. Only a user limit on the CPUs BOINC may
//!   use (`max_ncpus_pct` below 100) is a strict cap.
//! - **max_concurrent**: no more of an app's, or of a project's, jobs than
//!   its cap (app_config.xml's `max_concurrent`, `project_max_concurrent`).
//!
//! While the CPUs are over-committed the simulator slows the CPU jobs (see
//! the book's page on GPUs), as BOINC's emulator does.

use super::view::View;
use crate::model::{HostInfo, Job, ProjectState, CPU};

/// Tolerance for fractional CPUs adding up.
pub const EPS: f64 = 1e-9;

/// What a run list holds so far, and whether one more job may join it.
#[derive(Debug, Clone)]
pub struct Admission {
    ncpus: f64,
    strict: bool,
    /// CPUs the jobs admitted so far use.
    pub cpu_used: f64,
    /// Free instances per resource (index 0, the CPU: `ncpus - cpu_used`,
    /// negative while over-committed).
    pub free: Vec<f64>,
    /// Jobs admitted per project, and per (project, app).
    project_jobs: Vec<u32>,
    app_jobs: Vec<Vec<u32>>,
    project_cap: Vec<u32>,
    app_cap: Vec<Vec<u32>>,
}

impl Admission {
    /// An empty host.
    pub fn new(host: &HostInfo, projects: &[ProjectState]) -> Admission {
        Admission {
            ncpus: host.ncpus,
            strict: host.strict_cpus,
            cpu_used: 0.0,
            free: (0..host.nrsc()).map(|r| host.ninstances(r)).collect(),
            project_jobs: vec![0; projects.len()],
            app_jobs: projects.iter().map(|p| vec![0; p.apps.len()]).collect(),
            project_cap: projects.iter().map(|p| p.max_concurrent).collect(),
            app_cap: projects
                .iter()
                .map(|p| p.apps.iter().map(|a| a.max_concurrent).collect())
                .collect(),
        }
    }

    /// An empty host as `v` sees it.
    pub fn of_host(v: &View) -> Admission {
        Admission::new(v.host(), v.projects())
    }

    /// Why `j` may not join what is admitted, if it may not.
    pub fn refusal(&self, j: &Job) -> Option<Refusal> {
        if let Some((r, n)) = j.gpu {
            if n > self.free[r] + EPS {
                return Some(Refusal::GpuFull);
            }
        }
        let cpu_ok = if self.strict {
            self.cpu_used + j.cpus <= self.ncpus + EPS
        } else if j.gpu.is_some() {
            self.cpu_used + j.cpus <= self.ncpus + 1.0 + EPS
        } else {
            self.cpu_used < self.ncpus - EPS
        };
        if !cpu_ok {
            return Some(Refusal::CpuFull);
        }
        let cap = |n: u32, c: u32| c > 0 && n >= c;
        if cap(
            self.app_jobs[j.project][j.app],
            self.app_cap[j.project][j.app],
        ) {
            return Some(Refusal::AppMaxConcurrent);
        }
        if cap(self.project_jobs[j.project], self.project_cap[j.project]) {
            return Some(Refusal::ProjectMaxConcurrent);
        }
        None
    }

    pub fn fits(&self, j: &Job) -> bool {
        self.refusal(j).is_none()
    }

    pub fn take(&mut self, j: &Job) {
        self.cpu_used += j.cpus;
        self.free[CPU] -= j.cpus;
        if let Some((r, n)) = j.gpu {
            self.free[r] -= n;
        }
        self.project_jobs[j.project] += 1;
        self.app_jobs[j.project][j.app] += 1;
    }

    /// Undoes [`Admission::take`].
    pub fn give(&mut self, j: &Job) {
        self.cpu_used -= j.cpus;
        self.free[CPU] += j.cpus;
        if let Some((r, n)) = j.gpu {
            self.free[r] += n;
        }
        self.project_jobs[j.project] -= 1;
        self.app_jobs[j.project][j.app] -= 1;
    }

    /// Could some job still start? (A CPU below the count, or some GPU free.)
    pub fn any_free(&self) -> bool {
        self.cpu_used < self.ncpus - EPS || self.free[1..].iter().any(|f| *f > EPS)
    }

    /// Whether some order admits every job of `jobs` under the rules (the
    /// simulator's check of a run list). Each job's condition is a bound on
    /// the CPUs in use before it, so it is one of meeting deadlines on one
    /// machine: taking the jobs by the latest CPU total they allow
    /// (earliest first) finds an order if there is one.
    pub fn admits_all(
        host: &HostInfo,
        projects: &[ProjectState],
        jobs: &[&Job],
    ) -> Result<(), String> {
        let mut a = Admission::new(host, projects);
        let mut order: Vec<&Job> = jobs.to_vec();
        // The CPU total a job allows once it is in: a CPU job `ncpus + cpus`
        // (just below), a GPU job `ncpus + 1`; a strict host `ncpus` for all.
        let allowed = |j: &Job| {
            if host.strict_cpus {
                host.ncpus
            } else if j.gpu.is_some() {
                host.ncpus + 1.0
            } else {
                host.ncpus + j.cpus - EPS
            }
        };
        order.sort_by(|x, y| allowed(x).total_cmp(&allowed(y)));
        for j in order {
            if let Some(r) = a.refusal(j) {
                return Err(match r {
                    Refusal::GpuFull => format!(
                        "job {} needs {} `{}` instances and fewer are free",
                        j.id,
                        j.gpu.map_or(0.0, |g| g.1),
                        j.gpu.map_or("", |g| host.rsc_name(g.0))
                    ),
                    Refusal::CpuFull => format!(
                        "the jobs it runs use {} CPUs: more than BOINC would run on {} CPUs{}",
                        jobs.iter().map(|j| j.cpus).sum::<f64>(),
                        host.ncpus,
                        if host.strict_cpus {
                            " (the user limits BOINC to them)"
                        } else {
                            " (it over-commits the CPUs by at most one job)"
                        }
                    ),
                    Refusal::AppMaxConcurrent => format!(
                        "more jobs of app `{}` of project `{}` than its max_concurrent {}",
                        projects[j.project].apps[j.app].name,
                        projects[j.project].name,
                        projects[j.project].apps[j.app].max_concurrent
                    ),
                    Refusal::ProjectMaxConcurrent => format!(
                        "more jobs of project `{}` than its max_concurrent {}",
                        projects[j.project].name, projects[j.project].max_concurrent
                    ),
                });
            }
            a.take(j);
        }
        Ok(())
    }
}

/// Why a job may not join a run list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    GpuFull,
    CpuFull,
    AppMaxConcurrent,
    ProjectMaxConcurrent,
}
