//! WF3: today's BOINC client's work fetch (`WORK_FETCH::choose_project`,
//! `set_request`, `piggyback_work_request`, `handle_reply`, client 8).
//!
//! - **Hysteresis.** The list simulation ([`ListSim`]) gives, per resource,
//!   the saturated time (until when every instance stays busy) and the
//!   shortfall (idle instance-seconds within the buffer). Work is fetched
//!   when some resource is saturated for less than the minimum buffer, and
//!   then enough to fill the whole buffer (minimum plus additional); other
//!   resources not saturated through the whole buffer ride along when the
//!   project is the best that can supply them.
//! - **Which project.** The highest REC priority, lowered by the project's
//!   queued work, among those that may be asked and are not backed off for
//!   the resource; it is asked for the whole shortfall, and for the idle
//!   instances or its share of the instances less what its jobs hold.
//! - **Back-off** per (project, resource): a request for a resource that
//!   brings no job of it backs the resource off for 600 s, doubling to a
//!   day, times a random factor in [0.5, 1.5); a job of it ends the back-off.
//!   Requests carry `estimated_delay`, the busy time of jobs that miss.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use vcsim_blocks::key::Key;
use vcsim_blocks::list_sim::{buf_min, buf_total, ListSim, ProjectOrder, MIN_BUFFER_FLOOR};
use vcsim_blocks::rec::RecPriority;
use vcsim_framework::explain::{clock, short_duration, short_number};
use vcsim_framework::rng::{stream, SimRng};
use vcsim_framework::{
    ClientRules, PolicyResult, Reason, RpcReply, RscRequest, Time, View, WorkFetcher, WorkRequest,
    CPU,
};

/// The first per-resource back-off (BOINC's `WF_MIN_BACKOFF_INTERVAL`).
pub const MIN_BACKOFF: f64 = 600.0;
/// The longest (`WF_MAX_BACKOFF_INTERVAL`).
pub const MAX_BACKOFF: f64 = 86400.0;
/// A project with more runnable jobs is not asked (`WF_MAX_RUNNABLE_JOBS`).
pub const MAX_RUNNABLE_JOBS: u32 = 1000;

/// Per (project, resource).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RscBackoff {
    pub interval: f64,
    pub until: f64,
    /// The last request for the resource brought none of it.
    pub no_work: bool,
}

/// Why a project is not asked at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectReason {
    /// Its RPC back-off or requested delay has not passed.
    MinRpcTime,
    /// It has more than 1,000 runnable jobs.
    TooManyRunnable,
}

/// Why a project is not asked for a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RscReason {
    /// It has no app for the resource.
    NoRscApps,
    /// A zero-share project while the resource is busy.
    ZeroShare,
    /// Its jobs fill one of its max_concurrent caps past the buffer.
    MaxConcurrent,
    /// Backed off for the resource.
    BackedOff,
}

#[derive(Default)]
pub struct Wf3 {
    order: ProjectOrder,
    /// `backoff[p][r]`.
    pub backoff: Vec<Vec<RscBackoff>>,
    rng: Option<SimRng>,
    work: RefCell<Work>,
}

/// What one decision computes (kept between calls for its storage).
#[derive(Default)]
struct Work {
    sim: ListSim,
    prio: RecPriority,
    /// Projects by decreasing priority.
    sorted: Vec<usize>,
    fetchable_share: Vec<f64>,
}

impl Wf3 {
    pub fn new(order: ProjectOrder) -> Wf3 {
        Wf3 {
            order,
            ..Wf3::default()
        }
    }

    fn rsc_backoff(&self, p: usize, r: usize) -> RscBackoff {
        self.backoff
            .get(p)
            .and_then(|x| x.get(r))
            .copied()
            .unwrap_or_default()
    }

    pub fn project_reason(v: &View, sim: &ListSim, p: usize) -> Option<ProjectReason> {
        if sim.n_runnable[p] > MAX_RUNNABLE_JOBS {
            Some(ProjectReason::TooManyRunnable)
        } else if !v.contactable(p) {
            Some(ProjectReason::MinRpcTime)
        } else {
            None
        }
    }

