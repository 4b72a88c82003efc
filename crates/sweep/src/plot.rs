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
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::HashMap;
use vcsim_framework::metrics::round6;
use vcsim_framework::{Family, PolicySpec};

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
/// so 17 is drawn at 13.7 px (ticks, legend, caption), 19 at 15.3 px (the
/// axes' names) and 22 at 17.7 px (the title).
const TEXT: f64 = 17.0;
const DESC: f64 = 19.0;
const TITLE: f64 = 22.0;
/// [`TEXT`] as drawn, in pixels.
const TEXT_PX: f64 = TEXT / 1.24;
/// The colour of the legend's samples of a line style (not of a series).
const INK: RGBColor = RGBColor(64, 64, 64);

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

/// `s` cut to `max` characters by an ellipsis in its middle, which keeps
/// both ends, where names of policies tend to differ (`…_v1`, `…_v2`).
pub fn shorten_middle(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let keep = max.saturating_sub(1);
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let mut t: String = s.chars().take(head).collect();
    t.push('…');
    t.extend(s.chars().skip(n - tail));
    t
}

/// The x axis's name for a sweep's parameter, with its unit when vcsim
/// knows it: the derived knobs by their definition, a dotted path by the
/// unit its key ends with (`_days`, `_hours`, `_gb`, ...).
pub fn axis_label(param: &str) -> String {
    let key = param.rsplit('.').next().unwrap_or(param);
    let unit = match param {
        "slack" => Some("latency bound ÷ job run time"),
        "buffer_hours" => Some("hours of work buffered"),
        "mix" => Some("projects"),
        "flops_error_factor" => Some("true FLOPs ÷ estimate"),
        "flops_stddev_factor" => Some("std. dev. ÷ mean of FLOPs"),
        _ if key.ends_with("_days") => Some("days"),
        _ if key.ends_with("_hours") => Some("hours"),
        _ if key.ends_with("_seconds") || key.ends_with("_secs") => Some("seconds"),
        _ if key.ends_with("_gb") => Some("GB"),
        _ if key.ends_with("_fraction") || key.ends_with("_frac") => Some("fraction"),
        _ if key.ends_with("flops") || key.starts_with("flops_") => Some("FLOPs"),
        _ if key == "ncpus" => Some("CPUs"),
        _ => None,
    };
    match unit {
        Some(u) => format!("{param} ({u})"),
        None => param.to_string(),
    }
}

/// Whether a policy's part names a file (a script or a library) rather
/// than a built-in policy.
fn is_file(v: &str) -> bool {
    v.contains('/')
        || v.contains('\\')
        || [".rhai", ".so", ".dylib", ".dll"]
            .iter()
            .any(|e| v.to_ascii_lowercase().ends_with(e))
}

/// A part of a policy's spec (`cpu=/a/b/least_slack.rhai`, `CS2`) with the
/// file it names, if any, shown by `level`: 0 its stem (`least_slack`), 1
/// its file name (`least_slack.rhai`), 2 as written.
fn short_part(part: &str, level: u8) -> String {
    let (key, v) = match part.split_once('=') {
        Some((k, v)) => (Some(k.trim()), v.trim()),
        None => (None, part.trim()),
    };
    let v = if is_file(v) && level < 2 {
        let name = v.rsplit(['/', '\\']).next().unwrap_or(v);
        match name.rsplit_once('.') {
            Some((stem, _)) if level == 0 && !stem.is_empty() => stem,
            _ => name,
        }
    } else {
        v
    };
    match key {
        Some(k) => format!("{k}={v}"),
        None => v.to_string(),
    }
}

