//! Reads BOINC's own files as vcsim scenarios.
//!
//! Two formats:
//! - a client's `client_state.xml` (a real client's, or the input of BOINC's
//!   client emulator with its extra tags), with `global_prefs.xml`,
//!   `global_prefs_override.xml` and `cc_config.xml` beside it, and the
//!   projects' `projects/<project directory>/app_config.xml`;
//! - the three inputs of BOINC's 2007 client simulator: `sim_projects.xml`,
//!   `sim_host.xml`, `sim_prefs.xml`.
//!
//! Files may carry a common prefix, as the emulator's `--infile_prefix`
//! allows (`run1-client_state.xml` goes with `run1-global_prefs.xml`).
//!
//! The result is a commented vcsim scenario (TOML) whose comments say where
//! each value came from, the [`Scenario`] it loads as, and warnings that list
//! everything present in the input that vcsim does not model. The run's
//! length is chosen from the projects ([`Options`] can set it). Malformed
//! input is an [`ImportError`] naming the file, the element and the line.
//! Nothing here panics on bad input, and time and memory stay in proportion
//! to the input, whatever it is: a first pass (`scan`) refuses DTDs, deep
//! nesting and the other shapes that would make the parser slow, and a
//! `client_state.xml` is parsed one top-level element at a time.

#![forbid(unsafe_code)]

mod cc_config;
mod client_state;
mod duration;
mod emit;
mod error;
mod input;
mod output;
mod prefs;
mod scan;
mod sim2007;
mod xml;

pub use duration::{JOB_TIMES, LATENCY_BOUNDS, MAX_DURATION_DAYS, MIN_DURATION_DAYS};
pub use error::ImportError;
pub use input::{
    AppConfigText, Format, Options, DEFAULT_STEP_SECONDS, MAX_APPS_PER_PROJECT, MAX_PROJECTS,
};
pub use output::Imported;

use input::Input;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub use client_state::project_dir;

/// Whether `path` should be read as BOINC input rather than a vcsim TOML
/// scenario: a directory, or a file ending in `.xml`.
pub fn is_boinc_path(path: &Path) -> bool {
    path.is_dir()
        || path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("xml"))
        || starts_like_xml(path)
}

/// Whether the file's text starts with `<` (after a byte-order mark and
/// white space), which no TOML scenario does: a BOINC file kept under
/// another name (`client_state_prev.xml.bak`) is read as BOINC's, not
/// refused as TOML at its first character. A pipe is read whole (and kept,
/// so that the loader reads the same bytes); a regular file, its start.
fn starts_like_xml(path: &Path) -> bool {
    use std::io::Read;
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    let head = if meta.is_file() {
        let mut head = Vec::new();
        match std::fs::File::open(path) {
            Ok(f) => {
                if f.take(4096).read_to_end(&mut head).is_err() {
                    return false;
                }
            }
            Err(_) => return false,
        }
        head
    } else if meta.is_dir() {
        return false;
    } else {
        match vcsim_framework::input::read_bounded(path, vcsim_framework::input::MAX_IMPORT_BYTES) {
            Ok(bytes) => bytes,
            Err(_) => return false,
        }
    };
    // UTF-16 and UTF-32 byte-order marks: `decode` names the encoding.
    if head.starts_with(&[0xff, 0xfe])
        || head.starts_with(&[0xfe, 0xff])
        || head.starts_with(&[0, 0, 0xfe, 0xff])
    {
        return true;
    }
    let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&head);
    text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<')
}

/// Imports a directory (holding one `client_state.xml` or `sim_projects.xml`,
/// possibly prefixed) or one of those files; the other files of the set are
/// looked for beside it.
pub fn import_path(path: &Path) -> Result<Imported, ImportError> {
    import_path_with(path, &Options::default())
}

