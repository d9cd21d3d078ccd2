#!/usr/bin/env bash
# Checks examples/airflow/sqlrun_daily.py with a real Airflow 3, each expectation asserted
# on sqlrun's database rows (and Airflow's task states):
#   a) a late order on a computed date is healed by the next scheduled run (the project
#      has `[apply] lookback = 7`);
#   b) a date skipped (exit 99: task skipped) because a backfill held it is built by the
#      next scheduled run once the reservation is released;
#   c) exit 2 (a broken model) fails the task once, not retried, though retries are set;
#   d) `airflow backfill create` records a backfill of each day, and the scheduler's own
#      run is the regular run (on `airflow standalone`, sqlite metadata database);
#   e) a PostgreSQL database unreachable at start (nothing listens at its port: exit 1, kind
#      `unreachable`) is retried: tries 1 and 2 up_for_retry, the task failed at its third,
#      each try's log saying `sqlrun exit 1` and why, and nothing written to the project's
#      database.
#   f) a partial run (exit 99 with dates built: a held date skipped, the others computed)
#      succeeds, the skip in its XCom and said at WARNING;
#   g) a try timed out (`execution_timeout` 3 s via $SQLRUN_EXECUTION_TIMEOUT_SECONDS) in a
#      slow date stops sqlrun: the date rolls back within the bound ($SQLRUN_STOP_WITHIN),
#      each try's run `interrupted`, exit 143, the rows as before, nothing held;
#   a, b again on `airflow standalone` (after d): manual DAG runs at logical dates
#      (`airflow dags trigger`) that its scheduler and executor run;
#   h) then, on that scheduler too: a late order older than the look-back window is left
#      by the run, and the task log says at WARNING how many dates need work there and
#      the command that reaches them;
#   z) the DAG's schedule is the project's time zone (`timezone` in sqlrun.toml), and the
#      day passed to sqlrun is the logical date's day there.
# a) to c), e) to g) run with `airflow dags test` (a manual run at a logical date: the regular
# run); e) runs right after c), before d) starts `airflow standalone` and its scheduler, with
# $SQLRUN_DB and a 1-second retry delay ($SQLRUN_RETRY_DELAY_SECONDS, read by the DAG) set
# for that one run: `dags test` waits out the delay between tries (5 minutes by default).
#
# Usage: examples/airflow/check.sh SQLRUN_BINARY AIRFLOW_PYTHON
#    or: SQLRUN=... AIRFLOW_PYTHON=... examples/airflow/check.sh
# AIRFLOW_PYTHON is the python of an environment with apache-airflow 3 installed (its
# `airflow` command beside it). Everything happens in a new temporary folder, removed at
# the end (KEEP=1 keeps it). Exit 0 when every expectation held; 1 at the first that did
# not. Not part of `cargo test`: it needs Airflow, and takes a few minutes.
set -euo pipefail

sqlrun=${1:-${SQLRUN:-}}
python=${2:-${AIRFLOW_PYTHON:-}}
if [[ -z $sqlrun || -z $python ]]; then
    echo "usage: $0 SQLRUN_BINARY AIRFLOW_PYTHON (or SQLRUN=... AIRFLOW_PYTHON=...)" >&2
    exit 2
