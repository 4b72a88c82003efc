//! The C ABI between vcsim and its compiled policy plugins (dylibs).
//!
//! Nothing Rust-specific crosses the boundary: no trait objects, no `Box`,
//! `Vec` or `String`, no memory allocated by one side and freed by the
//! other. Everything here is `#[repr(C)]` plain data, borrowed pointers and
//! `extern "C"` function pointers.
//!
//! This is version **2.4**: major [`ABI_VERSION`] 2, minor [`ABI_MINOR`] 4.
//!
//! Version history (each minor only appends; see "What a minor version
//! may change"):
//!
//! - 2.1 added [`View::cpu_allowed`] and [`View::gpu_allowed`].
//! - 2.2 added what today's client's policies read: [`Project::rec`],
//!   [`View::rec_half_life`], [`RscRequest::estimated_delay`] (both ways),
//!   [`ServerRequest::on_fraction`], and today's client's simulation
//!   through the host callback [`View::list_sim`] (see "Host callbacks").
//! - 2.3 added optional *reasons*: a plugin may say why it decided what it
//!   did, with each run list (per entry), work request, send verdict and
//!   disk plan, into a host buffer ([`ReasonBuf`]) that [`View::reason`]
//!   and [`ServerRequest::reason`] point to, and the run list's entries
//!   say which part of it is theirs ([`RunEntry::reason_start`],
//!   [`RunEntry::reason_len`]). See "Reasons".
//! - 2.4 added what a run list says of itself ([`RunListNotes`], through
//!   [`View::run_list`]): its own reason, which explains the jobs it
//!   preempts and its entries without one, and the ranking of projects it
//!   was made by, for the timeline's plot. See "Reasons".
//!
//! # The rules
//!
//! 1. **Entry points.** A plugin exports, per policy family it provides, one
//!    symbol named `vcsim_plugin_<family>_v<ABI_VERSION>` (see [`symbols`]):
//!    an `extern "C" fn() -> &'static Export<Table>` that only returns the
//!    address of a `'static` [`Export`]. Its first fields are the ABI's
//!    major and minor version, its size in bytes and the `rustc` that built
//!    it; then the number of policies and a getter for each policy's table.
//! 2. **Checked before any call.** The host reads the export's major and
//!    minor version, `size` and `rustc` before it calls anything of the
//!    plugin but the entry point, and every table's `size` before it calls
//!    anything of that table. A library that exports only the symbols of
//!    another major version, or that was built for a newer minor version
//!    than the host's, is refused with an error that says which.
//! 3. **Versions.** The *major* version is in the symbol names: a host
//!    never looks at an export of another major. The *minor* version says
//!    what a plugin knows of its major; a host loads a plugin of its own
//!    minor or an older one, never a newer one. See "What a minor version
//!    may change" below.
//! 4. **Opaque state.** `create` returns the plugin's state as an opaque
//!    pointer (null on failure); the host passes it back to every call and
//!    finally to `destroy`, once. The plugin allocates and frees it.
//! 5. **Views in, decisions into host buffers.** Inputs are `#[repr(C)]`
//!    views borrowed for the duration of one call: the plugin must not keep
//!    any pointer from them. Outputs are written into buffers the host owns
//!    ([`ArrayOut`], [`RequestOut`], [`DiskPlanOut`], [`ErrBuf`],
//!    [`ReasonBuf`], plain out-parameters). A decision that does not fit
//!    its buffer is a [`STATUS_OVERFLOW`] error (a reason that does not fit
//!    is cut instead: see "Reasons").
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
//! # Sizes and strides
//!
//! So that a host of a later minor version can serve a plugin of an earlier
//! one, every struct the host passes by pointer may be longer than the
//! plugin knows, and the plugin reads only the prefix it knows:
//!
//! - every *view* and *output* struct ([`View`], [`EstimateView`],
//!   [`ServerRequest`], [`Reply`], [`RequestOut`], [`DiskPlanOut`]) starts
//!   with its `size` in bytes and the host's `minor` version;
//! - every array crosses as an [`Array`] (host to plugin) or an
//!   [`ArrayOut`] (a host buffer the plugin fills), with its element
//!   `stride` in bytes: element `i` starts `i * stride` bytes after the
//!   first, and `stride` is at least the element's size as the plugin knows
//!   it. Never index such an array as a Rust slice: the SDK's `Strided`
//!   does it right.
//!
//! A struct passed alone by pointer (the estimator's [`Job`], the sender's
//! [`Candidate`]) may also be longer than the plugin knows.
//!
//! # What a minor version may change
//!
//! A minor version only *adds*, so that every plugin of an earlier minor of
//! the same major keeps working, unchanged and unrebuilt:
//!
//! - a field at the end of a view or output struct (after every field of
//!   the earlier minors), or at the end of an array's element type (a
//!   [`Job`], a [`Project`], an [`App`], an [`RscInfo`]...);
//! - a function at the end of a table, which the host calls only for a
//!   plugin whose minor has it (otherwise it does what vcsim's trait does by
//!   default);
//! - a new constant value of a field the plugin writes only if the host
//!   accepts the old ones as before (e.g. a new status), or of a field the
//!   host writes only if the SDK of the earlier minor treats an unknown
//!   value as documented (e.g. [`RSC_STATUS_UNKNOWN`]).
//!
//! A field the host adds to an output struct or to an output array's
//! element is filled by the host with its default before the call, so that
//! a plugin that does not know it leaves the default.
//!
//! # What needs a major version
//!
//! Anything else: removing, reordering, retyping or changing the meaning of
//! a field, a function or a constant; growing a struct embedded by value in
//! another ([`Host`], [`Prefs`], [`Str`], [`Array`], [`RequestIn`]...: they
//! are frozen for the life of a major version; new data goes at the end of
//! the struct that holds them); changing a function's signature; changing
//! the [`Export`]'s or a table's head. A new major version has new symbol
//! names, so an old plugin is refused with a message rather than misread.
//!
//! # Host callbacks
//!
//! Since 2.2 a [`View`] may carry functions of the host ([`View::list_sim`])
//! with the opaque [`View::host_ctx`] to pass them, so that what is costly
//! to compute is computed only when a plugin asks. A callback is null
//! (`None`) when the host does not offer it; the plugin may call it only
//! during the call that received the view, from that call's thread, and
//! any number of times (the host computes once per call). What it returns
//! is a host struct borrowed like the view (rule 5): valid until the call
//! returns, starting with its `size` and `minor`, and it may grow at the
//! end in a later minor like any view. On failure it returns null and
//! writes the message into the plugin's [`ErrBuf`] (at most `cap` bytes).
//! A callback never unwinds into the plugin.
//!
//! # Reasons
//!
//! Since 2.3 a plugin may give the reason of a decision, for vcsim's
//! explained runs (`vcsim explain`). The host offers its buffer only in a
//! run that explains (the pointer is null otherwise, so a plain run costs
//! a plugin nothing), and converts what the plugin wrote only when asked.
//!
//! - **Where.** In the calls whose decision may have a reason —
//!   `schedule`, `request`, `piggyback`, `make_room`, `poll` (through
//!   [`View::reason`]) and `consider` (through [`ServerRequest::reason`]) —
//!   the host points to a [`ReasonBuf`] of its own: `cap` bytes at `ptr`,
//!   `len` 0. In every other call, and for a plugin built for a minor
//!   before 3 (which does not know the field), the pointer is null, and a
//!   plugin writes nothing. The buffer is borrowed for the call like the
//!   view (rule 5): the plugin writes at most `cap` bytes from `ptr`, sets
//!   `len`, and keeps no pointer. Nothing is allocated by one side and
//!   freed by the other.
//! - **What.** A reason is UTF-8: a text for people, optionally followed
//!   by data for programs, each item [`REASON_DATA_SEP`] (0x1F, ASCII's
//!   unit separator) then `key=number` (a key without `=` or 0x1F; the
//!   number as Rust's `f64` parses it: `7560`, `-0.5`, `1e-3`, `NaN`,
//!   `inf`). `least slack: 2.1 h\x1Fslack_s=7560\x1Frank=1`. The text holds
//!   no 0x1F. A reason of 0 bytes is no reason.
//! - **Which.** A request's, a plan's or a verdict's reason is the
//!   buffer's first `len` bytes. A run list's reasons share the buffer: each
//!   [`RunEntry`] says where its reason is (`reason_start`, `reason_len`:
//!   within the first `len` bytes; `reason_len` 0: none). The host fills
//!   the entries' spans with 0 before the call (an older plugin leaves
//!   them so) and reads them only for a plugin of 2.3 or later.
//! - **The run list's own (since 2.4).** In `schedule`, with the buffer, the
//!   host points [`View::run_list`] to a [`RunListNotes`] of its own (all
//!   spans 0, the ranking's `len` 0): the plugin may set the span of the
//!   run list's reason, which explains the jobs it preempts and the entries
//!   with no reason of their own, and give the ranking of projects the
//!   list was made by: its name as a span of the buffer, and one finite
//!   value per project, in project order, in [`RunListNotes::ranking`]
//!   (`len` 0: no ranking; any other count than the number of projects, or
//!   a value that is not finite, is an error of the call). The host reads
//!   them only for a plugin of 2.4 or later.
//! - **Room.** A reason that does not fit is cut (at a UTF-8 boundary,
//!   before any data item that does not fit whole); it is never an error.
//!   The host's buffers are at least [`REASON_MIN_CAP`] bytes, and a run
//!   list's at least that plus 256 bytes per job.
//!
//! This crate has no unsafe code: it only defines the types. The host
//! (`vcsim-dylib-host`) and the SDK (`vcsim-dylib-sdk`, in its `Strided`
//! arrays and the shims its export macros generate) are the only places
//! that dereference the pointers.

