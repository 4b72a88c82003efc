//! Loads vcsim policy plugins from dylibs (see `vcsim-dylib-abi` for the
//! ABI's rules).
//!
//! [`load`] opens a library once per process (it is never unloaded), finds
//! its entry symbols, and checks — before calling anything of the plugin
//! but the entry points — the ABI version, the sizes of the export and of
//! every table, and the `rustc` that built it. [`Plugin::entries`] gives
//! registry entries whose policies are adapters implementing vcsim's
//! traits: each call builds a `#[repr(C)]` snapshot of the view in buffers
//! the adapter owns, calls the plugin, and reads its decision back from the
//! adapter's buffers. A panic in the plugin comes back as a
//! [`PolicyError`] naming the plugin, the policy and the call.
//!
//! This is the only crate of vcsim with unsafe code across the boundary;
//! each `unsafe` block relies on the checks done at load time and on the
//! ABI's contract.

use libloading::Library;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
pub use vcsim_dylib_abi as abi;
use vcsim_dylib_abi::Table;
use vcsim_framework::model::{DeletionPolicy, FileKind, JobState};
use vcsim_framework::{
    AnyPolicy, Candidate, CompletionEstimator, CpuScheduler, DiskManager, DiskPlan, Entry, Family,
    Job, PolicyError, PolicyResult, Registry, RpcReply, RscRequest, RscStatus, RunList, RunMode,
    ServerRequest, Verdict, View, WorkFetcher, WorkRequest, WorkSender,
};

/// Environment variable that lets a plugin built by another `rustc` load.
/// The ABI is plain C, so a different compiler is sound in principle; the
/// check is there so that a stale plugin is noticed.
pub const ANY_RUSTC_ENV: &str = "VCSIM_PLUGIN_ANY_RUSTC";

