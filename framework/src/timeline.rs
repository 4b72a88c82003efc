//! What ran where and when, for people (`--timeline out.html`) and programs
//! (`--timeline out.csv`). Recorded only when asked for.

use crate::model::{ClientState, Job, Rsc, RunMode, Time};
use serde::Serialize;

/// One stretch of a job computing without interruption, at one share of
/// the CPUs and in one mode. Every span in which a job computes is in
/// exactly one stretch: a stretch ends when the job stops computing (it
/// finishes, is preempted, the host goes away, computing or GPU computing
/// stops being allowed), when its share of the CPUs changes, or when its
/// mode changes, and a new one starts when it computes again.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TimelineSegment {
    pub job: u64,
    pub project: usize,
    pub rsc: Rsc,
    /// CPUs it computed on in the stretch: its CPUs, scaled while the CPUs
    /// were over-committed. The CPU instance-seconds the metrics count are
    /// `cpus × (end - start)`.
    pub cpus: f64,
    /// CPUs it holds (its app's `cpus`), whatever it computed on.
    pub cpus_held: f64,
    /// Instances of its GPU it holds and computes on (0 for a CPU job).
    pub gpu_count: f64,
    pub start: Time,
    pub end: Time,
    /// Ran in deadline (EDF) mode.
    pub deadline_mode: bool,
    pub deadline: Time,
    /// The job was reported after its deadline.
    pub late: bool,
    /// The job was reported by the end of the run: its stretches are in
    /// the metrics' used (or wasted) FLOPs. A job still on the host at the
    /// end computed, but the metrics do not count it yet.
    pub reported: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TimelineRpc {
    pub time: Time,
    pub project: usize,
    pub reached: bool,
    pub jobs: u32,
}

/// The most segments a timeline keeps (160 MB; an HTML page shows at most
/// 2,000,000 pieces of them on its lanes, cut at a time past that): a
/// longer run stops with an error that says to record a shorter one. A
/// stretch that ends as it starts is not kept, nor counted.
pub const MAX_SEGMENTS: usize = 2_000_000;

#[derive(Debug, Clone, Default, Serialize)]
pub struct Timeline {
    pub segments: Vec<TimelineSegment>,
    pub rpcs: Vec<TimelineRpc>,
    /// Periods when the host was unavailable.
    pub host_off: Vec<(Time, Time)>,
    /// Periods when the host was on but computing was not allowed
    /// (`false`: BOINC's `active_frac`), or computing was but GPU computing
    /// was not (`true`: `gpu_active_frac`), in order of their starts.
    pub not_allowed: Vec<(Time, Time, bool)>,
    /// Whether a period of each kind (computing, GPU computing) is open.
    #[serde(skip)]
    blocked: [bool; 2],
    pub project_names: Vec<String>,
    pub rsc_names: Vec<String>,
    /// Instances per resource (lanes).
    pub rsc_instances: Vec<f64>,
    open: Vec<(u64, usize)>,
    late_jobs: Vec<u64>,
    reported_jobs: Vec<u64>,
    /// The segments from this index on started at `tail_time`, the latest
    /// start: those that end then too are dropped once time moves on.
    #[serde(skip)]
    tail: usize,
    #[serde(skip)]
    tail_time: Time,
}

impl Timeline {
    /// Computing is not allowed (`cpu`) or GPU computing is not (`gpu`)
    /// from `t`, while the host is on: opens and closes the periods.
    pub fn allowed_at(&mut self, t: Time, cpu: bool, gpu: bool) {
        for (i, now) in [cpu, gpu].into_iter().enumerate() {
            if now == self.blocked[i] {
                continue;
            }
            let gpu_only = i == 1;
            if now {
                self.not_allowed.push((t, f64::INFINITY, gpu_only));
            } else if let Some(open) = self
                .not_allowed
                .iter_mut()
                .rev()
                .find(|x| x.2 == gpu_only && x.1.is_infinite())
            {
                open.1 = t;
            }
            self.blocked[i] = now;
        }
    }

    /// Drops the stretches that started and ended at `tail_time` (a job
    /// whose share changed twice in one step: on a big host with GPU jobs
    /// that over-commit the CPUs, about half of them), keeping the others
    /// in order, so that the bound counts stretches.
    fn drop_empty_tail(&mut self) {
        let from = self.tail;
        if from >= self.segments.len() {
            return;
        }
        let mut open = vec![false; self.segments.len() - from];
        for &(_, s) in &self.open {
            if s >= from {
                open[s - from] = true;
            }
        }
        // New index of each tail segment kept.
        let mut to = vec![usize::MAX; open.len()];
        let mut k = from;
        for i in from..self.segments.len() {
            let s = &self.segments[i];
            if open[i - from] || s.end > s.start {
                self.segments.swap(k, i);
                to[i - from] = k;
                k += 1;
            }
        }
        if k == self.segments.len() {
            return;
        }
        self.segments.truncate(k);
        for (_, s) in &mut self.open {
            if *s >= from {
                *s = to[*s - from];
            }
        }
    }

