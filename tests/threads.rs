//! Worker threads of `vcsim compare` and `vcsim sweep`: a `--jobs` far above
//! the number of runs starts no more threads than runs and changes nothing,
//! and a system that refuses threads is an error message with exit status 2,
//! not a panic.

mod common;

use std::path::Path;
use std::process::Output;

/// `vcsim ARGS` with the environment `env` added (through the tests' one
/// way of running the binary, `common::vcsim`).
fn vcsim(args: &[&str], env: &[(&str, &str)]) -> Output {
    env.iter()
        .fold(common::vcsim(args), |c, (k, v)| c.env(k, v))
        .run()
        .out
}

/// Three runs: three policies, one replication each.
fn compare(jobs: &str, env: &[(&str, &str)]) -> Output {
    vcsim(
        &[
            "compare",
            "scenarios/outages.toml",
            "--policy",
            "CS2_WF2_WS2_JC2",
            "--policy",
            "CS1_WF2_WS2_JC2",
            "--policy",
            "CS2_WF1_WS2_JC2",
            "--format",
            "json",
            "--jobs",
            jobs,
        ],
        env,
    )
}

#[test]
fn a_huge_jobs_on_three_runs_gives_the_output_of_one_thread() {
    let one = compare("1", &[]);
    let huge = compare("100000", &[]);
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    assert!(
        huge.status.success(),
        "{}",
        String::from_utf8_lossy(&huge.stderr)
    );
    assert!(!one.stdout.is_empty());
    assert_eq!(one.stdout, huge.stdout);
}

/// Threads that cannot start: a stack of a petabyte cannot be mapped, so
/// every thread the process spawns fails, as it would under `ulimit -u`
/// (which does not bind root).
const NO_THREADS: [(&str, &str); 2] = [
    ("RUST_MIN_STACK", "1000000000000000"),
    ("RUST_BACKTRACE", "0"),
];

fn refused(out: &Output, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(
        err.contains("cannot start") && err.contains("--jobs") && !err.contains("panicked"),
        "{what}: {err}"
    );
}

#[test]
fn threads_that_cannot_start_are_an_error_not_a_panic() {
    refused(&compare("2", &NO_THREADS), "compare --jobs 2");
    let out = vcsim(
        &[
            "compare",
            "scenarios/outages.toml",
            "--policy",
            "CS2_WF2_WS2_JC2",
        ],
        &NO_THREADS,
    );
    refused(&out, "compare without --jobs");

    let dir = common::dir_with_base("threads-sweep");
    std::fs::write(
        dir.join("sweep.toml"),
        "name = \"t\"\nscenario = \"base.toml\"\npolicies = [\"CS2_WF2_WS2_JC2\"]\n\
         [set]\nduration_days = 1\n[[axis]]\nparam = \"host.ncpus\"\nvalues = [1, 2]\n",
    )
    .unwrap();
    let sweep = dir.join("sweep.toml");
    let out_dir = dir.join("out");
    let args = [
        "sweep",
        sweep.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ];
    refused(&vcsim(&args, &NO_THREADS), "sweep");
    assert!(
        !out_dir.join("manifest.json").exists(),
        "nothing ran, nothing is written"
    );
    let out = vcsim(&args, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `vcsim ARGS` in `dir` under a limit of `kib` KiB of address space
/// (`ulimit -v`, which binds root too).
fn under_limit(dir: &Path, kib: u64, args: &[&str]) -> Output {
    let mut line = format!("ulimit -v {kib} && exec \"$0\"");
    for i in 0..args.len() {
        line.push_str(&format!(" \"${}\"", i + 1));
    }
    std::process::Command::new("sh")
        .arg("-c")
        .arg(line)
        .arg(env!("CARGO_BIN_EXE_vcsim"))
        .args(args)
        .current_dir(dir)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("sh runs")
}

#[test]
fn a_sweep_short_of_memory_for_its_threads_is_refused_not_aborted() {
    // Under `ulimit -v`, rayon's queues for 1024 workers (allocated before
    // the first thread starts, a page each when malloc has no arena left)
    // ran out of memory and aborted the process (134) where compare said
    // "cannot start" (2). Limits from 20 to 420 MB: `--jobs 1024` is
    // refused with exit status 2, or, where the process cannot even read
    // the sweep (an abort no thread causes), `--jobs 1` aborts there too.
    let dir = common::dir_with_base("threads-sweep-ulimit");
    std::fs::write(
        dir.join("th.toml"),
        "name = \"th\"\nscenario = \"base.toml\"\npolicies = [\"CS2\", \"CS1\"]\n\
         replications = 600\n[set]\nduration_days = 0.001\n",
    )
    .unwrap();
    let sweep = |kib: u64, jobs: &str| {
        under_limit(
            &dir,
            kib,
            &["sweep", "th.toml", "--out", "o", "--jobs", jobs],
        )
    };
    let mut refused = 0;
    for kib in (20_000..420_000).step_by(4_000) {
        let out = sweep(kib, "1024");
        let err = String::from_utf8_lossy(&out.stderr);
        if out.status.code() == Some(2) {
            assert!(
                err.contains("cannot start 1024 worker threads") && err.contains("--jobs"),
                "ulimit -v {kib}: {err}"
            );
            refused += 1;
        } else {
            let one = sweep(kib, "1");
            assert!(
                !one.status.success(),
                "ulimit -v {kib}: --jobs 1 runs, --jobs 1024 exits with {:?}: {err}",
                out.status
            );
        }
    }
    assert!(refused > 50, "{refused} limits refused the threads");
}
