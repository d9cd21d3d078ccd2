#!/bin/sh
# `sqlrun report --html` over ten years and two models: 3,650 days of seeded orders,
# daily_revenue and daily_amount_bands (tests/cli/models.rs BANDS) computed, then the page
# made 5 times; prints each wall time, the median and the page's size. BENCHMARKS.md has
# the figures. Usage: bench/report.sh [SQLRUN_BIN]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../target/release/sqlrun}
work=$here/work/report
rm -rf "$work" && mkdir -p "$work/tpl/models" "$work/tpl/views"
cp "$here"/../templates/models/*.sql "$work/tpl/models/"
cp "$here"/../templates/views/*.sql "$work/tpl/views/"
# The second model, as the tests define it.
sed -n '/^pub(crate) const BANDS: &str = "\\$/,/^";$/p' "$here/../tests/cli/models.rs" \
    | sed '1d;$d' > "$work/tpl/models/daily_amount_bands.sql"
cd "$work"
"$bin" --db ten.db generate --start 2016-01-01 --days 3650 --per-day 100 --seed 7 >/dev/null
"$bin" --db ten.db --templates tpl apply --interval 2016-01-01..2025-12-28 >/dev/null 2>&1
python3 - "$bin" <<'PY'
import statistics, subprocess, sys, time, os
times = []
for i in range(5):
    t = time.perf_counter()
    subprocess.run([sys.argv[1], "--db", "ten.db", "--templates", "tpl", "report", "--html",
                    "ten.html"], check=True, stdout=subprocess.DEVNULL)
    times.append(time.perf_counter() - t)
print("runs (s):", " ".join(f"{x:.3f}" for x in times))
print(f"median: {statistics.median(times) * 1000:.0f} ms")
print(f"size: {os.path.getsize('ten.html'):,} bytes")
PY
