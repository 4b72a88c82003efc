//! The timeline as one self-contained HTML page: no network, no library;
//! the data is inlined as JSON and drawn by a small vanilla script on a
//! canvas. A lane per CPU/GPU instance coloured by project; EDF-mode and
//! late jobs marked; RPCs and host availability on their own tracks; hover
//! for details; wheel to zoom, drag to pan. When zoomed out, the jobs that
//! fall in one pixel column are aggregated (the project that used most of
//! it, shaded by how busy the lane was), so a 100-day run stays usable.
//!
//! Lanes: the timeline records how much of each resource a stretch
//! computed on, not which instances; the page assigns them ([`pack`]), so
//! that a stretch covers as many lanes as it computes on (a 4-CPU job four
//! lanes, a 0.5-GPU job half of one GPU's lane), two fractional jobs share
//! an instance, and no two pieces of a lane overlap.

use serde::Serialize;
use vcsim_framework::{timeline::Timeline, RunReport, CPU};

/// A piece of a stretch on one lane, as the page reads it: [lane, start,
/// end, project, job, flags (1: EDF, 2: late, 4: the CPU part of a GPU
/// job), deadline, stretch (index: the pieces of one stretch share it),
/// top, bottom (the part of the lane's height it covers, 0 to 1)].
type Piece = (usize, f64, f64, usize, u64, u8, f64, usize, f64, f64);

/// A stretch as the tooltip reads it: [resource, CPUs computed on, CPUs
/// held, instances of its GPU].
type Stretch = (usize, f64, f64, f64);

#[derive(Serialize)]
struct Page<'a> {
    title: String,
    projects: &'a [String],
    rsc_names: &'a [String],
    lanes: Vec<String>,
    segs: Vec<Piece>,
    stretches: Vec<Stretch>,
    /// [time, project, reached (0/1), jobs]
    rpcs: Vec<(f64, usize, u8, u32)>,
    off: &'a [(f64, f64)],
    end: f64,
    metrics: &'a vcsim_framework::Metrics,
}

/// Amounts closer than this are equal (shares are ratios of small numbers).
const EPS: f64 = 1e-9;

/// One piece placed on a lane: a part of `seg`'s stretch, or of its CPU
/// part (`cpu_part`), covering `[top, bottom)` of `lane`.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    pub seg: usize,
    pub cpu_part: bool,
    pub lane: usize,
    pub top: f64,
    pub bottom: f64,
}

/// A lane's pieces that have not ended yet: [top, bottom, end].
type Busy = Vec<(f64, f64, f64)>;

/// The free gaps of a lane, top first.
fn gaps(busy: &Busy) -> Vec<(f64, f64)> {
    let mut b: Vec<(f64, f64)> = busy.iter().map(|&(t, bo, _)| (t, bo)).collect();
    b.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut out = Vec::new();
    let mut at = 0.0;
    for (t, bo) in b {
        if t > at + EPS {
            out.push((at, t));
        }
        at = f64::max(at, bo);
    }
    if at < 1.0 - EPS {
        out.push((at, 1.0));
    }
    out
}

fn is_free(busy: &Busy) -> bool {
    busy.is_empty()
}

