//! `sqlrun completions SHELL`: the script on stdout (with --json, inside a document).

use crate::cli::shell::Completion;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::Output;

pub fn run(completion: &Completion, out: &Output) -> Result<Exit> {
    out.json(&serde_json::json!({"shell": completion.shell, "script": completion.script}))?;
    out.text(&completion.script)?;
    Ok(Exit::Done)
}
