//! The database knows its pipeline: every model it has used is recorded (`models`,
//! `model_events`); templates that lack one, or give its table to another model, are
//! refused and write nothing; a model is retired explicitly. And exit 2 writes nothing for
//! models too: a new model's objects are created in the transaction that checks them.

use std::path::{Path, PathBuf};

use crate::support::*;
use crate::templates::{copy_templates, edit};

/// A second model, keyed by date and sign, whose `-- create:` spells out run_id.
const SIGNS: &str = "\
-- name: order_signs
-- version: 1
-- key: ds, sign
-- values: n
-- create: CREATE TABLE order_signs (ds DATE NOT NULL, sign TEXT NOT NULL,
--     n BIGINT NOT NULL, run_id BIGINT, PRIMARY KEY (ds, sign))
SELECT {{ ds }} AS ds, CASE WHEN o.amount < 0 THEN 'refund' ELSE 'sale' END AS sign,
       count(*) AS n
FROM orders AS o
WHERE o.order_date = {{ ds }}
GROUP BY 2
";

const ORDERS: &str = "INSERT INTO orders VALUES \
    ('a', '2026-03-01', 100, '2026-03-01 10:00:00'), \
    ('b', '2026-03-01', -40, '2026-03-01 11:00:00'), \
    ('c', '2026-03-02', 7, '2026-03-02 12:00:00')";

