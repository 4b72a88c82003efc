//! A point of the search: a value (or the base scenario's own) for each
//! parameter of the space, and the simplifications shrinking may make (a
//! shorter run, fewer projects, no GPU).

use crate::space::{scenario_at, Space, Value};
use vcsim_framework::Scenario;

#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Per dimension of the space: its value, or None for the base
    /// scenario's own (the parameter is not set).
    pub values: Vec<Option<Value>>,
    pub duration_days: f64,
    /// Keep only the first this many projects.
    pub projects: Option<usize>,
    /// Remove the host's GPUs and the apps that need them.
    pub no_gpu: bool,
}

impl Point {
    pub fn of(space: &Space, values: Vec<Option<Value>>) -> Point {
        Point {
            values,
            duration_days: space.base.duration_days,
            projects: None,
            no_gpu: false,
        }
    }

    /// The scenario this point runs, or why it cannot run.
    pub fn scenario(&self, space: &Space) -> Result<Scenario, String> {
        let set: Vec<_> = space
            .dims
            .iter()
            .zip(&self.values)
            .filter_map(|(d, v)| v.map(|v| (d, v)))
            .collect();
        let mut scn = scenario_at(&space.base, &set)?;
        scn.duration_days = self.duration_days;
        if let Some(n) = self.projects {
            scn.projects.truncate(n.max(1));
        }
        if self.no_gpu {
            scn.host.gpus.clear();
            for p in &mut scn.projects {
                p.apps.retain(|a| a.gpu.is_none());
            }
            scn.projects.retain(|p| !p.apps.is_empty());
        }
        scn.validate().map_err(|(k, m)| format!("key `{k}`: {m}"))?;
        Ok(scn)
    }

    /// `name=value` of each parameter set, for messages and the trail.
    pub fn describe(&self, space: &Space) -> String {
        let mut parts: Vec<String> = space
            .dims
            .iter()
            .zip(&self.values)
            .filter_map(|(d, v)| v.map(|v| format!("{}={}", d.param.name(), v.text())))
            .collect();
        if self.duration_days != space.base.duration_days {
            parts.push(format!("duration_days={}", self.duration_days));
        }
        if let Some(n) = self.projects {
            parts.push(format!("projects={n}"));
        }
        if self.no_gpu {
            parts.push("no_gpu".into());
        }
        if parts.is_empty() {
            "the base scenario".into()
        } else {
            parts.join(" ")
        }
    }
}
