//! Each command's arguments turned into its plain request, here where clap's types are:
//! the commands below receive values, never clap's. Help, man pages and completion
//! scripts are rendered from the command line's definition here too.

use super::*;
use crate::commands::check::CheckRequest;
use crate::commands::completions::Script;
use crate::commands::demo::DemoRequest;
use crate::commands::diff::{DiffOf, DiffRequest};
use crate::commands::help::HelpRequest;
use crate::commands::init::InitRequest;
use crate::commands::load::LoadRequest;
use crate::commands::man::ManRequest;
use crate::commands::new::NewRequest;
use crate::commands::release::ReleaseRequest;
use crate::commands::render::RenderRequest;
use crate::commands::report::ReportRequest;
use crate::commands::runs::RunsRequest;
use crate::commands::seals::SealsRequest;
use crate::commands::status::StatusRequest;
use crate::commands::templates::TemplatesRequest;
use crate::commands::undo::UndoRequest;
use crate::error::Error;
use crate::pipeline::models::RetireRequest;

impl From<&NewArgs> for NewRequest {
    fn from(args: &NewArgs) -> Self {
        NewRequest {
            dir: args.dir.clone(),
        }
    }
}

impl From<&InitArgs> for InitRequest {
    fn from(_: &InitArgs) -> Self {
        InitRequest
    }
}

impl From<&UndoArgs> for UndoRequest {
    fn from(args: &UndoArgs) -> Self {
        UndoRequest {
            run_id: args.run_id,
            interval: args.interval.clone(),
            reason: args.reason.clone(),
            by: args.by.clone(),
            dry_run: args.dry_run,
        }
    }
}

impl From<&ReleaseArgs> for ReleaseRequest {
    fn from(args: &ReleaseArgs) -> Self {
        ReleaseRequest {
            run_id: args.run_id,
            by: args.by.clone(),
        }
    }
}

impl From<&RetireArgs> for RetireRequest {
    fn from(args: &RetireArgs) -> Self {
        RetireRequest {
            model: args.model.clone(),
            reason: args.reason.clone(),
            by: args.by.clone(),
        }
    }
}

impl From<&StatusArgs> for StatusRequest {
    fn from(args: &StatusArgs) -> Self {
        StatusRequest {
            interval: args.interval.clone(),
            select: args.select.clone(),
            list: args.list,
        }
    }
}

impl From<&ReportArgs> for ReportRequest {
    fn from(args: &ReportArgs) -> Self {
        ReportRequest {
            html: args.html.clone(),
            interval: args.interval.clone(),
            select: args.select.clone(),
        }
    }
}

impl From<&RunsArgs> for RunsRequest {
    fn from(args: &RunsArgs) -> Self {
        RunsRequest {
            run_id: args.run_id,
            limit: args.limit,
            each_date: args.dates,
        }
    }
}

impl From<&DiffArgs> for DiffRequest {
    fn from(args: &DiffArgs) -> Self {
        let what = match (&args.model, args.from, args.to, args.run_id) {
            (Some(model), Some(from), Some(to), _) => DiffOf::Between {
                model: model.clone(),
                from,
                to,
            },
            // clap asks for RUN_ID unless --model, and --model needs --from and --to.
            (_, _, _, run_id) => DiffOf::Run(run_id.unwrap_or_default()),
        };
        DiffRequest {
            what,
            interval: args.interval.clone(),
            select: args.select.clone(),
        }
    }
}

impl From<&SealsArgs> for SealsRequest {
    fn from(args: &SealsArgs) -> Self {
        SealsRequest {
            seal_id: args.seal_id,
            limit: args.limit,
        }
    }
}

impl From<&RenderArgs> for RenderRequest {
    fn from(args: &RenderArgs) -> Self {
        RenderRequest {
            date: args.date.clone(),
            model: args.model.clone(),
            select: args.select.clone(),
            dialect: args.dialect.map(Into::into),
        }
    }
}

impl From<&CheckArgs> for CheckRequest {
    fn from(args: &CheckArgs) -> Self {
        CheckRequest {
            interval: args.interval.clone(),
            select: args.select.clone(),
        }
    }
}

impl From<&TemplatesArgs> for TemplatesRequest {
    fn from(args: &TemplatesArgs) -> Self {
        TemplatesRequest {
            show: args.show.clone(),
        }
    }
}

impl From<&DemoArgs> for DemoRequest {
    fn from(args: &DemoArgs) -> Self {
        DemoRequest {
            keep: args.keep.clone(),
        }
    }
}

impl From<&LoadArgs> for LoadRequest {
    fn from(args: &LoadArgs) -> Self {
        LoadRequest {
            table: args.table.clone(),
            file: args.file.clone(),
        }
    }
}

impl TryFrom<&HelpArgs> for HelpRequest {
    type Error = Error;

    fn try_from(args: &HelpArgs) -> Result<Self, Error> {
        let text = help_text(&args.command).map_err(Error::BadInput)?;
        Ok(HelpRequest { text })
    }
}

impl TryFrom<&CompletionsArgs> for Script {
    type Error = Error;

    fn try_from(args: &CompletionsArgs) -> Result<Self, Error> {
        shell::completion(args.shell)
    }
}

impl TryFrom<&ManArgs> for ManRequest {
    type Error = Error;

    fn try_from(args: &ManArgs) -> Result<Self, Error> {
        Ok(ManRequest {
            pages: shell::pages(args.command.as_deref(), args.dir.is_some())?,
            dir: args.dir.clone(),
        })
    }
}
