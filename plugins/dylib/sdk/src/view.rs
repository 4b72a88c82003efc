//! The safe, borrowed views a plugin's policies get: the host's
//! `#[repr(C)]` snapshot behind accessors.

use crate::abi::{self, File, Host, Job, Prefs, ProjectRsc, ReportedJob, RscInfo};
use crate::decision::WorkRequest;
use crate::error::PolicyResult;
use crate::strided::{str_in, Strided};
use vcsim_rng::SimRng;

/// A plugin's random stream `name` at step `step` of the run of `seed`.
fn plugin_stream(seed: u64, step: u64, name: &str) -> SimRng {
    vcsim_rng::stream(seed, &format!("plugin:{name}"), step)
}

/// A borrowed view of the client's state at one (possibly projected) time.
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub(crate) raw: &'a abi::View,
    pub(crate) rsc: Strided<'a, RscInfo>,
    pub(crate) projects: Strided<'a, abi::Project>,
    pub(crate) apps: Strided<'a, abi::App>,
    pub(crate) project_rsc: Strided<'a, ProjectRsc>,
    pub(crate) jobs: Strided<'a, Job>,
    pub(crate) files: Strided<'a, File>,
}

impl<'a> View<'a> {
    /// The view's simulated time.
    pub fn now(&self) -> f64 {
        self.raw.now
    }
    /// The run's seed.
    pub fn seed(&self) -> u64 {
        self.raw.seed
    }
    /// The index of the step the view is at.
    pub fn step(&self) -> u64 {
        self.raw.step
    }
    /// A random stream named `name`, derived from the run's seed and the
    /// view's step: the same view gives the same draws, so that a pure
    /// method (`request`) may draw. Two streams of different names are
    /// independent; a stream restarts at every step.
    pub fn rng(&self, name: &str) -> SimRng {
        plugin_stream(self.raw.seed, self.raw.step, name)
    }
    pub fn host(&self) -> &'a Host {
        &self.raw.host
    }
    pub fn prefs(&self) -> &'a Prefs {
        &self.raw.prefs
    }
    /// Number of resources (CPU + GPU types).
    pub fn nrsc(&self) -> usize {
        self.rsc.len()
    }
    pub fn rsc(&self, r: usize) -> &'a RscInfo {
        self.rsc.at(r)
    }
    pub fn rsc_name(&self, r: usize) -> &'a str {
        let x = self.rsc.at(r);
        str_in(x, x.name)
    }
    pub fn nprojects(&self) -> usize {
        self.projects.len()
    }
    pub fn project(&self, p: usize) -> Project<'a> {
        let n = self.rsc.len();
        Project {
            index: p,
            since_2_2: self.since_2_2(),
            raw: self.projects.at(p),
            rsc: self.project_rsc.range(p * n, (p + 1) * n),
            apps: self.apps,
        }
    }
    pub fn projects(&self) -> impl ExactSizeIterator<Item = Project<'a>> + 'a {
        let v = *self;
        (0..v.projects.len()).map(move |p| v.project(p))
    }
    /// Every project's apps, project by project ([`App::index`] is the
    /// position here).
    pub fn apps(&self) -> impl ExactSizeIterator<Item = App<'a>> + 'a {
        let apps = self.apps;
        (0..apps.len()).map(move |i| App {
            index: i,
            raw: apps.at(i),
        })
    }
    /// App `app` of project `project` (a job's `project` and `app`).
    pub fn app(&self, project: usize, app: usize) -> App<'a> {
        self.project(project).app(app)
    }
    /// The app of a job of this view.
    pub fn app_of(&self, j: &Job) -> App<'a> {
        self.app(j.project, j.app)
    }
    /// Jobs on the host in arrival order.
    pub fn jobs(&self) -> Strided<'a, Job> {
        self.jobs
    }
    pub fn job(&self, id: u64) -> Option<&'a Job> {
        self.jobs.iter().find(|j| j.id == id)
    }
    /// The host estimator's remaining run time of a job of this view.
    pub fn remaining_seconds(&self, j: &Job) -> f64 {
        j.remaining_seconds
    }
    pub fn share_fraction(&self, p: usize) -> f64 {
        self.projects[p].share_fraction
    }
    pub fn contactable(&self, p: usize) -> bool {
        self.projects[p].contactable != 0
    }
    pub fn project_has_runnable(&self, p: usize) -> bool {
        self.projects[p].has_runnable != 0
    }
    pub fn usage_seconds(&self, p: usize, r: usize) -> f64 {
        self.project(p).rsc(r).usage_seconds
    }
    pub fn idle_instances(&self, r: usize) -> f64 {
        self.rsc[r].idle_instances
    }
    pub fn on_fraction(&self) -> f64 {
        self.raw.on_fraction
    }
    pub fn available_seconds(&self) -> f64 {
        self.raw.available_seconds
    }
    pub fn host_on(&self) -> bool {
        self.raw.host_on != 0
    }
    /// Computing is allowed now (ABI 2.1; a 2.0 host's view says nothing,
    /// and this is then whether the host is on).
    pub fn cpu_allowed(&self) -> bool {
        if self.has(std::mem::offset_of!(abi::View, cpu_allowed)) {
            self.raw.cpu_allowed != 0
        } else {
            self.host_on()
        }
    }
    /// vcsim will read this call's reasons (ABI 2.3): the run explains, and
    /// the call's decision may have one. Elsewhere a reason is dropped, so
    /// a policy may skip building it.
    pub fn explaining(&self) -> bool {
        self.has(std::mem::offset_of!(abi::View, reason)) && !self.raw.reason.is_null()
    }
    /// GPU computing is allowed now (ABI 2.1; else as `cpu_allowed`).
    pub fn gpu_allowed(&self) -> bool {
        if self.has(std::mem::offset_of!(abi::View, gpu_allowed)) {
            self.raw.gpu_allowed != 0
        } else {
            self.cpu_allowed()
        }
    }
    /// Whether the host's view reaches the byte at `offset`.
    fn has(&self, offset: usize) -> bool {
        (self.raw.size as usize) > offset
    }
    /// The host speaks ABI 2.2 or later: its view and its projects carry
    /// what 2.2 added.
    fn since_2_2(&self) -> bool {
        self.has(std::mem::offset_of!(abi::View, list_sim))
    }
    /// Project `p`'s recent estimated credit (today's client's REC), in
    /// credits per day, at the view's time (ABI 2.2; a 2.1 host's view says
    /// nothing, and this is then 0 for every project: a client with no
    /// history, so that REC-based priorities fall back to the shares).
    pub fn rec(&self, p: usize) -> f64 {
        let x = self.projects.at(p);
        if self.since_2_2() {
            x.rec
        } else {
            0.0
        }
    }
    /// The half-life of REC, seconds (ABI 2.2; else BOINC's default, 10
    /// days).
    pub fn rec_half_life(&self) -> f64 {
        if self.since_2_2() {
            self.raw.rec_half_life
        } else {
            10.0 * 86400.0
        }
    }
    /// Today's client's simulation of the view (BOINC's `RR_SIM`: list
    /// scheduling, GPUs first, the projects in the order the client is
    /// built with; the one vcsim's `cs3` and `wf3` use), computed by the
    /// host when a plugin first asks in a call and the same for the rest of
    /// the call.
    ///
    /// `Ok(None)` on a host older than ABI 2.2 (it has no simulation to
    /// offer: a policy then falls back to its own, or refuses to run with
    /// an error saying so); an error if the host's simulation failed (its
    /// estimator's error).
    pub fn list_sim(&self) -> PolicyResult<Option<ListSim<'a>>> {
        if !self.since_2_2() {
            return Ok(None);
        }
        let parts = crate::callbacks::list_sim(self.raw).map_err(crate::error::PolicyError::new)?;
        Ok(parts.map(|(rsc, deadlines_missed)| ListSim {
            rsc,
            deadlines_missed,
        }))
    }
    pub fn last_schedule(&self) -> f64 {
        self.raw.last_schedule
    }
    pub fn last_rpc(&self) -> Option<f64> {
        (!self.raw.last_rpc.is_nan()).then_some(self.raw.last_rpc)
    }
    pub fn connection_interval(&self) -> f64 {
        self.raw.connection_interval
    }
    /// The files on the host and the user's disk limits.
    pub fn disk(&self) -> DiskView<'a> {
        DiskView {
            raw: self.raw,
            files: self.files,
        }
    }
    /// The job may be deleted to free its files: queued, never started.
    pub fn job_deletable(&self, j: &Job) -> bool {
        j.state == abi::JOB_QUEUED && j.has_started == 0
    }
}

