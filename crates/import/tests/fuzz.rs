//! Fuzz-style properties of the import entry points, run in CI: random
//! element trees, BOINC-like states with random values, every fixture of
//! tests/fixtures/boinc/ mutated (bytes changed, cut, hostile markup and
//! pieces of other fixtures spliced in), random bytes, deep nesting,
//! entities and the shapes that were slow (issue 19). The import never
//! panics, ends within a time bound, and returns a scenario whose TOML loads
//! back as the same scenario, or an error naming one of the files it was
//! given.
//!
//! `cargo fuzz` would need a nightly toolchain; these run on stable, with a
//! bounded number of cases (`fuzz_long`, ignored, runs many more).

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::path::Path;
use std::time::{Duration, Instant};
use vcsim_framework::Scenario;
use vcsim_import::{
    import_client_state, import_client_state_with, import_sim2007, AppConfigText, Options,
};

const STATE: &str = "fuzz-client_state.xml";
const PREFS: &str = "fuzz-global_prefs.xml";
const CONFIG: &str = "fuzz-app_config.xml";
const PROJECTS: &str = "fuzz-sim_projects.xml";
const HOST: &str = "fuzz-sim_host.xml";

const TAGS: &[&str] = &[
    "host_info",
    "p_ncpus",
    "p_fpops",
    "d_total",
    "d_free",
    "m_nbytes",
    "coprocs",
    "coproc_cuda",
    "coproc",
    "type",
    "count",
    "peak_flops",
    "time_stats",
    "on_frac",
    "active_frac",
    "gpu_active_frac",
    "connected_frac",
    "on_lambda",
    "now",
    "project",
    "master_url",
    "project_name",
    "resource_share",
    "scheduler_url",
    "ended",
    "app",
    "name",
    "app_version",
    "app_name",
    "version_num",
    "plan_class",
    "avg_ncpus",
    "flops",
    "workunit",
    "rsc_fpops_est",
    "result",
    "wu_name",
    "report_deadline",
    "received_time",
    "state",
    "ready_to_report",
    "active_task_set",
    "active_task",
    "project_master_url",
    "result_name",
    "fraction_done",
    "file",
    "nbytes",
    "file_ref",
    "file_name",
    "max_concurrent",
    "latency_bound",
    "fpops_est",
    "fpops",
    "mean",
    "std_dev",
    "available",
    "frac",
    "lambda",
    "weight",
    "gpu_versions",
    "gpu_usage",
    "cpu_usage",
    "project_max_concurrent",
    "work_buf_min_days",
    "max_ncpus_pct",
    "x",
];

fn tag() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::sample::select(TAGS).prop_map(str::to_string),
        1 => "[a-z_]{1,8}",
    ]
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(
            &[
                "1",
                "0",
                "-1",
                "2",
                "8",
                "0.5",
                "1.5",
                "1e9",
                "3.6e13",
                "1e400",
                "-0",
                "nan",
                "inf",
                "",
                " 4 ",
                "x",
                "&amp;",
                "&#65;",
                "&#x10FFFF;",
                "&bogus;",
                "a<b",
                "]]>",
                "<![CDATA[7]]>",
                "<!-- c -->",
                "<?pi x?>",
                "1700000000",
                "https://p.example/",
            ][..]
        )
        .prop_map(str::to_string),
        any::<f64>().prop_map(|v| v.to_string()),
        "[ -~]{0,12}",
    ]
}

/// Random well-nested (mostly) element trees.
fn tree() -> impl Strategy<Value = String> {
    let leaf = (tag(), value()).prop_map(|(t, v)| format!("<{t}>{v}</{t}>"));
    leaf.prop_recursive(5, 80, 8, |inner| {
        (tag(), prop::collection::vec(inner, 0..8), any::<bool>()).prop_map(|(t, kids, attr)| {
            let a = if attr { " a=\"1\"" } else { "" };
            format!("<{t}{a}>\n{}</{t}>", kids.concat())
        })
    })
}

