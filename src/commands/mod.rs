//! One file per subcommand: each reads its request, calls the domain, and hands the
//! result to output. What every command that touches the database does first is in
//! open.rs, once: settings → pipeline → database → sync, as the command's access asks.

pub mod apply;
pub mod check;
pub mod completions;
pub mod corrections;
pub mod demo;
pub mod diff;
pub mod generate;
pub mod help;
pub mod init;
pub mod load;
pub mod man;
pub mod new;
pub mod open;
pub mod release;
pub mod render;
pub mod report;
pub mod reserve;
pub mod retire;
pub mod runs;
pub mod seal;
pub mod seals;
pub mod status;
pub mod templates;
pub mod undo;

use crate::error::Result;
use crate::output::Output;
use crate::project::settings::{Flags, Settings};

/// What every command is given besides its request: the global flags as the command line
/// had them. A command that works on a project's database asks it for its settings.
pub struct Context {
    pub flags: Flags,
}

impl Context {
    /// The settings of a command that works on a project's database: the flags, the
    /// environment, then the project file found from here upward.
    pub fn settings(&self, out: &Output) -> Result<Settings> {
        let settings = crate::project::resolve_here(&self.flags)?;
        if let Some(path) = settings.project.as_deref().filter(|_| out.verbose > 0) {
            out.note(&format!("project file {}", path.display()));
        }
        Ok(settings)
    }
}
