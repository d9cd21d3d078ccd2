//! The models a database knows. Each model sqlrun uses is recorded in `models` the first
//! time (name, table, key, version), in the transaction that creates its objects, with
//! its history in `model_events`. Templates that lack a live model the database knows, or
//! give a known table to another model, are not this database's pipeline: every command
//! that uses the pipeline refuses them (exit 2, nothing written), naming what differs and
//! the ways out. A model gone for good is retired explicitly (`sqlrun retire`): its table
//! and rows stay, and templates without it are accepted from then on. A retired model that
//! is in the templates again is restored, and that is recorded.

use crate::db::{Db, Dialect, RowShape, TxKind, Value};
use crate::error::{Error, Result};
use std::collections::HashSet;

use crate::pipeline::{versions, Pipeline};
use crate::store::queries;
use crate::store::requester::default_user;

/// A model as the database knows it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Known {
    pub name: String,
    pub table: String,
    /// `ds` or `ds, band`.
    pub key: String,
    pub version: i64,
    pub first_seen_at: String,
    pub first_run_id: Option<i64>,
    pub retired: Option<Retirement>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Retirement {
    pub at: String,
    pub by: String,
    pub reason: String,
}

/// A row of `queries/models_known.sql`.
#[derive(serde::Deserialize)]
struct KnownColumns {
    name: String,
    table_name: String,
    key_columns: String,
    version: i64,
    first_seen_at: String,
    first_run_id: Option<i64>,
    retired_at: Option<String>,
    retired_by: Option<String>,
    retired_reason: Option<String>,
}

impl From<KnownColumns> for Known {
    fn from(r: KnownColumns) -> Known {
        let retired = r.retired_at.map(|at| Retirement {
            at,
            by: r.retired_by.unwrap_or_default(),
            reason: r.retired_reason.unwrap_or_default(),
        });
        Known {
            name: r.name,
            table: r.table_name,
            key: r.key_columns,
            version: r.version,
            first_seen_at: r.first_seen_at,
            first_run_id: r.first_run_id,
            retired,
        }
    }
}

/// A model the latest run of an older sqlrun used (`queries/models_from_history.sql`):
/// its recorded version's text says the rest.
#[derive(serde::Deserialize)]
struct UsedColumns {
    name: String,
    version: i64,
    body: String,
    first_used_at: String,
    first_run_id: Option<i64>,
}

/// The latest run that recorded where its templates came from.
#[derive(serde::Deserialize)]
struct TemplatesFrom {
    run_id: i64,
    templates_from: String,
}

/// The rows this file reads, for the test that prepares each against a real schema.
pub fn row_shapes(dialect: Dialect) -> Vec<RowShape> {
    vec![
        RowShape::of::<KnownColumns, _>(&queries::MODELS_KNOWN, dialect),
        RowShape::of::<UsedColumns, _>(&queries::MODELS_FROM_HISTORY, dialect),
        RowShape::of::<TemplatesFrom, _>(&queries::LAST_TEMPLATES_FROM, dialect),
    ]
}

impl Known {
    fn live(&self) -> bool {
        self.retired.is_none()
    }
}

/// The models the database knows, and whether they are recorded. A database whose runs
/// predate `models` (an older sqlrun) knows the models its latest run used, read from
/// the text of their recorded versions; they are recorded with the first change.
fn known(db: &mut Db) -> Result<(Vec<Known>, bool)> {
    let rows = db.rows_as::<KnownColumns, _>(&queries::MODELS_KNOWN, &[])?;
    if !rows.is_empty() {
        return Ok((rows.into_iter().map(Known::from).collect(), true));
    }
    let mut known = Vec::new();
    for r in db.rows_as::<UsedColumns, _>(&queries::MODELS_FROM_HISTORY, &[])? {
        let name = r.name.trim_start_matches("models/").to_string();
        let header = crate::pipeline::templates::model_header(&r.body);
        let list = |key: &str| -> Vec<String> {
            header
                .get(key)
                .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
                .unwrap_or_default()
        };
        let mut key = list("key");
        if key.is_empty() {
            key = vec![header.get("date_column").cloned().unwrap_or("ds".into())];
        }
        known.push(Known {
            table: header.get("table").cloned().unwrap_or_else(|| name.clone()),
            name,
            key: key.join(", "),
            version: r.version,
            first_seen_at: r.first_used_at,
            first_run_id: r.first_run_id,
            retired: None,
        });
    }
    Ok((known, false))
}

