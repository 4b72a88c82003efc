//! Hostile and extreme scenario values: each either runs to its end in
//! bounded time or is refused with status 2 and a message naming the key
//! and the bound. (The bounds are in the book's scenario page.)

mod common;

use common::{temp_dir, vcsim};
use std::time::{Duration, Instant};

/// A small valid scenario: 2 CPUs, one project, half a day.
const BASE: &str = r#"name = "hostile"
duration_days = 0.5
step_seconds = 60
[host]
ncpus = 2
cpu_flops = 1e9
connection_interval_days = 0
[host.availability]
fraction = 0.8
mean_on_seconds = 1000
[[project]]
name = "A"
resource_share = 100
latency_bound_days = 2
request_delay_seconds = 0
availability = { fraction = 0.9, mean_up_hours = 24 }
[[project.app]]
name = "main"
flops_estimate = 1.3e13
flops_mean = 1.3e13
"#;

/// `vcsim run` of BASE with `from` replaced by `to`: (status, stderr),
/// which must come within ten seconds.
fn run_with(name: &str, from: &str, to: &str) -> (i32, String) {
    assert!(BASE.contains(from), "{from}");
    let text = BASE.replacen(from, to, 1);
    let path = temp_dir(&format!("hostile-{name}")).join("s.toml");
    std::fs::write(&path, text).unwrap();
    let start = Instant::now();
    let r = vcsim(&["run", path.to_str().unwrap(), "--format", "json"]).run();
    let took = start.elapsed();
    assert!(took < Duration::from_secs(10), "{name}: took {took:?}");
    (r.status(), r.stderr())
}

fn refused(name: &str, from: &str, to: &str, needles: &[&str]) {
    let (code, err) = run_with(name, from, to);
    assert_eq!(code, 2, "{name}: {err}");
    for n in needles {
        assert!(err.contains(n), "{name}: `{n}` not in: {err}");
    }
}

fn runs(name: &str, from: &str, to: &str) {
    let (code, err) = run_with(name, from, to);
    assert_eq!(code, 0, "{name}: {err}");
}

#[test]
fn huge_intervals_and_delays_run_to_the_end() {
    // The longest the bounds allow (10^7 days) ...
    runs(
        "connection-interval",
        "connection_interval_days = 0",
        "connection_interval_days = 1e7",
    );
    runs(
        "request-delay",
        "request_delay_seconds = 0",
        "request_delay_seconds = 8e11",
    );
    runs(
        "long-on-periods",
        "mean_on_seconds = 1000",
        "mean_on_seconds = 8e11",
    );
    // ... and beyond them, refused with the bound.
    refused(
        "connection-interval-beyond",
        "connection_interval_days = 0",
        "connection_interval_days = 1e300",
        &["host.connection_interval_days", "at most 1e7 days"],
    );
    refused(
        "request-delay-beyond",
        "request_delay_seconds = 0",
        "request_delay_seconds = 1e300",
        &["project.0.request_delay_seconds", "at most"],
    );
}

#[test]
fn availability_periods_shorter_than_a_step_are_refused() {
    refused(
        "short-on-periods",
        "mean_on_seconds = 1000",
        "mean_on_seconds = 1e-300",
        &["host.availability.mean_on_seconds", "1e-300", "at least 60"],
    );
    refused(
        "short-server-periods",
        "mean_up_hours = 24",
        "mean_up_hours = 1e-12",
        &["project.0.availability.mean_up_hours", "at least 60"],
    );
}

#[test]
fn a_step_longer_than_the_run_is_refused() {
    refused(
        "long-step",
        "step_seconds = 60",
        "step_seconds = 1e300",
        &["step_seconds", "longer than the run"],
    );
}

