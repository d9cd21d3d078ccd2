//! The commands that read: `init`, `status`, `runs`, `corrections`, `render`, `templates`.

use std::collections::BTreeMap;

use minijinja::context;
use serde_json::{Map, Value as Json};

use crate::db::{Db, Params, Sql};
use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::interval::{contiguous, fmt_date, parse_date, Interval};
use crate::kinds::Kind;
use crate::pipeline::{DateVars, Pipeline};
use crate::queries;
use crate::report::{self, table, DateOutcome, Output};
use crate::reserve;
use crate::settings::Settings;
use crate::store::{self, now};
use crate::vocabulary::DateStatus;

/// The pipeline and its database, for a command that only reads: read-only when nothing
/// needs writing (see `store::open_to_read`).
fn open(global: &Settings, select: &[String]) -> Result<(Pipeline, Db)> {
    let target = store::target(global)?;
    let mut pipeline = Pipeline::load(global.templates.as_deref(), target.dialect())?;
    if !select.is_empty() {
        pipeline.select(select)?;
    }
    let db = store::open_to_read(&target, Some(&pipeline))?;
    Ok((pipeline, db))
}

pub fn init(global: &Settings, out: &Output) -> Result<Exit> {
    let target = store::target(global)?;
    let pipeline = Pipeline::load(global.templates.as_deref(), target.dialect())?;
    let mut db = Db::open(&target)?;
    for note in pipeline.sync(&mut db)? {
        out.note(&note);
    }
    let models: Vec<&str> = pipeline.models.iter().map(|m| m.name.as_str()).collect();
    let project = global.project.as_ref().map(|p| p.display().to_string());
    out.json(&serde_json::json!({"db": db.target.to_string(), "dialect": db.dialect(), "models": models, "templates": pipeline.templates.origin, "project": project}))?;
    let from = project.map_or(String::new(), |p| {
        format!("\nsettings from project file {p}")
    });
    out.text(&format!(
        "{} is ready: state store and pipeline ({} templates; models: {}){from}",
        db.target,
        pipeline.templates.origin,
        models.join(", ")
    ))?;
    Ok(Exit::Done)
}

/// `sqlrun runs`: the runs, newest first, each with its dates in brief; `runs N`: one
/// run, its dates as ranges per status (`--dates`: each date), events and templates.
pub fn runs(
    global: &Settings,
    run_id: Option<i64>,
    limit: u32,
    each_date: bool,
    out: &Output,
) -> Result<Exit> {
    let mut db = store::open_to_read(&store::target(global)?, None)?;
    match run_id {
        None => runs_list(&mut db, limit, out)?,
        Some(run_id) => run_detail(&mut db, run_id, each_date, out)?,
    }
    Ok(Exit::Done)
}

/// The runs list: per run, its dates counted per status, with where the failed and
/// skipped ones are (`failed_ranges`, `skipped_ranges` in JSON).
fn runs_list(db: &mut Db, limit: u32, out: &Output) -> Result<()> {
    let mut rows = rows_as_json(
        db,
        &queries::LIST_RUNS,
        &[(":limit", i64::from(limit).into())],
    )?;
    // The list is the newest runs: every run from the oldest listed one on.
    let oldest = rows.last().and_then(|r| r["run_id"].as_i64());
    let not_done = match oldest {
        Some(oldest) => rows_as_json(
            db,
            &queries::RUN_DATES_NOT_DONE,
            &[(":oldest", oldest.into())],
        )?,
        None => Vec::new(),
    };
    for r in &mut rows {
        for status in [DateStatus::Failed, DateStatus::Skipped] {
            let dates = not_done
                .iter()
                .filter(|d| d["run_id"] == r["run_id"] && d["status"] == status.as_str())
                .map(|d| parse_date(&cell(&d["ds"]), "date"))
                .collect::<Result<Vec<_>>>()?;
            let ranges: Vec<Json> = contiguous(&dates)
                .iter()
                .map(|i| Json::String(i.to_string()))
                .collect();
            r.insert(format!("{status}_ranges"), Json::Array(ranges));
        }
    }
    out.json(&rows)?;
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let interval = if r["interval_start"] == r["interval_end"] {
                cell(&r["interval_start"])
            } else {
                format!(
                    "{}..{}",
                    cell(&r["interval_start"]),
                    cell(&r["interval_end"])
                )
            };
            vec![
                cell(&r["run_id"]),
                cell(&r["kind"]),
                interval,
                cell(&r["status"]),
                cell(&r["requested_by"]),
                cell(&r["created_at"]),
                cell(&r["finished_at"]),
                dates_in_brief(r),
            ]
        })
        .collect();
    out.text(&table(
        &[
            "run", "kind", "interval", "status", "by", "created", "finished", "dates",
        ],
        &table_rows,
    ))
}

