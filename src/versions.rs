//! Template versions in the state store: a template's text is recorded with its version
//! the first time a run uses it; an edited text under the same version is refused, as a
//! migration tool refuses an edited migration; `sqlrun templates` compares the two.

use crate::db::{Db, Value};
use crate::error::{Error, Result};
use crate::queries;
use crate::templates::{versioned_text, TemplateFile, TemplateSet};

/// Refuses a template whose text changed while its version did not, as a migration tool
/// refuses an edited migration.
pub fn verify_versions(db: &mut Db, templates: &TemplateSet) -> Result<()> {
    for file in &templates.files {
        let recorded = db.row(
            &queries::TEMPLATE_VERSION,
            &[
                (":name", file.name.as_str().into()),
                (":version", file.version.into()),
            ],
        )?;
        if let Some(row) = recorded {
            let (checksum, first_used, body) = (row.text(0)?, row.text(1)?, row.text(2)?);
            let same_sql = || versioned_text(&body) == versioned_text(&file.source);
            if checksum != file.checksum && !same_sql() {
                return Err(Error::EditedTemplate(Box::new(
                    crate::error::EditedTemplate {
                        file: file.path.clone(),
                        name: file.name.clone(),
                        version: file.version,
                        next: file.version + 1,
                        recorded: checksum[..12.min(checksum.len())].to_string(),
                        found: file.checksum[..12].to_string(),
                        first_used,
                    },
                )));
            }
        }
    }
    Ok(())
}

/// Records the template versions a run uses (and each version's text the first time).
pub fn record_versions(db: &mut Db, templates: &TemplateSet, run_id: i64) -> Result<()> {
    verify_versions(db, templates)?;
    // One request each for all the files (on PostgreSQL a round trip each, not one per
    // file and statement).
    let versions: Vec<Vec<(&str, Value)>> = templates
        .files
        .iter()
        .map(|file| {
            vec![
                (":name", file.name.as_str().into()),
                (":version", file.version.into()),
                (":kind", file.kind.as_str().into()),
                (":checksum", file.checksum.as_str().into()),
                (":body", file.source.as_str().into()),
                (":run_id", run_id.into()),
            ]
        })
        .collect();
    db.execute_each(&queries::RECORD_TEMPLATE_VERSION, &versions)?;
    let used: Vec<Vec<(&str, Value)>> = templates
        .files
        .iter()
        .map(|file| {
            vec![
                (":run_id", run_id.into()),
                (":name", file.name.as_str().into()),
                (":version", file.version.into()),
                (":kind", file.kind.as_str().into()),
            ]
        })
        .collect();
    db.execute_each(&queries::RECORD_RUN_TEMPLATE, &used)?;
    Ok(())
}

/// How a template file stands against the state store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// No run used this version yet.
    NotYet,
    /// Recorded with this very text.
    Same,
    /// Recorded with another text: the file was edited without a new version.
    Edited,
}

impl Recorded {
    pub fn as_str(self) -> &'static str {
        match self {
            Recorded::NotYet => "not used yet",
            Recorded::Same => "recorded",
            Recorded::Edited => "EDITED: raise its version",
        }
    }
}

/// Each template file of the set, with how it stands.
pub fn states<'a>(
    db: &mut Db,
    templates: &'a TemplateSet,
) -> Result<Vec<(&'a TemplateFile, Recorded)>> {
    templates
        .files
        .iter()
        .map(|f| {
            let recorded = db
                .row(
                    &queries::TEMPLATE_VERSION,
                    &[
                        (":name", f.name.as_str().into()),
                        (":version", f.version.into()),
                    ],
                )?
                .map(|r| r.text(0))
                .transpose()?;
            let state = match recorded {
                None => Recorded::NotYet,
                Some(c) if c == f.checksum => Recorded::Same,
                Some(_) => Recorded::Edited,
            };
            Ok((f, state))
        })
        .collect()
}

/// The recorded text of `NAME@VERSION` (`templates --show`).
pub fn body(db: &mut Db, spec: &str) -> Result<(String, i64, String)> {
    let (name, version) = spec
        .rsplit_once('@')
        .and_then(|(n, v)| v.parse::<i64>().ok().map(|v| (n, v)))
        .ok_or_else(|| {
            Error::bad(format!(
                "--show {spec}: write NAME@VERSION, e.g. models/daily_revenue@2"
            ))
        })?;
    let body = db
        .row(
            &queries::TEMPLATE_VERSION,
            &[(":name", name.into()), (":version", version.into())],
        )?
        .map(|r| r.text(2))
        .transpose()?;
    let body = body.ok_or_else(|| {
        Error::bad(format!(
            "the state store has no {name}@{version}; `sqlrun templates` lists what it has"
        ))
    })?;
    Ok((name.to_string(), version, body))
}
