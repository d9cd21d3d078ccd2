//! The integration tests of tests/cli, the same files, on PostgreSQL: one throwaway server
//! for this binary (initdb into a temp folder, a unix socket there, stopped with the test
//! process), one database on it, one schema per sandbox. Needs PostgreSQL installed
//! (`initdb` and `postgres`; `apt-get install postgresql`): without it these tests fail.

mod backend {
    pub const BACKEND: crate::support::Backend = crate::support::Backend::Postgres;
}

#[path = "../cli/support.rs"]
mod support;

#[path = "../cli/agree.rs"]
mod agree;
#[path = "../cli/badinput.rs"]
mod badinput;
#[path = "../cli/beyond.rs"]
mod beyond;
#[path = "../cli/campaign.rs"]
mod campaign;
#[path = "../cli/checks.rs"]
mod checks;
mod clock;
#[path = "../cli/concurrency.rs"]
mod concurrency;
#[path = "../cli/core.rs"]
mod core;
#[path = "../cli/dialects.rs"]
mod dialects;
#[path = "../cli/diff.rs"]
mod diff;
#[path = "../cli/environment.rs"]
mod environment;
mod equivalence;
#[path = "../cli/failure.rs"]
mod failure;
mod faults;
#[path = "../cli/first_hour.rs"]
mod first_hour;
#[path = "../cli/gate.rs"]
mod gate;
#[path = "../cli/glance.rs"]
mod glance;
#[path = "../cli/golden.rs"]
mod golden;
#[path = "../cli/grains.rs"]
mod grains;
#[path = "../cli/grains_jobs.rs"]
mod grains_jobs;
#[path = "../cli/history.rs"]
mod history;
#[path = "../cli/jobs.rs"]
mod jobs;
#[path = "../cli/late.rs"]
mod late;
#[path = "../cli/literals.rs"]
mod literals;
#[path = "../cli/load.rs"]
mod load;
mod loaders;
#[path = "../cli/model_errors.rs"]
mod model_errors;
#[path = "../cli/models.rs"]
mod models;
mod nowait;
mod partition;
#[path = "../cli/pipelines.rs"]
mod pipelines;
mod pooler;
mod procs;
#[path = "../cli/progress.rs"]
mod progress;
#[path = "../cli/project.rs"]
mod project;
#[path = "../cli/ranges.rs"]
mod ranges;
#[path = "../cli/report.rs"]
mod report;
#[path = "../cli/reserve.rs"]
mod reserve;
mod roles;
#[path = "../cli/rows.rs"]
mod rows;
#[path = "../cli/scripting.rs"]
mod scripting;
#[path = "../cli/seal.rs"]
mod seal;
#[path = "../cli/seal_life.rs"]
mod seal_life;
#[path = "../cli/select.rs"]
mod select;
#[path = "../cli/sent.rs"]
mod sent;
mod sessions;
#[path = "../cli/shell.rs"]
mod shell;
#[path = "../cli/sources.rs"]
mod sources;
#[path = "../cli/stop_within.rs"]
mod stop_within;
#[path = "../cli/templates.rs"]
mod templates;
mod tls;
#[path = "../cli/undo.rs"]
mod undo;
