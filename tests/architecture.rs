//! Invariants of ARCHITECTURE.md that the compiler does not check, checked
//! here on the sources:
//!
//! - no import circles between the files of a crate: data flows one way
//!   (a file may use its ancestors' items, as a submodule that implements
//!   part of its parent does, and its own submodules);
//! - the framework reads no environment and no clock, prints nothing,
//!   writes no file, and iterates no hash map;
//! - the code map names every source file, and every file and test the
//!   document names exists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The module path of a file of `src` (`sim/progress.rs` -> `sim::progress`;
/// `sim/mod.rs` -> `sim`; `lib.rs` and `main.rs` -> the root, "").
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let parts: Vec<&str> = parts
        .iter()
        .map(String::as_str)
        .filter(|p| *p != "mod")
        .collect();
    if parts == ["lib"] || parts == ["main"] {
        return String::new();
    }
    parts.join("::")
}

/// The code of a file without its comments and string literals (good
/// enough for `use` lines and paths).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths a file's code names: `crate::a::b::...` and
/// `super::x::...` (resolved against `module`), `use` groups expanded one level.
fn references(module: &str, code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let parent = |m: &str| -> String {
        match m.rfind("::") {
            Some(i) => m[..i].to_string(),
            None => String::new(),
        }
    };
    let bytes = code.as_bytes();
    for (start, prefix) in [("crate::", None), ("super::", Some(()))] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start) {
            let at = from + i;
            from = at + start.len();
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            // The path after the prefix, up to a character that ends it.
            let rest = &code[from..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '{'))
                .unwrap_or(rest.len());
            let mut path = rest[..end].trim_end_matches(':').to_string();
            let mut base = if prefix.is_some() {
                parent(module)
            } else {
                String::new()
            };
            // `super::super::x`
            while let Some(r) = path.strip_prefix("super::") {
                base = parent(&base);
                path = r.to_string();
            }
            let group = path.find('{');
            let (head, items): (String, Vec<String>) = match group {
                Some(g) => {
                    let close = rest[g..].find('}').map_or(rest.len(), |c| g + c);
                    let inner = &rest[g + 1..close];
                    (
                        path[..g].trim_end_matches(':').to_string(),
                        inner
                            .split(',')
                            .map(|x| x.trim().split("::").next().unwrap_or("").to_string())
                            .filter(|x| !x.is_empty())
                            .collect(),
                    )
                }
                None => (path.clone(), vec![]),
            };
            let join = |a: &str, b: &str| {
                [a, b]
                    .iter()
                    .filter(|x| !x.is_empty())
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("::")
            };
            let head = join(&base, &head);
            out.push(head.clone());
            for it in items {
                out.push(join(&head, &it));
            }
        }
    }
    out
}

/// Files whose module is an ancestor of (or is) `a`.
fn is_within(a: &str, b: &str) -> bool {
    b.is_empty() || a == b || a.starts_with(&format!("{b}::"))
}

