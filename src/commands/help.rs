//! `sqlrun help [COMMAND...]`: a command's help, as `--help` prints it.

use crate::cli;
use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::output::Output;

pub fn run(command: &[String], out: &Output) -> Result<Exit> {
    let help = cli::help_text(command).map_err(Error::BadInput)?;
    out.json(&serde_json::json!({ "help": help }))?;
    out.text(&help)?;
    Ok(Exit::Done)
}