#![forbid(unsafe_code)]

use std::ffi::c_void;

/// The ABI's major version: in the entry symbols' names. Bumped on any
/// change a minor version may not make (see the crate's documentation).
pub const ABI_VERSION: u32 = 2;

/// The ABI's minor version: bumped when a minor version adds something.
pub const ABI_MINOR: u32 = 4;

/// The first minor version with reasons ([`ReasonBuf`]): the host offers
/// its buffer to, and reads reasons of, a plugin of this minor or later.
pub const REASONS_MINOR: u32 = 3;

/// The first minor version with a run list's own reason and ranking
/// ([`RunListNotes`]): the host offers them to, and reads them of, a plugin
/// of this minor or later.
pub const RUN_LIST_NOTES_MINOR: u32 = 4;

/// The version of the vcsim crates that speak this ABI (one workspace
/// version: the SDK's, the host's and this crate's).
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The `rustc --version` that built this crate (and so the plugin or host
/// that links it).
pub const RUSTC_VERSION: &str = env!("VCSIM_PLUGIN_RUSTC");

/// Entry-point symbol names of ABI major version 2.
pub mod symbols {
    pub const CPU: &str = "vcsim_plugin_cpu_v2";
    pub const FETCH: &str = "vcsim_plugin_fetch_v2";
    pub const SEND: &str = "vcsim_plugin_send_v2";
    pub const ESTIMATE: &str = "vcsim_plugin_estimate_v2";
    pub const DISK: &str = "vcsim_plugin_disk_v2";
    /// All five, in the framework's family order.
    pub const ALL: [&str; 5] = [CPU, FETCH, SEND, ESTIMATE, DISK];
    /// The family part of each name (`cpu`, `fetch`...), same order.
    pub const FAMILIES: [&str; 5] = ["cpu", "fetch", "send", "estimate", "disk"];

    /// The entry symbol of `family` in major version `major`
    /// (`vcsim_plugin_cpu_v1`...): to recognise a plugin of another major.
    pub fn name(family: &str, major: u32) -> String {
        format!("vcsim_plugin_{family}_v{major}")
    }
}

/// `a == b`, in a constant (the SDK's macros check their symbol names with it).
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
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
/// Frozen for the major version.
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

/// An array the host passes, borrowed for one call: `len` elements, the
/// `i`-th at `ptr + i * stride` bytes. `stride` is at least the size of `T`
/// as the plugin knows it (a host of a later minor may pass longer
/// elements). Frozen for the major version.
#[repr(C)]
pub struct Array<T> {
    pub ptr: *const T,
    pub len: usize,
    /// Bytes from one element to the next.
    pub stride: usize,
}

impl<T> Clone for Array<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Array<T> {}

impl<T> Array<T> {
    /// The elements of `s` (stride: the size of `T`).
    pub fn new(s: &[T]) -> Array<T> {
        Array {
            ptr: s.as_ptr(),
            len: s.len(),
            stride: std::mem::size_of::<T>(),
        }
    }
}

/// A host buffer the plugin fills: room for `cap` elements, the `i`-th at
/// `ptr + i * stride` bytes; the plugin writes the prefix of each element
/// it knows (the host has filled the buffer with defaults) and sets `len`.
/// Frozen for the major version.
#[repr(C)]
pub struct ArrayOut<T> {
    pub ptr: *mut T,
    pub cap: usize,
    /// Bytes from one element to the next.
    pub stride: usize,
    /// Set by the plugin: the number of elements written.
    pub len: usize,
}

impl<T> ArrayOut<T> {
    /// Room for the elements of `s` (stride: the size of `T`), none written.
    pub fn new(s: &mut [T]) -> ArrayOut<T> {
        ArrayOut {
            ptr: s.as_mut_ptr(),
            cap: s.len(),
            stride: std::mem::size_of::<T>(),
            len: 0,
        }
    }
}

/// What a plugin exports for one family: the `'static` value its entry
/// symbol returns. Its head is frozen for the major version.
#[repr(C)]
pub struct Export<T: 'static> {
    /// [`ABI_VERSION`] (major) of the SDK that built the plugin.
    pub abi_version: u32,
    /// [`ABI_MINOR`] of the SDK that built the plugin.
    pub abi_minor: u32,
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
/// writes at most `cap` bytes of UTF-8 and sets `len`). Frozen.
#[repr(C)]
pub struct ErrBuf {
    pub ptr: *mut u8,
    pub cap: usize,
    pub len: usize,
}

/// Since 2.3: where a call writes the reason(s) of its decision (see
/// "Reasons"): host-owned, borrowed for the call; the plugin writes at most
/// `cap` bytes from `ptr` and sets `len`. Frozen.
#[repr(C)]
pub struct ReasonBuf {
    pub ptr: *mut u8,
    pub cap: usize,
    /// Set by the plugin: the bytes written (0: no reason).
    pub len: usize,
}

/// Since 2.4: what a run list says of itself, beside its entries (see
/// "Reasons"): host-owned, borrowed for `schedule` like the view's
/// [`ReasonBuf`], whose bytes its spans point into. Frozen.
#[repr(C)]
pub struct RunListNotes {
    /// The run list's reason (within the buffer's first `len` bytes;
    /// `reason_len` 0: none): why the jobs it preempts are not listed, and
    /// the reason of each entry that has none of its own.
    pub reason_start: usize,
    pub reason_len: usize,
    /// What the projects were ranked by ("short-term debt (s)"), a span of
    /// the buffer like `reason_start`; with no name, vcsim says "ranking".
    pub ranking_name_start: usize,
    pub ranking_name_len: usize,
    /// The ranking: one finite value per project, in project order (room
    /// for as many as there are projects; `len` 0: no ranking).
    pub ranking: ArrayOut<f64>,
}

/// Since 2.3: in a reason, what comes before each data item (`key=number`).
pub const REASON_DATA_SEP: u8 = 0x1f;

/// Since 2.3: the least room a host gives a decision's reason, in bytes (a
/// run list's buffer has this plus 256 bytes per job).
pub const REASON_MIN_CAP: usize = 4096;

// ----------------------------------------------------------------------
// Views (host -> plugin, borrowed for one call)

/// The host (`HostInfo`). Embedded in views: frozen for the major version.
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

/// One processing resource of the host (an array element: may grow).
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

/// The user's preferences, in seconds. Embedded in views: frozen for the
/// major version.
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

pub const DELETE_LRU: u8 = 0;
pub const DELETE_PRIORITY: u8 = 1;
pub const DELETE_EXPIRE: u8 = 2;

/// One project (an array element: may grow).
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
    /// Its apps are `View::apps[first_app .. first_app + napps]`.
    pub first_app: usize,
    pub napps: usize,
    /// At most this many of its jobs run at once (0: no cap).
    pub max_concurrent: u32,
    /// No back-off keeps the client from contacting it at the view's time.
    pub contactable: u8,
    /// It has a queued, running or preempted job.
    pub has_runnable: u8,
    /// `DELETE_*`: the order in which its files are deleted.
    pub deletion_policy: u8,
    /// Since 2.2: its recent estimated credit (today's client's REC), in
    /// credits per day, at the view's time.
    pub rec: f64,
}

