//! `sqlrun completions SHELL`: the script on stdout (with --json, inside a document); and
//! the values only the pipeline knows (model names, run and seal ids) that the shell's
//! dynamic completion offers (cli/shell.rs asks here for them).

use crate::commands::open::{load, peek_store};
use crate::commands::Context;
use crate::db::Db;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::Output;
use crate::pipeline::Pipeline;
use crate::project::settings::Flags;
use crate::run::history::{self, Record};

/// A shell's completion script, as the command line generates it.
pub struct Script {
    pub shell: String,
    pub script: String,
}

pub fn run(_ctx: &Context, completion: Script, out: &Output) -> Result<Exit> {
    out.json(&serde_json::json!({"shell": completion.shell, "script": completion.script}))?;
    out.text(&completion.script)?;
    Ok(Exit::Done)
}

/// A value a completion offers, with the words shown beside it.
pub struct Candidate {
    pub value: String,
    pub help: Option<String>,
}

/// How many of the newest runs or seal events a completion offers.
const COMPLETED_IDS: u32 = 30;

/// The pipeline's models here (the project's, else the built-in ones), for `--select`.
pub fn models() -> Vec<Candidate> {
    pipeline_here().map(|p| models_of(&p)).unwrap_or_default()
}

/// Models and checks, for `render --date D NAME`.
pub fn models_and_checks() -> Vec<Candidate> {
    let Some(p) = pipeline_here() else {
        return Vec::new();
    };
    let checks = p.checks.iter().map(|c| Candidate {
        value: c.name.clone(),
        help: Some(format!("check of {}", c.model)),
    });
    models_of(&p).into_iter().chain(checks).collect()
}

fn models_of(p: &Pipeline) -> Vec<Candidate> {
    p.models
        .iter()
        .map(|m| Candidate {
            value: m.name.clone(),
            help: None,
        })
        .collect()
}

/// The latest runs, with their kind, dates and status (SQLite): `sqlrun runs`'s list.
pub fn run_ids() -> Vec<Candidate> {
    let runs = read_here(|db| history::newest_runs(db, COMPLETED_IDS));
    candidates(
        runs,
        "run_id",
        ["kind", "interval_start", "interval_end", "status"],
    )
}

/// The latest seal events, with their action, dates and reason (SQLite): `sqlrun seals`'s.
pub fn seal_ids() -> Vec<Candidate> {
    let seals = read_here(|db| history::newest_seal_events(db, COMPLETED_IDS));
    candidates(
        seals,
        "seal_id",
        ["action", "first_ds", "last_ds", "reason"],
    )
}

fn pipeline_here() -> Option<Pipeline> {
    let settings = crate::project::resolve_here(&Flags::default()).ok()?;
    load(&settings, &[]).ok().map(|loaded| loaded.pipeline)
}

/// What `read` finds in the database here, only if it can be read without writing
/// anything (`peek_store`). Nothing otherwise.
fn read_here(read: impl FnOnce(&mut Db) -> Result<Vec<Record>>) -> Vec<Record> {
    let open = || peek_store(&crate::project::resolve_here(&Flags::default()).ok()?);
    open()
        .and_then(|mut db| read(&mut db).ok())
        .unwrap_or_default()
}

/// Each record's `id` with its `words` as the help beside it.
fn candidates(records: Vec<Record>, id: &str, words: [&str; 4]) -> Vec<Candidate> {
    let text = |r: &Record, key: &str| match &r[key] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    };
    records
        .iter()
        .map(|r| Candidate {
            value: text(r, id),
            help: Some(words.map(|w| text(r, w)).join(" ").trim().to_string()),
        })
        .collect()
}