    pub(crate) fn ensure_segment(&mut self, j: &Job, now: Time) {
        if self.open.iter().any(|(id, _)| *id == j.id) {
            return;
        }
        if now > self.tail_time || self.segments.is_empty() {
            self.drop_empty_tail();
            self.tail = self.segments.len();
            self.tail_time = now;
        }
        self.open.push((j.id, self.segments.len()));
        self.segments.push(TimelineSegment {
            job: j.id,
            project: j.project,
            rsc: j.rsc(),
            cpus: j.cpu_share,
            cpus_held: j.cpus,
            gpu_count: j.gpu.map_or(0.0, |g| g.1),
            start: now,
            end: now,
            deadline_mode: j.mode == RunMode::Deadline,
            deadline: j.deadline,
            late: false,
            reported: false,
        });
    }

    pub(crate) fn end_segment(&mut self, job: u64, t: Time) {
        if let Some(pos) = self.open.iter().position(|(id, _)| *id == job) {
            let (_, s) = self.open.swap_remove(pos);
            self.segments[s].end = t;
        }
    }

    /// Ends every open stretch at `t` (the end of the run).
    pub(crate) fn end_all(&mut self, t: Time) {
        for (_, s) in self.open.drain(..) {
            self.segments[s].end = t;
        }
    }

    pub(crate) fn reported(&mut self, job: u64, _t: Time, late: bool) {
        self.reported_jobs.push(job);
        if late {
            self.late_jobs.push(job);
        }
    }

    pub(crate) fn finish(&mut self, st: &ClientState) {
        self.late_jobs.sort_unstable();
        self.reported_jobs.sort_unstable();
        for s in &mut self.segments {
            s.late = self.late_jobs.binary_search(&s.job).is_ok();
            s.reported = self.reported_jobs.binary_search(&s.job).is_ok();
        }
        self.segments.retain(|s| s.end > s.start);
        self.project_names = st.projects.iter().map(|p| p.name.clone()).collect();
        self.rsc_names = (0..st.host.nrsc())
            .map(|r| st.host.rsc_name(r).to_string())
            .collect();
        self.rsc_instances = (0..st.host.nrsc()).map(|r| st.host.ninstances(r)).collect();
    }

    /// The segments as CSV rows (header first). `cpus` is the share of the
    /// CPUs the job computed on, `cpus_held` what it holds; the columns
    /// after `late` were added later, at the end, so that readers of the
    /// first ten keep working.
    pub fn to_csv(&self) -> Result<String, csv::Error> {
        // The csv crate quotes a name holding a comma, quote or line break.
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        let header = [
            "job",
            "project",
            "resource",
            "cpus",
            "gpus",
            "start_s",
            "end_s",
            "deadline_s",
            "deadline_mode",
            "late",
            "cpus_held",
            "reported",
        ];
        w.write_record(header)?;
        for s in &self.segments {
            w.write_record([
                s.job.to_string(),
                self.project_names[s.project].clone(),
                self.rsc_names[s.rsc].clone(),
                s.cpus.to_string(),
                s.gpu_count.to_string(),
                s.start.to_string(),
                s.end.to_string(),
                s.deadline.to_string(),
                s.deadline_mode.to_string(),
                s.late.to_string(),
                s.cpus_held.to_string(),
                s.reported.to_string(),
            ])?;
        }
        let bytes = w
            .into_inner()
            .map_err(|e| csv::Error::from(e.into_error()))?;
        // Every field was a `String`: the bytes are UTF-8.
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project named `A,"B"` stays one field: every row has the header's
    /// twelve, and the name reads back as written.
    #[test]
    fn a_name_with_a_comma_or_a_quote_stays_one_csv_field() {
        let tl = Timeline {
            segments: vec![TimelineSegment {
                job: 7,
                project: 0,
                rsc: 0,
                cpus: 1.0,
                cpus_held: 1.0,
                gpu_count: 0.0,
                start: 0.0,
                end: 60.0,
                deadline_mode: false,
                deadline: 3600.0,
                late: false,
                reported: true,
            }],
            project_names: vec!["A,\"B\"".into()],
            rsc_names: vec!["cpu".into()],
            ..Timeline::default()
        };
        let text = tl.to_csv().unwrap();
        assert_eq!(
            text.lines().nth(1),
            Some("7,\"A,\"\"B\"\"\",cpu,1,0,0,60,3600,false,false,1,true")
        );
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let row = r.records().next().unwrap().unwrap();
        assert_eq!(row.len(), 12);
        assert_eq!(&row[1], "A,\"B\"");
    }
}