fn document(root: &'static str) -> impl Strategy<Value = String> {
    (
        prop::collection::vec(tree(), 0..12),
        prop::sample::select(&["", "<?xml version=\"1.0\"?>\n"][..]),
    )
        .prop_map(move |(kids, decl)| format!("{decl}<{root}>\n{}</{root}>\n", kids.concat()))
}

/// A state of the usual shape with random values, and random extra elements.
fn boinc_like() -> impl Strategy<Value = String> {
    // Mostly good values, so that most cases reach the end of the import.
    const GOOD: [&str; 23] = [
        "4",
        "3e9",
        "1e12",
        "5e11",
        "1",
        "1e12",
        "0.9",
        "0.8",
        "0.7",
        "1700000000",
        "P",
        "100",
        "2",
        "604800",
        "1",
        "3e9",
        "0.5",
        "3.6e13",
        "1700600000",
        "1699990000",
        "2",
        "cuda",
        "0.25",
    ];
    let values: Vec<BoxedStrategy<String>> = GOOD
        .iter()
        .map(|g| prop_oneof![100 => Just(g.to_string()), 1 => value()].boxed())
        .collect();
    (values, prop::collection::vec(tree(), 0..2)).prop_map(|(v, extra)| {
        format!(
            "<client_state>\n<host_info><p_ncpus>{}</p_ncpus><p_fpops>{}</p_fpops><d_total>{}</d_total>\
             <d_free>{}</d_free><coprocs><coproc_cuda><count>{}</count><peak_flops>{}</peak_flops></coproc_cuda></coprocs></host_info>\n\
             <time_stats><on_frac>{}</on_frac><active_frac>{}</active_frac><gpu_active_frac>{}</gpu_active_frac><now>{}</now></time_stats>\n\
             <project><master_url>https://p.example/</master_url><project_name>{}</project_name><resource_share>{}</resource_share></project>\n\
             <app><name>a</name><max_concurrent>{}</max_concurrent><latency_bound>{}</latency_bound></app>\n\
             <app_version><app_name>a</app_name><avg_ncpus>{}</avg_ncpus><flops>{}</flops></app_version>\n\
             <app_version><app_name>a</app_name><plan_class>cuda</plan_class><coproc><type>CUDA</type><count>{}</count></coproc></app_version>\n\
             <workunit><name>w</name><app_name>a</app_name><rsc_fpops_est>{}</rsc_fpops_est></workunit>\n\
             <result><name>r</name><wu_name>w</wu_name><report_deadline>{}</report_deadline><received_time>{}</received_time>\
             <state>{}</state><plan_class>{}</plan_class></result>\n\
             <active_task_set><active_task><project_master_url>https://p.example/</project_master_url>\
             <result_name>r</result_name><fraction_done>{}</fraction_done></active_task></active_task_set>\n{}</client_state>\n",
            v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13],
            v[14], v[15], v[16], v[17], v[18], v[19], v[20], v[21], v[22],
            extra.concat()
        )
    })
}

macro_rules! fixture {
    ($p:literal) => {
        include_str!(concat!("../../../tests/fixtures/boinc/", $p))
    };
}

/// Every BOINC file in tests/fixtures/boinc/: the seeds of the mutations.
const FIXTURES: &[&str] = &[
    fixture!("host/client_state.xml"),
    fixture!("host/global_prefs.xml"),
    fixture!("host/global_prefs_override.xml"),
    fixture!("emulator/client_state.xml"),
    fixture!("emulator/global_prefs.xml"),
    fixture!("today/client_state.xml"),
    fixture!("today/projects/gamma.example.org_gamma/app_config.xml"),
    fixture!("today/projects/orphan.example.com/app_config.xml"),
    fixture!("sim2007/sim_projects.xml"),
    fixture!("sim2007/sim_host.xml"),
    fixture!("sim2007/sim_prefs.xml"),
    fixture!("bad/mismatched-client_state.xml"),
    fixture!("bad/badnumber-client_state.xml"),
];

