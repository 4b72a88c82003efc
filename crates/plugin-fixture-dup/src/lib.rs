//! Test fixture. Its CPU scheduler is named `lsf` like the example
//! plugin's, so loading both must be refused. Its sender, estimator and disk
//! manager `none-port` are ports of the built-ins `ws1`, `jc1` and `none`,
//! so that a run through the ABI can be checked against the built-ins number
//! for number. Its disk managers `tidy` and `tidy-old` (the same policy in a
//! table of the first ABI 1 size) exercise `make_room`, `poll` and
//! `project_limit`.

use vcsim_plugin_sdk::*;

/// First come, first served (named `lsf` to clash with the example).
#[derive(Default)]
pub struct Fcfs;

impl CpuScheduler for Fcfs {
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()> {
        let mut free = v.host().ncpus;
        for j in v
            .jobs()
            .iter()
            .filter(|j| j.is_runnable() && j.gpu().is_none())
        {
            if j.cpus <= free + 1e-9 {
                free -= j.cpus;
                out.push(j.id, RunMode::RoundRobin);
            }
        }
        Ok(())
    }
}

/// The built-in `ws1`, through the ABI.
#[derive(Default)]
pub struct Ws1Port;

fn width(c: &Candidate) -> f64 {
    if c.rsc == 0 {
        c.cpus
    } else {
        c.gpu_count
    }
}

fn seconds_to_fill(req: &ServerRequest, sent: &[Candidate], rsc: usize) -> f64 {
    let r = &req.request;
    if r.per_resource() {
        let x = r.rsc[rsc];
        let secs: f64 = sent
            .iter()
            .filter(|c| c.rsc == rsc)
            .map(|c| c.est_seconds * width(c))
            .sum();
        let n = sent.iter().filter(|c| c.rsc == rsc).map(width).sum::<f64>();
        if x.req_ninstances > n {
            return f64::INFINITY.min(x.req_seconds.max(1.0) + secs);
        }
        x.req_seconds - secs
    } else {
        r.work_req_seconds - sent.iter().map(|c| c.est_seconds * width(c)).sum::<f64>()
    }
}

impl WorkSender for Ws1Port {
    fn consider(
        &mut self,
        req: &ServerRequest,
        sent: &[Candidate],
        cand: &Candidate,
    ) -> PolicyResult<Verdict> {
        if !req.request.asks_for(cand.rsc) {
            return Ok(Verdict::Skip);
        }
        Ok(if seconds_to_fill(req, sent, cand.rsc) > 0.0 {
            Verdict::Send
        } else {
            Verdict::Stop
        })
    }
}

/// The built-in `jc1`, through the ABI.
#[derive(Default)]
pub struct Jc1Port;

impl CompletionEstimator for Jc1Port {
    fn remaining_seconds(&self, _v: &EstimateView, job: &Job) -> PolicyResult<f64> {
        let (f, elapsed, e) = (job.fraction_done, job.run_seconds, job.estimated_seconds);
        if f >= 1.0 {
            return Ok(0.0);
        }
        if f <= 0.0 || elapsed <= 0.0 {
            return Ok(e);
        }
        let a = elapsed / f - elapsed;
        Ok(f * a + (1.0 - f) * (1.0 - f) * e)
    }
}

/// The built-in `none`, through the ABI.
#[derive(Default)]
pub struct WholeDisk;

impl DiskManager for WholeDisk {
    fn free_space(&self, v: &View, _project: usize) -> PolicyResult<[f64; 3]> {
        Ok([v.host().disk_bytes; 3])
    }
}

export_cpu!(Fcfs => "lsf", "first come, first served; clashes with the example's lsf [fixture]");
export_send!(Ws1Port => "ws1-port", "the built-in ws1 through the ABI [fixture]");
export_estimate!(Jc1Port => "jc1-port", "the built-in jc1 through the ABI [fixture]");

/// A small disk manager that enforces the user's limit: it deletes
/// unreferenced files, expired ones first, then least recently used, until
/// BOINC's usage fits; each project's limit is its share of the whole.
#[derive(Default)]
pub struct Tidy;

impl Tidy {
    /// Unreferenced files to delete so that `extra` more bytes fit.
    fn plan(v: &View, d: &DiskView, extra: f64) -> DiskPlan {
        let limit = d.all_projects_limit();
        let mut used = d.usage() + extra;
        let mut free: Vec<&File> = d.files().iter().filter(|f| f.referenced == 0).collect();
        free.sort_by(|a, b| {
            let (ea, eb) = (a.expires <= v.now(), b.expires <= v.now());
            eb.cmp(&ea).then(a.last_used.total_cmp(&b.last_used))
        });
        let mut plan = DiskPlan::default();
        for f in free {
            if used <= limit && f.expires > v.now() {
                break;
            }
            used -= f.bytes;
            plan.delete_files.push(f.id);
        }
        plan.delete_files.sort_unstable();
        plan.fits = used <= limit;
        plan.suspend = !plan.fits && extra == 0.0;
        plan
    }
}

impl DiskManager for Tidy {
    fn free_space(&self, v: &View, _project: usize) -> PolicyResult<[f64; 3]> {
        Ok([v.host().disk_bytes; 3])
    }
    fn enforces(&self) -> bool {
        true
    }
    fn make_room(
        &mut self,
        v: &View,
        d: &DiskView,
        _project: usize,
        bytes: f64,
    ) -> PolicyResult<DiskPlan> {
        Ok(Tidy::plan(v, d, bytes))
    }
    fn poll(&mut self, v: &View, d: &DiskView) -> PolicyResult<DiskPlan> {
        Ok(Tidy::plan(v, d, 0.0))
    }
    fn project_limit(&self, v: &View, d: &DiskView, project: usize) -> Option<f64> {
        Some(d.all_projects_limit() * v.share_fraction(project))
    }
}

// The disk export is written out rather than made by `export_disk!`, to
// also export `tidy` as a plugin built before `make_room`, `poll` and
// `project_limit` were appended would: a table whose size stops at
// `enforces` (the host must then use the framework's defaults).
static DISK_TABLES: [abi::DiskTable; 3] = [
    __shims::disk_table::<WholeDisk>("none-port", "the built-in none through the ABI [fixture]"),
    __shims::disk_table::<Tidy>(
        "tidy",
        "deletes unreferenced files, expired then least recently used [fixture]",
    ),
    abi::DiskTable {
        size: abi::DISK_TABLE_V1_0_SIZE as u32,
        ..__shims::disk_table::<Tidy>(
            "tidy-old",
            "tidy in a table of the first ABI 1 size: no make_room, poll, project_limit [fixture]",
        )
    },
];

static DISK_EXPORT: abi::Export<abi::DiskTable> = abi::Export {
    abi_version: abi::ABI_VERSION,
    size: std::mem::size_of::<abi::Export<abi::DiskTable>>() as u32,
    rustc: abi::StaticStr::new(abi::RUSTC_VERSION),
    plugin: abi::StaticStr::new(concat!(
        env!("CARGO_PKG_NAME"),
        " ",
        env!("CARGO_PKG_VERSION")
    )),
    count: DISK_TABLES.len(),
    table: disk_table,
};

extern "C" fn disk_table(i: usize) -> Option<&'static abi::DiskTable> {
    DISK_TABLES.get(i)
}

/// The disk entry point (what `export_disk!` would make).
#[no_mangle]
pub extern "C" fn vcsim_plugin_disk_v1() -> &'static abi::Export<abi::DiskTable> {
    &DISK_EXPORT
}
