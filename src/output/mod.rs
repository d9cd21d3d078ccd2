//! What the commands print: human text by default, one JSON document with `--json`.
//! Results go to stdout; notes (skips, reclaims, per-date progress) go to stderr. This is
//! the only layer that writes to either; nothing below it imports it.

pub mod apply;
pub mod calendar;
pub mod check;
pub mod corrections;
pub mod diff;
pub mod generate;
pub mod grains;
pub mod holds;
pub mod init;
pub mod load;
pub mod new;
pub mod pace;
pub mod plan;
pub mod render;
pub mod report;
pub mod report_numbers;
pub mod reserve;
pub mod retire;
pub mod runs;
pub mod seal;
pub mod status;
pub mod templates;
pub mod undo;

use std::io::{IsTerminal, Write};

use serde::Serialize;

use crate::error::Result;

pub struct Output {
    pub json: bool,
    pub verbose: u8,
    stderr_tty: bool,
    /// JSON is pretty on a terminal, one line otherwise (a scheduler keeps the last line
    /// of a task's output as its result: Airflow's BashOperator does).
    stdout_tty: bool,
    /// The one JSON document was printed (an error after it must not print another).
    printed: std::cell::Cell<bool>,
}

impl Output {
    pub fn new(json: bool, verbose: u8) -> Self {
        Output {
            json,
            verbose,
            stderr_tty: std::io::stderr().is_terminal(),
            stdout_tty: std::io::stdout().is_terminal(),
            printed: std::cell::Cell::new(false),
        }
    }

    /// A line on stderr that must be seen (a skip, a reclaim, a failure).
    pub fn note(&self, line: &str) {
        // A closed stderr must not stop a run halfway: the line is lost, the run goes on.
        let _ = writeln!(std::io::stderr(), "{line}");
    }

    /// Each line a note (what opening the database did, say).
    pub fn notes(&self, lines: &[String]) {
        for line in lines {
            self.note(line);
        }
    }

    /// A per-date line on stderr, when no progress bar is drawn.
    pub fn progress(&self, line: &str) {
        let _ = writeln!(std::io::stderr(), "{line}");
    }

    pub fn progress_bar(&self) -> bool {
        self.stderr_tty && self.verbose == 0
    }

    /// Text on stdout (ignored in --json mode, where `json` prints the one document).
    pub fn text(&self, text: &str) -> Result<()> {
        if !self.json {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(text.as_bytes())?;
            if !text.ends_with('\n') {
                stdout.write_all(b"\n")?;
            }
        }
        Ok(())
    }

    pub fn json<T: Serialize>(&self, value: &T) -> Result<()> {
        if self.json {
            let mut stdout = std::io::stdout().lock();
            let written = if self.stdout_tty {
                serde_json::to_writer_pretty(&mut stdout, value)
            } else {
                serde_json::to_writer(&mut stdout, value)
            };
            written.map_err(std::io::Error::from)?;
            stdout.write_all(b"\n")?;
            self.printed.set(true);
        }
        Ok(())
    }

    /// With `--json`, an error is a document too (`{"error": {...}}`), unless the
    /// command's own document is already out.
    pub fn json_error(&self, error: &crate::error::Error) -> Result<()> {
        if self.printed.get() {
            return Ok(());
        }
        self.json(&error.to_json())
    }

    /// Whether text on stdout may be coloured: stdout is a terminal and `NO_COLOR` is
    /// not set (https://no-color.org).
    pub fn colour(&self) -> bool {
        let no_color = std::env::var_os("NO_COLOR");
        crate::reservations::glance::colour_allowed(self.stdout_tty, no_color.as_deref())
    }
}

/// A scheduler's ids for a run, on one line: `airflow: dag revenue, task apply, run
/// scheduled__2026-02-16T00:00:00+00:00, try 2`.
pub fn scheduler_line(s: &crate::store::requester::Scheduler) -> String {
    let parts: Vec<String> = [
        s.job.as_ref().map(|j| format!("dag {j}")),
        s.task.as_ref().map(|t| format!("task {t}")),
        s.run.as_ref().map(|r| format!("run {r}")),
        s.attempt.map(|n| format!("try {n}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    format!("{}: {}", s.name, parts.join(", "))
}
