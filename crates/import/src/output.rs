//! An import's result: the scenario's head sections, the projects' text
//! (written section by section), and the whole read back and checked.

use crate::duration::{self, MIN_DURATION_DAYS};
use crate::emit::{self, Section, Val};
use crate::error::ImportError;
use crate::input::{Options, DEFAULT_STEP_SECONDS};
use std::path::Path;
use vcsim_framework::Scenario;

/// An imported scenario.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The scenario, as loaded back from `toml`.
    pub scenario: Scenario,
    /// The scenario as commented TOML.
    pub toml: String,
    /// What the input had that vcsim does not model, and other remarks.
    pub warnings: Vec<String>,
    /// The files read, by name.
    pub inputs: Vec<String>,
}

/// The top-level keys of an imported scenario.
pub(crate) fn scenario_head(name: &str, description: &str, start_note: &str) -> Section {
    let mut s = Section::new("");
    s.note(start_note.to_string());
    s.put("name", Val::S(name.to_string()), "the input file's name");
    s.put("description", Val::S(description.to_string()), "");
    s.put(
        "seed",
        Val::I(1),
        "BOINC's files have no seed: vcsim's default",
    );
    // Chosen in `finish`, from the projects.
    s.put("duration_days", Val::F(MIN_DURATION_DAYS), "");
    s.put(
        "step_seconds",
        Val::F(DEFAULT_STEP_SECONDS),
        "the emulator's --delta default",
    );
    s
}

/// The projects' part of the scenario as it is written: each section is
/// rendered and at once read back, so that neither the sections nor a parse
/// of the whole TOML are ever held (the written TOML of a large state is
/// about half its size, and a TOML tree several times that).
#[derive(Default)]
pub(crate) struct Out {
    toml: String,
    projects: Vec<vcsim_framework::scenario::Project>,
}

impl Out {
    /// Writes a `[[project]]`, `[[project.scheduler]]`, `[[project.app]]` or
    /// `[[project.job]]` section, after the project it belongs to.
    pub fn push(&mut self, s: &Section) -> Result<(), String> {
        use vcsim_framework::scenario::{App, InitialJob, Project, Scheduler};
        let at = emit::render_section(&mut self.toml, s);
        let body = &self.toml[at..];
        let bad = |e: toml::de::Error| format!("{}: {}", s.header, e.message().trim());
        if s.header == "[[project]]" {
            self.projects
                .push(toml::from_str::<Project>(body).map_err(bad)?);
            return Ok(());
        }
        let p = self
            .projects
            .last_mut()
            .ok_or_else(|| format!("{} before any [[project]]", s.header))?;
        match s.header.as_str() {
            "[[project.scheduler]]" => p
                .schedulers
                .push(toml::from_str::<Scheduler>(body).map_err(bad)?),
            "[[project.app]]" => p.apps.push(toml::from_str::<App>(body).map_err(bad)?),
            "[[project.job]]" => p
                .jobs
                .push(toml::from_str::<InitialJob>(body).map_err(bad)?),
            other => return Err(format!("unexpected section {other}")),
        }
        Ok(())
    }
}

/// Renders the head sections (top-level keys, host, client) before the
/// projects written to `out`, reads them back as a scenario, validates it,
/// and packs the result.
pub(crate) fn finish(
    main: &Path,
    inputs: &[String],
    mut head_sections: Vec<Section>,
    out: Out,
    mut warnings: Vec<String>,
    options: &Options,
) -> Result<Imported, ImportError> {
    let invalid = |m: String| ImportError {
        file: main.to_path_buf(),
        line: None,
        element: None,
        message: format!("the imported values do not make a valid scenario: {m}"),
    };
    let head = vec![
        format!(
            "A vcsim scenario imported from BOINC's files: {}.",
            inputs.join(", ")
        ),
        "Each comment says where the value came from. Written by `vcsim import`.".to_string(),
    ];
    let parse = |sections: &[Section]| -> Result<(String, Scenario), ImportError> {
        let text = emit::render(&head, sections);
        let s = toml::from_str(&text)
            .map_err(|e: toml::de::Error| invalid(e.message().trim().to_string()))?;
        Ok((text, s))
    };
    // The run's length needs the host and the projects.
    let (_, first) = parse(&head_sections)?;
    let (days, why, short) = duration::choose(&first.host, &out.projects, options.duration_days);
    if let Some(e) = head_sections
        .first_mut()
        .and_then(|s| s.entries.iter_mut().find(|e| e.key == "duration_days"))
    {
        e.val = Val::F(days);
        e.note = format!("BOINC's files do not say: {why}");
        if options.duration_days.is_some() {
            e.note = why;
        }
    }
    warnings.extend(short);
    let (head_toml, mut scenario) = parse(&head_sections)?;
    scenario.projects = out.projects;
    // The head goes in front of the projects' text, which is not copied.
    let mut toml = out.toml;
    if toml.is_empty() {
        toml = head_toml;
    } else {
        toml.insert(0, '\n');
        toml.insert_str(0, &head_toml);
    }
    scenario
        .validate()
        .map_err(|(key, m)| invalid(format!("key `{key}`: {m}")))?;
    Ok(Imported {
        scenario,
        toml,
        warnings,
        inputs: inputs.to_vec(),
    })
}
