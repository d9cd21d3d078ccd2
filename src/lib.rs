//! sqlrun: a backfill runner for date-partitioned SQL pipelines.
//!
//! The logic lives in versioned SQL templates (`templates/`) and migrations (`sql/`); this
//! crate is the orchestration: which dates, in what order, in which transaction.

#![warn(clippy::too_many_lines)]

pub mod cli;
pub mod commands;
pub mod dates;
pub mod db;
pub mod demo;
pub mod error;
pub mod exit;
pub mod output;
pub mod pipeline;
pub mod project;
pub mod reservations;
pub mod run;
pub mod seals;
pub mod sources;
pub mod store;
pub mod text;

use std::process::ExitCode;

pub use error::{Error, Result};

use cli::{Cli, Command};
use exit::Exit;
use output::Output;
use project::settings::{Flags, Settings};

/// Runs one command; the exit code follows the contract (0, 1, 2, 99).
pub fn run(cli: Cli) -> Result<ExitCode> {
    let mut out = Output::new(cli.global.json, cli.global.verbose);
    let creates = creates_default_db(&cli);
    let result = execute(&cli, &mut out);
    // Said once it happened: a command refused before opening created nothing.
    if let Some((note, _)) = creates.filter(|(_, db)| db.exists()) {
        out.note(&note);
    }
    match result {
        Ok(code) => Ok(code.into()),
        Err(e) => {
            // A closed stdout must not hide the error: stderr still gets it (main).
            let _ = out.json_error(&e);
            Err(e)
        }
    }
}

/// A command line clap did not run: `--help` and `--version` (exit 0), or a usage error
/// (exit 2, clap's message on stderr). With `--json`, stdout gets the document a script
/// parses: `{"help": ...}` or the error.
pub fn command_line_not_run(e: &clap::Error, json: bool) -> ExitCode {
    let out = Output::new(json, 0);
    if !e.use_stderr() {
        if !json {
            e.exit();
        }
        let doc = match e.kind() {
            clap::error::ErrorKind::DisplayVersion => {
                serde_json::json!({ "version": env!("CARGO_PKG_VERSION") })
            }
            _ => serde_json::json!({ "help": e.render().to_string() }),
        };
        let _ = out.json(&doc);
        return ExitCode::SUCCESS;
    }
    let _ = e.print();
    let usage = Error::Usage(e.to_string().trim_end().to_string());
    let _ = out.json_error(&usage);
    ExitCode::from(usage.exit_code())
}

/// One match: each command with its request, converted from clap's values here.
fn execute(cli: &Cli, out: &mut Output) -> Result<Exit> {
    let flags = Flags::from(&cli.global);
    match &cli.command {
        // `new` writes a project; the one it may stand in does not matter to it.
        Command::New { dir } => commands::new::run(&flags, dir, out),
        Command::Help { command } => commands::help::run(command, out),
        // The demo tells the same story anywhere: a scratch database and the built-in
        // pipeline, whatever a project file says (only the backend comes from --db).
        Command::Demo { keep } => {
            let global = project::resolve(&flags, &project::Env::from_process(), None)?;
            commands::demo::run(&global, keep.as_deref(), out)
        }
        // The shell's kit describes the command line: no database, no project file.
        Command::Completions { shell } => {
            commands::completions::run(&cli::shell::completion(*shell)?, out)
        }
        Command::Man { command, dir } => {
            commands::man::run(command.as_deref(), dir.as_deref(), out)
        }
        Command::Init => commands::init::run(&here(&flags, out)?, out),
        Command::Apply(args) => commands::apply::run(&here(&flags, out)?, args.into(), out),
        Command::Reserve(args) => commands::reserve::run(&here(&flags, out)?, &args.into(), out),
        Command::Release { run_id, by } => {
            commands::release::run(&here(&flags, out)?, *run_id, by.as_deref(), out)
        }
        Command::Seal(args) => commands::seal::run(&here(&flags, out)?, &args.into(), out),
        Command::Unseal(args) => commands::seal::run(&here(&flags, out)?, &args.into(), out),
        Command::Retire { model, reason, by } => {
            let request = pipeline::models::RetireRequest {
                model: model.clone(),
                reason: reason.clone(),
                by: by.clone(),
            };
            commands::retire::run(&here(&flags, out)?, &request, out)
        }
        Command::Status {
            interval,
            select,
            list,
        } => commands::status::run(&here(&flags, out)?, interval.as_deref(), select, *list, out),
        Command::Report {
            html,
            interval,
            select,
        } => commands::report::run(
            &here(&flags, out)?,
            &commands::report::ReportRequest {
                html,
                interval: interval.as_deref(),
                select,
            },
            out,
        ),
        Command::Runs {
            run_id,
            limit,
            dates,
        } => commands::runs::run(&here(&flags, out)?, *run_id, *limit, *dates, out),
        Command::Seals { seal_id, limit } => {
            commands::seals::run(&here(&flags, out)?, *seal_id, *limit, out)
        }
        Command::Corrections(args) => {
            commands::corrections::run(&here(&flags, out)?, &args.into(), out)
        }
        Command::Render {
            date,
            model,
            select,
        } => commands::render::run(&here(&flags, out)?, date, model.as_deref(), select, out),
        Command::Check { interval, select } => {
            commands::check::run(&here(&flags, out)?, interval, select, out)
        }
        Command::Templates { show } => {
            commands::templates::run(&here(&flags, out)?, show.as_deref(), out)
        }
        Command::Generate(args) => commands::generate::run(&here(&flags, out)?, &args.into(), out),
        Command::Load { table, file } => commands::load::run(&here(&flags, out)?, table, file, out),
    }
}

/// The note to give, and the file it is about, when this command would create the
/// default database outside any project (said after the command, if the file exists).
fn creates_default_db(cli: &Cli) -> Option<(String, std::path::PathBuf)> {
    // These open no database of the settings' (the demo's is a scratch one or its own).
    if matches!(
        cli.command,
        Command::New { .. }
            | Command::Help { .. }
            | Command::Demo { .. }
            | Command::Completions { .. }
            | Command::Man { .. }
    ) {
        return None;
    }
    let settings = project::resolve_here(&Flags::from(&cli.global)).ok()?;
    let cwd = std::env::current_dir().ok()?;
    let note = project::new_default_db(&settings, &cwd)?;
    Some((note, std::path::PathBuf::from(&settings.db)))
}

/// The settings of a command that works on a project's database: the flags, the
/// environment, then the project file found from here upward.
fn here(flags: &Flags, out: &Output) -> Result<Settings> {
    let settings = project::resolve_here(flags)?;
    if let Some(path) = settings.project.as_deref().filter(|_| out.verbose > 0) {
        out.note(&format!("project file {}", path.display()));
    }
    Ok(settings)
}
