//! The command line: every flag of the contract, as clap derive types.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::project::ApplyDefaults;

/// The most dates `apply --jobs` computes at once (each is a database session).
pub const MAX_JOBS: i64 = 64;

#[derive(Debug, Parser)]
#[command(
    name = "sqlrun",
    version,
    about = "A backfill runner for date-partitioned SQL pipelines",
    long_about = "A backfill runner for date-partitioned SQL pipelines.\n\n\
        A backfill is the regular run with another interval. Each date is replaced whole, in its own \
        transaction, with its record in the state store. Dates held by another run are skipped and \
        reported (exit 99). Sealed dates are corrected, never overwritten.",
    after_help = "Exit codes: 0 every date done; 1 a date failed (earlier dates stay committed); \
        2 bad input, nothing written; 99 some dates skipped because another run holds them; \
        130 stopped by Ctrl-C or SIGTERM (the current date finished or rolled back).\n\n\
        Settings: a flag, else $SQLRUN_DB / $SQLRUN_SCHEMA / $SQLRUN_TEMPLATES, else the project \
        file sqlrun.toml (the first found from the current folder upward; `sqlrun new DIR` \
        writes one), else the built-in default."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// The global flags as given. Each is optional here: what is not given comes from the
/// environment, then the project file (`sqlrun.toml`), then the built-in default; the
/// resolved values are a [`Global`] (see `project::resolve`).
#[derive(Debug, Clone, Default, Args)]
pub struct GlobalArgs {
    /// The database: a SQLite file (data and state store in one file, created on first
    /// use), or a PostgreSQL URL (postgresql://USER@HOST/DB, or postgresql:///DB?host=/socket/dir).
    /// Default: $SQLRUN_DB, else the project file's `db`, else sqlrun.db.
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub db: Option<String>,

    /// PostgreSQL only: the schema that holds the pipeline's tables, views and state
    /// store (created if missing). Two pipelines can share a database.
    /// Default: $SQLRUN_SCHEMA, else the project file's `schema`, else public.
    #[arg(long, global = true, value_name = "NAME")]
    pub schema: Option<String>,

    /// A pipeline folder (models/*.sql, views/*.sql) to use instead of the built-in one.
    /// Default: $SQLRUN_TEMPLATES, else the project file's `templates`, else built in.
    #[arg(long, global = true, value_name = "DIR")]
    pub templates: Option<PathBuf>,

    /// Machine-readable output on stdout (one JSON document).
    #[arg(long, global = true)]
    pub json: bool,

