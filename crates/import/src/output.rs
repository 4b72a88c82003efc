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
        s.check_values()?;
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
        for s in sections {
            s.check_values().map_err(invalid)?;
        }
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
    scenario.validate().map_err(|(key, m)| {
        let mut from: Vec<String> = note_of(&toml, &key)
            .map(|n| format!("from {n}"))
            .into_iter()
            .collect();
        // Another key the message names (`client.max_ncpus_pct` for an app
        // too wide) came from a BOINC file too: say which.
        let mut named: Vec<&str> = Vec::new();
        for word in m.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_')) {
            let word = word.trim_end_matches('.');
            if word.contains('.') && word != key && !named.contains(&word) {
                if let Some(n) = note_of(&toml, word) {
                    named.push(word);
                    from.push(format!("{word} from {n}"));
                }
            }
        }
        let from = if from.is_empty() {
            String::new()
        } else {
            format!(" ({})", from.join("; "))
        };
        invalid(format!("key `{key}`: {m}{from}"))
    })?;
    Ok(Imported {
        scenario,
        toml,
        warnings,
        inputs: inputs.to_vec(),
    })
}

/// The comment that says where the value of dotted `key` came from
/// (`<resource_share>, client_state.xml line 23`), in the rendered
/// scenario: so that a value the scenario refuses names its BOINC file and
/// line, not only its scenario key.
fn note_of<'t>(toml: &'t str, key: &str) -> Option<&'t str> {
    // The dotted path of the current section, with the index of each array
    // of tables (`project.1.app.0`), as validation names keys; the count of
    // each array of tables so far (`project.app` counts within a project).
    let mut section = String::new();
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    // `project.app` -> `project.3.app`: a parent that is an array of tables
    // gets the index of its latest element.
    let indexed =
        |counts: &std::collections::BTreeMap<&str, usize>, h: &str| match h.split_once('.') {
            Some((parent, rest)) if counts.contains_key(parent) => {
                format!("{parent}.{}.{rest}", counts[parent] - 1)
            }
            _ => h.to_string(),
        };
    for line in toml.lines() {
        let line = line.trim();
        if let Some(h) = line.strip_prefix("[[").and_then(|l| l.strip_suffix("]]")) {
            let n = counts.entry(h).or_insert(0);
            *n += 1;
            let n = *n - 1;
            // A new element restarts the counts of its own arrays.
            counts.retain(|k, _| {
                !(k.len() > h.len() && k.starts_with(h) && k[h.len()..].starts_with('.'))
            });
            section = format!("{}.{n}", indexed(&counts, h));
        } else if let Some(h) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = indexed(&counts, h);
        } else if let Some((name, rest)) = line.split_once('=') {
            let name = name.trim();
            let full = if section.is_empty() {
                name.to_string()
            } else {
                format!("{section}.{name}")
            };
            if full == key {
                return rest.split_once(" # ").map(|(_, n)| n.trim());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::output::note_of;

    #[test]
    fn a_key_finds_its_note_in_its_section() {
        let toml = "duration_days = 5.0 # five\n[host]\nncpus = 4 # p_ncpus, line 3\n\
                    [host.availability]\nfraction = 0.5 # on_frac\n[[host.gpu]]\ncount = 1 # gpu 0\n\
                    [[project]]\nname = \"A\"\n[[project.app]]\nflops_estimate = 1.0 # A's\n\
                    [[project]]\nresource_share = 1e300 # B's share, line 12\n\
                    [[project.app]]\nflops_estimate = 2.0 # B app 0\n\
                    [[project.app]]\nflops_estimate = 3.0 # B app 1\n";
        for (key, note) in [
            ("duration_days", Some("five")),
            ("host.ncpus", Some("p_ncpus, line 3")),
            ("host.availability.fraction", Some("on_frac")),
            ("host.gpu.0.count", Some("gpu 0")),
            ("project.0.app.0.flops_estimate", Some("A's")),
            ("project.1.resource_share", Some("B's share, line 12")),
            ("project.1.app.0.flops_estimate", Some("B app 0")),
            ("project.1.app.1.flops_estimate", Some("B app 1")),
            ("project.0.name", None),
            ("project.2.resource_share", None),
        ] {
            assert_eq!(note_of(toml, key), note, "{key}");
        }
    }
}
