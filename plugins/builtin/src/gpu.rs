//! The GPU-aware work fetch of `work-fetch-and-gpus` (fetch=`gpu`) and the
//! server side it talks to (send=`gpu`).
//!
//! Processing resources (PRSC): the CPU and each coprocessor type. Per
//! resource, a round-robin simulation gives the shortfall and the idle
//! instances (`PrscWorkFetch`); per (project, resource) the client keeps a
//! long-term debt, the flag D(P, R) and a back-off timer
//! (`PrscProjectData`). Work is fetched in the seed's order: idle GPU, idle
//! CPU, GPU shortfall, CPU shortfall; from the project that may supply that
//! resource, is not backed off for it, and has the largest overall debt plus
//! shortfall.
//!
//! **Debt.** The seed wants the overall debt (the resource debts weighted
//! by speed) to give each project its resource share of the *whole* host,
//! so that in its example (A: GPU jobs only; B: CPU and GPU; equal shares;
//! GPU twice the CPU) the CPU goes 100% to B and the GPU 75% to A. Read
//! literally (each resource's debt earned only by the projects that supply
//! it, split by share), the equilibrium is a 50/50 GPU split. vcsim earns
//! debt by the max-min fair division of the host's processing among the
//! projects that supply work (D true), each limited to the resources it
//! supplies (progressive filling): in the example A's fair part is 1.5 of
//! the 3 units, all on the GPU (75%), and B's is the CPU plus 25% of the GPU.
//! A project earns its part per resource and spends what its jobs use, so
//! the debts stay bounded (a project never earns on a resource it cannot
//! use) and sum to zero over the projects that take part.

use std::cell::RefCell;
use vcsim_blocks::quiet;
use vcsim_blocks::rr_sim::{self, RrResult};
use vcsim_framework::explain::{clock, short_duration, short_number};
use vcsim_framework::{
    Candidate, PolicyResult, Reason, RpcReply, RscRequest, RscStatus, ServerRequest, Time, Verdict,
    View, WorkFetcher, WorkRequest, WorkSender, CPU,
};

/// What `decide` did, for the reasons: a `select_project` call began for a
/// resource (idle or shortfall pass), or passed a project over.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Note {
    Select { r: usize, idle: bool },
    Skip { p: usize, why: Skip },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Skip {
    NotContactable,
    BackedOff,
    CapsFilled,
    HeldByCaps,
    Overworked,
    Misses(u32),
}

/// The longest per-resource back-off: 24 hours (the seed).
pub const RSC_BACKOFF_MAX: f64 = 86400.0;
/// The first per-resource back-off (BOINC's least RPC back-off).
pub const RSC_BACKOFF_MIN: f64 = 60.0;

/// Per (project, resource): the seed's `PRSC_PROJECT_DATA`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PrscProjectData {
    /// Long-term debt, in instance-seconds of this resource.
    pub ltd: f64,
    /// D(P, R): P is likely to supply a job for R if asked.
    pub accrues: bool,
    /// The back-off interval; doubled when a request for R brings nothing.
    pub backoff_interval: f64,
    /// No request for R before this time.
    pub backoff_until: f64,
    /// Instances of R the project should get (set by the debt accounting).
    pub share: f64,
}

/// Per resource: the seed's `PRSC_WORK_FETCH` as of the last simulation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PrscWorkFetch {
    pub ninstances: f64,
    pub shortfall: f64,
    pub nidle: f64,
}

#[derive(Default)]
pub struct GpuFetch {
    /// `data[p][r]`.
    pub data: Vec<Vec<PrscProjectData>>,
    last_usage: Vec<Vec<f64>>,
    last_available: f64,
    rr: RefCell<Vec<RrResult>>,
    quiet: RefCell<QuietScratch>,
}

/// Scratch of `quiet`, kept between calls: the least and greatest
/// remaining times over a stretch, and the bounding simulation.
#[derive(Default)]
struct QuietScratch {
    lo: Vec<f64>,
    hi: Vec<f64>,
    bound: RrResult,
}

impl GpuFetch {
    fn ensure(&mut self, v: &View) {
        let (np, nr) = (v.projects().len(), v.host().nrsc());
        if self.data.len() != np {
            self.data = vec![vec![PrscProjectData::default(); nr]; np];
            self.last_usage = vec![vec![0.0; nr]; np];
        }
    }