/// One project of a [`View`].
#[derive(Clone, Copy)]
pub struct Project<'a> {
    index: usize,
    /// The host's view has what ABI 2.2 added.
    since_2_2: bool,
    raw: &'a abi::Project,
    rsc: Strided<'a, ProjectRsc>,
    /// All the view's apps.
    apps: Strided<'a, abi::App>,
}

impl<'a> Project<'a> {
    /// Its index in the view.
    pub fn index(&self) -> usize {
        self.index
    }
    pub fn name(&self) -> &'a str {
        str_in(self.raw, self.raw.name)
    }
    pub fn resource_share(&self) -> f64 {
        self.raw.resource_share
    }
    pub fn share_fraction(&self) -> f64 {
        self.raw.share_fraction
    }
    pub fn latency_bound(&self) -> f64 {
        self.raw.latency_bound
    }
    pub fn exp_avg_cpu(&self) -> f64 {
        self.raw.exp_avg_cpu
    }
    /// Its recent estimated credit (REC), as [`View::rec`] (ABI 2.2; 0 from
    /// a 2.1 host).
    pub fn rec(&self) -> f64 {
        if self.since_2_2 {
            self.raw.rec
        } else {
            0.0
        }
    }
    pub fn contactable(&self) -> bool {
        self.raw.contactable != 0
    }
    pub fn has_runnable(&self) -> bool {
        self.raw.has_runnable != 0
    }
    /// At most this many of its jobs may run at once (0: no cap).
    pub fn max_concurrent(&self) -> u32 {
        self.raw.max_concurrent
    }
    /// The order in which its files are deleted.
    pub fn deletion_policy(&self) -> DeletionPolicy {
        match self.raw.deletion_policy {
            abi::DELETE_PRIORITY => DeletionPolicy::Priority,
            abi::DELETE_EXPIRE => DeletionPolicy::Expire,
            _ => DeletionPolicy::Lru,
        }
    }
    pub fn napps(&self) -> usize {
        self.raw.napps
    }
    /// Its app `a` (a job's `app`).
    pub fn app(&self, a: usize) -> App<'a> {
        assert!(
            a < self.raw.napps,
            "project {} has {} apps, not {}",
            self.index,
            self.raw.napps,
            a + 1
        );
        let i = self.raw.first_app + a;
        App {
            index: i,
            raw: self.apps.at(i),
        }
    }
    /// Its apps.
    pub fn apps(&self) -> impl ExactSizeIterator<Item = App<'a>> + 'a {
        let p = *self;
        (0..p.raw.napps).map(move |a| p.app(a))
    }
    pub fn rsc(&self, r: usize) -> &'a ProjectRsc {
        self.rsc.at(r)
    }
    /// It has apps for resource `r` on this host.
    pub fn has_rsc_apps(&self, r: usize) -> bool {
        self.rsc[r].has_apps != 0
    }
}

