//! The diff table: what changed in a model's partitions between two versions of their rows
//! (`before`, `after`), by the model's key, as templates/system/diff.sql counts it. The
//! same table for `apply --diff` (what a run would change: run/preview.rs) and `sqlrun
//! diff RUN` (what a run changed, from history). Plain values in, plain values out.

use serde::Serialize;
use serde_json::Value as Json;

use crate::db::{Db, Row};
use crate::error::Result;
use crate::pipeline::{to_value, Model};
use crate::seals::corrections::ColumnKinds;
use crate::seals::numbers::{self, How, Measure};

/// One model's diff over the partitions compared.
#[derive(Debug, Clone, Serialize)]
pub struct ModelDiff {
    pub model: String,
    pub table: String,
    pub key: Vec<String>,
    /// The value columns totalled, in the model's order (`how`: `sum`, a column that adds
    /// up over a partition's keys; `one`, one value per date, which does not).
    pub measures: Vec<Measure>,
    /// The value columns not totalled: text, or numbers that do not add up over keys
    /// (they still count in `changed`).
    pub not_totalled: Vec<String>,
    /// Each partition compared, in date order.
    pub partitions: Vec<Partition>,
    /// Over every partition compared (and, for `apply --diff`, that the run would write):
    /// keys and rows added up; each measure that adds up summed (null for one that does
    /// not).
    pub total: Change,
}

/// One partition of one model: where `before` comes from, and what changed.
#[derive(Debug, Clone, Serialize)]
pub struct Partition {
    pub ds: String,
    /// The relation (or the run) the `before` rows are read from: the model's table, its
    /// `<table>_current` view for a sealed date, `<table>_history` for a run's diff.
    pub before_from: String,
    /// A sealed date: the run would record corrections, never overwrite its rows.
    pub sealed: bool,
    #[serde(flatten)]
    pub change: Change,
    /// `sqlrun diff RUN`: what history says of the partition.
    #[serde(flatten)]
    pub history: Option<History>,
    /// From history: the sides whose rows the retention (`[history] keep`) pruned, so that
    /// the diff is not whole there (`before`, `after`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pruned: Vec<&'static str>,
}

/// What history says of one partition a run replaced (`sqlrun diff RUN`).
#[derive(Debug, Clone, Serialize)]
pub struct History {
    /// The run whose rows it replaced (null: the partition had never been built).
    pub replaced_run: Option<i64>,
    /// The run that replaced the run's rows since (null: they are in the table now).
    pub replaced_since: Option<i64>,
}

/// Keys and totals of one partition (or of a model over an interval).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Change {
    pub rows_before: i64,
    pub rows_after: i64,
    /// Keys only `after` has.
    pub added: i64,
    /// Keys only `before` has.
    pub removed: i64,
    /// Keys both have, with a value that differs.
    pub changed: i64,
    /// Per measure, in the order of `ModelDiff::measures`.
    pub totals: Vec<Total>,
}

/// One measure's total before and after, and after minus before (null where either is
/// null or the value is not a number).
#[derive(Debug, Clone, Serialize)]
pub struct Total {
    pub column: String,
    pub before: Json,
    pub after: Json,
    pub delta: Json,
}

impl Change {
    /// Whether anything differs: a key added, removed or changed.
    pub fn changes(&self) -> bool {
        self.added + self.removed + self.changed > 0
    }

    /// A row of system/diff.sql: counts, then `before_N`/`after_N` per measure.
    pub fn from_row(row: &Row, measures: &[Measure]) -> Change {
        let json = row.to_json();
        let int = |name: &str| json.get(name).and_then(Json::as_i64).unwrap_or_default();
        let totals = measures
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let before = json
                    .get(&format!("before_{}", i + 1))
                    .cloned()
                    .unwrap_or(Json::Null);
                let after = json
                    .get(&format!("after_{}", i + 1))
                    .cloned()
                    .unwrap_or(Json::Null);
                Total::new(m, before, after)
            })
            .collect();
        Change {
            rows_before: int("rows_before"),
            rows_after: int("rows_after"),
            added: int("added"),
            removed: int("removed"),
            changed: int("changed"),
            totals,
        }
    }

    /// `self` and `other` added up: counts, and the totals of measures that add up (one
    /// that does not is null).
    fn plus(&self, other: &Change, measures: &[Measure]) -> Change {
        let totals = measures
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let (a, b) = (self.totals.get(i), other.totals.get(i));
                match (m.how, a, b) {
                    (How::Sum, Some(a), Some(b)) => {
                        Total::new(m, add(&a.before, &b.before), add(&a.after, &b.after))
                    }
                    (How::Sum, None, Some(b)) => b.clone(),
                    _ => Total::new(m, Json::Null, Json::Null),
                }
            })
            .collect();
        Change {
            rows_before: self.rows_before + other.rows_before,
            rows_after: self.rows_after + other.rows_after,
            added: self.added + other.added,
            removed: self.removed + other.removed,
            changed: self.changed + other.changed,
            totals,
        }
    }
}