/// The built-in templates plus `models/NAME.sql` for each (name, text), in a folder of
/// the sandbox named `folder`.
fn pipeline(sb: &Sandbox, folder: &str, extra: &[(&str, &str)]) -> PathBuf {
    let copied = copy_templates(sb);
    let dir = sb.path().join(folder);
    if dir != copied {
        std::fs::rename(&copied, &dir).unwrap();
    }
    for (name, text) in extra {
        std::fs::write(dir.join("models").join(format!("{name}.sql")), text).unwrap();
    }
    dir
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Every table, view, index and trigger of the sandbox's database (schema), by kind.
fn objects(sb: &Sandbox) -> Vec<Vec<String>> {
    match &sb.schema {
        None => sb.rows(
            "SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY 1, 2",
        ),
        Some(schema) => sb.rows(&format!(
            "SELECT c.relkind::text, c.relname::text FROM pg_catalog.pg_class AS c \
             JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace \
             WHERE n.nspname = '{schema}' \
             UNION ALL \
             SELECT 'trigger', t.tgname::text FROM pg_catalog.pg_trigger AS t \
             JOIN pg_catalog.pg_class AS c ON c.oid = t.tgrelid \
             JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace \
             WHERE n.nspname = '{schema}' AND NOT t.tgisinternal ORDER BY 1, 2"
        )),
    }
}

/// `args` exits 2 saying each of `says`, and leaves every row and every object as it was.
fn refused(sb: &Sandbox, args: &[&str], says: &[&str]) -> Run {
    let (rows, objs) = (snapshot(sb), objects(sb));
    let run = sb.expect(2, args);
    for text in says {
        assert!(
            run.stderr.contains(text),
            "{args:?} should say {text:?}: {}",
            run.stderr
        );
    }
    assert_eq!(snapshot(sb), rows, "{args:?} wrote rows");
    assert_eq!(objects(sb), objs, "{args:?} created or dropped objects");
    run
}

/// The version of the built-in model, daily_revenue, as its header says.
fn builtin_version() -> String {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/models/daily_revenue.sql");
    let text = std::fs::read_to_string(file).unwrap();
    let version = text.lines().find_map(|l| l.strip_prefix("-- version: "));
    version.unwrap().trim().to_string()
}

fn models(sb: &Sandbox) -> Vec<Vec<String>> {
    sb.rows(
        "SELECT name, table_name, key_columns, version, first_run_id, retired_by, retired_reason \
         FROM models ORDER BY name",
    )
}

fn events(sb: &Sandbox) -> Vec<Vec<String>> {
    sb.rows("SELECT model, event, requested_by FROM model_events ORDER BY event_id")
}

#[test]
fn the_wrong_templates_on_a_known_database_are_refused_and_write_nothing() {
    let sb = Sandbox::new();
    sb.exec(ORDERS);
    let tpl = pipeline(&sb, "project", &[("order_signs", SIGNS)]);
    sb.ok(&[
        "--templates",
        s(&tpl),
        "apply",
        "--interval",
        "2026-03-01..2026-03-02",
    ]);
    let run = sb.last_run_id();

    // Without --templates: the built-in pipeline lacks order_signs.
    let says: [&str; 4] = [
        "model order_signs (table order_signs",
        "is not in them",
        &format!("its latest run, run {run}, used `--templates {}`", s(&tpl)),
        "sqlrun retire order_signs --reason",
    ];
    for args in [
        &["apply", "--interval", "2026-03-01..2026-03-03"][..],
        &["apply", "--as-of", "2026-03-03"],
        &["status"],
        &["render", "--date", "2026-03-01"],
        &["init"],
        &["reserve", "--interval", "2026-03-05"],
        &["seal", "--interval", "2026-03-01", "--reason", "sent"],
        &["corrections"],
        &["templates"],
    ] {
        refused(&sb, args, &says);
    }

    // Another folder that gives order_signs' table to a model of another name.
    let renamed = pipeline(
        &sb,
        "renamed",
        &[(
            "signs",
            &SIGNS
                .replace(
                    "-- name: order_signs",
                    "-- name: signs\n-- table: order_signs",
                )
                .replace("CREATE TABLE order_signs", "CREATE TABLE signs"),
        )],
    );
    refused(
        &sb,
        &[
            "--templates",
            s(&renamed),
            "apply",
            "--interval",
            "2026-03-01",
        ],
        &[
            "model order_signs (table order_signs",
            "they give table order_signs to model signs, but here it is model order_signs's",
            "sqlrun retire order_signs",
        ],
    );
    assert!(!sb.table_exists("signs"));

    // The right templates still work, and the runs list says which they were.
    sb.ok(&[
        "--templates",
        s(&tpl),
        "apply",
        "--interval",
        "2026-03-01..2026-03-02",
    ]);
    sb.ok(&["runs"]);
}

/// A database whose runs predate the models table (an older sqlrun) knows the models of
/// its latest run, from the versions that run recorded.
#[test]
fn a_database_from_before_the_models_table_knows_its_latest_runs_models() {
    let sb = Sandbox::new();
    sb.exec(ORDERS);
    let tpl = pipeline(&sb, "project", &[("order_signs", SIGNS)]);
    sb.ok(&["--templates", s(&tpl), "apply", "--interval", "2026-03-01"]);
    let first_run = sb.last_run_id();
    sb.exec("DELETE FROM models; DELETE FROM model_events;");

    refused(
        &sb,
        &["apply", "--interval", "2026-03-01"],
        &[
            "model order_signs (table order_signs",
            "sqlrun retire order_signs",
        ],
    );
    assert_eq!(sb.count("SELECT count(*) FROM models"), 0);
    // The right templates record them, as that run used them.
    sb.ok(&["--templates", s(&tpl), "apply", "--interval", "2026-03-02"]);
    let (first, builtin) = (first_run.to_string(), builtin_version());
    assert_eq!(
        models(&sb),
        [
            [
                "daily_revenue",
                "daily_revenue",
                "ds",
                &builtin,
                &first,
                "NULL",
                "NULL"
            ],
            [
                "order_signs",
                "order_signs",
                "ds, sign",
                "1",
                &first,
                "NULL",
                "NULL"
            ]
        ]
    );
    assert_eq!(
        events(&sb),
        [
            ["daily_revenue", "added", "tester"],
            ["order_signs", "added", "tester"]
        ]
    );
}

#[test]
fn a_new_model_is_accepted_and_recorded() {
    let builtin = builtin_version();
    let sb = Sandbox::new();
    sb.exec(ORDERS);
    assert_eq!(
        models(&sb),
        [[
            "daily_revenue",
            "daily_revenue",
            "ds",
            &builtin,
            "NULL",
            "NULL",
            "NULL"
        ]],
        "init records the pipeline's models; no run has used them yet"
    );
    sb.ok(&["apply", "--interval", "2026-03-01..2026-03-02"]);
    let first = sb.last_run_id().to_string();

    let tpl = pipeline(&sb, "project", &[("order_signs", SIGNS)]);
    let run = sb.ok(&[
        "--templates",
        s(&tpl),
        "apply",
        "--interval",
        "2026-03-01..2026-03-02",
    ]);
    assert!(
        run.stderr
            .contains("model order_signs (table order_signs) is new to this database's pipeline"),
        "{}",
        run.stderr
    );
    let second = sb.last_run_id().to_string();
    assert_eq!(
        models(&sb),
        [
            [
                "daily_revenue",
                "daily_revenue",
                "ds",
                &builtin,
                &first,
                "NULL",
                "NULL"
            ],
            [
                "order_signs",
                "order_signs",
                "ds, sign",
                "1",
                &second,
                "NULL",
                "NULL"
            ]
        ]
    );
    assert_eq!(
        events(&sb),
        [
            ["daily_revenue", "added", "tester"],
            ["order_signs", "added", "tester"]
        ]
    );
    assert_eq!(
        sb.rows("SELECT ds, sign, n FROM order_signs ORDER BY ds, sign"),
        [
            ["2026-03-01", "refund", "1"],
            ["2026-03-01", "sale", "1"],
            ["2026-03-02", "sale", "1"]
        ]
    );

    // A new version is kept current; the model's first run stays.
    let file = tpl.join("models/order_signs.sql");
    edit(&file, "-- version: 1", "-- version: 2");
    edit(&file, "count(*) AS n", "count(*) * 10 AS n");
    sb.ok(&["--templates", s(&tpl), "apply", "--interval", "2026-03-01"]);
    assert_eq!(
        models(&sb)[1],
        [
            "order_signs",
            "order_signs",
            "ds, sign",
            "2",
            &second,
            "NULL",
            "NULL"
        ]
    );
    assert_eq!(events(&sb).len(), 2, "a new version is no event");
}

/// A model refused at the checks (its SELECT reads a column that does not exist; its
/// table lacks a column its header names) leaves no table, corrections table, view or
/// models row; fixed, the same command works.
#[test]
fn a_refused_model_leaves_nothing_behind_and_works_once_fixed() {
    let broken_select = SIGNS.replace("count(*) AS n", "count(o.no_such_column) AS n");
    let missing_column = SIGNS.replace("n BIGINT NOT NULL, run_id BIGINT,", "run_id BIGINT,");
    for (broken, says) in [
        (broken_select.as_str(), "no_such_column"),
        (
            missing_column.as_str(),
            "table order_signs has no column n, which `-- values:` names",
        ),
    ] {
        let sb = Sandbox::new();
        sb.exec(ORDERS);
        sb.ok(&["apply", "--interval", "2026-03-01"]);
        let tpl = pipeline(&sb, "project", &[("order_signs", broken)]);
        let interval = "2026-03-01..2026-03-02";
        for args in [
            &["--templates", s(&tpl), "apply", "--interval", interval][..],
            &["--templates", s(&tpl), "init"],
            &["--templates", s(&tpl), "reserve", "--interval", interval],
            &["--templates", s(&tpl), "status"],
        ] {
            refused(&sb, args, &[says]);
        }
        for name in [
            "order_signs",
            "order_signs_corrections",
            "order_signs_current",
        ] {
            assert!(!sb.table_exists(name), "{name} was left behind ({says})");
        }
        assert_eq!(
            sb.count("SELECT count(*) FROM models WHERE name = 'order_signs'"),
            0
        );

        // The fixed header: the same command just works.
        std::fs::write(tpl.join("models/order_signs.sql"), SIGNS).unwrap();
        sb.ok(&["--templates", s(&tpl), "apply", "--interval", interval]);
        assert_eq!(sb.count("SELECT count(*) FROM order_signs"), 3);
        assert_eq!(sb.count("SELECT count(*) FROM order_signs_current"), 3);
        assert_eq!(
            sb.count("SELECT count(*) FROM models WHERE name = 'order_signs'"),
            1
        );
    }
}

/// sqlrun fills run_id: a `-- create:` may leave it out (sqlrun adds it, in the same
/// transaction); a table that exists without it is refused with the statement to run.
#[test]
fn run_id_is_added_to_a_created_table_and_named_for_an_existing_one() {
    let sb = Sandbox::new();
    sb.exec(ORDERS);
    let without = SIGNS.replace(", run_id BIGINT,", ",");
    let tpl = pipeline(&sb, "project", &[("order_signs", &without)]);
    sb.ok(&[
        "--templates",
        s(&tpl),
        "apply",
        "--interval",
        "2026-03-01..2026-03-02",
    ]);
    let run = sb.last_run_id().to_string();
    assert_eq!(
        sb.rows("SELECT ds, sign, n, run_id FROM order_signs ORDER BY ds, sign"),
        [
            ["2026-03-01", "refund", "1", &run],
            ["2026-03-01", "sale", "1", &run],
            ["2026-03-02", "sale", "1", &run]
        ]
    );

    // A table made by hand, without run_id.
    let hand = "-- name: by_hand\n-- version: 1\n-- values: n\n\
        SELECT {{ ds }} AS ds, count(*) AS n FROM orders WHERE order_date = {{ ds }}\n";
    std::fs::write(tpl.join("models/by_hand.sql"), hand).unwrap();
    sb.exec("CREATE TABLE by_hand (ds DATE PRIMARY KEY, n BIGINT NOT NULL)");
    let integer = if is_sqlite() { "INTEGER" } else { "bigint" };
    let alter = format!("ALTER TABLE \"by_hand\" ADD COLUMN run_id {integer}");
    let run = refused(
        &sb,
        &["--templates", s(&tpl), "apply", "--interval", "2026-03-01"],
        &[
            s(&tpl.join("models/by_hand.sql")),
            "table by_hand has no run_id column",
            &format!("add it: `{alter}`"),
        ],
    );
    assert!(!sb.table_exists("by_hand_corrections"), "{}", run.stderr);
    // What the message says to run is what it takes.
    sb.exec(&alter);
    sb.ok(&["--templates", s(&tpl), "apply", "--interval", "2026-03-01"]);
    assert_eq!(sb.rows("SELECT ds, n FROM by_hand"), [["2026-03-01", "2"]]);
}

#[test]
fn several_header_problems_are_said_at_once() {
    let sb = Sandbox::new();
    let tpl = pipeline(&sb, "project", &[]);
    let file = tpl.join("models/order_signs.sql");
    std::fs::write(
        &file,
        "-- name: order_signs\n-- versoin: 1\n-- key: sign\n-- seal_values: n\n\
         SELECT {{ ds }} AS ds, 'x' AS sign, 1 AS n\n",
    )
    .unwrap();
    let other = tpl.join("models/other.sql");
    std::fs::write(&other, "-- name: other\n-- values: run_id\nSELECT 1\n").unwrap();
    let run = refused(
        &sb,
        &["--templates", s(&tpl), "apply", "--interval", "2026-03-01"],
        &[
            &format!("{}: 7 problems with its header:", s(&file)),
            "unknown header key `versoin`",
            "no `-- version:` line in its header; add `-- version: 1`",
            "`-- key: sign` must include the date column ds: write `-- key: ds, sign`",
            "no `-- values:` in its header",
            "`-- seal_values:` names n, which is not one of its values",
            "`-- seal_values:` names n, but seals has only the columns revenue and order_count",
            "`-- seal_values:` needs one row per date",
            &format!("{}: 2 problems with its header:", s(&other)),
            "run_id is sqlrun's own column",
        ],
    );
    // One line per problem.
    assert_eq!(run.stderr.matches("\n  - ").count(), 9, "{}", run.stderr);
}

#[test]
fn a_retired_model_is_recorded_and_templates_without_it_work() {
    let sb = Sandbox::new();
    sb.exec(ORDERS);
    let tpl = pipeline(&sb, "project", &[("order_signs", SIGNS)]);
    sb.ok(&[
        "--templates",
        s(&tpl),
        "apply",
        "--interval",
        "2026-03-01..2026-03-02",
    ]);
    let signs = sb.rows("SELECT * FROM order_signs ORDER BY ds, sign");

    // Refused, writing nothing: an unknown model, a model still in the templates, no reason.
    refused(
        &sb,
        &["retire", "nope", "--reason", "x"],
        &["knows no model nope", "daily_revenue, order_signs"],
    );
    refused(
        &sb,
        &[
            "--templates",
            s(&tpl),
            "retire",
            "order_signs",
            "--reason",
            "x",
        ],
        &[
            "model order_signs is still in the templates",
            "order_signs.sql",
        ],
    );
    refused(
        &sb,
        &["retire", "order_signs", "--reason", " "],
        &["--reason is empty"],
    );

    let run = sb.ok(&[
        "retire",
        "order_signs",
        "--reason",
        "it's replaced'); DROP TABLE orders; --",
        "--by",
        "bob",
    ]);
    assert!(
        run.stdout.contains("retired model order_signs"),
        "{}",
        run.stdout
    );
    assert_eq!(
        models(&sb)[1],
        [
            "order_signs",
            "order_signs",
            "ds, sign",
            "1",
            "1",
            "bob",
            "it's replaced'); DROP TABLE orders; --"
        ]
    );
    assert_eq!(
        sb.count(
            "SELECT count(*) FROM models WHERE name = 'order_signs' AND retired_at IS NOT NULL"
        ),
        1
    );
    assert_eq!(
        events(&sb),
        [
            ["daily_revenue", "added", "tester"],
            ["order_signs", "added", "tester"],
            ["order_signs", "retired", "bob"]
        ]
    );
    refused(
        &sb,
        &["retire", "order_signs", "--reason", "again"],
        &["already retired", "by bob"],
    );

    // Without the model: the built-in templates work; its table and rows stay.
    sb.ok(&["apply", "--interval", "2026-03-01..2026-03-03"]);
    sb.ok(&["status"]);
    assert_eq!(
        sb.rows("SELECT * FROM order_signs ORDER BY ds, sign"),
        signs
    );
    assert!(sb.table_exists("order_signs_current"));

    // Its table is free for another model now (a rename: retire the old name, add the new).
    let renamed = pipeline(
        &sb,
        "renamed",
        &[(
            "signs",
            &SIGNS.replace(
                "-- name: order_signs",
                "-- name: signs\n-- table: order_signs",
            ),
        )],
    );
    sb.ok(&[
        "--templates",
        s(&renamed),
        "apply",
        "--interval",
        "2026-03-03",
    ]);
    assert_eq!(
        sb.rows("SELECT name, table_name FROM models WHERE retired_at IS NULL ORDER BY name"),
        [["daily_revenue", "daily_revenue"], ["signs", "order_signs"]]
    );

    // Back in the templates beside the model that now has its table: refused.
    std::fs::copy(
        tpl.join("models/order_signs.sql"),
        renamed.join("models/order_signs.sql"),
    )
    .unwrap();
    std::fs::remove_file(renamed.join("models/signs.sql")).unwrap();
    refused(
        &sb,
        &[
            "--templates",
            s(&renamed),
            "apply",
            "--interval",
            "2026-03-03",
        ],
        &["they give table order_signs to model order_signs, but here it is model signs's"],
    );
    sb.ok(&[
        "--templates",
        s(&tpl),
        "retire",
        "signs",
        "--reason",
        "back to the old name",
    ]);

    // A retired model back in the templates is restored, and that is recorded.
    let run = sb.ok(&["--templates", s(&tpl), "apply", "--interval", "2026-03-03"]);
    assert!(
        run.stderr
            .contains("model order_signs is back in the templates: restored"),
        "{}",
        run.stderr
    );
    assert_eq!(
        sb.rows("SELECT name FROM models WHERE retired_at IS NULL ORDER BY name"),
        [["daily_revenue"], ["order_signs"]]
    );
    assert_eq!(
        sb.rows("SELECT name, retired_reason FROM models WHERE retired_at IS NOT NULL"),
        [["signs", "back to the old name"]]
    );
    let last = events(&sb).pop().unwrap();
    assert_eq!(last, ["order_signs", "restored", "tester"]);
}

/// A version goes up, never down: templates with an older version of a model than the
/// one that built the database's dates (the built-in pipeline run on a project's
/// database, say) are another pipeline's, refused with nothing written.
#[test]
fn an_older_version_of_a_model_is_refused_as_another_pipeline() {
    let orders = Orders::new(64, "2026-04-01", 3, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let tpl = crate::templates::copy_templates(&sb);
    let file = tpl.join("models/daily_revenue.sql");
    let text = std::fs::read_to_string(&file).unwrap();
    let version: i64 = text
        .lines()
        .find_map(|l| l.strip_prefix("-- version: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let newer = text
        .replacen(
            &format!("-- version: {version}"),
            &format!("-- version: {}", version + 1),
            1,
        )
        .replacen(
            "count(*) AS order_count",
            "count(*) + 1000 AS order_count",
            1,
        );
    std::fs::write(&file, newer).unwrap();
    let dir = tpl.to_str().unwrap();
    sb.ok(&[
        "--templates",
        dir,
        "apply",
        "--interval",
        &orders.interval(),
    ]);
    let before = snapshot(&sb);
    let run = sb.expect(2, &["apply", "--interval", &orders.interval()]);
    assert!(
        run.stderr.contains("not the pipeline of database")
            && run.stderr.contains(&format!(
                "is version {version} in them, but this database's dates were built by version {}",
                version + 1
            )),
        "{}",
        run.stderr
    );
    assert_eq!(snapshot(&sb), before, "nothing written");
}
