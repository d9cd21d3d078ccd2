//! Runs and plans in ranges: `runs N` (and `--dates`), the runs list, `apply --dry-run`
//! (its action vocabulary, no claimed run id, SQL only with `--sql`) and the range
//! summary that ends `apply` on stderr.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::*;

/// Each line of `text` with its runs of spaces made one, for comparing aligned columns.
fn words(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The range lines of a report: `START[..END] WORD N date(s) ...`, whitespace made one.
fn range_lines(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            w.len() >= 4
                && w[0].starts_with("20")
                && w[2].parse::<u64>().is_ok()
                && (w[3] == "date" || w[3] == "dates")
        })
        .collect()
}

fn reserve(sb: &Sandbox, interval: &str) -> i64 {
    let out = sb.ok(&["reserve", "--interval", interval, "--by", "planner"]);
    out.stdout
        .trim()
        .parse()
        .expect("reserve prints the run id")
}

fn json(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

/// A run over 2026-03-01..10 that computes seven dates, fails 2026-03-04 and skips
/// 2026-03-06..07 (held by a reservation). The sandbox, the run and its holder.
fn mixed_run() -> (Sandbox, i64, i64, Run) {
    let orders = Orders::new(121, "2026-03-01", 10, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    let holder = reserve(&sb, "2026-03-06..2026-03-07");
    sb.fail_inserts("daily_revenue", "2026-03-04", When::Before);
    let run = sb.expect(
        1,
        &["apply", "--interval", &orders.interval(), "--keep-going"],
    );
    let run_id = sb.last_run_id();
    // What the state store says, which every report below must match.
    assert_eq!(
        sb.rows(&format!(
            "SELECT ds, status, coalesce(held_by, 0) FROM run_partitions \
             WHERE run_id = {run_id} AND status <> 'success' ORDER BY ds"
        )),
        [
            ["2026-03-04", "failed", "0"],
            ["2026-03-06", "skipped", &holder.to_string()],
            ["2026-03-07", "skipped", &holder.to_string()],
        ]
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM run_partitions WHERE run_id = {run_id} AND status = 'success'"
        )),
        7
    );
    (sb, run_id, holder, run)
}

#[test]
fn runs_n_shows_a_runs_dates_as_ranges_per_status() {
    let (sb, run_id, holder, _) = mixed_run();
    let id = run_id.to_string();
    let out = sb.ok(&["runs", &id]).stdout;
    let lines = range_lines(&out);
    assert_eq!(lines.len(), 5, "{out}");
    assert_eq!(lines[0], "2026-03-01..2026-03-03 success 3 dates");
    assert!(
        lines[1].starts_with("2026-03-04 failed 1 date ") && lines[1].ends_with("boom on purpose"),
        "the failed date keeps its error:\n{out}"
    );
    assert_eq!(lines[2], "2026-03-05 success 1 date");
    assert_eq!(
        lines[3],
        format!("2026-03-06..2026-03-07 skipped 2 dates held by run {holder}")
    );
    assert_eq!(lines[4], "2026-03-08..2026-03-10 success 3 dates");
    assert!(
        words(&out).contains(&format!(
            "dates: 7 success, 2 skipped, 1 failed (`sqlrun runs {run_id} --dates` lists each)"
        )),
        "{out}"
    );
    // Ranges, not a line per date.
    assert!(!out.lines().any(|l| l.starts_with("2026-03-02")), "{out}");

    // --dates: today's table, a line per date with its status.
    let out = sb.ok(&["runs", &id, "--dates"]).stdout;
    let statuses: BTreeMap<String, String> = sb
        .rows(&format!(
            "SELECT ds, status FROM run_partitions WHERE run_id = {run_id}"
        ))
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    assert_eq!(statuses.len(), 10);
    for (ds, status) in &statuses {
        let line = out
            .lines()
            .find(|l| l.starts_with(ds.as_str()))
            .unwrap_or_else(|| panic!("no line for {ds}:\n{out}"));
        assert_eq!(
            line.split_whitespace().nth(1),
            Some(status.as_str()),
            "{out}"
        );
    }
    assert!(range_lines(&out).is_empty(), "{out}");
    // --dates is about one run.
    sb.expect(2, &["runs", "--dates"]);

    // JSON: the per-date rows as before, and the ranges beside them.
    let doc = json(&sb.ok(&["--json", "runs", &id]));
    assert_eq!(doc["dates"].as_array().unwrap().len(), 10);
    let ranges: Vec<(&str, &str, i64, &str, Option<i64>)> = doc["ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["start"].as_str().unwrap(),
                r["end"].as_str().unwrap(),
                r["count"].as_i64().unwrap(),
                r["status"].as_str().unwrap(),
                r["held_by"].as_i64(),
            )
        })
        .collect();
    assert_eq!(
        ranges,
        [
            ("2026-03-01", "2026-03-03", 3, "success", None),
            ("2026-03-04", "2026-03-04", 1, "failed", None),
            ("2026-03-05", "2026-03-05", 1, "success", None),
            ("2026-03-06", "2026-03-07", 2, "skipped", Some(holder)),
            ("2026-03-08", "2026-03-10", 3, "success", None),
        ]
    );
    let error = doc["ranges"][1]["error"].as_str().unwrap();
    assert!(error.contains("boom on purpose"), "{error}");
}

