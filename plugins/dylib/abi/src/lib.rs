//! The C ABI between vcsim and its compiled policy plugins (dylibs).
//!
//! Nothing Rust-specific crosses the boundary: no trait objects, no `Box`,
//! `Vec` or `String`, no memory allocated by one side and freed by the
//! other. Everything here is `#[repr(C)]` plain data, borrowed pointers and
//! `extern "C"` function pointers.
//!
//! # The rules
//!
//! 1. **Entry points.** A plugin exports, per policy family it provides, one
//!    symbol named `vcsim_plugin_<family>_v<ABI_VERSION>` (see [`symbols`]):
//!    an `extern "C" fn() -> &'static Export<Table>` that only returns the
//!    address of a `'static` [`Export`]. Its first fields are the ABI
//!    version, its size in bytes and the `rustc` that built it; then the
//!    number of policies and a getter for each policy's table.
//! 2. **Checked before any call.** The host reads the export's
//!    `abi_version`, `size` and `rustc`, and every table's `abi_version` and
//!    `size`, before it calls any function of the plugin (other than the
//!    entry point itself). A mismatch refuses the library with an error.
//! 3. **Tables only grow.** Within one ABI version, fields are only ever
//!    appended to a table (new optional calls). A host uses an appended
//!    field only when the table's `size` covers it (so far the
//!    [`DiskTable`]'s `make_room`, `poll` and `project_limit`: see
//!    [`DISK_TABLE_V1_0_SIZE`]). Any other change
//!    (a view's layout, a call's signature or meaning) is a new
//!    [`ABI_VERSION`], with new symbol names.
//! 4. **Opaque state.** `create` returns the plugin's state as an opaque
//!    pointer (null on failure); the host passes it back to every call and
//!    finally to `destroy`, once. The plugin allocates and frees it.
//! 5. **Views in, decisions into host buffers.** Inputs are `#[repr(C)]`
//!    views borrowed for the duration of one call: the plugin must not keep
//!    any pointer from them. Outputs are written into buffers the host owns
//!    ([`RunOut`], [`RequestOut`], [`ErrBuf`], plain out-parameters). A
//!    decision that does not fit its buffer is an [`STATUS_OVERFLOW`] error.
//! 6. **No unwinding across the boundary.** Every function of a table
//!    catches panics and returns [`STATUS_PANIC`] with the message in the
//!    [`ErrBuf`]. (A plugin built with `panic = "abort"` aborts the process:
//!    build plugins with the default `panic = "unwind"`.)
//! 7. **Loaded once, never unloaded.** The host keeps a library loaded for
//!    the life of the process, so a table or a `'static` string of it is
//!    never left dangling.
//! 8. **Threads.** A policy state is used by one thread at a time, but may
//!    move between threads (the SDK's traits require `Send`). Different
//!    states of one policy may be used concurrently.
//!
//! This crate has no unsafe code: it only defines the types. The host
//! (`vcsim-dylib-host`) and the shims the SDK's export macros generate
//! (`vcsim-dylib-sdk`) are the only places that dereference the pointers.

#![forbid(unsafe_code)]

use std::ffi::c_void;

/// The ABI version this crate describes. Bumped on any change that is not
/// an append to a table.
pub const ABI_VERSION: u32 = 1;

/// The `rustc --version` that built this crate (and so the plugin or host
/// that links it).
pub const RUSTC_VERSION: &str = env!("VCSIM_PLUGIN_RUSTC");

/// Entry-point symbol names for ABI version 1.
pub mod symbols {
    pub const CPU: &str = "vcsim_plugin_cpu_v1";
    pub const FETCH: &str = "vcsim_plugin_fetch_v1";
    pub const SEND: &str = "vcsim_plugin_send_v1";
    pub const ESTIMATE: &str = "vcsim_plugin_estimate_v1";
    pub const DISK: &str = "vcsim_plugin_disk_v1";
    /// All five, in the framework's family order.
    pub const ALL: [&str; 5] = [CPU, FETCH, SEND, ESTIMATE, DISK];
    /// The family part of each name (`cpu`, `fetch`...), same order.
    pub const FAMILIES: [&str; 5] = ["cpu", "fetch", "send", "estimate", "disk"];
}

