//! A closed standard output ends vcsim quietly with status 0, as `head`
//! expects; another write error is a one-line error with status 1; never
//! a panic (issue 16, item 7).

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

const COMPARE: [&str; 6] = [
    "compare",
    "scenarios/mix-5-slack-5.toml",
    "--policy",
    "CS1_WF1_WS1_JC1",
    "--policy",
    "CS2_WF2_WS2_JC2",
];

fn vcsim(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vcsim"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn stderr_of(child: &mut std::process::Child) -> String {
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    err
}

#[test]
fn head_reading_one_line_of_a_comparison_ends_it_quietly() {
    let mut child = vcsim(&COMPARE).stdout(Stdio::piped()).spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.starts_with("scenario mix-5-slack-5"), "{line}");
    drop(out);
    let err = stderr_of(&mut child);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// The pipe is closed before vcsim writes a byte: every command's first
/// write fails with a broken pipe.
#[test]
fn a_pipe_closed_before_the_output_ends_every_command_quietly() {
    let script = "policies/cs1.rhai";
    let commands: [&[&str]; 5] = [
        &COMPARE,
        &[
            "run",
            "scenarios/paper-base.toml",
            "--set",
            "duration_days=2",
        ],
        &["list"],
        &["check", "scenarios/paper-base.toml"],
        &["check", script],
    ];
    for args in commands {
        let mut child = vcsim(args).stdout(Stdio::piped()).spawn().unwrap();
        drop(child.stdout.take());
        let err = stderr_of(&mut child);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "vcsim {args:?}: stderr: {err}");
        assert!(err.is_empty(), "vcsim {args:?}: {err}");
    }
}

/// A full disk is not a closed pipe: one line naming it, status 1.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_an_error_not_a_panic() {
    // `--help` and `--version` too: clap's own printing lost them silently.
    for args in [
        &["list"][..],
        &["check", "policies/cs1.rhai"],
        &["--help"],
        &["--version"],
        &["help", "run"],
        &["run", "--help"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = vcsim(args).stdout(full).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "vcsim {args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            err.starts_with("error: cannot write to standard output: No space left on device"),
            "{err}"
        );
    }
}

/// A usage error is status 2 even where standard error cannot be written:
/// printing it panicked, and the backstop ended with status 1.
#[cfg(target_os = "linux")]
#[test]
fn a_usage_error_is_status_2_whatever_becomes_of_its_message() {
    for args in [
        &["run", "scenarios/paper-base.toml", "--bogus"][..],
        &["run"],
        &["run", "scenarios/paper-base.toml", "--seed", "x"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = vcsim(args).stderr(full).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "vcsim {args:?}");
    }
}
