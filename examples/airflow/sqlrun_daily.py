"""sqlrun from Apache Airflow 3: one DAG run per day, on Airflow's defaults.

A scheduled run is sqlrun's regular run for the day that has ended: `sqlrun apply
--as-of <logical date>`. With Airflow 3's default timetable for a cron schedule
(`@daily`) the logical date `ds` is the day that has just begun, and the regular run as
of that day computes the day before it; with `[apply] lookback = N` in the project's
sqlrun.toml it also computes the missing, failed or changed dates of the N days before
(late data, and a date an earlier run skipped because a backfill held it). A backfill
run (`airflow backfill create`) is a backfill of its own day, recorded as one.

Exit codes as the task maps them: 0 success, the XCom is sqlrun's JSON result; 99 (a
date is held by another run: skipped, nothing overwritten) with at least one date built:
success, the XCom is sqlrun's JSON (the skipped dates in it, `"status": "skipped"` with
`held_by`) and a WARNING names the skips; 99 with nothing built: skipped; 2 bad input,
failed at once (a retry will not fix it); 1 (a date failed, or the database could not be
reached: nothing written) or anything else, an ordinary failure that Airflow retries: 2
retries, 5 minutes apart (`SQLRUN_RETRY_DELAY_SECONDS` in the environment of whatever
parses this file, the DAG processor, sets another delay; the check sets 1 second so that
`airflow dags test`, which waits out the delay, does not wait 10 minutes). sqlrun's stderr
goes to the task log as it runs, each line at the level its prefix says: `sqlrun:` (an
error) at ERROR, `warning:` and `warn:` (a check of severity warn that found rows) at
WARNING, the rest at INFO. A result that names dates that
need work beyond the look-back window (`beyond_window`) is logged at WARNING.

Stopping. A timed-out try (`execution_timeout`, 2 hours; `SQLRUN_EXECUTION_TIMEOUT_SECONDS`
sets another) and a killed task (marked failed, lost heartbeats, the worker shut down)
send sqlrun SIGTERM. sqlrun then stops at a date boundary: the date in progress commits if
it ends within `SQLRUN_STOP_WITHIN` seconds (3 by default here), else it is rolled back;
either way the dates before it stay, the run is recorded `interrupted` and releases what
it holds, and exit 143 fails the try (retried). No date is ever left half written. The
bound is below the 5 seconds after which Airflow's supervisor follows its SIGTERM with a
SIGKILL, so the kill never lands mid-transaction; a timed-out try overruns its timeout by
at most the bound and the roll back. (A SIGKILL that still came would leave no half date
either, the database rolls the transaction back, but the run would stay `running` until
the next run reclaims its dates.)

Time zone. The schedule is the project's calendar: the DAG reads `timezone` from the
project's sqlrun.toml (or `SQLRUN_TIMEZONE`, as sqlrun does) and starts at midnight there,
so `@daily` runs at the project's midnight, and the day passed to sqlrun is the logical
date in that zone (Airflow's `ds` is the UTC date, a day early east of UTC).

Catch-up is off (`catchup=False`): a DAG unpaused after days off, or new, makes one run,
for the latest day, not one per missed day. The project's `lookback` heals the missed days
within its window in that one run; older ones are a backfill (`airflow backfill create`,
or `sqlrun apply --interval ... --only missing`). Turned on, each missed day would be a
regular run of its own, redundant with the look back, and the first unpause of this DAG
would make a run for every day since `start_date`.

Only Airflow's public API (`airflow.sdk`, and pendulum, which Airflow ships) is used.
Checked with Airflow 3.3.2 by examples/airflow/check.sh (a late order healed, a held date
built once released, exit 2 not retried, an unreachable database retried, a partial run a
success with its skips in the XCom, a timed-out try's date rolled back within the bound,
the project's time zone, `airflow backfill create` recorded as backfills; the late order
and the held date again on `airflow standalone`'s scheduler).
"""

import json
import logging
import os
import signal
import subprocess
import tempfile
import tomllib
from datetime import timedelta
from pathlib import Path

import pendulum
from airflow.sdk import dag, task
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

