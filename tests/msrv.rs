//! `rust-version` is what the code needs: the workspace declares at least
//! the newest `rust-version` of any locked dependency (clippy's
//! `incompatible_msrv` lint, run by CI with `-D warnings`, checks the
//! workspace's own use of the standard library against it).

use std::process::Command;

fn version(v: &str) -> Vec<u32> {
    v.split('.').map(|x| x.parse().unwrap_or(0)).collect()
}

#[test]
fn rust_version_covers_every_locked_dependency() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // The dependencies of this machine's platform: a fresh machine has
    // downloaded only those (a Windows-only crate is not there offline).
    let rustc = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc runs");
    let info = String::from_utf8_lossy(&rustc.stdout);
    let host = info
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host");
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", host])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let ours = env!("CARGO_PKG_RUST_VERSION");
    let mut newest = ("", "0".to_string());
    for p in meta["packages"].as_array().expect("packages") {
        if let Some(rv) = p["rust_version"].as_str() {
            if version(rv) > version(&newest.1) {
                newest = (p["name"].as_str().unwrap_or("?"), rv.to_string());
            }
        }
    }
    // Our own crates inherit the workspace's value; every other must not need more.
    assert!(
        version(ours) >= version(&newest.1),
        "rust-version = {ours}, but `{}` needs {}",
        newest.0,
        newest.1
    );
}
