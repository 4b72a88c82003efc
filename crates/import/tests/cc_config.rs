//! The client's `cc_config.xml` beside a `client_state.xml`: its
//! `<options><rec_half_life_days>` becomes `client.rec_half_life_days`; a bad
//! value is an error naming the file, the element and the line; without the
//! file (or the element) the key is left out and the default applies.

use std::path::{Path, PathBuf};
use vcsim_framework::Scenario;
use vcsim_import::{import_path, ImportError, Imported};

const HOST: &str = include_str!("../../../tests/fixtures/boinc/host/client_state.xml");
const PREFS: &str = include_str!("../../../tests/fixtures/boinc/host/global_prefs.xml");

/// A fresh directory holding the host fixture's state and prefs, each file
/// named with `prefix`, and `cc_config` (if any) as `{prefix}cc_config.xml`.
fn dir_with(name: &str, prefix: &str, cc_config: Option<&str>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "vcsim-import-cc-config-{}-{name}",
        std::process::id()
    ));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{prefix}client_state.xml")), HOST).unwrap();
    std::fs::write(dir.join(format!("{prefix}global_prefs.xml")), PREFS).unwrap();
    if let Some(c) = cc_config {
        std::fs::write(dir.join(format!("{prefix}cc_config.xml")), c).unwrap();
    }
    dir
}

/// Imports the directory made by [`dir_with`], then removes it.
fn import(name: &str, prefix: &str, cc_config: Option<&str>) -> Result<Imported, ImportError> {
    let dir = dir_with(name, prefix, cc_config);
    let r = import_path(&dir);
    std::fs::remove_dir_all(&dir).ok();
    r
}

/// The written TOML loads back as the scenario the import returned.
fn loads(imp: &Imported) -> Scenario {
    let s = Scenario::from_toml_str(&imp.toml, Path::new("imported.toml"))
        .unwrap_or_else(|e| panic!("the TOML does not load: {e}\n{}", imp.toml));
    assert_eq!(s, imp.scenario);
    s
}

/// The `rec_half_life_days` lines of the TOML.
fn rec_lines(toml: &str) -> Vec<&str> {
    toml.lines()
        .filter(|l| l.contains("rec_half_life_days"))
        .collect()
}

fn cc(value: &str) -> String {
    format!(
        "<cc_config>\n    <log_flags>\n        <sched_op_debug>1</sched_op_debug>\n    </log_flags>\n    <options>\n        <rec_half_life_days>{value}</rec_half_life_days>\n    </options>\n</cc_config>\n"
    )
}

#[test]
fn cc_config_rec_half_life_days_is_imported() {
    let imp = import("five", "", Some(&cc("5"))).expect("imports");
    let s = loads(&imp);
    assert_eq!(s.client.rec_half_life_days, 5.0);
    assert_eq!(
        rec_lines(&imp.toml),
        vec!["rec_half_life_days = 5.0           # <rec_half_life_days>, cc_config.xml line 6"],
        "{}",
        imp.toml
    );
    // In the [client] table, and named among the inputs.
    let client = imp.toml.find("[client]").expect("a [client] table");
    let at = imp.toml.find("rec_half_life_days =").unwrap();
    let next = imp.toml[client + 1..]
        .find("\n[")
        .map_or(imp.toml.len(), |i| client + 1 + i);
    assert!(client < at && at < next, "{}", imp.toml);
    assert!(imp.inputs.contains(&"cc_config.xml".to_string()));
    assert!(imp.toml.contains("cc_config.xml"), "{}", imp.toml);
    // Log flags are not listed as unmodelled; nothing else is in the file.
    assert!(
        !imp.warnings.iter().any(|w| w.contains("cc_config.xml")),
        "{:?}",
        imp.warnings
    );
}

#[test]
fn cc_config_value_of_ten_is_written_too() {
    // Written whenever the file gives it, even at the default.
    let imp = import("ten", "", Some(&cc("10"))).expect("imports");
    assert_eq!(loads(&imp).client.rec_half_life_days, 10.0);
    assert_eq!(rec_lines(&imp.toml).len(), 1, "{}", imp.toml);
}