/// One app of a project.
#[derive(Clone, Copy)]
pub struct App<'a> {
    index: usize,
    raw: &'a abi::App,
}

impl<'a> App<'a> {
    /// Its position in [`View::apps`] (for per-app tables in a policy).
    pub fn index(&self) -> usize {
        self.index
    }
    /// Its project.
    pub fn project(&self) -> usize {
        self.raw.project
    }
    pub fn name(&self) -> &'a str {
        str_in(self.raw, self.raw.name)
    }
    /// CPUs a job of it uses.
    pub fn cpus(&self) -> f64 {
        self.raw.cpus
    }
    /// The GPU resource it uses and how many instances, if any.
    pub fn gpu(&self) -> Option<(usize, f64)> {
        (self.raw.gpu_rsc != 0).then_some((self.raw.gpu_rsc, self.raw.gpu_count))
    }
    /// The resource whose shortfall its jobs fill: its GPU, or the CPU.
    pub fn rsc(&self) -> usize {
        self.raw.gpu_rsc
    }
    /// The project's FLOPs estimate of its jobs.
    pub fn flops_estimate(&self) -> f64 {
        self.raw.flops_estimate
    }
    /// Its jobs' latency bound in seconds (its own, else its project's).
    pub fn latency_bound(&self) -> f64 {
        self.raw.latency_bound
    }
    /// At most this many of its jobs may run at once (0: no cap).
    pub fn max_concurrent(&self) -> u32 {
        self.raw.max_concurrent
    }
    /// False if it needs a GPU type this host lacks.
    pub fn runs_on_host(&self) -> bool {
        self.raw.runs_on_host != 0
    }
}

/// What an estimator sees besides the job (not the other jobs).
#[derive(Clone, Copy)]
pub struct EstimateView<'a> {
    pub(crate) raw: &'a abi::EstimateView,
    pub(crate) rsc: Strided<'a, RscInfo>,
}

impl<'a> EstimateView<'a> {
    pub fn now(&self) -> f64 {
        self.raw.now
    }
    /// The run's seed.
    pub fn seed(&self) -> u64 {
        self.raw.seed
    }
    /// The index of the step the view is at.
    pub fn step(&self) -> u64 {
        self.raw.step
    }
    /// A random stream named `name`, as [`View::rng`]: the same for the
    /// same seed, step and name, whatever the family.
    pub fn rng(&self, name: &str) -> SimRng {
        plugin_stream(self.raw.seed, self.raw.step, name)
    }
    pub fn host(&self) -> &'a Host {
        &self.raw.host
    }
    pub fn prefs(&self) -> &'a Prefs {
        &self.raw.prefs
    }
    pub fn nrsc(&self) -> usize {
        self.rsc.len()
    }
    pub fn rsc(&self, r: usize) -> &'a RscInfo {
        self.rsc.at(r)
    }
    pub fn rsc_name(&self, r: usize) -> &'a str {
        let x = self.rsc.at(r);
        str_in(x, x.name)
    }
}