/// [`import_path`] with [`Options`].
pub fn import_path_with(path: &Path, options: &Options) -> Result<Imported, ImportError> {
    let mut read_warnings = Vec::new();
    let (main, format, prefix, sniffed) = locate(path, &mut read_warnings)?;
    let dir = main.parent().map(Path::to_path_buf).unwrap_or_default();
    // Read once: a pipe or FIFO (`/dev/stdin`) has nothing left to read again.
    let main_text = match sniffed {
        Some(text) => text,
        None => read(&main, &mut read_warnings)?,
    };
    let beside = |name: &str,
                  w: &mut Vec<String>|
     -> Result<Option<input::FileText<'static>>, ImportError> {
        let p = dir.join(format!("{prefix}{name}"));
        if present(&p)? {
            Ok(Some((p.clone(), Cow::Owned(read(&p, w)?))))
        } else {
            Ok(None)
        }
    };
    let input = match format {
        Format::ClientState => Input {
            main: (main.clone(), Cow::Owned(main_text)),
            prefs: beside("global_prefs.xml", &mut read_warnings)?,
            override_prefs: beside("global_prefs_override.xml", &mut read_warnings)?,
            cc_config: beside("cc_config.xml", &mut read_warnings)?,
            host: None,
            app_configs: app_configs(&dir, &mut read_warnings)?,
            options: options.clone(),
        },
        Format::Sim2007 => Input {
            main: (main.clone(), Cow::Owned(main_text)),
            prefs: beside("sim_prefs.xml", &mut read_warnings)?,
            override_prefs: None,
            cc_config: None,
            host: beside("sim_host.xml", &mut read_warnings)?,
            app_configs: Vec::new(),
            options: options.clone(),
        },
    };
    let mut imp = run(&input, format)?;
    read_warnings.append(&mut imp.warnings);
    imp.warnings = read_warnings;
    Ok(imp)
}

/// Imports a `client_state.xml` given as text, with its preferences and
/// their override; the paths only name the files in comments and errors.
pub fn import_client_state(
    state: (&Path, &str),
    prefs: Option<(&Path, &str)>,
    override_prefs: Option<(&Path, &str)>,
) -> Result<Imported, ImportError> {
    import_client_state_with(state, prefs, override_prefs, &[], &Options::default())
}

/// [`import_client_state`] with the projects' `app_config.xml` files and
/// [`Options`].
pub fn import_client_state_with<'a>(
    state: (&'a Path, &'a str),
    prefs: Option<(&'a Path, &'a str)>,
    override_prefs: Option<(&'a Path, &'a str)>,
    app_configs: &[AppConfigText<'a>],
    options: &Options,
) -> Result<Imported, ImportError> {
    let borrow = |x: (&'a Path, &'a str)| (x.0.to_path_buf(), Cow::Borrowed(x.1));
    let input = Input {
        main: borrow(state),
        prefs: prefs.map(borrow),
        override_prefs: override_prefs.map(borrow),
        cc_config: None,
        host: None,
        app_configs: app_configs
            .iter()
            .map(|a| {
                (
                    a.project_dir.to_string(),
                    a.path.to_path_buf(),
                    Cow::Borrowed(a.text),
                )
            })
            .collect(),
        options: options.clone(),
    };
    run(&input, Format::ClientState)
}

/// Imports the 2007 simulator's `sim_projects.xml`, `sim_host.xml` and
/// (optionally) `sim_prefs.xml`, given as text.
pub fn import_sim2007<'a>(
    projects: (&'a Path, &'a str),
    host: (&'a Path, &'a str),
    prefs: Option<(&'a Path, &'a str)>,
) -> Result<Imported, ImportError> {
    let borrow = |x: (&'a Path, &'a str)| (x.0.to_path_buf(), Cow::Borrowed(x.1));
    let input = Input {
        main: borrow(projects),
        prefs: prefs.map(borrow),
        override_prefs: None,
        cc_config: None,
        host: Some(borrow(host)),
        app_configs: Vec::new(),
        options: Options::default(),
    };
    run(&input, Format::Sim2007)
}

fn run(input: &Input, format: Format) -> Result<Imported, ImportError> {
    match format {
        Format::ClientState => client_state::import(input),
        Format::Sim2007 => sim2007::import(input),
    }
}

