//! The command line: every flag of the contract, as clap derive types.

use std::path::PathBuf;

mod requests;
pub mod shell;

use clap::{Args, Parser, Subcommand, ValueEnum};
use clap_complete::ArgValueCandidates;

use crate::project::settings::{Flags, MAX_JOBS};
use crate::reservations::planned::ReserveRequest;
use crate::seals::corrections::{FeedRequest, FeedShape};
use crate::seals::SealRequest;
use crate::sources::generate::GenerateRequest;
use crate::text::words::SealAction;
use crate::text::words::{OnlyFilter, RunKind};

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
        130/143 stopped by Ctrl-C/SIGTERM (the current date finished or rolled back).\n\n\
        Settings: a flag, else $SQLRUN_DB / $SQLRUN_SCHEMA / $SQLRUN_TEMPLATES / \
        $SQLRUN_TIMEZONE, else the project file sqlrun.toml (the first found from the current \
        folder upward; `sqlrun new DIR` writes one), else the built-in default.\n\n\
        Start here: `sqlrun demo` tells the story; `sqlrun help apply` explains a command.",
    // Our own `help` command, so that `sqlrun help --help` works like any other.
    disable_help_subcommand = true,
    // Every command's man page and `--version` name the version.
    propagate_version = true
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
///
/// Help texts: the first line is what `-h` shows; `--help` adds the rest.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// The database: a SQLite file or a postgresql:// URL [default: sqlrun.db]
    ///
    /// A SQLite file holds data and state store together and is created on first use. A
    /// PostgreSQL URL: postgresql://USER@HOST/DB, or postgresql:///DB?host=/socket/dir.
    /// Default: $SQLRUN_DB, else the project file's `db`, else sqlrun.db.
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub db: Option<String>,

    /// PostgreSQL: the schema that holds the pipeline [default: public]
    ///
    /// Holds the pipeline's tables, views and state store; created if missing. Two
    /// pipelines can share a database in two schemas. Default: $SQLRUN_SCHEMA, else the
    /// project file's `schema`, else public.
    #[arg(long, global = true, value_name = "NAME")]
    pub schema: Option<String>,

    /// A pipeline folder (models/, views/) instead of the built-in one
    ///
    /// Default: $SQLRUN_TEMPLATES, else the project file's `templates`, else the pipeline
    /// built into the binary (`sqlrun new DIR` writes it out to start from).
    #[arg(long, global = true, value_name = "DIR")]
    pub templates: Option<PathBuf>,

    /// One JSON document on stdout, errors included
    ///
    /// One line unless stdout is a terminal. An error is {"error": {"exit_code",
    /// "kind", "message"}}; a run that stopped early adds its run_id and the dates it
    /// committed.
    #[arg(long, global = true)]
    pub json: bool,

    /// Say more: per-date timings, where templates and settings come from
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a new project in DIR: sqlrun.toml, models/, views/, a README and a .gitignore.
    ///
    /// The models and views are the built-in pipeline's, to start from. --db and --schema,
    /// when given, go into sqlrun.toml (default: sqlrun.db in DIR). The database itself is
    /// made by `sqlrun init`.
    New(NewArgs),
    /// Create or migrate the database (every other command migrates too).
    Init(InitArgs),
    /// Reserve, then recompute each date of the interval, one date per transaction.
    #[command(after_help = "Examples:\n  \
        sqlrun apply                                        the regular run: yesterday\n  \
        sqlrun apply --interval 2026-02-09..2026-02-11      a backfill of three dates\n  \
        sqlrun apply --interval 2026-01-01..2026-03-31 --only missing   fill the gaps\n  \
        sqlrun apply --lookback 14                          yesterday, and late data of 14 days\n  \
        sqlrun apply --interval 2026-02-09 --lookback 7     that date, and late data of the 7 before\n  \
        sqlrun apply --only changed                         every changed date sqlrun knows\n  \
        sqlrun apply --interval 2026-02-01..2026-02-14 --dry-run        the plan, nothing written\n  \
        sqlrun apply --run 7                                carry out `sqlrun reserve`'s run 7\n  \
        sqlrun apply --interval 2025-01-01..2025-12-31 --jobs 4         PostgreSQL: 4 dates at once\n\n\
        Exit codes: 0 done; 1 a date failed; 2 bad input, nothing written; 99 dates skipped \
        because another run holds them (each named on stderr).")]
    Apply(ApplyArgs),
    /// Reserve dates for a planned backfill; prints the new run id. Nothing is computed yet.
    #[command(after_help = "Examples:\n  \
        run=$(sqlrun reserve --interval 2026-01-01..2026-03-31 --reason \"fix #42\")\n  \
        sqlrun apply --run \"$run\"                 compute them later (other runs skip them meanwhile)\n  \
        sqlrun release \"$run\"                     or give them up\n  \
        sqlrun reserve --interval 2026-02-01 --for 2h   a hold that expires by itself")]
    Reserve(ReserveArgs),
    /// Give up what a reserved or running run still holds (recorded).
    Release(ReleaseArgs),
    /// Put back what a run replaced, as a new run of kind undo.
    ///
    /// Each partition (model, date) RUN replaced and that still holds its rows goes back
    /// to the rows RUN replaced (kept in <table>_history); models downstream of it are
    /// recomputed. A sealed date gets corrections, never an overwrite. A partition
    /// replaced again since RUN is skipped and named, as is one whose history the
    /// retention pruned.
    #[command(after_help = "Examples:\n  \
        sqlrun undo 7 --reason \"the fix in run 7 was wrong\"\n  \
        sqlrun undo 7 --interval 2026-02-09..2026-02-11   only those dates\n  \
        sqlrun undo 7 --dry-run                         the plan, nothing written\n\n\
        Exit codes as apply: 0 done (or nothing left to undo); 1 a date failed; 2 bad input, \
        nothing written; 99 dates skipped because another run holds them.")]
    Undo(UndoArgs),
    /// Mark dates as sent: a sealed date is never overwritten again, only corrected.
    #[command(after_help = "Examples:\n  \
        sqlrun seal --interval 2026-02-01..2026-02-07 --reason \"weekly report 2026-W06\"\n  \
        sqlrun corrections                          what changed after it went out\n  \
        sqlrun seal --reissue --interval 2026-02-01..2026-02-07 --reason \"restated W06\"\n  \
        sqlrun seal --dry-run --interval 2026-02-01..2026-02-07 --reason \"W06\"\n\n\
        All or nothing: a date never computed, or held by another run, refuses the whole \
        seal (exit 2). Dates already sealed stay as they were (a model first computed on \
        them since is sealed there now). --reissue sends the current values of sealed \
        dates again: a new version; the corrections so far are settled by it, and later \
        ones are measured against it. Every version stays in <table>_sent_history.")]
    Seal(SealArgs),
    /// Make sealed dates ordinary again (recorded, with a reason): the next apply replaces
    /// them whole. Every version sent and every correction stays in the history.
    #[command(after_help = "Examples:\n  \
        sqlrun unseal --interval 2026-02-08..2026-02-14 --reason \"sealed the wrong week\"\n\n\
        All or nothing: a date that is not sealed, or held by another run, refuses it \
        (exit 2, nothing written).")]
    Unseal(UnsealArgs),
    /// Retire a model the database knows and the templates no longer have: recorded; its
    /// table and rows stay, and templates without it are accepted from then on.
    Retire(RetireArgs),
    /// The state at a glance: counts, notable dates as ranges, and a calendar (a row per
    /// month, a cell per day); --list for a line per date.
    #[command(after_help = "Examples:\n  \
        sqlrun status                                  from the first to the last date known\n  \
        sqlrun status --interval 2026-02-01..2026-02-28\n  \
        sqlrun status --list --interval 2026-02-03     a line per date\n  \
        sqlrun status --select daily_revenue           judged by one model\n  \
        sqlrun --json status | jq .ranges              for scripts")]
    Status(StatusArgs),
    /// One self-contained HTML page: each model's calendar, the runs, the seal events and
    /// the corrections (reads only; no network, no script).
    #[command(after_help = "Examples:\n  \
        sqlrun report --html report.html               from the first to the last date known\n  \
        sqlrun report --html feb.html --interval 2026-02-01..2026-02-28\n  \
        sqlrun report --html rev.html --select daily_revenue")]
    Report(ReportArgs),
    /// The audit trail: runs, or one run's dates, events and template versions.
    Runs(RunsArgs),
    /// What a run changed: per model and partition it replaced, the rows it replaced (kept
    /// in <table>_history) against the rows it wrote; keys added, removed and changed, and
    /// each value column's total before, after and the delta (reads only).
    #[command(after_help = "Examples:\n  \
        sqlrun diff 7                                   what run 7 changed\n  \
        sqlrun diff 7 --interval 2026-02-01..2026-02-07 --select daily_revenue\n  \
        sqlrun diff --model daily_revenue --from 3 --to 9   one model between two runs\n  \
        sqlrun --json diff 7 | jq '.models[].total'\n  \
        sqlrun apply --interval 2026-02-01..2026-02-14 --diff   before a run: what it would change\n\n\
        History is kept for `[history] keep` (30 days by default): a partition whose replaced \
        rows were pruned since says so. A sealed date gets corrections, not a replace: \
        `sqlrun corrections` shows those.")]
    Diff(DiffArgs),
    /// The seal events (seal, reissue, unseal), newest first: who, when, why, which
    /// dates; or one event with the dates of each model it covered.
    Seals(SealsArgs),
    /// Corrections of sealed dates, as a feed: what was sent, what is true now, the
    /// difference, the seal version it departs from, its cause and who ran it.
    #[command(after_help = "Examples:\n  \
        sqlrun corrections --since 3                  after seal 3 went out\n  \
        sqlrun corrections --since \"2026-03-01 00:00:00\" --format csv\n  \
        sqlrun corrections --select daily_revenue --interval 2026-02-01..2026-02-28")]
    Corrections(CorrectionsArgs),
    /// Print the exact SQL one date would execute, for review.
    Render(RenderArgs),
    /// Run the checks (checks/*.sql) over dates already computed, reading only: exit 1
    /// when an error check finds rows.
    Check(CheckArgs),
    /// The pipeline's templates, their versions and whether the state store has recorded them.
    Templates(TemplatesArgs),
    /// Insert seeded synthetic orders (with re-sent records) for demos and benchmarks.
    Generate(GenerateArgs),
    /// The worked example from the design notes, in a scratch database (on PostgreSQL, a
    /// scratch schema of the --db database, dropped afterwards).
    Demo(DemoArgs),
    /// Print the help of sqlrun, or of a command (`sqlrun help apply`).
    Help(HelpArgs),
    /// Load rows from a CSV file into a table (a source such as orders), all or nothing.
    ///
    /// The header row names the columns; columns it leaves out take their defaults (orders'
    /// created_at: now). An empty field is NULL. Each value is checked against its
    /// column's type first: a bad row stops the load with its line, column and value, and
    /// nothing is written. Dates a tracked source's new rows touch show as changed.
    Load(LoadArgs),
    /// Print a shell completion script on stdout (opens no database).
    ///
    /// bash: `sqlrun completions bash > ~/.local/share/bash-completion/completions/sqlrun`;
    /// zsh: into a folder of $fpath as _sqlrun; fish: ~/.config/fish/completions/sqlrun.fish.
    Completions(CompletionsArgs),
    /// Print the man page (roff) on stdout, or write one page per command into a folder
    /// (opens no database).
    ///
    /// `sqlrun man | man -l -` reads it now; `sqlrun man --dir ~/.local/share/man/man1`
    /// installs sqlrun.1 and sqlrun-COMMAND.1 for `man sqlrun` and `man sqlrun-apply`.
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The project's folder: created, or an empty one.
    pub dir: PathBuf,
}

