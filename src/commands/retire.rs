//! `sqlrun retire MODEL --reason TEXT`: a model is gone from the pipeline for good.

use crate::commands::open::{load, Access};
use crate::commands::Context;
use crate::error::Result;
use crate::exit::Exit;
use crate::output::{retire as show, Output};
use crate::pipeline::models::{self, RetireRequest};

pub fn run(ctx: &Context, request: RetireRequest, out: &Output) -> Result<Exit> {
    let settings = &ctx.settings(out)?;
    let request = &request;
    let checked = models::check_retire(request)?;
    let loaded = load(settings, &[])?;
    models::refuse_if_in_templates(&checked, &loaded.pipeline)?;
    let mut db = loaded.open(Access::Open)?.db;
    let model = models::retire(&mut db, &checked)?;
    show::retired(&checked, &model, out)?;
    Ok(Exit::Done)
}
