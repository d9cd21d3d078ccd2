//! `sqlrun runs`: the runs, newest first, each with its dates in brief; `runs N`: one run,
//! its dates as ranges per status (`--dates`: each date), events and templates.

use crate::error::Result;
use crate::exit::Exit;
use crate::output::{runs as show, Output};
use crate::project::settings::Settings;
use crate::run::history;
use crate::store;

pub fn run(
    settings: &Settings,
    run_id: Option<i64>,
    limit: u32,
    each_date: bool,
    out: &Output,
) -> Result<Exit> {
    let mut db = store::open_to_read(&store::target(settings)?, None)?;
    match run_id {
        None => {
            let runs = history::newest_runs(&mut db, limit)?;
            let seals = history::newest_seal_events(&mut db, limit)?;
            show::runs_list(&runs, &seals, out)?
        }
        Some(run_id) => show::run_detail(&history::run_detail(&mut db, run_id)?, each_date, out)?,
    }
    Ok(Exit::Done)
}
