//! The timeline as one self-contained HTML page: no network, no library;
//! the data is inlined as JSON and drawn by a small vanilla script on a
//! canvas. A lane per CPU/GPU instance coloured by project; EDF-mode and
//! late jobs marked; RPCs and host availability on their own tracks; hover
//! for details; wheel to zoom, drag to pan. When zoomed out, the jobs that
//! fall in one pixel column are aggregated (the project that used most of
//! it, shaded by how busy the lane was), so a 100-day run stays usable.
//!
//! When the run explained ([`Explanation`]), hovering a stretch also shows
//! the CPU scheduler's decision that started it and its reason, hovering
//! an RPC the fetcher's request, the server's verdicts and the outcome;
//! and two plots under the lanes, on their time axis, show each project's
//! share of the work done so far against its resource share, and what the
//! scheduler ranks projects by. Their data is at most [`MAX_POINTS`]
//! points each (the last of each time bucket; fewer with hundreds of
//! projects: [`max_points`]), drawn one stroke per pixel column when
//! zoomed out.
//!
//! Lanes: the timeline records how much of each resource a stretch
//! computed on, not which instances; the page assigns them ([`pack`]), so
//! that a stretch covers as many lanes as it computes on (a 4-CPU job four
//! lanes, a 0.5-GPU job half of one GPU's lane), two fractional jobs share
//! an instance, and no two pieces of a lane overlap.
//!
//! Memory: the page is written straight into its buffer, the pieces as
//! they are placed (they are most of it), and holds at most
//! [`MAX_PAGE_ITEMS`] items; a run with more is cut at a time.

use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;
use vcsim_framework::timeline::{TimelineRpc, TimelineSegment};
use vcsim_framework::{explain::Explanation, timeline::Timeline, RunReport, CPU};

/// A piece of a stretch on one lane, as the page reads it: [lane, start,
/// end, project, job, flags (1: EDF, 2: late, 4: the CPU part of a GPU
/// job), deadline, stretch (index: the pieces of one stretch share it),
/// top, bottom (the part of the lane's height it covers, 0 to 1)].
type Piece = (usize, f64, f64, usize, u64, u8, f64, usize, f64, f64);

/// A stretch as the tooltip reads it: [resource, CPUs computed on, CPUs
/// held, instances of its GPU].
type Stretch = (usize, f64, f64, f64);

/// The most items a page holds: the pieces of its stretches on the lanes,
/// its RPC ticks and its host-off periods (some 120 MB in all). A run with
/// more is cut: the page shows what started before the time where they
/// would pass this bound, and its title says where. The stretches a
/// timeline keeps are bounded, but not their pieces: 64-CPU jobs on a host
/// that comes and goes every few minutes made pages of 360 MB in 100 days
/// (3.4 GB of memory in 300); 1,000 projects on 256 CPUs and 64 GPUs fill
/// a page in four days.
pub const MAX_PAGE_ITEMS: usize = 1_000_000;

#[derive(Serialize)]
struct Page<'a> {
    title: String,
    projects: &'a [String],
    rsc_names: &'a [String],
    lanes: Vec<String>,
    segs: Pieces<'a>,
    stretches: Stretches<'a>,
    /// [time, project, reached (0/1), jobs]
    rpcs: Rpcs<'a>,
    off: &'a [(f64, f64)],
    /// [start, end, GPU only]: computing (or GPU computing) not allowed.
    blocked: &'a [(f64, f64, bool)],
    end: f64,
    metrics: &'a vcsim_framework::Metrics,
    /// What an explained run adds: the reasons the hovers show, and the
    /// plots under the lanes. Absent when the run did not explain.
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<Why>,
    /// A time to mark across the lanes and plots (`vcsim diverge`: the
    /// first divergence).
    #[serde(skip_serializing_if = "Option::is_none")]
    mark: Option<f64>,
}

/// The pieces of the first `n` stretches (`len` of them), each written as
/// a [`Piece`] as it is placed: they are most of the page, and not kept.
struct Pieces<'a> {
    tl: &'a Timeline,
    n: usize,
    len: usize,
}

impl Serialize for Pieces<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut seq = ser.serialize_seq(Some(self.len))?;
        let mut failed = None;
        pack(self.tl, self.n, |p| {
            if failed.is_some() {
                return;
            }
            let s = &self.tl.segments[p.seg as usize];
            let flags =
                u8::from(s.deadline_mode) | (u8::from(s.late) << 1) | (u8::from(p.cpu_part) << 2);
            let piece: Piece = (
                p.lane as usize,
                s.start,
                s.end,
                s.project,
                s.job,
                flags,
                s.deadline,
                p.seg as usize,
                p.top,
                p.bottom,
            );
            if let Err(e) = seq.serialize_element(&piece) {
                failed = Some(e);
            }
        });
        match failed {
            Some(e) => Err(e),
            None => seq.end(),
        }
    }
}

/// The stretches, each written as a [`Stretch`].
struct Stretches<'a>(&'a [TimelineSegment]);

impl Serialize for Stretches<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut seq = ser.serialize_seq(Some(self.0.len()))?;
        for s in self.0 {
            let x: Stretch = (s.rsc, s.cpus, s.cpus_held, s.gpu_count);
            seq.serialize_element(&x)?;
        }
        seq.end()
    }
}

/// The RPCs, each written as [time, project, reached (0/1), jobs].
struct Rpcs<'a>(&'a [TimelineRpc]);

impl Serialize for Rpcs<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut seq = ser.serialize_seq(Some(self.0.len()))?;
        for x in self.0 {
            seq.serialize_element(&(x.time, x.project, u8::from(x.reached), x.jobs))?;
        }
        seq.end()
    }
}

/// An explained run's part of the page.
#[derive(Serialize)]
struct Why {
    /// Every text the hovers show, once (decisions and reasons repeat).
    texts: Vec<String>,
    /// The records the hovers show: [time, family, decision, reason]
    /// (indices into `texts`; the reason -1 when the policy gave none).
    recs: Vec<(f64, usize, usize, i64)>,
    /// Per stretch (in the order of `stretches`): the CPU scheduler's
    /// record that started it (the last one of its job at or before its
    /// start), or -1.
    seg: Vec<i64>,
    /// Per RPC (in the order of `rpcs`): its records (the fetcher's
    /// request, the server's verdicts, the outcome, the jobs reported) and
    /// how many more there were than the page keeps.
    rpc: Vec<(Vec<usize>, usize)>,
    /// Each project's fraction of the work done so far.
    share: Option<Plot>,
    /// What the CPU scheduler ranks projects by.
    rank: Option<Plot>,
}

/// A plot's step lines, one per project.
#[derive(Serialize)]
struct Plot {
    name: String,
    /// The resource shares as fractions (the share plot's dashed lines).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    shares: Vec<f64>,
    /// [time, value per project...]: at most [`max_points`], the last of
    /// each time bucket when there were more.
    pts: Vec<Vec<f64>>,
    /// When bucketed, per point: the least and the greatest value each
    /// project took in its bucket (empty when every point is kept).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    lo: Vec<Vec<f64>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    hi: Vec<Vec<f64>>,
}

/// The most points a plot embeds: a 100-day run stays a few MB.
const MAX_POINTS: usize = 2000;
/// The most values a plot embeds, all projects together: with 1,000
/// projects, 2,000 points each made plots of 25 MB.
const MAX_PLOT_VALUES: usize = 200_000;

/// The points a plot of `np` projects may embed: [`MAX_POINTS`], fewer
/// where that would pass [`MAX_PLOT_VALUES`] (100 at least).
fn max_points(np: usize) -> usize {
    (MAX_PLOT_VALUES / (np + 1)).clamp(100, MAX_POINTS)
}
/// The most records an RPC's hover keeps (a reply of many jobs has a
/// verdict for each).
const MAX_RPC_RECORDS: usize = 10;
/// The longest text a hover shows (in characters).
const MAX_TEXT: usize = 600;

