//! Test fixture. Its CPU scheduler is named `lsf` like the example
//! plugin's, so loading both must be refused. Its sender, estimator and disk
//! manager are ports of the built-ins `ws1`, `jc1` and `none`, so that a run
//! through the ABI can be checked against the built-ins number for number.

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
export_disk!(WholeDisk => "none-port", "the built-in none through the ABI [fixture]");