# The binary, and the project folder (its sqlrun.toml names the database, the lookback
# and the time zone); SQLRUN_DB / SQLRUN_TEMPLATES / SQLRUN_TIMEZONE in the workers'
# environment work too.
SQLRUN = os.environ.get("SQLRUN_BIN", "sqlrun")
PROJECT = os.environ.get("SQLRUN_PROJECT", "/opt/pipelines/shop")
# The wait before a retry (of exit 1: a failed date, a database not reachable now).
RETRY_DELAY = timedelta(seconds=int(os.environ.get("SQLRUN_RETRY_DELAY_SECONDS", "300")))
# How long a try may take; then Airflow raises a timeout in the task, which stops sqlrun.
TIMEOUT = timedelta(seconds=int(os.environ.get("SQLRUN_EXECUTION_TIMEOUT_SECONDS", "7200")))
# After a SIGTERM, how long sqlrun lets the date in progress go on before it rolls it back:
# below the 5 s after which Airflow's supervisor SIGKILLs a task it terminates.
STOP_WITHIN = os.environ.get("SQLRUN_STOP_WITHIN", "3")

log = logging.getLogger(__name__)


def project_timezone():
    """The zone whose calendar days the dates are, as sqlrun finds it: $SQLRUN_TIMEZONE,
    else `timezone` in the project's sqlrun.toml (in PROJECT or a folder above), else UTC."""
    zone = os.environ.get("SQLRUN_TIMEZONE")
    if not zone:
        for folder in [Path(PROJECT), *Path(PROJECT).parents]:
            try:
                with open(folder / "sqlrun.toml", "rb") as f:
                    zone = tomllib.load(f).get("timezone")
                break
            except FileNotFoundError:
                continue
            except (OSError, tomllib.TOMLDecodeError) as e:
                log.warning("cannot read %s: %s; the DAG's zone is UTC", folder / "sqlrun.toml", e)
                break
    return pendulum.timezone(zone or "UTC")


TZ = project_timezone()


def project_day(logical_date):
    """The logical date's calendar day in the project's zone (`ds` is the UTC one)."""
    return pendulum.instance(logical_date).in_timezone(TZ).date()


def apply_args(logical_date, run_type):
    """sqlrun's arguments for a DAG run: a backfill run is a backfill of the day that
    ended when its logical date began; any other run (scheduled, manual, `airflow dags
    test`) is the regular run as of its logical date, so the project's lookback applies.
    A manual run without a logical date is the regular run as of today. Days are the
    project's (its time zone)."""
    if logical_date is None:
        return []
    day = project_day(logical_date)
    if run_type == "backfill":
        return ["--interval", (day - timedelta(days=1)).isoformat(), "--kind", "backfill"]
    return ["--as-of", day.isoformat()]


def log_stderr_line(line):
    """A line of sqlrun's stderr, at the level its prefix says."""
    line = line.rstrip()
    if line.startswith("sqlrun:"):
        log.error("%s", line)
    elif line.startswith(("warning:", "warn:")):  # warn: a check of severity warn found rows
        log.warning("sqlrun: %s", line)
    else:
        log.info("sqlrun: %s", line)


def run_sqlrun(args):
    """Runs sqlrun, its stderr into the log line by line; its exit code and stdout.

    A SIGTERM to the task (Airflow terminating it) is passed on to sqlrun, and so is a
    timeout (Airflow's AirflowTaskTimeout, raised in this loop): sqlrun stops at a date
    boundary, or rolls the date in progress back once SQLRUN_STOP_WITHIN seconds have
    passed; its last lines still reach the log, and then the timeout is raised again."""
    command = [SQLRUN, "--json", "apply", *args]
    log.info("running %s in %s", " ".join(command), PROJECT)
    env = {"SQLRUN_STOP_WITHIN": STOP_WITHIN, **os.environ, "NO_COLOR": "1"}
    # stdout (one JSON line, as long as the run has dates) to a file: a pipe that nobody
    # reads while stderr is read could fill up and stop sqlrun.
    with tempfile.TemporaryFile(mode="w+") as out:
        with subprocess.Popen(
            command, cwd=PROJECT, env=env, stdout=out, stderr=subprocess.PIPE, text=True
        ) as proc:

            def terminate():
                if proc.poll() is None:
                    log.warning(
                        "stopping sqlrun (SIGTERM): it ends the date in progress, "
                        "or rolls it back after %s s",
                        STOP_WITHIN,
                    )
                    proc.send_signal(signal.SIGTERM)

            previous = None

            def on_sigterm(signum, frame):
                terminate()
                if callable(previous):  # Airflow's own (it calls the operator's on_kill)
                    previous(signum, frame)

            try:
                previous = signal.signal(signal.SIGTERM, on_sigterm)
            except ValueError:  # not the main thread: Airflow's handler stays
                pass
            try:
                try:
                    for line in proc.stderr:
                        log_stderr_line(line)
                    code = proc.wait()
                except BaseException:
                    # A timeout, or anything else that ends the try: stop sqlrun cleanly,
                    # still logging what it says, then give up the try.
                    terminate()
                    bound = int(STOP_WITHIN) + 30
                    try:
                        for line in proc.stderr:
                            log_stderr_line(line)
                        log.warning("sqlrun stopped: exit %s", proc.wait(timeout=bound))
                    except subprocess.TimeoutExpired:
                        log.error("sqlrun did not stop within %s s: killed", bound)
                        proc.kill()
                        proc.wait()
                    raise
            finally:
                if previous is not None:
                    signal.signal(signal.SIGTERM, previous)
        out.seek(0)
        return code, out.read()