/// The call succeeded.
pub const STATUS_OK: u32 = 0;
/// The policy returned an error; its message is in the [`ErrBuf`].
pub const STATUS_ERROR: u32 = 1;
/// The policy panicked; the panic message is in the [`ErrBuf`].
pub const STATUS_PANIC: u32 = 2;
/// A decision did not fit the host's buffer.
pub const STATUS_OVERFLOW: u32 = 3;

/// A `'static` UTF-8 string of the plugin (names, summaries, `rustc`).
/// A reference rather than a raw pointer, so that tables are `Sync` and can
/// live in statics without unsafe code.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct StaticStr {
    pub ptr: &'static u8,
    pub len: usize,
}

impl StaticStr {
    pub const fn new(s: &'static str) -> StaticStr {
        match s.as_bytes() {
            [] => StaticStr { ptr: &0, len: 0 },
            [first, ..] => StaticStr {
                ptr: first,
                len: s.len(),
            },
        }
    }
}

/// A UTF-8 string borrowed for one call (a project's name in a view).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Str {
    pub ptr: *const u8,
    pub len: usize,
}

impl Str {
    pub fn new(s: &str) -> Str {
        Str {
            ptr: s.as_ptr(),
            len: s.len(),
        }
    }
}

/// What a plugin exports for one family: the `'static` value its entry
/// symbol returns.
#[repr(C)]
pub struct Export<T: 'static> {
    /// [`ABI_VERSION`] of the SDK that built the plugin.
    pub abi_version: u32,
    /// `size_of::<Export<T>>()` as the plugin saw it.
    pub size: u32,
    /// `rustc --version` that built the plugin.
    pub rustc: StaticStr,
    /// The plugin crate's name and version, for messages.
    pub plugin: StaticStr,
    /// Number of policies of this family.
    pub count: usize,
    /// The table of policy `i < count`.
    pub table: extern "C" fn(i: usize) -> Option<&'static T>,
}

/// The signature of every entry symbol.
pub type EntryFn<T> = extern "C" fn() -> &'static Export<T>;

/// Opaque plugin state.
pub type State = *mut c_void;

/// Where a call writes its error or panic message (host-owned; the plugin
/// writes at most `cap` bytes of UTF-8 and sets `len`).
#[repr(C)]
pub struct ErrBuf {
    pub ptr: *mut u8,
    pub cap: usize,
    pub len: usize,
}

// ----------------------------------------------------------------------
// Views (host -> plugin, borrowed for one call)

/// The host (`HostInfo`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Host {
    /// CPUs the client may use.
    pub ncpus: f64,
    pub cpu_flops: f64,
    pub disk_bytes: f64,
    /// Resources: 0 is the CPU, 1 + k the k-th GPU type.
    pub nrsc: usize,
}

/// One processing resource of the host.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RscInfo {
    pub name: Str,
    pub instances: f64,
    /// Peak FLOPS of one instance.
    pub instance_flops: f64,
    /// Instances no running job holds.
    pub idle_instances: f64,
}

/// The user's preferences, in seconds.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Prefs {
    pub sched_period: f64,
    pub work_buf_min: f64,
    pub work_buf_additional: f64,
    pub step: f64,
    pub learn_availability: u8,
}

impl Prefs {
    /// BOINC's `Btot`: the whole buffer, at least one second.
    pub fn work_buf_total(&self) -> f64 {
        (self.work_buf_min + self.work_buf_additional).max(1.0)
    }
}

/// One project.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Project {
    pub name: Str,
    pub resource_share: f64,
    /// Resource share as a fraction of all projects' shares.
    pub share_fraction: f64,
    /// Seconds.
    pub latency_bound: f64,
    pub exp_avg_cpu: f64,
    /// No back-off keeps the client from contacting it at the view's time.
    pub contactable: u8,
    /// It has a queued, running or preempted job.
    pub has_runnable: u8,
    pub napps: usize,
}