/// `--seed` takes any u64, and a run's JSON says it: a scenario can carry
/// the same seed, above TOML's largest integer as a string of digits.
#[test]
fn any_seed_the_command_line_takes_a_scenario_takes() {
    let big = "18446744073709551615";
    let from_file = |seed: &str| {
        let path = temp_dir(&format!("seed-{}", seed.len())).join("s.toml");
        std::fs::write(
            &path,
            BASE.replacen("duration_days", &format!("seed = {seed}\nduration_days"), 1),
        )
        .unwrap();
        vcsim(&["run", path.to_str().unwrap(), "--format", "json"]).run()
    };
    let quoted = from_file(&format!("\"{big}\"")).succeeds();
    let path = temp_dir("seed-cli").join("s.toml");
    std::fs::write(&path, BASE).unwrap();
    let flag = vcsim(&[
        "run",
        path.to_str().unwrap(),
        "--format",
        "json",
        "--seed",
        big,
    ])
    .stdout();
    assert_eq!(quoted, flag);
    assert!(flag.contains(&format!("\"seed\": {big}")), "{flag}");
    // Unquoted, TOML cannot hold it: the message says how to write it.
    from_file(big).fails_with(
        2,
        &[
            "s.toml:2:8",
            "TOML integers range",
            &format!("seed = \"{big}\""),
        ],
    );
    from_file("-1").fails_with(2, &["s.toml:2:8", "a whole number from 0 to"]);
}

/// A run lasts a whole number of steps: 1 day of 86,000 s steps ran
/// 172,000 s without a word. `check` and `run` say so.
#[test]
fn a_duration_that_is_not_a_whole_number_of_steps_is_warned_of() {
    let (code, err) = run_with("overrun", "step_seconds = 60", "step_seconds = 1000");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning: duration_days = 0.5 is not a whole number of steps of step_seconds = 1000: the run lasts 44 steps, 44000 s, 800 s past it"),
        "{err}"
    );
    let (code, err) = run_with("whole-steps", "step_seconds = 60", "step_seconds = 600");
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("whole number of steps"), "{err}");
}

#[test]
fn quantities_beyond_what_the_simulator_represents_are_refused() {
    refused(
        "flops-mean",
        "flops_mean = 1.3e13",
        "flops_mean = 1e308",
        &["project.0.app.0.flops_mean", "at most 1e30"],
    );
    refused(
        "cpu-flops",
        "cpu_flops = 1e9",
        "cpu_flops = 1e308",
        &["host.cpu_flops", "at most 1e18"],
    );
    // A processor this slow made the largest job's estimate infinite: the
    // run failed at its first step, blaming the estimator.
    refused(
        "cpu-flops-tiny",
        "cpu_flops = 1e9",
        "cpu_flops = 1e-300",
        &["host.cpu_flops", "at least 1000 FLOPS"],
    );
    refused(
        "gpu-flops-tiny",
        "connection_interval_days = 0",
        "connection_interval_days = 0\n[[host.gpu]]\nkind = \"nvidia\"\ncount = 1\nflops = 1e-300",
        &["host.gpu.0.flops", "at least 1000 FLOPS"],
    );
    refused(
        "ncpus",
        "ncpus = 2",
        "ncpus = 4294967295",
        &["host.ncpus", "at most 256"],
    );
    refused(
        "share",
        "resource_share = 100",
        "resource_share = 1e308",
        &["project.0.resource_share", "at most 1e12"],
    );
    // A subnormal share gave two equal projects 0.94 and 0.06 of the work.
    refused(
        "tiny-share",
        "resource_share = 100",
        "resource_share = 1e-310",
        &["project.0.resource_share", "at least 1e-12"],
    );
    // Disks and files of more than an exabyte; weights whose sum
    // overflowed (then only one app was ever sent).
    refused(
        "disk",
        "connection_interval_days = 0",
        "connection_interval_days = 0\ndisk_gb = 1e308",
        &["host.disk_gb", "at most 1e12 GB"],
    );
    refused(
        "input",
        "flops_mean = 1.3e13",
        "flops_mean = 1.3e13\ninput_mb = 1e308",
        &["project.0.app.0.input_mb", "at most 1e15 MB"],
    );
    refused(
        "weight",
        "flops_mean = 1.3e13",
        "flops_mean = 1.3e13\nweight = 1e308",
        &["project.0.app.0.weight", "at most 1e12"],
    );
    // 1,001 projects (20,000 had not ended a 2-day run after 30 s: the work
    // per event grows with the projects).
    let project = BASE[BASE.find("[[project]]").unwrap()..].to_string();
    let many: String = (1..=1000)
        .map(|i| project.replacen("name = \"A\"", &format!("name = \"P{i}\""), 1))
        .collect();
    refused(
        "projects",
        "[[project]]",
        &format!("{many}[[project]]"),
        &["key `project`", "1001 projects", "at most 1000"],
    );
}

