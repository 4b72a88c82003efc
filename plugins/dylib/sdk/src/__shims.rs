//! The `extern "C"` functions behind the tables the export macros build.
//!
//! This is the SDK's only unsafe code. Each function trusts what the ABI
//! promises of the host (`vcsim-dylib-abi`, rule 5 and the table
//! functions' contract): the views and buffers are valid for the call and
//! `state` is a live state of this table used by one thread at a time.
//! Every body runs under `catch_unwind`, so no panic crosses the boundary.

use crate::abi::{self, ErrBuf, State, StaticStr, Str};
use crate::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A plugin's state: the policy, and buffers reused between calls.
struct Holder<T> {
    policy: T,
    runlist: RunList,
}

enum Fail {
    Policy(String),
    Overflow(String),
}

impl From<PolicyError> for Fail {
    fn from(e: PolicyError) -> Fail {
        Fail::Policy(e.0)
    }
}

fn write_err(err: &mut ErrBuf, msg: &str) {
    let mut n = msg.len().min(err.cap);
    while !msg.is_char_boundary(n) {
        n -= 1;
    }
    if n > 0 && !err.ptr.is_null() {
        // SAFETY: the host's buffer holds `cap` bytes (ABI rule 5).
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

/// A string of a host view (valid for the call: ABI rule 5).
pub(crate) fn str_of<'a>(s: Str) -> &'a str {
    if s.ptr.is_null() || s.len == 0 {
        return "";
    }
    // SAFETY: host strings in views are valid UTF-8 for the call; the
    // lifetime is bounded by the view the caller borrowed it from.
    let b = unsafe { std::slice::from_raw_parts(s.ptr, s.len) };
    std::str::from_utf8(b).unwrap_or("")
}

/// # Safety
/// `ptr` points to `len` valid `T` for `'a` (or `len` is 0).
unsafe fn slice<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
    if len == 0 || ptr.is_null() {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// # Safety
/// A host view, valid for `'a`.
unsafe fn view<'a>(raw: &'a abi::View) -> View<'a> {
    let nrsc = raw.host.nrsc;
    // SAFETY: the ABI's layout of a view (counts beside each pointer).
    unsafe {
        View {
            raw,
            rsc: slice(raw.rsc, nrsc),
            projects: slice(raw.projects, raw.nprojects),
            project_rsc: slice(raw.project_rsc, raw.nprojects * nrsc),
            jobs: slice(raw.jobs, raw.njobs),
        }
    }
}

/// # Safety
/// As [`view`].
unsafe fn estimate_view<'a>(raw: &'a abi::EstimateView) -> EstimateView<'a> {
    EstimateView {
        raw,
        // SAFETY: `host.nrsc` entries.
        rsc: unsafe { slice(raw.rsc, raw.host.nrsc) },
    }
}

/// # Safety
/// A host request, valid for the call.
unsafe fn request_in(r: &abi::RequestIn) -> WorkRequest {
    WorkRequest {
        project: r.project,
        work_req_seconds: r.work_req_seconds,
        // SAFETY: `nrsc` entries.
        rsc: unsafe { slice(r.rsc, r.nrsc) }.to_vec(),
    }
}

fn request_out(req: Option<WorkRequest>, out: &mut abi::RequestOut) -> Result<(), Fail> {
    out.present = 0;
    let Some(r) = req else { return Ok(()) };
    if r.rsc.len() > out.nrsc {
        return Err(Fail::Overflow(format!(
            "the request has {} resources, the host {}",
            r.rsc.len(),
            out.nrsc
        )));
    }
    out.present = 1;
    out.project = r.project;
    out.work_req_seconds = r.work_req_seconds;
    for (i, x) in r.rsc.iter().enumerate() {
        // SAFETY: `i < nrsc`, the host buffer's length.
        unsafe { *out.rsc.add(i) = *x };
    }
    Ok(())
}

