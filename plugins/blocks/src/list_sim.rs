//! Today's client's round-robin simulation (BOINC's `RR_SIM::simulate`,
//! `rr_sim.cpp`): despite the name, list scheduling per resource with no
//! share weighting. Each job runs at its full speed (scaled by the host's
//! expected availability); at every simulated completion the jobs to run
//! are picked again, GPUs first, each project's jobs in arrival order, the
//! projects in a fixed order ([`ProjectOrder`]). It measures, per resource,
//! the idle instance-seconds within the buffer (shortfall), the end of the
//! last interval in which every instance is busy (saturated time), the
//! instances idle now, and the busy time of jobs that miss their deadlines
//! (the `estimated_delay` a request carries); per project, its deadline
//! misses by resource and what its max_concurrent caps leave unused.
//! `cs3` and `wf3` share it.

use vcsim_framework::{Job, PolicyResult, Rsc, View, CPU};

use crate::rec::RecPriority;

/// BOINC's floor of the minimum buffer (`WF_EST_FETCH_TIME`), seconds.
pub const MIN_BUFFER_FLOOR: f64 = 180.0;

/// Today's client's minimum buffer: `work_buf_min`, at least 180 s.
pub fn buf_min(v: &View) -> f64 {
    v.prefs().work_buf_min.max(MIN_BUFFER_FLOOR)
}

/// Today's client's whole buffer: minimum plus additional, at least 1 s.
pub fn buf_total(v: &View) -> f64 {
    (buf_min(v) + v.prefs().work_buf_additional).max(1.0)
}

/// The order in which projects' jobs are picked for a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProjectOrder {
    /// As BOINC's client is built: a fixed order, the last project first
    /// (its heap compares project addresses, and the emulator allocates
    /// projects in order).
    #[default]
    AsBuilt,
    /// As its comment intends: the highest REC priority first, each job
    /// picked lowering its project's.
    Intended,
}

/// Whether every sum of the jobs' CPUs is exact: each a multiple of 2^-20,
/// all together below 2^32 (52 bits). Then a pick's sum, made job by job,
/// equals the last one's less the job that finished plus those added, to
/// the bit, which [`ListSim::refill`] needs.
fn exact_sums(jobs: &[Job], pending: &[Vec<Pending>]) -> bool {
    let mut total = 0.0;
    for x in pending.iter().flatten() {
        let w = jobs[x.index].cpus;
        if !(w >= 0.0 && (w * 1_048_576.0).fract() == 0.0) {
            return false;
        }
        total += w;
    }
    total < 4_294_967_296.0
}

/// Busy time of jobs that miss their deadlines, per instance
/// (BOINC's `BUSY_TIME_ESTIMATOR`).
#[derive(Debug, Clone, Default)]
struct BusyTime {
    busy: Vec<f64>,
}

impl BusyTime {
    fn reset(&mut self, ninstances: f64) {
        self.busy.clear();
        self.busy.resize(ninstances.floor().max(0.0) as usize, 0.0);
    }
    /// `dur` seconds on `n` instances (none if `n` < 1), the least busy first.
    fn add(&mut self, dur: f64, n: f64) {
        if n < 1.0 {
            return;
        }
        for _ in 0..(n.floor() as usize).min(self.busy.len()) {
            let i = (0..self.busy.len())
                .min_by(|&a, &b| self.busy[a].total_cmp(&self.busy[b]))
                .expect("some instance");
            self.busy[i] += dur;
        }
    }
    fn time(&self) -> f64 {
        self.busy.iter().copied().reduce(f64::min).unwrap_or(0.0)
    }
}

#[derive(Debug, Clone, Default)]
struct Pending {
    index: usize,
    left: f64,
    done: bool,
}

