//! `vcsim sweep` and `vcsim merge` (issue 4).

use crate::Failure;
use std::path::{Path, PathBuf};

pub fn sweep(
    _file: &Path,
    _out: &Path,
    _jobs: Option<usize>,
    _shard: Option<&str>,
    _plugins: &[PathBuf],
) -> Result<(), Failure> {
    Err(Failure::input("sweeps are not supported by this build yet"))
}

pub fn merge(_dirs: &[PathBuf], _out: &Path) -> Result<(), Failure> {
    Err(Failure::input("merge is not supported by this build yet"))
}

/// `vcsim check` on a sweep file.
pub fn check_sweep(file: &Path, _plugins: &[PathBuf]) -> Result<(), Failure> {
    Err(Failure::input(format!(
        "{}: sweep files are not supported by this build yet",
        file.display()
    )))
}