/// One app of a project (an array element: may grow).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct App {
    /// The project it belongs to.
    pub project: usize,
    pub name: Str,
    /// CPUs a job of it uses.
    pub cpus: f64,
    /// The GPU resource it uses (0: none) and how many instances.
    pub gpu_rsc: usize,
    pub gpu_count: f64,
    /// The project's FLOPs estimate of its jobs.
    pub flops_estimate: f64,
    /// Its jobs' latency bound in seconds (the app's own, else the project's).
    pub latency_bound: f64,
    /// At most this many of its jobs run at once (0: no cap).
    pub max_concurrent: u32,
    /// 0 if it needs a GPU type this host lacks (its `gpu_rsc` is then 0).
    pub runs_on_host: u8,
}

/// One project on one resource (an array element: may grow).
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

/// One job on the host (an array element, or alone: may grow). Times are
/// simulated seconds since the start.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Job {
    pub id: u64,
    pub project: usize,
    /// Index of its app among its project's apps.
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

pub const FILE_INPUT: u8 = 0;
pub const FILE_OUTPUT: u8 = 1;
pub const FILE_STICKY: u8 = 2;

/// One file on the host (BOINC's `FILE_INFO`; an array element: may grow).
/// Times are simulated seconds since the start (negative: before it).
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