/// The names a legend shows for `policies` (whole specs), and, when it
/// leaves out what they all have in common, that part (to be shown once).
/// A policy is named by its label ([`PolicySpec::label`]: the paper's
/// notation, a script by its stem, `label=NAME` if given), which does not
/// depend on the policies beside it. When a label is longer than
/// [`LEGEND_CHARS`] and none was given with `label=`, each policy is named
/// by the families in which the policies differ only (`cpu=least_slack`
/// for `cpu=/a/least_slack.rhai,fetch=wf2,send=ws2,estimate=jc2,disk=none`
/// beside `CS2_WF2_WS2_JC2`), the others returned as the common part. A
/// name still too long is cut in its middle, and names cut alike are
/// numbered: distinct policies always get distinct names. Text that is not
/// a spec is named by its parts, a file by its stem (or its file name, or
/// its path, where the stem would make two policies look alike).
pub fn legend_names(policies: &[String]) -> (Vec<String>, Option<String>) {
    // Each policy's parts, as written or by family.
    let written: Vec<Vec<String>> = policies
        .iter()
        .map(|p| p.split(',').map(|s| s.trim().to_string()).collect())
        .collect();
    let specs: Option<Vec<PolicySpec>> =
        policies.iter().map(|p| PolicySpec::parse(p).ok()).collect();
    let named = |parts: &[Vec<String>]| -> Vec<String> {
        let mut level = vec![0u8; parts.len()];
        let name = |i: usize, level: u8| -> String {
            parts[i]
                .iter()
                .map(|p| short_part(p, level))
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut shown: Vec<String> = (0..parts.len()).map(|i| name(i, 0)).collect();
        for _ in 0..2 {
            let clash: Vec<usize> = (0..shown.len())
                .filter(|&i| {
                    (0..shown.len()).any(|j| shown[j] == shown[i] && policies[j] != policies[i])
                })
                .collect();
            for i in clash {
                level[i] += 1;
                shown[i] = name(i, level[i]);
            }
        }
        shown
    };
    let mut shown = match &specs {
        Some(specs) => specs.iter().map(PolicySpec::label).collect(),
        None => named(&written),
    };
    let mut common = None;
    let long = shown.iter().any(|s| s.chars().count() > LEGEND_CHARS);
    if let Some(specs) = specs.filter(|s| long && s.iter().all(|s| s.label.is_none())) {
        let part = |s: &PolicySpec, f: Family| format!("{}={}", f.key(), s.names[f.index()]);
        let (same, differ): (Vec<Family>, Vec<Family>) = Family::ALL.into_iter().partition(|&f| {
            specs
                .iter()
                .all(|s| s.names[f.index()] == specs[0].names[f.index()])
        });
        if !differ.is_empty() && !same.is_empty() {
            let parts: Vec<Vec<String>> = specs
                .iter()
                .map(|s| differ.iter().map(|&f| part(s, f)).collect())
                .collect();
            shown = named(&parts);
            common = Some(
                same.iter()
                    .map(|&f| part(&specs[0], f))
                    .collect::<Vec<_>>()
                    .join(","),
            );
        }
    }
    let before: Vec<String> = shown
        .iter()
        .map(|s| shorten_middle(s, LEGEND_CHARS))
        .collect();
    let alike = |i: usize, j: usize| before[j] == before[i] && policies[j] != policies[i];
    let shown = (0..before.len())
        .map(|i| {
            if (0..before.len()).any(|j| alike(i, j)) {
                let n = 1 + (0..i).filter(|&j| alike(i, j)).count();
                format!("{} [{n}]", before[i])
            } else {
                before[i].clone()
            }
        })
        .collect();
    (shown, common)
}

/// Ticks of a log axis from `lo` to `hi` (both above 0): the 1-2-5 values
/// of every decade when there are at most 10 of them, else the powers of
/// ten whose exponents are multiples of 1, 2, 5, 10, 20... (the fewest that
/// make at most 10 ticks), so that the ticks are round and no end of the
/// axis lies more than one tick's spacing from a tick.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let within = |x: f64| x >= lo * (1.0 - 1e-9) && x <= hi * (1.0 + 1e-9);
    let pick = |mantissas: &[f64], every: i32| -> Vec<f64> {
        (k0..=k1)
            .filter(|k| k.rem_euclid(every) == 0)
            .flat_map(|k| mantissas.iter().map(move |m| round6(m * 10f64.powi(k))))
            .filter(|x| within(*x))
            .collect()
    };
    let ticks = pick(&[1.0, 2.0, 5.0], 1);
    if ticks.len() <= 10 {
        return ticks;
    }
    // An f64's decades number some 630, so `every` stays below 1,000.
    let every = [1, 2, 5]
        .iter()
        .flat_map(|m| (0..4).map(move |e| m * 10i32.pow(e)))
        .filter(|every| pick(&[1.0], *every).len() <= 10)
        .min()
        .unwrap_or(1000);
    pick(&[1.0], every)
}