/// The order in which a project's files are deleted (its `deletion_policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeletionPolicy {
    /// Least recently used first (the default).
    Lru,
    /// Lowest priority first, in download order.
    Priority,
    /// Expired files first, then least recently used.
    Expire,
}

/// The files on the host and the user's limit on BOINC's disk usage
/// ([`View::disk`]). The files are kept only while the run's disk manager
/// enforces limits.
#[derive(Clone, Copy)]
pub struct DiskView<'a> {
    raw: &'a abi::View,
    files: Strided<'a, File>,
}

impl<'a> DiskView<'a> {
    /// The files, in creation order (ids increase).
    pub fn files(&self) -> Strided<'a, File> {
        self.files
    }
    pub fn file(&self, id: u64) -> Option<&'a File> {
        self.files.iter().find(|f| f.id == id)
    }
    /// The user's limit on BOINC's usage (`total_limit`).
    pub fn total_limit(&self) -> f64 {
        self.raw.total_limit
    }
    /// Space the client itself uses (`core_usage`).
    pub fn core_usage(&self) -> f64 {
        self.raw.core_usage
    }
    /// `total_limit - core_usage`, at least 0 (`all_projects_limit`).
    pub fn all_projects_limit(&self) -> f64 {
        (self.raw.total_limit - self.raw.core_usage).max(0.0)
    }
    /// Bytes of all projects' files.
    pub fn usage(&self) -> f64 {
        self.files.iter().map(|f| f.bytes).sum()
    }
    /// Bytes of project `p`'s files.
    pub fn project_usage(&self, p: usize) -> f64 {
        self.files
            .iter()
            .filter(|f| f.project == p)
            .map(|f| f.bytes)
            .sum()
    }
    /// Computation is suspended because nothing more could be deleted.
    pub fn suspended(&self) -> bool {
        self.raw.disk_suspended != 0
    }
}

/// What a server sees of a scheduler request.
#[derive(Clone)]
pub struct ServerRequest<'a> {
    pub now: f64,
    pub project: usize,
    pub project_name: &'a str,
    pub latency_bound: f64,
    pub host: &'a Host,
    pub rsc: Strided<'a, RscInfo>,
    pub request: WorkRequest,
    /// The client's duration correction factor for this project.
    pub dcf: f64,
    pub work_buf_min: f64,
    /// Every job on the host, of every project.
    pub workload: Strided<'a, ReportedJob>,
    /// Free disk space: free; free if offenders' files were deleted; free
    /// if this project's were deleted too.
    pub free_bytes: [f64; 3],
    /// The fraction of time the client expects the host to compute (ABI
    /// 2.2; 1 from a 2.1 host). A request's per-resource
    /// `estimated_delay` is in [`ServerRequest::request`].
    pub on_fraction: f64,
}

/// Today's client's simulation of a view ([`View::list_sim`]), borrowed for
/// the call.
#[derive(Clone, Copy)]
pub struct ListSim<'a> {
    pub(crate) rsc: Strided<'a, abi::ListSimRsc>,
    pub(crate) deadlines_missed: Strided<'a, u32>,
}

impl<'a> ListSim<'a> {
    /// Number of resources.
    pub fn nrsc(&self) -> usize {
        self.rsc.len()
    }
    /// All it says of resource `r`.
    pub fn rsc(&self, r: usize) -> &'a abi::ListSimRsc {
        self.rsc.at(r)
    }
    /// Idle instance-seconds of resource `r` within the buffer.
    pub fn shortfall(&self, r: usize) -> f64 {
        self.rsc(r).shortfall
    }
    /// Seconds from now to the end of the last interval in which every
    /// instance of `r` is busy (0 if never).
    pub fn saturated_time(&self, r: usize) -> f64 {
        self.rsc(r).saturated_time
    }
    /// Instances of `r` no simulated job holds now.
    pub fn nidle_now(&self, r: usize) -> f64 {
        self.rsc(r).nidle_now
    }
    /// The least busy instance of `r`'s busy time with jobs that miss their
    /// deadlines, seconds (a request's `estimated_delay` in today's client).
    pub fn busy_time(&self, r: usize) -> f64 {
        self.rsc(r).busy_time
    }
    /// Jobs of project `p` on resource `r` the simulation finishes after
    /// their deadlines.
    pub fn deadlines_missed(&self, p: usize, r: usize) -> u32 {
        let n = self.nrsc();
        assert!(r < n, "resource {r} does not exist ({n} resources)");
        *self.deadlines_missed.at(p * n + r)
    }
}
