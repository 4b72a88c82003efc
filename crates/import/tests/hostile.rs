//! Hostile and extreme input (issue 19, the import's cases): one test per
//! finding, each asserting the outcome, its message and a time bound. The
//! inputs are generated here; the bounds are for a debug build on a busy
//! machine, well above what the import takes (a few milliseconds for the
//! refusals).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use vcsim_import::{
    import_client_state, import_client_state_with, import_path, import_sim2007, AppConfigText,
    ImportError, Imported, Options,
};

const HOST: &str = include_str!("../../../tests/fixtures/boinc/host/client_state.xml");

/// Runs `f`, fails if it took longer than `secs`.
fn timed<T>(what: &str, secs: u64, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let r = f();
    let took = t.elapsed();
    eprintln!("{what}: {:.3} s", took.as_secs_f64());
    assert!(
        took < Duration::from_secs(secs),
        "{what} took {took:?} (bound {secs} s)"
    );
    r
}

fn state(text: &str) -> Result<Imported, ImportError> {
    import_client_state((Path::new("client_state.xml"), text), None, None)
}

/// The host fixture with `extra` added as the last top-level element.
fn host_with(extra: &str) -> String {
    let end = HOST.rfind("</client_state>").expect("fixture has a root");
    format!("{}{extra}\n{}", &HOST[..end], &HOST[end..])
}

fn assert_err(r: Result<Imported, ImportError>, file: &str, line: usize, element: &str, msg: &str) {
    let e = match r {
        Ok(_) => panic!("imported; expected an error with `{msg}`"),
        Err(e) => e,
    };
    let shown = e.to_string();
    assert_eq!(e.file, PathBuf::from(file), "{shown}");
    assert_eq!(e.line, Some(line), "{shown}");
    assert_eq!(e.element.as_deref(), Some(element), "{shown}");
    assert!(e.message.contains(msg), "{shown}");
    assert!(
        shown.starts_with(&format!("{file}:{line}: <{element}>: ")),
        "{shown}"
    );
}

/// The case: a 56 KB file with one 50,000-character entity
/// referenced 2,000 times (100 MB expanded) ran for minutes. Entities can
/// only be defined in a document type declaration, which BOINC's files never
/// have: it is refused before anything is expanded.
#[test]
fn hostile_entity_expansion_is_refused() {
    let text = format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE client_state [<!ENTITY e \"{}\">]>\n<client_state>\n<x>{}</x>\n</client_state>\n",
        "y".repeat(50_000),
        "&e;".repeat(2_000)
    );
    assert!(text.len() > 55_000 && text.len() < 60_000);
    let r = timed("50,000-character entity x 2,000", 2, || state(&text));
    assert_err(
        r,
        "client_state.xml",
        2,
        "!DOCTYPE",
        "a document type declaration: BOINC's files have none, and vcsim refuses them",
    );

    // Billion laughs, in every kind of file the import reads.
    let mut laughs = String::from("<!DOCTYPE r [<!ENTITY l0 \"ha\">");
    for i in 1..10 {
        let prev = format!("&l{};", i - 1);
        laughs.push_str(&format!("<!ENTITY l{i} \"{}\">", prev.repeat(10)));
    }
    laughs.push_str("]>\n");
    let laughs_in = |root: &str| format!("{laughs}<{root}>&l9;</{root}>");
    let r = timed("billion laughs, state", 2, || {
        state(&laughs_in("client_state"))
    });
    assert_err(
        r,
        "client_state.xml",
        1,
        "!DOCTYPE",
        "document type declaration",
    );
    let r = timed("billion laughs, prefs", 2, || {
        import_client_state(
            (Path::new("client_state.xml"), HOST),
            Some((
                Path::new("global_prefs.xml"),
                &laughs_in("global_preferences"),
            )),
            None,
        )
    });
    assert_err(
        r,
        "global_prefs.xml",
        1,
        "!DOCTYPE",
        "document type declaration",
    );
    let r = timed("billion laughs, app_config", 2, || {
        import_client_state_with(
            (Path::new("client_state.xml"), HOST),
            None,
            None,
            &[AppConfigText {
                project_dir: "alpha.example.org",
                path: Path::new("app_config.xml"),
                text: &laughs_in("app_config"),
            }],
            &Options::default(),
        )
    });
    assert_err(
        r,
        "app_config.xml",
        1,
        "!DOCTYPE",
        "document type declaration",
    );
    let r = timed("billion laughs, sim2007", 2, || {
        import_sim2007(
            (Path::new("sim_projects.xml"), &laughs_in("projects")),
            (Path::new("sim_host.xml"), "<host/>"),
            None,
        )
    });
    assert_err(
        r,
        "sim_projects.xml",
        1,
        "!DOCTYPE",
        "document type declaration",
    );
}

