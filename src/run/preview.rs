//! `apply --diff`: each date the run would compute, computed as the run would compute it
//! (the same model SQL, the models in dependency order, the dates in ascending order, a
//! sealed date compared with what is true now), and what would change, per model and
//! partition; written nowhere.
//!
//! How nothing is written and nobody waits (templates/system/preview_setup.sql): a
//! model's new rows go to a temporary table, and temporary views named as its table and
//! its `_current` view stand in for them, so that a model downstream, a check, and a later
//! date (a look back, a running total) read the rows as the run would have left them there.
//! Each date is a transaction of its own (`TxKind::Preview`: on SQLite a deferred BEGIN, a
//! reader of the WAL, which no writer waits for; on PostgreSQL REPEATABLE READ, READ ONLY
//! but for temporary tables, no pipeline lock), which keeps only its temporary rows, and
//! is rolled back where the run would roll the date back. No run id is claimed, no
//! reservation or record written: a run started meanwhile reserves and computes its dates
//! as if there were no preview. (One transaction for the whole preview, rolled back at
//! the end, would write no less, but hold its snapshot and its read locks for the whole
//! preview: on PostgreSQL a pipeline change that another run brings in would wait for them,
//! and on SQLite the WAL could not be checkpointed past it.)

use std::collections::BTreeMap;

use minijinja::context;
use serde::Serialize;

use super::diff::{self, Change, ModelDiff, Partition};
use super::dry_run;
use super::each_date::{date_parts, date_start, failure_message, Cascaded, DateStart};
use super::request::Asked;
use super::{start, Progress};
use crate::dates::interval::Interval;
use crate::dates::period::Grain;
use crate::db::{Db, Row, Target, TxKind};
use crate::error::{Error, Failure, Result};
use crate::exit::Exit;
use crate::pipeline::{ready, to_value, DatePart, DateVars, Pipeline};
use crate::reservations::take;
use crate::run::plan::{Action, Reason, Step};
use crate::seals::verify;
use crate::text::words::Severity;

/// What `apply --diff` found.
#[derive(Debug)]
pub struct Preview {
    pub interval: Interval,
    /// Each model the dates compute, in dependency order, with its partitions.
    pub models: Vec<ModelDiff>,
    /// Each date of the interval: what the run would do to it, and how its preview went.
    pub dates: Vec<PreviewDate>,
}

/// One date of a preview.
#[derive(Debug, Serialize)]
pub struct PreviewDate {
    pub ds: String,
    /// What the run would do (the `--dry-run` vocabulary).
    pub action: Action,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_by: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
    pub outcome: Outcome,
    /// Sealed: the run would compare it with what is true now and record corrections.
    pub sealed: bool,
    /// Why it is not computed (`not_ready`), or the error it would fail with (`failed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The checks that found rows on it (a `warn` check: the run records it and goes on).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Failure>,
}

/// How one date of a preview went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Computed: the run would write it (replace it, or on a sealed date correct it).
    Computed,
    /// Computed, and the run would fail it (its SQL's error, an error check): rolled back,
    /// as the run would roll it back.
    Failed,
    /// Its sources are not ready (`-- ready:`): the run would skip it.
    NotReady,
    /// Another live run holds it: the run would skip it (and say so).
    Held,
    /// `--only` or `--lookback` leaves it out.
    NotSelected,
}

impl Preview {
    /// What the run would exit with: 1 if a date would fail, else 99 if one would be
    /// skipped (held, or not ready), else 0.
    pub fn exit(&self) -> Exit {
        let any = |o: Outcome| self.dates.iter().any(|d| d.outcome == o);
        if any(Outcome::Failed) {
            Exit::Failed
        } else if any(Outcome::Held) || any(Outcome::NotReady) {
            Exit::Skipped
        } else {
            Exit::Done
        }
    }
}

