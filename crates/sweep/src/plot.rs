//! One SVG per metric: a line per policy (and per value of a second axis)
//! against the first axis, with its 95% interval as a band. Drawn with
//! plotters' SVG backend only: text is written as SVG `<text>`, so no font
//! is needed at build or run time.
//!
//! Made to be read at its natural size (800 x 500) and in the book: text of
//! about 14 px, the y axis named with its unit, a log axis ticked at 1-2-5
//! values, and the legend in a band of its own under the title, where it
//! cannot hide data. A legend entry shows at most [`LEGEND_CHARS`]
//! characters of a policy's name; the whole name is kept in a `<title>` on
//! the entry (a tooltip in browsers).

use crate::data::{value_label, Definition};
use crate::summary::SummaryLine;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use vcsim_framework::metrics::round6;

const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

const WIDTH: u32 = 800;
const HEIGHT: u32 = 500;
/// Font sizes as plotters takes them: its SVG backend writes `size / 1.24`,
/// so 17 is drawn at 13.7 px and 22 at 17.7 px.
const TEXT: f64 = 17.0;
const TITLE: f64 = 22.0;
/// [`TEXT`] as drawn, in pixels.
const TEXT_PX: f64 = TEXT / 1.24;

/// The width of `s` drawn at [`TEXT`], from Helvetica's (and Arial's,
/// Liberation Sans's) advance widths by kind of character, rounded up: for
/// laying out the legend without a font at hand.
fn text_px(s: &str) -> f64 {
    let em: f64 = s
        .chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' => 0.28,
            ' ' | 'f' | 't' | 'r' | '/' | '(' | ')' | '[' | ']' | '-' => 0.34,
            'm' | 'w' => 0.84,
            'M' | 'W' => 0.95,
            '0'..='9' | '_' | '=' | '+' | '<' | '>' | '…' | '~' => 0.6,
            'a'..='z' => 0.56,
            'A'..='Z' => 0.72,
            _ => 0.8,
        })
        .sum();
    em * TEXT_PX
}
/// The most characters of a policy's name a legend entry shows.
pub const LEGEND_CHARS: usize = 28;

/// The y axis's name for a metric, with its unit.
pub fn metric_label(metric: &str) -> String {
    match metric {
        "waste" => "waste (fraction of available FLOPs)",
        "idleness" => "idleness (fraction of available FLOPs)",
        "share_violation" => "share violation (Σ|F_p−F·s_p|/F)",
        "monotony" => "monotony (0–1)",
        "rpcs" => "scheduler RPCs per run",
        "rpcs_per_job" => "RPCs per job",
        "jobs_on_time" => "jobs reported on time per run",
        "jobs_late" => "jobs reported late per run",
        other => other,
    }
    .to_string()
}

/// `s` cut to `max` characters, the last of them an ellipsis.
pub fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Ticks of a log axis from `lo` to `hi` (both above 0): the 1-2-5 values
/// of every decade when there are at most 10 of them, else the powers of
/// ten (every other one, or fewer, beyond 10 decades).
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let within = |x: f64| x >= lo * (1.0 - 1e-9) && x <= hi * (1.0 + 1e-9);
    let pick = |mantissas: &[f64], every: i32| -> Vec<f64> {
        (k0..=k1)
            .filter(|k| (k - k0) % every == 0)
            .flat_map(|k| mantissas.iter().map(move |m| round6(m * 10f64.powi(k))))
            .filter(|x| within(*x))
            .collect()
    };
    let ticks = pick(&[1.0, 2.0, 5.0], 1);
    if ticks.len() <= 10 {
        return ticks;
    }
    let every = (k1 - k0) / 10 + 1;
    pick(&[1.0], every)
}

/// Ticks of a linear axis from `lo` to `hi`: multiples of 1, 2 or 5 times a
/// power of ten, at most 10 of them.
pub fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = hi - lo;
    if span.is_nan() || span <= 0.0 || span.is_infinite() {
        return vec![lo];
    }
    let mag = 10f64.powf((span / 10.0).log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 10.0)
        .unwrap_or(10.0 * mag);
    let first = (lo / step - 1e-9).ceil();
    (0..)
        .map(|i| round6((first + i as f64) * step))
        .take_while(|x| *x <= hi + step * 1e-9)
        .take(11)
        .collect()
}

