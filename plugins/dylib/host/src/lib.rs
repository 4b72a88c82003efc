//! Loads vcsim policy plugins from dylibs (see `vcsim-dylib-abi` for the
//! ABI's rules).
//!
//! [`load`] opens a library once per process (it is never unloaded), finds
//! its entry symbols, and checks — before calling anything of the plugin
//! but the entry points — the ABI's major and minor version, the sizes of
//! the export and of every table, and the `rustc` that built it. A library
//! that exports only the entry points of another major version is refused
//! before any of them is called. [`Plugin::entries`] gives registry entries
//! whose policies are adapters implementing vcsim's traits: each call
//! builds a `#[repr(C)]` snapshot of the view in buffers the adapter owns,
//! calls the plugin, and reads its decision back from the adapter's
//! buffers. An error or a panic in the plugin comes back as a
//! [`PolicyError`] naming the plugin and the call; the run fails with it.
//!
//! Reasons (ABI 2.3): in the calls whose decision may have one, an adapter
//! offers a plugin of 2.3 or later a buffer of its own, keeps what the
//! plugin wrote there as raw bytes, and converts it into vcsim's `Reason`
//! only when the simulator asks (`explain`, `explain_request`,
//! `explain_verdict`, `explain_plan`, asked only in explained runs), so a
//! run that does not explain copies and converts nothing. A CPU scheduler
//! of 2.4 or later is also offered a run list's own notes: the reason that
//! explains the jobs it preempts (and its entries without one), and the
//! ranking that `CpuScheduler::ranking` gives the timeline.
//!
//! This is the only crate of vcsim with unsafe code across the boundary;
//! each `unsafe` block relies on the checks done at load time and on the
//! ABI's contract.

