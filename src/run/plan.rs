//! What `apply` would do to each date of its interval, as `--dry-run` shows it: an action
//! from a fixed vocabulary and, for a date that would be computed, why. The words are the
//! ones `--json` prints and the README lists; they are spelt in one place, here.

use serde::Serialize;

use crate::reservations::state::DateState;
pub use crate::text::words::{Action, Reason};

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
    // Where the date stands, and what a run does to it when free, are the template's
    // (system/date_states.sql); whether its holder is alive is this process's to tell.
    let j = &state.judged;
    let reason = Some(j.reason);
    if let Some(h) = state.held_by.filter(|h| Some(*h) != cx.own_run) {
        return match cx.dead.iter().find(|(run, _)| *run == h) {
            Some((_, why)) if j.sealed => step(
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
    step(j.action, reason, None, None)
}

/// A live holder, as a skip names it: its kind, who asked, since when.
fn holder_of(state: &DateState) -> String {
    format!(
        "{}, requested by {}, since {}",
        state.holder_kind.map_or("?", |k| k.as_str()),
        state.holder_by.as_deref().unwrap_or("?"),
        state.held_since.as_deref().unwrap_or("?")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reservations::state::Judged;
    use crate::text::words::RunKind;

    /// A date as the template judged it: `reason`, and `action` when free.
    fn date(ds: &str, reason: Reason, action: Action) -> DateState {
        DateState {
            ds: ds.into(),
            judged: Judged {
                reason,
                action,
                sealed: action == Action::CorrectIfChanged,
                ..Judged::default()
            },
            ..DateState::default()
        }
    }

    fn held(mut state: DateState, by: i64) -> DateState {
        state.held_by = Some(by);
        state.holder_kind = Some(RunKind::Backfill);
        state.holder_by = Some("bob".into());
        state.held_since = Some("2026-03-01 10:00:00".into());
        state
    }

    fn plan(state: &DateState, selected: bool, own_run: Option<i64>) -> Step {
        let dead = [(9, "process 42 on box is gone".to_string())];
        let cx = Context {
            own_run,
            dead: &dead,
        };
        step(state, selected, &cx)
    }

    #[test]
    fn a_free_date_gets_the_templates_action_and_reason() {
        let stale = plan(
            &date("2026-03-01", Reason::Stale, Action::Recompute),
            true,
            None,
        );
        assert_eq!(
            (stale.action, stale.reason),
            (Action::Recompute, Some(Reason::Stale))
        );
        let sealed = date("2026-03-01", Reason::Current, Action::CorrectIfChanged);
        assert_eq!(plan(&sealed, true, None).action, Action::CorrectIfChanged);
    }

    #[test]
    fn a_held_date_is_skipped_or_reclaimed_from_a_dead_holder() {
        let computed = || date("2026-03-01", Reason::Current, Action::Recompute);
        let missing = || date("2026-03-01", Reason::Missing, Action::Compute);
        let skip = plan(&held(computed(), 7), true, None);
        assert_eq!(skip.action, Action::SkipHeld);
        assert_eq!(skip.held_by, Some(7));
        assert_eq!(skip.reason, None);
        assert_eq!(
            skip.holder.as_deref(),
            Some("backfill, requested by bob, since 2026-03-01 10:00:00")
        );
        let reclaim = plan(&held(missing(), 9), true, None);
        assert_eq!(reclaim.action, Action::ReclaimAndCompute);
        assert_eq!(reclaim.reason, Some(Reason::Missing));
        assert_eq!(reclaim.holder.as_deref(), Some("process 42 on box is gone"));
        let sealed = held(
            date("2026-03-01", Reason::Current, Action::CorrectIfChanged),
            9,
        );
        assert_eq!(plan(&sealed, true, None).action, Action::ReclaimAndCorrect);
    }

    #[test]
    fn a_reserved_run_computes_its_own_dates_and_nothing_unselected() {
        let missing = || date("2026-03-01", Reason::Missing, Action::Compute);
        let own = plan(&held(missing(), 7), true, Some(7));
        assert_eq!(own.action, Action::Compute);
        assert_eq!(own.held_by, None);
        let left = plan(&missing(), false, None);
        assert_eq!((left.action, left.reason), (Action::NotSelected, None));
        assert!(!left.action.computes() && !Action::SkipHeld.computes());
    }

    #[test]
    fn the_vocabulary_is_snake_case_and_serializes_as_spelt() {
        for action in Action::ALL {
            assert_eq!(serde_json::to_value(action).unwrap(), action.as_str());
            assert_eq!(Action::parse(action.as_str()), Some(action));
            assert!(action
                .as_str()
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'_'));
        }
        assert_eq!(serde_json::to_value(Reason::Stale).unwrap(), "stale");
    }
}