#[test]
fn a_deadline_within_one_step_and_a_project_never_up_are_refused() {
    refused(
        "short-bound",
        "latency_bound_days = 2",
        "latency_bound_days = 0.0001",
        &["project.0.latency_bound_days", "at least 60"],
    );
    refused(
        "never-up",
        "availability = { fraction = 0.9, mean_up_hours = 24 }",
        "availability = { fraction = 0, mean_up_hours = 24 }",
        &["project.0.availability.fraction", "never up"],
    );
}

/// The fastest CPUs and the smallest jobs: every step reports and fetches,
/// and replies and queues stay bounded.
#[test]
fn endless_tiny_jobs_stay_bounded() {
    runs("fastest-cpus", "cpu_flops = 1e9", "cpu_flops = 1e18");
    runs(
        "tiny-jobs",
        "flops_estimate = 1.3e13\nflops_mean = 1.3e13",
        "flops_estimate = 1\nflops_mean = 1",
    );
}

/// A big host whose identical jobs finish together asks for one job per
/// RPC, many RPCs a step: the per-step cap holds, and the log says so once
/// and counts the steps at the end, instead of a line a step.
#[test]
fn a_big_host_at_the_rpc_cap_says_so_once() {
    let (code, err) = run_with("big-host", "ncpus = 2", "ncpus = 64");
    assert_eq!(code, 0, "{err}");
    let said = err.matches("32 RPCs in one step;").count();
    assert_eq!(said, 1, "{err}");
    let counted = err
        .lines()
        .find_map(|l| l.split("32 RPCs in one step, at ").nth(1))
        .unwrap_or_else(|| panic!("no count at the end: {err}"));
    let steps: u32 = counted.trim_end_matches(" steps in all").parse().unwrap();
    assert!(steps > 1, "{err}");
}

#[test]
fn a_long_queue_costs_today_s_policies_and_the_gpu_fetcher_linear_time() {
    // 5,000 jobs queued at the start, most of them missing their deadlines:
    // today's simulation (`cs3`, `wf3`) walked each project's whole list at
    // every simulated completion, and the GPU fetcher simulated every step;
    // 2 days took minutes at 100,000 jobs. Each run must end in the bound.
    let jobs = "[[project.job]]\napp = \"main\"\ndeadline_days = 1\n".repeat(5000);
    let text = BASE.replacen("duration_days = 0.5", "duration_days = 2", 1) + &jobs;
    let path = temp_dir("hostile-long-queue").join("s.toml");
    std::fs::write(&path, text).unwrap();
    for policy in ["CS3_WF3_WS3_JC3", "cpu=cs2,fetch=gpu,send=gpu,estimate=jc2"] {
        let start = Instant::now();
        let r = vcsim(&["run", path.to_str().unwrap(), "--policy", policy]).run();
        let took = start.elapsed();
        assert_eq!(r.status(), 0, "{policy}: {}", r.stderr());
        assert!(took < Duration::from_secs(10), "{policy}: took {took:?}");
    }
}

/// Jobs of a sliver of a device run by the thousand at once: 6,400 jobs of
/// 0.01 GPU on 64 GPUs took 12 s for a fifth of a day. At most 256 of an
/// app's jobs run at once on a resource, as many as CPUs.
#[test]
fn more_jobs_at_once_than_a_host_has_cpus_are_refused() {
    refused(
        "cpu-slivers",
        "name = \"main\"\n",
        "name = \"main\"\ncpus = 0.001\n",
        &[
            "project.0.app.0.cpus",
            "0.001 CPUs per job lets 2000 jobs run at once on the host's 2 CPUs; vcsim simulates at most 256 at once on one resource",
            "give at least 0.0078125",
        ],
    );
    runs(
        "cpu-quarters",
        "name = \"main\"\n",
        "name = \"main\"\ncpus = 0.25\n",
    );
    let gpu_app = |count: &str| {
        format!(
            "flops_mean = 1.3e13\n[[project.app]]\nname = \"g\"\ngpu = {{ kind = \"nvidia\", count = {count} }}\n\
             flops_estimate = 7.2e12\nflops_mean = 7.2e12\n[[host.gpu]]\nkind = \"nvidia\"\ncount = 64\nflops = 2e9\n"
        )
    };
    refused(
        "gpu-slivers",
        "flops_mean = 1.3e13\n",
        &gpu_app("0.01"),
        &[
            "project.0.app.1.gpu.count",
            "0.01 GPUs per job lets 6400 jobs run at once on the host's 64 GPUs",
            "give at least 0.25",
        ],
    );
    runs("gpu-quarters", "flops_mean = 1.3e13\n", &gpu_app("0.25"));
}

