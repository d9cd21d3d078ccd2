//! `sqlrun demo`: the story of the design notes, replayed in a scratch database with the
//! same commands a user runs. Fourteen regular runs, a backfill, the additive cumulative
//! total beside the derived one; a broken model version that its checks refuse; then a
//! seal, and a late voucher that the next regular run finds by itself (`--lookback`) and
//! records as a correction; the week reissued; then the pipeline grows a level (a week, a
//! 7-day window, a month) and the backfill, run again, reaches exactly what reads it.

mod level;

use std::path::Path;

use crate::dates::clock::Clock;
use crate::db::{Db, Dialect, RowShape, Target};
use crate::error::Result;
use crate::exit::Exit;
use crate::pipeline::Pipeline;
use crate::project::settings::Settings;
use crate::run::{self, Request};
use crate::seals::{self, SealRequest};
use crate::store::queries;
use crate::text::numbers::{delta, won};
use crate::text::table::table;
use crate::text::words::{RunKind, SealAction, Severity};

/// On SQLite a scratch file in a temporary folder; on PostgreSQL (`--db postgres://...`)
/// a scratch schema in that database, dropped when the demo ends, however it ends. With
/// `keep`, the SQLite database and the pipeline stay in that folder, as a project. The
/// story as text, and its numbers.
pub fn run(given: &Settings, keep: Option<&Path>) -> Result<(String, serde_json::Value)> {
    let target = given.target()?;
    if let Some(dir) = keep {
        return kept(&target, dir);
    }
    let scratch = tempfile::Builder::new().prefix("sqlrun-demo-").tempdir()?;
    let global = match target {
        Target::Sqlite(_) => {
            Settings::scratch(scratch.path().join("demo.db").display().to_string(), None)
        }
        Target::Postgres { url, .. } => {
            Settings::scratch(url, Some(format!("sqlrun_demo_{}", std::process::id())))
        }
    };
    let mut db = Db::open(&global.target()?)?;
    let story = tell(&global, &mut db, scratch.path(), false);
    if let Target::Postgres { schema, .. } = &db.target {
        let schema = schema.clone();
        drop_schema(&mut db, &schema)?;
    }
    drop(db);
    scratch.close()?;
    story
}

/// What `demo --keep DIR` leaves: the story's database, its last pipeline, and a project
/// file naming both, so every command works in DIR as on the demo's last step.
const KEPT_PROJECT: &str = "# Left by `sqlrun demo --keep`: the story's database and its pipeline \
(version 4 of\n# daily_revenue, and chapter 7's weekly_revenue, revenue_7d and monthly_revenue).\n\
# In this folder `sqlrun status`, `sqlrun runs`, `sqlrun seals` and `sqlrun corrections`\n\
# show what happened.\ndb = \"sqlrun.db\"\ntemplates = \"templates\"\n";

fn kept(target: &Target, dir: &Path) -> Result<(String, serde_json::Value)> {
    if let Target::Postgres { .. } = target {
        return Err(crate::Error::bad(
            "demo --keep keeps a SQLite demo in a folder; leave --db out (the demo on \
             PostgreSQL runs in a scratch schema, dropped when it ends)",
        ));
    }
    crate::project::scaffold::refuse_used_folder(dir)?;
    std::fs::create_dir_all(dir)?;
    let global = Settings::scratch(dir.join("sqlrun.db").display().to_string(), None);
    let mut db = Db::open(&global.target()?)?;
    let (mut say, summary) = tell(&global, &mut db, dir, true)?;
    std::fs::write(dir.join(crate::project::FILE_NAME), KEPT_PROJECT)?;
    say.push_str(&format!(
        "\nKept in {}: its database (sqlrun.db), pipeline (templates/) and a sqlrun.toml naming \
         both.\n   cd {} && sqlrun status     # also: sqlrun runs, sqlrun seals, sqlrun corrections\n",
        dir.display(),
        dir.display()
    ));
    Ok((say, summary))
}

