//! The output of every command, on one fixed story, byte for byte against committed files
//! (`tests/golden/<backend>/`). It guards a restructuring: moving code must not move a
//! character of what a user, a scheduler or a grader reads. Only what differs between two
//! runs of the same story is masked: times, durations, the temp folder, the PostgreSQL
//! schema and server, the host. After a deliberate change of output, rewrite the files with
//! `SQLRUN_BLESS=1 cargo test golden` and review the diff.

use std::path::{Path, PathBuf};

use crate::support::*;
use crate::templates::copy_templates;

pub const BANDS: &str = "\
-- name: daily_amount_bands
-- version: 1
-- key: ds, band
-- values: order_count, revenue
-- create: CREATE TABLE daily_amount_bands (ds DATE NOT NULL, band TEXT NOT NULL,
--     order_count BIGINT NOT NULL, revenue BIGINT NOT NULL, run_id BIGINT NOT NULL,
--     PRIMARY KEY (ds, band))
SELECT {{ ds }} AS ds,
       CASE WHEN o.amount < 1500 THEN 'small' ELSE 'large' END AS band,
       count(*) AS order_count,
       sum(o.amount) AS revenue
FROM orders_latest AS o
WHERE o.order_date = {{ ds }}
GROUP BY CASE WHEN o.amount < 1500 THEN 'small' ELSE 'large' END
";

pub const TINY: &str = "\
-- name: order_signs
-- version: 1
-- key: ds
-- values: positive
-- create: CREATE TABLE order_signs (ds DATE NOT NULL, positive BIGINT NOT NULL,
--     run_id BIGINT NOT NULL, PRIMARY KEY (ds))
SELECT {{ ds }} AS ds, count(*) AS positive
FROM orders_latest AS o
WHERE o.order_date = {{ ds }} AND o.amount > 0
";

pub fn order(id: &str, date: &str, amount: i64) -> OrderRow {
    OrderRow {
        order_id: id.into(),
        order_date: date.into(),
        amount,
        created_at: "2026-01-01 00:00:00".into(),
    }
}

/// One order on each of `days` dates from `start`, amounts rising from 1,000 by 100.
pub fn orders(prefix: &str, start: &str, days: i64) -> Vec<OrderRow> {
    (0..days)
        .map(|i| order(&format!("{prefix}{i}"), &day(start, i), 1000 + 100 * i))
        .collect()
}

/// A story with every state a date can be in: computed, missing (a gap), failed, sealed,
/// corrected, changed (late data not applied), held (a reservation), stale for one model
/// only (a new version of it applied to part of the span), a retired model, a release.
fn story(sb: &Sandbox, tpl: &Path) -> PathBuf {
    let t = tpl.to_str().unwrap();
    sb.insert_orders(&orders("o", "2026-01-01", 24));
    sb.ok(&[
        "--templates",
        t,
        "apply",
        "--interval",
        "2026-01-01..2026-01-08",
    ]);
    sb.fail_inserts("daily_revenue", "2026-01-12", When::Before);
    sb.expect(
        1,
        &[
            "--templates",
            t,
            "apply",
            "--interval",
            "2026-01-11..2026-01-14",
            "--keep-going",
        ],
    );
    sb.stop_failing("daily_revenue");
    sb.ok(&[
        "--templates",
        t,
        "seal",
        "--interval",
        "2026-01-03..2026-01-05",
        "--reason",
        "weekly report",
    ]);
    sb.insert_orders(&[order("late-a", "2026-01-04", 700)]);
    sb.ok(&[
        "--templates",
        t,
        "apply",
        "--interval",
        "2026-01-03..2026-01-05",
        "--kind",
        "backfill",
        "--reason",
        "late orders",
    ]);
    sb.insert_orders(&[order("late-b", "2026-01-07", 2500)]);
    // order_signs goes away and is retired; bands get a version 2 applied to part of the span.
    std::fs::remove_file(tpl.join("models/order_signs.sql")).unwrap();
    sb.ok(&[
        "--templates",
        t,
        "retire",
        "order_signs",
        "--reason",
        "nobody reads it",
        "--by",
        "dba",
    ]);
    let bands = tpl.join("models/daily_amount_bands.sql");
    let v2 = BANDS
        .replace("version: 1", "version: 2")
        .replace("< 1500", "< 1600");
    std::fs::write(&bands, v2).unwrap();
    sb.ok(&[
        "--templates",
        t,
        "apply",
        "--interval",
        "2026-01-01..2026-01-02",
        "--select",
        "daily_amount_bands",
    ]);
    let held = sb.ok(&[
        "--templates",
        t,
        "reserve",
        "--interval",
        "2026-01-16..2026-01-17",
        "--by",
        "planner",
    ]);
    let freed = sb.ok(&[
        "--templates",
        t,
        "reserve",
        "--interval",
        "2026-01-19",
        "--by",
        "someone",
    ]);
    sb.ok(&[
        "--templates",
        t,
        "release",
        freed.stdout.trim(),
        "--by",
        "someone",
    ]);
    assert_eq!(held.stdout.trim(), "5", "the story's run ids are fixed");
    tpl.to_path_buf()
}

