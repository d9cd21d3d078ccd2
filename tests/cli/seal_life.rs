//! The life of a report after the first send: reissued versions, unsealing with a
//! reason, `seal --dry-run`, a model added after a seal, and corrections as a feed.

use std::collections::BTreeMap;

use crate::models::{band_rows, expected_bands, BANDS};
use crate::support::*;
use crate::templates::copy_templates;

const WEEK: &str = "2026-02-01..2026-02-07";

type Daily = BTreeMap<String, (i64, i64)>;

/// Two weeks of orders (2026-02-01..2026-02-14), all computed, the first week sealed.
fn sealed_week(seed: u64) -> (Sandbox, Orders) {
    let sb = Sandbox::new();
    let orders = Orders::new(seed, "2026-02-01", 14, true);
    sb.insert_orders(&orders.rows);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    sb.ok(&[
        "seal",
        "--interval",
        WEEK,
        "--reason",
        "week 1",
        "--by",
        "alice",
    ]);
    (sb, orders)
}

fn pair(r: &[String]) -> (i64, i64) {
    (r[0].parse().unwrap(), r[1].parse().unwrap())
}

/// daily_revenue's rows of one seal version, by date.
fn sent_in(sb: &Sandbox, seal_id: i64) -> Daily {
    sb.rows(&format!(
        "SELECT ds, revenue, order_count FROM daily_revenue_sent WHERE seal_id = {seal_id}"
    ))
    .into_iter()
    .map(|r| (r[0].clone(), pair(&r[1..])))
    .collect()
}

fn week(daily: &Daily) -> Daily {
    daily
        .iter()
        .filter(|(ds, _)| ds.as_str() <= "2026-02-07")
        .map(|(ds, v)| (ds.clone(), *v))
        .collect()
}

fn seals_values(sb: &Sandbox) -> Daily {
    sb.rows("SELECT ds, revenue, order_count FROM seals")
        .into_iter()
        .map(|r| (r[0].clone(), pair(&r[1..])))
        .collect()
}

fn last_seal_id(sb: &Sandbox) -> i64 {
    sb.count("SELECT max(seal_id) FROM seal_events")
}

fn open_corrections(sb: &Sandbox) -> i64 {
    sb.count("SELECT count(*) FROM daily_revenue_corrections WHERE settled_by IS NULL")
}