fn drop_schema(db: &mut Db, schema: &str) -> Result<()> {
    let ddl: Statement = db.one_as(&queries::DROP_SCHEMA, &[(":schema", schema.into())])?;
    Ok(db.batch(&ddl.statement)?)
}

fn tell(
    global: &Settings,
    conn: &mut Db,
    scratch: &Path,
    kept: bool,
) -> Result<(String, serde_json::Value)> {
    let where_ = match &conn.target {
        Target::Sqlite(_) if kept => "a database that is kept (--keep)",
        Target::Sqlite(_) => "a scratch database that is deleted when it ends",
        Target::Postgres { .. } => "a scratch schema that is dropped when it ends",
    };
    let fourteen = [
        (":start", "2026-02-01".into()),
        (":end", "2026-02-14".into()),
    ];
    conn.execute(&queries::DEMO_ORDERS, &fourteen)?;
    let mut say = String::new();
    say.push_str(&format!("sqlrun demo, in {where_}\n\n"));

    let totals = backfill_twice(global, conn, &mut say)?;
    let kept = broken_version(global, conn, scratch, &mut say)?;
    // From here on, the fixed pipeline: a version 4 with version 2's SELECT.
    let fixed = Settings {
        templates: Some(scratch.join("templates")),
        ..global.clone()
    };
    write_pipeline(&scratch.join("templates"), &fixed_model)?;
    let (sent, now, first) = late_voucher(&fixed, conn, &mut say)?;
    // The additive total of chapter 3 goes on: what the regular run of chapter 5 wrote.
    let additive = totals.after_second + last_run_total(conn)?;
    let reissued = reissue(&fixed, conn, first, &mut say)?;
    let level = level::level_up(&fixed, conn, additive, &mut say)?;
    let summary = serde_json::json!({
        "first_seal": first, "reissue_seal": reissued,
        "regular_total": totals.derived, "backfill_total": totals.backfilled,
        "additive_after_backfill": totals.after_first, "derived_after_backfill": totals.derived_after,
        "sent_2026_02_03": sent, "now_2026_02_03": now, "kept_2026_02_14": kept,
        "cascade_run": level.run_id, "cascade": level.reached,
        "additive_month": level.additive, "monthly_revenue_2026_02": level.month,
    });
    Ok((say, summary))
}

/// What chapters 1 to 3 found, for the JSON summary.
struct Totals {
    derived: i64,
    backfilled: i64,
    after_first: i64,
    after_second: i64,
    derived_after: i64,
}

/// Chapters 1 to 3: the regular runs, a backfill run twice, and the additive total that
/// drifts beside the derived one.
fn backfill_twice(global: &Settings, conn: &mut Db, say: &mut String) -> Result<Totals> {
    // 1. The regular runs: each morning, yesterday.
    let mut additive = 0i64;
    for day in 2..=15 {
        let as_of = format!("2026-02-{day:02}");
        apply_quietly(global, conn, regular(&as_of))?;
        additive += last_run_total(conn)?;
    }
    let derived = last_cumulative(conn)?;
    say.push_str("1. Regular runs for 2026-02-01..2026-02-14 (`sqlrun apply --as-of 2026-02-02`, ... `--as-of 2026-02-15`):\n");
    say.push_str(&format!(
        "   daily revenue sums to {} won\n\n",
        won(derived)
    ));

    // 2. A backfill of three days, with the same code path.
    apply_quietly(global, conn, backfill("2026-02-09..2026-02-11"))?;
    let backfilled = last_run_total(conn)?;
    let after_first = additive + backfilled;
    apply_quietly(global, conn, backfill("2026-02-09..2026-02-11"))?;
    let after_second = after_first + last_run_total(conn)?;
    let derived_after = last_cumulative(conn)?;
    say.push_str("2. A backfill of 2026-02-09..2026-02-11 (`sqlrun apply --interval 2026-02-09..2026-02-11`):\n");
    say.push_str(&format!(
        "   its dates sum to {} won; the partitions were replaced in place\n\n",
        won(backfilled)
    ));

    say.push_str(
        "3. A cumulative total that is added to, beside one derived from the daily rows:\n\n",
    );
    let rows = vec![
        vec!["after the regular runs".into(), won(additive), won(derived)],
        vec![
            "after the backfill".into(),
            format!(
                "{} (off by {})",
                won(after_first),
                won(after_first - derived)
            ),
            won(derived_after),
        ],
        vec![
            "after running it again".into(),
            format!(
                "{} (off by {})",
                won(after_second),
                won(after_second - derived)
            ),
            won(last_cumulative(conn)?),
        ],
    ];
    say.push_str(&indent(&table(
        &[
            "",
            "additive (+= each run)",
            "derived (view cumulative_revenue)",
        ],
        &rows,
    )));
    say.push_str("\n   The derived total does not move however often the backfill runs.\n\n");

    Ok(Totals {
        derived,
        backfilled,
        after_first,
        after_second,
        derived_after,
    })
}