/// One project on one resource.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ProjectRsc {
    /// Instance-seconds used since the run began, at the view's time.
    pub usage_seconds: f64,
    /// Instances its running jobs hold now.
    pub running_instances: f64,
    /// It has apps that run on this resource of this host.
    pub has_apps: u8,
}

pub const JOB_QUEUED: u8 = 0;
pub const JOB_RUNNING: u8 = 1;
pub const JOB_PREEMPTED: u8 = 2;
pub const JOB_FINISHED: u8 = 3;

pub const MODE_ROUND_ROBIN: u8 = 0;
pub const MODE_DEADLINE: u8 = 1;

/// One job on the host. Times are simulated seconds since the start.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Job {
    pub id: u64,
    pub project: usize,
    pub app: usize,
    pub cpus: f64,
    /// The GPU resource it uses (0: none) and how many instances.
    pub gpu_rsc: usize,
    pub gpu_count: f64,
    pub flops_estimate: f64,
    /// Peak FLOPS it computes at.
    pub speed: f64,
    pub received: f64,
    pub deadline: f64,
    pub last_started: f64,
    pub finished_at: f64,
    /// At the view's time.
    pub fraction_done: f64,
    /// Seconds of computing so far, at the view's time.
    pub run_seconds: f64,
    /// The host's estimator's remaining seconds (NaN in an estimator's own view).
    pub remaining_seconds: f64,
    /// FLOPs estimate / speed.
    pub estimated_seconds: f64,
    /// `estimated_seconds` x the estimator's correction (NaN in an estimator's own view).
    pub static_estimate: f64,
    /// `JOB_QUEUED`, `JOB_RUNNING`, `JOB_PREEMPTED` or `JOB_FINISHED`.
    pub state: u8,
    /// `MODE_ROUND_ROBIN` or `MODE_DEADLINE`.
    pub mode: u8,
    pub ever_deadline_mode: u8,
    pub failed: u8,
    pub has_started: u8,
}

impl Job {
    /// The resource whose instances it needs most: its GPU, or the CPU.
    pub fn rsc(&self) -> usize {
        self.gpu_rsc
    }
    pub fn gpu(&self) -> Option<(usize, f64)> {
        (self.gpu_rsc != 0).then_some((self.gpu_rsc, self.gpu_count))
    }
    pub fn is_runnable(&self) -> bool {
        self.state != JOB_FINISHED
    }
    pub fn is_running(&self) -> bool {
        self.state == JOB_RUNNING
    }
}

/// What a CPU scheduler, a work fetcher and a disk manager see.
#[repr(C)]
pub struct View {
    pub now: f64,
    pub host: Host,
    pub prefs: Prefs,
    /// The fraction of time the client expects the host to compute.
    pub on_fraction: f64,
    /// Seconds the host has been available since the run began.
    pub available_seconds: f64,
    pub host_on: u8,
    /// When the CPU scheduler last ran (-inf: never).
    pub last_schedule: f64,
    /// When the client last made an RPC (NaN: never).
    pub last_rpc: f64,
    pub connection_interval: f64,
    /// `host.nrsc` entries.
    pub rsc: *const RscInfo,
    pub projects: *const Project,
    pub nprojects: usize,
    /// `nprojects * host.nrsc` entries, project-major.
    pub project_rsc: *const ProjectRsc,
    /// Jobs in arrival order.
    pub jobs: *const Job,
    pub njobs: usize,
}

/// What a completion estimator sees besides the job.
#[repr(C)]
pub struct EstimateView {
    pub now: f64,
    pub host: Host,
    pub prefs: Prefs,
    pub rsc: *const RscInfo,
}

pub const FILE_INPUT: u8 = 0;
pub const FILE_OUTPUT: u8 = 1;
pub const FILE_STICKY: u8 = 2;

pub const DELETE_LRU: u8 = 0;
pub const DELETE_PRIORITY: u8 = 1;
pub const DELETE_EXPIRE: u8 = 2;