/// Without a DTD, only the predefined and character references remain: they
/// expand to at most their own length, and a text full of them is built in
/// one pass (2 MB of `&amp;` and `&#65;`, and 16 CDATA sections of 1 MB
/// joined into one text, import in well under the bound). A 17th CDATA
/// section joined to the same text, which the parser would copy the text
/// for again, is refused.
#[test]
fn hostile_text_building_is_linear() {
    let refs = format!("<x>{}</x>", "&amp;&#65;&#x42;&lt;".repeat(100_000));
    assert!(refs.len() > 1_900_000);
    let imp =
        timed("2 MB of references", 10, || state(&host_with(&refs))).expect("references import");
    assert!(
        imp.warnings.iter().any(|w| w.contains("<x>")),
        "{:?}",
        imp.warnings
    );

    let mb = "z".repeat(1 << 20);
    let cdata = |n: usize| format!("<x>{}</x>", format!("<![CDATA[{mb}]]>").repeat(n));
    timed("16 CDATA sections of 1 MB", 10, || {
        state(&host_with(&cdata(16)))
    })
    .expect("16 CDATA sections import");
    let text = host_with(&cdata(17));
    let line = text[..text.find("<x>").unwrap()].matches('\n').count() + 1;
    let r = timed("17 CDATA sections of 1 MB", 10, || state(&text));
    assert_err(
        r,
        "client_state.xml",
        line,
        "x",
        "more than 16 CDATA sections in one text: refused",
    );

    // Text split by many comments is joined in one pass too (a value is
    // read from every text piece of its element).
    let split = format!(
        "<project_name>{}</project_name>",
        "a<!-- c -->".repeat(50_000)
    );
    let text = host_with(&format!(
        "<project><master_url>https://split.example/</master_url>{split}</project>"
    ));
    let r = timed("a value split by 50,000 comments", 10, || state(&text));
    if let Err(e) = r {
        assert!(e.to_string().starts_with("client_state.xml:"), "{e}");
    }
}

/// The case: 20,000 nested elements overflowed the stack (exit
/// 134). Nesting is bounded at 100 levels by a first pass that does not
/// recurse; the error names the file, the line and the element, in every
/// kind of file, closed or not.
#[test]
fn hostile_deep_nesting_is_an_error() {
    for close in [true, false] {
        let text = format!(
            "<client_state>\n<host_info>\n{}{}\n</host_info>\n</client_state>\n",
            "<a>".repeat(20_000),
            if close {
                "</a>".repeat(20_000)
            } else {
                String::new()
            }
        );
        let r = timed("20,000 nested elements", 2, || state(&text));
        assert_err(
            r,
            "client_state.xml",
            3,
            "a",
            "elements nested more than 100 deep",
        );
    }
    let deep = |root: &str| {
        format!(
            "<{root}>\n\n{}{}</{root}>",
            "<b>".repeat(20_000),
            "</b>".repeat(20_000)
        )
    };
    let r = timed("deep prefs", 2, || {
        import_client_state(
            (Path::new("client_state.xml"), HOST),
            None,
            Some((
                Path::new("global_prefs_override.xml"),
                &deep("global_preferences"),
            )),
        )
    });
    assert_err(
        r,
        "global_prefs_override.xml",
        3,
        "b",
        "nested more than 100 deep",
    );
    let r = timed("deep sim_host", 2, || {
        import_sim2007(
            (
                Path::new("sim_projects.xml"),
                include_str!("../../../tests/fixtures/boinc/sim2007/sim_projects.xml"),
            ),
            (Path::new("sim_host.xml"), &deep("host")),
            None,
        )
    });
    assert_err(r, "sim_host.xml", 3, "b", "nested more than 100 deep");
    // 100 levels in all (the root's included) still import.
    let ok = host_with(&format!("{}{}", "<a>".repeat(99), "</a>".repeat(99)));
    timed("99 levels under the root", 2, || state(&ok)).expect("99 levels import");
}

