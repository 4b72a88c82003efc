//! CS3: today's BOINC client's CPU and GPU scheduling (`schedule_cpus`:
//! `make_run_list`, then `enforce_run_list`, client 8).
//!
//! - **Candidates.** The list simulation ([`ListSim`]) counts each
//!   project's deadline misses per resource. GPU jobs first, per GPU type:
//!   earliest deadline first for projects with misses left, then the
//!   highest REC priority (started jobs first, then arrival). Then CPU jobs:
//!   the same deadline pass, then each time the highest-priority project's
//!   job (its running one, else a preempted one, else its oldest queued
//!   one). Every job chosen raises its project's temporary REC, so projects
//!   interleave. The list stops at twice the CPUs (and every GPU instance
//!   reserved).
//! - **Enforcement.** Running jobs still inside their time slice (one
//!   scheduling period from their start) join the list; it is sorted
//!   deadline jobs first, then GPU jobs, jobs inside their slice,
//!   multi-threaded jobs, and the list's order; jobs are admitted in that
//!   order by BOINC's rules (CPUs over-committed by one job, GPUs never,
//!   max_concurrent). Everything else is preempted.

use std::cmp::Ordering;
use vcsim_blocks::list_sim::{ListSim, ProjectOrder};
use vcsim_blocks::rec::RecPriority;
use vcsim_framework::explain::{clock, short_duration, short_number};
use vcsim_framework::policy::admission::Admission;
use vcsim_framework::policy::admission::Refusal;
use vcsim_framework::{
    CpuScheduler, Job, JobState, PolicyResult, Ranking, Reason, RunList, RunMode, View, CPU,
};

/// DCF at or above which all of a project's jobs are deadline candidates.
const WACKY_DCF_EDF: f64 = 90.0;

#[derive(Default)]
pub struct Cs3 {
    order: ProjectOrder,
    sim: ListSim,
    prio: RecPriority,
    selected: Vec<bool>,
    miss_left: Vec<u32>,
    list: Vec<Entry>,
    /// For the reasons only: the priorities before any job was chosen; the
    /// jobs chosen that their max_concurrent caps kept out; the entries
    /// chosen (the rest joined for their time slice).
    prio0: Vec<f64>,
    capped: Vec<usize>,
    nchosen: usize,
    /// The candidates, listed once per call in the order the picks prefer,
    /// each walked on from the last pick: a scan of all jobs per pick was
    /// quadratic in the CPUs (the list holds twice as many jobs).
    edf: Candidates,
    cpu: Candidates,
}

/// Jobs listed per key (a resource, a project) in a pick's order of
/// preference, and where each list's walk is. A job passed over is never
/// wanted again in the call: it was selected, or its project ran out of
/// deadline misses, and neither is undone while the list is built.
#[derive(Default)]
struct Candidates {
    lists: Vec<Vec<usize>>,
    next: Vec<usize>,
}

impl Candidates {
    fn reset(&mut self, n: usize) {
        self.lists.resize_with(n.max(self.lists.len()), Vec::new);
        self.lists.truncate(n);
        self.lists.iter_mut().for_each(Vec::clear);
        self.next.clear();
        self.next.resize(n, 0);
    }