/// The commands whose output is compared: (file name, arguments after `--templates`).
const COMMANDS: &[(&str, &[&str])] = &[
    (
        "status",
        &["status", "--interval", "2026-01-01..2026-01-24"],
    ),
    ("status-span", &["status"]),
    (
        "status-list",
        &["status", "--interval", "2026-01-01..2026-01-24", "--list"],
    ),
    (
        "status-json",
        &["--json", "status", "--interval", "2026-01-01..2026-01-24"],
    ),
    (
        "status-select",
        &[
            "status",
            "--interval",
            "2026-01-01..2026-01-10",
            "--select",
            "daily_amount_bands",
            "--list",
        ],
    ),
    ("runs", &["runs"]),
    ("runs-json", &["--json", "runs"]),
    ("runs-2", &["runs", "2"]),
    ("runs-2-dates", &["runs", "2", "--dates"]),
    ("runs-4-json", &["--json", "runs", "4", "--dates"]),
    ("corrections", &["corrections"]),
    (
        "corrections-json",
        &[
            "--json",
            "corrections",
            "--interval",
            "2026-01-01..2026-01-10",
        ],
    ),
    ("render", &["render", "--date", "2026-01-04"]),
    (
        "render-model",
        &[
            "render",
            "--date",
            "2026-01-04",
            "--model",
            "daily_amount_bands",
        ],
    ),
    ("templates", &["templates"]),
    ("templates-json", &["--json", "templates"]),
    (
        "templates-show",
        &["templates", "--show", "models/daily_amount_bands"],
    ),
    (
        "dry-run",
        &["apply", "--dry-run", "--interval", "2026-01-01..2026-01-24"],
    ),
    (
        "dry-run-json",
        &[
            "--json",
            "apply",
            "--dry-run",
            "--interval",
            "2026-01-01..2026-01-24",
        ],
    ),
    (
        "dry-run-only",
        &[
            "apply",
            "--dry-run",
            "--interval",
            "2026-01-01..2026-01-24",
            "--only",
            "stale",
        ],
    ),
    (
        "dry-run-select",
        &[
            "--json",
            "apply",
            "--dry-run",
            "--interval",
            "2026-01-01..2026-01-10",
            "--select",
            "daily_amount_bands",
            "--only",
            "missing,stale",
        ],
    ),
    (
        "preview",
        &["apply", "--diff", "--interval", "2026-01-01..2026-01-24"],
    ),
    (
        "preview-json",
        &[
            "--json",
            "apply",
            "--diff",
            "--interval",
            "2026-01-06..2026-01-09",
        ],
    ),
    ("diff-4", &["diff", "4"]),
    (
        "diff-1-json",
        &[
            "--json",
            "diff",
            "1",
            "--interval",
            "2026-01-01..2026-01-02",
        ],
    ),
    ("diff-3", &["diff", "3"]),
    (
        "apply-held",
        &["apply", "--interval", "2026-01-15..2026-01-17"],
    ),
    (
        "apply-json",
        &["--json", "apply", "--interval", "2026-01-07..2026-01-09"],
    ),
    (
        "seal-json",
        &[
            "--json",
            "seal",
            "--interval",
            "2026-01-06..2026-01-07",
            "--reason",
            "month end",
        ],
    ),
    (
        "seal",
        &[
            "seal",
            "--interval",
            "2026-01-07..2026-01-08",
            "--reason",
            "again",
        ],
    ),
    (
        "corrections-after",
        &["corrections", "--interval", "2026-01-01..2026-01-24"],
    ),
    (
        "seal-dry-run",
        &[
            "seal",
            "--dry-run",
            "--reissue",
            "--interval",
            "2026-01-03..2026-01-05",
            "--reason",
            "restated",
        ],
    ),
    (
        "seal-reissue",
        &[
            "seal",
            "--reissue",
            "--interval",
            "2026-01-03..2026-01-05",
            "--reason",
            "restated",
        ],
    ),
    (
        "unseal-refused",
        &[
            "unseal",
            "--interval",
            "2026-01-08..2026-01-09",
            "--reason",
            "wrong week",
        ],
    ),
    (
        "unseal-json",
        &[
            "--json",
            "unseal",
            "--interval",
            "2026-01-08",
            "--reason",
            "wrong week",
        ],
    ),
    ("seals", &["seals"]),
    ("seals-json", &["--json", "seals"]),
    ("seals-1", &["seals", "1"]),
    ("corrections-since", &["corrections", "--since", "2"]),
    (
        "corrections-csv",
        &["corrections", "--format", "csv", "--since", "1"],
    ),
    ("runs-after", &["runs", "--limit", "3"]),
    (
        "status-after",
        &[
            "--json",
            "status",
            "--interval",
            "2026-01-01..2026-01-24",
            "--list",
        ],
    ),
];