/// The `app_config.xml` files of BOINC's layout beside a `client_state.xml`:
/// `projects/<project directory>/app_config.xml`, by directory name.
fn app_configs(
    dir: &Path,
    warnings: &mut Vec<String>,
) -> Result<Vec<(String, PathBuf, Cow<'static, str>)>, ImportError> {
    let Ok(rd) = std::fs::read_dir(dir.join("projects")) else {
        return Ok(Vec::new());
    };
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for e in rd.flatten() {
        let p = e.path().join("app_config.xml");
        if present(&p)? {
            found.push((e.file_name().to_string_lossy().into_owned(), p));
        }
    }
    found.sort();
    found
        .into_iter()
        .map(|(d, p)| Ok((d, p.clone(), Cow::Owned(read(&p, warnings)?))))
        .collect()
}

/// Reads a file as text (see [`decode`]).
fn read(path: &Path, warnings: &mut Vec<String>) -> Result<String, ImportError> {
    let bytes =
        vcsim_framework::input::read_bounded(path, vcsim_framework::input::MAX_IMPORT_BYTES)
            .map_err(|e| ImportError {
                file: path.to_path_buf(),
                line: None,
                element: None,
                message: format!("cannot read the file: {e}"),
            })?;
    decode(path, bytes, warnings)
}

/// A file's bytes as text. BOINC writes UTF-8: a UTF-16 or UTF-32 file is
/// refused, named as such so that the user converts it; a declared
/// ISO-8859-1 or US-ASCII one is decoded (each byte is its code point); a
/// file declaring another encoding is read only if its bytes are UTF-8; in
/// a UTF-8 (or undeclared) file, bytes that are not UTF-8 are replaced,
/// with a warning naming the line of the first.
fn decode(path: &Path, bytes: Vec<u8>, warnings: &mut Vec<String>) -> Result<String, ImportError> {
    let err = |line: usize, message: String| ImportError {
        file: path.to_path_buf(),
        line: Some(line),
        element: None,
        message,
    };
    // A UTF-8 byte-order mark decides, whatever the declaration says (as
    // in the XML specification's appendix F).
    if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        return Ok(utf8(path, rest.to_vec(), warnings));
    }
    if let Some((enc, how)) = wide_encoding(&bytes) {
        let family = &enc[..6];
        return Err(err(
            1,
            format!(
                "the file is {family} ({enc}, {how}): vcsim reads UTF-8, the encoding BOINC writes; convert it, for example with `iconv -f {enc} -t UTF-8`"
            ),
        ));
    }
    let Some(declared) = declared_encoding(&bytes) else {
        return Ok(utf8(path, bytes, warnings));
    };
    match declared.to_ascii_lowercase().as_str() {
        "utf-8" | "utf8" => Ok(utf8(path, bytes, warnings)),
        // ISO-8859-1 and its registered aliases, and US-ASCII, its first half.
        "iso-8859-1" | "iso8859-1" | "iso_8859-1" | "iso_8859-1:1987" | "latin1" | "latin-1"
        | "l1" | "ibm819" | "cp819" | "csisolatin1" | "iso-ir-100" | "us-ascii" | "ascii" => {
            Ok(bytes.iter().map(|&b| char::from(b)).collect())
        }
        _ => match String::from_utf8(bytes) {
            Ok(text) => {
                warnings.push(format!(
                    "{}: the XML declaration at line 1 names encoding `{declared}`, which vcsim does not decode; the bytes are valid UTF-8, and are read as UTF-8",
                    path.display()
                ));
                Ok(text)
            }
            Err(e) => Err(err(
                line_of(e.as_bytes(), e.utf8_error().valid_up_to()),
                format!(
                    "the file declares encoding `{declared}`, which vcsim does not read (it reads UTF-8, ISO-8859-1 and US-ASCII; BOINC writes UTF-8): convert it, for example with `iconv -f {declared} -t UTF-8`"
                ),
            )),
        },
    }
}