/// How the templates differ from the pipeline the database knows, one line each, and
/// the models whose retirement would end the difference.
/// `reverted`: the models whose file is an older version recorded with this very text.
fn differences(
    known: &[Known],
    pipeline: &Pipeline,
    reverted: &HashSet<String>,
) -> (Vec<String>, Vec<String>) {
    let (mut lines, mut retire) = (Vec::new(), Vec::new());
    for k in known.iter().filter(|k| k.live()) {
        match pipeline.model(&k.name) {
            None => {
                lines.push(format!(
                    "model {} (table {}, known here since {}) is not in them",
                    k.name, k.table, k.first_seen_at
                ));
                retire.push(k.name.clone());
            }
            Some(m) if m.table != k.table => {
                lines.push(format!(
                    "model {} fills table {} in them, but table {} here",
                    k.name, m.table, k.table
                ));
                retire.push(k.name.clone());
            }
            // A version goes up, never down: an older one is another pipeline's (the
            // built-in templates run on a project's database, say), unless its text is
            // that version's as recorded: a revert, that version again.
            Some(m) if m.version < k.version && !reverted.contains(&m.template) => {
                lines.push(format!(
                    "model {} is version {} in them, but this database's dates were built by \
                     version {}, and its version {} here had another text (a revert to an \
                     older version keeps that version's text exactly)",
                    k.name, m.version, k.version, m.version
                ))
            }
            Some(_) => {}
        }
    }
    for m in &pipeline.models {
        let owner = known
            .iter()
            .find(|k| k.live() && k.table == m.table && k.name != m.name);
        if let Some(k) = owner {
            lines.push(format!(
                "they give table {} to model {}, but here it is model {}'s",
                m.table, m.name, k.name
            ));
            if !retire.contains(&k.name) {
                retire.push(k.name.clone());
            }
        }
    }
    (lines, retire)
}

/// Refuses templates that are not this database's pipeline (reads only). Returns
/// whether recording the templates' models would write: a model new here, one back from
/// a retirement, or models not recorded yet.
pub fn check(db: &mut Db, pipeline: &Pipeline) -> Result<bool> {
    let (known, recorded) = known(db)?;
    refuse_differences(db, pipeline, &known)?;
    let unrecorded = pipeline.models.iter().any(|m| {
        known
            .iter()
            .find(|k| k.name == m.name)
            .is_none_or(|k| !k.live())
    });
    Ok(unrecorded || !recorded)
}

fn refuse_differences(db: &mut Db, pipeline: &Pipeline, known: &[Known]) -> Result<()> {
    let reverted = match known.iter().any(|k| {
        pipeline
            .model(&k.name)
            .is_some_and(|m| m.version < k.version)
    }) {
        true => versions::recorded_again(db, &pipeline.templates)?,
        false => HashSet::new(),
    };
    let (lines, retire) = differences(known, pipeline, &reverted);
    if lines.is_empty() {
        return Ok(());
    }
    let origin = &pipeline.templates.origin;
    let templates = match origin.as_str() {
        "built-in" => "the built-in templates".to_string(),
        dir => format!("the templates in {dir}"),
    };
    // The folder the database's runs recorded is the likely right one.
    let last: Option<TemplatesFrom> = db.row_as(&queries::LAST_TEMPLATES_FROM, &[])?;
    let hint = match last {
        Some(r) if r.templates_from != *origin => {
            let (run, from) = (r.run_id, r.templates_from);
            match from.as_str() {
                "built-in" => format!(
                    "its latest run, run {run}, used the built-in ones: leave out --templates"
                ),
                dir => format!("its latest run, run {run}, used `--templates {dir}`"),
            }
        }
        _ => "the ones its runs used".to_string(),
    };
    let retire: Vec<String> = retire
        .iter()
        .map(|name| format!("`sqlrun retire {name} --reason \"...\"`"))
        .collect();
    let retire = match retire.is_empty() {
        true => String::new(),
        false => format!(
            "; or, if a model is gone for good, retire it explicitly (recorded; its table and \
             rows stay): {}",
            retire.join(", ")
        ),
    };
    Err(Error::WrongPipeline(format!(
        "{templates} are not the pipeline of database {}:\n  - {}\nWays out: run it with this \
         database's templates ({hint}), or from its project{retire}",
        db.target,
        lines.join("\n  - "),
    )))
}

/// Records the templates' models, in the caller's transaction (the one that creates
/// their objects, or a run's first): refuses the wrong pipeline, records a database's
/// models the first time, adds new models, restores retired ones that are back in the
/// templates, keeps versions and keys current, and gives `run_id` (the run that uses
/// them) to models no run used yet. Returns what is worth saying.
pub fn record(db: &mut Db, pipeline: &Pipeline, run_id: Option<i64>) -> Result<Vec<String>> {
    let (known, recorded) = known(db)?;
    refuse_differences(db, pipeline, &known)?;
    let by = default_user();
    if !recorded {
        record_history(db, &known, &by)?;
    }
    let mut notes = Vec::new();
    for m in &pipeline.models {
        db.execute(
            &queries::RECORD_MODEL,
            &[
                (":name", m.name.as_str().into()),
                (":table", m.table.as_str().into()),
                (":key", m.key.join(", ").into()),
                (":version", m.version.into()),
                (":first_seen_at", Value::Null),
                (":run_id", Value::opt_int(run_id)),
            ],
        )?;
        let (event, detail) = match known.iter().find(|k| k.name == m.name) {
            None => {
                if !known.is_empty() {
                    notes.push(format!(
                        "model {} (table {}) is new to this database's pipeline: recorded",
                        m.name, m.table
                    ));
                }
                ("added", format!("from {}", pipeline.path_of(m)))
            }
            Some(Known {
                retired: Some(r), ..
            }) => {
                let detail = format!(
                    "back in the templates ({}); it was retired {} by {}: {}",
                    pipeline.path_of(m),
                    r.at,
                    r.by,
                    r.reason
                );
                notes.push(format!(
                    "model {} is back in the templates: restored (it was retired {} by {}); \
                     `sqlrun retire {}` retires it again",
                    m.name, r.at, r.by, m.name
                ));
                ("restored", detail)
            }
            Some(k) => {
                if k.version > m.version {
                    notes.push(format!(
                        "model {} is version {} again (its text as recorded): dates built by \
                         version {} are current, those built by version {} stale",
                        m.name, m.version, m.version, k.version
                    ));
                }
                continue;
            }
        };
        event_row(db, &m.name, event, &by, &detail)?;
    }
    Ok(notes)
}

