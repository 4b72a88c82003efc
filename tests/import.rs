//! `vcsim import` and BOINC's files given to `run`/`compare` (issue 9): the
//! `vcsim-import` library on the fixtures in tests/fixtures/boinc/, the
//! shared samples when they are beside the repository, and the binary.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use vcsim_framework::Scenario;
use vcsim_import::{import_client_state, import_path, ImportError, Imported};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(rel: &str) -> PathBuf {
    root().join("tests/fixtures/boinc").join(rel)
}

/// `vcsim ARGS`: (status, stdout, stderr), through `common::vcsim`.
fn vcsim(args: &[&str]) -> (i32, String, String) {
    let r = common::vcsim(args).run();
    (r.status(), r.stdout(), r.stderr())
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vcsim-import-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// The TOML must load back as the same scenario.
fn round_trip(imp: &Imported) {
    let again = Scenario::from_toml_str(&imp.toml, Path::new("imported.toml"))
        .unwrap_or_else(|e| panic!("imported TOML does not load: {e}\n{}", imp.toml));
    assert_eq!(again, imp.scenario);
}

#[test]
fn real_client_state_with_prefs_and_override() {
    let imp = import_path(&fixture("host")).unwrap();
    round_trip(&imp);
    let s = &imp.scenario;
    assert_eq!(s.host.ncpus, 8);
    assert_eq!(s.host.cpu_flops, 4.5e9);
    assert_eq!(s.host.disk_gb, 500.0);
    assert_eq!(s.host.gpus.len(), 1);
    assert_eq!(s.host.gpus[0].kind, "nvidia");
    assert_eq!(s.host.gpus[0].count, 2);
    // <on_frac> is the on/off process; <active_frac> and <gpu_active_frac>
    // are fractions of the on-time, as in BOINC.
    assert_eq!(s.host.availability.fraction, 0.9);
    assert_eq!(s.host.availability.active_fraction, 0.8);
    assert_eq!(s.host.availability.gpu_active_fraction, Some(0.7));
    // The override file wins over global_prefs.xml.
    assert_eq!(s.client.work_buf_min_days, 0.5);
    assert_eq!(s.client.max_ncpus_pct, 75.0);
    assert_eq!(s.client.sched_period_minutes, 120.0);
    assert_eq!(s.projects.len(), 2);
    let a = &s.projects[0];
    assert_eq!(a.name, "Alpha@Example");
    assert_eq!(a.schedulers.len(), 2);
    assert_eq!(a.apps.len(), 2, "a CPU and a multithreaded version");
    // The finished result is left out; the running one keeps its progress.
    assert_eq!(a.jobs.len(), 2);
    assert_eq!(a.jobs[0].fraction_done, 0.25);
    assert_eq!(a.jobs[0].deadline_days, 7.0);
    let b = &s.projects[1];
    assert_eq!(b.name, "Beta & Co");
    let cuda = b.apps.iter().find(|a| a.name == "pulsar/cuda").unwrap();
    let g = cuda.gpu.as_ref().unwrap();
    assert_eq!((g.kind.as_str(), g.count), ("nvidia", 0.5));
    assert_eq!(b.jobs.len(), 2);
    assert!(b.jobs.iter().any(|j| j.deadline_days < 0.0));
    // Nothing is dropped silently.
    let w = imp.warnings.join("\n");
    for t in [
        "<m_nbytes>",
        "<connected_frac>",
        "<dont_request_more_work>",
        "<cpu_usage_limit>",
        "<venue>",
        "<rsc_fpops_bound>",
        "<user_name>",
        "<net_stats>",
        "waiting to be reported",
    ] {
        assert!(w.contains(t), "no warning mentions {t}:\n{w}");
    }
    insta::assert_snapshot!("host_toml", imp.toml);
    insta::assert_snapshot!("host_warnings", w);
}

#[test]
fn emulator_tags() {
    let imp = import_path(&fixture("emulator/client_state.xml")).unwrap();
    round_trip(&imp);
    let s = &imp.scenario;
    assert_eq!(s.host.availability.mean_on_seconds, 7200.0);
    assert_eq!(s.host.gpus[0].kind, "amd");
    let one = &s.projects[0];
    assert_eq!(one.availability.fraction, 0.95);
    assert_eq!(one.availability.mean_up_hours, 12.0);
    // Each app keeps its own latency bound: the project has the most common
    // one (here a tie: the longest), `short` its own.
    assert_eq!(one.latency_bound_days, 7.0);
    assert_eq!(one.apps[0].latency_bound_days, Some(2.0));
    assert_eq!(one.apps[1].latency_bound_days, None);
    assert_eq!(one.apps[1].max_concurrent, 1, "<max_concurrent> of `long`");
    let short = &one.apps[0];
    assert_eq!(
        (
            short.flops_estimate,
            short.flops_mean,
            short.flops_stddev,
            short.weight
        ),
        (6e12, 9e12, 1e12, 3.0)
    );
    assert_eq!(one.jobs[0].flops, Some(9e12));
    // The GPU version runs at 1e12 in the emulator; vcsim runs it at the
    // GPU's 2e12 peak, so its FLOPs double and the run time stays.
    let g = &s.projects[1].apps[0];
    assert_eq!(g.flops_estimate, 7.2e15);
    let w = imp.warnings.join("\n");
    assert!(!w.contains("<max_concurrent>"), "{w}");
    assert!(w.contains("<working_set>"), "{w}");
    assert!(!w.contains("latency bound"), "{w}");
    insta::assert_snapshot!("emulator_toml", imp.toml);
}

#[test]
fn sim2007_inputs() {
    let imp = import_path(&fixture("sim2007")).unwrap();
    round_trip(&imp);
    let s = &imp.scenario;
    assert_eq!(s.host.ncpus, 2);
    assert_eq!(s.host.availability.fraction, 0.7);
    assert_eq!(s.host.availability.mean_on_seconds, 18000.0);
    assert_eq!(s.client.max_ncpus_pct, 50.0);
    // The 2007 simulator's CPU-efficiency factor learned the off time.
    assert!(s.client.learn_availability);
    assert_eq!(s.projects.len(), 2);
    assert_eq!(s.projects[0].latency_bound_days, 14.0);
    assert_eq!(s.projects[0].apps[0].flops_stddev, 2e13);
    assert_eq!(s.projects[0].availability.mean_up_hours, 24.0);
    insta::assert_snapshot!("sim2007_toml", imp.toml);
}

/// The samples in ../shared/boinc-inputs/, when they are there.
#[test]
fn shared_samples() {
    let dir = root().join("../shared/boinc-inputs");
    if !dir.is_dir() {
        eprintln!("note: {} is not there; skipped", dir.display());
        return;
    }
    let imp = import_path(&dir.join("emulator-client_state.xml")).unwrap();
    round_trip(&imp);
    let s = &imp.scenario;
    assert_eq!(s.host.ncpus, 4);
    assert_eq!(s.host.gpus[0].kind, "nvidia");
    assert_eq!(s.host.gpus[0].flops, 100e9);
    assert_eq!(
        s.client.work_buf_min_days, 0.5,
        "emulator-global_prefs.xml is read"
    );
    assert_eq!(s.projects.len(), 3);
    assert_eq!(s.projects.iter().map(|p| p.jobs.len()).sum::<usize>(), 4);
    assert!(s.projects.iter().all(|p| p.latency_bound_days == 10.0));
    let cg = &s.projects[2];
    assert_eq!(cg.apps.len(), 2, "CG_0 has a CPU and a CUDA version");

    let imp = import_path(&dir.join("sim2007-sim_projects.xml")).unwrap();
    round_trip(&imp);
    let s = &imp.scenario;
    assert_eq!(s.projects.len(), 4);
    assert_eq!(s.host.availability.fraction, 0.8);
    assert_eq!(s.host.availability.mean_on_seconds, 36000.0);
    assert_eq!(s.projects[2].latency_bound_days, 1.0);
    assert_eq!(s.projects[0].availability.fraction, 0.9);
    assert_eq!(s.projects[0].availability.mean_up_hours, 10.0);
    assert_eq!(s.client.work_buf_additional_days, 0.2);

    // Both sets in one directory: the user must name one.
    let e = import_path(&dir).unwrap_err();
    assert!(e.message.contains("several BOINC inputs"), "{e}");
}

fn err_of(rel: &str) -> ImportError {
    import_path(&fixture(rel)).unwrap_err()
}

#[test]
fn errors_name_file_element_and_line() {
    let e = err_of("bad/mismatched-client_state.xml");
    assert_eq!(e.line, Some(8), "{e}");
    assert!(
        e.to_string().contains("mismatched-client_state.xml:8"),
        "{e}"
    );
    assert!(e.message.contains("projct"), "{e}");

    let e = err_of("bad/badnumber-client_state.xml");
    assert_eq!(e.line, Some(4));
    assert_eq!(e.element.as_deref(), Some("p_fpops"));
    assert!(
        e.to_string()
            .contains(":4: <p_fpops>: `fast` is not a finite number"),
        "{e}"
    );

    let e = err_of("host/global_prefs.xml");
    assert!(e.message.contains("<global_preferences> file"), "{e}");
    let e = err_of("no-such-dir/client_state.xml");
    assert!(e.message.contains("cannot read"), "{e}");

    // Bad values, element by element.
    let state = std::fs::read_to_string(fixture("host/client_state.xml")).unwrap();
    for (from, to, element) in [
        ("<p_ncpus>8<", "<p_ncpus>0<", "p_ncpus"),
        ("<on_frac>0.9<", "<on_frac>1.5<", "on_frac"),
        (
            "<resource_share>200<",
            "<resource_share>-5<",
            "resource_share",
        ),
        (
            "<rsc_fpops_est>3.6e13<",
            "<rsc_fpops_est>nan<",
            "rsc_fpops_est",
        ),
        ("<fraction_done>0.25<", "<fraction_done>2<", "fraction_done"),
        ("<wu_name>wu_a1<", "<wu_name>nowhere<", "result"),
    ] {
        assert!(state.contains(from), "{from}");
        let bad = state.replacen(from, to, 1);
        let e = import_client_state((Path::new("client_state.xml"), &bad), None, None).unwrap_err();
        assert_eq!(e.element.as_deref(), Some(element), "{to}: {e}");
        assert!(e.line.is_some(), "{e}");
    }
}

/// An app version of 1e-300 FLOPS, whose jobs' FLOPs scaled to the host's
/// speed overflowed ("`flops_estimate` would be inf"), is refused at its
/// line, with the bounds it breaks.
#[test]
fn an_app_versions_flops_out_of_bounds_is_refused_at_its_line() {
    let (dir, text) = today_with("extreme-flops", |t| {
        t.replacen("<flops>4e9</flops>", "<flops>1e-300</flops>", 1)
    });
    let e = import_path(&dir).unwrap_err();
    let m = e.to_string();
    assert_eq!(e.line, Some(line_of(&text, "<flops>4e9</flops>")), "{m}");
    assert_eq!(e.element.as_deref(), Some("flops"), "{m}");
    assert!(
        m.contains("1e-300 FLOPS is less than 1000 FLOPS, the bounds of vcsim's devices"),
        "{m}"
    );
    assert!(!m.contains("would be inf"), "{m}");
}

/// The 1-based line of the first `what` in `text`.
fn line_of(text: &str, what: &str) -> usize {
    text[..text.find(what).unwrap_or_else(|| panic!("no {what}"))]
        .matches('\n')
        .count()
        + 1
}

/// A copy of fixture set `set` in a fresh directory `name`, each
/// `(file, from, to)` replacing the first `from` in that file (which must
/// hold it): the directory.
fn fixture_with(set: &str, name: &str, edits: &[(&str, &str, &str)]) -> PathBuf {
    let dir = tmp(name);
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&fixture(set), &dir);
    for (file, from, to) in edits {
        let p = dir.join(file);
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains(from), "{file} has no {from}");
        std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
    }
    dir
}