    pub fn backed_off(&self, p: usize, r: usize, now: f64) -> bool {
        self.data.get(p).is_some_and(|d| d[r].backoff_until > now)
    }

    /// The overall debt of `p`: resource debts weighted by speed, in CPU seconds.
    pub fn overall_ltd(&self, v: &View, p: usize) -> f64 {
        let h = v.host();
        self.data.get(p).map_or(0.0, |d| {
            d.iter()
                .enumerate()
                .map(|(r, x)| x.ltd * h.instance_flops(r) / h.cpu_flops)
                .sum()
        })
    }

    /// The max-min fair division of the host's FLOPS among projects that
    /// supply work, each limited to the resources it supplies: FLOPS per
    /// project, then spread over its resources.
    pub fn fair_shares(v: &View, usable: &[Vec<bool>]) -> Vec<Vec<f64>> {
        let h = v.host();
        let (np, nr) = (usable.len(), h.nrsc());
        let cap: Vec<f64> = (0..nr)
            .map(|r| h.ninstances(r) * h.instance_flops(r))
            .collect();
        let mask_of = |p: usize| {
            (0..nr)
                .filter(|&r| usable[p][r])
                .fold(0usize, |m, r| m | 1 << r)
        };
        let share = |p: usize| v.project(p).resource_share;
        let mut total: Vec<Option<f64>> = vec![None; np];
        let live = |p: usize| mask_of(p) != 0;
        // Progressive filling: raise every unfrozen project's level until some
        // set of resources is full; freeze the projects confined to it.
        while (0..np).any(|p| live(p) && total[p].is_none()) && nr <= 12 {
            let mut best: Option<(f64, usize)> = None;
            for m in 1..(1usize << nr) {
                let c: f64 = (0..nr).filter(|r| m >> r & 1 == 1).map(|r| cap[r]).sum();
                let inside = |p: usize| live(p) && mask_of(p) & !m == 0;
                let fixed: f64 = (0..np)
                    .filter(|&p| inside(p))
                    .filter_map(|p| total[p])
                    .sum();
                let s: f64 = (0..np)
                    .filter(|&p| inside(p) && total[p].is_none())
                    .map(share)
                    .sum();
                if s > 0.0 {
                    let lam = (c - fixed) / s;
                    if best.is_none_or(|(bl, _)| lam < bl) {
                        best = Some((lam, m));
                    }
                }
            }
            let Some((lam, m)) = best else { break };
            for p in 0..np {
                if live(p) && total[p].is_none() && mask_of(p) & !m == 0 {
                    total[p] = Some(lam.max(0.0) * share(p));
                }
            }
        }
        // Spread each project's FLOPS over its resources: projects confined to
        // fewer resources first, each resource's remaining capacity in order.
        let mut left = cap.clone();
        let mut out = vec![vec![0.0; nr]; np];
        let mut order: Vec<usize> = (0..np).filter(|&p| live(p)).collect();
        order.sort_by_key(|&p| (mask_of(p).count_ones(), p));
        for p in order {
            let mut need = total[p].unwrap_or(0.0);
            for r in (0..nr).rev() {
                if usable[p][r] && need > 0.0 {
                    let take = need.min(left[r]);
                    left[r] -= take;
                    need -= take;
                    out[p][r] = take / h.instance_flops(r);
                }
            }
        }
        out
    }

