//! WS3: the server of BOINC's client emulator (`CLIENT_STATE::simulate_rpc`,
//! `sim.cpp`), which today's client talks to there.
//!
//! Jobs of a requested resource are sent until its seconds and instances
//! are covered, each counted at its estimate over the host's on-fraction
//! (a GPU job also uses up the CPU seconds its CPUs take). A job is refused
//! when the resource's estimated delay (what the request says, plus the
//! jobs already in the reply spread over the instances) and its own
//! estimate pass its latency bound; its app is then not offered again in
//! this reply (the emulator's `dont_use`: the feeder draws no app its
//! sender skipped in the reply, so the reply goes on with the other apps
//! until the request is covered). An old-style request (seconds of any
//! work) is filled the same way on its one amount.

use vcsim_blocks::server_fill::width;
use vcsim_framework::explain::{clock, short_duration, short_number};
use vcsim_framework::{Candidate, PolicyResult, Reason, ServerRequest, Verdict, WorkSender, CPU};

#[derive(Default)]
pub struct Ws3 {
    /// The last candidate failed the deadline check (for the reasons).
    refused_now: bool,
}

/// What a reply still has to fill, per resource: seconds, instances and the
/// estimated delay of a new job.
struct Fill {
    secs: Vec<f64>,
    inst: Vec<f64>,
    delay: Vec<f64>,
}

impl Fill {
    fn of(req: &ServerRequest, sent: &[Candidate], cand: &Candidate) -> Fill {
        let r = req.request;
        let nr = r.rsc.len().max(cand.rsc + 1);
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
        Fill { secs, inst, delay }
    }
    fn need(&self, k: usize) -> bool {
        self.secs[k] > 0.0 || self.inst[k] > 0.0
    }
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
        self.refused_now = false;
        let r = req.request;
        let nr = r.rsc.len().max(cand.rsc + 1);
        // What the reply still has to fill, per resource.
        let f = Fill::of(req, sent, cand);
        let delay = &f.delay;
        let need = |k: usize| f.need(k);
        let k = if r.per_resource() { cand.rsc } else { CPU };
        // A skipped app is not offered again in this reply (the feeder's
        // rule), as the emulator draws only among apps whose resource is
        // still asked for.
        if !need(k) {
            return Ok(if (0..nr).any(need) {
                Verdict::Skip
            } else {
                Verdict::Stop
            });
        }
        // The emulator's default deadline check (not scaled by availability):
        // a refusal skips the app for the rest of the reply (`dont_use`).
        if delay[cand.rsc] + cand.est_seconds > cand.deadline - req.now {
            self.refused_now = true;
            return Ok(Verdict::Skip);
        }
        Ok(Verdict::Send)
    }

    /// What the resource still needs, and the deadline check: the
    /// estimated delay plus the job's estimate against its latency bound.
    fn explain_verdict(
        &self,
        req: &ServerRequest,
        sent: &[Candidate],
        cand: &Candidate,
        verdict: Verdict,
    ) -> PolicyResult<Option<Reason>> {
        let f = Fill::of(req, sent, cand);
        let k = if req.request.per_resource() {
            cand.rsc
        } else {
            CPU
        };
        let rsc = req.host.rsc_name(cand.rsc);
        let delay = f.delay[cand.rsc];
        let bound = cand.deadline - req.now;
        let r = match verdict {
            Verdict::Stop => Reason::new("request filled: every requested resource is covered"),
            Verdict::Skip if self.refused_now => Reason::new(format!(
                "refused: estimated delay {} plus its estimate {} passes its deadline {} (in {}); its app is not offered again in this reply",
                short_duration(delay),
                short_duration(cand.est_seconds),
                clock(cand.deadline),
                short_duration(bound)
            ))
            .with("delay_s", delay)
            .with("est_s", cand.est_seconds)
            .with("bound_s", bound)
            .with("deadline_s", cand.deadline),
            Verdict::Skip => Reason::new(format!(
                "skipped: {} is covered; another requested resource is not",
                req.host.rsc_name(k)
            )),
            Verdict::Send => Reason::new(format!(
                "sent: {rsc} still needs {} and {} instances; estimated delay {} plus its estimate {} is within its deadline (in {})",
                short_duration(f.secs[k].max(0.0)),
                short_number(f.inst[k].max(0.0)),
                short_duration(delay),
                short_duration(cand.est_seconds),
                short_duration(bound)
            ))
            .with("to_fill_s", f.secs[k])
            .with("delay_s", delay)
            .with("est_s", cand.est_seconds)
            .with("bound_s", bound),
        };
        Ok(Some(r))
    }
}
