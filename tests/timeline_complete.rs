//! The timeline is complete: every span in which a job computes is a
//! stretch, so that for every shipped scenario the instance-seconds the
//! timeline shows per resource are what the metrics count; and the page
//! draws each stretch on as many lanes as it computes on, packed on the
//! host's real instances (a 4-CPU job on four CPU lanes, 0.5-GPU jobs two
//! to a GPU). An explained run's page holds the decision and reason behind
//! each stretch and RPC, and the plots' data, bounded for long runs.

mod common;

use common::{root, temp_dir, vcsim};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use vcsim_framework::Scenario;

/// The report prints 6 significant digits.
const REL: f64 = 1e-5;

fn scenarios() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() > 10, "the shipped scenarios: {files:?}");
    files
}

/// One row of the timeline CSV.
#[derive(Debug, Clone)]
struct Row {
    job: u64,
    resource: String,
    cpus: f64,
    gpus: f64,
    start: f64,
    end: f64,
    cpus_held: f64,
    reported: bool,
}

fn parse_csv(text: &str) -> Vec<Row> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
    };
    let (job, rsc, cpus, gpus, start, end, held, rep) = (
        col("job"),
        col("resource"),
        col("cpus"),
        col("gpus"),
        col("start_s"),
        col("end_s"),
        col("cpus_held"),
        col("reported"),
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), header.len(), "{l}");
            let num = |i: usize| -> f64 { f[i].parse().unwrap_or_else(|e| panic!("{e}: {l}")) };
            Row {
                job: f[job].parse().unwrap(),
                resource: f[rsc].to_string(),
                cpus: num(cpus),
                gpus: num(gpus),
                start: num(start),
                end: num(end),
                cpus_held: num(held),
                reported: f[rep] == "true",
            }
        })
        .collect()
}

/// The page's inlined data.
fn page_data(html: &str) -> serde_json::Value {
    let open = "<script id=\"data\" type=\"application/json\">";
    let at = html.find(open).expect("the page's data") + open.len();
    let rest = &html[at..];
    let json = &rest[..rest.find("</script>").unwrap()];
    serde_json::from_str(json).expect("the page's data is JSON")
}

/// A piece of a stretch on one lane, as the page draws it.
#[derive(Debug, Clone)]
struct Piece {
    lane: usize,
    start: f64,
    end: f64,
    flags: u64,
    stretch: usize,
    top: f64,
    bottom: f64,
}

fn pieces(d: &serde_json::Value) -> Vec<Piece> {
    d["segs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| Piece {
            lane: p[0].as_u64().unwrap() as usize,
            start: p[1].as_f64().unwrap(),
            end: p[2].as_f64().unwrap(),
            flags: p[5].as_u64().unwrap(),
            stretch: p[7].as_u64().unwrap() as usize,
            top: p[8].as_f64().unwrap(),
            bottom: p[9].as_f64().unwrap(),
        })
        .collect()
}

