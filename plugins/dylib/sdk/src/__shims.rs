//! The `extern "C"` functions behind the tables the export macros build.
//!
//! With `strided` and `callbacks`, this is the SDK's only unsafe code. Each function trusts
//! what the ABI promises of the host (`vcsim-dylib-abi`, rule 5 and the
//! table functions' contract): the views and buffers are valid for the call
//! and `state` is a live state of this table used by one thread at a time.
//! Every body runs under `catch_unwind`, so no panic crosses the boundary;
//! a view that breaks the ABI's size rules is a panic caught the same way.

use crate::abi::{self, ArrayOut, ErrBuf, State, StaticStr};
use crate::callbacks::check_size;
use crate::decision::*;
use crate::error::PolicyError;
use crate::strided::{str_in, Strided};
use crate::traits::*;
use crate::view::{EstimateView, ServerRequest, View};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A plugin's state: the policy, and buffers reused between calls.
struct Holder<T> {
    policy: T,
    runlist: RunList,
    /// A run list's entries, when they carry reasons (ABI 2.3).
    entries: Vec<abi::RunEntry>,
    /// Where a reason's numbers are formatted.
    scratch: String,
}

enum Fail {
    Policy(String),
    Overflow(String),
}

impl From<PolicyError> for Fail {
    fn from(e: PolicyError) -> Fail {
        Fail::Policy(e.message)
    }
}

fn write_err(err: &mut ErrBuf, msg: &str) {
    let mut n = msg.len().min(err.cap);
    while !msg.is_char_boundary(n) {
        n -= 1;
    }
    if n > 0 && !err.ptr.is_null() {
        // SAFETY: the host's buffer holds `cap` bytes (ABI rule 5), and
        // `n <= cap`.
        unsafe { std::ptr::copy_nonoverlapping(msg.as_ptr(), err.ptr, n) };
    }
    err.len = n;
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// Runs `f`, catching panics, and turns the outcome into a status.
fn guard(err: &mut ErrBuf, f: impl FnOnce() -> Result<(), Fail>) -> u32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => abi::STATUS_OK,
        Ok(Err(Fail::Policy(m))) => {
            write_err(err, &m);
            abi::STATUS_ERROR
        }
        Ok(Err(Fail::Overflow(m))) => {
            write_err(err, &m);
            abi::STATUS_OVERFLOW
        }
        Err(p) => {
            let m = panic_message(p.as_ref());
            write_err(err, &m);
            abi::STATUS_PANIC
        }
    }
}

/// # Safety
/// A host view, valid for `'a` (ABI rule 5).
unsafe fn view(raw: &abi::View) -> View<'_> {
    check_size::<abi::View>(raw.size, raw.minor, "view");
    // SAFETY: the ABI's layout of a view: every array describes its
    // elements, valid for the call.
    unsafe {
        View {
            raw,
            rsc: Strided::from_abi(&raw.rsc, "resources"),
            projects: Strided::from_abi(&raw.projects, "projects"),
            apps: Strided::from_abi(&raw.apps, "apps"),
            project_rsc: Strided::from_abi(&raw.project_rsc, "project resources"),
            jobs: Strided::from_abi(&raw.jobs, "jobs"),
            files: Strided::from_abi(&raw.files, "files"),
        }
    }
}

/// # Safety
/// As [`view`].
unsafe fn estimate_view(raw: &abi::EstimateView) -> EstimateView<'_> {
    check_size::<abi::EstimateView>(raw.size, raw.minor, "estimator's view");
    EstimateView {
        raw,
        // SAFETY: the ABI's layout of an estimator's view.
        rsc: unsafe { Strided::from_abi(&raw.rsc, "resources") },
    }
}

/// # Safety
/// A host request, valid for the call.
unsafe fn request_in(r: &abi::RequestIn) -> WorkRequest {
    WorkRequest {
        project: r.project,
        work_req_seconds: r.work_req_seconds,
        // SAFETY: the request's array describes its elements.
        rsc: unsafe { Strided::from_abi(&r.rsc, "request resources") }
            .iter()
            .copied()
            .collect(),
    }
}

