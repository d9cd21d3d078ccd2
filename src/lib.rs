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
use commands::Context;
use exit::Exit;
use output::Output;
use project::settings::Flags;

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

/// What becomes of a command line clap did not run: `--help` and `--version` (exit 0), or
/// a usage error (exit 2). `main` prints clap's own message when `clap_prints` (help on
/// stdout, an error on stderr, styled as clap styles them), then `json`, the document a
/// script parses with `--json` (`{"help": ...}`, `{"version": ...}` or the error).
pub struct NotRun {
    pub clap_prints: bool,
    pub json: Option<serde_json::Value>,
    pub code: u8,
}

pub fn command_line_not_run(e: &clap::Error, json: bool) -> NotRun {
    if !e.use_stderr() {
        let doc = match e.kind() {
            clap::error::ErrorKind::DisplayVersion => {
                serde_json::json!({ "version": env!("CARGO_PKG_VERSION") })
            }
            _ => serde_json::json!({ "help": e.render().to_string() }),
        };
        return NotRun {
            clap_prints: !json,
            json: json.then_some(doc),
            code: 0,
        };
    }
    let usage = Error::Usage(e.to_string().trim_end().to_string());
    NotRun {
        clap_prints: true,
        json: json.then(|| usage.to_json()),
        code: usage.exit_code(),
    }
}

/// One match, one shape: each command gets the context and its request, converted from
/// clap's values by `cli` (the help, man pages and completion scripts rendered there).
// `try_into` for all: some conversions can fail (they render help or pages), and an arm
// of one shape reads the same whichever it is.
#[allow(clippy::unnecessary_fallible_conversions)]
fn execute(cli: &Cli, out: &mut Output) -> Result<Exit> {
    let ctx = Context {
        flags: Flags::from(&cli.global),
    };
    match &cli.command {
        Command::New(args) => commands::new::run(&ctx, args.try_into()?, out),
        Command::Help(args) => commands::help::run(&ctx, args.try_into()?, out),
        Command::Demo(args) => commands::demo::run(&ctx, args.try_into()?, out),
        Command::Completions(args) => commands::completions::run(&ctx, args.try_into()?, out),
        Command::Man(args) => commands::man::run(&ctx, args.try_into()?, out),
        Command::Init(args) => commands::init::run(&ctx, args.try_into()?, out),
        Command::Apply(args) => commands::apply::run(&ctx, args.try_into()?, out),
        Command::Reserve(args) => commands::reserve::run(&ctx, args.try_into()?, out),
        Command::Release(args) => commands::release::run(&ctx, args.try_into()?, out),
        Command::Undo(args) => commands::undo::run(&ctx, args.try_into()?, out),
        Command::Seal(args) => commands::seal::run(&ctx, args.try_into()?, out),
        Command::Unseal(args) => commands::seal::run(&ctx, args.try_into()?, out),
        Command::Retire(args) => commands::retire::run(&ctx, args.try_into()?, out),
        Command::Status(args) => commands::status::run(&ctx, args.try_into()?, out),
        Command::Report(args) => commands::report::run(&ctx, args.try_into()?, out),
        Command::Runs(args) => commands::runs::run(&ctx, args.try_into()?, out),
        Command::Diff(args) => commands::diff::run(&ctx, args.try_into()?, out),
        Command::Seals(args) => commands::seals::run(&ctx, args.try_into()?, out),
        Command::Corrections(args) => commands::corrections::run(&ctx, args.try_into()?, out),
        Command::Render(args) => commands::render::run(&ctx, args.try_into()?, out),
        Command::Check(args) => commands::check::run(&ctx, args.try_into()?, out),
        Command::Templates(args) => commands::templates::run(&ctx, args.try_into()?, out),
        Command::Generate(args) => commands::generate::run(&ctx, args.try_into()?, out),
        Command::Load(args) => commands::load::run(&ctx, args.try_into()?, out),
    }
}

/// The note to give, and the file it is about, when this command would create the
/// default database outside any project (said after the command, if the file exists).
fn creates_default_db(cli: &Cli) -> Option<(String, std::path::PathBuf)> {
    // These open no database of the settings' (the demo's is a scratch one or its own).
    if matches!(
        cli.command,
        Command::New(_)
            | Command::Help(_)
            | Command::Demo(_)
            | Command::Completions(_)
            | Command::Man(_)
    ) {
        return None;
    }
    let settings = project::resolve_here(&Flags::from(&cli.global)).ok()?;
    let cwd = std::env::current_dir().ok()?;
    let note = project::new_default_db(&settings, &cwd)?;
    Some((note, std::path::PathBuf::from(&settings.db)))
}
