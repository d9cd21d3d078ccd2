//! What the state store says about dates: each date's state (built by whom, failed,
//! sealed, held), the dates a run skipped, and the dates it reclaimed. Plain values that
//! the domain fills and the output prints.

use crate::text::words::OnlyFilter;
use crate::text::words::{
    Action, CheckMark, DateStatus, ModelState, Reason, RunKind, RunStatus, SealMark, State,
};

/// What the state store knows about one date, and what `system/date_states.sql` judged
/// of it (`judged`): Rust only maps the template's columns, it decides nothing here.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DateState {
    pub ds: String,
    pub built_run: Option<i64>,
    pub built_kind: Option<RunKind>,
    pub built_at: Option<String>,
    pub built_models: Option<String>,
    pub last_run: Option<i64>,
    pub last_status: Option<DateStatus>,
    pub last_error: Option<String>,
    pub sealed_at: Option<String>,
    pub sealed_by: Option<String>,
    pub corrections: i64,
    pub held_by: Option<i64>,
    pub held_since: Option<String>,
    pub held_until: Option<String>,
    pub holder_kind: Option<RunKind>,
    pub holder_by: Option<String>,
    pub holder_status: Option<RunStatus>,
    /// A source it reads changed since its latest build (or it was never built).
    pub source_changed: bool,
    /// The model whose statement failed in its latest attempt, if that failed.
    pub failed_model: Option<String>,
    /// What its checks said: its latest attempt failed an error check, or its latest
    /// build committed with warnings.
    pub checks: Option<CheckMark>,
    /// Its latest seal event (seal or reissue), while it is sealed.
    pub seal_id: Option<i64>,
    /// How many versions of it went out (1: the first report; 2 and on: reissued).
    pub seal_version: Option<i64>,
    /// Not sealed now, and an unseal made it ordinary.
    pub unsealed: bool,
    /// Sealed, and a reissue sent its latest version (of some model).
    pub reissued: bool,
    /// The template's judgement (the JSON of `status` prints it in its own fields).
    #[serde(skip)]
    pub judged: Judged,
}

/// What `system/date_states.sql` says of a date, for the models in scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    pub computed: bool,
    pub failed: bool,
    /// Never computed, or a model in scope has no rows on it (`--only missing`).
    pub missing: bool,
    /// Computed, and a model in scope is stale or missing (`--only stale`).
    pub stale: bool,
    /// Computed, and a source it reads changed since (`--only changed`).
    pub changed: bool,
    /// Computed, and a partition of it was built before a partition it reads was rebuilt
    /// by another run (`--only upstream`).
    pub upstream: bool,
    pub sealed: bool,
    /// The date in one word: the calendar's cell, status's `state`.
    pub state: State,
    /// Why apply would compute it.
    pub reason: Reason,
    /// What apply does to it when no other run holds it.
    pub action: Action,
    /// Never computed, failed or changed: what a look back heals.
    pub needs_work: bool,
    /// Why a look back takes it.
    pub lookback_reason: Reason,
    /// `--lookback` takes it: the newest date, or an older free one that needs work.
    pub lookback: bool,
    /// Each model in scope (its name without `models/`) and where it stands.
    pub models: Vec<(String, ModelState)>,
    /// The models in scope a source they read (through their window) changed for.
    pub changed_models: Vec<String>,
}

impl Default for Judged {
    /// A date the state store knows nothing of.
    fn default() -> Self {
        Judged {
            computed: false,
            failed: false,
            missing: true,
            stale: false,
            changed: false,
            upstream: false,
            sealed: false,
            state: State::Missing,
            reason: Reason::Missing,
            action: Action::Compute,
            needs_work: true,
            lookback_reason: Reason::Missing,
            lookback: false,
            models: Vec::new(),
            changed_models: Vec::new(),
        }
    }
}

impl DateState {
    pub fn computed(&self) -> bool {
        self.judged.computed
    }

    pub fn sealed(&self) -> bool {
        self.judged.sealed
    }

    /// Reissued (sealed, its latest version sent by a reissue) or unsealed.
    pub fn seal_mark(&self) -> Option<SealMark> {
        match self.judged.sealed {
            true if self.reissued => Some(SealMark::Reissued),
            false if self.unsealed => Some(SealMark::Unsealed),
            _ => None,
        }
    }

