//! `sqlrun templates`: each template with its version, checksum and how it stands.

use crate::error::Result;
use crate::output::Output;
use crate::pipeline::templates::TemplateFile;
use crate::pipeline::versions::Recorded;
use crate::text::table::table;

pub fn templates(files: &[(&TemplateFile, Recorded)], out: &Output) -> Result<()> {
    let doc: Vec<_> = files
        .iter()
        .map(|(f, state)| serde_json::json!({"name": f.name, "version": f.version, "kind": f.kind, "checksum": f.checksum, "state": state.as_str(), "path": f.path}))
        .collect();
    out.json(&doc)?;
    let rows: Vec<Vec<String>> = files
        .iter()
        .map(|(f, state)| {
            vec![
                f.name.clone(),
                f.version.to_string(),
                f.checksum[..12].to_string(),
                state.as_str().to_string(),
                f.path.clone(),
            ]
        })
        .collect();
    out.text(&table(
        &["template", "version", "checksum", "state", "file"],
        &rows,
    ))
}

/// One recorded version's text.
pub fn body(name: &str, version: i64, body: &str, out: &Output) -> Result<()> {
    out.json(&serde_json::json!({"name": name, "version": version, "body": body}))?;
    out.text(body)
}
