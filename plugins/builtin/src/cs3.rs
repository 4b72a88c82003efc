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

use vcsim_blocks::list_sim::{ListSim, ProjectOrder};
use vcsim_blocks::rec::RecPriority;
use vcsim_framework::policy::admission::Admission;
use vcsim_framework::{CpuScheduler, Job, JobState, PolicyResult, RunList, RunMode, View, CPU};

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
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Index in `View::jobs()`.
    k: usize,
    edf: bool,
    seqno: usize,
    in_slice: bool,
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
                let Some(k) = self.edf_pick(v, g, &wacky)? else {
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
            let Some(k) = self.edf_pick(v, CPU, &wacky)? else {
                break;
            };
            self.selected[k] = true;
            if !res.mc.caps_admit(&jobs[k]) {
                continue;
            }
            self.reserve(v, &mut res, k, true);
        }
        while !stop_cpu(&res) {
            let Some(k) = self.best_cpu_job(v) else { break };
            self.selected[k] = true;
            if !res.mc.caps_admit(&jobs[k]) {
                continue;
            }
            self.reserve(v, &mut res, k, false);
        }
        self.enforce(v, out);
        Ok(())
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
        if edf {
            self.miss_left[j.project * v.host().nrsc() + j.rsc()] -= 1;
        }
        self.prio.bump(v, j);
        self.list.push(Entry {
            k,
            edf,
            seqno: self.list.len(),
            in_slice: false,
        });
    }

    /// BOINC's `earliest_deadline_result`: among the unselected jobs of
    /// resource `r` whose project has misses left (or a wacky DCF), the
    /// earliest deadline; on a tie a started job, then the least remaining.
    fn edf_pick(&self, v: &View, r: usize, wacky: &[bool]) -> PolicyResult<Option<usize>> {
        let nr = v.host().nrsc();
        let jobs = v.jobs();
        let mut best: Option<(usize, f64)> = None;
        for (k, j) in jobs.iter().enumerate() {
            if self.selected[k] || !j.is_runnable() || j.rsc() != r {
                continue;
            }
            if self.miss_left[j.project * nr + r] == 0 && !wacky[j.project] {
                continue;
            }
            let better = match best {
                None => true,
                Some((b, b_rem)) => {
                    let jb = &jobs[b];
                    if j.deadline != jb.deadline {
                        j.deadline < jb.deadline
                    } else if j.has_started() != jb.has_started() {
                        j.has_started()
                    } else {
                        v.remaining_seconds(j)? < b_rem
                    }
                }
            };
            if better {
                best = Some((k, v.remaining_seconds(j)?));
            }
        }
        Ok(best.map(|(k, _)| k))
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
    fn best_cpu_job(&self, v: &View) -> Option<usize> {
        let jobs = v.jobs();
        let rank = |j: &Job| match j.state {
            JobState::Running => 0,
            JobState::Preempted => 1,
            _ => 2,
        };
        let mut cand: Vec<Option<usize>> = vec![None; v.projects().len()];
        for (k, j) in jobs.iter().enumerate() {
            if self.selected[k] || !j.is_runnable() || j.rsc() != CPU {
                continue;
            }
            let c = &mut cand[j.project];
            if c.is_none_or(|b| rank(j) < rank(&jobs[b])) {
                *c = Some(k);
            }
        }
        let mut best: Option<usize> = None;
        for (p, c) in cand.iter().enumerate() {
            if c.is_some() && best.is_none_or(|b| self.prio.prio[p] > self.prio.prio[b]) {
                best = Some(p);
            }
        }
        best.and_then(|p| cand[p])
    }

    /// BOINC's `enforce_run_list`.
    fn enforce(&mut self, v: &View, out: &mut RunList) {
        let jobs = v.jobs();
        let now = v.now();
        let period = v.prefs().sched_period;
        let n = self.list.len();
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