    /// Whether the run's selection takes the date, as the template judged it (for the
    /// models in the scope it was given).
    pub fn selected_by(&self, selection: &Selection) -> bool {
        let j = &self.judged;
        match selection {
            Selection::Only(None) => true,
            Selection::Only(Some(OnlyFilter::Missing)) => j.missing,
            Selection::Only(Some(OnlyFilter::Failed)) => j.failed,
            Selection::Only(Some(OnlyFilter::Stale)) => j.stale,
            Selection::Only(Some(OnlyFilter::Changed)) => j.changed,
            Selection::Only(Some(OnlyFilter::Upstream)) => j.upstream,
            // Each date asked for; before them, the template's look back (a free date
            // that needs work).
            Selection::Lookback { .. } => !selection.looks_back_at(&self.ds) || j.lookback,
        }
    }

    /// The models a run rebuilds on this date when its selection takes it for `upstream`
    /// or `changed` alone (`--only upstream|changed`, or a look back's older date that needs
    /// nothing else): those standing upstream, or whose sources changed, and not the
    /// others. None: every model (also where a model is missing, failed or stale there, or
    /// where none is named).
    pub fn narrowed_to(&self, selection: &Selection) -> Option<Vec<String>> {
        let j = &self.judged;
        let upstream = j.models.iter().filter(|(_, s)| *s == ModelState::Upstream);
        let upstream = upstream.map(|(name, _)| name.clone());
        let changed = j.changed_models.iter().cloned();
        let some: Vec<String> = match selection {
            Selection::Only(Some(OnlyFilter::Upstream)) => upstream.collect(),
            Selection::Only(Some(OnlyFilter::Changed)) => changed.collect(),
            Selection::Lookback { .. }
                if selection.looks_back_at(&self.ds)
                    && matches!(j.lookback_reason, Reason::Changed | Reason::Upstream) =>
            {
                upstream.chain(changed).collect()
            }
            _ => return None,
        };
        let otherwise_current = j
            .models
            .iter()
            .all(|(_, s)| matches!(s, ModelState::Current | ModelState::Upstream));
        // None named (a changed source that no model in scope reads): the whole date, as
        // before, rather than a date that builds nothing and stays changed.
        (otherwise_current && !some.is_empty()).then_some(some)
    }

    /// Missing, failed, changed or upstream: what a look back heals.
    pub fn needs_work(&self) -> bool {
        self.judged.needs_work
    }

    /// Why a look back computes a date, in the words of its note.
    pub fn reason(&self) -> &'static str {
        match self.judged.lookback_reason {
            Reason::Missing => "missing",
            Reason::Failed => "last attempt failed",
            Reason::Changed => "changed",
            Reason::Upstream => "upstream (a partition it reads was rebuilt after it)",
            Reason::Stale => "stale",
            Reason::Current => "recompute",
        }
    }
}

/// Which dates of its interval a run takes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// Every date, or those in one state (`--only`).
    Only(Option<OnlyFilter>),
    /// `--lookback N`: every date asked for (yesterday, or `--interval`'s), from `first`
    /// on; each of the N days before `first` only when it is missing, failed or changed,
    /// and no other run holds it (a holder is on it).
    Lookback { first: String, days: u32 },
}

impl Selection {
    /// `--only`, as the run records it.
    pub fn only(&self) -> Option<OnlyFilter> {
        match self {
            Selection::Only(only) => *only,
            Selection::Lookback { .. } => None,
        }
    }

    /// Whether `ds` is one of the days a look back heals (before the dates asked for),
    /// rather than one asked for.
    pub fn looks_back_at(&self, ds: &str) -> bool {
        // `YYYY-MM-DD` sorts as the calendar does.
        matches!(self, Selection::Lookback { first, .. } if ds < first.as_str())
    }

    /// `--lookback`, as the run records it.
    pub fn lookback(&self) -> Option<u32> {
        match self {
            Selection::Lookback { days, .. } => Some(*days),
            Selection::Only(_) => None,
        }
    }
}

