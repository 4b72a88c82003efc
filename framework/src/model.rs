//! The simulated client's state: host, projects, jobs. Policies read it
//! through [`crate::View`]; only the simulator writes it.

use crate::rpc::RpcState;
use crate::scenario::Scenario;

/// Simulated seconds since the start of the run.
pub type Time = f64;

/// Index of a processing resource: 0 is the CPU, `1 + k` the host's k-th GPU type.
pub type Rsc = usize;
pub const CPU: Rsc = 0;

#[derive(Debug, Clone)]
pub struct GpuInfo {
    pub kind: String,
    pub count: f64,
    pub flops: f64,
}

/// What the client knows of its host.
#[derive(Debug, Clone)]
pub struct HostInfo {
    /// CPUs the client may use.
    pub ncpus: f64,
    pub cpu_flops: f64,
    pub gpus: Vec<GpuInfo>,
    pub disk_bytes: f64,
}

impl HostInfo {
    pub fn nrsc(&self) -> usize {
        1 + self.gpus.len()
    }
    pub fn ninstances(&self, r: Rsc) -> f64 {
        if r == CPU {
            self.ncpus
        } else {
            self.gpus[r - 1].count
        }
    }
    /// Peak FLOPS of one instance of `r`.
    pub fn instance_flops(&self, r: Rsc) -> f64 {
        if r == CPU {
            self.cpu_flops
        } else {
            self.gpus[r - 1].flops
        }
    }
    pub fn rsc_name(&self, r: Rsc) -> &str {
        if r == CPU {
            "cpu"
        } else {
            &self.gpus[r - 1].kind
        }
    }
    pub fn rsc_by_name(&self, name: &str) -> Option<Rsc> {
        if name == "cpu" {
            Some(CPU)
        } else {
            self.gpus.iter().position(|g| g.kind == name).map(|i| i + 1)
        }
    }
}

/// The user's preferences, in seconds.
#[derive(Debug, Clone)]
pub struct Prefs {
    pub sched_period: f64,
    pub work_buf_min: f64,
    pub work_buf_additional: f64,
    pub learn_availability: bool,
    pub step: f64,
}

impl Prefs {
    /// BOINC's `Btot`: the whole buffer, at least one second.
    pub fn work_buf_total(&self) -> f64 {
        (self.work_buf_min + self.work_buf_additional).max(1.0)
    }
}

#[derive(Debug, Clone)]
pub struct AppInfo {
    pub name: String,
    pub cpus: f64,
    /// The coprocessor it uses and how many instances, if any.
    pub gpu: Option<(Rsc, f64)>,
    /// Set when the app needs a GPU type this host lacks.
    pub missing_gpu: Option<String>,
    pub flops_estimate: f64,
    pub flops_mean: f64,
    pub flops_stddev: f64,
    pub weight: f64,
    pub input_bytes: f64,
    pub output_bytes: f64,
    pub failure_fraction: f64,
    /// Its jobs' input files stay after the job is reported.
    pub sticky_input: bool,
    pub sticky_priority: u8,
    /// Seconds from download to expiry of its files.
    pub sticky_expiry: f64,
}

impl AppInfo {
    /// The resource whose shortfall this app's jobs fill.
    pub fn rsc(&self) -> Rsc {
        self.gpu.map_or(CPU, |(r, _)| r)
    }
    /// Peak FLOPS a job of this app computes at on `host`: its GPU
    /// instances' if it uses a GPU, else its CPUs'.
    pub fn speed(&self, host: &HostInfo) -> f64 {
        match self.gpu {
            Some((r, n)) => n * host.instance_flops(r),
            None => self.cpus * host.cpu_flops,
        }
    }
    pub fn runs_on_host(&self) -> bool {
        self.missing_gpu.is_none()
    }
}

/// Counters kept per project for the figures of merit.
#[derive(Debug, Clone, Default)]
pub struct ProjectStats {
    pub jobs_on_time: u64,
    pub jobs_late: u64,
    pub jobs_failed: u64,
    pub rpcs: u64,
    pub rpc_failures: u64,
    /// Peak FLOPs of reported jobs, by outcome.
    pub flops_used: f64,
    pub flops_wasted: f64,
    /// Busy instance-seconds of reported jobs, per resource.
    pub busy_seconds: Vec<f64>,
    /// Monotony's stepped sums, in steps: R (steps since a job last ran) and sum of R^2.
    pub steps_since_ran: u64,
    pub q_steps: u128,
}

#[derive(Debug, Clone)]
pub struct ProjectState {
    pub name: String,
    pub resource_share: f64,
    pub latency_bound: f64,
    pub apps: Vec<AppInfo>,
    pub rpc: RpcState,
    /// Instance-seconds used per resource, cumulative to `usage_mark`.
    pub(crate) usage: Vec<f64>,
    /// Instances held now per resource by running jobs.
    pub running_instances: Vec<f64>,
    /// Exponentially averaged CPU seconds (the RPC document's `exp_avg_cpu`).
    pub exp_avg_cpu: f64,
    pub(crate) exp_mark: f64,
    pub stats: ProjectStats,
    pub has_rsc_apps: Vec<bool>,
    /// The server gives the three-state answer per resource.
    pub reports_resource_support: bool,
    /// The project's `deletion_policy`.
    pub deletion_policy: DeletionPolicy,
    /// The server makes a third pass with the space this project's own files hold.
    pub delete_from_self: bool,
}

