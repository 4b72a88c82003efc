//! `<app>` and `<app_version>`.

use crate::client_state::host::gpu_kind;
use crate::error::ImportError;
use crate::xml::{unread, Located, Src, Text};
use roxmltree::Node;
/// `<app>`, with the emulator's extra tags.
#[derive(Debug, Clone, PartialEq)]
pub struct AppEl<'a> {
    pub line: usize,
    pub name: Text<'a>,
    /// `<non_cpu_intensive/>` or `<ignore/>` (emulator), in that order, if set.
    pub left_out_by: Vec<&'static str>,
    /// At most this many of its jobs at once (0: no limit).
    pub max_concurrent: Option<Located<u32>>,
    /// The emulator's latency bound, seconds.
    pub latency_bound: Option<Located<f64>>,
    pub fpops_est: Option<Located<f64>>,
    pub fpops: Option<Fpops<'a>>,
    pub weight: Option<Located<f64>>,
    pub unread: Vec<&'a str>,
}

/// The emulator's `<fpops><mean/><std_dev/></fpops>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fpops<'a> {
    pub mean: Option<Located<f64>>,
    /// `<std_dev>`, or `<stdev>`.
    pub std_dev: Option<Located<f64>>,
    pub unread: Vec<&'a str>,
}

/// `<app_version>`.
#[derive(Debug, Clone, PartialEq)]
pub struct AppVersionEl<'a> {
    pub line: usize,
    pub app_name: Option<Text<'a>>,
    /// "" when absent.
    pub plan_class: Text<'a>,
    /// 0 when absent.
    pub version_num: i64,
    pub avg_ncpus: Option<Located<f64>>,
    pub coproc: Option<VersionCoproc<'a>>,
    pub flops: Option<f64>,
    pub unread: Vec<&'a str>,
}

/// An app version's `<coproc><type/><count/></coproc>`.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionCoproc<'a> {
    /// vcsim's kind (`nvidia`, ...).
    pub kind: String,
    pub count: f64,
    /// Where the count came from: `<count>`, or `<coproc>` without one.
    pub count_at: (&'static str, usize),
    pub unread: Vec<&'a str>,
}