/// A run's dates in one cell: `88 success, 1 failed (2026-04-01), 4 skipped
/// (2026-04-02..2026-04-05), holding 3`; at most two ranges each, then how many more.
fn dates_in_brief(r: &Map<String, Json>) -> String {
    let mut parts = Vec::new();
    for &status in DateStatus::ALL {
        let n = r[status.as_str()].as_i64().unwrap_or(0);
        if n == 0 {
            continue;
        }
        let ranges: Vec<String> = match r.get(&format!("{status}_ranges")) {
            Some(Json::Array(ranges)) => ranges.iter().map(cell).collect(),
            _ => Vec::new(),
        };
        let place = match ranges.as_slice() {
            [] => String::new(),
            [a] => format!(" ({a})"),
            [a, b] => format!(" ({a}, {b})"),
            [a, b, rest @ ..] => format!(" ({a}, {b}, +{} more)", rest.len()),
        };
        parts.push(format!("{} {status}{place}", report::thousands(n)));
    }
    let holding = r["holding"].as_i64().unwrap_or(0);
    if holding > 0 {
        parts.push(format!("holding {}", report::thousands(holding)));
    }
    if parts.is_empty() {
        return "no dates".into();
    }
    parts.join(", ")
}

/// One run: what it was, its dates (ranges, or each with `each_date`), its events.
fn run_detail(db: &mut Db, run_id: i64, each_date: bool, out: &Output) -> Result<()> {
    let run = store::existing_run(db, run_id)?;
    let by_run = [(":run_id", run_id.into())];
    let dates = rows_as_json(db, &queries::RUN_PARTITIONS_OF_RUN, &by_run)?;
    let events = rows_as_json(db, &queries::RUN_EVENTS_OF_RUN, &by_run)?;
    let templates = rows_as_json(db, &queries::RUN_TEMPLATES_OF_RUN, &by_run)?;
    let outcomes = dates
        .iter()
        .map(|d| outcome_of(run_id, d))
        .collect::<Result<Vec<_>>>()?;
    let ranges = report::outcome_ranges(&outcomes)?;
    out.json(&serde_json::json!({"run": run, "dates": dates, "ranges": ranges, "events": events, "templates": templates}))?;
    let mut text = run_header(&run, &templates);
    text.push('\n');
    if outcomes.is_empty() {
        text.push_str("no dates recorded yet\n");
    } else if each_date {
        text.push_str(&dates_table(&dates));
    } else {
        text.push_str(&format!(
            "dates: {} (`sqlrun runs {run_id} --dates` lists each)\n",
            report::status_counts(&outcomes).join(", ")
        ));
        text.push_str(&report::outcome_lines(&ranges, &|h| {
            format!("held by run {h}")
        }));
    }
    if !events.is_empty() {
        text.push('\n');
        text.push_str(&events_table(&events));
    }
    out.text(&text)
}

/// A `run_partitions` row as the outcome of its date.
fn outcome_of(run_id: i64, d: &Map<String, Json>) -> Result<DateOutcome> {
    let text = cell(&d["status"]);
    let status = DateStatus::parse(&text).ok_or_else(|| {
        Error::bad(format!(
            "run {run_id}: {} has the status `{text}`, which this sqlrun does not know; \
             a newer sqlrun wrote it: use that version",
            cell(&d["ds"])
        ))
    })?;
    Ok(DateOutcome {
        ds: cell(&d["ds"]),
        status,
        error: d["error"].as_str().map(str::to_string),
        held_by: d["held_by"].as_i64(),
        millis: None,
    })
}

