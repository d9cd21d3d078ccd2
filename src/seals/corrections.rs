//! The corrections of sealed dates, per model, as `sqlrun corrections` reads them (each
//! model's `<table>_corrections_feed` view): each with its key and, per value column,
//! what the seal version it departs from sent, what it superseded and what is true now,
//! every value typed by its column's kind; its seal version, cause and author. Filtered
//! by model, dates, and since a seal event or a time.

use std::collections::BTreeMap;

use minijinja::context;
use serde_json::{Map, Value as Json};

use crate::dates::interval::{fmt_date, Interval};
use crate::db::{Db, RowShape};
use crate::error::{Error, Result};
use crate::pipeline::{to_value, Model, Pipeline};
use crate::store::rows_as_json;
use crate::store::{self, queries};
use crate::text::kinds::Kind;

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

/// `sqlrun corrections` as asked (text as given; checked by `check`).
#[derive(Debug, Clone)]
pub struct FeedRequest {
    pub interval: Option<String>,
    pub select: Vec<String>,
    pub since: Option<String>,
    pub format: FeedShape,
}

/// How the feed prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedShape {
    Text,
    Json,
    Csv,
}

/// `--since`: after a seal event, or from a time on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Since {
    /// Written after this seal event (by the newest event each correction saw).
    Seal(i64),
    /// Written at or after this UTC time, `YYYY-MM-DD HH:MM:SS`.
    Time(String),
}

/// A feed request whose input is valid.
pub struct Feed {
    pub interval: Option<Interval>,
    pub select: Vec<String>,
    pub since: Option<Since>,
    pub format: FeedShape,
}

pub fn check(request: &FeedRequest) -> Result<Feed> {
    Ok(Feed {
        interval: request
            .interval
            .as_deref()
            .map(Interval::parse)
            .transpose()?,
        select: request.select.clone(),
        since: request.since.as_deref().map(parse_since).transpose()?,
        format: request.format,
    })
}

/// A seal id (digits), or a time: `YYYY-MM-DD HH:MM:SS`, `YYYY-MM-DDTHH:MM:SS` (UTC), with
/// an offset (`+01:00`, `Z`) taken as written, or a date (its midnight, UTC).
pub fn parse_since(text: &str) -> Result<Since> {
    use chrono::{DateTime, NaiveDate, NaiveDateTime};
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse()
            .map(Since::Seal)
            .map_err(|_| Error::bad(format!("--since {t}: no such seal id")));
    }
    let utc = |n: NaiveDateTime| Since::Time(n.format("%Y-%m-%d %H:%M:%S").to_string());
    // `Z` is UTC, the offset +00:00.
    let zoned = match t.strip_suffix('Z') {
        Some(rest) => format!("{rest}+00:00"),
        None => t.to_string(),
    };
    for format in ["%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S"] {
        if let Ok(n) = NaiveDateTime::parse_from_str(t, format) {
            return Ok(utc(n));
        }
        for offset in ["%:z", "%z"] {
            if let Ok(d) = DateTime::parse_from_str(&zoned, &format!("{format}{offset}")) {
                return Ok(utc(d.naive_utc()));
            }
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return Ok(utc(d.and_hms_opt(0, 0, 0).expect("midnight")));
    }
    Err(Error::bad(format!(
        "--since {t:?} is neither a seal id nor a time; give the id `sqlrun seal` printed \
         (e.g. --since 3) or a UTC time `YYYY-MM-DD HH:MM:SS` (e.g. --since \"2026-03-01 \
         08:00:00\", or with an offset: 2026-03-01T09:00:00+01:00)"
    )))
}