    /// The first job of list `i` from its walk on that `wanted` accepts.
    fn first(&mut self, i: usize, wanted: impl Fn(usize) -> bool) -> Option<usize> {
        let list = &self.lists[i];
        let mut c = self.next[i];
        while c < list.len() && !wanted(list[c]) {
            c += 1;
        }
        self.next[i] = c;
        list.get(c).copied()
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Index in `View::jobs()`.
    k: usize,
    edf: bool,
    seqno: usize,
    in_slice: bool,
    /// Its project's priority when chosen (NaN: EDF, or joined for its slice).
    prio: f64,
}

impl Cs3 {
    /// CS3 with its simulation's project order.
    pub fn new(order: ProjectOrder) -> Cs3 {
        Cs3 {
            order,
            ..Cs3::default()
        }
    }
}

/// The list being built: reservations and max_concurrent counts.
struct Reserved {
    st: f64,
    mt: f64,
    gpu: Vec<f64>,
    mc: Admission,
}

impl CpuScheduler for Cs3 {
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()> {
        let h = v.host();
        let jobs = v.jobs();
        let (np, nr) = (v.projects().len(), h.nrsc());
        self.sim.simulate(v, self.order)?;
        let mut runnable = vec![false; np];
        for j in jobs.iter().filter(|j| j.is_runnable()) {
            runnable[j.project] = true;
        }
        self.prio.init(v, |p| runnable[p]);
        self.prio0.clear();
        self.prio0.extend_from_slice(&self.prio.prio);
        self.capped.clear();
        self.miss_left.clear();
        for p in 0..np {
            for r in 0..nr {
                self.miss_left.push(self.sim.deadlines_missed(p, r));
            }
        }
        let mut wacky = vec![false; np];
        for p in 0..np {
            wacky[p] = v.correction(p)? >= WACKY_DCF_EDF;
        }
        self.selected.clear();
        self.selected.resize(jobs.len(), false);
        self.list_candidates(v, &wacky);
        self.list.clear();
        let mut res = Reserved {
            st: 0.0,
            mt: 0.0,
            gpu: vec![0.0; nr],
            mc: Admission::of_host(v),
        };
        let ncpus = h.ncpus;
        let stop_cpu = |res: &Reserved| res.st >= 2.0 * ncpus || res.mt >= 2.0 * ncpus;
        let stop_gpu = |res: &Reserved, g: usize| res.gpu[g] >= h.ninstances(g) - 1e-9;
        let can_gpu = |res: &Reserved, j: &Job| {
            j.gpu
                .is_none_or(|(g, n)| res.gpu[g] + n <= h.ninstances(g) + 1e-9)
        };

        for g in 1..nr {
            // Deadline pass, then priority pass.
            while !stop_gpu(&res, g) {
                let Some(k) = self.edf_pick(v, g, &wacky) else {
                    break;
                };
                self.selected[k] = true;
                if !can_gpu(&res, &jobs[k]) {
                    continue;
                }
                self.reserve(v, &mut res, k, true);
            }
            while !stop_gpu(&res, g) {
                let Some(k) = self.first_coproc(v, g) else {
                    break;
                };
                self.selected[k] = true;
                if !can_gpu(&res, &jobs[k]) {
                    continue;
                }
                self.reserve(v, &mut res, k, false);
            }
        }
        while !stop_cpu(&res) {
            let Some(k) = self.edf_pick(v, CPU, &wacky) else {
                break;
            };
            self.selected[k] = true;
            if !res.mc.caps_admit(&jobs[k]) {
                self.capped.push(k);
                continue;
            }
            self.reserve(v, &mut res, k, true);
        }
        while !stop_cpu(&res) {
            let Some(k) = self.best_cpu_job(v) else { break };
            self.selected[k] = true;
            if !res.mc.caps_admit(&jobs[k]) {
                self.capped.push(k);
                continue;
            }
            self.reserve(v, &mut res, k, false);
        }
        self.enforce(v, out);
        Ok(())
    }

