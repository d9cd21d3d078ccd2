//! Template versions in the state store: a template's text is recorded with its version
//! the first time a run uses it; an edited text under the same version is refused, as a
//! migration tool refuses an edited migration; `sqlrun templates` compares the two.

use std::collections::{HashMap, HashSet};

use crate::db::{Db, Dialect, RowShape};
use crate::error::{Error, Result};
use crate::pipeline::templates::{versioned_text, TemplateFile, TemplateKind, TemplateSet};
use crate::store::queries;

/// A version as the state store has it: its checksum, its first use, and its text when
/// the checksum is not the file's.
struct Stored {
    checksum: String,
    first_used: String,
    body_if_other: Option<String>,
}

/// A row of `queries/template_versions.sql`.
#[derive(serde::Deserialize)]
struct StoredColumns {
    name: String,
    version: i64,
    checksum: String,
    first_used_at: String,
    body_if_other: Option<String>,
}

/// A row of `queries/template_version.sql`: one version's text.
#[derive(serde::Deserialize)]
struct Version {
    body: String,
}

/// The rows this file reads, for the test that prepares each against a real schema.
pub fn row_shapes(dialect: Dialect) -> Vec<RowShape> {
    vec![
        RowShape::of::<StoredColumns, _>(&queries::TEMPLATE_VERSIONS, dialect),
        RowShape::of::<Version, _>(&queries::TEMPLATE_VERSION, dialect),
    ]
}

/// The recorded versions of the set's files, in one read, by (name, version).
fn stored(db: &mut Db, templates: &TemplateSet) -> Result<HashMap<(String, i64), Stored>> {
    let files: Vec<serde_json::Value> = templates
        .files
        .iter()
        .map(|f| serde_json::json!({"name": f.name, "version": f.version, "checksum": f.checksum}))
        .collect();
    let files = serde_json::Value::from(files).to_string();
    let rows: Vec<StoredColumns> =
        db.rows_as(&queries::TEMPLATE_VERSIONS, &[(":files", files.into())])?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let stored = Stored {
                checksum: r.checksum,
                first_used: r.first_used_at,
                body_if_other: r.body_if_other,
            };
            ((r.name, r.version), stored)
        })
        .collect())
}

/// Whether the file's text is the recorded one of its version (the same checksum, or the
/// same SQL in other line endings).
fn same_text(recorded: &Stored, file: &TemplateFile) -> bool {
    recorded.checksum == file.checksum
        || recorded
            .body_if_other
            .as_deref()
            .is_some_and(|body| versioned_text(body) == versioned_text(&file.source))
}

/// The template files (by include name, `models/x.sql`) whose version is recorded with
/// their very text: a file that went back to an older version's text is that version
/// again (a revert), not another pipeline's.
pub fn recorded_again(db: &mut Db, templates: &TemplateSet) -> Result<HashSet<String>> {
    let stored = stored(db, templates)?;
    Ok(templates
        .files
        .iter()
        .filter(|f| {
            stored
                .get(&(f.name.clone(), f.version))
                .is_some_and(|recorded| same_text(recorded, f))
        })
        .map(|f| f.include_name.clone())
        .collect())
}

/// Refuses a template whose text changed while its version did not, as a migration tool
/// refuses an edited migration. The versions the state store has.
pub fn verify_versions(db: &mut Db, templates: &TemplateSet) -> Result<HashSet<(String, i64)>> {
    let stored = stored(db, templates)?;
    for file in &templates.files {
        let Some(recorded) = stored.get(&(file.name.clone(), file.version)) else {
            continue;
        };
        if !same_text(recorded, file) {
            let checksum = &recorded.checksum;
            return Err(Error::EditedTemplate(Box::new(
                crate::error::EditedTemplate {
                    also: match file.kind {
                        TemplateKind::Source => format!(
                            ". A source's new version also says how its table gets there: \
                             `-- migrate:` with the SQL (e.g. `-- migrate: ALTER TABLE {} ADD \
                             COLUMN ...`)",
                            file.name.trim_start_matches("sources/")
                        ),
                        _ => String::new(),
                    },
                    file: file.path.clone(),
                    name: file.name.clone(),
                    version: file.version,
                    next: file.version + 1,
                    recorded: checksum[..12.min(checksum.len())].to_string(),
                    found: file.checksum[..12].to_string(),
                    first_used: recorded.first_used.clone(),
                },
            )));
        }
    }
    Ok(stored.into_keys().collect())
}

/// Records the template versions a run uses (and each version's text the first time):
/// one read, the new versions (none, mostly) in one request, the run's in one statement.
pub fn record_versions(db: &mut Db, templates: &TemplateSet, run_id: i64) -> Result<()> {
    let known = verify_versions(db, templates)?;
    let new: Vec<serde_json::Value> = templates
        .files
        .iter()
        .filter(|file| !known.contains(&(file.name.clone(), file.version)))
        .map(|f| {
            serde_json::json!({
                "name": f.name, "version": f.version, "kind": f.kind.as_str(),
                "checksum": f.checksum, "body": f.source,
            })
        })
        .collect();
    if !new.is_empty() {
        let new = serde_json::Value::from(new).to_string();
        db.execute(
            &queries::RECORD_TEMPLATE_VERSIONS,
            &[(":run_id", run_id.into()), (":files", new.into())],
        )?;
    }
    let used: Vec<serde_json::Value> = templates
        .files
        .iter()
        .map(|f| serde_json::json!({"name": f.name, "version": f.version, "kind": f.kind.as_str()}))
        .collect();
    let used = serde_json::Value::from(used).to_string();
    db.execute(
        &queries::RECORD_RUN_TEMPLATES,
        &[(":run_id", run_id.into()), (":files", used.into())],
    )?;
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

/// Each template file of the set, with how it stands: the pipeline's own first, then the
/// system ones.
pub fn states<'a>(
    db: &mut Db,
    templates: &'a TemplateSet,
) -> Result<Vec<(&'a TemplateFile, Recorded)>> {
    let stored = stored(db, templates)?;
    let mut states: Vec<_> = templates
        .files
        .iter()
        .map(|f| {
            let state = match stored.get(&(f.name.clone(), f.version)) {
                None => Recorded::NotYet,
                Some(s) if s.checksum == f.checksum => Recorded::Same,
                Some(_) => Recorded::Edited,
            };
            (f, state)
        })
        .collect();
    // The project's own templates first: the ones a reader came to look at; the
    // machinery (system/) after them, in the order it had.
    states.sort_by_key(|(f, _)| f.kind == TemplateKind::System);
    Ok(states)
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
        .row_as::<Version, _>(
            &queries::TEMPLATE_VERSION,
            &[(":name", name.into()), (":version", version.into())],
        )?
        .map(|r| r.body);
    let body = body.ok_or_else(|| {
        Error::bad(format!(
            "the state store has no {name}@{version}; `sqlrun templates` lists what it has"
        ))
    })?;
    Ok((name.to_string(), version, body))
}
