//! `sqlrun retire MODEL --reason TEXT`: a model is gone from the pipeline for good.

use crate::commands::load;
use crate::db::Db;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{retire as show, Output};
use crate::pipeline::models::{self, RetireRequest};
use crate::project::settings::Settings;

pub fn run(settings: &Settings, request: &RetireRequest, out: &Output) -> Result<Exit> {
    let checked = models::check_retire(request)?;
    let (target, pipeline) = load(settings, &[])?;
    models::refuse_if_in_templates(&checked, &pipeline)?;
    let mut db = Db::open(&target)?;
    let model = models::retire(&mut db, &checked)?;
    show::retired(&checked, &model, out)?;
    Ok(Exit::Done)
}