/// Chapter 5: a seal, a late voucher, and the regular run that finds it by itself. What
/// was sent for 2026-02-03, and what is true now.
fn late_voucher(global: &Settings, conn: &mut Db, say: &mut String) -> Result<(i64, i64, i64)> {
    // 4. The first week went out in a report; a voucher for 2026-02-03 arrives late.
    let first = seal_week(
        global,
        &conn.target,
        SealAction::Seal,
        "weekly report, week 1",
    )?;
    let sent_week = revenue_between(conn, "2026-02-01", "2026-02-07")?;
    conn.execute(&queries::DEMO_LATE_VOUCHER, &[])?;
    // Nobody names the date: the next regular run looks back and finds it changed.
    let (_, outcomes) = apply_quietly(
        global,
        conn,
        Request {
            lookback: Some(14),
            ..regular("2026-02-16")
        },
    )?;
    let found: Vec<String> = outcomes
        .iter()
        .map(|(ds, status)| format!("{ds} {status}"))
        .collect();
    let row: SentAndNow = conn.one_as(&queries::SENT_AND_NOW, &[(":ds", "2026-02-03".into())])?;
    let (sent, now) = (row.sent_revenue, row.current_revenue);
    let sent_cumulative = conn
        .one_as::<Cumulative, _>(&queries::LAST_CUMULATIVE_AS_SENT, &[])?
        .cumulative_revenue;
    let now_week = revenue_between(conn, "2026-02-01", "2026-02-07")?;
    let now_cumulative = last_cumulative(conn)?;
    say.push_str("5. The first week is sealed (`sqlrun seal --interval 2026-02-01..2026-02-07 --reason \"weekly report, week 1\"`);\n");
    say.push_str("   a voucher of 350,000 won for 2026-02-03 arrives late. Nobody names the date: the next\n");
    say.push_str(
        "   regular run (`sqlrun apply --as-of 2026-02-16 --lookback 14`) computes yesterday and\n",
    );
    say.push_str(
        "   each of the 14 days before it that is missing, failed, or whose orders changed since\n",
    );
    say.push_str("   it was built:\n");
    say.push_str(&format!(
        "   {}; the sealed rows keep what was sent\n\n",
        found.join(", ")
    ));
    let rows = vec![
        vec![
            "2026-02-03".into(),
            won(sent),
            won(now),
            format!("+{}", won(now - sent)),
        ],
        vec![
            "week 2026-02-01..07".into(),
            won(sent_week),
            won(now_week),
            format!("+{}", won(now_week - sent_week)),
        ],
        vec![
            "cumulative to 2026-02-15".into(),
            won(sent_cumulative),
            won(now_cumulative),
            format!("+{}", won(now_cumulative - sent_cumulative)),
        ],
    ];
    say.push_str(&indent(&table(
        &["", "what we sent", "what is true now", "delta"],
        &rows,
    )));
    say.push_str(
        "\n   Sent: seals, daily_revenue, cumulative_revenue_as_sent. True now: daily_revenue_current,\n   \
         cumulative_revenue. The difference: daily_revenue_corrections (`sqlrun corrections`).\n",
    );
    Ok((sent, now, first))
}

