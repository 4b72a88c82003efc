//! The work on the host: `<workunit>`, `<result>`, `<file>`/`<file_info>`
//! and `<active_task>`.

use crate::emit::show;
use crate::error::ImportError;
use crate::xml::{elems, tag, Located, Src, Text};
use roxmltree::Node;

/// `<workunit>`.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkunitEl<'a> {
    pub line: usize,
    pub name: Option<Text<'a>>,
    pub app_name: Option<Text<'a>>,
    pub rsc_fpops_est: Option<f64>,
    /// The `<file_name>`s of its `<file_ref>`s: its input files.
    pub file_refs: Vec<Text<'a>>,
}

/// `<result>`: a job (a replica of a workunit) on the host.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultEl<'a> {
    pub line: usize,
    /// "" when absent.
    pub name: Text<'a>,
    pub wu_name: Option<Text<'a>>,
    pub report_deadline: Option<Located<f64>>,
    pub received_time: Option<Located<f64>>,
    /// Computed, aborted or waiting to be reported: `<state>` 3 or more,
    /// `<ready_to_report/>` or `<got_server_ack/>`.
    pub done: bool,
    pub plan_class: Option<Text<'a>>,
    pub version_num: Option<f64>,
    /// Its output files.
    pub file_refs: Vec<Text<'a>>,
}

/// `<file>` (or the older `<file_info>`): a file on the host.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEl<'a> {
    /// "" when absent.
    pub name: Text<'a>,
    pub nbytes: f64,
}

/// `<active_task>`: a started job's progress.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveTask<'a> {
    pub project_master_url: Text<'a>,
    pub result_name: Text<'a>,
    pub fraction_done: f64,
}

/// The `<file_name>`s of the `<file_ref>` children.
fn file_refs<'a>(src: &Src<'a>, n: Node<'_, 'a>) -> Vec<Text<'a>> {
    elems(n)
        .filter(|c| tag(*c) == "file_ref")
        .filter_map(|fr| src.child_text(fr, "file_name"))
        .collect()
}

// The tags each element reads; the others are listed as not modelled when
// the element is read (these elements are numerous: they keep no list).

impl<'a> WorkunitEl<'a> {
    pub const USED: &'static [&'static str] = &[
        "name",
        "app_name",
        "version_num",
        "rsc_fpops_est",
        "file_ref",
    ];

    pub fn parse(src: &Src<'a>, w: Node<'_, 'a>) -> Result<WorkunitEl<'a>, ImportError> {
        Ok(WorkunitEl {
            line: src.line(w),
            name: src.child_text(w, "name"),
            app_name: src.child_text(w, "app_name"),
            rsc_fpops_est: src
                .opt(w, "rsc_fpops_est", |s, c| s.job_flops(c, false))?
                .map(|x| x.value),
            file_refs: file_refs(src, w),
        })
    }
}

impl<'a> ResultEl<'a> {
    pub const USED: &'static [&'static str] = &[
        "name",
        "wu_name",
        "report_deadline",
        "received_time",
        "state",
        "ready_to_report",
        "got_server_ack",
        "plan_class",
        "version_num",
        "file_ref",
    ];

    pub fn parse(src: &Src<'a>, r: Node<'_, 'a>) -> Result<ResultEl<'a>, ImportError> {
        let mut done = false;
        for f in ["ready_to_report", "got_server_ack"] {
            done |= src.flag_child(r, f)?;
        }
        if let Some(st) = src.opt(r, "state", |s, c| s.whole(c, 0))? {
            // 3: compute error, 4: uploading, 5: uploaded, 6: aborted, 7: upload failed.
            done |= st.value >= 3;
        }
        let name = src.child_text(r, "name").unwrap_or_default();
        let wu_name = src.child_text(r, "wu_name");
        if wu_name.is_none() && !done {
            return Err(src.err(r, format!("<result> `{name}` has no <wu_name>")));
        }
        Ok(ResultEl {
            line: src.line(r),
            name,
            wu_name,
            report_deadline: src.opt(r, "report_deadline", Src::time)?,
            received_time: src.opt(r, "received_time", Src::time)?,
            done,
            plan_class: src.child_text(r, "plan_class"),
            version_num: src.opt(r, "version_num", Src::num)?.map(|x| x.value),
            file_refs: file_refs(src, r),
        })
    }
}

impl<'a> FileEl<'a> {
    pub const USED: &'static [&'static str] = &["name", "nbytes"];

    pub fn parse(src: &Src<'a>, n: Node<'_, 'a>) -> Result<FileEl<'a>, ImportError> {
        Ok(FileEl {
            name: src.child_text(n, "name").unwrap_or_default(),
            nbytes: match src.last(n, "nbytes") {
                Some(c) => src.bytes(c)?,
                None => 0.0,
            },
        })
    }
}

