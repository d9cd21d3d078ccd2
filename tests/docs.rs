//! The documentation's links resolve: every relative link and image of README.md,
//! BENCHMARKS.md, RELIABILITY.md and the guide's pages (docs/src) names a file that exists,
//! and every `#anchor` a heading of the page it points into, with the ids mdBook and GitHub
//! give headings (lowercase, spaces to `-`, punctuation dropped, `-1`, `-2` for repeats).
//! mdbook-linkcheck (`mdbook build docs`, in CI) checks the book's files but not anchors;
//! this test checks both, and the pages outside the book, with `cargo test` alone.
//!
//! The book's own rules are checked too: its pages link only inside docs/src (mdBook turns
//! those links into links between its pages), and every page is in SUMMARY.md.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Component, Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The pages whose links are checked, from the repository's root.
fn pages() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ["README.md", "BENCHMARKS.md", "RELIABILITY.md"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let mut book = Vec::new();
    markdown_under(&Path::new(ROOT).join("docs/src"), &mut book);
    book.sort();
    out.extend(book);
    out
}

fn markdown_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            markdown_under(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path.strip_prefix(ROOT).unwrap().to_path_buf());
        }
    }
}

/// A page's text with mdBook's `{{#include FILE}}` lines replaced by the file (the whole
/// file: the guide includes no part of one).
fn expanded(page: &Path) -> String {
    let text = fs::read_to_string(Path::new(ROOT).join(page))
        .unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    text.lines()
        .map(|line| match include_target(line) {
            Some(target) => expanded(&normal(&page.parent().unwrap().join(target))),
            None => format!("{line}\n"),
        })
        .collect()
}

fn include_target(line: &str) -> Option<&str> {
    let inner = line
        .trim()
        .strip_prefix("{{#include ")?
        .strip_suffix("}}")?;
    Some(inner.trim())
}

/// `a/b/../c` as `a/c`, without asking the file system.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The lines outside fenced code blocks, with their numbers (from 1).
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<String> = None;
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(open) = &fence {
            if trimmed.trim_end() == open.as_str() {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") {
            let ticks = trimmed.chars().take_while(|c| *c == '`').count();
            fence = Some("`".repeat(ticks));
            continue;
        }
        out.push((index + 1, line));
    }
    out
}