#[test]
fn a_reissue_keeps_the_first_version_and_later_corrections_measure_against_it() {
    let (sb, mut orders) = sealed_week(401);
    let first = last_seal_id(&sb);
    let as_first_sent = week(&orders.expected());
    sb.insert_orders(&[orders.add("late-1", "2026-02-03", 350_000)]);
    sb.ok(&["apply", "--interval", WEEK]);
    assert_eq!(open_corrections(&sb), 1);

    let run = sb.ok(&[
        "seal",
        "--reissue",
        "--interval",
        WEEK,
        "--reason",
        "restated week 1",
        "--by",
        "bob",
    ]);
    let second = last_seal_id(&sb);
    assert!(second > first);
    assert!(
        run.stdout
            .contains(&format!("reissued {WEEK} (7 dates) (seal {second})")),
        "{}",
        run.stdout
    );
    let now = week(&orders.expected());
    // Both versions stay readable, per key; the contract's tables say the latest.
    assert_eq!(
        sent_in(&sb, first),
        as_first_sent,
        "the first report as sent"
    );
    assert_eq!(
        sent_in(&sb, second),
        now,
        "the reissue sent the current values"
    );
    assert_eq!(seals_values(&sb), now, "seals: the latest version");
    assert_eq!(week(&sb.daily()), now, "daily_revenue: the latest version");
    assert_eq!(week(&sb.current()), now);
    let history = sb.rows(
        "SELECT seal_id, version, action, sealed_by, reason, revenue, latest \
         FROM daily_revenue_sent_history WHERE ds = '2026-02-03' ORDER BY seal_id",
    );
    let (was, is) = (as_first_sent["2026-02-03"].0, now["2026-02-03"].0);
    let flag = |b: bool| if b { "1" } else { "0" };
    assert_eq!(
        history,
        vec![
            vec![
                first.to_string(),
                "1".into(),
                "seal".into(),
                "alice".into(),
                "week 1".into(),
                was.to_string(),
                flag(false).into()
            ],
            vec![
                second.to_string(),
                "2".into(),
                "reissue".into(),
                "bob".into(),
                "restated week 1".into(),
                is.to_string(),
                flag(true).into()
            ],
        ]
    );
    assert_eq!(
        sb.rows("SELECT DISTINCT state FROM daily_revenue_sent_vs_now"),
        vec![vec!["unchanged".to_string()]],
        "against the reissue nothing differs"
    );
    // The correction it settled stays, marked; the reissue wrote none of its own.
    assert_eq!(
        sb.rows("SELECT count(*), max(settled_by) FROM daily_revenue_corrections"),
        vec![vec!["1".to_string(), second.to_string()]]
    );
    assert_eq!(open_corrections(&sb), 0);
    assert_eq!(
        sb.rows(&format!(
            "SELECT action FROM seal_events WHERE seal_id = {second}"
        )),
        vec![vec!["reissue".to_string()]]
    );

    // The same data again: nothing new. Then late data once more: one correction,
    // measured against the reissue, whatever how often it is applied.
    sb.ok(&["apply", "--interval", WEEK]);
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_revenue_corrections"),
        1
    );
    sb.insert_orders(&[orders.add("late-2", "2026-02-03", 1_000)]);
    sb.ok(&["apply", "--interval", WEEK]);
    sb.ok(&["apply", "--interval", WEEK]);
    let latest = sb.rows(
        "SELECT previous_revenue, revenue, seal_id, cause FROM daily_revenue_corrections \
         WHERE settled_by IS NULL",
    );
    assert_eq!(
        latest,
        vec![vec![
            is.to_string(),
            (is + 1_000).to_string(),
            second.to_string(),
            "late_rows".into()
        ]]
    );
    assert_eq!(week(&sb.current()), week(&orders.expected()));
    assert_eq!(seals_values(&sb), now, "what went out stays as sent");
    let status = sb.ok(&["--json", "status", "--interval", WEEK]);
    let doc: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(doc["seals"]["reissued"], serde_json::json!([WEEK]));
    assert_eq!(
        doc["ranges"]["corrected"],
        serde_json::json!(["2026-02-03"])
    );
    let calendar = sb.ok(&["status", "--interval", WEEK]).stdout;
    assert!(
        calendar.contains(&format!("seals      reissued: {WEEK}")),
        "{calendar}"
    );
}

#[test]
fn a_reissue_over_a_date_never_sealed_or_held_writes_nothing() {
    let (sb, _orders) = sealed_week(402);
    let before = snapshot(&sb);
    let run = sb.expect(
        2,
        &[
            "seal",
            "--reissue",
            "--interval",
            "2026-02-06..2026-02-08",
            "--reason",
            "r",
        ],
    );
    assert!(
        run.stderr.contains("nothing reissued") && run.stderr.contains("not sealed: 2026-02-08"),
        "{}",
        run.stderr
    );
    let held: i64 = sb
        .ok(&["reserve", "--interval", "2026-02-05"])
        .stdout
        .trim()
        .parse()
        .unwrap();
    let before_held = snapshot(&sb);
    let run = sb.expect(
        2,
        &["seal", "--reissue", "--interval", WEEK, "--reason", "r"],
    );
    assert!(
        run.stderr.contains(&format!("2026-02-05 (run {held})")),
        "{}",
        run.stderr
    );
    assert_eq!(snapshot(&sb), before_held, "refused: nothing written");
    sb.ok(&["release", &held.to_string()]);
    assert_eq!(sb.count("SELECT count(*) FROM seal_events"), 1);
    drop(before);
}

