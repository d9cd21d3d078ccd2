//! How long each model's `<table>_history` keeps the rows a replace took out
//! (`[history] keep` in sqlrun.toml). system/replace.sql prunes a partition's history by it
//! in the transaction that adds to it, so pruning costs one indexed delete per replace.

use serde::Serialize;

/// Keep a partition's replaced versions for so many days, or so many of its newest ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Retention {
    Days(u32),
    Versions(u32),
}

/// A month: long enough to undo last week's backfill once it has been noticed, short
/// enough that a daily rebuild of a year keeps about 30 copies, not 365.
impl Default for Retention {
    fn default() -> Self {
        Retention::Days(30)
    }
}

impl Retention {
    /// `"30 days"`, `"1 day"`, `"10 versions"`, `"1 version"`: a whole number from 1 up
    /// and its unit. The error says what was wrong; the caller says what would be right.
    pub fn parse(text: &str) -> Result<Retention, String> {
        let mut words = text.split_whitespace();
        let (Some(n), Some(unit), None) = (words.next(), words.next(), words.next()) else {
            return Err(format!("is `{text}`, not a number and a unit"));
        };
        let n: u32 = n
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("is `{text}`: `{n}` is not a whole number from 1 up"))?;
        match unit {
            "day" | "days" => Ok(Retention::Days(n)),
            "version" | "versions" => Ok(Retention::Versions(n)),
            _ => Err(format!(
                "is `{text}`: `{unit}` is neither days nor versions"
            )),
        }
    }

    /// How it reads in sqlrun.toml.
    pub fn text(&self) -> String {
        match self {
            Retention::Days(n) => format!("{n} days"),
            Retention::Versions(n) => format!("{n} versions"),
        }
    }

    /// The seconds a replaced version is kept (None: kept by count).
    pub fn seconds(&self) -> Option<i64> {
        match self {
            Retention::Days(n) => Some(i64::from(*n) * 86_400),
            Retention::Versions(_) => None,
        }
    }

    /// How many replaced versions a partition keeps (None: kept by age).
    pub fn versions(&self) -> Option<u32> {
        match self {
            Retention::Versions(n) => Some(*n),
            Retention::Days(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_versions_read_in_either_number() {
        assert_eq!(Retention::parse("30 days"), Ok(Retention::Days(30)));
        assert_eq!(Retention::parse("1 day"), Ok(Retention::Days(1)));
        assert_eq!(
            Retention::parse(" 10  versions "),
            Ok(Retention::Versions(10))
        );
        assert_eq!(Retention::parse("1 version"), Ok(Retention::Versions(1)));
        assert_eq!(Retention::default().text(), "30 days");
    }

    #[test]
    fn anything_else_says_what_is_wrong() {
        for bad in [
            "",
            "30",
            "days",
            "0 days",
            "-1 days",
            "3 weeks",
            "30 days ago",
            "x days",
        ] {
            assert!(Retention::parse(bad).is_err(), "{bad}");
        }
        assert!(Retention::parse("3 weeks").unwrap_err().contains("weeks"));
    }
}
