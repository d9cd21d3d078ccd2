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
        return Ok(Exit::Done);
    }
    let (name, page) = shell::page(command)?;
    out.json(&serde_json::json!({"page": name, "roff": page}))?;
    out.text(&page)?;
    Ok(Exit::Done)
}
