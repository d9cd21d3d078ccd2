//! The driver's own statements: run bookkeeping and reports, one file each in queries/,
//! with bound parameters. Most read the same on both backends; where PostgreSQL needs
//! other SQL, queries/postgres/ has a file of the same name. (What a date executes lives
//! in templates/.)

use crate::db::Query;

macro_rules! queries {
    ($($name:ident => $file:literal $(| $pg:literal)?,)*) => {
        $(pub const $name: Query = Query {
            name: $file,
            sqlite: include_str!(concat!("../../queries/", $file)),
            postgres: queries!(@pg $file $(, $pg)?),
            postgres_name: queries!(@pg_name $file $(, $pg)?),
        };)*

        /// Every statement above, for the test that checks the rows each returns.
        pub const ALL: &[Query] = &[$($name,)*];
    };
    (@pg $file:literal) => { include_str!(concat!("../../queries/", $file)) };
    (@pg $file:literal, $pg:literal) => { include_str!(concat!("../../queries/", $pg)) };
    (@pg_name $file:literal) => { $file };
    (@pg_name $file:literal, $pg:literal) => { $pg };
}

queries! {
    INSERT_RUN => "insert_run.sql",
    SOURCE_NOTES_SPAN => "source_notes_span.sql",
    SOURCE_DECLARED => "source_declared.sql",
    SOURCE_FRESHNESS => "source_freshness.sql",
    RECORD_SOURCE_DECLARATION => "record_source_declaration.sql",
    START_RESERVED_RUN => "start_reserved_run.sql",
    FINISH_RUN => "finish_run.sql",
    RELEASE_RUN => "release_run.sql",
    RUN_BY_ID => "run_by_id.sql",
    LIST_RUNS => "list_runs.sql",
    RUN_MILLIS => "run_millis.sql",
    RUN_PARTITIONS_OF_RUN => "run_partitions_of_run.sql",
    PARTITIONS_OF_RUN => "partitions_of_run.sql",
    MODELS_REPLACED_BY_RUN => "models_replaced_by_run.sql",
    RUN_DATES_NOT_DONE => "run_dates_not_done.sql",
    RUN_EVENTS_OF_RUN => "run_events_of_run.sql",
    CHECK_RESULTS_OF_RUN => "check_results_of_run.sql",
    RUN_TEMPLATES_OF_RUN => "run_templates_of_run.sql",
    SKIPPED_OF_RUN => "skipped_of_run.sql",
    HELD_BY_RUN => "held_by_run.sql",
    OWN_DATE => "own_date.sql" | "postgres/own_date.sql",
    HOLDER_OF_DATE => "holder_of_date.sql",
    HOLDER_BETWEEN => "holder_between.sql",
    RELEASABLE_OF_RUN => "releasable_of_run.sql" | "postgres/releasable_of_run.sql",
    LIVE_RUNS => "live_runs.sql" | "postgres/live_runs.sql",
    TEMPLATE_VERSION => "template_version.sql",
    TEMPLATE_VERSIONS => "template_versions.sql" | "postgres/template_versions.sql",
    RECORD_TEMPLATE_VERSIONS => "record_template_versions.sql" | "postgres/record_template_versions.sql",
    RECORD_RUN_TEMPLATES => "record_run_templates.sql" | "postgres/record_run_templates.sql",
    // One row per execution on SQLite, every row in one COPY on PostgreSQL (Db::insert_rows).
    INSERT_ORDERS => "insert_order.sql" | "postgres/copy_orders.sql",
    IS_SEALED => "is_sealed.sql",
    INSERT_SEAL_EVENT => "insert_seal_event.sql",
    SEAL_EVENT => "seal_event.sql",
    LIST_SEAL_EVENTS => "list_seal_events.sql",
    SEAL_COVERAGE_OF => "seal_coverage_of.sql",
    SEAL_EVENTS_OF_RUN => "seal_events_of_run.sql",
    NEXT_RUN_ID => "next_run_id.sql",
    DATE_STATUS_IN_RUN => "date_status_in_run.sql",
    UNDO_REPLACED => "undo_replaced.sql",
    UNDO_UNREPLACED => "undo_unreplaced.sql",
    LATEST_UNDO => "latest_undo.sql",
    DEMO_ORDERS => "demo_orders.sql" | "postgres/demo_orders.sql",
    DEMO_LATE_VOUCHER => "demo_late_voucher.sql",
    RUN_TOTAL => "run_total.sql",
    LAST_CUMULATIVE => "last_cumulative.sql",
    LAST_CUMULATIVE_AS_SENT => "last_cumulative_as_sent.sql",
    REVENUE_BETWEEN => "revenue_between.sql",
    LAST_RUN_ID => "last_run_id.sql",
    SENT_AND_NOW => "sent_and_now.sql",
    SENT_IN_SEAL => "sent_in_seal.sql",
    DROP_SCHEMA => "drop_schema.sql" | "postgres/drop_schema.sql",
    // A table's columns in order, each with the kind of value it holds (none: no such table).
    COLUMN_TYPES => "sqlite/column_types.sql" | "postgres/column_types.sql",
    // The tables of the database (schema), by name.
    TABLES => "sqlite/tables.sql" | "postgres/tables.sql",
    SOURCE_TRIGGERS => "sqlite/source_triggers.sql" | "postgres/source_triggers.sql",
    SOURCE_TRACKING_OF => "source_tracking_of.sql",
    RECORD_SOURCE_TRACKING => "record_source_tracking.sql" | "postgres/record_source_tracking.sql",
    MODELS_KNOWN => "models_known.sql",
    MODELS_FROM_HISTORY => "models_from_history.sql",
    RECORD_MODEL => "record_model.sql",
    RECORD_MODEL_EVENT => "record_model_event.sql",
    RETIRE_MODEL => "retire_model.sql",
    LAST_TEMPLATES_FROM => "last_templates_from.sql",
}