/// The result of one simulation, all resources.
#[derive(Debug, Clone, Default)]
pub struct ListSim {
    nr: usize,
    /// Per resource: idle instance-seconds within [now, now + buffer].
    pub shortfall: Vec<f64>,
    /// Per resource: seconds from now to the end of the last interval in
    /// which every instance is busy (0 if never).
    pub saturated_time: Vec<f64>,
    /// Per resource: instances no picked job holds now.
    pub nidle_now: Vec<f64>,
    /// Per resource: the least busy instance's busy time with jobs that
    /// miss their deadlines (a request's `estimated_delay`).
    pub busy_time: Vec<f64>,
    /// Per project: it has a max_concurrent cap (its own or an app's).
    pub has_mc: Vec<bool>,
    /// Per project: runnable jobs.
    pub n_runnable: Vec<u32>,
    /// Per job (index in `View::jobs()`): the simulation finishes it after
    /// its computation deadline.
    pub misses: Vec<bool>,
    /// Per job (index in `View::jobs()`): the estimator's remaining time at
    /// the start (0 for a job that cannot run).
    pub remaining: Vec<f64>,
    /// Per (project, resource) at `p * nrsc + r`: deadline misses.
    deadlines_missed: Vec<u32>,
    /// Per (project, resource): instances its runnable jobs would hold together.
    nused_total: Vec<f64>,
    /// Per (project, resource): seconds of its queued work.
    queue_est: Vec<f64>,
    /// Per (project, resource): instance-seconds within the buffer that its
    /// caps would let it use and its jobs leave unused.
    mc_shortfall: Vec<f64>,
    /// Per (project, resource): seconds from now to the last pick at which
    /// its jobs reached one of its caps (minus infinity if never).
    last_mc_limit_reltime: Vec<f64>,
    // Scratch, kept between calls.
    pending: Vec<Vec<Pending>>,
    busy: Vec<BusyTime>,
    used: Vec<f64>,
    used_p: Vec<f64>,
    mc_max: Vec<f64>,
    active: Vec<(usize, usize)>,
    /// The remaining time of each job in `active`, in its order: one
    /// contiguous pass per completion finds the next and charges the rest.
    left: Vec<f64>,
    /// Per (project, resource) list: its first job not done (every job
    /// before it is done: a job is picked only among the first not done,
    /// so done jobs gather at the head), and how many are not done. With
    /// them a pick costs the jobs it looks at, not the whole list (a queue
    /// of 100,000 jobs made each simulation quadratic).
    head: Vec<usize>,
    not_done: Vec<usize>,
    /// In a pick: where each list's walk is, and the jobs it picked.
    cursor: Vec<usize>,
    picked: Vec<usize>,
    app_at: Vec<usize>,
    /// Per resource: the speed its jobs run at (its expected availability).
    speed: Vec<f64>,
    projects: Vec<usize>,
    app_count: Vec<u32>,
    proj_count: Vec<u32>,
    prio: RecPriority,
    /// For [`ListSim::refill`]: the next job after the picked ones, as
    /// (project + 1, place in its list); 0 projects left when none.
    frontier: (usize, usize),
}

impl ListSim {
    pub fn deadlines_missed(&self, p: usize, r: Rsc) -> u32 {
        self.deadlines_missed[p * self.nr + r]
    }
    pub fn nused_total(&self, p: usize, r: Rsc) -> f64 {
        self.nused_total[p * self.nr + r]
    }
    pub fn queue_est(&self, p: usize, r: Rsc) -> f64 {
        self.queue_est[p * self.nr + r]
    }
    pub fn mc_shortfall(&self, p: usize, r: Rsc) -> f64 {
        self.mc_shortfall[p * self.nr + r]
    }
    pub fn last_mc_limit_reltime(&self, p: usize, r: Rsc) -> f64 {
        self.last_mc_limit_reltime[p * self.nr + r]
    }
    /// Deadline misses of `p`, all resources.
    pub fn project_misses(&self, p: usize) -> u32 {
        (0..self.nr).map(|r| self.deadlines_missed(p, r)).sum()
    }

