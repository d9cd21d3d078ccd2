//! Which of a model's value columns add up: across the keys of a date (the bands of a day)
//! and across dates (a week). A day's revenue adds up to a week's; a running total, a
//! count of days, an average or a share does not, and summing one prints a number that
//! means nothing. The report sums only the columns that add up.
//!
//! The rule: a model's header may say it (`-- additive: revenue, order_count`: exactly
//! those, a list that may be empty); without that line, a value column adds up when it
//! holds numbers (its table's type: integer or numeric), its name does not say
//! otherwise (a word of it is one of `NOT_ADDITIVE`: `cumulative_revenue`,
//! `days_with_orders`, `avg_amount`), and its model reads no window (a 7-day rolling
//! total counts each day seven times across dates).

use super::templates::TemplateFile;
use super::Model;
use crate::text::kinds::Kind;

/// Words that, in a column's name (split at `_`), say its values do not add up.
const NOT_ADDITIVE: &[&str] = &[
    "cumulative",
    "cum",
    "running",
    "rolling",
    "ytd",
    "qtd",
    "mtd",
    "wtd",
    "since",
    "days",
    "balance",
    "stock",
    "level",
    "avg",
    "average",
    "mean",
    "median",
    "ratio",
    "rate",
    "share",
    "pct",
    "percent",
    "percentage",
    "min",
    "max",
    "distinct",
    "unique",
];

impl Model {
    /// Whether the value column `column`, of kind `kind`, adds up across keys and dates.
    pub fn adds_up(&self, column: &str, kind: Kind) -> bool {
        if !matches!(kind, Kind::Integer | Kind::Number) {
            return false;
        }
        let windowed = self.reads.iter().any(|r| r.window != (0, 0));
        match &self.additive {
            Some(listed) => listed.iter().any(|c| c == column),
            None => !windowed && !name_says_not_additive(column),
        }
    }
}

fn name_says_not_additive(column: &str) -> bool {
    column
        .to_ascii_lowercase()
        .split('_')
        .any(|word| NOT_ADDITIVE.contains(&word))
}

/// A model's `-- additive:` line (None: it has none), and its problems: each column it
/// names must be one of `values`.
pub fn additive(file: &TemplateFile, values: &[String]) -> (Option<Vec<String>>, Vec<String>) {
    let Some(listed) = file
        .header
        .contains_key("additive")
        .then(|| file.list("additive"))
    else {
        return (None, Vec::new());
    };
    let problems = problems(&listed, values);
    (Some(listed), problems)
}

fn problems(additive: &[String], values: &[String]) -> Vec<String> {
    additive
        .iter()
        .filter(|c| !values.contains(c))
        .map(|c| {
            format!(
                "`-- additive:` names {c}, which is not one of its values ({}); name value \
                 columns whose numbers add up across dates, or leave the line out",
                values.join(", ")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::name_says_not_additive;

    #[test]
    fn a_running_total_or_a_count_of_days_does_not_add_up() {
        for name in [
            "cumulative_revenue",
            "days_with_orders",
            "avg_amount",
            "Rolling_7d",
        ] {
            assert!(name_says_not_additive(name), "{name}");
        }
        for name in ["revenue", "order_count", "refunds", "amount_won"] {
            assert!(!name_says_not_additive(name), "{name}");
        }
    }
}
