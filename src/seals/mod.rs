//! `sqlrun seal`, `seal --reissue` and `sqlrun unseal`: the life of what went out. A seal
//! sends dates out (a first version; a sealed date is never replaced again, applying it
//! records a correction when its value changed: system/correct.sql); a reissue sends
//! their current values again (a new version, settling the corrections so far); an
//! unseal makes them ordinary again. Each is one event in `seal_events`, all or nothing,
//! in one transaction; `--dry-run` says what it would do and what blocks it, and rolls
//! everything back.

pub mod corrections;
pub mod numbers;
pub mod verify;

use std::collections::BTreeMap;

use minijinja::context;
use serde::Serialize;

use crate::dates::interval::{contiguous, contiguous_by, fmt_date, parse_date, Interval};
use crate::dates::period::Grain;
use crate::db::{Db, RowShape, TxKind};
use crate::error::{Error, Result};
use crate::pipeline::Pipeline;
use crate::reservations::holders::Identity;
use crate::reservations::take;
use crate::store::queries;
use crate::store::requester::default_user;
use crate::text::words::{SealAction, Severity};

/// `sqlrun seal` or `unseal` as asked (text as given; checked by `check`).
#[derive(Debug, Clone)]
pub struct SealRequest {
    pub interval: String,
    /// What went out (or why it is unsealed): an event without a reason is refused.
    pub reason: String,
    pub by: Option<String>,
    pub action: SealAction,
    /// Say what would happen, write nothing.
    pub dry_run: bool,
}

/// A request whose input is valid, before anything is opened.
pub struct CheckedSeal {
    pub interval: Interval,
    pub reason: String,
    pub by: String,
    pub action: SealAction,
    pub dry_run: bool,
}

/// What a seal event did (or, dry, would do).
#[derive(Default)]
pub struct Sealing {
    pub reclaimed: Vec<crate::reservations::state::Reclaim>,
    /// The event recorded (none: nothing to do, or a dry run).
    pub seal_id: Option<i64>,
    /// Seal: the dates sealed for the first time; reissue: reissued; unseal: unsealed.
    pub dates: Vec<String>,
    /// Seal: the dates sealed before, which stay as they were sent.
    pub already: Vec<String>,
    /// Each model and the dates whose rows the event sends (unseal: unseals).
    pub cover: Vec<Covered>,
    /// Seal: models first sealed on dates that were sealed before (computed there after
    /// the seal).
    pub added: Vec<Covered>,
    /// Models never computed on dates of the event: not covered there.
    pub left_out: Vec<Covered>,
    /// The open corrections a reissue or an unseal settles.
    pub settled: i64,
    /// Why it is refused (a dry run says; a real one is refused, exit 2).
    pub blockers: Vec<String>,
}

/// A model and dates of it.
#[derive(Debug, Clone, Serialize)]
pub struct Covered {
    pub model: String,
    pub dates: Vec<String>,
}

pub fn check(request: &SealRequest) -> Result<CheckedSeal> {
    let interval = Interval::parse(&request.interval)?;
    if request.reason.trim().is_empty() {
        let example = match request.action {
            SealAction::Unseal => "--reason \"sealed the wrong week by mistake\"",
            _ => "--reason \"weekly report to finance\"",
        };
        return Err(Error::bad(format!(
            "--reason is empty; say {}, e.g. {example}",
            match request.action {
                SealAction::Unseal => "why the dates are unsealed",
                _ => "what went out",
            }
        )));
    }
    Ok(CheckedSeal {
        interval,
        reason: request.reason.clone(),
        by: request.by.clone().unwrap_or_else(default_user),
        action: request.action,
        dry_run: request.dry_run,
    })
}

/// The event, all or nothing, in one transaction (a dry run's is rolled back).
pub fn seal(db: &mut Db, pipeline: &Pipeline, r: &CheckedSeal) -> Result<Sealing> {
    if r.dry_run {
        return db.rolled_back(TxKind::Exclusive, |db| plan(db, pipeline, r));
    }
    db.transaction(TxKind::Exclusive, |db| {
        let mut sealing = plan(db, pipeline, r)?;
        if !sealing.blockers.is_empty() {
            return Err(Error::bad(sealing.blockers.join("; ")));
        }
        write(db, pipeline, r, &mut sealing)?;
        Ok(sealing)
    })
}