    pub fn rsc_reason(&self, v: &View, sim: &ListSim, p: usize, r: usize) -> Option<RscReason> {
        let pr = v.project(p);
        if !pr.apps.iter().any(|a| a.rsc() == r && a.runs_on_host()) {
            return Some(RscReason::NoRscApps);
        }
        // BOINC compares with the raw minimum buffer here, not its 180 s floor.
        if pr.resource_share == 0.0
            && sim.saturated_time[r] > v.prefs().work_buf_min.min(MIN_BUFFER_FLOOR)
        {
            return Some(RscReason::ZeroShare);
        }
        if sim.last_mc_limit_reltime(p, r) > buf_total(v) {
            return Some(RscReason::MaxConcurrent);
        }
        if self.rsc_backoff(p, r).until > v.now() {
            return Some(RscReason::BackedOff);
        }
        None
    }

    /// BOINC's `WORK_FETCH::setup`: the simulation, the fetchable shares,
    /// and the projects sorted by priority less their queued work.
    fn setup(&self, v: &View, w: &mut Work, simulate: bool) -> PolicyResult<()> {
        if simulate {
            w.sim.simulate(v, self.order)?;
        }
        let (np, nr) = (v.projects().len(), v.host().nrsc());
        let sim = &w.sim;
        w.fetchable_share.clear();
        for r in 0..nr {
            let ok = |p: usize| {
                Self::project_reason(v, sim, p).is_none() && self.rsc_reason(v, sim, p, r).is_none()
            };
            // A project that may not be asked for `r` (backed off for it,
            // say) has no fetchable share of it (BOINC's `compute_shares`
            // leaves it 0): riding along in another request, it asks for
            // the idle instances only. First each one's share if it may be
            // asked (0 if not), then divided by their sum.
            let from = w.fetchable_share.len();
            let mut total = 0.0;
            for p in 0..np {
                let s = if ok(p) {
                    v.project(p).resource_share
                } else {
                    0.0
                };
                total += s;
                w.fetchable_share.push(s);
            }
            for s in &mut w.fetchable_share[from..] {
                *s = if *s == 0.0 {
                    0.0
                } else if total > 0.0 {
                    *s / total
                } else {
                    1.0
                };
            }
        }
        w.prio.init(v, |p| v.contactable(p));
        let denom = buf_total(v) * w.prio.total_peak();
        if denom > 0.0 {
            for (k, j) in v.jobs().iter().enumerate() {
                if j.is_runnable() {
                    let flops = w.sim.remaining[k] * j.speed;
                    w.prio.lower(j.project, flops / denom);
                }
            }
        }
        w.sorted.clear();
        w.sorted.extend(0..np);
        let prio = &w.prio.prio;
        w.sorted
            .sort_by(|&a, &b| prio[b].total_cmp(&prio[a]).then(a.cmp(&b)));
        Ok(())
    }

    /// BOINC's `RSC_WORK_FETCH::set_request` for `p` and resource `r`.
    fn set_request(
        &self,
        v: &View,
        w: &Work,
        p: usize,
        r: usize,
        out: &mut RscRequest,
    ) -> PolicyResult<()> {
        let sim = &w.sim;
        let pr = v.project(p);
        let n = v.host().ninstances(r);
        if pr.resource_share == 0.0 {
            if sim.nidle_now[r] > 0.0 {
                out.req_ninstances = 1.0;
                out.req_seconds = 1.0;
            }
        } else {
            let mc = sim.has_mc[p];
            let sf = if mc {
                sim.mc_shortfall(p, r)
            } else {
                sim.shortfall[r]
            };
            let dcf = v.correction(p)?;
            let wacky = !(0.02..=80.0).contains(&dcf);
            out.req_seconds = if sf > 0.0 {
                if wacky {
                    1.0
                } else {
                    sf
                }
            } else {
                0.0
            };
            out.req_ninstances = if mc {
                0.0
            } else {
                let share = w.fetchable_share[r * v.projects().len() + p];
                sim.nidle_now[r].max((n * share).min(n) - sim.nused_total(p, r))
            };
            if out.req_ninstances > 0.0 && out.req_seconds == 0.0 {
                out.req_seconds = 1.0;
            }
        }
        out.estimated_delay = if out.req_seconds > 0.0 {
            sim.busy_time[r]
        } else {
            0.0
        };
        Ok(())
    }