/// One policy a plugin exports.
#[derive(Clone, Copy)]
pub enum PolicyTable {
    Cpu(&'static abi::CpuTable),
    Fetch(&'static abi::FetchTable),
    Send(&'static abi::SendTable),
    Estimate(&'static abi::EstimateTable),
    Disk(&'static abi::DiskTable),
}

impl PolicyTable {
    pub fn family(&self) -> Family {
        match self {
            PolicyTable::Cpu(_) => Family::Cpu,
            PolicyTable::Fetch(_) => Family::Fetch,
            PolicyTable::Send(_) => Family::Send,
            PolicyTable::Estimate(_) => Family::Estimate,
            PolicyTable::Disk(_) => Family::Disk,
        }
    }
    fn head(&self) -> &'static dyn Table {
        match *self {
            PolicyTable::Cpu(t) => t,
            PolicyTable::Fetch(t) => t,
            PolicyTable::Send(t) => t,
            PolicyTable::Estimate(t) => t,
            PolicyTable::Disk(t) => t,
        }
    }
}

/// One policy of a loaded plugin.
#[derive(Clone)]
pub struct PluginPolicy {
    pub name: String,
    pub summary: String,
    pub table: PolicyTable,
}

/// A loaded, checked plugin library (kept loaded for the process's life).
pub struct Plugin {
    pub path: PathBuf,
    /// The plugin crate's name and version.
    pub crate_name: String,
    pub rustc: String,
    pub policies: Vec<PluginPolicy>,
    _lib: &'static Library,
}

static LOADED: OnceLock<Mutex<BTreeMap<PathBuf, Arc<Plugin>>>> = OnceLock::new();

/// Loads (once per process) and checks the plugin at `path`.
pub fn load(path: &Path) -> Result<Arc<Plugin>, String> {
    let shown = path.display().to_string();
    let canon = path
        .canonicalize()
        .map_err(|e| format!("{shown}: cannot open plugin: {e}"))?;
    let cache = LOADED.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = cache.get(&canon) {
        return Ok(p.clone());
    }
    let p = Arc::new(open(path, &canon)?);
    cache.insert(canon, p.clone());
    Ok(p)
}

fn static_str(s: abi::StaticStr) -> Result<String, String> {
    // SAFETY: a StaticStr of a loaded (never unloaded) library points to
    // `len` bytes of its read-only data (ABI rule 7).
    let b = unsafe { std::slice::from_raw_parts(s.ptr as *const u8, s.len) };
    std::str::from_utf8(b)
        .map(str::to_string)
        .map_err(|_| "a string that is not UTF-8".to_string())
}

fn open(path: &Path, canon: &Path) -> Result<Plugin, String> {
    let shown = path.display().to_string();
    // SAFETY: loading a library runs its initialisers; a vcsim plugin built
    // with the SDK has none of its own. This is the trust one gives a plugin.
    let lib = unsafe { Library::new(canon) }
        .map_err(|e| format!("{shown}: not a loadable library: {e}"))?;
    // Never unloaded (ABI rule 7).
    let lib: &'static Library = Box::leak(Box::new(lib));
    let mut policies = Vec::new();
    let mut meta: Option<(String, String)> = None;
    let mut found = false;
    for (i, sym) in abi::symbols::ALL.iter().enumerate() {
        macro_rules! family {
            ($t:ty, $variant:ident) => {{
                // SAFETY: an exported entry symbol has this signature (ABI rule 1).
                let entry = match unsafe { lib.get::<abi::EntryFn<$t>>(sym.as_bytes()) } {
                    Ok(e) => *e,
                    Err(_) => continue,
                };
                found = true;
                let ex = entry();
                let (c, r) = check_export(&shown, abi::symbols::FAMILIES[i], ex)?;
                if meta.is_none() {
                    meta = Some((c, r));
                }
                for k in 0..ex.count {
                    let t = (ex.table)(k).ok_or_else(|| {
                        format!(
                            "{shown}: {sym} lists {} policies but has no table {k}",
                            ex.count
                        )
                    })?;
                    policies.push(check_table(&shown, PolicyTable::$variant(t))?);
                }
            }};
        }
        match i {
            0 => family!(abi::CpuTable, Cpu),
            1 => family!(abi::FetchTable, Fetch),
            2 => family!(abi::SendTable, Send),
            3 => family!(abi::EstimateTable, Estimate),
            _ => family!(abi::DiskTable, Disk),
        }
    }
    if !found {
        // A plugin of another ABI version exports other symbol names.
        for v in (0..=16u32).filter(|v| *v != abi::ABI_VERSION) {
            for f in abi::symbols::FAMILIES {
                let name = format!("vcsim_plugin_{f}_v{v}");
                // SAFETY: only the symbol's presence is looked at.
                if unsafe { lib.get::<*const u8>(name.as_bytes()) }.is_ok() {
                    return Err(format!(
                        "{shown}: built for vcsim plugin ABI version {v} (it exports `{name}`); \
                         this vcsim speaks version {}: rebuild the plugin against this vcsim's \
                         vcsim-dylib-sdk",
                        abi::ABI_VERSION
                    ));
                }
            }
        }
        return Err(format!(
            "{shown}: not a vcsim plugin: it exports none of {}",
            abi::symbols::ALL.join(", ")
        ));
    }
    let (crate_name, rustc) = meta.unwrap_or_default();
    Ok(Plugin {
        path: path.to_path_buf(),
        crate_name,
        rustc,
        policies,
        _lib: lib,
    })
}

fn check_export<T>(
    shown: &str,
    fam: &str,
    ex: &abi::Export<T>,
) -> Result<(String, String), String> {
    if ex.abi_version != abi::ABI_VERSION {
        return Err(format!(
            "{shown}: its {fam} policies were built for vcsim plugin ABI version {}; this vcsim \
             speaks version {}: rebuild the plugin against this vcsim's vcsim-dylib-sdk",
            ex.abi_version,
            abi::ABI_VERSION
        ));
    }
    let need = std::mem::size_of::<abi::Export<T>>();
    if (ex.size as usize) < need {
        return Err(format!(
            "{shown}: its {fam} export is {} bytes, less than the {need} of ABI version {}",
            ex.size,
            abi::ABI_VERSION
        ));
    }
    let rustc = static_str(ex.rustc).map_err(|e| format!("{shown}: {e} as its rustc"))?;
    let krate = static_str(ex.plugin).map_err(|e| format!("{shown}: {e} as its name"))?;
    if rustc != abi::RUSTC_VERSION && std::env::var_os(ANY_RUSTC_ENV).is_none() {
        return Err(format!(
            "{shown}: built by `{rustc}`, but this vcsim by `{}`: rebuild the plugin with the \
             same compiler (or set {ANY_RUSTC_ENV}=1 to load it anyway)",
            abi::RUSTC_VERSION
        ));
    }
    Ok((krate, rustc))
}

fn check_table(shown: &str, t: PolicyTable) -> Result<PluginPolicy, String> {
    let h = t.head();
    let fam = t.family();
    if h.abi_version() != abi::ABI_VERSION {
        return Err(format!(
            "{shown}: a {fam} policy was built for vcsim plugin ABI version {}; this vcsim \
             speaks version {}",
            h.abi_version(),
            abi::ABI_VERSION
        ));
    }
    let need = match t {
        PolicyTable::Cpu(_) => std::mem::size_of::<abi::CpuTable>(),
        PolicyTable::Fetch(_) => std::mem::size_of::<abi::FetchTable>(),
        PolicyTable::Send(_) => std::mem::size_of::<abi::SendTable>(),
        PolicyTable::Estimate(_) => std::mem::size_of::<abi::EstimateTable>(),
        // Only the first fields of a disk table are required; the appended
        // calls are used when its size covers them (`DiskAdapter`).
        PolicyTable::Disk(_) => abi::DISK_TABLE_V1_0_SIZE,
    };
    if (h.size() as usize) < need {
        return Err(format!(
            "{shown}: a {fam} table is {} bytes, less than the {need} of ABI version {}",
            h.size(),
            abi::ABI_VERSION
        ));
    }
    let name = static_str(h.name()).map_err(|e| format!("{shown}: {e} as a {fam} name"))?;
    let summary = static_str(h.summary()).map_err(|e| format!("{shown}: {e} as a summary"))?;
    if name.is_empty()
        || name
            .chars()
            .any(|c| c.is_whitespace() || c == ',' || c == '=')
    {
        return Err(format!(
            "{shown}: `{name}` is not a usable {fam} policy name"
        ));
    }
    Ok(PluginPolicy {
        name,
        summary,
        table: t,
    })
}

impl Plugin {
    /// Registry entries for every policy of the plugin.
    pub fn entries(self: &Arc<Self>) -> Vec<Entry> {
        self.policies
            .iter()
            .map(|p| {
                let who = Arc::new(Who {
                    plugin: self.path.display().to_string(),
                    name: p.name.clone(),
                });
                let table = p.table;
                Entry::new(
                    p.table.family(),
                    p.name.clone(),
                    p.summary.clone(),
                    self.path.display().to_string(),
                    move || make(table, who.clone()),
                )
            })
            .collect()
    }

    /// Makes and destroys one instance of each policy (for `vcsim check`).
    pub fn try_instances(self: &Arc<Self>) -> Result<(), String> {
        for e in self.entries() {
            e.make()?;
        }
        Ok(())
    }
}

/// Loads every library and adds its policies to `reg`; a name already taken
/// in its family is refused.
pub fn register(reg: &mut Registry, libs: &[PathBuf]) -> Result<Vec<Arc<Plugin>>, String> {
    let mut out = Vec::new();
    for l in libs {
        let p = load(l)?;
        for e in p.entries() {
            reg.add(e)?;
        }
        out.push(p);
    }
    Ok(out)
}

// ----------------------------------------------------------------------
// Instances and adapters

/// Names a policy in messages.
struct Who {
    plugin: String,
    name: String,
}

const ERR_CAP: usize = 1024;

/// A live plugin state; destroyed on drop.
struct Instance<T: Table> {
    table: &'static T,
    state: abi::State,
    who: Arc<Who>,
    err: Vec<u8>,
}

// SAFETY: the SDK's traits require `Send` of the plugin's policy type, and
// an instance is used by one thread at a time (`&mut` or, for `&self`
// calls, through a `RefCell`, which is not `Sync`).
unsafe impl<T: Table> Send for Instance<T> {}

impl<T: Table> Instance<T> {
    fn new(table: &'static T, who: Arc<Who>) -> Result<Instance<T>, String> {
        let mut err = vec![0u8; ERR_CAP];
        let mut eb = abi::ErrBuf {
            ptr: err.as_mut_ptr(),
            cap: ERR_CAP,
            len: 0,
        };
        // SAFETY: the table was checked at load time; `eb` is valid.
        let state = unsafe { (table.create())(&mut eb) };
        if state.is_null() {
            let msg = String::from_utf8_lossy(&err[..eb.len.min(ERR_CAP)]).into_owned();
            return Err(format!(
                "plugin {} could not create it: {}",
                who.plugin,
                if msg.is_empty() {
                    "create returned nothing"
                } else {
                    &msg
                }
            ));
        }
        Ok(Instance {
            table,
            state,
            who,
            err,
        })
    }

    fn errbuf(&mut self) -> abi::ErrBuf {
        abi::ErrBuf {
            ptr: self.err.as_mut_ptr(),
            cap: self.err.len(),
            len: 0,
        }
    }

    /// Turns a status into a result, naming the plugin and the call.
    fn check(&mut self, status: u32, eb: &abi::ErrBuf, call: &str) -> PolicyResult<()> {
        let msg = || String::from_utf8_lossy(&self.err[..eb.len.min(self.err.len())]).into_owned();
        let w = &self.who;
        match status {
            abi::STATUS_OK => Ok(()),
            abi::STATUS_ERROR => Err(PolicyError::new(msg())),
            abi::STATUS_PANIC => Err(PolicyError::new(format!(
                "plugin {} panicked in `{call}`: {}",
                w.plugin,
                msg()
            ))),
            abi::STATUS_OVERFLOW => Err(PolicyError::new(format!(
                "plugin {}, `{call}`: {}",
                w.plugin,
                msg()
            ))),
            s => Err(PolicyError::new(format!(
                "plugin {}, `{call}`: unknown status {s}",
                w.plugin
            ))),
        }
    }
}

impl<T: Table> Drop for Instance<T> {
    fn drop(&mut self) {
        // SAFETY: `state` came from this table's `create`; destroyed once.
        unsafe { (self.table.destroy())(self.state) }
    }
}

fn make(table: PolicyTable, who: Arc<Who>) -> Result<AnyPolicy, String> {
    Ok(match table {
        PolicyTable::Cpu(t) => AnyPolicy::Cpu(Box::new(CpuAdapter {
            inst: Instance::new(t, who)?,
            snap: Snapshot::default(),
            run: Vec::new(),
        })),
        PolicyTable::Fetch(t) => AnyPolicy::Fetch(Box::new(FetchAdapter {
            inner: RefCell::new((Instance::new(t, who)?, Snapshot::default(), Vec::new())),
        })),
        PolicyTable::Send(t) => AnyPolicy::Send(Box::new(SendAdapter {
            inst: Instance::new(t, who)?,
            host: Snapshot::default(),
            request: Vec::new(),
            workload: Vec::new(),
            sent: Vec::new(),
        })),
        PolicyTable::Estimate(t) => AnyPolicy::Estimate(Box::new(EstimateAdapter {
            inner: RefCell::new((Instance::new(t, who)?, Snapshot::default())),
        })),
        PolicyTable::Disk(t) => AnyPolicy::Disk(Box::new(DiskAdapter {
            inner: RefCell::new((Instance::new(t, who)?, Snapshot::default())),
            files: DiskSnapshot::default(),
        })),
    })
}

/// Buffers a view's snapshot lives in, reused between calls.
#[derive(Default)]
struct Snapshot {
    rsc: Vec<abi::RscInfo>,
    projects: Vec<abi::Project>,
    project_rsc: Vec<abi::ProjectRsc>,
    jobs: Vec<abi::Job>,
}

// SAFETY: between calls the buffers only hold stale pointers (names of a
// state the call has finished with), which are never read again: every call
// rebuilds what it passes.
unsafe impl Send for Snapshot {}

fn host_of(h: &vcsim_framework::model::HostInfo) -> abi::Host {
    abi::Host {
        ncpus: h.ncpus,
        cpu_flops: h.cpu_flops,
        disk_bytes: h.disk_bytes,
        nrsc: h.nrsc(),
    }
}

fn prefs_of(p: &vcsim_framework::model::Prefs) -> abi::Prefs {
    abi::Prefs {
        sched_period: p.sched_period,
        work_buf_min: p.work_buf_min,
        work_buf_additional: p.work_buf_additional,
        step: p.step,
        learn_availability: p.learn_availability as u8,
    }
}

fn rsc_of(
    out: &mut Vec<abi::RscInfo>,
    h: &vcsim_framework::model::HostInfo,
    idle: impl Fn(usize) -> f64,
) {
    out.clear();
    out.extend((0..h.nrsc()).map(|r| abi::RscInfo {
        name: abi::Str::new(h.rsc_name(r)),
        instances: h.ninstances(r),
        instance_flops: h.instance_flops(r),
        idle_instances: idle(r),
    }));
}

fn job_of(v: &View, j: &Job, with_estimates: bool) -> PolicyResult<abi::Job> {
    let (remaining_seconds, static_estimate) = if with_estimates {
        (v.remaining_seconds(j)?, v.static_estimate(j)?)
    } else {
        (f64::NAN, f64::NAN)
    };
    Ok(abi::Job {
        id: j.id,
        project: j.project,
        app: j.app,
        cpus: j.cpus,
        gpu_rsc: j.gpu.map_or(0, |g| g.0),
        gpu_count: j.gpu.map_or(0.0, |g| g.1),
        flops_estimate: j.flops_estimate,
        speed: j.speed,
        received: j.received,
        deadline: j.deadline,
        last_started: j.last_started,
        finished_at: j.finished_at,
        fraction_done: v.fraction_done(j),
        run_seconds: v.run_seconds(j),
        remaining_seconds,
        estimated_seconds: j.estimated_seconds(),
        static_estimate,
        state: match j.state {
            JobState::Queued => abi::JOB_QUEUED,
            JobState::Running => abi::JOB_RUNNING,
            JobState::Preempted => abi::JOB_PREEMPTED,
            JobState::Finished => abi::JOB_FINISHED,
        },
        mode: mode_of(j.mode),
        ever_deadline_mode: j.ever_deadline_mode as u8,
        failed: j.failed as u8,
        has_started: j.has_started() as u8,
    })
}

fn mode_of(m: RunMode) -> u8 {
    match m {
        RunMode::RoundRobin => abi::MODE_ROUND_ROBIN,
        RunMode::Deadline => abi::MODE_DEADLINE,
    }
}

impl Snapshot {
    /// Fills the buffers from `v` and returns the view pointing into them:
    /// valid until the buffers are next touched.
    fn build(&mut self, v: &View) -> PolicyResult<abi::View> {
        let h = v.host();
        let nrsc = h.nrsc();
        rsc_of(&mut self.rsc, h, |r| v.idle_instances(r));
        self.projects.clear();
        self.project_rsc.clear();
        for (p, pr) in v.projects().iter().enumerate() {
            self.projects.push(abi::Project {
                name: abi::Str::new(&pr.name),
                resource_share: pr.resource_share,
                share_fraction: v.share_fraction(p),
                latency_bound: pr.latency_bound,
                exp_avg_cpu: v.exp_avg_cpu(p),
                contactable: v.contactable(p) as u8,
                has_runnable: v.project_has_runnable(p) as u8,
                napps: pr.apps.len(),
            });
            for r in 0..nrsc {
                self.project_rsc.push(abi::ProjectRsc {
                    usage_seconds: v.usage_seconds(p, r),
                    running_instances: pr.running_instances.get(r).copied().unwrap_or(0.0),
                    has_apps: pr.has_rsc_apps.get(r).copied().unwrap_or(false) as u8,
                });
            }
        }
        self.jobs.clear();
        for j in v.jobs() {
            self.jobs.push(job_of(v, j, true)?);
        }
        Ok(abi::View {
            now: v.now(),
            host: host_of(h),
            prefs: prefs_of(v.prefs()),
            on_fraction: v.on_fraction(),
            available_seconds: v.available_seconds(),
            host_on: v.host_on() as u8,
            last_schedule: v.last_schedule(),
            last_rpc: v.last_rpc().unwrap_or(f64::NAN),
            connection_interval: v.connection_interval(),
            rsc: self.rsc.as_ptr(),
            projects: self.projects.as_ptr(),
            nprojects: self.projects.len(),
            project_rsc: self.project_rsc.as_ptr(),
            jobs: self.jobs.as_ptr(),
            njobs: self.jobs.len(),
        })
    }
}

// ---------------------------------------------------------------- cpu

struct CpuAdapter {
    inst: Instance<abi::CpuTable>,
    snap: Snapshot,
    run: Vec<abi::RunEntry>,
}

impl CpuScheduler for CpuAdapter {
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()> {
        let view = self.snap.build(v)?;
        self.run.clear();
        self.run.resize(v.jobs().len(), abi::RunEntry::default());
        let mut ro = abi::RunOut {
            ptr: self.run.as_mut_ptr(),
            cap: self.run.len(),
            len: 0,
        };
        let mut eb = self.inst.errbuf();
        // SAFETY: the view points into `self.snap` and the state, untouched
        // during the call; `ro` and `eb` are valid buffers.
        let st = unsafe { (self.inst.table.schedule)(self.inst.state, &view, &mut ro, &mut eb) };
        self.inst.check(st, &eb, "schedule")?;
        for e in &self.run[..ro.len.min(self.run.len())] {
            out.push(
                e.job,
                if e.mode == abi::MODE_DEADLINE {
                    RunMode::Deadline
                } else {
                    RunMode::RoundRobin
                },
            );
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- fetch

type FetchInner = (Instance<abi::FetchTable>, Snapshot, Vec<RscRequest>);

struct FetchAdapter {
    inner: RefCell<FetchInner>,
}

fn rsc_req(r: &RscRequest) -> abi::RscRequest {
    abi::RscRequest {
        req_seconds: r.req_seconds,
        req_ninstances: r.req_ninstances,
    }
}

impl FetchAdapter {
    fn with<R>(&self, f: impl FnOnce(&mut FetchInner) -> PolicyResult<R>) -> PolicyResult<R> {
        let mut g = self
            .inner
            .try_borrow_mut()
            .map_err(|_| PolicyError::new("a plugin fetcher was called re-entrantly"))?;
        f(&mut g)
    }

    fn ask(&self, v: &View, piggyback: Option<usize>) -> PolicyResult<Option<WorkRequest>> {
        self.with(|(inst, snap, _)| {
            let view = snap.build(v)?;
            let nrsc = v.host().nrsc();
            let mut rsc = vec![abi::RscRequest::default(); nrsc];
            let mut out = abi::RequestOut {
                present: 0,
                project: 0,
                work_req_seconds: 0.0,
                rsc: rsc.as_mut_ptr(),
                nrsc,
            };
            let mut eb = inst.errbuf();
            // SAFETY: as in `CpuAdapter::schedule`; `rsc` holds `nrsc` entries.
            let (st, call) = unsafe {
                match piggyback {
                    None => (
                        (inst.table.request)(inst.state, &view, &mut out, &mut eb),
                        "request",
                    ),
                    Some(p) => (
                        (inst.table.piggyback)(inst.state, &view, p, &mut out, &mut eb),
                        "piggyback",
                    ),
                }
            };
            inst.check(st, &eb, call)?;
            if out.present == 0 {
                return Ok(None);
            }
            Ok(Some(WorkRequest {
                project: out.project,
                work_req_seconds: out.work_req_seconds,
                rsc: rsc
                    .iter()
                    .map(|r| RscRequest {
                        req_seconds: r.req_seconds,
                        req_ninstances: r.req_ninstances,
                    })
                    .collect(),
            }))
        })
    }
}

impl WorkFetcher for FetchAdapter {
    fn account(&mut self, v: &View) -> PolicyResult<()> {
        self.with(|(inst, snap, _)| {
            let view = snap.build(v)?;
            let mut eb = inst.errbuf();
            // SAFETY: as in `CpuAdapter::schedule`.
            let st = unsafe { (inst.table.account)(inst.state, &view, &mut eb) };
            inst.check(st, &eb, "account")
        })
    }

    fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>> {
        self.ask(v, None)
    }

    fn piggyback(&self, v: &View, project: usize) -> PolicyResult<Option<WorkRequest>> {
        self.ask(v, Some(project))
    }

    fn on_reply(&mut self, v: &View, reply: &RpcReply) -> PolicyResult<()> {
        self.with(|(inst, snap, _)| {
            let view = snap.build(v)?;
            let req: Vec<abi::RscRequest> = reply.request.rsc.iter().map(rsc_req).collect();
            let nrsc = reply.jobs.len().min(reply.rsc_status.len());
            let status: Vec<u8> = reply
                .rsc_status
                .iter()
                .map(|s| match s {
                    RscStatus::Unknown => abi::RSC_STATUS_UNKNOWN,
                    RscStatus::WorkReturned => abi::RSC_STATUS_WORK_RETURNED,
                    RscStatus::NoWorkButSupported => abi::RSC_STATUS_NO_WORK_BUT_SUPPORTED,
                    RscStatus::NotSupported => abi::RSC_STATUS_NOT_SUPPORTED,
                })
                .collect();
            let r = abi::Reply {
                project: reply.project,
                request: abi::RequestIn {
                    project: reply.request.project,
                    work_req_seconds: reply.request.work_req_seconds,
                    rsc: req.as_ptr(),
                    nrsc: req.len(),
                },
                reached: reply.reached as u8,
                jobs: reply.jobs.as_ptr(),
                rsc_status: status.as_ptr(),
                nrsc,
            };
            let mut eb = inst.errbuf();
            // SAFETY: as in `CpuAdapter::schedule`; `r` points into live vectors.
            let st = unsafe { (inst.table.on_reply)(inst.state, &view, &r, &mut eb) };
            inst.check(st, &eb, "on_reply")
        })
    }

    fn backoff_on_empty_reply(&self, _v: &View) -> PolicyResult<bool> {
        self.with(|(inst, _, _)| {
            let mut out = 1u8;
            let mut eb = inst.errbuf();
            // SAFETY: the state is live; `out` and `eb` are valid.
            let st = unsafe { (inst.table.backoff_on_empty_reply)(inst.state, &mut out, &mut eb) };
            inst.check(st, &eb, "backoff_on_empty_reply")?;
            Ok(out != 0)
        })
    }
}

// ---------------------------------------------------------------- send

struct SendAdapter {
    inst: Instance<abi::SendTable>,
    host: Snapshot,
    request: Vec<abi::RscRequest>,
    workload: Vec<abi::ReportedJob>,
    sent: Vec<abi::Candidate>,
}

fn cand_of(c: &Candidate) -> abi::Candidate {
    abi::Candidate {
        app: c.app,
        rsc: c.rsc,
        cpus: c.cpus,
        gpu_count: c.gpu_count,
        flops_estimate: c.flops_estimate,
        est_seconds: c.est_seconds,
        deadline: c.deadline,
    }
}

impl WorkSender for SendAdapter {
    fn consider(
        &mut self,
        req: &ServerRequest,
        sent: &[Candidate],
        cand: &Candidate,
    ) -> PolicyResult<Verdict> {
        rsc_of(&mut self.host.rsc, req.host, |_| f64::NAN);
        self.request.clear();
        self.request.extend(req.request.rsc.iter().map(rsc_req));
        self.workload.clear();
        self.workload
            .extend(req.workload.iter().map(|j| abi::ReportedJob {
                project: j.project,
                rsc: j.rsc,
                cpus: j.cpus,
                gpu_count: j.gpu_count,
                deadline: j.deadline,
                remaining_seconds: j.remaining_seconds,
            }));
        self.sent.clear();
        self.sent.extend(sent.iter().map(cand_of));
        let r = abi::ServerRequest {
            now: req.now,
            project: req.project,
            project_name: abi::Str::new(req.project_name),
            latency_bound: req.latency_bound,
            host: host_of(req.host),
            rsc: self.host.rsc.as_ptr(),
            request: abi::RequestIn {
                project: req.request.project,
                work_req_seconds: req.request.work_req_seconds,
                rsc: self.request.as_ptr(),
                nrsc: self.request.len(),
            },
            dcf: req.dcf,
            work_buf_min: req.work_buf_min,
            workload: self.workload.as_ptr(),
            nworkload: self.workload.len(),
            free_bytes: req.free_bytes,
        };
        let c = cand_of(cand);
        let mut out = abi::VERDICT_STOP;
        let mut eb = self.inst.errbuf();
        // SAFETY: `r` points into this adapter's buffers and `req`, all live
        // and untouched during the call.
        let st = unsafe {
            (self.inst.table.consider)(
                self.inst.state,
                &r,
                self.sent.as_ptr(),
                self.sent.len(),
                &c,
                &mut out,
                &mut eb,
            )
        };
        self.inst.check(st, &eb, "consider")?;
        match out {
            abi::VERDICT_SEND => Ok(Verdict::Send),
            abi::VERDICT_SKIP => Ok(Verdict::Skip),
            abi::VERDICT_STOP => Ok(Verdict::Stop),
            x => Err(PolicyError::new(format!(
                "plugin {}: send policy `{}` gave verdict {x}",
                self.inst.who.plugin, self.inst.who.name
            ))),
        }
    }
}

// ---------------------------------------------------------------- estimate

struct EstimateAdapter {
    inner: RefCell<(Instance<abi::EstimateTable>, Snapshot)>,
}

impl EstimateAdapter {
    fn call(&self, v: &View, job: &Job, finished: bool) -> PolicyResult<f64> {
        let mut g = self
            .inner
            .try_borrow_mut()
            .map_err(|_| PolicyError::new("a plugin estimator was called re-entrantly"))?;
        let (inst, snap) = &mut *g;
        let h = v.host();
        let rsc = &mut snap.rsc;
        rsc_of(rsc, h, |r| v.idle_instances(r));
        let ev = abi::EstimateView {
            now: v.now(),
            host: host_of(h),
            prefs: prefs_of(v.prefs()),
            rsc: rsc.as_ptr(),
        };
        let j = job_of(v, job, false)?;
        let mut out = f64::NAN;
        let mut eb = inst.errbuf();
        // SAFETY: `ev` points into `rsc`, live during the call.
        let (st, call) = unsafe {
            if finished {
                (
                    (inst.table.on_job_finished)(inst.state, &ev, &j, &mut eb),
                    "on_job_finished",
                )
            } else {
                (
                    (inst.table.remaining_seconds)(inst.state, &ev, &j, &mut out, &mut eb),
                    "remaining_seconds",
                )
            }
        };
        inst.check(st, &eb, call)?;
        Ok(out)
    }
}

impl CompletionEstimator for EstimateAdapter {
    fn remaining_seconds(&self, v: &View, job: &Job) -> PolicyResult<f64> {
        self.call(v, job, false)
    }

    fn correction(&self, _v: &View, project: usize) -> PolicyResult<f64> {
        let mut g = self
            .inner
            .try_borrow_mut()
            .map_err(|_| PolicyError::new("a plugin estimator was called re-entrantly"))?;
        let inst = &mut g.0;
        let mut out = 1.0;
        let mut eb = inst.errbuf();
        // SAFETY: the state is live; `out` and `eb` are valid.
        let st = unsafe { (inst.table.correction)(inst.state, project, &mut out, &mut eb) };
        inst.check(st, &eb, "correction")?;
        Ok(out)
    }

    fn on_job_finished(&mut self, v: &View, job: &Job) -> PolicyResult<()> {
        self.call(v, job, true).map(|_| ())
    }
}

// ---------------------------------------------------------------- disk

struct DiskAdapter {
    inner: RefCell<(Instance<abi::DiskTable>, Snapshot)>,
    files: DiskSnapshot,
}

/// Buffers of a disk view and of a plan, reused between calls.
#[derive(Default)]
struct DiskSnapshot {
    files: Vec<abi::File>,
    deletion_policy: Vec<u8>,
    delete_jobs: Vec<u64>,
    delete_files: Vec<u64>,
}

/// An appended field of the disk table, `None` if the plugin's table is too
/// small to have it (ABI rule 3).
macro_rules! disk_call {
    ($t:expr, $field:ident) => {{
        let t: &'static abi::DiskTable = $t;
        // Every call is a function pointer, the size of a pointer.
        let end = std::mem::offset_of!(abi::DiskTable, $field) + std::mem::size_of::<usize>();
        // Only read the field when the table's size says it is there.
        (t.size as usize >= end).then(|| t.$field)
    }};
}

impl DiskSnapshot {
    fn build(&mut self, v: &View) -> abi::DiskView {
        let disk = v.disk();
        self.files.clear();
        self.files.extend(disk.files.iter().map(|f| abi::File {
            id: f.id,
            project: f.project,
            bytes: f.bytes,
            job: f.job.unwrap_or(abi::NO_JOB),
            kind: match f.kind {
                FileKind::Input => abi::FILE_INPUT,
                FileKind::Output => abi::FILE_OUTPUT,
                FileKind::Sticky => abi::FILE_STICKY,
            },
            referenced: v.file_referenced(f) as u8,
            sticky: f.sticky as u8,
            priority: f.priority,
            created: f.created,
            last_used: f.last_used,
            expires: f.expires,
        }));
        self.deletion_policy.clear();
        self.deletion_policy
            .extend(v.projects().iter().map(|p| match p.deletion_policy {
                DeletionPolicy::Lru => abi::DELETE_LRU,
                DeletionPolicy::Priority => abi::DELETE_PRIORITY,
                DeletionPolicy::Expire => abi::DELETE_EXPIRE,
            }));
        abi::DiskView {
            files: self.files.as_ptr(),
            nfiles: self.files.len(),
            total_limit: disk.total_limit,
            core_usage: disk.core_usage,
            suspended: disk.suspended as u8,
            deletion_policy: self.deletion_policy.as_ptr(),
        }
    }

    /// Zeroed plan buffers: one id per job and per file.
    fn plan_out(&mut self, v: &View) -> abi::DiskPlanOut {
        self.delete_jobs.clear();
        self.delete_jobs.resize(v.jobs().len(), 0);
        self.delete_files.clear();
        self.delete_files.resize(v.disk().files.len(), 0);
        abi::DiskPlanOut {
            delete_jobs: self.delete_jobs.as_mut_ptr(),
            jobs_cap: self.delete_jobs.len(),
            jobs_len: 0,
            delete_files: self.delete_files.as_mut_ptr(),
            files_cap: self.delete_files.len(),
            files_len: 0,
            fits: 0,
            suspend: 0,
        }
    }

    fn plan(&self, out: &abi::DiskPlanOut) -> DiskPlan {
        DiskPlan {
            delete_jobs: self.delete_jobs[..out.jobs_len.min(self.delete_jobs.len())].to_vec(),
            delete_files: self.delete_files[..out.files_len.min(self.delete_files.len())].to_vec(),
            suspend: out.suspend != 0,
        }
    }
}

// SAFETY: as for `Snapshot`: the buffers hold no pointers between calls
// that are ever read again.
unsafe impl Send for DiskSnapshot {}

impl DiskAdapter {
    /// Builds both views and calls `f` with them.
    fn with_views<R>(
        inst: &mut Instance<abi::DiskTable>,
        snap: &mut Snapshot,
        files: &mut DiskSnapshot,
        v: &View,
        call: &str,
        f: impl FnOnce(
            &mut Instance<abi::DiskTable>,
            &abi::View,
            &abi::DiskView,
            &mut DiskSnapshot,
            &mut abi::ErrBuf,
        ) -> (u32, R),
    ) -> PolicyResult<R> {
        let view = snap.build(v)?;
        let disk = files.build(v);
        let mut eb = inst.errbuf();
        let (s, r) = f(inst, &view, &disk, files, &mut eb);
        inst.check(s, &eb, call)?;
        Ok(r)
    }

    fn borrow(&self) -> PolicyResult<std::cell::RefMut<'_, (Instance<abi::DiskTable>, Snapshot)>> {
        self.inner
            .try_borrow_mut()
            .map_err(|_| PolicyError::new("a plugin disk manager was called re-entrantly"))
    }
}

impl DiskManager for DiskAdapter {
    fn free_space(&self, v: &View, project: usize) -> PolicyResult<[f64; 3]> {
        let mut g = self.borrow()?;
        let (inst, snap) = &mut *g;
        let view = snap.build(v)?;
        let mut out = [v.host().disk_bytes; 3];
        let mut eb = inst.errbuf();
        // SAFETY: as in `CpuAdapter::schedule`.
        let s = unsafe { (inst.table.free_space)(inst.state, &view, project, &mut out, &mut eb) };
        inst.check(s, &eb, "free_space")?;
        Ok(out)
    }

    fn enforces(&self, _v: &View) -> PolicyResult<bool> {
        let mut g = self.borrow()?;
        let inst = &mut g.0;
        let mut out = 0u8;
        let mut eb = inst.errbuf();
        // SAFETY: the state is live; `out` and `eb` are valid.
        let st = unsafe { (inst.table.enforces)(inst.state, &mut out, &mut eb) };
        inst.check(st, &eb, "enforces")?;
        Ok(out != 0)
    }

    fn make_room(&mut self, v: &View, project: usize, bytes: f64) -> PolicyResult<DiskPlan> {
        let (inst, snap) = self.inner.get_mut();
        let Some(call) = disk_call!(inst.table, make_room) else {
            return Ok(DiskPlan::default());
        };
        let files = &mut self.files;
        DiskAdapter::with_views(inst, snap, files, v, "make_room", |inst, av, d, fs, eb| {
            let mut out = fs.plan_out(v);
            // SAFETY: as in `CpuAdapter::schedule`; the plan buffers hold
            // `jobs_cap` and `files_cap` ids.
            let s = unsafe { call(inst.state, av, d, project, bytes, &mut out, eb) };
            (s, fs.plan(&out))
        })
    }

    fn poll(&mut self, v: &View) -> PolicyResult<DiskPlan> {
        let (inst, snap) = self.inner.get_mut();
        let Some(call) = disk_call!(inst.table, poll) else {
            return Ok(DiskPlan::default());
        };
        let files = &mut self.files;
        DiskAdapter::with_views(inst, snap, files, v, "poll", |inst, av, d, fs, eb| {
            let mut out = fs.plan_out(v);
            // SAFETY: as in `make_room`.
            let s = unsafe { call(inst.state, av, d, &mut out, eb) };
            (s, fs.plan(&out))
        })
    }

    fn project_limit(&self, v: &View, project: usize) -> PolicyResult<Option<f64>> {
        let mut g = self.borrow()?;
        let (inst, snap) = &mut *g;
        let Some(call) = disk_call!(inst.table, project_limit) else {
            return Ok(None);
        };
        // `project_limit` takes `&self`: its own buffers for the files.
        let mut files = DiskSnapshot::default();
        let x = DiskAdapter::with_views(
            inst,
            snap,
            &mut files,
            v,
            "project_limit",
            |inst, av, d, _, eb| {
                let mut out = f64::NAN;
                // SAFETY: as in `free_space`.
                let s = unsafe { call(inst.state, av, d, project, &mut out, eb) };
                (s, out)
            },
        )?;
        Ok((!x.is_nan()).then_some(x))
    }
}