/// A tick's label, short enough to sit under its tick beside the next
/// one (at most about 8 characters): `1e20` and `5e-7`, not 21 digits or
/// 300 (a log axis of FLOPs spans 1e12 to 1e20); plain digits from 0.001
/// to 99999.
pub fn tick_label(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-3..1e5).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
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

/// Line styles told apart without colour: solid, dashed, dotted and long
/// dashes, with a circle, a triangle, a square or a cross at each point.
const STYLES: usize = 4;

/// The dash and gap of a style, in pixels (`None`: a solid line).
fn dash(style: usize) -> Option<(i32, i32)> {
    match style % STYLES {
        0 => None,
        1 => Some((8, 5)),
        2 => Some((2, 4)),
        _ => Some((14, 4)),
    }
}

/// `$body` with `$m` bound to the mark `$style` puts at `$at` (each mark
/// is of its own type).
macro_rules! with_mark {
    ($style:expr, $at:expr, $color:expr, |$m:ident| $body:expr) => {{
        let (at, c): (_, RGBColor) = ($at, $color);
        let e = EmptyElement::at(at);
        match $style % STYLES {
            0 => {
                let $m = e + Circle::new((0, 0), 3, c.filled());
                $body
            }
            1 => {
                let $m = e + TriangleMarker::new((0, 0), 5, c.filled());
                $body
            }
            2 => {
                let $m = e + Rectangle::new([(-3, -3), (3, 3)], c.filled());
                $body
            }
            _ => {
                let $m = e + Cross::new((0, 0), 4, c.stroke_width(2));
                $body
            }
        }
    }};
}

struct Series {
    /// The policy's index in the definition, and the second axis's value's.
    policy: usize,
    value: Option<usize>,
    color: RGBColor,
    style: usize,
    /// (x, mean, low, high)
    points: Vec<(f64, f64, f64, f64)>,
}

/// What the legend band holds, flowed into rows.
enum Item {
    /// Text without a sample (the one policy of a plot of two axes).
    Lead(String),
    /// A sample of a line and its name; `mark`: with the style's mark.
    Entry {
        text: String,
        color: RGBColor,
        style: usize,
        mark: bool,
    },
    /// The next item starts a row.
    Break,
}

/// What a plot needs of a summary line, kept for each plotted metric while
/// a sweep's summary is written (a few dozen bytes, where a line with its
/// labels and names took some 350: a million cells held gigabytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlotPoint {
    pub cell: usize,
    /// Index into the definition's `policies` (its first place).
    pub policy: usize,
    /// Index into the definition's `metrics`.
    pub metric: usize,
    pub mean: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
}

impl PlotPoint {
    /// The point of `line`, if its policy and metric are the definition's
    /// (the metric one of those it plots).
    pub fn of(def: &Definition, line: &SummaryLine) -> Option<PlotPoint> {
        Some(PlotPoint {
            cell: line.cell,
            policy: def.policies.iter().position(|q| *q == line.policy)?,
            metric: def.metrics.iter().position(|m| *m == line.metric)?,
            mean: line.mean,
            ci_low: line.ci_low,
            ci_high: line.ci_high,
        })
    }
}