/// Pieces of markup that the parser finds hard, spliced into fixtures.
const HOSTILE: &[&str] = &[
    "<!DOCTYPE r [<!ENTITY e \"yyyyyyyy\">]>",
    "&e;",
    "&amp;&lt;&#65;&#x10FFFF;&#0;&#xD800;",
    "<![CDATA[x]]><![CDATA[y]]>",
    "<![CDATA[",
    "]]>",
    "<!--",
    "-->",
    "<?pi ?>",
    "<a b='1' b='2'>",
    "<a xmlns:n='u' n:b='1'>",
    "<n:a>",
    "</",
    "<",
    ">",
    "\u{feff}",
    "\0",
];

/// A fixture with random bytes replaced, inserted or cut, hostile pieces
/// inserted, or a piece of another fixture spliced in.
fn mutated() -> impl Strategy<Value = String> {
    (
        0..FIXTURES.len(),
        prop::collection::vec(
            (
                any::<usize>(),
                0u8..6,
                any::<u8>(),
                any::<usize>(),
                0..FIXTURES.len(),
            ),
            1..8,
        ),
    )
        .prop_map(|(seed, edits)| {
            let mut b = FIXTURES[seed].as_bytes().to_vec();
            for (at, op, byte, other_at, other) in edits {
                let at = at % b.len().max(1);
                match op {
                    0 if !b.is_empty() => b[at] = byte,
                    1 => b.insert(at.min(b.len()), byte),
                    2 if !b.is_empty() => b.truncate(at.max(1)),
                    3 => {
                        let h = HOSTILE[usize::from(byte) % HOSTILE.len()].as_bytes();
                        let at = at.min(b.len());
                        b.splice(at..at, h.iter().copied());
                    }
                    4 => {
                        // A piece of another fixture, up to 200 bytes.
                        let o = FIXTURES[other].as_bytes();
                        let from = other_at % o.len();
                        let to = (from + usize::from(byte) % 200).min(o.len());
                        let at = at.min(b.len());
                        b.splice(at..at, o[from..to].iter().copied());
                    }
                    5 if !b.is_empty() => {
                        // Cut a piece out.
                        let to = (at + usize::from(byte)).min(b.len());
                        b.drain(at..to);
                    }
                    _ => {}
                }
            }
            String::from_utf8_lossy(&b).into_owned()
        })
}

fn bytes() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<u8>(), 0..2000)
        .prop_map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn deep() -> impl Strategy<Value = String> {
    (0usize..400, any::<bool>(), tag()).prop_map(|(d, close, t)| {
        format!(
            "<client_state><host_info><p_ncpus>1</p_ncpus><p_fpops>1</p_fpops></host_info>{}{}</client_state>",
            format!("<{t}>").repeat(d),
            if close { format!("</{t}>").repeat(d) } else { String::new() }
        )
    })
}

fn entities() -> impl Strategy<Value = String> {
    (1usize..5000, 1usize..500).prop_map(|(len, refs)| {
        format!(
            "<!DOCTYPE client_state [<!ENTITY e \"{}\">]><client_state><x>{}</x></client_state>",
            "y".repeat(len),
            "&e;".repeat(refs)
        )
    })
}

/// Shapes that were slow or crashed (issue 19), at random sizes: runs of
/// CDATA sections, many attributes, texts full of references, many nodes.
fn heavy() -> impl Strategy<Value = String> {
    (0u8..4, 1usize..40, 1usize..3000).prop_map(|(kind, n, len)| {
        let body = match kind {
            0 => format!("<x>{}</x>", format!("<![CDATA[{}]]>", "c".repeat(len)).repeat(n)),
            1 => format!("<x{}/>", (0..n).map(|i| format!(" a{i}='v'")).collect::<String>()),
            2 => format!("<x>{}</x>", "&amp;&#65;".repeat(len * n)),
            _ => format!("<x>{}</x>", "<y/>".repeat(len * n)),
        };
        format!(
            "<client_state><host_info><p_ncpus>1</p_ncpus><p_fpops>1e9</p_fpops></host_info>{body}</client_state>"
        )
    })
}

