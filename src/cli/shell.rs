//! The shell user's kit: completion scripts (clap_complete) and man pages (clap_mangen),
//! both generated from the command line's own definition (src/cli.rs), so they never
//! drift from it. Neither opens a database nor reads a project file; commands/ prints them.
//! The values that only the pipeline knows (model names, run and seal ids) are offered by
//! clap's dynamic completion (`SQLRUN_COMPLETE=bash sqlrun`, see main.rs): the candidates below
//! read the project here and, on SQLite, its database read-only; a failure offers nothing.

use clap::CommandFactory;
use clap_complete::{CompletionCandidate, Shell};

use crate::cli::Cli;
use crate::commands::completions::{self, Candidate, Script};
use crate::commands::man::Page;
use crate::error::{Error, Result};

/// The name the scripts complete and the pages describe.
const BIN: &str = "sqlrun";

/// `sqlrun completions SHELL`: the script.
pub fn completion(shell: Shell) -> Result<Script> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), BIN, &mut script);
    let script = String::from_utf8(script).map_err(|e| Error::Io(std::io::Error::other(e)))?;
    Ok(Script {
        shell: shell.to_string(),
        script,
    })
}

/// The pipeline's models here, for `--select`.
pub fn model_names() -> Vec<CompletionCandidate> {
    offered(completions::models())
}

/// Models and checks, for `render --date D NAME`.
pub fn model_and_check_names() -> Vec<CompletionCandidate> {
    offered(completions::models_and_checks())
}

/// The latest runs (SQLite).
pub fn run_ids() -> Vec<CompletionCandidate> {
    offered(completions::run_ids())
}

/// The latest seal events (SQLite).
pub fn seal_ids() -> Vec<CompletionCandidate> {
    offered(completions::seal_ids())
}

fn offered(candidates: Vec<Candidate>) -> Vec<CompletionCandidate> {
    candidates
        .into_iter()
        .map(|c| CompletionCandidate::new(c.value).help(c.help.map(Into::into)))
        .collect()
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

/// `sqlrun man`'s pages: every command's when they go into a folder (`all`), else the one
/// asked for (sqlrun(1) when none is named).
pub fn pages(command: Option<&str>, all: bool) -> Result<Vec<Page>> {
    if !all {
        return Ok(vec![page(command)?]);
    }
    let cmd = documented();
    let mut pages = vec![render(clap_mangen::Man::new(cmd.clone()))?];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages.push(render(clap_mangen::Man::new(sub.clone()))?);
    }
    Ok(pages)
}

/// One page, rendered: its file name (`sqlrun-apply.1`) and its roff text.
fn page(command: Option<&str>) -> Result<Page> {
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
    render(clap_mangen::Man::new(cmd))
}

fn render(man: clap_mangen::Man) -> Result<Page> {
    let mut roff = Vec::new();
    man.render(&mut roff)?;
    let roff = String::from_utf8(roff).map_err(|e| Error::Io(std::io::Error::other(e)))?;
    Ok(Page {
        name: man.get_filename(),
        roff,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_has_a_page_named_after_it() {
        let Page { name, roff } = page(None).unwrap();
        assert_eq!(name, "sqlrun.1");
        assert!(roff.contains(".SH NAME"), "{roff}");
        assert!(roff.contains("sqlrun\\-apply(1)"), "{roff}");
        let Page { name, roff } = page(Some("apply")).unwrap();
        assert_eq!(name, "sqlrun-apply.1");
        assert!(roff.contains("\\-\\-interval"), "{roff}");
        let err = page(Some("aply")).unwrap_err().to_string();
        assert!(
            err.contains("no command aply") && err.contains("apply"),
            "{err}"
        );
    }
}
