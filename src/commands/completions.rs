//! `sqlrun completions SHELL`: the script on stdout (with --json, inside a document).

use clap_complete::Shell;

use crate::cli::shell;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::Output;

pub fn run(shell: Shell, out: &Output) -> Result<Exit> {
    let script = shell::completion_script(shell)?;
    out.json(&serde_json::json!({"shell": shell.to_string(), "script": script}))?;
    out.text(&script)?;
    Ok(Exit::Done)
}