/// In the event's transaction: reclaim dead holders, then what each date and model
/// stands at, and what the event would do and what blocks it.
fn plan(db: &mut Db, pipeline: &Pipeline, r: &CheckedSeal) -> Result<Sealing> {
    // A dead holder does not count as holding: its dates are reclaimed first (and the
    // reclaim is rolled back with everything else if the event is refused).
    let reclaimed = take::sweep(db, pipeline, &Identity::current(), None)?;
    let mut found = seal_check(db, pipeline, r.interval)?;
    held_periods(db, pipeline, &mut found)?;
    let models = pipeline
        .models
        .iter()
        .map(|m| m.name.clone())
        .collect::<Vec<_>>();
    let mut s = Sealing {
        reclaimed,
        ..Sealing::default()
    };
    let mut cover: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut added: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut left_out: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for d in &found {
        let takes = match r.action {
            SealAction::Seal => true,
            SealAction::Reissue | SealAction::Unseal => d.sealed,
        };
        for (name, &(computed, covered)) in models.iter().zip(&d.models) {
            // An hourly model is not sealed: its rows are keyed by their hour, and a
            // sealed date replaces them whole (seal a daily model over them instead).
            if pipeline.model(name).is_some_and(|m| m.grain == Grain::Hour) {
                continue;
            }
            let sends = match r.action {
                SealAction::Seal => computed && !covered,
                SealAction::Reissue => computed,
                SealAction::Unseal => covered,
            };
            if takes && sends {
                cover.entry(name).or_default().push(d.ds.clone());
                if r.action == SealAction::Seal && d.sealed {
                    added.entry(name).or_default().push(d.ds.clone());
                }
            } else if takes && !computed && !covered && r.action != SealAction::Unseal {
                left_out.entry(name).or_default().push(d.ds.clone());
            }
        }
        match (r.action, d.sealed) {
            (SealAction::Seal, true) => s.already.push(d.ds.clone()),
            (SealAction::Seal, false) => s.dates.push(d.ds.clone()),
            (_, true) => {
                s.dates.push(d.ds.clone());
                s.settled += d.open_corrections;
            }
            (_, false) => {}
        }
    }
    let listed = |m: BTreeMap<&str, Vec<String>>| {
        m.into_iter()
            .map(|(model, dates)| Covered {
                model: model.to_string(),
                dates,
            })
            .collect()
    };
    s.cover = listed(cover);
    s.added = listed(added);
    s.left_out = listed(left_out);
    s.blockers = blockers(db, pipeline, r, &found, &s)?;
    Ok(s)
}

/// Records the event and does its work, in the plan's transaction.
fn write(db: &mut Db, pipeline: &Pipeline, r: &CheckedSeal, s: &mut Sealing) -> Result<()> {
    if s.cover.is_empty() && r.action != SealAction::Unseal {
        return Ok(()); // nothing new to send: no event
    }
    let seal_id = db
        .one_as::<NewSeal, _>(
            &queries::INSERT_SEAL_EVENT,
            &[
                (":action", r.action.as_str().into()),
                (":first", fmt_date(r.interval.start).into()),
                (":last", fmt_date(r.interval.end).into()),
                (":by", r.by.as_str().into()),
                (":reason", r.reason.as_str().into()),
            ],
        )?
        .seal_id;
    let cover: Vec<serde_json::Value> = s
        .cover
        .iter()
        .map(|c| {
            let model = pipeline.models.iter().find(|m| m.name == c.model);
            serde_json::json!({
                "model": model,
                "dates": serde_json::to_string(&c.dates).expect("dates serialize"),
            })
        })
        .collect();
    let json = |dates: &[String]| serde_json::to_string(dates).expect("dates serialize");
    let template = match r.action {
        SealAction::Unseal => "unseal",
        _ => "seal",
    };
    let script = pipeline.bind_system(
        template,
        context! {
            seal_id => seal_id,
            reissue => r.action == SealAction::Reissue,
            dates => json(&s.dates),
            new => json(&s.dates),
            cover => crate::pipeline::to_value(&cover),
            by => &r.by,
            reason => &r.reason,
            models => pipeline.models_value(),
        },
    )?;
    db.run_script(&script.sql, &script.params)?;
    s.seal_id = Some(seal_id);
    Ok(())
}

/// The id `queries/insert_seal_event.sql` returns.
#[derive(serde::Deserialize)]
struct NewSeal {
    seal_id: i64,
}

/// One date of the event's interval, as `system/seal_check.sql` finds it.
struct SealCheck {
    ds: String,
    /// No run built it.
    blocked_missing: bool,
    /// The run that holds it now.
    blocked_by: Option<i64>,
    sealed: bool,
    open_corrections: i64,
    /// Per model of the pipeline, in order: computed on the date, and sealed there now.
    models: Vec<(bool, bool)>,
    /// The models whose partition starting on the date is provisional (`--allow-partial`).
    provisional: Vec<String>,
}

