//! The one way the integration tests run the `vcsim` binary: a command line
//! in, what it printed and how it exited out.
//!
//! ```ignore
//! let r = vcsim(&["run", "scenarios/paper-base.toml"]).run();
//! r.succeeds();
//! vcsim(&["check", "nope.toml"]).run().fails_with(2, &["nope.toml"]);
//! ```

#![allow(dead_code)] // each test binary uses a part of it

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The flags every browser test starts headless Chromium with: no GPU, no
/// network of its own, no first-run screens (each test adds its window
/// size and what it asks for).
pub const HEADLESS: [&str; 6] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
];

/// The repository's root (where `scenarios/` and `policies/` are).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A `vcsim` command line, run from the repository's root unless told otherwise.
pub struct Vcsim {
    cmd: Command,
    args: Vec<String>,
}

pub fn vcsim<S: AsRef<str>>(args: &[S]) -> Vcsim {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vcsim"));
    cmd.current_dir(root()).stdin(Stdio::null());
    let args: Vec<String> = args.iter().map(|a| a.as_ref().to_string()).collect();
    cmd.args(&args);
    Vcsim { cmd, args }
}

impl Vcsim {
    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Vcsim {
        self.cmd.current_dir(dir);
        self
    }
    pub fn env(mut self, k: &str, v: impl AsRef<std::ffi::OsStr>) -> Vcsim {
        self.cmd.env(k, v);
        self
    }
    pub fn run(mut self) -> Run {
        let out = self.cmd.output().expect("vcsim runs");
        Run {
            args: self.args,
            out,
        }
    }
    /// Runs it, demands success, and returns standard output.
    pub fn stdout(self) -> String {
        self.run().succeeds()
    }
}

/// What a command printed and how it exited.
pub struct Run {
    pub args: Vec<String>,
    pub out: Output,
}

impl Run {
    pub fn status(&self) -> i32 {
        self.out.status.code().unwrap_or(-1)
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    /// Fails unless it exited with status 0; returns standard output.
    pub fn succeeds(&self) -> String {
        assert!(
            self.out.status.success(),
            "vcsim {:?} exited with {}: {}",
            self.args,
            self.status(),
            self.stderr()
        );
        self.stdout()
    }
    /// Fails unless it exited with `code`, without a panic, and its
    /// standard error mentions every `needle`.
    pub fn fails_with(&self, code: i32, needles: &[&str]) -> &Run {
        let err = self.stderr();
        assert_eq!(self.status(), code, "vcsim {:?}: stderr: {err}", self.args);
        assert!(!err.contains("panicked"), "{err}");
        for n in needles {
            assert!(err.contains(n), "stderr lacks {n:?}: {err}");
        }
        self
    }
}

/// A fresh temporary directory for one test, holding `base.toml`: the
/// paper's base scenario, for the sweeps and searches a test writes beside it.
pub fn dir_with_base(name: &str) -> PathBuf {
    let dir = temp_dir(name);
    std::fs::copy(
        root().join("scenarios/paper-base.toml"),
        dir.join("base.toml"),
    )
    .expect("a copy of the base scenario");
    dir
}

/// How long a hostile input may keep a command (a debug build, on a loaded
/// machine): the hostile tests' bound.
pub const HOSTILE_BOUND: std::time::Duration = std::time::Duration::from_secs(10);

/// `cmd` run, which must end within [`HOSTILE_BOUND`].
pub fn timed(cmd: Vcsim) -> Run {
    let t = std::time::Instant::now();
    let r = cmd.run();
    let took = t.elapsed();
    assert!(took < HOSTILE_BOUND, "vcsim {:?} took {took:?}", r.args);
    r
}

/// A fresh temporary directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vcsim-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a temporary directory");
    d
}

/// Headless Chromium: `$CHROMIUM`, else the first of its usual names on
/// the PATH.
pub fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Chromium, or None with a note when it is missing (a failure under CI,
/// which must install it).
pub fn browser_or_skip() -> Option<PathBuf> {
    match chromium() {
        Some(b) => Some(b),
        None if std::env::var_os("CI").is_some() => {
            panic!("chromium is not installed; .ci/run must install Debian's `chromium` package")
        }
        None => {
            eprintln!("skipped: chromium is not installed (apt-get install chromium); set CI to make this a failure");
            None
        }
    }
}

/// A small search's command line, run in a directory holding `space.toml`:
/// `a` against CS2 on `metric`, `budget` runs of two seeds and one day
/// each, then `rest`.
pub fn search_args<'a>(
    a: &'a str,
    metric: &'a str,
    budget: &'a str,
    rest: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "search",
        "--policy",
        a,
        "--policy",
        "CS2",
        "--metric",
        metric,
        "--space",
        "space.toml",
        "--budget",
        budget,
        "--seeds",
        "2",
        "--days",
        "1",
    ];
    args.extend_from_slice(rest);
    args
}
