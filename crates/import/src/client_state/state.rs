//! The top level of `client_state.xml`, sorted: apps, versions, workunits and
//! results belong to the `<project>` before them, as BOINC writes the file.

use crate::client_state::app::{AppEl, AppVersionEl};
use crate::client_state::host::HostInfo;
use crate::client_state::project::ProjectEl;
use crate::client_state::time_stats::TimeStats;
use crate::client_state::work::{ActiveTask, FileEl, ResultEl, WorkunitEl};
use crate::error::ImportError;
use crate::xml::{elems, tag, Located, Src, Text, Unmodelled};
use roxmltree::Node;
use std::collections::{BTreeMap, HashMap};

/// A `<project>` and the elements after it, up to the next one.
#[derive(Debug, Clone, PartialEq)]
pub struct Group<'a> {
    pub project: ProjectEl<'a>,
    pub apps: Vec<AppEl<'a>>,
    pub versions: Vec<AppVersionEl<'a>>,
    pub workunits: Vec<WorkunitEl<'a>>,
    pub results: Vec<ResultEl<'a>>,
    /// Computed results with no `<wu_name>`: counted, not kept.
    pub done_without_workunit: usize,
}

/// Everything read from the state file.
#[derive(Debug, Default)]
pub struct State<'a> {
    pub host_info: Option<HostInfo<'a>>,
    pub time_stats: Option<TimeStats<'a>>,
    pub groups: Vec<Group<'a>>,
    /// File sizes by (index of the project in `groups`, file name).
    pub files: HashMap<(usize, Text<'a>), f64>,
    /// The sizes of all of BOINC's files, bytes.
    pub boinc_bytes: f64,
    /// `<fraction_done>` by (project URL, result name).
    pub active: HashMap<(Text<'a>, Text<'a>), f64>,
    /// The newest `<received_time>` of any result (the first of equals).
    pub newest_received: Option<Located<f64>>,
    /// `<host_info>` and `<time_stats>`: how many, the first's and the
    /// last's lines. The last is used, as BOINC's parser does.
    singles: BTreeMap<&'static str, (usize, usize, usize)>,
}

impl<'a> State<'a> {
    /// Reads one child of `<client_state>`.
    pub fn add(
        &mut self,
        src: &Src<'a>,
        n: Node<'_, 'a>,
        un: &mut Unmodelled,
    ) -> Result<(), ImportError> {
        let t = tag(n);
        match t {
            "host_info" | "time_stats" => {
                let line = src.line(n);
                let e = self
                    .singles
                    .entry(if t == "host_info" {
                        "host_info"
                    } else {
                        "time_stats"
                    })
                    .or_insert((0, line, line));
                *e = (e.0 + 1, e.1, line);
                if t == "host_info" {
                    self.host_info = Some(HostInfo::parse(src, n)?);
                } else {
                    self.time_stats = Some(TimeStats::parse(src, n)?);
                }
            }
            "project" if self.groups.len() >= crate::input::MAX_PROJECTS => {
                return Err(src.err(
                    n,
                    format!(
                        "more than {} projects: vcsim's limit for one host",
                        crate::input::MAX_PROJECTS
                    ),
                ));
            }
            "project" => self.groups.push(Group {
                project: ProjectEl::parse(src, n)?,
                apps: vec![],
                versions: vec![],
                workunits: vec![],
                results: vec![],
                done_without_workunit: 0,
            }),
            "app" | "app_version" | "workunit" | "result" => {
                let Some(g) = self.groups.last_mut() else {
                    return Err(src.err(n, format!("<{t}> comes before any <project>")));
                };
                match t {
                    "app" => g.apps.push(AppEl::parse(src, n)?),
                    "app_version" => g.versions.push(AppVersionEl::parse(src, n)?),
                    "workunit" => {
                        g.workunits.push(WorkunitEl::parse(src, n)?);
                        un.rest(src, t, n, WorkunitEl::USED);
                    }
                    _ => {
                        let r = ResultEl::parse(src, n)?;
                        un.rest(src, t, n, ResultEl::USED);
                        if let Some(rt) = r.received_time {
                            if !matches!(self.newest_received, Some(b) if rt.value <= b.value) {
                                self.newest_received = Some(rt);
                            }
                        }
                        if r.wu_name.is_some() {
                            g.results.push(r);
                        } else {
                            g.done_without_workunit += 1;
                        }
                    }
                }
            }
            "file_info" | "file" => {
                let f = FileEl::parse(src, n)?;
                self.boinc_bytes += f.nbytes;
                un.rest(src, t, n, FileEl::USED);
                if !self.groups.is_empty() {
                    self.files.insert((self.groups.len() - 1, f.name), f.nbytes);
                }
            }
            "active_task_set" => {
                for at in elems(n) {
                    if tag(at) != "active_task" {
                        un.add(src, "active_task_set", tag(at));
                        continue;
                    }
                    let a = ActiveTask::parse(src, at)?;
                    un.rest(src, "active_task", at, ActiveTask::USED);
                    // Keyed as `lookup_project` matches: without trailing slashes.
                    let url = match a.project_master_url {
                        Text::Borrowed(u) => Text::Borrowed(u.trim_end_matches('/')),
                        Text::Owned(u) => Text::Owned(u.trim_end_matches('/').to_string()),
                    };
                    self.active.insert((url, a.result_name), a.fraction_done);
                }
            }
            _ => un.add(src, "client_state", t),
        }
        Ok(())
    }

