//! Compiled policy plugins loaded from dylibs (`--plugin LIB`, `vcsim check
//! LIB`). The loading, checks and adapters live in `vcsim-dylib-host`.

use crate::Failure;
use std::path::{Path, PathBuf};
use vcsim_framework::Registry;

/// Loads every `--plugin` library and adds its policies to the registry.
pub fn load_plugins(reg: &mut Registry, libs: &[PathBuf]) -> Result<(), Failure> {
    vcsim_dylib_host::register(reg, libs)
        .map(|_| ())
        .map_err(Failure::input)
}

/// `vcsim check` on a plugin library: what it exports, or why it is refused.
pub fn check_plugin(file: &Path) -> Result<(), Failure> {
    let p = vcsim_dylib_host::load(file).map_err(Failure::input)?;
    // Names must not clash with the built-ins, and every policy must be
    // creatable.
    let mut reg = Registry::builtins().map_err(Failure::input)?;
    vcsim_dylib_host::register(&mut reg, &[file.to_path_buf()]).map_err(Failure::input)?;
    p.try_instances().map_err(Failure::input)?;
    let mut text = format!(
        "{}: vcsim plugin {} (ABI version {}, {}), {} {}\n",
        file.display(),
        p.crate_name,
        vcsim_dylib_host::abi::ABI_VERSION,
        p.rustc,
        p.policies.len(),
        if p.policies.len() == 1 {
            "policy"
        } else {
            "policies"
        }
    );
    for pol in &p.policies {
        text.push_str(&format!(
            "  {:<8} {:<14} {}\n",
            pol.table.family().to_string(),
            pol.name,
            pol.summary
        ));
    }
    crate::output::emit(&text)
}