/// `apply --diff`: the dates the run would compute, each computed and compared in a
/// transaction of its own that writes only temporary objects. `Err`: bad input (as `apply`
/// refuses it), or a fault of the database; nothing is written either way.
pub fn preview(
    db: &mut Db,
    pipeline: &Pipeline,
    asked: &Asked,
    progress: &mut dyn Progress,
) -> Result<Preview> {
    // An hourly model's temporary rows would be told apart by the hour, its bookkeeping
    // by the day: refused rather than previewed wrong.
    if pipeline
        .computed_models()
        .iter()
        .any(|m| m.grain == Grain::Hour)
    {
        return Err(crate::Error::bad(
            "apply --diff does not preview a pipeline with an hourly model yet; `apply --dry-run` shows the partitions a run would build, and `sqlrun diff RUN` what a run changed",
        ));
    }
    let start = start::prepare(db, pipeline, asked, &mut |line| progress.note(line))?;
    let interval = start.interval;
    // A model whose SQL the database refuses is bad input (exit 2), as for the run.
    pipeline.check_date(db, &crate::dates::interval::fmt_date(interval.start))?;
    let plan = db.rolled_back(TxKind::Preview, |db| dry_run::plan(db, pipeline, &start))?;
    let mut models = pipeline
        .computed_models()
        .into_iter()
        .map(|m| diff::begin(db, m))
        .collect::<Result<Vec<_>>>()?;
    let previewed: Vec<minijinja::Value> = pipeline
        .computed_models()
        .into_iter()
        .zip(&models)
        .map(|(m, d)| context! { model => to_value(m), measures => d.measures_value() })
        .collect();
    let slots: BTreeMap<&str, minijinja::Value> = pipeline
        .computed_models()
        .into_iter()
        .zip(&models)
        .enumerate()
        .map(|(i, (m, d))| {
            (
                m.name.as_str(),
                context! { n => i + 1, measures => d.measures_value() },
            )
        })
        .collect();
    let extra =
        context! { schema => schema_of(&db.target), previewed => previewed, slots => slots };
    let setup = pipeline.render_system("preview_setup", extra.clone())?;
    let names: Vec<&str> = pipeline
        .computed_models()
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    // The temporary objects, made once (a transaction of their own, which writes only
    // them); each date then in a transaction of its own; the objects dropped at the end.
    db.transaction(TxKind::Preview, |db| db.batch(&setup))?;
    let cx = DateCx {
        pipeline,
        extra: &extra,
        models: &names,
        cascade: plan.planned.as_ref().map(|c| (c, asked.zone)),
    };
    let dates = steps(&plan)
        .iter()
        .map(|step| cx.date(db, step, &mut models))
        .collect::<Result<Vec<_>>>();
    let teardown = pipeline.render_system("preview_teardown", extra.clone())?;
    let dropped = db.transaction(TxKind::Preview, |db| db.batch(&teardown));
    let dates = dates?;
    dropped?;
    Ok(Preview {
        interval,
        models,
        dates,
    })
}

/// The dates a preview goes through: the plan's, and with a cascade the later dates it
/// builds weeks, months and rolling days on, as the run would (a recompute each).
fn steps(plan: &dry_run::Plan) -> Vec<Step> {
    let mut steps = plan.steps.clone();
    let Some(cascade) = &plan.planned else {
        return steps;
    };
    for day in cascade.dates.keys() {
        let ds = crate::dates::interval::fmt_date(*day);
        if !steps.iter().any(|s| s.ds == ds) {
            steps.push(Step {
                ds,
                action: Action::Recompute,
                reason: None,
                held_by: None,
                holder: None,
            });
        }
    }
    steps.sort_by(|a, b| a.ds.cmp(&b.ds));
    steps
}

/// Where the pipeline's own tables are, as the preview's SQL names them past its
/// temporary objects: SQLite's `main`, or the PostgreSQL schema.
fn schema_of(target: &Target) -> &str {
    match target {
        Target::Sqlite(_) => "main",
        Target::Postgres { schema, .. } => schema,
    }
}

/// What each date of a preview needs.
struct DateCx<'a> {
    pipeline: &'a Pipeline,
    /// The preview's own template values (system/preview_setup.sql's).
    extra: &'a minijinja::Value,
    /// The models a date computes, by name.
    models: &'a [&'a str],
    /// The run's cascade, by date, for a pipeline of other grains or windows.
    cascade: Cascaded<'a>,
}

/// One partition a date computes, as its diff (`diff_N`, the N-th) is read back: the
/// model, the first day of its period, and whether a seal covers it there.
struct Slot {
    model: String,
    ds: String,
    covered: bool,
}

/// How a date's transaction ends when it is not kept: rolled back, with why.
enum NotKept {
    /// Its sources are not ready: not computed.
    NotReady(String),
    /// Its SQL failed as the run's would (recorded by the run as the date's failure).
    Error(Error),
    /// An error check found rows: computed, and rolled back as the run would.
    Checks(Computed),
    /// A fault of the database or its connection: the preview ends.
    Fault(Error),
}

impl From<Error> for NotKept {
    fn from(e: Error) -> Self {
        NotKept::Fault(e)
    }
}

impl From<crate::db::Error> for NotKept {
    fn from(e: crate::db::Error) -> Self {
        NotKept::Fault(e.into())
    }
}

/// A date computed: what its script kept (the diffs), its checks' findings, and the
/// partitions it computed.
struct Computed {
    kept: Vec<(String, Vec<Row>)>,
    checks: Vec<Failure>,
    slots: Vec<Slot>,
}

