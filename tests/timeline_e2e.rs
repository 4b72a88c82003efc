//! The HTML timeline as a person sees it: headless Chromium loads a page
//! written by `vcsim run --timeline`, runs its script, and the page's
//! `#selftest` hook hovers the middle of a job with a real mouse event and
//! records what is on screen (lanes, drawn jobs, the tooltip, the pixel's
//! colour), which `--dump-dom` hands back.
//!
//! Needs Debian's `chromium` (`.ci/run` installs it). Without it the test
//! fails when `CI` is set and is skipped with a message otherwise.

mod common;

use common::browser_or_skip;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("timeline-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes the timeline of `scenario` (with its duration replaced) and
/// returns the page's self-test record.
fn selftest(
    browser: &Path,
    name: &str,
    scenario: &str,
    days: u32,
    hash: &str,
) -> serde_json::Value {
    let dir = tmp(name);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(scenario)).unwrap();
    let text = text
        .lines()
        .map(|l| {
            if l.starts_with("duration_days") {
                format!("duration_days = {days}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(dir.join("s.toml"), text).unwrap();
    let html = dir.join("tl.html");
    let out = common::vcsim(&["run", "s.toml", "--timeline", "tl.html"])
        .cwd(&dir)
        .run()
        .out;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "the page loads nothing from the network"
    );

    let profile = dir.join("profile");
    let url = format!("file://{}{hash}", html.display());
    let mut child = Command::new(browser)
        .args(common::HEADLESS)
        .args(["--window-size=1200,800", "--virtual-time-budget=5000"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(&url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    // Read the dump while Chromium writes it: the page is larger than a pipe.
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut buf);
        buf
    });
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let stdout = reader.join().expect("reader");
    let dom = String::from_utf8_lossy(&stdout);
    let open = "<pre id=\"selftest\">";
    let at = dom.find(open).unwrap_or_else(|| {
        panic!(
            "no self-test record in the page:\n{}",
            &dom[..dom.len().min(2000)]
        )
    });
    let rest = &dom[at + open.len()..];
    let json = &rest[..rest.find("</pre>").unwrap()];
    let json = json
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

#[test]
fn lanes_are_drawn_and_hovering_a_job_shows_its_details() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let r = selftest(
        &browser,
        "mix",
        "scenarios/mix-5-slack-5.toml",
        3,
        "#selftest",
    );
    assert_eq!(r["lanes"], 2, "a lane per CPU: {r}");
    assert_eq!(r["lane_labels"], 2, "{r}");
    assert!(r["drawn"].as_u64().unwrap() > 0, "{r}");
    let tip = r["tooltip"]
        .as_str()
        .unwrap_or_else(|| panic!("no tooltip: {r}"));
    let job = r["hovered_job"].as_u64().unwrap();
    assert!(tip.starts_with(&format!("job {job} · project P")), "{tip}");
    assert!(
        tip.contains("deadline") && tip.contains("EDF mode:") && tip.contains("reported late:"),
        "{tip}"
    );
    assert_eq!(
        r["pixel_matches_project"], true,
        "the job is drawn in its project's colour: {r}"
    );
}

#[test]
fn a_hundred_day_run_is_aggregated_and_still_answers_hover() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let r = selftest(
        &browser,
        "long",
        "scenarios/paper-base.toml",
        100,
        "#selftest",
    );
    assert_eq!(r["lanes"], 2, "{r}");
    assert!(r["segments"].as_u64().unwrap() > 1000, "{r}");
    assert!(
        r["aggregated"].as_u64().unwrap() > 0,
        "zoomed out, jobs are aggregated: {r}"
    );
    assert!(
        r["tooltip"].as_str().is_some_and(|t| t.starts_with("job ")),
        "{r}"
    );
    let z = selftest(
        &browser,
        "long-zoom",
        "scenarios/paper-base.toml",
        100,
        "#selftest-zoom",
    );
    assert!(
        z["tooltip"].as_str().is_some_and(|t| t.starts_with("job ")),
        "{z}"
    );
    assert_eq!(z["pixel_matches_project"], true, "{z}");
}

#[test]
fn a_four_cpu_job_is_drawn_on_four_lanes() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let r = selftest(
        &browser,
        "four-cpus",
        "scenarios/today-multi-threaded.toml",
        2,
        "#selftest-widest",
    );
    assert_eq!(r["lanes"], 4, "a lane per CPU: {r}");
    assert_eq!(
        r["hovered_lanes"], 4,
        "the 4-CPU job covers four lanes: {r}"
    );
    assert_eq!(
        r["lanes_in_colour"], 4,
        "in its project's colour on each: {r}"
    );
    let tip = r["tooltip"]
        .as_str()
        .unwrap_or_else(|| panic!("no tooltip: {r}"));
    assert!(
        tip.contains("project A · CPU 0, CPU 1, CPU 2, CPU 3") && tip.contains("holds 4 CPUs"),
        "{tip}"
    );
}

#[test]
fn an_explained_run_shows_reasons_on_hover_and_plots_under_the_lanes() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let r = selftest(
        &browser,
        "why",
        "scenarios/mix-5-slack-5.toml",
        3,
        "#selftest",
    );
    assert_eq!(
        r["plots"],
        serde_json::json!(["share-plot", "rank-plot"]),
        "the share and ranking plots under the lanes: {r}"
    );
    assert_eq!(r["plot_label_count"], 2, "{r}");
    // A bar: the CPU scheduler's decision that started it, and why.
    let tip = r["tooltip"]
        .as_str()
        .unwrap_or_else(|| panic!("no tooltip: {r}"));
    let job = r["hovered_job"].as_u64().unwrap();
    assert!(tip.contains("\ndecision: start"), "{tip}");
    assert!(tip.contains(&format!("job {job} (P")), "{tip}");
    let why = tip
        .split("\nwhy: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no reason: {tip}"));
    assert!(
        why.contains("short-term debt") || why.contains("EDF"),
        "CS2's reason: {tip}"
    );
    // An RPC tick: the request with the fetcher's reason, and the outcome.
    let rpc = r["rpc_tooltip"]
        .as_str()
        .unwrap_or_else(|| panic!("no RPC tooltip: {r}"));
    assert!(rpc.starts_with("RPC to P"), "{rpc}");
    assert!(
        rpc.contains("\nfetch: RPC to P") && rpc.contains(" asking for "),
        "{rpc}"
    );
    assert!(rpc.contains("\n    why: "), "WF2's reason: {rpc}");
    assert!(
        rpc.contains("\noutcome: P")
            && (rpc.contains(" replied with ") || rpc.contains(" not reached")),
        "{rpc}"
    );
    // The share plot: each project against its resource share.
    let plot = r["plot_tooltip"]
        .as_str()
        .unwrap_or_else(|| panic!("no plot tooltip: {r}"));
    assert!(
        plot.starts_with("share of the work done so far at "),
        "{plot}"
    );
    for p in 1..=5 {
        assert!(plot.contains(&format!("\nP{p}: ")), "{plot}");
    }
    assert!(
        plot.contains("(resource share 20%)") && plot.contains("share violation so far: "),
        "{plot}"
    );

    // A hundred days, zoomed out: the plots aggregate pixel columns.
    let long = selftest(
        &browser,
        "why-long",
        "scenarios/mix-5-slack-5.toml",
        100,
        "#selftest",
    );
    assert_eq!(long["plots"].as_array().map(Vec::len), Some(2), "{long}");
    assert!(
        long["plot_columns"].as_u64().unwrap() > 0,
        "zoomed out, the plots' lines are aggregated: {long}"
    );
}
