//! The contract's words for statuses, run kinds and `--only` filters, each spelt in one
//! place: the state store keeps these strings, JSON and text print them.

use serde::Serialize;

/// An enum whose every variant has one contract string: `as_str`, `parse`, `Display` and
/// `ALL` come from the one list.
macro_rules! vocabulary {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The value as the state store spells it.
            pub fn parse(text: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|v| v.as_str() == text)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        /// Read from the state store's spelling (a column of a row), as `parse`.
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <String as serde::Deserialize>::deserialize(d)?;
                $name::parse(&text).ok_or_else(|| {
                    serde::de::Error::custom(format!(
                        "holds `{text}`, which sqlrun does not know"
                    ))
                })
            }
        }
    };
}

vocabulary! {
    /// How a date ended in a run (`run_partitions.status`).
    DateStatus {
        Success => "success",
        /// A sealed date whose recomputed value differed: a correction row was written.
        Corrected => "corrected",
        /// A sealed date whose recomputed value was the same.
        Unchanged => "unchanged",
        /// Another live run holds it.
        Skipped => "skipped",
        Failed => "failed",
    }
}

vocabulary! {
    /// Where a run is in its life (`runs.status`).
    RunStatus {
        /// Made by `sqlrun reserve`, not started.
        Reserved => "reserved",
        Running => "running",
        Success => "success",
        /// Finished; some dates were skipped because another live run held them.
        Partial => "partial",
        Failed => "failed",
        /// Stopped by a signal, or its process died and a later run found out.
        Interrupted => "interrupted",
        Released => "released",
    }
}

vocabulary! {
    /// Why a run was made (`runs.kind`): the daily run, or a backfill of an interval.
    RunKind {
        Regular => "regular",
        Backfill => "backfill",
        /// `sqlrun undo RUN`: puts back what RUN replaced.
        Undo => "undo",
    }
}

vocabulary! {
    /// `apply --only`: which dates of the interval a run computes.
    OnlyFilter {
        /// Dates never computed.
        Missing => "missing",
        /// Dates whose latest attempt failed.
        Failed => "failed",
        /// Dates built by an older version of a model.
        Stale => "stale",
        /// Dates whose source rows changed since they were built (late data).
        Changed => "changed",
        /// Dates with a partition built before a partition it reads was rebuilt.
        Upstream => "upstream",
    }
}

vocabulary! {
    /// A date's state in one word, the first that applies in this order of
    /// `system/date_states.sql` (held, failed, missing, changed, upstream, corrected, sealed,
    /// stale, computed): what the calendar's cell, `status --list` and `status --json` say of it.
    /// Listed here in the order the summary and the legend show them.
    State {
        /// Computed by the models' current versions, nothing else to say.
        Computed => "computed",
        /// Computed and sealed (its numbers went out).
        Sealed => "sealed",
        /// Sealed, and a later run found other numbers: corrections were written.
        Corrected => "corrected",
        /// A source row of the date changed after it was computed (late data).
        Changed => "changed",
        /// A partition of it was built before a partition it reads was rebuilt, by
        /// another run (a `--no-downstream` run, a run stopped before its cascade ended).
        Upstream => "upstream",
        /// Computed by another version of a model in scope.
        Stale => "stale",
        /// Never computed, or a model in scope has no rows on it.
        Missing => "missing",
        /// Its latest attempt failed (rows from an earlier build, if any, stay).
        Failed => "failed",
        /// A run holds it now (reserved or running).
        Held => "held",
    }
}

vocabulary! {
    /// Where one model in scope stands on one date (`system/date_states.sql`).
    ModelState {
        Current => "current",
        /// Built by another version of the model.
        Stale => "stale",
        /// Built before a partition it reads was rebuilt by another run.
        Upstream => "upstream",
        /// The date has no rows of this model's (never computed, or computed before the
        /// model existed).
        Missing => "missing",
        /// The date's latest attempt failed in this model's statement (its rows, if any,
        /// are from an earlier build).
        Failed => "failed",
    }
}

vocabulary! {
    /// Where one partition of a model coarser than the day stands
    /// (`system/partition_states.sql`).
    PartitionState {
        Computed => "computed",
        /// Built before its period ended (`--allow-partial`): never sealed.
        Provisional => "provisional",
        /// Built before a partition it reads was rebuilt by another run.
        Upstream => "upstream",
        /// Built by another version of the model.
        Stale => "stale",
        /// Not built.
        Missing => "missing",
    }
}

vocabulary! {
    /// Why a date would be computed: where it stands now, in the order `--only` would
    /// name it (`system/date_states.sql`: a date never built is missing whatever else is
    /// true of it).
    Reason {
        /// Never computed, or a model in scope has no rows on it.
        Missing => "missing",
        /// Its latest attempt failed.
        Failed => "failed",
        /// A source it reads changed since it was built (late data).
        Changed => "changed",
        /// A partition it reads was rebuilt after it, by another run.
        Upstream => "upstream",
        /// Built by an older version of a model.
        Stale => "stale",
        /// Up to date: computed again because the interval asks for it.
        Current => "current",
    }
}

vocabulary! {
    /// What a failing check does (`-- severity:` in a check's header).
    Severity {
        /// The date rolls back and is recorded failed (the default).
        Error => "error",
        /// The date commits; the failure is recorded and said.
        Warn => "warn",
    }
}