/// Writes `items` into the host buffer `out` and sets its length.
fn write_out<T>(
    out: &mut ArrayOut<T>,
    items: impl ExactSizeIterator<Item = T>,
    what: &str,
) -> Result<(), Fail> {
    out.len = 0;
    let n = items.len();
    if n > out.cap {
        // The run list's room is one entry per job of the view: a longer
        // list repeats a job.
        let hint = if what == "run list" {
            " (one per job of the view: is a job listed twice?)"
        } else {
            ""
        };
        return Err(Fail::Overflow(format!(
            "the {what} has {n} entries, more than the host's room for {}{hint}",
            out.cap
        )));
    }
    if n == 0 {
        return Ok(());
    }
    let (size, align) = (std::mem::size_of::<T>(), std::mem::align_of::<T>());
    if out.ptr.is_null()
        || out.stride < size
        || !out.stride.is_multiple_of(align)
        || !(out.ptr as usize).is_multiple_of(align)
    {
        return Err(Fail::Overflow(format!(
            "the host's buffer for the {what} has a stride of {} bytes; this plugin's entries are \
             {size}: host and plugin disagree on the ABI",
            out.stride
        )));
    }
    for (i, x) in items.enumerate() {
        // SAFETY: `i < n <= cap`: element `i` of the host's buffer starts
        // `i * stride` bytes after `ptr` (ABI rule 5), is aligned (checked)
        // and has room for a `T` (stride >= size); the host filled it with
        // defaults, and a plugin writes the prefix it knows.
        unsafe { (out.ptr.cast::<u8>().add(i * out.stride) as *mut T).write(x) };
    }
    out.len = n;
    Ok(())
}

// ---------------------------------------------------------------- reasons

/// The host's reason buffer `p` of the call in progress, if it offers one
/// (ABI 2.3, "Reasons").
///
/// # Safety
/// `p` is null or points to the host's `ReasonBuf` of the call in progress,
/// valid and not otherwise used until it returns.
unsafe fn reason_buf<'a>(p: *mut abi::ReasonBuf) -> Option<&'a mut abi::ReasonBuf> {
    // SAFETY: the caller's contract.
    unsafe { p.as_mut() }
}

/// The reason buffer of a host view (null in a view too short to have one).
fn view_reason(raw: &abi::View) -> *mut abi::ReasonBuf {
    if raw.size as usize > std::mem::offset_of!(abi::View, reason) {
        raw.reason
    } else {
        std::ptr::null_mut()
    }
}

/// The host's notes of the run list in progress (ABI 2.4), if it offers
/// them: null before 2.4, and in a view too short to have the field.
///
/// # Safety
/// `raw` is the host's view of the call in progress (the ABI's contract).
unsafe fn list_notes<'a>(raw: &abi::View) -> Option<&'a mut abi::RunListNotes> {
    if raw.minor < abi::RUN_LIST_NOTES_MINOR
        || (raw.size as usize) <= std::mem::offset_of!(abi::View, run_list)
    {
        return None;
    }
    // SAFETY: a host of 2.4 or later points `run_list` to its notes for
    // the call, or passes null.
    unsafe { raw.run_list.as_mut() }
}

/// Appends reasons to the host's buffer, cutting what does not fit.
struct ReasonWriter<'a> {
    buf: &'a mut abi::ReasonBuf,
}

