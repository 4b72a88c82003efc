//! `<time_stats>`: the host's availability and the state's current time.

use crate::emit::{num, Section, Val};
use crate::xml::{unread, Located, Src};
use crate::ImportError;
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
                return Err(s.err(c, format!("must be a fraction in [0, 1] or -1, found {v}")));
            }
            Ok(v)
        })?;
        let gpu_active_frac = src.opt(n, "gpu_active_frac", Src::fraction)?;
        let connected_lambda = src.opt(n, "connected_lambda", Src::positive)?;
        let gpu_active_lambda = src.opt(n, "gpu_active_lambda", Src::positive)?;
        let now = src.opt(n, "now", Src::num)?;
        let last_update = src.opt(n, "last_update", Src::num)?;
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

    /// Warnings on what vcsim does not model: random disconnection, a
    /// separate GPU availability, and their periods.
    pub fn warnings(&self, src: &Src, warnings: &mut Vec<String>) {
        if let Some(c) = &self.connected_frac {
            if (0.0..1.0).contains(&c.value) {
                warnings.push(format!(
                    "{}: <connected_frac> {} at line {}: vcsim does not model random disconnection; the host is taken as always connected (set host.connection_interval_days for periodic connection)",
                    src.name(),
                    c.value,
                    c.line
                ));
            }
        }
        if let Some(g) = &self.gpu_active_frac {
            if g.value < 1.0 {
                warnings.push(format!(
                    "{}: <gpu_active_frac> {} at line {}: vcsim has one availability for the whole host; GPUs follow the CPUs' <on_frac> x <active_frac>",
                    src.name(),
                    g.value,
                    g.line
                ));
            }
        }
        for l in [&self.connected_lambda, &self.gpu_active_lambda]
            .into_iter()
            .flatten()
        {
            warnings.push(format!(
                "{}: <{}> {} at line {}: not modelled (see the warning on the matching fraction)",
                src.name(),
                l.tag,
                l.value,
                l.line
            ));
        }
    }

    /// The `[host.availability]` table.
    pub fn availability_section(&self, src: &Src) -> Section {
        let mut av = Section::new("[host.availability]");
        let on_v = self.on_frac.map_or(1.0, |x| x.value);
        let act_v = self.active_frac.map_or(1.0, |x| x.value);
        let frac_from = match (&self.on_frac, &self.active_frac) {
            (None, None) => "no <on_frac> or <active_frac>: always available".to_string(),
            _ => format!(
                "<on_frac> {} x <active_frac> {} in <time_stats>",
                num(on_v),
                num(act_v)
            ),
        };
        av.put("fraction", Val::F(on_v * act_v), frac_from);
        let (on_l, act_l) = (self.on_lambda, self.active_lambda);
        let (mean_on, mean_from) = match (on_v < 1.0, act_v < 1.0) {
            (true, true) => {
                let a = on_l.map_or(DEFAULT_LAMBDA_S, |l| l.value);
                let b = act_l.map_or(DEFAULT_LAMBDA_S, |l| l.value);
                (
                    1.0 / (1.0 / a + 1.0 / b),
                    format!(
                        "both on and active: 1 / (1/{} + 1/{}) from <on_lambda>, <active_lambda>{}",
                        num(a),
                        num(b),
                        if on_l.is_none() || act_l.is_none() {
                            " (missing ones: vcsim's default 1000 s)"
                        } else {
                            ""
                        }
                    ),
                )
            }
            (true, false) => match on_l {
                Some(l) => (l.value, src.at_l(&l)),
                None => (DEFAULT_LAMBDA_S, "no <on_lambda>: vcsim's default".into()),
            },
            (false, true) => match act_l {
                Some(l) => (l.value, src.at_l(&l)),
                None => (
                    DEFAULT_LAMBDA_S,
                    "no <active_lambda>: vcsim's default".into(),
                ),
            },
            (false, false) => match on_l.or(act_l) {
                Some(l) => (
                    l.value,
                    format!("{} (unused: always available)", src.at_l(&l)),
                ),
                None => (
                    DEFAULT_LAMBDA_S,
                    "vcsim's default (unused: always available)".into(),
                ),
            },
        };
        av.put("mean_on_seconds", Val::F(mean_on), mean_from);
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
    fn availability_of_both_processes() {
        with_root(
            "<time_stats><on_frac>0.5</on_frac><active_frac>0.5</active_frac><on_lambda>2000</on_lambda></time_stats>",
            |s, n| {
                let av = TimeStats::parse(s, n).unwrap().availability_section(s);
                let text = crate::emit::render(&[], &[av]);
                assert!(text.contains("fraction = 0.25"), "{text}");
                // 1 / (1/2000 + 1/1000)
                assert!(text.contains("mean_on_seconds = 666.666666667"), "{text}");
            },
        );
    }
}