/// Chapter 6: the corrected week goes out again. The delta reads zero against the
/// restatement and the voucher against the first report, which stays readable.
fn reissue(global: &Settings, conn: &mut Db, first: i64, say: &mut String) -> Result<i64> {
    let reason = "restated week 1";
    let second = seal_week(global, &conn.target, SealAction::Reissue, reason)?;
    let sent_in = |conn: &mut Db, seal_id: i64, start: &str, end: &str| -> Result<i64> {
        let params = [
            (":seal_id", seal_id.into()),
            (":start", start.into()),
            (":end", end.into()),
        ];
        Ok(conn
            .one_as::<Revenue, _>(&queries::SENT_IN_SEAL, &params)?
            .revenue)
    };
    let mut rows = Vec::new();
    for (label, start, end) in [
        ("2026-02-03", "2026-02-03", "2026-02-03"),
        ("week 2026-02-01..07", "2026-02-01", "2026-02-07"),
    ] {
        let (one, two) = (
            sent_in(conn, first, start, end)?,
            sent_in(conn, second, start, end)?,
        );
        let now = revenue_between(conn, start, end)?;
        rows.push(vec![
            label.to_string(),
            won(one),
            won(two),
            won(now),
            delta(now - two),
            delta(now - one),
        ]);
    }
    say.push_str(&format!(
        "\n6. Finance restates the week: `sqlrun seal --reissue --interval 2026-02-01..2026-02-07 \
         --reason \"{reason}\"`\n   sends its current values again, as a new version (seal {second}). \
         It settles the correction; later\n   corrections are measured against it. The first \
         report (seal {first}) stays readable\n   (daily_revenue_sent_history):\n\n"
    ));
    say.push_str(&indent(&table(
        &[
            "",
            &format!("first report (seal {first})"),
            &format!("restatement (seal {second})"),
            "true now",
            &format!("delta to seal {second}"),
            &format!("delta to seal {first}"),
        ],
        &rows,
    )));
    Ok(second)
}

/// Chapter 4: a new version of the model with a bug, refused by its checks inside the
/// date's transaction; the date keeps the numbers it had. Its revenue, before and after.
fn broken_version(
    global: &Settings,
    conn: &mut Db,
    scratch: &Path,
    say: &mut String,
) -> Result<i64> {
    let templates = scratch.join("templates");
    write_pipeline(&templates, &broken_model)?;
    let before = revenue_between(conn, "2026-02-14", "2026-02-14")?;
    let request = Request {
        reason: Some("version 3 of daily_revenue".into()),
        ..backfill("2026-02-14")
    };
    let (pipeline, mut db) = session(Some(&templates), &conn.target)?;
    let request = request.with_defaults(&global.apply);
    let asked = request.check(global)?.at(Clock::read(&mut db)?)?;
    let ran = run::apply(&conn.target, &pipeline, &mut db, &asked, &mut ())?;
    let failed = ran
        .dates
        .first()
        .and_then(|d| d.checks.iter().find(|c| c.severity == Severity::Error));
    let error = failed.map_or(String::new(), |f| {
        let row = f.rows.first().cloned().unwrap_or_default();
        format!("{}: {}", f.summary(), serde_json::Value::Object(row))
    });
    let after = revenue_between(conn, "2026-02-14", "2026-02-14")?;
    say.push_str(
        "4. Version 3 of daily_revenue has a bug: it labels each day's row with the next day\n",
    );
    say.push_str("   (`{{ next_ds }} AS ds`). Its run, `sqlrun apply --interval 2026-02-14`, writes the row,\n");
    say.push_str(
        "   then runs the checks (checks/*.sql) before COMMIT. One finds the date without its\n",
    );
    say.push_str(&format!(
        "   row, so the date rolls back (exit {}):\n   {}\n",
        ran.exit.code(),
        error
    ));
    say.push_str(&format!(
        "   2026-02-14 still reads {} won, as before the run ({} won). Version 4 fixes\n   the model; the next regular run heals the failed date.\n\n",
        won(after),
        won(before)
    ));
    Ok(after)
}

