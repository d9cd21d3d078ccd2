//! The shell user's kit: completion scripts (clap_complete) and man pages (clap_mangen),
//! both generated from the command line's own definition (src/cli.rs), so they never
//! drift from it. Neither opens a database nor reads a project file; commands/ prints them.
//! The values that only the pipeline knows (model names, run and seal ids) are offered by
//! clap's dynamic completion (`SQLRUN_COMPLETE=bash sqlrun`, see main.rs): the candidates below
//! read the project here and, on SQLite, its database read-only; a failure offers nothing.

use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_complete::{CompletionCandidate, Shell};

use crate::cli::Cli;
use crate::db::{Db, ReadOpen};
use crate::error::{Error, Result};
use crate::pipeline::Pipeline;
use crate::project::settings::Flags;
use crate::run::history::Record;

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

/// The pipeline's models here (the project's, else the built-in ones), for `--select`.
pub fn model_names() -> Vec<CompletionCandidate> {
    pipeline_here().map(|p| models_of(&p)).unwrap_or_default()
}

/// Models and checks, for `render --date D NAME`.
pub fn model_and_check_names() -> Vec<CompletionCandidate> {
    let Some(p) = pipeline_here() else {
        return Vec::new();
    };
    let checks = p.checks.iter().map(|c| {
        CompletionCandidate::new(&c.name).help(Some(format!("check of {}", c.model).into()))
    });
    models_of(&p).into_iter().chain(checks).collect()
}

fn models_of(p: &Pipeline) -> Vec<CompletionCandidate> {
    p.models
        .iter()
        .map(|m| CompletionCandidate::new(&m.name))
        .collect()
}

/// The latest runs, with their kind, dates and status (SQLite): `sqlrun runs`'s list.
pub fn run_ids() -> Vec<CompletionCandidate> {
    let runs = read_here(|db| crate::run::history::newest_runs(db, COMPLETED_IDS));
    candidates(
        runs,
        "run_id",
        ["kind", "interval_start", "interval_end", "status"],
    )
}

/// The latest seal events, with their action, dates and reason (SQLite): `sqlrun seals`'s.
pub fn seal_ids() -> Vec<CompletionCandidate> {
    let seals = read_here(|db| crate::run::history::newest_seal_events(db, COMPLETED_IDS));
    candidates(
        seals,
        "seal_id",
        ["action", "first_ds", "last_ds", "reason"],
    )
}

/// How many of the newest runs or seal events a completion offers.
const COMPLETED_IDS: u32 = 30;

fn pipeline_here() -> Option<Pipeline> {
    let settings = crate::project::resolve_here(&Flags::default()).ok()?;
    let target = crate::store::target(&settings).ok()?;
    Pipeline::load(settings.templates.as_deref(), target.dialect()).ok()
}

/// What `read` finds in the database here, only if it can be read without writing
/// anything: a SQLite file that exists and is current (a completion must never create or
/// migrate a database, nor wait on a server). Nothing otherwise.
fn read_here(read: impl FnOnce(&mut Db) -> Result<Vec<Record>>) -> Vec<Record> {
    let open = || {
        let settings = crate::project::resolve_here(&Flags::default()).ok()?;
        let target = crate::store::target(&settings).ok()?;
        match Db::open_read_only(&target).ok()? {
            ReadOpen::Current(db) => Some(db),
            _ => None,
        }
    };
    open()
        .and_then(|mut db| read(&mut db).ok())
        .unwrap_or_default()
}

/// Each record's `id` with its `words` as the help beside it.
fn candidates(records: Vec<Record>, id: &str, words: [&str; 4]) -> Vec<CompletionCandidate> {
    let text = |r: &Record, key: &str| match &r[key] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    };
    records
        .iter()
        .map(|r| {
            let help = words.map(|w| text(r, w)).join(" ");
            CompletionCandidate::new(text(r, id)).help(Some(help.trim().to_string().into()))
        })
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
