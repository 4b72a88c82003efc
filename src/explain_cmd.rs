//! `vcsim explain` (a run's decisions with their reasons, in a time window)
//! and `vcsim diverge` (where two runs part, and the first consequences).

use crate::extensions::{parse_specs, registry_for};
use crate::import_cmd::{flagged, load_scenario_flagged, load_scenario_with, seed_given_once};
use crate::output;
use crate::Failure;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use vcsim_framework::diverge::{self, Consequences, Parting};
use vcsim_framework::explain::{clock, short_duration, Explanation, Record};
use vcsim_framework::{
    run_spec, run_spec_keeping, ClientState, JobState, PolicySpec, RecordBounds, Registry,
    RunOutput, Scenario, SimOptions, Time,
};

/// Text or JSON lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum TextFormat {
    #[default]
    Text,
    Json,
}

/// A simulated time on the command line: seconds, or numbers with `d`,
/// `h`, `m`, `s`, each unit once and larger ones first (`90m`, `2.5d`,
/// `1d12h30m`, `1e3h`).
pub fn parse_time(s: &str) -> Result<Time, String> {
    let bad = || {
        format!(
            "`{s}`: a time is seconds, or numbers with d, h, m or s, each once and in that order (`36h`, `2.5d`, `1d12h30m`)"
        )
    };
    // No window reaches past the longest run: a larger time is a mistake,
    // not a window to saturate.
    let max = vcsim_framework::scenario::bounds::MAX_DAYS * 86400.0;
    let within = |x: f64| {
        if x <= max {
            Ok(x)
        } else {
            Err(format!(
                "`{s}`: a time is at most {} days, the longest run",
                vcsim_framework::scenario::bounds::MAX_DAYS
            ))
        }
    };
    // A number as Rust reads one (`2.5`, `1e3`), but never `inf`, `nan`
    // or a sign: those are no amount of time.
    let number = |n: &str| -> Result<f64, String> {
        let plain = n.starts_with(|c: char| c.is_ascii_digit() || c == '.')
            && n.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
        match n.parse::<f64>() {
            Ok(x) if plain && x.is_finite() => Ok(x),
            _ => Err(bad()),
        }
    };
    let t = s.trim();
    if t.is_empty() {
        return Err(bad());
    }
    if !t.ends_with(['d', 'h', 'm', 's']) {
        return within(number(t)?);
    }
    const UNITS: [(char, f64); 4] = [('d', 86400.0), ('h', 3600.0), ('m', 60.0), ('s', 1.0)];
    let mut total = 0.0;
    // The units not used yet: each once, larger ones first.
    let mut units = &UNITS[..];
    let mut rest = t;
    while !rest.is_empty() {
        let at = rest.find(['d', 'h', 'm', 's']).ok_or_else(bad)?;
        let unit = rest[at..].chars().next().expect("a unit");
        let k = units.iter().position(|u| u.0 == unit).ok_or_else(bad)?;
        total += number(&rest[..at])? * units[k].1;
        units = &units[k + 1..];
        rest = &rest[at + 1..];
    }
    within(total)
}

/// What each of `diverge`'s runs may record: half a run's, since it holds
/// two (and a page of each), so that it needs what one run would.
fn diverge_bounds() -> RecordBounds {
    let full = RecordBounds::default();
    RecordBounds {
        records: full.records / 2,
        segments: full.segments / 2,
        ..full
    }
}

fn explained_run(
    scn: &Scenario,
    reg: &Registry,
    spec: &PolicySpec,
    seed: Option<u64>,
    timeline: bool,
    stop_after: Option<Time>,
    bounds: RecordBounds,
) -> Result<RunOutput, Failure> {
    let opts = SimOptions {
        seed,
        explain: true,
        timeline,
        stop_after,
        bounds,
        ..SimOptions::default()
    };
    run_spec(scn, reg, spec, opts).map_err(Failure::running)
}

/// One record as a line of text.
fn line(r: &Record) -> String {
    output::name(&r.to_string())
}