def summary(stdout):
    """What sqlrun's JSON says, in brief, for the exception's message: the error, or the
    run and how its dates ended (as ranges)."""
    try:
        result = json.loads(stdout)
    except ValueError:
        return stdout.strip()[-500:]
    if "error" in result:
        return result["error"].get("message", "")
    return f"run {result.get('run_id')} ({result.get('kind')} {result.get('interval')}) {result.get('status')}: {ranges(result)}"


def ranges(result, status=None):
    """A result's dates as ranges, `START..END status`, only those of `status` if given."""
    return ", ".join(
        f"{r['start']}..{r['end']} {r['status']}"
        + (f" (held by run {r['held_by']})" if r.get("held_by") is not None else "")
        for r in result.get("ranges", [])
        if status is None or r.get("status") == status
    )


def built(result):
    """How many dates the run built (computed, corrected or found unchanged)."""
    return sum(1 for d in result.get("dates", []) if d.get("status") not in ("skipped", "failed"))


def warn_beyond_window(result):
    """Dates older than the look back that need work (changed, failed or missing): this
    run leaves them, and the result says how many and the command that reaches them."""
    beyond = result.get("beyond_window") or {}
    if beyond.get("dates"):
        log.warning(
            "sqlrun: %d dates before the look-back window need work (%s changed, %s failed, "
            "%s missing, %s..%s), not computed by this run: %s",
            beyond["dates"],
            beyond.get("changed"),
            beyond.get("failed"),
            beyond.get("missing"),
            beyond.get("first"),
            beyond.get("last"),
            beyond.get("reach"),
        )


@dag(
    dag_id="sqlrun_daily",
    schedule="@daily",
    start_date=pendulum.datetime(2026, 2, 1, tz=TZ),
    catchup=False,
    default_args={"retries": 2, "retry_delay": RETRY_DELAY},
)
def sqlrun_daily():
    @task(execution_timeout=TIMEOUT)
    def apply(logical_date=None, dag_run=None):
        code, stdout = run_sqlrun(apply_args(logical_date, dag_run.run_type))
        if code == 0:
            result = json.loads(stdout)
            warn_beyond_window(result)
            return result
        message = f"sqlrun exit {code}: {summary(stdout)}"
        if code == 99:
            try:
                result = json.loads(stdout)
            except ValueError:
                result = {}
            warn_beyond_window(result)
            if built(result) > 0:
                # Dates built, others held by another run: a success, the skips said.
                log.warning(
                    "sqlrun exit 99: %s built; skipped, another run holds them: %s",
                    built(result),
                    ranges(result, "skipped"),
                )
                return result
            log.info("sqlrun's result: %s", stdout.strip())
            raise AirflowSkipException(f"{message} (another run holds the date)")
        log.info("sqlrun's result: %s", stdout.strip())
        if code == 2:
            raise AirflowFailException(f"{message} (bad input: not retried)")
        if code in (130, 143):
            message += " (stopped by a signal: the date in progress committed or rolled back whole)"
        raise RuntimeError(message)

    apply()


sqlrun_daily()