    /// The seed's `select_project` for resource `r`.
    fn select_project(
        &self,
        v: &View,
        rr: &[RrResult],
        r: usize,
        idle: bool,
        note: &mut impl FnMut(Note),
    ) -> Option<usize> {
        let now = v.now();
        let n = v.host().ninstances(r);
        let period = v.prefs().sched_period;
        let mut best: Option<(usize, f64)> = None;
        note(Note::Select { r, idle });
        for p in 0..v.projects().len() {
            if !v.contactable(p) {
                note(Note::Skip {
                    p,
                    why: Skip::NotContactable,
                });
                continue;
            }
            if self.backed_off(p, r, now) {
                note(Note::Skip {
                    p,
                    why: Skip::BackedOff,
                });
                continue;
            }
            let pr = &rr[r].projects[p];
            // Capped by max_concurrent, and its jobs already fill what the
            // caps let it use: it would get work it cannot run.
            if pr.can_use.is_finite() && pr.shortfall <= 0.0 {
                note(Note::Skip {
                    p,
                    why: Skip::CapsFilled,
                });
                continue;
            }
            // Its jobs fill one of its caps beyond the buffer: more would
            // only wait (BOINC's `MAX_CONCURRENT` reason).
            if rr_sim::held_by_caps(&rr[r], p, now + v.prefs().work_buf_total()) {
                note(Note::Skip {
                    p,
                    why: Skip::HeldByCaps,
                });
                continue;
            }
            let overworked = self.overall_ltd(v, p) < -period;
            if !idle && (overworked || pr.misses as f64 >= n) {
                let why = if overworked {
                    Skip::Overworked
                } else {
                    Skip::Misses(pr.misses)
                };
                note(Note::Skip { p, why });
                continue;
            }
            let score = self.overall_ltd(v, p) + pr.shortfall;
            if best.is_none_or(|(_, b)| score > b) {
                best = Some((p, score));
            }
        }
        best.map(|(p, _)| p)
    }

    /// The decision: which project, and the request (the seed's `send_req`).
    pub fn decide(&self, v: &View) -> PolicyResult<Option<WorkRequest>> {
        self.decide_noting(v, &mut |_| {})
    }

    /// `decide`, telling `note` what each `select_project` did.
    fn decide_noting(
        &self,
        v: &View,
        note: &mut impl FnMut(Note),
    ) -> PolicyResult<Option<WorkRequest>> {
        let nr = v.host().nrsc();
        let mut rr = self.rr.borrow_mut();
        rr.resize(nr, RrResult::default());
        let mut wf = vec![PrscWorkFetch::default(); nr];
        for r in 0..nr {
            rr_sim::simulate(v, r, v.prefs().work_buf_total(), &mut rr[r])?;
            wf[r] = PrscWorkFetch {
                ninstances: v.host().ninstances(r),
                shortfall: rr[r].shortfall,
                nidle: rr[r].nidle,
            };
        }
        let gpus = 1..nr;
        let mut chosen = None;
        // Idle GPU first, then idle CPU, then GPU shortfall, then CPU shortfall.
        for r in gpus.clone() {
            if wf[r].nidle > 0.0 {
                if let Some(p) = self.select_project(v, &rr, r, true, note) {
                    wf[CPU].shortfall = 0.0;
                    chosen = Some(p);
                    break;
                }
            }
        }
        if chosen.is_none() && wf[CPU].nidle > 0.0 {
            if let Some(p) = self.select_project(v, &rr, CPU, true, note) {
                for r in gpus.clone() {
                    wf[r].shortfall = 0.0;
                }
                chosen = Some(p);
            }
        }
        if chosen.is_none() {
            for r in gpus.clone() {
                if wf[r].shortfall > 0.0 {
                    if let Some(p) = self.select_project(v, &rr, r, false, note) {
                        chosen = Some(p);
                        break;
                    }
                }
            }
        }
        if chosen.is_none() && wf[CPU].shortfall > 0.0 {
            chosen = self.select_project(v, &rr, CPU, false, note);
        }
        let Some(p) = chosen else { return Ok(None) };
        // Ask only for the resources this project is not backed off for.
        let now = v.now();
        let rsc: Vec<RscRequest> = (0..nr)
            .map(|r| {
                if self.backed_off(p, r, now) {
                    RscRequest::default()
                } else {
                    let capped = rr[r].projects[p].can_use.is_finite();
                    RscRequest {
                        req_seconds: if capped {
                            rr[r].projects[p].shortfall.min(wf[r].shortfall)
                        } else {
                            wf[r].shortfall
                        },
                        // A capped project is asked for no idle instances
                        // (BOINC's current client does so).
                        req_ninstances: if capped { 0.0 } else { wf[r].nidle },
                        estimated_delay: 0.0,
                    }
                }
            })
            .collect();
        let work_req_seconds = rsc.iter().map(|x| x.req_seconds).fold(0.0, f64::max);
        let req = WorkRequest {
            project: p,
            work_req_seconds,
            rsc,
        };
        Ok(req.per_resource().then_some(req))
    }
}

