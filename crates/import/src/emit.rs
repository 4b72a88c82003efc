//! Writes the scenario as commented TOML: every value says where it came from.

use std::fmt::Write;

pub enum Val {
    F(f64),
    I(u64),
    S(String),
    B(bool),
    /// An inline table (`{ kind = "nvidia", count = 1 }`).
    Inline(Vec<(&'static str, Val)>),
}

impl Val {
    fn render(&self) -> String {
        match self {
            Val::F(v) => num(*v),
            Val::I(v) => v.to_string(),
            Val::S(s) => toml::Value::String(s.clone()).to_string(),
            Val::B(b) => b.to_string(),
            Val::Inline(kv) => {
                let parts: Vec<String> = kv
                    .iter()
                    .map(|(k, v)| format!("{k} = {}", v.render()))
                    .collect();
                format!("{{ {} }}", parts.join(", "))
            }
        }
    }
}

/// A TOML float that round-trips: plain for everyday sizes, scientific for
/// large or tiny ones.
pub fn num(v: f64) -> String {
    // 12 significant digits: enough for any input, and no `0.7200000000000001`.
    let v: f64 = format!("{v:.11e}").parse().unwrap_or(v);
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e7).contains(&a) {
        // `1e9` is a valid TOML float.
        format!("{v:e}")
    } else {
        let s = format!("{v}");
        if s.contains('.') || s.contains('e') {
            s
        } else {
            // An integer-looking float; serde reads it into f64 all the same,
            // but write it as a float so the type is plain.
            format!("{s}.0")
        }
    }
}

/// A number in a message, short: 15 significant digits, as the framework's
/// scenario errors write them (`1e308`, not its 309 digits; `0.864`, not
/// `0.8640000000000001`).
pub fn show(v: f64) -> String {
    let v = format!("{v:.14e}").parse::<f64>().unwrap_or(v);
    if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e9) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

pub struct Entry {
    pub key: &'static str,
    pub val: Val,
    pub note: String,
}

#[derive(Default)]
pub struct Section {
    /// `[host]`, `[[project]]`, ...; empty for the top level.
    pub header: String,
    /// Comment lines written above the header.
    pub notes: Vec<String>,
    pub entries: Vec<Entry>,
}

impl Section {
    pub fn new(header: &str) -> Section {
        Section {
            header: header.to_string(),
            ..Default::default()
        }
    }
    pub fn note(&mut self, s: impl Into<String>) -> &mut Self {
        self.notes.push(s.into());
        self
    }
    pub fn put(&mut self, key: &'static str, val: Val, note: impl Into<String>) -> &mut Self {
        self.entries.push(Entry {
            key,
            val,
            note: note.into(),
        });
        self
    }
}

impl Section {
    /// An error naming the first value a scenario cannot take, with the
    /// key and the input it came from: a number that is not finite (a
    /// product or ratio of extreme inputs, `1e308` FLOPS over `1e-300`),
    /// which TOML cannot hold, or a text with a control character (a line
    /// break in a `<project_name>`), which a scenario's names may not hold.
    pub fn check_values(&self) -> Result<(), String> {
        // (What is wrong, why.)
        fn first_bad(v: &Val) -> Option<(String, &'static str)> {
            match v {
                Val::F(x) if !x.is_finite() => {
                    Some((format!("would be {x}"), "an input is out of range"))
                }
                Val::S(s) => s.chars().find(|c| c.is_control()).map(|c| {
                    (
                        format!("holds the control character {}", c.escape_debug()),
                        "names must be printable",
                    )
                }),
                Val::Inline(kv) => kv.iter().find_map(|(_, v)| first_bad(v)),
                _ => None,
            }
        }
        for e in &self.entries {
            if let Some((what, why)) = first_bad(&e.val) {
                let from = if e.note.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", e.note.replace('\n', " "))
                };
                return Err(format!(
                    "{}: `{}` {what}{from}: {why}",
                    if self.header.is_empty() {
                        "the top level"
                    } else {
                        &self.header
                    },
                    e.key,
                ));
            }
        }
        Ok(())
    }
}

pub fn render(head: &[String], sections: &[Section]) -> String {
    let mut out = String::new();
    for h in head {
        let _ = writeln!(out, "# {h}");
    }
    for s in sections {
        render_section(&mut out, s);
    }
    out
}

/// Appends one section to `out` (after a blank line unless `out` is empty)
/// and returns the offset where its keys start, after its header.
pub fn render_section(out: &mut String, s: &Section) -> usize {
    if !out.is_empty() {
        out.push('\n');
    }
    for n in &s.notes {
        let _ = writeln!(out, "# {n}");
    }
    if !s.header.is_empty() {
        let _ = writeln!(out, "{}", s.header);
    }
    let body = out.len();
    for e in &s.entries {
        let kv = format!("{} = {}", e.key, e.val.render());
        if e.note.is_empty() {
            let _ = writeln!(out, "{kv}");
        } else {
            let note = e.note.replace('\n', " ");
            let _ = writeln!(out, "{kv:<34} # {note}");
        }
    }
    body
}
