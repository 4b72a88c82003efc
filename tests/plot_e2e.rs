//! A sweep's plot as a person sees it: headless Chromium lays out a page
//! that embeds the SVG `vcsim sweep` wrote, measures every text element,
//! and rasterises the SVG into a canvas to count the pixels drawn; the
//! record comes back through `--dump-dom`.
//!
//! Needs Debian's `chromium` (`.ci/run` installs it). Without it the test
//! fails when `CI` is set and is skipped with a message otherwise.

mod common;

use common::browser_or_skip;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A policy whose label (`CS3-INTENDED_WF1-V4_WS2_JC2+share`) is longer
/// than a legend entry shows.
const LONG: &str = "cpu=cs3-intended,fetch=wf1-v4,send=ws2,estimate=jc2,disk=share";

/// The legend's entries for [`LONG`] and `CS2_WF2_WS2_JC2` (the families
/// they differ in, cut in the middle), the caption of what they share, and
/// the x axis's name.
const LONG_SHOWN: &str = "cpu=cs3-intend…v4,disk=share";
const BASE_SHOWN: &str = "cpu=cs2,fetch=wf2,disk=none";
const CAPTION: &str = "every policy: send=ws2, estimate=jc2";
const XDESC: &str = "slack (latency bound ÷ job run time; log scale)";

/// Two days of the base scenario, two policies, a log axis (1 to 60).
fn sweep_file() -> String {
    format!(
        r#"
name = "plot"
scenario = "base.toml"
policies = ["CS2_WF2_WS2_JC2", "{LONG}"]
replications = 2
metrics = ["waste"]

[set]
duration_days = 2

[[axis]]
param = "slack"
values = [1, 2, 3, 5, 10, 20, 60]
"#
    )
}

/// The page: the SVG inline, and a script that records what is drawn.
const PROBE: &str = r#"
<pre id="selftest"></pre>
<script>
(async () => {
  const out = {};
  try {
    const svg = document.querySelector('#plot svg');
    const box = svg.getBoundingClientRect();
    out.svg = [box.x, box.y, box.width, box.height];
    out.texts = [...svg.querySelectorAll('text')].map(t => {
      const r = t.getBoundingClientRect();
      return {text: t.textContent.trim(), x: r.x, y: r.y, w: r.width, h: r.height,
              size: parseFloat(getComputedStyle(t).fontSize)};
    });
    const src = 'data:image/svg+xml;charset=utf-8,' +
      encodeURIComponent(new XMLSerializer().serializeToString(svg));
    const img = new Image();
    await new Promise((ok, no) => {
      img.onload = ok; img.onerror = () => no(new Error('the SVG does not load as an image'));
      img.src = src;
    });
    const c = document.createElement('canvas');
    c.width = img.width; c.height = img.height;
    const g = c.getContext('2d');
    g.fillStyle = '#fff'; g.fillRect(0, 0, c.width, c.height);
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let drawn = 0, coloured = 0;
    for (let i = 0; i < d.length; i += 4) {
      const [r, gr, b] = [d[i], d[i + 1], d[i + 2]];
      if (r < 250 || gr < 250 || b < 250) drawn++;
      if (Math.max(r, gr, b) - Math.min(r, gr, b) > 60) coloured++;
    }
    out.pixels = c.width * c.height; out.drawn = drawn; out.coloured = coloured;
  } catch (e) { out.error = String(e); }
  document.getElementById('selftest').textContent = JSON.stringify(out);
})();
</script>
"#;

fn dump_dom(browser: &Path, page: &Path, profile: &Path) -> String {
    let mut child = Command::new(browser)
        .args(common::HEADLESS)
        .args([
            "--disable-sync",
            "--window-size=900,650",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut buf);
        buf
    });
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    String::from_utf8_lossy(&reader.join().expect("reader")).into_owned()
}

#[derive(Debug)]
struct Box2 {
    text: String,
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    size: f64,
}

fn overlap(a: &Box2, b: &Box2) -> bool {
    a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
}