impl<'a> ActiveTask<'a> {
    pub const USED: &'static [&'static str] =
        &["project_master_url", "result_name", "fraction_done"];

    pub fn parse(src: &Src<'a>, at: Node<'_, 'a>) -> Result<ActiveTask<'a>, ImportError> {
        let fraction_done = match src.last(at, "fraction_done") {
            Some(c) => {
                let v = src.non_negative(c)?;
                if v > 1.0 {
                    return Err(src.err(c, format!("must be in [0, 1], found {}", show(v))));
                }
                v
            }
            None => 0.0,
        };
        Ok(ActiveTask {
            project_master_url: src.child_text(at, "project_master_url").unwrap_or_default(),
            result_name: src.child_text(at, "result_name").unwrap_or_default(),
            fraction_done,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::{unread, with_root};

    #[test]
    fn workunit() {
        let w = with_root(
            "<workunit><name>w1</name><app_name>a</app_name><rsc_fpops_est>3.6e13</rsc_fpops_est>\
             <file_ref><file_name>in1</file_name></file_ref><file_ref><open_name>x</open_name></file_ref>\
             <rsc_fpops_bound>1</rsc_fpops_bound></workunit>",
            |s, n| WorkunitEl::parse(s, n).unwrap(),
        );
        assert_eq!(w.name.as_deref(), Some("w1"));
        assert_eq!(w.app_name.as_deref(), Some("a"));
        assert_eq!(w.rsc_fpops_est, Some(3.6e13));
        assert_eq!(w.file_refs, vec![Text::Borrowed("in1")]);
        let rest = with_root(
            "<workunit><name>w</name><rsc_fpops_bound>1</rsc_fpops_bound></workunit>",
            |_, n| unread(n, WorkunitEl::USED),
        );
        assert_eq!(rest, vec!["rsc_fpops_bound"]);
        let e = with_root(
            "<workunit><rsc_fpops_est>nan</rsc_fpops_est></workunit>",
            |s, n| WorkunitEl::parse(s, n).unwrap_err(),
        );
        assert_eq!(e.element.as_deref(), Some("rsc_fpops_est"));
    }

    #[test]
    fn result() {
        let r = with_root(
            "<result>\n<name>r1</name><wu_name>w1</wu_name><state>2</state>\n<received_time>10</received_time>\
             <report_deadline>100</report_deadline><plan_class>mt</plan_class><version_num>7</version_num>\
             <platform>x</platform></result>",
            |s, n| ResultEl::parse(s, n).unwrap(),
        );
        assert_eq!(
            (&*r.name, r.wu_name.as_deref(), r.line),
            ("r1", Some("w1"), 1)
        );
        assert!(!r.done);
        assert_eq!(r.received_time.map(|t| (t.value, t.line)), Some((10.0, 3)));
        assert_eq!(r.report_deadline.map(|d| d.value), Some(100.0));
        assert_eq!(r.plan_class.as_deref(), Some("mt"));
        assert_eq!(r.version_num, Some(7.0));
        let e = with_root("<result><name>r</name></result>", |s, n| {
            ResultEl::parse(s, n).unwrap_err()
        });
        assert!(e.message.contains("`r` has no <wu_name>"), "{e}");
        for done in [
            "<result><state>5</state></result>",
            "<result><ready_to_report/></result>",
            "<result><got_server_ack>1</got_server_ack></result>",
        ] {
            assert!(
                with_root(done, |s, n| ResultEl::parse(s, n).unwrap().done),
                "{done}"
            );
        }
        let e = with_root("<result><state>-1</state></result>", |s, n| {
            ResultEl::parse(s, n).unwrap_err()
        });
        assert_eq!(e.element.as_deref(), Some("state"));
    }

    #[test]
    fn file_and_active_task() {
        let f = with_root(
            "<file><name>f</name><nbytes>1e6</nbytes><status>1</status></file>",
            |s, n| FileEl::parse(s, n).unwrap(),
        );
        assert_eq!((&*f.name, f.nbytes), ("f", 1e6));
        let a = with_root(
            "<active_task><project_master_url>u</project_master_url><result_name>r</result_name>\
             <fraction_done>0.25</fraction_done><slot>0</slot></active_task>",
            |s, n| ActiveTask::parse(s, n).unwrap(),
        );
        assert_eq!(
            (&*a.project_master_url, &*a.result_name, a.fraction_done),
            ("u", "r", 0.25)
        );
        let e = with_root(
            "<active_task><fraction_done>2</fraction_done></active_task>",
            |s, n| ActiveTask::parse(s, n).unwrap_err(),
        );
        assert_eq!(e.element.as_deref(), Some("fraction_done"));
    }
}