fn lane_names(d: &serde_json::Value) -> Vec<String> {
    d["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

/// Runs `scenario` (a path) in `dir` and returns the CSV rows, the JSON
/// report and the page's data.
fn run_all(
    dir: &Path,
    scenario: &Path,
    extra: &[&str],
) -> (Vec<Row>, serde_json::Value, serde_json::Value) {
    let s = scenario.to_str().unwrap();
    let mut a = vec!["run", s, "--timeline", "t.csv", "--format", "json"];
    a.extend_from_slice(extra);
    let json = vcsim(&a).cwd(dir).stdout();
    let report: serde_json::Value = serde_json::from_str(&json).expect("a JSON report");
    let rows = parse_csv(&std::fs::read_to_string(dir.join("t.csv")).unwrap());
    let mut a = vec!["run", s, "--timeline", "t.html"];
    a.extend_from_slice(extra);
    vcsim(&a).cwd(dir).stdout();
    let data = page_data(&std::fs::read_to_string(dir.join("t.html")).unwrap());
    (rows, report, data)
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()) + 1e-9
}

/// Within every lane, pieces that overlap in time cover disjoint parts of
/// its height, and no piece leaves the lane.
fn no_overlap_in_a_lane(name: &str, ps: &[Piece]) {
    let mut by_lane: BTreeMap<usize, Vec<&Piece>> = BTreeMap::new();
    for p in ps {
        assert!(
            p.top >= -1e-9 && p.bottom <= 1.0 + 1e-9 && p.bottom > p.top,
            "{name}: {p:?}"
        );
        by_lane.entry(p.lane).or_default().push(p);
    }
    for (lane, mut v) in by_lane {
        v.sort_by(|a, b| a.start.total_cmp(&b.start));
        let mut active: Vec<&Piece> = Vec::new();
        for p in v {
            active.retain(|a| a.end > p.start);
            for a in &active {
                assert!(
                    a.bottom <= p.top + 1e-6 || p.bottom <= a.top + 1e-6,
                    "{name}: lane {lane}: {a:?} and {p:?} overlap"
                );
            }
            active.push(p);
        }
    }
}

#[test]
fn every_shipped_scenario_s_timeline_holds_what_the_metrics_count() {
    let dir = temp_dir("timeline-complete");
    for path in scenarios() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let scn = Scenario::load(&path).expect("a shipped scenario");
        let (rows, report, data) = run_all(&dir, &path, &[]);
        assert!(!rows.is_empty(), "{name}: nothing ran");

        // A job computes in one stretch at a time.
        let mut by_job: BTreeMap<u64, Vec<&Row>> = BTreeMap::new();
        for r in &rows {
            assert!(r.end > r.start, "{name}: {r:?}");
            assert!(r.cpus <= r.cpus_held + 1e-9, "{name}: {r:?}");
            by_job.entry(r.job).or_default().push(r);
        }
        for (job, v) in &mut by_job {
            v.sort_by(|a, b| a.start.total_cmp(&b.start));
            for w in v.windows(2) {
                assert!(
                    w[0].end <= w[1].start,
                    "{name}: job {job}: {:?} {:?}",
                    w[0],
                    w[1]
                );
                assert_eq!(w[0].reported, w[1].reported, "{name}: job {job}");
            }
        }

        // Per resource: what the reported jobs' stretches occupied is the
        // FLOPs the metrics count as used or wasted, over an instance's FLOPS.
        let resources = report["resources"].as_object().expect("resources");
        let mut flops = vec![("cpu".to_string(), scn.host.cpu_flops)];
        flops.extend(scn.host.gpus.iter().map(|g| (g.kind.clone(), g.flops)));
        let mut shown_all = Vec::new();
        for (rname, instance_flops) in &flops {
            let m = &resources[rname.as_str()];
            let counted = (m["flops_used"].as_f64().unwrap() + m["flops_wasted"].as_f64().unwrap())
                / instance_flops;
            let amount = |r: &Row| {
                if rname == "cpu" {
                    r.cpus
                } else if &r.resource == rname {
                    r.gpus
                } else {
                    0.0
                }
            };
            let shown: f64 = rows
                .iter()
                .filter(|r| r.reported)
                .map(|r| amount(r) * (r.end - r.start))
                .sum();
            assert!(
                close(shown, counted, REL),
                "{name}: {rname}: the timeline shows {shown} instance-seconds of reported jobs, the metrics count {counted}"
            );
            shown_all.push(
                rows.iter()
                    .map(|r| amount(r) * (r.end - r.start))
                    .sum::<f64>(),
            );
        }

        // The page draws all of it, on the host's instances and no more,
        // every piece in a lane of its own resource, none over another.
        let names = lane_names(&data);
        let ps = pieces(&data);
        no_overlap_in_a_lane(&name, &ps);
        // The CPUs the client may use (max_ncpus_pct) are at most the host's.
        let cpu_lanes = names.iter().filter(|n| n.starts_with("CPU ")).count();
        assert!(
            cpu_lanes >= 1 && cpu_lanes <= scn.host.ncpus as usize,
            "{name}: CPU lanes {names:?}"
        );
        assert!(
            !names.iter().any(|n| n.contains("over")),
            "{name}: {names:?}"
        );
        for g in &scn.host.gpus {
            let n = names
                .iter()
                .filter(|l| l.rsplit_once(' ').is_some_and(|(k, _)| k == g.kind))
                .count();
            assert_eq!(n, g.count as usize, "{name}: {} lanes: {names:?}", g.kind);
        }
        for (i, (rname, _)) in flops.iter().enumerate() {
            let label = if rname == "cpu" {
                "CPU"
            } else {
                rname.as_str()
            };
            let drawn: f64 = ps
                .iter()
                .filter(|p| {
                    names[p.lane]
                        .rsplit_once(' ')
                        .is_some_and(|(k, _)| k == label)
                })
                .map(|p| (p.bottom - p.top) * (p.end - p.start))
                .sum();
            assert!(
                close(drawn, shown_all[i], 1e-9),
                "{name}: {rname}: the page draws {drawn} instance-seconds, the CSV has {}",
                shown_all[i]
            );
        }
    }
}

