//! The end of a run: the timeline closed, the invariants checked, the
//! figures of merit computed (formulas in `metrics`).

use super::{SimError, Simulation};
use crate::metrics::{self, DiskMetrics, Metrics, ProjectMetrics, ResourceMetrics, RunReport};
use crate::registry::Family;
use crate::time::Time;

impl Simulation {
    /// Ends every stretch still open (the jobs computing at the end).
    pub(super) fn close_segments(&mut self, t: Time) {
        if let Some(tl) = &mut self.timeline {
            tl.end_all(t);
        }
    }

    pub(super) fn close_timeline(&mut self) {
        let t = self.st.now;
        self.close_segments(t);
        if let Some(tl) = &mut self.timeline {
            if let Some(last) = tl.host_off.last_mut() {
                if last.1.is_infinite() {
                    last.1 = t;
                }
            }
            tl.allowed_at(t, false, false);
            tl.finish(&self.st);
        }
    }

    /// The accounting invariant (see `accounts`).
    pub(super) fn check_invariants(&self) -> Result<(), String> {
        self.acc.check(&self.st)
    }

    /// On a host whose projects have apps for its GPUs, a fetcher that
    /// never asked for GPU work by resource (WF1 and WF2 ask for CPU seconds
    /// only) and left a GPU idle a fifth of the time it could compute, or a
    /// GPU-only project without any work, is named in a warning; the advice
    /// to use the GPU fetcher only when it asked for nothing by resource.
    pub(super) fn warnings(&self) -> Vec<String> {
        let host = &self.st.host;
        let projects = &self.st.projects;
        let gpus: Vec<usize> = (1..host.nrsc())
            .filter(|&r| projects.iter().any(|p| p.has_rsc_apps[r]))
            .collect();
        if gpus.is_empty() || gpus.iter().any(|&r| self.asked[r]) {
            return Vec::new();
        }
        let mut what = Vec::new();
        for &r in &gpus {
            let name = host.rsc_name(r);
            // Of the time it could compute, jobs still on the host included
            // (the idleness metric counts only reported jobs' work).
            let avail = self.acc.avail_flops[r];
            let idle = if avail > 0.0 {
                self.acc.idle_flops[r] / avail
            } else {
                0.0
            };
            if idle > 0.2 {
                what.push(format!(
                    "the `{name}` GPU was idle {:.0}% of the time it could compute",
                    idle * 100.0
                ));
            }
        }
        // Never computed: no job of its ran on the host, reported or not.
        let starved: Vec<&str> = projects
            .iter()
            .filter(|p| !p.has_rsc_apps[crate::model::CPU] && p.usage.iter().all(|&u| u == 0.0))
            .map(|p| p.name.as_str())
            .collect();
        if !starved.is_empty() {
            what.push(format!(
                "{} (GPU apps only) never computed",
                starved
                    .iter()
                    .map(|n| format!("project `{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if what.is_empty() {
            return Vec::new();
        }
        let fetch = &self.pol.names[Family::Fetch.index()];
        // A fetcher that asked for CPU work by resource knows resources: it
        // had reasons of its own (a full queue, say) not to ask for a GPU's.
        // Only a fetcher seen asking in seconds of any work is said to be
        // written for CPUs: one that asked nothing (a full queue) may well
        // ask by resource.
        vec![if self.asked[crate::model::CPU] || !self.asked_seconds {
            format!(
                "{}: fetch policy `{fetch}` asked for no GPU work in this run",
                what.join("; ")
            )
        } else {
            format!(
                "{}: fetch policy `{fetch}` asked for work only in seconds of any kind, never for GPU work by resource (it was written for CPUs); `fetch=gpu,send=gpu` does",
                what.join("; ")
            )
        }]
    }

    /// The disk manager's limit of each project, for the report.
    fn project_limits(&self) -> Result<Vec<Option<f64>>, SimError> {
        let v = super::live_view!(self);
        (0..self.st.projects.len())
            .map(|p| {
                let l = self
                    .pol
                    .disk
                    .project_limit(&v, p)
                    .map_err(|e| self.policy_err(Family::Disk, e))?;
                match l {
                    Some(x) if !(x.is_finite() && x >= 0.0) => Err(self.invalid(
                        Family::Disk,
                        format!("limit {x} bytes for project {p} (must be finite, 0 or more)"),
                    )),
                    _ => Ok(l),
                }
            })
            .collect()
    }

    pub(super) fn report(&self) -> Result<RunReport, SimError> {
        let limits = if self.st.disk.tracked {
            self.project_limits()?
        } else {
            vec![None; self.st.projects.len()]
        };
        let host = &self.st.host;
        let nrsc = host.nrsc();
        let acc = &self.acc;
        let used: f64 = acc.used_flops.iter().sum();
        let wasted: f64 = acc.wasted_flops.iter().sum();
        let idle: f64 = acc.idle_flops.iter().sum();
        let total = used + wasted + idle;
        let flops: Vec<f64> = self
            .st
            .projects
            .iter()
            .map(|p| p.stats.flops_used + p.stats.flops_wasted)
            .collect();
        let shares: Vec<f64> = self.st.projects.iter().map(|p| p.resource_share).collect();
        let dt3 = self.clock.dt.powi(3);
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
                acc.available_seconds,
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
            let t = acc.used_flops[r] + acc.wasted_flops[r] + acc.idle_flops[r];
            let rm = ResourceMetrics {
                idleness: r6(metrics::ratio(acc.idle_flops[r], t)),
                flops_used: r6(acc.used_flops[r]),
                flops_wasted: r6(acc.wasted_flops[r]),
                flops_idle: r6(acc.idle_flops[r]),
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
                    disk_limit_gb: limits[i].map(|b| r6(b / 1e9)),
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
            jobs_failed_disk_full: self.disk.jobs_failed_disk_full,
        });
        Ok(RunReport {
            scenario: self.scenario_name.clone(),
            policy: self.policy_name.clone(),
            seed: self.seed,
            metrics: m,
            resources,
            projects,
            disk,
        })
    }
}