/// A linear f64 axis ticked exactly at the given values (plotters' own
/// f64 axis picks its ticks itself; its `with_key_points` loses the default
/// label formatting the mesh needs).
struct Ticked {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;
    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(v, limit)
    }
    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }
    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

struct Series {
    /// The name shown in the legend, and the whole one when it is cut.
    shown: String,
    full: String,
    /// (x, mean, low, high)
    points: Vec<(f64, f64, f64, f64)>,
}

/// The plot of `metric` as SVG text.
pub fn svg(def: &Definition, metric: &str, summary: &[SummaryLine]) -> String {
    match draw(def, metric, summary) {
        Ok(s) => s,
        Err(e) => format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"100\"><text x=\"10\" y=\"50\" font-size=\"14\">cannot plot {metric}: {}</text></svg>\n",
            escape(&e)
        ),
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

fn draw(def: &Definition, metric: &str, summary: &[SummaryLine]) -> Result<String, String> {
    let axis = def
        .axes
        .first()
        .ok_or("the sweep has no axis to plot against")?;
    let numeric: Option<Vec<f64>> = axis.values.iter().map(|v| v.as_f64()).collect();
    let log = numeric.as_ref().is_some_and(|xs| {
        let lo = xs.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        lo > 0.0 && hi / lo >= 50.0
    });
    let labels0: Vec<String> = axis.values.iter().map(value_label).collect();
    let x_of = |label: &str| -> Option<f64> {
        let i = labels0.iter().position(|l| l == label)?;
        Some(match &numeric {
            Some(xs) if log => xs[i].log10(),
            Some(xs) => xs[i],
            None => i as f64,
        })
    };
    // With one policy, the legend names it once and its entries are the
    // values of the second axis.
    let one_policy = def.policies.len() == 1;
    let mut series: Vec<Series> = Vec::new();
    for s in summary.iter().filter(|s| s.metric == metric) {
        let (shown, full) = match (def.axes.get(1), s.labels.get(1)) {
            (Some(a), Some(l)) if one_policy => {
                let n = format!("{} = {l}", a.param);
                (shorten(&n, LEGEND_CHARS + 8), n)
            }
            (Some(a), Some(l)) => (
                format!("{}, {} = {l}", shorten(&s.policy, LEGEND_CHARS), a.param),
                format!("{}, {} = {l}", s.policy, a.param),
            ),
            _ => (shorten(&s.policy, LEGEND_CHARS), s.policy.clone()),
        };
        let Some(mean) = s.mean.filter(|m| m.is_finite()) else {
            continue;
        };
        let Some(x) = x_of(&s.labels[0]) else {
            continue;
        };
        let lo = s.ci_low.filter(|v| v.is_finite()).unwrap_or(mean);
        let hi = s.ci_high.filter(|v| v.is_finite()).unwrap_or(mean);
        match series.iter_mut().find(|z| z.full == full) {
            Some(z) => z.points.push((x, mean, lo, hi)),
            None => series.push(Series {
                shown,
                full,
                points: vec![(x, mean, lo, hi)],
            }),
        }
    }
    for z in &mut series {
        z.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    // Names cut to the same text are told apart by a number.
    for i in 0..series.len() {
        let same: Vec<usize> = (0..series.len())
            .filter(|&j| series[j].shown == series[i].shown)
            .collect();
        if same.len() > 1 {
            for (n, j) in same.into_iter().enumerate() {
                series[j].shown = format!("{} [{}]", series[j].shown, n + 1);
            }
        }
    }

    // The x range and its ticks (in plotted coordinates: log10 on a log axis).
    let (lo, hi) = match &numeric {
        Some(v) => (
            v.iter().cloned().fold(f64::INFINITY, f64::min),
            v.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        ),
        None => (0.0, axis.values.len().saturating_sub(1) as f64),
    };
    let (lo, hi) = if lo.is_finite() && hi.is_finite() {
        (lo, hi)
    } else {
        (0.0, 1.0)
    };
    let ticks: Vec<f64> = match &numeric {
        Some(_) if log => log_ticks(lo, hi).iter().map(|x| x.log10()).collect(),
        Some(_) => linear_ticks(lo, hi),
        None => (0..axis.values.len()).map(|i| i as f64).collect(),
    };
    let (mut x0, mut x1) = if log {
        (lo.log10(), hi.log10())
    } else {
        (lo, hi)
    };
    if x1 - x0 <= 0.0 {
        x0 -= 0.5;
        x1 += 0.5;
    }
    let pad = (x1 - x0) * 0.03;
    let (x0, x1) = (x0 - pad, x1 + pad);

    // Fractions are drawn on their whole range, so that small differences
    // look small; their intervals are clipped to it.
    let fraction = matches!(
        metric,
        "idleness" | "waste" | "monotony" | "share_violation"
    );
    if fraction {
        let top = if metric == "share_violation" {
            2.0
        } else {
            1.0
        };
        for z in &mut series {
            for p in &mut z.points {
                p.2 = p.2.clamp(0.0, top);
                p.3 = p.3.clamp(0.0, top);
            }
        }
    }
    let mut y0 = 0f64;
    let mut y1 = if fraction { 1.0 } else { 0f64 };
    for z in &series {
        for p in &z.points {
            y0 = y0.min(p.2);
            y1 = y1.max(p.3);
        }
    }
    if y1 - y0 <= 0.0 {
        y1 = y0 + 1.0;
    }
    let ypad = (y1 - y0) * 0.04;
    let (y0, y1) = (y0 - if y0 < 0.0 { ypad } else { 0.0 }, y1 + ypad);

    // The legend: a lead (the one policy, when there is one and a second
    // axis), then an entry per series, flowed into rows under the title.
    let lead = (one_policy && def.axes.len() > 1).then(|| {
        format!(
            "{}:",
            shorten(
                def.policies.first().map_or("", String::as_str),
                LEGEND_CHARS
            )
        )
    });
    let text_w = |s: &str| text_px(s).ceil() as i32;
    let mut items: Vec<(Option<usize>, i32)> = Vec::new(); // (series, width)
    if let Some(l) = &lead {
        items.push((None, text_w(l) + 14));
    }
    for (i, z) in series.iter().enumerate() {
        items.push((Some(i), 32 + text_w(&z.shown) + 20));
    }
    let (left, row_h, right) = (16, 22, WIDTH as i32 - 16);
    let mut placed: Vec<(Option<usize>, i32, i32)> = Vec::new(); // (series, x, row)
    let (mut x, mut row) = (left, 0);
    for (s, w) in items {
        if x > left && x + w > right {
            x = left;
            row += 1;
        }
        placed.push((s, x, row));
        x += w;
    }
    let rows = if placed.is_empty() { 0 } else { row + 1 };
    let title_h = 38;
    let header_h = title_h + rows * row_h + 8;

    let title = format!("{}: {metric} vs {}", def.name, axis.param);
    let font = |size: f64| ("sans-serif", size).into_font();
    let anchored = |size: f64, h: HPos, v: VPos| TextStyle::from(font(size)).pos(Pos::new(h, v));
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        let e = |x: DrawingAreaErrorKind<std::io::Error>| x.to_string();
        root.fill(&WHITE).map_err(e)?;
        let (top, bottom) = root.split_vertically(header_h);
        top.draw(&Text::new(
            title.clone(),
            (WIDTH as i32 / 2, 10),
            anchored(TITLE, HPos::Center, VPos::Top),
        ))
        .map_err(e)?;
        let text_style = anchored(TEXT, HPos::Left, VPos::Center);
        for (s, x, row) in &placed {
            let y = title_h + row * row_h + row_h / 2;
            match s {
                None => {
                    let l = lead.clone().unwrap_or_default();
                    top.draw(&Text::new(l, (*x, y), text_style.clone()))
                        .map_err(e)?;
                }
                Some(i) => {
                    let c = COLORS[i % COLORS.len()];
                    top.draw(&PathElement::new(
                        vec![(*x, y), (*x + 24, y)],
                        c.stroke_width(2),
                    ))
                    .map_err(e)?;
                    top.draw(&Circle::new((*x + 12, y), 3, c.filled()))
                        .map_err(e)?;
                    top.draw(&Text::new(
                        series[*i].shown.clone(),
                        (*x + 32, y),
                        text_style.clone(),
                    ))
                    .map_err(e)?;
                }
            }
        }

        let ylabel = |y: &f64| format!("{}", round6(*y));
        let widest = [y0, y1, (y0 + y1) / 2.0, y1 * 0.9]
            .iter()
            .map(|y| text_px(&ylabel(y)))
            .fold(0.0, f64::max);
        let y_area = (widest + 48.0).ceil() as u32;
        let mut chart = ChartBuilder::on(&bottom)
            .margin_left(8)
            .margin_right(24)
            .margin_bottom(6)
            .x_label_area_size(56)
            .y_label_area_size(y_area)
            .build_cartesian_2d(
                Ticked {
                    inner: (x0..x1).into(),
                    ticks,
                },
                y0..y1,
            )
            .map_err(e)?;
        let fmt_x = |x: &f64| -> String {
            match &numeric {
                Some(_) if log => format!("{}", round6(10f64.powf(*x))),
                Some(_) => format!("{}", round6(*x)),
                None => {
                    let i = x.round();
                    if (x - i).abs() < 1e-6 && i >= 0.0 {
                        labels0.get(i as usize).cloned().unwrap_or_default()
                    } else {
                        String::new()
                    }
                }
            }
        };
        let xdesc = if log {
            format!("{} (log scale)", axis.param)
        } else {
            axis.param.clone()
        };
        chart
            .configure_mesh()
            .x_desc(xdesc)
            .y_desc(metric_label(metric))
            .label_style(font(TEXT))
            .axis_desc_style(font(TEXT))
            .x_label_formatter(&fmt_x)
            .y_label_formatter(&ylabel)
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(e)?;
        for (i, z) in series.iter().enumerate() {
            let c = COLORS[i % COLORS.len()];
            if z.points.len() > 1 {
                let mut band: Vec<(f64, f64)> = z.points.iter().map(|p| (p.0, p.3)).collect();
                band.extend(z.points.iter().rev().map(|p| (p.0, p.2)));
                chart
                    .draw_series(std::iter::once(Polygon::new(band, c.mix(0.15))))
                    .map_err(e)?;
            } else {
                chart
                    .draw_series(
                        z.points.iter().map(|p| {
                            PathElement::new(vec![(p.0, p.2), (p.0, p.3)], c.stroke_width(2))
                        }),
                    )
                    .map_err(e)?;
            }
            chart
                .draw_series(LineSeries::new(
                    z.points.iter().map(|p| (p.0, p.1)),
                    c.stroke_width(2),
                ))
                .map_err(e)?;
            chart
                .draw_series(
                    z.points
                        .iter()
                        .map(|p| Circle::new((p.0, p.1), 3, c.filled())),
                )
                .map_err(e)?;
        }
        root.present().map_err(e)?;
    }
    let mut out = with_titles(&buf, &title, &series);
    out.push('\n');
    Ok(out)
}

/// Adds the plot's title as the SVG's `<title>` (what screen readers and
/// browsers show), and wraps each legend entry whose name was cut in a group
/// whose `<title>` holds the whole name.
fn with_titles(svg: &str, title: &str, series: &[Series]) -> String {
    let mut out = svg.to_string();
    if let Some(end) = out.find('>') {
        out.insert_str(end + 1, &format!("\n<title>{}</title>", escape(title)));
    }
    for z in series.iter().filter(|z| z.shown != z.full) {
        let needle = format!("\n{}\n</text>", escape(&z.shown));
        let Some(at) = out.find(&needle) else {
            continue;
        };
        let Some(start) = out[..at].rfind("<text") else {
            continue;
        };
        let end = at + needle.len();
        let element = out[start..end].to_string();
        out.replace_range(
            start..end,
            &format!("<g><title>{}</title>{element}</g>", escape(&z.full)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axes_tick_at_1_2_5() {
        assert_eq!(log_ticks(1.0, 60.0), [1.0, 2.0, 5.0, 10.0, 20.0, 50.0]);
        assert_eq!(
            log_ticks(1.0, 1000.0),
            [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
        );
        // Too many 1-2-5 values: decades only.
        assert_eq!(
            log_ticks(0.01, 1e4),
            [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]
        );
        assert_eq!(log_ticks(3.0, 150.0), [5.0, 10.0, 20.0, 50.0, 100.0]);
    }

    #[test]
    fn linear_axes_tick_at_round_steps() {
        assert_eq!(
            linear_ticks(1.0, 8.4),
            [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
        );
        assert_eq!(
            linear_ticks(1.0, 20.0),
            [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0]
        );
        assert_eq!(linear_ticks(0.0, 1.0).len(), 11);
        assert_eq!(linear_ticks(5.0, 5.0), [5.0]);
    }

    fn def(policies: &[&str], axes: &[(&str, &[f64])]) -> Definition {
        Definition {
            name: "t".into(),
            description: String::new(),
            file: "t.toml".into(),
            scenario: "s.toml".into(),
            policies: policies.iter().map(|p| p.to_string()).collect(),
            replications: 2,
            metrics: vec!["waste".into()],
            set: Default::default(),
            axes: axes
                .iter()
                .map(|(p, v)| crate::data::Axis {
                    param: p.to_string(),
                    values: v.iter().map(|x| serde_json::json!(x)).collect(),
                })
                .collect(),
        }
    }

    fn line(cell: usize, labels: &[&str], policy: &str, mean: f64) -> SummaryLine {
        SummaryLine {
            cell,
            labels: labels.iter().map(|l| l.to_string()).collect(),
            policy: policy.into(),
            metric: "waste".into(),
            n: 2,
            mean: Some(mean),
            ci_low: Some(mean - 0.05),
            ci_high: Some(mean + 0.05),
            diff: None,
            verdict: None,
        }
    }

    #[test]
    fn a_plot_has_units_legible_text_and_a_short_legend() {
        let long = "cpu=policies/my_round_robin.rhai,fetch=wf2,send=ws2,estimate=jc2,disk=none";
        let d = def(&["CS2_WF2_WS2_JC2", long], &[("slack", &[1.0, 3.0, 60.0])]);
        let mut summary = Vec::new();
        for (c, x) in ["1", "3", "60"].iter().enumerate() {
            summary.push(line(c, &[x], "CS2_WF2_WS2_JC2", 0.1 * c as f64));
            summary.push(line(c, &[x], long, 0.2 * c as f64));
        }
        let svg = svg(&d, "waste", &summary);
        assert!(svg.contains("<title>t: waste vs slack</title>"), "{svg}");
        assert!(svg.contains("waste (fraction of available FLOPs)"));
        assert!(svg.contains("slack (log scale)"));
        let cut = shorten(long, LEGEND_CHARS);
        assert!(
            svg.contains(&format!("<g><title>{long}</title><text")),
            "{svg}"
        );
        assert!(svg.contains(&format!("\n{cut}\n</text>")), "{svg}");
        assert!(
            !svg.contains(&format!("\n{long}\n</text>")),
            "the legend shows no whole spec"
        );
        for tick in ["1", "2", "5", "10", "20", "50"] {
            assert!(
                svg.contains(&format!("\n{tick}\n</text>")),
                "tick {tick}: {svg}"
            );
        }
        for size in svg.split("font-size=\"").skip(1) {
            let px: f64 = size[..size.find('"').unwrap()].parse().unwrap();
            assert!(px >= 13.0, "text of {px} px");
        }
    }

    #[test]
    fn one_policy_on_two_axes_is_named_once() {
        let d = def(
            &["CS2_WF2_WS1_JC2"],
            &[("buffer_hours", &[1.0, 2.0]), ("slack", &[1.0, 2.0])],
        );
        let summary: Vec<SummaryLine> = (0..4)
            .map(|c| {
                let (b, s) = (["1", "2"][c / 2], ["1", "2"][c % 2]);
                line(c, &[b, s], "CS2_WF2_WS1_JC2", 0.5)
            })
            .collect();
        let svg = svg(&d, "waste", &summary);
        assert_eq!(svg.matches("CS2_WF2_WS1_JC2").count(), 1, "{svg}");
        assert!(svg.contains("\nslack = 1\n</text>") && svg.contains("\nslack = 2\n</text>"));
    }

    #[test]
    fn the_legend_estimates_text_wider_than_it_is() {
        // Chromium draws `CS2_WF2_WS2_JC2` 101.4 px wide at 10.48 px with
        // Liberation Sans, so 132.6 px at 13.7 px.
        assert!(text_px("CS2_WF2_WS2_JC2") >= 132.6);
    }

    #[test]
    fn long_names_are_cut_with_an_ellipsis() {
        assert_eq!(shorten("CS2_WF2_WS2_JC2", LEGEND_CHARS), "CS2_WF2_WS2_JC2");
        let long = "cpu=policies/my_round_robin.rhai,fetch=wf2,send=ws2,estimate=jc2,disk=none";
        let s = shorten(long, LEGEND_CHARS);
        assert_eq!(s.chars().count(), LEGEND_CHARS);
        assert!(s.ends_with('…') && long.starts_with(s.trim_end_matches('…')));
    }
}
