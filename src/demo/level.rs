//! Chapter 7 of the demo: the pipeline grows a level. A weekly roll-up, a 7-day rolling
//! total and a monthly total join daily_revenue; February ends; the story's backfill of
//! three days, run again, rebuilds exactly the partitions that read them (the cascade),
//! counted in the state store, and the month derived from the days stays right where the
//! additive total drifts once more.

use chrono::NaiveDate;

use super::{apply_quietly, backfill, indent, last_run_total, regular, session, Revenue};
use crate::dates::period::Period;
use crate::db::Db;
use crate::error::Result;
use crate::project::settings::Settings;
use crate::run::Request;
use crate::store::queries;
use crate::text::numbers::won;
use crate::text::table::table;

/// The three models, as a user would add them to templates/models/ (the guide's chapter
/// "Grains, windows and the cascade" explains each header line).
const MODELS: [(&str, &str); 3] = [
    ("weekly_revenue", include_str!("models/weekly_revenue.sql")),
    ("revenue_7d", include_str!("models/revenue_7d.sql")),
    (
        "monthly_revenue",
        include_str!("models/monthly_revenue.sql"),
    ),
];

/// Read as it comes: the built-in schema, which queries/ is checked against, has no
/// monthly_revenue.
const MONTH_REVENUE: &str = include_str!("month_revenue.sql");

/// What chapter 7 found, for the JSON summary.
pub(super) struct LevelUp {
    pub run_id: i64,
    /// Per model: the partitions the backfill built.
    pub reached: serde_json::Value,
    pub additive: i64,
    pub month: i64,
}

/// One model's partitions that one run built (queries/partitions_of_run.sql).
#[derive(serde::Deserialize)]
pub(super) struct Built {
    model: String,
    partitions: i64,
    first_ds: String,
    last_ds: String,
}

/// Chapter 7. `additive` is chapter 3's total, added to by every run since.
pub(super) fn level_up(
    global: &Settings,
    conn: &mut Db,
    mut additive: i64,
    say: &mut String,
) -> Result<LevelUp> {
    let templates = global.templates.as_deref().ok_or_else(|| {
        crate::Error::bad("demo: chapter 7 adds models to the scratch pipeline, and has none")
    })?;
    for (name, text) in MODELS {
        std::fs::write(templates.join(format!("models/{name}.sql")), text)?;
    }
    // Their history up to the story's today, 2026-02-16: the weeks and rolling dates that
    // have ended (the month has not).
    let history = Request {
        select: MODELS.iter().map(|(name, _)| name.to_string()).collect(),
        as_of: Some("2026-02-16".into()),
        ..backfill("2026-02-01..2026-02-15")
    };
    apply_quietly(global, conn, history)?;
    let rest = [
        (":start", "2026-02-16".into()),
        (":end", "2026-02-28".into()),
    ];
    conn.execute(&queries::DEMO_ORDERS, &rest)?;
    let march = NaiveDate::from_ymd_opt(2026, 3, 1).expect("a date");
    let mut as_of = NaiveDate::from_ymd_opt(2026, 2, 17).expect("a date");
    while as_of <= march {
        apply_quietly(global, conn, regular(&as_of.to_string()))?;
        additive += last_run_total(conn)?;
        as_of = as_of.succ_opt().expect("a date");
    }
    let before = (additive, month_revenue(conn)?);
    let again = Request {
        as_of: Some(march.to_string()),
        ..backfill("2026-02-09..2026-02-11")
    };
    let (run_id, _) = apply_quietly(global, conn, again)?;
    additive += last_run_total(conn)?;
    let built: Vec<Built> =
        conn.rows_as(&queries::PARTITIONS_OF_RUN, &[(":run_id", run_id.into())])?;
    let month = month_revenue(conn)?;
    tell(global, run_id, &built, say)?;
    say.push_str(&indent(&table(
        &[
            "February",
            "additive (+= each run)",
            "monthly_revenue (rebuilt by the cascade)",
        ],
        &[
            month_row("on 2026-03-01", before.0, before.1),
            month_row("after the backfill", additive, month),
        ],
    )));
    say.push_str(
        "\n   The additive total is off by chapter 3's two backfills, by 2026-02-14 added twice \
         (chapters 1\n   and 5) and by the voucher it never saw; the derived month does not move.\n",
    );
    let reached = built
        .iter()
        .map(|b| (name_of(b).to_string(), b.partitions.into()))
        .collect();
    Ok(LevelUp {
        run_id,
        reached: serde_json::Value::Object(reached),
        additive,
        month,
    })
}

