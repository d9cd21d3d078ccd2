#!/usr/bin/env bash
# sqlrun benchmark: one command, from a clean clone.
#
#   bench/run.sh                 # everything, SQLite then PostgreSQL (about 20 minutes on 2 cores)
#   bench/run.sh sqlite          # the SQLite sections: a b c d e f g k s h v profile plans lk
#   bench/run.sh pg              # the PostgreSQL sections: pg-e pg-a pg-s pg-k pg-h pg-v pg-jobs pg-b pg-c pg-d pg-x pg-l pg-lk
#                                #   pg-plans pg-profile (a throwaway cluster in bench/work/pg)
#   bench/run.sh a pg-a          # only some sections
#   bench/run.sh lk pg-lk        # lookups (issue 35): bench/lookups.py
#
# Environment:
#   SQLRUN_BIN=path     use this binary instead of building target/release/sqlrun
#   BENCH_RUNS=7        timed runs per command (at least 5)
#   BENCH_RSS_LONG=2    how often the 3,650-day backfill runs under /usr/bin/time -v
#   BENCH_SEED=7        seed for `sqlrun generate`
#
# The PostgreSQL sections need PostgreSQL's server programs (initdb, postgres, psql, on PATH
# or in /usr/lib/postgresql/*/bin); as root the server runs as the postgres user.
# Databases are generated into bench/work/ (gitignored) and reused while the binary and
# the parameters are unchanged. Results are printed and also written to
# bench/work/results.json.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=0
if [ ! -x /usr/bin/sqlite3 ]; then
    echo "bench: /usr/bin/sqlite3 is missing (the baseline); install it: apt-get install sqlite3" >&2
    missing=1
fi
if [ ! -x /usr/bin/time ]; then
    echo "bench: /usr/bin/time is missing (peak RSS via time -v); install it: apt-get install time" >&2
    missing=1
fi
if ! command -v python3 >/dev/null; then
    echo "bench: python3 is missing (the harness); install it: apt-get install python3" >&2
    missing=1
fi
case " ${*:-pg} " in
    *" pg"*)
        if ! command -v initdb >/dev/null 2>&1 \
            && ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
            echo "bench: PostgreSQL is missing (the pg sections start a cluster of their own); install it: apt-get install postgresql" >&2
            missing=1
        fi
        ;;
esac
[ "$missing" = 0 ] || exit 2

if [ -n "${SQLRUN_BIN:-}" ]; then
    bin="$SQLRUN_BIN"
else
    echo "bench: cargo build --release" >&2
    cargo build --release --quiet
    bin="target/release/sqlrun"
fi

exec python3 bench/bench.py --bin "$bin" "$@"
