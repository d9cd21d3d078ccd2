use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

fn main() -> ExitCode {
    // `SQLRUN_COMPLETE=bash sqlrun`: the shell's registration, or the words to offer; then
    // exit. Not clap's usual `COMPLETE`: a stray one in a scheduler's environment would turn
    // every run into a silent exit 0.
    clap_complete::CompleteEnv::with_factory(sqlrun::cli::Cli::command)
        .var("SQLRUN_COMPLETE")
        .complete();
    let cli = match sqlrun::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let json = sqlrun::cli::json_requested(std::env::args_os());
            let not_run = sqlrun::command_line_not_run(&e, json);
            if not_run.clap_prints {
                let _ = e.print();
            }
            if let Some(doc) = &not_run.json {
                let _ = sqlrun::output::Output::new(json, 0).json(doc);
            }
            return ExitCode::from(not_run.code);
        }
    };
    match sqlrun::run(cli) {
        Ok(code) => code,
        // `sqlrun render ... | head`: the reader left; that is not an error.
        Err(sqlrun::Error::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "sqlrun: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