impl<'a> AppEl<'a> {
    pub fn parse(src: &Src<'a>, a: Node<'_, 'a>) -> Result<AppEl<'a>, ImportError> {
        let name = src
            .child_text(a, "name")
            .filter(|s| !s.is_empty())
            .ok_or_else(|| src.err(a, "an <app> needs a <name>"))?;
        let mut left_out_by = Vec::new();
        for f in ["non_cpu_intensive", "ignore"] {
            if src.flag_child(a, f)? {
                left_out_by.push(f);
            }
        }
        let max_concurrent = src.opt(a, "max_concurrent", |s, c| s.whole(c, 0))?;
        let fpops_est = src.opt(a, "fpops_est", |s, c| s.job_flops(c, false))?;
        let fpops = match src.last(a, "fpops") {
            Some(f) => Some(Fpops {
                mean: src.opt(f, "mean", |s, c| s.job_flops(c, false))?,
                std_dev: match src.opt(f, "std_dev", |s, c| s.job_flops(c, true))? {
                    Some(s) => Some(s),
                    None => src.opt(f, "stdev", |s, c| s.job_flops(c, true))?,
                },
                unread: unread(f, &["mean", "std_dev", "stdev"]),
            }),
            None => None,
        };
        Ok(AppEl {
            line: src.line(a),
            name,
            left_out_by,
            max_concurrent,
            latency_bound: src.opt(a, "latency_bound", Src::positive)?,
            fpops_est,
            fpops,
            weight: src.opt(a, "weight", Src::non_negative)?,
            unread: unread(
                a,
                &[
                    "name",
                    "non_cpu_intensive",
                    "ignore",
                    "max_concurrent",
                    "latency_bound",
                    "fpops_est",
                    "fpops",
                    "weight",
                ],
            ),
        })
    }
}

impl<'a> AppVersionEl<'a> {
    pub fn parse(src: &Src<'a>, v: Node<'_, 'a>) -> Result<AppVersionEl<'a>, ImportError> {
        let version_num = match src.last(v, "version_num") {
            Some(c) => src.num(c)? as i64,
            None => 0,
        };
        let avg_ncpus = src.opt(v, "avg_ncpus", Src::non_negative)?;
        let coproc = match src.last(v, "coproc") {
            Some(c) => {
                let ty = src
                    .child_text(c, "type")
                    .ok_or_else(|| src.err(c, "a <coproc> needs a <type>"))?;
                let (count, count_at) = match src.last(c, "count") {
                    Some(n) => (src.positive(n)?, ("count", src.line(n))),
                    None => (1.0, ("coproc", src.line(c))),
                };
                Some(VersionCoproc {
                    kind: gpu_kind(&ty),
                    count,
                    count_at,
                    unread: unread(c, &["type", "count"]),
                })
            }
            None => None,
        };
        Ok(AppVersionEl {
            line: src.line(v),
            app_name: src.child_text(v, "app_name"),
            plan_class: src.child_text(v, "plan_class").unwrap_or_default(),
            version_num,
            avg_ncpus,
            coproc,
            flops: src.opt(v, "flops", Src::version_flops)?.map(|f| f.value),
            unread: unread(
                v,
                &[
                    "app_name",
                    "version_num",
                    "plan_class",
                    "avg_ncpus",
                    "coproc",
                    "flops",
                ],
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::with_root;

    #[test]
    fn app_with_emulator_tags() {
        let a = with_root(
            "<app><name>long</name><latency_bound>604800</latency_bound><fpops_est>6e13</fpops_est>\
             <fpops><mean>7e13</mean><stdev>1e12</stdev><x/></fpops><max_concurrent>1</max_concurrent>\
             <weight>2</weight><user_friendly_name>L</user_friendly_name></app>",
            |s, n| AppEl::parse(s, n).unwrap(),
        );
        assert_eq!(a.name, "long");
        assert!(a.left_out_by.is_empty());
        assert_eq!(a.latency_bound.map(|l| l.value), Some(604800.0));
        assert_eq!(a.fpops_est.map(|l| l.value), Some(6e13));
        let f = a.fpops.as_ref().unwrap();
        assert_eq!(f.mean.map(|m| m.value), Some(7e13));
        assert_eq!(f.std_dev.map(|m| (m.value, m.tag)), Some((1e12, "stdev")));
        assert_eq!(f.unread, vec!["x"]);
        assert_eq!(a.max_concurrent.map(|m| m.value), Some(1));
        assert_eq!(a.weight.map(|m| m.value), Some(2.0));
        assert_eq!(a.unread, vec!["user_friendly_name"]);
    }

    #[test]
    fn app_errors() {
        let e = with_root("<app><name> </name></app>", |s, n| {
            AppEl::parse(s, n).unwrap_err()
        });
        assert!(e.message.contains("needs a <name>"), "{e}");
        let e = with_root(
            "<app><name>a</name><fpops_est>0</fpops_est></app>",
            |s, n| AppEl::parse(s, n).unwrap_err(),
        );
        assert_eq!(e.element.as_deref(), Some("fpops_est"));
        let a = with_root(
            "<app><name>a</name><ignore/><non_cpu_intensive/></app>",
            |s, n| AppEl::parse(s, n).unwrap(),
        );
        assert_eq!(a.left_out_by, vec!["non_cpu_intensive", "ignore"]);
    }

    #[test]
    fn app_version() {
        let v = with_root(
            "<app_version>\n<app_name>p</app_name><version_num>121</version_num><plan_class>cuda</plan_class>\
             \n<avg_ncpus>0.2</avg_ncpus><flops>5e11</flops><coproc><type>NVIDIA</type><count>0.5</count>\
             <peak/></coproc><gpu_ram>1</gpu_ram></app_version>",
            |s, n| AppVersionEl::parse(s, n).unwrap(),
        );
        assert_eq!(v.app_name.as_deref(), Some("p"));
        assert_eq!((&*v.plan_class, v.version_num), ("cuda", 121));
        assert_eq!(v.avg_ncpus.map(|c| (c.value, c.line)), Some((0.2, 3)));
        assert_eq!(v.flops, Some(5e11));
        let c = v.coproc.as_ref().unwrap();
        assert_eq!((c.kind.as_str(), c.count), ("nvidia", 0.5));
        assert_eq!(c.unread, vec!["peak"]);
        assert_eq!(v.unread, vec!["gpu_ram"]);
        let v = with_root("<app_version/>", |s, n| AppVersionEl::parse(s, n).unwrap());
        assert_eq!((v.app_name, &*v.plan_class, v.version_num), (None, "", 0));
        let e = with_root(
            "<app_version><coproc><count>1</count></coproc></app_version>",
            |s, n| AppVersionEl::parse(s, n).unwrap_err(),
        );
        assert_eq!(e.element.as_deref(), Some("coproc"));
    }
}