#[test]
fn unseal_then_apply_replaces_the_date_whole_and_keeps_the_history() {
    let (sb, mut orders) = sealed_week(403);
    let first = last_seal_id(&sb);
    let sent = week(&orders.expected());
    sb.insert_orders(&[orders.add("late-1", "2026-02-03", 5_000)]);
    sb.ok(&["apply", "--interval", WEEK]);
    let corrected = orders.expected();

    // Not sealed, or held: refused, nothing written.
    let before = snapshot(&sb);
    let run = sb.expect(
        2,
        &[
            "unseal",
            "--interval",
            "2026-02-07..2026-02-08",
            "--reason",
            "oops",
        ],
    );
    assert!(run.stderr.contains("nothing unsealed"), "{}", run.stderr);
    assert!(run.stderr.contains("2026-02-08"), "{}", run.stderr);
    assert_eq!(snapshot(&sb), before);
    let run = sb.expect(2, &["unseal", "--interval", "2026-02-03", "--reason", " "]);
    assert!(run.stderr.contains("--reason"), "{}", run.stderr);
    assert_eq!(snapshot(&sb), before);
    let held: i64 = sb
        .ok(&["reserve", "--interval", "2026-02-02"])
        .stdout
        .trim()
        .parse()
        .unwrap();
    let before = snapshot(&sb);
    let run = sb.expect(2, &["unseal", "--interval", WEEK, "--reason", "oops"]);
    assert!(
        run.stderr.contains(&format!("run {held}")),
        "{}",
        run.stderr
    );
    assert_eq!(snapshot(&sb), before);
    sb.ok(&["release", &held.to_string()]);

    sb.ok(&[
        "unseal",
        "--interval",
        "2026-02-01..2026-02-03",
        "--reason",
        "sealed the wrong days",
        "--by",
        "carol",
    ]);
    let unseal = last_seal_id(&sb);
    assert_eq!(
        sb.rows(&format!(
            "SELECT action, made_by, reason FROM seal_events WHERE seal_id = {unseal}"
        )),
        vec![vec![
            "unseal".to_string(),
            "carol".into(),
            "sealed the wrong days".into()
        ]]
    );
    assert_eq!(
        sb.rows("SELECT ds FROM seals WHERE ds <= '2026-02-03'"),
        Vec::<Vec<String>>::new(),
        "the dates left seals"
    );
    // What is true now is unchanged by the unseal: the table took the correction.
    assert_eq!(sb.daily()["2026-02-03"], corrected["2026-02-03"]);
    assert_eq!(sb.current(), corrected);
    assert_eq!(
        sb.rows("SELECT settled_by FROM daily_revenue_corrections"),
        vec![vec![unseal.to_string()]]
    );

    // The next apply replaces them whole, as any date; no correction.
    sb.insert_orders(&[orders.add("late-2", "2026-02-03", 7_000)]);
    sb.ok(&["apply", "--interval", WEEK]);
    let run = sb.last_run_id();
    assert_eq!(
        sb.rows(&format!(
            "SELECT ds, status FROM run_partitions WHERE run_id = {run} AND ds <= '2026-02-03' ORDER BY ds"
        )),
        vec![
            vec!["2026-02-01".to_string(), "success".into()],
            vec!["2026-02-02".to_string(), "success".into()],
            vec!["2026-02-03".to_string(), "success".into()],
        ]
    );
    assert_eq!(sb.daily(), orders.expected());
    assert_eq!(sb.current(), orders.expected());
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_revenue_corrections"),
        1
    );
    // The history stays: the first version of every date, and the correction.
    assert_eq!(sent_in(&sb, first), sent);
    let status = sb.ok(&["--json", "status", "--interval", WEEK]);
    let doc: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(
        doc["seals"]["unsealed"],
        serde_json::json!(["2026-02-01..2026-02-03"])
    );
    assert_eq!(
        doc["ranges"]["sealed"],
        serde_json::json!(["2026-02-04..2026-02-07"])
    );
    let list = sb
        .ok(&["status", "--list", "--interval", "2026-02-03"])
        .stdout;
    assert!(list.contains("unsealed"), "{list}");
    let audit = sb.ok(&["runs"]).stdout;
    assert!(
        audit.contains("unseal") && audit.contains("sealed the wrong days"),
        "{audit}"
    );

    // Sealed again later: a new version, from the values now.
    sb.ok(&["seal", "--interval", "2026-02-03", "--reason", "again"]);
    assert_eq!(
        sb.rows("SELECT version FROM sealed_models WHERE ds = '2026-02-03'"),
        vec![vec!["2".to_string()]]
    );
    assert_eq!(
        seals_values(&sb)["2026-02-03"],
        orders.expected()["2026-02-03"]
    );
    let status = sb.ok(&["--json", "status", "--interval", WEEK]);
    let doc: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(
        doc["seals"]["reissued"],
        serde_json::json!([]),
        "sealed again is not reissued"
    );
}

