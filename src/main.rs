use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = match sqlrun::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            let _ = e.print();
            return sqlrun::usage_error(&e, sqlrun::cli::json_requested(std::env::args_os()));
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