    fn explain(&self, v: &View, out: &RunList, job: u64) -> PolicyResult<Option<Reason>> {
        let Some(k) = crate::why::index_of(v, job) else {
            return Ok(None);
        };
        let j = &v.jobs()[k];
        let p = j.project;
        let name = v.project(p).name.as_str();
        let rsc = v.host().rsc_name(j.rsc()).to_string();
        let misses = self.sim.deadlines_missed(p, j.rsc());
        let entry = self.list.iter().position(|e| e.k == k);
        let period = v.prefs().sched_period;
        if out.contains(job) {
            let Some(i) = entry else {
                return Ok(None);
            };
            let e = self.list[i];
            if e.edf {
                let wacky = v.correction(p)? >= WACKY_DCF_EDF;
                let why = if wacky && misses == 0 {
                    format!("{name}'s DCF is at least {WACKY_DCF_EDF}")
                } else {
                    format!(
                        "{name} has {misses} deadline misses on {rsc} in the client's simulation"
                    )
                };
                let mut text = format!(
                    "EDF: {why}; job {} has the earliest deadline {} among their jobs not yet chosen",
                    j.id,
                    clock(j.deadline)
                );
                if self.sim.misses[k] {
                    text.push_str(
                        " (the simulation finishes it after its deadline less the buffer minimum)",
                    );
                }
                return Ok(Some(
                    Reason::new(text)
                        .with("mode", "deadline")
                        .with("misses", misses as f64)
                        .with("deadline_s", j.deadline)
                        .with("missed", self.sim.misses[k]),
                ));
            }
            if e.seqno >= self.nchosen {
                let ran = v.now() - j.last_started;
                return Ok(Some(
                    Reason::new(format!(
                        "still inside its time slice: it started {} ago, less than the scheduling period {}",
                        short_duration(ran),
                        short_duration(period)
                    ))
                    .with("in_slice", true)
                    .with("ran_s", ran),
                ));
            }
            let mut text = String::new();
            if j.state == JobState::Running && j.mode == RunMode::Deadline {
                text.push_str(&format!(
                    "{name} has no deadline miss left on {rsc} for it; "
                ));
            }
            if j.gpu.is_some() {
                text.push_str("GPU jobs first: ");
            }
            text.push_str(&format!(
                "highest REC priority among projects with runnable {rsc} jobs: {name}'s {}",
                short_number(e.prio + 0.0)
            ));
            return Ok(Some(
                Reason::new(text)
                    .with("mode", "round-robin")
                    .with("priority", e.prio)
                    .with("project", name),
            ));
        }
        // Preempted.
        let mut parts = Vec::new();
        let mut r = Reason::new("");
        if j.state == JobState::Running && v.now() - j.last_started >= period {
            let ran = v.now() - j.last_started;
            parts.push(format!(
                "its time slice is over (it ran {}, a scheduling period is {})",
                short_duration(ran),
                short_duration(period)
            ));
            r = r.with("ran_s", ran);
        }
        if let Some(i) = entry {
            // In the list but not admitted: replay the admission.
            let mut adm = Admission::of_host(v);
            for e in &self.list[..i] {
                let x = &v.jobs()[e.k];
                if adm.fits(x) {
                    adm.take(x);
                }
            }
            let why = match adm.refusal(j) {
                Some(Refusal::CpuFull) => "the CPUs are full",
                Some(Refusal::GpuFull) => "its GPU is full",
                Some(Refusal::AppMaxConcurrent) => "max_concurrent reached (its app's)",
                Some(Refusal::ProjectMaxConcurrent) => "max_concurrent reached (its project's)",
                None => "no room",
            };
            parts.push(format!(
                "not admitted by enforce_run_list: {why} with the jobs ahead of it (deadline jobs, GPU jobs, jobs inside their slice, multi-threaded jobs first)"
            ));
            r = r.with("refused", why);
        } else if self.capped.contains(&k) {
            parts.push(format!(
                "max_concurrent reached: {name}'s caps admit no more of its jobs"
            ));
            r = r.with("refused", "max_concurrent");
        } else {
            let lowest = self
                .list
                .iter()
                .filter(|e| !e.prio.is_nan() && v.jobs()[e.k].rsc() == j.rsc())
                .map(|e| e.prio)
                .fold(f64::INFINITY, f64::min);
            let prio = self.prio.prio[p];
            if lowest.is_finite() && prio < lowest {
                parts.push(format!(
                    "not chosen: {name}'s REC priority {} is below those chosen (lowest {})",
                    short_number(prio),
                    short_number(lowest)
                ));
                r = r.with("lowest_chosen_priority", lowest);
            } else {
                parts.push(format!(
                    "not chosen: the list was full ({} CPUs' worth, every GPU instance) before its turn",
                    short_number(2.0 * v.host().ncpus)
                ));
            }
            r = r.with("priority", prio);
            if misses > 0 {
                parts.push(format!(
                    "{name}'s {misses} deadline misses on {rsc} went to jobs with earlier deadlines"
                ));
            }
        }
        r.text = crate::why::join(&parts);
        Ok(Some(r.with("project", name)))
    }

    fn ranking(&self, _v: &View) -> PolicyResult<Option<Ranking>> {
        Ok(Some(Ranking {
            name: "REC priority".into(),
            values: self.prio0.clone(),
        }))
    }
}

impl Cs3 {
    fn reserve(&mut self, v: &View, res: &mut Reserved, k: usize, edf: bool) {
        let j = &v.jobs()[k];
        match j.gpu {
            Some((g, n)) => res.gpu[g] += n,
            None => {
                if j.cpus > 1.0 {
                    res.mt += j.cpus;
                } else {
                    res.st += j.cpus;
                }
                res.mc.count_caps(j);
            }
        }
        let prio = if edf {
            self.miss_left[j.project * v.host().nrsc() + j.rsc()] -= 1;
            f64::NAN
        } else {
            self.prio.prio[j.project]
        };
        self.prio.bump(v, j);
        self.list.push(Entry {
            k,
            edf,
            seqno: self.list.len(),
            in_slice: false,
            prio,
        });
    }

    /// Lists the candidates of [`Cs3::edf_pick`] (per resource, the
    /// runnable jobs of projects with misses or a wacky DCF) and of
    /// [`Cs3::best_cpu_job`] (per project, its runnable CPU jobs).
    fn list_candidates(&mut self, v: &View, wacky: &[bool]) {
        let jobs = v.jobs();
        let (np, nr) = (v.projects().len(), v.host().nrsc());
        self.edf.reset(nr);
        self.cpu.reset(np);
        for (k, j) in jobs.iter().enumerate() {
            if !j.is_runnable() {
                continue;
            }
            let (p, r) = (j.project, j.rsc());
            if self.miss_left[p * nr + r] > 0 || wacky[p] {
                self.edf.lists[r].push(k);
            }
        }
        // Earliest deadline; on a tie a started job, then the least
        // remaining time (the simulation's, which asked the estimator of
        // the same view); then the first listed (a stable sort).
        let rem = &self.sim.remaining;
        for list in &mut self.edf.lists {
            list.sort_by(|&a, &b| {
                let (ja, jb) = (&jobs[a], &jobs[b]);
                let key = |x: f64, y: f64| x.partial_cmp(&y).unwrap_or(Ordering::Equal);
                key(ja.deadline, jb.deadline)
                    .then(jb.has_started().cmp(&ja.has_started()))
                    .then(key(rem[a], rem[b]))
            });
        }
        // Running, then preempted, then queued jobs, each in arrival order.
        for s in [JobState::Running, JobState::Preempted, JobState::Queued] {
            for (k, j) in jobs.iter().enumerate() {
                if j.state == s && j.rsc() == CPU {
                    self.cpu.lists[j.project].push(k);
                }
            }
        }
    }

