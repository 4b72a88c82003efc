//! A small sweep's plot, as written and as a browser draws it: the SVG
//! names the axes with their units and holds the legend's entries (the
//! policies' labels), the whole specs kept in `<title>`s; then headless
//! Chromium takes a screenshot of it, which must not be blank.
//!
//! The screenshot needs Debian's `chromium` (`.ci/run` installs it), found
//! as `tests/timeline_e2e.rs` finds it. Without it that part fails when
//! `CI` is set and is skipped with a message otherwise.

mod common;

use common::browser_or_skip;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A policy whose spec is too long for a legend: a script deep in a
/// directory, and every other family named.
const SCRIPT: &str = "my/own/policies/least_slack.rhai";
fn long_spec() -> String {
    format!("cpu={SCRIPT},fetch=wf2,send=ws2,estimate=jc2,disk=none")
}

/// Two days of the base scenario, two values of slack, one replication.
fn sweep_file() -> String {
    format!(
        r#"
name = "render"
scenario = "base.toml"
policies = ["CS2_WF2_WS2_JC2", "{}"]
replications = 1
metrics = ["waste", "rpcs_per_job"]

[set]
duration_days = 2

[[axis]]
param = "slack"
values = [2, 5]
"#,
        long_spec()
    )
}

/// Width and height from a PNG's header.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&png[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&png[16..20]), be(&png[20..24]))
}

/// Chromium's screenshot of `url` at 900 x 650.
fn screenshot(browser: &Path, url: &str, png: &Path, profile: &Path) -> Vec<u8> {
    let _ = std::fs::remove_file(png);
    let mut child = Command::new(browser)
        .args(common::HEADLESS)
        .args([
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=900,650",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(url)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::read(png).unwrap_or_else(|e| panic!("no screenshot {}: {e}", png.display()))
}

#[test]
fn a_small_sweeps_plot_has_units_a_short_legend_and_is_drawn() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plot-render");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join(SCRIPT).parent().unwrap()).unwrap();
    let root = common::root();
    std::fs::copy(
        root.join("scenarios/paper-base.toml"),
        dir.join("base.toml"),
    )
    .unwrap();
    std::fs::copy(root.join("policies/least_slack.rhai"), dir.join(SCRIPT)).unwrap();
    std::fs::write(dir.join("sweep.toml"), sweep_file()).unwrap();
    common::vcsim(&["sweep", "sweep.toml", "--out", "out", "--jobs", "1"])
        .cwd(&dir)
        .run()
        .succeeds();
    let waste = std::fs::read_to_string(dir.join("out/waste.svg")).unwrap();
    let rpcs = std::fs::read_to_string(dir.join("out/rpcs_per_job.svg")).unwrap();

    // The axes with their units; a linear axis of two values.
    for (svg, want) in [
        (&waste, "\nwaste (fraction of available FLOPs)\n</text>"),
        (&rpcs, "\nRPCs per job\n</text>"),
        (&waste, "\nslack (latency bound ÷ job run time)\n</text>"),
        (&waste, "<title>render: waste vs slack</title>"),
    ] {
        assert!(svg.contains(want), "`{want}` is not in the SVG:\n{svg}");
    }
    // The legend: the policies' labels (the script by its stem), the whole
    // spec in the <title> of an entry whose label is not its spec, and no
    // entry with the whole long spec. Labels that fit need no caption.
    let long = long_spec();
    for want in [
        "\nleast_slack_WF2_WS2_JC2\n</text>".to_string(),
        "\nCS2_WF2_WS2_JC2\n</text>".to_string(),
        format!("<g><title>{long}</title><text"),
    ] {
        assert!(
            waste.contains(&want),
            "`{want}` is not in the SVG:\n{waste}"
        );
    }
    assert!(!waste.contains(&format!("\n{long}\n</text>")));
    assert!(!waste.contains("every policy"), "{waste}");
    // Legible: tick labels at 13 px or more, the axes' names at 15 or more.
    for size in waste.split("font-size=\"").skip(1) {
        let px: f64 = size[..size.find('"').unwrap()].parse().unwrap();
        assert!(px >= 13.0, "text of {px} px");
    }
    let name_px = |name: &str| -> f64 {
        let at = waste.find(&format!("\n{name}\n</text>")).unwrap();
        let open = &waste[waste[..at].rfind("<text").unwrap()..at];
        let size = open.split("font-size=\"").nth(1).unwrap();
        size[..size.find('"').unwrap()].parse().unwrap()
    };
    assert!(name_px("waste (fraction of available FLOPs)") >= 15.0);
    assert!(name_px("slack (latency bound ÷ job run time)") >= 15.0);

    // As a browser draws it: not blank. A screenshot of a white page of the
    // same size compresses to almost nothing; the plot's must be much
    // larger.
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let blank = dir.join("blank.svg");
    std::fs::write(
        &blank,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"500\"><rect width=\"800\" height=\"500\" fill=\"white\"/></svg>",
    )
    .unwrap();
    let profile = dir.join("profile");
    let plain = screenshot(
        &browser,
        &format!("file://{}", blank.display()),
        &dir.join("blank.png"),
        &profile,
    );
    let png = screenshot(
        &browser,
        &format!("file://{}", dir.join("out/waste.svg").display()),
        &dir.join("waste.png"),
        &profile,
    );
    assert_eq!(png_size(&png), (900, 650));
    assert_eq!(png_size(&plain), (900, 650));
    assert!(
        png.len() > 8_000 && png.len() > 4 * plain.len(),
        "the screenshot {} looks blank: {} bytes (a blank page: {} bytes)",
        dir.join("waste.png").display(),
        png.len(),
        plain.len()
    );
}
