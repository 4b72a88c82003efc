//! The crate's files import each other in one direction only: no module
//! names another that (directly or through others) names it back, and no
//! module but `lib.rs` reaches for an item of the crate root.

use std::collections::BTreeMap;
use std::path::Path;

/// The modules each file of `src/` names through `crate::`, comments left out.
fn imports() -> BTreeMap<String, Vec<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<_> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let modules: Vec<String> = files
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let mut graph = BTreeMap::new();
    for (p, m) in files.iter().zip(&modules) {
        let text = std::fs::read_to_string(p).unwrap();
        let mut uses = Vec::new();
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (i, _) in line.match_indices("crate::") {
                let rest = &line[i + "crate::".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                // `crate::{a, b}` or an item of the root: both name `lib`.
                let target = if modules.contains(&name) && name != "lib" {
                    name
                } else {
                    "lib".to_string()
                };
                if &target != m && !uses.contains(&target) {
                    uses.push(target);
                }
            }
        }
        graph.insert(m.clone(), uses);
    }
    graph
}

#[test]
fn the_modules_import_each_other_one_way() {
    let graph = imports();
    assert!(graph.contains_key("output") && graph.contains_key("plot"));
    // Depth-first search for a cycle, reporting its path.
    fn visit(
        m: &str,
        graph: &BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) {
        if done.iter().any(|d| d == m) {
            return;
        }
        if let Some(at) = path.iter().position(|p| p == m) {
            panic!("import circle: {} -> {m}", path[at..].join(" -> "));
        }
        path.push(m.to_string());
        for n in &graph[m] {
            visit(n, graph, path, done);
        }
        path.pop();
        done.push(m.to_string());
    }
    let mut done = Vec::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done);
    }
    assert!(
        !graph["plot"].contains(&"output".to_string()),
        "plot draws a summary; it does not know the files: {graph:?}"
    );
}
