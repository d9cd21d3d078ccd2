//! `sqlrun runs`: the runs list and one run in detail.

use serde_json::Value as Json;

use crate::dates::interval::{fmt_date, parse_date};
use crate::error::Result;
use crate::output::Output;
use crate::output::{apply, scheduler_line};
use crate::run::history::{Record, RunDetail, SealDetail};
use crate::store::RunRow;
use crate::text::numbers;
use crate::text::table::{cell, table};
use crate::text::words::DateStatus;

/// The first date a look back of `days` from `start` (its window's first day) was asked
/// for: the regular run's yesterday, or `--interval`'s first date.
fn first_asked(start: &str, days: i64) -> String {
    parse_date(start, "interval start")
        .ok()
        .zip(u64::try_from(days).ok())
        .and_then(|(d, n)| d.checked_add_days(chrono::Days::new(n)))
        .map_or_else(|| "?".to_string(), fmt_date)
}

/// The runs, newest first, each with its dates in brief; then the newest seal events
/// (text only: `sqlrun seals --json` has them).
pub fn runs_list(rows: &[Record], seals: &[Record], out: &Output) -> Result<()> {
    out.json(&rows)?;
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                cell(&r["run_id"]),
                cell(&r["kind"]),
                apply::range_text(&cell(&r["interval_start"]), &cell(&r["interval_end"])),
                cell(&r["status"]),
                cell(&r["requested_by"]),
                cell(&r["created_at"]),
                cell(&r["finished_at"]),
                dates_in_brief(r),
            ]
        })
        .collect();
    let mut text = table(
        &[
            "run", "kind", "interval", "status", "by", "created", "finished", "dates",
        ],
        &table_rows,
    );
    if !seals.is_empty() {
        text.push_str("\nseal events (`sqlrun seals` lists them, `sqlrun seals ID` shows one):\n");
        text.push_str(&seal_events_table(seals));
    }
    out.text(&text)
}

/// Seal events: id, action, dates, who, when, why.
pub fn seal_events_table(seals: &[Record]) -> String {
    let rows: Vec<Vec<String>> = seals
        .iter()
        .map(|e| {
            vec![
                cell(&e["seal_id"]),
                cell(&e["action"]),
                apply::range_text(&cell(&e["first_ds"]), &cell(&e["last_ds"])),
                cell(&e["dates"]),
                cell(&e["made_by"]),
                cell(&e["made_at"]),
                cell(&e["reason"]),
            ]
        })
        .collect();
    table(
        &["seal", "action", "interval", "dates", "by", "at", "reason"],
        &rows,
    )
}

/// A run's dates in one cell: `88 success, 1 failed (2026-04-01), 4 skipped
/// (2026-04-02..2026-04-05), holding 3`; at most two ranges each, then how many more.
fn dates_in_brief(r: &Record) -> String {
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
        parts.push(format!("{} {status}{place}", numbers::thousands(n)));
    }
    let holding = r["holding"].as_i64().unwrap_or(0);
    if holding > 0 {
        parts.push(format!("holding {}", numbers::thousands(holding)));
    }
    if parts.is_empty() {
        return "no dates".into();
    }
    parts.join(", ")
}

/// One run: what it was, its dates (ranges, or each with `each_date`), its events.
pub fn run_detail(detail: &RunDetail, each_date: bool, out: &Output) -> Result<()> {
    let RunDetail {
        run,
        dates,
        outcomes,
        events,
        templates,
        checks,
        seals,
    } = detail;
    let ranges = apply::outcome_ranges(outcomes)?;
    out.json(&serde_json::json!({"run": run, "dates": dates, "ranges": ranges, "events": events, "templates": templates, "checks": checks, "seals": seals}))?;
    let mut text = run_header(run, templates);
    text.push('\n');
    if outcomes.is_empty() {
        text.push_str("no dates recorded yet\n");
    } else if each_date {
        text.push_str(&dates_table(dates));
    } else {
        text.push_str(&format!(
            "dates: {} (`sqlrun runs {} --dates` lists each)\n",
            apply::status_counts(outcomes).join(", "),
            run.run_id
        ));
        text.push_str(&apply::outcome_lines(&ranges, &|h| {
            format!("held by run {h}")
        }));
    }
    if !checks.is_empty() {
        text.push('\n');
        text.push_str(&checks_table(checks));
    }
    if !events.is_empty() {
        text.push('\n');
        text.push_str(&events_table(events));
    }
    if !seals.is_empty() {
        text.push_str("\nseal events on its dates since:\n");
        text.push_str(&seal_events_table(seals));
    }
    out.text(&text)
}