#[test]
fn the_runs_list_says_where_failed_and_skipped_dates_are() {
    let (sb, run_id, holder, _) = mixed_run();
    let out = sb.ok(&["runs"]).stdout;
    let row = |id: i64| {
        out.lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("no row for run {id}:\n{out}"))
            .to_string()
    };
    assert!(
        row(run_id)
            .ends_with("7 success, 2 skipped (2026-03-06..2026-03-07), 1 failed (2026-03-04)"),
        "{out}"
    );
    assert!(row(holder).ends_with("holding 2"), "{out}");

    let doc = json(&sb.ok(&["--json", "runs"]));
    let run = doc
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["run_id"] == run_id)
        .unwrap();
    assert_eq!(
        (
            &run["success"],
            &run["done"],
            &run["skipped"],
            &run["failed"]
        ),
        (
            &Value::from(7),
            &Value::from(7),
            &Value::from(2),
            &Value::from(1)
        )
    );
    assert_eq!(run["failed_ranges"], serde_json::json!(["2026-03-04"]));
    assert_eq!(
        run["skipped_ranges"],
        serde_json::json!(["2026-03-06..2026-03-07"])
    );
}

#[test]
fn apply_ends_with_its_dates_as_ranges_on_stderr() {
    let mut orders = Orders::new(122, "2026-05-01", 6, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    sb.ok(&[
        "seal",
        "--interval",
        "2026-05-01..2026-05-02",
        "--reason",
        "sent",
    ]);
    let late = orders.add("late-1", "2026-05-01", 120_000);
    sb.insert_orders(&[late]);
    let holder = reserve(&sb, "2026-05-05");
    sb.fail_inserts("daily_revenue", "2026-05-04", When::Before);

    let run = sb.expect(
        1,
        &["apply", "--interval", &orders.interval(), "--keep-going"],
    );
    let run_id = sb.last_run_id();
    assert_eq!(
        sb.rows(&format!(
            "SELECT ds, status FROM run_partitions WHERE run_id = {run_id} ORDER BY ds"
        )),
        [
            ["2026-05-01", "corrected"],
            ["2026-05-02", "unchanged"],
            ["2026-05-03", "success"],
            ["2026-05-04", "failed"],
            ["2026-05-05", "skipped"],
            ["2026-05-06", "success"],
        ]
    );
    assert_eq!(
        run.stdout.trim(),
        format!(
            "run {run_id} (backfill 2026-05-01..2026-05-06): 2 success, 1 corrected, \
             1 unchanged, 1 skipped, 1 failed -> failed"
        )
    );
    let lines = range_lines(&run.stderr);
    assert_eq!(lines.len(), 6, "{}", run.stderr);
    assert_eq!(lines[0], "2026-05-01 corrected 1 date");
    assert_eq!(lines[1], "2026-05-02 unchanged 1 date");
    assert_eq!(lines[2], "2026-05-03 success 1 date");
    assert!(
        lines[3].starts_with("2026-05-04 failed 1 date ") && lines[3].ends_with("boom on purpose"),
        "{}",
        run.stderr
    );
    assert!(
        lines[4].starts_with(&format!(
            "2026-05-05 skipped 1 date held by run {holder} (backfill, requested by planner, reserved since "
        )),
        "{}",
        run.stderr
    );
    assert_eq!(lines[5], "2026-05-06 success 1 date");
    // The skip is said as soon as the dates are reserved (CONTRACT §2: a line per skipped
    // range), and again in the summary.
    let naming_skip: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("2026-05-05"))
        .collect();
    assert_eq!(naming_skip.len(), 2, "{}", run.stderr);
    assert!(
        naming_skip[0].starts_with(&format!(
            "skipped 2026-05-05 (1 date): held by run {holder}"
        )),
        "{}",
        run.stderr
    );

    // The JSON document has the same ranges.
    sb.stop_failing("daily_revenue");
    let run = sb.expect(
        99,
        &["--json", "apply", "--interval", "2026-05-03..2026-05-06"],
    );
    let doc = json(&run);
    let ranges: Vec<(&str, &str, &str)> = doc["ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["start"].as_str().unwrap(),
                r["end"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ranges,
        [
            ("2026-05-03", "2026-05-04", "success"),
            ("2026-05-05", "2026-05-05", "skipped"),
            ("2026-05-06", "2026-05-06", "success"),
        ]
    );
    assert_eq!(doc["ranges"][1]["held_by"], holder);
    assert_eq!(range_lines(&run.stderr).len(), 3, "{}", run.stderr);
}

/// A history with every kind of date: 2026-04-01..02 sealed, 03..04 computed, 05
/// missing, 06..07 held by a reservation, 08..10 missing. The sandbox and the holder.
fn planned_history() -> (Sandbox, i64) {
    let orders = Orders::new(123, "2026-04-01", 10, false);
    let sb = Sandbox::new();
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", "2026-04-01..2026-04-04"]);
    sb.ok(&[
        "seal",
        "--interval",
        "2026-04-01..2026-04-02",
        "--reason",
        "sent",
    ]);
    let holder = reserve(&sb, "2026-04-06..2026-04-07");
    (sb, holder)
}

#[test]
fn a_dry_run_plans_in_ranges_per_action_from_a_fixed_vocabulary() {
    let (sb, holder) = planned_history();
    let before = snapshot(&sb);
    let interval = "2026-04-01..2026-04-10";

    let out = sb
        .ok(&["apply", "--interval", interval, "--dry-run"])
        .stdout;
    let text = words(&out);
    assert_eq!(
        text[0],
        "dry run of 2026-04-01..2026-04-10; nothing is written and no run id is claimed"
    );
    assert_eq!(
        text[1],
        "would: 4 compute, 2 recompute, 2 correct_if_changed, 2 skip_held"
    );
    let lines = range_lines(&out);
    assert_eq!(lines.len(), 5, "{out}");
    assert_eq!(
        lines[0],
        "2026-04-01..2026-04-02 correct_if_changed 2 dates current"
    );
    assert_eq!(lines[1], "2026-04-03..2026-04-04 recompute 2 dates current");
    assert_eq!(lines[2], "2026-04-05 compute 1 date missing");
    assert!(
        lines[3].starts_with(&format!(
            "2026-04-06..2026-04-07 skip_held 2 dates held by run {holder} (backfill, requested by planner, since "
        )),
        "{out}"
    );
    assert_eq!(lines[4], "2026-04-08..2026-04-10 compute 3 dates missing");

    // JSON: each date's action from the vocabulary, the same ranges, counts per action.
    let doc = json(&sb.ok(&["--json", "apply", "--interval", interval, "--dry-run"]));
    let vocabulary = [
        "compute",
        "recompute",
        "correct_if_changed",
        "skip_held",
        "reclaim_and_compute",
        "reclaim_and_correct",
        "not_selected",
    ];
    let plan: Vec<(&str, &str)> = doc["plan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["ds"].as_str().unwrap(), s["action"].as_str().unwrap()))
        .collect();
    assert!(plan.iter().all(|(_, a)| vocabulary.contains(a)), "{plan:?}");
    let want = [
        ("2026-04-01", "correct_if_changed"),
        ("2026-04-02", "correct_if_changed"),
        ("2026-04-03", "recompute"),
        ("2026-04-04", "recompute"),
        ("2026-04-05", "compute"),
        ("2026-04-06", "skip_held"),
        ("2026-04-07", "skip_held"),
        ("2026-04-08", "compute"),
        ("2026-04-09", "compute"),
        ("2026-04-10", "compute"),
    ];
    assert_eq!(plan, want);
    assert_eq!(doc["plan"][5]["held_by"], holder);
    assert_eq!(doc["plan"][4]["reason"], "missing");
    assert_eq!(doc["plan"][2]["reason"], "current");
    assert!(doc["plan"][5]["reason"].is_null());
    assert_eq!(
        doc["counts"],
        serde_json::json!({"compute": 4, "recompute": 2, "correct_if_changed": 2, "skip_held": 2})
    );
    let ranges: Vec<(&str, &str, &str)> = doc["ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["start"].as_str().unwrap(),
                r["end"].as_str().unwrap(),
                r["action"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ranges,
        [
            ("2026-04-01", "2026-04-02", "correct_if_changed"),
            ("2026-04-03", "2026-04-04", "recompute"),
            ("2026-04-05", "2026-04-05", "compute"),
            ("2026-04-06", "2026-04-07", "skip_held"),
            ("2026-04-08", "2026-04-10", "compute"),
        ]
    );

    // --only missing leaves the computed dates out: not_selected.
    let doc = json(&sb.ok(&[
        "--json",
        "apply",
        "--interval",
        interval,
        "--only",
        "missing",
        "--dry-run",
    ]));
    assert_eq!(doc["ranges"][0]["action"], "not_selected");
    assert_eq!(doc["ranges"][0]["end"], "2026-04-04");
    assert_eq!(doc["counts"]["not_selected"], 4);
    assert_eq!(snapshot(&sb), before, "a dry run writes nothing");
}

#[test]
fn a_dry_run_claims_no_run_id_and_the_next_run_gets_the_next_one() {
    let (sb, holder) = planned_history();
    let last = sb.last_run_id();
    assert_eq!(last, holder);
    let next = (last + 1).to_string();

    let text = sb.ok(&["apply", "--interval", "2026-04-05", "--dry-run", "--sql"]);
    assert!(!text.stdout.contains("as run"), "{}", text.stdout);
    assert!(
        !text.stdout.contains(&format!("run {next}")),
        "{}",
        text.stdout
    );
    let doc = json(&sb.ok(&[
        "--json",
        "apply",
        "--interval",
        "2026-04-05",
        "--dry-run",
        "--sql",
    ]));
    assert!(doc["run_id"].is_null(), "{doc}");
    assert_eq!(doc["run_id_placeholder"], ":run_id");
    assert_eq!(sb.last_run_id(), last, "no run row");

    // The SQL shows the run id as the placeholder, and says so.
    let sql = doc["sql"][0]["sql"].as_str().unwrap();
    assert!(sql.contains(":run_id"), "{sql}");
    assert!(
        text.stdout
            .contains("A dry run claims no run id, so run_id\n-- is the placeholder :run_id"),
        "{}",
        text.stdout
    );
    // Bound by hand, it computes what the run computes.
    let query =
        "SELECT ds, revenue, order_count, run_id FROM daily_revenue WHERE ds = '2026-04-05'";
    let by_hand = sb.rows_after_script(&sql.replace(":run_id", &next), query);

    let run = sb.ok(&["apply", "--interval", "2026-04-05"]);
    assert!(
        run.stdout.starts_with(&format!("run {next} ")),
        "{}",
        run.stdout
    );
    assert_eq!(sb.last_run_id(), last + 1, "the dry runs took no id");
    assert_eq!(sb.rows(query), by_hand);
    assert_eq!(by_hand[0][3], next);
}

#[test]
fn the_sql_is_shown_only_with_sql() {
    let (sb, holder) = planned_history();
    let interval = "2026-04-04..2026-04-07";

    let plain = sb
        .ok(&["apply", "--interval", interval, "--dry-run"])
        .stdout;
    assert!(!plain.contains("BEGIN"), "{plain}");
    assert!(!plain.contains("INSERT INTO"), "{plain}");
    assert!(
        plain.contains("(--sql adds the SQL of each date it would compute)"),
        "{plain}"
    );
    let doc = json(&sb.ok(&["--json", "apply", "--interval", interval, "--dry-run"]));
    assert!(doc.get("sql").is_none(), "{doc}");
    assert!(doc.get("run_id_placeholder").is_none(), "{doc}");

    let with = sb
        .ok(&["apply", "--interval", interval, "--dry-run", "--sql"])
        .stdout;
    // One transaction per date it would compute (04 and 05; 06..07 are held).
    for ds in ["2026-04-04", "2026-04-05"] {
        assert!(with.contains(&format!("-- ===== {ds} =====")), "{with}");
    }
    assert!(!with.contains("-- ===== 2026-04-06"), "{with}");
    assert_eq!(
        with.lines().filter(|l| l.starts_with("BEGIN")).count(),
        2,
        "{with}"
    );
    assert!(with.contains("INSERT INTO \"daily_revenue\""), "{with}");
    let doc = json(&sb.ok(&[
        "--json",
        "apply",
        "--interval",
        interval,
        "--dry-run",
        "--sql",
    ]));
    let dates: Vec<&str> = doc["sql"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["ds"].as_str().unwrap())
        .collect();
    assert_eq!(dates, ["2026-04-04", "2026-04-05"]);

    // A reserved run's plan is its own: the SQL has its run id.
    let own = sb
        .ok(&["apply", "--run", &holder.to_string(), "--dry-run", "--sql"])
        .stdout;
    assert!(
        own.contains(&format!(
            "-- The SQL of each date it would compute, as run {holder}."
        )),
        "{own}"
    );
    assert!(!own.contains(":run_id"), "{own}");

    // --sql belongs to --dry-run: alone it is bad input, and nothing is written.
    let before = snapshot(&sb);
    let run = sb.expect(2, &["apply", "--interval", interval, "--sql"]);
    assert!(run.stderr.contains("--dry-run"), "{}", run.stderr);
    assert_eq!(snapshot(&sb), before);
}