impl<'a> ReasonWriter<'a> {
    /// A writer of the host's empty buffer `buf`.
    fn new(buf: &'a mut abi::ReasonBuf) -> ReasonWriter<'a> {
        buf.len = 0;
        ReasonWriter { buf }
    }

    fn room(&self) -> usize {
        if self.buf.ptr.is_null() {
            0
        } else {
            self.buf.cap.saturating_sub(self.buf.len)
        }
    }

    /// Appends `b`, which fits (`b.len() <= self.room()`).
    fn put(&mut self, b: &[u8]) {
        debug_assert!(b.len() <= self.room());
        if b.is_empty() {
            return;
        }
        // SAFETY: the host's buffer holds `cap` bytes from `ptr` (ABI
        // "Reasons"), and `len + b.len() <= cap`.
        unsafe {
            std::ptr::copy_nonoverlapping(b.as_ptr(), self.buf.ptr.add(self.buf.len), b.len())
        };
        self.buf.len += b.len();
    }

    /// Appends `r` (its text cut at a UTF-8 boundary, then the data items
    /// that fit whole) and returns where it is: `(start, len)`, `len` 0 if
    /// nothing of it fits or it is empty.
    fn push(&mut self, r: &Reason, scratch: &mut String) -> (usize, usize) {
        use std::fmt::Write;
        let start = self.buf.len;
        let sep = abi::REASON_DATA_SEP as char;
        let mut n = r.text.len().min(self.room());
        while !r.text.is_char_boundary(n) {
            n -= 1;
        }
        let text = &r.text[..n];
        // The text holds no separator: each becomes a space (one byte for
        // one, so the cut stays on a boundary).
        for (i, part) in text.split(sep).enumerate() {
            if i > 0 {
                self.put(b" ");
            }
            self.put(part.as_bytes());
        }
        if n == r.text.len() {
            for (k, x) in &r.data {
                if k.is_empty() || k.contains('=') || k.contains(sep) {
                    continue;
                }
                scratch.clear();
                // Debug: the shortest text that parses back, `1e300` not 301 digits.
                let _ = write!(scratch, "{sep}{k}={x:?}");
                if scratch.len() > self.room() {
                    break;
                }
                let item = std::mem::take(scratch);
                self.put(item.as_bytes());
                *scratch = item;
            }
        }
        (start, self.buf.len - start)
    }
}

/// Writes `reason` as the whole of the host's buffer `buf`.
fn reason_out(buf: &mut abi::ReasonBuf, reason: Option<&Reason>, scratch: &mut String) {
    let mut w = ReasonWriter::new(buf);
    if let Some(r) = reason {
        w.push(r, scratch);
    }
}

/// The reason of `job` in `reasons`: at `*next` if the reasons are in the
/// run list's order (the usual case), else wherever it is.
fn reason_of<'r>(reasons: &'r [(u64, Reason)], next: &mut usize, job: u64) -> Option<&'r Reason> {
    if let Some((j, r)) = reasons.get(*next) {
        if *j == job {
            *next += 1;
            return Some(r);
        }
    }
    reasons.iter().find(|(j, _)| *j == job).map(|(_, r)| r)
}

fn request_out(req: Option<WorkRequest>, out: &mut abi::RequestOut) -> Result<(), Fail> {
    out.present = 0;
    let Some(r) = req else { return Ok(()) };
    write_out(&mut out.rsc, r.rsc.iter().copied(), "request")?;
    out.present = 1;
    out.project = r.project;
    out.work_req_seconds = r.work_req_seconds;
    Ok(())
}

/// # Safety
/// `state` is a live `Holder<T>` of this table, used by this thread only
/// during the call (ABI rules 4 and 8).
unsafe fn holder<'a, T>(state: State) -> &'a mut Holder<T> {
    // SAFETY: the caller's contract.
    unsafe { &mut *(state as *mut Holder<T>) }
}

/// The `create` of every table.
///
/// # Safety
/// `err` is a valid host buffer (ABI rule 5).
pub unsafe extern "C" fn create<T: Default + Send + 'static>(err: &mut ErrBuf) -> State {
    let mut made: State = std::ptr::null_mut();
    let st = guard(err, || {
        made = Box::into_raw(Box::new(Holder {
            policy: T::default(),
            runlist: RunList::default(),
            entries: Vec::new(),
            scratch: String::new(),
        })) as State;
        Ok(())
    });
    if st == abi::STATUS_OK {
        made
    } else {
        std::ptr::null_mut()
    }
}

/// The `destroy` of every table.
///
/// # Safety
/// `state` came from `create::<T>` and is destroyed once (ABI rule 4).
pub unsafe extern "C" fn destroy<T: 'static>(state: State) {
    if state.is_null() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: made by `create::<T>`, destroyed once (ABI rule 4).
        drop(unsafe { Box::from_raw(state as *mut Holder<T>) });
    }));
}

macro_rules! head {
    ($t:ty, $name:expr, $summary:expr, $table:ty) => {
        (
            std::mem::size_of::<$table>() as u32,
            StaticStr::new($name),
            StaticStr::new($summary),
            create::<$t> as abi::CreateFn,
            destroy::<$t> as abi::DestroyFn,
        )
    };
}

// ---------------------------------------------------------------- cpu

