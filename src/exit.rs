//! How sqlrun ends, as the contract numbers it (CONTRACT §exit codes). Every command
//! returns one of these; errors map to theirs in `Error::exit`.

/// The outcome a process reports to whoever started it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything asked was done.
    Done,
    /// A date failed (earlier dates stay committed), or the run stopped at a date.
    Failed,
    /// Bad input or settings: nothing was written.
    BadInput,
    /// Some dates were skipped because another run holds them.
    Skipped,
    /// Stopped by a signal (its number): 128 + it, as a shell reports it.
    Signal(i32),
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Done => 0,
            Exit::Failed => 1,
            Exit::BadInput => 2,
            Exit::Skipped => 99,
            Exit::Signal(sig) => 128u8.saturating_add(u8::try_from(sig).unwrap_or(0)),
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit.code())
    }
}

#[cfg(test)]
mod tests {
    use super::Exit;

    #[test]
    fn codes_follow_the_contract() {
        let codes: Vec<u8> = [Exit::Done, Exit::Failed, Exit::BadInput, Exit::Skipped]
            .into_iter()
            .map(Exit::code)
            .collect();
        assert_eq!(codes, [0, 1, 2, 99]);
        assert_eq!(Exit::Signal(2).code(), 130);
        assert_eq!(Exit::Signal(15).code(), 143);
    }
}