/// A converted value that rounds to its bound is shown in full, so that it
/// visibly breaks it (it read "is 60 seconds; it must be at least 60").
#[test]
fn a_value_just_below_its_bound_is_shown_below_it() {
    refused(
        "latency-just-below",
        "latency_bound_days = 2\n",
        "latency_bound_days = 0.000694444444444444\n",
        &["is 59.999999999999964 seconds; it must be at least 60 seconds (one step)"],
    );
}

/// Today's client on a GPU host with a long queue (16 CPUs, 2 GPUs, 20
/// projects of 100 jobs, half of them GPU jobs): `wf3` simulates at every
/// step (no quiet certificate with GPU work), and simulated all 2,000 jobs
/// each time to learn that the host is saturated past the minimum buffer:
/// 1.7 s a simulated day in a release build. It now stops once it knows.
#[test]
fn todays_fetcher_on_a_gpu_host_with_a_long_queue_runs_in_bounded_time() {
    let mut s = String::from(
        "name = \"long GPU queue\"\nduration_days = 2\n\
         [host]\nncpus = 16\ncpu_flops = 4e9\n\
         [[host.gpu]]\nkind = \"nvidia\"\ncount = 2\nflops = 1e13\n",
    );
    for p in 0..20 {
        s += &format!(
            "[[project]]\nname = \"P{p}\"\nresource_share = 1\nlatency_bound_days = 12\n\
             [[project.app]]\nname = \"a\"\nflops_estimate = 4e15\nflops_mean = 4e15\n\
             [[project.app]]\nname = \"g\"\ncpus = 0.2\ngpu = {{ kind = \"nvidia\", count = 0.5 }}\n\
             flops_estimate = 2e16\nflops_mean = 2e16\n"
        );
        for k in 0..100 {
            let app = if k % 2 == 0 { "a" } else { "g" };
            s += &format!("[[project.job]]\napp = \"{app}\"\ndeadline_days = 12\n");
        }
    }
    let path = temp_dir("long-gpu-queue").join("s.toml");
    std::fs::write(&path, s).unwrap();
    let r = common::timed(vcsim(&[
        "run",
        path.to_str().unwrap(),
        "--policy",
        "CS3_WF3_WS3_JC3",
    ]));
    assert_eq!(r.status(), 0, "{}", r.stderr());
}

#[test]
fn a_disk_preference_that_leaves_boinc_no_room_is_said() {
    // 1e6 GB kept free of a 100 GB disk: no job with files can be
    // downloaded, and the host idles (it used to, without a word).
    let (code, err) = run_with(
        "min-free",
        "flops_mean = 1.3e13",
        "flops_mean = 1.3e13\ninput_mb = 10\n[client]\ndisk_min_free_gb = 1e6",
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("client.disk_min_free_gb = 1000000 keeps free all")
            && err.contains("BOINC may use no disk"),
        "{err}"
    );
}

#[test]
fn a_whole_number_out_of_its_type_names_the_key_and_the_range() {
    // serde said "invalid value: integer `4294967296`, expected u32".
    refused(
        "ncpus-u32",
        "ncpus = 2",
        "ncpus = 4294967296",
        &["`ncpus` must be a whole number from 0 to 4294967295, found 4294967296"],
    );
    refused(
        "ncpus-float",
        "ncpus = 2",
        "ncpus = 2.5",
        &["`ncpus` must be a whole number from 0 to 4294967295, found 2.5"],
    );
    // Past TOML's integers: the seed's hint only for the seed.
    let (code, err) = run_with("ncpus-i64", "ncpus = 2", "ncpus = 99999999999999999999");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`ncpus` is a whole number within that range") && !err.contains("seed"),
        "{err}"
    );
    // And from the command line.
    let r = vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--set",
        "host.ncpus=5000000000",
    ])
    .run();
    r.fails_with(
        2,
        &["`host.ncpus`: must be a whole number from 0 to 4294967295, found 5000000000"],
    );
}
