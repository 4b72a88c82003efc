//! Why a run went as it did: every decision the simulator applied, with the
//! reason its policy gives, and the outcomes the figures of merit count.
//! Recorded only when asked for ([`crate::SimOptions::explain`]); policies
//! are asked for reasons only then (the traits' `explain_*` methods), so a
//! run that does not explain pays nothing.
//!
//! A decision's text is the simulator's and names only what happened ("start
//! job 12 (A)"), never why: two runs that made the same decisions have equal
//! texts, which is what `vcsim diverge` compares.

/// The most records an explained run keeps (some 300 MB): a longer run
/// stops with an error that says to explain a shorter one.
pub const MAX_RECORDS: usize = 500_000;

/// A reason longer than this many characters is long: a fetcher's reason
/// names every project it passed over, some 40 kB with 1,000 projects.
pub const LONG_REASON: usize = 1_000;

/// The bytes of long reasons an explained run keeps in full (the first
/// ones); after them a long reason keeps its first [`LONG_REASON`]
/// characters and says how many more it had. Without this, 1,000 projects
/// made 15,000 fetch reasons of 650 MB in four days.
pub const MAX_LONG_REASON_BYTES: usize = 32_000_000;

/// The bytes of reasons an explained run keeps (texts, and data's names and
/// texts and [`VALUE_BYTES`] a value; long ones as cut by
/// [`MAX_LONG_REASON_BYTES`]): after them a reason keeps at most
/// [`SHORT_REASON`] bytes of its text and of its data, and says how much
/// more it had. The shipped policies' reasons take 250 to 400 bytes a
/// record: a run reaches this past 250,000 records. Without it, a script
/// giving a reason of 1,000 wide characters or 10,000 values at each call
/// could fill memory long before [`MAX_RECORDS`]; with it, reasons hold at
/// most some 250 MB.
pub const MAX_REASON_BYTES: usize = 100_000_000;

/// The bytes of a reason's text, and those of its data, kept past
/// [`MAX_REASON_BYTES`] (the text cut at a character's end, the data after
/// its last value that fits).
pub const SHORT_REASON: usize = 100;

/// What a reason's value counts in [`MAX_REASON_BYTES`] and
/// [`SHORT_REASON`] besides its name's and its text's bytes: what it takes
/// in memory.
pub const VALUE_BYTES: usize = std::mem::size_of::<(Cow<'static, str>, Datum)>();

/// The most values each of the explanation's series (the rankings and the
/// work done, a value per project at each point) keeps, all points
/// together (16 MB): past them it keeps every other point, then every
/// fourth... (and the last one), evenly spread over the run. 1,000
/// projects reach it in half a day (a page plots 200 points of them); five
/// projects in 100 days stay far below.
pub const MAX_SERIES_VALUES: usize = 2_000_000;

use crate::family::Family;
use crate::model::Time;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use std::borrow::Cow;
use std::fmt;

/// One value of a reason's data.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Datum {
    Number(f64),
    Text(String),
    Flag(bool),
}

impl fmt::Display for Datum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datum::Number(x) => write!(f, "{}", crate::explain::short_number(*x)),
            Datum::Text(s) => f.write_str(s),
            Datum::Flag(b) => write!(f, "{b}"),
        }
    }
}

impl From<f64> for Datum {
    fn from(x: f64) -> Datum {
        Datum::Number(x)
    }
}
impl From<usize> for Datum {
    fn from(x: usize) -> Datum {
        Datum::Number(x as f64)
    }
}
impl From<u64> for Datum {
    fn from(x: u64) -> Datum {
        Datum::Number(x as f64)
    }
}
impl From<bool> for Datum {
    fn from(b: bool) -> Datum {
        Datum::Flag(b)
    }
}
impl From<&str> for Datum {
    fn from(s: &str) -> Datum {
        Datum::Text(s.to_string())
    }
}
impl From<String> for Datum {
    fn from(s: String) -> Datum {
        Datum::Text(s)
    }
}

/// Why a policy decided what it did: a sentence for people and named
/// values for programs (serialized as one JSON object: `text` and the data).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reason {
    pub text: String,
    /// Named values; keys are mostly the policies' own words, so borrowed
    /// (an explained run makes many reasons).
    pub data: Vec<(Cow<'static, str>, Datum)>,
}