/// A reclaim, for the report on stderr.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Reclaim {
    pub run_id: i64,
    pub why: String,
    pub dates: Vec<String>,
}

/// A skipped date and who holds it (a row of `queries/skipped_of_run.sql`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Skip {
    pub ds: String,
    pub held_by: Option<i64>,
    pub holder_kind: Option<String>,
    pub holder_by: Option<String>,
    pub holder_status: Option<String>,
    pub held_since: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A date as the template judged it for a look back (`lookback`: free and needing
    /// work, or the template's newest date) and whether it is missing.
    fn date(ds: &str, lookback: bool, missing: bool) -> DateState {
        DateState {
            ds: ds.into(),
            judged: Judged {
                lookback,
                missing,
                ..Judged::default()
            },
            ..DateState::default()
        }
    }

    fn lookback(first: &str, days: u32) -> Selection {
        Selection::Lookback {
            first: first.into(),
            days,
        }
    }

    #[test]
    fn a_look_back_takes_every_date_asked_and_the_older_ones_that_need_work() {
        let window = lookback("2026-11-28", 3);
        // Asked for: taken whatever the template says (a held one is the planner's).
        assert!(date("2026-11-28", false, false).selected_by(&window));
        assert!(date("2026-11-30", false, false).selected_by(&window));
        // Before them: only what the template's look back takes.
        assert!(date("2026-11-27", true, true).selected_by(&window));
        assert!(!date("2026-11-25", false, false).selected_by(&window));
        assert!(window.looks_back_at("2026-11-27") && !window.looks_back_at("2026-11-28"));
        assert_eq!((window.lookback(), window.only()), (Some(3), None));
    }

    /// A computed date where `rolling7` stands upstream, `weekly` as `weekly`, and the
    /// sources of `changed` changed.
    fn judged(weekly: ModelState, changed: &[&str], reason: Reason) -> DateState {
        DateState {
            ds: "2026-02-11".into(),
            judged: Judged {
                computed: true,
                missing: false,
                lookback_reason: reason,
                models: vec![
                    ("daily".into(), ModelState::Current),
                    ("rolling7".into(), ModelState::Upstream),
                    ("weekly".into(), weekly),
                ],
                changed_models: changed.iter().map(|m| m.to_string()).collect(),
                ..Judged::default()
            },
            ..DateState::default()
        }
    }

    #[test]
    fn a_date_taken_for_upstream_or_changed_alone_rebuilds_those_models_alone() {
        let current = ModelState::Current;
        let only = |f| Selection::Only(Some(f));
        let date = judged(current, &["daily"], Reason::Changed);
        assert_eq!(
            date.narrowed_to(&only(OnlyFilter::Upstream)),
            Some(vec!["rolling7".to_string()])
        );
        assert_eq!(
            date.narrowed_to(&only(OnlyFilter::Changed)),
            Some(vec!["daily".to_string()])
        );
        // A look back's older date: both; a date it was asked for: every model.
        let window = lookback("2026-02-20", 14);
        assert_eq!(
            date.narrowed_to(&window),
            Some(vec!["rolling7".to_string(), "daily".to_string()])
        );
        assert_eq!(date.narrowed_to(&lookback("2026-02-11", 14)), None);
        assert_eq!(date.narrowed_to(&only(OnlyFilter::Stale)), None);
        // Another model stale, or nothing named: the whole date.
        let stale = judged(ModelState::Stale, &["daily"], Reason::Changed);
        assert_eq!(stale.narrowed_to(&only(OnlyFilter::Changed)), None);
        let unread = judged(current, &[], Reason::Changed);
        assert_eq!(unread.narrowed_to(&only(OnlyFilter::Changed)), None);
    }

    #[test]
    fn only_takes_the_dates_in_its_state_and_never_looks_back() {
        let missing = Selection::Only(Some(OnlyFilter::Missing));
        assert!(date("2026-11-27", false, true).selected_by(&missing));
        assert!(!date("2026-11-27", true, false).selected_by(&missing));
        assert!(!missing.looks_back_at("2026-01-01"));
        assert_eq!(
            (missing.lookback(), missing.only()),
            (None, Some(OnlyFilter::Missing))
        );
    }
}
