//! `sqlrun corrections`: per model, a table of its corrections (JSON: the rows with their
//! key and values typed).

use serde_json::{Map, Value as Json};

use crate::corrections::{Correction, ModelCorrections};
use crate::error::Result;
use crate::output::Output;
use crate::table::{cell, table};

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
                    "run",
                    "at",
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

/// A correction's lines: one per value column.
fn table_rows(c: &Correction) -> Vec<Vec<String>> {
    let key: Vec<String> = c.key.iter().map(|k| k.kind.show(&k.value)).collect();
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
                cell(&c.record["run_id"]),
                cell(&c.record["corrected_at"]),
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