/// `sqlrun seals`: the newest seal events.
pub fn seals_list(seals: &[Record], out: &Output) -> Result<()> {
    out.json(&seals)?;
    match seals.is_empty() {
        true => out.text(
            "no seal events: nothing was sealed yet (`sqlrun seal --interval ... --reason ...`)",
        ),
        false => out.text(&seal_events_table(seals)),
    }
}

/// `sqlrun seals ID`: one event, and what it covered per model.
pub fn seal_detail(detail: &SealDetail, out: &Output) -> Result<()> {
    let coverage: serde_json::Map<String, Json> = detail
        .coverage
        .iter()
        .map(|(m, dates)| (m.clone(), serde_json::json!(dates)))
        .collect();
    out.json(&serde_json::json!({"event": detail.event, "models": coverage}))?;
    let e = &detail.event;
    let mut text = format!(
        "seal {} ({}) {}: by {} at {}\n  reason: {}\n",
        cell(&e["seal_id"]),
        cell(&e["action"]),
        apply::range_text(&cell(&e["first_ds"]), &cell(&e["last_ds"])),
        cell(&e["made_by"]),
        cell(&e["made_at"]),
        cell(&e["reason"]),
    );
    if detail.coverage.is_empty() {
        text.push_str("  covered no model\n");
    }
    for (model, dates) in &detail.coverage {
        text.push_str(&format!("  {model}: {}\n", crate::seals::ranges(dates)));
    }
    out.text(&text)
}

/// The checks that found rows on the run's dates: each with its first failing rows.
fn checks_table(checks: &[Record]) -> String {
    let rows: Vec<Vec<String>> = checks
        .iter()
        .flat_map(|c| {
            let sample = c["sample"].as_array().cloned().unwrap_or_default();
            let lines = sample.iter().map(Json::to_string).collect::<Vec<_>>();
            let lines = if lines.is_empty() {
                vec![String::new()]
            } else {
                lines
            };
            lines.into_iter().enumerate().map(move |(i, row)| match i {
                0 => vec![
                    cell(&c["ds"]),
                    cell(&c["severity"]),
                    format!("{} ({})", cell(&c["check_name"]), cell(&c["model"])),
                    cell(&c["failing_rows"]),
                    row,
                ],
                _ => vec![
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    row,
                ],
            })
        })
        .collect();
    format!(
        "checks that found rows:\n{}",
        table(&["date", "severity", "check", "rows", "first rows"], &rows)
    )
}

/// Who ran it, when, how, with which templates.
fn run_header(run: &RunRow, templates: &[Record]) -> String {
    let mut text = format!(
        "run {} ({}) {}: {}\n  requested by {}{}\n  created {}, started {}, finished {}\n",
        run.run_id,
        run.kind,
        apply::range_text(&run.interval_start, &run.interval_end),
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
        text.push_str(&format!("  started by {}\n", scheduler_line(s)));
    }
    if let Some(days) = run.lookback {
        text.push_str(&format!(
            "  looked back {days} days before {} for missing, failed and changed dates\n",
            first_asked(&run.interval_start, days)
        ));
    }
    text.push_str(&process_line(run));
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

/// Where the run ran: `process 123 on host, database postgres, 2 dates at a time`.
fn process_line(run: &RunRow) -> String {
    let (Some(host), Some(pid)) = (&run.host, run.pid) else {
        return String::new();
    };
    let on = run.dialect.as_deref().unwrap_or("sqlite");
    let jobs = match run.jobs {
        Some(1) => ", 1 date at a time".to_string(),
        Some(n) => format!(", {n} dates at a time (--jobs {n})"),
        None => String::new(),
    };
    format!("  process {pid} on {host}, database {on}{jobs}\n")
}

/// `runs N --dates`: each date on its own line.
fn dates_table(dates: &[Record]) -> String {
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
fn events_table(events: &[Record]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_look_back_was_asked_from_its_windows_start_plus_its_days() {
        assert_eq!(first_asked("2026-11-23", 7), "2026-11-30");
        assert_eq!(first_asked("2026-02-27", 2), "2026-03-01");
        assert_eq!(first_asked("2026-11-23", 0), "2026-11-23");
        assert_eq!(first_asked("garbled", 3), "?");
    }
}