/// The chapter's text up to its second table: what was done, and what the backfill built.
fn tell(global: &Settings, run_id: i64, built: &[Built], say: &mut String) -> Result<()> {
    say.push_str(
        "\n7. The pipeline grows a level (the guide's \"Grains, windows and the cascade\"): \
         weekly_revenue\n   (`-- grain: week`), revenue_7d (`-- depends_on: daily_revenue \
         window -6..0`) and monthly_revenue\n   (`-- grain: month`) join it, each over \
         daily_revenue_current. One run builds their history\n   (`sqlrun apply --interval \
         2026-02-01..2026-02-15 --select weekly_revenue --select revenue_7d\n   --select \
         monthly_revenue`); the rest of February's orders arrive, and the regular runs go on \
         to\n   `--as-of 2026-03-01`, each building every model's last complete period \
         (yesterday; last week on\n   a Monday; last month on the 1st). On 2026-03-01 the \
         backfill of chapter 2 runs again: it\n   rebuilds the three days, then exactly the \
         partitions that read them, and nothing else\n   (partition_models, run ",
    );
    say.push_str(&format!("{run_id}):\n\n"));
    say.push_str(&indent(&table(
        &["model", "partitions", "periods"],
        &partition_rows(global, built)?,
    )));
    say.push_str(
        "\n   February's total kept by adding each run's days (chapter 3's total, carried on), \
         beside\n   monthly_revenue, derived from the days and rebuilt by the cascade:\n\n",
    );
    Ok(())
}

/// Each model's partitions as a person reads them: `1 week  2026-W07`.
fn partition_rows(global: &Settings, built: &[Built]) -> Result<Vec<Vec<String>>> {
    let (pipeline, _) = session(global.templates.as_deref(), &global.target()?)?;
    let tz = global.timezone;
    // In the pipeline's order: the days first, then what reads them.
    let at = |b: &&Built| pipeline.models.iter().position(|m| m.name == name_of(b));
    let mut built: Vec<&Built> = built.iter().collect();
    built.sort_by_key(at);
    built
        .into_iter()
        .map(|b| {
            let name = name_of(b);
            let grain = pipeline
                .models
                .iter()
                .find(|m| m.name == name)
                .map(|m| m.grain)
                .ok_or_else(|| crate::Error::bad(format!("demo: no model {name}")))?;
            let label = |ds: &str| -> Result<String> {
                let day = crate::dates::interval::parse_date(ds, "partition_models.ds")?;
                Ok(Period::of_date(grain, day, tz).label(tz))
            };
            let (first, last) = (label(&b.first_ds)?, label(&b.last_ds)?);
            let periods = match first == last {
                true => first,
                false => format!("{first}..{last}"),
            };
            let count = usize::try_from(b.partitions).unwrap_or_default();
            Ok(vec![name.to_string(), grain.count(count), periods])
        })
        .collect()
}

/// The model's name, as its header gives it (partition_models says `models/<name>`).
fn name_of(built: &Built) -> &str {
    built.model.trim_start_matches("models/")
}

fn month_row(when: &str, additive: i64, month: i64) -> Vec<String> {
    let off = match additive - month {
        0 => String::new(),
        d => format!(" (off by {})", won(d)),
    };
    vec![when.into(), format!("{}{off}", won(additive)), won(month)]
}

fn month_revenue(conn: &mut Db) -> Result<i64> {
    let row: Revenue = conn.one_as(MONTH_REVENUE, &[(":ds", "2026-02-01".into())])?;
    Ok(row.revenue)
}