/// A row of `system/seal_check.sql`, but the models' columns (`ModelColumns`).
#[derive(serde::Deserialize)]
struct SealCheckColumns {
    ds: String,
    blocked_missing: bool,
    blocked_by: Option<i64>,
    sealed: bool,
    open_corrections: i64,
}

/// A model's columns of `system/seal_check.sql`: `computed_1`, `covered_1`, ... in the
/// order of the pipeline's models.
#[derive(serde::Deserialize)]
struct ModelColumns {
    computed: bool,
    covered: bool,
    provisional: bool,
}

fn seal_check(db: &mut Db, pipeline: &Pipeline, interval: Interval) -> Result<Vec<SealCheck>> {
    let sql = seal_check_sql(pipeline, interval)?;
    let n = pipeline.models.len();
    let rows = db.rows_numbered::<SealCheckColumns, ModelColumns, _>(sql.as_str(), &[], n)?;
    Ok(rows
        .into_iter()
        .map(|(r, models)| SealCheck {
            ds: r.ds,
            blocked_missing: r.blocked_missing,
            blocked_by: r.blocked_by,
            sealed: r.sealed,
            open_corrections: r.open_corrections,
            provisional: (pipeline.models.iter().zip(&models))
                .filter(|(_, m)| m.provisional)
                .map(|(model, _)| model.name.clone())
                .collect(),
            models: models.iter().map(|m| (m.computed, m.covered)).collect(),
        })
        .collect())
}

fn seal_check_sql(pipeline: &Pipeline, interval: Interval) -> Result<String> {
    pipeline.render_system(
        "seal_check",
        context! {
            start => fmt_date(interval.start),
            end => fmt_date(interval.end),
            models => pipeline.models_value(),
        },
    )
}

/// The rows this module reads, rendered for `pipeline`, for the test that prepares each
/// against a real schema.
pub fn row_shapes(pipeline: &Pipeline) -> Result<Vec<RowShape>> {
    let d = pipeline.dialect;
    let day = parse_date("2026-02-01", "date")?;
    let check = seal_check_sql(
        pipeline,
        Interval {
            start: day,
            end: day,
        },
    )?;
    let mut shapes = vec![
        RowShape::of::<NewSeal, _>(&queries::INSERT_SEAL_EVENT, d),
        RowShape::of::<Holder, _>(&queries::HOLDER_BETWEEN, d),
        RowShape::numbered::<SealCheckColumns, ModelColumns, _>(
            check.as_str(),
            d,
            pipeline.models.len(),
        ),
    ];
    shapes.extend(corrections::row_shapes(pipeline)?);
    shapes.extend(verify::row_shapes(pipeline)?);
    shapes.extend(numbers::row_shapes(pipeline)?);
    Ok(shapes)
}

/// A date that is the first day of a week's or a month's partition is held too while a
/// run holds a day of that period: its cascade builds the partition there, and reads the
/// first day's seal before (a seal meanwhile would be overwritten).
fn held_periods(db: &mut Db, pipeline: &Pipeline, found: &mut [SealCheck]) -> Result<()> {
    let tz = chrono_tz::Tz::UTC; // dates, not instants: the zone moves no first day
    let grains: std::collections::BTreeSet<Grain> = (pipeline.models.iter())
        .map(|m| m.grain)
        .filter(|g| !matches!(g, Grain::Day | Grain::Hour))
        .collect();
    for d in found.iter_mut().filter(|d| d.blocked_by.is_none()) {
        let day = parse_date(&d.ds, "date")?;
        for grain in &grains {
            let p = crate::dates::period::Period::of_date(*grain, day, tz);
            if p.first_day(tz) != day {
                continue;
            }
            let span = [
                (":first", d.ds.as_str().into()),
                (":last", fmt_date(p.last_day(tz)).into()),
            ];
            let holder: Option<Holder> = db.row_as(&queries::HOLDER_BETWEEN, &span)?;
            if let Some(h) = holder {
                d.blocked_by = Some(h.run_id);
                break;
            }
        }
    }
    Ok(())
}

#[derive(serde::Deserialize)]
struct Holder {
    run_id: i64,
}

