//! Who holds what, on stderr: the dates a run skipped because another live run holds them,
//! and the dates reclaimed from runs that are gone (said by apply, reserve and seal).

use super::apply::date_count;
use crate::dates::interval::{contiguous, contiguous_by, fmt_date, parse_date};
use crate::reservations::state::{DateState, Reclaim, Skip};

/// One line per contiguous range of skipped dates with the same holder.
pub fn skip_lines(skips: &[Skip]) -> Vec<String> {
    let keyed = skips
        .iter()
        .filter_map(|s| Some((parse_date(&s.ds, "date").ok()?, HolderOf::skip(s))))
        .collect();
    contiguous_by(keyed)
        .into_iter()
        .map(|(range, h)| {
            // Since when: as the range's first date says (a run takes its dates at once).
            let first = fmt_date(range.start);
            let since = skips.iter().find(|s| s.ds == first);
            format!(
                "skipped {range} ({}): held by run {} ({}, requested by {}, {} since {})",
                date_count(range.len()),
                h.run.map(|h| h.to_string()).unwrap_or_else(|| "?".into()),
                h.kind.unwrap_or("?"),
                h.by.unwrap_or("?"),
                h.status.unwrap_or("?"),
                since.and_then(|s| s.held_since.as_deref()).unwrap_or("?"),
            )
        })
        .collect()
}

/// Who holds a date, as a skip or a look back names it.
#[derive(PartialEq)]
struct HolderOf<'a> {
    run: Option<i64>,
    kind: Option<&'a str>,
    by: Option<&'a str>,
    status: Option<&'a str>,
}

impl<'a> HolderOf<'a> {
    fn skip(s: &'a Skip) -> Self {
        HolderOf {
            run: s.held_by,
            kind: s.holder_kind.as_deref(),
            by: s.holder_by.as_deref(),
            status: s.holder_status.as_deref(),
        }
    }
}

/// What a look back found to do but another live run holds: one line per contiguous
/// range with the same holder and reason, `2026-03-09..2026-03-15 (7 dates) are missing
/// but held by run 12 (backfill, requested by bob): left to it`.
pub fn left_to_holder_lines(states: &[DateState]) -> Vec<String> {
    let keyed = states
        .iter()
        .filter_map(|s| {
            let holder = HolderOf {
                run: Some(s.held_by?),
                kind: s.holder_kind.map(|k| k.as_str()),
                by: s.holder_by.as_deref(),
                status: None,
            };
            Some((parse_date(&s.ds, "date").ok()?, (holder, s.reason())))
        })
        .collect();
    contiguous_by(keyed)
        .into_iter()
        .map(|(range, (h, reason))| {
            let what = match range.len() {
                1 => format!("{range} is"),
                n => format!("{range} ({}) are", date_count(n)),
            };
            format!(
                "{what} {reason} but held by run {} ({}, requested by {}): left to it",
                h.run.unwrap_or_default(),
                h.kind.unwrap_or("?"),
                h.by.unwrap_or("?"),
            )
        })
        .collect()
}

/// One line per run whose dates were reclaimed: which, from whom, why.
pub fn reclaim_lines(reclaims: &[Reclaim]) -> Vec<String> {
    reclaims
        .iter()
        .map(|r| {
            let dates: Vec<_> = r
                .dates
                .iter()
                .filter_map(|d| parse_date(d, "date").ok())
                .collect();
            let ranges: Vec<String> = contiguous(&dates).iter().map(|i| i.to_string()).collect();
            let what = if ranges.is_empty() {
                "no dates".to_string()
            } else {
                ranges.join(", ")
            };
            format!(
                "reclaimed {what} from run {}: {}; run {} is now interrupted",
                r.run_id, r.why, r.run_id
            )
        })
        .collect()
}
