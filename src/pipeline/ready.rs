//! Readiness: a model may say when a date's sources are ready (`-- ready:` in its
//! header, a SQL condition per date, e.g. a loader's watermark). A date where one is false
//! is not built: skipped and reported, and the next run with `--lookback` builds it once
//! it holds.

use crate::db::{Db, DbError, RowShape};
use crate::error::Result;
use crate::pipeline::templates::Bound;
use crate::pipeline::Pipeline;

/// A model whose `-- ready:` is false on the date (`system/ready.sql`).
#[derive(serde::Deserialize)]
struct Waiting {
    model: String,
}

/// The rows this file reads (when a model declares `-- ready:`), rendered for
/// `pipeline`, for the test that prepares each against a real schema.
pub fn row_shapes(pipeline: &Pipeline) -> Result<Vec<RowShape>> {
    let sql = pipeline.render_ready("2026-02-01")?;
    Ok(sql
        .map(|sql| RowShape::of::<Waiting, _>(sql.as_str(), pipeline.dialect).kept("ready"))
        .into_iter()
        .collect())
}

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
        .map(|row| row.read::<Waiting>().map(|w| w.model))
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| DbError::other(format!("template ready: {e}")))?;
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