/// # Safety
/// `state` is a live `Holder<T>` of this table (ABI contract).
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
            abi::ABI_VERSION,
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
    out: &mut abi::RunOut,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    let v = unsafe { view(view_) };
    guard(err, || {
        h.runlist.clear();
        h.policy.schedule(&v, &mut h.runlist)?;
        if h.runlist.len() > out.cap {
            return Err(Fail::Overflow(format!(
                "the run list has {} entries, more than the {} jobs on the host",
                h.runlist.len(),
                out.cap
            )));
        }
        for (i, (job, mode)) in h.runlist.jobs.iter().enumerate() {
            let e = abi::RunEntry {
                job: *job,
                mode: match mode {
                    RunMode::RoundRobin => abi::MODE_ROUND_ROBIN,
                    RunMode::Deadline => abi::MODE_DEADLINE,
                },
            };
            // SAFETY: `i < cap`, the host buffer's length.
            unsafe { *out.ptr.add(i) = e };
        }
        out.len = h.runlist.len();
        Ok(())
    })
}

pub const fn cpu_table<T: CpuScheduler + Default>(
    name: &'static str,
    summary: &'static str,
) -> abi::CpuTable {
    let (abi_version, size, name, summary, create, destroy) =
        head!(T, name, summary, abi::CpuTable);
    abi::CpuTable {
        abi_version,
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
    let v = unsafe { view(view_) };
    guard(err, || Ok(h.policy.account(&v)?))
}

unsafe extern "C" fn fetch_request<T: WorkFetcher>(
    state: State,
    view_: &abi::View,
    out: &mut abi::RequestOut,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    let v = unsafe { view(view_) };
    guard(err, || request_out(h.policy.request(&v)?, out))
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
    let v = unsafe { view(view_) };
    guard(err, || request_out(h.policy.piggyback(&v, project)?, out))
}

unsafe extern "C" fn fetch_on_reply<T: WorkFetcher>(
    state: State,
    view_: &abi::View,
    reply: &abi::Reply,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    let v = unsafe { view(view_) };
    let r = unsafe {
        RpcReply {
            project: reply.project,
            request: request_in(&reply.request),
            reached: reply.reached != 0,
            jobs: slice(reply.jobs, reply.nrsc).to_vec(),
            rsc_status: slice(reply.rsc_status, reply.nrsc)
                .iter()
                .map(|s| match *s {
                    abi::RSC_STATUS_WORK_RETURNED => RscStatus::WorkReturned,
                    abi::RSC_STATUS_NO_WORK_BUT_SUPPORTED => RscStatus::NoWorkButSupported,
                    abi::RSC_STATUS_NOT_SUPPORTED => RscStatus::NotSupported,
                    _ => RscStatus::Unknown,
                })
                .collect(),
        }
    };
    guard(err, || Ok(h.policy.on_reply(&v, &r)?))
}

unsafe extern "C" fn fetch_backoff<T: WorkFetcher>(
    state: State,
    out: &mut u8,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        *out = h.policy.backoff_on_empty_reply() as u8;
        Ok(())
    })
}