/// `init` takes no arguments of its own.
#[derive(Debug, Args)]
pub struct InitArgs {}

#[derive(Debug, Args)]
pub struct ReleaseArgs {
    /// The run to release (`sqlrun runs` lists them).
    #[arg(add = ArgValueCandidates::new(shell::run_ids))]
    pub run_id: i64,
    /// Who releases it (default: $USER, else the account).
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
}

#[derive(Debug, Args)]
pub struct UndoArgs {
    /// The run to undo (`sqlrun runs` lists them).
    #[arg(add = ArgValueCandidates::new(shell::run_ids))]
    pub run_id: i64,
    /// Only the partitions of these dates: START..END (both included), one date, a month.
    #[arg(long, value_name = "START..END")]
    pub interval: Option<String>,
    /// Why (recorded with the run).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Who undoes it (default: $USER, else the account).
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    /// Print the plan (what goes back, what is skipped and why); write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct RetireArgs {
    /// The model's name (its file models/NAME.sql).
    #[arg(add = ArgValueCandidates::new(shell::model_names))]
    pub model: String,
    /// Why it is gone (recorded). Required.
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// Who retires it (default: $USER, else the account).
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The dates to show, START..END or one date (default: from the first to the last
    /// date the database knows, source rows included).
    #[arg(long, value_name = "START..END")]
    pub interval: Option<String>,
    /// Judge dates by these models (and those downstream of them) only.
    #[arg(long, value_name = "MODEL[,MODEL...]", value_delimiter = ',', add = ArgValueCandidates::new(shell::model_names))]
    pub select: Vec<String>,
    /// A table, a line per date (computed by which run, stale or not, sealed,
    /// corrections, held by whom, last failure) instead of the summary and calendar.
    #[arg(long)]
    pub list: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The file to write (replaced whole; its folder must exist).
    #[arg(long, value_name = "FILE")]
    pub html: PathBuf,
    /// The dates to show, START..END or one date (default: from the first to the last
    /// date the database knows, source rows included).
    #[arg(long, value_name = "START..END")]
    pub interval: Option<String>,
    /// Only these models (and those downstream of them): a calendar and corrections each.
    #[arg(long, value_name = "MODEL[,MODEL...]", value_delimiter = ',', add = ArgValueCandidates::new(shell::model_names))]
    pub select: Vec<String>,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    /// One run: its dates as ranges per status, events and template versions (default:
    /// the list of runs).
    #[arg(add = ArgValueCandidates::new(shell::run_ids))]
    pub run_id: Option<i64>,
    /// How many runs to list, newest first.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    /// With RUN_ID: list each date on its own line instead of ranges.
    #[arg(long, requires = "run_id")]
    pub dates: bool,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The run (`sqlrun runs` lists them); or, instead, --model with --from and --to.
    #[arg(add = ArgValueCandidates::new(shell::run_ids), required_unless_present = "model")]
    pub run_id: Option<i64>,
    /// One model between two points of its history: its partitions as they stood once run
    /// --from was done, against once run --to was (needs --from and --to).
    #[arg(long, value_name = "MODEL", requires_all = ["from", "to"], conflicts_with_all = ["run_id", "select"], add = ArgValueCandidates::new(shell::model_names))]
    pub model: Option<String>,
    /// With --model: the earlier point, a run id.
    #[arg(long, value_name = "RUN_ID", requires = "model")]
    pub from: Option<i64>,
    /// With --model: the later point, a run id.
    #[arg(long, value_name = "RUN_ID", requires = "model")]
    pub to: Option<i64>,
    /// Only the partitions of these dates: START..END (both included), one date, a month
    /// or a year.
    #[arg(long, value_name = "START..END")]
    pub interval: Option<String>,
    /// Only these models (and every model downstream of them).
    #[arg(long, value_name = "MODEL[,MODEL...]", value_delimiter = ',', add = ArgValueCandidates::new(shell::model_names))]
    pub select: Vec<String>,
}

#[derive(Debug, Args)]
pub struct SealsArgs {
    /// One event (the id `sqlrun seal` printed).
    #[arg(add = ArgValueCandidates::new(shell::seal_ids))]
    pub seal_id: Option<i64>,
    /// How many events to list, newest first.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The date whose SQL to print.
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub date: String,
    /// Only this model's SELECT (or one check's query).
    #[arg(add = ArgValueCandidates::new(shell::model_and_check_names))]
    pub model: Option<String>,
    /// The date's transaction with only these models (and those downstream of them).
    #[arg(
        long,
        value_name = "MODEL[,MODEL...]",
        value_delimiter = ',',
        conflicts_with = "model",
        add = ArgValueCandidates::new(shell::model_names)
    )]
    pub select: Vec<String>,
    /// The backend whose SQL to show, whatever backend --db is.
    ///
    /// The database's own backend is rendered as without the flag. The other one is
    /// rendered from the pipeline loaded for it, without connecting: as for a date not
    /// sealed, a whole date's run as the placeholder :run_id.
    #[arg(long, value_enum, value_name = "DIALECT")]
    pub dialect: Option<DialectArg>,
}

