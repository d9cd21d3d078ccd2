//! sqlrun: a backfill runner for date-partitioned SQL pipelines.
//!
//! The logic lives in versioned SQL templates (`templates/`) and migrations (`sql/`); this
//! crate is the orchestration: which dates, in what order, in which transaction.

pub mod apply;
pub mod calendar;
pub mod cli;
pub mod commands;
pub mod dates;
pub mod db;
pub mod demo;
pub mod error;
pub mod exit;
pub mod generate;
pub mod holder;
pub mod inspect;
pub mod interval;
pub mod kinds;
pub mod load;
pub mod models;
pub mod output;
pub mod pause;
pub mod pipeline;
pub mod plan;
pub mod project;
pub mod queries;
pub mod report;
pub mod requester;
pub mod reserve;
pub mod scaffold;
pub mod seal;
pub mod settings;
pub mod shell;
pub mod store;
pub mod templates;
pub mod vocabulary;
pub mod workers;

use std::process::ExitCode;

pub use error::{Error, Result};

use cli::{Cli, Command};
use exit::Exit;
use report::Output;
use settings::Settings;

/// Runs one command; the exit code follows the contract (0, 1, 2, 99).
pub fn run(cli: Cli) -> Result<ExitCode> {
    let mut out = Output::new(cli.global.json, cli.global.verbose);
    match execute(&cli, &mut out) {
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

fn execute(cli: &Cli, out: &mut Output) -> Result<Exit> {
    let args = &cli.global;
    let code = match &cli.command {
        // `new` writes a project; the one it may stand in does not matter to it.
        Command::New { dir } => scaffold::run(&args.into(), dir, out)?,
        Command::Help { command } => {
            let help = cli::help_text(command).map_err(Error::BadInput)?;
            out.json(&serde_json::json!({ "help": help }))?;
            out.text(&help)?;
            Exit::Done
        }
        // The demo tells the same story anywhere: a scratch database and the built-in
        // pipeline, whatever a project file says (only the backend comes from --db).
        Command::Demo => {
            let global = project::resolve(&args.into(), &project::Env::from_process(), None)?;
            demo::run(&global, out)?
        }
        // The shell's kit describes the command line: no database, no project file.
        Command::Completions { shell } => shell::completions(*shell, out)?,
        Command::Man { command, dir } => shell::man(command.as_deref(), dir.as_deref(), out)?,
        command => {
            let global = project::resolve_here(&args.into())?;
            if let Some(path) = global.project.as_deref().filter(|_| out.verbose > 0) {
                out.note(&format!("project file {}", path.display()));
            }
            dispatch(&global, command, out)?
        }
    };
    Ok(code)
}

fn dispatch(global: &Settings, command: &Command, out: &mut Output) -> Result<Exit> {
    Ok(match command {
        Command::Init => inspect::init(global, out)?,
        Command::Apply(args) => apply::run(global, args, out)?,
        Command::Reserve(args) => reserve::reserve_command(global, args, out)?,
        Command::Release { run_id, by } => {
            reserve::release_command(global, *run_id, by.as_deref(), out)?
        }
        Command::Seal(args) => seal::run(global, args, out)?,
        Command::Retire { model, reason, by } => {
            models::retire_command(global, model, reason, by.as_deref(), out)?
        }
        Command::Status {
            interval,
            select,
            list,
        } => commands::status::run(global, interval.as_deref(), select, *list, out)?,
        Command::Runs {
            run_id,
            limit,
            dates,
        } => inspect::runs(global, *run_id, *limit, *dates, out)?,
        Command::Corrections { interval } => {
            inspect::corrections(global, interval.as_deref(), out)?
        }
        Command::Render {
            date,
            model,
            select,
        } => inspect::render(global, date, model.as_deref(), select, out)?,
        Command::Templates { show } => inspect::templates(global, show.as_deref(), out)?,
        Command::Generate(args) => generate::run(global, args, out)?,
        Command::Load { table, file } => load::run(global, table, file, out)?,
        Command::New { .. }
        | Command::Demo
        | Command::Help { .. }
        | Command::Completions { .. }
        | Command::Man { .. } => {
            unreachable!("execute() handles these without a database")
        }
    })
}