#[test]
fn a_sweep_plot_is_drawn_legible_with_its_legend_and_axis_labels() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plot-e2e");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("scenarios/paper-base.toml"),
        dir.join("base.toml"),
    )
    .unwrap();
    std::fs::write(dir.join("sweep.toml"), sweep_file()).unwrap();
    let out = common::vcsim(&["sweep", "sweep.toml", "--out", "out"])
        .cwd(&dir)
        .run()
        .out;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(dir.join("out/waste.svg")).unwrap();

    // The SVG's own text: title, axis names with the unit, legend entries
    // naming what differs between the policies, what they share once under
    // the plot, and the whole specs in the entries' <title>s.
    for want in [
        "<title>plot: waste vs slack</title>",
        "waste (fraction of available FLOPs)",
        XDESC,
        &format!("\n{LONG_SHOWN}\n</text>"),
        &format!("\n{BASE_SHOWN}\n</text>"),
        &format!("\n{CAPTION}\n</text>"),
        &format!("<title>{LONG}</title>"),
        "<title>CS2_WF2_WS2_JC2</title>",
    ] {
        assert!(svg.contains(want), "`{want}` is not in the SVG:\n{svg}");
    }

    let page = dir.join("plot.html");
    std::fs::write(
        &page,
        format!("<!doctype html><meta charset=\"utf-8\"><body style=\"margin:0\"><div id=\"plot\">{svg}</div>{PROBE}</body>"),
    )
    .unwrap();
    let dom = dump_dom(&browser, &page, &dir.join("profile"));
    let open = "<pre id=\"selftest\">";
    let at = dom
        .find(open)
        .unwrap_or_else(|| panic!("no record in the page:\n{}", &dom[..dom.len().min(2000)]));
    let rest = &dom[at + open.len()..];
    let json = rest[..rest.find("</pre>").unwrap()]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let r: serde_json::Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert!(r.get("error").is_none(), "{r}");

    // Not blank: drawn pixels, some of them in the series' colours.
    let pixels = r["pixels"].as_f64().unwrap();
    assert_eq!(pixels, 800.0 * 500.0, "{r}");
    let drawn = r["drawn"].as_f64().unwrap();
    assert!(drawn > 0.02 * pixels && drawn < 0.6 * pixels, "{r}");
    assert!(r["coloured"].as_f64().unwrap() > 500.0, "{r}");

    // Text: laid out, legible (13 px or more), inside the picture, and not
    // on top of other text.
    let svg_box = r["svg"].as_array().unwrap();
    let (w, h) = (svg_box[2].as_f64().unwrap(), svg_box[3].as_f64().unwrap());
    let texts: Vec<Box2> = r["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| Box2 {
            text: t["text"].as_str().unwrap().to_string(),
            x: t["x"].as_f64().unwrap(),
            y: t["y"].as_f64().unwrap(),
            w: t["w"].as_f64().unwrap(),
            h: t["h"].as_f64().unwrap(),
            size: t["size"].as_f64().unwrap(),
        })
        .collect();
    let find = |s: &str| {
        texts
            .iter()
            .find(|t| t.text == s)
            .unwrap_or_else(|| panic!("no text `{s}` drawn: {texts:#?}"))
    };
    for s in [
        "plot: waste vs slack",
        "waste (fraction of available FLOPs)",
        XDESC,
        LONG_SHOWN,
        BASE_SHOWN,
        CAPTION,
    ] {
        let t = find(s);
        assert!(t.w > 10.0 && t.h > 10.0, "`{s}` has no size: {t:?}");
    }
    // The title and the axes' names at 15 px or more.
    for s in [
        "plot: waste vs slack",
        "waste (fraction of available FLOPs)",
        XDESC,
    ] {
        let t = find(s);
        assert!(t.size >= 15.0, "`{s}` under 15 px: {t:?}");
    }
    // Log ticks at 1-2-5 values.
    let ticks: Vec<&str> = ["1", "2", "5", "10", "20", "50"].to_vec();
    for s in &ticks {
        find(s);
    }
    assert!(
        !texts
            .iter()
            .any(|t| ["1.6", "2.5", "6.3", "16", "25", "63"].contains(&t.text.as_str())),
        "{texts:#?}"
    );
    for t in &texts {
        assert!(t.size >= 13.0, "text under 13 px: {t:?}");
        assert!(
            t.x >= 0.0 && t.y >= 0.0 && t.x + t.w <= w + 0.5 && t.y + t.h <= h + 0.5,
            "text outside the picture: {t:?}"
        );
    }
    for (i, a) in texts.iter().enumerate() {
        for b in &texts[i + 1..] {
            assert!(!overlap(a, b), "text on text: {a:?} and {b:?}");
        }
    }
}