/// One record as a JSON line (`time_s`, `family`, `decision`, `reason`...).
fn json_line(r: &Record) -> String {
    serde_json::to_string(r).expect("records serialize")
}

pub struct ExplainArgs<'a> {
    pub scenario: &'a Path,
    pub policy: Option<String>,
    pub seed: Option<u64>,
    pub set: &'a [String],
    pub from: Option<Time>,
    pub to: Option<Time>,
    pub format: TextFormat,
    pub plugins: &'a [PathBuf],
}

/// A bound of the window as the header shows it: the clock, and the
/// seconds where they are not whole (the window is not rounded, so `--from
/// 0.4` leaves out the decisions of 0d 00:00:00).
fn bound(t: f64) -> String {
    if t == t.round() {
        clock(t)
    } else {
        format!("{} (t={t:?}s)", clock(t))
    }
}

pub fn explain(a: &ExplainArgs) -> Result<(), Failure> {
    seed_given_once(a.seed.is_some(), &flagged("--set", a.set))?;
    let scn = load_scenario_with(a.scenario, a.set)?;
    let policy = a
        .policy
        .clone()
        .unwrap_or_else(|| crate::extensions::default_spec(&scn).to_string());
    let specs = parse_specs(&[policy])?;
    let reg = registry_for(a.plugins, &specs)?;
    let (from, to) = (a.from.unwrap_or(0.0), a.to.unwrap_or(f64::INFINITY));
    if from > to {
        return Err(Failure::input("--from is after --to"));
    }
    let end = scn.duration_days * 86400.0;
    if from > end {
        return Err(Failure::input(format!(
            "--from {}: after the run's end ({}): the window holds no decision",
            clock(from),
            clock(end)
        )));
    }
    // Nothing after `--to` is shown, so the run ends there; nothing
    // before `--from` is, so it is not kept.
    let opts = SimOptions {
        seed: a.seed,
        explain: true,
        stop_after: a.to,
        keep_from: a.from,
        ..SimOptions::default()
    };
    // A failed run still shows what it recorded before the failure (the
    // decisions that led there), then the error, with status 1.
    let (ex, failure) = match run_spec_keeping(&scn, &reg, &specs[0], opts) {
        Ok(out) => {
            output::print_log(&out.log);
            (out.explanation.expect("an explained run"), None)
        }
        Err((e, kept)) => {
            output::print_log(&kept.log);
            match kept.explanation {
                Some(ex) => (*ex, Some(Failure::running(e))),
                None => return Err(Failure::running(e)),
            }
        }
    };
    // Written as it is made, not gathered first: four days of 1,000
    // projects were 600 MB of JSON lines.
    let mut w = std::io::BufWriter::new(std::io::stdout().lock());
    let mut write = || -> std::io::Result<()> {
        use std::io::Write as _;
        if a.format == TextFormat::Text {
            writeln!(
                w,
                "scenario {} · policy {} · seed {} · {} to {}",
                output::name(&scn.name),
                output::name(&specs[0].label()),
                a.seed.unwrap_or(scn.seed),
                bound(from),
                if to.is_finite() {
                    bound(to)
                } else {
                    "the end".into()
                }
            )?;
        }
        let mut n = 0;
        for r in ex.window(from, to) {
            n += 1;
            match a.format {
                TextFormat::Text => writeln!(w, "{}", line(r))?,
                TextFormat::Json => writeln!(w, "{}", json_line(r))?,
            }
        }
        if a.format == TextFormat::Text {
            if failure.is_some() {
                writeln!(w, "{n} records before the run failed (the error follows)")?;
            } else {
                writeln!(w, "{n} records")?;
            }
        }
        w.flush()
    };
    write().map_err(|e| output::stdout_error(&e))?;
    failure.map_or(Ok(()), Err)
}

pub struct DivergeArgs<'a> {
    pub scenario: &'a Path,
    pub policies: &'a [String],
    pub seeds: &'a [u64],
    pub set: &'a [String],
    pub set_b: &'a [String],
    pub threshold: f64,
    pub format: TextFormat,
    pub timeline: Option<&'a Path>,
    pub plugins: &'a [PathBuf],
}

