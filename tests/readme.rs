//! The console examples of README.md and of the guide (every `docs/**/*.md`), run against
//! the built binary and compared with their shown output by trycmd, so that the
//! documentation cannot drift from the binary.
//!
//! Each ```console block belongs to a scene (tests/readme/scenes.rs): a scene names its
//! document and the blocks it runs there; its blocks run in the document's order in one
//! folder of their own, prepared by its setup, so a block sees what the blocks before it in
//! its scene did. trycmd runs all the blocks of a file in one folder, so every scene gets a
//! copy of its document in which only its own blocks are live (`console,ignore` for the
//! others, the lines otherwise the same). The README of a project that `sqlrun new` writes
//! is run the same way, in such a project.
//!
//! `TRYCMD=overwrite cargo test --test readme` writes each block's actual output back into
//! the document it came from, and the new project's README into src/project/scaffold.rs (run it
//! twice when the scaffold's commands changed: the binary that wrote the project was built
//! before). trycmd keeps the placeholders that still match: `[..]` (any text within a line)
//! for times, run times, process ids and paths that differ from run to run, `[CWD]` for the
//! block's folder.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const SQLRUN: &str = env!("CARGO_BIN_EXE_sqlrun");

/// The programs besides sqlrun that the examples run. trycmd skips a step whose program it
/// does not know, silently, so each is found on PATH here (or the test fails), and a console
/// block that runs any other program fails the layout check.
const PROGRAMS: &[&str] = &["sqlite3", "cat", "sed"];

fn on_path(program: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|folder| folder.join(program))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!("{program} is not on PATH: the documentation's examples run it (apt-get install {program})")
        })
}

/// The program each `$ ` line of a live console block runs (after `NAME=value` words).
fn programs(block: &str) -> Vec<String> {
    block
        .lines()
        .filter_map(|line| line.strip_prefix("$ "))
        .filter_map(|command| shlex::Shlex::new(command).find(|word| !word.contains('=')))
        .collect()
}

/// One way to prepare a scene's folder before its blocks run.
enum Setup {
    /// `sqlrun ARGS`, which must succeed (stdout and stderr are not shown anywhere).
    Sqlrun(&'static [&'static str]),
    /// `sqlrun ARGS` that is expected to exit with this code.
    SqlrunExit(i32, &'static [&'static str]),
    /// SQL run by the sqlite3 shell on the folder's sqlrun.db.
    Sql(&'static str),
    /// A file written into the folder.
    File(&'static str, &'static str),
    /// A line inserted into a file, after the first line that starts with the prefix.
    Insert(&'static str, &'static str, &'static str),
}

/// Console blocks of one document that run together, in its order, in one folder prepared
/// by `setup`: a section (its heading without the #s: all its console blocks) or one block
/// of it (`Section#2`: its second).
struct Scene {
    /// The document, from the repository's root: `README.md`, `docs/src/...`.
    file: &'static str,
    /// The scene's folder; unique.
    name: &'static str,
    blocks: &'static [&'static str],
    setup: &'static [&'static [Setup]],
}

#[path = "readme/scenes.rs"]
mod scenes;

/// A piece of a document: prose and other blocks as they are, or a console block (its
/// fences included) with the section it is in and its number there (from 1).
enum Chunk {
    Text(String),
    Console {
        section: String,
        number: usize,
        text: String,
    },
}

/// A Markdown file whose console blocks are run: README.md, or a page under docs/.
struct Document {
    /// From the repository's root, with `/`: what a scene's `file` names.
    path: String,
    text: String,
    chunks: Vec<Chunk>,
}

impl Document {
    fn read(path: &str) -> Document {
        let text = fs::read_to_string(Path::new(ROOT).join(path)).unwrap();
        let chunks = chunks(&text);
        Document {
            path: path.to_string(),
            text,
            chunks,
        }
    }

    /// The document's file name (`commands.md`): its scenes' copies are named so.
    fn file_name(&self) -> &str {
        self.path.rsplit('/').next().expect("a path")
    }
}

/// README.md, then every `.md` under docs/ (but mdBook's output, docs/book), by path.
fn documents() -> Vec<Document> {
    let mut paths = Vec::new();
    markdown_under(&Path::new(ROOT).join("docs"), "docs", &mut paths);
    paths.sort();
    std::iter::once("README.md".to_string())
        .chain(paths)
        .map(|path| Document::read(&path))
        .collect()
}