/// What a CPU scheduler, a work fetcher and a disk manager see. Starts with
/// its size; may grow at the end in a minor version.
#[repr(C)]
pub struct View {
    /// `size_of::<View>()` as the host knows it.
    pub size: u32,
    /// The host's [`ABI_MINOR`].
    pub minor: u32,
    pub now: f64,
    /// The run's seed: a plugin's random streams derive from it.
    pub seed: u64,
    /// The index of the step the view is at (`now / prefs.step`, rounded).
    pub step: u64,
    pub host: Host,
    pub prefs: Prefs,
    /// The fraction of time the client expects the host to compute.
    pub on_fraction: f64,
    /// Seconds the host has been available since the run began.
    pub available_seconds: f64,
    /// When the CPU scheduler last ran (-inf: never).
    pub last_schedule: f64,
    /// When the client last made an RPC (NaN: never).
    pub last_rpc: f64,
    pub connection_interval: f64,
    pub host_on: u8,
    /// Disk: computation is suspended because nothing more could be deleted.
    pub disk_suspended: u8,
    /// Disk: the user's limit on BOINC's usage (`total_limit`).
    pub total_limit: f64,
    /// Disk: space the client itself uses (`core_usage`).
    pub core_usage: f64,
    /// `host.nrsc` entries.
    pub rsc: Array<RscInfo>,
    pub projects: Array<Project>,
    /// Every project's apps, project by project.
    pub apps: Array<App>,
    /// `projects.len * host.nrsc` entries, project-major.
    pub project_rsc: Array<ProjectRsc>,
    /// Jobs in arrival order.
    pub jobs: Array<Job>,
    /// The files on the host, in creation order (ids increase); empty unless
    /// the run's disk manager enforces limits.
    pub files: Array<File>,
    /// Since 2.1: computing is allowed now (the host is on and the user
    /// lets BOINC compute: `active_fraction`).
    pub cpu_allowed: u8,
    /// Since 2.1: GPU computing is allowed now (`gpu_active_fraction`).
    pub gpu_allowed: u8,
    /// Since 2.2: the half-life of recent estimated credit (REC), seconds
    /// ([`Prefs`] is frozen, so it is here).
    pub rec_half_life: f64,
    /// Since 2.2: the host's context, to pass to its callbacks (opaque).
    pub host_ctx: *const c_void,
    /// Since 2.2: today's client's simulation of the view (null if the
    /// host does not offer it). See "Host callbacks".
    pub list_sim: Option<ListSimFn>,
    /// Since 2.3: where the call's decision's reason goes (`schedule`,
    /// `request`, `piggyback`, `make_room`, `poll`); null in other calls,
    /// or when the host wants none. See "Reasons".
    pub reason: *mut ReasonBuf,
    /// Since 2.4: where the run list's own reason and ranking go (in
    /// `schedule`, when `reason` is offered; null otherwise). See "Reasons".
    pub run_list: *mut RunListNotes,
}

