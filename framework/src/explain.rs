//! Why a run went as it did: every decision the simulator applied, with the
//! reason its policy gives, and the outcomes the figures of merit count.
//! Recorded only when asked for ([`crate::SimOptions::explain`]); policies
//! are asked for reasons only then (the traits' `explain_*` methods), so a
//! run that does not explain pays nothing.
//!
//! A decision's text is the simulator's and names only what happened ("start
//! job 12 (A)"), never why: two runs that made the same decisions have equal
//! texts, which is what `vcsim diverge` compares.

/// The most records an explained run keeps (some 350 MB): a longer run
/// stops with an error that says to explain a shorter one.
pub const MAX_RECORDS: usize = 500_000;

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

/// The record of an explained run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Explanation {
    pub records: Vec<Record>,
    /// The scheduler's ranking at each scheduling point where it gave one,
    /// kept only when it changed.
    pub rankings: Vec<(Time, Ranking)>,
    /// Per project, the FLOPs computed so far (reported, in progress, or
    /// finished and waiting to be reported), after each run list applied,
    /// kept only when they moved.
    pub work_done: Vec<(Time, Vec<f64>)>,
    /// The client's state where [`crate::SimOptions::snapshot_at`] asked.
    #[serde(skip)]
    pub snapshot: Option<Box<crate::model::ClientState>>,
}

impl Explanation {
    pub(crate) fn push(&mut self, r: Record) {
        self.records.push(r);
    }
    pub(crate) fn ranking(&mut self, t: Time, r: Ranking) {
        if self.rankings.last().is_none_or(|(_, last)| *last != r) {
            self.rankings.push((t, r));
        }
    }
    pub(crate) fn work_done(&mut self, t: Time, w: Vec<f64>) {
        if self.work_done.last().is_some_and(|(_, lw)| *lw == w) {
            return;
        }
        match self.work_done.last_mut() {
            Some((lt, lw)) if *lt == t => *lw = w,
            _ => self.work_done.push((t, w)),
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