impl Reason {
    pub fn new(text: impl Into<String>) -> Reason {
        Reason {
            text: text.into(),
            data: Vec::new(),
        }
    }
    /// Adds a named value.
    pub fn with(mut self, key: impl Into<Cow<'static, str>>, value: impl Into<Datum>) -> Reason {
        self.data.push((key.into(), value.into()));
        self
    }
    pub fn get(&self, key: &str) -> Option<&Datum> {
        self.data.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl Serialize for Reason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1 + self.data.len()))?;
        m.serialize_entry("text", &self.text)?;
        for (k, v) in &self.data {
            if k != "text" {
                m.serialize_entry(k.as_ref(), v)?;
            }
        }
        m.end()
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A number short enough for a sentence: at most 4 significant digits.
/// (Rounded, then printed shortest: `{:.4}` takes the slow exact path of
/// float formatting, which an explained run would spend a fifth of its
/// time in.)
pub fn short_number(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e9 {
        return format!("{x}");
    }
    let a = x.abs();
    if !(1e-3..1e5).contains(&a) {
        return format!("{x:.3e}");
    }
    let decimals = (3 - a.log10().floor() as i32).clamp(0, 6);
    let scale = 10f64.powi(decimals);
    format!("{}", (x * scale).round() / scale)
}

/// Bytes in megabytes for a sentence: `120 MB` (never `-0 MB`: an empty
/// float sum is -0).
pub fn short_mb(bytes: f64) -> String {
    format!("{} MB", short_number(bytes / 1e6 + 0.0))
}

/// A duration for a sentence: `3.6 h`, `25 min`, `2.1 d`.
pub fn short_duration(secs: f64) -> String {
    let a = secs.abs();
    if a >= 2.0 * 86400.0 {
        format!(
            "{} d",
            short_number((secs / 86400.0 * 100.0).round() / 100.0)
        )
    } else if a >= 2.0 * 3600.0 {
        format!(
            "{} h",
            short_number((secs / 3600.0 * 100.0).round() / 100.0)
        )
    } else if a >= 120.0 {
        format!("{} min", short_number((secs / 60.0 * 10.0).round() / 10.0))
    } else {
        format!("{} s", short_number((secs * 100.0).round() / 100.0))
    }
}

/// A simulated time for a sentence: `3d 04:10:00`.
pub fn clock(t: Time) -> String {
    let s = t.max(0.0).round() as u64;
    format!(
        "{}d {:02}:{:02}:{:02}",
        s / 86400,
        s / 3600 % 24,
        s / 60 % 60,
        s % 60
    )
}

/// Who made a record: a policy family, or the simulator reporting an
/// outcome (an RPC's result, a job reported on time or late).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Policy(Family),
    Outcome,
}

impl Source {
    pub fn key(self) -> &'static str {
        match self {
            Source::Policy(f) => f.key(),
            Source::Outcome => "outcome",
        }
    }
}

impl Serialize for Source {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.key())
    }
}

/// What an outcome record is about, for programs that look for
/// consequences (`vcsim diverge`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A decision, not an outcome.
    None,
    OnTime,
    Late,
    Failed,
    RpcReached,
    RpcFailed,
}

/// One record of an explained run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    /// Simulated seconds.
    #[serde(rename = "time_s")]
    pub time: Time,
    /// Which family decided (`cpu`, `fetch`, `send`, `estimate`, `disk`),
    /// or `outcome`.
    #[serde(rename = "family")]
    pub source: Source,
    /// What happened, in the simulator's words (equal in two runs that did
    /// the same).
    pub decision: String,
    pub reason: Reason,
    /// The project concerned, if one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<usize>,
    /// The job concerned, if one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<u64>,
    #[serde(skip_serializing_if = "is_none_outcome")]
    pub outcome: Outcome,
}

fn is_none_outcome(o: &Outcome) -> bool {
    *o == Outcome::None
}

impl Record {
    /// The same decision (time, source and text; reasons may differ).
    pub fn same_decision(&self, o: &Record) -> bool {
        self.time == o.time && self.source == o.source && self.decision == o.decision
    }
}

/// What a CPU scheduler ranks projects by at a scheduling point (debts, or
/// whatever a policy reports), one value per project.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ranking {
    /// What the values are ("short-term debt (s)").
    pub name: String,
    pub values: Vec<f64>,
}

/// The characters of a ranking's name an explained run keeps.
pub const MAX_RANKING_NAME_CHARS: usize = 200;

