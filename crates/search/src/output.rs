//! What a search writes: `worst.toml` (the shrunk scenario, with a comment
//! saying what was searched and what it shows), `trail.csv` (every point
//! evaluated) and `best.svg` (the worst loss found against runs spent).

use crate::evaluate::Contest;
use crate::method::Visit;
use crate::space::Space;
use plotters::prelude::*;
use std::path::Path;
use vcsim_framework::Scenario;

/// The shrunk scenario as TOML that `run`, `compare` and `diverge` take,
/// after a comment block. Its command to check the finding runs as written
/// from where the search ran: `worst` is where the file goes, `plugins` the
/// libraries the search loaded.
pub fn worst_toml(
    space: &Space,
    contest: &Contest,
    scn: &Scenario,
    found: &Visit,
    budget: u64,
    worst: &Path,
    plugins: &[std::path::PathBuf],
) -> Result<String, String> {
    let o = found.scored.as_ref().map_err(Clone::clone)?;
    let [a, b] = &contest.policies;
    let mut out = String::new();
    let mut say = |s: String| {
        out.push_str("# ");
        out.push_str(&s);
        out.push('\n');
    };
    say(format!(
        "Found by `vcsim search` in the space `{}` (base scenario {}), within {budget} runs.",
        space.name,
        space.scenario_path.display()
    ));
    say(format!(
        "Here {} is worse than {} on {}: by {:.6} [{:.6}, {:.6}] (95% interval of the",
        a.label(),
        b.label(),
        contest.metric,
        o.mean,
        o.low,
        o.high
    ));
    say(format!(
        "paired difference over {} seeds from {}). Shrunk to: {}.",
        contest.seeds,
        scn.seed,
        found.point.describe(space)
    ));
    say("Check it with:".into());
    let mut command = vec!["vcsim".to_string()];
    for lib in plugins {
        command.push("--plugin".into());
        command.push(shell_word(&lib.to_string_lossy())?);
    }
    command.push("compare".into());
    command.push(shell_word(&worst.to_string_lossy())?);
    for p in [b, a] {
        command.push("--policy".into());
        command.push(shell_word(&p.display())?);
    }
    command.push(format!("--replications {}", contest.seeds));
    say(format!("  {}", command.join(" ")));
    out.push('\n');
    let mut scn = scn.clone();
    scn.name = format!("{}-worst", space.name);
    scn.description = format!(
        "Where {} loses most to {} on {} in `{}`, shrunk: {} (from {})",
        a.label(),
        b.label(),
        contest.metric,
        space.name,
        found.point.describe(space),
        space.base.name
    );
    let body = toml::to_string(&scn).map_err(|e| format!("cannot write the scenario: {e}"))?;
    out.push_str(&body);
    Ok(out)
}

/// `s` quoted for a POSIX shell (plain words as they are).
fn shell_word(s: &str) -> Result<String, String> {
    shlex::try_quote(s).map(|q| q.into_owned()).map_err(|_| {
        format!(
            "`{}` holds a NUL byte: no shell can take it",
            s.escape_debug()
        )
    })
}

