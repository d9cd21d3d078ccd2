//! Integration tests: one binary; each test makes a temp dir, runs the real `sqlrun`
//! executable on a database there, and asserts on the rows in that database.
//!
//! This binary runs them on SQLite; tests/pg runs the same files on PostgreSQL (all but
//! disk_faults.rs, which is SQLite's).

mod backend {
    pub const BACKEND: crate::support::Backend = crate::support::Backend::Sqlite;
}

mod support;

mod agree;
mod badinput;
mod beyond;
mod campaign;
mod checks;
mod concurrency;
mod core;
mod dialects;
mod diff;
mod disk_faults;
mod environment;
mod failure;
mod first_hour;
mod gate;
mod glance;
mod golden;
mod grains;
mod grains_jobs;
mod history;
mod jobs;
mod late;
mod literals;
mod load;
mod model_errors;
mod models;
mod pipelines;
mod progress;
mod project;
mod ranges;
mod report;
mod reserve;
mod rows;
mod scripting;
mod seal;
mod seal_life;
mod select;
mod sent;
mod shell;
mod sources;
mod stop_within;
mod templates;
mod undo;
