//! What a run records grows with the run (issue 19): an explained run, a
//! timeline and a trace each have a bound, and `explain --to` ends the run
//! where its window ends, with the full run's records up to there.

mod common;

use common::vcsim;
use std::time::{Duration, Instant};
use vcsim_framework::{
    run_spec, PolicySpec, RecordBounds, Registry, RunOutput, Scenario, SimOptions,
};

fn registry() -> Registry {
    vcsim_builtin::link();
    Registry::builtins().expect("built-ins")
}

/// A scenario from its text and a CPU script, in a fresh directory: the
/// scenario, the spec and the registry that runs it.
fn scripted(name: &str, scenario: &str, script: &str) -> (Scenario, PolicySpec, Registry) {
    let dir = common::temp_dir(name);
    let scn = dir.join("s.toml");
    std::fs::write(&scn, scenario).unwrap();
    let rhai = dir.join(format!("{name}.rhai"));
    std::fs::write(&rhai, script).unwrap();
    let rhai = rhai.display().to_string();
    let mut reg = registry();
    vcsim_script::register(&mut reg, vcsim_framework::Family::Cpu, &rhai).unwrap();
    let spec = PolicySpec::parse(&format!("cpu={rhai}")).unwrap();
    (Scenario::load(&scn).unwrap(), spec, reg)
}

/// One project of jobs of no work on a host of 2 CPUs: `schedule` runs,
/// and starts jobs, at every step.
const TINY_JOBS: &str = r#"name = "tiny"
duration_days = 0.03
[host]
ncpus = 2
cpu_flops = 1e18
[[project]]
name = "A"
resource_share = 100
latency_bound_days = 9
[[project.app]]
name = "main"
flops_estimate = 1.3e13
flops_mean = 1e-300
"#;

/// The CPU script's run list: the jobs by deadline that fit.
const RUN_LIST: &str = "let cap = v.capacity(); let run = [];\n    for j in v.jobs_by_deadline { if cap.fits(j) { cap.take(j); run.push(j); } }\n";

fn base(days: f64) -> Scenario {
    let mut s = Scenario::load(&common::root().join("scenarios/paper-base.toml")).unwrap();
    s.duration_days = days;
    s
}

fn run(opts: SimOptions) -> Result<RunOutput, String> {
    let spec = PolicySpec::parse("CS2_WF2_WS2_JC2").unwrap();
    run_spec(&base(10.0), &registry(), &spec, opts).map_err(|e| e.to_string())
}

/// The error of a run that must fail.
fn error_of(opts: SimOptions) -> String {
    match run(opts) {
        Ok(_) => panic!("the run ended without an error"),
        Err(e) => e,
    }
}

fn small() -> RecordBounds {
    RecordBounds {
        records: 100,
        segments: 50,
        trace_lines: 10,
    }
}

#[test]
fn an_explained_run_past_its_records_stops_and_says_to_record_less() {
    let e = error_of(SimOptions {
        explain: true,
        bounds: small(),
        ..SimOptions::default()
    });
    assert!(e.contains("an explained run"), "{e}");
    assert!(e.contains("keeps at most 100 records"), "{e}");
    assert!(e.contains("record a shorter run"), "{e}");
    // What a failed `explain` prints stops at the bound it states (a
    // step's records went past it: 500,458 printed of "at most 500000").
    let scn = base(10.0);
    let spec = PolicySpec::parse("CS2_WF2_WS2_JC2").unwrap();
    let opts = SimOptions {
        explain: true,
        bounds: RecordBounds {
            records: 101,
            ..small()
        },
        ..SimOptions::default()
    };
    match vcsim_framework::run_spec_keeping(&scn, &registry(), &spec, opts) {
        Err((
            _,
            vcsim_framework::sim::Kept {
                explanation: Some(ex),
                ..
            },
        )) => {
            assert_eq!(ex.records.len(), 101);
            // The step of the last one made more: the bound cut it.
            let full = run(SimOptions {
                explain: true,
                ..SimOptions::default()
            })
            .unwrap()
            .explanation
            .unwrap();
            let t = ex.records[100].time;
            assert!(full.records.iter().filter(|r| r.time <= t).count() > 101);
        }
        _ => panic!("the run must fail and keep its records"),
    }
}

