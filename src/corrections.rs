//! The corrections of sealed dates, per model, as `sqlrun corrections` reads them: each
//! with its key and, per value column, what was sent, what it superseded and what is
//! true now, every value typed by its column's kind.

use std::collections::BTreeMap;

use minijinja::context;
use serde_json::{Map, Value as Json};

use crate::db::Db;
use crate::error::Result;
use crate::interval::{fmt_date, Interval};
use crate::kinds::Kind;
use crate::pipeline::{to_value, Model, Pipeline};
use crate::queries;
use crate::store::rows_as_json;

/// One model's corrections in the interval.
pub struct ModelCorrections<'a> {
    pub model: &'a Model,
    pub rows: Vec<Correction>,
}

/// One correction row: the state store's columns as they are, and its key and values
/// typed by their columns' kinds.
pub struct Correction {
    pub record: Map<String, Json>,
    pub key: Vec<KeyPart>,
    pub values: Vec<ValueChange>,
    /// The key vanished from the recomputed date.
    pub removed: bool,
}

pub struct KeyPart {
    pub column: String,
    pub kind: Kind,
    pub value: Json,
}

pub struct ValueChange {
    pub column: String,
    pub kind: Kind,
    pub sent: Json,
    pub previous: Json,
    pub now: Json,
    /// now - sent, where the kind has a difference.
    pub delta: Option<Json>,
}

/// Every model's corrections on the dates of `interval` (all dates without one).
pub fn list<'a>(
    db: &mut Db,
    pipeline: &'a Pipeline,
    interval: Option<Interval>,
) -> Result<Vec<ModelCorrections<'a>>> {
    let (start, end) = match interval {
        Some(i) => (fmt_date(i.start), fmt_date(i.end)),
        None => ("0001-01-01".to_string(), "9999-12-31".to_string()),
    };
    let mut all = Vec::new();
    for model in &pipeline.models {
        let sql = pipeline.render_system(
            "corrections_list",
            context! { model => to_value(model), start => start.clone(), end => end.clone() },
        )?;
        let records = rows_as_json(db, sql.as_str(), &[])?;
        let kinds = ColumnKinds::read(db, &model.table)?;
        let rows = records
            .into_iter()
            .map(|record| correction(model, &kinds, record))
            .collect();
        all.push(ModelCorrections { model, rows });
    }
    Ok(all)
}

fn correction(model: &Model, kinds: &ColumnKinds, record: Map<String, Json>) -> Correction {
    let key = model
        .key
        .iter()
        .map(|k| {
            let value = record[&format!("key_{k}")].clone();
            KeyPart {
                column: k.clone(),
                kind: kinds.of(k, &[&value]),
                value,
            }
        })
        .collect();
    let values = model
        .values
        .iter()
        .map(|v| {
            let [sent, previous, now] =
                ["sent", "previous", "now"].map(|side| record[&format!("{side}_{v}")].clone());
            let kind = kinds.of(v, &[&sent, &previous, &now]);
            ValueChange {
                column: v.clone(),
                kind,
                delta: kind.delta(&sent, &now),
                sent,
                previous,
                now,
            }
        })
        .collect();
    Correction {
        removed: record["removed"].as_i64() == Some(1),
        record,
        key,
        values,
    }
}

/// The declared kind of each column of a model's table: a value is shown as its column's
/// kind (a count is a count, text is text), also where it is NULL.
struct ColumnKinds(BTreeMap<String, Option<Kind>>);

impl ColumnKinds {
    fn read(db: &mut Db, table: &str) -> Result<ColumnKinds> {
        let kinds = db
            .rows(&queries::COLUMN_TYPES, &[(":table", table.into())])?
            .iter()
            .map(|r| Ok((r.text(0)?, Kind::parse(r.opt_text(1)?.as_deref()))))
            .collect::<Result<_>>()?;
        Ok(ColumnKinds(kinds))
    }

    fn of(&self, column: &str, values: &[&Json]) -> Kind {
        Kind::resolve(
            self.0.get(column).copied().flatten(),
            values.iter().copied(),
        )
    }
}
