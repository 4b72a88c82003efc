//! CS2: the paper's deadline-aware scheduler (BOINC 2007's `schedule_cpus`
//! and `enforce_schedule`). A weighted round-robin simulation finds the
//! projects whose jobs would miss their deadlines; their jobs run
//! earliest-deadline-first; the remaining instances go by weighted
//! round-robin on the short-term debt. A running job is preempted only when
//! its time slice (one scheduling period) is over, or when a job in
//! deadline trouble needs its instance.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use vcsim_blocks::capacity::Capacity;
use vcsim_blocks::debt::ShortTermDebt;
use vcsim_blocks::key::Key;
use vcsim_blocks::rr_sim::{self, RrResult};
use vcsim_framework::explain::{clock, short_duration};
use vcsim_framework::{
    CpuScheduler, JobState, PolicyResult, Ranking, Reason, RunList, RunMode, View,
};

#[derive(Default)]
pub struct Cs2 {
    std: ShortTermDebt,
    rr: Vec<RrResult>,
    runnable: Vec<bool>,
    misses: Vec<u32>,
    anticipated: Vec<f64>,
    list: Vec<(usize, RunMode)>,
    /// Per job (view index): listed already.
    listed: Vec<bool>,
    /// Per project, its jobs (view indices, ascending).
    jobs_of: Vec<Vec<usize>>,
    /// The debt pass's heap storage, kept between calls.
    order: Vec<(Key, Reverse<usize>)>,
    /// The EDF pass's candidates, earliest deadline first, and their keys.
    edf: Vec<usize>,
    edf_keys: Vec<(f64, bool, f64, usize)>,
    /// Per project, for its running, preempted and queued jobs: how far
    /// into `jobs_of` the debt pass has looked.
    cursor: Vec<[usize; 3]>,
    /// For the reasons only: per entry of `list`, its project's anticipated
    /// short-term debt when picked; the preemptions `enforce` made:
    /// (victim, the job that took its instance, for deadline trouble).
    list_debt: Vec<f64>,
    preempts: Vec<(usize, usize, bool)>,
}

impl CpuScheduler for Cs2 {
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()> {
        let np = v.projects().len();
        let nrsc = v.host().nrsc();
        let jobs = v.jobs();
        self.rr.resize(nrsc, RrResult::default());
        self.misses.clear();
        self.misses.resize(np, 0);
        for r in 0..nrsc {
            let buffer = v.prefs().work_buf_total();
            rr_sim::count_misses(v, r, buffer, &mut self.rr[r], &mut self.misses)?;
        }
        self.runnable.clear();
        self.runnable.resize(np, false);
        self.jobs_of
            .resize_with(np.max(self.jobs_of.len()), Vec::new);
        self.jobs_of.iter_mut().for_each(Vec::clear);
        for (k, j) in jobs.iter().enumerate() {
            self.runnable[j.project] |= j.is_runnable();
            self.jobs_of[j.project].push(k);
        }
        self.std.update(v, &self.runnable);
        let rrs: f64 = (0..np)
            .filter(|&p| self.runnable[p])
            .map(|p| v.project(p).resource_share)
            .sum();
        let period = v.prefs().sched_period;
        self.anticipated.clear();
        self.anticipated.extend_from_slice(&self.std.std);
        let mut cap = Capacity::of_host(v);
        self.list.clear();
        self.list_debt.clear();
        self.listed.clear();
        self.listed.resize(jobs.len(), false);

        // EDF pass: jobs of projects with misses, earliest deadline first; a
        // project gets at most as many deadline slots as it has misses.
        // A job passed over stays so: the counts and the capacity only
        // shrink. So one walk in EDF order (ties to the earlier job) makes
        // the picks that searching for the earliest each time would.
        let mut dm = self.misses.clone();
        edf_order(
            v,
            (0..jobs.len()).filter(|&k| jobs[k].is_runnable() && dm[jobs[k].project] > 0),
            &mut self.edf_keys,
            &mut self.edf,
        );
        for &k in &self.edf {
            let p = jobs[k].project;
            if dm[p] == 0 || !cap.fits(&jobs[k]) {
                continue;
            }
            dm[p] -= 1;
            cap.take(&jobs[k]);
            self.list.push((k, RunMode::Deadline));
            self.list_debt.push(self.anticipated[p]);
            self.listed[k] = true;
            self.anticipated[p] -= v.project(p).resource_share / rrs * period;
        }
        // Debt pass: each project nominates its running job, else a preempted
        // one, else its first queued job (arrival order); the largest
        // anticipated debt wins, ties to the earlier project: a heap of the
        // candidates. Capacity only shrinks, so a project with no job that
        // fits is done.
        self.order.clear();
        self.order.extend(
            (0..np)
                .filter(|&p| self.runnable[p])
                .map(|p| (Key(self.anticipated[p]), Reverse(p))),
        );
        let mut heap = BinaryHeap::from(std::mem::take(&mut self.order));
        // A job passed over (listed, or not fitting) stays so in this call,
        // so each cursor only moves forward: linear in the jobs in all.
        self.cursor.clear();
        self.cursor.resize(np, [0; 3]);
        const STATES: [JobState; 3] = [JobState::Running, JobState::Preempted, JobState::Queued];
        while let Some((_, Reverse(p))) = heap.pop() {
            let mine = &self.jobs_of[p];
            let mut pick = None;
            for (c, state) in self.cursor[p].iter_mut().zip(STATES) {
                while let Some(&k) = mine.get(*c) {
                    if jobs[k].state == state && !self.listed[k] && cap.fits(&jobs[k]) {
                        pick = Some(k);
                        break;
                    }
                    *c += 1;
                }
                if pick.is_some() {
                    break;
                }
            }
            let Some(k) = pick else {
                continue;
            };
            cap.take(&jobs[k]);
            self.list.push((k, RunMode::RoundRobin));
            self.list_debt.push(self.anticipated[p]);
            self.listed[k] = true;
            self.anticipated[p] -= v.project(p).resource_share / rrs * period;
            heap.push((Key(self.anticipated[p]), Reverse(p)));
        }
        self.order = heap.into_vec();
        enforce(
            v,
            &self.list,
            &self.listed,
            &self.misses,
            out,
            &mut self.preempts,
        );
        Ok(())
    }

