//! Imports one BOINC file or directory and prints the outcome and the time:
//! `cargo run -p vcsim-import --example import_file -- PATH`.

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: import_file PATH");
        std::process::exit(2);
    };
    let t = std::time::Instant::now();
    let r = vcsim_import::import_path(std::path::Path::new(&path));
    let secs = t.elapsed().as_secs_f64();
    match r {
        Ok(imp) => println!(
            "ok: {} bytes of TOML, {} warnings, {secs:.2} s",
            imp.toml.len(),
            imp.warnings.len()
        ),
        Err(e) => {
            println!("error: {e} ({secs:.2} s)");
            std::process::exit(2);
        }
    }
}
