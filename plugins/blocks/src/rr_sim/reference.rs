//! BOINC 2007's round-robin simulation as its client writes it: every
//! active job moved at every event, every rate reset when a project runs
//! out of jobs. Slow (jobs x projects per run) and plain, it is the oracle
//! the fast simulation is checked against (`tests` below).

use super::{
    above_noise, can_use, instances, job_width, ProjectResult, Rates, RrResult, SimJob,
    CPU_PESSIMISM_FACTOR,
};
use vcsim_framework::{JobState, Rsc, View};

#[derive(Default)]
struct Scratch {
    act: Vec<usize>,
    active: Vec<bool>,
    active_width: Vec<f64>,
    live: Vec<bool>,
    rate: Vec<f64>,
    next_waiting: Vec<usize>,
    nrrs: f64,
    share: Vec<f64>,
    active_jobs: Vec<u32>,
    active_app: Vec<Vec<u32>>,
}

pub(super) fn run(
    v: &View,
    rsc: Rsc,
    buffer: f64,
    remaining: &[f64],
    rates: Rates,
    out: &mut RrResult,
) {
    let now = v.now();
    let n = instances(v, rsc);
    let np = v.projects().len();
    let ocf = v.on_fraction_of(rsc);
    let trs: f64 = v.projects().iter().map(|p| p.resource_share).sum();
    let bmin = v.prefs().work_buf_min;
    let period = v.prefs().sched_period;
    let end = now + buffer;
    let jobs = v.jobs();
    let deficits = rates == Rates::Fresh;

    out.rsc = rsc;
    out.jobs.clear();
    out.projects.clear();
    out.projects.resize(np, ProjectResult::default());
    out.shortfall = 0.0;
    out.first_idle = f64::INFINITY;
    for (i, j) in jobs.iter().enumerate() {
        if j.state == JobState::Finished || j.rsc() != rsc {
            continue;
        }
        let width = job_width(j, rsc);
        out.jobs.push(SimJob {
            index: i,
            project: j.project,
            remaining: remaining[i],
            width,
            deadline: j.deadline,
            rate: 0.0,
            finish: f64::INFINITY,
            missed: false,
        });
        out.projects[j.project].has_jobs = true;
    }
    // A project wants its share of the instances, or what its caps let it
    // use if that is less; with no jobs it lacks the whole of it.
    let capped = v
        .projects()
        .iter()
        .any(|p| p.max_concurrent > 0 || p.apps.iter().any(|a| a.max_concurrent > 0));
    let want = |p: usize, can_use: f64| (n * v.project(p).resource_share / trs).min(can_use);
    for (p, pr) in out.projects.iter_mut().enumerate() {
        pr.at_cap_until = f64::NEG_INFINITY;
        pr.can_use = if capped {
            can_use(v, p, rsc)
        } else {
            f64::INFINITY
        };
        if !pr.has_jobs {
            // (Written as BOINC 2007 computes it when uncapped, to the bit.)
            pr.shortfall = if pr.can_use.is_finite() {
                buffer * ocf * want(p, pr.can_use)
            } else {
                buffer * ocf * n * v.project(p).resource_share / trs
            };
        }
    }
    let mut scratch = Scratch::default();
    let sc = &mut scratch;
    let nj = out.jobs.len();
    sc.active.clear();
    sc.active.resize(nj, false);
    sc.active_width.clear();
    sc.active_width.resize(np, 0.0);
    sc.rate.clear();
    sc.rate.resize(np, 0.0);
    sc.live.clear();
    sc.live.extend(out.projects.iter().map(|p| p.has_jobs));
    sc.active_jobs.clear();
    sc.active_jobs.resize(np, 0);
    sc.active_app.clear();
    if capped {
        sc.active_app
            .extend(v.projects().iter().map(|p| vec![0; p.apps.len()]));
    }
    // Whether the caps let the job at view index `i` become active.
    let cap_ok = |sc: &Scratch, i: usize| -> bool {
        if !capped {
            return true;
        }
        let j = &jobs[i];
        let pr = v.project(j.project);
        let app_cap = pr.apps[j.app].max_concurrent;
        (pr.max_concurrent == 0 || sc.active_jobs[j.project] < pr.max_concurrent)
            && (app_cap == 0 || sc.active_app[j.project][j.app] < app_cap)
    };
    let count = |sc: &mut Scratch, i: usize, d: i32| {
        if capped {
            let j = &jobs[i];
            sc.active_jobs[j.project] = (sc.active_jobs[j.project] as i32 + d) as u32;
            let a = &mut sc.active_app[j.project][j.app];
            *a = (*a as i32 + d) as u32;
        }
    };
    // Active jobs: each project's first jobs up to N instances (that its
    // caps allow), in list order; the others wait, FIFO (`next_waiting[p]`
    // is the next index to look at).
    sc.next_waiting.clear();
    sc.next_waiting.resize(np, nj);
    let mut busy = 0.0;
    sc.act.clear();
    for (k, j) in out.jobs.iter().enumerate() {
        if sc.active_width[j.project] < n && cap_ok(sc, j.index) {
            sc.active[k] = true;
            sc.act.push(k);
            sc.active_width[j.project] += j.width;
            busy += j.width;
            count(sc, j.index, 1);
        } else if sc.next_waiting[j.project] == nj {
            sc.next_waiting[j.project] = k;
        }
    }
    // A job's rate depends only on its project: x = share / live shares,
    // times N / a when the project has fewer than N instances active, at most
    // 1, times the on fraction.
    // A project's rate: x = share / live shares, times N / a when it has
    // fewer than N instances active, at most 1, times the on fraction.
    sc.share.clear();
    sc.share
        .extend(v.projects().iter().map(|p| p.resource_share));
    fn rate_of(sc: &Scratch, p: usize, n: f64, ocf: f64) -> f64 {
        let mut x = if sc.nrrs > 0.0 {
            sc.share[p] / sc.nrrs
        } else {
            1.0
        };
        let a = sc.active_width[p];
        if a < n && a > 0.0 {
            x *= n / a;
        }
        x.min(1.0) * ocf
    }
    // All rates, after the live shares changed.
    let set_rates = |sc: &mut Scratch| {
        let mut nrrs = 0.0;
        for (live, share) in sc.live.iter().zip(&sc.share) {
            if *live {
                nrrs += share;
            }
        }
        sc.nrrs = nrrs;
        for p in 0..np {
            sc.rate[p] = rate_of(sc, p, n, ocf);
        }
    };
    set_rates(sc);
    out.nidle = (n - busy).max(0.0);
    let mut t = now;
    loop {
        // The active job that finishes first.
        let mut best: Option<(usize, usize, f64)> = None;
        for (pos, &k) in sc.act.iter().enumerate() {
            let j = &out.jobs[k];
            let r = sc.rate[j.project];
            if r > 0.0 {
                let d = j.remaining / r;
                if best.is_none_or(|(_, _, bd)| d < bd) {
                    best = Some((pos, k, d));
                }
            }
        }
        let Some((pos, kb, step)) = best else { break };
        let p = out.jobs[kb].project;
        let prior_active = sc.active_width[p];
        if deficits && t < end {
            let d = step.min(end - t);
            for (q, pr) in out.projects.iter_mut().enumerate() {
                pr.deficit += d * above_noise(want(q, pr.can_use) - sc.active_width[q]);
            }
        }
        if t < end {
            let d = step.min(end - t);
            let idle = above_noise(n - busy);
            if idle > 0.0 && out.first_idle.is_infinite() {
                out.first_idle = t;
            }
            out.shortfall += d * idle;
            let lack = above_noise(want(p, out.projects[p].can_use) - prior_active);
            if lack > 0.0 {
                out.projects[p].shortfall += d * lack;
            }
        }
        t += step;
        for &k in &sc.act {
            let j = &mut out.jobs[k];
            j.remaining = (j.remaining - sc.rate[j.project] * step).max(0.0);
        }
        {
            let j = &mut out.jobs[kb];
            j.rate = sc.rate[p];
            j.finish = t;
            j.remaining = 0.0;
            // BOINC's computation deadline: the report deadline less the
            // buffer minimum and one scheduling period.
            let cd = j.deadline - bmin - period;
            if t > now + CPU_PESSIMISM_FACTOR * (cd - now) {
                j.missed = true;
                out.projects[p].misses += 1;
            }
        }
        sc.active[kb] = false;
        sc.act.remove(pos);
        sc.active_width[p] -= out.jobs[kb].width;
        busy -= out.jobs[kb].width;
        if capped && super::at_cap(v, p, sc.active_jobs[p], &sc.active_app[p]) {
            out.projects[p].at_cap_until = t;
        }
        count(sc, out.jobs[kb].index, -1);
        // The project's next waiting job (that its caps allow) becomes
        // active, at its project's rate. Without caps the first waiting one
        // always may, and the search starts where the last one ended.
        let waiting = |w: usize, sc: &Scratch| {
            out.jobs[w].project == p && !sc.active[w] && out.jobs[w].finish.is_infinite()
        };
        let mut w = sc.next_waiting[p];
        while w < nj && !(waiting(w, sc) && cap_ok(sc, out.jobs[w].index)) {
            w += 1;
        }
        if w < nj {
            sc.active[w] = true;
            let at = sc.act.partition_point(|&k| k < w);
            sc.act.insert(at, w);
            sc.active_width[p] += out.jobs[w].width;
            busy += out.jobs[w].width;
            count(sc, out.jobs[w].index, 1);
            if !capped {
                sc.next_waiting[p] = w + 1;
            }
            // p stays live: only its own rate can change.
            sc.rate[p] = rate_of(sc, p, n, ocf);
        } else if !capped || !(sc.next_waiting[p]..nj).any(|w| waiting(w, sc)) {
            sc.next_waiting[p] = nj;
        }
        let died = sc.active_width[p] <= 1e-12;
        if died {
            sc.active_width[p] = 0.0;
            sc.live[p] = false;
            if t < end {
                let cu = out.projects[p].can_use;
                out.projects[p].shortfall += if cu.is_finite() {
                    (end - t) * want(p, cu)
                } else {
                    (end - t) * n * v.project(p).resource_share / trs
                };
            }
        }
        // Rates change only when a project runs out of jobs (BOINC's rule).
        if died || rates == Rates::Fresh {
            set_rates(sc);
        }
    }
    if t < end {
        if out.first_idle.is_infinite() {
            out.first_idle = t;
        }
        out.shortfall += (end - t) * n;
        if deficits {
            for (q, pr) in out.projects.iter_mut().enumerate() {
                pr.deficit += (end - t) * want(q, pr.can_use);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{run, Rates};
    use crate::rr_sim::{lower_bound, simulate_with, RrResult};
    use proptest::prelude::*;
    use vcsim_framework::testing::{add_job, state, JobSpec};
    use vcsim_framework::{policy::StaticEstimate, View};

    /// A host of `ncpus` CPUs and projects of (share, CPUs per job, app a's
    /// max_concurrent, app b's, the project's), with jobs of (project,
    /// remaining, deadline, of app b).
    fn check(
        ncpus: u32,
        ocf_off: bool,
        projects: &[(f64, f64, u32, u32, u32)],
        jobs: &[(usize, f64, f64, bool)],
    ) -> Result<(), String> {
        let mut text =
            format!("name = \"m\"\nduration_days = 10\n[host]\nncpus = {ncpus}\ncpu_flops = 1e9\n");
        if ocf_off {
            text += "[client]\nlearn_availability = true\n";
        }
        for (p, (share, cpus, cap_a, cap_b, cap)) in projects.iter().enumerate() {
            let cpus = cpus.min(ncpus as f64);
            text += &format!(
                "[[project]]\nname = \"P{p}\"\nresource_share = {share}\nlatency_bound_days = 3\nmax_concurrent = {cap}\n"
            );
            for (app, cap) in [("a", cap_a), ("b", cap_b)] {
                text += &format!(
                    "[[project.app]]\nname = \"{app}\"\ncpus = {cpus}\nmax_concurrent = {cap}\nflops_estimate = 1e12\nflops_mean = 1e12\n"
                );
            }
        }
        let mut st = state(&text);
        st.observed_on_fraction = 0.6;
        for &(p, _, deadline, b) in jobs {
            let mut job = JobSpec::queued(p, 1e12, deadline);
            job.app = usize::from(b);
            add_job(&mut st, job);
        }
        let rem: Vec<f64> = jobs.iter().map(|j| j.1).collect();
        let v = View::new(&st, &StaticEstimate, 0.0);
        for fresh in [false, true] {
            let (mut fast, mut slow) = (RrResult::default(), RrResult::default());
            if fresh {
                if !lower_bound(&v, 0, 30_000.0, &rem, &mut fast) {
                    continue;
                }
            } else {
                simulate_with(&v, 0, 30_000.0, &rem, &mut fast);
            }
            run(
                &v,
                0,
                30_000.0,
                &rem,
                if fresh { Rates::Fresh } else { Rates::Boinc },
                &mut slow,
            );
            // Jobs of two projects that finish together may finish in
            // either order, which rounding decides, and BOINC's rates then
            // differ (the one that finishes first may reset the other's):
            // such cases are not compared.
            let mut ends: Vec<(f64, usize)> =
                slow.jobs.iter().map(|j| (j.finish, j.project)).collect();
            ends.sort_by(|a, b| a.0.total_cmp(&b.0));
            if ends.windows(2).any(|w| {
                w[0].1 != w[1].1
                    && w[0].0.is_finite()
                    && (w[1].0 - w[0].0) <= 1e-6 * w[1].0.abs().max(1.0)
            }) {
                return Ok(());
            }
            let close =
                |a: f64, b: f64| a == b || (a - b).abs() <= 1e-6 + 1e-9 * a.abs().max(b.abs());
            for (a, b) in fast.jobs.iter().zip(&slow.jobs) {
                if !close(a.finish, b.finish) {
                    return Err(format!(
                        "fresh={fresh}: job {} finishes at {} (oracle {})",
                        a.index, a.finish, b.finish
                    ));
                }
                let threshold =
                    0.9 * (a.deadline - v.prefs().work_buf_min - v.prefs().sched_period);
                if a.missed != b.missed && !close(b.finish, threshold) {
                    return Err(format!(
                        "fresh={fresh}: job {} missed {} (oracle {})",
                        a.index, a.missed, b.missed
                    ));
                }
            }
            if !close(fast.shortfall, slow.shortfall)
                || fast.first_idle != slow.first_idle && !close(fast.first_idle, slow.first_idle)
            {
                return Err(format!(
                    "fresh={fresh}: shortfall {} / first idle {} (oracle {} / {})",
                    fast.shortfall, fast.first_idle, slow.shortfall, slow.first_idle
                ));
            }
            for (p, (a, b)) in fast.projects.iter().zip(&slow.projects).enumerate() {
                if !close(a.at_cap_until, b.at_cap_until) {
                    return Err(format!(
                        "fresh={fresh}: P{p} at a cap until {} (oracle {})",
                        a.at_cap_until, b.at_cap_until
                    ));
                }
                if !close(a.shortfall, b.shortfall) || !close(a.deficit, b.deficit) {
                    return Err(format!(
                        "fresh={fresh}: P{p} shortfall {} deficit {} (oracle {} {})",
                        a.shortfall, a.deficit, b.shortfall, b.deficit
                    ));
                }
            }
            if fast.nidle != slow.nidle {
                return Err(format!("nidle {} (oracle {})", fast.nidle, slow.nidle));
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

        #[test]
        fn the_fast_simulation_gives_the_oracles_answers(
            (ncpus, ocf_off, projects, jobs) in (1u32..=6, any::<bool>(), 1usize..=7).prop_flat_map(|(n, off, np)| (
                Just(n),
                Just(off),
                prop::collection::vec((
                    prop_oneof![prop::sample::select(vec![1.0, 100.0]), 1.0f64..500.0],
                    prop::sample::select(vec![1.0, 1.0, 0.5, 2.0, 3.0]),
                    prop::sample::select(vec![0u32, 0, 0, 1, 2]),
                    prop::sample::select(vec![0u32, 0, 0, 1, 2]),
                    prop::sample::select(vec![0u32, 0, 0, 0, 1, 3]),
                ), np),
                prop::collection::vec((
                    0..np,
                    prop_oneof![prop::sample::select(vec![0.0, 60.0, 3600.0, 20_000.0, 86_400.0]), 1.0f64..90_000.0],
                    1_000.0f64..300_000.0,
                    any::<bool>(),
                ), 0..24),
            ))
        ) {
            prop_assert_eq!(check(ncpus, ocf_off, &projects, &jobs), Ok(()));
        }
    }
}
