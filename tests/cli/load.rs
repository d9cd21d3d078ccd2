//! `sqlrun load TABLE FILE`: CSV rows into a table, all or nothing. Columns the header
//! leaves out take their defaults (orders.created_at, which the sqlite3 shell's `.import`
//! cannot leave out); each value is checked against its column's type; a bad row names
//! its line, column and value, and nothing is written; loading a tracked source marks
//! the dates it touched as changed.

use std::io::Write;
use std::process::Stdio;

use crate::support::*;

/// Writes `csv` into the sandbox's folder as `name`, and returns its path.
fn file(sb: &Sandbox, name: &str, csv: &str) -> String {
    let path = sb.path().join(name);
    std::fs::write(&path, csv).unwrap();
    path.display().to_string()
}

/// `sqlrun load TABLE -` with `csv` on stdin.
fn load_stdin(sb: &Sandbox, extra: &[&str], table: &str, csv: &str) -> Run {
    let mut args = extra.to_vec();
    args.extend(["load", table, "-"]);
    let mut child = sb
        .cmd(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(csv.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    Run::from(out)
}

fn orders(sb: &Sandbox) -> Vec<Vec<String>> {
    sb.rows("SELECT order_id, order_date, amount FROM orders ORDER BY order_id")
}

fn row(fields: &[&str]) -> Vec<String> {
    fields.iter().map(|f| f.to_string()).collect()
}

/// Asserts a refused load: exit 2, every piece in the message, and no row in `orders`.
fn refused(sb: &Sandbox, run: &Run, pieces: &[&str]) {
    assert_eq!(run.code, 2, "a refused load exits 2: {run:?}");
    for piece in pieces {
        assert!(
            run.stderr.contains(piece),
            "{piece:?} in the message:\n{}",
            run.stderr
        );
    }
    assert!(run.stdout.is_empty(), "nothing said loaded: {run:?}");
    assert_eq!(
        sb.count("SELECT count(*) FROM orders"),
        0,
        "nothing was written"
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM source_changes"),
        0,
        "no date marked"
    );
}

#[test]
fn columns_left_out_take_their_defaults() {
    let sb = Sandbox::new();
    let before = sb.rows("SELECT CAST(CURRENT_TIMESTAMP AS TEXT)")[0][0].clone();
    let csv = file(
        &sb,
        "orders.csv",
        "order_id,order_date,amount\na1,2026-02-03,120000\na2,2026-02-03,-5000\na3,2026-02-04,7\n",
    );
    let run = sb.ok(&["load", "orders", &csv]);
    assert_eq!(run.stdout, "loaded 3 rows into orders\n");
    assert_eq!(
        orders(&sb),
        [
            row(&["a1", "2026-02-03", "120000"]),
            row(&["a2", "2026-02-03", "-5000"]),
            row(&["a3", "2026-02-04", "7"]),
        ]
    );
    // created_at came from its default: now, in the contract's spelling.
    let stamps = sb.rows("SELECT DISTINCT created_at FROM orders");
    assert_eq!(stamps.len(), 1, "one statement, one now: {stamps:?}");
    let stamp = &stamps[0][0];
    assert!(
        chrono::NaiveDateTime::parse_from_str(stamp, "%Y-%m-%d %H:%M:%S").is_ok(),
        "created_at {stamp:?} is YYYY-MM-DD HH:MM:SS"
    );
    assert!(
        stamp[..10] >= before[..10],
        "created_at {stamp} is today ({before})"
    );

    // The rows count like any others.
    sb.ok(&["apply", "--interval", "2026-02-03..2026-02-04"]);
    let daily = sb.daily();
    assert_eq!(daily["2026-02-03"], (115_000, 2));
    assert_eq!(daily["2026-02-04"], (7, 1));

    let json = sb.ok(&["--json", "load", "orders", &csv]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("one JSON document");
    // The same rows again: the dates computed above show as changed now.
    assert_eq!(
        doc,
        serde_json::json!({"table": "orders", "rows": 3, "changed": ["2026-02-03..2026-02-04"]})
    );
    assert_eq!(sb.count("SELECT count(*) FROM orders"), 6);
}

#[test]
fn quoted_fields_keep_commas_quotes_and_line_breaks() {
    let sb = Sandbox::new();
    // A header in another order, spaces around its names, a UTF-8 byte order mark, CRLF.
    let csv = file(
        &sb,
        "quoted.csv",
        "\u{feff}amount , order_id,order_date,created_at\r\n\
         5,\"x, with a comma\",2026-02-03,2026-02-20 09:00:00\r\n\
         6,\"say \"\"hi\"\"\",2026-02-03,2026-02-20 10:00:00\r\n\
         7,\"two\nlines\",2026-02-03,2026-02-20 11:00:00\r\n\
         8,'); DROP TABLE orders; --,2026-02-03,2026-02-20 12:00:00\r\n",
    );
    let run = sb.ok(&["load", "orders", &csv]);
    assert_eq!(run.stdout, "loaded 4 rows into orders\n");
    assert_eq!(
        sb.rows("SELECT order_id, amount, created_at FROM orders ORDER BY amount"),
        [
            row(&["x, with a comma", "5", "2026-02-20 09:00:00"]),
            row(&["say \"hi\"", "6", "2026-02-20 10:00:00"]),
            row(&["two\nlines", "7", "2026-02-20 11:00:00"]),
            row(&["'); DROP TABLE orders; --", "8", "2026-02-20 12:00:00"]),
        ]
    );
}

#[test]
fn a_bad_row_names_its_line_column_and_value_and_nothing_is_written() {
    let sb = Sandbox::new();
    // Far more rows than one statement holds: the rows before the bad one went to the
    // database already, and are rolled back with it.
    let mut csv = String::from("order_id,order_date,amount\n");
    for i in 0..25_000 {
        csv.push_str(&format!("o{i},2026-02-03,{i}\n"));
    }
    csv.push_str("bad,2026-02-03,12.5\n");
    let path = file(&sb, "bad.csv", &csv);
    let run = sb.run(&["load", "orders", &path]);
    refused(
        &sb,
        &run,
        &[
            "bad.csv line 25002",
            "column amount",
            "`12.5`",
            "a whole number",
        ],
    );

    let dates = file(
        &sb,
        "dates.csv",
        "order_id,order_date,amount\na,2026-02-03,1\nb,2026-02-30,2\n",
    );
    let run = sb.run(&["load", "orders", &dates]);
    refused(
        &sb,
        &run,
        &["line 3", "column order_date", "`2026-02-30`", "YYYY-MM-DD"],
    );
    let run = load_stdin(
        &sb,
        &[],
        "orders",
        "order_id,order_date,amount\na,03/02/2026,1\n",
    );
    refused(
        &sb,
        &run,
        &["stdin line 2", "order_date", "`03/02/2026`", "YYYY-MM-DD"],
    );

    let empty = load_stdin(
        &sb,
        &[],
        "orders",
        "order_id,order_date,amount\na,2026-02-03,\n",
    );
    refused(
        &sb,
        &empty,
        &["line 2", "column amount", "empty", "may not be NULL"],
    );
    let short = load_stdin(
        &sb,
        &[],
        "orders",
        "order_id,order_date,amount\na,2026-02-03\n",
    );
    refused(
        &sb,
        &short,
        &["line 2", "2 fields", "3 columns", "double quotes"],
    );
}

#[test]
fn a_row_the_database_refuses_is_named_too() {
    let sb = Sandbox::new();
    sb.exec(
        "CREATE TABLE refunds (refund_id TEXT PRIMARY KEY, \
         amount BIGINT NOT NULL CHECK (amount < 0));",
    );
    let mut csv = String::from("refund_id,amount\n");
    // In the third statement: the first two went to the database already.
    for i in 0..25_000 {
        let amount = if i == 21_000 { 5 } else { -1 - i };
        csv.push_str(&format!("r{i},{amount}\n"));
    }
    let path = file(&sb, "refunds.csv", &csv);
    let run = sb.run(&["load", "refunds", &path]);
    assert_eq!(run.code, 2, "{run:?}");
    for piece in [
        "refunds.csv line 21002",
        "refund_id=r21000",
        "amount=5",
        "nothing was loaded",
    ] {
        assert!(run.stderr.contains(piece), "{piece:?} in:\n{}", run.stderr);
    }
    assert_eq!(sb.count("SELECT count(*) FROM refunds"), 0);

    // A duplicate key within the file: the second row is the one refused.
    let dup = load_stdin(
        &sb,
        &[],
        "refunds",
        "refund_id,amount\nr1,-1\nr2,-2\nr1,-3\n",
    );
    assert_eq!(dup.code, 2, "{dup:?}");
    assert!(dup.stderr.contains("stdin line 4"), "{}", dup.stderr);
    assert_eq!(sb.count("SELECT count(*) FROM refunds"), 0);

    let good = load_stdin(&sb, &[], "refunds", "refund_id,amount\nr1,-1\nr2,-2\n");
    assert_eq!(good.code, 0, "{good:?}");
    assert_eq!(
        sb.rows("SELECT refund_id, amount FROM refunds ORDER BY refund_id"),
        [row(&["r1", "-1"]), row(&["r2", "-2"])]
    );
}

#[test]
fn stdin_is_read_as_a_file() {
    // No `init` first: the database is made on first use, as by every command.
    let sb = Sandbox::empty();
    let run = load_stdin(
        &sb,
        &["--json"],
        "orders",
        "order_id,order_date,amount\ns1,2026-02-05,10\ns2,2026-02-06,20\n",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("one JSON document");
    assert_eq!(
        doc,
        serde_json::json!({"table": "orders", "rows": 2, "changed": []})
    );
    assert_eq!(
        orders(&sb),
        [
            row(&["s1", "2026-02-05", "10"]),
            row(&["s2", "2026-02-06", "20"])
        ]
    );
    // A header alone is zero rows.
    let none = load_stdin(&sb, &[], "orders", "order_id,order_date,amount\n");
    assert_eq!(none.code, 0, "{none:?}");
    assert_eq!(none.stdout, "loaded 0 rows into orders\n");
}

#[test]
fn unknown_tables_and_columns_are_named_with_what_exists() {
    let sb = Sandbox::new();
    let run = load_stdin(
        &sb,
        &[],
        "orders",
        "order_id,order_date,amout\na,2026-02-03,1\n",
    );
    refused(
        &sb,
        &run,
        &[
            "no column `amout`",
            "order_id, order_date, amount, created_at",
        ],
    );
    let run = load_stdin(&sb, &[], "orders", "order_id,amount\na,1\n");
    refused(
        &sb,
        &run,
        &["leaves out order_date", "add it to the header"],
    );
    let run = load_stdin(&sb, &[], "orders", "order_id,order_date,order_id\n");
    refused(&sb, &run, &["order_id is named twice"]);
    let run = load_stdin(&sb, &[], "orders", "");
    refused(&sb, &run, &["no header", "order_id,order_date,amount"]);
    let run = load_stdin(&sb, &[], "ordrs", "order_id\n");
    refused(
        &sb,
        &run,
        &["no table ordrs", "the tables you can load into: orders"],
    );
    let missing = sb.path().join("missing.csv").display().to_string();
    let run = sb.run(&["load", "orders", &missing]);
    refused(
        &sb,
        &run,
        &["cannot read", "missing.csv", "- to read stdin"],
    );
}

#[test]
fn model_tables_and_sqlrun_s_own_are_refused() {
    let sb = Sandbox::new();
    let run = load_stdin(&sb, &[], "daily_revenue", "ds,revenue,order_count,run_id\n");
    refused(
        &sb,
        &run,
        &[
            "daily_revenue is the table of model daily_revenue",
            "sqlrun apply",
            "(orders)",
        ],
    );
    let run = load_stdin(&sb, &[], "daily_revenue_corrections", "ds\n");
    refused(&sb, &run, &["corrections of model daily_revenue", "orders"]);
    for state in ["runs", "reservations", "source_changes", "seals"] {
        let run = load_stdin(&sb, &[], state, "ds\n2026-02-03\n");
        refused(
            &sb,
            &run,
            &[&format!("{state} is one of sqlrun's own state tables")],
        );
    }
    let run = load_stdin(&sb, &[], "daily_revenue_current", "ds\n");
    refused(
        &sb,
        &run,
        &["daily_revenue_current is not a table", "orders"],
    );
    assert_eq!(sb.count("SELECT count(*) FROM runs"), 0);
    assert_eq!(sb.count("SELECT count(*) FROM daily_revenue"), 0);
}

#[test]
fn loading_a_source_marks_the_dates_it_touched_as_changed() {
    let sb = Sandbox::new();
    let first = file(
        &sb,
        "first.csv",
        "order_id,order_date,amount,created_at\n\
         a,2026-02-01,100,2026-02-10 00:00:00\nb,2026-02-02,200,2026-02-10 00:00:00\n\
         c,2026-02-03,300,2026-02-10 00:00:00\nd,2026-02-04,400,2026-02-10 00:00:00\n",
    );
    let run = sb.ok(&["load", "orders", &first]);
    assert!(
        run.stderr.contains("no computed date shows as changed"),
        "nothing was computed yet:\n{}",
        run.stderr
    );
    sb.ok(&["apply", "--interval", "2026-02-01..2026-02-04"]);
    assert_eq!(
        sb.count("SELECT count(*) FROM source_changes"),
        0,
        "all taken"
    );

    // Late data: a new order on the 3rd, and b re-sent, moved from the 2nd to the 4th.
    let late = file(
        &sb,
        "late.csv",
        "order_id,order_date,amount,created_at\n\
         e,2026-02-03,50,2026-02-20 00:00:00\nb,2026-02-04,250,2026-02-20 00:00:00\n",
    );
    let run = sb.ok(&["load", "orders", &late]);
    contains_all(
        &run.stderr,
        &[
            "source of daily_revenue",
            "3 computed dates now show as changed: 2026-02-02..2026-02-04",
            "apply --only changed --interval 2026-02-02..2026-02-04",
        ],
    );
    let json = sb.ok(&[
        "--json",
        "load",
        "orders",
        &file(&sb, "none.csv", "order_id,order_date,amount\n"),
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        doc["changed"],
        serde_json::json!(["2026-02-02..2026-02-04"]),
        "{doc}"
    );
    let marked: Vec<String> = sb
        .rows("SELECT DISTINCT CAST(ds AS TEXT) FROM source_changes WHERE source = 'orders' ORDER BY 1")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(marked, ["2026-02-02", "2026-02-03", "2026-02-04"]);

    let before = sb.last_run_id();
    sb.ok(&[
        "apply",
        "--interval",
        "2026-02-01..2026-02-04",
        "--only",
        "changed",
    ]);
    let run = sb.last_run_id();
    assert!(run > before);
    let recomputed = sb.rows(&format!(
        "SELECT CAST(ds AS TEXT) FROM run_partitions WHERE run_id = {run} ORDER BY ds"
    ));
    assert_eq!(
        recomputed,
        [
            row(&["2026-02-02"]),
            row(&["2026-02-03"]),
            row(&["2026-02-04"])
        ]
    );
    let daily = sb.daily();
    assert_eq!(daily["2026-02-01"], (100, 1));
    assert_eq!(daily["2026-02-02"], (0, 0));
    assert_eq!(daily["2026-02-03"], (350, 2));
    assert_eq!(daily["2026-02-04"], (650, 2));
}

#[test]
fn values_are_checked_against_their_column_types() {
    let sb = Sandbox::new();
    sb.exec(if is_sqlite() {
        "CREATE TABLE readings (id INTEGER NOT NULL, taken_at TIMESTAMP, ok BOOLEAN, \
         level REAL, note TEXT);"
    } else {
        "CREATE TABLE readings (id integer NOT NULL, taken_at timestamptz, ok boolean, \
         level double precision, note text);"
    });
    let csv = "id,taken_at,ok,level,note\n\
               1,2026-02-20T09:00:00+09:00,yes,1.5,\n\
               2,2026-02-20 01:02:03,f,-2,\"\"\n\
               3,,,,plain\n";
    let run = load_stdin(&sb, &[], "readings", csv);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        sb.rows("SELECT id, taken_at, ok, level, note FROM readings ORDER BY id"),
        [
            row(&["1", "2026-02-20 00:00:00", "1", "1.5", "NULL"]),
            row(&["2", "2026-02-20 01:02:03", "0", "-2", "NULL"]),
            row(&["3", "NULL", "NULL", "NULL", "plain"]),
        ]
    );
    for (bad, pieces) in [
        (
            "4,yesterday,t,1,x",
            ["column taken_at", "`yesterday`", "YYYY-MM-DD HH:MM:SS"],
        ),
        ("4,,maybe,1,x", ["column ok", "`maybe`", "true or false"]),
        ("4,,t,lots,x", ["column level", "`lots`", "a number"]),
        ("abc,,t,1,x", ["column id", "`abc`", "a whole number"]),
    ] {
        let run = load_stdin(
            &sb,
            &[],
            "readings",
            &format!("id,taken_at,ok,level,note\n{bad}\n"),
        );
        assert_eq!(run.code, 2, "{bad}: {run:?}");
        assert!(run.stderr.contains("stdin line 2"), "{bad}: {}", run.stderr);
        for piece in pieces {
            assert!(
                run.stderr.contains(piece),
                "{bad}: {piece:?} in {}",
                run.stderr
            );
        }
    }
    assert_eq!(sb.count("SELECT count(*) FROM readings"), 3);
}

/// orders.created_at decides which version of an order wins: it is a time on every
/// backend (on SQLite a TEXT column that defaults to the current time), so a time written
/// with a T or an offset is stored as UTC `YYYY-MM-DD HH:MM:SS`, compares as one, and the
/// same order wins everywhere.
#[test]
fn created_at_is_a_time_on_every_backend() {
    let sb = Sandbox::new();
    let run = load_stdin(
        &sb,
        &[],
        "orders",
        "order_id,order_date,amount,created_at\n\
         c,2026-02-01,5,2026-02-20T09:00:00Z\n\
         c,2026-02-02,7,2026-02-20 10:00:00\n\
         d,2026-02-02,1,2026-02-20T10:00:00+09:00\n",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        sb.rows(
            "SELECT order_id, order_date, created_at FROM orders ORDER BY order_id, order_date"
        ),
        [
            ["c", "2026-02-01", "2026-02-20 09:00:00"],
            ["c", "2026-02-02", "2026-02-20 10:00:00"],
            ["d", "2026-02-02", "2026-02-20 01:00:00"],
        ]
    );
    sb.ok(&["apply", "--interval", "2026-02-01..2026-02-02"]);
    assert_eq!(
        sb.rows("SELECT ds, revenue, order_count FROM daily_revenue ORDER BY ds"),
        [["2026-02-01", "0", "0"], ["2026-02-02", "8", "2"]]
    );
    let bad = load_stdin(
        &sb,
        &[],
        "orders",
        "order_id,order_date,amount,created_at\ne,2026-02-01,5,yesterday\n",
    );
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(
        bad.stderr
            .contains("line 2, column created_at: `yesterday` is not a time"),
        "{}",
        bad.stderr
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM orders"),
        3,
        "nothing more written"
    );
}

/// Any table is loaded by its header, not only orders: a table made by SQL, whose
/// columns the file names in any order. A column the table lacks, one it cannot fill by
/// itself left out, and a value of the wrong type are each refused (exit 2) with what was
/// wrong and what would be right, and nothing of the file is written.
#[test]
fn a_table_made_by_hand_is_loaded_by_its_header_and_a_wrong_column_loads_nothing() {
    let sb = Sandbox::new();
    sb.exec(
        "CREATE TABLE customers (customer_id TEXT NOT NULL, segment TEXT NOT NULL, \
         updated_at TEXT NOT NULL, visits INTEGER NOT NULL DEFAULT 0, note TEXT);",
    );
    let customers = |sb: &Sandbox| {
        sb.rows(
            "SELECT customer_id, segment, updated_at, visits, note FROM customers \
             ORDER BY customer_id",
        )
    };
    // visits takes its default, note is NULL: neither has to be in the header.
    let run = load_stdin(
        &sb,
        &[],
        "customers",
        "segment,customer_id,updated_at\nretail,c1,2026-02-01\nwholesale,c2,2026-02-02\n",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "loaded 2 rows into customers\n");
    let loaded = vec![
        row(&["c1", "retail", "2026-02-01", "0", "NULL"]),
        row(&["c2", "wholesale", "2026-02-02", "0", "NULL"]),
    ];
    assert_eq!(customers(&sb), loaded);

    // Each refusal: exit 2, its words, nothing said loaded, and the table as it was.
    let refused = |csv: &str, pieces: &[&str]| {
        let run = load_stdin(&sb, &[], "customers", csv);
        assert_eq!(run.code, 2, "{csv:?}: {run:?}");
        assert!(run.stdout.is_empty(), "{csv:?}: {run:?}");
        for piece in pieces {
            assert!(
                run.stderr.contains(piece),
                "{csv:?}: {piece:?} in the message:\n{}",
                run.stderr
            );
        }
        assert_eq!(customers(&sb), loaded, "{csv:?}: nothing was written");
    };
    // A column the table lacks: named, with the table's columns and the way out.
    refused(
        "customer_id,segment,updated_at,region\nc3,retail,2026-02-03,north\n",
        &[
            "stdin line 1",
            "customers has no column `region`",
            "its columns are: customer_id, segment, updated_at, visits, note",
            "add the column to customers first",
        ],
    );
    // A column that is NOT NULL without a default, left out: named, before any row.
    let mut many = String::from("customer_id,updated_at\n");
    for i in 0..100 {
        many.push_str(&format!("n{i},2026-02-03\n"));
    }
    refused(
        &many,
        &[
            "the header leaves out segment",
            "customers cannot fill by itself (NOT NULL, no default)",
            "add it to the header",
        ],
    );
    refused(
        "customer_id\nc3\n",
        &["leaves out segment, updated_at", "add them to the header"],
    );
    // Text in an integer column: its line and column, the value, and what it should be;
    // the good row before it is not written either.
    refused(
        "customer_id,segment,updated_at,visits\nc3,retail,2026-02-03,4\nc4,retail,2026-02-03,often\n",
        &[
            "stdin line 3, column visits",
            "`often` is not a whole number",
            "nothing was loaded",
        ],
    );
    // An empty field for a NOT NULL column is no value.
    refused(
        "customer_id,segment,updated_at\nc3,,2026-02-03\n",
        &["line 2, column segment", "may not be NULL"],
    );
    assert_eq!(sb.count("SELECT count(*) FROM customers"), 2);
}