#[test]
fn cc_config_with_a_prefix_goes_with_its_state() {
    let imp = import("prefix", "run1-", Some(&cc("2.5"))).expect("imports");
    assert_eq!(loads(&imp).client.rec_half_life_days, 2.5);
    assert!(
        rec_lines(&imp.toml)[0].ends_with("run1-cc_config.xml line 6"),
        "{}",
        imp.toml
    );
}

#[test]
fn cc_config_bad_values_name_file_element_and_line() {
    for (i, (value, msg)) in [
        ("-1", "must be a positive number of days, found -1"),
        ("0", "must be a positive number of days, found 0"),
        ("abc", "`abc` is not a finite number"),
        ("NaN", "`NaN` is not a finite number"),
        ("1e300", "must be at most 1e7 days"),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = dir_with(&format!("bad{i}"), "", Some(&cc(value)));
        let e = import_path(&dir).expect_err(value);
        std::fs::remove_dir_all(&dir).ok();
        let shown = e.to_string();
        assert_eq!(e.file, dir.join("cc_config.xml"), "{shown}");
        assert_eq!(e.line, Some(6), "{shown}");
        assert_eq!(e.element.as_deref(), Some("rec_half_life_days"), "{shown}");
        assert!(e.message.contains(msg), "{shown}");
        assert!(
            shown.ends_with(&format!(
                "cc_config.xml:6: <rec_half_life_days>: {}",
                e.message
            )),
            "{shown}"
        );
    }
}

#[test]
fn cc_config_absent_leaves_the_key_out() {
    let imp = import("absent", "", None).expect("imports");
    assert!(rec_lines(&imp.toml).is_empty(), "{}", imp.toml);
    assert_eq!(loads(&imp).client.rec_half_life_days, 10.0);
    assert!(!imp.inputs.iter().any(|f| f.contains("cc_config")));

    // A cc_config.xml without the option: the key is left out too, and
    // its other options are listed as not modelled.
    let other = "<cc_config>\n<options>\n<ncpus>4</ncpus>\n</options>\n</cc_config>\n";
    let imp = import("other", "", Some(other)).expect("imports");
    assert!(rec_lines(&imp.toml).is_empty(), "{}", imp.toml);
    assert_eq!(loads(&imp).client.rec_half_life_days, 10.0);
    assert!(
        imp.warnings
            .iter()
            .any(|w| w == "cc_config.xml: <options>: not modelled by vcsim, ignored: <ncpus>"),
        "{:?}",
        imp.warnings
    );
}

#[test]
fn cc_config_hostile_and_malformed_input_is_an_error() {
    let cases = [
        (
            "<!DOCTYPE r [<!ENTITY l \"ha\">]>\n<cc_config>&l;</cc_config>",
            1,
            "document type declaration",
        ),
        (
            "<cc_config>\n<options>\n<rec_half_life_days>5</options>\n</cc_config>",
            3,
            "malformed XML",
        ),
        (
            "<global_preferences>\n</global_preferences>",
            1,
            "expected <cc_config> as the root element",
        ),
    ];
    for (i, (text, line, msg)) in cases.into_iter().enumerate() {
        let dir = dir_with(&format!("hostile{i}"), "", Some(text));
        let e = import_path(&dir).expect_err(msg);
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(e.file, dir.join("cc_config.xml"), "{e}");
        assert_eq!(e.line, Some(line), "{e}");
        assert!(e.message.contains(msg), "{e}");
    }
    let deep = format!(
        "<cc_config>\n{}{}</cc_config>",
        "<b>".repeat(20_000),
        "</b>".repeat(20_000)
    );
    let dir = dir_with("deep", "", Some(&deep));
    let e = import_path(&dir).expect_err("deep nesting");
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(e.file, dir.join("cc_config.xml"), "{e}");
    assert!(e.message.contains("nested more than 100 deep"), "{e}");
}

#[test]
fn cc_config_alone_names_the_file_to_import() {
    let dir = dir_with("alone", "", Some(&cc("5")));
    let e = import_path(&dir.join("cc_config.xml")).expect_err("not a main file");
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        e.message
            .contains("this is a <cc_config> file; import the client_state.xml"),
        "{e}"
    );
}