/// Who ran it, when, how, with which templates.
fn run_header(run: &store::RunRow, templates: &[Map<String, Json>]) -> String {
    let mut text = format!(
        "run {} ({}) {}: {}\n  requested by {}{}\n  created {}, started {}, finished {}\n",
        run.run_id,
        run.kind,
        report::range_text(&run.interval_start, &run.interval_end),
        run.status,
        run.requested_by,
        run.reason
            .as_deref()
            .map(|r| format!(", reason: {r}"))
            .unwrap_or_default(),
        run.created_at,
        run.started_at.as_deref().unwrap_or("-"),
        run.finished_at.as_deref().unwrap_or("-"),
    );
    if let Some(c) = &run.command {
        text.push_str(&format!("  command: {c}\n"));
    }
    if let Some(s) = &run.scheduler {
        text.push_str(&format!("  started by {}\n", report::scheduler_line(s)));
    }
    if let Some(days) = run.lookback {
        text.push_str(&format!(
            "  looked back {days} days before {} for missing, failed and changed dates\n",
            run.interval_end
        ));
    }
    if let (Some(host), Some(pid)) = (&run.host, run.pid) {
        let on = run.dialect.as_deref().unwrap_or("sqlite");
        let jobs = match run.jobs {
            Some(1) => ", 1 date at a time".to_string(),
            Some(n) => format!(", {n} dates at a time (--jobs {n})"),
            None => String::new(),
        };
        text.push_str(&format!("  process {pid} on {host}, database {on}{jobs}\n"));
    }
    if let Some(e) = &run.error {
        text.push_str(&format!("  note: {e}\n"));
    }
    if !templates.is_empty() {
        let list: Vec<String> = templates
            .iter()
            .filter(|t| t["kind"] != "system")
            .map(|t| format!("{}@{}", cell(&t["name"]), cell(&t["version"])))
            .collect();
        text.push_str(&format!("  templates: {}\n", list.join(", ")));
    }
    text
}

/// `runs N --dates`: each date on its own line.
fn dates_table(dates: &[Map<String, Json>]) -> String {
    let rows: Vec<Vec<String>> = dates
        .iter()
        .map(|d| {
            vec![
                cell(&d["ds"]),
                cell(&d["status"]),
                if d["held_by"].is_null() {
                    "-".into()
                } else {
                    format!("held by run {}", cell(&d["held_by"]))
                },
                cell(&d["finished_at"]),
                cell(&d["error"]),
            ]
        })
        .collect();
    table(&["date", "status", "held", "finished", "error"], &rows)
}

/// Reservations, skips, reclaims and releases of the run.
fn events_table(events: &[Map<String, Json>]) -> String {
    let rows: Vec<Vec<String>> = events
        .iter()
        .map(|e| {
            let range = if e["ds_start"].is_null() {
                "-".to_string()
            } else {
                format!(
                    "{}..{} ({})",
                    cell(&e["ds_start"]),
                    cell(&e["ds_end"]),
                    cell(&e["date_count"])
                )
            };
            let who = if e["event"] == "reclaimed" {
                format!(
                    "run {} reclaimed by run {}",
                    cell(&e["run_id"]),
                    cell(&e["other_run_id"])
                )
            } else {
                format!("run {}", cell(&e["run_id"]))
            };
            vec![
                cell(&e["at"]),
                cell(&e["event"]),
                who,
                range,
                cell(&e["detail"]),
            ]
        })
        .collect();
    table(&["at", "event", "who", "dates", "detail"], &rows)
}

pub fn corrections(global: &Settings, interval: Option<&str>, out: &Output) -> Result<Exit> {
    let interval = interval.map(Interval::parse).transpose()?;
    let (pipeline, mut db) = open(global, &[])?;
    let (start, end) = match interval {
        Some(i) => (fmt_date(i.start), fmt_date(i.end)),
        None => ("0001-01-01".to_string(), "9999-12-31".to_string()),
    };
    let mut doc = Map::new();
    let mut text = String::new();
    for model in &pipeline.models {
        let sql = pipeline.render_system(
            "corrections_list",
            context! { model => crate::pipeline::to_value(model), start => start.clone(), end => end.clone() },
        )?;
        let mut rows = rows_as_json(&mut db, sql.as_str(), &[])?;
        // Each value is shown as its column's kind: a count is a count, text is text.
        let declared: BTreeMap<String, Option<Kind>> = db
            .rows(
                &queries::COLUMN_TYPES,
                &[(":table", model.table.as_str().into())],
            )?
            .iter()
            .map(|r| Ok((r.text(0)?, Kind::parse(r.opt_text(1)?.as_deref()))))
            .collect::<Result<_>>()?;
        let kind_of = |column: &str, values: &[&Json]| {
            Kind::resolve(
                declared.get(column).copied().flatten(),
                values.iter().copied(),
            )
        };
        let mut table_rows = Vec::new();
        for r in &mut rows {
            let mut key_cells = Vec::new();
            let mut key = Vec::new();
            for k in &model.key {
                let value = &r[&format!("key_{k}")];
                let kind = kind_of(k, &[value]);
                key_cells.push(kind.show(value));
                key.push(
                    serde_json::json!({"column": k, "type": kind, "value": kind.typed(value)}),
                );
            }
            let mut values = Vec::new();
            for v in &model.values {
                let sent = &r[&format!("sent_{v}")];
                let previous = &r[&format!("previous_{v}")];
                let now = &r[&format!("now_{v}")];
                let kind = kind_of(v, &[sent, previous, now]);
                let delta = kind.delta(sent, now);
                let removed = r["removed"].as_i64() == Some(1);
                table_rows.push(vec![
                    cell(&r["correction_id"]),
                    key_cells.join(" "),
                    v.clone(),
                    kind.name().into(),
                    kind.show(sent),
                    kind.show(previous),
                    if removed {
                        "(removed)".into()
                    } else {
                        kind.show(now)
                    },
                    kind.show_delta(delta.as_ref()),
                    cell(&r["run_id"]),
                    cell(&r["corrected_at"]),
                ]);
                values.push(serde_json::json!({
                    "column": v,
                    "type": kind,
                    "sent": kind.typed(sent),
                    "previous": kind.typed(previous),
                    "now": kind.typed(now),
                    "delta": delta,
                }));
            }
            r.insert("key".into(), Json::Array(key));
            r.insert("values".into(), Json::Array(values));
        }
        if !rows.is_empty() {
            text.push_str(&format!("{} corrections:\n", model.table));
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
                &table_rows,
            ));
        }
        doc.insert(
            model.name.clone(),
            Json::Array(rows.into_iter().map(Json::Object).collect()),
        );
    }
    out.json(&doc)?;
    if text.is_empty() {
        text = "no corrections".into();
    }
    out.text(&text)?;
    Ok(Exit::Done)
}