fi
sqlrun=$(realpath "$sqlrun")
python=$(realpath -s "$python")
venv_bin=$(dirname "$python")
[[ -x $sqlrun ]] || { echo "$sqlrun is not an executable" >&2; exit 2; }
[[ -x $venv_bin/airflow ]] || { echo "no airflow command beside $python" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlrun-airflow-check.XXXXXX")
standalone_pid=
cleanup() {
    if [[ -n $standalone_pid ]]; then
        # `airflow standalone` and its children, one process group (setsid).
        kill -TERM -- "-$standalone_pid" 2>/dev/null || true
        for _ in $(seq 1 20); do
            kill -0 -- "-$standalone_pid" 2>/dev/null || break
            sleep 1
        done
        kill -KILL -- "-$standalone_pid" 2>/dev/null || true
    fi
    if [[ ${KEEP:-} == 1 ]]; then
        echo "kept $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT

export PATH="$venv_bin:$PATH"
export AIRFLOW_HOME=$work/airflow
export AIRFLOW__CORE__DAGS_FOLDER=$work/dags
export AIRFLOW__CORE__LOAD_EXAMPLES=False
export SQLRUN_BIN=$sqlrun
export SQLRUN_PROJECT=$work/shop
unset SQLRUN_DB SQLRUN_SCHEMA SQLRUN_TEMPLATES SQLRUN_TIMEZONE
started=$(date +%s)

say() { printf '\n== %s\n' "$*"; }
fail() {
    echo "FAILED: $*" >&2
    echo "(logs in $work; rerun with KEEP=1 to keep them)" >&2
    KEEP=1
    exit 1
}

# Rows of a SQLite query, `|`-separated, one line each.
rows() {
    "$python" - "$1" "$2" <<'EOF'
import sqlite3, sys
with sqlite3.connect(sys.argv[1]) as c:
    for r in c.execute(sys.argv[2]):
        print("|".join("" if v is None else str(v) for v in r))
EOF
}
sq() { rows "$SQLRUN_PROJECT/sqlrun.db" "$1"; }
af() { rows "$AIRFLOW_HOME/airflow.db" "$1"; }
expect() { # what, got, want
    if [[ $2 != "$3" ]]; then
        fail "$1: got [$2], want [$3]"
    fi
    echo "ok: $1"
}
last_run() { sq "SELECT max(run_id) FROM runs"; }
run_row() { sq "SELECT kind, status, lookback, interval_start, interval_end, scheduler FROM runs WHERE run_id = $1"; }
partitions() { sq "SELECT ds, status FROM run_partitions WHERE run_id = $1 ORDER BY ds" | tr '\n' ' '; }
# The state and try of the task of the DAG run at a logical date.
task_state() {
    af "SELECT ti.state, ti.try_number, ti.max_tries FROM task_instance AS ti
        JOIN dag_run AS r ON r.dag_id = ti.dag_id AND r.run_id = ti.run_id
        WHERE ti.dag_id = 'sqlrun_daily' AND r.logical_date LIKE '$1%'"
}
dags_test() { # logical date; the log is kept in the work folder
    airflow dags test sqlrun_daily "$1" >"$work/dags-test-$1.log" 2>&1 || true
}

say "setup: Airflow $(airflow version 2>/dev/null | tail -1), sqlrun $("$sqlrun" --version), in $work"
mkdir -p "$AIRFLOW__CORE__DAGS_FOLDER"
cp "$here/sqlrun_daily.py" "$AIRFLOW__CORE__DAGS_FOLDER/"
"$sqlrun" new "$SQLRUN_PROJECT" >/dev/null
sed -i 's/^# *lookback = .*$/lookback = 7/; s/^lookback = .*$/lookback = 7/' "$SQLRUN_PROJECT/sqlrun.toml"
grep -q '^lookback = 7$' "$SQLRUN_PROJECT/sqlrun.toml" || fail "sqlrun new's sqlrun.toml has no lookback line to set"
(
    cd "$SQLRUN_PROJECT"
    "$sqlrun" init >/dev/null
    "$sqlrun" generate --start 2026-02-01 --days 20 --seed 1 >/dev/null
    # A person's backfill: 2026-02-01..2026-02-10 computed.
    "$sqlrun" apply --interval 2026-02-01..2026-02-10 >/dev/null 2>&1
)
airflow db migrate >"$work/db-migrate.log" 2>&1 || fail "airflow db migrate (see $work/db-migrate.log)"

say "a) a late order on a computed date is healed by the next scheduled run"
before=$(sq "SELECT revenue FROM daily_revenue WHERE ds = '2026-02-05'")
sq "INSERT INTO orders(order_id, order_date, amount, created_at)
    VALUES ('late-1', '2026-02-05', 123456, '2026-02-11 09:00:00')"
dags_test 2026-02-12
expect "task of 2026-02-12" "$(task_state 2026-02-12)" "success|1|2"
run=$(last_run)
expect "run $run is the regular run as of 2026-02-12, with the project's lookback" \
    "$(run_row "$run")" "regular|success|7|2026-02-04|2026-02-11|airflow"
expect "run $run computed the changed date and yesterday" \
    "$(partitions "$run")" "2026-02-05|success 2026-02-11|success "
expect "2026-02-05 has the late order" \
    "$(sq "SELECT revenue - $before, run_id FROM daily_revenue WHERE ds = '2026-02-05'")" "123456|$run"

say "b) a date skipped because a backfill held it is built once the backfill is released"
holder=$(cd "$SQLRUN_PROJECT" && "$sqlrun" reserve --interval 2026-02-12 --by bob --reason "planned backfill")
dags_test 2026-02-13
expect "task of 2026-02-13 (exit 99)" "$(task_state 2026-02-13)" "skipped|1|2"
run=$(last_run)
expect "run $run skipped the held date" "$(partitions "$run")" "2026-02-12|skipped "
expect "run $run" "$(run_row "$run")" "regular|partial|7|2026-02-05|2026-02-12|airflow"
(cd "$SQLRUN_PROJECT" && "$sqlrun" release "$holder" >/dev/null 2>&1)
dags_test 2026-02-14
expect "task of 2026-02-14" "$(task_state 2026-02-14)" "success|1|2"
run=$(last_run)
expect "run $run built the released date and yesterday" \
    "$(partitions "$run")" "2026-02-12|success 2026-02-13|success "

say "c) exit 2 (a broken model) is not retried"
model=$SQLRUN_PROJECT/models/daily_revenue.sql
cp "$model" "$work/daily_revenue.sql"
echo '{{ broken(' >>"$model"
runs_before=$(sq "SELECT count(*) FROM runs")
dags_test 2026-02-15
expect "task of 2026-02-15: failed at its first try, with 2 retries set" \
    "$(task_state 2026-02-15)" "failed|1|2"
grep -q "sqlrun exit 2" "$work/dags-test-2026-02-15.log" || fail "the task log does not say 'sqlrun exit 2'"
expect "nothing written by the refused run" "$(sq "SELECT count(*) FROM runs")" "$runs_before"
cp "$work/daily_revenue.sql" "$model"

say "e) a database unreachable at start (exit 1) is retried"
# A PostgreSQL URL at a port nobody listens on, for this one DAG run ($SQLRUN_DB overrides
# the project's db), and a 1-second retry delay: `airflow dags test` waits out the delay
# between tries (the DAG's default is 5 minutes).
pg_port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
runs_before=$(sq "SELECT count(*) FROM runs")
(
    export SQLRUN_DB=postgresql://postgres@127.0.0.1:$pg_port/shop SQLRUN_RETRY_DELAY_SECONDS=1
    dags_test 2026-02-18
)
log=$work/dags-test-2026-02-18.log
expect "task of 2026-02-18: failed after its 2 retries, not at its first try" \
    "$(task_state 2026-02-18)" "failed|3|2"
expect "the states the task's tries were given" \
    "$(grep -o 'Task instance state updated .*new_state=[a-z_]*' "$log" | sed 's/.*new_state=//' | tr '\n' ' ')" \
    "up_for_retry up_for_retry failed "
# Airflow archives a try that ended up_for_retry as failed in task_instance_history.
expect "tries 1 and 2 archived, each a try of its own" \
    "$(af "SELECT h.try_number, h.state FROM task_instance_history AS h
           JOIN dag_run AS r ON r.dag_id = h.dag_id AND r.run_id = h.run_id
           WHERE h.dag_id = 'sqlrun_daily' AND r.logical_date LIKE '2026-02-18%'
           ORDER BY h.try_number" | tr '\n' ' ')" "1|failed 2|failed "
expect "tries whose log says 'sqlrun exit 1: cannot reach database' at port $pg_port" \
    "$(grep -c "sqlrun exit 1: cannot reach database postgresql://postgres@127.0.0.1:$pg_port/shop" "$log")" "3"
expect "tries whose log has sqlrun's JSON with kind unreachable" \
    "$(grep -c '"error":{"exit_code":1,"kind":"unreachable"' "$log")" "3"
grep -q 'nothing was written' "$log" || fail "the task log does not say 'nothing was written'"
expect "nothing written to the project's database" "$(sq "SELECT count(*) FROM runs")" "$runs_before"

say "f) a partial run (exit 99, dates built) succeeds, its skips in the XCom and a WARNING"
holder=$(cd "$SQLRUN_PROJECT" && "$sqlrun" reserve --interval 2026-02-19 --by carol --reason "planned backfill")
dags_test 2026-02-20
log=$work/dags-test-2026-02-20.log
expect "task of 2026-02-20 (exit 99, dates built)" "$(task_state 2026-02-20)" "success|1|2"
run=$(last_run)
expect "run $run" "$(run_row "$run")" "regular|partial|7|2026-02-12|2026-02-19|airflow"
expect "run $run built the missing dates and skipped the held one" "$(partitions "$run")" \
    "2026-02-14|success 2026-02-15|success 2026-02-16|success 2026-02-17|success 2026-02-18|success 2026-02-19|skipped "
xcom_skips() { # the XCom of the DAG run at a logical date: its run id and skipped dates
    af "SELECT x.value FROM xcom AS x JOIN dag_run AS r ON r.dag_id = x.dag_id AND r.run_id = x.run_id
        WHERE x.dag_id = 'sqlrun_daily' AND x.key = 'return_value' AND r.logical_date LIKE '$1%'" |
        "$python" -c '
import json, sys
v = json.loads(sys.stdin.read())
v = json.loads(v) if isinstance(v, str) else v
print(v["run_id"], *(f"{d['"'"'ds'"'"']}:held_by={d['"'"'held_by'"'"']}" for d in v["dates"] if d["status"] == "skipped"))'
}
expect "the XCom is sqlrun's result: run $run, the skipped date and its holder" \
    "$(xcom_skips 2026-02-20)" "$run 2026-02-19:held_by=$holder"
expect "a WARNING names the skip" \
    "$(grep -i 'warn' "$log" | grep -c "sqlrun exit 99: 5 built; skipped, another run holds them: 2026-02-19..2026-02-19 skipped (held by run $holder)")" "1"
(cd "$SQLRUN_PROJECT" && "$sqlrun" release "$holder" >/dev/null 2>&1)

say "g) a timed-out try stops sqlrun within the bound: the date in progress rolls back"
# Every insert into daily_revenue now takes minutes (a count to 10^9 in a trigger): the
# date in progress cannot end by itself before the timeout (3 s) and the bound (2 s).
sq "CREATE TRIGGER burn_time AFTER INSERT ON daily_revenue BEGIN
      SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT x FROM c);
    END"
rows_before=$(sq "SELECT ds, revenue, order_count, run_id FROM daily_revenue ORDER BY ds" | md5sum)
runs_before=$(last_run)
(
    export SQLRUN_EXECUTION_TIMEOUT_SECONDS=3 SQLRUN_STOP_WITHIN=2 SQLRUN_RETRY_DELAY_SECONDS=1
    dags_test 2026-02-21
)
log=$work/dags-test-2026-02-21.log
expect "task of 2026-02-21: each try timed out (retried, then failed)" "$(task_state 2026-02-21)" "failed|3|2"
expect "each try's run interrupted, no date of it recorded" \
    "$(sq "SELECT r.status, count(*), sum((SELECT count(*) FROM run_partitions AS p WHERE p.run_id = r.run_id))
           FROM runs AS r WHERE r.run_id > $runs_before GROUP BY r.status")" "interrupted|3|0"
expect "tries whose log says sqlrun stopped with exit 143" "$(grep -c 'sqlrun stopped: exit 143' "$log")" "3"
longest=$(sq "SELECT max(strftime('%s', finished_at) - strftime('%s', started_at)) FROM runs WHERE run_id > $runs_before")
expect "each try's run ended within the timeout and the bound (longest: $longest s; 3 + 2 s, 7 s of slack)" \
    "$((longest <= 12))" "1"
expect "the rows as before the date (no partial date)" \
    "$(sq "SELECT ds, revenue, order_count, run_id FROM daily_revenue ORDER BY ds" | md5sum)" "$rows_before"
expect "nothing held" "$(sq "SELECT count(*) FROM reservations")" "0"
sq "DROP TRIGGER burn_time"

say "z) the DAG's schedule is the project's time zone"
mkdir -p "$work/seoul"
printf 'timezone = "Asia/Seoul"\n' >"$work/seoul/sqlrun.toml"
cat >"$work/zone.py" <<'PY'
import importlib.util, sys
import pendulum
spec = importlib.util.spec_from_file_location("sqlrun_daily_zone", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
d = m.sqlrun_daily()
midnight = pendulum.datetime(2026, 2, 11, 15, tz="UTC")  # 2026-02-12 00:00 in Seoul
print(d.timezone.name, d.start_date.isoformat(), *m.apply_args(midnight, "scheduled"), "/", *m.apply_args(midnight, "backfill"))
PY
# Its start_date is midnight in Seoul (Airflow keeps it in UTC), its days Seoul's.
expect "the DAG's zone, start, and a scheduled and a backfill run's day (sqlrun.toml: Asia/Seoul)" \
    "$(SQLRUN_PROJECT=$work/seoul "$python" "$work/zone.py" "$here/sqlrun_daily.py" 2>"$work/zone.log" | tail -1)" \
    "Asia/Seoul 2026-01-31T15:00:00+00:00 --as-of 2026-02-12 / --interval 2026-02-11 --kind backfill"

say "d) airflow backfill create records backfills (airflow standalone)"
port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export AIRFLOW__API__PORT=$port
export AIRFLOW__CORE__EXECUTION_API_SERVER_URL=http://localhost:$port/execution/
setsid airflow standalone >"$work/standalone.log" 2>&1 &
standalone_pid=$!
# Tasks report to the API server: a task queued before it listens fails to start.
for i in $(seq 1 180); do
    if "$python" -c "import urllib.request as u; u.urlopen('http://localhost:$port/api/v2/monitor/health', timeout=2)" 2>/dev/null; then
        break
    fi
    [[ $i == 180 ]] && fail "the API server did not answer in 6 minutes (see $work/standalone.log)"
    sleep 2
done
airflow dags unpause sqlrun_daily >/dev/null 2>&1 || fail "airflow dags unpause"
airflow backfill create --dag-id sqlrun_daily --from-date 2026-02-16 --to-date 2026-02-17 \
    >"$work/backfill.log" 2>&1 || fail "airflow backfill create (see $work/backfill.log)"
# Unpaused, the scheduler also starts its own run for the latest day (catchup=False).
for i in $(seq 1 150); do
    done_runs=$(af "SELECT count(*) FROM dag_run WHERE dag_id = 'sqlrun_daily'
                    AND run_type IN ('backfill', 'scheduled') AND state IN ('success', 'failed')")
    [[ $done_runs -ge 3 ]] && break
    [[ $i == 150 ]] && fail "the backfill and scheduled DAG runs did not end in 10 minutes (see $work/standalone.log)"
    sleep 4
done
for logical in 2026-02-16 2026-02-17; do
    day=$("$python" -c "import datetime as d; print(d.date.fromisoformat('$logical') - d.timedelta(days=1))")
    expect "DAG run backfill__$logical" \
        "$(af "SELECT state FROM dag_run WHERE run_id LIKE 'backfill__$logical%'")" "success"
    expect "backfill__$logical is a backfill of $day, without a look back" \
        "$(sq "SELECT kind, status, coalesce(lookback, '-'), interval_start, interval_end FROM runs
               WHERE scheduler_run LIKE 'backfill__$logical%'")" "backfill|success|-|$day|$day"
    expect "$day built by it" \
        "$(sq "SELECT r.scheduler_run LIKE 'backfill__$logical%' FROM daily_revenue AS d
               JOIN runs AS r ON r.run_id = d.run_id WHERE d.ds = '$day'")" "1"
done
scheduled=$(af "SELECT run_id FROM dag_run WHERE run_type = 'scheduled'")
yesterday=$("$python" -c "import datetime as d; print(d.datetime.now(d.timezone.utc).date() - d.timedelta(days=1))")
expect "the scheduler's own run ($scheduled) is the regular run for yesterday, with the lookback" \
    "$(sq "SELECT kind, lookback, interval_end FROM runs WHERE scheduler_run = '$scheduled'")" \
    "regular|7|$yesterday"

say "a, b) late data and a held date, on the real scheduler (airflow dags trigger: a manual run at a logical date)"
trigger() { # logical date: a DAG run the scheduler starts; waits until it ended, prints its state
    airflow dags trigger sqlrun_daily --logical-date "${1}T00:00:00+00:00" >"$work/trigger-$1.log" 2>&1 ||
        fail "airflow dags trigger $1 (see $work/trigger-$1.log)"
    for i in $(seq 1 150); do
        state=$(af "SELECT state FROM dag_run WHERE dag_id = 'sqlrun_daily' AND logical_date LIKE '$1%'")
        if [[ $state == success || $state == failed ]]; then
            return
        fi
        [[ $i == 150 ]] && fail "the DAG run of $1 did not end in 10 minutes (see $work/standalone.log)"
        sleep 4
    done
}
before=$(sq "SELECT revenue FROM daily_revenue WHERE ds = '2026-02-17'")
sq "INSERT INTO orders(order_id, order_date, amount, created_at)
    VALUES ('late-2', '2026-02-17', 654321, '2026-02-22 09:00:00')"
trigger 2026-02-23
expect "task of 2026-02-23 (scheduler)" "$(task_state 2026-02-23)" "success|1|2"
run=$(last_run)
expect "run $run is the regular run as of 2026-02-23" "$(run_row "$run")" "regular|success|7|2026-02-15|2026-02-22|airflow"
expect "run $run healed the late order's date and built the missing ones" "$(partitions "$run")" \
    "2026-02-17|success 2026-02-19|success 2026-02-20|success 2026-02-21|success 2026-02-22|success "
expect "2026-02-17 has the late order" \
    "$(sq "SELECT revenue - $before, run_id FROM daily_revenue WHERE ds = '2026-02-17'")" "654321|$run"
holder=$(cd "$SQLRUN_PROJECT" && "$sqlrun" reserve --interval 2026-02-23 --by bob --reason "planned backfill")
trigger 2026-02-24
expect "task of 2026-02-24 (scheduler; exit 99, nothing built)" "$(task_state 2026-02-24)" "skipped|1|2"
run=$(last_run)
expect "run $run skipped the held date" "$(partitions "$run")" "2026-02-23|skipped "
(cd "$SQLRUN_PROJECT" && "$sqlrun" release "$holder" >/dev/null 2>&1)
trigger 2026-02-25
expect "task of 2026-02-25 (scheduler)" "$(task_state 2026-02-25)" "success|1|2"
run=$(last_run)
expect "run $run built the released date and yesterday" "$(partitions "$run")" \
    "2026-02-23|success 2026-02-24|success "

say "h) a late order before the look-back window: the run leaves it and says so at WARNING (scheduler)"
sq "INSERT INTO orders(order_id, order_date, amount, created_at)
    VALUES ('late-old', '2026-02-02', 4242, '2026-02-26 10:00:00')"
trigger 2026-02-27
expect "task of 2026-02-27 (scheduler)" "$(task_state 2026-02-27)" "success|1|2"
run=$(last_run)
expect "run $run left 2026-02-02 (before its window)" \
    "$(sq "SELECT count(*) FROM run_partitions WHERE run_id = $run AND ds = '2026-02-02'")" "0"
# A triggered run's id is the time it was triggered, not its logical date.
run_id=$(af "SELECT run_id FROM dag_run WHERE dag_id = 'sqlrun_daily' AND logical_date LIKE '2026-02-27%'")
log=$AIRFLOW_HOME/logs/dag_id=sqlrun_daily/run_id=$run_id/task_id=apply/attempt=1.log
[[ -f $log ]] || fail "no task log of the DAG run of 2026-02-27 ($log)"
expect "a WARNING names it and the command that reaches it" \
    "$(grep -i 'warn' "$log" | grep 'dates before the look-back window need work (1 changed, 0 failed, 0 missing, 2026-02-02..2026-02-02)' | grep -c 'sqlrun apply --interval 2026-02-02 --only changed')" "1"

say "all expectations held ($(($(date +%s) - started)) s)"