/// `scenario` with its duration replaced, written to `dir`.
fn shortened(dir: &Path, scenario: &str, days: u32) -> PathBuf {
    let text = std::fs::read_to_string(root().join(scenario)).unwrap();
    let text: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with("duration_days") {
                format!("duration_days = {days}")
            } else {
                l.to_string()
            }
        })
        .collect();
    let p = dir.join("s.toml");
    std::fs::write(&p, text.join("\n")).unwrap();
    p
}

#[test]
fn a_four_cpu_job_covers_four_cpu_lanes() {
    let dir = temp_dir("timeline-four-cpus");
    let s = shortened(&dir, "scenarios/today-multi-threaded.toml", 10);
    let (rows, _, data) = run_all(&dir, &s, &[]);
    let names = lane_names(&data);
    assert_eq!(names, ["CPU 0", "CPU 1", "CPU 2", "CPU 3"]);
    let stretches = data["stretches"].as_array().unwrap();
    let ps = pieces(&data);
    let mut whole = 0;
    for (k, st) in stretches.iter().enumerate() {
        let (cpus, held) = (st[1].as_f64().unwrap(), st[2].as_f64().unwrap());
        let mine: Vec<&Piece> = ps.iter().filter(|p| p.stretch == k).collect();
        let area: f64 = mine.iter().map(|p| p.bottom - p.top).sum();
        assert!(
            close(area, cpus, 1e-9),
            "stretch {k}: {st} drawn as {mine:?}"
        );
        let mut lanes: Vec<usize> = mine.iter().map(|p| p.lane).collect();
        lanes.sort_unstable();
        lanes.dedup();
        if held == 4.0 && cpus == 4.0 {
            whole += 1;
            assert_eq!(lanes, [0, 1, 2, 3], "stretch {k}: {mine:?}");
            assert!(
                mine.iter().all(|p| p.top == 0.0 && p.bottom == 1.0),
                "{mine:?}"
            );
        } else {
            // Over-committed (a 4-CPU job and single-CPU ones), a job
            // computes on part of the CPUs: at least as many lanes as that
            // takes, and never more than the host has.
            assert!(
                lanes.len() as f64 >= (cpus - 1e-9).ceil() && lanes.len() <= 4,
                "stretch {k}: {st} {mine:?}"
            );
        }
    }
    assert!(whole > 5, "4-CPU jobs ran alone: {whole}");
    assert!(rows.iter().any(|r| r.cpus_held == 4.0));
}

/// Two GPUs, jobs that take half of one: four run at once, two to a GPU.
const HALF_GPUS: &str = r#"
name = "half-gpus"
description = "2 GPUs, jobs of 0.5 GPU"
seed = 1
duration_days = 3

[host]
ncpus = 2
cpu_flops = 1e9

[[host.gpu]]
kind = "nvidia"
count = 2
flops = 2e9

[[project]]
name = "A"
resource_share = 100
latency_bound_days = 5
[[project.app]]
name = "gpu"
cpus = 0.25
gpu = { kind = "nvidia", count = 0.5 }
flops_estimate = 3.6e12
flops_mean = 3.6e12

[[project]]
name = "B"
resource_share = 100
latency_bound_days = 5
[[project.app]]
name = "cpu"
cpus = 1
flops_estimate = 3.6e12
flops_mean = 3.6e12
[[project.app]]
name = "gpu"
cpus = 0.25
gpu = { kind = "nvidia", count = 0.5 }
flops_estimate = 3.6e12
flops_mean = 3.6e12
"#;

