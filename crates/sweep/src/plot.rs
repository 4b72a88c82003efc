//! One SVG per metric: a line per policy (and per value of a second axis)
//! against the first axis, with its 95% interval as a band. Drawn with
//! plotters' SVG backend only: text is written as SVG `<text>`, so no font
//! is needed at build or run time.

use crate::data::{value_label, Definition};
use crate::summary::SummaryLine;
use plotters::prelude::*;

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

struct Series {
    name: String,
    /// (x, mean, low, high)
    points: Vec<(f64, f64, f64, f64)>,
}

/// The plot of `metric` as SVG text.
pub fn svg(def: &Definition, metric: &str, summary: &[SummaryLine]) -> String {
    match draw(def, metric, summary) {
        Ok(s) => s,
        Err(e) => format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"100\"><text x=\"10\" y=\"50\">cannot plot {metric}: {}</text></svg>\n",
            e.replace('<', "&lt;")
        ),
    }
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
    let mut series: Vec<Series> = Vec::new();
    for s in summary.iter().filter(|s| s.metric == metric) {
        let name = match (def.axes.get(1), s.labels.get(1)) {
            (Some(a), Some(l)) => format!("{}, {}={l}", s.policy, a.param),
            _ => s.policy.clone(),
        };
        let Some(mean) = s.mean.filter(|m| m.is_finite()) else {
            continue;
        };
        let Some(x) = x_of(&s.labels[0]) else {
            continue;
        };
        let lo = s.ci_low.filter(|v| v.is_finite()).unwrap_or(mean);
        let hi = s.ci_high.filter(|v| v.is_finite()).unwrap_or(mean);
        match series.iter_mut().find(|z| z.name == name) {
            Some(z) => z.points.push((x, mean, lo, hi)),
            None => series.push(Series {
                name,
                points: vec![(x, mean, lo, hi)],
            }),
        }
    }
    for z in &mut series {
        z.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|z| z.points.iter().map(|p| p.0))
        .collect();
    let (mut x0, mut x1) = match &numeric {
        Some(v) => {
            let t = |x: f64| if log { x.log10() } else { x };
            (
                v.iter().map(|x| t(*x)).fold(f64::INFINITY, f64::min),
                v.iter().map(|x| t(*x)).fold(f64::NEG_INFINITY, f64::max),
            )
        }
        None => (0.0, axis.values.len().saturating_sub(1) as f64),
    };
    if xs.is_empty() && !(x0.is_finite() && x1.is_finite()) {
        (x0, x1) = (0.0, 1.0);
    }
    if x1 - x0 <= 0.0 {
        x0 -= 0.5;
        x1 += 0.5;
    }
    let pad = (x1 - x0) * 0.02;
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

    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (800, 500)).into_drawing_area();
        let e = |x: DrawingAreaErrorKind<std::io::Error>| x.to_string();
        root.fill(&WHITE).map_err(e)?;
        let title = format!("{}: {metric} vs {}", def.name, axis.param);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(65)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(e)?;
        let fmt_x = |x: &f64| -> String {
            match &numeric {
                Some(_) if log => {
                    // Two significant digits: 1.6, 25, 400.
                    let v = 10f64.powf(*x);
                    let m = 10f64.powi(1 - v.abs().log10().floor() as i32);
                    format!("{}", (v * m).round() / m)
                }
                Some(_) => format!("{}", vcsim_framework::metrics::round6(*x)),
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
            .y_desc(metric)
            .x_label_formatter(&fmt_x)
            .y_label_formatter(&|y: &f64| format!("{}", vcsim_framework::metrics::round6(*y)))
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
                .map_err(e)?
                .label(z.name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
            chart
                .draw_series(
                    z.points
                        .iter()
                        .map(|p| Circle::new((p.0, p.1), 3, c.filled())),
                )
                .map_err(e)?;
        }
        if !series.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 13))
                .draw()
                .map_err(e)?;
        }
        root.present().map_err(e)?;
    }
    buf.push('\n');
    Ok(buf)
}
