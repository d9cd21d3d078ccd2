//! Which console blocks of README.md and of the guide (docs/) run together, and what their
//! folder holds first (what the text says happened before the block, done here without
//! being shown). A scene runs blocks of one document: `file` names it.

use super::Setup::{File, Insert, Sql, Sqlrun, SqlrunExit};
use super::{Scene, Setup};

pub const SCENES: &[Scene] = &[
    Scene {
        file: "README.md",
        name: "demo",
        blocks: &["Set up and try it"],
        setup: &[],
    },
    // The quick tour, in a new folder.
    Scene {
        file: "README.md",
        name: "tour",
        blocks: &["A quick tour"],
        setup: &[],
    },
    // The plan in ranges goes on from where the quick tour ends.
    Scene {
        file: "docs/src/reference/commands.md",
        name: "ranges",
        blocks: &["Plans and runs in ranges#1"],
        setup: &[TOUR],
    },
    // A quarter's backfill that failed a date and skipped four, told in ranges.
    Scene {
        file: "docs/src/reference/commands.md",
        name: "quarter",
        blocks: &["Plans and runs in ranges#2"],
        setup: &[&[
            Sqlrun(&["generate", "--start", "2025-01-01", "--days", "90", "--per-day", "20"]),
            Sql("INSERT INTO orders VALUES ('typo-1','2025-02-01',9223372036854775807,'2025-02-02 08:00:00')"),
            Sqlrun(&["reserve", "--interval", "2025-02-02..2025-02-05", "--by", "bob"]),
            SqlrunExit(1, &["apply", "--interval", "2025-01-01..2025-03-31", "--keep-going"]),
        ]],
    },
    // A backfill that meets seven held dates, its stderr a log: per-date and progress lines.
    Scene {
        file: "docs/src/reference/commands.md",
        name: "progress",
        blocks: &["What apply says while it runs"],
        setup: &[&[
            Sqlrun(&["generate", "--start", "2026-03-01", "--days", "40", "--per-day", "5"]),
            Sqlrun(&["reserve", "--interval", "2026-03-05..2026-03-11", "--by", "bob"]),
        ]],
    },
    Scene {
        file: "docs/src/reference/status.md",
        name: "status",
        blocks: &["The state at a glance: `sqlrun status`"],
        setup: &[STATUS],
    },
    Scene {
        file: "docs/src/authoring/projects.md",
        name: "new",
        blocks: &["Projects: `sqlrun.toml`#1"],
        setup: &[],
    },
    Scene {
        file: "docs/src/authoring/projects.md",
        name: "project",
        blocks: &["Projects: `sqlrun.toml`#2"],
        setup: &[&[Sqlrun(&["new", "."])]],
    },
    // Two weeks built, a late order for 3 February, the week backfilled.
    Scene {
        file: "docs/src/data/history.md",
        name: "history",
        blocks: &["History: what a replace took out"],
        setup: &[&[
            Sqlrun(&["new", "."]),
            Sqlrun(&["init"]),
            Sqlrun(&["generate", "--start", "2026-02-01", "--days", "14", "--per-day", "50", "--seed", "7"]),
            Sqlrun(&["apply", "--interval", "2026-02-01..2026-02-14"]),
            Sql("INSERT INTO orders VALUES ('late-1', '2026-02-03', 120000, '2026-02-20 09:00:00')"),
            Sqlrun(&["apply", "--interval", "2026-02-01..2026-02-07"]),
        ]],
    },
    // Two weeks built, the first four days sealed, then a late order (3 February, sealed)
    // and a refund (6 February): the preview, the backfill, what it changed.
    Scene {
        file: "docs/src/data/history.md",
        name: "preview",
        blocks: &[
            "Preview: `apply --diff`",
            "What a run changed: `sqlrun diff`",
            "Undo: `sqlrun undo`",
        ],
        setup: &[&[
            Sqlrun(&["new", "."]),
            Sqlrun(&["init"]),
            Sqlrun(&["generate", "--start", "2026-02-01", "--days", "14", "--per-day", "50", "--seed", "7"]),
            Sqlrun(&["apply", "--interval", "2026-02-01..2026-02-14"]),
            Sql("INSERT INTO orders VALUES ('late-1', '2026-02-03', 120000, '2026-02-20 09:00:00')"),
            Sqlrun(&["seal", "--interval", "2026-02-01..2026-02-04", "--reason", "W05"]),
            Sql("INSERT INTO orders VALUES ('late-2', '2026-02-06', -35000, '2026-02-20 09:05:00')"),
        ]],
    },
    // A `sqlrun new` project whose orders name a customer, a customers lookup and a model
    // of revenue per segment; then customer c2 moves to retail.
    // A weekly and a monthly roll-up and a 7-day rolling total beside daily_revenue.
    Scene {
        file: "docs/src/authoring/grains.md",
        name: "grains",
        blocks: &["The cascade", "Upstream: a cascade cut short"],
        setup: &[&[
            Sqlrun(&["new", "."]),
            File("models/weekly_revenue.sql", WEEKLY),
            File("models/monthly_revenue.sql", MONTHLY),
            File("models/revenue_7d.sql", ROLLING),
            Sqlrun(&["init"]),
            Sqlrun(&["generate", "--start", "2026-01-01", "--days", "59", "--per-day", "5"]),
        ]],
    },
    // An hourly model in Berlin, over the night the clocks go forward.
    Scene {
        file: "docs/src/authoring/grains.md",
        name: "hours",
        blocks: &["Hours"],
        setup: &[&[
            Sqlrun(&["new", "."]),
            Insert("sqlrun.toml", "templates = ", "timezone = \"Europe/Berlin\""),
            File("models/hourly_ticks.sql", HOURLY),
            Sqlrun(&["init"]),
        ]],
    },
    Scene {
        file: "docs/src/authoring/sources.md",
        name: "sources",
        blocks: &["A model over a lookup"],
        setup: &[&[
            Sqlrun(&["new", "."]),
            Insert("sources/orders.sql", "    amount ", "    customer_id TEXT,"),
            File(
                "sources/customers.sql",
                "-- name: customers\n-- version: 1\n-- key: customer_id\n-- latest_by: updated_at\n-- fresh_within: 1 day\n-- create: CREATE TABLE customers (customer_id TEXT NOT NULL, segment TEXT NOT NULL,\n--     updated_at TIMESTAMP NOT NULL);\n--     CREATE INDEX customers_by_id ON customers (customer_id, updated_at)\n",
            ),
            File(
                "models/segment_revenue.sql",
                "-- name: segment_revenue\n-- version: 1\n-- key: ds, segment\n-- values: revenue, order_count\n-- sources: orders, customers(via orders.customer_id)\n-- create: CREATE TABLE segment_revenue (ds DATE NOT NULL, segment TEXT NOT NULL,\n--     revenue BIGINT NOT NULL, order_count BIGINT NOT NULL, PRIMARY KEY (ds, segment))\nSELECT {{ ds }} AS ds, coalesce(c.segment, 'unknown') AS segment,\n       sum(o.amount) AS revenue, count(*) AS order_count\nFROM orders_latest AS o\nLEFT JOIN customers_latest AS c ON c.customer_id = o.customer_id\nWHERE o.order_date = {{ ds }}\nGROUP BY coalesce(c.segment, 'unknown')\n",
            ),
            File(
                "customers.csv",
                "customer_id,segment,updated_at\nc1,retail,2026-01-05 09:00:00\nc2,wholesale,2026-01-05 09:00:00\nc3,retail,2026-01-05 09:00:00\n",
            ),
            File(
                "orders.csv",
                "order_id,order_date,amount,customer_id\no1,2026-02-01,100000,c1\no2,2026-02-01,200000,c2\no3,2026-02-02,100000,c1\no4,2026-02-02,200000,c3\no5,2026-02-03,400000,c2\n",
            ),
            File("moved.csv", "customer_id,segment,updated_at\nc2,retail,2026-02-20 09:00:00\n"),
        ]],
    },
    Scene {
        file: "docs/src/data/life-of-a-report.md",
        name: "report",
        blocks: &["The life of a report: seal, correct, reissue, unseal"],
        setup: &[&[
            Sqlrun(&["new", "."]),
            Sqlrun(&["init"]),
            Sqlrun(&["generate", "--start", "2026-02-01", "--days", "14", "--per-day", "50", "--seed", "7"]),
            Sqlrun(&["apply", "--interval", "2026-02-01..2026-02-14"]),
            File("voucher.csv", "order_id,order_date,amount\nlate-voucher,2026-02-03,350000\n"),
        ]],
    },
    Scene {
        file: "docs/src/data/loading.md",
        name: "load",
        blocks: &["Loading rows: `sqlrun load`"],
        setup: &[&[
            Sqlrun(&["generate", "--start", "2026-02-01", "--days", "7"]),
            Sqlrun(&["apply", "--interval", "2026-02-01..2026-02-07"]),
            File(
                "late.csv",
                "order_id,order_date,amount\nlate-1,2026-02-03,120000\n\"late-2, voucher\",2026-02-04,-5000\n",
            ),
            File(
                "stamped.csv",
                "order_id,order_date,amount,created_at\nlate-3,2026-02-05,70000,2026-02-05T10:00:00+09:00\n",
            ),
        ]],
    },
    // "Loading a table of your own": a table made by SQL, and three files it refuses.
    Scene {
        file: "docs/src/data/loading.md",
        name: "load-any",
        blocks: &["Loading a table of your own"],
        setup: &[&[
            Sqlrun(&["init"]),
            File(
                "customers.csv",
                "customer_id,segment,updated_at\nc1,retail,2026-02-01\nc2,wholesale,2026-02-02\n",
            ),
            File(
                "regions.csv",
                "customer_id,segment,updated_at,region\nc3,retail,2026-02-03,north\n",
            ),
            File("segmentless.csv", "customer_id,updated_at\nc3,2026-02-03\n"),
            File(
                "visits.csv",
                "customer_id,segment,updated_at,visits\nc3,retail,2026-02-03,4\nc4,retail,2026-02-03,often\n",
            ),
        ]],
    },
    Scene {
        file: "docs/src/data/late-data.md",
        name: "late",
        blocks: &["Late data: changed dates and `--lookback`"],
        setup: &[&[
            Sqlrun(&["generate", "--start", "2026-02-01", "--days", "20"]),
            Sqlrun(&["apply", "--interval", "2026-02-01..2026-02-20"]),
        ]],
    },
    // "Writing a check, step by step", in a new project with two weeks computed: each
    // step's block after the files the steps before it wrote.
    Scene {
        file: "docs/src/authoring/checks.md",
        name: "check",
        blocks: &["Writing a check, step by step#1"],
        setup: &[CHECK_PROJECT],
    },
    Scene {
        file: "docs/src/authoring/checks.md",
        name: "check-warn",
        blocks: &["Writing a check, step by step#2"],
        setup: &[CHECK_PROJECT, BIG_DAY_WARN],
    },
    Scene {
        file: "docs/src/authoring/checks.md",
        name: "check-error",
        blocks: &["Writing a check, step by step#3"],
        setup: &[CHECK_PROJECT, BIG_DAY_WARN, &[APPLY_14], BIG_DAY_ERROR],
    },
    // Readiness goes on from there, with big_day back to warn (version 3).
    Scene {
        file: "docs/src/authoring/checks.md",
        name: "ready",
        blocks: &["Readiness: a date is built when its sources are"],
        setup: &[
            CHECK_PROJECT,
            BIG_DAY_WARN,
            &[APPLY_14],
            BIG_DAY_ERROR,
            &[SqlrunExit(1, &["apply", "--interval", "2026-02-01..2026-02-14"])],
            BIG_DAY_WARN_AGAIN,
            &[Insert(
                "models/daily_revenue.sql",
                "-- sources:",
                "-- ready: EXISTS (SELECT 1 FROM loads WHERE source = 'orders' AND loaded_through >= {{ ds }})",
            )],
        ],
    },
    // "Every problem at once": a model whose header lacks three things.
    Scene {
        file: "docs/src/authoring/templates.md",
        name: "header",
        blocks: &["Templates: the pipeline is SQL"],
        setup: &[&[
            Sqlrun(&["new", "mypipeline"]),
            File(
                "mypipeline/models/order_signs.sql",
                "-- name: order_signs
-- key: sign
-- create: CREATE TABLE order_signs (ds TEXT NOT NULL, sign TEXT NOT NULL, order_count INTEGER NOT NULL)
SELECT {{ ds }} AS ds, 'sale' AS sign, count(*) AS order_count
FROM orders_latest AS o
WHERE o.order_date = {{ ds }}
",
            ),
        ]],
    },
    // "Dates on SQLite and PostgreSQL": a model over a window of days, in a new project.
    Scene {
        file: "docs/src/authoring/templates.md",
        name: "dates",
        blocks: &["Dates on SQLite and PostgreSQL"],
        setup: &[&[
            Sqlrun(&["new", "."]),
            File("models/weekly_orders.sql", WEEKLY_ORDERS),
            Sqlrun(&["init"]),
        ]],
    },
    // "Portable date arithmetic": a model of the month so far, rendered for each backend.
    Scene {
        file: "docs/src/authoring/templates.md",
        name: "date-macros",
        blocks: &["Portable date arithmetic"],
        setup: &[&[
            Sqlrun(&["new", "."]),
            File("models/month_to_date.sql", MONTH_TO_DATE),
            Sqlrun(&["init"]),
        ]],
    },
    Scene {
        file: "docs/src/authoring/templates.md",
        name: "knows",
        blocks: &["The database knows its pipeline"],
        setup: &[&[
            Sqlrun(&["new", "mypipeline"]),
            File("mypipeline/models/order_signs.sql", ORDER_SIGNS),
            Sqlrun(&["generate", "--start", "2026-03-01", "--days", "2"]),
        ]],
    },
];