vocabulary! {
    /// What the checks said of a date's latest attempt (`system/date_states.sql`).
    CheckMark {
        /// Its latest attempt failed an error check (rolled back).
        Failed => "failed",
        /// Its latest build committed with warn checks failing.
        Warned => "warned",
    }
}

/// What a run would do to one date. Spelt by hand rather than by `vocabulary!`: `ALL` is
/// an array here, which the plan's counts iterate by value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Never computed (or a model in scope has no rows on it): its partition is written.
    Compute,
    /// Computed before: its partition is replaced whole.
    Recompute,
    /// Sealed: recomputed and compared; a different value becomes a correction row, an
    /// equal one changes nothing.
    CorrectIfChanged,
    /// Another live run holds it: skipped and reported (exit 99).
    SkipHeld,
    /// Held by a run that is gone: reclaimed (recorded), then computed.
    ReclaimAndCompute,
    /// Held by a run that is gone, and sealed: reclaimed, then corrected if changed.
    ReclaimAndCorrect,
    /// In the interval, but `--only` or `--lookback` leaves it out (or, for
    /// `apply --run`, the reserved run does not hold it).
    NotSelected,
}

impl Action {
    pub const ALL: [Action; 7] = [
        Action::Compute,
        Action::Recompute,
        Action::CorrectIfChanged,
        Action::SkipHeld,
        Action::ReclaimAndCompute,
        Action::ReclaimAndCorrect,
        Action::NotSelected,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Action::Compute => "compute",
            Action::Recompute => "recompute",
            Action::CorrectIfChanged => "correct_if_changed",
            Action::SkipHeld => "skip_held",
            Action::ReclaimAndCompute => "reclaim_and_compute",
            Action::ReclaimAndCorrect => "reclaim_and_correct",
            Action::NotSelected => "not_selected",
        }
    }

    pub fn parse(text: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.as_str() == text)
    }

    /// Whether the date's SQL would run (so `--sql` shows it).
    pub fn computes(self) -> bool {
        !matches!(self, Action::SkipHeld | Action::NotSelected)
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// JSON spells each action as `as_str` does: one spelling.
impl Serialize for Action {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Read from a row (`system/date_states.sql`'s `action`), as `parse`.
impl<'de> serde::Deserialize<'de> for Action {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        Action::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!("holds `{text}`, which sqlrun does not know"))
        })
    }
}

impl RunStatus {
    /// Whether a run in this state may still hold dates.
    pub fn may_hold(self) -> bool {
        matches!(self, RunStatus::Reserved | RunStatus::Running)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_word_parses_back() {
        for s in DateStatus::ALL {
            assert_eq!(DateStatus::parse(s.as_str()), Some(*s));
        }
        for s in RunStatus::ALL {
            assert_eq!(RunStatus::parse(&s.to_string()), Some(*s));
        }
        assert_eq!(RunKind::parse("backfill"), Some(RunKind::Backfill));
        assert_eq!(OnlyFilter::parse("stale"), Some(OnlyFilter::Stale));
        assert_eq!(RunStatus::parse("done"), None);
        assert_eq!(
            serde_json::to_string(&RunStatus::Partial).unwrap(),
            "\"partial\""
        );
    }

    #[test]
    fn words_read_as_parse_reads_them() {
        let read = |text: &str| serde_json::from_value::<RunStatus>(text.into());
        assert_eq!(read("partial").unwrap(), RunStatus::Partial);
        let e = read("done").unwrap_err().to_string();
        assert!(
            e.contains("holds `done`, which sqlrun does not know"),
            "{e}"
        );
        let action = serde_json::from_value::<Action>("correct_if_changed".into());
        assert_eq!(action.unwrap(), Action::CorrectIfChanged);
    }
}

vocabulary! {
    /// What a seal event did (`seal_events.action`).
    SealAction {
        /// `sqlrun seal`: the first version of its dates went out.
        Seal => "seal",
        /// `sqlrun seal --reissue`: their current values went out again, a new version.
        Reissue => "reissue",
        /// `sqlrun unseal`: its dates became ordinary again.
        Unseal => "unseal",
    }
}

vocabulary! {
    /// What made a correction (`<table>_corrections.cause`).
    Cause {
        /// Source rows of its date changed after the date was built (late data).
        LateRows => "late_rows",
        /// The model's version differs from the one that built the date.
        NewVersion => "new_version",
        LateRowsAndNewVersion => "late_rows+new_version",
        /// Neither: a rerun with the same inputs and version gave other values.
        Rerun => "rerun",
        /// Not a new version, and the model declares no `-- sources:`: whether its
        /// inputs changed is not tracked.
        Untracked => "untracked",
    }
}

impl Cause {
    /// The cause as a reader says it.
    pub fn said(self) -> &'static str {
        match self {
            Cause::LateRows => "late source rows",
            Cause::NewVersion => "new model version",
            Cause::LateRowsAndNewVersion => "late source rows and a new model version",
            Cause::Rerun => "rerun with the same inputs",
            Cause::Untracked => "inputs not tracked (no -- sources:)",
        }
    }
}

vocabulary! {
    /// What the life of a date's seal says beyond sealed (`status`, the calendar).
    SealMark {
        /// Sealed, and its current values went out again: version 2 or later.
        Reissued => "reissued",
        /// Not sealed now: an unseal made it ordinary again.
        Unsealed => "unsealed",
    }
}
