//! `sqlrun help [COMMAND...]`: a command's help, as `--help` prints it.

use crate::commands::Context;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::Output;

/// `sqlrun help [COMMAND...]`: the help text, as the command line renders it.
pub struct HelpRequest {
    pub text: String,
}

pub fn run(_ctx: &Context, request: HelpRequest, out: &Output) -> Result<Exit> {
    let help = request.text;
    out.json(&serde_json::json!({ "help": help }))?;
    out.text(&help)?;
    Ok(Exit::Done)
}