/// The built-in models, views and checks in `dir`, with daily_revenue as `model` makes it
/// from the built-in one.
fn write_pipeline(dir: &Path, model: &dyn Fn(&str) -> Result<String>) -> Result<()> {
    for (rel, text) in crate::project::scaffold::files("demo.db", None) {
        let Some(folder) = rel.parent().filter(|p| !p.as_os_str().is_empty()) else {
            continue;
        };
        let text = match rel.ends_with("models/daily_revenue.sql") {
            true => model(&text)?,
            false => text,
        };
        std::fs::create_dir_all(dir.join(folder))?;
        std::fs::write(dir.join(&rel), text)?;
    }
    Ok(())
}

/// Version 3: the same SELECT, but its date column says the next day.
fn broken_model(model: &str) -> Result<String> {
    let text = model
        .replacen("-- version: 2", "-- version: 3", 1)
        .replacen("SELECT {{ ds }} AS ds", "SELECT {{ next_ds }} AS ds", 1);
    match text.contains("-- version: 3") && text.contains("{{ next_ds }} AS ds") {
        true => Ok(text),
        false => Err(crate::Error::bad(
            "demo: models/daily_revenue.sql changed; chapter 4's broken version no longer applies to it",
        )),
    }
}

/// Version 4, the fix: version 2's SELECT again, under a new version (a version once
/// used is never taken back).
fn fixed_model(model: &str) -> Result<String> {
    Ok(model.replacen("-- version: 2", "-- version: 4", 1))
}

fn regular(as_of: &str) -> Request {
    Request {
        as_of: Some(as_of.into()),
        by: Some("demo".into()),
        ..Request::default()
    }
}

fn backfill(interval: &str) -> Request {
    Request {
        interval: Some(interval.into()),
        as_of: None,
        kind: Some(RunKind::Backfill),
        reason: Some("the fix for the bug".into()),
        ..regular("2026-02-15")
    }
}

/// A session of its own and the built-in pipeline, brought up to date, as each command
/// the demo stands for opens them.
fn session(templates: Option<&Path>, target: &Target) -> Result<(Pipeline, Db)> {
    let pipeline = Pipeline::load(templates, target.dialect())?;
    let db = Db::open(target)?;
    Ok((pipeline, db))
}

/// Runs `apply` as `sqlrun apply` does, telling nobody, and returns its run id and each
/// date's status.
fn apply_quietly(
    global: &Settings,
    conn: &mut Db,
    request: Request,
) -> Result<(i64, Vec<(String, String)>)> {
    let request = request.with_defaults(&global.apply);
    let checked = request.check(global)?;
    let (mut pipeline, mut db) = session(global.templates.as_deref(), &conn.target)?;
    // `--select`, as `sqlrun apply` narrows the pipeline to it.
    if !request.select.is_empty() {
        pipeline.select(&request.select)?;
    }
    let asked = checked.at(Clock::read(&mut db)?)?;
    let ran = run::apply(&conn.target, &pipeline, &mut db, &asked, &mut ())?;
    drop(db);
    if let Some(e) = ran.error {
        return Err(e);
    }
    let run_id = last_run_id(conn)?;
    if ran.exit != Exit::Done {
        return Err(crate::Error::bad(format!(
            "demo: run {run_id} ended with exit {}",
            ran.exit.code()
        )));
    }
    let dates = conn
        .rows(
            &queries::RUN_PARTITIONS_OF_RUN,
            &[(":run_id", run_id.into())],
        )?
        .iter()
        .map(|r| Ok((r.get("ds")?, r.get("status")?)))
        .collect::<Result<_>>()?;
    Ok((run_id, dates))
}

