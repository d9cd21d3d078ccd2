"""The cascade (issue 34): what a cascaded backfill costs against the same partitions
applied by explicit intervals, on SQLite. `python3 bench/cascade.py --bin target/release/sqlrun`
(BENCH_RUNS=5 for fewer runs). The plan itself is timed in process by
`cargo run --release --example plan_cascade`.

The pipeline: `sqlrun new`'s daily_revenue, a weekly and a monthly roll-up and a 7-day
rolling total (docs/src/authoring/grains.md's models), over a year of orders (365 days x
1,000, seed 7), every partition built. The change: three days, 2025-06-10..2025-06-12.

- cascaded: `apply --interval 2025-06-10..2025-06-12`, which rebuilds the three days, the
  nine rolling dates that read them, their week and their month;
- explicit: the same partitions, each model by an interval of its own with
  `--no-downstream` (four runs: the days with their rolling dates, the six later rolling
  dates, the week, the month).

Both start from a fresh copy of the built database (copied untimed). Target: cascaded at
most 1.1x explicit.

Then what judging the partitions costs `status` (no target): the year of the four models,
where each date's weeks, months and rolling days are judged `upstream` or not
(common.sql's upstream) and the weeks and months get their rows, against
`status --select daily_revenue` on the same database (one model that reads no other).
"""

import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import compare, ratio, say  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "bench", "work", "cascade")
AS_OF = "2026-01-01"

ROLL_UP = """-- name: {name}
-- version: 1
-- grain: {grain}
-- key: ds
-- values: revenue
-- depends_on: daily_revenue
-- create: CREATE TABLE {name} (ds DATE NOT NULL, revenue BIGINT NOT NULL,
--     run_id BIGINT NOT NULL, PRIMARY KEY (ds))
SELECT {{{{ period_start }}}} AS ds, coalesce(sum(revenue), 0) AS revenue
FROM daily_revenue_current
WHERE ds >= {{{{ period_start }}}} AND ds < {{{{ period_end }}}}
"""

ROLLING = """-- name: revenue_7d
-- version: 1
-- key: ds
-- values: revenue
-- depends_on: daily_revenue window -6..0
-- create: CREATE TABLE revenue_7d (ds DATE NOT NULL, revenue BIGINT NOT NULL,
--     run_id BIGINT NOT NULL, PRIMARY KEY (ds))
SELECT {{ ds }} AS ds, coalesce(sum(revenue), 0) AS revenue
FROM daily_revenue_current
WHERE ds >= {{ window_start }} AND ds < {{ window_end }}
"""


def sh(bin_, folder, *args):
    subprocess.run([bin_, *args], cwd=folder, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def built(bin_):
    """The project, built once (cached in bench/work/cascade while the binary is the same)."""
    base = os.path.join(WORK, "base")
    stamp = os.path.join(WORK, "stamp")
    mark = f"{os.path.getmtime(bin_)}"
    if os.path.exists(stamp) and open(stamp).read() == mark:
        return base
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    subprocess.run([bin_, "new", base], check=True, stdout=subprocess.DEVNULL)
    models = os.path.join(base, "models")
    for name, grain in (("weekly_revenue", "week"), ("monthly_revenue", "month")):
        with open(os.path.join(models, f"{name}.sql"), "w") as f:
            f.write(ROLL_UP.format(name=name, grain=grain))
    with open(os.path.join(models, "revenue_7d.sql"), "w") as f:
        f.write(ROLLING)
    sh(bin_, base, "init")
    sh(bin_, base, "generate", "--start", "2025-01-01", "--days", "365", "--per-day", "1000",
       "--seed", "7")
    say("cascade: building a year of four models (once)")
    sh(bin_, base, "apply", "--interval", "2025-01-01..2025-12-31", "--as-of", AS_OF)
    with open(stamp, "w") as f:
        f.write(mark)
    return base


def fresh(base, name):
    folder = os.path.join(WORK, name)
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(base, folder)
    return folder


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "sqlrun"))
    bin_ = os.path.abspath(p.parse_args().bin)
    base = built(bin_)

    def cascaded():
        folder = fresh(base, "cascaded")
        argv = ["sh", "-c", f"cd {folder} && {bin_} apply --interval 2025-06-10..2025-06-12 "
                f"--as-of {AS_OF}"]
        return argv, None, None

    def explicit():
        folder = fresh(base, "explicit")
        runs = [
            "--interval 2025-06-10..2025-06-12",
            "--interval 2025-06-13..2025-06-18 --select revenue_7d",
            "--interval 2025-W24 --select weekly_revenue",
            "--interval 2025-06 --select monthly_revenue",
        ]
        steps = " && ".join(f"{bin_} apply {r} --no-downstream --as-of {AS_OF}" for r in runs)
        return ["sh", "-c", f"cd {folder} && {steps}"], None, None

    compare("cascade", "a 3-day fix: cascaded against the same partitions by explicit intervals",
            [("cascaded (one run)", cascaded), ("explicit (four runs)", explicit)])
    ratio("cascade", "cascaded (one run)", "explicit (four runs)", target=1.1)

    def status(*select):
        def prepare():
            argv = [bin_, "status", "--interval", "2025-01-01..2025-12-31", *select]
            return ["sh", "-c", f"cd {base} && " + " ".join(argv)], None, None
        return prepare

    compare("cascade-status", "status of a year: four models, upstream judged, against "
            "daily_revenue alone",
            [("four models", status()), ("daily_revenue alone",
                                         status("--select", "daily_revenue"))])
    ratio("cascade-status", "four models", "daily_revenue alone")


if __name__ == "__main__":
    main()