/// What README.md's quick tour writes, in its order (its reads left out: they write nothing).
const TOUR: &[Setup] = &[
    Sqlrun(&[
        "generate",
        "--start",
        "2026-02-01",
        "--days",
        "14",
        "--per-day",
        "200",
        "--seed",
        "7",
    ]),
    Sqlrun(&["apply", "--as-of", "2026-02-02"]),
    Sqlrun(&["apply", "--interval", "2026-02-01..2026-02-14"]),
    Sqlrun(&[
        "reserve",
        "--interval",
        "2026-02-09..2026-02-11",
        "--by",
        "bob",
        "--reason",
        "fix the refund bug",
    ]),
    SqlrunExit(99, &["apply", "--as-of", "2026-02-11"]),
    Sqlrun(&["apply", "--run", "3"]),
    Sqlrun(&[
        "seal",
        "--interval",
        "2026-02-01..2026-02-07",
        "--reason",
        "weekly report W06",
    ]),
    Sql("INSERT INTO orders VALUES ('late-1','2026-02-03',120000,'2026-02-20 09:00:00')"),
    Sqlrun(&["apply", "--interval", "2026-02-01..2026-02-07"]),
];

/// A model over the seven days that end on its date, for "Dates on SQLite and PostgreSQL".
const WEEKLY_ORDERS: &str = "-- name: weekly_orders
-- version: 1
-- key: ds
-- values: order_count
-- sources: orders(order_date, key order_id)
-- create: CREATE TABLE weekly_orders (ds DATE NOT NULL PRIMARY KEY, order_count BIGINT NOT NULL)
{% import \"system/dialect.sql\" as d %}
SELECT {{ ds }} AS ds, count(*) AS order_count
FROM orders_latest AS o
WHERE o.order_date > {{ d.days_before(ds, 7) }} AND o.order_date <= {{ ds }}
";

/// A model of the month so far, for "Portable date arithmetic".
const MONTH_TO_DATE: &str = "-- name: month_to_date
-- version: 1
-- key: ds
-- values: month_start, week_start, order_count
-- sources: orders(order_date, key order_id)
-- create: CREATE TABLE month_to_date (ds DATE NOT NULL PRIMARY KEY, month_start DATE NOT NULL,
--   week_start DATE NOT NULL, order_count BIGINT NOT NULL)
{% import \"system/dialect.sql\" as d %}
SELECT {{ ds }} AS ds,
       {{ d.month_start(ds) }} AS month_start,
       {{ d.iso_week_start(ds) }} AS week_start,
       count(*) AS order_count
FROM orders_latest AS o
WHERE o.order_date >= {{ d.month_start(ds) }} AND o.order_date < {{ d.days_after(ds, 1) }}
";

/// A second model, for "The database knows its pipeline".
const ORDER_SIGNS: &str = "-- name: order_signs
-- version: 1
-- key: ds, sign
-- values: order_count, amount
-- sources: orders(order_date, key order_id)
-- create: CREATE TABLE order_signs (ds TEXT NOT NULL, sign TEXT NOT NULL,
--     order_count INTEGER NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (ds, sign))
SELECT {{ ds }} AS ds,
       CASE WHEN o.amount < 0 THEN 'refund' ELSE 'sale' END AS sign,
       count(*) AS order_count,
       sum(o.amount) AS amount
FROM orders_latest AS o
WHERE o.order_date = {{ ds }}
GROUP BY 2
";

/// The history the status picture shows: January computed and sealed, then corrected on
/// 2026-01-14; a gap of four days; a date that failed (an amount that overflows the sum);
/// a late order for 2026-02-03 not picked up yet; bob's planned backfill; and source rows up
/// to 2026-04-10 that nothing computed.
const STATUS: &[Setup] = &[
    Sqlrun(&["generate", "--start", "2026-01-01", "--days", "100", "--per-day", "20"]),
    Sqlrun(&["apply", "--interval", "2026-01-01..2026-01-31"]),
    Sqlrun(&["seal", "--interval", "2026-01-01..2026-01-31", "--reason", "January"]),
    Sql("INSERT INTO orders VALUES ('late-1','2026-01-14',50000,'2026-02-02 09:00:00')"),
    Sqlrun(&["apply", "--interval", "2026-01-14"]),
    Sqlrun(&["apply", "--interval", "2026-02-01..2026-02-10"]),
    Sqlrun(&["apply", "--interval", "2026-02-15..2026-03-02"]),
    Sql("INSERT INTO orders VALUES ('typo-1','2026-03-03',9223372036854775807,'2026-03-04 08:00:00')"),
    SqlrunExit(1, &["apply", "--interval", "2026-03-03"]),
    Sqlrun(&["apply", "--interval", "2026-03-04..2026-03-31"]),
    Sql("INSERT INTO orders VALUES ('late-2','2026-02-03',70000,'2026-04-02 10:00:00')"),
    Sqlrun(&["reserve", "--interval", "2026-03-20..2026-03-31", "--by", "bob", "--reason", "refund fix"]),
];

const APPLY_14: Setup = Sqlrun(&["apply", "--interval", "2026-02-01..2026-02-14"]);

/// A new project with two weeks computed and the check of step 1.
const CHECK_PROJECT: &[Setup] = &[
    Sqlrun(&["new", "."]),
    File(
        "checks/daily_revenue_matches_orders.sql",
        "-- name: daily_revenue_matches_orders
-- version: 1
-- model: daily_revenue
-- severity: error
--
-- The date's row counts the orders it was computed from: each order once, in its
-- latest version (orders_latest).
SELECT t.ds, t.order_count, o.orders
FROM {{ this }} AS t,
     (SELECT count(*) AS orders FROM orders_latest WHERE order_date = {{ ds }}) AS o
WHERE t.ds = {{ ds }} AND t.order_count <> o.orders
",
    ),
    // A project's database is made by `sqlrun init` only (or `apply --create`).
    Sqlrun(&["init"]),
    Sqlrun(&["generate", "--start", "2026-02-01", "--days", "14"]),
    APPLY_14,
];

const BIG_DAY: &str = "checks/daily_revenue_big_day.sql";

/// The check of step 4, as the README shows it.
const BIG_DAY_WARN: &[Setup] = &[File(
    BIG_DAY,
    "-- name: daily_revenue_big_day
-- version: 1
-- model: daily_revenue
-- severity: warn
--
-- A day above 250 million won is worth a look before the report goes out.
{% import \"system/checks.sql\" as check %}
{{ check.accepted_range(\"revenue\", max=250000000) }}
",
)];

/// Step 5: the same check as an error.
const BIG_DAY_ERROR: &[Setup] = &[File(
    BIG_DAY,
    "-- name: daily_revenue_big_day
-- version: 2
-- model: daily_revenue
-- severity: error
--
-- A day above 250 million won is refused until someone looks.
{% import \"system/checks.sql\" as check %}
{{ check.accepted_range(\"revenue\", max=250000000) }}
",
)];

/// Back to a warning, for the readiness example.
const BIG_DAY_WARN_AGAIN: &[Setup] = &[File(
    BIG_DAY,
    "-- name: daily_revenue_big_day
-- version: 3
-- model: daily_revenue
-- severity: warn
--
-- A day above 250 million won is worth a look before the report goes out.
{% import \"system/checks.sql\" as check %}
{{ check.accepted_range(\"revenue\", max=250000000) }}
",
)];

const WEEKLY: &str = "-- name: weekly_revenue\n-- version: 1\n-- grain: week\n-- key: ds\n-- values: revenue\n-- depends_on: daily_revenue\n-- create: CREATE TABLE weekly_revenue (ds DATE NOT NULL, revenue BIGINT NOT NULL,\n--     run_id BIGINT NOT NULL, PRIMARY KEY (ds))\nSELECT {{ period_start }} AS ds, coalesce(sum(revenue), 0) AS revenue\nFROM daily_revenue_current\nWHERE ds >= {{ period_start }} AND ds < {{ period_end }}\n";

const MONTHLY: &str = "-- name: monthly_revenue\n-- version: 1\n-- grain: month\n-- key: ds\n-- values: revenue\n-- depends_on: daily_revenue\n-- create: CREATE TABLE monthly_revenue (ds DATE NOT NULL, revenue BIGINT NOT NULL,\n--     run_id BIGINT NOT NULL, PRIMARY KEY (ds))\nSELECT {{ period_start }} AS ds, coalesce(sum(revenue), 0) AS revenue\nFROM daily_revenue_current\nWHERE ds >= {{ period_start }} AND ds < {{ period_end }}\n";

const ROLLING: &str = "-- name: revenue_7d\n-- version: 1\n-- key: ds\n-- values: revenue\n-- depends_on: daily_revenue window -6..0\n-- create: CREATE TABLE revenue_7d (ds DATE NOT NULL, revenue BIGINT NOT NULL,\n--     run_id BIGINT NOT NULL, PRIMARY KEY (ds))\nSELECT {{ ds }} AS ds, coalesce(sum(revenue), 0) AS revenue\nFROM daily_revenue_current\nWHERE ds >= {{ window_start }} AND ds < {{ window_end }}\n";

const HOURLY: &str = "-- name: hourly_ticks\n-- version: 1\n-- grain: hour\n-- key: hour\n-- date_column: hour\n-- values: n\n-- create: CREATE TABLE hourly_ticks (hour TEXT NOT NULL, n BIGINT NOT NULL,\n--     run_id BIGINT NOT NULL, PRIMARY KEY (hour))\nSELECT {{ period_start }} AS hour, 1 AS n\n";