    fn explain(&self, v: &View, out: &RunList, job: u64) -> PolicyResult<Option<Reason>> {
        let Some(k) = crate::why::index_of(v, job) else {
            return Ok(None);
        };
        Ok(Some(if out.contains(job) {
            self.why_running(v, k)
        } else {
            self.why_not(v, k)
        }))
    }

    fn ranking(&self, _v: &View) -> PolicyResult<Option<Ranking>> {
        Ok(Some(Ranking {
            name: "short-term debt (s)".into(),
            values: self.std.std.clone(),
        }))
    }
}

impl Cs2 {
    /// A job in the run list: its pick (EDF or debt), or kept running.
    fn why_running(&self, v: &View, k: usize) -> Reason {
        let j = &v.jobs()[k];
        let p = j.project;
        let name = &v.project(p).name;
        let misses = self.misses.get(p).copied().unwrap_or(0);
        let Some(i) = self.list.iter().position(|x| x.0 == k) else {
            return Reason::new(format!(
                "kept running: no listed job needed its instance ({name}'s short-term debt {})",
                short_duration(self.std.std[p])
            ))
            .with("debt_s", self.std.std[p]);
        };
        if self.list[i].1 == RunMode::Deadline {
            let sim = self
                .rr
                .get(j.rsc())
                .and_then(|rr| rr.jobs.iter().find(|s| s.index == k));
            let finish = sim.map_or(f64::INFINITY, |s| s.finish);
            let missed = sim.is_some_and(|s| s.missed);
            let text = if missed && finish > j.deadline {
                format!(
                    "EDF: the round-robin simulation finishes job {} at {}, after its deadline {}",
                    j.id,
                    clock(finish),
                    clock(j.deadline)
                )
            } else if missed {
                let cd = j.deadline - v.prefs().work_buf_min - v.prefs().sched_period;
                let by = v.now() + rr_sim::CPU_PESSIMISM_FACTOR * (cd - v.now());
                format!(
                    "EDF: the round-robin simulation finishes job {} at {}, a deadline miss (later than {}: 90% of the time to its deadline {} less the buffer minimum and one scheduling period)",
                    j.id,
                    clock(finish),
                    clock(by),
                    clock(j.deadline)
                )
            } else {
                format!(
                    "EDF: {name} has {misses} deadline misses in the round-robin simulation; job {} has the earliest deadline {} of its jobs not yet chosen (simulated finish {})",
                    j.id,
                    clock(j.deadline),
                    clock(finish)
                )
            };
            return Reason::new(text)
                .with("mode", "deadline")
                .with("finish_s", finish)
                .with("deadline_s", j.deadline)
                .with("missed", missed)
                .with("misses", misses as f64);
        }
        let debt = self.list_debt[i];
        let mut text = String::new();
        if j.state == JobState::Running && j.mode == RunMode::Deadline {
            if misses == 0 {
                text.push_str(&format!(
                    "{name} has no deadline miss left in the round-robin simulation; "
                ));
            } else {
                text.push_str(&format!(
                    "{name}'s {misses} deadline slots went to jobs with earlier deadlines; "
                ));
            }
        }
        text.push_str(&format!(
            "highest short-term debt among projects with runnable jobs: {name}'s {}",
            short_duration(debt)
        ));
        if debt != self.std.std[p] {
            text.push_str(&format!(
                " (anticipated: its debt {} less the instances it already got)",
                short_duration(self.std.std[p])
            ));
        }
        Reason::new(text)
            .with("mode", "round-robin")
            .with("debt_s", debt)
            .with("project_debt_s", self.std.std[p])
            .with("project", name.as_str())
    }