impl GpuFetch {
    /// How long `decide` is sure to choose no project: nobody can be asked
    /// until a back-off ends (every project that may be contacted is backed
    /// off for every resource: contactability changes only at the
    /// simulator's events; a resource's back-off is this fetcher's, and the
    /// stretch stops short of its end), or no resource runs short.
    fn quiet(&self, v: &View, limit: Time) -> PolicyResult<Option<Time>> {
        if let Some(t) = self.all_backed_off(v, limit) {
            return Ok(Some(t));
        }
        // Or no resource has an idle instance or a shortfall at any step:
        // `decide` then chooses no project. The simulation with fresh rates
        // and the least remaining times the stretch allows
        // (`rr_sim::lower_bound`) holds every instance no more than any
        // simulation of the stretch, so its lack of idle time holds
        // throughout (the instances idle at the start do not change without
        // an event). A queue of many jobs, simulated at every step, made a
        // 2-day run of 100,000 jobs take 27 s.
        let buffer = v.prefs().work_buf_total();
        let nr = v.host().nrsc();
        let mut g = self.quiet.borrow_mut();
        let QuietScratch { lo, hi, bound } = &mut *g;
        quiet::longest(v, limit, |end| {
            if !quiet::remaining_bounds(v, end, lo, hi)? {
                return Ok(false);
            }
            for r in 0..nr {
                if !rr_sim::lower_bound(v, r, buffer, lo, bound)
                    || bound.nidle > 0.0
                    || bound.shortfall > 0.0
                {
                    return Ok(false);
                }
            }
            Ok(true)
        })
    }

    /// Until when every project that may be contacted is backed off for
    /// every resource (None if one is not).
    fn all_backed_off(&self, v: &View, limit: Time) -> Option<Time> {
        let now = v.now();
        let mut until = limit;
        for p in 0..v.projects().len() {
            if !v.contactable(p) {
                continue;
            }
            for r in 0..v.host().nrsc() {
                if !self.backed_off(p, r, now) {
                    return None;
                }
                // Backed off at every step before its end.
                until = until.min(self.data[p][r].backoff_until - v.prefs().step / 2.0);
            }
        }
        (until >= now).then_some(until)
    }
}

impl WorkFetcher for GpuFetch {
    fn quiet_until(&self, v: &View, limit: Time) -> PolicyResult<Option<Time>> {
        self.quiet(v, limit)
    }

    fn account(&mut self, v: &View) -> PolicyResult<()> {
        self.ensure(v);
        let (np, nr) = (v.projects().len(), v.host().nrsc());
        let now = v.now();
        // A project with jobs of a resource on the host supplies it.
        for j in v.jobs() {
            self.data[j.project][j.rsc()].accrues = true;
        }
        let usable: Vec<Vec<bool>> = (0..np)
            .map(|p| {
                (0..nr)
                    .map(|r| self.data[p][r].accrues && !self.backed_off(p, r, now))
                    .collect()
            })
            .collect();
        let shares = GpuFetch::fair_shares(v, &usable);
        let avail = v.available_seconds();
        let dt = avail - self.last_available;
        self.last_available = avail;
        for r in 0..nr {
            // Projects that take part: those that may supply R, and those whose
            // jobs used R anyway. Their debts are normalised to sum to zero.
            let mut sum = 0.0;
            let mut count = 0.0;
            let mut part = vec![false; np];
            for p in 0..np {
                let used = v.usage_seconds(p, r);
                let du = used - self.last_usage[p][r];
                self.last_usage[p][r] = used;
                let d = &mut self.data[p][r];
                d.share = shares[p][r];
                if usable[p][r] || du > 0.0 {
                    d.ltd += d.share * dt - du;
                    part[p] = true;
                    sum += d.ltd;
                    count += 1.0;
                }
            }
            if count > 0.0 {
                let mean = sum / count;
                for p in (0..np).filter(|&p| part[p]) {
                    self.data[p][r].ltd -= mean;
                }
            }
        }
        Ok(())
    }

    fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>> {
        self.decide(v)
    }

    fn piggyback(&self, v: &View, project: usize) -> PolicyResult<Option<WorkRequest>> {
        Ok(self.decide(v)?.filter(|r| r.project == project))
    }