fn markdown_under(dir: &Path, relative: &str, out: &mut Vec<String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().expect("a UTF-8 file name");
        let path = format!("{relative}/{name}");
        if entry.file_type().unwrap().is_dir() {
            if path != "docs/book" {
                markdown_under(&entry.path(), &path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// A document cut into chunks. Headings are found outside code blocks only, so a
/// `# comment` in one is not a heading.
fn chunks(text: &str) -> Vec<Chunk> {
    let mut out = vec![Chunk::Text(String::new())];
    let mut section = String::new();
    let mut number = 0;
    let mut fence: Option<String> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(open) = &fence {
            let closes = trimmed.trim_end() == open.as_str();
            push(&mut out, line);
            if closes {
                fence = None;
                out.push(Chunk::Text(String::new()));
            }
            continue;
        }
        if trimmed.starts_with("```") {
            let ticks = trimmed.chars().take_while(|c| *c == '`').count();
            fence = Some("`".repeat(ticks));
            if line.starts_with("```console") {
                number += 1;
                out.push(Chunk::Console {
                    section: section.clone(),
                    number,
                    text: String::new(),
                });
            }
        } else if line.starts_with('#') {
            section = line.trim_start_matches('#').trim().to_string();
            number = 0;
        }
        push(&mut out, line);
    }
    out
}

fn push(chunks: &mut [Chunk], line: &str) {
    match chunks.last_mut().expect("one chunk at least") {
        Chunk::Text(text) | Chunk::Console { text, .. } => text.push_str(line),
    }
}

/// The scene that runs a console block of `file`: the one that names the block
/// (`Section#N`), else the one that names its section.
fn owner(file: &str, section: &str, number: usize) -> Option<&'static Scene> {
    let block = format!("{section}#{number}");
    let named = |name: &str| {
        scenes::SCENES
            .iter()
            .find(|scene| scene.file == file && scene.blocks.contains(&name))
    };
    named(&block).or_else(|| named(section))
}

/// A console block turned off (`console,ignore`), its lines otherwise the same.
fn silenced(block: &str) -> String {
    let (first, rest) = block.split_once('\n').expect("a fence line");
    format!("{},ignore\n{rest}", first.trim_end())
}

fn unsilenced(block: &str) -> String {
    block.replacen("```console,ignore", "```console", 1)
}

/// A fence at the start of a line that has no info string is read by trycmd as a console
/// block; the documents' untested blocks must say what they are (```text, ```sh, ...).
fn untagged_fences(text: &str) -> Vec<usize> {
    let mut open = false;
    let mut lines = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            if !open && line.trim_end() == "```" {
                lines.push(number + 1);
            }
            open = !open;
        }
    }
    lines
}

fn run_setup(dir: &Path, steps: &[Setup]) {
    for step in steps {
        match step {
            Setup::Sqlrun(args) => sqlrun(dir, 0, args),
            Setup::SqlrunExit(code, args) => sqlrun(dir, *code, args),
            Setup::Sql(sql) => {
                let out = Command::new("sqlite3")
                    .current_dir(dir)
                    .args(["sqlrun.db", sql])
                    .output()
                    .expect("sqlite3 runs (the documentation's examples use the sqlite3 shell)");
                assert!(out.status.success(), "setup sqlite3 {sql}: {out:?}");
            }
            Setup::File(path, text) => {
                let path = dir.join(path);
                fs::create_dir_all(path.parent().expect("a file in a folder")).unwrap();
                fs::write(path, text).unwrap();
            }
            Setup::Insert(path, prefix, line) => insert_line(&dir.join(path), prefix, line),
        }
    }
}

fn insert_line(path: &Path, prefix: &str, line: &str) {
    let text = fs::read_to_string(path).unwrap();
    let at = text
        .lines()
        .position(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("{} has no line {prefix}...", path.display()));
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(at + 1, line);
    fs::write(path, lines.join("\n") + "\n").unwrap();
}

fn sqlrun(dir: &Path, code: i32, args: &[&str]) {
    let out = Command::new(SQLRUN)
        .current_dir(dir)
        .args(args)
        .envs(environment())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "setup sqlrun {args:?}: {out:?}"
    );
}

/// What every command sees: the examples' user, no colour, and none of the settings a
/// developer's shell may have exported (an empty variable counts as unset); progress
/// lines by count only.
fn environment() -> Vec<(&'static str, &'static str)> {
    vec![
        ("USER", "alice"),
        ("NO_COLOR", "1"),
        ("TZ", "UTC"),
        ("SQLRUN_DB", ""),
        ("SQLRUN_SCHEMA", ""),
        ("SQLRUN_TEMPLATES", ""),
        ("SQLRUN_TIMEZONE", ""),
        // A progress line by time would come and go with the machine's speed.
        ("SQLRUN_PROGRESS_SECONDS", "0"),
    ]
}