#[test]
fn half_gpu_jobs_share_the_host_s_two_gpus() {
    let dir = temp_dir("timeline-half-gpus");
    let s = dir.join("half.toml");
    std::fs::write(&s, HALF_GPUS).unwrap();
    let (rows, _, data) = run_all(&dir, &s, &["--policy", "fetch=gpu,send=gpu"]);
    let names = lane_names(&data);
    assert_eq!(names, ["CPU 0", "CPU 1", "nvidia 0", "nvidia 1"]);
    let ps = pieces(&data);
    no_overlap_in_a_lane("half-gpus", &ps);
    let gpu: Vec<&Piece> = ps.iter().filter(|p| p.lane >= 2).collect();
    assert!(!gpu.is_empty());
    for p in &gpu {
        assert!(p.flags & 4 == 0, "{p:?}");
        assert!(
            (p.top == 0.0 || p.top == 0.5) && p.bottom - p.top == 0.5,
            "a 0.5-GPU job covers half of one GPU: {p:?}"
        );
    }
    // Four ran at once: two on each GPU.
    let most = rows
        .iter()
        .filter(|r| r.resource == "nvidia")
        .map(|a| {
            rows.iter()
                .filter(|b| b.resource == "nvidia" && b.start <= a.start && a.start < b.end)
                .count()
        })
        .max()
        .unwrap();
    assert_eq!(most, 4, "four 0.5-GPU jobs at once");
    let at_four = gpu.iter().find(|a| {
        gpu.iter()
            .filter(|b| b.start <= a.start && a.start < b.end)
            .count()
            == 4
    });
    let a = at_four.expect("four pieces at once on the page");
    for lane in [2, 3] {
        let n = gpu
            .iter()
            .filter(|b| b.lane == lane && b.start <= a.start && a.start < b.end)
            .count();
        assert_eq!(n, 2, "two jobs on GPU lane {lane}");
    }
    // The GPU jobs' CPUs are drawn on the CPU lanes, as their CPU part.
    assert!(ps.iter().any(|p| p.lane < 2 && p.flags & 4 != 0));
}

/// The text `k` of the page's explanation (`why.texts`), or `None` for -1.
fn why_text(why: &serde_json::Value, k: i64) -> Option<String> {
    (k >= 0).then(|| why["texts"][k as usize].as_str().unwrap().to_string())
}

/// The page's record `k` (`why.recs`): (time, family, decision, reason).
fn why_rec(why: &serde_json::Value, k: usize) -> (f64, String, String, Option<String>) {
    let r = &why["recs"][k];
    (
        r[0].as_f64().unwrap(),
        why_text(why, r[1].as_i64().unwrap()).unwrap(),
        why_text(why, r[2].as_i64().unwrap()).unwrap(),
        why_text(why, r[3].as_i64().unwrap()),
    )
}

