//! What the state store says about dates: each date's state (built by whom, failed,
//! sealed, held), the dates a run skipped, and the dates it reclaimed. Plain values that
//! the domain fills and the output prints.

use crate::vocabulary::OnlyFilter as Only;

/// What the state store knows about one date (`system/date_states.sql`).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DateState {
    pub ds: String,
    pub built_run: Option<i64>,
    pub built_kind: Option<String>,
    pub built_at: Option<String>,
    pub built_models: Option<String>,
    pub last_run: Option<i64>,
    pub last_status: Option<String>,
    pub last_error: Option<String>,
    pub sealed_at: Option<String>,
    pub sealed_by: Option<String>,
    pub corrections: i64,
    pub held_by: Option<i64>,
    pub held_since: Option<String>,
    pub held_until: Option<String>,
    pub holder_kind: Option<String>,
    pub holder_by: Option<String>,
    pub holder_status: Option<String>,
    /// A source it reads changed since its latest build (or it was never built).
    pub source_changed: bool,
    /// The model whose statement failed in its latest attempt, if that failed.
    pub failed_model: Option<String>,
}

/// Where one model stands on one date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelState {
    Current,
    /// Built by another version of the model.
    Stale,
    /// The date has no rows of this model's (never computed, or computed before the model
    /// existed).
    Missing,
    /// The date's latest attempt failed in this model's statement (its rows, if any, are
    /// from an earlier build).
    Failed,
}

impl DateState {
    pub fn computed(&self) -> bool {
        self.built_run.is_some()
    }

    pub fn failed(&self) -> bool {
        self.last_status.as_deref() == Some("failed")
    }

    /// Built by other versions of the models in scope than the pipeline's now, or without
    /// one of them. `scope` lists the models in scope as `models/NAME@VERSION,...` (see
    /// `Pipeline::signature`): every model, or those `--select` names.
    pub fn stale(&self, scope: &str) -> bool {
        self.computed()
            && self
                .model_states(scope)
                .iter()
                .any(|(_, state)| matches!(state, ModelState::Stale | ModelState::Missing))
    }

    /// Each model in scope and where it stands on this date.
    pub fn model_states<'a>(&self, scope: &'a str) -> Vec<(&'a str, ModelState)> {
        let built: Vec<(&str, &str)> = self
            .built_models
            .as_deref()
            .unwrap_or_default()
            .split(',')
            .filter_map(|m| m.rsplit_once('@'))
            .collect();
        scope
            .split(',')
            .filter_map(|m| m.rsplit_once('@'))
            .map(|(name, version)| {
                let failed = self.failed() && self.failed_model.as_deref() == Some(name);
                let state = match built.iter().find(|(b, _)| *b == name) {
                    _ if failed => ModelState::Failed,
                    None => ModelState::Missing,
                    Some((_, v)) if *v == version => ModelState::Current,
                    Some(_) => ModelState::Stale,
                };
                (name.trim_start_matches("models/"), state)
            })
            .collect()
    }

    /// Never computed, or a model in scope has no rows on it.
    pub fn missing(&self, scope: &str) -> bool {
        !self.computed()
            || self
                .model_states(scope)
                .iter()
                .any(|(_, state)| *state == ModelState::Missing)
    }

    pub fn sealed(&self) -> bool {
        self.sealed_at.is_some()
    }

    /// Computed, and a source it reads changed since.
    pub fn changed(&self) -> bool {
        self.computed() && self.source_changed
    }

    pub fn selected_by(&self, selection: &Selection, signature: &str) -> bool {
        match selection {
            Selection::Only(None) => true,
            Selection::Only(Some(Only::Missing)) => self.missing(signature),
            Selection::Only(Some(Only::Failed)) => self.failed(),
            Selection::Only(Some(Only::Stale)) => self.stale(signature),
            Selection::Only(Some(Only::Changed)) => self.changed(),
            Selection::Lookback { newest, .. } => {
                self.ds == *newest || (self.held_by.is_none() && self.needs_work())
            }
        }
    }

    /// Missing, failed or changed: what a look back heals.
    pub fn needs_work(&self) -> bool {
        !self.computed() || self.failed() || self.changed()
    }

    /// Why a date would be computed, in a word.
    pub fn reason(&self, signature: &str) -> &'static str {
        if !self.computed() {
            "missing"
        } else if self.failed() {
            "last attempt failed"
        } else if self.changed() {
            "changed"
        } else if self.stale(signature) {
            "stale"
        } else {
            "recompute"
        }
    }
}

/// Which dates of its interval a run takes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// Every date, or those in one state (`--only`).
    Only(Option<Only>),
    /// A regular run with `--lookback N`: the newest date always; each older one only when
    /// it is missing, failed or changed, and no other run holds it (a holder is on it).
    Lookback { newest: String, days: u32 },
}

impl Selection {
    /// `--only`, as the run records it.
    pub fn only(&self) -> Option<Only> {
        match self {
            Selection::Only(only) => *only,
            Selection::Lookback { .. } => None,
        }
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

/// A skipped date and who holds it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Skip {
    pub ds: String,
    pub held_by: Option<i64>,
    pub holder_kind: Option<String>,
    pub holder_by: Option<String>,
    pub holder_status: Option<String>,
    pub held_since: Option<String>,
}
