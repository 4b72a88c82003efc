//! The timeline as one self-contained HTML page: no network, no library;
//! the data is inlined as JSON and drawn by a small vanilla script on a
//! canvas. A lane per CPU/GPU instance coloured by project; EDF-mode and
//! late jobs marked; RPCs and host availability on their own tracks; hover
//! for details; wheel to zoom, drag to pan. When zoomed out, the jobs that
//! fall in one pixel column are aggregated (the project that used most of
//! it, shaded by how busy the lane was), so a 100-day run stays usable.
//!
//! Lanes: the timeline records which resource a job used, not which
//! instance; instances are assigned here, each stretch to the first lane of
//! its resource that is free at its start (so no two stretches of a lane
//! overlap, and the number of lanes is the most that ran at once).

use serde::Serialize;
use vcsim_framework::{timeline::Timeline, RunReport};

/// A stretch as the page reads it: [lane, start, end, project, job, flags
/// (1: EDF, 2: late), deadline, CPUs or GPUs held].
type Seg = (usize, f64, f64, usize, u64, u8, f64, f64);

#[derive(Serialize)]
struct Page<'a> {
    title: String,
    projects: &'a [String],
    lanes: Vec<String>,
    segs: Vec<Seg>,
    /// [time, project, reached (0/1), jobs]
    rpcs: Vec<(f64, usize, u8, u32)>,
    off: &'a [(f64, f64)],
    end: f64,
    metrics: &'a vcsim_framework::Metrics,
}

fn lanes(tl: &Timeline) -> (Vec<String>, Vec<usize>) {
    let mut names = Vec::new();
    let mut seg_lane = vec![0usize; tl.segments.len()];
    for (r, rname) in tl.rsc_names.iter().enumerate() {
        let mut idx: Vec<usize> = (0..tl.segments.len())
            .filter(|&i| tl.segments[i].rsc == r)
            .collect();
        idx.sort_by(|&a, &b| {
            let (x, y) = (&tl.segments[a], &tl.segments[b]);
            x.start.total_cmp(&y.start).then(x.job.cmp(&y.job))
        });
        let instances = tl
            .rsc_instances
            .get(r)
            .copied()
            .unwrap_or(1.0)
            .ceil()
            .max(1.0) as usize;
        let mut free_at: Vec<f64> = vec![f64::NEG_INFINITY; instances];
        for i in idx {
            let s = &tl.segments[i];
            let lane = match free_at.iter().position(|&t| t <= s.start) {
                Some(l) => l,
                None => {
                    free_at.push(f64::NEG_INFINITY);
                    free_at.len() - 1
                }
            };
            free_at[lane] = s.end;
            seg_lane[i] = names.len() + lane;
        }
        let label = if rname == "cpu" {
            "CPU"
        } else {
            rname.as_str()
        };
        for l in 0..free_at.len() {
            names.push(format!("{label} {l}"));
        }
    }
    (names, seg_lane)
}