/// Run A or B: its scenario, spec and seed.
struct Side {
    scn: Scenario,
    spec: PolicySpec,
    seed: Option<u64>,
    what: String,
}

fn sides(a: &DivergeArgs) -> Result<(Side, Side, Registry), Failure> {
    if a.policies.is_empty() || a.policies.len() > 2 {
        return Err(Failure::input(
            "--policy: give one policy (for two seeds or two --set-b variants) or two",
        ));
    }
    if a.seeds.len() > 2 {
        return Err(Failure::input(
            "--seed: give at most two seeds (A's, then B's)",
        ));
    }
    if !(a.threshold > 0.0 && a.threshold < 1.0) {
        return Err(Failure::input(format!(
            "--threshold: a share difference between 0 and 1 (exclusive), found {}",
            vcsim_framework::explain::short_number(a.threshold)
        )));
    }
    let specs = parse_specs(a.policies)?;
    let reg = registry_for(a.plugins, &specs)?;
    let scn_a = load_scenario_with(a.scenario, a.set)?;
    let mut both_set = flagged("--set", a.set);
    both_set.extend(flagged("--set-b", a.set_b));
    seed_given_once(!a.seeds.is_empty(), &both_set)?;
    let scn_b = load_scenario_flagged(a.scenario, &both_set)?;
    // The runs are compared step by step, on one clock: B's may not differ.
    for (key, va, vb) in [
        ("duration_days", scn_a.duration_days, scn_b.duration_days),
        ("step_seconds", scn_a.step_seconds, scn_b.step_seconds),
    ] {
        if va != vb {
            return Err(Failure::input(format!(
                "--set-b {key}: diverge compares the two runs step by step, so they share one clock; change {key} for both with --set"
            )));
        }
    }
    let seed_a = a.seeds.first().copied();
    let seed_b = a.seeds.get(1).copied().or(seed_a);
    let spec_b = specs.get(1).unwrap_or(&specs[0]).clone();
    let what = |spec: &PolicySpec, seed: Option<u64>, scn: &Scenario, extra: &[String]| {
        let mut s = format!("{} · seed {}", spec.label(), seed.unwrap_or(scn.seed));
        for x in extra {
            s.push_str(&format!(" · --set {x}"));
        }
        s
    };
    let a_side = Side {
        what: what(&specs[0], seed_a, &scn_a, &[]),
        scn: scn_a,
        spec: specs[0].clone(),
        seed: seed_a,
    };
    let b_side = Side {
        what: what(&spec_b, seed_b, &scn_b, a.set_b),
        scn: scn_b,
        spec: spec_b,
        seed: seed_b,
    };
    Ok((a_side, b_side, reg))
}

/// The failure of one run or both, each named as A's or B's: the same
/// scenario and policy may fail in one run only (another seed, `--set-b`).
fn failed_sides(sides: [(&Side, Option<Failure>); 2]) -> Failure {
    let mut status = 0;
    let mut lines = Vec::new();
    for ((side, failure), name) in sides.into_iter().zip(["A", "B"]) {
        if let Some(f) = failure {
            status = status.max(f.status);
            lines.push(format!(
                "run {name} ({}): {}",
                output::name(&side.what),
                f.message
            ));
        }
    }
    Failure {
        status,
        message: lines.join("\n"),
    }
}

/// The client's state in one side's run where the runs part: as its record
/// `index` is about to be made, or at the end of the step at `at` (the runs
/// agree up to there, so either side's will do).
fn state_at_parting(
    side: &Side,
    reg: &Registry,
    index: usize,
    at: Time,
) -> Result<ClientState, Failure> {
    // The run ends after the step at `at`: the state is kept by then, and
    // what comes after would only be recorded (a third explanation held
    // with the two compared).
    let opts = SimOptions {
        seed: side.seed,
        explain: true,
        snapshot_at: Some((index, at)),
        stop_after: Some(at),
        bounds: diverge_bounds(),
        ..SimOptions::default()
    };
    let out = run_spec(&side.scn, reg, &side.spec, opts).map_err(Failure::running)?;
    let snap = out.explanation.and_then(|e| e.snapshot);
    snap.map(|s| *s)
        .ok_or_else(|| Failure::running("the run ended before the divergence it was asked to show"))
}