/// Writes the scene's copy of its document (only its blocks live) and prepares its folder
/// (`NAME.in` beside `NAME.md`, which trycmd makes the blocks' working folder).
fn prepare(root: &Path, scene: &Scene, document: &Document) -> PathBuf {
    let folder = root.join(scene.name);
    let copy = folder.join(document.file_name());
    let work = copy.with_extension("in");
    fs::create_dir_all(&work).unwrap();
    fs::write(&copy, scene_copy(scene, document)).unwrap();
    for steps in scene.setup {
        run_setup(&work, steps);
    }
    copy
}

/// The document with only the scene's console blocks live.
fn scene_copy(scene: &Scene, document: &Document) -> String {
    document
        .chunks
        .iter()
        .map(|chunk| match chunk {
            Chunk::Text(text) => text.clone(),
            Chunk::Console {
                section,
                number,
                text,
            } => match owner(&document.path, section, *number) {
                Some(owner) if owner.name == scene.name => text.clone(),
                _ => silenced(text),
            },
        })
        .collect()
}

/// The document again, each console block taken from its scene's (overwritten) copy.
fn merged(document: &Document, copies: &BTreeMap<&str, Vec<Chunk>>) -> String {
    let mut out = String::new();
    for (index, chunk) in document.chunks.iter().enumerate() {
        match chunk {
            Chunk::Text(text) => out.push_str(text),
            Chunk::Console {
                section,
                number,
                text,
            } => {
                let scene =
                    owner(&document.path, section, *number).expect("checked by layout_problems");
                match &copies[scene.name][index] {
                    Chunk::Console { text: copied, .. } => out.push_str(&unsilenced(copied)),
                    Chunk::Text(_) => out.push_str(text),
                }
            }
        }
    }
    out
}

/// What is wrong with a document's layout: a fence without a language, an indented console
/// block, a block that runs an unknown program, a block no scene claims.
fn layout_problems(document: &Document) -> Vec<String> {
    let path = &document.path;
    let mut problems = Vec::new();
    let untagged = untagged_fences(&document.text);
    if !untagged.is_empty() {
        problems.push(format!(
            "{path} lines {untagged:?}: a fence without a language is run by trycmd as a \
             console block; write ```console (tested) or ```text / ```sh (not tested)"
        ));
    }
    let indented: Vec<usize> = (document.text.lines().enumerate())
        .filter(|(_, line)| line.starts_with(' ') && line.trim_start().starts_with("```console"))
        .map(|(number, _)| number + 1)
        .collect();
    if !indented.is_empty() {
        problems.push(format!(
            "{path} lines {indented:?}: trycmd does not see an indented console block; \
             start its fence at the beginning of the line"
        ));
    }
    for chunk in &document.chunks {
        if let Chunk::Console {
            section,
            number,
            text,
        } = chunk
        {
            for program in programs(text) {
                if program != "sqlrun" && !PROGRAMS.contains(&program.as_str()) {
                    problems.push(format!(
                        "{path} section {section:?}, console block {number} runs {program}: \
                         add it to PROGRAMS in tests/readme.rs (trycmd would skip it silently)"
                    ));
                }
            }
            if owner(path, section, *number).is_none() {
                problems.push(format!(
                    "{path} section {section:?}, console block {number}: no scene in \
                     tests/readme/scenes.rs runs it: add it to one (with the setup it needs)"
                ));
            }
        }
    }
    problems
}

/// What is wrong with the scenes: two of one name, or one that would run nothing (its
/// document is not read, or a name of its blocks finds no console block: a heading renamed
/// or a block moved away).
fn scene_problems(documents: &[Document]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut names = BTreeSet::new();
    for scene in scenes::SCENES {
        if !names.insert(scene.name) {
            problems.push(format!("two scenes are named {:?}", scene.name));
        }
        let Some(document) = documents.iter().find(|d| d.path == scene.file) else {
            problems.push(format!(
                "scene {:?} runs blocks of {}, which is not README.md or a page under docs/",
                scene.name, scene.file
            ));
            continue;
        };
        for name in scene.blocks {
            let claims = document.chunks.iter().any(|chunk| match chunk {
                Chunk::Console {
                    section, number, ..
                } => *name == section || *name == format!("{section}#{number}"),
                Chunk::Text(_) => false,
            });
            if !claims {
                problems.push(format!(
                    "scene {:?} names {name:?}, but {} has no console block there (a heading \
                     renamed, or the block moved?)",
                    scene.name, scene.file
                ));
            }
        }
    }
    problems
}