const GAMMA_CFG: &str = "projects/gamma.example.org_gamma/app_config.xml";

/// BOINC's parsers read an element's children in a loop that overwrites
/// the value at each one: of a repeated element the last counts. So it does
/// in vcsim, with a warning naming the element and its lines (the first
/// used to win, silently).
#[test]
fn a_repeated_element_keeps_the_last_with_a_warning() {
    let dir = fixture_with(
        "host",
        "repeated",
        &[
            (
                "client_state.xml",
                "<p_ncpus>8</p_ncpus>",
                "<p_ncpus>8</p_ncpus>\n    <p_ncpus>6</p_ncpus>",
            ),
            (
                "client_state.xml",
                "<p_fpops>4.5e9</p_fpops>",
                "<p_fpops>4.5e9</p_fpops><p_fpops>3e9</p_fpops>",
            ),
            (
                "client_state.xml",
                "<resource_share>200</resource_share>",
                "<resource_share>200</resource_share>\n<resource_share>50</resource_share>\n<resource_share>70</resource_share>",
            ),
            (
                "global_prefs.xml",
                "<disk_max_used_gb>40</disk_max_used_gb>",
                "<disk_max_used_gb>40</disk_max_used_gb>\n<disk_max_used_gb>30</disk_max_used_gb>",
            ),
        ],
    );
    let imp = import_path(&dir).unwrap();
    round_trip(&imp);
    let s = &imp.scenario;
    assert_eq!((s.host.ncpus, s.host.cpu_flops), (6, 3e9));
    assert_eq!(s.projects[0].resource_share, 70.0);
    assert_eq!(s.client.disk_max_used_gb, 30.0);
    let w = imp.warnings.join("\n");
    for t in [
        "client_state.xml: <host_info> at line 4 has <p_ncpus> twice (lines 8 and 9): the last, at line 9, is used, as BOINC's parser does",
        "client_state.xml: <host_info> at line 4 has <p_fpops> twice on line 12: the last is used",
        "client_state.xml: <project> at line 46 has <resource_share> 3 times (lines 52 to 54): the last, at line 54, is used",
        "global_prefs.xml: <global_preferences> at line 1 has <disk_max_used_gb> twice (lines 12 and 13)",
    ] {
        assert!(w.contains(t), "no warning says {t}:\n{w}");
    }

    // app_config.xml, a second <host_info>, and the 2007 simulator's host.
    let dir = fixture_with(
        "today",
        "repeated-today",
        &[
            (
                GAMMA_CFG,
                "<avg_ncpus>4</avg_ncpus>",
                "<avg_ncpus>4</avg_ncpus>\n<avg_ncpus>2</avg_ncpus>",
            ),
            (
                "client_state.xml",
                "<time_stats>",
                "<host_info><p_ncpus>6</p_ncpus><p_fpops>4e9</p_fpops></host_info>\n<time_stats>",
            ),
        ],
    );
    let imp = import_path(&dir).unwrap();
    let s = &imp.scenario;
    assert_eq!(s.host.ncpus, 6);
    assert_eq!(s.host.gpus.len(), 0, "the second <host_info> has no GPU");
    let mt = s.projects[0]
        .apps
        .iter()
        .find(|a| a.name == "sim/mt")
        .unwrap();
    assert_eq!(mt.cpus, 2.0);
    let w = imp.warnings.join("\n");
    for t in [
        "projects/gamma.example.org_gamma/app_config.xml: <app_version> at line 14 has <avg_ncpus> twice (lines 17 and 18)",
        "client_state.xml: <client_state> has <host_info> twice (lines 5 and 17): the last, at line 17, is used",
    ] {
        assert!(w.contains(t), "no warning says {t}:\n{w}");
    }
    let dir = fixture_with(
        "sim2007",
        "repeated-sim2007",
        &[(
            "sim_host.xml",
            "<p_ncpus>2</p_ncpus>",
            "<p_ncpus>2</p_ncpus><p_ncpus>4</p_ncpus>",
        )],
    );
    let imp = import_path(&dir).unwrap();
    assert_eq!(imp.scenario.host.ncpus, 4);
    let w = imp.warnings.join("\n");
    assert!(
        w.contains(
            "sim_host.xml: <host> at line 1 has <p_ncpus> twice on line 2: the last is used"
        ),
        "{w}"
    );
}