/// The page for a run's timeline.
pub fn render(tl: &Timeline, r: &RunReport) -> String {
    let (lane_names, seg_lane) = lanes(tl);
    let mut end: f64 = 0.0;
    let segs = tl
        .segments
        .iter()
        .zip(&seg_lane)
        .map(|(s, &lane)| {
            end = end.max(s.end);
            let flags = u8::from(s.deadline_mode) | (u8::from(s.late) << 1);
            let amount = if s.rsc == vcsim_framework::CPU {
                s.cpus
            } else {
                s.gpu_count
            };
            (
                lane, s.start, s.end, s.project, s.job, flags, s.deadline, amount,
            )
        })
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
        lanes: lane_names,
        segs,
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
<p style="color:#666">Wheel: zoom · drag: pan · hover: details. Dark top edge: the job ran in EDF (deadline) mode; red bottom edge and hatching: the job was reported late. Grey: host unavailable. RPC ticks: filled when the project answered, hollow when it was down. Zoomed out, a pixel column shows the project that used most of it, paler when the lane was partly idle.</p>
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
        if (x1 - x0 >= 2) {
          ctx.fillStyle = color(s[3]); ctx.fillRect(x0, y + 1, x1 - x0, h);
          if (s[5] & 1) { ctx.fillStyle = "rgba(0,0,0,0.75)"; ctx.fillRect(x0, y + 1, x1 - x0, 4); }
          if (s[5] & 2) {
            ctx.fillStyle = "#d00"; ctx.fillRect(x0, y + h - 3, x1 - x0, 4);
            ctx.save(); ctx.beginPath(); ctx.rect(x0, y + 1, x1 - x0, h); ctx.clip();
            ctx.strokeStyle = "rgba(200,0,0,0.45)";
            for (let xx = x0 - h; xx < x1; xx += 6) { ctx.beginPath(); ctx.moveTo(xx, y + h + 1); ctx.lineTo(xx + h, y + 1); ctx.stroke(); }
            ctx.restore();
          }
          if (x1 - x0 > 2) { ctx.strokeStyle = "rgba(255,255,255,0.7)"; ctx.strokeRect(x0 + 0.5, y + 1.5, x1 - x0 - 1, h - 1); }
          stats.drawn++;
        } else {
          // Aggregate: time per project in each pixel column.
          const a = Math.max(0, Math.floor(x0)), b = Math.min(W - 1, Math.floor(x1));
          for (let px = a; px <= b; px++) {
            const lo = Math.max(s[1], T(px)), hi = Math.min(s[2], T(px + 1));
            if (hi <= lo) continue;
            let c = cols.get(px); if (!c) { c = new Float64Array(NP + 2); cols.set(px, c); }
            c[s[3]] += hi - lo; if (s[5] & 1) c[NP] = 1; if (s[5] & 2) c[NP + 1] = 1;
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
    const t = T(x), slop = 3 * (t1 - t0) / W;
    let best = null, bd = Infinity;
    for (const s of byLane[l]) {
      if (s[1] - slop > t) break;
      const d = t < s[1] ? s[1] - t : t > s[2] ? t - s[2] : 0;
      if (d <= slop && d < bd) { bd = d; best = s; }
    }
    return best;
  }
  function rpcAt(x, y) {
    const ry = AXIS_H + OFF_H + GAP;
    if (y < ry || y > ry + RPC_H) return null;
    let best = null, bd = 4;
    for (const r of D.rpcs) { const d = Math.abs(X(r[0]) - x); if (d < bd) { bd = d; best = r; } }
    return best;
  }
  function describe(s) {
    return "job " + s[4] + " · project " + D.projects[s[3]] + " · " + D.lanes[s[0]] +
      "\nran " + fmt(s[1]) + " → " + fmt(s[2]) + " (" + ((s[2] - s[1]) / 3600).toFixed(2) + " h)" +
      "\ndeadline " + fmt(s[6]) + " · " + (s[7] || 1) + (D.lanes[s[0]].startsWith("CPU") ? " CPU" : " GPU") +
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
  if (location.hash === "#selftest" || location.hash === "#selftest-zoom") {
    if (location.hash === "#selftest-zoom" && D.segs.length) {
      const s = D.segs.reduce((a, b) => (b[2] - b[1] > a[2] - a[1] ? b : a));
      t0 = Math.max(0, s[1] - (s[2] - s[1])); t1 = s[2] + (s[2] - s[1]); draw();
    }
    const out = { lanes: NL, lane_labels: document.querySelectorAll(".lane-label").length, segments: D.segs.length,
      drawn: stats.drawn, aggregated: stats.aggregated, tooltip: null, pixel_matches_project: null, hovered_job: null };
    let best = null;
    for (const s of D.segs) {
      const w = Math.min(X(s[2]), W) - Math.max(X(s[1]), 0);
      if (!best || w > best.w) best = { s, w };
    }
    if (best) {
      const s = best.s, rect = cv.getBoundingClientRect();
      const x = Math.round((Math.max(X(s[1]), 0) + Math.min(X(s[2]), W)) / 2), y = Math.round(lanesTop + s[0] * LANE_H + LANE_H / 2);
      cv.dispatchEvent(new MouseEvent("mousemove", { clientX: rect.left + x, clientY: rect.top + y, bubbles: true }));
      out.tooltip = tip.style.display === "block" ? tip.textContent : null;
      out.hovered_job = s[4];
      const dpr = window.devicePixelRatio || 1;
      const px = ctx.getImageData(Math.floor(x * dpr), Math.floor(y * dpr), 1, 1).data, want = rgb(s[3]);
      out.pixel_matches_project = Math.abs(px[0] - want[0]) + Math.abs(px[1] - want[1]) + Math.abs(px[2] - want[2]) < 120;
    }
    const pre = document.getElementById("selftest");
    pre.textContent = JSON.stringify(out); pre.hidden = false;
  }
})();
</script>
</body></html>
"##;
