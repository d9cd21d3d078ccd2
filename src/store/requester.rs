//! Who asked for a run: the person (`--by`, else `$USER`, else the operating-system
//! account) and, when a scheduler started it, the scheduler's own ids for it, so that the
//! audit trail links a run to the scheduler's record of it without any flag.

use serde::Serialize;

use crate::db::Value;

/// `--by` when none is given: `$USER`, else the account the process runs as (schedulers
/// often run tasks without `$USER`: Airflow's workers do), else "unknown".
pub fn default_user() -> String {
    user_from(std::env::var("USER").ok(), || whoami::username().ok())
}

fn user_from(user: Option<String>, account: impl FnOnce() -> Option<String>) -> String {
    user.filter(|u| !u.is_empty())
        .or_else(|| account().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "unknown".to_string())
}

/// The scheduler that started this process, as its environment says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Scheduler {
    pub name: String,
    /// The scheduler's job: Airflow's DAG.
    pub job: Option<String>,
    pub task: Option<String>,
    /// The scheduler's id of this run: Airflow's DAG run id (`scheduled__...`,
    /// `backfill__...`, `manual__...`).
    pub run: Option<String>,
    pub attempt: Option<i64>,
}

impl Scheduler {
    pub fn from_process() -> Option<Self> {
        Self::from_lookup(|key| std::env::var(key).ok())
    }

    /// Airflow sets `AIRFLOW_CTX_*` for every task it runs (BashOperator passes them on
    /// to the command it starts).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let get = |key: &str| get(key).filter(|v| !v.is_empty());
        let job = get("AIRFLOW_CTX_DAG_ID");
        let run = get("AIRFLOW_CTX_DAG_RUN_ID");
        if job.is_none() && run.is_none() {
            return None;
        }
        Some(Scheduler {
            name: "airflow".into(),
            job,
            task: get("AIRFLOW_CTX_TASK_ID"),
            run,
            attempt: get("AIRFLOW_CTX_TRY_NUMBER").and_then(|n| n.trim().parse().ok()),
        })
    }

    /// The parameters of `insert_run.sql` that record it (all NULL without a scheduler).
    pub fn params(this: Option<&Self>) -> [(&'static str, Value); 5] {
        let text = |v: Option<&String>| Value::opt_text(v.map(String::as_str));
        [
            (":scheduler", text(this.map(|s| &s.name))),
            (":scheduler_job", text(this.and_then(|s| s.job.as_ref()))),
            (":scheduler_task", text(this.and_then(|s| s.task.as_ref()))),
            (":scheduler_run", text(this.and_then(|s| s.run.as_ref()))),
            (
                ":scheduler_try",
                this.and_then(|s| s.attempt)
                    .map_or(Value::Null, Value::from),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_falls_back_to_the_account_then_unknown() {
        let some = |s: &str| Some(s.to_string());
        assert_eq!(user_from(some("ana"), || some("svc")), "ana");
        assert_eq!(user_from(None, || some("airflow")), "airflow");
        assert_eq!(user_from(some(""), || some("airflow")), "airflow");
        assert_eq!(user_from(None, || None), "unknown");
    }

    #[test]
    fn airflow_context_is_read_from_its_variables() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |key: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(Scheduler::from_lookup(env(&[])), None);
        let s = Scheduler::from_lookup(env(&[
            ("AIRFLOW_CTX_DAG_ID", "revenue"),
            ("AIRFLOW_CTX_TASK_ID", "apply"),
            (
                "AIRFLOW_CTX_DAG_RUN_ID",
                "scheduled__2026-02-16T00:00:00+00:00",
            ),
            ("AIRFLOW_CTX_TRY_NUMBER", "2"),
        ]))
        .unwrap();
        assert_eq!(
            (
                s.name.as_str(),
                s.job.as_deref(),
                s.task.as_deref(),
                s.attempt
            ),
            ("airflow", Some("revenue"), Some("apply"), Some(2))
        );
        assert_eq!(
            s.run.as_deref(),
            Some("scheduled__2026-02-16T00:00:00+00:00")
        );
    }
}
