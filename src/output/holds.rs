//! Who holds what, on stderr: the dates a run skipped because another live run holds them,
//! and the dates reclaimed from runs that are gone (said by apply, reserve and seal).

use crate::dates::interval::{contiguous, parse_date};
use crate::reservations::state::{Reclaim, Skip};

/// One line per contiguous range of skipped dates with the same holder.
pub fn skip_lines(skips: &[Skip]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut i = 0;
    while i < skips.len() {
        let holder = skips[i].held_by;
        let mut j = i;
        while j + 1 < skips.len() && skips[j + 1].held_by == holder {
            j += 1;
        }
        let dates: Vec<_> = skips[i..=j]
            .iter()
            .filter_map(|s| parse_date(&s.ds, "date").ok())
            .collect();
        let s = &skips[i];
        for range in contiguous(&dates) {
            let n = range.len();
            lines.push(format!(
                "skipped {range} ({n} date{}): held by run {} ({}, requested by {}, {} since {})",
                if n == 1 { "" } else { "s" },
                holder.map(|h| h.to_string()).unwrap_or_else(|| "?".into()),
                s.holder_kind.as_deref().unwrap_or("?"),
                s.holder_by.as_deref().unwrap_or("?"),
                s.holder_status.as_deref().unwrap_or("?"),
                s.held_since.as_deref().unwrap_or("?"),
            ));
        }
        i = j + 1;
    }
    lines
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