pub fn render(
    global: &Settings,
    date: &str,
    model: Option<&str>,
    select: &[String],
    out: &Output,
) -> Result<Exit> {
    let ds = fmt_date(parse_date(date, "--date")?);
    let (pipeline, mut db) = open(global, select)?;
    let run_id = db.one(&queries::NEXT_RUN_ID, &[])?.i64(0)?;
    let sql = match model {
        Some(name) => {
            let model = pipeline.model(name).ok_or_else(|| {
                let names: Vec<&str> = pipeline.models.iter().map(|m| m.name.as_str()).collect();
                Error::bad(format!(
                    "no model named {name}; this pipeline's models are: {}",
                    names.join(", ")
                ))
            })?;
            let mut sql = pipeline.render_model(model, &ds, run_id)?;
            sql.push('\n');
            sql
        }
        None => {
            let sealed = db
                .one(&queries::IS_SEALED, &[(":ds", ds.as_str().into())])?
                .bool(0)?;
            report::transaction(
                db.dialect().begin(),
                &pipeline.render_date(&DateVars {
                    ds: &ds,
                    run_id,
                    sealed,
                    started_at: &now(),
                    lease_seconds: reserve::lease_seconds(),
                })?,
            )
        }
    };
    out.json(&serde_json::json!({"ds": ds, "run_id": run_id, "model": model, "sql": sql}))?;
    out.text(&sql)?;
    Ok(Exit::Done)
}

pub fn templates(global: &Settings, show: Option<&str>, out: &Output) -> Result<Exit> {
    let (pipeline, mut db) = open(global, &[])?;
    if let Some(spec) = show {
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
        out.json(&serde_json::json!({"name": name, "version": version, "body": body}))?;
        out.text(&body)?;
        return Ok(Exit::Done);
    }
    let mut rows = Vec::new();
    let mut doc = Vec::new();
    for f in &pipeline.templates.files {
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
        let state = match &recorded {
            None => "not used yet",
            Some(c) if *c == f.checksum => "recorded",
            Some(_) => "EDITED: raise its version",
        };
        rows.push(vec![
            f.name.clone(),
            f.version.to_string(),
            f.checksum[..12].to_string(),
            state.to_string(),
            f.path.clone(),
        ]);
        doc.push(serde_json::json!({"name": f.name, "version": f.version, "kind": f.kind, "checksum": f.checksum, "state": state, "path": f.path}));
    }
    out.json(&doc)?;
    out.text(&table(
        &["template", "version", "checksum", "state", "file"],
        &rows,
    ))?;
    Ok(Exit::Done)
}

fn rows_as_json<S: Sql + ?Sized>(
    db: &mut Db,
    sql: &S,
    params: Params,
) -> Result<Vec<Map<String, Json>>> {
    Ok(db
        .rows(sql, params)?
        .iter()
        .map(|row| {
            row.names()
                .iter()
                .enumerate()
                .map(|(i, name)| (name.clone(), row.value(i).to_json()))
                .collect()
        })
        .collect())
}

fn cell(v: &Json) -> String {
    match v {
        Json::Null => "-".into(),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}