    /// Runs the simulation of the view's state.
    pub fn simulate(&mut self, v: &View, order: ProjectOrder) -> PolicyResult<()> {
        self.run(v, order, None).map(|_| ())
    }

    /// Whether every resource is saturated for at least `min` seconds from
    /// now (`saturated_time[r] >= min` for all `r`), simulating only as far
    /// as it takes to know: a saturated time only grows as the simulation
    /// goes on, so once every resource's reaches `min` the answer is final.
    /// When it answers true, the other results are partial: only a caller
    /// that then stops may use it (`wf3`'s `request`, which asks nothing of
    /// a host saturated past the minimum buffer: the simulation of a long
    /// queue on a GPU host, at every step, stopped after a few jobs rather
    /// than all of them). When it answers false, the simulation is whole.
    pub fn saturated_through(
        &mut self,
        v: &View,
        order: ProjectOrder,
        min: f64,
    ) -> PolicyResult<bool> {
        self.run(v, order, Some(min))
    }

    /// [`ListSim::simulate`], stopping early (and answering true) once every
    /// resource's saturated time reaches `stop`, if given.
    fn run(&mut self, v: &View, order: ProjectOrder, stop: Option<f64>) -> PolicyResult<bool> {
        let h = v.host();
        let (np, nr) = (v.projects().len(), h.nrsc());
        let jobs = v.jobs();
        let now = v.now();
        let min = buf_min(v);
        let buf_end = now + buf_total(v);
        // Each resource's jobs run at its expected availability: the CPU's,
        // or the fraction of time GPU computing is allowed (BOINC's
        // `overall_cpu_frac` and `overall_gpu_frac`).
        let mut speed = std::mem::take(&mut self.speed);
        speed.clear();
        speed.extend((0..nr).map(|r| v.on_fraction_of(r)));
        // (Most hosts run every job at one speed: no lookup per job then.)
        let one_speed = speed.iter().all(|&s| s == speed[0]).then_some(speed[0]);
        self.nr = nr;
        let pr_size = np * nr;
        for x in [
            &mut self.nused_total,
            &mut self.queue_est,
            &mut self.mc_shortfall,
            &mut self.used_p,
        ] {
            x.clear();
            x.resize(pr_size, 0.0);
        }
        self.last_mc_limit_reltime.clear();
        self.last_mc_limit_reltime
            .resize(pr_size, f64::NEG_INFINITY);
        self.deadlines_missed.clear();
        self.deadlines_missed.resize(pr_size, 0);
        for x in [
            &mut self.shortfall,
            &mut self.saturated_time,
            &mut self.nidle_now,
            &mut self.busy_time,
            &mut self.used,
        ] {
            x.clear();
            x.resize(nr, 0.0);
        }
        self.n_runnable.clear();
        self.n_runnable.resize(np, 0);
        self.misses.clear();
        self.misses.resize(jobs.len(), false);
        self.remaining.clear();
        self.remaining.resize(jobs.len(), 0.0);
        self.busy.resize_with(nr, BusyTime::default);
        for r in 0..nr {
            self.busy[r].reset(h.ninstances(r));
        }
        self.pending
            .resize_with(pr_size.max(self.pending.len()), Vec::new);
        self.pending.iter_mut().for_each(Vec::clear);
        // Caps: per project, and per app at `app_at[p] + app`.
        let mut app_at = std::mem::take(&mut self.app_at);
        app_at.clear();
        let mut napps = 0;
        self.has_mc.clear();
        for p in v.projects() {
            app_at.push(napps);
            napps += p.apps.len();
            self.has_mc
                .push(p.max_concurrent > 0 || p.apps.iter().any(|a| a.max_concurrent > 0));
        }
        self.mc_max.clear();
        for pr in v.projects() {
            for r in 0..nr {
                let width = |a: &vcsim_framework::model::AppInfo| {
                    if r == CPU {
                        a.cpus
                    } else {
                        a.gpu.filter(|g| g.0 == r).map_or(0.0, |g| g.1)
                    }
                };
                let mine = pr.apps.iter().filter(|a| a.rsc() == r && a.runs_on_host());
                let apps: f64 = mine
                    .clone()
                    .map(|a| {
                        if a.max_concurrent > 0 {
                            a.max_concurrent as f64 * width(a)
                        } else {
                            h.ninstances(r)
                        }
                    })
                    .sum();
                let widest = mine.map(width).fold(0.0, f64::max);
                let mut x = apps.min(h.ninstances(r));
                if pr.max_concurrent > 0 {
                    x = x.min(pr.max_concurrent as f64 * widest);
                }
                self.mc_max.push(x);
            }
        }
        for (k, j) in jobs.iter().enumerate() {
            if !j.is_runnable() {
                continue;
            }
            let left = v.remaining_seconds(j)?;
            self.remaining[k] = left;
            let (p, r) = (j.project, j.rsc());
            self.n_runnable[p] += 1;
            self.nused_total[p * nr + CPU] += j.cpus;
            if r != CPU {
                self.nused_total[p * nr + r] += j.instances(r);
            }
            self.queue_est[p * nr + r] += left / speed[r];
            self.pending[p * nr + r].push(Pending {
                index: k,
                left,
                done: false,
            });
        }
        self.head.clear();
        self.head.resize(pr_size, 0);
        self.not_done.clear();
        self.not_done
            .extend(self.pending[..pr_size].iter().map(Vec::len));
        self.app_count.resize(napps, 0);
        self.proj_count.resize(np, 0);
        let any_mc = self.has_mc.iter().any(|&x| x);
        let incremental = order == ProjectOrder::AsBuilt
            && nr == 1
            && !any_mc
            && exact_sums(jobs, &self.pending[..np]);
        self.active.clear();
        self.left.clear();
        self.used[CPU] = 0.0;
        self.frontier = (np, 0);
        let mut finished = None;
        let mut t = now;
        let mut first = true;
        loop {
            if incremental {
                if let Some(i) = finished.take() {
                    let (q, n) = self.active.remove(i);
                    self.left.remove(i);
                    self.used[CPU] -= jobs[self.pending[q][n].index].cpus;
                }
                self.refill(v);
            } else {
                self.pick(v, order, &app_at, t - now);
                self.left.clear();
                let pending = &self.pending;
                self.left
                    .extend(self.active.iter().map(|&(q, n)| pending[q][n].left));
            }
            if first {
                for r in 0..nr {
                    self.nidle_now[r] = (h.ninstances(r) - self.used[r]).max(0.0);
                }
                first = false;
            }
            if self.active.is_empty() {
                break;
            }
            // Each job runs at its resource's speed (`q % nr` is its resource).
            let (mut best, mut dt) = (0, f64::INFINITY);
            for (i, &left) in self.left.iter().enumerate() {
                let d = left / one_speed.unwrap_or_else(|| speed[self.active[i].0 % nr]);
                if d < dt {
                    (best, dt) = (i, d);
                }
            }
            let (q, n) = self.active[best];
            finished = Some(best);
            self.pending[q][n].done = true;
            self.not_done[q] -= 1;
            let list = &self.pending[q];
            let mut first = self.head[q];
            while first < list.len() && list[first].done {
                first += 1;
            }
            self.head[q] = first;
            let k = self.pending[q][n].index;
            let j = &jobs[k];
            if t + dt > j.deadline - min {
                self.miss(v, j, k, speed[j.rsc()])?;
            }
            if let Some(s) = one_speed {
                let ran = s * dt;
                for left in &mut self.left {
                    *left = (*left - ran).max(0.0);
                }
            } else {
                for (left, &(q, _)) in self.left.iter_mut().zip(&self.active) {
                    *left = (*left - speed[q % nr] * dt).max(0.0);
                }
            }
            if !incremental {
                // The next pick starts over from the jobs' lists.
                for (i, &(q, n)) in self.active.iter().enumerate() {
                    self.pending[q][n].left = self.left[i];
                }
            }
            for r in 0..nr {
                self.stats(h.ninstances(r), r, now, t, dt, buf_end);
            }
            if stop.is_some_and(|min| self.saturated_time.iter().all(|&s| s >= min)) {
                self.app_at = app_at;
                self.speed = speed;
                return Ok(true);
            }
            let overlap = (t + dt).min(buf_end) - t;
            if overlap > 0.0 && any_mc {
                for i in 0..pr_size {
                    if self.has_mc[i / nr] {
                        self.mc_shortfall[i] +=
                            (self.mc_max[i] - self.used_p[i]).max(0.0) * overlap;
                    }
                }
            }
            t += dt;
        }
        if t < buf_end {
            // Nothing left to run: an idle tail.
            for r in 0..nr {
                self.used[r] = 0.0;
                self.stats(h.ninstances(r), r, now, t, buf_end - t, buf_end);
            }
            for i in 0..pr_size {
                if self.has_mc[i / nr] {
                    self.mc_shortfall[i] += self.mc_max[i] * (buf_end - t);
                }
            }
        }
        for r in 0..nr {
            self.busy_time[r] = self.busy[r].time();
        }
        self.app_at = app_at;
        self.speed = speed;
        Ok(false)
    }

