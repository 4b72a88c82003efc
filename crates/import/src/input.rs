//! What an import reads and the choices it leaves to the user; its bounds.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// The step: BOINC's files do not say; the emulator's default `--delta`.
pub const DEFAULT_STEP_SECONDS: f64 = 60.0;

/// Choices an import leaves to the user.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    /// Days to simulate. None: chosen from the projects (at least
    /// [`MIN_DURATION_DAYS`], [`LATENCY_BOUNDS`] x the longest latency
    /// bound, [`JOB_TIMES`] x the longest job on this host, at most
    /// [`MAX_DURATION_DAYS`]). A run too short to finish one job of an app is
    /// warned either way.
    pub duration_days: Option<f64>,
}

/// Projects in one input, at most (a client is attached to a few dozen):
/// the scenario's checks compare every project with every other.
pub const MAX_PROJECTS: usize = 1000;
/// vcsim apps (an app on one kind of processor) in one project, at most:
/// every job is checked against its project's apps.
pub const MAX_APPS_PER_PROJECT: usize = 256;

/// Which of BOINC's formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    ClientState,
    Sim2007,
}

/// A file's path and its text: read from the file, or borrowed from the
/// caller (not copied: a state may be hundreds of MB).
pub(crate) type FileText<'a> = (PathBuf, Cow<'a, str>);

/// The text of the files of one import.
pub(crate) struct Input<'a> {
    pub main: FileText<'a>,
    pub prefs: Option<FileText<'a>>,
    pub override_prefs: Option<FileText<'a>>,
    /// The client's `cc_config.xml` (with a `client_state.xml` only).
    pub cc_config: Option<FileText<'a>>,
    pub host: Option<FileText<'a>>,
    /// `app_config.xml` files: the project directory each is for (BOINC's
    /// escaped master URL, see `project_dir`), its path, its text.
    pub app_configs: Vec<(String, PathBuf, Cow<'a, str>)>,
    pub options: Options,
}

/// An `app_config.xml` given as text, for the project whose directory is
/// `project_dir` (BOINC's name for it: `project_dir` of its master URL).
#[derive(Debug, Clone, Copy)]
pub struct AppConfigText<'a> {
    pub project_dir: &'a str,
    pub path: &'a Path,
    pub text: &'a str,
}
