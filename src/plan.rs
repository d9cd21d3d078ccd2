//! What `apply` would do to each date of its interval, as `--dry-run` shows it: an action
//! from a fixed vocabulary and, for a date that would be computed, why. The words are the
//! ones `--json` prints and the README lists; they are spelt in one place, here.

use serde::Serialize;

use crate::dates::DateState;

/// What a run would do to one date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Why a date would be computed: where it stands now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Never computed, or a model in scope has no rows on it.
    Missing,
    /// Its latest attempt failed.
    Failed,
    /// A source it reads changed since it was built (late data).
    Changed,
    /// Built by an older version of a model.
    Stale,
    /// Up to date: computed again because the interval asks for it.
    Current,
}

impl Reason {
    /// In the order `--only` would name it: a date never built is missing whatever else
    /// is true of it.
    pub fn of(state: &DateState, signature: &str) -> Reason {
        if state.missing(signature) {
            Reason::Missing
        } else if state.failed() {
            Reason::Failed
        } else if state.changed() {
            Reason::Changed
        } else if state.stale(signature) {
            Reason::Stale
        } else {
            Reason::Current
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Missing => "missing",
            Reason::Failed => "failed",
            Reason::Changed => "changed",
            Reason::Stale => "stale",
            Reason::Current => "current",
        }
    }
}

impl Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One date of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    pub ds: String,
    pub action: Action,
    /// Why it would be computed (None when it would not be).
    pub reason: Option<Reason>,
    /// The run that holds it, for `skip_held` and `reclaim_*`.
    pub held_by: Option<i64>,
    /// Who holds it (`skip_held`: kind, requester, since when) or why the holder counts
    /// as gone (`reclaim_*`).
    pub holder: Option<String>,
}

/// What the planner knows beyond the date itself.
pub struct Context<'a> {
    /// The models in scope (`Pipeline::signature`).
    pub signature: &'a str,
    /// `apply --run N`: the reserved run, whose own dates are not someone else's.
    pub own_run: Option<i64>,
    /// Runs that hold dates but are gone, each with why (`reserve::dead_holders`).
    pub dead: &'a [(i64, String)],
}

/// What a run would do to `state`, if the run's selection takes it (`selected`).
pub fn step(state: &DateState, selected: bool, cx: &Context) -> Step {
    let step = |action, reason, held_by, holder| Step {
        ds: state.ds.clone(),
        action,
        reason,
        held_by,
        holder,
    };
    if !selected {
        return step(Action::NotSelected, None, None, None);
    }
    let sealed = state.sealed();
    let reason = Some(Reason::of(state, cx.signature));
    if let Some(h) = state.held_by.filter(|h| Some(*h) != cx.own_run) {
        return match cx.dead.iter().find(|(run, _)| *run == h) {
            Some((_, why)) if sealed => step(
                Action::ReclaimAndCorrect,
                reason,
                Some(h),
                Some(why.clone()),
            ),
            Some((_, why)) => step(
                Action::ReclaimAndCompute,
                reason,
                Some(h),
                Some(why.clone()),
            ),
            None => step(Action::SkipHeld, None, Some(h), Some(holder_of(state))),
        };
    }
    let action = if sealed {
        Action::CorrectIfChanged
    } else if state.missing(cx.signature) {
        Action::Compute
    } else {
        Action::Recompute
    };
    step(action, reason, None, None)
}