/// The plot of `metric` as SVG text.
pub fn svg(def: &Definition, metric: &str, summary: &[PlotPoint]) -> String {
    match draw(def, metric, summary) {
        // (A name from a file, a script's path, may hold characters XML
        // does not allow: escaped, as on the terminal.)
        Ok(s) => vcsim_framework::text::escape_controls_but_newlines(&s),
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

/// `s` cut, with an ellipsis, to fit in `px` pixels at [`TEXT`].
fn fit(s: &str, px: f64) -> String {
    let mut n = s.chars().count();
    let mut t = s.to_string();
    while n > 1 && text_px(&t) > px {
        n -= 1;
        t = shorten(s, n);
    }
    t
}

/// For each value of an axis, the first position of its label (a value
/// repeated is drawn at its first place).
fn first_positions(labels: &[String]) -> Vec<usize> {
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(labels.len());
    labels
        .iter()
        .enumerate()
        .map(|(i, l)| *first.entry(l.as_str()).or_insert(i))
        .collect()
}

fn draw(def: &Definition, metric: &str, summary: &[PlotPoint]) -> Result<String, String> {
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
    let labels1: Vec<String> = def
        .axes
        .get(1)
        .map(|a| a.values.iter().map(value_label).collect())
        .unwrap_or_default();
    // A point's axis values come from its cell, in constant time (a search
    // of the labels per line made a 40,000-cell plot quadratic); a value
    // repeated on an axis is drawn at its first place, as its label is.
    let (first0, first1) = (first_positions(&labels0), first_positions(&labels1));
    let x_at = |i: usize| -> f64 {
        match &numeric {
            Some(xs) if log => xs[i].log10(),
            Some(xs) => xs[i],
            None => i as f64,
        }
    };
    // A line per policy, coloured and styled by it; with a second axis, a
    // line per policy and value, coloured by the value and styled by the
    // policy (with one policy, the legend names it once).
    let one_policy = def.policies.len() == 1;
    let two = def.axes.len() > 1;
    let mut series: Vec<Series> = Vec::new();
    let mut series_of: HashMap<(usize, Option<usize>), usize> = HashMap::new();
    let Some(m) = def.metrics.iter().position(|x| x == metric) else {
        return Err(format!("`{metric}` is not among the sweep's metrics"));
    };
    for s in summary.iter().filter(|s| s.metric == m) {
        let p = s.policy;
        let idx = crate::data::value_indices(&def.axes, s.cell);
        let v = idx.get(1).and_then(|&j| first1.get(j).copied());
        if two && v.is_none() {
            continue;
        }
        let Some(mean) = s.mean.filter(|m| m.is_finite()) else {
            continue;
        };
        let Some(x) = idx.first().and_then(|&i| first0.get(i)).map(|&i| x_at(i)) else {
            continue;
        };
        let lo = s.ci_low.filter(|v| v.is_finite()).unwrap_or(mean);
        let hi = s.ci_high.filter(|v| v.is_finite()).unwrap_or(mean);
        match series_of.get(&(p, v)) {
            Some(&k) => series[k].points.push((x, mean, lo, hi)),
            None => {
                series_of.insert((p, v), series.len());
                let (color, style) = match v {
                    Some(j) if one_policy => (j, 0),
                    Some(j) => (j, p),
                    None => (p, p),
                };
                series.push(Series {
                    policy: p,
                    value: v,
                    color: COLORS[color % COLORS.len()],
                    style,
                    points: vec![(x, mean, lo, hi)],
                })
            }
        }
    }
    for z in &mut series {
        z.points.sort_by(|a, b| a.0.total_cmp(&b.0));
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

    // The legend, and the whole text of every name it cuts.
    let (names, common) = legend_names(&def.policies);
    let mut titles: Vec<(String, String)> = Vec::new();
    let mut items: Vec<Item> = Vec::new();
    let policies: Vec<usize> = (0..def.policies.len())
        .filter(|&p| series.iter().any(|z| z.policy == p))
        .collect();
    let values: Vec<usize> = (0..labels1.len())
        .filter(|&j| series.iter().any(|z| z.value == Some(j)))
        .collect();
    let value_text = |j: usize| {
        let a = &def.axes[1];
        let full = format!("{} = {}", a.param, labels1[j]);
        (shorten(&full, LEGEND_CHARS + 8), full)
    };
    let entry = |items: &mut Vec<Item>,
                 titles: &mut Vec<(String, String)>,
                 (text, full): (String, String),
                 color,
                 style,
                 mark| {
        if text != full {
            titles.push((text.clone(), full));
        }
        items.push(Item::Entry {
            text,
            color,
            style,
            mark,
        });
    };
    if !two {
        for &p in &policies {
            let c = COLORS[p % COLORS.len()];
            let name = (names[p].clone(), def.policies[p].clone());
            entry(&mut items, &mut titles, name, c, p, true);
        }
    } else if one_policy {
        let full = def.policies[0].clone();
        let lead = names[0].clone();
        if lead != full {
            titles.push((format!("{lead}:"), full));
        }
        items.push(Item::Lead(format!("{lead}:")));
        for &j in &values {
            entry(
                &mut items,
                &mut titles,
                value_text(j),
                COLORS[j % COLORS.len()],
                0,
                true,
            );
        }
    } else {
        for &p in &policies {
            let name = (names[p].clone(), def.policies[p].clone());
            entry(&mut items, &mut titles, name, INK, p, true);
        }
        items.push(Item::Break);
        for &j in &values {
            entry(
                &mut items,
                &mut titles,
                value_text(j),
                COLORS[j % COLORS.len()],
                0,
                false,
            );
        }
    }
    let text_w = |s: &str| text_px(s).ceil() as i32;
    let (left, row_h, right) = (16, 22, WIDTH as i32 - 16);
    let mut placed: Vec<(&Item, i32, i32)> = Vec::new(); // (item, x, row)
    let (mut x, mut row) = (left, 0);
    for item in &items {
        let w = match item {
            Item::Lead(l) => text_w(l) + 14,
            Item::Entry { text, .. } => 32 + text_w(text) + 20,
            Item::Break => {
                if x > left {
                    x = left;
                    row += 1;
                }
                continue;
            }
        };
        if x > left && x + w > right {
            x = left;
            row += 1;
        }
        placed.push((item, x, row));
        x += w;
    }
    let rows = if placed.is_empty() { 0 } else { row + 1 };
    let title_h = 38;
    let header_h = title_h + rows * row_h + 8;
    // What every policy's spec holds, once, under the plot.
    let caption = common.map(|c| {
        let full = format!("every policy: {}", c.replace(',', ", "));
        let shown = fit(&full, (right - left) as f64);
        if shown != full {
            titles.push((shown.clone(), full));
        }
        shown
    });
    let footer_h = if caption.is_some() { 26 } else { 0 };

    let title = format!("{}: {metric} vs {}", def.name, axis.param);
    let font = |size: f64| ("sans-serif", size).into_font();
    let anchored = |size: f64, h: HPos, v: VPos| TextStyle::from(font(size)).pos(Pos::new(h, v));
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        let e = |x: DrawingAreaErrorKind<std::io::Error>| x.to_string();
        root.fill(&WHITE).map_err(e)?;
        let (top, rest) = root.split_vertically(header_h);
        let (middle, foot) = rest.split_vertically(HEIGHT as i32 - header_h - footer_h);
        top.draw(&Text::new(
            title.clone(),
            (WIDTH as i32 / 2, 10),
            anchored(TITLE, HPos::Center, VPos::Top),
        ))
        .map_err(e)?;
        let text_style = anchored(TEXT, HPos::Left, VPos::Center);
        for (item, x, row) in &placed {
            let (x, y) = (*x, title_h + row * row_h + row_h / 2);
            match item {
                Item::Break => {}
                Item::Lead(l) => {
                    top.draw(&Text::new(l.clone(), (x, y), text_style.clone()))
                        .map_err(e)?;
                }
                Item::Entry {
                    text,
                    color,
                    style,
                    mark,
                } => {
                    let line = vec![(x, y), (x + 24, y)];
                    match dash(*style).filter(|_| *mark) {
                        _ if !*mark => top.draw(&PathElement::new(line, color.stroke_width(4))),
                        Some((d, g)) => {
                            top.draw(&DashedPathElement::new(line, d, g, color.stroke_width(2)))
                        }
                        None => top.draw(&PathElement::new(line, color.stroke_width(2))),
                    }
                    .map_err(e)?;
                    if *mark {
                        with_mark!(*style, (x + 12, y), *color, |m| top.draw(&m)).map_err(e)?;
                    }
                    top.draw(&Text::new(text.clone(), (x + 32, y), text_style.clone()))
                        .map_err(e)?;
                }
            }
        }
        if let Some(c) = &caption {
            foot.draw(&Text::new(
                c.clone(),
                (left, footer_h / 2),
                text_style.clone(),
            ))
            .map_err(e)?;
        }

        let ylabel = |y: &f64| format!("{}", round6(*y));
        let widest = [y0, y1, (y0 + y1) / 2.0, y1 * 0.9]
            .iter()
            .map(|y| text_px(&ylabel(y)))
            .fold(0.0, f64::max);
        let y_area = (widest + 52.0).ceil() as u32;
        let mut chart = ChartBuilder::on(&middle)
            .margin_left(8)
            .margin_right(24)
            .margin_bottom(6)
            .x_label_area_size(60)
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
                Some(_) if log => tick_label(round6(10f64.powf(*x))),
                Some(_) => tick_label(round6(*x)),
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
        let xdesc = match axis_label(&axis.param) {
            l if log && l.ends_with(')') => format!("{}; log scale)", &l[..l.len() - 1]),
            l if log => format!("{l} (log scale)"),
            l => l,
        };
        chart
            .configure_mesh()
            .x_desc(xdesc)
            .y_desc(metric_label(metric))
            .label_style(font(TEXT))
            .axis_desc_style(font(DESC))
            .x_label_formatter(&fmt_x)
            .y_label_formatter(&ylabel)
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(e)?;
        // Bands first, then lines, then marks: no band hides a line.
        for z in &series {
            let c = z.color;
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
        }
        for z in &series {
            let points = z.points.iter().map(|p| (p.0, p.1));
            match dash(z.style) {
                Some((d, g)) => chart
                    .draw_series(DashedLineSeries::new(points, d, g, z.color.stroke_width(2)))
                    .map(|_| ()),
                None => chart
                    .draw_series(LineSeries::new(points, z.color.stroke_width(2)))
                    .map(|_| ()),
            }
            .map_err(e)?;
        }
        for z in &series {
            for p in &z.points {
                with_mark!(z.style, (p.0, p.1), z.color, |m| chart
                    .draw_series(std::iter::once(m))
                    .map(|_| ()))
                .map_err(e)?;
            }
        }
        root.present().map_err(e)?;
    }
    let mut out = with_titles(&buf, &title, &titles);
    out.push('\n');
    Ok(out)
}

/// Adds the plot's title as the SVG's `<title>` (what screen readers and
/// browsers show), and wraps each text element whose words were cut (a
/// legend entry, the caption) in a group whose `<title>` holds them whole.
fn with_titles(svg: &str, title: &str, cut: &[(String, String)]) -> String {
    let mut out = svg.to_string();
    if let Some(end) = out.find('>') {
        out.insert_str(end + 1, &format!("\n<title>{}</title>", escape(title)));
    }
    for (shown, full) in cut {
        let needle = format!("\n{}\n</text>", escape(shown));
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
            &format!("<g><title>{}</title>{element}</g>", escape(full)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick_label(1e20), "1e20");
        assert_eq!(tick_label(2e13), "2e13");
        assert_eq!(tick_label(1e-300), "1e-300");
        assert_eq!(tick_label(5e-7), "5e-7");
        assert_eq!(tick_label(50000.0), "50000");
        assert_eq!(tick_label(0.002), "0.002");
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(tick_label(-2.5), "-2.5");
    }

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
        // A span of 312 decades: every 50th, so that 1e0 ends the ticks
        // 12 decades below the top (every 32nd from the bottom ended them
        // at 1e-12, 24 decades below).
        let wide = log_ticks(1e-300, 1e12);
        let exps: Vec<i32> = wide.iter().map(|x| x.log10().round() as i32).collect();
        assert_eq!(exps, [-300, -250, -200, -150, -100, -50, 0]);
        assert_eq!(log_ticks(1e12, 1e20).len(), 9, "nine decades: each a tick");
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

    fn points(d: &Definition, lines: &[SummaryLine]) -> Vec<PlotPoint> {
        lines.iter().filter_map(|l| PlotPoint::of(d, l)).collect()
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
        let svg = svg(&d, "waste", &points(&d, &summary));
        assert!(svg.contains("<title>t: waste vs slack</title>"), "{svg}");
        assert!(svg.contains("waste (fraction of available FLOPs)"));
        assert!(svg.contains("slack (latency bound ÷ job run time; log scale)"));
        // The legend names the policies by their labels, the script by its
        // stem; the whole spec in a <title> where the label is not it.
        assert!(
            svg.contains(&format!("<g><title>{long}</title><text")),
            "{svg}"
        );
        assert!(
            svg.contains("\nmy_round_robin_WF2_WS2_JC2\n</text>"),
            "{svg}"
        );
        assert!(svg.contains("\nCS2_WF2_WS2_JC2\n</text>"), "{svg}");
        assert!(!svg.contains("<title>CS2_WF2_WS2_JC2</title>"), "{svg}");
        assert!(
            !svg.contains("every policy"),
            "labels that fit need no caption"
        );
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
        // Every text at 13 px or more; the axes' names and the title at 15
        // or more.
        for size in svg.split("font-size=\"").skip(1) {
            let px: f64 = size[..size.find('"').unwrap()].parse().unwrap();
            assert!(px >= 13.0, "text of {px} px");
        }
        for name in ["waste (fraction", "slack (latency", "t: waste vs slack"] {
            let at = svg.find(&format!("\n{name}")).unwrap();
            let open = &svg[svg[..at].rfind("<text").unwrap()..at];
            let px: f64 = open
                .split("font-size=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(px >= 15.0, "`{name}` at {px} px");
        }
    }

    #[test]
    fn axes_are_named_with_their_units() {
        assert_eq!(
            axis_label("buffer_hours"),
            "buffer_hours (hours of work buffered)"
        );
        assert_eq!(axis_label("mix"), "mix (projects)");
        assert_eq!(axis_label("duration_days"), "duration_days (days)");
        assert_eq!(
            axis_label("project.*.latency_bound_days"),
            "project.*.latency_bound_days (days)"
        );
        assert_eq!(axis_label("host.ncpus"), "host.ncpus (CPUs)");
        assert_eq!(
            axis_label("project.0.resource_share"),
            "project.0.resource_share"
        );
        for m in ["waste", "idleness"] {
            assert_eq!(
                metric_label(m),
                format!("{m} (fraction of available FLOPs)")
            );
        }
        assert_eq!(metric_label("rpcs_per_job"), "RPCs per job");
    }

    fn names(p: &[&str]) -> (Vec<String>, Option<String>) {
        legend_names(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn legend_names_are_short_and_unambiguous() {
        // Short names stay as they are.
        let (n, c) = names(&["CS2_WF2_WS2_JC2", "CS2_WF2_WS1_JC2"]);
        assert_eq!(
            (n, c),
            (
                vec!["CS2_WF2_WS2_JC2".into(), "CS2_WF2_WS1_JC2".into()],
                None
            )
        );
        // Specs: their labels, whatever the policies beside them.
        let (n, c) = names(&[
            "cpu=policies/least_slack.rhai,fetch=wf2,send=ws2,estimate=jc2,disk=none",
            "cpu=cs1,fetch=wf2,send=ws2,estimate=jc2,disk=share",
            "CS2_WF2_WS2_JC2,label=today",
        ]);
        assert_eq!(
            n,
            ["least_slack_WF2_WS2_JC2", "CS1_WF2_WS2_JC2+share", "today"]
        );
        assert_eq!(c, None);
        // Text that is not a spec, like a script alone: its stem.
        let (n, _) = names(&["/home/me/policies/least_slack.rhai", "CS2_WF2_WS2_JC2"]);
        assert_eq!(n, ["least_slack", "CS2_WF2_WS2_JC2"]);
        // Two scripts of one stem (a sweep refuses them): numbered.
        let (n, _) = names(&["cpu=a/x.rhai", "cpu=b/x.rhai"]);
        assert_eq!(n, ["x_WF2_WS2_JC2 [1]", "x_WF2_WS2_JC2 [2]"]);
        // A label given too long: cut in its middle, nothing else changes.
        let (n, c) = names(&["CS1,label=the old scheduler of the v4 client", "CS2"]);
        assert_eq!(n, ["the old schedu…the v4 client", "CS2_WF2_WS2_JC2"]);
        assert_eq!(c, None);
        // Labels too long: the families that differ; the rest once; too
        // long even so: cut, and numbered where cut alike.
        let a = "cpu=/p/a_very_long_policy_name_one.rhai,fetch=/p/another_long_fetch_policy.rhai";
        let b = "cpu=/p/a_very_long_policy_name_two.rhai,fetch=/p/another_long_fetch_policy.rhai";
        let (n, c) = names(&[a, b]);
        assert_eq!(
            c.as_deref(),
            Some("fetch=/p/another_long_fetch_policy.rhai,send=ws2,estimate=jc2,disk=none")
        );
        assert_eq!(
            n,
            [
                "cpu=a_very_lon…licy_name_one",
                "cpu=a_very_lon…licy_name_two"
            ]
        );
        let a = "cpu=/p/policy_number_1_with_a_long_common_suffix.rhai";
        let b = "cpu=/p/policy_number_2_with_a_long_common_suffix.rhai";
        let (n, _) = names(&[a, b]);
        let cut = shorten_middle(
            "cpu=policy_number_1_with_a_long_common_suffix",
            LEGEND_CHARS,
        );
        assert_eq!(n, [format!("{cut} [1]"), format!("{cut} [2]")]);
        for n in &n {
            assert!(n.chars().count() <= LEGEND_CHARS + 4, "{n}");
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
        let svg = svg(&d, "waste", &points(&d, &summary));
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
