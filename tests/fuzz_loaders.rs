//! Fuzzing the scenario, sweep and search-space loaders, proptest-driven: the shipped
//! files, mutated (numbers replaced by extreme values, lines cut, doubled
//! or garbled, the text truncated), are loaded; a load never panics and
//! ends in bounded time, and a scenario that loads also runs (a short
//! stretch of it) without a panic, to its end or to an error. A few dozen
//! cases run in CI; `cargo test --release --test fuzz_loaders -- --ignored`
//! runs thousands. (The BOINC import has its own, in crates/import.)

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use vcsim_framework::{run_spec, PolicySpec, Registry, Scenario, SimOptions};

fn shipped(dir: &str) -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// Values that have broken simulators: huge, tiny, negative, not numbers.
const EXTREMES: &[&str] = &[
    "0",
    "-1",
    "1e308",
    "-1e308",
    "1e-300",
    "nan",
    "inf",
    "-inf",
    "4294967296",
    "1e18",
    "3",
    "0.5",
    "\"x\"",
    "[]",
    "{}",
];

#[derive(Debug, Clone)]
enum Mutation {
    /// The n-th number of the text (mod their count) becomes an extreme.
    Number(usize, usize),
    CutLine(usize),
    DoubleLine(usize),
    Insert(usize, String),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 0..EXTREMES.len()).prop_map(|(n, x)| Mutation::Number(n, x)),
        1 => any::<usize>().prop_map(Mutation::CutLine),
        1 => any::<usize>().prop_map(Mutation::DoubleLine),
        1 => (any::<usize>(), "[\\[\\]=\"a-z0-9.\n ]{1,12}").prop_map(|(at, s)| Mutation::Insert(at, s)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// Byte offsets of the numbers that follow `= `.
fn numbers(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 < b.len() {
        if b[i] == b'=' && b[i + 1] == b' ' && (b[i + 2].is_ascii_digit() || b[i + 2] == b'-') {
            let start = i + 2;
            let mut end = start + 1;
            while end < b.len() && (b[end].is_ascii_alphanumeric() || b"._+-".contains(&b[end])) {
                end += 1;
            }
            out.push((start, end));
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// The nearest char boundary at or before `at`.
fn floor(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn apply(text: &str, ms: &[Mutation]) -> String {
    let mut t = text.to_string();
    for m in ms {
        let lines: Vec<&str> = t.lines().collect();
        t = match m {
            Mutation::Number(n, x) => {
                let nums = numbers(&t);
                if nums.is_empty() {
                    continue;
                }
                let (a, b) = nums[n % nums.len()];
                format!("{}{}{}", &t[..a], EXTREMES[*x], &t[b..])
            }
            Mutation::CutLine(n) if !lines.is_empty() => {
                let k = n % lines.len();
                lines
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != k)
                    .map(|(_, l)| *l)
                    .collect::<Vec<_>>()
                    .join("\n")
            }
            Mutation::DoubleLine(n) if !lines.is_empty() => {
                let k = n % lines.len();
                let mut v = lines.clone();
                v.insert(k, lines[k]);
                v.join("\n")
            }
            Mutation::Insert(at, s) => {
                let at = floor(&t, at % (t.len() + 1));
                format!("{}{s}{}", &t[..at], &t[at..])
            }
            Mutation::Truncate(at) => t[..floor(&t, at % (t.len() + 1))].to_string(),
            _ => t,
        };
    }
    t
}

/// Loads `text` as the scenario at `path` and, if it loads and is small,
/// runs a day of it: no panic, and both within bounded time.
fn scenario_case(path: &Path, text: &str, reg: &Registry) -> Result<(), TestCaseError> {
    let start = Instant::now();
    let loaded = std::panic::catch_unwind(|| Scenario::from_toml_str(text, path))
        .map_err(|_| TestCaseError::fail(format!("the loader panicked on:\n{text}")))?;
    prop_assert!(
        start.elapsed() < Duration::from_secs(5),
        "slow load:\n{text}"
    );
    let Ok(mut scn) = loaded else { return Ok(()) };
    if scn.host.ncpus > 16 {
        return Ok(());
    }
    scn.duration_days = scn.duration_days.min(1.0);
    if scn.step_seconds > scn.duration_days * 86400.0 {
        return Ok(());
    }
    let spec = PolicySpec::parse("CS2_WF2_WS2_JC2").unwrap();
    let start = Instant::now();
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_spec(&scn, reg, &spec, SimOptions::default()).map(|_| ())
    }));
    prop_assert!(ran.is_ok(), "the run panicked on:\n{text}");
    prop_assert!(
        start.elapsed() < Duration::from_secs(20),
        "slow run:\n{text}"
    );
    Ok(())
}

/// A runner with a fixed seed: CI sees the same cases every time (the
/// ignored long run explores further).
fn runner(cases: u32) -> TestRunner {
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
}

fn fuzz_scenarios(cases: u32) {
    vcsim_builtin::link();
    let reg = Registry::builtins().unwrap();
    let files = shipped("scenarios");
    let mut runner = runner(cases);
    let strategy = (0..files.len(), prop::collection::vec(mutation(), 1..4));
    runner
        .run(&strategy, |(f, ms)| {
            let (path, text) = &files[f];
            scenario_case(path, &apply(text, &ms), &reg)
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Loads mutated copies of the files in `dir` with `load`: no panic, and
/// each load within bounded time (`what` names the loader in a failure).
fn fuzz_loader(dir: &str, what: &str, cases: u32, load: fn(&str, &Path)) {
    let files = shipped(dir);
    let mut runner = runner(cases);
    let strategy = (0..files.len(), prop::collection::vec(mutation(), 1..4));
    runner
        .run(&strategy, |(f, ms)| {
            let (path, text) = &files[f];
            let text = apply(text, &ms);
            let start = Instant::now();
            let r = std::panic::catch_unwind(|| load(&text, path));
            prop_assert!(r.is_ok(), "the {what} loader panicked on:\n{text}");
            prop_assert!(
                start.elapsed() < Duration::from_secs(5),
                "slow load:\n{text}"
            );
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

fn fuzz_sweeps(cases: u32) {
    fuzz_loader("scenarios/paper", "sweep", cases, |text, path| {
        let _ = vcsim_sweep::Sweep::from_str(text, path);
    });
}

fn fuzz_spaces(cases: u32) {
    fuzz_loader("scenarios/spaces", "search space", cases, |text, path| {
        let _ = vcsim_search::Space::from_str(text, path);
    });
}

#[test]
fn mutated_search_spaces_load_or_fail_cleanly() {
    fuzz_spaces(48);
}

#[test]
fn mutated_scenarios_load_or_fail_cleanly_and_run_without_panic() {
    fuzz_scenarios(96);
}

#[test]
fn mutated_sweeps_load_or_fail_cleanly() {
    fuzz_sweeps(48);
}

#[test]
#[ignore = "thousands of cases: run with --release --ignored"]
fn mutated_inputs_at_length() {
    fuzz_scenarios(3000);
    fuzz_sweeps(3000);
    fuzz_spaces(3000);
}
