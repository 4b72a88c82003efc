//! `<time_stats>`: the host's availability and the state's current time.

use crate::emit::{num, show, Section, Val};
use crate::error::ImportError;
use crate::xml::{unread, Located, Src};
use roxmltree::Node;

/// vcsim's default mean available period (the paper's lambda_avail), used
/// where the file has no `*_lambda`.
pub const DEFAULT_LAMBDA_S: f64 = 1000.0;

/// `<time_stats>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimeStats<'a> {
    pub on_frac: Option<Located<f64>>,
    pub active_frac: Option<Located<f64>>,
    /// The emulator's mean on and active periods, seconds.
    pub on_lambda: Option<Located<f64>>,
    pub active_lambda: Option<Located<f64>>,
    /// -1 (unknown) or a fraction.
    pub connected_frac: Option<Located<f64>>,
    pub gpu_active_frac: Option<Located<f64>>,
    pub connected_lambda: Option<Located<f64>>,
    pub gpu_active_lambda: Option<Located<f64>>,
    pub now: Option<Located<f64>>,
    pub last_update: Option<Located<f64>>,
    pub unread: Vec<&'a str>,
}

const USED: &[&str] = &[
    "on_frac",
    "active_frac",
    "connected_frac",
    "gpu_active_frac",
    "on_lambda",
    "active_lambda",
    "connected_lambda",
    "gpu_active_lambda",
    "now",
    "last_update",
];