/// A UTF-16 (or UTF-32) file was "malformed XML: text before the root
/// element at 1:1": it is named, with the encoding vcsim reads.
#[test]
fn a_utf16_file_is_named_as_such() {
    let text = std::fs::read_to_string(fixture("today/client_state.xml")).unwrap();
    let utf16 = |bom: bool, le: bool| -> Vec<u8> {
        let mut b = Vec::new();
        let units = (if bom { "\u{feff}" } else { "" })
            .encode_utf16()
            .chain(text.encode_utf16());
        for u in units {
            b.extend(if le { u.to_le_bytes() } else { u.to_be_bytes() });
        }
        b
    };
    let utf32le: Vec<u8> = "\u{feff}"
        .chars()
        .chain(text.chars())
        .flat_map(|c| (c as u32).to_le_bytes())
        .collect();
    for (bytes, enc, how) in [
        (
            utf16(true, true),
            "UTF-16 (UTF-16LE, with a byte-order mark)",
            "UTF-16LE",
        ),
        (
            utf16(true, false),
            "UTF-16 (UTF-16BE, with a byte-order mark)",
            "UTF-16BE",
        ),
        (
            utf16(false, true),
            "UTF-16 (UTF-16LE, told by its NUL bytes)",
            "UTF-16LE",
        ),
        (
            utf32le,
            "UTF-32 (UTF-32LE, with a byte-order mark)",
            "UTF-32LE",
        ),
    ] {
        let p = tmp(&format!("wide-{how}-{}.xml", bytes.len()));
        std::fs::write(&p, &bytes).unwrap();
        let e = import_path(&p).unwrap_err();
        let m = e.to_string();
        assert_eq!(e.line, Some(1), "{m}");
        assert!(
            m.contains(&format!("the file is {enc}: vcsim reads UTF-8, the encoding BOINC writes; convert it, for example with `iconv -f {how} -t UTF-8`")),
            "{m}"
        );
    }
    // An app_config.xml too, named with its own path.
    let dir = fixture_with("today", "utf16-app-config", &[]);
    let cfg = dir.join(GAMMA_CFG);
    let t = std::fs::read_to_string(&cfg).unwrap();
    let b: Vec<u8> = "\u{feff}"
        .encode_utf16()
        .chain(t.encode_utf16())
        .flat_map(|u| u.to_le_bytes())
        .collect();
    std::fs::write(&cfg, b).unwrap();
    let e = import_path(&dir).unwrap_err();
    assert_eq!(e.file, cfg, "{e}");
    assert!(e.message.contains("the file is UTF-16"), "{e}");
}

/// A declared ISO-8859-1 (latin1, US-ASCII) file was decoded as UTF-8,
/// its accented letters replaced: it is decoded as declared. Another
/// declared encoding is named, in a warning if its bytes are UTF-8, in an
/// error otherwise.
#[test]
fn a_declared_latin1_file_is_decoded() {
    let dir = fixture_with("today", "latin1", &[]);
    let cs = dir.join("client_state.xml");
    let text = std::fs::read_to_string(&cs)
        .unwrap()
        .replacen("encoding=\"UTF-8\"", "encoding=\"ISO-8859-1\"", 1)
        .replacen("Gamma@Home", "G\u{e4}mma@H\u{f4}me", 1);
    let latin1: Vec<u8> = text.chars().map(|c| c as u32 as u8).collect();
    assert!(std::str::from_utf8(&latin1).is_err());
    std::fs::write(&cs, &latin1).unwrap();
    let cfg = dir.join(GAMMA_CFG);
    let t = std::fs::read_to_string(&cfg).unwrap();
    let mut b = b"<?xml version='1.0' encoding='latin1'?>\n".to_vec();
    b.extend(
        t.replacen("--nthreads 4", "--nthreads 4 \u{e9}", 1)
            .chars()
            .map(|c| c as u32 as u8),
    );
    std::fs::write(&cfg, b).unwrap();
    let imp = import_path(&dir).unwrap();
    round_trip(&imp);
    assert_eq!(imp.scenario.projects[0].name, "G\u{e4}mma@H\u{f4}me");
    let w = imp.warnings.join("\n");
    assert!(!w.contains("UTF-8"), "{w}");

    // US-ASCII is ISO-8859-1's first half.
    let ascii = std::fs::read_to_string(fixture("today/client_state.xml"))
        .unwrap()
        .replacen("UTF-8", "US-ASCII", 1);
    let p = tmp("ascii-client_state.xml");
    std::fs::write(&p, ascii).unwrap();
    assert!(import_path(&p).is_ok());

    // Another encoding: a warning while the bytes are UTF-8, then an error
    // at the line of the first byte that is not.
    let sjis = std::fs::read_to_string(fixture("today/client_state.xml"))
        .unwrap()
        .replacen("UTF-8", "Shift_JIS", 1);
    let p = tmp("sjis-client_state.xml");
    std::fs::write(&p, &sjis).unwrap();
    let w = import_path(&p).unwrap().warnings.join("\n");
    assert!(
        w.contains("the XML declaration at line 1 names encoding `Shift_JIS`, which vcsim does not decode; the bytes are valid UTF-8"),
        "{w}"
    );
    let mut bytes = sjis.into_bytes();
    let at = line_of(std::str::from_utf8(&bytes).unwrap(), "<project_name>");
    let i = bytes
        .windows(14)
        .position(|w| w == b"<project_name>")
        .unwrap()
        + 14;
    bytes.splice(i..i, [0x83, 0x41, 0xff]);
    std::fs::write(&p, &bytes).unwrap();
    let e = import_path(&p).unwrap_err();
    assert_eq!(e.line, Some(at), "{e}");
    assert!(
        e.message.contains("the file declares encoding `Shift_JIS`, which vcsim does not read (it reads UTF-8, ISO-8859-1 and US-ASCII; BOINC writes UTF-8)"),
        "{e}"
    );

    // Undeclared bytes that are not UTF-8: replaced, and the line is named.
    let mut bytes = std::fs::read(fixture("today/client_state.xml")).unwrap();
    bytes.splice(i..i, [0xff]);
    let p = tmp("bad-utf8-client_state.xml");
    std::fs::write(&p, &bytes).unwrap();
    let w = import_path(&p).unwrap().warnings.join("\n");
    assert!(
        w.contains(&format!(
            "not valid UTF-8 from line {at}; the bad bytes are replaced"
        )),
        "{w}"
    );
}

/// A CPU or GPU use per job that vcsim cannot simulate was refused by the
/// scenario's checks, naming only its key (or "`flops_estimate` would be
/// inf"): it is refused at its file, element and line, with the bound.
#[test]
fn refused_cpu_and_gpu_uses_name_their_file_and_line() {
    let cfg_line = |what: &str| {
        line_of(
            &std::fs::read_to_string(fixture("today").join(GAMMA_CFG)).unwrap(),
            what,
        )
    };
    for (name, set, file, from, to, element, msg) in [
        (
            "gpu-usage-tiny", "today", GAMMA_CFG, "<gpu_usage>0.5</gpu_usage>", "<gpu_usage>1e-300</gpu_usage>", "gpu_usage",
            "1e-300 of one `nvidia` GPU (1e13 FLOPS) computes at 1e-287 FLOPS, less than vcsim's slowest device, 1000 FLOPS: give at least 1e-10",
        ),
        (
            "avg-ncpus-tiny", "today", GAMMA_CFG, "<avg_ncpus>4</avg_ncpus>", "<avg_ncpus>1e-300</avg_ncpus>", "avg_ncpus",
            "1e-300 CPUs per job compute at 4e-291 FLOPS on this host (4e9 FLOPS per CPU), less than vcsim's slowest device, 1000 FLOPS: give at least 2.5e-7",
        ),
        (
            "count-tiny", "host", "client_state.xml", "<count>0.5</count>", "<count>1e-300</count>", "count",
            "1e-300 of one `nvidia` GPU (5e12 FLOPS) computes at 5e-288 FLOPS",
        ),
        (
            "count-huge", "host", "client_state.xml", "<count>0.5</count>", "<count>1e300</count>", "count",
            "1e300 `nvidia` GPUs per job, more than the host's 2: its jobs could never run",
        ),
    ] {
        let dir = fixture_with(set, name, &[(file, from, to)]);
        let e = import_path(&dir).unwrap_err();
        let m = e.to_string();
        assert_eq!(e.file, dir.join(file), "{m}");
        assert_eq!(e.element.as_deref(), Some(element), "{m}");
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert_eq!(e.line, Some(line_of(&text, to)), "{m}");
        assert!(m.contains(msg), "{m}");
        assert!(!m.contains("would be inf") && !m.contains("key `"), "{m}");
    }
    // <ngpus> applies to the version of its <app_name> and <plan_class>.
    let dir = fixture_with(
        "today",
        "ngpus-huge-render",
        &[(
            GAMMA_CFG,
            "<app_name>sim</app_name>\n        <plan_class>mt</plan_class>\n        <avg_ncpus>4</avg_ncpus>",
            "<app_name>render</app_name>\n        <plan_class>cuda</plan_class>\n        <ngpus>1e308</ngpus>",
        )],
    );
    let e = import_path(&dir).unwrap_err();
    assert_eq!(
        (e.line, e.element.as_deref()),
        (Some(cfg_line("<avg_ncpus>4")), Some("ngpus")),
        "{e}"
    );
    assert!(
        e.message.contains(
            "1e308 `nvidia` GPUs per job, more than the host's 1: its jobs could never run"
        ),
        "{e}"
    );
}