    /// BOINC's `earliest_deadline_result`: among the unselected jobs of
    /// resource `r` whose project has misses left (or a wacky DCF), the
    /// earliest deadline; on a tie a started job, then the least remaining.
    fn edf_pick(&mut self, v: &View, r: usize, wacky: &[bool]) -> Option<usize> {
        let nr = v.host().nrsc();
        let jobs = v.jobs();
        let (selected, miss_left) = (&self.selected, &self.miss_left);
        self.edf.first(r, |k| {
            let p = jobs[k].project;
            !selected[k] && (miss_left[p * nr + r] > 0 || wacky[p])
        })
    }

    /// BOINC's `first_coproc_result`: the highest-priority project's job of
    /// GPU type `g`; started jobs first, then arrival.
    fn first_coproc(&self, v: &View, g: usize) -> Option<usize> {
        let jobs = v.jobs();
        let mut best: Option<usize> = None;
        for (k, j) in jobs.iter().enumerate() {
            if self.selected[k] || !j.is_runnable() || j.rsc() != g {
                continue;
            }
            let better = best.is_none_or(|b| {
                let jb = &jobs[b];
                let (pa, pb) = (self.prio.prio[j.project], self.prio.prio[jb.project]);
                if pa != pb {
                    pa > pb
                } else {
                    j.has_started() && !jb.has_started()
                }
            });
            if better {
                best = Some(k);
            }
        }
        best
    }

    /// BOINC's `best_cpu_job`: each project's candidate is its running job,
    /// else a preempted one, else its oldest queued one; the candidate of
    /// the highest-priority project (ties: the first project).
    fn best_cpu_job(&mut self, v: &View) -> Option<usize> {
        let selected = &self.selected;
        let mut best: Option<(usize, usize)> = None;
        for p in 0..v.projects().len() {
            let Some(k) = self.cpu.first(p, |k| !selected[k]) else {
                continue;
            };
            if best.is_none_or(|(b, _)| self.prio.prio[p] > self.prio.prio[b]) {
                best = Some((p, k));
            }
        }
        best.map(|(_, k)| k)
    }

    /// BOINC's `enforce_run_list`.
    fn enforce(&mut self, v: &View, out: &mut RunList) {
        let jobs = v.jobs();
        let now = v.now();
        let period = v.prefs().sched_period;
        let n = self.list.len();
        self.nchosen = n;
        let in_slice = |j: &Job| j.state == JobState::Running && now - j.last_started < period;
        for e in &mut self.list {
            e.in_slice = in_slice(&jobs[e.k]);
        }
        // Jobs in the list: chosen and reserved (a chosen job that did not
        // fit is not in it).
        self.selected.iter_mut().for_each(|x| *x = false);
        for e in &self.list {
            self.selected[e.k] = true;
        }
        for (k, j) in jobs.iter().enumerate() {
            if in_slice(j) && !self.selected[k] {
                self.list.push(Entry {
                    k,
                    edf: false,
                    seqno: n,
                    in_slice: true,
                    prio: f64::NAN,
                });
            }
        }
        self.list.sort_by(|a, b| {
            let (ja, jb) = (&jobs[a.k], &jobs[b.k]);
            b.edf
                .cmp(&a.edf)
                .then(jb.gpu.is_some().cmp(&ja.gpu.is_some()))
                .then(b.in_slice.cmp(&a.in_slice))
                .then_with(|| {
                    if ja.gpu.is_none() && jb.gpu.is_none() {
                        jb.cpus.total_cmp(&ja.cpus)
                    } else {
                        std::cmp::Ordering::Equal
                    }
                })
                .then(a.seqno.cmp(&b.seqno))
                .then(a.k.cmp(&b.k))
        });
        let mut adm = Admission::of_host(v);
        for e in &self.list {
            let j = &jobs[e.k];
            if adm.fits(j) {
                adm.take(j);
                let mode = if e.edf {
                    RunMode::Deadline
                } else {
                    RunMode::RoundRobin
                };
                out.push(j.id, mode);
            }
        }
    }
}