    /// BOINC's `update_stats`.
    fn stats(&mut self, n: f64, r: Rsc, now: f64, t: f64, dt: f64, buf_end: f64) {
        let idle = n - self.used[r];
        if idle > 1e-6 && t < buf_end {
            self.shortfall[r] += idle * dt.min(buf_end - t);
        }
        if idle < 1e-6 {
            self.saturated_time[r] = t + dt - now;
        }
    }

    /// BOINC's `handle_missed_deadline`: the job's remaining time keeps
    /// its instances busy.
    fn miss(&mut self, v: &View, j: &Job, k: usize, speed: f64) -> PolicyResult<()> {
        self.misses[k] = true;
        self.deadlines_missed[j.project * self.nr + j.rsc()] += 1;
        let dur = v.remaining_seconds(j)? / speed;
        self.busy[CPU].add(dur, j.cpus);
        if let Some((g, n)) = j.gpu {
            self.busy[g].add(dur, n);
        }
        Ok(())
    }

    /// [`ListSim::pick`] where it is a prefix: CPUs only, the built order,
    /// no caps. The jobs not done, projects last first and each one's in
    /// arrival order, are picked until their CPUs reach the host's: the
    /// shortest such prefix. A completion removes one picked job, which
    /// leaves the prefix's other jobs picked (each shorter prefix was below
    /// the host's CPUs), so the next pick only extends it: a completion
    /// costs the jobs it adds, where `pick` walked all those picked (a
    /// 256-CPU host made each simulation quadratic). Called with `active`
    /// and `used` as the last pick left them, less the job that finished.
    fn refill(&mut self, v: &View) {
        let jobs = v.jobs();
        let count = v.host().ninstances(CPU);
        let (mut p1, mut n) = self.frontier;
        while p1 > 0 && (self.active.is_empty() || self.used[CPU] < count) {
            let list = &self.pending[p1 - 1];
            if n >= list.len() {
                (p1, n) = (p1 - 1, 0);
                continue;
            }
            self.active.push((p1 - 1, n));
            self.left.push(list[n].left);
            self.used[CPU] += jobs[list[n].index].cpus;
            n += 1;
        }
        self.frontier = (p1, n);
    }