/// One file on the host (BOINC's `FILE_INFO`). Times are simulated seconds
/// since the start (negative: before it).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct File {
    pub id: u64,
    pub project: usize,
    pub bytes: f64,
    /// The job that brought or made it, while it is on the host (`NO_JOB`: none).
    pub job: u64,
    /// `FILE_INPUT`, `FILE_OUTPUT` or `FILE_STICKY`.
    pub kind: u8,
    /// A job on the host needs it (or it is an output not yet reported):
    /// it cannot be deleted.
    pub referenced: u8,
    /// It stays after its job is reported.
    pub sticky: u8,
    /// 1 (low) to 5 (high).
    pub priority: u8,
    pub created: f64,
    pub last_used: f64,
    pub expires: f64,
}

/// [`File::job`] of a file no job on the host owns.
pub const NO_JOB: u64 = u64::MAX;

/// What a disk manager sees of the files, beside the [`View`] (whose jobs
/// say which can be deleted: queued and never started).
#[repr(C)]
pub struct DiskView {
    /// The files, in creation order (ids increase).
    pub files: *const File,
    pub nfiles: usize,
    /// The user's limit on BOINC's usage (`total_limit`).
    pub total_limit: f64,
    /// Space the client itself uses (`core_usage`).
    pub core_usage: f64,
    /// Computation is suspended because nothing more could be deleted.
    pub suspended: u8,
    /// `DELETE_*` per project (`View::nprojects` entries).
    pub deletion_policy: *const u8,
}

/// Where a disk manager writes its plan (`DiskPlan`): host buffers of
/// `jobs_cap` job ids (the number of jobs) and `files_cap` file ids (the
/// number of files); the plugin sets the lengths and the flags.
#[repr(C)]
pub struct DiskPlanOut {
    pub delete_jobs: *mut u64,
    pub jobs_cap: usize,
    pub jobs_len: usize,
    pub delete_files: *mut u64,
    pub files_cap: usize,
    pub files_len: usize,
    /// `make_room`: the bytes fit after the deletions.
    pub fits: u8,
    /// `poll`: suspend computation.
    pub suspend: u8,
}

/// Per-resource part of a work request.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RscRequest {
    pub req_seconds: f64,
    pub req_ninstances: f64,
}

/// A work request the host shows the plugin.
#[repr(C)]
pub struct RequestIn {
    pub project: usize,
    pub work_req_seconds: f64,
    /// `nrsc` entries.
    pub rsc: *const RscRequest,
    pub nrsc: usize,
}

/// Where a fetcher writes its request: `rsc` is a host buffer of `nrsc`
/// zeroed entries.
#[repr(C)]
pub struct RequestOut {
    pub present: u8,
    pub project: usize,
    pub work_req_seconds: f64,
    pub rsc: *mut RscRequest,
    pub nrsc: usize,
}

pub const RSC_STATUS_UNKNOWN: u8 = 0;
pub const RSC_STATUS_WORK_RETURNED: u8 = 1;
pub const RSC_STATUS_NO_WORK_BUT_SUPPORTED: u8 = 2;
pub const RSC_STATUS_NOT_SUPPORTED: u8 = 3;

/// The outcome of one scheduler RPC.
#[repr(C)]
pub struct Reply {
    pub project: usize,
    pub request: RequestIn,
    pub reached: u8,
    /// Jobs received per resource (`nrsc`).
    pub jobs: *const u32,
    /// `RSC_STATUS_*` per resource (`nrsc`).
    pub rsc_status: *const u8,
    pub nrsc: usize,
}

/// A job the server could send.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Candidate {
    pub app: usize,
    pub rsc: usize,
    pub cpus: f64,
    pub gpu_count: f64,
    pub flops_estimate: f64,
    pub est_seconds: f64,
    pub deadline: f64,
}

/// A job on the host as a scheduler request lists it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReportedJob {
    pub project: usize,
    pub rsc: usize,
    pub cpus: f64,
    pub gpu_count: f64,
    pub deadline: f64,
    pub remaining_seconds: f64,
}

