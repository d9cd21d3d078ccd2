//! Readiness: a model may say when a date's sources are ready (`-- ready:` in its
//! header, a SQL condition per date, e.g. a loader's watermark). A date where one is false
//! is not built: skipped and reported, and the next run with `--lookback` builds it once
//! it holds.

use crate::db::Db;
use crate::error::Result;
use crate::pipeline::templates::Bound;
use crate::pipeline::Pipeline;

/// Why a date cannot be built yet: the models whose `-- ready:` is false on it (None:
/// it may be built, or no model it computes declares one).
pub fn not_ready(
    db: &mut Db,
    pipeline: &Pipeline,
    ready: Option<&Bound>,
) -> Result<Option<String>> {
    let Some(ready) = ready else {
        return Ok(None);
    };
    let waiting = db.run_script_keeping(&ready.sql, &ready.params)?;
    let models: Vec<String> = waiting
        .into_iter()
        .flat_map(|(_, rows)| rows)
        .map(|row| row.text(0))
        .collect::<std::result::Result<_, _>>()?;
    Ok((!models.is_empty()).then(|| {
        let each: Vec<String> = models
            .iter()
            .map(
                |name| match pipeline.model(name).and_then(|m| m.ready.as_ref()) {
                    Some(condition) => format!("model {name}'s `-- ready: {condition}` is false"),
                    None => format!("model {name}"),
                },
            )
            .collect();
        format!(
            "not ready: {}; the next run (`--lookback`) builds it once it holds",
            each.join("; ")
        )
    }))
}