unsafe extern "C" fn cpu_schedule<T: CpuScheduler>(
    state: State,
    view_: &abi::View,
    out: &mut ArrayOut<abi::RunEntry>,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        // SAFETY: the ABI contract (module docs).
        let v = unsafe { view(view_) };
        let Holder {
            policy,
            runlist,
            entries,
            scratch,
        } = h;
        runlist.clear();
        policy.schedule(&v, runlist)?;
        let mode = |m: RunMode| match m {
            RunMode::RoundRobin => abi::MODE_ROUND_ROBIN,
            RunMode::Deadline => abi::MODE_DEADLINE,
        };
        // SAFETY: the view's reason buffer is the host's for this call.
        let rb = unsafe { reason_buf(view_reason(view_)) };
        let says = !runlist.reasons.is_empty()
            || runlist.list_reason.is_some()
            || runlist.ranking.is_some();
        let Some(rb) = rb.filter(|_| says) else {
            // No reasons (or no room for them): as before 2.3.
            let entries = runlist.jobs.iter().map(|&(job, m)| abi::RunEntry {
                job,
                mode: mode(m),
                ..abi::RunEntry::default()
            });
            return write_out(out, entries, "run list");
        };
        let mut w = ReasonWriter::new(rb);
        // SAFETY: the view's notes are the host's for this call.
        if let Some(notes) = unsafe { list_notes(view_) } {
            // The ranking's name first: the entries' reasons may fill the
            // buffer, and a ranking without its name would mislead.
            if let Some(r) = &runlist.ranking {
                (notes.ranking_name_start, notes.ranking_name_len) =
                    w.push(&Reason::new(r.name.as_str()), scratch);
                write_out(&mut notes.ranking, r.values.iter().copied(), "ranking")?;
            }
            if let Some(r) = &runlist.list_reason {
                (notes.reason_start, notes.reason_len) = w.push(r, scratch);
            }
        }
        let mut next = 0;
        entries.clear();
        for &(job, m) in &runlist.jobs {
            let (reason_start, reason_len) = match reason_of(&runlist.reasons, &mut next, job) {
                Some(r) => w.push(r, scratch),
                None => (0, 0),
            };
            entries.push(abi::RunEntry {
                job,
                mode: mode(m),
                reason_start,
                reason_len,
            });
        }
        write_out(out, entries.iter().copied(), "run list")
    })
}

pub const fn cpu_table<T: CpuScheduler + Default>(
    name: &'static str,
    summary: &'static str,
) -> abi::CpuTable {
    let (size, name, summary, create, destroy) = head!(T, name, summary, abi::CpuTable);
    abi::CpuTable {
        size,
        name,
        summary,
        create,
        destroy,
        schedule: cpu_schedule::<T>,
    }
}

// ---------------------------------------------------------------- fetch

unsafe extern "C" fn fetch_account<T: WorkFetcher>(
    state: State,
    view_: &abi::View,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        // SAFETY: the ABI contract (module docs).
        let v = unsafe { view(view_) };
        Ok(h.policy.account(&v)?)
    })
}

unsafe extern "C" fn fetch_request<T: WorkFetcher>(
    state: State,
    view_: &abi::View,
    out: &mut abi::RequestOut,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        // SAFETY: the ABI contract (module docs).
        let v = unsafe { view(view_) };
        let req = h.policy.request(&v)?;
        request_reason(h, &v, view_, req.as_ref())?;
        request_out(req, out)
    })
}

unsafe extern "C" fn fetch_piggyback<T: WorkFetcher>(
    state: State,
    view_: &abi::View,
    project: usize,
    out: &mut abi::RequestOut,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        // SAFETY: the ABI contract (module docs).
        let v = unsafe { view(view_) };
        let req = h.policy.piggyback(&v, project)?;
        request_reason(h, &v, view_, req.as_ref())?;
        request_out(req, out)
    })
}

/// A request's reason into the host's buffer, if it offers one (ABI 2.3).
fn request_reason<T: WorkFetcher>(
    h: &mut Holder<T>,
    v: &View,
    raw: &abi::View,
    req: Option<&WorkRequest>,
) -> Result<(), Fail> {
    // SAFETY: the view's reason buffer is the host's for this call.
    let Some(rb) = (unsafe { reason_buf(view_reason(raw)) }) else {
        return Ok(());
    };
    let reason = match req {
        Some(r) => h.policy.explain_request(v, r)?,
        None => None,
    };
    reason_out(rb, reason.as_ref(), &mut h.scratch);
    Ok(())
}

