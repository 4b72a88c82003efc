//! The book cannot drift: every `vcsim` command in a `sh` block of every
//! page under `book/src/` runs here and must succeed. Commands run from the
//! repository's root; what they write (`--out`, `--timeline`, `--trace`) goes to a
//! temporary directory, and a later command of the same page that names a
//! written file reads it from there. The few commands that cannot run here
//! are listed in `SKIPPED`, each with the reason.

mod common;

use common::{root, vcsim};
use std::collections::BTreeMap;
use std::path::Path;

/// Commands shown but not run here, and why (matched by their start).
const SKIPPED: &[(&str, &str)] = &[
    (
        "cargo ",
        "cargo's own commands: CI runs the build and the tests",
    ),
    (
        "scripts/reproduce-paper.sh",
        "all the paper's sweeps (four thousand runs): run by hand, figures in the book",
    ),
    (
        "target/release/vcsim",
        "a plugin built outside the repository; tests/dylib.rs runs the example plugin the same way",
    ),
    (
        "vcsim sweep big.toml",
        "`big.toml` stands for the reader's own sweep; tests/sweep.rs shards and merges a real one",
    ),
    ("vcsim merge part", "the merge of the example above"),
    (
        "vcsim search --policy CS1 --policy CS2 --metric waste --scenario",
        "a 2,000-run search (35 s in release): tests/search.rs runs searches end to end, and the scenario it found is shipped and compared on the same page",
    ),
    (
        "vcsim search --policy WF2 --policy WF1 --metric waste --scenario",
        "a 2,000-run search (35 s in release): as above",
    ),
    ("parallel ", "GNU parallel around the same shards"),
    ("jid=", "a Slurm submission"),
    ("sbatch ", "a Slurm submission"),
];

/// The `sh` blocks' commands of a page, continuation lines joined, comments
/// (` # ...` and whole `#` lines) dropped.
fn commands(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            in_sh = !in_sh && line.trim() == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let text = line.split(" # ").next().unwrap().trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        if let Some(head) = text.strip_suffix('\\') {
            pending.push_str(head.trim());
            pending.push(' ');
            continue;
        }
        pending.push_str(text);
        out.push(std::mem::take(&mut pending));
    }
    out
}

fn skipped(cmd: &str) -> bool {
    SKIPPED.iter().any(|(start, _)| cmd.starts_with(start))
}

#[test]
fn every_vcsim_command_in_the_book_runs() {
    let dir = std::env::temp_dir().join(format!("vcsim-book-{}", std::process::id()));
    let mut ran = 0;
    let mut pages: Vec<_> = std::fs::read_dir(root().join("book/src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        let stem = page.file_stem().unwrap().to_string_lossy().into_owned();
        let out_dir = dir.join(&stem);
        std::fs::create_dir_all(&out_dir).unwrap();
        // Files this page's commands wrote: name in the book -> real path.
        let mut written: BTreeMap<String, String> = BTreeMap::new();
        for cmd in commands(&text) {
            if skipped(&cmd) {
                continue;
            }
            let words: Vec<&str> = cmd.split_whitespace().collect();
            assert_eq!(
                words[0],
                "vcsim",
                "{}: `{cmd}` is neither a vcsim command nor listed in SKIPPED",
                page.display()
            );
            let mut args: Vec<String> = Vec::new();
            for (i, w) in words.iter().enumerate().skip(1) {
                let arg = if matches!(words[i - 1], "--out" | "--timeline" | "--trace") {
                    let p = out_dir.join(w).to_string_lossy().into_owned();
                    written.insert(w.to_string(), p.clone());
                    p
                } else {
                    written.get(*w).cloned().unwrap_or_else(|| w.to_string())
                };
                args.push(arg);
            }
            let r = vcsim(&args).run();
            assert_eq!(
                r.status(),
                0,
                "{}: `{cmd}` failed: {}",
                page.display(),
                r.stderr()
            );
            ran += 1;
        }
        for (name, path) in &written {
            assert!(
                Path::new(path).exists(),
                "{}: `{name}` was not written",
                page.display()
            );
        }
    }
    assert!(ran >= 20, "only {ran} commands found in the book");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn continuation_lines_are_joined_and_comments_dropped() {
    let page = "text\n```sh\nvcsim compare a.toml \\\n    --policy X  # two policies\n# a comment\nvcsim list\n```\n";
    assert_eq!(
        commands(page),
        ["vcsim compare a.toml --policy X", "vcsim list"]
    );
}
