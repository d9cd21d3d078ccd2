//! `sqlrun corrections`: per model, a table of its corrections (JSON: the rows with their
//! key and values typed; CSV: a line per value of each correction, every model in one).

use serde_json::{Map, Value as Json};

use crate::error::Result;
use crate::output::Output;
use crate::seals::corrections::{Correction, ModelCorrections};
use crate::text::table::{cell, table};
use crate::text::words::Cause;

pub fn corrections(models: &[ModelCorrections], out: &Output) -> Result<()> {
    let mut doc = Map::new();
    let mut text = String::new();
    for m in models {
        if !m.rows.is_empty() {
            text.push_str(&format!("{} corrections:\n", m.model.table));
            text.push_str(&table(
                &[
                    "id",
                    "key",
                    "column",
                    "type",
                    "sent",
                    "previous",
                    "now",
                    "now - sent",
                    "seal",
                    "cause",
                    "run",
                    "by",
                    "at",
                    "settled",
                ],
                &m.rows.iter().flat_map(table_rows).collect::<Vec<_>>(),
            ));
        }
        let rows = m.rows.iter().map(|c| Json::Object(document(c))).collect();
        doc.insert(m.model.name.clone(), Json::Array(rows));
    }
    out.json(&doc)?;
    if text.is_empty() {
        text = "no corrections".into();
    }
    out.text(&text)
}

/// The CSV header: one line per value column of each correction.
const CSV_HEADER: [&str; 17] = [
    "model",
    "correction_id",
    "key",
    "column",
    "type",
    "sent",
    "previous",
    "now",
    "delta",
    "removed",
    "seal_id",
    "cause",
    "run_id",
    "run_by",
    "corrected_at",
    "settled_by",
    "settled_action",
];

pub fn csv(models: &[ModelCorrections]) -> Result<()> {
    let mut w = csv::Writer::from_writer(std::io::stdout().lock());
    w.write_record(CSV_HEADER).map_err(std::io::Error::from)?;
    for m in models {
        for c in &m.rows {
            let key: Vec<String> = c.key.iter().map(|k| plain(&k.value)).collect();
            for v in &c.values {
                let field = |name: &str| plain(&c.record[name]);
                let line = [
                    m.model.name.clone(),
                    field("correction_id"),
                    key.join(" "),
                    v.column.clone(),
                    v.kind.name().into(),
                    plain(&v.sent),
                    plain(&v.previous),
                    if c.removed {
                        String::new()
                    } else {
                        plain(&v.now)
                    },
                    v.delta.as_ref().map(plain).unwrap_or_default(),
                    c.removed.to_string(),
                    field("seal_id"),
                    field("cause"),
                    field("run_id"),
                    field("run_by"),
                    field("corrected_at"),
                    field("settled_by"),
                    field("settled_action"),
                ];
                w.write_record(&line).map_err(std::io::Error::from)?;
            }
        }
    }
    w.flush()?;
    Ok(())
}

/// A value as a CSV field: NULL is empty, text as it is.
fn plain(v: &Json) -> String {
    match v {
        Json::Null => String::new(),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// How a correction's cause reads (none: written before sqlrun recorded causes).
fn cause(c: &Correction) -> String {
    match c.record["cause"].as_str().and_then(Cause::parse) {
        Some(cause) => cause.said().into(),
        None => "-".into(),
    }
}

/// A correction's lines: one per value column.
fn table_rows(c: &Correction) -> Vec<Vec<String>> {
    let key: Vec<String> = c.key.iter().map(|k| k.kind.show(&k.value)).collect();
    let settled = match (&c.record["settled_by"], &c.record["settled_action"]) {
        (Json::Null, _) => "-".to_string(),
        (id, action) => format!("{} {}", plain(action), plain(id)),
    };
    c.values
        .iter()
        .map(|v| {
            vec![
                cell(&c.record["correction_id"]),
                key.join(" "),
                v.column.clone(),
                v.kind.name().into(),
                v.kind.show(&v.sent),
                v.kind.show(&v.previous),
                if c.removed {
                    "(removed)".into()
                } else {
                    v.kind.show(&v.now)
                },
                v.kind.show_delta(v.delta.as_ref()),
                cell(&c.record["seal_id"]),
                cause(c),
                cell(&c.record["run_id"]),
                cell(&c.record["run_by"]),
                cell(&c.record["corrected_at"]),
                settled.clone(),
            ]
        })
        .collect()
}

/// The row as the state store has it, with `key` and `values` typed.
fn document(c: &Correction) -> Map<String, Json> {
    let mut doc = c.record.clone();
    let key = c
        .key
        .iter()
        .map(|k| serde_json::json!({"column": k.column, "type": k.kind, "value": k.kind.typed(&k.value)}))
        .collect();
    let values = c
        .values
        .iter()
        .map(|v| {
            serde_json::json!({
                "column": v.column,
                "type": v.kind,
                "sent": v.kind.typed(&v.sent),
                "previous": v.kind.typed(&v.previous),
                "now": v.kind.typed(&v.now),
                "delta": v.delta,
            })
        })
        .collect();
    doc.insert("key".into(), Json::Array(key));
    doc.insert("values".into(), Json::Array(values));
    doc
}
