//! The simulated client's state: host, projects, jobs, files. Policies read
//! it through [`crate::View`]; only the simulator writes it.

mod disk;
mod host;
mod job;
mod project;

pub use crate::time::Time;
pub use disk::*;
pub use host::*;
pub use job::*;
pub use project::*;

use crate::rpc::RpcState;
use crate::scenario::Scenario;

/// Everything the client knows, shared read-only with the policies.
#[derive(Debug, Clone)]
pub struct ClientState {
    pub now: Time,
    pub host: HostInfo,
    pub prefs: Prefs,
    pub projects: Vec<ProjectState>,
    /// Jobs on the host in arrival order (queued, running, preempted, finished unreported).
    pub jobs: Vec<Job>,
    /// The client runs (it can make RPCs).
    pub host_on: bool,
    /// Computing is allowed (the host is on and BOINC may compute: BOINC's
    /// `active_frac` is the fraction of on-time in which it may).
    pub cpu_allowed: bool,
    /// GPU computing is allowed (`gpu_active_frac`); implies `cpu_allowed`.
    pub gpu_allowed: bool,
    /// Observed fraction of time the host was available (the v4 `active_frac`).
    pub observed_on_fraction: f64,
    /// Observed fraction of time GPU computing was allowed (BOINC's
    /// `overall_gpu_frac`, by which today's client scales GPU jobs).
    pub observed_gpu_fraction: f64,
    pub(crate) usage_mark: Time,
    /// Seconds in which computing was allowed, up to `usage_mark`.
    pub(crate) available_seconds: f64,
    /// When the CPU scheduler last ran.
    pub last_schedule: Time,
    pub last_rpc: Option<Time>,
    pub connection_interval: f64,
    /// The run's seed, for policies that draw at random.
    pub seed: u64,
    /// Some project or app has a max_concurrent cap.
    pub any_max_concurrent: bool,
    /// Files on the host and the disk limit.
    pub disk: DiskState,
}

/// The user's limit on BOINC's disk usage (BOINC's `allowed_disk_usage`):
/// the least of `disk_max_used_gb`, `disk_max_used_pct` of the disk, and the
/// disk less non-BOINC usage less `disk_min_free_gb`; never negative.
pub fn total_disk_limit(s: &Scenario) -> f64 {
    s.disk_limit_bytes()
}

impl ClientState {
    pub fn new(s: &Scenario) -> ClientState {
        let host = HostInfo {
            ncpus: s.usable_cpus() as f64,
            cpu_flops: s.host.cpu_flops,
            gpus: s
                .host
                .gpus
                .iter()
                .map(|g| GpuInfo {
                    kind: g.kind.clone(),
                    count: g.count as f64,
                    flops: g.flops,
                })
                .collect(),
            disk_bytes: s.host.disk_gb * 1e9,
            strict_cpus: s.client.max_ncpus_pct < 100.0,
        };
        let nrsc = host.nrsc();
        let projects = s
            .projects
            .iter()
            .map(|p| {
                let apps: Vec<AppInfo> = p
                    .apps
                    .iter()
                    .map(|a| {
                        let (gpu, missing_gpu) = match &a.gpu {
                            None => (None, None),
                            Some(g) => match host.rsc_by_name(&g.kind) {
                                Some(r) if r != CPU => (Some((r, g.count)), None),
                                _ => (None, Some(g.kind.clone())),
                            },
                        };
                        AppInfo {
                            name: a.name.clone(),
                            cpus: a.cpus,
                            gpu,
                            missing_gpu,
                            flops_estimate: a.flops_estimate,
                            flops_mean: a.flops_mean,
                            flops_stddev: a.flops_stddev,
                            weight: a.weight,
                            input_bytes: a.input_mb * 1e6,
                            output_bytes: a.output_mb * 1e6,
                            failure_fraction: a.failure_fraction,
                            sticky_input: a.sticky_input,
                            sticky_priority: a.sticky_priority,
                            sticky_expiry: a.sticky_expiry_days * 86400.0,
                            latency_bound: a.latency_bound_days.unwrap_or(p.latency_bound_days)
                                * 86400.0,
                            max_concurrent: a.max_concurrent,
                        }
                    })
                    .collect();
                let mut has_rsc_apps = vec![false; nrsc];
                for a in apps.iter().filter(|a| a.runs_on_host()) {
                    has_rsc_apps[a.rsc()] = true;
                }
                ProjectState {
                    name: p.name.clone(),
                    resource_share: p.resource_share,
                    latency_bound: p.latency_bound_days * 86400.0,
                    apps,
                    rpc: RpcState::default(),
                    usage: vec![0.0; nrsc],
                    usage_rate: vec![0.0; nrsc],
                    running_instances: vec![0.0; nrsc],
                    exp_avg_cpu: 0.0,
                    exp_mark: 0.0,
                    rec: 0.0,
                    held: vec![0.0; nrsc],
                    held_extra_cpus: 0.0,
                    rec_mark: vec![0.0; nrsc],
                    stats: ProjectStats {
                        busy_seconds: vec![0.0; nrsc],
                        ..Default::default()
                    },
                    has_rsc_apps,
                    reports_resource_support: p.reports_resource_support,
                    deletion_policy: DeletionPolicy::parse(&p.deletion_policy),
                    delete_from_self: p.delete_from_self,
                    max_concurrent: p.max_concurrent,
                }
            })
            .collect();
        ClientState {
            now: 0.0,
            host,
            prefs: Prefs {
                sched_period: s.client.sched_period_minutes * 60.0,
                work_buf_min: s.client.work_buf_min_days * 86400.0,
                work_buf_additional: s.client.work_buf_additional_days * 86400.0,
                learn_availability: s.client.learn_availability,
                step: s.step_seconds,
                rec_half_life: s.client.rec_half_life_days * 86400.0,
            },
            projects,
            jobs: Vec::new(),
            host_on: true,
            cpu_allowed: true,
            gpu_allowed: true,
            observed_on_fraction: 1.0,
            observed_gpu_fraction: 1.0,
            usage_mark: 0.0,
            available_seconds: 0.0,
            last_schedule: f64::NEG_INFINITY,
            last_rpc: None,
            connection_interval: s.host.connection_interval_days * 86400.0,
            seed: s.seed,
            any_max_concurrent: s
                .projects
                .iter()
                .any(|p| p.max_concurrent > 0 || p.apps.iter().any(|a| a.max_concurrent > 0)),
            disk: DiskState {
                total_limit: total_disk_limit(s),
                capacity: ((s.host.disk_gb - s.host.non_boinc_used_gb) * 1e9).max(0.0),
                ..Default::default()
            },
        }
    }

