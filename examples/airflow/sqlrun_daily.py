"""sqlrun from Apache Airflow 3: one DAG run per date, on Airflow's defaults.

With Airflow 3's default timetable for a cron schedule (`@daily`), a run's logical date
`ds` is the moment it is due: the day that has just begun. The day that has ended, the
one to compute, is the day before it. sqlrun refuses a day that has not ended yet
(exit 2), so passing `{{ ds }}` here would fail loudly rather than record a partial day.

Exit codes as Airflow reads them: 0 success; 99 skipped (another run holds the date:
BashOperator's default `skip_on_exit_code`); 1 a date failed (retried); 2 bad input
(failed at once by SqlrunOperator below: retrying will not fix it). On exit 0 the XCom (the
last line of stdout) is sqlrun's one-line JSON result; on other exits the JSON is in the log.

Checked with Airflow 3.3.2 and apache-airflow-providers-standard 1.21.0: `airflow dags test`,
a held date (skipped), `airflow backfill create` (recorded as backfills), `{{ ds }}` (refused).
"""

from datetime import datetime, timedelta

from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG
from airflow.sdk.exceptions import AirflowException, AirflowFailException


class SqlrunOperator(BashOperator):
    """Fails at once on sqlrun's exit 2 (bad input): a retry will not fix it.

    BashOperator retries every non-zero exit but its skip code (99)."""

    def execute(self, context):
        try:
            return super().execute(context)
        except AirflowException as err:
            proc = getattr(self.subprocess_hook, "sub_process", None)
            if proc is not None and proc.returncode == 2:
                raise AirflowFailException(f"{err} (sqlrun: bad input, not retried)") from err
            raise


with DAG(
    dag_id="sqlrun_daily",
    schedule="@daily",
    start_date=datetime(2026, 2, 1),
    catchup=False,
    default_args={"retries": 2, "retry_delay": timedelta(minutes=5)},
) as dag:
    SqlrunOperator(
        task_id="apply",
        # The day before the logical date; a backfill run (`airflow backfill create`) is
        # recorded as a backfill, every other run as regular. Who and which DAG run are
        # recorded by sqlrun itself (AIRFLOW_CTX_* and the account it runs as).
        bash_command=(
            "sqlrun --json apply --interval {{ macros.ds_add(ds, -1) }} "
            "--kind {{ 'backfill' if dag_run.run_type == 'backfill' else 'regular' }}"
        ),
        # Where the pipeline is: its project folder (sqlrun.toml names the database), or
        # SQLRUN_DB / SQLRUN_TEMPLATES in `env`.
        cwd="/opt/pipelines/shop",
        append_env=True,
        env={"NO_COLOR": "1"},
        execution_timeout=timedelta(hours=2),
    )