#[test]
fn seal_dry_run_says_what_it_would_do_and_writes_nothing() {
    let (sb, mut orders) = sealed_week(404);
    sb.insert_orders(&[orders.add("late-1", "2026-02-04", 9_000)]);
    sb.ok(&["apply", "--interval", &orders.interval()]);
    let before = snapshot(&sb);

    let run = sb.ok(&[
        "seal",
        "--dry-run",
        "--interval",
        "2026-02-06..2026-02-10",
        "--reason",
        "w2",
    ]);
    assert!(
        run.stdout
            .contains("would seal 2026-02-08..2026-02-10 (3 dates)")
            && run
                .stdout
                .contains("already sealed, left as they were: 2026-02-06..2026-02-07")
            && run.stdout.contains("nothing was written"),
        "{}",
        run.stdout
    );
    let run = sb.ok(&[
        "seal",
        "--reissue",
        "--dry-run",
        "--interval",
        WEEK,
        "--reason",
        "restated",
    ]);
    assert!(
        run.stdout
            .contains(&format!("would reissue {WEEK} (7 dates)"))
            && run.stdout.contains("1 open correction would be settled"),
        "{}",
        run.stdout
    );
    let run = sb.run(&[
        "--json",
        "unseal",
        "--dry-run",
        "--interval",
        "2026-02-06..2026-02-09",
        "--reason",
        "x",
    ]);
    assert_eq!(
        run.code, 2,
        "a dry run that would be refused exits as the refusal"
    );
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["dry_run"], true);
    let blockers = doc["blockers"][0].as_str().unwrap();
    assert!(
        blockers.contains("not sealed: 2026-02-08..2026-02-09"),
        "{blockers}"
    );
    let run = sb.ok(&[
        "--json",
        "seal",
        "--dry-run",
        "--interval",
        "2026-02-08",
        "--reason",
        "w2",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["dates"], serde_json::json!(["2026-02-08"]));
    assert_eq!(doc["seal_id"], serde_json::Value::Null);
    assert_eq!(snapshot(&sb), before, "a dry run writes nothing");
}

