//! `sqlrun man [COMMAND]` prints one page (sqlrun(1), or sqlrun-COMMAND(1)) on stdout;
//! `sqlrun man --dir DIR` writes every page there and names the files.

use std::path::Path;

use crate::cli::shell;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::Output;

pub fn run(command: Option<&str>, dir: Option<&Path>, out: &Output) -> Result<Exit> {
    if let Some(dir) = dir {
        let written = shell::write_pages(dir)?;
        let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        out.json(&serde_json::json!({"dir": dir.display().to_string(), "pages": names}))?;
        out.text(&names.join("\n"))?;
        if let Some(note) = manpath_note(dir, std::env::var("MANPATH").ok().as_deref()) {
            out.note(&note);
        }
        return Ok(Exit::Done);
    }
    let (name, page) = shell::page(command)?;
    out.json(&serde_json::json!({"page": name, "roff": page}))?;
    out.text(&page)?;
    Ok(Exit::Done)
}

/// `man sqlrun-apply` looks in the folders of man's path, each holding man1/: unless the
/// pages went into a `man1` whose parent `$MANPATH` names, say how to add it (man-db
/// also finds `X/share/man` for each `X/bin` on `$PATH`, which this cannot see; hence a
/// note, not an error).
fn manpath_note(dir: &Path, manpath: Option<&str>) -> Option<String> {
    let absolute = std::path::absolute(dir).ok()?;
    let root = match absolute.file_name() {
        Some(name) if name == "man1" => absolute.parent()?.to_path_buf(),
        _ => {
            return Some(format!(
                "the pages are in {}, which is not a man1 folder: man finds pages in \
                 <root>/man1; pass e.g. --dir ~/.local/share/man/man1, or read one with \
                 `man -l {}/sqlrun-apply.1`",
                absolute.display(),
                absolute.display()
            ))
        }
    };
    let listed = manpath
        .unwrap_or_default()
        .split(':')
        .any(|p| Path::new(p) == root);
    (!listed).then(|| {
        format!(
            "if `man sqlrun-apply` finds nothing, man's path lacks {root}: \
             export MANPATH=\"{root}:$MANPATH\" (a trailing colon keeps the system's pages; \
             man-db also finds X/share/man for each X/bin on $PATH)",
            root = root.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_how_man_finds_the_pages_unless_manpath_has_them() {
        let dir = Path::new("/home/a/.local/share/man/man1");
        assert_eq!(manpath_note(dir, Some("/home/a/.local/share/man:")), None);
        let note = manpath_note(dir, None).unwrap();
        assert!(
            note.contains("MANPATH=\"/home/a/.local/share/man:"),
            "{note}"
        );
        let note = manpath_note(Path::new("/tmp/pages"), None).unwrap();
        assert!(note.contains("not a man1 folder"), "{note}");
    }
}