/// One day of the host's peak work (every instance of every resource).
fn one_day_of_work(scn: &Scenario) -> f64 {
    let h = ClientState::new(scn).host;
    let peak: f64 = (0..h.nrsc())
        .map(|r| h.ninstances(r) * h.instance_flops(r))
        .sum();
    86400.0 * peak
}

/// The jobs on the host, one line each.
fn queue_lines(st: &ClientState) -> Vec<String> {
    let t = st.now;
    st.jobs
        .iter()
        .map(|j| {
            let state = match j.state {
                JobState::Running => "running",
                JobState::Preempted => "preempted",
                JobState::Queued => "queued",
                JobState::Finished => "finished, to report",
            };
            let left = j.flops_left_at(t) / j.speed.max(1.0);
            format!(
                "job {} ({}) {state}, {} left at full speed, deadline {}",
                j.id,
                output::name(&st.projects[j.project].name),
                short_duration(left),
                clock(j.deadline)
            )
        })
        .collect()
}

#[derive(serde::Serialize)]
struct DivergeJson<'a> {
    diverged: bool,
    at_seconds: Option<f64>,
    step: Option<u64>,
    a: &'a str,
    b: &'a str,
    parting: Option<&'a Parting>,
    queue: Vec<String>,
    consequences: Option<&'a Consequences>,
    between_a: Vec<&'a Record>,
    between_b: Vec<&'a Record>,
}

/// How many records of each run "between" lists at most, and at least.
const BETWEEN: usize = 12;
const BETWEEN_MIN: usize = 3;

/// A run's records from the parting up to the first consequence (at least
/// a few, so that a run whose next decision comes later shows it).
fn between(ex: &Explanation, from: usize, until: Time) -> Vec<&Record> {
    ex.records
        .iter()
        .skip(from)
        .enumerate()
        .take_while(|(i, r)| r.time <= until || *i < BETWEEN_MIN)
        .map(|(_, r)| r)
        .take(BETWEEN)
        .collect()
}

pub fn diverge(a: &DivergeArgs) -> Result<(), Failure> {
    if let Some(p) = a.timeline {
        if !output::is_html(p) {
            return Err(Failure::input(format!(
                "{}: diverge's --timeline writes an HTML page (.html)",
                output::name(&p.display().to_string())
            )));
        }
        output::check_writable(p, "--timeline")?;
        output::check_distinct(&[("--timeline", p)], &[("the scenario", a.scenario)])?;
    }
    let (sa, sb, reg) = sides(a)?;
    if let Some(p) = a.timeline {
        // Now that every input is read (scripts, BOINC files beside one).
        output::not_an_input(p, "--timeline")?;
    }
    let tl = a.timeline.is_some();
    let (oa, ob) = rayon::join(
        || explained_run(&sa.scn, &reg, &sa.spec, sa.seed, tl, None, diverge_bounds()),
        || explained_run(&sb.scn, &reg, &sb.spec, sb.seed, tl, None, diverge_bounds()),
    );
    let (oa, ob) = match (oa, ob) {
        (Ok(oa), Ok(ob)) => (oa, ob),
        (oa, ob) => return Err(failed_sides([(&sa, oa.err()), (&sb, ob.err())])),
    };
    let (ea, eb) = (
        oa.explanation.as_ref().expect("explained"),
        ob.explanation.as_ref().expect("explained"),
    );
    let parting = diverge::first_parting(ea, eb);
    let min_work = one_day_of_work(&sa.scn);
    let cons = parting
        .as_ref()
        .map(|p| diverge::consequences(ea, eb, p, a.threshold, min_work));
    let queue = match &parting {
        Some(p) => queue_lines(&state_at_parting(&sa, &reg, p.index, p.at)?),
        None => Vec::new(),
    };
    let until = cons
        .as_ref()
        .and_then(|c| c.first_time())
        .unwrap_or(f64::INFINITY);
    let from = parting.as_ref().map_or(0, |p| p.index);
    if let (Some(path), Some(ta), Some(tb)) = (a.timeline, &oa.timeline, &ob.timeline) {
        let page = crate::timeline_html::render_pair(
            [
                (ta, &oa.report, ea, sa.what.as_str()),
                (tb, &ob.report, eb, sb.what.as_str()),
            ],
            parting.as_ref().map(|p| p.at),
        );
        for n in &page.notes {
            output::note(n);
        }
        output::write_output(path, "--timeline", page.html)?;
    }
    let step_s = sa.scn.step_seconds;
    let text = match a.format {
        TextFormat::Json => {
            let j = DivergeJson {
                diverged: parting.is_some(),
                at_seconds: parting.as_ref().map(|p| p.at),
                step: parting.as_ref().map(|p| (p.at / step_s).round() as u64),
                a: &sa.what,
                b: &sb.what,
                parting: parting.as_ref(),
                queue,
                consequences: cons.as_ref(),
                between_a: parting
                    .as_ref()
                    .map_or(Vec::new(), |_| between(ea, from, until)),
                between_b: parting
                    .as_ref()
                    .map_or(Vec::new(), |_| between(eb, from, until)),
            };
            serde_json::to_string_pretty(&j).expect("serializes") + "\n"
        }
        TextFormat::Text => diverge_text(
            &sa,
            &sb,
            ea,
            eb,
            parting.as_ref(),
            cons.as_ref(),
            &queue,
            until,
            step_s,
        ),
    };
    output::emit(&text)
}

