//! `sqlrun new`: the files it wrote, and what to run next.

use std::path::Path;

use crate::error::Result;
use crate::output::Output;
use crate::project::scaffold::Scaffolded;

pub fn created(dir: &Path, s: &Scaffolded, out: &Output) -> Result<()> {
    let made: Vec<String> = s.files.iter().map(|p| p.display().to_string()).collect();
    out.json(&serde_json::json!({"project": s.project_file.display().to_string(), "db": s.db, "files": made}))?;
    let mut say = format!("created project {}:\n", dir.display());
    for path in &made {
        say.push_str(&format!("  {path}\n"));
    }
    say.push_str(&format!(
        "next:\n  cd {}\n  sqlrun init\n  sqlrun generate --start 2026-02-01 --days 14\n  \
         sqlrun apply --interval 2026-02-01..2026-02-14\n  sqlrun status\n",
        dir.display()
    ));
    out.text(&say)
}