    /// Starts keeping files: the projects' sticky files of the scenario (the
    /// simulator adds the initial jobs' files).
    pub fn track_files(&mut self, s: &Scenario) {
        self.disk.tracked = true;
        for (p, sp) in s.projects.iter().enumerate() {
            for f in &sp.sticky {
                let created = -f.age_days * 86400.0;
                self.add_file(FileInfo {
                    id: 0,
                    project: p,
                    kind: FileKind::Sticky,
                    bytes: f.size_mb * 1e6,
                    job: None,
                    sticky: true,
                    priority: f.priority,
                    created,
                    last_used: created,
                    expires: created + f.expiry_days * 86400.0,
                });
            }
        }
    }

    /// Adds a file (its id is assigned here); returns the id.
    pub fn add_file(&mut self, mut f: FileInfo) -> u64 {
        f.id = self.disk.next_file_id;
        self.disk.next_file_id += 1;
        let id = f.id;
        self.disk.files.push(f);
        id
    }

    /// A file that a queued or running job needs, or the output of a result
    /// waiting to be reported: it cannot be deleted.
    pub fn file_referenced(&self, f: &FileInfo) -> bool {
        let Some(id) = f.job else { return false };
        match self.jobs.binary_search_by_key(&id, |j| j.id) {
            Ok(i) => match f.kind {
                FileKind::Output => true,
                _ => self.jobs[i].is_runnable(),
            },
            Err(_) => false,
        }
    }

    /// A job that may be deleted to free its files: queued, never started.
    pub fn job_deletable(&self, j: &Job) -> bool {
        j.state == JobState::Queued && j.run_seconds <= 0.0
    }

    pub fn job(&self, id: u64) -> Option<&Job> {
        self.job_index(id).map(|i| &self.jobs[i])
    }

    /// Where job `id` is in `jobs`. Jobs are kept in id order: ids count
    /// up as jobs arrive, arrivals are appended and removals keep the order
    /// (`Simulation::push_job` asserts it in debug builds).
    pub fn job_index(&self, id: u64) -> Option<usize> {
        self.jobs.binary_search_by_key(&id, |j| j.id).ok()
    }

    /// `p`'s exponentially averaged CPU seconds at `t` (not before the last
    /// event): decayed from the last fold, plus what its jobs used since.
    pub fn exp_avg_cpu_at(&self, p: usize, t: Time) -> f64 {
        let pr = &self.projects[p];
        if !self.host_on || t <= self.usage_mark {
            return pr.exp_avg_cpu;
        }
        let dt = t - self.usage_mark;
        crate::rpc::decay_exp_avg(pr.exp_avg_cpu, dt, pr.usage_rate[CPU] * dt)
    }

    /// `p`'s recent estimated credit at `t` (not before the last event):
    /// folded from the last event with the instances its computing jobs
    /// hold now (CPUs not slowed by over-commitment, as BOINC credits).
    pub fn rec_at(&self, p: usize, t: Time) -> f64 {
        let pr = &self.projects[p];
        if t <= self.usage_mark {
            return pr.rec;
        }
        let dt = t - self.usage_mark;
        let credit = crate::rec::credit((pr.usage_rate.iter().enumerate()).map(|(r, x)| {
            let held = if r == CPU { x + pr.held_extra_cpus } else { *x };
            (held * dt, self.host.instance_flops(r))
        }));
        crate::rec::fold(pr.rec, dt, credit, self.prefs.rec_half_life)
    }

    pub fn total_share(&self) -> f64 {
        self.projects.iter().map(|p| p.resource_share).sum()
    }
}