/// What a server sees of a scheduler request.
#[repr(C)]
pub struct ServerRequest {
    pub now: f64,
    pub project: usize,
    pub project_name: Str,
    pub latency_bound: f64,
    pub host: Host,
    /// `host.nrsc` entries.
    pub rsc: *const RscInfo,
    pub request: RequestIn,
    pub dcf: f64,
    pub work_buf_min: f64,
    pub workload: *const ReportedJob,
    pub nworkload: usize,
    pub free_bytes: [f64; 3],
}

pub const VERDICT_SEND: u8 = 0;
pub const VERDICT_SKIP: u8 = 1;
pub const VERDICT_STOP: u8 = 2;

/// One entry of a run list.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RunEntry {
    pub job: u64,
    /// `MODE_ROUND_ROBIN` or `MODE_DEADLINE`.
    pub mode: u8,
}

/// Where a CPU scheduler writes its run list (host buffer of `cap` entries).
#[repr(C)]
pub struct RunOut {
    pub ptr: *mut RunEntry,
    pub cap: usize,
    pub len: usize,
}

// ----------------------------------------------------------------------
// Tables (plugin -> host, 'static). The common head of every table:
// `abi_version`, `size`, `name`, `summary`, `create`, `destroy`.

/// Makes the plugin's state; null if that failed (or panicked).
///
/// Every function of a table is `unsafe` to call: the caller guarantees
/// that every pointer it passes is valid for the call (views for reading,
/// buffers for writing their `cap`), and that `state` came from this
/// table's `create`, is not yet destroyed, and is not used by another
/// thread during the call.
pub type CreateFn = unsafe extern "C" fn(err: &mut ErrBuf) -> State;
/// Frees a state made by `create`.
pub type DestroyFn = unsafe extern "C" fn(state: State);

/// A CPU scheduler (`CpuScheduler`).
#[repr(C)]
pub struct CpuTable {
    pub abi_version: u32,
    pub size: u32,
    pub name: StaticStr,
    pub summary: StaticStr,
    pub create: CreateFn,
    pub destroy: DestroyFn,
    pub schedule:
        unsafe extern "C" fn(state: State, view: &View, out: &mut RunOut, err: &mut ErrBuf) -> u32,
}

/// A work fetcher (`WorkFetcher`). `request`, `piggyback` and
/// `backoff_on_empty_reply` must not change the state.
#[repr(C)]
pub struct FetchTable {
    pub abi_version: u32,
    pub size: u32,
    pub name: StaticStr,
    pub summary: StaticStr,
    pub create: CreateFn,
    pub destroy: DestroyFn,
    pub account: unsafe extern "C" fn(state: State, view: &View, err: &mut ErrBuf) -> u32,
    pub request: unsafe extern "C" fn(
        state: State,
        view: &View,
        out: &mut RequestOut,
        err: &mut ErrBuf,
    ) -> u32,
    pub piggyback: unsafe extern "C" fn(
        state: State,
        view: &View,
        project: usize,
        out: &mut RequestOut,
        err: &mut ErrBuf,
    ) -> u32,
    pub on_reply:
        unsafe extern "C" fn(state: State, view: &View, reply: &Reply, err: &mut ErrBuf) -> u32,
    pub backoff_on_empty_reply:
        unsafe extern "C" fn(state: State, out: &mut u8, err: &mut ErrBuf) -> u32,
}

/// A work sender (`WorkSender`).
#[repr(C)]
pub struct SendTable {
    pub abi_version: u32,
    pub size: u32,
    pub name: StaticStr,
    pub summary: StaticStr,
    pub create: CreateFn,
    pub destroy: DestroyFn,
    pub consider: unsafe extern "C" fn(
        state: State,
        req: &ServerRequest,
        sent: *const Candidate,
        nsent: usize,
        cand: &Candidate,
        out: &mut u8,
        err: &mut ErrBuf,
    ) -> u32,
}

