//! Which console blocks of README.md run together, and what their folder holds first
//! (what the README says happened before the block, done here without being shown).

use super::Setup::{File, Sql, Sqlrun, SqlrunExit};
use super::{Scene, Setup};

pub const SCENES: &[Scene] = &[
    Scene {
        name: "demo",
        blocks: &["Set up and try it"],
        setup: &[],
    },
    // The quick tour, in a new folder; the plan in ranges goes on from where it ends.
    Scene {
        name: "tour",
        blocks: &["A quick tour", "Plans and runs in ranges#1"],
        setup: &[],
    },
    Scene {
        name: "status",
        blocks: &["The state at a glance: `sqlrun status`"],
        setup: STATUS,
    },
    Scene {
        name: "new",
        blocks: &["Projects: `sqlrun.toml`#1"],
        setup: &[],
    },
    Scene {
        name: "project",
        blocks: &["Projects: `sqlrun.toml`#2"],
        setup: &[Sqlrun(&["new", "."])],
    },
    Scene {
        name: "report",
        blocks: &["The life of a report: seal, correct, reissue, unseal"],
        setup: &[
            Sqlrun(&["new", "."]),
            Sqlrun(&["generate", "--start", "2026-02-01", "--days", "14", "--per-day", "50", "--seed", "7"]),
            Sqlrun(&["apply", "--interval", "2026-02-01..2026-02-14"]),
            File("voucher.csv", "order_id,order_date,amount\nlate-voucher,2026-02-03,350000\n"),
        ],
    },
    Scene {
        name: "load",
        blocks: &["Loading rows: `sqlrun load`"],
        setup: &[
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
        ],
    },
    Scene {
        name: "late",
        blocks: &["Late data: changed dates and `--lookback`"],
        setup: &[
            Sqlrun(&["generate", "--start", "2026-02-01", "--days", "20"]),
            Sqlrun(&["apply", "--interval", "2026-02-01..2026-02-20"]),
        ],
    },
];

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