/// Places `amount` instances on `lanes`, trying the lanes in `order`:
/// whole free lanes for the whole part (the first run of adjacent ones if
/// there is one, else the first ones in `order`), the fraction in the first
/// gap large enough (top first); failing that, split over the free gaps,
/// the largest first; what is left (only if more ran than there are
/// instances) on new lanes.
fn place(
    lanes: &mut Vec<Busy>,
    order: &[usize],
    amount: f64,
    keep: bool,
) -> Vec<(usize, f64, f64)> {
    let whole = (amount + EPS).floor() as usize;
    let frac = if amount - whole as f64 > EPS {
        amount - whole as f64
    } else {
        0.0
    };
    // Whole lanes: a run of adjacent free lanes, unless the job keeps its own.
    let free: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&l| is_free(&lanes[l]))
        .collect();
    let mut chosen: Option<Vec<usize>> = None;
    if whole == 0 {
        chosen = Some(Vec::new());
    } else if free.len() >= whole {
        if !keep {
            let mut sorted = free.clone();
            sorted.sort_unstable();
            chosen = sorted
                .windows(whole)
                .find(|w| w[whole - 1] - w[0] == whole - 1)
                .map(|w| w.to_vec());
        }
        if chosen.is_none() {
            chosen = Some(free[..whole].to_vec());
        }
    }
    if let Some(ws) = chosen {
        let frac_at = if frac > 0.0 {
            order.iter().filter(|l| !ws.contains(l)).find_map(|&l| {
                gaps(&lanes[l])
                    .into_iter()
                    .find(|g| g.1 - g.0 >= frac - EPS)
                    .map(|g| (l, g.0))
            })
        } else {
            None
        };
        if frac == 0.0 || frac_at.is_some() {
            let mut out: Vec<(usize, f64, f64)> = ws.iter().map(|&l| (l, 0.0, 1.0)).collect();
            if let Some((l, top)) = frac_at {
                out.push((l, top, top + frac));
            }
            return out;
        }
    }
    // Split over the free gaps, the largest first (the fewest pieces), in
    // `order` among equal ones.
    let mut all: Vec<(usize, f64, f64)> = order
        .iter()
        .flat_map(|&l| gaps(&lanes[l]).into_iter().map(move |(a, b)| (l, a, b)))
        .collect();
    all.sort_by(|x, y| (y.2 - y.1).total_cmp(&(x.2 - x.1)));
    let mut left = amount;
    let mut out = Vec::new();
    for (l, a, b) in all {
        if left <= EPS {
            break;
        }
        let take = f64::min(left, b - a);
        out.push((l, a, a + take));
        left -= take;
    }
    while left > EPS {
        lanes.push(Vec::new());
        let take = f64::min(left, 1.0);
        out.push((lanes.len() - 1, 0.0, take));
        left -= take;
    }
    out
}

/// Assigns lanes to every stretch, resource by resource: returns the lane
/// names and the pieces. A lane is one instance. Stretches are placed in
/// order of their start; at one time, the stretches of jobs that continue
/// one that just ended first, then larger ones, then by job id. A job that
/// continues tries its former lanes first. The CPU lanes carry the CPU
/// jobs and the CPU part of GPU jobs (what they compute on of the CPUs).
pub fn pack(tl: &Timeline) -> (Vec<String>, Vec<Placed>) {
    let mut names = Vec::new();
    let mut pieces = Vec::new();
    for (r, rname) in tl.rsc_names.iter().enumerate() {
        // (segment, CPU part, amount)
        let mut items: Vec<(usize, bool, f64)> = Vec::new();
        for (i, s) in tl.segments.iter().enumerate() {
            if r == CPU && s.cpus > EPS {
                items.push((i, s.rsc != CPU, s.cpus));
            } else if r != CPU && s.rsc == r && s.gpu_count > EPS {
                items.push((i, false, s.gpu_count));
            }
        }
        // Where each (job, part) was last: (end, lanes).
        let mut last: std::collections::BTreeMap<(u64, bool), (f64, Vec<usize>)> =
            Default::default();
        let continues =
            |it: &(usize, bool, f64),
             last: &std::collections::BTreeMap<(u64, bool), (f64, Vec<usize>)>| {
                let s = &tl.segments[it.0];
                last.get(&(s.job, it.1)).is_some_and(|(e, _)| *e == s.start)
            };
        items.sort_by(|a, b| {
            let (x, y) = (&tl.segments[a.0], &tl.segments[b.0]);
            x.start
                .total_cmp(&y.start)
                .then(b.2.total_cmp(&a.2))
                .then(x.job.cmp(&y.job))
                .then(a.1.cmp(&b.1))
        });
        let instances = tl
            .rsc_instances
            .get(r)
            .copied()
            .unwrap_or(1.0)
            .ceil()
            .max(1.0) as usize;
        let mut lanes: Vec<Busy> = vec![Vec::new(); instances];
        let mut k = 0;
        while k < items.len() {
            // The stretches that start at one time: continuing ones first.
            let t = tl.segments[items[k].0].start;
            let mut n = k;
            while n < items.len() && tl.segments[items[n].0].start == t {
                n += 1;
            }
            let mut group: Vec<(usize, bool, f64)> = items[k..n].to_vec();
            group.sort_by_key(|it| !continues(it, &last));
            for l in lanes.iter_mut() {
                l.retain(|&(_, _, e)| e > t);
            }
            for it in group {
                let s = &tl.segments[it.0];
                let before = last.get(&(s.job, it.1)).filter(|(e, _)| *e == s.start);
                let mut order: Vec<usize> = before.map(|(_, ls)| ls.clone()).unwrap_or_default();
                let rest: Vec<usize> = (0..lanes.len()).filter(|l| !order.contains(l)).collect();
                order.extend(rest);
                let got = place(&mut lanes, &order, it.2, before.is_some());
                let mut used = Vec::new();
                for (l, top, bottom) in got {
                    lanes[l].push((top, bottom, s.end));
                    if !used.contains(&l) {
                        used.push(l);
                    }
                    pieces.push(Placed {
                        seg: it.0,
                        cpu_part: it.1,
                        lane: names.len() + l,
                        top,
                        bottom,
                    });
                }
                last.insert((s.job, it.1), (s.end, used));
            }
            k = n;
        }
        let label = if rname == "cpu" {
            "CPU"
        } else {
            rname.as_str()
        };
        for l in 0..lanes.len() {
            if l < instances {
                names.push(format!("{label} {l}"));
            } else {
                names.push(format!("{label} {l} (over)"));
            }
        }
    }
    (names, pieces)
}

