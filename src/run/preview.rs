//! `apply --diff`: each date the run would compute, computed as the run would compute it
//! (the same model SQL, the models in dependency order, the dates in ascending order, a
//! sealed date compared with what is true now), and what would change, per model and
//! partition; written nowhere.
//!
//! How nothing is written and nobody waits: the whole preview is one transaction that is
//! always rolled back (`TxKind::Preview`: on SQLite a deferred BEGIN, a reader of the WAL,
//! which no writer waits for; on PostgreSQL REPEATABLE READ and no pipeline lock, then
//! READ ONLY once its temporary objects exist). A model's new rows go to a temporary
//! table, and temporary views named as its table and its `_current` view stand in for them
//! (templates/system/preview_setup.sql), so a model downstream, a check, and a later date
//! read the rows as the run would have left them; each date is under a savepoint, rolled
//! back where the run would roll the date back (an error, an error check). No run id is
//! claimed, no reservation or record written: a run started meanwhile reserves and
//! computes its dates as if there were no preview. (Per date, a transaction of its own
//! would see a later date read the earlier one's stored rows instead of its new ones; a
//! temporary table kept across such transactions would have to be committed. One
//! transaction, rolled back, keeps both right.)

use minijinja::context;
use serde::Serialize;

use super::diff::{self, Change, ModelDiff, Partition};
use super::dry_run;
use super::each_date::{date_start, failure_message};
use super::request::Asked;
use super::{start, Progress};
use crate::dates::interval::Interval;
use crate::db::{Db, Row, Target, TxKind};
use crate::error::{Error, Failure, Result};
use crate::exit::Exit;
use crate::pipeline::{ready, to_value, DateVars, Pipeline};
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

/// `apply --diff`: the dates the run would compute, each computed and compared, in one
/// transaction that is rolled back. `Err`: bad input (as `apply` refuses it), or a fault
/// of the database; nothing is written either way.
pub fn preview(
    db: &mut Db,
    pipeline: &Pipeline,
    asked: &Asked,
    progress: &mut dyn Progress,
) -> Result<Preview> {
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
    let extra = context! { schema => schema_of(&db.target), previewed => previewed };
    let setup = pipeline.render_system("preview_setup", extra.clone())?;
    let names: Vec<&str> = pipeline
        .computed_models()
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    let dates = db.rolled_back(TxKind::Preview, |db| {
        db.batch(&setup)?;
        let cx = DateCx {
            pipeline,
            extra: &extra,
            models: &names,
        };
        plan.steps
            .iter()
            .map(|step| cx.date(db, step, &mut models))
            .collect::<Result<Vec<_>>>()
    })?;
    Ok(Preview {
        interval,
        models,
        dates,
    })
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
}

impl DateCx<'_> {
    /// One date of the plan: computed under a savepoint (kept where the run would commit
    /// it), or said why not.
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
        let start = date_start(db, self.pipeline, ds)?;
        date.sealed = start.sealed;
        let ready = self.pipeline.bind_ready(ds)?;
        if let Some(why) = ready::not_ready(db, self.pipeline, ready.as_ref())? {
            date.outcome = Outcome::NotReady;
            date.message = Some(why);
            return Ok(date);
        }
        let vars = DateVars {
            ds,
            run_id: 0,
            sealed: start.sealed,
            uncovered: &start.uncovered,
            started_at: &start.at,
            lease_seconds: take::lease_seconds(),
        };
        let script = self
            .pipeline
            .bind_date_system("preview", &vars, self.extra.clone())?;
        db.savepoint()?;
        let computed = self.compute(db, &script, (ds, start.sealed));
        let (kept, failed) = match computed {
            Ok((kept, checks)) => {
                let failed = checks.iter().any(|f| f.severity == Severity::Error);
                if failed {
                    date.message = Some(crate::error::failed_message(&checks, None));
                }
                date.checks = checks;
                (kept, failed)
            }
            Err(e) if recoverable(&e) => {
                db.roll_back_to_savepoint()?;
                date.outcome = Outcome::Failed;
                date.message = Some(failure_message(self.pipeline, 0, &e).0);
                return Ok(date);
            }
            Err(e) => return Err(e),
        };
        // The run would roll a date whose error check found rows back: so does the
        // preview, for the dates after it (its diff is still shown).
        match failed {
            true => db.roll_back_to_savepoint()?,
            false => db.release_savepoint()?,
        }
        date.outcome = match failed {
            true => Outcome::Failed,
            false => Outcome::Computed,
        };
        for (n, model) in models.iter_mut().enumerate() {
            let row = kept
                .iter()
                .find(|(name, _)| *name == format!("diff_{}", n + 1))
                .and_then(|(_, rows)| rows.first());
            let change = row.map_or_else(Change::default, |r| Change::from_row(r, &model.measures));
            let covered = start.sealed && !start.uncovered.contains(&model.model);
            let partition = Partition {
                ds: ds.to_string(),
                before_from: match covered {
                    true => format!("{}_current", model.table),
                    false => model.table.clone(),
                },
                sealed: covered,
                change,
                history: None,
            };
            model.push(partition, !failed);
        }
        Ok(date)
    }

    /// The date's script, then what its checks found (the run's own reading of them).
    fn compute(
        &self,
        db: &mut Db,
        script: &crate::pipeline::templates::Bound,
        date: (&str, bool),
    ) -> Result<(Vec<(String, Vec<Row>)>, Vec<Failure>)> {
        let kept = db.run_script_pipelined(&script.sql, &script.params, self.models)?;
        let checks = verify::counted_failures(db, self.pipeline, &kept, date, 0)?;
        Ok((kept, checks))
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
