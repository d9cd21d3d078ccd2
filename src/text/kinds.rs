//! What kind of value a model's column holds, and how such a value is shown: a count
//! is a count, text is text, a date is a date. The kind comes from the column's type in
//! the model's table (queries/*/column_types.sql), so it is known also where a value is
//! NULL (a new key has no sent value); a column with no declared type (SQLite allows
//! that) takes the kind of its values.

use serde::Serialize;
use serde_json::Value as Json;

use crate::text::numbers::thousands;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Whole numbers: amounts in won, counts, ids. Shown with thousands separators.
    Integer,
    /// Numbers with a fraction (numeric, real).
    Number,
    Boolean,
    Date,
    Timestamp,
    Text,
}

const ALL: [Kind; 6] = [
    Kind::Integer,
    Kind::Number,
    Kind::Boolean,
    Kind::Date,
    Kind::Timestamp,
    Kind::Text,
];

impl Kind {
    /// The kind column_types.sql names (None: the column declares no usable type).
    pub fn parse(name: Option<&str>) -> Option<Kind> {
        let name = name?;
        ALL.into_iter().find(|k| k.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Integer => "integer",
            Kind::Number => "number",
            Kind::Boolean => "boolean",
            Kind::Date => "date",
            Kind::Timestamp => "timestamp",
            Kind::Text => "text",
        }
    }

    /// The declared kind, else that of the first value that is not NULL, else text.
    pub fn resolve<'a>(declared: Option<Kind>, values: impl IntoIterator<Item = &'a Json>) -> Kind {
        declared
            .or_else(|| {
                values.into_iter().find_map(|v| match v {
                    Json::Number(n) if n.is_i64() => Some(Kind::Integer),
                    Json::Number(_) => Some(Kind::Number),
                    Json::String(_) => Some(Kind::Text),
                    _ => None,
                })
            })
            .unwrap_or(Kind::Text)
    }

    /// A value as JSON of its kind: a flag (stored 0/1 on SQLite) as true/false; the rest
    /// as read.
    pub fn typed(self, v: &Json) -> Json {
        match (self, v) {
            (Kind::Boolean, Json::Number(n)) => Json::Bool(n.as_i64() != Some(0)),
            _ => v.clone(),
        }
    }

    /// A value for people: integers grouped by thousands, flags as true/false, NULL as -.
    pub fn show(self, v: &Json) -> String {
        match (self, self.typed(v)) {
            (_, Json::Null) => "-".into(),
            (Kind::Integer | Kind::Number, Json::Number(n)) if n.is_i64() => {
                thousands(n.as_i64().unwrap_or_default())
            }
            (_, Json::String(s)) => s,
            (_, other) => other.to_string(),
        }
    }

    /// now - sent, for the kinds where a difference means something (numbers); None when
    /// either side is missing (a new or removed key) or not a number.
    pub fn delta(self, sent: &Json, now: &Json) -> Option<Json> {
        match self {
            Kind::Integer | Kind::Number => {}
            _ => return None,
        }
        if let (Some(s), Some(n)) = (sent.as_i64(), now.as_i64()) {
            return n.checked_sub(s).map(Json::from);
        }
        let (s, n) = (sent.as_f64()?, now.as_f64()?);
        // Rounded to the places the values have, so that 0.3 - 0.1 is 0.2, not
        // 0.19999999999999998.
        let places = decimals(sent).max(decimals(now)).min(12);
        let scale = 10f64.powi(places as i32);
        serde_json::Number::from_f64(((n - s) * scale).round() / scale).map(Json::Number)
    }

    /// The delta for people: signed, grouped for integers; - where there is none.
    pub fn show_delta(self, delta: Option<&Json>) -> String {
        match delta {
            None => "-".into(),
            Some(d) => {
                let shown = self.show(d);
                if d.as_f64().is_some_and(|x| x > 0.0) {
                    format!("+{shown}")
                } else {
                    shown
                }
            }
        }
    }
}

/// Digits after the decimal point of a number as JSON prints it.
fn decimals(v: &Json) -> usize {
    let text = v.to_string();
    text.split_once('.').map_or(0, |(_, f)| {
        f.chars().take_while(char::is_ascii_digit).count()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_kind_shows_as_itself() {
        assert_eq!(Kind::Integer.show(&json!(51_820_000)), "51,820,000");
        assert_eq!(Kind::Integer.show(&json!(199)), "199");
        assert_eq!(Kind::Text.show(&json!("large")), "large");
        assert_eq!(Kind::Date.show(&json!("2026-02-03")), "2026-02-03");
        assert_eq!(Kind::Boolean.show(&json!(1)), "true");
        assert_eq!(Kind::Boolean.typed(&json!(0)), json!(false));
        assert_eq!(Kind::Number.show(&json!(2.5)), "2.5");
        assert_eq!(Kind::Text.show(&Json::Null), "-");
    }

    #[test]
    fn only_numbers_have_a_delta() {
        let d = Kind::Integer.delta(&json!(4_150_000), &json!(4_500_000));
        assert_eq!(d, Some(json!(350_000)));
        assert_eq!(Kind::Integer.show_delta(d.as_ref()), "+350,000");
        assert_eq!(Kind::Integer.show_delta(Some(&json!(-5))), "-5");
        assert_eq!(Kind::Integer.show_delta(Some(&json!(0))), "0");
        assert_eq!(
            Kind::Number.delta(&json!(0.1), &json!(0.3)),
            Some(json!(0.2))
        );
        assert_eq!(Kind::Text.delta(&json!("a"), &json!("b")), None);
        assert_eq!(Kind::Integer.delta(&Json::Null, &json!(1)), None);
        assert_eq!(Kind::Integer.show_delta(None), "-");
    }

    #[test]
    fn an_undeclared_kind_comes_from_the_values() {
        let values = [Json::Null, json!("x")];
        assert_eq!(Kind::resolve(None, &values), Kind::Text);
        assert_eq!(Kind::resolve(None, &[json!(3)]), Kind::Integer);
        assert_eq!(Kind::resolve(Some(Kind::Date), &[json!(3)]), Kind::Date);
        assert_eq!(Kind::resolve(None, &[Json::Null]), Kind::Text);
        assert_eq!(Kind::parse(Some("integer")), Some(Kind::Integer));
        assert_eq!(Kind::parse(None), None);
    }
}