    /// BOINC's `choose_project`.
    fn choose(&self, v: &View, w: &Work) -> PolicyResult<Option<WorkRequest>> {
        let nr = v.host().nrsc();
        let sim = &w.sim;
        let (min, total) = (buf_min(v), buf_total(v));
        let mut found: Vec<Option<usize>> = vec![None; nr];
        for &p in &w.sorted {
            if Self::project_reason(v, sim, p).is_some() {
                continue;
            }
            // The resource that needs work, GPUs first.
            let mut k = None;
            for r in (0..nr).rev() {
                if self.rsc_reason(v, sim, p, r).is_some() {
                    continue;
                }
                found[r].get_or_insert(p);
                if sim.saturated_time[r] < min && (!sim.has_mc[p] || sim.mc_shortfall(p, r) > 0.0) {
                    k = Some(r);
                    break;
                }
            }
            let Some(k) = k else { continue };
            let mut rsc = vec![RscRequest::default(); nr];
            for r in 0..nr {
                if r != k {
                    if found[r].is_some_and(|q| q != p) || sim.saturated_time[r] >= total {
                        continue;
                    }
                    // Backed-off resources ride along.
                    match self.rsc_reason(v, sim, p, r) {
                        None | Some(RscReason::BackedOff) => {}
                        Some(_) => continue,
                    }
                }
                self.set_request(v, w, p, r, &mut rsc[r])?;
            }
            if rsc.iter().any(|x| x.req_seconds > 0.0) {
                return Ok(Some(WorkRequest {
                    project: p,
                    work_req_seconds: rsc[CPU].req_seconds,
                    rsc,
                }));
            }
        }
        Ok(None)
    }
}

impl Wf3 {
    /// A quiet stretch on the hosts where today's simulation is plain list
    /// scheduling of equal jobs: no GPU work, no caps, the projects in the
    /// built order, every runnable job as wide. There the CPUs are busy
    /// while at least `k` jobs are left (`k` the jobs that fill them), so
    /// the saturated time is the completion of the job that leaves fewer,
    /// which only grows with the jobs' remaining times (greedy list
    /// scheduling in a fixed order). Simulating with each job's least
    /// remaining time over the stretch (the estimator's bound) bounds every
    /// step's saturated time from below: past the minimum buffer, no
    /// resource needs work and `request` answers nothing at any step.
    fn quiet(&self, v: &View, limit: Time) -> PolicyResult<Option<Time>> {
        if self.order != ProjectOrder::AsBuilt || v.any_max_concurrent() {
            return Ok(None);
        }
        let projects = v.projects();
        let supplies = |r: usize| {
            projects
                .iter()
                .any(|p| p.apps.iter().any(|a| a.rsc() == r && a.runs_on_host()))
        };
        if (1..v.host().nrsc()).any(supplies) {
            return Ok(None);
        }
        if !supplies(CPU) {
            // Nobody can be asked for anything.
            return Ok(Some(limit.max(v.now())));
        }
        let jobs = v.jobs();
        let mut width = None;
        // The runnable jobs, the last project's first, each project's in
        // arrival order (a stable sort: a pass per project was quadratic).
        let mut order: Vec<usize> = (0..jobs.len()).filter(|&k| jobs[k].is_runnable()).collect();
        if projects.len() > 1 {
            order.sort_by_key(|&k| Reverse(jobs[k].project));
        }
        for &k in &order {
            let j = &jobs[k];
            if j.gpu.is_some() || width.is_some_and(|w| w != j.cpus) {
                return Ok(None);
            }
            width = Some(j.cpus);
        }
        let Some(w) = width else { return Ok(None) };
        let n = v.host().ncpus;
        // The jobs that fill the CPUs, added up as the simulation does;
        // refused where rounding could blur saturation.
        if w <= 0.0 {
            return Ok(None);
        }
        let (mut used, mut slots) = (0.0, 0usize);
        while used < n {
            if n - used < 1e-6 {
                return Ok(None);
            }
            used += w;
            slots += 1;
        }
        if order.len() < slots {
            return Ok(None);
        }
        let min = buf_min(v);
        let frac = v.on_fraction();
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        let mut free: BinaryHeap<Reverse<Key>> = BinaryHeap::with_capacity(slots);
        let mut done: Vec<f64> = Vec::with_capacity(order.len());
        vcsim_blocks::quiet::longest(v, limit, |t| {
            if !vcsim_blocks::quiet::remaining_bounds(v, t, &mut lo, &mut hi)? {
                return Ok(false);
            }
            free.clear();
            free.extend((0..slots).map(|_| Reverse(Key(0.0))));
            done.clear();
            for &k in &order {
                // The slot that frees first takes the next job (a heap: a
                // scan of the slots per job was quadratic on big hosts;
                // which of equal slots takes it changes no time).
                let Reverse(Key(at)) = free.pop().expect("slots");
                let end = at + lo[k] / frac;
                free.push(Reverse(Key(end)));
                done.push(end);
            }
            done.sort_by(f64::total_cmp);
            let saturated = done[order.len() - slots];
            Ok(saturated >= min + 1e-6 * (min + saturated + 1.0))
        })
    }
}