/// Why the event is refused, each reason with what to do about it (none: it may go).
fn blockers(
    db: &mut Db,
    pipeline: &Pipeline,
    r: &CheckedSeal,
    found: &[SealCheck],
    s: &Sealing,
) -> Result<Vec<String>> {
    let (done, free) = match r.action {
        SealAction::Seal => ("nothing sealed", "computed and free"),
        SealAction::Reissue => ("nothing reissued", "sealed and free"),
        SealAction::Unseal => ("nothing unsealed", "sealed and free"),
    };
    let mut why = Vec::new();
    let dates_where = |test: &dyn Fn(&SealCheck) -> bool| -> Vec<String> {
        found
            .iter()
            .filter(|d| test(d))
            .map(|d| d.ds.clone())
            .collect()
    };
    let missing = dates_where(&|d| d.blocked_missing);
    let unsealed = dates_where(&|d| !d.sealed);
    if r.action == SealAction::Seal && !missing.is_empty() {
        why.push(format!(
            "not computed: {}; compute them first (sqlrun apply --interval ...)",
            ranges(&missing)
        ));
    }
    if r.action != SealAction::Seal && !unsealed.is_empty() {
        why.push(format!(
            "not sealed: {}; {}",
            ranges(&unsealed),
            match r.action {
                SealAction::Reissue =>
                    "seal them first (`sqlrun seal`), or narrow --interval to the sealed dates",
                _ => "only a sealed date can be unsealed; narrow --interval to the sealed dates",
            }
        ));
    }
    if r.action != SealAction::Unseal {
        why.extend(provisional(found));
    }
    let held = held_ranges(found);
    if !held.is_empty() {
        why.push(format!(
            "held by another run: {}; try again after that run ends",
            held.join(", ")
        ));
    }
    let mut out = Vec::new();
    if !why.is_empty() {
        out.push(format!(
            "{done}: every date of {} must be {free}. {}",
            r.interval,
            why.join(". ")
        ));
    }
    if out.is_empty() && r.action != SealAction::Unseal {
        // What goes out must pass the error checks, on its values as they are now.
        let sends: Vec<(String, bool)> = match r.action {
            SealAction::Reissue => s.dates.iter().map(|d| (d.clone(), true)).collect(),
            _ => s.dates.iter().map(|d| (d.clone(), false)).collect(),
        };
        out.extend(failing_checks(db, pipeline, &sends, done)?);
    }
    Ok(out)
}

/// The partitions built before their period ended, which never go out: each with its fix.
fn provisional(found: &[SealCheck]) -> Option<String> {
    let parts: Vec<String> = found
        .iter()
        .flat_map(|d| {
            d.provisional
                .iter()
                .map(move |m| format!("{m} from {}", d.ds))
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "provisional (built before its period ended, with --allow-partial): {}; apply \
             again once the period has ended (a regular run after it does), then seal",
            parts.join(", ")
        )
    })
}

/// The refusal when a date to send fails an error check on its rows as they stand: what
/// goes out must have passed them. Names each check and its dates.
fn failing_checks(
    db: &mut Db,
    pipeline: &Pipeline,
    dates: &[(String, bool)],
    done: &str,
) -> Result<Option<String>> {
    let errors: Vec<&crate::pipeline::checks::Check> = pipeline
        .checks
        .iter()
        .filter(|c| c.severity == Severity::Error)
        .collect();
    let mut failing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (ds, sealed) in dates {
        for f in crate::seals::verify::date_failures(db, pipeline, &errors, (ds, *sealed), 0)? {
            failing.entry(f.check).or_default().push(ds.clone());
        }
    }
    if failing.is_empty() {
        return Ok(None);
    }
    let each: Vec<String> = failing
        .iter()
        .map(|(check, dates)| format!("check {check} finds rows on {}", ranges(dates)))
        .collect();
    let all: std::collections::BTreeSet<&String> = failing.values().flatten().collect();
    let span = match (all.first(), all.last()) {
        (Some(first), Some(last)) if first != last => format!("{first}..{last}"),
        (Some(first), _) => first.to_string(),
        _ => String::new(),
    };
    Ok(Some(format!(
        "{done}: {}; fix the model and recompute them (`sqlrun apply --interval {span}`), then try again; `sqlrun check --interval {span}` shows the failing rows",
        each.join("; ")
    )))
}

/// Dates as ranges of consecutive days: `2026-01-03..2026-01-05, 2026-01-09`.
/// The dates another run holds, one per contiguous range with the same holder:
/// `2026-02-01..2026-02-07 (run 3)`.
fn held_ranges(found: &[SealCheck]) -> Vec<String> {
    let keyed = found
        .iter()
        .filter_map(|d| Some((parse_date(&d.ds, "date").ok()?, d.blocked_by?)))
        .collect();
    contiguous_by(keyed)
        .into_iter()
        .map(|(range, run)| format!("{range} (run {run})"))
        .collect()
}

pub fn ranges(dates: &[String]) -> String {
    let parsed: Vec<_> = dates
        .iter()
        .filter_map(|d| parse_date(d, "date").ok())
        .collect();
    contiguous(&parsed)
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