    /// Warns of a repeated `<host_info>` or `<time_stats>`, once all are read.
    pub fn warn_repeats(&self, src: &Src) {
        for (t, &(count, first, last)) in &self.singles {
            if count > 1 {
                src.repeated("<client_state>", t, count, first, last);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::with_root;

    #[test]
    fn elements_go_to_the_project_before_them() {
        with_root(
            "<client_state><file><name>f0</name><nbytes>5</nbytes></file>\
             <project><master_url>a</master_url></project><app><name>x</name></app>\
             <file><name>f1</name><nbytes>7</nbytes></file><workunit><name>w</name></workunit>\
             <project><master_url>b</master_url></project><result><name>r</name><wu_name>w</wu_name>\
             <received_time>5</received_time></result><result><state>5</state><received_time>9</received_time></result>\
             <app_version><app_name>y</app_name></app_version>\
             <active_task_set><active_task><project_master_url>b</project_master_url>\
             <result_name>r</result_name><fraction_done>0.5</fraction_done></active_task><x/></active_task_set>\
             <platform_name>p</platform_name></client_state>",
            |s, root| {
                let mut st = State::default();
                let mut un = Unmodelled::default();
                for n in elems(root) {
                    st.add(s, n, &mut un).unwrap();
                }
                assert_eq!(st.groups.len(), 2);
                assert_eq!(st.groups[0].apps.len(), 1);
                assert_eq!(st.groups[0].workunits.len(), 1);
                assert_eq!(st.groups[1].results.len(), 1);
                assert_eq!(st.groups[1].done_without_workunit, 1);
                assert_eq!(st.newest_received.map(|r| r.value), Some(9.0));
                assert_eq!(st.groups[1].versions.len(), 1);
                assert_eq!(st.boinc_bytes, 12.0);
                assert_eq!(st.files.len(), 1, "f0 comes before any project");
                assert_eq!(st.files[&(0, Text::Borrowed("f1"))], 7.0);
                assert_eq!(st.active[&(Text::Borrowed("b"), Text::Borrowed("r"))], 0.5);
                let w = un.warnings().join("\n");
                assert!(w.contains("<active_task_set>: not modelled by vcsim, ignored: <x>"), "{w}");
                assert!(w.contains("<client_state>: not modelled by vcsim, ignored: <platform_name>"), "{w}");
            },
        );
        let e = with_root("<client_state><result/></client_state>", |s, root| {
            let mut st = State::default();
            st.add(s, elems(root).next().unwrap(), &mut Unmodelled::default())
                .unwrap_err()
        });
        assert!(e.message.contains("before any <project>"), "{e}");
    }
}