impl WorkFetcher for Wf3 {
    fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>> {
        let mut w = self.work.borrow_mut();
        // No resource is saturated for less than the minimum buffer: no
        // project is asked (most steps end here, as soon as the simulation
        // has gone far enough to know).
        let min = buf_min(v);
        if w.sim.saturated_through(v, self.order, min)? {
            return Ok(None);
        }
        self.setup(v, &mut w, false)?;
        self.choose(v, &w)
    }

    /// BOINC's `piggyback_work_request`: when `project` is contacted anyway,
    /// ask it for the resources not saturated through the buffer, unless a
    /// project of strictly higher priority could supply them.
    fn piggyback(&self, v: &View, project: usize) -> PolicyResult<Option<WorkRequest>> {
        let mut w = self.work.borrow_mut();
        self.setup(v, &mut w, true)?;
        let w = &*w;
        let sim = &w.sim;
        match Self::project_reason(v, sim, project) {
            None | Some(ProjectReason::MinRpcTime) => {}
            Some(_) => return Ok(None),
        }
        let nr = v.host().nrsc();
        let total = buf_total(v);
        let mut rsc = vec![RscRequest::default(); nr];
        for r in 0..nr {
            match self.rsc_reason(v, sim, project, r) {
                None | Some(RscReason::BackedOff) => {}
                Some(_) => continue,
            }
            if sim.saturated_time[r] >= total {
                continue;
            }
            let better = w.sorted.iter().take_while(|&&q| q != project).any(|&q| {
                w.prio.prio[q] > w.prio.prio[project]
                    && Self::project_reason(v, sim, q).is_none()
                    && self.rsc_reason(v, sim, q, r).is_none()
                    && !self.rsc_backoff(q, r).no_work
            });
            if !better {
                self.set_request(v, w, project, r, &mut rsc[r])?;
            }
        }
        if rsc.iter().any(|x| x.req_seconds > 0.0) {
            Ok(Some(WorkRequest {
                project,
                work_req_seconds: rsc[CPU].req_seconds,
                rsc,
            }))
        } else {
            Ok(None)
        }
    }

    /// BOINC's `handle_reply`: per resource asked for and not sent, back
    /// off; a job of a resource ends its back-off.
    fn on_reply(&mut self, v: &View, reply: &RpcReply) -> PolicyResult<()> {
        let (np, nr) = (v.projects().len(), v.host().nrsc());
        if self.backoff.len() != np {
            self.backoff = vec![vec![RscBackoff::default(); nr]; np];
        }
        if !reply.reached {
            return Ok(());
        }
        let now = v.now();
        let rng = self
            .rng
            .get_or_insert_with(|| stream(v.seed(), "wf3-backoff", 0));
        for r in 0..nr {
            let b = &mut self.backoff[reply.project][r];
            let asked = reply
                .request
                .rsc
                .get(r)
                .is_some_and(|x| x.req_seconds > 0.0);
            if reply.jobs.get(r).is_some_and(|&n| n > 0) {
                *b = RscBackoff::default();
            } else if asked {
                b.no_work = true;
                // An unset back-off (0) is past: BOINC's clock starts at an
                // epoch far above 0 (its emulator's too), vcsim's at 0.
                if b.until == 0.0 || b.until < now {
                    b.interval = if b.interval > 0.0 {
                        (2.0 * b.interval).min(MAX_BACKOFF)
                    } else {
                        MIN_BACKOFF
                    };
                    let x: f64 = rand::Rng::gen_range(rng, 0.5..1.5);
                    b.until = now + x * b.interval;
                }
            }
        }
        Ok(())
    }

    /// Back-off is per resource.
    /// Today's client: reports within an hour (or at 64 waiting), one RPC a
    /// step (the emulator's poll).
    fn client_rules(&self) -> ClientRules {
        ClientRules::TODAY
    }

    fn backoff_on_empty_reply(&self, _v: &View) -> PolicyResult<bool> {
        Ok(false)
    }

    fn quiet_until(&self, v: &View, limit: Time) -> PolicyResult<Option<Time>> {
        self.quiet(v, limit)
    }