/// A CPU count above the host's, capped, was warned as coming from
/// client_state.xml's app version (in 309 digits) when app_config.xml gave
/// it: the warning names the file and line it came from, in short numbers.
#[test]
fn a_capped_cpu_count_names_the_file_it_came_from() {
    let dir = fixture_with(
        "today",
        "avg-ncpus-huge",
        &[(
            GAMMA_CFG,
            "<avg_ncpus>4</avg_ncpus>",
            "<avg_ncpus>1e308</avg_ncpus>",
        )],
    );
    let imp = import_path(&dir).unwrap();
    let w = imp.warnings.join("\n");
    let line = line_of(
        &std::fs::read_to_string(dir.join(GAMMA_CFG)).unwrap(),
        "<avg_ncpus>",
    );
    assert!(
        w.contains(&format!("projects/gamma.example.org_gamma/app_config.xml: <avg_ncpus> at line {line} gives app `sim` (plan class `mt`) 1e308 CPUs per job, more than the host's 8: capped")),
        "{w}"
    );
    assert!(!w.contains("0000000000"), "{w}");
    let mt = imp.scenario.projects[0]
        .apps
        .iter()
        .find(|a| a.name == "sim/mt")
        .unwrap();
    assert_eq!(mt.cpus, 8.0);
}

/// A multi-threaded app wider than the CPUs `max_ncpus_pct` leaves could
/// never run (a user's limit is BOINC's one strict cap): refused, naming
/// the file and line of both the app's CPUs and the preference.
#[test]
fn an_app_wider_than_the_usable_cpus_names_both_files() {
    let dir = fixture_with(
        "host",
        "mt-wider-than-pct",
        &[(
            "global_prefs_override.xml",
            "<max_ncpus_pct>75</max_ncpus_pct>",
            "<max_ncpus_pct>25</max_ncpus_pct>",
        )],
    );
    let e = import_path(&dir).unwrap_err().to_string();
    let app_line = line_of(
        &std::fs::read_to_string(dir.join("client_state.xml")).unwrap(),
        "<avg_ncpus>4</avg_ncpus>",
    );
    assert!(
        e.contains("4 CPUs per job is more than the 2 the client may use"),
        "{e}"
    );
    assert!(
        e.contains(&format!("(from <avg_ncpus>, client_state.xml line {app_line}; client.max_ncpus_pct from <max_ncpus_pct>, global_prefs_override.xml line 2)")),
        "{e}"
    );
}

/// `<d_total>0</d_total>` was taken as absent (vcsim's 100 GB), and 1e-308
/// bytes made a disk of 1e-317 GB. BOINC allows a percentage of the total,
/// and its scheduler sends a host with a total of 0 no work: both are
/// refused at their line.
#[test]
fn disk_totals_of_zero_or_under_a_byte_are_refused() {
    for (v, msg) in [
        ("0", "0 bytes: BOINC would allow no disk space on this host, and its scheduler sends such a host no work"),
        ("1e-308", "1e-308 bytes: a disk needs at least 1 byte (the value is in bytes, not GB)"),
        ("1e300", "1e300 bytes is more than 1e21 bytes (a zettabyte)"),
    ] {
        let to = format!("<d_total>{v}</d_total>");
        let dir = fixture_with("today", &format!("d-total-{v}"), &[("client_state.xml", "<d_total>1e12</d_total>", &to)]);
        let e = import_path(&dir).unwrap_err();
        let text = std::fs::read_to_string(dir.join("client_state.xml")).unwrap();
        assert_eq!(
            (e.line, e.element.as_deref()),
            (Some(line_of(&text, &to)), Some("d_total")),
            "{e}"
        );
        assert!(e.message.contains(msg), "{e}");
    }
    let dir = fixture_with(
        "sim2007",
        "d-total-sim2007",
        &[(
            "sim_host.xml",
            "<p_ncpus>2</p_ncpus>",
            "<p_ncpus>2</p_ncpus><d_total>0</d_total>",
        )],
    );
    let e = import_path(&dir).unwrap_err();
    assert_eq!(
        (e.line, e.element.as_deref()),
        (Some(2), Some("d_total")),
        "{e}"
    );
    assert!(
        e.message
            .contains("0 bytes: BOINC would allow no disk space"),
        "{e}"
    );
}

/// Times and FLOPs far out of range, whose differences and ratios were
/// infinite, are refused at their line; a deadline beyond vcsim's span too.
#[test]
fn extreme_times_and_sizes_are_refused_at_their_line() {
    for (name, from, to, element, msg) in [
        (
            "deadline-huge",
            "<report_deadline>1700504800<",
            "<report_deadline>1e300<",
            "report_deadline",
            "1e300 s is more than 1e12 s",
        ),
        (
            "now-huge",
            "<now>1700000000</now>",
            "<now>-1e300</now>",
            "now",
            "-1e300 s is less than -1e12 s",
        ),
        (
            "deadline-far",
            "<report_deadline>1700504800<",
            "<report_deadline>9e11<",
            "report_deadline",
            "days from the start (1.7e9 s), more than vcsim's 10000000 days either way",
        ),
        (
            "est-huge",
            "<rsc_fpops_est>1.44e14</rsc_fpops_est>",
            "<rsc_fpops_est>1e31</rsc_fpops_est>",
            "rsc_fpops_est",
            "1e31 FLOPs is more than 1e30 FLOPs",
        ),
        (
            "est-tiny",
            "<rsc_fpops_est>1.44e14</rsc_fpops_est>",
            "<rsc_fpops_est>1e-300</rsc_fpops_est>",
            "rsc_fpops_est",
            "1e-300 FLOPs is less than 1 FLOPs",
        ),
        (
            "fpops-huge",
            "<p_fpops>4e9</p_fpops>",
            "<p_fpops>1e308</p_fpops>",
            "p_fpops",
            "1e308 FLOPS is more than 1e18 FLOPS",
        ),
    ] {
        let dir = fixture_with("today", name, &[("client_state.xml", from, to)]);
        let text = std::fs::read_to_string(dir.join("client_state.xml")).unwrap();
        let e = import_path(&dir).unwrap_err();
        assert_eq!(
            (e.line, e.element.as_deref()),
            (Some(line_of(&text, to)), Some(element)),
            "{e}"
        );
        assert!(e.message.contains(msg), "{e}");
    }
}