/// The first week went out (`sqlrun seal`), or went out again (`seal --reissue`): as the
/// command does it, in one transaction.
fn seal_week(global: &Settings, target: &Target, action: SealAction, reason: &str) -> Result<i64> {
    let request = SealRequest {
        interval: "2026-02-01..2026-02-07".into(),
        reason: reason.into(),
        by: Some("demo".into()),
        action,
        dry_run: false,
    };
    let (pipeline, mut db) = session(global.templates.as_deref(), target)?;
    pipeline.sync(&mut db)?;
    let sealing = seals::seal(&mut db, &pipeline, &seals::check(&request)?)?;
    sealing
        .seal_id
        .ok_or_else(|| crate::Error::bad("demo: the seal of week 1 recorded no event"))
}

fn last_run_id(conn: &mut Db) -> Result<i64> {
    Ok(conn
        .one_as::<LastRun, _>(&queries::LAST_RUN_ID, &[])?
        .run_id)
}

fn last_run_total(conn: &mut Db) -> Result<i64> {
    let run_id = last_run_id(conn)?;
    let total = conn.one_as::<Revenue, _>(&queries::RUN_TOTAL, &[(":run_id", run_id.into())])?;
    Ok(total.revenue)
}

fn last_cumulative(conn: &mut Db) -> Result<i64> {
    let last = conn.one_as::<Cumulative, _>(&queries::LAST_CUMULATIVE, &[])?;
    Ok(last.cumulative_revenue)
}

fn revenue_between(conn: &mut Db, start: &str, end: &str) -> Result<i64> {
    let params = [(":start", start.into()), (":end", end.into())];
    Ok(conn
        .one_as::<Revenue, _>(&queries::REVENUE_BETWEEN, &params)?
        .revenue)
}

/// The statement `queries/postgres/drop_schema.sql` writes.
#[derive(serde::Deserialize)]
struct Statement {
    statement: String,
}

/// A date's revenue as it was sent and as it is now.
#[derive(serde::Deserialize)]
struct SentAndNow {
    sent_revenue: i64,
    current_revenue: i64,
}

/// The latest running total of a cumulative view.
#[derive(serde::Deserialize)]
struct Cumulative {
    cumulative_revenue: i64,
}

/// A sum of daily revenue.
#[derive(serde::Deserialize)]
struct Revenue {
    revenue: i64,
}

#[derive(serde::Deserialize)]
struct LastRun {
    run_id: i64,
}

/// The rows the demo reads, for the test that prepares each against a real schema.
pub fn row_shapes(dialect: Dialect) -> Vec<RowShape> {
    vec![
        RowShape::of::<Statement, _>(&queries::DROP_SCHEMA, dialect),
        RowShape::of::<SentAndNow, _>(&queries::SENT_AND_NOW, dialect),
        RowShape::of::<Cumulative, _>(&queries::LAST_CUMULATIVE_AS_SENT, dialect),
        RowShape::of::<Cumulative, _>(&queries::LAST_CUMULATIVE, dialect),
        RowShape::of::<Revenue, _>(&queries::SENT_IN_SEAL, dialect),
        RowShape::of::<Revenue, _>(&queries::RUN_TOTAL, dialect),
        RowShape::of::<Revenue, _>(&queries::REVENUE_BETWEEN, dialect),
        RowShape::of::<LastRun, _>(&queries::LAST_RUN_ID, dialect),
        RowShape::of::<level::Built, _>(&queries::PARTITIONS_OF_RUN, dialect),
    ]
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("   {l}\n")).collect()
}