#[test]
fn an_explained_run_s_page_holds_the_reason_of_each_stretch_and_rpc_and_the_plots() {
    use vcsim_framework::explain::Source;
    use vcsim_framework::{run_spec, Family, PolicySpec, Registry, SimOptions};
    let dir = temp_dir("timeline-why");
    let scn_path = shortened(&dir, "scenarios/mix-5-slack-5.toml", 3);
    let policy = "CS2_WF2_WS2_JC2";
    vcsim(&["run", "s.toml", "--policy", policy, "--timeline", "t.html"])
        .cwd(&dir)
        .run()
        .succeeds();
    let page = std::fs::read_to_string(dir.join("t.html")).unwrap();
    let data = page_data(&page);
    let why = &data["why"];
    assert!(why.is_object(), "an HTML timeline's run explains");

    // The same run, explained, in this process.
    vcsim_builtin::link();
    let reg = Registry::builtins().unwrap();
    let scn = Scenario::load(&scn_path).unwrap();
    let spec = PolicySpec::parse(policy).unwrap();
    let opts = SimOptions {
        timeline: true,
        explain: true,
        ..SimOptions::default()
    };
    let run = run_spec(&scn, &reg, &spec, opts).unwrap();
    let tl = run.timeline.unwrap();
    let ex = run.explanation.unwrap();

    // Each stretch: the CPU scheduler's last record of its job at or
    // before its start, decision and reason.
    let seg = why["seg"].as_array().unwrap();
    assert_eq!(seg.len(), tl.segments.len());
    let mut with_reason = 0;
    for (k, s) in tl.segments.iter().enumerate() {
        let want = ex
            .records
            .iter()
            .rev()
            .find(|r| {
                r.source == Source::Policy(Family::Cpu) && r.job == Some(s.job) && r.time <= s.start
            })
            .expect("every stretch was started by a decision");
        let i = seg[k].as_i64().unwrap();
        assert!(i >= 0, "stretch {k} (job {}) has no record", s.job);
        let (t, fam, decision, reason) = why_rec(why, i as usize);
        assert_eq!((t, fam.as_str()), (want.time, "cpu"), "stretch {k}");
        assert_eq!(decision, want.decision, "stretch {k}");
        assert!(decision.contains(&format!("job {} (", s.job)), "{decision}");
        let want_reason = (!want.reason.text.is_empty()).then(|| want.reason.text.clone());
        assert_eq!(reason, want_reason, "stretch {k}: {decision}");
        with_reason += usize::from(reason.is_some());
    }
    // CS2 gives a reason for every job it starts: a known one.
    let first = &tl.segments[0];
    let (_, _, decision, reason) = why_rec(why, seg[0].as_i64().unwrap() as usize);
    assert!(decision.starts_with("start") && decision.contains(&format!("job {}", first.job)));
    let reason = reason.expect("CS2 says why it started the first job");
    assert!(
        reason.contains("short-term debt") || reason.contains("EDF"),
        "{reason}"
    );
    assert_eq!(with_reason, tl.segments.len(), "CS2 explains every start");

    rpcs_hold_their_own_records(why, &tl, &ex);

    // The plots: fractions of the work done, the resource shares, the
    // scheduler's ranking.
    let share = &why["share"];
    let shares: Vec<f64> = share["shares"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let want = [1.0 / 15.0, 2.0 / 15.0, 0.2, 4.0 / 15.0, 1.0 / 3.0];
    assert_eq!(shares.len(), want.len());
    for (s, w) in shares.iter().zip(want) {
        assert!((s - w).abs() < 1e-4, "resource shares {shares:?}");
    }
    let pts = share["pts"].as_array().unwrap();
    assert!(pts.len() > 10 && pts.len() <= 2000, "{}", pts.len());
    for p in pts {
        let f: f64 = p.as_array().unwrap()[1..]
            .iter()
            .map(|v| v.as_f64().unwrap())
            .sum();
        assert!((f - 1.0).abs() < 1e-3, "fractions add up to 1: {p}");
    }
    let rank = &why["rank"];
    assert_eq!(rank["name"], ex.rankings[0].1.name.as_str());
    assert_eq!(rank["pts"].as_array().unwrap().len(), ex.rankings.len());
}

#[test]
fn a_hundred_day_explained_page_stays_small() {
    let dir = temp_dir("timeline-why-long");
    let html = dir.join("t.html");
    vcsim(&[
        "run",
        "scenarios/mix-5-slack-5.toml",
        "--timeline",
        html.to_str().unwrap(),
    ])
    .run()
    .succeeds();
    let page = std::fs::read_to_string(dir.join("t.html")).unwrap();
    assert!(page.len() < 4_000_000, "{} bytes", page.len());
    let data = page_data(&page);
    for plot in ["share", "rank"] {
        let p = &data["why"][plot];
        let pts = p["pts"].as_array().unwrap();
        assert!(
            pts.len() > 1000 && pts.len() <= 2000,
            "{plot}: {} points",
            pts.len()
        );
        for w in pts.windows(2) {
            assert!(w[0][0].as_f64() < w[1][0].as_f64(), "{plot}: in time order");
        }
    }
    // The ranking keeps, per bucket, the range each project went through.
    let r = &data["why"]["rank"];
    let (pts, lo, hi) = (
        r["pts"].as_array().unwrap(),
        r["lo"].as_array().unwrap(),
        r["hi"].as_array().unwrap(),
    );
    assert_eq!((lo.len(), hi.len()), (pts.len(), pts.len()));
    let mut wider = 0;
    for i in 0..pts.len() {
        for p in 0..5 {
            let (v, l, h) = (
                pts[i][p + 1].as_f64().unwrap(),
                lo[i][p].as_f64().unwrap(),
                hi[i][p].as_f64().unwrap(),
            );
            assert!(
                l <= v && v <= h,
                "point {i}, project {p}: {l} <= {v} <= {h}"
            );
            wider += usize::from(l < h);
        }
    }
    assert!(wider > 0, "some buckets hold several values");
}

#[test]
fn a_page_of_many_projects_keeps_each_plot_to_200_000_values() {
    // 1,000 projects for ten days: 2,000 points of 1,001 values each would
    // be 2 million values a plot; the page keeps 199 points instead.
    let dir = temp_dir("timeline-many-projects");
    let html = dir.join("t.html");
    vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--set",
        "mix=1000",
        "--set",
        "duration_days=10",
        "--timeline",
        html.to_str().unwrap(),
    ])
    .run()
    .succeeds();
    let data = page_data(&std::fs::read_to_string(&html).unwrap());
    for plot in ["share", "rank"] {
        let pts = data["why"][plot]["pts"].as_array().unwrap();
        assert_eq!(pts.len(), 200_000 / 1001, "{plot}");
        assert_eq!(pts[0].as_array().unwrap().len(), 1001, "{plot}");
    }
}