    /// The seed's order (idle GPU, idle CPU, GPU shortfall, CPU shortfall):
    /// which step chose, the project's overall debt plus shortfall, why the
    /// others were passed over, and the request's fields.
    fn explain_request(&self, v: &View, req: &WorkRequest) -> PolicyResult<Option<Reason>> {
        let mut last: Option<(usize, bool)> = None;
        let mut skips: Vec<(usize, Skip)> = Vec::new();
        let chosen = self.decide_noting(v, &mut |n| match n {
            Note::Select { r, idle } => {
                last = Some((r, idle));
                skips.clear();
            }
            Note::Skip { p, why } => skips.push((p, why)),
        })?;
        let rr = self.rr.borrow();
        let name = |q: usize| v.project(q).name.as_str();
        let rname = |r: usize| v.host().rsc_name(r).to_string();
        let p = req.project;
        let mut parts = Vec::new();
        let mut reason = Reason::new("");
        match last {
            Some((r, idle)) if chosen.as_ref().map(|c| c.project) == Some(p) => {
                let step = if idle {
                    format!(
                        "idle {}: {} instances idle",
                        rname(r),
                        short_number(rr[r].nidle)
                    )
                } else {
                    format!(
                        "{} shortfall {} in the round-robin simulation",
                        rname(r),
                        short_duration(rr[r].shortfall)
                    )
                };
                parts.push(step);
                let score = self.overall_ltd(v, p) + rr[r].projects[p].shortfall;
                parts.push(format!(
                    "{} has the largest overall long-term debt plus shortfall {} among projects not backed off for {}",
                    name(p),
                    short_duration(score),
                    rname(r)
                ));
                let period = v.prefs().sched_period;
                for q in (0..v.projects().len()).filter(|&q| q != p) {
                    let why = skips.iter().find(|x| x.0 == q).map(|x| x.1);
                    let ltd = self.overall_ltd(v, q);
                    parts.push(match why {
                        Some(Skip::NotContactable) => format!(
                            "{} backed off until {}",
                            name(q),
                            clock(v.project(q).rpc.min_rpc_time)
                        ),
                        Some(Skip::BackedOff) => format!(
                            "{} backed off for {} until {}",
                            name(q),
                            rname(r),
                            clock(self.data[q][r].backoff_until)
                        ),
                        Some(Skip::CapsFilled) | Some(Skip::HeldByCaps) => {
                            format!("{}: its jobs fill its max_concurrent caps", name(q))
                        }
                        Some(Skip::Overworked) => format!(
                            "{} overworked (LTD {}, below minus one scheduling period {})",
                            name(q),
                            short_duration(ltd),
                            short_duration(period)
                        ),
                        Some(Skip::Misses(m)) => {
                            format!("{} has {m} deadline misses on {}", name(q), rname(r))
                        }
                        None => format!(
                            "{}: lower debt plus shortfall {}",
                            name(q),
                            short_duration(ltd + rr[r].projects[q].shortfall)
                        ),
                    });
                }
                reason = reason
                    .with("rsc", rname(r))
                    .with("idle", idle)
                    .with("shortfall_s", rr[r].shortfall)
                    .with("nidle", rr[r].nidle)
                    .with("ltd_s", self.overall_ltd(v, p))
                    .with("score_s", score);
            }
            _ => parts.push("contacted anyway (to report results)".into()),
        }
        for (r, x) in req.rsc.iter().enumerate() {
            if x.req_seconds > 0.0 || x.req_ninstances > 0.0 {
                parts.push(format!(
                    "asks for {} of {} and {} idle instances",
                    short_duration(x.req_seconds),
                    rname(r),
                    short_number(x.req_ninstances)
                ));
                let n = rname(r);
                reason = reason
                    .with(format!("{n}_req_s"), x.req_seconds)
                    .with(format!("{n}_instances"), x.req_ninstances);
            } else if self.backed_off(p, r, v.now()) {
                parts.push(format!(
                    "nothing of {}: backed off for it until {}",
                    rname(r),
                    clock(self.data[p][r].backoff_until)
                ));
            }
        }
        reason.text = crate::why::join(&parts);
        Ok(Some(reason.with("project", name(p))))
    }