/// Amounts closer than this are equal (shares are ratios of small numbers).
const EPS: f64 = 1e-9;

/// One piece placed on a lane: a part of `seg`'s stretch, or of its CPU
/// part (`cpu_part`), covering `[top, bottom)` of `lane`.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    pub seg: u32,
    pub cpu_part: bool,
    pub lane: u32,
    pub top: f64,
    pub bottom: f64,
}

/// A lane's pieces that have not ended yet: [top, bottom, end], in order
/// of their top (and of their placing, among equal tops).
type Busy = Vec<(f64, f64, f64)>;

/// Adds a piece to a lane, in order.
fn occupy(busy: &mut Busy, piece: (f64, f64, f64)) {
    let at = busy.partition_point(|x| x.0.total_cmp(&piece.0).is_le());
    busy.insert(at, piece);
}

/// The top of the first free gap of a lane, top first, that holds `frac`
/// (the first of [`gaps`] of that size; a lane is tried for each
/// fractional stretch, and there are hundreds of lanes).
fn first_gap(busy: &Busy, frac: f64) -> Option<f64> {
    let mut at = 0.0;
    for &(t, bo, _) in busy {
        if t > at + EPS && t - at >= frac - EPS {
            return Some(at);
        }
        at = f64::max(at, bo);
    }
    (at < 1.0 - EPS && 1.0 - at >= frac - EPS).then_some(at)
}

