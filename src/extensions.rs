//! The registry a command runs with: the built-ins, plus the policies of
//! `--plugin` libraries and of scripts named in policy specs.

use crate::Failure;
use std::path::{Path, PathBuf};
use vcsim_framework::{Family, PolicySpec, Registry};

/// Parses a policy spec as the command line and sweep files take it: a
/// script named without its family (`--policy x.rhai`) takes the family
/// whose hooks it implements (see [`script_family`]).
pub fn parse_spec(s: &str) -> Result<PolicySpec, String> {
    PolicySpec::parse_with(s, &script_family)
}

/// The family a script serves, as `vcsim check` finds it: the one whose
/// required hooks it defines. A script that serves none, or several, is
/// refused with the families it could serve.
pub fn script_family(path: &str) -> Result<Family, String> {
    let script = vcsim_script::Script::load(Path::new(path))?;
    match script.families().as_slice() {
        [one] => Ok(*one),
        [] => {
            // `check` says what the script defines instead.
            Err(vcsim_script::check(Path::new(path))
                .err()
                .unwrap_or_else(|| format!("{path}: defines no policy hook")))
        }
        several => {
            let keys: Vec<&str> = several.iter().map(|f| f.key()).collect();
            Err(format!(
                "{path} implements the hooks of several families ({}); say which, as in `{}={path}`",
                keys.join(", "),
                keys[0]
            ))
        }
    }
}

/// Builds the registry for these plugins and specs, and checks that every
/// name in every spec resolves before the first run starts.
pub fn registry_for(plugins: &[PathBuf], specs: &[PolicySpec]) -> Result<Registry, Failure> {
    let mut reg = Registry::builtins().map_err(Failure::input)?;
    crate::dylibs::load_plugins(&mut reg, plugins)?;
    let mut warned: Vec<&str> = Vec::new();
    for spec in specs {
        for f in Family::ALL {
            let name = spec.name(f);
            if name.ends_with(".rhai") && reg.get(f, name).is_none() {
                crate::scripts::register_script(&mut reg, f, name)?;
                // Said by `run` as by `check`, once a script: a misspelt
                // hook is never called.
                if !warned.contains(&name) {
                    warned.push(name);
                    for w in
                        vcsim_script::near_miss_hooks(Path::new(name)).map_err(Failure::input)?
                    {
                        crate::output::note(&format!("warning: {}", crate::output::printable(&w)));
                    }
                }
            }
            if reg.get(f, name).is_none() {
                return Err(Failure::input(unknown(&reg, f, name)));
            }
        }
        reg.resolve(spec).map_err(Failure::input)?;
    }
    Ok(reg)
}

/// Loads the `--plugin` libraries alone, so that one that cannot load is
/// reported as itself (as `compare` reports it) before any file that
/// names policies is read, not blamed on that file's `policies`.
pub fn load_plugins_first(plugins: &[PathBuf]) -> Result<(), Failure> {
    if plugins.is_empty() {
        return Ok(());
    }
    registry_for(plugins, &[]).map(|_| ())
}

/// What to say of a name no policy of the family has: the names it has,
/// and how the other kinds of policy are named.
fn unknown(reg: &Registry, f: Family, name: &str) -> String {
    let known: Vec<&str> = reg
        .entries()
        .filter(|e| e.family == f)
        .map(|e| e.name.as_str())
        .collect();
    format!(
        "no {f} policy named `{}`; the known {f} policies are {}. A script is named by its path \
         (`{}=my_policy.rhai`); a compiled plugin's policies need `--plugin LIB`",
        crate::output::name(name),
        known.join(", "),
        f.key()
    )
}

/// The `--policy` specs; a script named without its family takes the one
/// its hooks implement. The first that does not parse is an input error.
pub fn parse_specs(policies: &[String]) -> Result<Vec<PolicySpec>, Failure> {
    policies
        .iter()
        .map(|p| parse_spec(p).map_err(Failure::input))
        .collect()
}

/// The spec a run takes without `--policy`: the default of every family
/// (`CS2_WF2_WS2_JC2`), except on a host whose projects have apps for its
/// GPUs, where WF2 and WS2 (written for CPUs) would leave the GPUs idle:
/// there the GPU-aware fetcher and server of work-fetch-and-gpus.
pub fn default_spec(scn: &vcsim_framework::Scenario) -> &'static str {
    let gpu_apps = scn.projects.iter().any(|p| {
        p.apps.iter().any(|a| {
            a.gpu
                .as_ref()
                .is_some_and(|g| scn.host.gpus.iter().any(|h| h.kind == g.kind))
        })
    });
    if gpu_apps {
        "cpu=cs2,fetch=gpu,send=gpu,estimate=jc2"
    } else {
        "CS2_WF2_WS2_JC2"
    }
}
