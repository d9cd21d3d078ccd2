//! A model's grain and what it reads of other partitions: `-- grain:`, `-- depends_on: M
//! window A..B` and `-- sources: S(...) window A..B`, parsed from the header, and the
//! mappings the pipeline refuses when it loads (exit 2, at the file's line).

use serde::Serialize;

use crate::dates::period::Grain;

/// What a model reads of another model or a source: a range of its periods around each of
/// the model's own partitions. `window: (A, B)` counts in the upstream's grain: from A
/// periods before the first one the partition overlaps to B after the last one
/// (`(-6, 0)`: the six days before and its own). No window is `(0, 0)`: the periods it
/// overlaps (a roll-up reads its days; a day reads the month that holds it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Read {
    pub from: String,
    pub window: (i64, i64),
    /// A source table (its rows are dated by day), not a model.
    pub source: bool,
}

/// `-- grain: week`: the grain, or what is wrong (None: default, a day).
pub fn grain(text: Option<&String>) -> Result<Grain, String> {
    match text.map(|t| t.trim()) {
        None => Ok(Grain::Day),
        Some(t) => Grain::parse(t).ok_or_else(|| {
            format!(
                "`-- grain: {t}` is not a grain; write one of hour, day, week, month, quarter, year (a week is an ISO week, from Monday)"
            )
        }),
    }
}

/// One entry of `-- depends_on:`: `daily_revenue` or `daily_revenue window -6..0`.
pub fn depends_on(entry: &str) -> Result<Read, String> {
    let (name, window) = split_window(entry, "depends_on")?;
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!(
            "`-- depends_on: {entry}` is not understood; write a model's name, or a name and a window: `-- depends_on: daily_revenue window -6..0`"
        ));
    }
    Ok(Read {
        from: name.to_string(),
        window: window.unwrap_or((0, 0)),
        source: false,
    })
}

/// A read's window: its first and last period, relative to the reader's.
pub type Window = (i64, i64);

/// A model's grain and its `depends_on` reads, or every problem of the two.
pub fn of_header(
    grain_text: Option<&String>,
    depends: &[String],
) -> Result<(Grain, Vec<Read>), Vec<String>> {
    let mut problems = Vec::new();
    let grain = grain(grain_text).unwrap_or_else(|p| {
        problems.push(p);
        Grain::Day
    });
    let mut reads = Vec::new();
    for entry in depends {
        match depends_on(entry) {
            Ok(read) => reads.push(read),
            Err(p) => problems.push(p),
        }
    }
    match problems.is_empty() {
        true => Ok((grain, reads)),
        false => Err(problems),
    }
}

/// The model reads and the dated sources' (a lookup, reached `via` a fact, has no periods).
pub fn with_sources(reads: Vec<Read>, sources: &[super::SourceRef]) -> Vec<Read> {
    let dated = sources.iter().filter(|r| r.via.is_none()).map(|r| Read {
        from: r.table.clone(),
        window: r.window.unwrap_or((0, 0)),
        source: true,
    });
    reads.into_iter().chain(dated).collect()
}

/// `TEXT window A..B` split in its text and its window (None: no window).
pub fn split_window<'a>(entry: &'a str, key: &str) -> Result<(&'a str, Option<Window>), String> {
    let entry = entry.trim();
    let Some(at) = entry.find(" window") else {
        return Ok((entry, None));
    };
    let (head, tail) = entry.split_at(at);
    let range = tail.trim_start().trim_start_matches("window").trim();
    let usage = format!(
        "write the window as two whole numbers of the upstream's periods, first..last, e.g. `-- {key}: {} window -6..0` (the six periods before and its own)",
        head.trim()
    );
    let (a, b) = range
        .split_once("..")
        .ok_or_else(|| format!("`-- {key}: {entry}`: `window {range}` is not a range; {usage}"))?;
    let number = |t: &str| t.trim().parse::<i64>().ok().filter(|n| n.abs() <= 10_000);
    let (Some(a), Some(b)) = (number(a), number(b)) else {
        return Err(format!(
            "`-- {key}: {entry}`: `window {range}` is not a range of whole numbers; {usage}"
        ));
    };
    if a > b {
        return Err(format!(
            "`-- {key}: {entry}`: the window starts after it ends; write the earlier end first: `window {b}..{a}`"
        ));
    }
    Ok((head.trim(), Some((a, b))))
}

/// Why a model of grain `own` cannot read `upstream` of grain `theirs`, if it cannot: a
/// period that straddles two of the other's (weeks in months, quarters, years) would be
/// counted in both or split by a rule nobody wrote down.
pub fn mapping_problem(own: Grain, upstream: &str, theirs: Grain) -> Option<String> {
    if own.nests_in(theirs) || theirs.nests_in(own) {
        return None;
    }
    Some(format!(
        "`-- depends_on: {upstream}`: a {own} cannot be built from {upstream}'s {theirs}s, since a week can straddle two months, quarters or years; read a grain that nests in both, e.g. the days: `-- depends_on: daily_revenue`"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_is_two_whole_numbers_in_order() {
        assert_eq!(
            depends_on("daily_revenue window -6..0").unwrap(),
            Read {
                from: "daily_revenue".into(),
                window: (-6, 0),
                source: false
            }
        );
        assert_eq!(depends_on("daily_revenue").unwrap().window, (0, 0));
        assert!(depends_on("daily_revenue window 0..-6")
            .unwrap_err()
            .contains("`window -6..0`"));
        assert!(depends_on("daily_revenue window -6").is_err());
        assert!(depends_on("daily_revenue window a..b").is_err());
        assert!(depends_on("daily revenue").is_err());
    }

    #[test]
    fn a_grain_is_one_of_six_words() {
        assert_eq!(grain(None), Ok(Grain::Day));
        assert_eq!(grain(Some(&"month".to_string())), Ok(Grain::Month));
        assert!(grain(Some(&"weekly".to_string()))
            .unwrap_err()
            .contains("`-- grain: weekly`"));
    }

    #[test]
    fn weeks_and_months_do_not_map() {
        assert!(mapping_problem(Grain::Month, "weekly", Grain::Week).is_some());
        assert!(mapping_problem(Grain::Week, "monthly", Grain::Month).is_some());
        assert!(mapping_problem(Grain::Month, "daily", Grain::Day).is_none());
        assert!(mapping_problem(Grain::Hour, "monthly", Grain::Month).is_none());
    }
}