/// The record of an explained run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Explanation {
    pub records: Vec<Record>,
    /// The scheduler's ranking at each scheduling point where it gave one,
    /// kept only when it changed (at most [`MAX_SERIES_VALUES`] values:
    /// past them, every other point).
    pub rankings: Vec<(Time, Ranking)>,
    /// Per project, the FLOPs computed so far (reported, in progress, or
    /// finished and waiting to be reported), after each run list applied
    /// and each change of the host's availability, where the rates of work
    /// change: between two points the work grows linearly (but for a job
    /// that finishes between steps, idle until the next). A stretch without
    /// work keeps its two ends (at most [`MAX_SERIES_VALUES`] values).
    pub work_done: Vec<(Time, Vec<f64>)>,
    /// The client's state where [`crate::SimOptions::snapshot_at`] asked.
    #[serde(skip)]
    pub snapshot: Option<Box<crate::model::ClientState>>,
    /// What the bounds count: the bytes of long reasons kept in full, and
    /// how `rankings` and `work_done` are thinned.
    #[serde(skip)]
    kept: Kept,
}

#[derive(Debug, Clone, Copy, Default)]
struct Kept {
    long_reason_bytes: usize,
    /// The bytes of the reasons kept, as [`MAX_REASON_BYTES`] counts them.
    reason_bytes: usize,
    rankings: Thinned,
    work_done: Thinned,
}

/// A series that keeps at most [`MAX_SERIES_VALUES`] values: every point
/// until it first fills, then those that arrived at multiples of `stride`
/// (2, then 4...) and the last one, whatever it is. Evenly spread over the
/// run, unlike halving what is kept each time it fills, which leaves the
/// start nearly empty.
#[derive(Debug, Clone, Copy, Default)]
struct Thinned {
    /// Points that arrived (kept or not).
    arrived: usize,
    /// 0 until the series first fills.
    stride: usize,
    /// Values kept.
    values: usize,
}

impl Thinned {
    /// Adds a point, dropping the last one if only being last kept it.
    fn push<T>(&mut self, series: &mut Vec<(Time, T)>, p: (Time, T), len: impl Fn(&T) -> usize) {
        if self.stride > 1 && !(self.arrived - 1).is_multiple_of(self.stride) {
            if let Some((_, last)) = series.pop() {
                self.values -= len(&last);
            }
        }
        self.values += len(&p.1);
        series.push(p);
        self.arrived += 1;
        while self.values > MAX_SERIES_VALUES && series.len() > 2 {
            // The points kept at multiples of the stride are the first ones,
            // in order; the last may be another.
            self.stride = self.stride.max(1) * 2;
            let n = series.len();
            let mut j = 0usize;
            series.retain(|_| {
                j += 1;
                (j - 1).is_multiple_of(2) || j == n
            });
            series.shrink_to_fit();
            self.values = series.iter().map(|(_, v)| len(v)).sum();
        }
    }
}

/// The bytes `r` takes, as [`MAX_REASON_BYTES`] counts them.
fn reason_bytes(r: &Reason) -> usize {
    r.text.len() + r.data.iter().map(value_bytes).sum::<usize>()
}

/// `text`'s first `at` bytes and `… (what)`, in a new string: cutting in
/// place would keep the long one's memory (the allocator cannot reuse the
/// rest of it for the next long reason: 60 kB reasons cut to 1 kB held
/// 60 kB each).
fn cut(text: &str, at: usize, what: &str) -> String {
    let mut s = String::with_capacity(at + what.len() + 6);
    s.push_str(&text[..at]);
    s.push_str("… (");
    s.push_str(what);
    s.push(')');
    s
}