/// Other shapes the parser handles badly, each refused with its element.
#[test]
fn hostile_attributes_namespaces_and_nodes() {
    let attrs: String = (0..100_000).map(|i| format!(" a{i}='v'")).collect();
    let text = host_with(&format!("<x{attrs}/>"));
    let line = HOST[..HOST.rfind("</client_state>").unwrap()]
        .matches('\n')
        .count()
        + 1;
    let r = timed("100,000 attributes", 5, || state(&text));
    assert_err(r, "client_state.xml", line, "x", "more than 32 attributes");

    let nodes = host_with(&format!("<x>{}</x>", "<y/>".repeat(200_000)));
    let r = timed("200,000 nodes in one element", 10, || state(&nodes));
    assert_err(
        r,
        "client_state.xml",
        line,
        "x",
        "more than 100000 XML nodes in one element",
    );
}

/// The peak memory of this process, from /proc (Linux); None elsewhere.
fn peak_kb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    l.split_whitespace().nth(1)?.parse().ok()
}

const CHILD: &str = "VCSIM_IMPORT_HOSTILE_MEMORY_CHILD";

/// The case: a 200 MB client_state.xml took 2.7 GB. Here a 20 MB
/// state of the same shape (the host fixture with 35,000 more jobs), written
/// to a file without holding it in memory, is imported from the file in a
/// process of its own: the peak grows by less than 4 times the file (the
/// file's text, its line index, the jobs read, and the written TOML), and
/// the import ends within the bound.
#[test]
fn hostile_large_state_memory_is_a_small_multiple() {
    if std::env::var_os(CHILD).is_none() {
        if peak_kb().is_none() {
            eprintln!("no /proc/self/status: memory not measured");
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "hostile_large_state_memory_is_a_small_multiple",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .expect("the test binary runs");
        let err = String::from_utf8_lossy(&out.stderr);
        eprintln!("{err}");
        assert!(out.status.success(), "{err}");
        assert!(err.contains("peak grew by"), "{err}");
        return;
    }
    let dir = std::env::temp_dir().join(format!("vcsim-import-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("client_state.xml");
    let size = write_large_state(&path, 20_000_000) as u64;
    let before = peak_kb().unwrap();
    let imp = timed("20 MB state", 30, || import_path(&path)).expect("the large state imports");
    let grew = peak_kb().unwrap().saturating_sub(before) * 1024;
    std::fs::remove_dir_all(&dir).ok();
    eprintln!(
        "{:.1} MB file, {:.1} MB of TOML: peak grew by {:.1} MB ({:.2} x the file)",
        size as f64 / 1e6,
        imp.toml.len() as f64 / 1e6,
        grew as f64 / 1e6,
        grew as f64 / size as f64
    );
    assert!(!imp.scenario.projects.is_empty());
    assert!(grew < 4 * size, "peak grew by {grew} bytes for {size}");
}

/// The host fixture with jobs added to its first project until the file has
/// `bytes`, written piece by piece; returns the file's size.
fn write_large_state(path: &Path, bytes: usize) -> usize {
    use std::io::Write;
    let cut = HOST.find("<result>").expect("fixture has results");
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut n = cut;
    f.write_all(&HOST.as_bytes()[..cut]).unwrap();
    let mut i = 0;
    while n < bytes {
        let s = format!(
            "<workunit>\n    <name>wu_g{i}</name>\n    <app_name>folder</app_name>\n    <version_num>710</version_num>\n    \
             <rsc_fpops_est>7.2e13</rsc_fpops_est>\n    <file_ref>\n        <file_name>wu_a2_in</file_name>\n        \
             <open_name>in</open_name>\n    </file_ref>\n</workunit>\n<result>\n    <name>wu_g{i}_0</name>\n    <state>2</state>\n    \
             <version_num>710</version_num>\n    <plan_class>mt</plan_class>\n    <wu_name>wu_g{i}</wu_name>\n    \
             <report_deadline>1700604800</report_deadline>\n    <received_time>1700050000</received_time>\n</result>\n"
        );
        f.write_all(s.as_bytes()).unwrap();
        n += s.len();
        i += 1;
    }
    f.write_all(&HOST.as_bytes()[cut..]).unwrap();
    n + HOST.len() - cut
}
