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
    /// With max_concurrent caps: jobs admitted per project and per
    /// (project, app), the app's at `app_at[project] + app`; empty without.
    project_jobs: Vec<u32>,
    app_jobs: Vec<u32>,
    app_at: Vec<usize>,
    project_cap: Vec<u32>,
    app_cap: Vec<u32>,
}

impl Admission {
    /// An empty host. (Without caps it allocates only the free instances:
    /// schedulers make one at every call.)
    pub fn new(host: &HostInfo, projects: &[ProjectState]) -> Admission {
        let capped = projects
            .iter()
            .any(|p| p.max_concurrent > 0 || p.apps.iter().any(|a| a.max_concurrent > 0));
        let mut a = Admission {
            ncpus: host.ncpus,
            strict: host.strict_cpus,
            cpu_used: 0.0,
            free: (0..host.nrsc()).map(|r| host.ninstances(r)).collect(),
            project_jobs: Vec::new(),
            app_jobs: Vec::new(),
            app_at: Vec::new(),
            project_cap: Vec::new(),
            app_cap: Vec::new(),
        };
        if capped {
            for p in projects {
                a.app_at.push(a.app_cap.len());
                a.project_cap.push(p.max_concurrent);
                a.app_cap.extend(p.apps.iter().map(|x| x.max_concurrent));
            }
            a.project_jobs = vec![0; projects.len()];
            a.app_jobs = vec![0; a.app_cap.len()];
        }
        a
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
        if self.project_cap.is_empty() {
            return None;
        }
        let cap = |n: u32, c: u32| c > 0 && n >= c;
        let a = self.app_at[j.project] + j.app;
        if cap(self.app_jobs[a], self.app_cap[a]) {
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
        if !self.project_cap.is_empty() {
            self.project_jobs[j.project] += 1;
            self.app_jobs[self.app_at[j.project] + j.app] += 1;
        }
    }

    /// Whether `j` stays within its app's and its project's max_concurrent
    /// given the jobs counted so far (instances not considered).
    pub fn caps_admit(&self, j: &Job) -> bool {
        if self.project_cap.is_empty() {
            return true;
        }
        let cap = |n: u32, c: u32| c > 0 && n >= c;
        let a = self.app_at[j.project] + j.app;
        !cap(self.app_jobs[a], self.app_cap[a])
            && !cap(self.project_jobs[j.project], self.project_cap[j.project])
    }

    /// Counts `j` against its caps only (a list of candidates that may hold
    /// more jobs than the host runs).
    pub fn count_caps(&mut self, j: &Job) {
        if !self.project_cap.is_empty() {
            self.project_jobs[j.project] += 1;
            self.app_jobs[self.app_at[j.project] + j.app] += 1;
        }
    }

    /// Undoes [`Admission::take`].
    pub fn give(&mut self, j: &Job) {
        self.cpu_used -= j.cpus;
        self.free[CPU] += j.cpus;
        if let Some((r, n)) = j.gpu {
            self.free[r] += n;
        }
        if !self.project_cap.is_empty() {
            self.project_jobs[j.project] -= 1;
            self.app_jobs[self.app_at[j.project] + j.app] -= 1;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{add_job, state, JobSpec};

    /// `ncpus` CPUs and a GPU; project A: a GPU app holding `gpu_cpus` CPUs
    /// (app 0) and a CPU app (app 1, 1 CPU, capped at `cap` jobs).
    fn host(ncpus: u32, gpu_cpus: f64, pct: f64, cap: u32) -> crate::model::ClientState {
        state(&format!(
            r#"
name = "t"
duration_days = 1
[host]
ncpus = {ncpus}
cpu_flops = 1e9
[[host.gpu]]
kind = "nvidia"
count = 1
flops = 1e10
[client]
max_ncpus_pct = {pct}
[[project]]
name = "A"
resource_share = 1
latency_bound_days = 1
[[project.app]]
name = "gpu"
cpus = {gpu_cpus}
gpu = {{ kind = "nvidia", count = 1 }}
flops_estimate = 1e12
flops_mean = 1e12
[[project.app]]
name = "cpu"
max_concurrent = {cap}
flops_estimate = 1e12
flops_mean = 1e12
"#
        ))
    }

    /// Adds `n` queued jobs of `app`; returns their ids.
    fn jobs(st: &mut crate::model::ClientState, app: usize, n: usize) -> Vec<u64> {
        (0..n)
            .map(|_| {
                let mut s = JobSpec::queued(0, 1e12, 86400.0);
                s.app = app;
                add_job(st, s)
            })
            .collect()
    }

    fn check(st: &crate::model::ClientState, ids: &[u64]) -> Result<(), String> {
        let listed: Vec<&Job> = ids.iter().map(|&i| st.job(i).unwrap()).collect();
        Admission::admits_all(&st.host, &st.projects, &listed)
    }

    #[test]
    fn a_cpu_job_runs_beside_a_gpu_job_that_holds_part_of_the_cpu() {
        // 1 CPU: a 0.01-CPU GPU job and a 1-CPU job, 1.01 CPUs in use.
        let mut st = host(1, 0.01, 100.0, 0);
        let g = jobs(&mut st, 0, 1);
        let c = jobs(&mut st, 1, 2);
        assert_eq!(check(&st, &[g[0], c[0]]), Ok(()));
        // Two CPU jobs: the second would start with 1.01 in use, not below 1.
        assert!(check(&st, &[g[0], c[0], c[1]]).is_err());
        // The same with a half-CPU GPU job: 1.5 in use.
        let mut st = host(1, 0.5, 100.0, 0);
        let g = jobs(&mut st, 0, 1);
        let c = jobs(&mut st, 1, 1);
        assert_eq!(check(&st, &[g[0], c[0]]), Ok(()));
    }

    #[test]
    fn the_order_that_admits_every_job_is_found() {
        // 2 CPUs, a GPU job holding 1 CPU, two CPU jobs: GPU first admits only
        // one CPU job (1 + 1 = 2 is not below 2), CPU jobs first admit all
        // three (0, 1 below 2; then 2 + 1 <= 2 + 1 for the GPU job).
        let mut st = host(2, 1.0, 100.0, 0);
        let g = jobs(&mut st, 0, 1);
        let c = jobs(&mut st, 1, 2);
        assert_eq!(check(&st, &[g[0], c[0], c[1]]), Ok(()));
        let mut a = Admission::new(&st.host, &st.projects);
        a.take(st.job(g[0]).unwrap());
        a.take(st.job(c[0]).unwrap());
        assert_eq!(a.refusal(st.job(c[1]).unwrap()), Some(Refusal::CpuFull));
    }

    #[test]
    fn a_gpu_job_may_push_the_cpus_to_one_past_the_count_not_further() {
        let mut st = host(1, 1.0, 100.0, 0);
        let c = jobs(&mut st, 1, 1);
        let g = jobs(&mut st, 0, 1);
        // 1 CPU job, then the GPU job: 1 + 1 <= 1 + 1.
        assert_eq!(check(&st, &[c[0], g[0]]), Ok(()));
        let mut a = Admission::new(&st.host, &st.projects);
        a.take(st.job(c[0]).unwrap());
        a.take(st.job(c[0]).unwrap()); // 2 in use
        assert_eq!(a.refusal(st.job(g[0]).unwrap()), Some(Refusal::CpuFull));
    }

    #[test]
    fn a_user_limit_on_cpus_is_strict() {
        // 2 CPUs at 50%: 1 usable, and no job may push past it.
        let mut st = host(2, 0.01, 50.0, 0);
        assert!(st.host.strict_cpus);
        let g = jobs(&mut st, 0, 1);
        let c = jobs(&mut st, 1, 1);
        assert!(check(&st, &[g[0], c[0]]).is_err());
        assert_eq!(check(&st, &[c[0]]), Ok(()));
    }

    #[test]
    fn max_concurrent_caps_an_app() {
        let mut st = host(8, 0.0, 100.0, 2);
        let c = jobs(&mut st, 1, 3);
        assert_eq!(check(&st, &[c[0], c[1]]), Ok(()));
        let e = check(&st, &[c[0], c[1], c[2]]).unwrap_err();
        assert!(e.contains("max_concurrent 2"), "{e}");
        let mut a = Admission::new(&st.host, &st.projects);
        a.take(st.job(c[0]).unwrap());
        a.take(st.job(c[1]).unwrap());
        assert_eq!(
            a.refusal(st.job(c[2]).unwrap()),
            Some(Refusal::AppMaxConcurrent)
        );
        a.give(st.job(c[1]).unwrap());
        assert!(a.fits(st.job(c[2]).unwrap()));
    }
}