/// # Safety
/// A host reply, valid for the call.
unsafe fn reply_of(reply: &abi::Reply) -> RpcReply {
    check_size::<abi::Reply>(reply.size, reply.minor, "reply");
    // SAFETY: the reply's arrays describe their elements.
    let (request, rsc) = unsafe {
        (
            request_in(&reply.request),
            Strided::from_abi(&reply.rsc, "reply resources"),
        )
    };
    RpcReply {
        project: reply.project,
        request,
        reached: reply.reached != 0,
        jobs: rsc.iter().map(|r| r.jobs).collect(),
        rsc_status: rsc
            .iter()
            .map(|r| match r.status {
                abi::RSC_STATUS_WORK_RETURNED => RscStatus::WorkReturned,
                abi::RSC_STATUS_NO_WORK_BUT_SUPPORTED => RscStatus::NoWorkButSupported,
                abi::RSC_STATUS_NOT_SUPPORTED => RscStatus::NotSupported,
                _ => RscStatus::Unknown,
            })
            .collect(),
    }
}

unsafe extern "C" fn fetch_on_reply<T: WorkFetcher>(
    state: State,
    view_: &abi::View,
    reply: &abi::Reply,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        // SAFETY: the ABI contract (module docs).
        let (v, r) = unsafe { (view(view_), reply_of(reply)) };
        Ok(h.policy.on_reply(&v, &r)?)
    })
}

unsafe extern "C" fn fetch_backoff<T: WorkFetcher>(
    state: State,
    view_: &abi::View,
    out: &mut u8,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        // SAFETY: the ABI contract (module docs).
        let v = unsafe { view(view_) };
        *out = h.policy.backoff_on_empty_reply(&v)? as u8;
        Ok(())
    })
}

pub const fn fetch_table<T: WorkFetcher + Default>(
    name: &'static str,
    summary: &'static str,
) -> abi::FetchTable {
    let (size, name, summary, create, destroy) = head!(T, name, summary, abi::FetchTable);
    abi::FetchTable {
        size,
        name,
        summary,
        create,
        destroy,
        account: fetch_account::<T>,
        request: fetch_request::<T>,
        piggyback: fetch_piggyback::<T>,
        on_reply: fetch_on_reply::<T>,
        backoff_on_empty_reply: fetch_backoff::<T>,
    }
}

// ---------------------------------------------------------------- send

/// # Safety
/// A host request, valid for `'a`.
unsafe fn server_request(req: &abi::ServerRequest) -> ServerRequest<'_> {
    check_size::<abi::ServerRequest>(req.size, req.minor, "server request");
    // SAFETY: the request's arrays describe their elements.
    unsafe {
        ServerRequest {
            now: req.now,
            project: req.project,
            project_name: str_in(req, req.project_name),
            latency_bound: req.latency_bound,
            host: &req.host,
            rsc: Strided::from_abi(&req.rsc, "resources"),
            request: request_in(&req.request),
            dcf: req.dcf,
            work_buf_min: req.work_buf_min,
            workload: Strided::from_abi(&req.workload, "workload"),
            free_bytes: req.free_bytes,
            on_fraction: if (req.size as usize)
                > std::mem::offset_of!(abi::ServerRequest, on_fraction)
            {
                req.on_fraction
            } else {
                1.0
            },
        }
    }
}

unsafe extern "C" fn send_consider<T: WorkSender>(
    state: State,
    req: &abi::ServerRequest,
    sent: &abi::Array<abi::Candidate>,
    cand: &abi::Candidate,
    out: &mut u8,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        // SAFETY: the ABI contract (module docs).
        let (r, sent) = unsafe { (server_request(req), Strided::from_abi(sent, "candidates")) };
        let verdict = h.policy.consider(&r, sent, cand)?;
        let rb = if req.size as usize > std::mem::offset_of!(abi::ServerRequest, reason) {
            req.reason
        } else {
            std::ptr::null_mut()
        };
        // SAFETY: the request's reason buffer is the host's for this call.
        if let Some(rb) = unsafe { reason_buf(rb) } {
            let reason = h.policy.explain_verdict(&r, sent, cand, verdict)?;
            reason_out(rb, reason.as_ref(), &mut h.scratch);
        }
        *out = match verdict {
            Verdict::Send => abi::VERDICT_SEND,
            Verdict::Skip => abi::VERDICT_SKIP,
            Verdict::Stop => abi::VERDICT_STOP,
        };
        Ok(())
    })
}

pub const fn send_table<T: WorkSender + Default>(
    name: &'static str,
    summary: &'static str,
) -> abi::SendTable {
    let (size, name, summary, create, destroy) = head!(T, name, summary, abi::SendTable);
    abi::SendTable {
        size,
        name,
        summary,
        create,
        destroy,
        consider: send_consider::<T>,
    }
}