use libloading::Library;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use vcsim_blocks::list_sim::{ListSim, ProjectOrder};
pub use vcsim_dylib_abi as abi;
use vcsim_dylib_abi::Table;
use vcsim_framework::model::{DeletionPolicy, FileKind, JobState};
use vcsim_framework::{
    AnyPolicy, Candidate, CompletionEstimator, CpuScheduler, DiskManager, DiskPlan, Entry, Family,
    Job, PolicyError, PolicyResult, Ranking, Reason, Registry, RpcReply, RscRequest, RscStatus,
    RunList, RunMode, ServerRequest, Verdict, View, WorkFetcher, WorkRequest, WorkSender,
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
    /// The size of this family's table in ABI 2.0: the least a table may be.
    fn min_size(&self) -> usize {
        match self {
            PolicyTable::Cpu(_) => std::mem::size_of::<abi::CpuTable>(),
            PolicyTable::Fetch(_) => std::mem::size_of::<abi::FetchTable>(),
            PolicyTable::Send(_) => std::mem::size_of::<abi::SendTable>(),
            PolicyTable::Estimate(_) => std::mem::size_of::<abi::EstimateTable>(),
            PolicyTable::Disk(_) => std::mem::size_of::<abi::DiskTable>(),
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
    /// The ABI minor version the plugin was built for (at most
    /// [`abi::ABI_MINOR`]). A table call or a field added in a later minor
    /// is used only for a plugin whose minor has it.
    pub abi_minor: u32,
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

fn static_str(s: &abi::StaticStr) -> Result<String, String> {
    // A null pointer is no string (reading it crashed), and a name or a
    // summary is short: a length past the bound is refused before a byte
    // of it is read.
    // The pointer's bits, read from where the plugin wrote them: a plugin
    // not built with the SDK may have written 0, which a reference (the
    // field's type) cannot hold, so it is not read as one first.
    // SAFETY: `StaticStr` is `repr(C)` with the pointer first: its first
    // word is the pointer's bits, and a usize has no invalid value.
    let addr = unsafe { (s as *const abi::StaticStr as *const usize).read() };
    if addr == 0 {
        return Err("a null pointer".to_string());
    }
    if s.len > MAX_STATIC_STR {
        return Err(format!(
            "a string of {} bytes (a name or summary holds at most {MAX_STATIC_STR})",
            s.len
        ));
    }
    // SAFETY: a StaticStr of a loaded (never unloaded) library points to
    // `len` bytes of its read-only data (ABI rule 7).
    let b = unsafe { std::slice::from_raw_parts(addr as *const u8, s.len) };
    std::str::from_utf8(b)
        .map(str::to_string)
        .map_err(|_| "a string that is not UTF-8".to_string())
}

/// The error of an array the plugin says it filled past the host's buffer.
fn overflow(what: &str, len: usize, cap: usize) -> String {
    format!(
        "its {what} has {len} entries, more than the {cap} of the buffer (an overflow, ABI rule 5)"
    )
}

/// Bytes of a plugin's name, summary, crate name or compiler version.
pub const MAX_STATIC_STR: usize = 4096;

/// Policies one export may list (an SDK plugin lists a handful; a count
/// read as garbage would collect tables until memory ran out).
pub const MAX_POLICIES_PER_EXPORT: usize = 1024;

/// The message for a plugin of another major version.
fn other_major(shown: &str, major: u32) -> String {
    format!(
        "`{shown}` was built for vcsim's plugin ABI {major}; this vcsim speaks ABI {}: rebuild it \
         against vcsim-dylib-sdk {} (see the changelog)",
        abi::ABI_VERSION,
        abi::SDK_VERSION
    )
}

/// What the library's entry points say of the plugin.
struct Meta {
    crate_name: String,
    rustc: String,
    minor: u32,
}

fn open(path: &Path, canon: &Path) -> Result<Plugin, String> {
    let shown = path.display().to_string();
    // The loader opens a FIFO as any file, and waits for a writer.
    match std::fs::metadata(canon) {
        Ok(m) if !m.is_file() => {
            return Err(format!(
                "{shown}: not a loadable library: it is not a regular file"
            ))
        }
        _ => vcsim_framework::input::note_read(canon),
    }
    // SAFETY: loading a library runs its initialisers; a vcsim plugin built
    // with the SDK has none of its own. This is the trust one gives a plugin.
    let lib = unsafe { Library::new(canon) }
        .map_err(|e| format!("{shown}: not a loadable library: {e}"))?;
    // Never unloaded (ABI rule 7).
    let lib: &'static Library = Box::leak(Box::new(lib));
    let mut policies = Vec::new();
    let mut meta: Option<Meta> = None;
    for (i, sym) in abi::symbols::ALL.iter().enumerate() {
        macro_rules! family {
            ($t:ty, $variant:ident) => {{
                // SAFETY: an exported entry symbol of this major version has
                // this signature (ABI rule 1).
                let entry = match unsafe { lib.get::<abi::EntryFn<$t>>(sym.as_bytes()) } {
                    Ok(e) => *e,
                    Err(_) => continue,
                };
                let ex = entry();
                let fam = abi::symbols::FAMILIES[i];
                let m = check_export(&shown, fam, ex)?;
                // One library, one SDK: the host offers each family what
                // the library's minor version has, so its exports agree.
                match &meta {
                    None => meta = Some(m),
                    Some(first) if first.minor != m.minor => {
                        return Err(format!(
                            "{shown}: its exports were built for different minor versions of the plugin ABI ({}.{} and {}.{} for {fam}): build the whole library against one vcsim-dylib-sdk",
                            abi::ABI_VERSION,
                            first.minor,
                            abi::ABI_VERSION,
                            m.minor
                        ));
                    }
                    Some(_) => {}
                }
                if ex.count > MAX_POLICIES_PER_EXPORT {
                    return Err(format!(
                        "{shown}: its {fam} export lists {} policies, more than the {MAX_POLICIES_PER_EXPORT} one export may",
                        ex.count
                    ));
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
    let Some(meta) = meta else {
        // A plugin of another major version exports other symbol names:
        // look for them (their presence only: nothing of them is called).
        for v in (0..=16u32).filter(|v| *v != abi::ABI_VERSION) {
            for f in abi::symbols::FAMILIES {
                let name = abi::symbols::name(f, v);
                // SAFETY: only the symbol's presence is looked at.
                if unsafe { lib.get::<*const u8>(name.as_bytes()) }.is_ok() {
                    return Err(other_major(&shown, v));
                }
            }
        }
        return Err(format!(
            "{shown}: not a vcsim plugin: it exports none of {}",
            abi::symbols::ALL.join(", ")
        ));
    };
    Ok(Plugin {
        path: path.to_path_buf(),
        crate_name: meta.crate_name,
        rustc: meta.rustc,
        abi_minor: meta.minor,
        policies,
        _lib: lib,
    })
}

fn check_export<T>(shown: &str, fam: &str, ex: &abi::Export<T>) -> Result<Meta, String> {
    if ex.abi_version != abi::ABI_VERSION {
        return Err(other_major(shown, ex.abi_version));
    }
    if ex.abi_minor > abi::ABI_MINOR {
        return Err(format!(
            "`{shown}` was built for vcsim's plugin ABI {major}.{}, newer than this vcsim's ABI \
             {major}.{}: load it with a vcsim whose plugin ABI is {major}.{} or later, or rebuild \
             it against vcsim-dylib-sdk {}",
            ex.abi_minor,
            abi::ABI_MINOR,
            ex.abi_minor,
            abi::SDK_VERSION,
            major = abi::ABI_VERSION,
        ));
    }
    let need = std::mem::size_of::<abi::Export<T>>();
    if (ex.size as usize) < need {
        return Err(format!(
            "{shown}: its {fam} export is {} bytes, less than the {need} of ABI {}.0",
            ex.size,
            abi::ABI_VERSION
        ));
    }
    let rustc = static_str(&ex.rustc).map_err(|e| format!("{shown}: {e} as its rustc"))?;
    let krate = static_str(&ex.plugin).map_err(|e| format!("{shown}: {e} as its name"))?;
    if rustc != abi::RUSTC_VERSION && std::env::var_os(ANY_RUSTC_ENV).is_none() {
        return Err(format!(
            "{shown}: built by `{rustc}`, but this vcsim by `{}`: rebuild the plugin with the \
             same compiler (or set {ANY_RUSTC_ENV}=1 to load it anyway)",
            abi::RUSTC_VERSION
        ));
    }
    Ok(Meta {
        crate_name: krate,
        rustc,
        minor: ex.abi_minor,
    })
}

fn check_table(shown: &str, t: PolicyTable) -> Result<PluginPolicy, String> {
    let h = t.head();
    let fam = t.family();
    let need = t.min_size();
    if (h.size() as usize) < need {
        return Err(format!(
            "{shown}: a {fam} table is {} bytes, less than the {need} of ABI {}.0",
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
        self.entries_as_minor(self.abi_minor)
    }

    /// Registry entries that treat the plugin as built for the older minor
    /// version `minor` (at most its own): what a host reads of it and
    /// offers it is what a plugin of that minor gets. For tests of
    /// compatibility with older plugins.
    #[doc(hidden)]
    pub fn entries_as_minor(self: &Arc<Self>, minor: u32) -> Vec<Entry> {
        let minor = minor.min(self.abi_minor);
        self.policies
            .iter()
            .map(|p| {
                let who = Arc::new(Who {
                    plugin: self.path.display().to_string(),
                    name: p.name.clone(),
                    minor,
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
        // One library given twice (or by a link to it) is loaded once, so
        // its names are registered once, as the book says.
        if out.iter().any(|q| Arc::ptr_eq(q, &p)) {
            continue;
        }
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
    /// The ABI minor version the plugin was built for.
    minor: u32,
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
            abi::STATUS_ERROR | abi::STATUS_OVERFLOW => Err(PolicyError::new(format!(
                "plugin {}, `{call}`: {}",
                w.plugin,
                msg()
            ))),
            abi::STATUS_PANIC => Err(PolicyError::new(format!(
                "plugin {} panicked in `{call}`: {}",
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
            nrun: 0,
            notes: ListNotes::default(),
        })),
        PolicyTable::Fetch(t) => AnyPolicy::Fetch(Box::new(FetchAdapter {
            inner: RefCell::new((Instance::new(t, who)?, Snapshot::default())),
            asked: std::cell::Cell::new(None),
        })),
        PolicyTable::Send(t) => AnyPolicy::Send(Box::new(SendAdapter {
            inst: Instance::new(t, who)?,
            rsc: Vec::new(),
            request: Vec::new(),
            workload: Vec::new(),
            sent: Vec::new(),
            reasons: Reasons::default(),
            verdict: None,
        })),
        PolicyTable::Estimate(t) => AnyPolicy::Estimate(Box::new(EstimateAdapter {
            inner: RefCell::new(EstimateInner {
                inst: Instance::new(t, who)?,
                rsc: Vec::new(),
                step: (f64::NAN, f64::NAN, 0),
            }),
        })),
        PolicyTable::Disk(t) => AnyPolicy::Disk(Box::new(DiskAdapter {
            inner: RefCell::new((Instance::new(t, who)?, Snapshot::default())),
            delete_jobs: Vec::new(),
            delete_files: Vec::new(),
            planned: None,
        })),
    })
}

/// The `size` of a host struct, for its head.
fn size_of<T>() -> u32 {
    std::mem::size_of::<T>() as u32
}

/// The reason(s) a plugin wrote with its last decision (ABI 2.3), kept raw:
/// converted only when the simulator asks (explained runs).
#[derive(Default)]
struct Reasons {
    /// The buffer offered to the plugin (its length is the room).
    buf: Vec<u8>,
    /// Bytes the plugin wrote in the last call that offered the buffer.
    len: usize,
}

impl Reasons {
    /// Before a call whose decision may have a reason: forgets the last
    /// one, and returns the buffer to offer a plugin of `minor` with room
    /// for `cap` bytes (none before 2.3: such a plugin does not know it;
    /// none in a run that does not explain: the plugin skips the work).
    fn offer(&mut self, minor: u32, cap: usize, explaining: bool) -> Option<abi::ReasonBuf> {
        self.len = 0;
        if minor < abi::REASONS_MINOR || !explaining {
            return None;
        }
        if self.buf.len() < cap {
            self.buf.resize(cap, 0);
        }
        Some(abi::ReasonBuf {
            ptr: self.buf.as_mut_ptr(),
            cap: self.buf.len(),
            len: 0,
        })
    }

    /// After the call: keeps what the plugin says it wrote (if the call
    /// failed, nothing).
    fn keep(&mut self, rb: Option<&abi::ReasonBuf>, ok: bool) {
        self.len = match rb {
            Some(rb) if ok => rb.len.min(self.buf.len()),
            _ => 0,
        };
    }

    /// The reason at `start..start + len` of what the plugin wrote; `None`
    /// if empty or out of it.
    fn get(&self, start: usize, len: usize) -> Option<Reason> {
        let end = start.checked_add(len)?;
        if len == 0 || end > self.len {
            return None;
        }
        Some(parse_reason(&self.buf[start..end]))
    }

    /// The whole of what the plugin wrote, as one reason.
    fn whole(&self) -> Option<Reason> {
        self.get(0, self.len)
    }
}

/// The pointer to pass for a buffer `offer` made (null: none).
fn reason_ptr(rb: &mut Option<abi::ReasonBuf>) -> *mut abi::ReasonBuf {
    rb.as_mut()
        .map_or(std::ptr::null_mut(), |r| r as *mut abi::ReasonBuf)
}

/// A reason in the ABI's encoding: the text, then each data item after
/// 0x1F as `key=number` (an item that is not is left out).
fn parse_reason(b: &[u8]) -> Reason {
    let s = String::from_utf8_lossy(b);
    let mut parts = s.split(abi::REASON_DATA_SEP as char);
    let mut r = Reason::new(parts.next().unwrap_or_default());
    for item in parts {
        if let Some((k, x)) = item.split_once('=') {
            if let (false, Ok(x)) = (k.is_empty(), x.parse::<f64>()) {
                r = r.with(k.to_string(), x);
            }
        }
    }
    r
}

/// Room for a run list's reasons: the least, plus 256 bytes per job.
fn run_list_reason_cap(njobs: usize) -> usize {
    abi::REASON_MIN_CAP + 256 * njobs
}

/// Buffers a view's snapshot lives in, reused between calls.
#[derive(Default)]
struct Snapshot {
    rsc: Vec<abi::RscInfo>,
    projects: Vec<abi::Project>,
    apps: Vec<abi::App>,
    project_rsc: Vec<abi::ProjectRsc>,
    jobs: Vec<abi::Job>,
    files: Vec<abi::File>,
    /// Today's client's simulation, for the view's `list_sim` callback.
    sim: RefCell<SimCache>,
    /// The reason(s) of the last decision (not touched by `build`).
    reasons: Reasons,
}

// SAFETY: between calls the buffers only hold stale pointers (names of a
// state the call has finished with, the simulation's arrays), which are
// never read again: every call rebuilds what it passes, and `build` marks
// the simulation stale.
unsafe impl Send for Snapshot {}

/// What the view's `list_sim` callback made in the call in progress.
#[derive(Default)]
enum SimState {
    /// Not asked yet in this call.
    #[default]
    Stale,
    Made,
    Failed(String),
}

/// Today's client's simulation of a call's view: made at the plugin's first
/// ask (ABI 2.2's `list_sim`), then the same for the rest of the call. The
/// buffers are reused from call to call.
#[derive(Default)]
struct SimCache {
    state: SimState,
    sim: ListSim,
    rsc: Vec<abi::ListSimRsc>,
    missed: Vec<u32>,
    /// Points into `rsc` and `missed` while `state` is `Made`.
    out: Option<abi::ListSim>,
}

/// What the view's `host_ctx` points to during one call: the host's view
/// and the snapshot's simulation.
struct SimCtx<'a, 'v> {
    view: &'a View<'v>,
    cache: &'a RefCell<SimCache>,
}

impl SimCtx<'_, '_> {
    /// `view` with this context and its callbacks: `self` must stay where
    /// it is until the call with the view returns.
    fn attach(&self, mut view: abi::View) -> abi::View {
        view.host_ctx = self as *const Self as *const c_void;
        view.list_sim = Some(list_sim_callback);
        view
    }

    /// The simulation of the call's view, made once.
    fn list_sim(&self) -> Result<*const abi::ListSim, String> {
        let mut c = self
            .cache
            .try_borrow_mut()
            .map_err(|_| "list_sim was called re-entrantly".to_string())?;
        match &c.state {
            SimState::Made => {
                if let Some(out) = &c.out {
                    return Ok(out as *const abi::ListSim);
                }
            }
            SimState::Failed(m) => return Err(m.clone()),
            SimState::Stale => {}
        }
        let SimCache {
            state,
            sim,
            rsc,
            missed,
            out,
        } = &mut *c;
        if let Err(e) = sim.simulate(self.view, ProjectOrder::AsBuilt) {
            let m = format!("list_sim: {}", e.message);
            *state = SimState::Failed(m.clone());
            return Err(m);
        }
        let nr = sim.shortfall.len();
        rsc.clear();
        rsc.extend((0..nr).map(|r| abi::ListSimRsc {
            shortfall: sim.shortfall[r],
            saturated_time: sim.saturated_time[r],
            nidle_now: sim.nidle_now[r],
            busy_time: sim.busy_time[r],
        }));
        missed.clear();
        for p in 0..self.view.projects().len() {
            missed.extend((0..nr).map(|r| sim.deadlines_missed(p, r)));
        }
        let made = out.insert(abi::ListSim {
            size: size_of::<abi::ListSim>(),
            minor: abi::ABI_MINOR,
            rsc: abi::Array::new(rsc),
            deadlines_missed: abi::Array::new(missed),
        });
        *state = SimState::Made;
        Ok(made as *const abi::ListSim)
    }
}

/// The host's `list_sim` (ABI 2.2): the simulation of the view whose
/// `host_ctx` is `ctx`, or null with the message in `err`.
///
/// # Safety
/// `ctx` is the `host_ctx` of a view of a call in progress on this thread
/// (the ABI's rule for callbacks); `err` is the plugin's valid buffer.
unsafe extern "C" fn list_sim_callback(
    ctx: *const c_void,
    err: &mut abi::ErrBuf,
) -> *const abi::ListSim {
    let r = catch_unwind(AssertUnwindSafe(|| {
        if ctx.is_null() {
            return Err("list_sim: no host context (the view's host_ctx is null)".to_string());
        }
        // SAFETY: the caller's contract: `ctx` is the `SimCtx` that
        // `attach` put in the view of the call in progress.
        let ctx = unsafe { &*(ctx as *const SimCtx) };
        ctx.list_sim()
    }));
    let msg = match r {
        Ok(Ok(p)) => return p,
        Ok(Err(m)) => m,
        Err(_) => "list_sim: the host's simulation panicked".to_string(),
    };
    let mut n = msg.len().min(err.cap);
    while !msg.is_char_boundary(n) {
        n -= 1;
    }
    if n > 0 && !err.ptr.is_null() {
        // SAFETY: the plugin's buffer holds `cap` bytes, and `n <= cap`.
        unsafe { std::ptr::copy_nonoverlapping(msg.as_ptr(), err.ptr, n) };
    }
    err.len = n;
    std::ptr::null()
}

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
        // The simulation of an earlier call is stale.
        self.sim.get_mut().state = SimState::Stale;
        rsc_of(&mut self.rsc, h, |r| v.idle_instances(r));
        self.projects.clear();
        self.apps.clear();
        self.project_rsc.clear();
        for (p, pr) in v.projects().iter().enumerate() {
            self.projects.push(abi::Project {
                name: abi::Str::new(&pr.name),
                resource_share: pr.resource_share,
                share_fraction: v.share_fraction(p),
                latency_bound: pr.latency_bound,
                exp_avg_cpu: v.exp_avg_cpu(p),
                first_app: self.apps.len(),
                napps: pr.apps.len(),
                max_concurrent: pr.max_concurrent,
                rec: v.rec(p),
                contactable: v.contactable(p) as u8,
                has_runnable: v.project_has_runnable(p) as u8,
                deletion_policy: match pr.deletion_policy {
                    DeletionPolicy::Lru => abi::DELETE_LRU,
                    DeletionPolicy::Priority => abi::DELETE_PRIORITY,
                    DeletionPolicy::Expire => abi::DELETE_EXPIRE,
                },
            });
            self.apps.extend(pr.apps.iter().map(|a| abi::App {
                project: p,
                name: abi::Str::new(&a.name),
                cpus: a.cpus,
                gpu_rsc: a.gpu.map_or(0, |g| g.0),
                gpu_count: a.gpu.map_or(0.0, |g| g.1),
                flops_estimate: a.flops_estimate,
                latency_bound: a.latency_bound,
                max_concurrent: a.max_concurrent,
                runs_on_host: a.runs_on_host() as u8,
            }));
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
        Ok(abi::View {
            size: size_of::<abi::View>(),
            minor: abi::ABI_MINOR,
            now: v.now(),
            seed: v.seed(),
            step: v.step(),
            host: host_of(h),
            prefs: prefs_of(v.prefs()),
            on_fraction: v.on_fraction(),
            available_seconds: v.available_seconds(),
            last_schedule: v.last_schedule(),
            last_rpc: v.last_rpc().unwrap_or(f64::NAN),
            connection_interval: v.connection_interval(),
            host_on: v.host_on() as u8,
            disk_suspended: disk.suspended as u8,
            total_limit: disk.total_limit,
            core_usage: disk.core_usage,
            rsc: abi::Array::new(&self.rsc),
            projects: abi::Array::new(&self.projects),
            apps: abi::Array::new(&self.apps),
            project_rsc: abi::Array::new(&self.project_rsc),
            jobs: abi::Array::new(&self.jobs),
            files: abi::Array::new(&self.files),
            cpu_allowed: v.cpu_allowed() as u8,
            gpu_allowed: v.gpu_allowed() as u8,
            rec_half_life: v.prefs().rec_half_life,
            // Set by `SimCtx::attach` for the call.
            host_ctx: std::ptr::null(),
            list_sim: None,
            // Set for the calls whose decision may have a reason.
            reason: std::ptr::null_mut(),
            run_list: std::ptr::null_mut(),
        })
    }

    /// The context of the view's callbacks for a call with `v`.
    fn ctx<'a, 'v>(&'a self, v: &'a View<'v>) -> SimCtx<'a, 'v> {
        SimCtx {
            view: v,
            cache: &self.sim,
        }
    }
}

// ---------------------------------------------------------------- cpu

struct CpuAdapter {
    inst: Instance<abi::CpuTable>,
    snap: Snapshot,
    run: Vec<abi::RunEntry>,
    /// Entries of `run` the last `schedule` wrote (0 if it failed).
    nrun: usize,
    /// What the last `schedule` said of the run list itself (ABI 2.4).
    notes: ListNotes,
}

/// A run list's own reason and ranking (ABI 2.4): spans of the reasons'
/// buffer, and the ranking's values.
#[derive(Default)]
struct ListNotes {
    reason: (usize, usize),
    ranking_name: (usize, usize),
    /// Room for one value per project; the first `nranking` were written.
    ranking: Vec<f64>,
    nranking: usize,
}

impl ListNotes {
    /// Before `schedule`: forgets the last notes, and returns those to
    /// offer (none if the reasons' buffer is not offered, or the plugin is
    /// older than 2.4) for `nprojects` projects.
    fn offer(&mut self, minor: u32, offered: bool, nprojects: usize) -> Option<abi::RunListNotes> {
        *self = ListNotes {
            ranking: std::mem::take(&mut self.ranking),
            ..ListNotes::default()
        };
        if minor < abi::RUN_LIST_NOTES_MINOR || !offered {
            return None;
        }
        self.ranking.clear();
        self.ranking.resize(nprojects, f64::NAN);
        Some(abi::RunListNotes {
            reason_start: 0,
            reason_len: 0,
            ranking_name_start: 0,
            ranking_name_len: 0,
            ranking: abi::ArrayOut::new(&mut self.ranking),
        })
    }

    /// After a call that succeeded: keeps what the plugin wrote, and checks
    /// its ranking (one finite value per project, or none).
    fn keep(&mut self, n: Option<&abi::RunListNotes>) -> Result<(), String> {
        let Some(n) = n else { return Ok(()) };
        self.reason = (n.reason_start, n.reason_len);
        self.ranking_name = (n.ranking_name_start, n.ranking_name_len);
        let np = self.ranking.len();
        if n.ranking.len != 0 && n.ranking.len != np {
            return Err(format!(
                "invalid ranking: {} values for {np} projects (one per project)",
                n.ranking.len
            ));
        }
        self.nranking = n.ranking.len;
        if let Some(p) = self.ranking[..self.nranking]
            .iter()
            .position(|x| !x.is_finite())
        {
            self.nranking = 0;
            return Err(format!(
                "invalid ranking: the value of project {p} is {} (must be finite)",
                self.ranking[p]
            ));
        }
        Ok(())
    }
}

impl CpuScheduler for CpuAdapter {
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()> {
        self.nrun = 0;
        let mut view = self.snap.build(v)?;
        let mut rb = self.snap.reasons.offer(
            self.inst.who.minor,
            run_list_reason_cap(v.jobs().len()),
            v.explaining(),
        );
        view.reason = reason_ptr(&mut rb);
        let mut notes = self
            .notes
            .offer(self.inst.who.minor, rb.is_some(), v.projects().len());
        view.run_list = notes
            .as_mut()
            .map_or(std::ptr::null_mut(), |n| n as *mut abi::RunListNotes);
        let ctx = self.snap.ctx(v);
        let view = ctx.attach(view);
        self.run.clear();
        self.run.resize(v.jobs().len(), abi::RunEntry::default());
        let mut ro = abi::ArrayOut::new(&mut self.run);
        let mut eb = self.inst.errbuf();
        // SAFETY: the view points into `self.snap` and the state, untouched
        // during the call; `ro` describes `self.run`, `eb` the error buffer
        // and `rb` and `notes` (if any) `self.snap.reasons` and
        // `self.notes.ranking`, all live and writable.
        let st = unsafe { (self.inst.table.schedule)(self.inst.state, &view, &mut ro, &mut eb) };
        self.snap.reasons.keep(rb.as_ref(), st == abi::STATUS_OK);
        self.inst.check(st, &eb, "schedule")?;
        self.notes.keep(notes.as_ref()).map_err(|e| {
            PolicyError::new(format!("plugin {}, `schedule`: {e}", self.inst.who.plugin))
        })?;
        // A length past the buffer claims entries the plugin could not have
        // written (ABI rule 5: an overflow), and a mode is one of two.
        let bad = |what: String| {
            PolicyError::new(format!(
                "plugin {}, `schedule`: invalid decision: {what}",
                self.inst.who.plugin
            ))
        };
        if ro.len > self.run.len() {
            self.nrun = 0;
            return Err(bad(overflow("run list", ro.len, self.run.len())));
        }
        self.nrun = ro.len;
        for e in &self.run[..self.nrun] {
            let mode = match e.mode {
                abi::MODE_DEADLINE => RunMode::Deadline,
                abi::MODE_ROUND_ROBIN => RunMode::RoundRobin,
                m => {
                    return Err(bad(format!(
                        "job {} has run mode {m}: a mode is {} (round-robin) or {} (deadline)",
                        e.job,
                        abi::MODE_ROUND_ROBIN,
                        abi::MODE_DEADLINE
                    )))
                }
            };
            out.push(e.job, mode);
        }
        Ok(())
    }

    /// The reason the plugin gave with `job`'s entry in the last run list
    /// (a plugin of 2.3 or later); else, for a job it preempts or listed
    /// without one, the run list's own (2.4 or later).
    fn explain(&self, _v: &View, _out: &RunList, job: u64) -> PolicyResult<Option<Reason>> {
        if self.inst.who.minor < abi::REASONS_MINOR {
            return Ok(None);
        }
        let own = self.run[..self.nrun]
            .iter()
            .find(|e| e.job == job)
            .and_then(|e| self.snap.reasons.get(e.reason_start, e.reason_len));
        Ok(own.or_else(|| {
            let (start, len) = self.notes.reason;
            self.snap.reasons.get(start, len)
        }))
    }

    /// The ranking the last run list was made by (a plugin of 2.4 or later).
    fn ranking(&self, _v: &View) -> PolicyResult<Option<Ranking>> {
        if self.notes.nranking == 0 {
            return Ok(None);
        }
        let (start, len) = self.notes.ranking_name;
        let name = self
            .snap
            .reasons
            .get(start, len)
            .map(|r| r.text)
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "ranking".into());
        Ok(Some(Ranking {
            name,
            values: self.notes.ranking[..self.notes.nranking].to_vec(),
        }))
    }
}

// ---------------------------------------------------------------- fetch

type FetchInner = (Instance<abi::FetchTable>, Snapshot);

struct FetchAdapter {
    inner: RefCell<FetchInner>,
    /// The request the last `request` or `piggyback` returned (project and
    /// seconds), whose reason the snapshot keeps.
    asked: std::cell::Cell<Option<(usize, u64)>>,
}

fn rsc_req(r: &RscRequest) -> abi::RscRequest {
    abi::RscRequest {
        req_seconds: r.req_seconds,
        req_ninstances: r.req_ninstances,
        estimated_delay: r.estimated_delay,
    }
}

fn request_in(r: &WorkRequest, rsc: &[abi::RscRequest]) -> abi::RequestIn {
    abi::RequestIn {
        project: r.project,
        work_req_seconds: r.work_req_seconds,
        rsc: abi::Array::new(rsc),
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
        self.asked.set(None);
        self.with(|(inst, snap)| {
            let mut view = snap.build(v)?;
            let mut rb = snap
                .reasons
                .offer(inst.who.minor, abi::REASON_MIN_CAP, v.explaining());
            view.reason = reason_ptr(&mut rb);
            let ctx = snap.ctx(v);
            let view = ctx.attach(view);
            let nrsc = v.host().nrsc();
            let mut rsc = vec![abi::RscRequest::default(); nrsc];
            let mut out = abi::RequestOut {
                size: size_of::<abi::RequestOut>(),
                minor: abi::ABI_MINOR,
                present: 0,
                project: 0,
                work_req_seconds: 0.0,
                rsc: abi::ArrayOut::new(&mut rsc),
            };
            let mut eb = inst.errbuf();
            // SAFETY: as in `CpuAdapter::schedule`; `out.rsc` describes `rsc`.
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
            snap.reasons.keep(rb.as_ref(), st == abi::STATUS_OK);
            inst.check(st, &eb, call)?;
            if out.present == 0 {
                return Ok(None);
            }
            // A plugin of ABI 2.2 or later may tell the delay; an earlier
            // one leaves the buffer's 0 (read as 0 anyway).
            let tells_delay = inst.who.minor >= 2;
            let mut req = Vec::with_capacity(rsc.len());
            for (i, r) in rsc.iter().enumerate() {
                let estimated_delay = if tells_delay { r.estimated_delay } else { 0.0 };
                if !estimated_delay.is_finite() || estimated_delay < 0.0 {
                    return Err(PolicyError::new(format!(
                        "plugin {}, `{call}`: estimated_delay {estimated_delay} of resource {i} \
                         (must be finite and not negative)",
                        inst.who.plugin
                    )));
                }
                req.push(RscRequest {
                    req_seconds: r.req_seconds,
                    req_ninstances: r.req_ninstances,
                    estimated_delay,
                });
            }
            self.asked
                .set(Some((out.project, out.work_req_seconds.to_bits())));
            Ok(Some(WorkRequest {
                project: out.project,
                work_req_seconds: out.work_req_seconds,
                rsc: req,
            }))
        })
    }
}

impl WorkFetcher for FetchAdapter {
    fn account(&mut self, v: &View) -> PolicyResult<()> {
        self.with(|(inst, snap)| {
            let view = snap.build(v)?;
            let ctx = snap.ctx(v);
            let view = ctx.attach(view);
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

    /// The reason the plugin gave with the last request, if `req` is it.
    fn explain_request(&self, _v: &View, req: &WorkRequest) -> PolicyResult<Option<Reason>> {
        if self.asked.get() != Some((req.project, req.work_req_seconds.to_bits())) {
            return Ok(None);
        }
        self.with(|(inst, snap)| {
            Ok(if inst.who.minor < abi::REASONS_MINOR {
                None
            } else {
                snap.reasons.whole()
            })
        })
    }

    fn on_reply(&mut self, v: &View, reply: &RpcReply) -> PolicyResult<()> {
        self.with(|(inst, snap)| {
            let view = snap.build(v)?;
            let ctx = snap.ctx(v);
            let view = ctx.attach(view);
            let req: Vec<abi::RscRequest> = reply.request.rsc.iter().map(rsc_req).collect();
            let nrsc = reply.jobs.len().max(reply.rsc_status.len());
            let rsc: Vec<abi::ReplyRsc> = (0..nrsc)
                .map(|r| abi::ReplyRsc {
                    jobs: reply.jobs.get(r).copied().unwrap_or(0),
                    status: match reply.rsc_status.get(r) {
                        None | Some(RscStatus::Unknown) => abi::RSC_STATUS_UNKNOWN,
                        Some(RscStatus::WorkReturned) => abi::RSC_STATUS_WORK_RETURNED,
                        Some(RscStatus::NoWorkButSupported) => {
                            abi::RSC_STATUS_NO_WORK_BUT_SUPPORTED
                        }
                        Some(RscStatus::NotSupported) => abi::RSC_STATUS_NOT_SUPPORTED,
                    },
                })
                .collect();
            let r = abi::Reply {
                size: size_of::<abi::Reply>(),
                minor: abi::ABI_MINOR,
                project: reply.project,
                request: request_in(&reply.request, &req),
                reached: reply.reached as u8,
                rsc: abi::Array::new(&rsc),
            };
            let mut eb = inst.errbuf();
            // SAFETY: as in `CpuAdapter::schedule`; `r` points into live vectors.
            let st = unsafe { (inst.table.on_reply)(inst.state, &view, &r, &mut eb) };
            inst.check(st, &eb, "on_reply")
        })
    }

    fn backoff_on_empty_reply(&self, v: &View) -> PolicyResult<bool> {
        self.with(|(inst, snap)| {
            let view = snap.build(v)?;
            let ctx = snap.ctx(v);
            let view = ctx.attach(view);
            let mut out = 1u8;
            let mut eb = inst.errbuf();
            // SAFETY: as in `CpuAdapter::schedule`; `out` is valid.
            let st = unsafe {
                (inst.table.backoff_on_empty_reply)(inst.state, &view, &mut out, &mut eb)
            };
            inst.check(st, &eb, "backoff_on_empty_reply")?;
            Ok(out != 0)
        })
    }
}

// ---------------------------------------------------------------- send

struct SendAdapter {
    inst: Instance<abi::SendTable>,
    rsc: Vec<abi::RscInfo>,
    request: Vec<abi::RscRequest>,
    workload: Vec<abi::ReportedJob>,
    sent: Vec<abi::Candidate>,
    /// The reason of the last verdict, and the verdict.
    reasons: Reasons,
    verdict: Option<Verdict>,
}

// SAFETY: as for `Snapshot`: `rsc` holds only stale names between calls,
// never read again.
unsafe impl Send for SendAdapter {}

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
        self.verdict = None;
        // The server sees no view: the request says whether the run explains.
        let mut rb = self
            .reasons
            .offer(self.inst.who.minor, abi::REASON_MIN_CAP, req.explaining);
        rsc_of(&mut self.rsc, req.host, |_| f64::NAN);
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
            size: size_of::<abi::ServerRequest>(),
            minor: abi::ABI_MINOR,
            now: req.now,
            project: req.project,
            project_name: abi::Str::new(req.project_name),
            latency_bound: req.latency_bound,
            host: host_of(req.host),
            rsc: abi::Array::new(&self.rsc),
            request: request_in(req.request, &self.request),
            dcf: req.dcf,
            work_buf_min: req.work_buf_min,
            workload: abi::Array::new(&self.workload),
            free_bytes: req.free_bytes,
            on_fraction: req.on_fraction,
            reason: reason_ptr(&mut rb),
        };
        let sent = abi::Array::new(&self.sent);
        let c = cand_of(cand);
        let mut out = abi::VERDICT_STOP;
        let mut eb = self.inst.errbuf();
        // SAFETY: `r` and `sent` point into this adapter's buffers and
        // `req`, all live and untouched during the call; `rb` (if any)
        // describes `self.reasons`.
        let st = unsafe {
            (self.inst.table.consider)(self.inst.state, &r, &sent, &c, &mut out, &mut eb)
        };
        self.reasons.keep(rb.as_ref(), st == abi::STATUS_OK);
        self.inst.check(st, &eb, "consider")?;
        let verdict = match out {
            abi::VERDICT_SEND => Verdict::Send,
            abi::VERDICT_SKIP => Verdict::Skip,
            abi::VERDICT_STOP => Verdict::Stop,
            x => {
                return Err(PolicyError::new(format!(
                    "plugin {}: send policy `{}` gave verdict {x}",
                    self.inst.who.plugin, self.inst.who.name
                )))
            }
        };
        self.verdict = Some(verdict);
        Ok(verdict)
    }

    /// The reason the plugin gave with the last verdict, if `verdict` is it.
    fn explain_verdict(
        &self,
        _req: &ServerRequest,
        _sent: &[Candidate],
        _cand: &Candidate,
        verdict: Verdict,
    ) -> PolicyResult<Option<Reason>> {
        if self.verdict != Some(verdict) || self.inst.who.minor < abi::REASONS_MINOR {
            return Ok(None);
        }
        Ok(self.reasons.whole())
    }
}

// ---------------------------------------------------------------- estimate

struct EstimateAdapter {
    inner: RefCell<EstimateInner>,
}

struct EstimateInner {
    inst: Instance<abi::EstimateTable>,
    /// The buffer of the view's resources.
    rsc: Vec<abi::RscInfo>,
    /// The step of the last view's time and step length: the estimator is
    /// asked about every job at one time, and `View::step` rounds.
    step: (f64, f64, u64),
}

impl EstimateInner {
    fn step(&mut self, v: &View) -> u64 {
        let key = (v.now(), v.prefs().step);
        if (self.step.0, self.step.1) != key {
            self.step = (key.0, key.1, v.step());
        }
        self.step.2
    }
}

enum EstCall<'j> {
    Remaining(&'j Job),
    Finished(&'j Job),
    Correction(usize),
}

impl EstimateAdapter {
    fn call(&self, v: &View, what: EstCall) -> PolicyResult<f64> {
        let mut g = self
            .inner
            .try_borrow_mut()
            .map_err(|_| PolicyError::new("a plugin estimator was called re-entrantly"))?;
        let step = g.step(v);
        let EstimateInner { inst, rsc, .. } = &mut *g;
        let h = v.host();
        rsc_of(rsc, h, |r| v.idle_instances(r));
        let ev = abi::EstimateView {
            size: size_of::<abi::EstimateView>(),
            minor: abi::ABI_MINOR,
            now: v.now(),
            seed: v.seed(),
            step,
            host: host_of(h),
            prefs: prefs_of(v.prefs()),
            rsc: abi::Array::new(rsc),
        };
        let mut out = f64::NAN;
        let mut eb = inst.errbuf();
        let t = inst.table;
        let (st, call) = match what {
            EstCall::Remaining(job) => {
                let j = job_of(v, job, false)?;
                // SAFETY: `ev` points into `rsc`, live during the call; `j`,
                // `out` and `eb` are valid.
                let st = unsafe { (t.remaining_seconds)(inst.state, &ev, &j, &mut out, &mut eb) };
                (st, "remaining_seconds")
            }
            EstCall::Finished(job) => {
                let j = job_of(v, job, false)?;
                // SAFETY: as for `remaining_seconds`.
                let st = unsafe { (t.on_job_finished)(inst.state, &ev, &j, &mut eb) };
                (st, "on_job_finished")
            }
            EstCall::Correction(p) => {
                // SAFETY: as for `remaining_seconds`.
                let st = unsafe { (t.correction)(inst.state, &ev, p, &mut out, &mut eb) };
                (st, "correction")
            }
        };
        inst.check(st, &eb, call)?;
        Ok(out)
    }
}

// SAFETY: as for `Snapshot`: the resource buffer holds only stale names
// between calls, never read again.
unsafe impl Send for EstimateAdapter {}

impl CompletionEstimator for EstimateAdapter {
    fn remaining_seconds(&self, v: &View, job: &Job) -> PolicyResult<f64> {
        self.call(v, EstCall::Remaining(job))
    }

    fn correction(&self, v: &View, project: usize) -> PolicyResult<f64> {
        self.call(v, EstCall::Correction(project))
    }

    fn on_job_finished(&mut self, v: &View, job: &Job) -> PolicyResult<()> {
        self.call(v, EstCall::Finished(job)).map(|_| ())
    }
}

// ---------------------------------------------------------------- disk

struct DiskAdapter {
    inner: RefCell<(Instance<abi::DiskTable>, Snapshot)>,
    /// The plan's buffers (`make_room` and `poll` take `&mut self`).
    delete_jobs: Vec<u64>,
    delete_files: Vec<u64>,
    /// The last plan's lengths in them (`None` if the call failed), whose
    /// reason the snapshot keeps.
    planned: Option<(usize, usize)>,
}

impl DiskAdapter {
    fn borrow(&self) -> PolicyResult<std::cell::RefMut<'_, (Instance<abi::DiskTable>, Snapshot)>> {
        self.inner
            .try_borrow_mut()
            .map_err(|_| PolicyError::new("a plugin disk manager was called re-entrantly"))
    }

    /// Calls `make_room` (`Some((project, bytes))`) or `poll` (`None`).
    fn plan(&mut self, v: &View, room: Option<(usize, f64)>) -> PolicyResult<DiskPlan> {
        self.planned = None;
        let (inst, snap) = self.inner.get_mut();
        let mut view = snap.build(v)?;
        let mut rb = snap
            .reasons
            .offer(inst.who.minor, abi::REASON_MIN_CAP, v.explaining());
        view.reason = reason_ptr(&mut rb);
        let ctx = snap.ctx(v);
        let view = ctx.attach(view);
        // Room for one id per job and one per file.
        self.delete_jobs.clear();
        self.delete_jobs.resize(v.jobs().len(), 0);
        self.delete_files.clear();
        self.delete_files.resize(v.disk().files.len(), 0);
        let mut out = abi::DiskPlanOut {
            size: size_of::<abi::DiskPlanOut>(),
            minor: abi::ABI_MINOR,
            delete_jobs: abi::ArrayOut::new(&mut self.delete_jobs),
            delete_files: abi::ArrayOut::new(&mut self.delete_files),
            suspend: 0,
        };
        let mut eb = inst.errbuf();
        // SAFETY: as in `CpuAdapter::schedule`; the plan's arrays describe
        // `delete_jobs` and `delete_files`, live and writable.
        let (st, call) = unsafe {
            match room {
                Some((p, bytes)) => (
                    (inst.table.make_room)(inst.state, &view, p, bytes, &mut out, &mut eb),
                    "make_room",
                ),
                None => (
                    (inst.table.poll)(inst.state, &view, &mut out, &mut eb),
                    "poll",
                ),
            }
        };
        snap.reasons.keep(rb.as_ref(), st == abi::STATUS_OK);
        inst.check(st, &eb, call)?;
        for (what, len, cap) in [
            (
                "plan's job list",
                out.delete_jobs.len,
                self.delete_jobs.len(),
            ),
            (
                "plan's file list",
                out.delete_files.len,
                self.delete_files.len(),
            ),
        ] {
            if len > cap {
                return Err(PolicyError::new(format!(
                    "plugin {}, `{call}`: invalid decision: {}",
                    inst.who.plugin,
                    overflow(what, len, cap)
                )));
            }
        }
        let (nj, nf) = (out.delete_jobs.len, out.delete_files.len);
        self.planned = Some((nj, nf));
        Ok(DiskPlan {
            delete_jobs: self.delete_jobs[..nj].to_vec(),
            delete_files: self.delete_files[..nf].to_vec(),
            suspend: out.suspend != 0,
        })
    }
}

impl DiskManager for DiskAdapter {
    fn free_space(&self, v: &View, project: usize) -> PolicyResult<[f64; 3]> {
        let mut g = self.borrow()?;
        let (inst, snap) = &mut *g;
        let view = snap.build(v)?;
        let ctx = snap.ctx(v);
        let view = ctx.attach(view);
        let mut out = [v.host().disk_bytes; 3];
        let mut eb = inst.errbuf();
        // SAFETY: as in `CpuAdapter::schedule`.
        let s = unsafe { (inst.table.free_space)(inst.state, &view, project, &mut out, &mut eb) };
        inst.check(s, &eb, "free_space")?;
        Ok(out)
    }

    fn enforces(&self, v: &View) -> PolicyResult<bool> {
        let mut g = self.borrow()?;
        let (inst, snap) = &mut *g;
        let view = snap.build(v)?;
        let ctx = snap.ctx(v);
        let view = ctx.attach(view);
        let mut out = 0u8;
        let mut eb = inst.errbuf();
        // SAFETY: as in `CpuAdapter::schedule`; `out` is valid.
        let st = unsafe { (inst.table.enforces)(inst.state, &view, &mut out, &mut eb) };
        inst.check(st, &eb, "enforces")?;
        Ok(out != 0)
    }

    fn make_room(&mut self, v: &View, project: usize, bytes: f64) -> PolicyResult<DiskPlan> {
        self.plan(v, Some((project, bytes)))
    }

    fn poll(&mut self, v: &View) -> PolicyResult<DiskPlan> {
        self.plan(v, None)
    }

    /// The reason the plugin gave with the last plan, if `plan` is it.
    fn explain_plan(&self, _v: &View, plan: &DiskPlan) -> PolicyResult<Option<Reason>> {
        let Some((nj, nf)) = self.planned else {
            return Ok(None);
        };
        if plan.delete_jobs[..] != self.delete_jobs[..nj]
            || plan.delete_files[..] != self.delete_files[..nf]
        {
            return Ok(None);
        }
        let g = self.borrow()?;
        Ok(if g.0.who.minor < abi::REASONS_MINOR {
            None
        } else {
            g.1.reasons.whole()
        })
    }

    fn project_limit(&self, v: &View, project: usize) -> PolicyResult<Option<f64>> {
        let mut g = self.borrow()?;
        let (inst, snap) = &mut *g;
        let view = snap.build(v)?;
        let ctx = snap.ctx(v);
        let view = ctx.attach(view);
        let mut out = f64::NAN;
        let mut eb = inst.errbuf();
        // SAFETY: as in `CpuAdapter::schedule`; `out` is valid.
        let s =
            unsafe { (inst.table.project_limit)(inst.state, &view, project, &mut out, &mut eb) };
        inst.check(s, &eb, "project_limit")?;
        Ok((!out.is_nan()).then_some(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" fn no_table(_i: usize) -> Option<&'static abi::CpuTable> {
        None
    }

    fn export(major: u32, minor: u32) -> abi::Export<abi::CpuTable> {
        abi::Export {
            abi_version: major,
            abi_minor: minor,
            size: std::mem::size_of::<abi::Export<abi::CpuTable>>() as u32,
            rustc: abi::StaticStr::new(abi::RUSTC_VERSION),
            plugin: abi::StaticStr::new("test-plugin 1.0"),
            count: 0,
            table: no_table,
        }
    }

    #[test]
    fn an_export_of_this_version_is_accepted() {
        let m = check_export("libx.so", "cpu", &export(abi::ABI_VERSION, abi::ABI_MINOR)).unwrap();
        assert_eq!(m.crate_name, "test-plugin 1.0");
        assert_eq!(m.minor, abi::ABI_MINOR);
    }

    #[test]
    fn a_newer_minor_is_refused_naming_both() {
        let e = check_export(
            "libx.so",
            "cpu",
            &export(abi::ABI_VERSION, abi::ABI_MINOR + 1),
        )
        .err()
        .unwrap();
        let (v, m) = (abi::ABI_VERSION, abi::ABI_MINOR);
        assert!(
            e.starts_with(&format!(
                "`libx.so` was built for vcsim's plugin ABI {v}.{}, newer than this vcsim's ABI \
                 {v}.{m}",
                m + 1
            )),
            "{e}"
        );
    }

    #[test]
    fn another_major_is_refused_with_the_sdk_to_rebuild_against() {
        let e = check_export("libx.so", "cpu", &export(1, 0)).err().unwrap();
        assert_eq!(
            e,
            format!(
                "`libx.so` was built for vcsim's plugin ABI 1; this vcsim speaks ABI {}: rebuild \
                 it against vcsim-dylib-sdk {} (see the changelog)",
                abi::ABI_VERSION,
                abi::SDK_VERSION
            )
        );
    }

    /// Policies built with the SDK into this test binary, to go through the
    /// adapters as a loaded plugin's would.
    mod probe {
        use vcsim_dylib_sdk as sdk;
        use vcsim_dylib_sdk::{PolicyResult, RscRequest, View, WorkRequest};

        /// `request`: per resource, the simulation's saturated time,
        /// idle instances and busy time (as the delay); A's REC as the
        /// seconds. `piggyback(p)`: p's REC, per resource the shortfall,
        /// p's deadline misses and the REC half-life.
        #[derive(Default)]
        pub struct Probe;

        impl sdk::WorkFetcher for Probe {
            fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>> {
                let s = v.list_sim()?.ok_or("no list_sim from a 2.2 host")?;
                let again = v.list_sim()?.ok_or("no list_sim the second time")?;
                assert!(std::ptr::eq(s.rsc(0), again.rsc(0)), "made once a call");
                let mut req = WorkRequest::seconds(0, v.rec(0), v.nrsc());
                for (r, x) in req.rsc.iter_mut().enumerate() {
                    *x = RscRequest {
                        req_seconds: s.saturated_time(r),
                        req_ninstances: s.nidle_now(r),
                        estimated_delay: s.busy_time(r),
                    };
                }
                Ok(Some(req))
            }
            fn piggyback(&self, v: &View, p: usize) -> PolicyResult<Option<WorkRequest>> {
                let s = v.list_sim()?.ok_or("no list_sim")?;
                let mut req = WorkRequest::seconds(p, v.project(p).rec(), v.nrsc());
                for (r, x) in req.rsc.iter_mut().enumerate() {
                    *x = RscRequest {
                        req_seconds: s.shortfall(r),
                        req_ninstances: s.deadlines_missed(p, r) as f64,
                        estimated_delay: v.rec_half_life(),
                    };
                }
                Ok(Some(req))
            }
        }

        /// Tells a negative delay.
        #[derive(Default)]
        pub struct BadDelay;

        impl sdk::WorkFetcher for BadDelay {
            fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>> {
                let mut req = WorkRequest::seconds(0, 10.0, v.nrsc());
                req.rsc[0].req_seconds = 10.0;
                req.rsc[0].estimated_delay = -1.0;
                Ok(Some(req))
            }
        }

        /// Sends iff the request's on_fraction is 0.75 and resource 0's
        /// delay 42.
        #[derive(Default)]
        pub struct SendProbe;

        impl sdk::WorkSender for SendProbe {
            fn consider(
                &mut self,
                req: &sdk::ServerRequest,
                _sent: sdk::Strided<sdk::Candidate>,
                _cand: &sdk::Candidate,
            ) -> PolicyResult<sdk::Verdict> {
                Ok(
                    if req.on_fraction == 0.75 && req.request.rsc[0].estimated_delay == 42.0 {
                        sdk::Verdict::Send
                    } else {
                        sdk::Verdict::Skip
                    },
                )
            }
        }

        /// Runs every runnable job but the last; says why of the first
        /// (with data) and the third (a text with the data separator in
        /// it), not the second; says why of the rest as a list (ABI 2.4),
        /// and ranks the projects by their index times 1.5.
        #[derive(Default)]
        pub struct Why;

        thread_local! {
            /// What `Why::schedule` last saw of `View::explaining`.
            pub static CPU_EXPLAINING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        }

        impl sdk::CpuScheduler for Why {
            fn schedule(&mut self, v: &View, out: &mut sdk::RunList) -> PolicyResult<()> {
                CPU_EXPLAINING.with(|e| e.set(v.explaining()));
                let runnable = v.jobs().iter().filter(|j| j.is_runnable()).count();
                out.set_list_reason(sdk::Reason::new("waits its turn").with("turn", 9.0));
                let np = v.projects().len();
                out.set_ranking("index x 1.5", (0..np).map(|p| p as f64 * 1.5).collect());
                for (k, j) in v.jobs().iter().filter(|j| j.is_runnable()).enumerate() {
                    if k + 1 == runnable {
                        break;
                    }
                    match k {
                        0 => out.push_with_reason(
                            j.id,
                            sdk::RunMode::RoundRobin,
                            sdk::Reason::new(format!("first: job {}", j.id))
                                .with("rank", 1.0)
                                .with("slack_s", -0.25),
                        ),
                        2 => out.push_with_reason(j.id, sdk::RunMode::Deadline, "third\u{1f}x=1"),
                        _ => out.push(j.id, sdk::RunMode::RoundRobin),
                    }
                }
                Ok(())
            }
        }

        thread_local! {
            /// Times `WhyFetch::explain_request` was called on this thread
            /// (the adapters call plugins on the caller's thread).
            pub static FETCH_EXPLAINED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        }

        /// Asks project 1 for an hour, and says why.
        #[derive(Default)]
        pub struct WhyFetch;

        impl sdk::WorkFetcher for WhyFetch {
            fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>> {
                Ok(Some(WorkRequest::seconds(1, 3600.0, v.nrsc())))
            }
            fn explain_request(
                &self,
                _v: &View,
                req: &WorkRequest,
            ) -> PolicyResult<Option<sdk::Reason>> {
                FETCH_EXPLAINED.with(|n| n.set(n.get() + 1));
                Ok(Some(
                    sdk::Reason::new(format!("project {} is starved", req.project))
                        .with("seconds", req.work_req_seconds),
                ))
            }
        }

        /// Sends a GPU job, skips a CPU one, and says why.
        #[derive(Default)]
        pub struct WhySend;

        impl sdk::WorkSender for WhySend {
            fn consider(
                &mut self,
                _req: &sdk::ServerRequest,
                _sent: sdk::Strided<sdk::Candidate>,
                cand: &sdk::Candidate,
            ) -> PolicyResult<sdk::Verdict> {
                Ok(if cand.rsc > 0 {
                    sdk::Verdict::Send
                } else {
                    sdk::Verdict::Skip
                })
            }
            fn explain_verdict(
                &self,
                _req: &sdk::ServerRequest,
                sent: sdk::Strided<sdk::Candidate>,
                cand: &sdk::Candidate,
                verdict: sdk::Verdict,
            ) -> PolicyResult<Option<sdk::Reason>> {
                Ok(Some(
                    sdk::Reason::new(format!("{verdict:?}: resource {}", cand.rsc))
                        .with("sent", sent.len() as f64),
                ))
            }
        }

        /// Deletes the first job to make room, and says why.
        #[derive(Default)]
        pub struct WhyDisk;

        impl sdk::DiskManager for WhyDisk {
            fn free_space(&self, _v: &View, _p: usize) -> PolicyResult<[f64; 3]> {
                Ok([0.0; 3])
            }
            fn make_room(
                &mut self,
                v: &View,
                _p: usize,
                _bytes: f64,
            ) -> PolicyResult<sdk::DiskPlan> {
                Ok(sdk::DiskPlan {
                    delete_jobs: vec![v.jobs()[0].id],
                    delete_files: vec![],
                    suspend: false,
                })
            }
            fn explain_plan(
                &self,
                _v: &View,
                plan: &sdk::DiskPlan,
            ) -> PolicyResult<Option<sdk::Reason>> {
                Ok(Some(sdk::Reason::new(format!(
                    "job {} is the oldest",
                    plan.delete_jobs[0]
                ))))
            }
        }

        sdk::export_fetch!(Probe => "probe", "reads today's client"; BadDelay => "bad-delay", "a negative delay";
            WhyFetch => "why-fetch", "says why");
        sdk::export_send!(SendProbe => "send-probe", "reads on_fraction and the delay";
            WhySend => "why-send", "says why");
        /// Ranks the projects with one value too few (`Short`), or with a
        /// NaN (`NanRank`): an explained run fails.
        #[derive(Default)]
        pub struct Short;

        impl sdk::CpuScheduler for Short {
            fn schedule(&mut self, v: &View, out: &mut sdk::RunList) -> PolicyResult<()> {
                out.set_ranking("short", vec![0.0; v.projects().len() - 1]);
                Ok(())
            }
        }

        #[derive(Default)]
        pub struct NanRank;

        impl sdk::CpuScheduler for NanRank {
            fn schedule(&mut self, v: &View, out: &mut sdk::RunList) -> PolicyResult<()> {
                let mut values = vec![0.0; v.projects().len()];
                values[1] = f64::NAN;
                out.set_ranking("", values);
                Ok(())
            }
        }

        sdk::export_cpu!(Why => "why", "says why"; Short => "short", "a ranking too short";
            NanRank => "nan-rank", "a NaN in its ranking");
        sdk::export_disk!(WhyDisk => "why-disk", "says why");

        pub fn cpu() -> &'static vcsim_dylib_abi::CpuTable {
            cpu_at(0)
        }
        pub fn cpu_at(i: usize) -> &'static vcsim_dylib_abi::CpuTable {
            (vcsim_plugin_cpu_v2().table)(i).unwrap()
        }
        pub fn disk() -> &'static vcsim_dylib_abi::DiskTable {
            (vcsim_plugin_disk_v2().table)(0).unwrap()
        }
        pub fn send_at(i: usize) -> &'static vcsim_dylib_abi::SendTable {
            (vcsim_plugin_send_v2().table)(i).unwrap()
        }

        pub fn fetch(i: usize) -> &'static vcsim_dylib_abi::FetchTable {
            (vcsim_plugin_fetch_v2().table)(i).unwrap()
        }
        pub fn send() -> &'static vcsim_dylib_abi::SendTable {
            (vcsim_plugin_send_v2().table)(0).unwrap()
        }
    }

    fn who(minor: u32) -> Arc<Who> {
        Arc::new(Who {
            plugin: "probe".into(),
            name: "probe".into(),
            minor,
        })
    }

    fn fetcher(i: usize, minor: u32) -> Box<dyn WorkFetcher> {
        match make(PolicyTable::Fetch(probe::fetch(i)), who(minor)).unwrap() {
            AnyPolicy::Fetch(f) => f,
            _ => unreachable!(),
        }
    }

    /// 2 CPUs and a GPU; A runs a CPU job and has GPU jobs queued; B has
    /// more CPU jobs than the CPUs finish by their deadlines.
    fn busy_host() -> vcsim_framework::ClientState {
        use vcsim_framework::testing::{add_job, set_rec, state, JobSpec};
        let mut st = state(
            r#"
name = "busy"
duration_days = 10
[host]
ncpus = 2
cpu_flops = 1e9
[[host.gpu]]
kind = "nvidia"
count = 1
flops = 2e9
[client]
rec_half_life_days = 5
[[project]]
name = "A"
resource_share = 100
latency_bound_days = 1
[[project.app]]
name = "cpu"
flops_estimate = 3.6e12
flops_mean = 3.6e12
[[project.app]]
name = "gpu"
cpus = 0.01
gpu = { kind = "nvidia", count = 1 }
flops_estimate = 7.2e12
flops_mean = 7.2e12
[[project]]
name = "B"
resource_share = 50
latency_bound_days = 1
[[project.app]]
name = "b"
flops_estimate = 3.6e12
flops_mean = 3.6e12
"#,
        );
        set_rec(&mut st, 0, 100.0);
        set_rec(&mut st, 1, 30.0);
        add_job(&mut st, JobSpec::queued(0, 3.6e13, 86400.0).running(0.5));
        for _ in 0..3 {
            let mut g = JobSpec::queued(0, 7.2e12, 3.0 * 3600.0);
            g.app = 1;
            add_job(&mut st, g);
        }
        for _ in 0..6 {
            add_job(&mut st, JobSpec::queued(1, 3.6e12, 3.0 * 3600.0));
        }
        st
    }

    #[test]
    fn todays_client_reaches_a_2_2_plugin_and_its_delay_comes_back() {
        let st = busy_host();
        let est = vcsim_builtin::jc::Jc3::default();
        let v = View::new(&st, &est, 3600.0);
        let mut sim = ListSim::default();
        sim.simulate(&v, ProjectOrder::AsBuilt).unwrap();
        assert!(sim.busy_time[0] > 0.0 && sim.deadlines_missed(1, 0) > 0);
        let f = fetcher(0, abi::ABI_MINOR);
        let req = f.request(&v).unwrap().unwrap();
        assert_eq!(req.work_req_seconds, v.rec(0));
        assert!(v.rec(0) > 0.0 && v.rec(0) != 100.0);
        for r in 0..2 {
            let x = req.rsc[r];
            assert_eq!(
                (x.req_seconds, x.req_ninstances, x.estimated_delay),
                (sim.saturated_time[r], sim.nidle_now[r], sim.busy_time[r]),
                "resource {r}"
            );
        }
        for p in 0..2 {
            let req = f.piggyback(&v, p).unwrap().unwrap();
            assert_eq!(req.work_req_seconds, v.rec(p));
            for r in 0..2 {
                let x = req.rsc[r];
                assert_eq!(x.req_seconds, sim.shortfall[r]);
                assert_eq!(x.req_ninstances, sim.deadlines_missed(p, r) as f64);
                assert_eq!(x.estimated_delay, 5.0 * 86400.0);
            }
        }
        // Another view: a new simulation, not the last call's.
        let mut st2 = busy_host();
        st2.jobs.truncate(4);
        let later = View::new(&st2, &est, 3600.0);
        let mut sim2 = ListSim::default();
        sim2.simulate(&later, ProjectOrder::AsBuilt).unwrap();
        let req = f.request(&later).unwrap().unwrap();
        assert_eq!(req.rsc[0].req_seconds, sim2.saturated_time[0]);
        assert_ne!(sim2.saturated_time[0], sim.saturated_time[0]);
        // A plugin of 2.1 tells no delay: whatever is in the buffer reads 0.
        let old = fetcher(0, 1);
        let req = old.request(&v).unwrap().unwrap();
        assert!(req.rsc.iter().all(|x| x.estimated_delay == 0.0));
        // A negative delay is an error naming the plugin.
        let e = fetcher(1, abi::ABI_MINOR).request(&v).unwrap_err();
        assert!(
            e.message
                .contains("plugin probe, `request`: estimated_delay -1 of resource 0"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_server_request_carries_on_fraction_and_the_delays() {
        let st = busy_host();
        let mut ws = match make(PolicyTable::Send(probe::send()), who(abi::ABI_MINOR)).unwrap() {
            AnyPolicy::Send(s) => s,
            _ => unreachable!(),
        };
        let rsc = |d: f64| RscRequest {
            req_seconds: 3600.0,
            req_ninstances: 1.0,
            estimated_delay: d,
        };
        let request = WorkRequest {
            project: 0,
            work_req_seconds: 3600.0,
            rsc: vec![rsc(42.0), rsc(0.0)],
        };
        let req = ServerRequest {
            now: 0.0,
            project: 0,
            project_name: "A",
            latency_bound: 86400.0,
            host: &st.host,
            request: &request,
            dcf: 1.0,
            work_buf_min: 8640.0,
            on_fraction: 0.75,
            workload: &[],
            free_bytes: [1e12; 3],
            explaining: false,
        };
        let cand = Candidate {
            app: 0,
            rsc: 0,
            cpus: 1.0,
            gpu_count: 0.0,
            flops_estimate: 3.6e12,
            est_seconds: 3600.0,
            deadline: 86400.0,
        };
        assert_eq!(ws.consider(&req, &[], &cand).unwrap(), Verdict::Send);
        let half = ServerRequest {
            on_fraction: 0.5,
            ..req.clone()
        };
        assert_eq!(ws.consider(&half, &[], &cand).unwrap(), Verdict::Skip);
        let request2 = WorkRequest {
            rsc: vec![rsc(0.0), rsc(0.0)],
            ..request.clone()
        };
        let untold = ServerRequest {
            request: &request2,
            ..req.clone()
        };
        assert_eq!(ws.consider(&untold, &[], &cand).unwrap(), Verdict::Skip);
    }

    /// A server request for `request`, at `on_fraction` 1.
    fn server_request<'a>(
        st: &'a vcsim_framework::ClientState,
        request: &'a WorkRequest,
    ) -> ServerRequest<'a> {
        ServerRequest {
            now: 0.0,
            project: 0,
            project_name: "A",
            latency_bound: 86400.0,
            host: &st.host,
            request,
            dcf: 1.0,
            work_buf_min: 8640.0,
            on_fraction: 1.0,
            workload: &[],
            free_bytes: [1e12; 3],
            // (An explained run's: the sender is offered room for reasons.)
            explaining: true,
        }
    }

    fn candidate(rsc: usize) -> Candidate {
        Candidate {
            app: rsc,
            rsc,
            cpus: 1.0,
            gpu_count: rsc as f64,
            flops_estimate: 3.6e12,
            est_seconds: 3600.0,
            deadline: 86400.0,
        }
    }

    /// What each family's reason-giving probe explains, made as a plugin of
    /// `minor`: the run list's reasons (by job), the request's, the
    /// verdicts' (GPU, CPU) and the plan's.
    #[allow(clippy::type_complexity)]
    fn reasons_as(
        minor: u32,
    ) -> (
        Vec<(u64, Option<Reason>)>,
        Option<Reason>,
        [Option<Reason>; 2],
        Option<Reason>,
    ) {
        let st = busy_host();
        let est = vcsim_builtin::jc::Jc3::default();
        let v = View::new(&st, &est, 3600.0).explained(true);
        // cpu
        let AnyPolicy::Cpu(mut cs) = make(PolicyTable::Cpu(probe::cpu()), who(minor)).unwrap()
        else {
            unreachable!()
        };
        let mut out = RunList::default();
        cs.schedule(&v, &mut out).unwrap();
        assert_eq!(
            out.len(),
            st.jobs.len() - 1,
            "every job listed but the last"
        );
        let cpu = st
            .jobs
            .iter()
            .map(|j| (j.id, cs.explain(&v, &out, j.id).unwrap()))
            .collect();
        // fetch
        let f = fetcher(2, minor);
        let req = f.request(&v).unwrap().unwrap();
        let fetch = f.explain_request(&v, &req).unwrap();
        // A request it did not make has no reason.
        let other = WorkRequest::seconds(0, 3600.0, 2);
        assert_eq!(f.explain_request(&v, &other).unwrap(), None);
        // send
        let AnyPolicy::Send(mut ws) =
            make(PolicyTable::Send(probe::send_at(1)), who(minor)).unwrap()
        else {
            unreachable!()
        };
        let request = WorkRequest::seconds(0, 3600.0, 2);
        let sreq = server_request(&st, &request);
        let mut send = [None, None];
        for (i, rsc) in [1, 0].into_iter().enumerate() {
            let c = candidate(rsc);
            let verdict = ws.consider(&sreq, &[], &c).unwrap();
            assert_eq!(
                verdict,
                if rsc > 0 {
                    Verdict::Send
                } else {
                    Verdict::Skip
                }
            );
            send[i] = ws.explain_verdict(&sreq, &[], &c, verdict).unwrap();
            // Not the verdict just given: no reason.
            assert_eq!(
                ws.explain_verdict(&sreq, &[], &c, Verdict::Stop).unwrap(),
                None
            );
            // A plain run offers no room: the plugin builds no reason.
            let plain = ServerRequest {
                explaining: false,
                ..sreq.clone()
            };
            assert_eq!(ws.consider(&plain, &[], &c).unwrap(), verdict);
            assert_eq!(ws.explain_verdict(&plain, &[], &c, verdict).unwrap(), None);
        }
        // disk
        let AnyPolicy::Disk(mut dm) = make(PolicyTable::Disk(probe::disk()), who(minor)).unwrap()
        else {
            unreachable!()
        };
        let plan = dm.make_room(&v, 0, 1e6).unwrap();
        assert_eq!(plan.delete_jobs, vec![st.jobs[0].id]);
        let disk = dm.explain_plan(&v, &plan).unwrap();
        let not_it = DiskPlan::default();
        assert_eq!(dm.explain_plan(&v, &not_it).unwrap(), None);
        (cpu, fetch, send, disk)
    }

    #[test]
    fn a_2_4_plugin_s_run_list_explains_what_it_preempts_and_ranks_projects() {
        use vcsim_framework::Datum;
        let (cpu, ..) = reasons_as(abi::RUN_LIST_NOTES_MINOR);
        let st = busy_host();
        let ids: Vec<u64> = st.jobs.iter().map(|j| j.id).collect();
        let list = Reason::new("waits its turn").with("turn", 9.0);
        assert_eq!(
            cpu[0].1.as_ref().unwrap().text,
            format!("first: job {}", ids[0])
        );
        assert_eq!(
            cpu[1].1.as_ref(),
            Some(&list),
            "listed, no reason of its own"
        );
        assert_eq!(cpu[2].1, Some(Reason::new("third x=1")));
        let last = cpu.last().unwrap();
        assert_eq!(last.1.as_ref(), Some(&list), "not listed: preempted");
        assert_eq!(list.get("turn"), Some(&Datum::Number(9.0)));
        // The ranking, for the timeline's plot; a 2.3 plugin gives none.
        let ranking = |minor: u32, i: usize| {
            let est = vcsim_builtin::jc::Jc3::default();
            let v = View::new(&st, &est, 3600.0).explained(true);
            let AnyPolicy::Cpu(mut cs) =
                make(PolicyTable::Cpu(probe::cpu_at(i)), who(minor)).unwrap()
            else {
                unreachable!()
            };
            let mut out = RunList::default();
            cs.schedule(&v, &mut out)?;
            cs.ranking(&v)
        };
        let r = ranking(abi::RUN_LIST_NOTES_MINOR, 0).unwrap().unwrap();
        assert!(probe::CPU_EXPLAINING.with(|e| e.get()), "offered a buffer");
        assert_eq!((r.name.as_str(), r.values), ("index x 1.5", vec![0.0, 1.5]));
        assert_eq!(ranking(abi::REASONS_MINOR, 0).unwrap(), None);
        // A ranking that is not one finite value per project fails the call.
        let e = ranking(abi::RUN_LIST_NOTES_MINOR, 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`schedule`: invalid ranking: 1 values for 2 projects"),
            "{e}"
        );
        let e = ranking(abi::RUN_LIST_NOTES_MINOR, 2)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the value of project 1 is NaN (must be finite)"),
            "{e}"
        );
    }

    /// Hand-made tables, as a plugin not built with the SDK may give them:
    /// what the host reads back is checked, not trusted.
    mod hostile {
        use super::*;

        pub unsafe extern "C" fn create(_err: &mut abi::ErrBuf) -> abi::State {
            std::ptr::NonNull::<u8>::dangling().as_ptr().cast()
        }
        pub unsafe extern "C" fn destroy(_state: abi::State) {}
        /// Lists the first job in mode 7.
        pub unsafe extern "C" fn mode7(
            _s: abi::State,
            _v: &abi::View,
            out: &mut abi::ArrayOut<abi::RunEntry>,
            _e: &mut abi::ErrBuf,
        ) -> u32 {
            if out.cap > 0 {
                // SAFETY: the host's buffer has room for `cap` entries.
                unsafe {
                    *out.ptr = abi::RunEntry {
                        job: 0,
                        mode: 7,
                        reason_start: 0,
                        reason_len: 0,
                    }
                };
                out.len = 1;
            }
            abi::STATUS_OK
        }
        /// Says it wrote a thousand entries more than there is room for.
        pub unsafe extern "C" fn overflow(
            _s: abi::State,
            _v: &abi::View,
            out: &mut abi::ArrayOut<abi::RunEntry>,
            _e: &mut abi::ErrBuf,
        ) -> u32 {
            out.len = out.cap + 1000;
            abi::STATUS_OK
        }
        pub fn table(
            schedule: unsafe extern "C" fn(
                abi::State,
                &abi::View,
                &mut abi::ArrayOut<abi::RunEntry>,
                &mut abi::ErrBuf,
            ) -> u32,
        ) -> &'static abi::CpuTable {
            Box::leak(Box::new(abi::CpuTable {
                size: std::mem::size_of::<abi::CpuTable>() as u32,
                name: abi::StaticStr::new("hostile"),
                summary: abi::StaticStr::new("a hand-made table"),
                create,
                destroy,
                schedule,
            }))
        }
    }

    /// A run mode other than the two, and a length past the buffer (an
    /// overflow by ABI rule 5), were read as round-robin and cut to the
    /// buffer: both are invalid decisions.
    #[test]
    fn an_unknown_run_mode_and_a_run_list_past_its_buffer_are_refused() {
        let st = busy_host();
        let est = vcsim_builtin::jc::Jc3::default();
        let v = View::new(&st, &est, 3600.0);
        let error = |f| {
            let AnyPolicy::Cpu(mut cs) =
                make(PolicyTable::Cpu(hostile::table(f)), who(abi::ABI_MINOR)).unwrap()
            else {
                unreachable!()
            };
            cs.schedule(&v, &mut RunList::default())
                .unwrap_err()
                .message
        };
        let e = error(hostile::mode7);
        assert!(
            e.contains("job 0 has run mode 7: a mode is 0 (round-robin) or 1 (deadline)"),
            "{e}"
        );
        let e = error(hostile::overflow);
        assert!(
            e.contains(&format!(
                "its run list has {} entries, more than the {} of the buffer",
                st.jobs.len() + 1000,
                st.jobs.len()
            )),
            "{e}"
        );
    }

    /// A name past the bound is refused before a byte of it is read (a
    /// 65,536-character name made `list` panic).
    #[test]
    fn a_name_past_its_bound_is_refused() {
        static LONG: [u8; MAX_STATIC_STR + 1] = [b'x'; MAX_STATIC_STR + 1];
        let t: &'static abi::CpuTable = Box::leak(Box::new(abi::CpuTable {
            name: abi::StaticStr {
                ptr: &LONG[0],
                len: LONG.len(),
            },
            ..*hostile::table(hostile::mode7)
        }));
        let e = check_table("lib.so", PolicyTable::Cpu(t)).err().unwrap();
        assert!(
            e.contains(
                "a string of 4097 bytes (a name or summary holds at most 4096) as a cpu name"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_plugin_sees_whether_the_run_explains() {
        let st = busy_host();
        let est = vcsim_builtin::jc::Jc3::default();
        let seen = |minor: u32, explained: bool| {
            let v = View::new(&st, &est, 3600.0).explained(explained);
            let AnyPolicy::Cpu(mut cs) = make(PolicyTable::Cpu(probe::cpu()), who(minor)).unwrap()
            else {
                unreachable!()
            };
            cs.schedule(&v, &mut RunList::default()).unwrap();
            probe::CPU_EXPLAINING.with(|e| e.get())
        };
        assert!(seen(abi::ABI_MINOR, true));
        assert!(!seen(abi::ABI_MINOR, false), "a plain run offers no buffer");
        assert!(!seen(2, true), "nor to a 2.2 plugin");
    }

    #[test]
    fn a_2_3_plugin_s_reasons_reach_the_explain_methods() {
        use vcsim_framework::Datum;
        let (cpu, fetch, send, disk) = reasons_as(abi::REASONS_MINOR);
        let st = busy_host();
        let ids: Vec<u64> = st.jobs.iter().map(|j| j.id).collect();
        let first = cpu[0].1.clone().expect("the first job's reason");
        assert_eq!(first.text, format!("first: job {}", ids[0]));
        assert_eq!(
            first.data,
            vec![
                ("rank".into(), Datum::Number(1.0)),
                ("slack_s".into(), Datum::Number(-0.25))
            ]
        );
        assert_eq!(cpu[1].1, None, "no reason given for the second");
        // The separator in a text becomes a space: no data.
        assert_eq!(cpu[2].1, Some(Reason::new("third x=1")));
        // A 2.3 plugin is offered no room for the run list's own reason.
        assert!(cpu[3..].iter().all(|(_, r)| r.is_none()));
        let fetch = fetch.expect("the request's reason");
        assert_eq!(fetch.text, "project 1 is starved");
        assert_eq!(fetch.get("seconds"), Some(&Datum::Number(3600.0)));
        assert_eq!(send[0].as_ref().unwrap().text, "Send: resource 1");
        assert_eq!(send[1].as_ref().unwrap().text, "Skip: resource 0");
        assert_eq!(
            send[1].as_ref().unwrap().get("sent"),
            Some(&Datum::Number(0.0))
        );
        assert_eq!(
            disk,
            Some(Reason::new(format!("job {} is the oldest", ids[0])))
        );
    }

    #[test]
    fn a_2_2_plugin_is_offered_no_room_and_gives_no_reasons() {
        let asked = || probe::FETCH_EXPLAINED.with(|n| n.get());
        let before = asked();
        let (cpu, fetch, send, disk) = reasons_as(2);
        assert!(cpu.iter().all(|(_, r)| r.is_none()), "{cpu:?}");
        assert_eq!(fetch, None);
        assert_eq!(send, [None, None]);
        assert_eq!(disk, None);
        // The SDK asks a policy for a reason only when the host offers
        // room: a 2.2 plugin is offered none, a 2.3 one is.
        assert_eq!(asked(), before, "a 2.2 plugin is offered no room");
        let _ = reasons_as(abi::ABI_MINOR);
        assert_eq!(asked(), before + 1, "a 2.3 plugin is");
    }

    #[test]
    fn reasons_parse_back_and_stay_within_what_was_written() {
        let r = parse_reason(b"least slack: 2.1 h\x1fslack_s=7560\x1fbad\x1f=3\x1fk=x\x1fn=NaN");
        assert_eq!(r.text, "least slack: 2.1 h");
        assert_eq!(r.data.len(), 2, "{r:?}");
        assert_eq!(
            r.get("slack_s"),
            Some(&vcsim_framework::Datum::Number(7560.0))
        );
        let mut rs = Reasons::default();
        let rb = rs.offer(abi::ABI_MINOR, 16, true).unwrap();
        assert_eq!(rb.cap, 16);
        rs.buf[..5].copy_from_slice(b"hello");
        rs.keep(Some(&abi::ReasonBuf { len: 5, ..rb }), true);
        assert_eq!(rs.whole(), Some(Reason::new("hello")));
        assert_eq!(rs.get(1, 3), Some(Reason::new("ell")));
        assert_eq!(rs.get(3, 3), None, "past what was written");
        assert_eq!(rs.get(usize::MAX, 2), None);
        // A failed call keeps nothing; an older plugin is offered nothing.
        rs.keep(Some(&abi::ReasonBuf { len: 5, ..rb }), false);
        assert_eq!(rs.whole(), None);
        assert!(rs.offer(2, 16, true).is_none());
        assert!(rs.offer(abi::ABI_MINOR, 16, false).is_none());
    }

    #[test]
    fn a_short_export_is_refused() {
        let mut ex = export(abi::ABI_VERSION, abi::ABI_MINOR);
        ex.size -= 8;
        let e = check_export("libx.so", "cpu", &ex).err().unwrap();
        assert!(e.contains("its cpu export is"), "{e}");
    }
}