/// A completion estimator (`CompletionEstimator`). `remaining_seconds` and
/// `correction` must not change the state.
#[repr(C)]
pub struct EstimateTable {
    pub abi_version: u32,
    pub size: u32,
    pub name: StaticStr,
    pub summary: StaticStr,
    pub create: CreateFn,
    pub destroy: DestroyFn,
    pub remaining_seconds: unsafe extern "C" fn(
        state: State,
        view: &EstimateView,
        job: &Job,
        out: &mut f64,
        err: &mut ErrBuf,
    ) -> u32,
    pub correction:
        unsafe extern "C" fn(state: State, project: usize, out: &mut f64, err: &mut ErrBuf) -> u32,
    pub on_job_finished:
        unsafe extern "C" fn(state: State, view: &EstimateView, job: &Job, err: &mut ErrBuf) -> u32,
}

/// A disk manager (`DiskManager`). `free_space`, `enforces` and
/// `project_limit` must not change the state.
#[repr(C)]
pub struct DiskTable {
    pub abi_version: u32,
    pub size: u32,
    pub name: StaticStr,
    pub summary: StaticStr,
    pub create: CreateFn,
    pub destroy: DestroyFn,
    pub free_space: unsafe extern "C" fn(
        state: State,
        view: &View,
        project: usize,
        out: &mut [f64; 3],
        err: &mut ErrBuf,
    ) -> u32,
    pub enforces: unsafe extern "C" fn(state: State, out: &mut u8, err: &mut ErrBuf) -> u32,
    // ---- appended: present when `size` covers them ([`DISK_TABLE_V1_0_SIZE`]
    // is the size without them). The host calls them only if `enforces`.
    /// `make_room`: `bytes` more of `project` are about to be written.
    pub make_room: unsafe extern "C" fn(
        state: State,
        view: &View,
        disk: &DiskView,
        project: usize,
        bytes: f64,
        out: &mut DiskPlanOut,
        err: &mut ErrBuf,
    ) -> u32,
    /// `poll`: after files changed.
    pub poll: unsafe extern "C" fn(
        state: State,
        view: &View,
        disk: &DiskView,
        out: &mut DiskPlanOut,
        err: &mut ErrBuf,
    ) -> u32,
    /// `project_limit` in bytes; NaN for none. Must not change the state.
    pub project_limit: unsafe extern "C" fn(
        state: State,
        view: &View,
        disk: &DiskView,
        project: usize,
        out: &mut f64,
        err: &mut ErrBuf,
    ) -> u32,
}

/// The size of a [`DiskTable`] of the first release of ABI version 1 (up to
/// `enforces`): the least a disk table may be.
pub const DISK_TABLE_V1_0_SIZE: usize = std::mem::offset_of!(DiskTable, make_room);

/// The common head of every table, for code that handles all five alike.
pub trait Table: 'static {
    fn abi_version(&self) -> u32;
    fn size(&self) -> u32;
    fn name(&self) -> StaticStr;
    fn summary(&self) -> StaticStr;
    fn create(&self) -> CreateFn;
    fn destroy(&self) -> DestroyFn;
}

macro_rules! table_head {
    ($($t:ty),*) => {$(
        impl Table for $t {
            fn abi_version(&self) -> u32 { self.abi_version }
            fn size(&self) -> u32 { self.size }
            fn name(&self) -> StaticStr { self.name }
            fn summary(&self) -> StaticStr { self.summary }
            fn create(&self) -> CreateFn { self.create }
            fn destroy(&self) -> DestroyFn { self.destroy }
        }
    )*};
}
table_head!(CpuTable, FetchTable, SendTable, EstimateTable, DiskTable);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_strings_keep_their_length() {
        assert_eq!(StaticStr::new("").len, 0);
        let s = StaticStr::new("lsf");
        assert_eq!(s.len, 3);
        assert_eq!(*s.ptr, b'l');
    }

    #[test]
    fn tables_are_sync_so_they_can_be_statics() {
        fn sync<T: Sync>() {}
        sync::<CpuTable>();
        sync::<Export<CpuTable>>();
        sync::<DiskTable>();
    }

    #[test]
    fn the_compiler_is_recorded() {
        assert!(RUSTC_VERSION.starts_with("rustc"), "{RUSTC_VERSION}");
    }
}