#[test]
fn a_timeline_past_its_segments_stops_and_says_to_record_less() {
    let e = error_of(SimOptions {
        timeline: true,
        bounds: small(),
        ..SimOptions::default()
    });
    assert!(e.contains("a timeline keeps at most 50 records"), "{e}");
}

#[test]
fn a_trace_past_its_lines_keeps_its_start_and_says_the_rest_were_dropped() {
    let full = run(SimOptions {
        trace: true,
        ..SimOptions::default()
    })
    .unwrap();
    let cut = run(SimOptions {
        trace: true,
        bounds: small(),
        ..SimOptions::default()
    })
    .unwrap();
    assert!(full.trace.len() > 10, "{} lines", full.trace.len());
    assert_eq!(cut.trace.len(), 10);
    assert_eq!(cut.trace[..9], full.trace[..9]);
    assert!(
        cut.trace[9].contains("the trace keeps at most 10 lines; later ones were dropped"),
        "{}",
        cut.trace[9]
    );
    // The run itself is the same.
    assert_eq!(cut.report, full.report);
}

#[test]
fn a_timeline_s_bound_counts_stretches_not_the_empty_ones_a_step_makes() {
    // GPU jobs holding half a CPU over-commit the CPUs: when one starts,
    // the CPU jobs' share changes, and a stretch begun in the same step
    // ends as it starts. Those empty ones are not stretches: they used to
    // fill the bound (on 256 CPUs with 64 GPUs, more than half of it).
    let mut scn = Scenario::load(&common::root().join("scenarios/gpu-half-cpu.toml")).unwrap();
    scn.duration_days = 20.0;
    let spec = PolicySpec::parse("cpu=cs2,fetch=gpu,send=gpu,estimate=jc2").unwrap();
    let timeline = |segments| {
        let opts = SimOptions {
            timeline: true,
            bounds: RecordBounds {
                segments,
                ..RecordBounds::default()
            },
            ..SimOptions::default()
        };
        run_spec(&scn, &registry(), &spec, opts).map(|o| o.timeline.unwrap())
    };
    let full = timeline(usize::MAX).unwrap();
    let n = full.segments.len();
    let bounded = timeline(n + 2).unwrap_or_else(|e| panic!("{n} stretches: {e}"));
    assert_eq!(bounded.segments, full.segments);
    assert!(timeline(n / 2).is_err());
}

#[test]
fn a_run_stopped_after_a_time_has_the_full_runs_records_up_to_it() {
    let explained = |stop_after| {
        run(SimOptions {
            explain: true,
            stop_after,
            ..SimOptions::default()
        })
        .unwrap()
        .explanation
        .unwrap()
        .records
    };
    let full = explained(None);
    for at in [0.0, 3600.0, 2.5 * 86400.0, 7.0 * 86400.0] {
        let cut = explained(Some(at));
        let upto: Vec<_> = full.iter().filter(|r| r.time <= at).collect();
        let cut: Vec<_> = cut.iter().collect();
        assert_eq!(cut, upto, "stopped after t={at}");
    }
}

#[test]
fn a_run_kept_from_a_time_has_the_full_runs_records_from_it_within_the_bound() {
    let explained = |keep_from, bounds| {
        run(SimOptions {
            explain: true,
            keep_from,
            bounds,
            ..SimOptions::default()
        })
        .map(|o| o.explanation.unwrap().records)
    };
    let full = explained(None, RecordBounds::default()).unwrap();
    for at in [0.0, 3600.0, 2.5 * 86400.0, 7.0 * 86400.0] {
        let from: Vec<_> = full.iter().filter(|r| r.time >= at).cloned().collect();
        // The bound counts the records kept: those before `at` are not.
        let bounds = RecordBounds {
            records: from.len() + 1,
            ..RecordBounds::default()
        };
        assert_eq!(
            explained(Some(at), bounds).unwrap(),
            from,
            "kept from t={at}"
        );
    }
    // The whole run does not fit that bound from the start.
    let late = full.iter().filter(|r| r.time >= 7.0 * 86400.0).count();
    let tight = RecordBounds {
        records: late + 1,
        ..RecordBounds::default()
    };
    assert!(late + 1 < full.len());
    assert!(explained(None, tight).is_err());
}