fn assert_no_problems(problems: Vec<String>) {
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn documentation_console_blocks() {
    let documents = documents();
    assert_no_problems(scene_problems(&documents));
    assert_no_problems(documents.iter().flat_map(layout_problems).collect());
    let root = tempfile::tempdir().unwrap();
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("sqlrun", Path::new(SQLRUN))
        .register_bins(PROGRAMS.iter().map(|program| (*program, on_path(program))))
        .timeout(std::time::Duration::from_secs(60));
    for (key, value) in environment() {
        cases.env(key, value);
    }
    // The scenes' setups are independent: prepared side by side.
    let paths: Vec<(&Scene, PathBuf)> = std::thread::scope(|scope| {
        let documents = &documents;
        let root = root.path();
        let preparing: Vec<_> = (scenes::SCENES.iter())
            .map(|scene| {
                scope.spawn(move || {
                    let document = (documents.iter())
                        .find(|document| document.path == scene.file)
                        .expect("checked by scene_problems");
                    (scene, prepare(root, scene, document))
                })
            })
            .collect();
        preparing.into_iter().map(|p| p.join().unwrap()).collect()
    });
    for (_, path) in &paths {
        cases.case(path);
    }
    let scaffold = scaffold_readme(root.path());
    cases.case(&scaffold);
    cases.run();
    if std::env::var("TRYCMD").as_deref() == Ok("overwrite") {
        overwrite_scaffold(&fs::read_to_string(&scaffold).unwrap());
        let copies: BTreeMap<&str, Vec<Chunk>> = (paths.iter())
            .map(|(scene, path)| (scene.name, chunks(&fs::read_to_string(path).unwrap())))
            .collect();
        for document in &documents {
            let blessed = merged(document, &copies);
            if blessed != document.text {
                fs::write(Path::new(ROOT).join(&document.path), blessed).unwrap();
            }
        }
    }
}

/// src/project/scaffold.rs with the new project's README (its `README` constant) as blessed.
fn overwrite_scaffold(blessed: &str) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/project/scaffold.rs");
    let source = fs::read_to_string(path).unwrap();
    let start = "const README: &str = r#\"";
    let begin = source
        .find(start)
        .expect("src/project/scaffold.rs has const README")
        + start.len();
    let end = begin + source[begin..].find("\"#;").expect("its raw string ends");
    fs::write(
        path,
        format!("{}{blessed}{}", &source[..begin], &source[end..]),
    )
    .unwrap();
}

/// The README of a new project, run in such a project (`sqlrun new`, nothing else).
fn scaffold_readme(root: &Path) -> PathBuf {
    let folder = root.join("scaffold");
    fs::create_dir_all(&folder).unwrap();
    let project = folder.join("README.in");
    sqlrun(&folder, 0, &["new", project.to_str().unwrap()]);
    fs::copy(project.join("README.md"), folder.join("README.md")).unwrap();
    folder.join("README.md")
}

/// Re-blessing puts every block back where it was: each document rebuilt from the scenes'
/// copies, before any output changed, is the document.
#[test]
fn scene_copies_merge_back_into_their_documents() {
    let documents = documents();
    let root = tempfile::tempdir().unwrap();
    let copies: BTreeMap<&str, Vec<Chunk>> = (scenes::SCENES.iter())
        .map(|scene| {
            let document = (documents.iter())
                .find(|document| document.path == scene.file)
                .unwrap_or_else(|| panic!("scene {:?}: no document {}", scene.name, scene.file));
            let path = root.path().join(scene.name).join(document.file_name());
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, scene_copy(scene, document)).unwrap();
            (scene.name, chunks(&fs::read_to_string(path).unwrap()))
        })
        .collect();
    for document in &documents {
        assert_eq!(
            merged(document, &copies),
            document.text,
            "{}",
            document.path
        );
    }
}

/// The documents are found (README.md and the guide's pages), and the layout check catches
/// what trycmd would run wrongly or not at all.
#[test]
fn the_layout_check_catches_what_trycmd_would_miss() {
    let documents = documents();
    assert!(documents.iter().any(|d| d.path == "README.md"));
    assert!(
        documents.iter().any(|d| d.path == "docs/src/SUMMARY.md"),
        "the guide's pages under docs/src are read"
    );
    let page = |text: &str| Document {
        path: "docs/src/nowhere.md".to_string(),
        text: text.to_string(),
        chunks: chunks(text),
    };
    for (what, text) in [
        (
            "a block no scene claims",
            "# Nowhere\n\n```console\n$ sqlrun --version\n```\n",
        ),
        (
            "an untagged fence",
            "# Nowhere\n\n```\n$ sqlrun --version\n```\n",
        ),
        (
            "an indented block",
            "# Nowhere\n\n  ```console\n  $ sqlrun --version\n  ```\n",
        ),
    ] {
        assert!(
            !layout_problems(&page(text)).is_empty(),
            "{what} is not caught"
        );
    }
    let unknown = page("# Set up and try it\n\n```console\n$ curl example.com\n```\n");
    let problems = layout_problems(&unknown);
    assert!(
        problems.iter().any(|p| p.contains("runs curl")),
        "an unknown program is not caught: {problems:?}"
    );
}