impl DateCx<'_> {
    /// One date of the plan: computed in a transaction of its own, kept (its temporary
    /// rows only) where the run would commit it, rolled back where the run would roll it
    /// back; or said why not.
    fn date(&self, db: &mut Db, step: &Step, models: &mut [ModelDiff]) -> Result<PreviewDate> {
        let mut date = PreviewDate {
            ds: step.ds.clone(),
            action: step.action,
            reason: step.reason,
            held_by: step.held_by,
            holder: step.holder.clone(),
            outcome: Outcome::NotSelected,
            sealed: false,
            message: None,
            checks: Vec::new(),
        };
        match step.action {
            Action::NotSelected => return Ok(date),
            Action::SkipHeld => {
                date.outcome = Outcome::Held;
                return Ok(date);
            }
            _ => {}
        }
        let ds = step.ds.as_str();
        // What the date starts from, read in its transaction, as the run reads it.
        let mut start = None;
        let ended = db.transaction(TxKind::Preview, |db| {
            let begun = start.insert(date_start(db, self.pipeline, ds)?);
            self.compute(db, ds, begun)
        });
        let start = start.unwrap_or(DateStart {
            sealed: false,
            at: String::new(),
            uncovered: Vec::new(),
        });
        date.sealed = start.sealed;
        let computed = match ended {
            Ok(computed) => {
                date.outcome = Outcome::Computed;
                computed
            }
            Err(NotKept::NotReady(why)) => {
                date.outcome = Outcome::NotReady;
                date.message = Some(why);
                return Ok(date);
            }
            Err(NotKept::Error(e)) => {
                date.outcome = Outcome::Failed;
                date.message = Some(failure_message(self.pipeline, 0, &e).0);
                return Ok(date);
            }
            Err(NotKept::Checks(computed)) => {
                date.outcome = Outcome::Failed;
                date.message = Some(crate::error::failed_message(&computed.checks, None));
                computed
            }
            Err(NotKept::Fault(e)) => return Err(e),
        };
        let written = date.outcome == Outcome::Computed;
        for (k, slot) in computed.slots.iter().enumerate() {
            let name = format!("diff_{}", k + 1);
            let row = computed
                .kept
                .iter()
                .find(|(kept, _)| *kept == name)
                .and_then(|(_, rows)| rows.first());
            let Some(model) = models.iter_mut().find(|m| m.model == slot.model) else {
                continue;
            };
            let change = row.map_or_else(Change::default, |r| Change::from_row(r, &model.measures));
            let partition = Partition {
                ds: slot.ds.clone(),
                before_from: match slot.covered {
                    true => format!("{}_current", model.table),
                    false => model.table.clone(),
                },
                sealed: slot.covered,
                change,
                history: None,
                pruned: Vec::new(),
            };
            // A date the run would roll back is shown, and counts in no total.
            model.push(partition, written);
        }
        date.checks = computed.checks;
        Ok(date)
    }

    /// Inside the date's transaction: its readiness, then its script (each model into its
    /// temporary rows, the diffs, the checks' counts), then what its checks found (the
    /// run's own reading of them). Kept (`Ok`) where the run would commit the date.
    fn compute(
        &self,
        db: &mut Db,
        ds: &str,
        start: &DateStart,
    ) -> std::result::Result<Computed, NotKept> {
        let ready = self.pipeline.bind_ready(ds)?;
        if let Some(why) = ready::not_ready(db, self.pipeline, ready.as_ref())? {
            return Err(NotKept::NotReady(why));
        }
        let parts = date_parts(db, self.pipeline, (self.cascade, None), ds, start)?;
        let slots = self.slots(ds, start, parts.as_deref());
        let vars = DateVars {
            ds,
            run_id: 0,
            sealed: start.sealed,
            uncovered: &start.uncovered,
            started_at: &start.at,
            lease_seconds: take::lease_seconds(),
            undo: None,
            parts: parts.as_deref(),
        };
        let script = self
            .pipeline
            .bind_date_system("preview", &vars, self.extra.clone())?;
        let ran = db
            .run_script_pipelined(&script.sql, &script.params, self.models)
            .map_err(Error::from)
            .and_then(|kept| {
                let checks =
                    verify::counted_failures(db, self.pipeline, &kept, (ds, start.sealed), 0)?;
                Ok(Computed {
                    kept,
                    checks,
                    slots,
                })
            });
        match ran {
            Ok(c) if c.checks.iter().any(|f| f.severity == Severity::Error) => {
                Err(NotKept::Checks(c))
            }
            Ok(c) => Ok(c),
            Err(e) if recoverable(&e) => Err(NotKept::Error(e)),
            Err(e) => Err(NotKept::Fault(e)),
        }
    }
}

impl DateCx<'_> {
    /// The partitions a date computes, in the order of its script: the cascade's, or each
    /// model at the date.
    fn slots(&self, ds: &str, start: &DateStart, parts: Option<&[DatePart]>) -> Vec<Slot> {
        match parts {
            Some(parts) => parts
                .iter()
                .map(|p| Slot {
                    model: p.model.clone(),
                    ds: p.ds.clone(),
                    covered: p.sealed && !p.uncovered.contains(&p.model),
                })
                .collect(),
            None => self
                .models
                .iter()
                .map(|m| Slot {
                    model: m.to_string(),
                    ds: ds.to_string(),
                    covered: start.sealed && !start.uncovered.iter().any(|u| u == m),
                })
                .collect(),
        }
    }
}

/// An error the run would record as the date's failure and go on from (the date's own
/// SQL, a check); not a fault of the database or its connection, which ends the preview.
fn recoverable(e: &Error) -> bool {
    match e {
        Error::Database(inner) => !inner.kind.is_lost(),
        Error::ChecksFailed(_) => true,
        _ => false,
    }
}