#[test]
fn explain_to_an_hour_of_a_long_big_run_ends_at_once() {
    // 100 days of 256 CPUs: the whole explained run took 14 s and stopped
    // at its bound of records; the first hour is all `--to 1h` shows.
    let t = Instant::now();
    let out = vcsim(&[
        "explain",
        "scenarios/paper-base.toml",
        "--set",
        "host.ncpus=256",
        "--to",
        "1h",
    ])
    .stdout();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(out.contains("records\n"), "{out}");
    assert!(out.contains("send"), "{out}");
}

#[test]
fn a_run_s_log_of_long_lines_is_bounded_by_bytes_and_says_so_once() {
    // 200 lines of 65,000 bytes a call (each within the string limit):
    // 10,000 lines of them were 650 MB a run, and 8 runs in parallel
    // aborted.
    let script = format!(
        "fn schedule(v) {{\n    let s = \"\"; s.pad(65000, 'z');\n    for i in 0..200 {{ log(s); }}\n    {RUN_LIST}    run\n}}\n"
    );
    let (scn, spec, reg) = scripted("biglog", TINY_JOBS, &script);
    let t = Instant::now();
    let out = run_spec(&scn, &reg, &spec, SimOptions::default()).unwrap();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    let max = vcsim_framework::log::MAX_BYTES;
    let bytes: usize = out.log.iter().map(String::len).sum();
    assert!(bytes <= max + 200, "{bytes} bytes of log");
    let said: Vec<&String> = out.log.iter().filter(|l| l.contains("at most")).collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains(&format!("the run's log holds at most {max} bytes:")),
        "{said:?}"
    );
    assert_eq!(out.log.last(), Some(said[0]));
}

#[test]
fn an_explained_run_s_reasons_are_bounded_by_bytes_and_say_what_was_cut() {
    // A reason of 60 kB and 9,900 values of 100-byte names at each call
    // (each within the script limits): kept whole, 1.5 MB a call, 138 MB
    // in 0.03 simulated days (and 60 kB reasons cut to 1 kB held 60 kB
    // each: 1.1 GB in 15 days).
    let script = format!(
        "fn schedule(v) {{\n    let s = \"\"; s.pad(60000, 'z');\n    let p = \"\"; p.pad(100, 'k');\n    let r = #{{ text: s }};\n    for i in 0..9900 {{ r[`${{p}}${{i}}`] = i; }}\n    {RUN_LIST}    #{{ run: run, reason: r }}\n}}\n"
    );
    let (scn, spec, reg) = scripted("bigreason", TINY_JOBS, &script);
    let t = Instant::now();
    let opts = SimOptions {
        explain: true,
        ..SimOptions::default()
    };
    let out = run_spec(&scn, &reg, &spec, opts).unwrap();
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    let records = out.explanation.unwrap().records;
    use vcsim_framework::explain::{Datum, MAX_REASON_BYTES, VALUE_BYTES};
    let bytes: usize = records
        .iter()
        .map(|r| {
            r.reason.text.len()
                + r.reason
                    .data
                    .iter()
                    .map(|(k, v)| {
                        VALUE_BYTES
                            + k.len()
                            + match v {
                                Datum::Text(s) => s.len(),
                                _ => 0,
                            }
                    })
                    .sum::<usize>()
        })
        .sum();
    // Past the bound, some 200 bytes a record.
    let bound = MAX_REASON_BYTES + 600_000 + records.len() * 200;
    assert!(
        bytes <= bound,
        "{bytes} bytes of reasons in {} records",
        records.len()
    );
    let cut = records
        .iter()
        .filter(|r| {
            r.reason
                .text
                .ends_with("more values: an explained run keeps 100 MB of reasons in full)")
        })
        .count();
    assert!(cut > 100, "{cut} reasons cut of {}", records.len());
}