// ---------------------------------------------------------------- estimate

unsafe extern "C" fn est_remaining<T: CompletionEstimator>(
    state: State,
    view_: &abi::EstimateView,
    job: &abi::Job,
    out: &mut f64,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        // SAFETY: the ABI contract (module docs).
        let v = unsafe { estimate_view(view_) };
        *out = h.policy.remaining_seconds(&v, job)?;
        Ok(())
    })
}

unsafe extern "C" fn est_correction<T: CompletionEstimator>(
    state: State,
    view_: &abi::EstimateView,
    project: usize,
    out: &mut f64,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        // SAFETY: the ABI contract (module docs).
        let v = unsafe { estimate_view(view_) };
        *out = h.policy.correction(&v, project)?;
        Ok(())
    })
}

unsafe extern "C" fn est_finished<T: CompletionEstimator>(
    state: State,
    view_: &abi::EstimateView,
    job: &abi::Job,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        // SAFETY: the ABI contract (module docs).
        let v = unsafe { estimate_view(view_) };
        Ok(h.policy.on_job_finished(&v, job)?)
    })
}

pub const fn estimate_table<T: CompletionEstimator + Default>(
    name: &'static str,
    summary: &'static str,
) -> abi::EstimateTable {
    let (size, name, summary, create, destroy) = head!(T, name, summary, abi::EstimateTable);
    abi::EstimateTable {
        size,
        name,
        summary,
        create,
        destroy,
        remaining_seconds: est_remaining::<T>,
        correction: est_correction::<T>,
        on_job_finished: est_finished::<T>,
    }
}

// ---------------------------------------------------------------- disk

unsafe extern "C" fn disk_free<T: DiskManager>(
    state: State,
    view_: &abi::View,
    project: usize,
    out: &mut [f64; 3],
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        // SAFETY: the ABI contract (module docs).
        let v = unsafe { view(view_) };
        *out = h.policy.free_space(&v, project)?;
        Ok(())
    })
}

unsafe extern "C" fn disk_enforces<T: DiskManager>(
    state: State,
    view_: &abi::View,
    out: &mut u8,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        // SAFETY: the ABI contract (module docs).
        let v = unsafe { view(view_) };
        *out = h.policy.enforces(&v)? as u8;
        Ok(())
    })
}

/// A plan's reason into the host's buffer, if it offers one (ABI 2.3).
fn plan_reason<T: DiskManager>(
    h: &mut Holder<T>,
    v: &View,
    raw: &abi::View,
    plan: &DiskPlan,
) -> Result<(), Fail> {
    // SAFETY: the view's reason buffer is the host's for this call.
    if let Some(rb) = unsafe { reason_buf(view_reason(raw)) } {
        let reason = h.policy.explain_plan(v, plan)?;
        reason_out(rb, reason.as_ref(), &mut h.scratch);
    }
    Ok(())
}

fn plan_out(plan: DiskPlan, out: &mut abi::DiskPlanOut) -> Result<(), Fail> {
    out.suspend = plan.suspend as u8;
    write_out(
        &mut out.delete_jobs,
        plan.delete_jobs.iter().copied(),
        "plan's jobs",
    )?;
    write_out(
        &mut out.delete_files,
        plan.delete_files.iter().copied(),
        "plan's files",
    )
}

unsafe extern "C" fn disk_make_room<T: DiskManager>(
    state: State,
    view_: &abi::View,
    project: usize,
    bytes: f64,
    out: &mut abi::DiskPlanOut,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        // SAFETY: the ABI contract (module docs).
        let v = unsafe { view(view_) };
        let plan = h.policy.make_room(&v, project, bytes)?;
        plan_reason(h, &v, view_, &plan)?;
        plan_out(plan, out)
    })
}

unsafe extern "C" fn disk_poll<T: DiskManager>(
    state: State,
    view_: &abi::View,
    out: &mut abi::DiskPlanOut,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        // SAFETY: the ABI contract (module docs).
        let v = unsafe { view(view_) };
        let plan = h.policy.poll(&v)?;
        plan_reason(h, &v, view_, &plan)?;
        plan_out(plan, out)
    })
}

unsafe extern "C" fn disk_project_limit<T: DiskManager>(
    state: State,
    view_: &abi::View,
    project: usize,
    out: &mut f64,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        // SAFETY: the ABI contract (module docs).
        let v = unsafe { view(view_) };
        *out = h.policy.project_limit(&v, project)?.unwrap_or(f64::NAN);
        Ok(())
    })
}