fn any_input() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => boinc_like(),
        2 => document("client_state"),
        3 => mutated(),
        1 => bytes(),
        1 => deep(),
        1 => entities(),
        1 => heavy(),
    ]
}

/// The bound on one import of a fuzz case (the inputs are at most a few
/// hundred KB; a debug build imports them in milliseconds).
const CASE_BOUND: Duration = Duration::from_secs(5);

/// The property: the import ends within [`CASE_BOUND`], with a scenario that
/// loads back as itself, or an error that names one of the files.
fn check(
    import: impl FnOnce() -> Result<vcsim_import::Imported, vcsim_import::ImportError>,
    files: &[&str],
) -> Result<(), TestCaseError> {
    let t = Instant::now();
    let r = import();
    let took = t.elapsed();
    prop_assert!(took < CASE_BOUND, "the import took {:?}", took);
    match r {
        Ok(imp) => {
            let again =
                Scenario::from_toml_str(&imp.toml, Path::new("again.toml")).map_err(|e| {
                    TestCaseError::fail(format!("the TOML does not load: {e}\n{}", imp.toml))
                })?;
            prop_assert_eq!(again, imp.scenario);
        }
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(
                files.iter().any(|f| msg.starts_with(f)),
                "the error names none of {:?}: {}",
                files,
                msg
            );
        }
    }
    Ok(())
}

fn client_state(state: &str, prefs: &str, config: &str) -> Result<(), TestCaseError> {
    check(
        || import_client_state((Path::new(STATE), state), None, None),
        &[STATE],
    )?;
    check(
        || {
            import_client_state_with(
                (Path::new(STATE), state),
                Some((Path::new(PREFS), prefs)),
                None,
                &[AppConfigText {
                    project_dir: "p.example",
                    path: Path::new(CONFIG),
                    text: config,
                }],
                &Options::default(),
            )
        },
        &[STATE, PREFS, CONFIG],
    )
}

fn sim2007(projects: &str, host: &str) -> Result<(), TestCaseError> {
    check(
        || {
            import_sim2007(
                (Path::new(PROJECTS), projects),
                (Path::new(HOST), host),
                None,
            )
        },
        &[PROJECTS, HOST],
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn fuzz_client_state(
        state in any_input(),
        prefs in prop_oneof![document("global_preferences"), bytes(), mutated()],
        config in prop_oneof![document("app_config"), mutated()],
    ) {
        client_state(&state, &prefs, &config)?;
    }

    #[test]
    fn fuzz_sim2007(
        projects in prop_oneof![document("projects"), any_input()],
        host in prop_oneof![document("host"), bytes(), mutated()],
    ) {
        sim2007(&projects, &host)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5000, failure_persistence: None, ..ProptestConfig::default() })]

    /// Many more cases: `cargo test -p vcsim-import --test fuzz -- --ignored`.
    #[test]
    #[ignore]
    fn fuzz_long(
        state in any_input(),
        prefs in prop_oneof![document("global_preferences"), bytes(), mutated()],
        config in prop_oneof![document("app_config"), mutated()],
        projects in prop_oneof![document("projects"), any_input()],
        host in prop_oneof![document("host"), bytes(), mutated()],
    ) {
        client_state(&state, &prefs, &config)?;
        sim2007(&projects, &host)?;
    }
}

/// How many random states import: the properties say little if every
/// case fails early.
#[test]
fn fuzz_outcomes() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut oks = 0;
    for _ in 0..200 {
        let state = any_input().new_tree(&mut runner).unwrap().current();
        if import_client_state((Path::new(STATE), &state), None, None).is_ok() {
            oks += 1;
        }
    }
    eprintln!("{oks} of 200 random states imported");
    assert!(oks > 20, "{oks}");
}