/// The feed: each selected model's corrections on the dates of the interval (all dates
/// without one), since the seal or time given.
pub fn list<'a>(
    db: &mut Db,
    pipeline: &'a Pipeline,
    feed: &Feed,
) -> Result<Vec<ModelCorrections<'a>>> {
    let (start, end) = match feed.interval {
        Some(i) => (fmt_date(i.start), fmt_date(i.end)),
        None => ("0001-01-01".to_string(), "9999-12-31".to_string()),
    };
    pipeline.known_models(&feed.select)?;
    if let Some(Since::Seal(id)) = feed.since {
        if db
            .row(&queries::SEAL_EVENT, &[(":seal_id", id.into())])?
            .is_none()
        {
            return Err(Error::bad(format!(
                "--since {id}: there is no seal event {id}; `sqlrun status` and the seal \
                 lines of `sqlrun runs` name them"
            )));
        }
    }
    let (since_seal, since_time) = match &feed.since {
        Some(Since::Seal(id)) => (Some(*id), None),
        Some(Since::Time(t)) => (None, Some(t.clone())),
        None => (None, None),
    };
    let mut all = Vec::new();
    let chosen = pipeline
        .models
        .iter()
        .filter(|m| feed.select.is_empty() || feed.select.contains(&m.name));
    for model in chosen {
        let since = (since_seal, since_time.clone());
        let sql = corrections_list_sql(pipeline, model, (&start, &end), since)?;
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
        removed: record["removed"].as_i64() == Some(1) || record["removed"] == Json::Bool(true),
        record,
        key,
        values,
    }
}

/// A model's corrections on the dates `start..end`, since a seal or a time.
fn corrections_list_sql(
    pipeline: &Pipeline,
    model: &Model,
    (start, end): (&str, &str),
    (since_seal, since_time): (Option<i64>, Option<String>),
) -> Result<String> {
    pipeline.render_system(
        "corrections_list",
        context! {
            model => to_value(model), start => start, end => end,
            since_seal => since_seal, since_time => since_time,
        },
    )
}

/// The rows this file reads, rendered for `pipeline`, for the test that prepares each
/// against a real schema: the corrections feed is printed as it comes (any columns), a
/// seal event only looked for.
pub fn row_shapes(pipeline: &Pipeline) -> Result<Vec<RowShape>> {
    let d = pipeline.dialect;
    let mut shapes = vec![RowShape::any(&queries::SEAL_EVENT, d)];
    for model in &pipeline.models {
        let dates = ("2026-02-01", "2026-02-07");
        for since in [
            (Some(1), None),
            (None, Some("2026-02-01 00:00:00".to_string())),
        ] {
            let sql = corrections_list_sql(pipeline, model, dates, since)?;
            shapes.push(RowShape::any(sql.as_str(), d));
        }
    }
    Ok(shapes)
}

/// The declared kind of each column of a model's table: a value is shown as its column's
/// kind (a count is a count, text is text), also where it is NULL.
pub(crate) struct ColumnKinds(BTreeMap<String, Option<Kind>>);

impl ColumnKinds {
    pub(crate) fn read(db: &mut Db, table: &str) -> Result<ColumnKinds> {
        let kinds = store::table_columns(db, table)?
            .into_iter()
            .map(|c| (c.name, Kind::parse(c.kind.as_deref())))
            .collect();
        Ok(ColumnKinds(kinds))
    }

    pub(crate) fn of(&self, column: &str, values: &[&Json]) -> Kind {
        Kind::resolve(
            self.0.get(column).copied().flatten(),
            values.iter().copied(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_since, Since};

    fn time(t: &str) -> Since {
        Since::Time(t.to_string())
    }

    #[test]
    fn since_is_a_seal_id_or_a_utc_time() {
        let cases = [
            ("3", Since::Seal(3)),
            ("2026-03-01 08:00:00", time("2026-03-01 08:00:00")),
            ("2026-03-01T08:00:00", time("2026-03-01 08:00:00")),
            ("2026-03-01T09:00:00+01:00", time("2026-03-01 08:00:00")),
            ("2026-03-01 09:00:00+0100", time("2026-03-01 08:00:00")),
            ("2026-03-01T08:00:00Z", time("2026-03-01 08:00:00")),
            ("2026-03-01T00:30:00-02:00", time("2026-03-01 02:30:00")),
            ("2026-03-01", time("2026-03-01 00:00:00")),
        ];
        for (text, want) in cases {
            assert_eq!(parse_since(text).unwrap(), want, "{text}");
        }
        for bad in ["yesterday", "2026-03-01 8am", "2026-02-30", "-1", ""] {
            assert!(parse_since(bad).is_err(), "{bad}");
        }
    }
}