/// The free gaps of a lane, top first, each given to `gap` (a lane's
/// pieces are in order of their top).
fn gaps(busy: &Busy, mut gap: impl FnMut(f64, f64)) {
    let mut at = 0.0;
    for &(t, bo, _) in busy {
        if t > at + EPS {
            gap(at, t);
        }
        at = f64::max(at, bo);
    }
    if at < 1.0 - EPS {
        gap(at, 1.0);
    }
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
    let free: Vec<usize> = if whole == 0 {
        Vec::new()
    } else {
        order
            .iter()
            .copied()
            .filter(|&l| is_free(&lanes[l]))
            .collect()
    };
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
            order
                .iter()
                .filter(|l| !ws.contains(l))
                .find_map(|&l| first_gap(&lanes[l], frac).map(|top| (l, top)))
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
    let mut all: Vec<(usize, f64, f64)> = Vec::new();
    for &l in order {
        gaps(&lanes[l], |a, b| all.push((l, a, b)));
    }
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

/// Assigns lanes to the first `n` stretches, resource by resource, giving
/// each piece to `sink` as it is placed; returns the lane names. A lane is
/// one instance. Stretches are placed in order of their start; at one
/// time, the stretches of jobs that continue one that just ended first,
/// then larger ones, then by job id. A job that continues tries its former
/// lanes first. The CPU lanes carry the CPU jobs and the CPU part of GPU
/// jobs (what they compute on of the CPUs). A stretch is placed on what
/// the earlier ones left, so the pieces of the first `n` are theirs in the
/// whole run's packing too.
fn pack(tl: &Timeline, n: usize, mut sink: impl FnMut(Placed)) -> Vec<String> {
    type Last = std::collections::BTreeMap<(u64, bool), (f64, Vec<usize>)>;
    let segments = &tl.segments[..n.min(tl.segments.len())];
    let mut names = Vec::new();
    for (r, rname) in tl.rsc_names.iter().enumerate() {
        // (segment, CPU part): the amount is the segment's (as small as
        // can be: a stretch of a GPU job is two items).
        let amount = |i: u32| {
            let s = &segments[i as usize];
            if r == CPU {
                s.cpus
            } else {
                s.gpu_count
            }
        };
        let mut items: Vec<(u32, bool)> = Vec::new();
        for (i, s) in segments.iter().enumerate() {
            if r == CPU && s.cpus > EPS {
                items.push((i as u32, s.rsc != CPU));
            } else if r != CPU && s.rsc == r && s.gpu_count > EPS {
                items.push((i as u32, false));
            }
        }
        // Where each (job, part) was last: (end, lanes); forgotten once
        // the stretches start after its end (they can no longer continue it).
        let mut last: Last = Default::default();
        let mut forget_at = 4096;
        let continues = |it: &(u32, bool), last: &Last| {
            let s = &segments[it.0 as usize];
            last.get(&(s.job, it.1)).is_some_and(|(e, _)| *e == s.start)
        };
        items.sort_by(|a, b| {
            let (x, y) = (&segments[a.0 as usize], &segments[b.0 as usize]);
            x.start
                .total_cmp(&y.start)
                .then(amount(b.0).total_cmp(&amount(a.0)))
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
        // The lanes a stretch tries, in order (kept from one to the next).
        let mut order: Vec<usize> = Vec::new();
        let mut k = 0;
        while k < items.len() {
            // The stretches that start at one time: continuing ones first.
            let t = segments[items[k].0 as usize].start;
            let mut n = k;
            while n < items.len() && segments[items[n].0 as usize].start == t {
                n += 1;
            }
            if last.len() > forget_at {
                last.retain(|_, (e, _)| *e >= t);
                forget_at = forget_at.max(2 * last.len());
            }
            let mut group: Vec<(u32, bool)> = items[k..n].to_vec();
            group.sort_by_key(|it| !continues(it, &last));
            for l in lanes.iter_mut() {
                l.retain(|&(_, _, e)| e > t);
            }
            for it in group {
                let s = &segments[it.0 as usize];
                let before = last.get(&(s.job, it.1)).filter(|(e, _)| *e == s.start);
                let former: &[usize] = before.map_or(&[], |(_, ls)| ls);
                order.clear();
                order.extend_from_slice(former);
                order.extend((0..lanes.len()).filter(|l| !former.contains(l)));
                let got = place(&mut lanes, &order, amount(it.0), before.is_some());
                let mut used = Vec::new();
                for (l, top, bottom) in got {
                    occupy(&mut lanes[l], (top, bottom, s.end));
                    if !used.contains(&l) {
                        used.push(l);
                    }
                    sink(Placed {
                        seg: it.0,
                        cpu_part: it.1,
                        lane: (names.len() + l) as u32,
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
    names
}

/// What a page holds of a timeline: its first `segs` stretches, `rpcs`
/// RPCs and `off` host-off periods, all of them unless it was cut `at` a
/// time (see [`MAX_PAGE_ITEMS`]).
struct Extent {
    segs: usize,
    rpcs: usize,
    off: usize,
    blocked: usize,
    at: Option<f64>,
}

/// The lanes' names of the page, what it holds, and how many pieces: the
/// whole timeline if its items are at most `max`, else what started before
/// the first time at which they would pass it.
fn lay_out(tl: &Timeline, max: usize) -> (Vec<String>, Extent, usize) {
    let (segs, rpcs, off) = (&tl.segments, &tl.rpcs, &tl.host_off);
    let blocked = &tl.not_allowed;
    // Pieces per stretch, in case the page is cut.
    let mut count = vec![0u32; segs.len()];
    let mut pieces = 0;
    let names = pack(tl, segs.len(), |p| {
        count[p.seg as usize] = count[p.seg as usize].saturating_add(1);
        pieces += 1;
    });
    if pieces + rpcs.len() + off.len() + blocked.len() <= max {
        let all = Extent {
            segs: segs.len(),
            rpcs: rpcs.len(),
            off: off.len(),
            blocked: blocked.len(),
            at: None,
        };
        return (names, all, pieces);
    }
    // Items in time order (each list is), a time's items all or none.
    let (mut i, mut j, mut k, mut total, mut pieces) = (0, 0, 0, 0usize, 0usize);
    let mut b = 0;
    let mut at = 0.0;
    loop {
        let next = [
            segs.get(i).map(|s| s.start),
            rpcs.get(j).map(|x| x.time),
            off.get(k).map(|o| o.0),
            blocked.get(b).map(|o| o.0),
        ];
        let Some(t) = next.into_iter().flatten().min_by(f64::total_cmp) else {
            break;
        };
        let (mut i2, mut j2, mut k2, mut add) = (i, j, k, 0usize);
        while i2 < segs.len() && segs[i2].start <= t {
            add += count[i2] as usize;
            i2 += 1;
        }
        let p = add;
        while j2 < rpcs.len() && rpcs[j2].time <= t {
            add += 1;
            j2 += 1;
        }
        while k2 < off.len() && off[k2].0 <= t {
            add += 1;
            k2 += 1;
        }
        let mut b2 = b;
        while b2 < blocked.len() && blocked[b2].0 <= t {
            add += 1;
            b2 += 1;
        }
        if total + add > max {
            at = t;
            break;
        }
        (i, j, k, b, total, pieces) = (i2, j2, k2, b2, total + add, pieces + p);
    }
    let cut = Extent {
        segs: i,
        rpcs: j,
        off: k,
        blocked: b,
        at: Some(at),
    };
    (pack(tl, i, |_| {}), cut, pieces)
}

/// Four significant digits: enough for a plot, and short in the page.
fn round4(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let m = 10f64.powi(3 - x.abs().log10().floor() as i32);
    let y = (x * m).round() / m;
    if y.is_finite() {
        y
    } else {
        x
    }
}

/// A step function's points (time, a value per series), at most `max`:
/// all of them when there are no more, else the last point of each of
/// `max` equal buckets of `[0, end]`, with the least and greatest value
/// each series took in the bucket (counting the value it entered with) when
/// `envelope`. Values are rounded to four digits. `pts` are the `n` points,
/// made as they are read (a plot of 1,000 projects is not copied whole).
fn downsample(
    n: usize,
    pts: impl Iterator<Item = (f64, Vec<f64>)>,
    end: f64,
    max: usize,
    envelope: bool,
) -> Plot {
    let row = |t: f64, v: &[f64]| -> Vec<f64> {
        std::iter::once(t)
            .chain(v.iter().map(|&x| round4(x)))
            .collect()
    };
    let mut plot = Plot {
        name: String::new(),
        shares: Vec::new(),
        pts: Vec::new(),
        lo: Vec::new(),
        hi: Vec::new(),
    };
    if n <= max || end <= 0.0 {
        plot.pts = pts.map(|(t, v)| row(t, &v)).collect();
        return plot;
    }
    let width = end / max as f64;
    let bucket = |t: f64| ((t / width).floor().max(0.0) as usize).min(max - 1);
    // The bucket being read: its number, least and greatest values, and
    // last point.
    struct Bucket {
        n: usize,
        lo: Vec<f64>,
        hi: Vec<f64>,
        t: f64,
        v: Vec<f64>,
    }
    let flush = |c: Bucket, plot: &mut Plot| {
        plot.pts.push(row(c.t, &c.v));
        if envelope {
            plot.lo.push(c.lo.iter().map(|&x| round4(x)).collect());
            plot.hi.push(c.hi.iter().map(|&x| round4(x)).collect());
        }
        c.v
    };
    // The last point of the previous bucket.
    let mut prev: Option<Vec<f64>> = None;
    let mut cur: Option<Bucket> = None;
    for (t, v) in pts {
        let b = bucket(t);
        if cur.as_ref().is_some_and(|c| c.n != b) {
            prev = cur.take().map(|c| flush(c, &mut plot));
        }
        let c = cur.get_or_insert_with(|| {
            let (lo, hi) = match &prev {
                Some(p) => (p.clone(), p.clone()),
                None => (v.clone(), v.clone()),
            };
            Bucket {
                n: b,
                lo,
                hi,
                t,
                v: Vec::new(),
            }
        });
        for (i, &x) in v.iter().enumerate() {
            if i < c.lo.len() {
                c.lo[i] = c.lo[i].min(x);
                c.hi[i] = c.hi[i].max(x);
            }
        }
        c.t = t;
        c.v = v;
    }
    if let Some(c) = cur {
        flush(c, &mut plot);
    }
    plot
}

/// At most `MAX_TEXT` characters.
fn clip(s: &str) -> String {
    match s.char_indices().nth(MAX_TEXT) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

/// What the page shows of an explained run: the record behind each
/// stretch and each RPC the page holds (`x`), and the two plots' data up
/// to where it was cut.
fn why(tl: &Timeline, r: &RunReport, ex: &Explanation, end: f64, x: &Extent) -> Why {
    use std::collections::HashMap;
    use vcsim_framework::explain::Source;
    use vcsim_framework::Family;
    let np = tl.project_names.len();
    let until = x.at.unwrap_or(f64::INFINITY);
    // Each text once, numbered in the order first seen.
    let mut text_at: HashMap<String, usize> = HashMap::new();
    let mut intern = |s: String| -> usize {
        let n = text_at.len();
        *text_at.entry(s).or_insert(n)
    };
    let mut recs = Vec::new();
    // Record index in `ex.records` -> index in `recs`.
    let mut kept: Vec<usize> = vec![usize::MAX; ex.records.len()];
    let mut keep = |i: usize, recs: &mut Vec<(f64, usize, usize, i64)>| -> usize {
        if kept[i] != usize::MAX {
            return kept[i];
        }
        let rec = &ex.records[i];
        let reason = if !rec.reason.text.is_empty() {
            intern(clip(&rec.reason.text)) as i64
        } else if matches!(rec.source, Source::Policy(_)) && !rec.reason.data.is_empty() {
            let d: Vec<String> = rec
                .reason
                .data
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            intern(clip(&d.join(", "))) as i64
        } else {
            -1
        };
        let family = intern(rec.source.key().to_string());
        let decision = intern(clip(&rec.decision));
        recs.push((rec.time, family, decision, reason));
        kept[i] = recs.len() - 1;
        recs.len() - 1
    };
    // The CPU scheduler's records by job, and the records of an RPC by
    // (time, project); each in time order.
    let mut by_job: Vec<(u64, usize)> = Vec::new();
    let mut by_rpc: Vec<((u64, usize), usize)> = Vec::new();
    for (i, rec) in ex.records.iter().enumerate() {
        match (rec.source, rec.job, rec.project) {
            (Source::Policy(Family::Cpu), Some(job), _) => by_job.push((job, i)),
            (Source::Policy(Family::Fetch | Family::Send) | Source::Outcome, _, Some(p)) => {
                by_rpc.push(((rec.time.to_bits(), p), i))
            }
            _ => {}
        }
    }
    by_job.sort_by_key(|e| e.0);
    by_rpc.sort_by_key(|e| e.0);
    fn all_of<K: Ord + Copy>(v: &[(K, usize)], k: K) -> &[(K, usize)] {
        let a = v.partition_point(|e| e.0 < k);
        let b = v.partition_point(|e| e.0 <= k);
        &v[a..b]
    }
    let seg = tl.segments[..x.segs]
        .iter()
        .map(|s| {
            let list = all_of(&by_job, s.job);
            let n = list.partition_point(|&(_, i)| ex.records[i].time <= s.start);
            if n == 0 {
                -1
            } else {
                keep(list[n - 1].1, &mut recs) as i64
            }
        })
        .collect();
    drop(by_job);
    // Several RPCs to one project in one step share (time, project): the
    // k-th of them has the k-th run of records, each run beginning with
    // its request (the fetcher's record).
    let mut seen: Vec<((u64, usize), usize)> = Vec::new();
    let rpc = tl.rpcs[..x.rpcs]
        .iter()
        .map(|x| {
            let key = (x.time.to_bits(), x.project);
            let k = match seen.iter_mut().find(|e| e.0 == key) {
                Some(e) => {
                    e.1 += 1;
                    e.1
                }
                None => {
                    seen.retain(|e| e.0 .0 == key.0);
                    seen.push((key, 0));
                    0
                }
            };
            let group = all_of(&by_rpc, key);
            let starts: Vec<usize> = (0..group.len())
                .filter(|&n| {
                    n == 0 || ex.records[group[n].1].source == Source::Policy(Family::Fetch)
                })
                .collect();
            let list = match starts.get(k) {
                Some(&a) => &group[a..starts.get(k + 1).copied().unwrap_or(group.len())],
                None => &group[..0],
            };
            if list.is_empty() {
                return (Vec::new(), 0);
            }
            // The request and the RPC's outcome first, then the rest in
            // order, up to the cap; shown in the order they happened.
            let main = |i: usize| {
                let rec = &ex.records[i];
                rec.source == Source::Policy(Family::Fetch)
                    || matches!(
                        rec.outcome,
                        vcsim_framework::explain::Outcome::RpcReached
                            | vcsim_framework::explain::Outcome::RpcFailed
                    )
            };
            let mut chosen: Vec<usize> = list.iter().map(|e| e.1).filter(|&i| main(i)).collect();
            for &(_, i) in list {
                if chosen.len() >= MAX_RPC_RECORDS {
                    break;
                }
                if !main(i) {
                    chosen.push(i);
                }
            }
            chosen.sort_unstable();
            let more = list.len() - chosen.len();
            (
                chosen.into_iter().map(|i| keep(i, &mut recs)).collect(),
                more,
            )
        })
        .collect();
    drop(by_rpc);
    let mut texts = vec![String::new(); text_at.len()];
    for (s, i) in text_at {
        texts[i] = s;
    }
    // Each project's fraction of the work done so far. Work done never
    // falls: each project's greatest so far (a job's work must not vanish
    // from the plot between its end and its report).
    let fractions = || {
        let mut most = vec![0.0f64; np];
        ex.work_done
            .iter()
            .take_while(move |(t, _)| *t < until)
            .filter_map(move |(t, w)| {
                for (m, &x) in most.iter_mut().zip(w) {
                    *m = m.max(x);
                }
                let w = &most;
                let sum: f64 = w.iter().sum();
                (sum > 0.0).then(|| {
                    let mut f: Vec<f64> = w.iter().map(|x| x / sum).collect();
                    f.resize(np, f64::NAN);
                    (*t, f)
                })
            })
    };
    let shares: Vec<f64> = r.projects.iter().map(|p| p.share).collect();
    let total: f64 = shares.iter().sum();
    let n = fractions().count();
    let share = (n > 0).then(|| {
        let mut plot = downsample(n, fractions(), end, max_points(np), false);
        plot.name = "share of the work done so far".into();
        plot.shares = shares
            .iter()
            .map(|s| if total > 0.0 { round4(s / total) } else { 0.0 })
            .collect();
        plot
    });
    const MAX_RANK_NAMES: usize = 5;
    fn cut_name(s: &str) -> String {
        const MAX: usize = 120;
        if s.chars().count() <= MAX {
            s.to_string()
        } else {
            format!("{}…", s.chars().take(MAX - 1).collect::<String>())
        }
    }
    let rankings = &ex.rankings[..ex.rankings.partition_point(|(t, _)| *t < until)];
    let rank = (!rankings.is_empty()).then(|| {
        // The plot's label: the first few names the scheduler gave, each
        // cut, and how many more (a script may give a new one at every
        // call: joined whole, they took gigabytes).
        let mut distinct: std::collections::BTreeSet<&str> = Default::default();
        let mut names: Vec<String> = Vec::new();
        for (_, rk) in rankings {
            if distinct.insert(rk.name.as_str()) && names.len() < MAX_RANK_NAMES {
                names.push(cut_name(&rk.name));
            }
        }
        if distinct.len() > names.len() {
            names.push(format!("and {} more", distinct.len() - names.len()));
        }
        let values = rankings.iter().map(|(t, rk)| {
            let mut v = rk.values.clone();
            v.resize(np, f64::NAN);
            (*t, v)
        });
        let mut plot = downsample(rankings.len(), values, end, max_points(np), true);
        plot.name = names.join(" / ");
        plot
    });
    Why {
        texts,
        recs,
        seg,
        rpc,
        share,
        rank,
    }
}

/// A page, and the note for standard error if it was cut (its title says
/// the same).
pub struct Rendered {
    pub html: String,
    pub notes: Vec<String>,
}

/// The page for a run's timeline.
pub fn render(tl: &Timeline, r: &RunReport, ex: Option<&Explanation>) -> Rendered {
    let mut out = Out {
        buf: Vec::new(),
        attr: false,
    };
    let cut = write_page(&mut out, tl, r, ex, None, None, MAX_PAGE_ITEMS);
    Rendered {
        // (Bytes of UTF-8 strings and ASCII only: still UTF-8.)
        html: String::from_utf8(out.buf).unwrap_or_default(),
        notes: cut
            .map(|cut| format!("note: the timeline page is {cut}"))
            .into_iter()
            .collect(),
    }
}

/// Where a page is written: as it is, or escaped to be an HTML attribute's
/// value (a frame's `srcdoc`), without making the page first.
struct Out {
    buf: Vec<u8>,
    attr: bool,
}

impl Out {
    fn put(&mut self, bytes: &[u8]) {
        if !self.attr {
            self.buf.extend_from_slice(bytes);
            return;
        }
        // As `html_escape`; these are ASCII, so never part of a UTF-8
        // sequence.
        for part in bytes.split_inclusive(|b| matches!(b, b'&' | b'<' | b'>' | b'"')) {
            let (last, rest) = part.split_last().expect("not empty");
            let escaped: &[u8] = match last {
                b'&' => b"&amp;",
                b'<' => b"&lt;",
                b'>' => b"&gt;",
                b'"' => b"&quot;",
                _ => {
                    self.buf.extend_from_slice(part);
                    continue;
                }
            };
            self.buf.extend_from_slice(rest);
            self.buf.extend_from_slice(escaped);
        }
    }
}

/// Writes the page, with a time marked across it and a title of its own
/// (for `vcsim diverge`'s pair of runs); `max`: [`MAX_PAGE_ITEMS`]. Returns
/// where the page was cut, in words, if it was.
fn write_page(
    out: &mut Out,
    tl: &Timeline,
    r: &RunReport,
    ex: Option<&Explanation>,
    mark: Option<f64>,
    title: Option<&str>,
    max: usize,
) -> Option<String> {
    let (lane_names, x, pieces) = lay_out(tl, max);
    let (segments, rpcs, off) = (
        &tl.segments[..x.segs],
        &tl.rpcs[..x.rpcs],
        &tl.host_off[..x.off],
    );
    let blocked = &tl.not_allowed[..x.blocked];
    let mut end: f64 = 0.0;
    for s in segments {
        end = end.max(s.end);
    }
    for x in rpcs {
        end = end.max(x.time);
    }
    for &(_, e) in off {
        end = end.max(e);
    }
    for &(_, e, _) in blocked {
        end = end.max(e);
    }
    let end = end.max(1.0);
    let why = ex.map(|ex| why(tl, r, ex, end, &x));
    let mut title = title.map_or_else(
        || format!("{} · {} · seed {}", r.scenario, r.policy, r.seed),
        str::to_string,
    );
    let cut = x.at.map(|at| {
        format!(
            "cut at {}: a page holds at most {max} pieces of stretches, RPC ticks and host-off periods",
            vcsim_framework::explain::clock(at)
        )
    });
    if let Some(cut) = &cut {
        title.push_str(&format!(" · {cut}"));
    }
    let page = Page {
        title,
        projects: &tl.project_names,
        rsc_names: &tl.rsc_names,
        lanes: lane_names,
        segs: Pieces {
            tl,
            n: x.segs,
            len: pieces,
        },
        stretches: Stretches(segments),
        rpcs: Rpcs(rpcs),
        off,
        blocked,
        end,
        metrics: &r.metrics,
        why,
        mark,
    };
    let title = html_escape(&page.title);
    // Split first: a title may hold anything, `{{DATA}}` too.
    let (before, after) = TEMPLATE.split_once("{{DATA}}").unwrap_or((TEMPLATE, ""));
    let (before, after) = (
        before.replace("{{TITLE}}", &title),
        after.replace("{{TITLE}}", &title),
    );
    // The data is written straight into the page, not built and copied:
    // a page of 100 MB (1,000 projects, 320 lanes) took four copies.
    out.put(before.as_bytes());
    let at = out.buf.len();
    if serde_json::to_writer(NoLessThan(out), &page).is_err() {
        out.buf.truncate(at);
        out.put(b"{}");
    }
    out.put(after.as_bytes());
    cut
}

/// A writer that escapes every `<` as `\u003c` (valid in JSON strings, the
/// one place a `<` can be): with no `<` in the script element (names and
/// reasons may hold anything), neither `</script>` nor `<!--` can change
/// how it parses. `<` is ASCII, so no UTF-8 sequence holds its byte.
struct NoLessThan<'a>(&'a mut Out);

impl std::io::Write for NoLessThan<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for part in buf.split_inclusive(|&b| b == b'<') {
            match part.split_last() {
                Some((b'<', rest)) => {
                    self.0.put(rest);
                    self.0.put(b"\\u003c");
                }
                _ => self.0.put(part),
            }
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Two runs' pages one above the other (`vcsim diverge --timeline`): each
/// a whole timeline page in a frame, the divergence marked in both, and
/// their zoom and pan kept the same (the frames tell each other their view).
/// Each holds at most half of [`MAX_PAGE_ITEMS`], so that the two are the
/// size of one page.
pub fn render_pair(
    runs: [(&Timeline, &RunReport, &Explanation, &str); 2],
    mark: Option<f64>,
) -> Rendered {
    pair_within(runs, mark, MAX_PAGE_ITEMS / 2)
}

/// [`render_pair`], each page holding at most `max` items.
fn pair_within(
    runs: [(&Timeline, &RunReport, &Explanation, &str); 2],
    mark: Option<f64>,
    max: usize,
) -> Rendered {
    let mut notes = Vec::new();
    let when = mark.map_or("the runs do not diverge".to_string(), |t| {
        format!(
            "first divergence at {} (t={t} s), marked in red in both",
            vcsim_framework::explain::clock(t)
        )
    });
    let head = PAIR_TEMPLATE.replace("{{WHEN}}", &html_escape(&when));
    let (before, after) = head.split_once("{{FRAMES}}").unwrap_or((&head, ""));
    // Each page is written escaped straight into its frame.
    let mut out = Out {
        buf: Vec::new(),
        attr: false,
    };
    out.put(before.as_bytes());
    // Where the page says that a run's timeline was cut, known only once
    // the frames are written.
    let cut_at = out.buf.len();
    for (i, (tl, r, ex, what)) in runs.into_iter().enumerate() {
        let name = ["A", "B"][i];
        let title = format!("{name}: {} · {what}", r.scenario);
        out.put(
            format!(
                "<iframe id=\"run{name}\" title=\"{}\" srcdoc=\"",
                html_escape(&title)
            )
            .as_bytes(),
        );
        out.attr = true;
        if let Some(cut) = write_page(&mut out, tl, r, Some(ex), mark, Some(&title), max) {
            notes.push(format!("note: run {name}'s timeline is {cut}"));
        }
        out.attr = false;
        out.put(b"\"></iframe>\n");
    }
    out.put(after.as_bytes());
    if !notes.is_empty() {
        let said: Vec<String> = notes
            .iter()
            .map(|n| html_escape(n.trim_start_matches("note: ")))
            .collect();
        let p = format!("<p class=\"cut\">{}</p>\n", said.join("<br>"));
        out.buf.splice(cut_at..cut_at, p.into_bytes());
    }
    Rendered {
        html: String::from_utf8(out.buf).unwrap_or_default(),
        notes,
    }
}

const PAIR_TEMPLATE: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>vcsim diverge</title>
<style>
body { font: 13px system-ui, sans-serif; margin: 12px; color: #222; }
h1 { font-size: 16px; margin: 0 0 6px; }
iframe { display: block; width: 100%; border: 0; border-top: 2px solid #ccc; height: 600px; }
.cut { color: #b00; }
</style></head>
<body>
<h1>vcsim diverge: {{WHEN}}</h1>
<p style="color:#666">Two runs on one time axis: zoom or pan either and the other follows.</p>
{{FRAMES}}<script>
(function () {
  "use strict";
  const frames = Array.from(document.querySelectorAll("iframe"));
  window.addEventListener("message", (e) => {
    const d = e.data || {};
    const from = frames.find((f) => f.contentWindow === e.source);
    if (!from) return;
    if (d.vcsimHeight) from.style.height = (d.vcsimHeight + 40) + "px";
    if (d.vcsimView) for (const f of frames) if (f !== from) f.contentWindow.postMessage(d, "*");
  });
})();
</script>
</body></html>
"##;

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
#tip { position: absolute; pointer-events: none; background: #fffff4; border: 1px solid #888; padding: 4px 6px; font-size: 12px; white-space: pre-wrap; max-width: 560px; display: none; box-shadow: 1px 1px 4px #0003; z-index: 2; }
canvas.plotcv { margin-top: 10px; }
#labels div.plot-label { margin-top: 10px; align-items: flex-start; padding-top: 20px; color: #444; }
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
<p style="color:#666">Wheel: zoom · drag: pan · hover: details. A lane is one CPU or GPU; a job covers as many lanes as it computes on (a 4-CPU job four lanes, a 0.5-GPU job half a lane), and a GPU job's share of the CPUs is drawn paler on the CPU lanes. Dark top edge: the job ran in EDF (deadline) mode; red bottom edge and hatching: the job was reported late. Top track: host unavailable (dark grey, shading the lanes), computing not allowed while it is on (mid grey, shading the lanes: BOINC's <code>active_frac</code>), GPU computing not allowed (light grey: <code>gpu_active_frac</code>). RPC ticks: filled when the project answered, hollow when it was down. Zoomed out, a pixel column shows the project that used most of it, paler when the lane was partly idle.<span id="whyhelp"></span></p>
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
  addLabel("", AXIS_H); addLabel("host", OFF_H + GAP); addLabel("RPCs", RPC_H + GAP);
  D.lanes.forEach((n) => addLabel(n, LANE_H, "lane-label"));

  // An explained run: the records behind stretches and RPCs, and the
  // plots under the lanes (the lanes' time axis and zoom).
  const WHY = D.why || null, PLOT_H = 160;
  const plots = [];
  if (WHY && WHY.share) plots.push({ id: "share-plot", label: "work share", P: WHY.share, share: true });
  if (WHY && WHY.rank) plots.push({ id: "rank-plot", label: "ranking", P: WHY.rank, share: false });
  if (plots.length) addLabel("", 4);
  for (const pl of plots) {
    const c = document.createElement("canvas"); c.id = pl.id; c.className = "plotcv";
    document.getElementById("plot").insertBefore(c, document.getElementById("tip"));
    pl.cv = c; pl.ctx = c.getContext("2d");
    addLabel(pl.label, PLOT_H, "plot-label");
    const P = pl.P;
    // Share violation so far, per point: sum over projects of |fraction - share|.
    if (pl.share) pl.viol = P.pts.map((r) => {
      let v = 0; for (let p = 0; p < NP; p++) if (r[p + 1] != null) v += Math.abs(r[p + 1] - (P.shares[p] || 0));
      return v;
    });
  }
  if (WHY) document.getElementById("whyhelp").textContent = " Hover a bar for the CPU scheduler's decision that started it and its reason, an RPC tick for the fetcher's request, the server's verdicts and the outcome." +
    (plots.length ? " Under the lanes, on the same time axis: each project's share of the work done so far (solid) against its resource share (dashed), with the share violation so far (grey)" + (WHY.rank ? ", and what the CPU scheduler ranks projects by" : "") + "; hover them for the values." : "");
  function rec(k) {
    const [t, fam, dec, rea] = WHY.recs[k];
    return { t, fam: WHY.texts[fam], dec: WHY.texts[dec], rea: rea >= 0 ? WHY.texts[rea] : null };
  }

  const cv = document.getElementById("cv"), ctx = cv.getContext("2d"), tip = document.getElementById("tip");
  let W = 800, t0 = 0, t1 = D.end;
  const stats = { drawn: 0, aggregated: 0, plot_columns: 0 };
  function resize() {
    W = Math.max(200, document.getElementById("plot").clientWidth);
    const dpr = window.devicePixelRatio || 1;
    cv.width = W * dpr; cv.height = H * dpr; cv.style.width = W + "px"; cv.style.height = H + "px";
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    for (const pl of plots) {
      pl.cv.width = W * dpr; pl.cv.height = PLOT_H * dpr; pl.cv.style.width = W + "px"; pl.cv.style.height = PLOT_H + "px";
      pl.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    }
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
    // Computing not allowed (mid grey, the lanes shaded too), or only GPU
    // computing (light grey): why lanes are empty while the host is on.
    for (const [a, b, gpuOnly] of D.blocked) {
      if (b < t0 || a > t1) continue;
      const x0 = X(a), w = Math.max(1, X(b) - x0);
      ctx.fillStyle = gpuOnly ? "#ddd" : "#bbb"; ctx.fillRect(x0, AXIS_H, w, OFF_H);
      if (!gpuOnly) { ctx.fillStyle = "rgba(0,0,0,0.04)"; ctx.fillRect(x0, lanesTop, w, NL * LANE_H); }
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
    stats.plot_columns = 0;
    for (const pl of plots) drawPlot(pl);
    if (D.mark != null) {
      // The time `vcsim diverge` marks: a red line over lanes and plots.
      const x = Math.round(X(D.mark)) + 0.5;
      if (x >= 0 && x <= W) {
        for (const [g, h] of [[ctx, H]].concat(plots.map((pl) => [pl.ctx, PLOT_H]))) {
          g.save(); g.strokeStyle = "#e00"; g.lineWidth = 2; g.beginPath(); g.moveTo(x, 0); g.lineTo(x, h); g.stroke(); g.restore();
        }
        ctx.save(); ctx.fillStyle = "#e00"; ctx.font = "12px system-ui, sans-serif";
        ctx.fillText("first divergence", Math.min(x + 4, W - 100), AXIS_H - 4); ctx.restore();
      }
    }
    // In a frame of `vcsim diverge`'s page: tell the other run's frame.
    if (window.parent !== window && !syncing) window.parent.postMessage({ vcsimView: [t0, t1] }, "*");
  }
  let syncing = false;
  window.addEventListener("message", (e) => {
    const v = e.data && e.data.vcsimView;
    if (!v) return;
    syncing = true; t0 = v[0]; t1 = v[1]; draw(); syncing = false;
  });
  // The last point at or before `t` (-1 if none).
  function atOrBefore(pts, t) {
    let a = 0, b = pts.length;
    while (a < b) { const m = (a + b) >> 1; if (pts[m][0] <= t) a = m + 1; else b = m; }
    return a - 1;
  }
  function fmtNum(v) {
    const a = Math.abs(v);
    if (a >= 1e6) return +(v / 1e6).toPrecision(3) + "M";
    if (a >= 1e4) return +(v / 1e3).toPrecision(3) + "k";
    return String(+v.toPrecision(3));
  }
  const pct = (v) => +(v * 100).toFixed(1) + "%";
  function niceTicks(lo, hi) {
    const raw = (hi - lo) / 4, e = Math.pow(10, Math.floor(Math.log10(raw)));
    const st = [1, 2, 5, 10].map((k) => k * e).find((k) => k >= raw) || raw;
    const out = [];
    for (let v = Math.ceil(lo / st) * st; v <= hi + st * 1e-9; v += st) out.push(Math.abs(v) < st * 1e-9 ? 0 : v);
    return out;
  }
  const PLOT_TOP = 20, PLOT_BOT = PLOT_H - 6;
  // A plot's range of values over what is visible. The share plot starts
  // at 0 and fits the shares and 99% of the fractions and of the share
  // violations shown: the first hours of a run, when one job is most of
  // the work, do not flatten the rest (they are clipped).
  function plotRange(pl) {
    const P = pl.P, pts = P.pts;
    let a = Math.max(0, atOrBefore(pts, t0)), b = atOrBefore(pts, t1);
    let lo = Infinity, hi = -Infinity;
    const see = (v) => { if (v != null && isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; } };
    if (pl.share) {
      const vs = [];
      for (let i = a; i <= b; i++) for (let p = 0; p < NP; p++) { const v = pts[i][p + 1]; if (v != null && isFinite(v)) vs.push(v); }
      const q99 = (xs) => { xs.sort((x, y) => x - y); return xs[Math.floor((xs.length - 1) * 0.99)]; };
      see(0); for (const x of P.shares) see(x * 1.2);
      if (vs.length) see(Math.min(1, q99(vs) * 1.1));
      if (b >= a) see(q99(pl.viol.slice(a, b + 1)) * 1.1);
      return [0, hi];
    }
    for (let i = a; i <= b; i++) for (let p = 0; p < NP; p++) {
      see(pts[i][p + 1]); if (P.lo) { see(P.lo[i][p]); see(P.hi[i][p]); }
    }
    see(0);
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    if (hi - lo < 1e-12) { hi = lo + 1; }
    const pad = (hi - lo) * 0.06;
    return [lo - pad, hi + pad];
  }
  // A step line of points a..b (a: the last at or before t0), one value
  // per point (`val(i)`, with the bucket's least and greatest when the page
  // was given them); with more points than pixels, one stroke per pixel
  // column from the least to the greatest value, then its last.
  function stepLine(g, pts, val, lo, hi, Y) {
    const a = Math.max(0, atOrBefore(pts, t0)), b = atOrBefore(pts, t1);
    if (b < 0) return;
    const agg = b - a + 1 > W;
    if (agg) stats.plot_columns++;
    g.beginPath();
    let prev = null, cx = null, mn = 0, mx = 0, last = 0;
    const flush = () => {
      if (cx === null) return;
      if (prev === null) g.moveTo(cx, Y(mn)); else { g.lineTo(cx, Y(prev)); g.lineTo(cx, Y(mn)); }
      g.lineTo(cx, Y(mx)); g.lineTo(cx, Y(last)); prev = last; cx = null;
    };
    for (let i = a; i <= b; i++) {
      const v = val(i);
      if (v == null || !isFinite(v)) { flush(); prev = null; continue; }
      const x = agg ? Math.floor(X(pts[i][0])) + 0.5 : X(pts[i][0]);
      if (cx !== null && x !== cx) flush();
      if (cx === null) { cx = x; mn = mx = v; if (prev !== null) { mn = Math.min(mn, prev); mx = Math.max(mx, prev); } }
      mn = Math.min(mn, v); mx = Math.max(mx, v); last = v;
      if (lo) { const l = lo(i), h = hi(i); if (l != null) mn = Math.min(mn, l); if (h != null) mx = Math.max(mx, h); }
    }
    flush();
    if (prev !== null) g.lineTo(Math.min(X(D.end), W + 1), Y(prev));
    g.stroke();
  }
  function drawPlot(pl) {
    const g = pl.ctx, P = pl.P;
    g.clearRect(0, 0, W, PLOT_H);
    g.fillStyle = "#f7f7f7"; g.fillRect(0, PLOT_TOP, W, PLOT_BOT - PLOT_TOP);
    const [lo, hi] = plotRange(pl);
    const Y = (v) => PLOT_BOT - (v - lo) / (hi - lo) * (PLOT_BOT - PLOT_TOP);
    pl.Y = Y;
    g.lineWidth = 1; g.strokeStyle = "#e2e2e2";
    const step = niceStep(t1 - t0);
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const x = Math.round(X(t)) + 0.5; g.beginPath(); g.moveTo(x, PLOT_TOP); g.lineTo(x, PLOT_BOT); g.stroke();
    }
    g.save(); g.beginPath(); g.rect(0, PLOT_TOP, W, PLOT_BOT - PLOT_TOP); g.clip();
    const ticks = niceTicks(lo, hi);
    for (const v of ticks) { const y = Math.round(Y(v)) + 0.5; g.strokeStyle = v === 0 ? "#aaa" : "#e2e2e2"; g.beginPath(); g.moveTo(0, y); g.lineTo(W, y); g.stroke(); }
    if (pl.share) {
      g.setLineDash([6, 4]); g.lineWidth = 1.5;
      P.shares.forEach((x, p) => { g.strokeStyle = color(p); const y = Math.round(Y(x)) + 0.5; g.beginPath(); g.moveTo(0, y); g.lineTo(Math.min(X(D.end), W), y); g.stroke(); });
      g.setLineDash([]);
      g.strokeStyle = "#888"; g.lineWidth = 1;
      stepLine(g, P.pts, (i) => pl.viol[i], null, null, Y);
    }
    g.lineWidth = 1.5;
    for (let p = 0; p < NP; p++) {
      g.strokeStyle = color(p);
      stepLine(g, P.pts, (i) => P.pts[i][p + 1], P.lo ? (i) => P.lo[i][p] : null, P.hi ? (i) => P.hi[i][p] : null, Y);
    }
    g.lineWidth = 1;
    g.restore();
    // Tick labels and the title, on a light ground so lines do not hide them.
    g.font = "11px sans-serif";
    for (const v of ticks) {
      const y = Y(v), text = pl.share ? pct(v) : fmtNum(v);
      if (y < PLOT_TOP + 4 || y > PLOT_BOT - 2) continue;
      const w = g.measureText(text).width;
      g.fillStyle = "rgba(255,255,255,0.85)"; g.fillRect(0, y - 7, w + 5, 13);
      g.fillStyle = "#555"; g.fillText(text, 3, y + 4);
    }
    g.fillStyle = "#333"; g.font = "12px sans-serif";
    g.fillText(pl.share ? "Each project's share of the work done so far (solid) against its resource share (dashed); grey: share violation so far"
      : "What the CPU scheduler ranks projects by: " + P.name, 2, 13);
  }
  function plotHover(pl, x) {
    const P = pl.P, t = T(x), i = atOrBefore(P.pts, t);
    const lines = [(pl.share ? "share of the work done so far" : P.name) + " at " + fmt(t)];
    if (i < 0) { lines.push("nothing yet"); return lines.join("\n"); }
    for (let p = 0; p < NP; p++) {
      const v = P.pts[i][p + 1];
      if (v == null) continue;
      let line = D.projects[p] + ": " + (pl.share ? pct(v) + " (resource share " + pct(P.shares[p] || 0) + ")" : fmtNum(v));
      if (P.lo && P.lo[i][p] !== P.hi[i][p]) line += " (between " + (pl.share ? pct(P.lo[i][p]) : fmtNum(P.lo[i][p])) + " and " + (pl.share ? pct(P.hi[i][p]) : fmtNum(P.hi[i][p])) + " since " + fmt(i ? P.pts[i - 1][0] : 0) + ")";
      lines.push(line);
    }
    if (pl.viol) lines.push("share violation so far: " + (+pl.viol[i].toFixed(4)));
    return lines.join("\n");
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
  // The index of the RPC tick under (x, y), or -1.
  function rpcAt(x, y) {
    const ry = AXIS_H + OFF_H + GAP;
    if (y < ry || y > ry + RPC_H) return -1;
    let best = -1, bd = 4;
    D.rpcs.forEach((r, i) => { const d = Math.abs(X(r[0]) - x); if (d < bd) { bd = d; best = i; } });
    return best;
  }
  function describeRpc(i) {
    const r = D.rpcs[i];
    let text = "RPC to " + D.projects[r[1]] + " at " + fmt(r[0]) + (r[2] ? " · " + r[3] + " jobs received" : " · project down");
    if (WHY && WHY.rpc[i]) {
      const [ks, more] = WHY.rpc[i];
      for (const k of ks) {
        const q = rec(k);
        text += "\n" + q.fam + ": " + q.dec + (q.rea ? "\n    why: " + q.rea : "");
      }
      if (more) text += "\n… and " + more + " more";
    }
    return text;
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
      "\nEDF mode: " + ((s[5] & 1) ? "yes" : "no") + " · reported late: " + ((s[5] & 2) ? "yes" : "no") + whyOf(s);
  }
  // The CPU scheduler's decision that started the stretch, and its reason.
  function whyOf(s) {
    if (!WHY) return "";
    const k = WHY.seg[s[7]];
    if (k == null || k < 0) return "\ndecision: none recorded";
    const q = rec(k);
    return "\ndecision: " + q.dec + (q.t !== s[1] ? " (at " + fmt(q.t) + ")" : "") +
      "\nwhy: " + (q.rea || "the scheduler gave no reason");
  }
  function hover(ev, c) {
    const rect = c.getBoundingClientRect();
    const x = ev.clientX - rect.left, y = ev.clientY - rect.top;
    let text = null;
    if (c === cv) {
      const s = segAt(x, y);
      if (s) text = describe(s);
      else {
        const i = rpcAt(x, y);
        if (i >= 0) text = describeRpc(i);
      }
    } else {
      const pl = plots.find((q) => q.cv === c);
      if (pl && y >= PLOT_TOP) text = plotHover(pl, x);
    }
    if (!text) { tip.style.display = "none"; return null; }
    tip.textContent = text; tip.style.display = "block";
    tip.style.left = Math.max(0, Math.min(x + 12, W - tip.offsetWidth - 4)) + "px";
    tip.style.top = (c.offsetTop + y + 14) + "px";
    return text;
  }
  let drag = null;
  window.addEventListener("mousemove", (ev) => {
    if (!drag) return;
    const dt = (ev.clientX - drag.x) / W * (drag.t1 - drag.t0);
    t0 = drag.t0 - dt; t1 = drag.t1 - dt; draw();
  });
  window.addEventListener("mouseup", () => { drag = null; });
  for (const c of [cv].concat(plots.map((q) => q.cv))) {
    c.addEventListener("mousemove", (ev) => { if (!drag) hover(ev, c); });
    c.addEventListener("mouseleave", () => { tip.style.display = "none"; });
    c.addEventListener("mousedown", (ev) => { drag = { x: ev.clientX, t0, t1 }; });
    c.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const rect = c.getBoundingClientRect(), t = T(ev.clientX - rect.left);
      const k = Math.exp(ev.deltaY * 0.002);
      let span = Math.min(D.end * 1.05, Math.max(60, (t1 - t0) * k));
      t0 = t - (t - t0) * span / (t1 - t0); t1 = t0 + span; draw();
    }, { passive: false });
  }
  document.getElementById("fit").addEventListener("click", () => { t0 = 0; t1 = D.end; draw(); });
  window.addEventListener("resize", () => { resize(); draw(); });
  resize(); draw();
  if (window.parent !== window) window.parent.postMessage({ vcsimHeight: document.body.scrollHeight }, "*");

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
    // An explained run: the plots on the page, an RPC tick's hover (the
    // first RPC with records), and the share plot's hover at its middle.
    out.plots = Array.from(document.querySelectorAll("canvas.plotcv")).map((c) => c.id);
    out.plot_label_count = document.querySelectorAll(".plot-label").length;
    out.plot_columns = stats.plot_columns;
    out.rpc_tooltip = null; out.plot_tooltip = null;
    if (WHY) {
      const i = D.rpcs.findIndex((r, k) => WHY.rpc[k] && WHY.rpc[k][0].length && r[0] >= t0 && r[0] <= t1);
      if (i >= 0) {
        const rect = cv.getBoundingClientRect(), x = Math.round(X(D.rpcs[i][0])), y = AXIS_H + OFF_H + GAP + RPC_H / 2;
        cv.dispatchEvent(new MouseEvent("mousemove", { clientX: rect.left + x, clientY: rect.top + y, bubbles: true }));
        out.rpc_tooltip = tip.style.display === "block" ? tip.textContent : null;
        out.rpc_records = WHY.rpc[i][0].map((k) => rec(k).dec);
      }
      const sp = plots.find((q) => q.share);
      if (sp) {
        const rect = sp.cv.getBoundingClientRect();
        sp.cv.dispatchEvent(new MouseEvent("mousemove", { clientX: rect.left + W / 2, clientY: rect.top + PLOT_H / 2, bubbles: true }));
        out.plot_tooltip = tip.style.display === "block" ? tip.textContent : null;
      }
    }
    const pre = document.getElementById("selftest");
    pre.textContent = JSON.stringify(out); pre.hidden = false;
  }
})();
</script>
</body></html>
"##;

#[cfg(test)]
mod tests {
    use super::*;
    use vcsim_framework::{run_spec, PolicySpec, Registry, RunOutput, Scenario, SimOptions};

    fn explained(scenario: &str, days: f64) -> RunOutput {
        vcsim_builtin::link();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(scenario);
        let mut scn = Scenario::load(&path).unwrap();
        scn.duration_days = days;
        let opts = SimOptions {
            timeline: true,
            explain: true,
            ..SimOptions::default()
        };
        let spec = PolicySpec::parse("CS2_WF2_WS2_JC2").unwrap();
        run_spec(&scn, &Registry::builtins().unwrap(), &spec, opts).unwrap()
    }

    /// The page's data, holding at most `max` items.
    fn data(out: &RunOutput, max: usize) -> serde_json::Value {
        let mut page = Out {
            buf: Vec::new(),
            attr: false,
        };
        let (tl, ex) = (out.timeline.as_ref(), out.explanation.as_ref());
        write_page(&mut page, tl.unwrap(), &out.report, ex, None, None, max);
        let page = String::from_utf8(page.buf).unwrap();
        let tag = "<script id=\"data\" type=\"application/json\">";
        let a = page.find(tag).unwrap() + tag.len();
        let b = a + page[a..].find("</script>").unwrap();
        serde_json::from_str(&page[a..b]).unwrap()
    }

    fn len(d: &serde_json::Value, key: &str) -> usize {
        d[key].as_array().unwrap().len()
    }

    /// A page past its items shows what started before a time, as the
    /// whole page shows it, and says where it was cut.
    #[test]
    fn a_page_past_its_items_is_cut_at_a_time_and_says_so() {
        // 4-CPU jobs: a stretch is several pieces.
        let out = explained("scenarios/today-multi-threaded.toml", 3.0);
        let full = data(&out, usize::MAX);
        let items = |d: &serde_json::Value| len(d, "segs") + len(d, "rpcs") + len(d, "off");
        let max = items(&full) / 3;
        let cut = data(&out, max);
        let title = cut["title"].as_str().unwrap();
        assert!(
            title.ends_with(&format!(
                " · cut at 1d 01:04:00: a page holds at most {max} pieces of stretches, RPC ticks and host-off periods"
            )),
            "{title}"
        );
        assert!(!full["title"].as_str().unwrap().contains("cut at"));
        assert!(
            items(&cut) <= max && items(&cut) > max / 2,
            "{}",
            items(&cut)
        );
        // The first stretches, RPCs and periods off, and their pieces.
        let n = len(&cut, "stretches");
        for key in ["stretches", "rpcs", "off"] {
            let k = len(&cut, key);
            assert_eq!(
                cut[key].as_array().unwrap()[..],
                full[key].as_array().unwrap()[..k]
            );
        }
        let before: Vec<&serde_json::Value> = full["segs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p[7].as_u64().unwrap() < n as u64)
            .collect();
        let cut_segs: Vec<&serde_json::Value> = cut["segs"].as_array().unwrap().iter().collect();
        assert_eq!(cut_segs, before);
        assert_eq!(cut["lanes"], full["lanes"]);
        // The reasons of what it shows.
        let why = &cut["why"];
        assert_eq!(len(why, "seg"), n);
        assert_eq!(len(why, "rpc"), len(&cut, "rpcs"));
        assert!(n < len(&full, "stretches"));
    }

    /// A pair of pages says above both frames that a run was cut, where a
    /// reader looks first (each frame's title says it too).
    #[test]
    fn a_pair_whose_run_was_cut_says_so_above_the_frames() {
        let out = explained("scenarios/today-multi-threaded.toml", 3.0);
        let (tl, ex) = (
            out.timeline.as_ref().unwrap(),
            out.explanation.as_ref().unwrap(),
        );
        let run = (tl, &out.report, ex, "CS2_WF2_WS2_JC2 · seed 1");
        let whole = pair_within([run, run], None, usize::MAX);
        assert!(whole.notes.is_empty());
        assert!(!whole.html.contains("<p class=\"cut\">"));
        let items = len(&data(&out, usize::MAX), "segs");
        let cut = pair_within([run, run], None, items / 3);
        assert_eq!(cut.notes.len(), 2, "{:?}", cut.notes);
        let said = cut
            .html
            .find("<p class=\"cut\">run A's timeline is cut at ")
            .unwrap();
        assert!(said < cut.html.find("<iframe").unwrap());
        assert!(cut.html[said..].contains("<br>run B's timeline is cut at "));
    }

    /// A page written into a frame is the page, escaped as an attribute.
    #[test]
    fn a_page_escaped_as_it_is_written_is_the_page_escaped() {
        let out = explained("scenarios/mix-5-slack-5.toml", 1.0);
        let (tl, ex) = (out.timeline.as_ref().unwrap(), out.explanation.as_ref());
        let page = render(tl, &out.report, ex).html;
        let mut attr = Out {
            buf: Vec::new(),
            attr: true,
        };
        write_page(&mut attr, tl, &out.report, ex, None, None, MAX_PAGE_ITEMS);
        assert_eq!(String::from_utf8(attr.buf).unwrap(), html_escape(&page));
    }
}