/// Deletion priorities of `disk-management` (`client_types.h`).
pub const P_LOW: u8 = 1;
pub const P_MEDIUM: u8 = 3;
pub const P_HIGH: u8 = 5;

/// The order in which a project's files are deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeletionPolicy {
    /// Least recently used first (the default).
    #[default]
    Lru,
    /// Lowest priority first, in download order.
    Priority,
    /// Expired files first (at any priority), then least recently used.
    Expire,
}

impl DeletionPolicy {
    pub fn parse(s: &str) -> DeletionPolicy {
        match s {
            "priority" => DeletionPolicy::Priority,
            "expire" => DeletionPolicy::Expire,
            _ => DeletionPolicy::Lru,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Brought by a job.
    Input,
    /// Left by a finished job until it is reported.
    Output,
    /// Kept by the project (`[[project.sticky]]`).
    Sticky,
}

/// A file on the host (BOINC's `FILE_INFO`).
#[derive(Debug, Clone, PartialEq)]
pub struct FileInfo {
    pub id: u64,
    pub project: usize,
    pub kind: FileKind,
    pub bytes: f64,
    /// The job that brought or made it, while that job is on the host.
    pub job: Option<u64>,
    /// It stays on the host after its job is reported.
    pub sticky: bool,
    /// 1 (P_LOW) to 5 (P_HIGH).
    pub priority: u8,
    /// When it was downloaded (or written).
    pub created: Time,
    pub last_used: Time,
    /// Its expiry date (`exp_date`).
    pub expires: Time,
}

/// The files on the host and the user's limit on BOINC's disk usage.
#[derive(Debug, Clone, Default)]
pub struct DiskState {
    /// The simulator keeps files only for a disk manager that enforces limits.
    pub tracked: bool,
    /// In creation order (ids increase).
    pub files: Vec<FileInfo>,
    /// `total_limit`: the least of `disk_max_used_gb`, `disk_max_used_pct` of
    /// the disk, and the disk less non-BOINC usage less `disk_min_free_gb`.
    pub total_limit: f64,
    /// Space used by the core client itself (the simulated client uses none).
    pub core_usage: f64,
    /// Computation is suspended because nothing more could be deleted.
    pub suspended: bool,
    pub next_file_id: u64,
}

impl DiskState {
    /// Bytes of all projects' files (`all_Project_usage`).
    pub fn usage(&self) -> f64 {
        self.files.iter().map(|f| f.bytes).sum()
    }
    /// Bytes of `p`'s files (`Project_usage(p)`).
    pub fn project_usage(&self, p: usize) -> f64 {
        self.files
            .iter()
            .filter(|f| f.project == p)
            .map(|f| f.bytes)
            .sum()
    }
    /// `all_Projects_limit = total_limit - core_usage`.
    pub fn all_projects_limit(&self) -> f64 {
        (self.total_limit - self.core_usage).max(0.0)
    }
    pub fn file(&self, id: u64) -> Option<&FileInfo> {
        self.files
            .binary_search_by_key(&id, |f| f.id)
            .ok()
            .map(|i| &self.files[i])
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Downloaded, never started.
    Queued,
    Running,
    /// Started once, not running now (kept in memory: no work is lost).
    Preempted,
    /// Done computing; waits to be reported.
    Finished,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    /// Chosen by the weighted round-robin (debt) rule.
    RoundRobin,
    /// Chosen earliest-deadline-first because it is in deadline trouble.
    Deadline,
}

#[derive(Debug, Clone)]
pub struct Job {
    pub id: u64,
    pub project: usize,
    pub app: usize,
    pub cpus: f64,
    pub gpu: Option<(Rsc, f64)>,
    /// The project's FLOPs estimate.
    pub flops_estimate: f64,
    /// FLOPs the job really takes (known to the simulator; the client sees
    /// only the fraction done, as in BOINC's simulator).
    pub(crate) flops_real: f64,
    /// Peak FLOPS the job computes at.
    pub speed: f64,
    pub received: Time,
    pub deadline: Time,
    pub state: JobState,
    pub mode: RunMode,
    /// Set once the job has run in deadline mode.
    pub ever_deadline_mode: bool,
    /// When it last started or resumed.
    pub last_started: Time,
    pub finished_at: Time,
    /// The job crashed instead of finishing.
    pub failed: bool,
    pub(crate) fail_at_flops: Option<f64>,
    // Progress as of `since`; a running job advances at `speed` from there.
    pub(crate) flops_left: f64,
    pub(crate) run_seconds: f64,
    pub(crate) since: Time,
    /// Seconds computed before the run began (an initial job's progress):
    /// part of its run time, but not of this run's accounting.
    pub(crate) prior_seconds: f64,
}

impl Job {
    pub fn rsc(&self) -> Rsc {
        self.gpu.map_or(CPU, |(r, _)| r)
    }
    pub fn is_runnable(&self) -> bool {
        matches!(
            self.state,
            JobState::Queued | JobState::Running | JobState::Preempted
        )
    }
    pub fn has_started(&self) -> bool {
        matches!(self.state, JobState::Running | JobState::Preempted) || self.run_seconds > 0.0
    }
    /// Seconds it has computed during this run (for the accounting).
    pub fn seconds_this_run(&self) -> f64 {
        self.run_seconds - self.prior_seconds
    }
    /// Peak FLOPS of the instances the job holds while it runs.
    pub fn peak_flops(&self, host: &HostInfo) -> f64 {
        self.cpus * host.cpu_flops + self.gpu.map_or(0.0, |(r, n)| n * host.instance_flops(r))
    }
    /// Seconds of computing so far, at time `t` (not before the last event).
    pub fn run_seconds_at(&self, t: Time) -> f64 {
        if self.state == JobState::Running {
            self.run_seconds + (t - self.since).max(0.0)
        } else {
            self.run_seconds
        }
    }
    pub fn flops_left_at(&self, t: Time) -> f64 {
        if self.state == JobState::Running {
            (self.flops_left - self.speed * (t - self.since).max(0.0)).max(0.0)
        } else {
            self.flops_left
        }
    }
    /// Fraction done at `t`, exact as in BOINC's simulator.
    pub fn fraction_done_at(&self, t: Time) -> f64 {
        if self.state == JobState::Finished {
            1.0
        } else {
            (1.0 - self.flops_left_at(t) / self.flops_real).clamp(0.0, 1.0)
        }
    }
    /// The project's estimate of the job's run time on this host, without correction.
    pub fn estimated_seconds(&self) -> f64 {
        self.flops_estimate / self.speed
    }
}

/// Everything the client knows, shared read-only with the policies.
#[derive(Debug, Clone)]
pub struct ClientState {
    pub now: Time,
    pub host: HostInfo,
    pub prefs: Prefs,
    pub projects: Vec<ProjectState>,
    /// Jobs on the host in arrival order (queued, running, preempted, finished unreported).
    pub jobs: Vec<Job>,
    pub host_on: bool,
    /// Observed fraction of time the host was available (the v4 `active_frac`).
    pub observed_on_fraction: f64,
    pub(crate) usage_mark: Time,
    /// Seconds the host has been available, up to `usage_mark`.
    pub(crate) on_seconds: f64,
    /// When the CPU scheduler last ran.
    pub last_schedule: Time,
    pub last_rpc: Option<Time>,
    pub connection_interval: f64,
    /// The run's seed, for policies that draw at random.
    pub seed: u64,
    /// Lines policies logged (`View::log`), moved to the run's log after each step.
    pub(crate) policy_log: std::cell::RefCell<Vec<String>>,
    /// Files on the host and the disk limit.
    pub disk: DiskState,
}

/// The user's limit on BOINC's disk usage (BOINC's `allowed_disk_usage`):
/// the least of `disk_max_used_gb`, `disk_max_used_pct` of the disk, and the
/// disk less non-BOINC usage less `disk_min_free_gb`; never negative.
pub fn total_disk_limit(s: &Scenario) -> f64 {
    let gb = 1e9;
    let abs = s.client.disk_max_used_gb * gb;
    let pct = s.host.disk_gb * gb * s.client.disk_max_used_pct / 100.0;
    let min_free = (s.host.disk_gb - s.host.non_boinc_used_gb - s.client.disk_min_free_gb) * gb;
    abs.min(pct).min(min_free).max(0.0)
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
                    running_instances: vec![0.0; nrsc],
                    exp_avg_cpu: 0.0,
                    exp_mark: 0.0,
                    stats: ProjectStats {
                        busy_seconds: vec![0.0; nrsc],
                        ..Default::default()
                    },
                    has_rsc_apps,
                    reports_resource_support: p.reports_resource_support,
                    deletion_policy: DeletionPolicy::parse(&p.deletion_policy),
                    delete_from_self: p.delete_from_self,
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
            },
            projects,
            jobs: Vec::new(),
            host_on: true,
            observed_on_fraction: 1.0,
            usage_mark: 0.0,
            on_seconds: 0.0,
            last_schedule: f64::NEG_INFINITY,
            last_rpc: None,
            connection_interval: s.host.connection_interval_days * 86400.0,
            seed: s.seed,
            policy_log: std::cell::RefCell::new(Vec::new()),
            disk: DiskState {
                total_limit: total_disk_limit(s),
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
        self.jobs.iter().find(|j| j.id == id)
    }

    pub fn total_share(&self) -> f64 {
        self.projects.iter().map(|p| p.resource_share).sum()
    }
}
