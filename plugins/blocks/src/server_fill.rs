//! How much of a request a server's reply still has to fill: WS1, WS2,
//! the GPU sender and scripts (`req.seconds_to_fill(r)`) share it.

use vcsim_framework::{Candidate, Rsc, ServerRequest, CPU};

/// Seconds still to fill for the candidate's resource after `sent`.
pub fn seconds_to_fill(req: &ServerRequest, sent: &[Candidate], rsc: Rsc) -> f64 {
    let r = req.request;
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

/// Instances of its resource a candidate occupies.
pub fn width(c: &Candidate) -> f64 {
    if c.rsc == CPU {
        c.cpus
    } else {
        c.gpu_count
    }
}
