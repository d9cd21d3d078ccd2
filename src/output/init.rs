//! `sqlrun init`: the database is ready, with which pipeline.

use std::path::Path;

use crate::db::Target;
use crate::error::Result;
use crate::output::Output;
use crate::pipeline::Pipeline;

pub fn ready(
    target: &Target,
    pipeline: &Pipeline,
    project: Option<&Path>,
    out: &Output,
) -> Result<()> {
    let models: Vec<&str> = pipeline.models.iter().map(|m| m.name.as_str()).collect();
    let project = project.map(|p| p.display().to_string());
    out.json(&serde_json::json!({"db": target.to_string(), "dialect": target.dialect(), "models": models, "templates": pipeline.templates.origin, "project": project}))?;
    let from = project.map_or(String::new(), |p| {
        format!("\nsettings from project file {p}")
    });
    out.text(&format!(
        "{} is ready: state store and pipeline ({} templates; models: {}){from}",
        target,
        pipeline.templates.origin,
        models.join(", ")
    ))
}
