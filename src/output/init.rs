//! `sqlrun init`: the database is ready, with which pipeline.

use std::path::Path;

use crate::db::Db;
use crate::error::Result;
use crate::output::Output;
use crate::pipeline::Pipeline;

pub fn ready(db: &Db, pipeline: &Pipeline, project: Option<&Path>, out: &Output) -> Result<()> {
    let models: Vec<&str> = pipeline.models.iter().map(|m| m.name.as_str()).collect();
    let project = project.map(|p| p.display().to_string());
    out.json(&serde_json::json!({"db": db.target.to_string(), "dialect": db.dialect(), "models": models, "templates": pipeline.templates.origin, "project": project}))?;
    let from = project.map_or(String::new(), |p| {
        format!("\nsettings from project file {p}")
    });
    out.text(&format!(
        "{} is ready: state store and pipeline ({} templates; models: {}){from}",
        db.target,
        pipeline.templates.origin,
        models.join(", ")
    ))
}
