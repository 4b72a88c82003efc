//! A fast check of the scripted built-ins on a short base scenario (the
//! full check, on every scenario, is the root package's `tests/scripts.rs`).

use std::path::PathBuf;
use vcsim_framework::{run_spec, Family, PolicySpec, Registry, Scenario, SimOptions};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn scripted_builtins_match_on_a_short_base_scenario() {
    vcsim_builtin::link();
    let mut scn = Scenario::load(&root().join("scenarios/mix-5-slack-5.toml")).unwrap();
    scn.duration_days = 4.0;
    let p = |n: &str| root().join("policies").join(n).display().to_string();
    let pairs = [
        ("cpu=cs1".to_string(), format!("cpu={}", p("cs1.rhai"))),
        ("cpu=cs2".to_string(), format!("cpu={}", p("cs2.rhai"))),
        (
            "fetch=wf1-v4".to_string(),
            format!("fetch={}", p("wf1_v4.rhai")),
        ),
        ("send=ws1".to_string(), format!("send={}", p("ws1.rhai"))),
        (
            "estimate=jc2".to_string(),
            format!("estimate={}", p("jc2.rhai")),
        ),
        (
            "disk=none".to_string(),
            format!("disk={}", p("disk_none.rhai")),
        ),
    ];
    let mut reg = Registry::builtins().unwrap();
    for (_, s) in &pairs {
        let spec = PolicySpec::parse(s).unwrap();
        for f in Family::ALL {
            let n = spec.name(f);
            if n.ends_with(".rhai") {
                vcsim_script::register(&mut reg, f, n).unwrap();
            }
        }
    }
    for (b, s) in &pairs {
        let rb = run_spec(
            &scn,
            &reg,
            &PolicySpec::parse(b).unwrap(),
            SimOptions::default(),
        )
        .unwrap();
        let rs = run_spec(
            &scn,
            &reg,
            &PolicySpec::parse(s).unwrap(),
            SimOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(rb.report.metrics, rs.report.metrics, "{s}");
        assert_eq!(rb.report.projects, rs.report.projects, "{s}");
    }
}