/// UTF-8 text; bytes that are not UTF-8 are replaced, with a warning.
fn utf8(path: &Path, bytes: Vec<u8>, warnings: &mut Vec<String>) -> String {
    let mut text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            warnings.push(format!(
                "{}: not valid UTF-8 from line {}; the bad bytes are replaced (vcsim reads UTF-8, as BOINC writes it; a file in another encoding should declare it, as in <?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>)",
                path.display(),
                line_of(e.as_bytes(), e.utf8_error().valid_up_to())
            ));
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    if text.starts_with('\u{feff}') {
        text.remove(0);
    }
    text
}

/// The 1-based line of byte offset `at`.
fn line_of(bytes: &[u8], at: usize) -> usize {
    bytes[..at.min(bytes.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// A UTF-16 or UTF-32 file, told by its byte-order mark or, without one,
/// by the NUL bytes around its first character (an XML file starts with
/// `<` or a space, ASCII either way): the encoding, and how it was told.
fn wide_encoding(b: &[u8]) -> Option<(&'static str, &'static str)> {
    const BOM: &str = "with a byte-order mark";
    const NUL: &str = "told by its NUL bytes";
    let ascii = |c: u8| c != 0 && c < 0x80;
    match b {
        [0, 0, 0xFE, 0xFF, ..] => Some(("UTF-32BE", BOM)),
        [0xFF, 0xFE, 0, 0, ..] => Some(("UTF-32LE", BOM)),
        [0xFE, 0xFF, ..] => Some(("UTF-16BE", BOM)),
        [0xFF, 0xFE, ..] => Some(("UTF-16LE", BOM)),
        [0, 0, 0, c, ..] if ascii(*c) => Some(("UTF-32BE", NUL)),
        [c, 0, 0, 0, ..] if ascii(*c) => Some(("UTF-32LE", NUL)),
        [0, c, ..] if ascii(*c) => Some(("UTF-16BE", NUL)),
        [c, 0, ..] if ascii(*c) => Some(("UTF-16LE", NUL)),
        _ => None,
    }
}

/// The `encoding` of the XML declaration that starts the file, if any.
fn declared_encoding(b: &[u8]) -> Option<String> {
    let head = b.strip_prefix(b"<?xml")?;
    // A declaration is short; a long one is not looked into.
    let head = &head[..head.len().min(512)];
    let end = head.windows(2).position(|w| w == b"?>")?;
    let decl = std::str::from_utf8(&head[..end]).ok()?;
    let rest = decl[decl.find("encoding")? + "encoding".len()..].trim_start();
    let rest = rest.strip_prefix('=')?.trim_start();
    let quote = rest.chars().next().filter(|q| *q == '"' || *q == '\'')?;
    let value = &rest[1..];
    Some(value[..value.find(quote)?].to_string())
}

/// The main file of a set, its format, and the prefix shared by the set.
fn locate(
    path: &Path,
    warnings: &mut Vec<String>,
) -> Result<(PathBuf, Format, String, Option<String>), ImportError> {
    let err = |m: String| ImportError {
        file: path.to_path_buf(),
        line: None,
        element: None,
        message: m,
    };
    let classify = |name: &str| -> Option<(Format, String)> {
        for (suffix, f) in [
            ("client_state.xml", Format::ClientState),
            ("sim_projects.xml", Format::Sim2007),
        ] {
            if let Some(prefix) = name.strip_suffix(suffix) {
                return Some((f, prefix.to_string()));
            }
        }
        None
    };
    if path.is_dir() {
        let rd =
            std::fs::read_dir(path).map_err(|e| err(format!("cannot read the directory: {e}")))?;
        let mut found: Vec<(PathBuf, Format, String)> = Vec::new();
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some((f, prefix)) = classify(&name) {
                if present(&e.path())? {
                    found.push((e.path(), f, prefix));
                }
            }
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        return match found.len() {
            0 => Err(err(
                "no client_state.xml or sim_projects.xml (with or without a prefix) in this directory".into(),
            )),
            1 => {
                let (p, f, prefix) = found.remove(0);
                Ok((p, f, prefix, None))
            }
            _ => {
                let names: Vec<String> = found
                    .iter()
                    .map(|f| f.0.file_name().unwrap_or_default().to_string_lossy().into_owned())
                    .collect();
                Err(err(format!(
                    "several BOINC inputs in this directory ({}): name one of them",
                    names.join(", ")
                )))
            }
        };
    }
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some((f, prefix)) = classify(&name) {
        return Ok((path.to_path_buf(), f, prefix, None));
    }
    // Another name: tell by the root element, and keep the text read.
    let text = read(path, warnings)?;
    let root = first_element(&text);
    let format = match root.as_deref() {
        Some("client_state") => Ok(Format::ClientState),
        Some("projects") => Ok(Format::Sim2007),
        Some("global_preferences") | Some("host") | Some("cc_config") => Err(err(format!(
            "this is a <{}> file; import the client_state.xml or sim_projects.xml it goes with (or their directory)",
            root.unwrap_or_default()
        ))),
        Some(other) => Err(err(format!(
            "not a BOINC input this version reads: root element <{other}> (expected <client_state> or <projects>)"
        ))),
        None => Err(err("no XML element in the file".into())),
    }?;
    Ok((path.to_path_buf(), format, String::new(), Some(text)))
}

/// Whether a file beside the input is there to read: a regular file, or a
/// FIFO or device (read as named, like the input itself; skipping one left
/// a `global_prefs_override.xml` fed through a FIFO out without a word).
/// Something there that cannot be read as a file (a directory, a link to
/// nothing or in a loop) is an error naming it: taken as absent, it gave
/// vcsim's defaults without a word.
fn present(p: &Path) -> Result<bool, ImportError> {
    let err = |m: String| ImportError {
        file: p.to_path_buf(),
        line: None,
        element: None,
        message: m,
    };
    match std::fs::symlink_metadata(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(err(format!("cannot read the file: {e}"))),
        Ok(_) => {}
    }
    match std::fs::metadata(p) {
        Ok(m) if m.is_dir() => Err(err("it is a directory, where BOINC keeps a file".into())),
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(err("it is a symbolic link to nothing".into()))
        }
        Err(e) => Err(err(format!("cannot read the file: {e}"))),
    }
}

/// The name of the first element, without parsing the whole file.
fn first_element(text: &str) -> Option<String> {
    let mut rest = text;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        if rest.starts_with('?') || rest.starts_with('!') {
            continue;
        }
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .unwrap_or(rest.len());
        return Some(rest[..end].to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip_through_toml() {
        for v in [
            0.0, 1.0, 0.1, 0.72, 100.0, 4.5e9, 1.3e13, 2.5e-5, 123456.789, 1e300,
        ] {
            let s = emit::num(v);
            let back: f64 = toml::from_str::<toml::Value>(&format!("x = {s}"))
                .unwrap()
                .get("x")
                .and_then(|x| x.as_float())
                .unwrap();
            assert!((back - v).abs() <= v.abs() * 1e-11, "{v} -> {s} -> {back}");
        }
        assert_eq!(emit::num(0.7200000000000001), "0.72");
    }

    #[test]
    fn root_element_sniffing() {
        assert_eq!(
            first_element("<?xml version=\"1.0\"?>\n<!-- c -->\n<client_state>").as_deref(),
            Some("client_state")
        );
        assert_eq!(first_element("<projects/>").as_deref(), Some("projects"));
        assert_eq!(first_element("no xml"), None);
    }

    #[test]
    fn lines_of_errors() {
        let text =
            "<client_state>\n<host_info>\n<p_ncpus>two</p_ncpus>\n</host_info>\n</client_state>\n";
        let e = import_client_state((Path::new("c.xml"), text), None, None).unwrap_err();
        assert_eq!(e.line, Some(3));
        assert_eq!(e.element.as_deref(), Some("p_ncpus"));
        assert_eq!(
            e.to_string(),
            "c.xml:3: <p_ncpus>: `two` is not a finite number"
        );
        let e = import_client_state(
            (Path::new("c.xml"), "<client_state>\n<a>\n</b>"),
            None,
            None,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        let e = import_client_state((Path::new("c.xml"), "<projects/>"), None, None).unwrap_err();
        assert!(e.message.contains("expected <client_state>"), "{e}");
    }
}
