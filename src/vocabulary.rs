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
}
