//! The shell user's kit: completion scripts (clap_complete) and man pages (clap_mangen),
//! both generated from the command line's own definition (src/cli.rs), so they never
//! drift from it. Neither opens a database nor reads a project file; commands/ prints them.

use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;
use crate::error::{Error, Result};

/// The name the scripts complete and the pages describe.
const BIN: &str = "sqlrun";

/// A shell's completion script.
pub struct Completion {
    pub shell: String,
    pub script: String,
}

/// `sqlrun completions SHELL`: the script.
pub fn completion(shell: Shell) -> Result<Completion> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), BIN, &mut script);
    let script = String::from_utf8(script).map_err(|e| Error::Io(std::io::Error::other(e)))?;
    Ok(Completion {
        shell: shell.to_string(),
        script,
    })
}

/// The command line as the pages describe it: every command has a page of its own, so
/// `help`, which only prints another command's help, has none.
fn documented() -> clap::Command {
    let mut cmd = Cli::command()
        .disable_help_subcommand(true)
        .mut_subcommand("help", |help| help.hide(true));
    cmd.build();
    cmd
}

/// One page, rendered: its file name (`sqlrun-apply.1`) and its roff text.
pub fn page(command: Option<&str>) -> Result<(String, String)> {
    let cmd = documented();
    let cmd = match command {
        None => cmd,
        Some(name) => cmd.find_subcommand(name).cloned().ok_or_else(|| {
            let known: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
            Error::bad(format!(
                "`sqlrun man {name}`: there is no command {name}; the commands are: {}",
                known.join(", ")
            ))
        })?,
    };
    let man = clap_mangen::Man::new(cmd);
    let mut roff = Vec::new();
    man.render(&mut roff)?;
    let roff = String::from_utf8(roff).map_err(|e| Error::Io(std::io::Error::other(e)))?;
    Ok((man.get_filename(), roff))
}

/// sqlrun.1 and sqlrun-COMMAND.1 for every command, in `dir` (created if missing).
pub fn write_pages(dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::bad(format!(
            "--dir {}: cannot create the folder ({e}); pass a folder you may write, e.g. ~/.local/share/man/man1",
            dir.display()
        ))
    })?;
    let cmd = documented();
    let mut written = vec![clap_mangen::Man::new(cmd.clone()).generate_to(dir)?];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        written.push(clap_mangen::Man::new(sub.clone()).generate_to(dir)?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_has_a_page_named_after_it() {
        let (name, roff) = page(None).unwrap();
        assert_eq!(name, "sqlrun.1");
        assert!(roff.contains(".SH NAME"), "{roff}");
        assert!(roff.contains("sqlrun\\-apply(1)"), "{roff}");
        let (name, roff) = page(Some("apply")).unwrap();
        assert_eq!(name, "sqlrun-apply.1");
        assert!(roff.contains("\\-\\-interval"), "{roff}");
        let err = page(Some("aply")).unwrap_err().to_string();
        assert!(
            err.contains("no command aply") && err.contains("apply"),
            "{err}"
        );
    }
}
