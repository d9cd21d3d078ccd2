//! `sqlrun seal`: mark dates whose numbers went out. All or nothing: every date must be
//! computed and not held by another run. A sealed date is never replaced again; applying
//! it records a correction when its value changed (system/correct.sql).

use std::collections::BTreeMap;

use minijinja::context;

use crate::db::{Db, TxKind};
use crate::error::{Error, Result};
use crate::holder::Identity;
use crate::interval::{contiguous, fmt_date, parse_date, Interval};
use crate::pipeline::Pipeline;
use crate::requester::default_user;
use crate::reserve;
use crate::vocabulary::Severity;

/// `sqlrun seal` as asked (text as given; checked by `check`).
#[derive(Debug, Clone, Default)]
pub struct SealRequest {
    pub interval: String,
    /// What went out: a seal without a reason is refused.
    pub reason: String,
    pub by: Option<String>,
}

/// A seal request whose input is valid, before anything is opened.
pub struct CheckedSeal {
    pub interval: Interval,
    pub reason: String,
    pub by: String,
}

/// What a seal did: the dates it sealed, those sealed before (left as they were), and
/// the dates it took back from runs that are gone.
pub struct Sealing {
    pub reclaimed: Vec<reserve::Reclaim>,
    pub new: Vec<String>,
    pub already: Vec<String>,
}

pub fn check(request: &SealRequest) -> Result<CheckedSeal> {
    let interval = Interval::parse(&request.interval)?;
    if request.reason.trim().is_empty() {
        return Err(Error::bad(
            "--reason is empty; say what went out, e.g. --reason \"weekly report to finance\"",
        ));
    }
    Ok(CheckedSeal {
        interval,
        reason: request.reason.clone(),
        by: request.by.clone().unwrap_or_else(default_user),
    })
}

/// Seals the request's dates, all or nothing, in one transaction.
pub fn seal(db: &mut Db, pipeline: &Pipeline, r: &CheckedSeal) -> Result<Sealing> {
    let (reclaimed, new, already) = db.transaction(TxKind::Exclusive, |db| {
        seal_dates(db, pipeline, r.interval, &r.by, &r.reason)
    })?;
    Ok(Sealing {
        reclaimed,
        new,
        already,
    })
}

type Sealed = (Vec<reserve::Reclaim>, Vec<String>, Vec<String>);

/// In one transaction: reclaim dead holders, check every date, seal the new ones.
/// Returns the reclaims, the newly sealed dates and those sealed before.
fn seal_dates(
    db: &mut Db,
    pipeline: &Pipeline,
    interval: Interval,
    by: &str,
    reason: &str,
) -> Result<Sealed> {
    let me = Identity::current();
    // A dead holder does not count as holding: its dates are reclaimed first (and the
    // reclaim is rolled back with everything else if the seal is refused).
    let reclaimed = reserve::sweep(db, pipeline, &me, None)?;
    let check = seal_check(db, pipeline, interval)?;
    refuse_blocked(&check, interval)?;
    let (already, new): (Vec<_>, Vec<_>) = check.into_iter().partition(|d| d.sealed);
    let already: Vec<String> = already.into_iter().map(|d| d.ds).collect();
    let new: Vec<String> = new.into_iter().map(|d| d.ds).collect();
    refuse_failing_checks(db, pipeline, &new)?;
    if !new.is_empty() {
        let script = pipeline.bind_system(
            "seal",
            context! {
                dates => serde_json::to_string(&new).expect("dates serialize"),
                by => by,
                reason => reason,
                models => pipeline.models_value(),
            },
        )?;
        db.run_script(&script.sql, &script.params)?;
    }
    Ok((reclaimed, new, already))
}

/// One date of a seal's interval, as `system/seal_check.sql` finds it.
struct SealCheck {
    ds: String,
    /// No run built it.
    blocked_missing: bool,
    /// The run that holds it now.
    blocked_by: Option<i64>,
    sealed: bool,
}

fn seal_check(db: &mut Db, pipeline: &Pipeline, interval: Interval) -> Result<Vec<SealCheck>> {
    let sql = pipeline.render_system(
        "seal_check",
        context! { start => fmt_date(interval.start), end => fmt_date(interval.end) },
    )?;
    db.rows(sql.as_str(), &[])?
        .iter()
        .map(|r| {
            Ok(SealCheck {
                ds: r.text(0)?,
                blocked_missing: r.bool(1)?,
                blocked_by: r.opt_i64(2)?,
                sealed: r.bool(3)?,
            })
        })
        .collect()
}

/// The refusal, when any date blocks the seal: which dates, and what to do about them.
fn refuse_blocked(check: &[SealCheck], interval: Interval) -> Result<()> {
    let missing: Vec<String> = check
        .iter()
        .filter(|d| d.blocked_missing)
        .map(|d| d.ds.clone())
        .collect();
    let held: Vec<String> = check
        .iter()
        .filter_map(|d| d.blocked_by.map(|h| format!("{} (run {h})", d.ds)))
        .collect();
    if missing.is_empty() && held.is_empty() {
        return Ok(());
    }
    let mut why = Vec::new();
    if !missing.is_empty() {
        why.push(format!(
            "not computed: {}; compute them first (sqlrun apply --interval ...)",
            ranges(&missing)
        ));
    }
    if !held.is_empty() {
        why.push(format!(
            "held by another run: {}; seal after that run ends",
            held.join(", ")
        ));
    }
    Err(Error::bad(format!(
        "nothing sealed: every date of {interval} must be computed and free. {}",
        why.join(". ")
    )))
}

/// The refusal when a date to seal fails an error check on its rows as they stand: what
/// went out must have passed them. Names each check and its dates.
fn refuse_failing_checks(db: &mut Db, pipeline: &Pipeline, dates: &[String]) -> Result<()> {
    let errors: Vec<&crate::checks::Check> = pipeline
        .checks
        .iter()
        .filter(|c| c.severity == Severity::Error)
        .collect();
    let mut failing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for ds in dates {
        for f in crate::checking::date_failures(db, pipeline, &errors, (ds, false), 0)? {
            failing.entry(f.check).or_default().push(ds.clone());
        }
    }
    if failing.is_empty() {
        return Ok(());
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
    Err(Error::bad(format!(
        "nothing sealed: {}; fix the model and recompute them (`sqlrun apply --interval {span}`), then seal; `sqlrun check --interval {span}` shows the failing rows",
        each.join("; ")
    )))
}

/// Dates as ranges of consecutive days: `2026-01-03..2026-01-05, 2026-01-09`.
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