#[test]
fn a_model_added_after_a_seal_is_not_a_correction() {
    let sb = Sandbox::new();
    let mut orders = Orders::new(405, "2026-05-01", 10, false);
    sb.insert_orders(&orders.rows);
    let tpl = copy_templates(&sb);
    let tpl = tpl.to_str().unwrap().to_string();
    let t = |args: &[&str]| -> Vec<String> {
        ["--templates", &tpl]
            .iter()
            .chain(args)
            .map(|s| s.to_string())
            .collect()
    };
    let ok = |args: &[&str]| {
        let args = t(args);
        sb.ok(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    ok(&["apply", "--interval", &orders.interval()]);
    ok(&[
        "seal",
        "--interval",
        "2026-05-01..2026-05-07",
        "--reason",
        "week",
    ]);
    let first = last_seal_id(&sb);

    // A second model arrives, and is computed over the sealed week.
    std::fs::write(
        std::path::Path::new(&tpl).join("models/daily_amount_bands.sql"),
        BANDS,
    )
    .unwrap();
    let run = ok(&[
        "apply",
        "--interval",
        &orders.interval(),
        "--select",
        "daily_amount_bands",
    ]);
    assert!(!run.stdout.contains("corrected"), "{}", run.stdout);
    assert_eq!(
        band_rows(&sb, "daily_amount_bands"),
        expected_bands(&orders),
        "its rows are in its own table, sealed week included"
    );
    assert_eq!(
        band_rows(&sb, "daily_amount_bands_current"),
        expected_bands(&orders)
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_amount_bands_corrections"),
        0
    );
    assert_eq!(ok(&["corrections"]).stdout.trim(), "no corrections");
    // A "correction" an older sqlrun wrote for such a model (every key new, sent
    // nothing) is no correction of what went out: neither applied nor counted.
    let no = if is_postgres() { "false" } else { "0" };
    sb.exec(&format!(
        "INSERT INTO daily_amount_bands_corrections \
         (ds, band, order_count, revenue, removed, run_id, corrected_at) \
         VALUES ('2026-05-02', 'small', 99, 99, {no}, 1, '2026-05-10 00:00:00')"
    ));
    assert_eq!(
        band_rows(&sb, "daily_amount_bands_current"),
        expected_bands(&orders)
    );
    let status = ok(&["--json", "status", "--interval", &orders.interval()]);
    let doc: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(
        doc["ranges"]["sealed"],
        serde_json::json!(["2026-05-01..2026-05-07"])
    );
    assert_eq!(doc["ranges"]["corrected"], serde_json::json!([]));
    sb.exec("DELETE FROM daily_amount_bands_corrections");

    // Late data: the sealed model is corrected, the model the seal never covered is
    // replaced as an ordinary date.
    sb.insert_orders(&[orders.add("late-1", "2026-05-03", 400_000)]);
    ok(&["apply", "--interval", &orders.interval()]);
    assert_eq!(
        band_rows(&sb, "daily_amount_bands"),
        expected_bands(&orders)
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_amount_bands_corrections"),
        0
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_revenue_corrections"),
        1
    );

    // A later seal covers it; from then on it is corrected, never replaced.
    let run = ok(&[
        "seal",
        "--interval",
        "2026-05-01..2026-05-07",
        "--reason",
        "bands",
    ]);
    assert!(
        run.stdout
            .contains("daily_amount_bands: first sealed on 2026-05-01..2026-05-07"),
        "{}",
        run.stdout
    );
    let second = last_seal_id(&sb);
    assert_eq!(
        sb.rows(&format!(
            "SELECT DISTINCT model FROM seal_coverage WHERE seal_id = {second}"
        )),
        vec![vec!["daily_amount_bands".to_string()]]
    );
    assert_eq!(
        sb.count(&format!(
            "SELECT count(*) FROM seal_coverage WHERE seal_id = {first}"
        )),
        7,
        "the first seal covered daily_revenue only"
    );
    let sent_bands = band_rows(&sb, "daily_amount_bands");
    sb.insert_orders(&[orders.add("late-2", "2026-05-03", 20_000)]);
    ok(&["apply", "--interval", &orders.interval()]);
    assert_eq!(
        band_rows(&sb, "daily_amount_bands"),
        sent_bands,
        "sealed: kept as sent"
    );
    assert_eq!(
        band_rows(&sb, "daily_amount_bands_current"),
        expected_bands(&orders)
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_amount_bands_corrections WHERE seal_id IS NOT NULL"),
        1
    );
}

#[test]
fn corrections_since_a_seal_are_a_feed_with_cause_and_author() {
    let (sb, mut orders) = sealed_week(406);
    let first = last_seal_id(&sb);
    sb.insert_orders(&[orders.add("late-1", "2026-02-02", 1_100)]);
    sb.ok(&["apply", "--interval", WEEK, "--by", "ann"]);
    sb.ok(&[
        "seal",
        "--interval",
        "2026-02-08..2026-02-14",
        "--reason",
        "week 2",
    ]);
    let second = last_seal_id(&sb);
    sb.insert_orders(&[
        orders.add("late-2", "2026-02-05", 2_200),
        orders.add("late-3", "2026-02-10", 3_300),
    ]);
    sb.ok(&["apply", "--interval", &orders.interval(), "--by", "ben"]);

    let feed = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["--json", "corrections"];
        all.extend_from_slice(args);
        serde_json::from_str(&sb.ok(&all).stdout).unwrap()
    };
    let dates = |doc: &serde_json::Value| -> Vec<(String, i64, String, String)> {
        doc["daily_revenue"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["key"][0]["value"].as_str().unwrap().to_string(),
                    c["seal_id"].as_i64().unwrap(),
                    c["cause"].as_str().unwrap().to_string(),
                    c["run_by"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let late = "late_rows".to_string();
    assert_eq!(
        dates(&feed(&["--since", &second.to_string()])),
        vec![
            ("2026-02-05".into(), first, late.clone(), "ben".into()),
            ("2026-02-10".into(), second, late.clone(), "ben".into()),
        ],
        "exactly the corrections after seal {second}, each against its date's version"
    );
    assert_eq!(dates(&feed(&["--since", &first.to_string()])).len(), 3);
    assert_eq!(
        dates(&feed(&[
            "--since",
            "2026-02-01",
            "--interval",
            "2026-02-02"
        ])),
        vec![("2026-02-02".into(), first, late.clone(), "ann".into())]
    );
    assert_eq!(
        dates(&feed(&["--since", "2999-01-01T00:00:00+09:00"])).len(),
        0
    );
    let same = sb.ok(&[
        "corrections",
        "--format",
        "json",
        "--since",
        &second.to_string(),
    ]);
    let doc: serde_json::Value = serde_json::from_str(&same.stdout).unwrap();
    assert_eq!(dates(&doc).len(), 2, "--format json is --json");

    // CSV: a header, then one line per value of each correction.
    let csv = sb
        .ok(&[
            "corrections",
            "--format",
            "csv",
            "--since",
            &second.to_string(),
        ])
        .stdout;
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("model,correction_id,key,column,"),
        "{csv}"
    );
    assert_eq!(lines.len(), 1 + 2 * 2, "{csv}");
    assert!(
        lines[1..]
            .iter()
            .all(|l| l.contains(",late_rows,") && l.contains(",ben,")),
        "{csv}"
    );
    let text = sb.ok(&["corrections", "--select", "daily_revenue"]).stdout;
    assert!(
        text.contains("late source rows") && text.contains("ann"),
        "{text}"
    );

    // Bad input: exit 2, named.
    let run = sb.expect(2, &["corrections", "--since", "yesterday"]);
    assert!(run.stderr.contains("YYYY-MM-DD HH:MM:SS"), "{}", run.stderr);
    let run = sb.expect(2, &["corrections", "--since", "99"]);
    assert!(run.stderr.contains("no seal event 99"), "{}", run.stderr);
    let run = sb.expect(2, &["corrections", "--select", "nope"]);
    assert!(run.stderr.contains("daily_revenue"), "{}", run.stderr);
}

#[test]
fn a_new_model_version_is_the_cause_of_its_corrections() {
    let (sb, _orders) = sealed_week(407);
    let tpl = copy_templates(&sb);
    let model = tpl.join("models/daily_revenue.sql");
    let text = std::fs::read_to_string(&model).unwrap();
    let version = text
        .lines()
        .find_map(|l| l.strip_prefix("-- version: "))
        .unwrap()
        .to_string();
    let next = (version.parse::<i64>().unwrap() + 1).to_string();
    let text = text
        .replace(
            &format!("-- version: {version}"),
            &format!("-- version: {next}"),
        )
        .replace("COUNT(*) AS order_count", "COUNT(*) + 1 AS order_count")
        .replace("count(*) AS order_count", "count(*) + 1 AS order_count");
    assert!(text.contains("+ 1 AS order_count"), "{text}");
    std::fs::write(&model, text).unwrap();
    let tpl = tpl.to_str().unwrap();
    sb.ok(&["--templates", tpl, "apply", "--interval", "2026-02-02"]);
    assert_eq!(
        sb.rows("SELECT cause FROM daily_revenue_corrections_feed"),
        vec![vec!["new_version".to_string()]]
    );
    let text = sb.ok(&["--templates", tpl, "corrections"]).stdout;
    assert!(text.contains("new model version"), "{text}");
}

/// Back to what sqlrun before seal versions (schema 10) left: no seal events, each
/// model's `_sent` one row per key, its corrections without the seal columns, and the
/// views made again by the next command. `models`: the models' tables.
fn downgrade_to_schema_10(sb: &Sandbox, models: &[&str]) {
    let mut old = String::new();
    for v in [
        "cumulative_revenue_as_sent",
        "cumulative_revenue",
        "orders_latest",
        "source_freshness",
    ] {
        old.push_str(&format!("DROP VIEW IF EXISTS {v};\n"));
    }
    for m in models {
        for v in ["corrections_feed", "sent_history", "sent_vs_now", "current"] {
            old.push_str(&format!("DROP VIEW IF EXISTS {m}_{v};\n"));
        }
    }
    old.push_str(
        "DROP VIEW sealed_models;\nDROP TABLE seal_coverage;\nDROP TABLE seal_events;\n\
         ALTER TABLE runs DROP COLUMN took_ms;\n\
         DROP TABLE replaced_partitions;\n\
         DROP TABLE source_declarations;\n\
         ALTER TABLE partition_sources DROP COLUMN noted_at;\n\
         ALTER TABLE partition_models DROP COLUMN provisional;\n\
         ALTER TABLE partition_models DROP COLUMN built_at;\n\
         DELETE FROM sqlrun_schema_history WHERE version >= 11;\n",
    );
    for m in models {
        old.push_str(&format!("DROP TABLE {m}_history;\n"));
    }
    for m in models {
        let key = if *m == "daily_revenue" {
            "ds"
        } else {
            "ds, band"
        };
        old.push_str(&format!(
            "DROP INDEX {m}_sent_by_version;\nALTER TABLE {m}_sent DROP COLUMN seal_id;\n\
             CREATE UNIQUE INDEX {m}_sent_by_key ON {m}_sent ({key});\n"
        ));
        for c in ["seal_id", "after_seal_id", "cause", "settled_by"] {
            old.push_str(&format!("ALTER TABLE {m}_corrections DROP COLUMN {c};\n"));
        }
    }
    if is_postgres() {
        // PostgreSQL's views are compared with the SQL sqlrun remembers of them.
        old.push_str("DELETE FROM sqlrun_views;\n");
    }
    sb.exec(&old);
}

/// A database sealed and corrected before seal versions (schema 10, `_sent` one row
/// per key, corrections without seal columns) is brought up to date: its seals become
/// events, its rows their versions, and it goes on as any other.
#[test]
fn a_database_sealed_before_seal_versions_is_upgraded() {
    let (sb, mut orders) = sealed_week(408);
    sb.insert_orders(&[orders.add("late-1", "2026-02-03", 4_000)]);
    sb.ok(&["apply", "--interval", WEEK]);
    let sent = seals_values(&sb);
    downgrade_to_schema_10(&sb, &["daily_revenue"]);

    sb.ok(&["init"]);
    assert_eq!(
        sb.rows("SELECT seal_id, action, first_ds, last_ds, made_by, reason FROM seal_events"),
        vec![vec![
            "1".to_string(),
            "seal".into(),
            "2026-02-01".into(),
            "2026-02-07".into(),
            "alice".into(),
            "week 1".into()
        ]]
    );
    assert_eq!(
        sb.count("SELECT count(*) FROM seal_coverage WHERE seal_id = 1"),
        7
    );
    assert_eq!(sent_in(&sb, 1), sent);
    assert_eq!(
        sb.rows("SELECT seal_id, after_seal_id, cause, settled_by FROM daily_revenue_corrections"),
        vec![vec![
            "1".to_string(),
            "1".into(),
            "NULL".into(),
            "NULL".into()
        ]]
    );
    assert_eq!(sb.current(), orders.expected());
    sb.ok(&[
        "seal",
        "--reissue",
        "--interval",
        WEEK,
        "--reason",
        "restated",
    ]);
    assert_eq!(seals_values(&sb), week(&orders.expected()));
    assert_eq!(open_corrections(&sb), 0);
}

/// Before seal versions, a model added after a seal was corrected on the sealed dates:
/// its rows there lived only as corrections (keys the seal never saw). The upgrade keeps
/// them where they were (nothing a reader sees changes), and a reissue sends them. Old
/// seals are numbered in the order they were made, whatever their dates.
#[test]
fn an_upgrade_keeps_the_rows_of_a_model_added_after_a_seal() {
    let sb = Sandbox::new();
    let orders = Orders::new(409, "2026-05-01", 10, false);
    sb.insert_orders(&orders.rows);
    let tpl = copy_templates(&sb);
    let t = tpl.to_str().unwrap().to_string();
    let ok = |args: &[&str]| {
        let mut all = vec!["--templates", t.as_str()];
        all.extend_from_slice(args);
        sb.ok(&all)
    };
    let all_days = orders.interval();
    ok(&["apply", "--interval", &all_days]);
    // The later dates are sealed first, a second later the first week.
    ok(&[
        "seal",
        "--interval",
        "2026-05-08..2026-05-10",
        "--reason",
        "late days",
    ]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    ok(&[
        "seal",
        "--interval",
        "2026-05-01..2026-05-07",
        "--reason",
        "week",
    ]);
    std::fs::write(tpl.join("models/daily_amount_bands.sql"), BANDS).unwrap();
    ok(&["apply", "--interval", &all_days]);
    // As an older sqlrun left it: the new model's rows of the sealed dates as corrections.
    let no = if is_postgres() { "false" } else { "0" };
    sb.exec(&format!(
        "INSERT INTO daily_amount_bands_corrections \
           (ds, band, order_count, revenue, removed, run_id, corrected_at) \
         SELECT ds, band, order_count, revenue, {no}, run_id, '2026-05-20 00:00:00' \
         FROM daily_amount_bands WHERE ds IN (SELECT ds FROM seals); \
         DELETE FROM daily_amount_bands WHERE ds IN (SELECT ds FROM seals);"
    ));
    downgrade_to_schema_10(&sb, &["daily_revenue", "daily_amount_bands"]);

    ok(&["init"]);
    assert_eq!(
        sb.rows("SELECT seal_id, reason FROM seal_events ORDER BY seal_id"),
        vec![
            vec!["1".to_string(), "late days".into()],
            vec!["2".to_string(), "week".into()]
        ],
        "numbered in the order they were made"
    );
    assert_eq!(
        band_rows(&sb, "daily_amount_bands_current"),
        expected_bands(&orders),
        "nothing a reader sees changed"
    );
    ok(&[
        "seal",
        "--reissue",
        "--interval",
        &all_days,
        "--reason",
        "with bands",
    ]);
    assert_eq!(
        band_rows(&sb, "daily_amount_bands"),
        expected_bands(&orders)
    );
    assert_eq!(
        band_rows(&sb, "daily_amount_bands_current"),
        expected_bands(&orders)
    );
    let status = ok(&["--json", "status", "--interval", &all_days]).stdout;
    let doc: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(doc["ranges"]["sealed"], serde_json::json!([all_days]));
    assert_eq!(doc["seals"]["reissued"], serde_json::json!([all_days]));
}

/// An unseal makes a date ordinary for every model sealed there, a retired one too: when
/// that model comes back and the date is sealed again, its old seal and corrections do
/// not come back with it.
#[test]
fn an_unseal_covers_a_retired_model_too() {
    let sb = Sandbox::new();
    let mut orders = Orders::new(410, "2026-02-01", 4, false);
    orders.rows.retain(|r| r.amount >= 0);
    sb.insert_orders(&orders.rows);
    let tpl = copy_templates(&sb);
    let bands_file = tpl.join("models/daily_amount_bands.sql");
    std::fs::write(&bands_file, BANDS).unwrap();
    let t = tpl.to_str().unwrap().to_string();
    let ok = |args: &[&str]| {
        let mut all = vec!["--templates", t.as_str()];
        all.extend_from_slice(args);
        sb.ok(&all)
    };
    ok(&["apply", "--interval", &orders.interval()]);
    ok(&[
        "seal",
        "--interval",
        "2026-02-01..2026-02-02",
        "--reason",
        "s1",
    ]);
    sb.insert_orders(&[orders.add("late-refund", "2026-02-01", -5_000)]);
    ok(&["apply", "--interval", "2026-02-01"]);
    assert_eq!(
        sb.count("SELECT count(*) FROM daily_amount_bands_corrections WHERE band = 'refund'"),
        1
    );

    std::fs::remove_file(&bands_file).unwrap();
    ok(&["retire", "daily_amount_bands", "--reason", "gone"]);
    ok(&["unseal", "--interval", "2026-02-01", "--reason", "u"]);
    assert_eq!(
        sb.count("SELECT count(*) FROM sealed_models WHERE ds = '2026-02-01'"),
        0
    );
    ok(&["apply", "--interval", "2026-02-01"]);
    ok(&["seal", "--interval", "2026-02-01", "--reason", "s2"]);
    std::fs::write(&bands_file, BANDS).unwrap();
    ok(&["status", "--interval", "2026-02-01"]);
    assert_eq!(
        sb.rows("SELECT model FROM sealed_models WHERE ds = '2026-02-01'"),
        vec![vec!["daily_revenue".to_string()]],
        "the retired model is not sealed there by its old seal"
    );
    let current = band_rows(&sb, "daily_amount_bands_current");
    let table = band_rows(&sb, "daily_amount_bands");
    assert_eq!(current, table, "its old correction counts nowhere");
    let doc: serde_json::Value =
        serde_json::from_str(&ok(&["--json", "status", "--interval", "2026-02-01"]).stdout)
            .unwrap();
    assert_eq!(doc["ranges"]["corrected"], serde_json::json!([]));
}
