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
/// libraries the search loaded. `shrunk` says whether shrinking tried a
/// variant (its budget may have been less than one batch).
#[allow(clippy::too_many_arguments)]
pub fn worst_toml(
    space: &Space,
    contest: &Contest,
    scn: &Scenario,
    found: &Visit,
    budget: u64,
    worst: &Path,
    plugins: &[std::path::PathBuf],
    shrunk: bool,
) -> Result<String, String> {
    let o = found.scored.as_ref().map_err(Clone::clone)?;
    let [a, b] = &contest.policies;
    let mut out = String::new();
    // Each line stays a comment: a control character (a line break in a
    // path) is written escaped, never raw.
    let mut say = |s: String| {
        out.push_str("# ");
        out.push_str(&vcsim_framework::text::escape_controls(&s));
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
        "paired difference over {} seeds from {}). {}: {}.",
        contest.seeds,
        scn.seed,
        if shrunk {
            "Shrunk to"
        } else {
            "Not shrunk (its budget was less than one batch of variants)"
        },
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

/// Checks, before the first run, that `dir` can take the search's outputs
/// `names` (see `vcsim_sweep::prepare_outputs`).
pub fn prepare_out(dir: &Path, names: &[&str]) -> Result<(), String> {
    vcsim_sweep::prepare_outputs(dir, "search", names)
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
                vcsim_framework::text::escape_controls(&a.label()),
                vcsim_framework::text::escape_controls(&b.label()),
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
/// `vcsim merge`), checking each row against what a search of `space` can
/// write, a point costing `per` runs: indexes in order, a known phase
/// (`shrink` only if `with_shrink`: a shard does not shrink), values
/// within their ranges, the search's run length, finite losses whose
/// `significant` agrees with their interval, and runs spent growing by 0
/// (a point that could not run) or `per`. An error names the line.
pub fn read_trail(
    space: &Space,
    text: &str,
    per: u64,
    with_shrink: bool,
) -> Result<Vec<Visit>, String> {
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
    let mut runs_before = 0u64;
    for (i, rec) in r.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| format!("line {line}: {e}"))?;
        let bad = |what: String| format!("line {line}: {what}");
        let field = |k: usize| rec.get(k).unwrap_or("");
        // A value as written, short and with its control characters
        // escaped, for a message.
        let shown = |t: &str| -> String {
            let t: String = t.chars().flat_map(char::escape_debug).collect();
            if t.chars().count() > 40 {
                format!("{}...", t.chars().take(40).collect::<String>())
            } else {
                t
            }
        };
        if field(0) != i.to_string() {
            return Err(bad(format!(
                "index `{}`, but this is row {i} (the trail is numbered from 0)",
                shown(field(0))
            )));
        }
        let phase = match field(1) {
            "random" => "random",
            "local" => "local",
            "restart" => "restart",
            "shrink" if with_shrink => "shrink",
            "shrink" => return Err(bad("phase `shrink`, but a shard does not shrink".into())),
            t => return Err(bad(format!("an unknown phase `{}`", shown(t)))),
        };
        let searched = phase != "shrink";
        let mut values = Vec::with_capacity(nd);
        for (k, d) in space.dims.iter().enumerate() {
            let t = field(2 + k);
            let name = d.param.name();
            if t.is_empty() {
                if searched {
                    return Err(bad(format!(
                        "no value of `{name}`: the search sets every parameter"
                    )));
                }
                values.push(None);
                continue;
            }
            let v = match d.range {
                Range::Int(..) => Value::Int(
                    t.parse()
                        .map_err(|_| bad(format!("`{name}` = `{}` is not an integer", shown(t))))?,
                ),
                Range::Float(..) => {
                    Value::Float(t.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(
                        || bad(format!("`{name}` = `{}` is not a finite number", shown(t))),
                    )?)
                }
            };
            let inside = match (d.range, v) {
                (Range::Int(lo, hi), Value::Int(x)) => (lo..=hi).contains(&x),
                (Range::Float(lo, hi), Value::Float(x)) => (lo..=hi).contains(&x),
                _ => false,
            };
            if !inside {
                let [lo, hi] = d.ends();
                return Err(bad(format!(
                    "`{name}` = {} is outside the space's range {}..{}",
                    v.text(),
                    lo.text(),
                    hi.text()
                )));
            }
            values.push(Some(v));
        }
        let at = 2 + nd;
        let number = |k: usize, what: &str| -> Result<f64, String> {
            field(k)
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    bad(format!(
                        "{what} `{}` is not a finite number",
                        shown(field(k))
                    ))
                })
        };
        let duration_days = number(at, "duration_days")?;
        let days = space.base.duration_days;
        if (searched && duration_days != days) || !(duration_days > 0.0 && duration_days <= days) {
            return Err(bad(format!(
                "duration_days {}, but the search's runs last {} days",
                Value::Float(duration_days).text(),
                Value::Float(days).text()
            )));
        }
        let projects = match field(at + 1) {
            "" => None,
            t if !searched => Some(
                t.parse::<usize>()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| bad(format!("a bad project count `{}`", shown(t))))?,
            ),
            t => {
                return Err(bad(format!(
                    "a project count `{}` in phase `{phase}`: only shrinking keeps fewer projects",
                    shown(t)
                )))
            }
        };
        let no_gpu = match field(at + 2) {
            "false" => false,
            "true" if !searched => true,
            t => {
                return Err(bad(format!(
                    "no_gpu `{}` (`false`{})",
                    shown(t),
                    if searched {
                        " in a searched point"
                    } else {
                        " or `true`"
                    }
                )))
            }
        };
        let runs: u64 = field(at + 3)
            .parse()
            .map_err(|_| bad(format!("a bad run count `{}`", shown(field(at + 3)))))?;
        let error = field(at + 8);
        let step = runs.checked_sub(runs_before);
        let step_ok = match step {
            Some(s) if s == per => true,
            Some(0) => !error.is_empty(),
            _ => false,
        };
        if !step_ok {
            return Err(bad(format!(
                "runs {runs} after {runs_before}: a point costs {per} runs (0 if it could not run)"
            )));
        }
        runs_before = runs;
        let significant = field(at + 7);
        let scored = if error.is_empty() {
            let o = Outcome {
                mean: number(at + 4, "loss")?,
                low: number(at + 5, "ci_low")?,
                high: number(at + 6, "ci_high")?,
            };
            let short = |x: f64| Value::Float(x).text();
            if !(o.low <= o.mean && o.mean <= o.high) {
                return Err(bad(format!(
                    "loss {} is outside its interval [{}, {}]",
                    short(o.mean),
                    short(o.low),
                    short(o.high)
                )));
            }
            if significant != o.significant().to_string() {
                return Err(bad(format!(
                    "significant `{}`, but the interval [{}, {}] says {}",
                    shown(significant),
                    short(o.low),
                    short(o.high),
                    o.significant()
                )));
            }
            Ok(o)
        } else {
            if (at + 4..at + 7).any(|k| !field(k).is_empty()) || significant != "false" {
                return Err(bad(
                    "a loss beside an error: a point that could not be measured has none".into(),
                ));
            }
            Err(error.to_string())
        };
        out.push(Visit {
            phase,
            point: Point {
                values,
                duration_days,
                projects,
                no_gpu,
            },
            scored,
            runs,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::Outcome;
    use crate::point::Point;
    use vcsim_framework::{PolicySpec, Registry};

    fn space(path: &str) -> Space {
        vcsim_builtin::link();
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/paper-base.toml");
        let mut base = Scenario::load(&file).unwrap();
        base.duration_days = 5.0;
        Space::around(base, std::path::PathBuf::from(path))
    }

    /// A shard's trail of `n` points of `space`, a loss at each.
    fn trail(space: &Space, n: usize) -> Vec<Visit> {
        (0..n)
            .map(|i| Visit {
                phase: "random",
                point: Point::of(
                    space,
                    space.dims.iter().map(|d| Some(d.ends()[i % 2])).collect(),
                ),
                scored: Ok(Outcome {
                    mean: 0.5,
                    low: 0.25 - i as f64,
                    high: 0.75,
                }),
                runs: 10 * (i as u64 + 1),
            })
            .collect()
    }

    #[test]
    fn a_comment_line_never_breaks_into_toml() {
        // A line break in a path of the comment started live TOML lines.
        let space = space("base\ny = 1\n[evil]\u{7}.toml");
        let reg = Registry::builtins().unwrap();
        let contest = Contest {
            registry: &reg,
            policies: [
                PolicySpec::parse("CS1").unwrap(),
                PolicySpec::parse("CS2").unwrap(),
            ],
            metric: "waste".into(),
            seeds: 2,
        };
        let v = &trail(&space, 1)[0];
        let scn = v.point.scenario(&space).unwrap();
        let text = worst_toml(
            &space,
            &contest,
            &scn,
            v,
            100,
            Path::new("out\n[evil2]/worst.toml"),
            &[],
            true,
        )
        .unwrap();
        let head: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
        assert!(head.len() >= 5, "{text}");
        for l in &head {
            assert!(l.starts_with("# "), "{l:?} in {text}");
        }
        assert!(!text.contains('\u{7}'), "{text}");
        let t: toml::Table = text.parse().unwrap();
        assert!(!t.contains_key("evil") && !t.contains_key("evil2") && !t.contains_key("y"));
    }

    #[test]
    fn a_trail_reads_back_only_as_a_search_writes_it() {
        let space = space("base.toml");
        let good = trail_csv(&space, &trail(&space, 3)).unwrap();
        let back = read_trail(&space, &good, 10, false).unwrap();
        assert_eq!(trail_csv(&space, &back).unwrap(), good);
        let lines: Vec<&str> = good.lines().collect();
        let head = lines[0];
        let col = |name: &str| head.split(',').position(|h| h == name).unwrap();
        // Line 3 (the second point) with column `name` set to `value`.
        let edited = |name: &str, value: &str| {
            let mut row: Vec<String> = lines[2].split(',').map(String::from).collect();
            row[col(name)] = value.to_string();
            let mut l = lines.clone();
            let row = row.join(",");
            l[2] = &row;
            read_trail(&space, &(l.join("\n") + "\n"), 10, false).unwrap_err()
        };
        for (name, value, needle) in [
            ("loss", "NaN", "line 3: loss `NaN` is not a finite number"),
            ("ci_low", "-inf", "ci_low `-inf` is not a finite number"),
            ("loss", "1e300", "loss 1e300 is outside its interval"),
            (
                "mix",
                "999",
                "`mix` = 999 is outside the space's range 1..6",
            ),
            ("slack", "nan", "`slack` = `nan` is not a finite number"),
            ("index", "7", "index `7`, but this is row 1"),
            ("phase", "shrink", "a shard does not shrink"),
            (
                "significant",
                "true",
                "significant `true`, but the interval",
            ),
            ("runs", "25", "runs 25 after 10: a point costs 10 runs"),
            (
                "duration_days",
                "20",
                "duration_days 20, but the search's runs last 5 days",
            ),
            ("projects", "1", "only shrinking keeps fewer projects"),
            ("no_gpu", "true", "no_gpu `true`"),
            ("host.ncpus", "", "no value of `host.ncpus`"),
        ] {
            let e = edited(name, value);
            assert!(e.contains(needle), "{name}={value}: {e}");
        }
        // A point that could not run costs nothing, or its runs; never a loss.
        let mut v = trail(&space, 2);
        v[1].scored = Err("no".into());
        for (runs, ok) in [(10, true), (20, true), (15, false)] {
            v[1].runs = runs;
            let r = read_trail(&space, &trail_csv(&space, &v).unwrap(), 10, false);
            assert_eq!(r.is_ok(), ok, "{runs}: {r:?}");
        }
    }

    #[test]
    fn an_output_in_the_place_of_a_directory_is_refused() {
        let dir = std::env::temp_dir().join(format!("vcsim-search-out-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("trail.csv")).unwrap();
        let e = prepare_out(&dir, &["best.svg", "trail.csv"]).unwrap_err();
        assert!(
            e.contains("trail.csv: cannot write the search's `trail.csv` there: it is a directory"),
            "{e}"
        );
        std::fs::remove_dir(dir.join("trail.csv")).unwrap();
        std::fs::write(dir.join("trail.csv"), "x").unwrap();
        prepare_out(&dir, &["best.svg", "trail.csv"]).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("trail.csv")).unwrap(), "x");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
