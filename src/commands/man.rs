//! `sqlrun man [COMMAND]` prints one page (sqlrun(1), or sqlrun-COMMAND(1)) on stdout;
//! `sqlrun man --dir DIR` writes every page there and names the files.

use std::path::{Path, PathBuf};

use crate::commands::Context;
use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::output::Output;

/// One man page, as the command line renders it: its file name (`sqlrun-apply.1`) and
/// its roff text.
#[derive(Debug)]
pub struct Page {
    pub name: String,
    pub roff: String,
}

/// `sqlrun man [COMMAND]`: the one page asked for; `--dir DIR`: every page, to write there.
pub struct ManRequest {
    pub pages: Vec<Page>,
    pub dir: Option<PathBuf>,
}

pub fn run(_ctx: &Context, request: ManRequest, out: &Output) -> Result<Exit> {
    if let Some(dir) = request.dir.as_deref() {
        let written = write_pages(&request.pages, dir)?;
        let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        out.json(&serde_json::json!({"dir": dir.display().to_string(), "pages": names}))?;
        out.text(&names.join("\n"))?;
        if let Some(note) = manpath_note(dir, std::env::var("MANPATH").ok().as_deref()) {
            out.note(&note);
        }
        return Ok(Exit::Done);
    }
    for page in &request.pages {
        out.json(&serde_json::json!({"page": page.name, "roff": page.roff}))?;
        out.text(&page.roff)?;
    }
    Ok(Exit::Done)
}

/// Each page into `dir` (created if missing), as `NAME` there.
fn write_pages(pages: &[Page], dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::bad(format!(
            "--dir {}: cannot create the folder ({e}); pass a folder you may write, e.g. ~/.local/share/man/man1",
            dir.display()
        ))
    })?;
    let mut written = Vec::new();
    for page in pages {
        let path = dir.join(&page.name);
        std::fs::write(&path, &page.roff)?;
        written.push(path);
    }
    Ok(written)
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
