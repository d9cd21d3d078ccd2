//! Numbers as people read them. Pure formatting, below every layer that shows a value
//! (value kinds, output), so that none of them imports another for it.

/// An amount in won, as the demo and the reports print it: `51820000` -> `51,820,000`.
pub fn won(amount: i64) -> String {
    thousands(amount)
}

/// Any whole number with thousands separators: `51820000` -> `51,820,000`, `-1,000`.
pub fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        out.insert(0, '-');
    }
    out
}

/// A difference, signed unless it is none: `+350,000`, `-1,000`, `0`.
pub fn delta(d: i64) -> String {
    match d > 0 {
        true => format!("+{}", thousands(d)),
        false => thousands(d),
    }
}

#[cfg(test)]
mod tests {
    use super::{delta, won};

    #[test]
    fn a_delta_is_signed_unless_none() {
        assert_eq!(
            [delta(350_000), delta(-1_000), delta(0)],
            ["+350,000", "-1,000", "0"]
        );
    }

    #[test]
    fn won_groups_thousands() {
        assert_eq!(won(51_820_000), "51,820,000");
        assert_eq!(won(-1_000), "-1,000");
        assert_eq!(won(999), "999");
        assert_eq!(won(0), "0");
    }
}