/// Since 2.2: what today's client's simulation (BOINC's `RR_SIM`: list
/// scheduling, GPUs first, the projects in the order the client is built
/// with) says of one resource (an array element: may grow).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ListSimRsc {
    /// Idle instance-seconds within the buffer (now to now + the whole
    /// buffer, today's client's minimum of 180 s included).
    pub shortfall: f64,
    /// Seconds from now to the end of the last interval in which every
    /// instance is busy (0 if never).
    pub saturated_time: f64,
    /// Instances no simulated job holds now.
    pub nidle_now: f64,
    /// The least busy instance's busy time with jobs that miss their
    /// deadlines, seconds (what today's client sends as
    /// [`RscRequest::estimated_delay`]).
    pub busy_time: f64,
}

/// Since 2.2: today's client's simulation of a view, as the host's
/// [`View::list_sim`] returns it. Starts with its size; may grow at the end
/// in a minor version. Borrowed until the call that received the view
/// returns.
#[repr(C)]
pub struct ListSim {
    pub size: u32,
    pub minor: u32,
    /// `host.nrsc` entries.
    pub rsc: Array<ListSimRsc>,
    /// `projects.len * host.nrsc` entries, project-major: the project's
    /// jobs on the resource that the simulation finishes after their
    /// deadlines.
    pub deadlines_missed: Array<u32>,
}