#[allow(clippy::too_many_arguments)]
fn diverge_text(
    sa: &Side,
    sb: &Side,
    ea: &Explanation,
    eb: &Explanation,
    parting: Option<&Parting>,
    cons: Option<&Consequences>,
    queue: &[String],
    until: Time,
    step_s: f64,
) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "A: {}", output::name(&sa.what));
    let _ = writeln!(t, "B: {}", output::name(&sb.what));
    let Some(p) = parting else {
        let _ = writeln!(
            t,
            "\nno divergence: both runs made the same {} decisions",
            ea.records.len()
        );
        return t;
    };
    let rec = |r: &Option<Record>| match r {
        Some(r) => {
            // A run whose next decision comes later says when.
            let when = if r.time > p.at {
                format!("(nothing more then; next, at {}) ", clock(r.time))
            } else {
                String::new()
            };
            let mut s = format!("{when}{} {}", r.source.key(), output::name(&r.decision));
            if !r.reason.text.is_empty() {
                s.push_str(&format!("\n     because {}", output::name(&r.reason.text)));
            }
            s
        }
        None => "(nothing more)".to_string(),
    };
    let _ = writeln!(
        t,
        "\nfirst divergence at {} (t={} s, step {}), after {} identical records:",
        clock(p.at),
        p.at,
        (p.at / step_s).round() as u64,
        p.index
    );
    let _ = writeln!(t, "  A: {}", rec(&p.a));
    let _ = writeln!(t, "  B: {}", rec(&p.b));
    let _ = writeln!(
        t,
        "\nthe host as the first differing decision is made ({} jobs):",
        queue.len()
    );
    for q in queue {
        let _ = writeln!(t, "  {q}");
    }
    let rank = |e: &Explanation| {
        e.rankings
            .iter()
            .take_while(|(time, _)| *time <= p.at)
            .last()
            .map(|(_, r)| {
                let v: Vec<String> = r
                    .values
                    .iter()
                    .map(|x| vcsim_framework::explain::short_number(*x))
                    .collect();
                format!("{}: {}", r.name, v.join(", "))
            })
    };
    if let Some(r) = rank(ea) {
        let _ = writeln!(t, "  A ranks projects by {}", output::name(&r));
    }
    if let Some(r) = rank(eb) {
        let _ = writeln!(t, "  B ranks projects by {}", output::name(&r));
    }
    let _ = writeln!(t, "\nfirst consequences:");
    if let Some(c) = cons {
        match &c.deadline {
            Some(d) => {
                let side = |r: &Option<Record>| {
                    r.as_ref()
                        .map_or("not reported by the end".to_string(), |r| {
                            format!("{} at {}", output::name(&r.decision), clock(r.time))
                        })
                };
                let _ = writeln!(
                    t,
                    "  deadline: job {}, deadline {}:",
                    d.job,
                    clock(d.deadline_s)
                );
                let _ = writeln!(t, "    A: {}", side(&d.a));
                let _ = writeln!(t, "    B: {}", side(&d.b));
            }
            None => {
                let _ = writeln!(
                    t,
                    "  deadline: no job is on time in one run and not the other"
                );
            }
        }
        match &c.rpc {
            Some(r) => {
                let (who, other) = if r.made_by == "a" {
                    ("A", "B")
                } else {
                    ("B", "A")
                };
                let [na, nb] = r.rpcs_there;
                let (mine, theirs) = if r.made_by == "a" { (na, nb) } else { (nb, na) };
                let _ = if theirs == 0 {
                    writeln!(
                        t,
                        "  RPC: at {} {who} makes one ({}); {other} does not",
                        clock(r.at),
                        output::name(&r.rpc.decision)
                    )
                } else {
                    // The other run makes some there too, fewer.
                    writeln!(
                        t,
                        "  RPC: at {} {who} makes {mine} RPCs to that project, {other} {theirs}; {who}'s {} has no match in {other}'s",
                        clock(r.at),
                        output::name(&r.rpc.decision)
                    )
                };
            }
            None => {
                let _ = writeln!(t, "  RPC: both make the same RPCs");
            }
        }
        match &c.share {
            Some(s) => {
                let _ = writeln!(
                    t,
                    "  share: at {} project {} has done {:.3} of the work under A and {:.3} under B",
                    clock(s.at),
                    sa.scn.projects.get(s.project).map_or("?".to_string(), |p| output::name(&p.name)),
                    s.share_a,
                    s.share_b
                );
            }
            None => {
                let _ = writeln!(t, "  share: no project's share drifts past the threshold");
            }
        }
    }
    let _ = writeln!(
        t,
        "\nthe decisions from the divergence to the first consequence (at most {BETWEEN} of each):"
    );
    for (name, e) in [("A", ea), ("B", eb)] {
        let _ = writeln!(t, "  {name}:");
        for r in between(e, p.index, until) {
            let _ = writeln!(t, "    {}", output::name(&r.to_string()));
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_take_units() {
        assert_eq!(parse_time("90").unwrap(), 90.0);
        assert_eq!(parse_time("90m").unwrap(), 5400.0);
        assert_eq!(parse_time("2.5d").unwrap(), 216000.0);
        assert_eq!(
            parse_time("1d12h30m").unwrap(),
            86400.0 + 12.0 * 3600.0 + 1800.0
        );
        assert!(parse_time("12h30").is_err());
        assert!(parse_time("").is_err());
        assert!(parse_time("3w").is_err());
        assert!(parse_time("-1h").is_err());
        assert!(parse_time("nan").is_err());
        // A number in any form Rust reads, before a unit too.
        assert_eq!(parse_time("1e3h").unwrap(), 3.6e6);
        assert_eq!(parse_time("1.5e1m").unwrap(), 900.0);
        // Each unit once, larger ones first: `1h1h` and `1m1d` are slips.
        for slip in [
            "1h1h", "1m1d", "1s1m", "infh", "h", "1d-1h", "+1h", "1hd", "1h 30m",
        ] {
            let e = parse_time(slip).unwrap_err();
            assert!(e.contains("each once and in that order"), "{slip}: {e}");
        }
        // Past the longest run, a time is refused, not saturated.
        assert_eq!(parse_time("36500d").unwrap(), 36500.0 * 86400.0);
        for huge in ["1e308", "99999999999999999999999d", "36501d"] {
            let e = parse_time(huge).unwrap_err();
            assert!(e.contains("at most 36500 days, the longest run"), "{e}");
        }
    }
}