/// Every evaluated point: its parameters, runs spent, the loss and its
/// interval, and whether it is significant.
pub fn trail_csv(space: &Space, trail: &[Visit]) -> Result<String, String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut head: Vec<String> = vec!["index".into(), "phase".into()];
    head.extend(space.dims.iter().map(|d| d.param.name().to_string()));
    head.extend(
        [
            "duration_days",
            "projects",
            "no_gpu",
            "runs",
            "loss",
            "ci_low",
            "ci_high",
            "significant",
            "error",
        ]
        .map(String::from),
    );
    let e = |e: csv::Error| e.to_string();
    w.write_record(&head).map_err(e)?;
    for (i, v) in trail.iter().enumerate() {
        let mut row: Vec<String> = vec![i.to_string(), v.phase.to_string()];
        row.extend(
            v.point
                .values
                .iter()
                .map(|x| x.map_or(String::new(), |x| x.text())),
        );
        row.push(v.point.duration_days.to_string());
        row.push(v.point.projects.map_or(String::new(), |n| n.to_string()));
        row.push(v.point.no_gpu.to_string());
        row.push(v.runs.to_string());
        match &v.scored {
            Ok(o) => {
                // Shortest round trip: `vcsim merge` reads the trail back.
                row.extend([o.mean, o.low, o.high].map(|x| format!("{x}")));
                row.push(o.significant().to_string());
                row.push(String::new());
            }
            Err(m) => {
                row.extend([String::new(), String::new(), String::new(), "false".into()]);
                row.push(m.clone());
            }
        }
        w.write_record(&row).map_err(e)?;
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

/// The worst significant loss found so far against runs spent (a step
/// line; nothing before the first significant loss).
pub fn best_svg(contest: &Contest, trail: &[Visit], path: &Path) -> Result<(), String> {
    let mut pts: Vec<(f64, f64)> = Vec::new();
    let mut best = f64::NEG_INFINITY;
    for v in trail.iter().filter(|v| v.phase != "shrink") {
        if let Ok(o) = v.scored {
            if o.significant() && o.mean > best {
                if let Some(&(_, y)) = pts.last() {
                    pts.push((v.runs as f64, y));
                }
                best = o.mean;
                pts.push((v.runs as f64, best));
            }
        }
    }
    let runs = trail
        .iter()
        .filter(|v| v.phase != "shrink")
        .map(|v| v.runs)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    if let Some(&(_, y)) = pts.last() {
        pts.push((runs, y));
    }
    let ymax = if best.is_finite() && best > 0.0 {
        best * 1.1
    } else {
        1.0
    };
    let err = |e: &dyn std::fmt::Display| format!("cannot draw {}: {e}", path.display());
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let [a, b] = &contest.policies;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "How much worse {} is than {} on {}",
                a.label(),
                b.label(),
                contest.metric
            ),
            ("sans-serif", 19),
        )
        .margin(16)
        .margin_right(40)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(0.0..runs, 0.0..ymax)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("runs spent")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc(format!("worst significant loss ({})", contest.metric))
        .label_style(("sans-serif", 17))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(|e| err(&e))?;
    if !pts.is_empty() {
        chart
            .draw_series(LineSeries::new(pts, BLUE.stroke_width(2)))
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// Reads back a trail that [`trail_csv`] wrote for `space` (a shard's, for
/// `vcsim merge`).
pub fn read_trail(space: &Space, text: &str) -> Result<Vec<Visit>, String> {
    use crate::evaluate::Outcome;
    use crate::point::Point;
    use crate::space::{Range, Value};
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let nd = space.dims.len();
    let head = r.headers().map_err(|e| e.to_string())?.clone();
    let want = trail_csv(space, &[])?;
    if want.trim_end() != head.iter().collect::<Vec<_>>().join(",") {
        return Err(format!(
            "its columns are not those of this space: `{}`",
            head.iter().collect::<Vec<_>>().join(",")
        ));
    }
    let mut out = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| format!("row {}: {e}", i + 2))?;
        let bad = |what: &str| format!("row {}: {what}", i + 2);
        let field = |k: usize| rec.get(k).unwrap_or("");
        let phase = match field(1) {
            "random" => "random",
            "local" => "local",
            "restart" => "restart",
            "shrink" => "shrink",
            _ => return Err(bad("an unknown phase")),
        };
        let mut values = Vec::with_capacity(nd);
        for (k, d) in space.dims.iter().enumerate() {
            let t = field(2 + k);
            values.push(if t.is_empty() {
                None
            } else {
                Some(match d.range {
                    Range::Int(..) => Value::Int(t.parse().map_err(|_| bad("a bad integer"))?),
                    Range::Float(..) => Value::Float(t.parse().map_err(|_| bad("a bad number"))?),
                })
            });
        }
        let num = |k: usize| field(k).parse::<f64>().map_err(|_| bad("a bad number"));
        let at = 2 + nd;
        let point = Point {
            values,
            duration_days: num(at)?,
            projects: match field(at + 1) {
                "" => None,
                t => Some(t.parse().map_err(|_| bad("a bad project count"))?),
            },
            no_gpu: field(at + 2) == "true",
        };
        let runs = field(at + 3).parse().map_err(|_| bad("a bad run count"))?;
        let error = field(at + 8);
        let scored = if error.is_empty() {
            Ok(Outcome {
                mean: num(at + 4)?,
                low: num(at + 5)?,
                high: num(at + 6)?,
            })
        } else {
            Err(error.to_string())
        };
        out.push(Visit {
            phase,
            point,
            scored,
            runs,
        });
    }
    Ok(out)
}