    /// BOINC's `pick_jobs_to_run`: GPUs first, then the CPU; per resource,
    /// projects in `order`, each one's jobs in arrival order until the
    /// resource is full, the project reaches a cap, or it has no more.
    fn pick(&mut self, v: &View, order: ProjectOrder, app_at: &[usize], reltime: f64) {
        let h = v.host();
        let jobs = v.jobs();
        let (np, nr) = (v.projects().len(), self.nr);
        self.active.clear();
        self.app_count.iter_mut().for_each(|x| *x = 0);
        self.proj_count.iter_mut().for_each(|x| *x = 0);
        self.used_p.iter_mut().for_each(|x| *x = 0.0);
        self.cursor.clear();
        self.cursor.extend_from_slice(&self.head);
        self.picked.clear();
        self.picked.resize(np * nr, 0);
        self.used[CPU] = 0.0;
        let mut projects = std::mem::take(&mut self.projects);
        for r in (0..nr).rev() {
            if r != CPU {
                self.used[r] = 0.0;
            }
            projects.clear();
            projects.extend((0..np).filter(|&p| self.not_done[p * nr + r] > 0));
            if order == ProjectOrder::Intended {
                self.prio.init(v, |p| self.n_runnable[p] > 0);
            }
            let count = h.ninstances(r);
            'resource: while !projects.is_empty() {
                let at = match order {
                    ProjectOrder::AsBuilt => projects.len() - 1,
                    ProjectOrder::Intended => (0..projects.len())
                        .max_by(|&a, &b| {
                            self.prio.prio[projects[a]]
                                .total_cmp(&self.prio.prio[projects[b]])
                                .then(projects[b].cmp(&projects[a]))
                        })
                        .expect("non-empty"),
                };
                let p = projects[at];
                let q = p * nr + r;
                let mut drop = true;
                let mut at_limit = false;
                // Its next job not done, in arrival order.
                let list = &self.pending[q];
                let mut c = self.cursor[q];
                while c < list.len() && list[c].done {
                    c += 1;
                }
                self.cursor[q] = c + 1;
                if c < list.len() {
                    let j = &jobs[list[c].index];
                    let pr = v.project(p);
                    // Intended: a cap reached before this job (the
                    // project's, by its jobs on another resource: GPUs are
                    // picked first) keeps it out, as the scheduler keeps it
                    // from running. As built, BOINC tests the caps only
                    // after adding a job, so it adds one the scheduler
                    // will not run (and a CPU can look busy while idle).
                    let app_cap = pr.apps[j.app].max_concurrent;
                    if order == ProjectOrder::Intended
                        && self.has_mc[p]
                        && ((app_cap > 0 && self.app_count[app_at[p] + j.app] >= app_cap)
                            || (pr.max_concurrent > 0 && self.proj_count[p] >= pr.max_concurrent))
                    {
                        self.last_mc_limit_reltime[q] = reltime;
                        projects.remove(at);
                        continue;
                    }
                    let n = c;
                    self.picked[q] += 1;
                    self.active.push((q, n));
                    self.used[CPU] += j.cpus;
                    self.used_p[p * nr + CPU] += j.cpus;
                    if let Some((g, u)) = j.gpu {
                        self.used[g] += u;
                        self.used_p[p * nr + g] += u;
                    }
                    if order == ProjectOrder::Intended {
                        self.prio.bump(v, j);
                    }
                    let a = app_at[p] + j.app;
                    self.app_count[a] += 1;
                    self.proj_count[p] += 1;
                    if (app_cap > 0 && self.app_count[a] >= app_cap)
                        || (pr.max_concurrent > 0 && self.proj_count[p] >= pr.max_concurrent)
                    {
                        at_limit = true;
                        self.last_mc_limit_reltime[q] = reltime;
                    }
                    if r != CPU {
                        if self.used[r] >= count {
                            break 'resource;
                        }
                        if self.used_p[q] >= count {
                            projects.remove(at);
                            continue;
                        }
                    } else if self.used[CPU] >= count {
                        break 'resource;
                    }
                    // More of its jobs wait: not all those not done are
                    // picked (the walk passed no other one not done).
                    drop = at_limit || self.picked[q] == self.not_done[q];
                }
                if drop {
                    projects.remove(at);
                }
            }
        }
        self.projects = projects;
    }
}