impl Total {
    fn new(m: &Measure, before: Json, after: Json) -> Total {
        let before = m.kind.typed(&before);
        let after = m.kind.typed(&after);
        Total {
            column: m.column.clone(),
            delta: m.kind.delta(&before, &after).unwrap_or(Json::Null),
            before,
            after,
        }
    }
}

/// `a + b` of two JSON numbers (null: either is not a number).
fn add(a: &Json, b: &Json) -> Json {
    match (a.as_i64(), b.as_i64()) {
        (Some(x), Some(y)) => x.checked_add(y).map_or(Json::Null, Json::from),
        _ => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => {
                serde_json::Number::from_f64(x + y).map_or(Json::Null, Json::Number)
            }
            _ => Json::Null,
        },
    }
}

/// A model's diff, started: its measures (the value columns its table says hold numbers,
/// as `report` totals them), no partition yet.
pub fn begin(db: &mut Db, model: &Model) -> Result<ModelDiff> {
    let kinds = ColumnKinds::read(db, &model.table)?;
    let measures = numbers::measures(model, &kinds);
    let not_totalled = model
        .values
        .iter()
        .filter(|v| !measures.iter().any(|m| &m.column == *v))
        .cloned()
        .collect();
    Ok(ModelDiff {
        model: model.name.clone(),
        table: model.table.clone(),
        key: model.key.clone(),
        // Nothing yet: 0 of what adds up; null of what does not.
        total: Change {
            totals: measures
                .iter()
                .map(|m| match m.how {
                    How::Sum => Total::new(m, 0.into(), 0.into()),
                    How::One => Total::new(m, Json::Null, Json::Null),
                })
                .collect(),
            ..Change::default()
        },
        measures,
        not_totalled,
        partitions: Vec::new(),
    })
}

impl ModelDiff {
    /// The measures as the diff template reads them.
    pub fn measures_value(&self) -> minijinja::Value {
        to_value(&self.measures)
    }

    /// A partition compared; `counts` says whether it counts in the total (a date a preview
    /// computed but whose run would roll it back does not).
    pub fn push(&mut self, partition: Partition, counts: bool) {
        if counts {
            self.total = self.total.plus(&partition.change, &self.measures);
        }
        self.partitions.push(partition);
    }

    /// The partitions where something changed.
    pub fn changed(&self) -> impl Iterator<Item = &Partition> {
        self.partitions.iter().filter(|p| p.change.changes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::kinds::Kind;

    fn measure(column: &str, how: How) -> Measure {
        Measure {
            column: column.into(),
            kind: Kind::Integer,
            how,
        }
    }

    fn change(added: i64, revenue: (i64, i64)) -> Change {
        let m = measure("revenue", How::Sum);
        Change {
            rows_before: 1,
            rows_after: 1,
            added,
            removed: 0,
            changed: 1,
            totals: vec![Total::new(&m, revenue.0.into(), revenue.1.into())],
        }
    }

    #[test]
    fn deltas_and_totals_add_up_only_where_a_column_does() {
        let t = Total::new(&measure("revenue", How::Sum), 100.into(), 130.into());
        assert_eq!(t.delta, Json::from(30));
        let none = Total::new(&measure("revenue", How::Sum), Json::Null, 5.into());
        assert_eq!(none.delta, Json::Null);
        assert_eq!(add(&Json::from(2.5), &Json::from(1)), Json::from(3.5));

        let measures = vec![measure("revenue", How::Sum)];
        let sum = change(1, (100, 130)).plus(&change(0, (50, 40)), &measures);
        assert_eq!((sum.added, sum.changed, sum.rows_after), (1, 2, 2));
        assert_eq!(sum.totals[0].before, Json::from(150));
        assert_eq!(sum.totals[0].delta, Json::from(20));
        let one = vec![measure("revenue", How::One)];
        let not = change(1, (100, 130)).plus(&change(0, (50, 40)), &one);
        assert_eq!(not.totals[0].after, Json::Null);
    }
}