    /// Say more: per-date timings, where templates and settings come from.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// The global settings every command runs with, resolved from the flags, the
/// environment, the project file and the built-in defaults (`project::resolve`).
#[derive(Debug, Clone)]
pub struct Global {
    /// A SQLite file path or a PostgreSQL URL.
    pub db: String,
    pub schema: Option<String>,
    /// None: the built-in pipeline.
    pub templates: Option<PathBuf>,
    /// The zone whose calendar days the dates are (UTC unless the project names one).
    pub timezone: chrono_tz::Tz,
    pub json: bool,
    pub verbose: u8,
    /// The project file these settings were read from, if one was found.
    pub project: Option<PathBuf>,
    /// The project's defaults for `apply`.
    pub apply: ApplyDefaults,
}

impl Global {
    /// Settings that name a database and nothing else: no project, the built-in
    /// pipeline, quiet (the demo's scratch database).
    pub fn scratch(db: String, schema: Option<String>) -> Self {
        Global {
            db,
            schema,
            templates: None,
            timezone: chrono_tz::Tz::UTC,
            json: false,
            verbose: 0,
            project: None,
            apply: ApplyDefaults::default(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a new project in DIR: sqlrun.toml, models/, views/, a README and a .gitignore.
    ///
    /// The models and views are the built-in pipeline's, to start from. --db and --schema,
    /// when given, go into sqlrun.toml (default: sqlrun.db in DIR). The database itself is
    /// made by `sqlrun init`.
    New {
        /// The project's folder: created, or an empty one.
        dir: PathBuf,
    },
    /// Create or migrate the database (every other command migrates too).
    Init,
    /// Reserve, then recompute each date of the interval, one date per transaction.
    Apply(ApplyArgs),
    /// Reserve dates for a planned backfill; prints the new run id. Nothing is computed yet.
    Reserve(ReserveArgs),
    /// Give up what a reserved or running run still holds (recorded).
    Release {
        /// The run to release.
        run_id: i64,
        /// Who releases it (default: $USER).
        #[arg(long)]
        by: Option<String>,
    },
    /// Mark dates as sent: a sealed date is never overwritten again, only corrected.
    Seal(SealArgs),
    /// Retire a model the database knows and the templates no longer have: recorded; its
    /// table and rows stay, and templates without it are accepted from then on.
    Retire {
        /// The model's name (its file models/NAME.sql).
        model: String,
        /// Why it is gone (recorded). Required.
        #[arg(long)]
        reason: String,
        /// Who retires it (default: $USER).
        #[arg(long)]
        by: Option<String>,
    },
    /// Per date: computed by which run, stale or not, sealed, corrections, held by whom, last failure.
    Status {
        #[arg(long, value_name = "START..END")]
        interval: Option<String>,
        /// Judge dates by these models (and those downstream of them) only.
        #[arg(long, value_name = "MODEL[,MODEL...]", value_delimiter = ',')]
        select: Vec<String>,
    },
    /// The audit trail: runs, or one run's dates, events and template versions.
    Runs {
        run_id: Option<i64>,
        /// How many runs to list, newest first.
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// Corrections of sealed dates: what was sent, what is true now, and the difference.
    Corrections {
        #[arg(long, value_name = "START..END")]
        interval: Option<String>,
    },
    /// Print the exact SQL one date would execute, for review.
    Render {
        #[arg(long, value_name = "YYYY-MM-DD")]
        date: String,
        /// Only this model's SELECT.
        model: Option<String>,
        /// The date's transaction with only these models (and those downstream of them).
        #[arg(
            long,
            value_name = "MODEL[,MODEL...]",
            value_delimiter = ',',
            conflicts_with = "model"
        )]
        select: Vec<String>,
    },
    /// The pipeline's templates, their versions and whether the state store has recorded them.
    Templates {
        /// Print a recorded version's text, e.g. `models/daily_revenue@2`.
        #[arg(long, value_name = "NAME@VERSION")]
        show: Option<String>,
    },
    /// Insert seeded synthetic orders (with re-sent records) for demos and benchmarks.
    Generate(GenerateArgs),
    /// The worked example from the design notes, in a scratch database (on PostgreSQL, a
    /// scratch schema of the --db database, dropped afterwards).
    Demo,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    Regular,
    Backfill,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Regular => "regular",
            Kind::Backfill => "backfill",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Only {
    /// Dates never computed.
    Missing,
    /// Dates whose latest attempt failed.
    Failed,
    /// Dates built by an older version of a model.
    Stale,
    /// Dates whose source rows changed since they were built (late data).
    Changed,
}

impl Only {
    pub fn as_str(self) -> &'static str {
        match self {
            Only::Missing => "missing",
            Only::Failed => "failed",
            Only::Stale => "stale",
            Only::Changed => "changed",
        }
    }
}

#[derive(Debug, Clone, Default, Args)]
pub struct ApplyArgs {
    /// START..END (both included) or one date; without it, the regular run for yesterday.
    #[arg(long, value_name = "START..END", conflicts_with_all = ["as_of", "run"])]
    pub interval: Option<String>,

    /// The regular run's "today" (default: today, UTC); it computes the day before.
    #[arg(long, value_name = "YYYY-MM-DD", conflicts_with = "run")]
    pub as_of: Option<String>,

    /// Record the run as this kind (default: regular without --interval, else backfill).
    #[arg(long, value_enum, conflicts_with = "run")]
    pub kind: Option<Kind>,

    /// Who asked for the run (default: $USER).
    #[arg(long, conflicts_with = "run")]
    pub by: Option<String>,

    /// Why (recorded in the audit trail).
    #[arg(long, conflicts_with = "run")]
    pub reason: Option<String>,

    /// Only the dates of the interval in this state.
    #[arg(long, value_enum, conflicts_with = "run")]
    pub only: Option<Only>,

    /// The regular run looks back N days before yesterday, and computes those of them
    /// that are missing, failed or changed (late data), besides yesterday. Default: the
    /// project file's `[apply] lookback` (for a regular run only).
    #[arg(long, value_name = "N", conflicts_with_all = ["interval", "run", "only"])]
    pub lookback: Option<u32>,

    /// Recompute only these models and every model downstream of them (in dependency
    /// order, in each date's transaction); the other models keep their rows.
    #[arg(long, value_name = "MODEL[,MODEL...]", value_delimiter = ',')]
    pub select: Vec<String>,

    /// Go on after a failed date (the run still ends failed, exit 1).
    #[arg(long)]
    pub keep_going: bool,

    /// Compute up to N dates at once, each in its own database session (PostgreSQL only:
    /// SQLite has one writer). Default: the project file's `[apply] jobs`, else 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_JOBS))]
    pub jobs: Option<u32>,

    /// Print the plan and the SQL; write nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Carry out a run made earlier by `sqlrun reserve`.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<i64>,

    /// Compute dates that have not ended yet (refused by default: a partial day recorded
    /// as done is almost always a scheduler passing the day that has just begun).
    #[arg(long)]
    pub allow_partial_day: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ReserveArgs {
    #[arg(long, value_name = "START..END")]
    pub interval: String,
    #[arg(long)]
    pub by: Option<String>,
    #[arg(long)]
    pub reason: Option<String>,
    /// Hold the dates for this long (e.g. 90m, 2h, 1d); default: until `apply --run` or `release`.
    #[arg(long = "for", value_name = "DURATION")]
    pub hold_for: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct SealArgs {
    #[arg(long, value_name = "START..END")]
    pub interval: String,
    /// Why these dates are sealed (what went out). Required.
    #[arg(long)]
    pub reason: String,
    #[arg(long)]
    pub by: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct GenerateArgs {
    /// First order date.
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub start: String,
    #[arg(long, default_value_t = 14)]
    pub days: u32,
    #[arg(long, default_value_t = 1000)]
    pub per_day: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Whether `--json` was given, read off the raw arguments: a command line clap refused
/// still gets its error as JSON. Arguments after `--` are values, not flags.
pub fn json_requested(args: impl IntoIterator<Item = std::ffi::OsString>) -> bool {
    args.into_iter()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}