    /// A running job preempted: not listed, and a listed job took its
    /// instance (its time slice over, or that job's project in deadline
    /// trouble).
    fn why_not(&self, v: &View, k: usize) -> Reason {
        let jobs = v.jobs();
        let j = &jobs[k];
        let p = j.project;
        let name = &v.project(p).name;
        let misses = self.misses.get(p).copied().unwrap_or(0);
        let debt = self.anticipated.get(p).copied().unwrap_or(0.0);
        let lowest = self
            .list
            .iter()
            .zip(&self.list_debt)
            .filter(|(x, _)| x.1 == RunMode::RoundRobin)
            .map(|(_, d)| *d)
            .fold(f64::INFINITY, f64::min);
        let mut parts = Vec::new();
        if misses > 0 {
            parts.push(format!(
                "{name}'s {misses} deadline slots went to jobs with earlier deadlines"
            ));
        }
        let mut r = Reason::new("");
        if lowest.is_finite() && debt < lowest {
            parts.push(format!(
                "not chosen: {name}'s short-term debt {} is below those chosen (lowest {})",
                short_duration(debt),
                short_duration(lowest)
            ));
            r = r.with("lowest_chosen_debt_s", lowest);
        } else {
            parts.push(format!(
                "not chosen: no instance left that fits it ({name}'s short-term debt {})",
                short_duration(debt)
            ));
        }
        if let Some(&(_, by, trouble)) = self.preempts.iter().find(|x| x.0 == k) {
            let b = &jobs[by];
            let bn = &v.project(b.project).name;
            if trouble {
                parts.push(format!(
                    "job {} of {bn} needed its instance: its project has a deadline miss in the round-robin simulation",
                    b.id
                ));
            } else {
                parts.push(format!(
                    "its time slice is over (it ran {}, a scheduling period is {}), so job {} of {bn} took its instance",
                    short_duration(v.now() - j.last_started),
                    short_duration(v.prefs().sched_period),
                    b.id
                ));
            }
            r = r
                .with("preempted_by", b.id)
                .with("deadline_trouble", trouble);
        }
        r.text = crate::why::join(&parts);
        r.with("debt_s", debt)
            .with("misses", misses as f64)
            .with("project", name.as_str())
    }
}

/// The jobs `candidates` (view indices) into `out` in EDF order: earliest
/// deadline first; on a tie a started job before an unstarted one, then the
/// shorter remaining estimate (an estimate that fails counts as infinite);
/// then the earlier job. The estimates are asked once each, and only of
/// jobs that tie (a queue of 100,000 late jobs with a few deadlines asked
/// two per comparison: a third of the run). `keys` is scratch.
fn edf_order(
    v: &View,
    candidates: impl Iterator<Item = usize>,
    keys: &mut Vec<(f64, bool, f64, usize)>,
    out: &mut Vec<usize>,
) {
    let jobs = v.jobs();
    let by = |a: f64, b: f64| a.partial_cmp(&b).unwrap_or(std::cmp::Ordering::Equal);
    keys.clear();
    keys.extend(candidates.map(|k| (jobs[k].deadline, !jobs[k].has_started(), 0.0, k)));
    // Stable sorts: ties keep the list's order.
    keys.sort_by(|a, b| by(a.0, b.0).then(a.1.cmp(&b.1)));
    let mut i = 0;
    while i < keys.len() {
        let tie = |k: &(f64, bool, f64, usize)| by(k.0, keys[i].0).is_eq() && k.1 == keys[i].1;
        let n = keys[i..].iter().take_while(|k| tie(k)).count();
        if n > 1 {
            let run = &mut keys[i..i + n];
            for k in run.iter_mut() {
                k.2 = v.remaining_seconds(&jobs[k.3]).unwrap_or(f64::INFINITY);
            }
            run.sort_by(|a, b| by(a.2, b.2));
        }
        i += n;
    }
    out.clear();
    out.extend(keys.iter().map(|k| k.3));
}

