"""sqlrun from Apache Airflow 3: one DAG run per day, on Airflow's defaults.

A scheduled run is sqlrun's regular run for the day that has ended: `sqlrun apply
--as-of <logical date>`. With Airflow 3's default timetable for a cron schedule
(`@daily`) the logical date `ds` is the day that has just begun, and the regular run as
of that day computes the day before it; with `[apply] lookback = N` in the project's
sqlrun.toml it also computes the missing, failed or changed dates of the N days before
(late data, and a date an earlier run skipped because a backfill held it). A backfill
run (`airflow backfill create`) is a backfill of its own day, recorded as one.

Exit codes as the task maps them: 0 success, the XCom is sqlrun's JSON result; 99
skipped (another run holds the date, nothing was overwritten); 2 bad input, failed at
once (a retry will not fix it); 1 (a date failed, or the database could not be reached:
nothing written) or anything else, an ordinary failure that Airflow retries: 2 retries,
5 minutes apart (`SQLRUN_RETRY_DELAY_SECONDS` in the environment of whatever parses this
file, the DAG processor, sets another delay; the check sets 1 second so that `airflow dags
test`, which waits out the delay, does not wait 10 minutes). sqlrun's stderr goes to the
task log as it runs.

Only Airflow's public API (`airflow.sdk`) is used. Checked with Airflow 3.3.2 by
examples/airflow/check.sh (a late order healed, a held date built once released, exit 2
not retried, an unreachable database retried, `airflow backfill create` recorded as
backfills).
"""

import json
import logging
import os
import subprocess
import tempfile
from datetime import date, datetime, timedelta

from airflow.sdk import dag, task
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

# The binary, and the project folder (its sqlrun.toml names the database and the
# lookback); SQLRUN_DB / SQLRUN_TEMPLATES in the workers' environment work too.
SQLRUN = os.environ.get("SQLRUN_BIN", "sqlrun")
PROJECT = os.environ.get("SQLRUN_PROJECT", "/opt/pipelines/shop")
# The wait before a retry (of exit 1: a failed date, a database not reachable now).
RETRY_DELAY = timedelta(seconds=int(os.environ.get("SQLRUN_RETRY_DELAY_SECONDS", "300")))

log = logging.getLogger(__name__)


def apply_args(ds, run_type):
    """sqlrun's arguments for a DAG run: a backfill run is a backfill of the day that
    ended when its logical date began; any other run (scheduled, manual, `airflow dags
    test`) is the regular run as of its logical date, so the project's lookback applies.
    A manual run without a logical date is the regular run as of today."""
    if run_type == "backfill":
        day = date.fromisoformat(ds) - timedelta(days=1)
        return ["--interval", day.isoformat(), "--kind", "backfill"]
    return ["--as-of", ds] if ds else []


def run_sqlrun(args):
    """Runs sqlrun, its stderr into the log line by line; its exit code and stdout."""
    command = [SQLRUN, "--json", "apply", *args]
    log.info("running %s in %s", " ".join(command), PROJECT)
    env = {**os.environ, "NO_COLOR": "1"}
    # stdout (one JSON line, as long as the run has dates) to a file: a pipe that nobody
    # reads while stderr is read could fill up and stop sqlrun.
    with tempfile.TemporaryFile(mode="w+") as out:
        with subprocess.Popen(
            command, cwd=PROJECT, env=env, stdout=out, stderr=subprocess.PIPE, text=True
        ) as proc:
            try:
                for line in proc.stderr:
                    log.info("sqlrun: %s", line.rstrip())
                code = proc.wait()
            except BaseException:
                # A timeout or a kill of the task: SIGTERM stops sqlrun cleanly (the date
                # in progress rolls back, the run is recorded as stopped).
                proc.terminate()
                proc.wait()
                raise
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
    ranges = ", ".join(
        f"{r['start']}..{r['end']} {r['status']}" for r in result.get("ranges", [])
    )
    return f"run {result.get('run_id')} ({result.get('kind')} {result.get('interval')}) {result.get('status')}: {ranges}"


@dag(
    dag_id="sqlrun_daily",
    schedule="@daily",
    start_date=datetime(2026, 2, 1),
    catchup=False,
    default_args={"retries": 2, "retry_delay": RETRY_DELAY},
)
def sqlrun_daily():
    @task(execution_timeout=timedelta(hours=2))
    def apply(ds=None, dag_run=None):
        code, stdout = run_sqlrun(apply_args(ds, dag_run.run_type))
        if code == 0:
            return json.loads(stdout)
        log.info("sqlrun's result: %s", stdout.strip())
        message = f"sqlrun exit {code}: {summary(stdout)}"
        if code == 99:
            raise AirflowSkipException(f"{message} (another run holds the date)")
        if code == 2:
            raise AirflowFailException(f"{message} (bad input: not retried)")
        raise RuntimeError(message)

    apply()


sqlrun_daily()