/// The page for a run's timeline.
pub fn render(tl: &Timeline, r: &RunReport) -> String {
    let (lane_names, placed) = pack(tl);
    let mut end: f64 = 0.0;
    for s in &tl.segments {
        end = end.max(s.end);
    }
    let segs = placed
        .iter()
        .map(|p| {
            let s = &tl.segments[p.seg];
            let flags =
                u8::from(s.deadline_mode) | (u8::from(s.late) << 1) | (u8::from(p.cpu_part) << 2);
            (
                p.lane, s.start, s.end, s.project, s.job, flags, s.deadline, p.seg, p.top, p.bottom,
            )
        })
        .collect();
    let stretches = tl
        .segments
        .iter()
        .map(|s| (s.rsc, s.cpus, s.cpus_held, s.gpu_count))
        .collect();
    let rpcs = tl
        .rpcs
        .iter()
        .map(|x| {
            end = end.max(x.time);
            (x.time, x.project, u8::from(x.reached), x.jobs)
        })
        .collect();
    for &(_, e) in &tl.host_off {
        end = end.max(e);
    }
    let page = Page {
        title: format!("{} · {} · seed {}", r.scenario, r.policy, r.seed),
        projects: &tl.project_names,
        rsc_names: &tl.rsc_names,
        lanes: lane_names,
        segs,
        stretches,
        rpcs,
        off: &tl.host_off,
        end: end.max(1.0),
        metrics: &r.metrics,
    };
    // `</` cannot end the script early once escaped.
    let data = serde_json::to_string(&page)
        .unwrap_or_else(|_| "{}".into())
        .replace("</", "<\\/");
    let title = html_escape(&page.title);
    TEMPLATE
        .replace("{{TITLE}}", &title)
        .replace("{{DATA}}", &data)
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const TEMPLATE: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>vcsim timeline: {{TITLE}}</title>
<style>
body { font: 13px system-ui, sans-serif; margin: 12px; color: #222; }
h1 { font-size: 16px; margin: 0 0 6px; }
#bar { margin: 4px 0 8px; display: flex; gap: 12px; align-items: center; flex-wrap: wrap; }
#bar button { font: inherit; }
#legend span.sw { display: inline-block; width: 12px; height: 12px; vertical-align: -2px; margin: 0 3px 0 8px; border: 1px solid #0003; }
#wrap { position: relative; display: flex; }
#labels { width: 90px; flex: none; }
#labels div { box-sizing: border-box; padding-right: 6px; text-align: right; white-space: nowrap; overflow: hidden; font-size: 12px; display: flex; align-items: center; justify-content: flex-end; }
#plot { flex: 1; min-width: 200px; position: relative; }
canvas { display: block; cursor: crosshair; }
#tip { position: absolute; pointer-events: none; background: #fffff4; border: 1px solid #888; padding: 4px 6px; font-size: 12px; white-space: pre; display: none; box-shadow: 1px 1px 4px #0003; z-index: 2; }
#metrics { color: #555; }
#selftest { white-space: pre-wrap; word-break: break-all; }
</style></head>
<body>
<h1>vcsim timeline: {{TITLE}}</h1>
<div id="metrics"></div>
<div id="bar">
  <button id="fit" type="button">Whole run</button>
  <span id="range"></span>
  <span id="legend"></span>
</div>
<div id="wrap"><div id="labels"></div><div id="plot"><canvas id="cv"></canvas><div id="tip"></div></div></div>
<p style="color:#666">Wheel: zoom · drag: pan · hover: details. A lane is one CPU or GPU; a job covers as many lanes as it computes on (a 4-CPU job four lanes, a 0.5-GPU job half a lane), and a GPU job's share of the CPUs is drawn paler on the CPU lanes. Dark top edge: the job ran in EDF (deadline) mode; red bottom edge and hatching: the job was reported late. Grey: host unavailable. RPC ticks: filled when the project answered, hollow when it was down. Zoomed out, a pixel column shows the project that used most of it, paler when the lane was partly idle.</p>
<pre id="selftest" hidden></pre>
<script id="data" type="application/json">{{DATA}}</script>
<script>
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("data").textContent);
  const LANE_H = 26, AXIS_H = 22, OFF_H = 12, RPC_H = 16, GAP = 4;
  const NL = D.lanes.length, NP = D.projects.length;
  const lanesTop = AXIS_H + OFF_H + GAP + RPC_H + GAP;
  const H = lanesTop + NL * LANE_H + 4;
  const PALETTE = ["#4e79a7","#f28e2b","#59a14f","#b07aa1","#edc948","#76b7b2","#ff9da7","#9c755f","#bab0ac","#e15759"];
  function color(p) {
    if (p < PALETTE.length) return PALETTE[p];
    const h = (p * 137.508) % 360; return "hsl(" + h.toFixed(0) + ",55%,55%)";
  }
  const rgbCache = [];
  function rgb(p) {
    if (rgbCache[p]) return rgbCache[p];
    const c = document.createElement("canvas").getContext("2d");
    c.fillStyle = color(p); c.fillRect(0, 0, 1, 1);
    const d = c.getImageData(0, 0, 1, 1).data; return (rgbCache[p] = [d[0], d[1], d[2]]);
  }
  function fmt(t) {
    t = Math.max(0, Math.round(t));
    const d = Math.floor(t / 86400), h = Math.floor(t / 3600) % 24, m = Math.floor(t / 60) % 60, s = t % 60;
    const p = (x) => String(x).padStart(2, "0");
    return d + "d " + p(h) + ":" + p(m) + ":" + p(s);
  }
  // Per lane, the segments sorted by start.
  const byLane = [];
  for (let l = 0; l < NL; l++) byLane.push([]);
  for (const s of D.segs) byLane[s[0]].push(s);
  for (const L of byLane) L.sort((a, b) => a[1] - b[1]);
  const M = D.metrics || {};
  document.getElementById("metrics").textContent = Object.keys(M).map((k) => k + " " + (typeof M[k] === "number" ? +M[k].toFixed(4) : M[k])).join(" · ");
  const leg = document.getElementById("legend");
  D.projects.forEach((name, p) => {
    const sw = document.createElement("span"); sw.className = "sw"; sw.style.background = color(p);
    leg.appendChild(sw); leg.appendChild(document.createTextNode(name));
  });
  const labels = document.getElementById("labels");
  function addLabel(text, h, cls) {
    const d = document.createElement("div"); d.textContent = text; d.style.height = h + "px"; if (cls) d.className = cls;
    labels.appendChild(d);
  }
  addLabel("", AXIS_H); addLabel("host off", OFF_H + GAP); addLabel("RPCs", RPC_H + GAP);
  D.lanes.forEach((n) => addLabel(n, LANE_H, "lane-label"));

  const cv = document.getElementById("cv"), ctx = cv.getContext("2d"), tip = document.getElementById("tip");
  let W = 800, t0 = 0, t1 = D.end;
  const stats = { drawn: 0, aggregated: 0 };
  function resize() {
    W = Math.max(200, document.getElementById("plot").clientWidth);
    const dpr = window.devicePixelRatio || 1;
    cv.width = W * dpr; cv.height = H * dpr; cv.style.width = W + "px"; cv.style.height = H + "px";
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }
  const X = (t) => (t - t0) / (t1 - t0) * W;
  const T = (x) => t0 + x / W * (t1 - t0);
  function niceStep(span) {
    const steps = [60, 300, 600, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 5 * 86400, 10 * 86400, 20 * 86400, 50 * 86400];
    for (const s of steps) if (span / s <= 10) return s;
    return 100 * 86400;
  }
  function draw() {
    stats.drawn = 0; stats.aggregated = 0;
    ctx.clearRect(0, 0, W, H);
    ctx.font = "11px sans-serif"; ctx.fillStyle = "#444"; ctx.strokeStyle = "#ccc"; ctx.lineWidth = 1;
    const step = niceStep(t1 - t0);
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const x = Math.round(X(t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x, AXIS_H - 5); ctx.lineTo(x, H); ctx.stroke();
      ctx.fillText(step >= 86400 ? "day " + (t / 86400) : fmt(t), x + 2, 11);
    }
    // Host unavailable: a grey track, and a light shade over the lanes.
    for (const [a, b] of D.off) {
      if (b < t0 || a > t1) continue;
      const x0 = X(a), w = Math.max(1, X(b) - x0);
      ctx.fillStyle = "#999"; ctx.fillRect(x0, AXIS_H, w, OFF_H);
      ctx.fillStyle = "rgba(0,0,0,0.06)"; ctx.fillRect(x0, lanesTop, w, NL * LANE_H);
    }
    // RPCs.
    const ry = AXIS_H + OFF_H + GAP;
    for (const [t, p, reached] of D.rpcs) {
      if (t < t0 || t > t1) continue;
      const x = Math.round(X(t)) + 0.5;
      ctx.strokeStyle = color(p); ctx.fillStyle = color(p);
      if (reached) { ctx.fillRect(x - 1.5, ry + 2, 3, RPC_H - 4); }
      else { ctx.strokeRect(x - 1.5, ry + 2, 3, RPC_H - 4); }
    }
    // Lanes.
    for (let l = 0; l < NL; l++) {
      const y = lanesTop + l * LANE_H, h = LANE_H - 4;
      ctx.fillStyle = l % 2 ? "#fafafa" : "#f2f2f2"; ctx.fillRect(0, y, W, LANE_H - 1);
      const cols = new Map(); // pixel column -> [busy per project..., edf, late]
      for (const s of byLane[l]) {
        if (s[2] < t0 || s[1] > t1) continue;
        const x0 = X(s[1]), x1 = X(s[2]);
        // The part of the lane's height the piece covers.
        const py = y + 1 + s[8] * h, ph = (s[9] - s[8]) * h, band = Math.min(4, ph / 3);
        if (x1 - x0 >= 2) {
          ctx.fillStyle = color(s[3]);
          if (s[5] & 4) ctx.globalAlpha = 0.45;
          ctx.fillRect(x0, py, x1 - x0, ph);
          ctx.globalAlpha = 1;
          if (s[5] & 1) { ctx.fillStyle = "rgba(0,0,0,0.75)"; ctx.fillRect(x0, py, x1 - x0, band); }
          if (s[5] & 2) {
            ctx.fillStyle = "#d00"; ctx.fillRect(x0, py + ph - band, x1 - x0, band);
            ctx.save(); ctx.beginPath(); ctx.rect(x0, py, x1 - x0, ph); ctx.clip();
            ctx.strokeStyle = "rgba(200,0,0,0.45)";
            for (let xx = x0 - h; xx < x1; xx += 6) { ctx.beginPath(); ctx.moveTo(xx, y + h + 1); ctx.lineTo(xx + h, y + 1); ctx.stroke(); }
            ctx.restore();
          }
          if (x1 - x0 > 2 && ph > 2) { ctx.strokeStyle = "rgba(255,255,255,0.7)"; ctx.strokeRect(x0 + 0.5, py + 0.5, x1 - x0 - 1, ph - 1); }
          stats.drawn++;
        } else {
          // Aggregate: instance-time per project in each pixel column.
          const a = Math.max(0, Math.floor(x0)), b = Math.min(W - 1, Math.floor(x1));
          for (let px = a; px <= b; px++) {
            const lo = Math.max(s[1], T(px)), hi = Math.min(s[2], T(px + 1));
            if (hi <= lo) continue;
            let c = cols.get(px); if (!c) { c = new Float64Array(NP + 2); cols.set(px, c); }
            c[s[3]] += (hi - lo) * (s[9] - s[8]); if (s[5] & 1) c[NP] = 1; if (s[5] & 2) c[NP + 1] = 1;
          }
          stats.aggregated++;
        }
      }
      const pxDur = (t1 - t0) / W;
      for (const [px, c] of cols) {
        let best = 0, tot = 0;
        for (let p = 0; p < NP; p++) { tot += c[p]; if (c[p] > c[best]) best = p; }
        const [r, g, bb] = rgb(best), f = Math.min(1, tot / pxDur), k = 0.35 + 0.65 * f;
        ctx.fillStyle = "rgb(" + Math.round(255 - (255 - r) * k) + "," + Math.round(255 - (255 - g) * k) + "," + Math.round(255 - (255 - bb) * k) + ")";
        ctx.fillRect(px, y + 1, 1, h);
        if (c[NP]) { ctx.fillStyle = "rgba(0,0,0,0.75)"; ctx.fillRect(px, y + 1, 1, 4); }
        if (c[NP + 1]) { ctx.fillStyle = "#d00"; ctx.fillRect(px, y + h - 3, 1, 4); }
      }
      if (cols.size) stats.drawn++;
    }
    document.getElementById("range").textContent = fmt(t0) + " – " + fmt(t1);
    cv.dataset.drawn = String(stats.drawn);
  }
  function segAt(x, y) {
    const l = Math.floor((y - lanesTop) / LANE_H);
    if (l < 0 || l >= NL) return null;
    // Where in the lane's height: a piece that covers it wins over one beside.
    const v = (y - lanesTop - l * LANE_H - 1) / (LANE_H - 4);
    const t = T(x), slop = 3 * (t1 - t0) / W;
    let best = null, bd = Infinity;
    for (const s of byLane[l]) {
      if (s[1] - slop > t) break;
      const d = t < s[1] ? s[1] - t : t > s[2] ? t - s[2] : 0;
      const dv = v < s[8] ? s[8] - v : v > s[9] ? v - s[9] : 0;
      const score = d + (dv > 0 ? slop + dv : 0);
      if (d <= slop && score < bd) { bd = score; best = s; }
    }
    return best;
  }
  // The lanes of a stretch (its pieces share the stretch index).
  function lanesOf(k) {
    const out = [];
    for (const s of D.segs) if (s[7] === k && !out.includes(s[0])) out.push(s[0]);
    return out.sort((a, b) => a - b);
  }
  const num = (x) => String(+x.toFixed(3));
  function rpcAt(x, y) {
    const ry = AXIS_H + OFF_H + GAP;
    if (y < ry || y > ry + RPC_H) return null;
    let best = null, bd = 4;
    for (const r of D.rpcs) { const d = Math.abs(X(r[0]) - x); if (d < bd) { bd = d; best = r; } }
    return best;
  }
  function describe(s) {
    const [rsc, cpus, held, gpus] = D.stretches[s[7]];
    const holds = rsc === 0
      ? "holds " + num(held) + " CPU" + (held === 1 ? "" : "s") + (Math.abs(cpus - held) > 1e-9 ? ", computed on " + num(cpus) + " (CPUs over-committed)" : "")
      : "holds " + num(gpus) + " " + D.rsc_names[rsc] + " GPU and " + num(held) + " CPU" + (Math.abs(cpus - held) > 1e-9 ? ", computed on " + num(cpus) + " CPU" : "");
    return "job " + s[4] + " · project " + D.projects[s[3]] + " · " + lanesOf(s[7]).map((l) => D.lanes[l]).join(", ") +
      ((s[5] & 4) ? " (its CPU part)" : "") +
      "\nran " + fmt(s[1]) + " → " + fmt(s[2]) + " (" + ((s[2] - s[1]) / 3600).toFixed(2) + " h)" +
      "\ndeadline " + fmt(s[6]) + " · " + holds +
      "\nEDF mode: " + ((s[5] & 1) ? "yes" : "no") + " · reported late: " + ((s[5] & 2) ? "yes" : "no");
  }
  function hover(ev) {
    const rect = cv.getBoundingClientRect();
    const x = ev.clientX - rect.left, y = ev.clientY - rect.top;
    let text = null;
    const s = segAt(x, y);
    if (s) text = describe(s);
    else {
      const r = rpcAt(x, y);
      if (r) text = "RPC to " + D.projects[r[1]] + " at " + fmt(r[0]) + (r[2] ? " · " + r[3] + " jobs received" : " · project down");
    }
    if (!text) { tip.style.display = "none"; return null; }
    tip.textContent = text; tip.style.display = "block";
    tip.style.left = Math.min(x + 12, W - 260) + "px"; tip.style.top = (y + 14) + "px";
    return text;
  }
  let drag = null;
  cv.addEventListener("mousemove", (ev) => {
    if (drag) {
      const dt = (ev.clientX - drag.x) / W * (drag.t1 - drag.t0);
      t0 = drag.t0 - dt; t1 = drag.t1 - dt; draw(); return;
    }
    hover(ev);
  });
  cv.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  cv.addEventListener("mousedown", (ev) => { drag = { x: ev.clientX, t0, t1 }; });
  window.addEventListener("mouseup", () => { drag = null; });
  cv.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const rect = cv.getBoundingClientRect(), t = T(ev.clientX - rect.left);
    const k = Math.exp(ev.deltaY * 0.002);
    let span = Math.min(D.end * 1.05, Math.max(60, (t1 - t0) * k));
    t0 = t - (t - t0) * span / (t1 - t0); t1 = t0 + span; draw();
  }, { passive: false });
  document.getElementById("fit").addEventListener("click", () => { t0 = 0; t1 = D.end; draw(); });
  window.addEventListener("resize", () => { resize(); draw(); });
  resize(); draw();

  // For tests (and the curious): `#selftest` hovers the middle of the
  // longest job drawn and records what a person would see.
  window.vcsimTimeline = { lanes: NL, stats, zoom: (a, b) => { t0 = a; t1 = b; draw(); } };
  if (location.hash === "#selftest" || location.hash === "#selftest-zoom" || location.hash === "#selftest-widest") {
    if (location.hash === "#selftest-zoom" && D.segs.length) {
      const s = D.segs.reduce((a, b) => (b[2] - b[1] > a[2] - a[1] ? b : a));
      t0 = Math.max(0, s[1] - (s[2] - s[1])); t1 = s[2] + (s[2] - s[1]); draw();
    }
    const out = { lanes: NL, lane_labels: document.querySelectorAll(".lane-label").length, segments: D.segs.length,
      drawn: stats.drawn, aggregated: stats.aggregated, tooltip: null, pixel_matches_project: null, hovered_job: null };
    // The longest piece that is a job's own (not a GPU job's CPU part) and
    // covers at least half of its lane; `#selftest-widest`: of the
    // stretches on the most lanes.
    const wide = location.hash === "#selftest-widest", nl = new Map();
    if (wide) for (const s of D.segs) nl.set(s[7], (nl.get(s[7]) || 0) + 1);
    let best = null;
    for (const s of D.segs) {
      if ((s[5] & 4) || s[9] - s[8] < 0.5) continue;
      const w = Math.min(X(s[2]), W) - Math.max(X(s[1]), 0), n = wide ? nl.get(s[7]) : 0;
      if (!best || n > best.n || (n === best.n && w > best.w)) best = { s, w, n };
    }
    if (best) {
      const s = best.s, rect = cv.getBoundingClientRect();
      const x = Math.round((Math.max(X(s[1]), 0) + Math.min(X(s[2]), W)) / 2);
      const y = Math.round(lanesTop + s[0] * LANE_H + 1 + (s[8] + s[9]) / 2 * (LANE_H - 4));
      cv.dispatchEvent(new MouseEvent("mousemove", { clientX: rect.left + x, clientY: rect.top + y, bubbles: true }));
      out.tooltip = tip.style.display === "block" ? tip.textContent : null;
      out.hovered_job = s[4];
      out.hovered_lanes = lanesOf(s[7]).length;
      const dpr = window.devicePixelRatio || 1;
      const px = ctx.getImageData(Math.floor(x * dpr), Math.floor(y * dpr), 1, 1).data, want = rgb(s[3]);
      out.pixel_matches_project = Math.abs(px[0] - want[0]) + Math.abs(px[1] - want[1]) + Math.abs(px[2] - want[2]) < 120;
      // The lanes whose pixel at the middle of the stretch's piece there
      // has the job's colour.
      out.lanes_in_colour = 0;
      for (const q of D.segs) {
        if (q[7] !== s[7]) continue;
        const qy = Math.round(lanesTop + q[0] * LANE_H + 1 + (q[8] + q[9]) / 2 * (LANE_H - 4));
        const c = ctx.getImageData(Math.floor(x * dpr), Math.floor(qy * dpr), 1, 1).data;
        if (Math.abs(c[0] - want[0]) + Math.abs(c[1] - want[1]) + Math.abs(c[2] - want[2]) < 120) out.lanes_in_colour++;
      }
    }
    const pre = document.getElementById("selftest");
    pre.textContent = JSON.stringify(out); pre.hidden = false;
  }
})();
</script>
</body></html>
"##;