    fn on_reply(&mut self, v: &View, reply: &RpcReply) -> PolicyResult<()> {
        self.ensure(v);
        if !reply.reached {
            return Ok(());
        }
        let now = v.now();
        for (r, d) in self.data[reply.project].iter_mut().enumerate() {
            let asked = reply
                .request
                .rsc
                .get(r)
                .is_some_and(|x| x.req_seconds > 0.0 || x.req_ninstances > 0.0);
            match reply.rsc_status[r] {
                _ if reply.jobs[r] > 0 => {
                    d.accrues = true;
                    d.backoff_interval = 0.0;
                    d.backoff_until = 0.0;
                }
                RscStatus::NotSupported => {
                    d.accrues = false;
                    d.backoff_interval = RSC_BACKOFF_MAX;
                    d.backoff_until = now + RSC_BACKOFF_MAX;
                }
                status if asked => {
                    // No job for R: back off R, doubling up to a day; unless the
                    // server says it supports R, stop accruing debt for it.
                    if status != RscStatus::NoWorkButSupported {
                        d.accrues = false;
                    }
                    d.backoff_interval =
                        (d.backoff_interval * 2.0).clamp(RSC_BACKOFF_MIN, RSC_BACKOFF_MAX);
                    d.backoff_until = now + d.backoff_interval;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Back-off is per resource here; the project as a whole is contactable
    /// whenever some resource is not backed off.
    fn backoff_on_empty_reply(&self, _v: &View) -> PolicyResult<bool> {
        Ok(false)
    }
}

/// The server side of the seed: jobs for a resource only when that resource
/// is asked for, until its seconds and idle instances are covered; never a
/// job for a resource the host lacks (the feeder offers none).
#[derive(Default)]
pub struct GpuSend;

impl WorkSender for GpuSend {
    fn consider(
        &mut self,
        req: &ServerRequest,
        sent: &[Candidate],
        cand: &Candidate,
    ) -> PolicyResult<Verdict> {
        let r = req.request;
        if !r.per_resource() {
            // An old client: fill the scalar request like WS1.
            return crate::ws::Ws1.consider(req, sent, cand);
        }
        let need = |rsc: usize| -> bool {
            let x = r.rsc[rsc];
            if x.req_seconds <= 0.0 && x.req_ninstances <= 0.0 {
                return false;
            }
            let mine = sent.iter().filter(|c| c.rsc == rsc);
            let secs: f64 = mine
                .clone()
                .map(|c| c.est_seconds * vcsim_blocks::server_fill::width(c))
                .sum();
            let inst: f64 = mine.map(vcsim_blocks::server_fill::width).sum();
            inst < x.req_ninstances || secs < x.req_seconds
        };
        if need(cand.rsc) {
            Ok(Verdict::Send)
        } else if (0..r.rsc.len()).any(need) {
            Ok(Verdict::Skip)
        } else {
            Ok(Verdict::Stop)
        }
    }

    /// What of the candidate's resource the reply still has to cover.
    fn explain_verdict(
        &self,
        req: &ServerRequest,
        sent: &[Candidate],
        cand: &Candidate,
        verdict: Verdict,
    ) -> PolicyResult<Option<Reason>> {
        let r = req.request;
        if !r.per_resource() {
            return crate::ws::Ws1.explain_verdict(req, sent, cand, verdict);
        }
        let rsc = req.host.rsc_name(cand.rsc);
        let x = r.rsc[cand.rsc];
        let mine = sent.iter().filter(|c| c.rsc == cand.rsc);
        let secs: f64 = mine
            .clone()
            .map(|c| c.est_seconds * vcsim_blocks::server_fill::width(c))
            .sum::<f64>()
            + 0.0;
        let inst: f64 = mine.map(vcsim_blocks::server_fill::width).sum::<f64>() + 0.0;
        let text = match verdict {
            Verdict::Send => format!(
                "sent: {rsc} is not yet covered (jobs sent: {} of {} asked, {} of {} instances)",
                short_duration(secs),
                short_duration(x.req_seconds),
                short_number(inst),
                short_number(x.req_ninstances)
            ),
            Verdict::Skip => format!(
                "skipped: {rsc} is covered or not asked for; another requested resource is not"
            ),
            Verdict::Stop => "request filled: every requested resource is covered".to_string(),
        };
        Ok(Some(
            Reason::new(text)
                .with("rsc", rsc)
                .with("sent_s", secs)
                .with("req_seconds", x.req_seconds)
                .with("sent_instances", inst)
                .with("req_instances", x.req_ninstances),
        ))
    }
}