/// Since 2.2: the host's [`View::list_sim`]: called with the view's
/// [`View::host_ctx`]; returns the simulation, or null with a message in
/// `err` (the host's estimator failed).
pub type ListSimFn = unsafe extern "C" fn(ctx: *const c_void, err: &mut ErrBuf) -> *const ListSim;

/// What a completion estimator sees besides the job. Starts with its size;
/// may grow at the end in a minor version.
#[repr(C)]
pub struct EstimateView {
    pub size: u32,
    pub minor: u32,
    pub now: f64,
    pub seed: u64,
    pub step: u64,
    pub host: Host,
    pub prefs: Prefs,
    /// `host.nrsc` entries.
    pub rsc: Array<RscInfo>,
}

/// Where a disk manager writes its plan (`DiskPlan`): host buffers of one
/// id per job and one per file; the plugin sets the lengths and the flag.
/// Starts with its size; may grow at the end in a minor version.
#[repr(C)]
pub struct DiskPlanOut {
    pub size: u32,
    pub minor: u32,
    pub delete_jobs: ArrayOut<u64>,
    pub delete_files: ArrayOut<u64>,
    /// `poll`: suspend computation.
    pub suspend: u8,
}

/// Per-resource part of a work request (an array element: may grow).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RscRequest {
    pub req_seconds: f64,
    pub req_ninstances: f64,
    /// Since 2.2: how long new jobs of this resource would wait before they
    /// start (today's client's `estimated_delay`), seconds; 0 when not told.
    /// The host passes it in requests; a fetcher may set it (the host's
    /// buffer holds 0 before the call, so a 2.1 plugin tells none).
    pub estimated_delay: f64,
}

/// A work request the host shows the plugin. Embedded: frozen.
#[repr(C)]
pub struct RequestIn {
    pub project: usize,
    pub work_req_seconds: f64,
    /// One entry per resource.
    pub rsc: Array<RscRequest>,
}

/// Where a fetcher writes its request: `rsc` is a host buffer of one
/// zeroed entry per resource. Starts with its size; may grow.
#[repr(C)]
pub struct RequestOut {
    pub size: u32,
    pub minor: u32,
    pub present: u8,
    pub project: usize,
    pub work_req_seconds: f64,
    pub rsc: ArrayOut<RscRequest>,
}

pub const RSC_STATUS_UNKNOWN: u8 = 0;
pub const RSC_STATUS_WORK_RETURNED: u8 = 1;
pub const RSC_STATUS_NO_WORK_BUT_SUPPORTED: u8 = 2;
pub const RSC_STATUS_NOT_SUPPORTED: u8 = 3;

/// What an RPC's reply says of one resource (an array element: may grow).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReplyRsc {
    /// Jobs received.
    pub jobs: u32,
    /// `RSC_STATUS_*`; a value the plugin does not know means unknown.
    pub status: u8,
}

/// The outcome of one scheduler RPC. Starts with its size; may grow.
#[repr(C)]
pub struct Reply {
    pub size: u32,
    pub minor: u32,
    pub project: usize,
    pub request: RequestIn,
    pub reached: u8,
    /// One entry per resource.
    pub rsc: Array<ReplyRsc>,
}

/// A job the server could send (an array element, or alone: may grow).
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

/// A job on the host as a scheduler request lists it (an array element: may grow).
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