pub const fn disk_table<T: DiskManager + Default>(
    name: &'static str,
    summary: &'static str,
) -> abi::DiskTable {
    let (size, name, summary, create, destroy) = head!(T, name, summary, abi::DiskTable);
    abi::DiskTable {
        size,
        name,
        summary,
        create,
        destroy,
        free_space: disk_free::<T>,
        enforces: disk_enforces::<T>,
        make_room: disk_make_room::<T>,
        poll: disk_poll::<T>,
        project_limit: disk_project_limit::<T>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run list longer than the view's jobs repeats one: the error says so.
    #[test]
    fn a_run_list_longer_than_the_jobs_is_said_to_repeat_one() {
        let mut room = [abi::RunEntry::default()];
        let mut out = ArrayOut::new(&mut room);
        let twice = [abi::RunEntry::default(); 2];
        match write_out(&mut out, twice.iter().copied(), "run list") {
            Err(Fail::Overflow(m)) => assert_eq!(
                m,
                "the run list has 2 entries, more than the host's room for 1 \
                 (one per job of the view: is a job listed twice?)"
            ),
            _ => panic!("a list of 2 fits a room of 1"),
        }
        assert_eq!(out.len, 0);
    }

    fn written(buf: &[u8], span: (usize, usize)) -> &str {
        std::str::from_utf8(&buf[span.0..span.0 + span.1]).unwrap()
    }

    #[test]
    fn reasons_are_encoded_and_cut_to_fit() {
        let mut mem = vec![0u8; 64];
        let mut rb = abi::ReasonBuf {
            ptr: mem.as_mut_ptr(),
            cap: 40,
            len: 7,
        };
        let mut scratch = String::new();
        let mut w = ReasonWriter::new(&mut rb);
        let a = w.push(
            &Reason::new("slack\u{1f} 2 h")
                .with("slack_s", 7200.0)
                .with("bad=key", 1.0)
                .with("", 2.0)
                .with("big", 1e300),
            &mut scratch,
        );
        // An empty reason takes no room.
        let e = w.push(&Reason::default(), &mut scratch);
        // No room for the whole text: cut at a character boundary, no data.
        let b = w.push(&Reason::new("é".repeat(20)).with("x", 1.0), &mut scratch);
        let len = rb.len;
        assert_eq!(a, (0, 35));
        assert_eq!(
            written(&mem, a),
            "slack  2 h\u{1f}slack_s=7200.0\u{1f}big=1e300"
        );
        assert_eq!(e, (35, 0));
        assert_eq!(b, (35, 4));
        assert_eq!(written(&mem, b), "éé");
        assert_eq!(len, 39);
        assert!(mem[39..].iter().all(|b| *b == 0), "nothing past what fits");
        // Data that does not fit whole is left out.
        let mut rb = abi::ReasonBuf {
            ptr: mem.as_mut_ptr(),
            cap: 12,
            len: 0,
        };
        let mut w = ReasonWriter::new(&mut rb);
        let c = w.push(
            &Reason::new("why").with("k", 1.5).with("long", 2.5),
            &mut scratch,
        );
        assert_eq!(written(&mem, c), "why\u{1f}k=1.5");
        // A null buffer has no room.
        let mut none = abi::ReasonBuf {
            ptr: std::ptr::null_mut(),
            cap: 100,
            len: 0,
        };
        assert_eq!(
            ReasonWriter::new(&mut none).push(&Reason::new("x"), &mut scratch),
            (0, 0)
        );
    }

    #[test]
    fn run_list_reasons_are_found_in_order_or_anywhere() {
        let mut l = RunList::default();
        l.push_with_reason(3, RunMode::RoundRobin, "a");
        l.push(4, RunMode::RoundRobin);
        l.push_with_reason(5, RunMode::Deadline, "c");
        l.set_reason(3, "a2");
        let mut next = 0;
        assert_eq!(reason_of(&l.reasons, &mut next, 3).unwrap().text, "a2");
        assert!(reason_of(&l.reasons, &mut next, 4).is_none());
        assert_eq!(reason_of(&l.reasons, &mut next, 5).unwrap().text, "c");
        let mut next = 0;
        assert_eq!(reason_of(&l.reasons, &mut next, 5).unwrap().text, "c");
        l.clear();
        assert!(l.reasons.is_empty() && l.reason(3).is_none());
    }
}