/// BOINC 2007's `enforce_schedule`: start listed jobs where instances are
/// free; otherwise preempt a running job that is not listed, but only if the
/// starting job's project is in deadline trouble, or the running job has had
/// its full time slice. Unlisted running jobs that nobody needs keep running.
fn enforce(
    v: &View,
    list: &[(usize, RunMode)],
    listed: &[bool],
    misses: &[u32],
    out: &mut RunList,
    preempts: &mut Vec<(usize, usize, bool)>,
) {
    preempts.clear();
    let jobs = v.jobs();
    let now = v.now();
    let period = v.prefs().sched_period;
    let mut dm = misses.to_vec();
    let mut cap = Capacity::of_host(v);
    // Listed jobs that are running stay, in their new mode.
    for &(k, mode) in list {
        if jobs[k].state == JobState::Running {
            cap.take(&jobs[k]);
            out.push(jobs[k].id, mode);
        }
    }
    // Unlisted running jobs, in the order they would be preempted: projects in
    // deadline trouble first (earliest deadline), then the shortest current
    // run (earliest deadline on ties) — the heap order of 2007's client.
    let mut victims: Vec<usize> = (0..jobs.len())
        .filter(|&k| jobs[k].state == JobState::Running && !listed[k])
        .collect();
    for &k in &victims {
        cap.take(&jobs[k]);
    }
    victims.sort_by(|&a, &b| {
        let (ja, jb) = (&jobs[a], &jobs[b]);
        let (ta, tb) = (misses[ja.project] > 0, misses[jb.project] > 0);
        tb.cmp(&ta)
            .then_with(|| {
                if ta {
                    ja.deadline.total_cmp(&jb.deadline)
                } else {
                    (now - ja.last_started).total_cmp(&(now - jb.last_started))
                }
            })
            .then_with(|| ja.deadline.total_cmp(&jb.deadline))
            .then_with(|| ja.id.cmp(&jb.id))
    });
    let mut preempted = vec![false; victims.len()];
    for &(k, mode) in list {
        let j = &jobs[k];
        if j.state == JobState::Running {
            continue;
        }
        // Free instances by preempting victims from the front while allowed;
        // if the job still does not fit, the victims are spared.
        let mut taken: Vec<(usize, bool)> = Vec::new();
        let mut dm_used = 0;
        for vi in 0..victims.len() {
            if cap.fits(j) {
                break;
            }
            if preempted[vi] {
                continue;
            }
            let front = &jobs[victims[vi]];
            let helps = match j.gpu {
                Some((r, n)) if cap.free[r] + 1e-9 < n => front.gpu.is_some_and(|(fr, _)| fr == r),
                _ => front.cpus > 0.0,
            };
            if !helps {
                continue;
            }
            let trouble = dm[j.project] > dm_used;
            let slice_over = now - front.last_started >= period;
            if !(trouble || slice_over) {
                break;
            }
            if trouble && !slice_over {
                dm_used += 1;
            }
            preempted[vi] = true;
            cap.give(front);
            taken.push((vi, trouble && !slice_over));
        }
        if cap.fits(j) {
            dm[j.project] -= dm_used;
            cap.take(j);
            out.push(j.id, mode);
            for (vi, trouble) in taken {
                preempts.push((victims[vi], k, trouble));
            }
        } else {
            for (vi, _) in taken {
                preempted[vi] = false;
                cap.take(&jobs[victims[vi]]);
            }
        }
    }
    for (i, &k) in victims.iter().enumerate() {
        if !preempted[i] {
            out.push(jobs[k].id, jobs[k].mode);
        }
    }
}