/// The backend whose SQL `render --dialect` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DialectArg {
    Sqlite,
    Postgres,
}

impl From<DialectArg> for crate::db::Dialect {
    fn from(dialect: DialectArg) -> crate::db::Dialect {
        match dialect {
            DialectArg::Sqlite => crate::db::Dialect::Sqlite,
            DialectArg::Postgres => crate::db::Dialect::Postgres,
        }
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The dates to check, START..END or one date.
    #[arg(long, value_name = "START..END")]
    pub interval: String,
    /// Only the checks of these models (and of those downstream of them).
    #[arg(long, value_name = "MODEL[,MODEL...]", value_delimiter = ',', add = ArgValueCandidates::new(shell::model_names))]
    pub select: Vec<String>,
}

#[derive(Debug, Args)]
pub struct TemplatesArgs {
    /// Print a recorded version's text, e.g. `models/daily_revenue@2`.
    #[arg(long, value_name = "NAME@VERSION")]
    pub show: Option<String>,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Keep the story's database and pipeline in DIR (new or empty), as a project to
    /// look at afterwards: `cd DIR && sqlrun status`. SQLite only.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct HelpArgs {
    /// The command (none: sqlrun itself).
    #[arg(value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The table to load into; not a model's table (apply fills those) nor sqlrun's own.
    pub table: String,
    /// A CSV file (RFC 4180, UTF-8, comma-separated, header row first), or - for stdin.
    #[arg(value_name = "FILE|-")]
    pub file: String,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// One command's page (sqlrun-COMMAND(1)) instead of sqlrun(1).
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
    /// Write sqlrun.1 and sqlrun-COMMAND.1 for every command into DIR (created if missing).
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    Regular,
    Backfill,
}

impl From<Kind> for RunKind {
    fn from(kind: Kind) -> RunKind {
        match kind {
            Kind::Regular => RunKind::Regular,
            Kind::Backfill => RunKind::Backfill,
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
    /// Partitions built before a partition they read was rebuilt (a week, a month, a
    /// rolling day whose days changed under it): those alone are rebuilt.
    Upstream,
}

impl From<Only> for OnlyFilter {
    fn from(only: Only) -> OnlyFilter {
        match only {
            Only::Missing => OnlyFilter::Missing,
            Only::Failed => OnlyFilter::Failed,
            Only::Stale => OnlyFilter::Stale,
            Only::Changed => OnlyFilter::Changed,
            Only::Upstream => OnlyFilter::Upstream,
        }
    }
}

impl From<&ReserveArgs> for ReserveRequest {
    fn from(args: &ReserveArgs) -> ReserveRequest {
        ReserveRequest {
            interval: args.interval.clone(),
            by: args.by.clone(),
            reason: args.reason.clone(),
            hold_for: args.hold_for.clone(),
        }
    }
}

impl From<&SealArgs> for SealRequest {
    fn from(args: &SealArgs) -> SealRequest {
        SealRequest {
            interval: args.interval.clone(),
            reason: args.reason.clone(),
            by: args.by.clone(),
            action: match args.reissue {
                true => SealAction::Reissue,
                false => SealAction::Seal,
            },
            dry_run: args.dry_run,
        }
    }
}

impl From<&UnsealArgs> for SealRequest {
    fn from(args: &UnsealArgs) -> SealRequest {
        SealRequest {
            interval: args.interval.clone(),
            reason: args.reason.clone(),
            by: args.by.clone(),
            action: SealAction::Unseal,
            dry_run: args.dry_run,
        }
    }
}

impl From<&CorrectionsArgs> for FeedRequest {
    fn from(args: &CorrectionsArgs) -> FeedRequest {
        FeedRequest {
            interval: args.interval.clone(),
            select: args.select.clone(),
            since: args.since.clone(),
            format: match args.format {
                FeedFormat::Text => FeedShape::Text,
                FeedFormat::Json => FeedShape::Json,
                FeedFormat::Csv => FeedShape::Csv,
            },
        }
    }
}

impl From<&GenerateArgs> for GenerateRequest {
    fn from(args: &GenerateArgs) -> GenerateRequest {
        GenerateRequest {
            start: args.start.clone(),
            days: args.days,
            per_day: args.per_day,
            seed: args.seed,
        }
    }
}

impl From<&GlobalArgs> for Flags {
    fn from(args: &GlobalArgs) -> Flags {
        Flags {
            db: args.db.clone(),
            schema: args.schema.clone(),
            templates: args.templates.clone(),
            json: args.json,
            verbose: args.verbose,
        }
    }
}

impl From<&ApplyArgs> for crate::run::Request {
    fn from(args: &ApplyArgs) -> Self {
        crate::run::Request {
            interval: args.interval.clone(),
            as_of: args.as_of.clone(),
            kind: args.kind.map(RunKind::from),
            by: args.by.clone(),
            reason: args.reason.clone(),
            only: args.only.map(OnlyFilter::from),
            lookback: args.lookback,
            select: args.select.clone(),
            keep_going: args.keep_going,
            jobs: args.jobs,
            dry_run: args.dry_run,
            diff: args.diff,
            sql: args.sql,
            run: args.run,
            allow_partial_day: args.allow_partial_day,
            no_downstream: args.no_downstream,
            create: args.create,
            stop_within: args.stop_within,
            undo: None,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ApplyArgs {
    /// START..END (both included), one date, an ISO week (2026-W06), a month (2026-02), a
    /// quarter (2026-Q1), a year (2026) or hours (2026-02-09T05..2026-02-09T08); without
    /// it, the regular run for yesterday.
    #[arg(long, value_name = "START..END", conflicts_with = "run")]
    pub interval: Option<String>,

    /// The regular run's "today" (default: today, in UTC or the project's timezone, by the
    /// database's clock: on PostgreSQL the server's); it computes the day before. With
    /// --interval, it only says which periods have ended (a cascade builds those alone).
    /// An hour (2026-02-09T06): the run of the periods that end then (the hour before it;
    /// at midnight also the day, and a week or month that ends with it).
    #[arg(long, value_name = "YYYY-MM-DD[THH]", conflicts_with = "run")]
    pub as_of: Option<String>,

    /// Record the run as this kind (default: regular without --interval, else backfill).
    #[arg(long, value_enum, conflicts_with = "run")]
    pub kind: Option<Kind>,

    /// Who asked for the run (default: $USER, else the account).
    #[arg(long, value_name = "NAME", conflicts_with = "run")]
    pub by: Option<String>,

    /// Why (recorded in the audit trail).
    #[arg(long, value_name = "TEXT", conflicts_with = "run")]
    pub reason: Option<String>,

    /// Only the dates of the interval in this state (without --interval: of every date
    /// sqlrun knows, up to yesterday).
    #[arg(long, value_enum, conflicts_with = "run")]
    pub only: Option<Only>,

    /// Look back N days before the dates asked for (yesterday, or --interval's), and
    /// compute those of them that are missing, failed or changed (late data), besides every
    /// date asked for. Default: the project file's `[apply] lookback` (for a regular run
    /// only).
    #[arg(long, value_name = "N", conflicts_with = "run")]
    pub lookback: Option<u32>,

    /// Recompute only these models and every model downstream of them (in dependency
    /// order, in each date's transaction); the other models keep their rows. `MODEL+`
    /// (dbt's spelling) means the same.
    #[arg(long, value_name = "MODEL[,MODEL...]", value_delimiter = ',', add = ArgValueCandidates::new(shell::model_names))]
    pub select: Vec<String>,

    /// Go on after a failed date (the run still ends failed, exit 1).
    #[arg(long)]
    pub keep_going: bool,

    /// Compute up to N dates at once, each in its own database session (PostgreSQL)
    ///
    /// Each date is still one transaction; the dates are taken in ascending order. Refused
    /// on SQLite, which has one writer. Default: the project file's `[apply] jobs`, else 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_JOBS))]
    pub jobs: Option<u32>,

    /// Print the plan, dates as ranges per action; write nothing and claim no run id.
    #[arg(long)]
    pub dry_run: bool,

    /// Compute each date as the run would, in a transaction that is rolled back, and show
    /// what would change: per model and date, keys added, removed and changed, and each
    /// value column's total before, after and the delta. Writes nothing and claims no run
    /// id; no other run waits for it or skips a date because of it
    ///
    /// Takes the interval, --only, --lookback and --select of the run it previews. A sealed
    /// date is compared with what is true now (<table>_current): the run would record
    /// corrections there. Exits as the run would: 1 if a date would fail, 99 if one would
    /// be skipped (held by another run, sources not ready).
    #[arg(long)]
    pub diff: bool,

    /// With --dry-run: also print the SQL of each date it would compute (run_id as the
    /// placeholder :run_id, unless it is a reserved run's).
    #[arg(long, requires = "dry_run")]
    pub sql: bool,

    /// Carry out a run made earlier by `sqlrun reserve`.
    #[arg(long, value_name = "RUN_ID", add = ArgValueCandidates::new(shell::run_ids))]
    pub run: Option<i64>,

    /// Compute dates that have not ended yet without a word (started by a scheduler they
    /// are refused: it almost always passed the day that has just begun; by hand, warned);
    /// and build a week, month, ... that has not ended, which the cascade otherwise leaves.
    #[arg(long, visible_alias = "allow-partial")]
    pub allow_partial_day: bool,

    /// Build only the partitions asked for, not the downstream ones that read them (a
    /// weekly roll-up of a rebuilt day, the rolling days after it); recorded with the run.
    #[arg(long)]
    pub no_downstream: bool,

    /// Create the project's database if it does not exist yet (as `sqlrun init` does);
    /// without it, a database the project file names that is missing is refused (exit 2),
    /// so that a typo in `db` cannot start an empty one.
    #[arg(long)]
    pub create: bool,
    /// After a first SIGTERM/SIGINT, let the date in progress go on at most SECONDS, then
    /// roll it back (as a second signal does); 0: at once. Default: until the date ends
    ///
    /// A scheduler that kills after a grace period (Airflow: SIGKILL 5 s after its SIGTERM;
    /// Kubernetes: terminationGracePeriodSeconds) sets a bound below it, so that the run
    /// still ends whole: the date rolled back, the run recorded `interrupted`, exit 143/130.
    #[arg(long, value_name = "SECONDS", env = "SQLRUN_STOP_WITHIN")]
    pub stop_within: Option<u32>,
}

#[derive(Debug, Clone, Args)]
pub struct ReserveArgs {
    /// The dates to hold, START..END (both included), one date, a month or a year.
    #[arg(long, value_name = "START..END")]
    pub interval: String,
    /// Who reserves them (default: $USER, else the account).
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    /// Why (recorded in the audit trail).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Hold the dates for this long (e.g. 90m, 2h, 1d); default: until `apply --run` or `release`.
    #[arg(long = "for", value_name = "DURATION")]
    pub hold_for: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct SealArgs {
    /// The dates that went out, START..END (both included), one date, a month or a year.
    #[arg(long, value_name = "START..END")]
    pub interval: String,
    /// Why these dates are sealed (what went out). Required.
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// Who seals them (default: $USER, else the account).
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    /// Send the current values of sealed dates again: a new version of each.
    #[arg(long)]
    pub reissue: bool,
    /// Say what would be sealed (or reissued) and what blocks it; write nothing (exit 2
    /// when it would be refused).
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Args)]
pub struct UnsealArgs {
    /// The sealed dates to make ordinary again, START..END (both included), one date, a
    /// month or a year.
    #[arg(long, value_name = "START..END")]
    pub interval: String,
    /// Why (recorded in the audit trail). Required.
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// Who unseals them (default: $USER, else the account).
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    /// Say what would be unsealed and what blocks it; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CorrectionsArgs {
    /// Only the corrections of these dates, START..END or one date.
    #[arg(long, value_name = "START..END")]
    pub interval: Option<String>,
    /// Only these models' corrections.
    #[arg(long, value_name = "MODEL[,MODEL...]", value_delimiter = ',', add = ArgValueCandidates::new(shell::model_names))]
    pub select: Vec<String>,
    /// Only those written after seal event SEAL went out (the id `sqlrun seal` prints), or
    /// at or after a time: `YYYY-MM-DD HH:MM:SS` or `YYYY-MM-DDTHH:MM:SS`, UTC unless an
    /// offset (`+01:00`, `Z`) is given.
    #[arg(long, value_name = "SEAL|TIMESTAMP", add = ArgValueCandidates::new(shell::seal_ids))]
    pub since: Option<String>,
    /// text (a table per model), json (as --json) or csv (a line per value changed).
    #[arg(long, value_enum, default_value_t = FeedFormat::Text)]
    pub format: FeedFormat,
}

/// How `sqlrun corrections` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FeedFormat {
    Text,
    Json,
    Csv,
}

#[derive(Debug, Clone, Args)]
pub struct GenerateArgs {
    /// The first order date.
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub start: String,
    /// How many dates, from --start on.
    #[arg(long, value_name = "N", default_value_t = 14)]
    pub days: u32,
    /// Orders per date (besides re-sent records and refunds).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub per_day: u32,
    /// The random seed: the same seed gives the same orders.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
}

/// `sqlrun help [COMMAND...]`: the long help of sqlrun or of a (sub)command.
pub fn help_text(path: &[String]) -> Result<String, String> {
    use clap::CommandFactory;
    let mut command = Cli::command();
    // Built, a subcommand has the global flags and its full name, as `--help` shows it.
    command.build();
    for name in path {
        let names: Vec<String> = command
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        command = command.find_subcommand(name).cloned().ok_or_else(|| {
            format!(
                "no command `{name}`; the commands are: {}",
                names.join(", ")
            )
        })?;
    }
    Ok(command.render_long_help().to_string())
}

/// Whether `--json` was given, read off the raw arguments: a command line clap refused
/// still gets its error as JSON. Arguments after `--` are values, not flags.
pub fn json_requested(args: impl IntoIterator<Item = std::ffi::OsString>) -> bool {
    args.into_iter()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    /// Every flag and argument of every command says what it is for.
    #[test]
    fn every_flag_and_argument_has_a_help_line() {
        fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in command.get_arguments() {
                if arg.get_help().is_none() && !matches!(arg.get_id().as_str(), "help" | "version")
                {
                    missing.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in command.get_subcommands() {
                if sub.get_about().is_none() {
                    missing.push(format!("{path} {} (the command)", sub.get_name()));
                }
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "sqlrun", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:#?}");
    }

    #[test]
    fn json_is_read_off_the_raw_arguments_before_a_double_dash() {
        let args = |list: &[&str]| {
            list.iter()
                .map(std::ffi::OsString::from)
                .collect::<Vec<_>>()
        };
        assert!(json_requested(args(&[
            "sqlrun", "apply", "--json", "--bogus"
        ])));
        assert!(!json_requested(args(&["sqlrun", "render", "--", "--json"])));
        assert!(!json_requested(args(&["--json"])), "argv[0] is the program");
    }
}
