//! sqlrun: a backfill runner for date-partitioned SQL pipelines.
//!
//! The logic lives in versioned SQL templates (`templates/`) and migrations (`sql/`); this
//! crate is the orchestration: which dates, in what order, in which transaction.

pub mod apply;
pub mod calendar;
pub mod cli;
pub mod dates;
pub mod db;
pub mod demo;
pub mod error;
pub mod generate;
pub mod holder;
pub mod inspect;
pub mod interval;
pub mod kinds;
pub mod models;
pub mod pipeline;
pub mod project;
pub mod queries;
pub mod report;
pub mod reserve;
pub mod scaffold;
pub mod seal;
pub mod store;
pub mod templates;

use std::process::ExitCode;

pub use error::{Error, Result};

use cli::{Cli, Command, Global};
use report::Output;

/// Runs one command; the exit code follows the contract (0, 1, 2, 99).
pub fn run(cli: Cli) -> Result<ExitCode> {
    let args = &cli.global;
    let mut out = Output::new(args.json, args.verbose);
    let code = match &cli.command {
        // `new` writes a project; the one it may stand in does not matter to it.
        Command::New { dir } => scaffold::run(args, dir, &out)?,
        // The demo tells the same story anywhere: a scratch database and the built-in
        // pipeline, whatever a project file says (only the backend comes from --db).
        Command::Demo => {
            let global = project::resolve(args, &project::Env::from_process(), None)?;
            demo::run(&global, &out)?
        }
        command => {
            let global = project::resolve_here(args)?;
            if let Some(path) = global.project.as_deref().filter(|_| out.verbose > 0) {
                out.note(&format!("project file {}", path.display()));
            }
            dispatch(&global, command, &mut out)?
        }
    };
    Ok(ExitCode::from(code))
}

fn dispatch(global: &Global, command: &Command, out: &mut Output) -> Result<u8> {
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
        } => inspect::status(global, interval.as_deref(), select, *list, out)?,
        Command::Runs { run_id, limit } => inspect::runs(global, *run_id, *limit, out)?,
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
        Command::New { .. } | Command::Demo => unreachable!("run() handles new and demo"),
    })
}