#[test]
fn every_command_prints_what_it_printed_before() {
    let sb = Sandbox::new();
    let tpl = copy_templates(&sb);
    std::fs::write(tpl.join("models/daily_amount_bands.sql"), BANDS).unwrap();
    std::fs::write(tpl.join("models/order_signs.sql"), TINY).unwrap();
    let tpl = story(&sb, &tpl);
    let t = tpl.to_str().unwrap();
    let dir = golden_dir();
    let bless = std::env::var_os("SQLRUN_BLESS").is_some();
    let mut differ = Vec::new();
    for (name, args) in COMMANDS {
        let mut all = vec!["--templates", t];
        all.extend_from_slice(args);
        let run = sb.run(&all);
        let got = format!(
            "$ sqlrun {}\nexit {}\n--- stdout\n{}--- stderr\n{}",
            args.join(" "),
            run.code,
            run.stdout,
            run.stderr
        );
        let got = mask(&got, &sb);
        let file = dir.join(format!("{name}.out"));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&file, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{}: {e} (write it with SQLRUN_BLESS=1)", file.display()));
        if want != got {
            differ.push(format!(
                "{}:\n{}",
                file.display(),
                first_difference(&want, &got)
            ));
        }
    }
    assert!(differ.is_empty(), "output changed:\n{}", differ.join("\n"));
}

fn golden_dir() -> PathBuf {
    let backend = if is_sqlite() { "sqlite" } else { "postgres" };
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(backend)
}

/// The first line that differs, with its neighbours, as `-want` / `+got`.
fn first_difference(want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    let at = (0..w.len().max(g.len()))
        .find(|&i| w.get(i) != g.get(i))
        .unwrap_or(0);
    let (wl, gl) = (
        w.get(at).copied().unwrap_or(""),
        g.get(at).copied().unwrap_or(""),
    );
    let col = wl
        .chars()
        .zip(gl.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let window = |l: &str| -> String { l.chars().skip(col.saturating_sub(60)).take(160).collect() };
    format!(
        "line {}, column {}:\n-{}\n+{}\n",
        at + 1,
        col + 1,
        window(wl),
        window(gl)
    )
}

/// Masks what differs between two runs of the same story and nothing else.
fn mask(text: &str, sb: &Sandbox) -> String {
    let mut text = text
        .replace(BIN, "<sqlrun>")
        .replace(sb.path().to_str().unwrap(), "<dir>");
    if let Some(schema) = &sb.schema {
        let (url, _) = sb.url();
        text = text
            .replace(&url, "<url>")
            .replace(schema.as_str(), "<schema>");
    }
    if let Ok(host) = std::fs::read_to_string("/etc/hostname") {
        let host = host.trim();
        if !host.is_empty() {
            text = text.replace(host, "<host>");
        }
    }
    let time = regex::Regex::new(
        r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d(:?\d\d)?| UTC)?",
    )
    .unwrap();
    let text = time.replace_all(&text, "<time>");
    let duration =
        regex::Regex::new(r"(\x22(duration|seconds|elapsed|millis)[a-z_]*\x22: ?)[0-9.]+").unwrap();
    let text = duration.replace_all(&text, "${1}<n>");
    let took = regex::Regex::new(r"\b\d+(\.\d+)? ?(ms|s)\b").unwrap();
    let text = took.replace_all(&text, "<dur>");
    let pid = regex::Regex::new(r"(pid|process) \d+").unwrap();
    let text = pid.replace_all(&text, "$1 <pid>");
    let pid_json = regex::Regex::new(r#""pid":\d+,"pid_started":"[^"]*""#).unwrap();
    pid_json
        .replace_all(&text, r#""pid":0,"pid_started":"<pid>""#)
        .into_owned()
}