impl<'a> TimeStats<'a> {
    pub fn parse(src: &Src<'a>, n: Node<'_, 'a>) -> Result<TimeStats<'a>, ImportError> {
        let on_frac = src.opt(n, "on_frac", Src::fraction)?;
        let active_frac = src.opt(n, "active_frac", Src::fraction)?;
        let on_lambda = src.opt(n, "on_lambda", Src::positive)?;
        let active_lambda = src.opt(n, "active_lambda", Src::positive)?;
        let connected_frac = src.opt(n, "connected_frac", |s, c| {
            let v = s.num(c)?;
            if v > 1.0 {
                return Err(s.err(
                    c,
                    format!("must be a fraction in [0, 1] or -1, found {}", show(v)),
                ));
            }
            Ok(v)
        })?;
        let gpu_active_frac = src.opt(n, "gpu_active_frac", |s, c| {
            let v = s.num(c)?;
            if !(0.0..=1.0).contains(&v) {
                return Err(s.err(
                    c,
                    format!("must be a fraction in [0, 1], found {}", show(v)),
                ));
            }
            Ok(v)
        })?;
        let connected_lambda = src.opt(n, "connected_lambda", Src::positive)?;
        let gpu_active_lambda = src.opt(n, "gpu_active_lambda", Src::positive)?;
        let now = src.opt(n, "now", Src::time)?;
        let last_update = src.opt(n, "last_update", Src::time)?;
        Ok(TimeStats {
            on_frac,
            active_frac,
            on_lambda,
            active_lambda,
            connected_frac,
            gpu_active_frac,
            connected_lambda,
            gpu_active_lambda,
            now,
            last_update,
            unread: unread(n, USED),
        })
    }

    /// Warnings on what vcsim does not model: random disconnection, a GPU
    /// allowed more than computing is, and the processes' own periods.
    pub fn warnings(&self, src: &Src, warnings: &mut Vec<String>) {
        if let Some(c) = &self.connected_frac {
            if (0.0..1.0).contains(&c.value) {
                warnings.push(format!(
                    "{}: <connected_frac> {} at line {}: vcsim does not model random disconnection; the host is taken as always connected (set host.connection_interval_days for periodic connection)",
                    src.name(),
                    show(c.value),
                    c.line
                ));
            }
        }
        if let (Some(g), act) = (&self.gpu_active_frac, self.active()) {
            if g.value > act {
                warnings.push(format!(
                    "{}: <gpu_active_frac> {} at line {} is more than <active_frac> {}: BOINC computes on GPUs only while computing is allowed, so gpu_active_fraction = {}",
                    src.name(),
                    show(g.value),
                    g.line,
                    show(act),
                    show(act)
                ));
            }
        }
        if let Some(l) = &self.active_lambda {
            warnings.push(format!(
                "{}: <active_lambda> {} at line {}: not modelled (vcsim's active_fraction has no period of its own)",
                src.name(),
                show(l.value),
                l.line
            ));
        }
        if let Some(l) = &self.connected_lambda {
            warnings.push(format!(
                "{}: <connected_lambda> {} at line {}: not modelled (vcsim does not model random disconnection)",
                src.name(),
                show(l.value),
                l.line
            ));
        }
        if let Some(l) = &self.gpu_active_lambda {
            warnings.push(format!(
                "{}: <gpu_active_lambda> {} at line {}: not modelled (vcsim's gpu_active_fraction takes its periods from mean_on_seconds)",
                src.name(),
                show(l.value),
                l.line
            ));
        }
    }

    /// `<active_frac>`, 1 if absent.
    fn active(&self) -> f64 {
        self.active_frac.map_or(1.0, |x| x.value)
    }

    /// The `[host.availability]` table: the on/off process is BOINC's
    /// `<on_frac>` (with the emulator's `<on_lambda>`); `<active_frac>` and
    /// `<gpu_active_frac>` are fractions of the on-time, as in BOINC.
    pub fn availability_section(&self, src: &Src) -> Section {
        let mut av = Section::new("[host.availability]");
        match &self.on_frac {
            Some(o) => av.put("fraction", Val::F(o.value), src.at_l(o)),
            None => av.put("fraction", Val::F(1.0), "no <on_frac>: always on"),
        };
        let on = self.on_frac.map_or(1.0, |o| o.value);
        // With the host always on, the period still paces the
        // computing-allowed processes if their fractions are below 1.
        let paces = self.active() < 1.0 || self.gpu_active_frac.is_some_and(|g| g.value < 1.0);
        let unused = if paces {
            " (the host is always on: the period of computing allowed)"
        } else {
            " (unused: always on)"
        };
        let (mean_on, mean_from) = match (on < 1.0, self.on_lambda) {
            (true, Some(l)) => (l.value, src.at_l(&l)),
            (true, None) => (DEFAULT_LAMBDA_S, "no <on_lambda>: vcsim's default".into()),
            (false, Some(l)) => (l.value, format!("{}{unused}", src.at_l(&l))),
            (false, None) => (DEFAULT_LAMBDA_S, format!("vcsim's default{unused}")),
        };
        av.put("mean_on_seconds", Val::F(mean_on), mean_from);
        let act = self.active();
        match &self.active_frac {
            Some(a) => av.put(
                "active_fraction",
                Val::F(a.value),
                format!("{}: of the on-time, computing allowed", src.at_l(a)),
            ),
            None => av.put(
                "active_fraction",
                Val::F(1.0),
                "no <active_frac>: computing always allowed",
            ),
        };
        match &self.gpu_active_frac {
            Some(g) if g.value > act => av.put(
                "gpu_active_fraction",
                Val::F(act),
                format!(
                    "{} is {}, more than <active_frac>: at most active_fraction",
                    src.at_l(g),
                    num(g.value)
                ),
            ),
            Some(g) => av.put(
                "gpu_active_fraction",
                Val::F(g.value),
                format!("{}: of the on-time, GPU computing allowed", src.at_l(g)),
            ),
            None => av.put(
                "gpu_active_fraction",
                Val::F(act),
                "no <gpu_active_frac>: as active_fraction",
            ),
        };
        av
    }
}

/// The run's start: `<now>`, else `<last_update>`, else the newest
/// `<received_time>` of any result, else 0. With where it came from.
pub fn start_time(
    src: &Src,
    ts: Option<&TimeStats>,
    newest_received: Option<Located<f64>>,
) -> (f64, String) {
    if let Some(n) = ts.and_then(|t| t.now).filter(|n| n.value > 0.0) {
        return (n.value, src.at_l(&n));
    }
    if let Some(n) = ts.and_then(|t| t.last_update).filter(|n| n.value > 0.0) {
        return (n.value, src.at_l(&n));
    }
    match newest_received {
        Some(r) => (r.value, format!("the newest {}", src.at_l(&r))),
        None => (
            0.0,
            String::from("no <now>, <last_update> or <received_time>: 0"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::with_root;

    #[test]
    fn time_stats() {
        let t = with_root(
            "<time_stats><on_frac>0.9</on_frac><active_frac>0.8</active_frac>\
             <gpu_active_frac>0.7</gpu_active_frac><connected_frac>-1</connected_frac>\
             <now>1700000000</now><client_start_time>1</client_start_time></time_stats>",
            |s, n| TimeStats::parse(s, n).unwrap(),
        );
        assert_eq!(t.on_frac.map(|x| x.value), Some(0.9));
        assert_eq!(t.active_frac.map(|x| x.value), Some(0.8));
        assert_eq!(t.gpu_active_frac.map(|x| x.value), Some(0.7));
        assert_eq!(t.connected_frac.map(|x| x.value), Some(-1.0));
        assert_eq!(t.now.map(|x| x.value), Some(1.7e9));
        assert_eq!(t.on_lambda, None);
        assert_eq!(t.unread, vec!["client_start_time"]);
    }

    #[test]
    fn bad_fractions() {
        for (text, element) in [
            ("<time_stats><on_frac>0</on_frac></time_stats>", "on_frac"),
            (
                "<time_stats><active_frac>1.1</active_frac></time_stats>",
                "active_frac",
            ),
            (
                "<time_stats><connected_frac>2</connected_frac></time_stats>",
                "connected_frac",
            ),
            (
                "<time_stats><on_lambda>-3</on_lambda></time_stats>",
                "on_lambda",
            ),
        ] {
            let e = with_root(text, |s, n| TimeStats::parse(s, n).unwrap_err());
            assert_eq!(e.element.as_deref(), Some(element), "{text}");
        }
    }

    #[test]
    fn start_time_falls_back() {
        with_root(
            "<time_stats>\n<now>0</now>\n<last_update>50</last_update></time_stats>",
            |s, n| {
                let t = TimeStats::parse(s, n).unwrap();
                let (v, from) = start_time(s, Some(&t), None);
                assert_eq!(v, 50.0);
                assert_eq!(from, "<last_update>, t.xml line 3");
                let r = Located {
                    value: 7.0,
                    tag: "received_time",
                    line: 9,
                };
                let none = TimeStats::default();
                assert_eq!(start_time(s, Some(&none), Some(r)).0, 7.0);
                assert_eq!(start_time(s, None, None).0, 0.0);
            },
        );
    }

    #[test]
    fn availability_fractions_of_the_on_time() {
        with_root(
            "<time_stats><on_frac>0.5</on_frac><active_frac>0.6</active_frac><on_lambda>2000</on_lambda>\
             <gpu_active_frac>0.4</gpu_active_frac></time_stats>",
            |s, n| {
                let av = TimeStats::parse(s, n).unwrap().availability_section(s);
                let text = crate::emit::render(&[], &[av]);
                for kv in [
                    "fraction = 0.5 ",
                    "mean_on_seconds = 2000.0 ",
                    "active_fraction = 0.6 ",
                    "gpu_active_fraction = 0.4 ",
                ] {
                    assert!(text.contains(kv), "{kv}: {text}");
                }
            },
        );
        // The GPU is allowed at most when computing is.
        with_root(
            "<time_stats><active_frac>0.5</active_frac><gpu_active_frac>0.9</gpu_active_frac></time_stats>",
            |s, n| {
                let t = TimeStats::parse(s, n).unwrap();
                let text = crate::emit::render(&[], &[t.availability_section(s)]);
                assert!(text.contains("gpu_active_fraction = 0.5 "), "{text}");
                assert!(text.contains("fraction = 1.0 "), "{text}");
                let mut w = Vec::new();
                t.warnings(s, &mut w);
                assert!(w[0].contains("more than <active_frac> 0.5"), "{w:?}");
            },
        );
    }
}