/// Items of a library crate's root that its other files name (`crate::X`
/// where `X` is no module): they would hide an import from the circle check.
fn root_items_used(src: &Path) -> Vec<String> {
    if !src.join("lib.rs").is_file() {
        return vec![];
    }
    let files = rust_files(src);
    let mut modules: BTreeSet<String> = files.iter().map(|f| module_of(src, f)).collect();
    // Another crate under a name (`pub use vcsim_dylib_abi as abi;`) is no item of this one.
    let lib = code_of(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    for line in lib.lines() {
        if let Some((_, alias)) = line
            .trim()
            .strip_prefix("pub use ")
            .and_then(|l| l.split_once(" as "))
        {
            modules.insert(alias.trim_end_matches(';').trim().to_string());
        }
    }
    let mut out = Vec::new();
    for f in &files {
        let m = module_of(src, f);
        if m.is_empty() {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(f).unwrap());
        if code.contains("use crate::*") {
            out.push(format!(
                "{}: crate::* (every item of the root)",
                f.display()
            ));
        }
        for r in references(&m, &code) {
            let first = r.split("::").next().unwrap_or("");
            if !first.is_empty()
                && !modules
                    .iter()
                    .any(|x| x == first || x.starts_with(&format!("{first}::")))
            {
                out.push(format!("{}: crate::{first}", f.display()));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The circles of imports between the files of `src`, if any.
fn import_circles(src: &Path) -> Vec<Vec<String>> {
    let files = rust_files(src);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(src, f)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let m = module_of(src, f);
        let code = code_of(&std::fs::read_to_string(f).unwrap());
        for r in references(&m, &code) {
            // The deepest file module that the path names.
            let mut target = r.clone();
            while !modules.contains(&target) {
                match target.rfind("::") {
                    Some(i) => target.truncate(i),
                    None => {
                        target.clear();
                        break;
                    }
                }
            }
            // A file may use its ancestors and its own submodules.
            if target.is_empty() || is_within(&m, &target) || is_within(&target, &m) {
                continue;
            }
            edges.entry(m.clone()).or_default().insert(target);
        }
    }
    // Strongly connected components with more than one file (Tarjan).
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        on: BTreeSet<String>,
        n: usize,
        out: Vec<Vec<String>>,
    }
    fn visit(t: &mut T, v: &str) {
        t.index.insert(v.to_string(), t.n);
        t.low.insert(v.to_string(), t.n);
        t.n += 1;
        t.stack.push(v.to_string());
        t.on.insert(v.to_string());
        let next: Vec<String> = t.edges.get(v).into_iter().flatten().cloned().collect();
        for w in next {
            if !t.index.contains_key(&w) {
                visit(t, &w);
                let lw = t.low[&w];
                let lv = t.low[v];
                t.low.insert(v.to_string(), lv.min(lw));
            } else if t.on.contains(&w) {
                let iw = t.index[&w];
                let lv = t.low[v];
                t.low.insert(v.to_string(), lv.min(iw));
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(&w);
                let done = w == v;
                comp.push(w);
                if done {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        edges: &edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        n: 0,
        out: Vec::new(),
    };
    for m in &modules {
        if !t.index.contains_key(m) {
            visit(&mut t, m);
        }
    }
    t.out
}

/// The `src` directories of the workspace's crates.
fn crate_sources() -> Vec<PathBuf> {
    let mut dirs = vec![root().join("src"), root().join("framework/src")];
    for group in [
        "crates",
        "plugins",
        "plugins/dylib",
        "tests/fixtures/dylibs",
    ] {
        for e in std::fs::read_dir(root().join(group)).unwrap().flatten() {
            let src = e.path().join("src");
            if src.is_dir() {
                dirs.push(src);
            }
        }
    }
    dirs.sort();
    dirs
}

#[test]
fn no_crate_has_an_import_circle_between_its_files() {
    let mut found = Vec::new();
    for src in crate_sources() {
        for c in import_circles(&src) {
            found.push(format!("{}: {}", src.display(), c.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn no_library_file_names_an_item_of_its_crate_root() {
    let mut found = Vec::new();
    for src in crate_sources() {
        found.extend(root_items_used(&src));
    }
    assert!(
        found.is_empty(),
        "names the crate root's items (use their modules):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_circle_finder_finds_a_circle() {
    let dir = std::env::temp_dir().join(format!("vcsim-arch-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("sim")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod view; mod sim; mod policy;").unwrap();
    std::fs::write(src.join("view.rs"), "use crate::sim::format_time;").unwrap();
    std::fs::write(src.join("sim/mod.rs"), "mod step; use crate::policy::X;").unwrap();
    std::fs::write(src.join("sim/step.rs"), "use super::Sim; // a child may").unwrap();
    std::fs::write(src.join("policy.rs"), "use crate::{model, view::View};").unwrap();
    let c = import_circles(&src);
    assert_eq!(c, vec![vec!["policy", "sim", "view"]]);
}

#[test]
fn the_framework_reads_no_environment_or_clock_and_prints_nothing() {
    let forbidden = [
        "std::env",
        "env::var",
        "println!",
        "eprintln!",
        "print!(",
        "eprint!(",
        "dbg!(",
        "std::time",
        "Instant::now",
        "SystemTime",
        "HashMap",
        "HashSet",
        "fs::write",
        "File::create",
    ];
    let mut found = Vec::new();
    for f in rust_files(&root().join("framework/src")) {
        let code = code_of(&std::fs::read_to_string(&f).unwrap());
        for word in forbidden {
            if code.contains(word) {
                found.push(format!("{}: {word}", f.display()));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The trees whose `.rs` files ARCHITECTURE.md's code map lists.
const MAPPED_TREES: [&str; 5] = ["framework", "plugins", "crates", "src", "tests"];

/// Every `.rs` file of [`MAPPED_TREES`], as a path from the repository's
/// root with `/` separators, sorted; build outputs (`target/`) left out.
fn mapped_files() -> Vec<String> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = MAPPED_TREES.iter().map(|t| root().join(t)).collect();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "target") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root()).unwrap();
                let parts: Vec<_> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect();
                out.push(parts.join("/"));
            }
        }
    }
    out.sort();
    out
}

fn architecture_md() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md at the root")
}

/// The code map names every source file by its path from the root, in
/// backticks (`` `framework/src/sim/mod.rs` ``), so that a file added,
/// moved or split shows up here until its line is written.
#[test]
fn every_source_file_is_on_the_code_map() {
    let map = architecture_md();
    let missing: Vec<String> = mapped_files()
        .into_iter()
        .filter(|f| !map.contains(&format!("`{f}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's code map lacks these files (one line each, \
         the path from the repository's root in backticks):\n{}",
        missing.join("\n")
    );
}

/// The other way round: every `.rs` file ARCHITECTURE.md names (in
/// backticks, from the root) exists, and every test it names as
/// `` `file.rs::...::test_name` `` is a function of that file.
#[test]
fn every_file_and_test_architecture_md_names_exists() {
    let map = architecture_md();
    let mut stale = Vec::new();
    for (i, _) in map.match_indices(".rs") {
        let Some(open) = map[..i].rfind('`') else {
            continue;
        };
        let Some(close) = map[i..].find('`') else {
            continue;
        };
        let token = &map[open + 1..i + close];
        if token.contains(char::is_whitespace)
            || !MAPPED_TREES
                .iter()
                .any(|t| token.starts_with(&format!("{t}/")))
        {
            continue;
        }
        let (file, item) = match token.split_once(".rs") {
            Some((f, rest)) => (format!("{f}.rs"), rest.rsplit("::").next().unwrap_or("")),
            None => continue,
        };
        let Ok(text) = std::fs::read_to_string(root().join(&file)) else {
            stale.push(format!("{token}: no such file"));
            continue;
        };
        if !item.is_empty() && !text.contains(&format!("fn {item}(")) {
            stale.push(format!("{token}: no `fn {item}` in {file}"));
        }
    }
    stale.sort();
    stale.dedup();
    assert!(
        stale.is_empty(),
        "ARCHITECTURE.md names:\n{}",
        stale.join("\n")
    );
}