/// A live holder, as a skip names it: its kind, who asked, since when.
fn holder_of(state: &DateState) -> String {
    format!(
        "{}, requested by {}, since {}",
        state.holder_kind.as_deref().unwrap_or("?"),
        state.holder_by.as_deref().unwrap_or("?"),
        state.held_since.as_deref().unwrap_or("?")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIGNATURE: &str = "models/daily_revenue@2";

    fn date(ds: &str) -> DateState {
        DateState {
            ds: ds.into(),
            built_run: None,
            built_kind: None,
            built_at: None,
            built_models: None,
            last_run: None,
            last_status: None,
            last_error: None,
            sealed_at: None,
            sealed_by: None,
            corrections: 0,
            held_by: None,
            held_since: None,
            held_until: None,
            holder_kind: None,
            holder_by: None,
            holder_status: None,
            source_changed: false,
            failed_model: None,
        }
    }

    fn computed(ds: &str, version: u32) -> DateState {
        DateState {
            built_run: Some(1),
            built_models: Some(format!("models/daily_revenue@{version}")),
            last_run: Some(1),
            last_status: Some("success".into()),
            ..date(ds)
        }
    }

    fn held(mut state: DateState, by: i64) -> DateState {
        state.held_by = Some(by);
        state.holder_kind = Some("backfill".into());
        state.holder_by = Some("bob".into());
        state.held_since = Some("2026-03-01 10:00:00".into());
        state
    }

    fn plan(state: &DateState, selected: bool, own_run: Option<i64>) -> Step {
        let dead = [(9, "process 42 on box is gone".to_string())];
        let cx = Context {
            signature: SIGNATURE,
            own_run,
            dead: &dead,
        };
        step(state, selected, &cx)
    }

    #[test]
    fn each_state_gets_its_action_and_reason() {
        let missing = plan(&date("2026-03-01"), true, None);
        assert_eq!(
            (missing.action, missing.reason),
            (Action::Compute, Some(Reason::Missing))
        );
        let current = plan(&computed("2026-03-01", 2), true, None);
        assert_eq!(
            (current.action, current.reason),
            (Action::Recompute, Some(Reason::Current))
        );
        let stale = plan(&computed("2026-03-01", 1), true, None);
        assert_eq!(
            (stale.action, stale.reason),
            (Action::Recompute, Some(Reason::Stale))
        );
        let mut failed = computed("2026-03-01", 2);
        failed.last_status = Some("failed".into());
        assert_eq!(plan(&failed, true, None).reason, Some(Reason::Failed));
        let mut sealed = computed("2026-03-01", 2);
        sealed.sealed_at = Some("2026-03-02 00:00:00".into());
        assert_eq!(plan(&sealed, true, None).action, Action::CorrectIfChanged);
    }

    #[test]
    fn a_held_date_is_skipped_or_reclaimed_from_a_dead_holder() {
        let skip = plan(&held(computed("2026-03-01", 2), 7), true, None);
        assert_eq!(skip.action, Action::SkipHeld);
        assert_eq!(skip.held_by, Some(7));
        assert_eq!(skip.reason, None);
        assert_eq!(
            skip.holder.as_deref(),
            Some("backfill, requested by bob, since 2026-03-01 10:00:00")
        );
        let reclaim = plan(&held(date("2026-03-01"), 9), true, None);
        assert_eq!(reclaim.action, Action::ReclaimAndCompute);
        assert_eq!(reclaim.reason, Some(Reason::Missing));
        assert_eq!(reclaim.holder.as_deref(), Some("process 42 on box is gone"));
        let mut sealed = held(computed("2026-03-01", 2), 9);
        sealed.sealed_at = Some("2026-03-02 00:00:00".into());
        assert_eq!(plan(&sealed, true, None).action, Action::ReclaimAndCorrect);
    }

    #[test]
    fn a_reserved_run_computes_its_own_dates_and_nothing_unselected() {
        let own = plan(&held(date("2026-03-01"), 7), true, Some(7));
        assert_eq!(own.action, Action::Compute);
        assert_eq!(own.held_by, None);
        let left = plan(&date("2026-03-01"), false, None);
        assert_eq!((left.action, left.reason), (Action::NotSelected, None));
        assert!(!left.action.computes() && !Action::SkipHeld.computes());
    }

    #[test]
    fn the_vocabulary_is_snake_case_and_serializes_as_spelt() {
        for action in Action::ALL {
            assert_eq!(serde_json::to_value(action).unwrap(), action.as_str());
            assert!(action
                .as_str()
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'_'));
        }
        assert_eq!(serde_json::to_value(Reason::Stale).unwrap(), "stale");
    }
}