    /// The resource saturated for less than the minimum buffer, the
    /// project's REC priority less its queued work, why the projects of
    /// higher priority were passed over, and the request's fields.
    fn explain_request(&self, v: &View, req: &WorkRequest) -> PolicyResult<Option<Reason>> {
        let mut w = self.work.borrow_mut();
        self.setup(v, &mut w, true)?;
        let w = &*w;
        let sim = &w.sim;
        let nr = v.host().nrsc();
        let (min, total) = (buf_min(v), buf_total(v));
        let p = req.project;
        let name = |q: usize| v.project(q).name.as_str();
        let rname = |r: usize| v.host().rsc_name(r).to_string();
        let chosen = self.choose(v, w)?;
        let mut parts = Vec::new();
        let mut reason = Reason::new("");
        if chosen.as_ref() == Some(req) {
            let k = (0..nr).rev().find(|&r| {
                self.rsc_reason(v, sim, p, r).is_none()
                    && sim.saturated_time[r] < min
                    && (!sim.has_mc[p] || sim.mc_shortfall(p, r) > 0.0)
            });
            if let Some(k) = k {
                parts.push(format!(
                    "{} saturated for {}, less than the minimum buffer {} (shortfall {})",
                    rname(k),
                    short_duration(sim.saturated_time[k]),
                    short_duration(min),
                    short_duration(sim.shortfall[k])
                ));
                reason = reason
                    .with("rsc", rname(k))
                    .with("saturated_s", sim.saturated_time[k])
                    .with("min_buffer_s", min)
                    .with("shortfall_s", sim.shortfall[k]);
            }
            parts.push(format!(
                "{} has the highest REC priority less queued work ({}) among projects that may be asked for it",
                name(p),
                short_number(w.prio.prio[p] + 0.0)
            ));
            for &q in w.sorted.iter().take_while(|&&q| q != p) {
                let why = match Self::project_reason(v, sim, q) {
                    Some(ProjectReason::MinRpcTime) => format!(
                        "{} backed off until {}",
                        name(q),
                        clock(v.project(q).rpc.min_rpc_time)
                    ),
                    Some(ProjectReason::TooManyRunnable) => {
                        format!(
                            "{} has more than {MAX_RUNNABLE_JOBS} runnable jobs",
                            name(q)
                        )
                    }
                    None => {
                        let mut why = Vec::new();
                        for r in (0..nr).rev() {
                            let x = match self.rsc_reason(v, sim, q, r) {
                                Some(RscReason::NoRscApps) => "no app".to_string(),
                                Some(RscReason::ZeroShare) => "zero share".to_string(),
                                Some(RscReason::MaxConcurrent) => {
                                    "max_concurrent reached".to_string()
                                }
                                Some(RscReason::BackedOff) => format!(
                                    "backed off until {}",
                                    clock(self.rsc_backoff(q, r).until)
                                ),
                                None if sim.saturated_time[r] >= min => {
                                    "saturated long enough".to_string()
                                }
                                None if sim.has_mc[q] && sim.mc_shortfall(q, r) <= 0.0 => {
                                    "no max_concurrent shortfall".to_string()
                                }
                                None => {
                                    "nothing to ask (no shortfall, no idle instance)".to_string()
                                }
                            };
                            why.push(format!("{} {x}", rname(r)));
                        }
                        format!("{}: {}", name(q), why.join(", "))
                    }
                };
                parts.push(why);
            }
        } else {
            parts.push(format!(
                "contacted anyway: asks for the resources not saturated through the whole buffer ({}) that no project of higher priority could supply",
                short_duration(total)
            ));
        }
        for (r, x) in req.rsc.iter().enumerate() {
            if x.req_seconds > 0.0 || x.req_ninstances > 0.0 {
                parts.push(format!(
                    "{}: {} and {} instances, estimated delay {}",
                    rname(r),
                    short_duration(x.req_seconds),
                    short_number(x.req_ninstances),
                    short_duration(x.estimated_delay)
                ));
                let n = rname(r);
                reason = reason
                    .with(format!("{n}_req_s"), x.req_seconds)
                    .with(format!("{n}_instances"), x.req_ninstances)
                    .with(format!("{n}_delay_s"), x.estimated_delay);
            }
        }
        reason.text = crate::why::join(&parts);
        Ok(Some(
            reason
                .with("project", name(p))
                .with("priority", w.prio.prio[p]),
        ))
    }
}