/// A line without its code spans (a run of backticks to the next run as long).
fn without_code(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find('`') {
        out.push_str(&rest[..at]);
        let ticks = rest[at..].chars().take_while(|c| *c == '`').count();
        let after = &rest[at + ticks..];
        let fence = "`".repeat(ticks);
        let mut search = 0;
        let mut close = None;
        while let Some(found) = after[search..].find(&fence) {
            let start = search + found;
            let run = after[start..].chars().take_while(|c| *c == '`').count();
            if run == ticks {
                close = Some(start);
                break;
            }
            search = start + run;
        }
        match close {
            Some(close) => rest = &after[close + ticks..],
            None => {
                out.push_str(&rest[at..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The inline links and images of a page: (line, target).
fn links(text: &str) -> Vec<(usize, String)> {
    let link = regex::Regex::new(r#"\]\(\s*([^()\s]+)(?:\s+"[^"]*")?\s*\)"#).unwrap();
    let mut out = Vec::new();
    for (number, line) in prose(text) {
        let line = without_code(line);
        for found in link.captures_iter(&line) {
            out.push((number, found[1].to_string()));
        }
    }
    out
}

/// The id mdBook (and GitHub) gives a heading's text.
fn heading_id(heading: &str) -> String {
    let text = without_code_marks(heading);
    text.trim()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_ascii_lowercase())
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// A heading's text as it reads: code spans keep their text, links their link text.
fn without_code_marks(heading: &str) -> String {
    let link = regex::Regex::new(r"\[([^\]]*)\]\([^)]*\)").unwrap();
    link.replace_all(&heading.replace('`', ""), "$1")
        .into_owned()
}

/// The anchors of a page: its headings' ids, a repeated id numbered as mdBook numbers it.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (_, line) in prose(text) {
        if !line.starts_with('#') {
            continue;
        }
        let id = heading_id(line.trim_start_matches('#'));
        let count = seen.entry(id.clone()).or_insert(0);
        out.insert(if *count == 0 {
            id.clone()
        } else {
            format!("{id}-{count}")
        });
        *count += 1;
    }
    out
}

fn is_web(target: &str) -> bool {
    ["http://", "https://", "mailto:"]
        .iter()
        .any(|scheme| target.starts_with(scheme))
}

/// Every broken link of the pages, said with its page and line.
fn broken_links() -> Vec<String> {
    let mut problems = Vec::new();
    let book = Path::new("docs/src");
    for page in pages() {
        let text = expanded(&page);
        for (line, target) in links(&text) {
            if is_web(&target) {
                continue;
            }
            let at = format!("{}:{line}: {target}", page.display());
            let (file, fragment) = match target.split_once('#') {
                Some((file, fragment)) => (file, Some(fragment)),
                None => (target.as_str(), None),
            };
            let resolved = if file.is_empty() {
                page.clone()
            } else {
                normal(&page.parent().unwrap().join(file))
            };
            if page.starts_with(book) && !resolved.starts_with(book) {
                problems.push(format!(
                    "{at}: a page of the book links outside docs/src (mdBook cannot follow it; \
                     name the file in a code span instead)"
                ));
                continue;
            }
            let full = Path::new(ROOT).join(&resolved);
            if !full.exists() {
                problems.push(format!("{at}: {} does not exist", resolved.display()));
                continue;
            }
            if let Some(fragment) = fragment {
                if resolved.extension().is_some_and(|e| e == "md") {
                    let known = anchors(&expanded(&resolved));
                    if !known.contains(fragment) {
                        problems.push(format!(
                            "{at}: {} has no heading #{fragment}",
                            resolved.display()
                        ));
                    }
                }
            }
        }
    }
    problems
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let problems = broken_links();
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

/// mdBook builds the pages SUMMARY.md lists, and no other: a page left out of it would be
/// missing from the book, and links to it broken there.
#[test]
fn every_page_of_the_guide_is_in_the_summary() {
    let summary = fs::read_to_string(Path::new(ROOT).join("docs/src/SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = links(&summary)
        .into_iter()
        .map(|(_, target)| PathBuf::from("docs/src").join(target))
        .collect();
    let pages: BTreeSet<PathBuf> = pages()
        .into_iter()
        .filter(|page| page.starts_with("docs/src") && !page.ends_with("SUMMARY.md"))
        .collect();
    let missing: Vec<_> = pages.difference(&listed).collect();
    assert!(
        missing.is_empty(),
        "pages not in docs/src/SUMMARY.md: {missing:?}"
    );
    let absent: Vec<_> = listed.difference(&pages).collect();
    assert!(
        absent.is_empty(),
        "SUMMARY.md lists pages that do not exist: {absent:?}"
    );
}

/// The ids are mdBook's: what the guide's links rely on.
#[test]
fn heading_ids_are_mdbooks() {
    for (heading, id) in [
        (
            "Late data: changed dates and `--lookback`",
            "late-data-changed-dates-and---lookback",
        ),
        ("Projects: `sqlrun.toml`", "projects-sqlruntoml"),
        (
            "pg-jobs: `--jobs 2` ÷ two psql sessions",
            "pg-jobs---jobs-2--two-psql-sessions",
        ),
        ("Where a date's time goes", "where-a-dates-time-goes"),
    ] {
        assert_eq!(heading_id(heading), id);
    }
    let repeated = anchors("# A\n## How\n```sh\n# not a heading\n```\n## How\n");
    assert_eq!(
        repeated,
        ["a", "how", "how-1"]
            .map(String::from)
            .into_iter()
            .collect()
    );
}

/// The check finds what it is for: a missing file, a missing anchor, a link out of the book.
#[test]
fn the_link_check_catches_broken_links() {
    let text = "# Page\n\nSee [a](#page), [b](#nope), `[c](#in-code)`, and [d](x.md).\n";
    let found: Vec<String> = links(text).into_iter().map(|(_, t)| t).collect();
    assert_eq!(found, ["#page", "#nope", "x.md"]);
    assert!(anchors(text).contains("page"));
    assert!(!anchors(text).contains("nope"));
    assert_eq!(
        without_code("a ``x `y` z`` b `c` d"),
        "a  b  d",
        "code spans of any length are left out"
    );
}