/// What a server sees of a scheduler request. Starts with its size; may grow.
#[repr(C)]
pub struct ServerRequest {
    pub size: u32,
    pub minor: u32,
    pub now: f64,
    pub project: usize,
    pub project_name: Str,
    pub latency_bound: f64,
    pub host: Host,
    /// `host.nrsc` entries.
    pub rsc: Array<RscInfo>,
    pub request: RequestIn,
    pub dcf: f64,
    pub work_buf_min: f64,
    pub workload: Array<ReportedJob>,
    pub free_bytes: [f64; 3],
    /// Since 2.2: the fraction of time the client expects the host to
    /// compute (1 unless it learns availability).
    pub on_fraction: f64,
    /// Since 2.3: where the verdict's reason goes (null: the host wants
    /// none). See "Reasons".
    pub reason: *mut ReasonBuf,
}

pub const VERDICT_SEND: u8 = 0;
pub const VERDICT_SKIP: u8 = 1;
pub const VERDICT_STOP: u8 = 2;

/// One entry of a run list (an output array's element: may grow).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RunEntry {
    pub job: u64,
    /// `MODE_ROUND_ROBIN` or `MODE_DEADLINE`.
    pub mode: u8,
    /// Since 2.3: where this entry's reason starts in the call's
    /// [`ReasonBuf`] ([`View::reason`]), in bytes.
    pub reason_start: usize,
    /// Since 2.3: its reason's length in bytes (0: none; the host's
    /// default).
    pub reason_len: usize,
}

// ----------------------------------------------------------------------
// Tables (plugin -> host, 'static). The common head of every table:
// `size`, `name`, `summary`, `create`, `destroy`; then the family's calls,
// to which a minor version may append.

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
    pub size: u32,
    pub name: StaticStr,
    pub summary: StaticStr,
    pub create: CreateFn,
    pub destroy: DestroyFn,
    /// Fills `out` (room for one entry per job) with the jobs to run (since
    /// 2.3, their reasons in the view's [`View::reason`]).
    pub schedule: unsafe extern "C" fn(
        state: State,
        view: &View,
        out: &mut ArrayOut<RunEntry>,
        err: &mut ErrBuf,
    ) -> u32,
}

/// A work fetcher (`WorkFetcher`). `request`, `piggyback` and
/// `backoff_on_empty_reply` must not change the state.
#[repr(C)]
pub struct FetchTable {
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
    /// `out`: 1 if a request for work that brings none backs the project off.
    pub backoff_on_empty_reply:
        unsafe extern "C" fn(state: State, view: &View, out: &mut u8, err: &mut ErrBuf) -> u32,
}

/// A work sender (`WorkSender`).
#[repr(C)]
pub struct SendTable {
    pub size: u32,
    pub name: StaticStr,
    pub summary: StaticStr,
    pub create: CreateFn,
    pub destroy: DestroyFn,
    /// `sent`: the candidates already in the reply; `out`: a `VERDICT_*`.
    pub consider: unsafe extern "C" fn(
        state: State,
        req: &ServerRequest,
        sent: &Array<Candidate>,
        cand: &Candidate,
        out: &mut u8,
        err: &mut ErrBuf,
    ) -> u32,
}

/// A completion estimator (`CompletionEstimator`). `remaining_seconds` and
/// `correction` must not change the state.
#[repr(C)]
pub struct EstimateTable {
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
    pub correction: unsafe extern "C" fn(
        state: State,
        view: &EstimateView,
        project: usize,
        out: &mut f64,
        err: &mut ErrBuf,
    ) -> u32,
    pub on_job_finished:
        unsafe extern "C" fn(state: State, view: &EstimateView, job: &Job, err: &mut ErrBuf) -> u32,
}

/// A disk manager (`DiskManager`); the files are in the [`View`].
/// `free_space`, `enforces` and `project_limit` must not change the state.
/// The host calls `make_room` and `poll` only if `enforces`.
#[repr(C)]
pub struct DiskTable {
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
    pub enforces:
        unsafe extern "C" fn(state: State, view: &View, out: &mut u8, err: &mut ErrBuf) -> u32,
    /// `bytes` more of `project` are about to be written.
    pub make_room: unsafe extern "C" fn(
        state: State,
        view: &View,
        project: usize,
        bytes: f64,
        out: &mut DiskPlanOut,
        err: &mut ErrBuf,
    ) -> u32,
    /// After files changed.
    pub poll: unsafe extern "C" fn(
        state: State,
        view: &View,
        out: &mut DiskPlanOut,
        err: &mut ErrBuf,
    ) -> u32,
    /// `project_limit` in bytes; NaN for none.
    pub project_limit: unsafe extern "C" fn(
        state: State,
        view: &View,
        project: usize,
        out: &mut f64,
        err: &mut ErrBuf,
    ) -> u32,
}

