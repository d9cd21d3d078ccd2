//! The floor plan, checked (docs: the architecture chapter): src/ holds only the wings and
//! the four files at its root; each wing imports only the wings below it in `FLOORS` (so
//! none import each other in a cycle); clap stays in the command line (src/cli/, the
//! dispatch in lib.rs, main.rs), and only main.rs prints or exits for it; only the command
//! layer and output itself use output; only output and main.rs write to stdout or stderr.
//! Reads the `crate::` paths of the source.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each Rust file under src/, with its top-level module (`src/db/row.rs` -> `db`).
fn sources() -> Vec<(String, PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(&src).unwrap();
                let first = rel.components().next().unwrap().as_os_str();
                let module = first.to_str().unwrap().trim_end_matches(".rs").to_string();
                let text = code_only(&std::fs::read_to_string(&path).unwrap());
                out.push((module, rel.to_path_buf(), text));
            }
        }
    }
    out.sort();
    out
}

/// The source without comments and without its unit tests (a test may use what the module
/// itself does not).
fn code_only(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(at) if !l[..at].contains('"') => &l[..at],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules a file's code names: `crate::x::...` and `crate::{x, y::z}`.
fn uses(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                found.insert(ident(part.trim()));
            }
        } else {
            found.insert(ident(rest));
        }
    }
    found.retain(|m| !m.is_empty() && m.chars().next().unwrap().is_lowercase());
    found
}

fn ident(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, _, text) in sources() {
        if module == "lib" || module == "main" {
            continue;
        }
        let mut used = uses(&text);
        used.remove(&module);
        graph.entry(module).or_default().extend(used);
    }
    graph
}

/// The modules that reach themselves again, each cycle once (as a sorted list).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<Vec<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    graph
        .keys()
        .filter(|m| reached[m].contains(*m))
        .map(|m| {
            let mut cycle: Vec<String> = graph
                .keys()
                .filter(|o| reached[m].contains(*o) && reached[o].contains(m))
                .cloned()
                .collect();
            cycle.sort();
            cycle
        })
        .collect()
}

/// The wings from the bottom up: each may import only those before it. db, text and exit
/// import nothing of the crate; error names their values; the domain wings follow in the
/// order they build on each other; then output, the commands, and the command line.
const FLOORS: &[&str] = &[
    "db",
    "text",
    "exit",
    "error",
    "dates",
    "store",
    "pipeline",
    "project",
    "reservations",
    "seals",
    "sources",
    "run",
    "demo",
    "output",
    "commands",
    "cli",
];

/// What may sit at src/'s root besides the wing folders.
const ROOT_FILES: &[&str] = &["main.rs", "lib.rs", "error.rs", "exit.rs"];

#[test]
fn src_holds_the_wings_and_four_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().to_string();
        if entry.path().is_dir() {
            assert!(
                FLOORS.contains(&name.as_str()),
                "src/{name}/ is no wing of the floor plan: add it to FLOORS (and the architecture chapter) or move it into one"
            );
        } else {
            assert!(
                ROOT_FILES.contains(&name.as_str()),
                "src/{name}: a module at src/'s root; move it into the wing it serves"
            );
        }
    }
}

#[test]
fn each_wing_imports_only_the_wings_below_it() {
    let graph = graph();
    for (wing, used) in &graph {
        let floor = FLOORS
            .iter()
            .position(|f| f == wing)
            .unwrap_or_else(|| panic!("{wing} is not in FLOORS"));
        for other in used {
            let below = FLOORS[..floor].contains(&other.as_str());
            assert!(
                below,
                "{wing} imports {other}, which is not below it: {:?}",
                FLOORS
            );
        }
    }
}

#[test]
fn modules_import_each_other_without_a_cycle() {
    let graph = graph();
    assert!(graph.len() > 12, "read the modules of src/: {graph:?}");
    let found = cycles(&graph);
    assert!(
        found.is_empty(),
        "import cycles among src/ modules: {found:?}"
    );
}

#[test]
fn the_checker_finds_a_cycle() {
    let mut graph = BTreeMap::new();
    graph.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    graph.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    graph.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(
        cycles(&graph),
        BTreeSet::from([vec!["a".to_string(), "b".to_string()]])
    );
    assert_eq!(
        uses("use crate::db::{Db, Row};\nuse crate::{error::Result, queries};\nx = crate::store::now();"),
        BTreeSet::from(["db".into(), "error".into(), "queries".into(), "store".into()])
    );
}

#[test]
fn clap_stays_in_the_command_line() {
    for (module, path, text) in sources() {
        if ["cli", "lib", "main"].contains(&module.as_str()) {
            continue;
        }
        assert!(
            !text.contains("clap"),
            "{}: clap belongs in src/cli/ and the dispatch (lib.rs)",
            path.display()
        );
    }
}

#[test]
fn only_main_prints_or_exits_for_clap() {
    for (module, path, text) in sources() {
        if module == "main" {
            continue;
        }
        // clap's `Error::exit` and `Error::print` (only where clap is named: error.rs has
        // an `exit()` of its own, the exit map).
        let clap_here = text.contains("clap");
        for call in [".exit()", ".print()", "process::exit"] {
            let counts = clap_here || call == "process::exit";
            assert!(
                !(counts && text.contains(call)),
                "{}: `{call}` prints or exits from the library; return a value for main.rs",
                path.display()
            );
        }
    }
}

#[test]
fn only_commands_use_output_and_only_output_prints() {
    for (module, path, text) in sources() {
        let above = ["commands", "output", "lib", "main"].contains(&module.as_str());
        assert!(
            above || !uses(&text).contains("output"),
            "{}: below the command layer nothing imports output; return a value instead",
            path.display()
        );
        let prints = [
            "println!",
            "eprintln!",
            "print!(",
            "eprint!(",
            "io::stdout",
            "io::stderr",
        ]
        .iter()
        .any(|p| text.contains(p));
        assert!(
            !prints || module == "output" || module == "main",
            "{}: only src/output/ writes to stdout or stderr",
            path.display()
        );
    }
}

/// Rows are read by column name into typed structs (src/db/read.rs); a positional read
/// (`.bool(3)`, `.text(0)`, `.get(2)`) would shift meaning silently when a query gains a
/// column. Only src/db/ itself reads by position.
#[test]
fn no_row_is_read_by_position_outside_db() {
    for (module, path, text) in sources() {
        if module == "db" {
            continue;
        }
        for accessor in [
            ".bool(",
            ".text(",
            ".i64(",
            ".opt_text(",
            ".opt_i64(",
            ".value(",
            ".get(",
        ] {
            let mut rest = text.as_str();
            while let Some(at) = rest.find(accessor) {
                rest = &rest[at + accessor.len()..];
                assert!(
                    !rest.starts_with(|c: char| c.is_ascii_digit()),
                    "{}: `{accessor}N` reads a row by position; read it by name (Row::read, Db::rows_as)",
                    path.display()
                );
            }
        }
    }
}