pub const fn fetch_table<T: WorkFetcher + Default>(
    name: &'static str,
    summary: &'static str,
) -> abi::FetchTable {
    let (abi_version, size, name, summary, create, destroy) =
        head!(T, name, summary, abi::FetchTable);
    abi::FetchTable {
        abi_version,
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

unsafe extern "C" fn send_consider<T: WorkSender>(
    state: State,
    req: &abi::ServerRequest,
    sent: *const abi::Candidate,
    nsent: usize,
    cand: &abi::Candidate,
    out: &mut u8,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    let (r, sent) = unsafe {
        (
            ServerRequest {
                now: req.now,
                project: req.project,
                project_name: str_of(req.project_name),
                latency_bound: req.latency_bound,
                host: &req.host,
                rsc: slice(req.rsc, req.host.nrsc),
                request: request_in(&req.request),
                dcf: req.dcf,
                work_buf_min: req.work_buf_min,
                workload: slice(req.workload, req.nworkload),
                free_bytes: req.free_bytes,
            },
            slice(sent, nsent),
        )
    };
    guard(err, || {
        *out = match h.policy.consider(&r, sent, cand)? {
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
    let (abi_version, size, name, summary, create, destroy) =
        head!(T, name, summary, abi::SendTable);
    abi::SendTable {
        abi_version,
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
    let v = unsafe { estimate_view(view_) };
    guard(err, || {
        *out = h.policy.remaining_seconds(&v, job)?;
        Ok(())
    })
}

unsafe extern "C" fn est_correction<T: CompletionEstimator>(
    state: State,
    project: usize,
    out: &mut f64,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        *out = h.policy.correction(project);
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
    let v = unsafe { estimate_view(view_) };
    guard(err, || Ok(h.policy.on_job_finished(&v, job)?))
}

pub const fn estimate_table<T: CompletionEstimator + Default>(
    name: &'static str,
    summary: &'static str,
) -> abi::EstimateTable {
    let (abi_version, size, name, summary, create, destroy) =
        head!(T, name, summary, abi::EstimateTable);
    abi::EstimateTable {
        abi_version,
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
    let v = unsafe { view(view_) };
    guard(err, || {
        *out = h.policy.free_space(&v, project)?;
        Ok(())
    })
}

unsafe extern "C" fn disk_enforces<T: DiskManager>(
    state: State,
    out: &mut u8,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    guard(err, || {
        *out = h.policy.enforces() as u8;
        Ok(())
    })
}

/// # Safety
/// A host disk view, valid for `'a`, of a view of `nprojects` projects.
unsafe fn disk_view<'a>(raw: &'a abi::DiskView, nprojects: usize) -> DiskView<'a> {
    // SAFETY: the ABI's layout of a disk view (counts beside each pointer).
    unsafe {
        DiskView {
            raw,
            files: slice(raw.files, raw.nfiles),
            deletion_policy: slice(raw.deletion_policy, nprojects),
        }
    }
}

fn plan_out(plan: DiskPlan, out: &mut abi::DiskPlanOut) -> Result<(), Fail> {
    out.jobs_len = 0;
    out.files_len = 0;
    out.fits = plan.fits as u8;
    out.suspend = plan.suspend as u8;
    if plan.delete_jobs.len() > out.jobs_cap || plan.delete_files.len() > out.files_cap {
        return Err(Fail::Overflow(format!(
            "the plan deletes {} jobs and {} files, the host has {} and {}",
            plan.delete_jobs.len(),
            plan.delete_files.len(),
            out.jobs_cap,
            out.files_cap
        )));
    }
    for (ids, ptr, len) in [
        (&plan.delete_jobs, out.delete_jobs, &mut out.jobs_len),
        (&plan.delete_files, out.delete_files, &mut out.files_len),
    ] {
        if !ids.is_empty() && !ptr.is_null() {
            // SAFETY: the host's buffer holds `cap` ids (ABI rule 5),
            // checked above.
            unsafe { std::ptr::copy_nonoverlapping(ids.as_ptr(), ptr, ids.len()) };
            *len = ids.len();
        } else if !ids.is_empty() {
            return Err(Fail::Overflow(
                "the host gave no buffer for the plan".into(),
            ));
        }
    }
    Ok(())
}

unsafe extern "C" fn disk_make_room<T: DiskManager>(
    state: State,
    view_: &abi::View,
    disk: &abi::DiskView,
    project: usize,
    bytes: f64,
    out: &mut abi::DiskPlanOut,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    let v = unsafe { view(view_) };
    let d = unsafe { disk_view(disk, view_.nprojects) };
    guard(err, || {
        let plan = h.policy.make_room(&v, &d, project, bytes)?;
        plan_out(plan, out)
    })
}

unsafe extern "C" fn disk_poll<T: DiskManager>(
    state: State,
    view_: &abi::View,
    disk: &abi::DiskView,
    out: &mut abi::DiskPlanOut,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    let v = unsafe { view(view_) };
    let d = unsafe { disk_view(disk, view_.nprojects) };
    guard(err, || {
        let plan = h.policy.poll(&v, &d)?;
        plan_out(plan, out)
    })
}

unsafe extern "C" fn disk_project_limit<T: DiskManager>(
    state: State,
    view_: &abi::View,
    disk: &abi::DiskView,
    project: usize,
    out: &mut f64,
    err: &mut ErrBuf,
) -> u32 {
    // SAFETY: the ABI contract (module docs).
    let h = unsafe { holder::<T>(state) };
    let v = unsafe { view(view_) };
    let d = unsafe { disk_view(disk, view_.nprojects) };
    guard(err, || {
        *out = h.policy.project_limit(&v, &d, project).unwrap_or(f64::NAN);
        Ok(())
    })
}

pub const fn disk_table<T: DiskManager + Default>(
    name: &'static str,
    summary: &'static str,
) -> abi::DiskTable {
    let (abi_version, size, name, summary, create, destroy) =
        head!(T, name, summary, abi::DiskTable);
    abi::DiskTable {
        abi_version,
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