/// The models of a database whose runs predate `models`, as its latest run used them.
fn record_history(db: &mut Db, known: &[Known], by: &str) -> Result<()> {
    for k in known {
        db.execute(
            &queries::RECORD_MODEL,
            &[
                (":name", k.name.as_str().into()),
                (":table", k.table.as_str().into()),
                (":key", k.key.as_str().into()),
                (":version", k.version.into()),
                (":first_seen_at", k.first_seen_at.as_str().into()),
                (":run_id", Value::opt_int(k.first_run_id)),
            ],
        )?;
        let detail = "as its latest run used it (that run predates the models table)";
        event_row(db, &k.name, "added", by, detail)?;
    }
    Ok(())
}

fn event_row(db: &mut Db, model: &str, event: &str, by: &str, detail: &str) -> Result<()> {
    db.execute(
        &queries::RECORD_MODEL_EVENT,
        &[
            (":model", model.into()),
            (":event", event.into()),
            (":by", by.into()),
            (":detail", detail.into()),
        ],
    )?;
    Ok(())
}

/// `sqlrun retire MODEL --reason TEXT [--by NAME]` as asked.
#[derive(Debug, Clone, Default)]
pub struct RetireRequest {
    pub model: String,
    pub reason: String,
    pub by: Option<String>,
}

/// A retirement whose input is valid: a reason, and a model the templates no longer have.
pub struct CheckedRetire {
    pub model: String,
    pub reason: String,
    pub by: String,
}

/// Refuses an empty reason.
pub fn check_retire(request: &RetireRequest) -> Result<CheckedRetire> {
    if request.reason.trim().is_empty() {
        return Err(Error::bad(
            "--reason is empty; say why the model is gone, e.g. --reason \"replaced by daily_revenue_v2\"",
        ));
    }
    Ok(CheckedRetire {
        model: request.model.clone(),
        reason: request.reason.clone(),
        by: request.by.clone().unwrap_or_else(default_user),
    })
}

/// Refuses a model still in the templates: it would be restored by the next command that
/// uses them.
pub fn refuse_if_in_templates(r: &CheckedRetire, pipeline: &Pipeline) -> Result<()> {
    let name = &r.model;
    match pipeline.model(name) {
        None => Ok(()),
        Some(m) => Err(Error::bad(format!(
            "model {name} is still in the templates ({}): remove that file first (or name the \
             templates without it), then retire it; a retired model that is in the templates \
             is restored by the next command",
            pipeline.path_of(m)
        ))),
    }
}

/// The model is gone from the pipeline for good: recorded, with who and why. Its table and
/// rows stay; templates without it are accepted from now on.
pub fn retire(db: &mut Db, r: &CheckedRetire) -> Result<Known> {
    let (name, by, reason) = (r.model.as_str(), r.by.as_str(), r.reason.as_str());
    db.transaction(TxKind::Exclusive, |db| {
        let (known, recorded) = known(db)?;
        let model = retirable(db, &known, name)?;
        if !recorded {
            record_history(db, &known, by)?;
        }
        db.execute(
            &queries::RETIRE_MODEL,
            &[
                (":name", name.into()),
                (":by", by.into()),
                (":reason", reason.into()),
            ],
        )?;
        event_row(db, name, "retired", by, reason)?;
        Ok(model)
    })
}

/// The known model of that name, unless there is none or it is retired already.
fn retirable(db: &Db, known: &[Known], name: &str) -> Result<Known> {
    let Some(model) = known.iter().find(|k| k.name == name).cloned() else {
        let live: Vec<&str> = known
            .iter()
            .filter(|k| k.live())
            .map(|k| k.name.as_str())
            .collect();
        return Err(Error::bad(format!(
            "database {} knows no model {name}; its models are: {}",
            db.target,
            if live.is_empty() {
                "none yet".to_string()
            } else {
                live.join(", ")
            }
        )));
    };
    if let Some(r) = &model.retired {
        return Err(Error::bad(format!(
            "model {name} was already retired {} by {}: {}",
            r.at, r.by, r.reason
        )));
    }
    Ok(model)
}