/// The common head of every table, for code that handles all five alike.
pub trait Table: 'static {
    fn size(&self) -> u32;
    /// By reference: the host reads the pointer's bits where the plugin
    /// wrote them (a copy of a reference may be assumed non-null).
    fn name(&self) -> &StaticStr;
    fn summary(&self) -> &StaticStr;
    fn create(&self) -> CreateFn;
    fn destroy(&self) -> DestroyFn;
}

macro_rules! table_head {
    ($($t:ty),*) => {$(
        impl Table for $t {
            fn size(&self) -> u32 { self.size }
            fn name(&self) -> &StaticStr { &self.name }
            fn summary(&self) -> &StaticStr { &self.summary }
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

    #[test]
    fn symbol_names_carry_the_major_version() {
        for (s, f) in symbols::ALL.iter().zip(symbols::FAMILIES) {
            assert_eq!(*s, symbols::name(f, ABI_VERSION));
        }
        assert!(str_eq(symbols::CPU, "vcsim_plugin_cpu_v2"));
        assert!(!str_eq(symbols::CPU, "vcsim_plugin_cpu_v1"));
        assert!(!str_eq("a", "ab"));
    }

    #[test]
    fn the_2_2_fields_come_after_every_earlier_one() {
        use std::mem::{offset_of, size_of};
        // Appended: every field of 2.1 keeps its offset, so a 2.1 plugin
        // reads the prefix it knows.
        assert!(offset_of!(View, rec_half_life) > offset_of!(View, gpu_allowed));
        assert!(offset_of!(View, list_sim) > offset_of!(View, host_ctx));
        assert!(offset_of!(Project, rec) > offset_of!(Project, deletion_policy));
        assert_eq!(offset_of!(RscRequest, estimated_delay), 16);
        assert_eq!(size_of::<RscRequest>(), 24);
        assert!(offset_of!(ServerRequest, on_fraction) > offset_of!(ServerRequest, free_bytes));
        // A null callback is a null pointer (`Option` of a function).
        assert_eq!(size_of::<Option<ListSimFn>>(), size_of::<usize>());
    }

    #[test]
    fn the_2_3_fields_come_after_every_earlier_one() {
        use std::mem::{offset_of, size_of};
        // After the whole 2.2 element or struct, padding included: a 2.2
        // plugin writes its whole `RunEntry` (16 bytes), and the host's
        // defaults beyond them stay.
        assert_eq!(offset_of!(RunEntry, reason_start), 16);
        assert!(offset_of!(RunEntry, reason_len) > offset_of!(RunEntry, reason_start));
        assert_eq!(size_of::<RunEntry>(), 32);
        assert!(offset_of!(View, reason) > offset_of!(View, list_sim));
        assert!(offset_of!(ServerRequest, reason) > offset_of!(ServerRequest, on_fraction));
        assert_eq!(size_of::<ReasonBuf>(), size_of::<ErrBuf>());
        assert_eq!(REASON_DATA_SEP, 0x1f);
        const { assert!(REASONS_MINOR <= ABI_MINOR) };
    }

    #[test]
    fn the_2_4_fields_come_after_every_earlier_one() {
        use std::mem::offset_of;
        assert!(offset_of!(View, run_list) > offset_of!(View, reason));
        assert!(offset_of!(RunListNotes, ranking) > offset_of!(RunListNotes, ranking_name_len));
        const { assert!(REASONS_MINOR < RUN_LIST_NOTES_MINOR && RUN_LIST_NOTES_MINOR <= ABI_MINOR) };
    }

    #[test]
    fn views_start_with_their_size_and_minor() {
        assert_eq!(std::mem::offset_of!(View, size), 0);
        assert_eq!(std::mem::offset_of!(View, minor), 4);
        assert_eq!(std::mem::offset_of!(EstimateView, minor), 4);
        assert_eq!(std::mem::offset_of!(ServerRequest, minor), 4);
        assert_eq!(std::mem::offset_of!(Reply, minor), 4);
        assert_eq!(std::mem::offset_of!(RequestOut, minor), 4);
        assert_eq!(std::mem::offset_of!(DiskPlanOut, minor), 4);
        assert_eq!(std::mem::offset_of!(ListSim, minor), 4);
        let jobs = [Job::default(); 2];
        let a = Array::new(&jobs);
        assert_eq!((a.len, a.stride), (2, std::mem::size_of::<Job>()));
    }
}