#[test]
fn a_scenario_named_like_the_page_s_placeholders_stays_in_its_title() {
    // The page is a template with `{{TITLE}}` and `{{DATA}}` in it: a name
    // holding them is text, not a place to put the data.
    let dir = temp_dir("timeline-placeholder-name");
    let scn = dir.join("s.toml");
    let base = std::fs::read_to_string(root().join("scenarios/paper-base.toml")).unwrap();
    std::fs::write(
        &scn,
        base.replace(
            "name = \"paper-base\"",
            "name = \"a </script> {{DATA}} {{TITLE}} <!--\"",
        ),
    )
    .unwrap();
    let html = dir.join("t.html");
    vcsim(&[
        "run",
        scn.to_str().unwrap(),
        "--set",
        "duration_days=1",
        "--timeline",
        html.to_str().unwrap(),
    ])
    .run()
    .succeeds();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<h1>vcsim timeline: a &lt;/script&gt; {{DATA}} {{TITLE}} &lt;!-- ·"),
        "{}",
        &page[..page.len().min(2000)]
    );
    let data = page_data(&page);
    assert!(data["title"].as_str().unwrap().contains("{{DATA}}"));
}

/// Each RPC tick of a page holds its own request with its reason and its
/// own reply, at most ten records (two RPCs to a project in one step each
/// had both's); returns how many RPCs were a project's second or later in
/// their step.
fn rpcs_hold_their_own_records(
    why: &serde_json::Value,
    tl: &vcsim_framework::timeline::Timeline,
    ex: &vcsim_framework::explain::Explanation,
) -> usize {
    use vcsim_framework::explain::Source;
    use vcsim_framework::Family;
    // Each RPC: its own request with its reason, and its own outcome, at
    // most ten records (two RPCs to a project in one step each had both's).
    let rpcs = why["rpc"].as_array().unwrap();
    assert_eq!(rpcs.len(), tl.rpcs.len());
    assert!(!tl.rpcs.is_empty());
    let mut twice = 0;
    for (i, x) in tl.rpcs.iter().enumerate() {
        // The k-th RPC to this project at this time.
        let k = tl.rpcs[..i]
            .iter()
            .filter(|y| y.time == x.time && y.project == x.project)
            .count();
        twice += usize::from(k > 0);
        let name = &tl.project_names[x.project];
        let recs: Vec<_> = rpcs[i][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| why_rec(why, k.as_u64().unwrap() as usize))
            .collect();
        assert!(recs.iter().all(|r| r.0 == x.time), "RPC {i}: {recs:?}");
        assert!(recs.len() <= 10, "RPC {i}: {} records", recs.len());
        let fetches: Vec<_> = recs.iter().filter(|r| r.1 == "fetch").collect();
        assert_eq!(fetches.len(), 1, "RPC {i}: one request: {recs:?}");
        let fetch = fetches[0];
        assert!(
            fetch.2.starts_with(&format!("RPC to {name} asking for")),
            "{fetch:?}"
        );
        let want = ex
            .records
            .iter()
            .filter(|r| {
                r.time == x.time
                    && r.project == Some(x.project)
                    && r.source == Source::Policy(Family::Fetch)
            })
            .nth(k)
            .unwrap();
        assert_eq!(fetch.2, want.decision, "RPC {i}");
        assert_eq!(
            fetch.3.as_deref(),
            Some(want.reason.text.as_str()).filter(|t| !t.is_empty())
        );
        let outcome = if x.reached {
            let unit = if x.jobs == 1 { "job" } else { "jobs" };
            format!("{name} replied with {} {unit}", x.jobs)
        } else {
            format!("{name} not reached")
        };
        let replies: Vec<_> = recs
            .iter()
            .filter(|r| {
                r.1 == "outcome" && (r.2.contains(" replied with ") || r.2.contains(" not reached"))
            })
            .collect();
        assert!(
            replies.len() == 1 && replies[0].2.starts_with(&outcome),
            "RPC {i}: not one `{outcome}` in {recs:?}"
        );
    }
    twice
}

