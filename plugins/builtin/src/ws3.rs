//! WS3: the server of BOINC's client emulator (`CLIENT_STATE::simulate_rpc`,
//! `sim.cpp`), which today's client talks to there.
//!
//! Jobs of a requested resource are sent until its seconds and instances
//! are covered, each counted at its estimate over the host's on-fraction
//! (a GPU job also uses up the CPU seconds its CPUs take). A job is refused
//! when the resource's estimated delay (what the request says, plus the
//! jobs already in the reply spread over the instances) and its own
//! estimate pass its latency bound; its app is then not offered again in
//! this reply. An old-style request (seconds of any work) is filled the
//! same way on its one amount.

use vcsim_blocks::server_fill::width;
use vcsim_framework::{Candidate, PolicyResult, ServerRequest, Verdict, WorkSender, CPU};

#[derive(Default)]
pub struct Ws3 {
    /// The reply the refusals below belong to: (time, project).
    reply: Option<(f64, usize)>,
    /// Apps refused in this reply (the emulator's `dont_use`).
    refused: Vec<usize>,
}

/// A job's seconds as the emulator's server counts them against a request.
fn counted(req: &ServerRequest, c: &Candidate) -> f64 {
    c.est_seconds / req.on_fraction.clamp(0.01, 1.0)
}

impl WorkSender for Ws3 {
    fn consider(
        &mut self,
        req: &ServerRequest,
        sent: &[Candidate],
        cand: &Candidate,
    ) -> PolicyResult<Verdict> {
        let key = (req.now, req.project);
        if self.reply != Some(key) {
            self.reply = Some(key);
            self.refused.clear();
        }
        let r = req.request;
        let nr = r.rsc.len().max(cand.rsc + 1);
        // What the reply still has to fill, per resource.
        let mut secs = vec![0.0; nr];
        let mut inst = vec![0.0; nr];
        let mut delay = vec![0.0; nr];
        if r.per_resource() {
            for (i, x) in r.rsc.iter().enumerate() {
                secs[i] = x.req_seconds;
                inst[i] = x.req_ninstances;
                delay[i] = x.estimated_delay;
            }
        } else {
            secs[CPU] = r.work_req_seconds;
        }
        let n = |rsc: usize| req.host.ninstances(rsc).max(1e-9);
        for c in sent {
            let e = counted(req, c);
            let k = if r.per_resource() { c.rsc } else { CPU };
            secs[k] -= e * width(c);
            inst[k] -= width(c);
            delay[c.rsc] += e * width(c) / n(c.rsc);
            if c.rsc != CPU && r.per_resource() {
                secs[CPU] -= e * c.cpus;
            }
        }
        let need = |k: usize| secs[k] > 0.0 || inst[k] > 0.0;
        let k = if r.per_resource() { cand.rsc } else { CPU };
        if !need(k) || self.refused.contains(&cand.app) {
            return Ok(if (0..nr).any(need) {
                Verdict::Skip
            } else {
                Verdict::Stop
            });
        }
        // The emulator's default deadline check (not scaled by availability).
        if delay[cand.rsc] + cand.est_seconds > cand.deadline - req.now {
            self.refused.push(cand.app);
            return Ok(Verdict::Skip);
        }
        Ok(Verdict::Send)
    }
}
