//! Every value sqlrun prints into SQL reads back as exactly that value, on the backend
//! itself: random text (quotes, backslashes, comment starts, any Unicode), whole and
//! fractional numbers (negative ones too), dates, and identifiers.

use minijinja::value::Value;
use proptest::prelude::*;
use sqlrun::db::Dialect;
use sqlrun::pipeline::templates::{quote_ident, sql_literal};

use crate::support::*;

fn dialect() -> Dialect {
    if is_sqlite() {
        Dialect::Sqlite
    } else {
        Dialect::Postgres
    }
}

fn read_back(sb: &Sandbox, literal: &str) -> String {
    let rows = sb.rows(&format!("SELECT {literal} AS v"));
    rows[0][0].clone()
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 128,
        ..ProptestConfig::default()
    }
}

#[test]
fn text_reads_back_exactly() {
    let sb = Sandbox::new();
    proptest!(config(), |(s in "[^\u{0}]{0,40}", t in "(['\\\\;\"-]|--|/\\*|\\$\\$|x){0,12}")| {
        for text in [&s, &t] {
            let literal = sql_literal(&Value::from(text.as_str()), dialect()).unwrap();
            prop_assert_eq!(&read_back(&sb, &literal), text, "{}", literal);
        }
    });
}

#[test]
fn numbers_read_back_exactly_even_after_a_minus() {
    let sb = Sandbox::new();
    proptest!(config(), |(n in any::<i64>(), f in -1.0e12f64..1.0e12)| {
        let literal = sql_literal(&Value::from(n), dialect()).unwrap();
        prop_assert_eq!(read_back(&sb, &literal), n.to_string());
        // After a minus: 0 - (n) = -n, never a comment.
        if n != i64::MIN {
            let minus = format!("0-{literal}");
            prop_assert_eq!(read_back(&sb, &minus), (-n).to_string(), "{}", minus);
        }
        let literal = sql_literal(&Value::from(f), dialect()).unwrap();
        let back: f64 = read_back(&sb, &literal).parse().unwrap();
        prop_assert!((back - f).abs() <= f.abs() * 1e-15, "{} read back as {}", literal, back);
    });
}

#[test]
fn dates_read_back_exactly() {
    let sb = Sandbox::new();
    proptest!(config(), |(days in 0i64..3_652_058)| {
        let date = chrono::NaiveDate::from_ymd_opt(1, 1, 1).unwrap() + chrono::Duration::days(days);
        let ds = date.format("%Y-%m-%d").to_string();
        let literal = sql_literal(&Value::from(ds.as_str()), dialect()).unwrap();
        prop_assert_eq!(read_back(&sb, &literal), ds);
    });
}

#[test]
fn identifiers_name_exactly_what_they_say() {
    let sb = Sandbox::new();
    proptest!(config(), |(name in "[^\u{0}]{1,20}")| {
        // PostgreSQL folds nothing inside quotes, but cuts names at 63 bytes.
        prop_assume!(name.len() <= 63);
        let ident = quote_ident(&name).unwrap();
        let rows = sb.rows(&format!("SELECT v.{ident} FROM (SELECT 1 AS {ident}) AS v"));
        prop_assert_eq!(&rows[0][0], "1");
    });
}