/// The base scenario makes two RPCs to its project at its first step: each
/// tick of the page has its own.
#[test]
fn two_rpcs_to_a_project_in_one_step_each_show_their_own_records() {
    use vcsim_framework::{run_spec, PolicySpec, Registry, SimOptions};
    let dir = temp_dir("timeline-two-rpcs");
    let scn_path = shortened(&dir, "scenarios/paper-base.toml", 1);
    vcsim(&["run", "s.toml", "--timeline", "t.html"])
        .cwd(&dir)
        .run()
        .succeeds();
    let data = page_data(&std::fs::read_to_string(dir.join("t.html")).unwrap());
    vcsim_builtin::link();
    let reg = Registry::builtins().unwrap();
    let scn = Scenario::load(&scn_path).unwrap();
    let opts = SimOptions {
        timeline: true,
        explain: true,
        ..SimOptions::default()
    };
    let spec = PolicySpec::parse("CS2_WF2_WS2_JC2").unwrap();
    let run = run_spec(&scn, &reg, &spec, opts).unwrap();
    let twice = rpcs_hold_their_own_records(
        &data["why"],
        run.timeline.as_ref().unwrap(),
        run.explanation.as_ref().unwrap(),
    );
    assert!(twice > 0, "the run has two RPCs to a project in one step");
}

/// The top track says why lanes are empty while the host is on: computing
/// not allowed (`active_fraction`), or GPU computing not allowed
/// (`gpu_active_fraction`). No CPU job computes in a period of the first
/// kind, no GPU job in either, and over a long run they take their
/// documented shares of the time.
#[test]
fn the_page_shows_when_computing_and_gpu_computing_are_not_allowed() {
    let dir = temp_dir("timeline-not-allowed");
    let (rows, _, d) = run_all(
        &dir,
        &root().join("scenarios/gpu-fractional-cpu.toml"),
        &[
            "--set",
            "host.availability.fraction=0.9",
            "--set",
            "host.availability.active_fraction=0.6",
            "--set",
            "host.availability.gpu_active_fraction=0.3",
            "--set",
            "duration_days=30",
        ],
    );
    let blocked: Vec<(f64, f64, bool)> = d["blocked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b[0].as_f64().unwrap(),
                b[1].as_f64().unwrap(),
                b[2].as_bool().unwrap(),
            )
        })
        .collect();
    let run = 30.0 * 86400.0;
    let share = |gpu_only: bool| {
        blocked
            .iter()
            .filter(|b| b.2 == gpu_only)
            .map(|b| b.1 - b.0)
            .sum::<f64>()
            / run
    };
    // On 0.9; of that, computing not allowed 0.4, and GPU computing not
    // allowed while computing is 1 - 0.3 / 0.6 = 0.5 of 0.6.
    let (cpu, gpu) = (share(false), share(true));
    assert!((cpu - 0.9 * 0.4).abs() < 0.05, "{cpu}");
    assert!((gpu - 0.9 * 0.6 * 0.5).abs() < 0.05, "{gpu}");
    for r in &rows {
        for b in &blocked {
            let overlap = r.end.min(b.1) - r.start.max(b.0);
            let excluded = !b.2 || r.resource != "cpu";
            assert!(
                !(excluded && overlap > 1e-6),
                "{r:?} computes in a period where it may not: {b:?}"
            );
        }
    }
}