/// A copy of the `today` fixture in a fresh directory `name`, its
/// `client_state.xml` edited by `edit`: the directory and the text before.
fn today_with(name: &str, edit: impl FnOnce(&str) -> String) -> (PathBuf, String) {
    let dir = tmp(name);
    copy_dir(&fixture("today"), &dir);
    let cs = dir.join("client_state.xml");
    let text = std::fs::read_to_string(&cs).unwrap();
    std::fs::write(&cs, edit(&text)).unwrap();
    (dir, text)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// A value each element allows but the scenario does not (a share above
/// 10^12, a deadline a million years off) names the key, and the file and
/// line it came from.
#[test]
fn values_the_scenario_refuses_name_their_boinc_line() {
    let state = std::fs::read_to_string(fixture("host/client_state.xml")).unwrap();
    let line_of =
        |text: &str, what: &str| text[..text.find(what).unwrap()].matches('\n').count() + 1;
    let bad = state.replacen("<resource_share>200<", "<resource_share>1e300<", 1);
    let e = import_client_state((Path::new("client_state.xml"), &bad), None, None).unwrap_err();
    let line = line_of(&bad, "<resource_share>1e300<");
    assert!(
        e.message
            .contains("key `project.0.resource_share`: must be at most 1e12, found 1e300")
            && e.message.contains(&format!(
                "(from <resource_share>, client_state.xml line {line})"
            )),
        "{e}"
    );
}

/// Cut the file anywhere, or put garbage in any value: an error or a
/// scenario, never a panic.
#[test]
fn never_panics_on_broken_input() {
    let state = std::fs::read_to_string(fixture("host/client_state.xml")).unwrap();
    let mut cut = 0;
    while cut < state.len() {
        if state.is_char_boundary(cut) {
            let _ = import_client_state((Path::new("c.xml"), &state[..cut]), None, None);
        }
        cut += 37;
    }
    let mut pos = 0;
    while let Some(i) = state[pos..].find('>') {
        let at = pos + i + 1;
        for junk in ["-1", "1e400", "", "x"] {
            let bad = format!("{}{junk}{}", &state[..at], &state[at..]);
            let _ = import_client_state((Path::new("c.xml"), &bad), None, None);
        }
        pos = at;
    }
}

/// A client_state of about 5 MB imports (the time is printed; the book
/// quotes it).
#[test]
fn large_client_state() {
    let mut s = String::from(
        "<client_state>\n<host_info><p_ncpus>16</p_ncpus><p_fpops>5e9</p_fpops>\
         <d_total>1e12</d_total><d_free>5e11</d_free></host_info>\n\
         <time_stats><on_frac>0.95</on_frac><active_frac>0.9</active_frac><now>1700000000</now></time_stats>\n",
    );
    let mut jobs = 0;
    for p in 0..20 {
        s.push_str(&format!(
            "<project><master_url>https://p{p}.example/</master_url><project_name>P{p}</project_name>\
             <resource_share>{}</resource_share><user_name>u</user_name></project>\n\
             <app><name>a{p}</name></app>\n\
             <app_version><app_name>a{p}</app_name><version_num>1</version_num><avg_ncpus>1</avg_ncpus><flops>5e9</flops></app_version>\n",
            100 + p
        ));
        for j in 0..430 {
            s.push_str(&format!(
                "<file><name>f{p}_{j}</name><nbytes>1000000</nbytes><status>1</status></file>\n\
                 <workunit>\n    <name>w{p}_{j}</name>\n    <app_name>a{p}</app_name>\n    <version_num>1</version_num>\n\
                 \x20   <rsc_fpops_est>{}e12</rsc_fpops_est>\n    <rsc_fpops_bound>1e16</rsc_fpops_bound>\n\
                 \x20   <file_ref><file_name>f{p}_{j}</file_name><open_name>in</open_name></file_ref>\n</workunit>\n\
                 <result>\n    <name>w{p}_{j}_0</name>\n    <wu_name>w{p}_{j}</wu_name>\n    <state>2</state>\n\
                 \x20   <report_deadline>{}</report_deadline>\n    <received_time>1699990000</received_time>\n\
                 \x20   <platform>x86_64-pc-linux-gnu</platform>\n</result>\n",
                1 + j % 7,
                1700000000 + 86400 * (1 + j % 9)
            ));
            jobs += 1;
        }
    }
    s.push_str("</client_state>\n");
    assert!(s.len() > 4_500_000, "{} bytes", s.len());
    let t = Instant::now();
    let imp = import_client_state((Path::new("client_state.xml"), &s), None, None).unwrap();
    eprintln!(
        "imported {:.1} MB ({jobs} jobs) in {:.2} s",
        s.len() as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    round_trip(&imp);
    eprintln!(
        "loading its {:.1} MB of TOML back: {:.2} s",
        imp.toml.len() as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    assert_eq!(imp.scenario.projects.len(), 20);
    assert_eq!(
        imp.scenario
            .projects
            .iter()
            .map(|p| p.jobs.len())
            .sum::<usize>(),
        jobs
    );
    assert!(
        imp.warnings.len() < 20,
        "warnings are grouped: {:?}",
        imp.warnings
    );
}

#[test]
fn cli_import_writes_the_scenario_and_warns() {
    let out = tmp("host.toml");
    let (code, stdout, stderr) = vcsim(&[
        "import",
        "tests/fixtures/boinc/host",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("warning: client_state.xml: <m_nbytes>"),
        "{stderr}"
    );
    assert!(stderr.contains("wrote "), "{stderr}");
    let text = std::fs::read_to_string(&out).unwrap();
    let s = Scenario::from_toml_str(&text, &out).unwrap();
    assert_eq!(s.projects.len(), 2);

    // To standard output without --out.
    let (code, stdout, _) = vcsim(&["import", "tests/fixtures/boinc/sim2007/sim_projects.xml"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("[[project]]"));
}

#[test]
fn cli_bad_input_exits_2_naming_the_line() {
    let (code, _, stderr) = vcsim(&[
        "import",
        "tests/fixtures/boinc/bad/badnumber-client_state.xml",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("badnumber-client_state.xml:4: <p_fpops>"),
        "{stderr}"
    );
    let (code, _, stderr) = vcsim(&[
        "run",
        "tests/fixtures/boinc/bad/mismatched-client_state.xml",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains(":8:"), "{stderr}");
}

#[test]
fn cli_compare_on_boinc_files() {
    let (code, stdout, stderr) = vcsim(&[
        "compare",
        "tests/fixtures/boinc/emulator",
        "--policy",
        "CS2_WF2_WS2_JC2",
        "--policy",
        "CS1_WF2_WS2_JC2",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("warning: "), "{stderr}");
    insta::assert_snapshot!("emulator_compare", stdout);

    let (code, stdout, stderr) = vcsim(&[
        "compare",
        "tests/fixtures/boinc/sim2007",
        "--policy",
        "CS2_WF2_WS2_JC2",
        "--policy",
        "CS1_WF1_WS1_JC1",
        "--replications",
        "3",
    ]);
    assert_eq!(code, 0, "{stderr}");
    insta::assert_snapshot!("sim2007_compare", stdout);

    let (code, stdout, stderr) =
        vcsim(&["run", "tests/fixtures/boinc/sim2007", "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("\"scenario\": \"sim_projects\""),
        "{stdout}"
    );
}

/// Writes `text` as `client_state.xml` in a directory of its own (`case`)
/// and runs `vcsim import` on it, timed.
fn import_hostile(case: &str, text: &str) -> (i32, String, f64) {
    let dir = tmp(&format!("hostile-{case}"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("client_state.xml");
    std::fs::write(&path, text).unwrap();
    let t = Instant::now();
    let (code, _, stderr) = vcsim(&["import", path.to_str().unwrap()]);
    (code, stderr, t.elapsed().as_secs_f64())
}

const HOST: &str = "<host_info><p_ncpus>1</p_ncpus><p_fpops>1e9</p_fpops></host_info>";

/// One 50,000-character entity referenced 2,000 times (56 KB of XML, 100 MB
/// once expanded) took minutes: DTDs are refused at once, naming the line.
#[test]
fn hostile_entity_expansion_is_refused() {
    let text = format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE client_state [<!ENTITY e \"{}\">]>\n<client_state>{HOST}<project><project_name>{}</project_name></project></client_state>\n",
        "x".repeat(50_000),
        "&e;".repeat(2_000)
    );
    assert!(text.len() > 55_000 && text.len() < 60_000, "{}", text.len());
    let (code, stderr, secs) = import_hostile("entity", &text);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("client_state.xml:2: <!DOCTYPE>: a document type declaration"),
        "{stderr}"
    );
    assert!(secs < 10.0, "{secs} s");
}

/// 20,000 nested elements overflowed the stack (exit 134).
#[test]
fn hostile_deep_nesting_is_refused() {
    let depth = 20_000;
    let text = format!(
        "<client_state>\n{HOST}\n{}{}</client_state>\n",
        "<a>".repeat(depth),
        "</a>".repeat(depth)
    );
    let (code, stderr, secs) = import_hostile("deep", &text);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("client_state.xml:3: <a>: elements nested more than 100 deep"),
        "{stderr}"
    );
    assert!(secs < 10.0, "{secs} s");
    // The same through `run`.
    let dir = tmp("hostile-deep");
    let (code, _, stderr) = vcsim(&["run", dir.join("client_state.xml").to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
}

/// Text joined from many CDATA sections was copied once per section
/// (quadratic), and so were attributes compared with each other.
#[test]
fn hostile_cdata_and_attributes_are_bounded() {
    let text = format!(
        "<client_state>{HOST}\n<project><project_name>{}</project_name></project></client_state>",
        "x<![CDATA[y]]>".repeat(200_000)
    );
    let (code, stderr, secs) = import_hostile("cdata", &text);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(":2: <project_name>: more than 16 CDATA sections in one text"),
        "{stderr}"
    );
    assert!(secs < 10.0, "{secs} s");

    let attrs: String = (0..100_000).map(|i| format!(" a{i}=\"v\"")).collect();
    let text = format!("<client_state>\n{HOST}\n<project{attrs}/></client_state>");
    let (code, stderr, secs) = import_hostile("attributes", &text);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(":3: <project>: more than 32 attributes"),
        "{stderr}"
    );
    assert!(secs < 10.0, "{secs} s");

    // Many children in one element: roxmltree's node limit.
    let text = format!(
        "<client_state>\n{HOST}\n<project>{}</project></client_state>",
        "<x/>".repeat(150_000)
    );
    let (code, stderr, secs) = import_hostile("nodes", &text);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(":3: <project>: more than 100000 XML nodes in one element"),
        "{stderr}"
    );
    assert!(secs < 10.0, "{secs} s");
}

/// A client_state.xml of the shape of a real one, `jobs` results long.
fn big_state(projects: usize, jobs: usize) -> String {
    let mut s = String::from(
        "<client_state>\n<host_info><p_ncpus>16</p_ncpus><p_fpops>5e9</p_fpops>\
         <d_total>1e12</d_total><d_free>5e11</d_free></host_info>\n\
         <time_stats><on_frac>0.95</on_frac><active_frac>0.9</active_frac><now>1700000000</now></time_stats>\n",
    );
    for p in 0..projects {
        s.push_str(&format!(
            "<project><master_url>https://p{p}.example/</master_url><project_name>P{p}</project_name>\
             <resource_share>{}</resource_share><user_name>u</user_name></project>\n\
             <app><name>a{p}</name></app>\n\
             <app_version><app_name>a{p}</app_name><version_num>1</version_num><avg_ncpus>1</avg_ncpus><flops>5e9</flops></app_version>\n",
            100 + p
        ));
        for j in 0..jobs {
            s.push_str(&format!(
                "<file><name>f{p}_{j}</name><nbytes>1000000</nbytes><status>1</status></file>\n\
                 <workunit>\n    <name>w{p}_{j}</name>\n    <app_name>a{p}</app_name>\n    <version_num>1</version_num>\n\
                 \x20   <rsc_fpops_est>{}e12</rsc_fpops_est>\n    <rsc_fpops_bound>1e16</rsc_fpops_bound>\n\
                 \x20   <file_ref><file_name>f{p}_{j}</file_name><open_name>in</open_name></file_ref>\n</workunit>\n\
                 <result>\n    <name>w{p}_{j}_0</name>\n    <wu_name>w{p}_{j}</wu_name>\n    <state>2</state>\n\
                 \x20   <report_deadline>{}</report_deadline>\n    <received_time>1699990000</received_time>\n\
                 \x20   <platform>x86_64-pc-linux-gnu</platform>\n</result>\n",
                1 + j % 7,
                1700000000 + 86400 * (1 + j % 9)
            ));
        }
    }
    s.push_str("</client_state>\n");
    s
}

/// Peak memory (VmHWM) of this process, bytes; None off Linux.
fn peak_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Run in a process of its own by `import_memory_is_a_small_multiple_of_the_file`.
#[test]
fn memory_probe_child() {
    let Ok(path) = std::env::var("VCSIM_IMPORT_MEMORY_PROBE") else {
        return;
    };
    let before = peak_memory().unwrap_or(0);
    let imp = import_path(Path::new(&path)).unwrap();
    let after = peak_memory().unwrap_or(0);
    println!(
        "PROBE before={before} after={after} toml={}",
        imp.toml.len()
    );
}

/// A 200 MB client_state.xml took 2.7 GB. The file is read one top-level
/// element at a time and the scenario written and read back a section at a
/// time: the peak is a small multiple of the file (here about 10 MB: the
/// text itself, the written TOML, which is about half as long, and the
/// elements kept until their project is written).
#[test]
fn import_memory_is_a_small_multiple_of_the_file() {
    if peak_memory().is_none() {
        eprintln!("note: no /proc/self/status; skipped");
        return;
    }
    let text = big_state(10, 1_700);
    let path = tmp("memory").join("client_state.xml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, &text).unwrap();
    let size = text.len() as u64;
    drop(text);
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "memory_probe_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("VCSIM_IMPORT_MEMORY_PROBE", &path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("PROBE ").map(|x| x.1))
        .unwrap_or_else(|| panic!("no probe line: {stdout}"));
    let num = |k: &str| -> u64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(k))
            .and_then(|v| v.parse().ok())
            .unwrap()
    };
    let grown = num("after=").saturating_sub(num("before="));
    eprintln!(
        "{:.1} MB of XML: peak grew by {:.1} MB ({:.2} x the file); TOML {:.1} MB",
        size as f64 / 1e6,
        grown as f64 / 1e6,
        grown as f64 / size as f64,
        num("toml=") as f64 / 1e6
    );
    assert!(size > 9_000_000, "{size}");
    assert!(grown < 3 * size, "peak grew by {grown} bytes for {size}");
}

/// The scenario's checks compare projects with each other and jobs with
/// their project's apps: their numbers are bounded.
#[test]
fn hostile_counts_are_bounded() {
    let mut text = format!("<client_state>\n{HOST}\n");
    for p in 0..=1000 {
        text.push_str(&format!(
            "<project><project_name>p{p}</project_name></project>\n\
             <app><name>a</name></app><app_version><app_name>a</app_name></app_version>\n"
        ));
    }
    text.push_str("</client_state>\n");
    let (code, stderr, secs) = import_hostile("projects", &text);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(":2003: <project>: more than 1000 projects"),
        "{stderr}"
    );
    assert!(secs < 10.0, "{secs} s");

    let mut text =
        format!("<client_state>\n{HOST}\n<project><project_name>p</project_name></project>\n");
    for a in 0..300 {
        text.push_str(&format!(
            "<app><name>a{a}</name></app><app_version><app_name>a{a}</app_name></app_version>\n"
        ));
    }
    text.push_str("</client_state>\n");
    let (code, stderr, _) = import_hostile("apps", &text);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(":3: <project>: project `p` has 300 apps"),
        "{stderr}"
    );
}

/// Today's hosts: app_config.xml beside the state (max_concurrent,
/// project_max_concurrent, GPU and CPU use), apps' own latency bounds, and
/// the active fractions of the on-time.
#[test]
fn todays_host_with_app_config() {
    let imp = import_path(&fixture("today")).unwrap();
    round_trip(&imp);
    let s = &imp.scenario;
    let av = &s.host.availability;
    assert_eq!(
        (av.fraction, av.active_fraction, av.gpu_active()),
        (0.95, 0.6, 0.6),
        "gpu_active_frac 0.8 is clamped to active_frac"
    );
    let g = &s.projects[0];
    assert_eq!(g.max_concurrent, 6, "project_max_concurrent");
    assert_eq!(g.latency_bound_days, 7.0, "the most common: sim and sim/mt");
    let app = |n: &str| g.apps.iter().find(|a| a.name == n).unwrap();
    assert_eq!(app("sim").latency_bound_days, None);
    assert_eq!(app("sim/mt").cpus, 4.0, "<app_version><avg_ncpus>");
    let r = app("render");
    assert_eq!(
        (r.cpus, r.gpu.as_ref().unwrap().count),
        (0.25, 0.5),
        "<gpu_versions>"
    );
    assert_eq!(r.max_concurrent, 2);
    assert_eq!(r.latency_bound_days, Some(3.0));
    assert_eq!(app("long").latency_bound_days, Some(30.0));
    let d = &s.projects[1];
    assert_eq!((d.max_concurrent, d.apps[0].max_concurrent), (0, 3));
    let w = imp.warnings.join("\n");
    for t in [
        "<gpu_active_frac> 0.8 at line 20 is more than <active_frac> 0.6",
        "app_config.xml line 10: project `Gamma@Home` has no app `nosuch`",
        "projects/orphan.example.com/app_config.xml: no project",
        "projects/gamma.example.org_gamma/app_config.xml: <app_version>: not modelled by vcsim, ignored: <cmdline>",
    ] {
        assert!(w.contains(t), "no warning says {t}:\n{w}");
    }
    for t in ["max_concurrent", "latency bound", "one availability"] {
        assert!(!w.contains(t), "{t} is modelled now:\n{w}");
    }
    insta::assert_snapshot!("today_toml", imp.toml);
    insta::assert_snapshot!("today_warnings", w);

    // The same app_config.xml given as text.
    let dir = fixture("today");
    let state = std::fs::read_to_string(dir.join("client_state.xml")).unwrap();
    let cfg_path = dir.join("projects/gamma.example.org_gamma/app_config.xml");
    let cfg = std::fs::read_to_string(&cfg_path).unwrap();
    assert_eq!(
        vcsim_import::project_dir("https://gamma.example.org/gamma/"),
        "gamma.example.org_gamma"
    );
    let again = vcsim_import::import_client_state_with(
        (&dir.join("client_state.xml"), &state),
        None,
        None,
        &[vcsim_import::AppConfigText {
            project_dir: "gamma.example.org_gamma",
            path: &cfg_path,
            text: &cfg,
        }],
        &vcsim_import::Options::default(),
    )
    .unwrap();
    assert_eq!(again.scenario, imp.scenario);
}

/// `vcsim import` chooses a run long enough for several latency bounds and
/// jobs (a 1-day run showed no job on time); a run too short to finish one
/// job of an app is warned.
#[test]
fn run_length_is_chosen_and_short_runs_are_warned() {
    let imp = import_path(&fixture("emulator")).unwrap();
    assert_eq!(imp.scenario.duration_days, 35.0, "5 x the 7-day bound");
    assert!(imp.toml.contains("duration_days = 35.0 "), "{}", imp.toml);
    let imp = import_path(&fixture("today")).unwrap();
    assert_eq!(imp.scenario.duration_days, 100.0, "5 x 30 days, capped");

    let short = vcsim_import::Options {
        duration_days: Some(2.0),
    };
    let imp = vcsim_import::import_path_with(&fixture("today"), &short).unwrap();
    round_trip(&imp);
    assert_eq!(imp.scenario.duration_days, 2.0);
    let w = imp.warnings.join("\n");
    assert!(
        w.contains("a 2-day run is too short to finish one job of app `long` of `Gamma@Home` (about 17.5 days each on this host, computing 57% of the time): set duration_days to at least 18"),
        "{w}"
    );
    assert!(!w.contains("app `sim`"), "{w}");
}

/// app_config.xml entries are matched with the project's apps through maps,
/// not by comparing every entry with every app (8,000 x 50,000 here). The
/// file itself is read whole, so roxmltree's node limit bounds it.
#[test]
fn hostile_app_config_is_linear() {
    let (n, m) = (50_000, 8_000);
    let mut state = format!(
        "<client_state>{HOST}<project><master_url>https://p.example/</master_url></project>\n\
         <app><name>a</name></app><app_version><app_name>a</app_name></app_version>\n"
    );
    let mut cfg = String::from("<app_config>\n");
    for i in 0..n {
        state.push_str(&format!("<app><name>x{i}</name></app>\n"));
    }
    for i in 0..m {
        cfg.push_str(&format!(
            "<app><name>y{i}</name><max_concurrent>1</max_concurrent></app>\
             <app_version><app_name>a</app_name><plan_class>p{i}</plan_class></app_version>\n"
        ));
    }
    state.push_str("</client_state>\n");
    cfg.push_str("</app_config>\n");
    let t = Instant::now();
    let imp = vcsim_import::import_client_state_with(
        (Path::new("client_state.xml"), &state),
        None,
        None,
        &[vcsim_import::AppConfigText {
            project_dir: "p.example",
            path: Path::new("app_config.xml"),
            text: &cfg,
        }],
        &vcsim_import::Options::default(),
    )
    .unwrap();
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(imp.scenario.projects[0].apps.len(), 1);
    assert!(imp.warnings.len() >= n + 2 * m, "{}", imp.warnings.len());
    assert!(secs < 10.0, "{secs} s");
}

/// A line break in a project's name, which a scenario's names may not hold,
/// names the key and the line it came from.
#[test]
fn a_control_character_in_a_name_names_its_key_and_line() {
    let tag = "<project_name>";
    let after_tag = |t: &str| t.find(tag).expect("a <project_name>") + tag.len();
    let (dir, text) = today_with("newline-name", |t| {
        let mut edited = t.to_string();
        edited.insert_str(after_tag(t), "two&#10;lines ");
        edited
    });
    let line = text[..after_tag(&text)].lines().count();
    let m = import_path(&dir).unwrap_err().to_string();
    assert!(m.contains("`name` holds the control character \\n"), "{m}");
    assert!(m.contains(&format!("line {line}")), "{m}");
    assert!(m.contains("names must be printable"), "{m}");
}

/// BOINC names each result once: a repeated name (a damaged or edited
/// file) is imported as jobs of their own, said once in a warning (50,000
/// of them were imported without a word).
#[test]
fn results_that_repeat_a_name_are_imported_with_one_warning() {
    let dir = fixture_with(
        "host",
        "repeated-result",
        &[(
            "client_state.xml",
            "<name>wu_a2_0</name>",
            "<name>wu_a1_0</name>",
        )],
    );
    let imp = import_path(&dir).unwrap();
    let jobs: usize = imp.scenario.projects.iter().map(|p| p.jobs.len()).sum();
    let before = import_path(&fixture("host")).unwrap();
    let jobs_before: usize = before.scenario.projects.iter().map(|p| p.jobs.len()).sum();
    assert_eq!(jobs, jobs_before);
    let w = imp.warnings.join("\n");
    let said: Vec<&str> = w
        .lines()
        .filter(|l| l.contains("the name of an earlier one"))
        .collect();
    assert_eq!(said.len(), 1, "{w}");
    assert!(
        said[0].contains("a <result> repeats the name of an earlier one `wu_a1_0` at line"),
        "{w}"
    );
    assert!(!before.warnings.join("\n").contains("an earlier one"));
}

#[test]
fn an_active_task_is_matched_as_boinc_matches_it_or_said_unmatched() {
    // BOINC's `lookup_project` ignores a URL's trailing slashes: the
    // task's 0.25 was dropped, silently.
    let dir = fixture_with(
        "host",
        "active-url-slash",
        &[(
            "client_state.xml",
            "<project_master_url>https://alpha.example.org/</project_master_url>",
            "<project_master_url>https://alpha.example.org</project_master_url>",
        )],
    );
    let imp = import_path(&dir).unwrap();
    assert!(imp.toml.contains("fraction_done = 0.25 "), "{}", imp.toml);
    // A task that matches no result is said, not dropped silently.
    let dir = fixture_with(
        "host",
        "active-no-result",
        &[(
            "client_state.xml",
            "<result_name>wu_a1_0",
            "<result_name>nosuch",
        )],
    );
    let imp = import_path(&dir).unwrap();
    assert!(!imp.toml.contains("fraction_done = 0.25 "), "{}", imp.toml);
    assert!(
        imp.warnings.iter().any(|w| w.contains(
            "1 <active_task>(s) match no result of a project kept (by <project_master_url> and <result_name>), the first `nosuch`"
        )),
        "{:?}",
        imp.warnings
    );
}

#[test]
fn free_space_without_a_disk_size_is_said_and_max_cpus_is_whole() {
    let text = std::fs::read_to_string(fixture("host/client_state.xml")).unwrap();
    let d_total = text
        .lines()
        .find(|l| l.contains("<d_total>"))
        .unwrap()
        .to_string();
    let dir = fixture_with(
        "host",
        "d-free-alone",
        &[("client_state.xml", &d_total, "")],
    );
    let imp = import_path(&dir).unwrap();
    assert!(
        imp.warnings
            .iter()
            .any(|w| w.contains("<d_free> at line") && w.contains("without <d_total>: ignored")),
        "{:?}",
        imp.warnings
    );
    // BOINC reads <max_cpus> as a whole number of CPUs.
    let dir = fixture_with(
        "sim2007",
        "max-cpus-fraction",
        &[(
            "sim_prefs.xml",
            "<max_cpus>1</max_cpus>",
            "<max_cpus>1.5</max_cpus>",
        )],
    );
    let e = import_path(&dir).unwrap_err();
    assert_eq!(e.element.as_deref(), Some("max_cpus"), "{e}");
    assert!(
        e.message
            .contains("must be a whole number of at least 0, found 1.5"),
        "{e}"
    );
}

#[test]
fn a_disk_preference_of_zero_is_no_limit_as_in_boinc() {
    // BOINC applies each disk limit only when it is not 0; imported as is,
    // 0 was a limit of 0, and the run suspended computation for good.
    let text = std::fs::read_to_string(fixture("host/global_prefs.xml")).unwrap();
    let line = |tag: &str| {
        text.lines()
            .find(|l| l.contains(&format!("<{tag}>")))
            .unwrap()
            .trim()
            .to_string()
    };
    let (gb, pct) = (line("disk_max_used_gb"), line("disk_max_used_pct"));
    let dir = fixture_with(
        "host",
        "disk-prefs-zero",
        &[
            (
                "global_prefs.xml",
                &gb,
                "<disk_max_used_gb>0</disk_max_used_gb>",
            ),
            (
                "global_prefs.xml",
                &pct,
                "<disk_max_used_pct>0</disk_max_used_pct>",
            ),
        ],
    );
    let imp = import_path(&dir).unwrap();
    assert!(
        imp.toml.contains("disk_max_used_gb = 1e12 "),
        "{}",
        imp.toml
    );
    assert!(
        imp.toml.contains("disk_max_used_pct = 100.0 "),
        "{}",
        imp.toml
    );
    assert!(
        imp.toml
            .contains("# 0 means no limit in BOINC: <disk_max_used_gb>"),
        "{}",
        imp.toml
    );
    assert_eq!(imp.scenario.client.disk_max_used_pct, 100.0);
}

#[test]
fn a_plan_class_no_version_has_falls_back_to_the_version_number_with_a_warning() {
    // It became a CPU job without a word.
    let dir = fixture_with(
        "host",
        "plan-class-unknown",
        &[(
            "client_state.xml",
            "<version_num>121</version_num>\n    <plan_class>cuda</plan_class>",
            "<version_num>121</version_num>\n    <plan_class>cuda_fermi</plan_class>",
        )],
    );
    let imp = import_path(&dir).unwrap();
    assert!(imp.toml.contains("app = \"pulsar/cuda\""), "{}", imp.toml);
    assert!(
        imp.warnings.iter().any(|w| w.contains(
            "job `p_1_1` (line 231) has <plan_class> `cuda_fermi`, which no app version of `pulsar` has: imported with the version 121 (plan class `cuda`)"
        )),
        "{:?}",
        imp.warnings
    );
}

/// A BOINC file kept under another name (`client_state.bak`) was read as
/// TOML ("1:1: invalid key"). Its text starts with `<`, which no TOML
/// scenario does: `check` and `run` read it as BOINC's, as a `.xml` file.
#[test]
fn a_boinc_file_under_another_name_is_told_by_its_text() {
    let dir = fixture_with("host", "renamed-client-state", &[]);
    std::fs::rename(dir.join("client_state.xml"), dir.join("client_state.bak")).unwrap();
    let bak = dir.join("client_state.bak");
    let (code, out, err) = vcsim(&["check", bak.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("client_state.bak: BOINC input, imports as scenario"),
        "{out}"
    );
    let (code, out, err) = vcsim(&[
        "run",
        bak.to_str().unwrap(),
        "--set",
        "duration_days=1",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    // The same run as from its `.xml` name, preferences beside it included.
    let xml = fixture("host/client_state.xml");
    let (_, same, _) = vcsim(&[
        "run",
        xml.to_str().unwrap(),
        "--set",
        "duration_days=1",
        "--format",
        "json",
    ]);
    let without_name = |s: &str| {
        s.lines()
            .filter(|l| !l.contains("\"scenario\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(without_name(&out), without_name(&same));
}

/// `<gpu_versions>` with a `<gpu_usage>` of 0 refused the whole directory
/// (status 2), where BOINC reports the value and skips it: an earlier valid
/// one stays, and the block applies with it.
#[test]
fn a_gpu_usage_of_zero_is_skipped_with_a_warning_as_boinc_does() {
    let dir = fixture_with(
        "today",
        "gpu-usage-zero",
        &[(
            GAMMA_CFG,
            "<gpu_usage>0.5</gpu_usage>",
            "<gpu_usage>0.5</gpu_usage><gpu_usage>0</gpu_usage>",
        )],
    );
    let imp = import_path(&dir.join("client_state.xml")).unwrap();
    let render = imp.scenario.projects[0]
        .apps
        .iter()
        .find(|a| a.name == "render")
        .unwrap();
    assert_eq!(
        (render.cpus, render.gpu.as_ref().unwrap().count),
        (0.25, 0.5)
    );
    let w = imp.warnings.join("\n");
    assert!(
        w.contains("app_config.xml line 6: <gpu_usage> 0 of app `render` must be positive: BOINC reports it and does not apply it"),
        "{w}"
    );
}

/// BOINC compares tags as written: `<x:p_ncpus>` is not `<p_ncpus>` (a
/// namespace-aware local name took it for one, and made the host 2 CPUs).
/// A prefix declared only on the root is named as such, not "malformed".
#[test]
fn a_prefixed_element_is_not_boincs_and_a_root_prefix_is_named() {
    let dir = fixture_with(
        "host",
        "prefixed",
        &[(
            "client_state.xml",
            "<p_ncpus>8</p_ncpus>",
            "<p_ncpus>8</p_ncpus><x:p_ncpus xmlns:x=\"urn:example\">2</x:p_ncpus>",
        )],
    );
    let imp = import_path(&dir).unwrap();
    assert_eq!(imp.scenario.host.ncpus, 8);
    let w = imp.warnings.join("\n");
    assert!(w.contains("<x:p_ncpus>"), "{w}");

    let dir = fixture_with(
        "host",
        "root-prefix",
        &[
            (
                "client_state.xml",
                "<client_state>",
                "<client_state xmlns:b=\"urn:b\">",
            ),
            (
                "client_state.xml",
                "<p_ncpus>8</p_ncpus>",
                "<p_ncpus>8</p_ncpus><b:note/>",
            ),
        ],
    );
    let e = import_path(&dir).unwrap_err().to_string();
    assert!(
        e.contains("client_state.xml:8: the namespace prefix `b` is declared on the root element"),
        "{e}"
    );
}

/// Jobs of an app their project has no usable version of are left out
/// with one warning per app that says why and how many, not one line per
/// job (a 10 MB file of them wrote 40,000 lines).
#[test]
fn jobs_of_an_app_without_a_version_are_left_out_with_one_warning() {
    let edit = (
        "client_state.xml",
        "<name>wu_a1</name>\n    <app_name>folder</app_name>",
        "<name>wu_a1</name>\n    <app_name>ghost</app_name>",
    );
    let edit2 = (
        "client_state.xml",
        "<name>wu_a2</name>\n    <app_name>folder</app_name>",
        "<name>wu_a2</name>\n    <app_name>ghost</app_name>",
    );
    let dir = fixture_with("host", "ghost-app-jobs", &[edit, edit2]);
    let imp = import_path(&dir).unwrap();
    let w = imp.warnings.join("\n");
    let said: Vec<&str> = w.lines().filter(|l| l.contains("`ghost`")).collect();
    assert_eq!(said.len(), 1, "{w}");
    assert!(
        said[0].contains("2 jobs (the first `wu_a1_0`, line")
            && said[0]
                .contains("of app `ghost` left out: the project has no usable version of `ghost`"),
        "{w}"
    );
}