/// The bytes `(k, v)` takes, as [`MAX_REASON_BYTES`] counts them.
fn value_bytes((k, v): &(Cow<'static, str>, Datum)) -> usize {
    VALUE_BYTES
        + k.len()
        + match v {
            Datum::Text(s) => s.len(),
            _ => 0,
        }
}

/// A reason past [`MAX_REASON_BYTES`]: at most [`SHORT_REASON`] bytes of
/// its text and of its data, with how much was cut.
fn shorten(r: &mut Reason) {
    let mut bytes = 0;
    let fit = r
        .data
        .iter()
        .take_while(|v| {
            bytes += value_bytes(v);
            bytes <= SHORT_REASON
        })
        .count();
    let values = r.data.len() - fit;
    r.data.truncate(fit);
    let mut at = SHORT_REASON.min(r.text.len());
    while !r.text.is_char_boundary(at) {
        at -= 1;
    }
    let more = r.text[at..].chars().count();
    if more == 0 && values == 0 {
        return;
    }
    let what = match (more, values) {
        (_, 0) => format!("{more} more characters"),
        (0, _) => format!("{values} more values"),
        _ => format!("{more} more characters and {values} more values"),
    };
    r.text = cut(
        &r.text,
        at,
        &format!(
            "{what}: an explained run keeps {} MB of reasons in full",
            MAX_REASON_BYTES / 1_000_000
        ),
    );
}

impl Explanation {
    pub(crate) fn push(&mut self, mut r: Record) {
        if self.kept.reason_bytes >= MAX_REASON_BYTES {
            shorten(&mut r.reason);
        } else {
            let text = &mut r.reason.text;
            if let Some((at, _)) = text.char_indices().nth(LONG_REASON) {
                if self.kept.long_reason_bytes + text.len() <= MAX_LONG_REASON_BYTES {
                    self.kept.long_reason_bytes += text.len();
                } else {
                    let more = text[at..].chars().count();
                    *text = cut(
                        text,
                        at,
                        &format!(
                            "{more} more characters: an explained run keeps {} MB of long reasons in full",
                            MAX_LONG_REASON_BYTES / 1_000_000
                        ),
                    );
                }
            }
        }
        self.kept.reason_bytes += reason_bytes(&r.reason);
        // Policies build reasons piece by piece: keep what they hold, not
        // what they grew to (a record's data was half spare room).
        r.reason.text.shrink_to_fit();
        r.reason.data.shrink_to_fit();
        r.decision.shrink_to_fit();
        self.records.push(r);
    }
    pub(crate) fn ranking(&mut self, t: Time, mut r: Ranking) {
        // A label: kept to its first characters, so that a policy giving a
        // long new name at each call cannot fill memory with them.
        if let Some((at, _)) = r.name.char_indices().nth(MAX_RANKING_NAME_CHARS) {
            r.name.truncate(at);
            r.name.push('…');
        }
        if self.rankings.last().is_none_or(|(_, last)| *last != r) {
            r.values.shrink_to_fit();
            self.kept
                .rankings
                .push(&mut self.rankings, (t, r), |r| r.values.len());
        }
    }
    pub(crate) fn work_done(&mut self, t: Time, mut w: Vec<f64>) {
        // A stretch without work keeps its two ends (the later one moved
        // on), so that the series is linear between its points.
        let n = self.work_done.len();
        if self.work_done.last().is_some_and(|(_, lw)| *lw == w) {
            if n >= 2 && self.work_done[n - 2].1 == w {
                self.work_done[n - 1].0 = t;
                return;
            }
            if self.work_done[n - 1].0 == t {
                return;
            }
        }
        w.shrink_to_fit();
        match self.work_done.last_mut() {
            Some((lt, lw)) if *lt == t => {
                self.kept.work_done.values -= lw.len();
                self.kept.work_done.values += w.len();
                *lw = w;
            }
            _ => self
                .kept
                .work_done
                .push(&mut self.work_done, (t, w), Vec::len),
        }
    }
    /// The records in `[from, to]`.
    pub fn window(&self, from: Time, to: Time) -> impl Iterator<Item = &Record> {
        self.records
            .iter()
            .filter(move |r| r.time >= from && r.time <= to)
    }
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}  {:<8} {}",
            clock(self.time),
            self.source.key(),
            self.decision
        )?;
        if !self.reason.text.is_empty() {
            write!(f, ": {}", self.reason.text)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_serializes_as_one_object_with_its_text_first() {
        let r = Reason::new("highest short-term debt")
            .with("debt_s", 4320.0)
            .with("project", "A");
        let j = serde_json::to_string(&r).unwrap();
        assert_eq!(
            j,
            r#"{"text":"highest short-term debt","debt_s":4320.0,"project":"A"}"#
        );
    }

    fn record(t: Time, reason: &str) -> Record {
        Record {
            time: t,
            source: Source::Outcome,
            decision: "d".into(),
            reason: Reason::new(reason),
            project: None,
            job: None,
            outcome: Outcome::None,
        }
    }

    #[test]
    fn long_reasons_are_kept_in_full_up_to_their_bound_then_cut() {
        // A fetcher's reason with 1,000 projects: some 40 kB.
        let long = "é".repeat(20_000);
        let full = MAX_LONG_REASON_BYTES / long.len();
        let mut ex = Explanation::default();
        for i in 0..full + 2 {
            ex.push(record(i as f64, &long));
            ex.push(record(i as f64, &"s".repeat(LONG_REASON)));
        }
        let texts: Vec<&str> = ex.records.iter().map(|r| r.reason.text.as_str()).collect();
        assert!(texts[..2 * full].iter().step_by(2).all(|t| *t == long));
        for t in texts[2 * full..].iter().step_by(2) {
            assert!(t.starts_with(&"é".repeat(LONG_REASON)), "{}", &t[..20]);
            assert!(
                t.ends_with("… (19000 more characters: an explained run keeps 32 MB of long reasons in full)"),
                "{}",
                &t[t.len() - 100..]
            );
        }
        // A reason of `LONG_REASON` characters is not long.
        assert!(texts
            .iter()
            .skip(1)
            .step_by(2)
            .all(|t| t.len() == LONG_REASON));
    }

    #[test]
    fn past_their_bytes_reasons_keep_a_short_start_and_say_what_was_cut() {
        // Wide characters, under `LONG_REASON` characters: not long, but
        // 4 kB each; and values that a policy may give by the thousand.
        let wide = "😀".repeat(LONG_REASON);
        let mut ex = Explanation::default();
        let mut i = 0;
        while ex.kept.reason_bytes < MAX_REASON_BYTES {
            ex.push(record(i as f64, &wide));
            i += 1;
        }
        assert_eq!(ex.records[i - 1].reason.text, wide);
        let mut many = record(0.0, "why");
        many.reason.data = (0..10_000)
            .map(|k| (Cow::Owned(format!("v{k}")), Datum::Number(k as f64)))
            .collect();
        ex.push(many);
        ex.push(record(1.0, &wide));
        ex.push(record(2.0, "short"));
        let n = ex.records.len();
        let r = &ex.records[n - 3].reason;
        // `v0` to `v9`: 2 bytes of name each.
        let fit = SHORT_REASON / (VALUE_BYTES + 2);
        assert!(fit >= 1);
        assert_eq!(r.data.len(), fit);
        assert_eq!(
            r.text,
            format!(
                "why… ({} more values: an explained run keeps 100 MB of reasons in full)",
                10_000 - fit
            )
        );
        let r = &ex.records[n - 2].reason;
        assert!(r.data.is_empty());
        assert_eq!(
            r.text,
            format!(
                "{}… (975 more characters: an explained run keeps 100 MB of reasons in full)",
                "😀".repeat(25)
            )
        );
        assert_eq!(ex.records[n - 1].reason.text, "short");
        assert!(ex.kept.reason_bytes < MAX_REASON_BYTES + 1_000);
    }

    #[test]
    fn a_series_past_its_bound_keeps_points_evenly_spread_and_its_last() {
        let np = 1000;
        let max_points = MAX_SERIES_VALUES / np;
        let mut ex = Explanation::default();
        let n = 3 * max_points + 7;
        for i in 0..n {
            let v = vec![i as f64; np];
            ex.work_done(i as f64, v.clone());
            ex.ranking(
                i as f64,
                Ranking {
                    name: "debt".into(),
                    values: v,
                },
            );
            if i + 1 == max_points {
                // Up to the bound, every point.
                assert_eq!(ex.work_done.len(), max_points);
                assert_eq!(ex.rankings.len(), max_points);
            }
        }
        let times = |ts: Vec<Time>| {
            assert!(ts.len() * np <= MAX_SERIES_VALUES, "{} points", ts.len());
            assert!(ts.len() > max_points / 4, "{} points", ts.len());
            assert_eq!(ts[0], 0.0);
            assert_eq!(*ts.last().unwrap(), (n - 1) as f64);
            let stride = ts[1] - ts[0];
            for (k, t) in ts[..ts.len() - 1].iter().enumerate() {
                assert_eq!(*t, k as f64 * stride);
            }
        };
        times(ex.work_done.iter().map(|(t, _)| *t).collect());
        times(ex.rankings.iter().map(|(t, _)| *t).collect());
        // A point at the time of the last replaces it.
        let last = ex.work_done.len();
        ex.work_done((n - 1) as f64, vec![-1.0; np]);
        assert_eq!(ex.work_done.len(), last);
        assert_eq!(ex.work_done.last().unwrap().1[0], -1.0);
    }

    #[test]
    fn durations_and_numbers_read_short() {
        assert_eq!(short_duration(12960.0), "3.6 h");
        assert_eq!(short_duration(300.0), "5 min");
        assert_eq!(short_duration(3.0 * 86400.0), "3 d");
        assert_eq!(short_number(1.0 / 3.0), "0.3333");
        assert_eq!(short_number(12.3456), "12.35");
        assert_eq!(short_number(-0.0012345), "-0.001235");
        assert_eq!(short_number(1.0058), "1.006");
        assert_eq!(clock(3.0 * 86400.0 + 4.0 * 3600.0 + 600.0), "3d 04:10:00");
    }
}
