//! PostgreSQL values in and out: parameters sent as text (the server reads each as the
//! type its statement gives it), and any column read back as a `Value` in the contract's
//! spelling.

use std::error::Error as StdError;

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type};

use super::Value;

/// A parameter sent in text form: the server reads it as the type the statement gives
/// it (a date, a timestamptz, a bigint), as it would read a quoted literal, but bound.
#[derive(Debug)]
pub(super) struct TextParam(pub(super) Value);

impl TextParam {
    /// The text sent (none: NULL).
    pub(super) fn text(&self) -> Option<String> {
        Some(match &self.0 {
            Value::Null => return None,
            Value::Int(n) => n.to_string(),
            Value::Real(f) => f.to_string(),
            Value::Text(s) => s.clone(),
            Value::Bool(b) => if *b { "1" } else { "0" }.to_string(),
        })
    }
}

impl ToSql for TextParam {
    fn to_sql(
        &self,
        _ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match self.text() {
            None => Ok(IsNull::Yes),
            Some(text) => {
                out.extend_from_slice(text.as_bytes());
                Ok(IsNull::No)
            }
        }
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    fn encode_format(&self, _ty: &Type) -> tokio_postgres::types::Format {
        tokio_postgres::types::Format::Text
    }

    tokio_postgres::types::to_sql_checked!();
}

/// Any column as a Value: dates as `YYYY-MM-DD`, times in UTC as `YYYY-MM-DD HH:MM:SS`
/// (the contract's spelling on both backends), whole numerics as integers.
pub(super) struct Any(pub(super) Value);

impl<'a> FromSql<'a> for Any {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn StdError + Sync + Send>> {
        let value = match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::OID => Value::Int(u32::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Bool(bool::from_sql(ty, raw)?),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            Type::NUMERIC => numeric(raw)?,
            Type::DATE => Value::Text(NaiveDate::from_sql(ty, raw)?.format("%Y-%m-%d").to_string()),
            Type::TIMESTAMPTZ => Value::Text(
                DateTime::<Utc>::from_sql(ty, raw)?
                    .format("%Y-%m-%d %H:%M:%S")
                    .to_string(),
            ),
            Type::TIMESTAMP => Value::Text(
                NaiveDateTime::from_sql(ty, raw)?
                    .format("%Y-%m-%d %H:%M:%S")
                    .to_string(),
            ),
            _ if <&str as FromSql>::accepts(ty) => {
                Value::Text(<&str>::from_sql(ty, raw)?.to_string())
            }
            _ => Value::Text(format!("<{} value>", ty.name())),
        };
        Ok(Any(value))
    }

    fn from_sql_null(_ty: &Type) -> Result<Self, Box<dyn StdError + Sync + Send>> {
        Ok(Any(Value::Null))
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }
}

/// PostgreSQL's binary NUMERIC (base-10000 digits): an integer when it has no fraction
/// (sum() of bigint is numeric), else a float.
fn numeric(raw: &[u8]) -> Result<Value, Box<dyn StdError + Sync + Send>> {
    let word = |i: usize| -> Result<i16, Box<dyn StdError + Sync + Send>> {
        Ok(i16::from_be_bytes([
            *raw.get(i).ok_or("short numeric")?,
            *raw.get(i + 1).ok_or("short numeric")?,
        ]))
    };
    let (ndigits, weight, sign, dscale) = (word(0)?, word(2)?, word(4)? as u16, word(6)?);
    if sign == 0xC000 {
        return Ok(Value::Real(f64::NAN));
    }
    let mut whole: i128 = 0;
    let mut fraction = 0f64;
    for d in 0..ndigits as i32 {
        let digit = i128::from(word(8 + 2 * d as usize)?);
        let power = weight as i32 - d;
        if power >= 0 {
            whole += digit * 10_000i128.pow(power as u32);
        } else {
            fraction += digit as f64 * 10_000f64.powi(power);
        }
    }
    let negative = sign == 0x4000;
    if dscale == 0 || fraction == 0.0 {
        let n = i64::try_from(whole).map_err(|_| "numeric out of range")?;
        return Ok(Value::Int(if negative { -n } else { n }));
    }
    let f = whole as f64 + fraction;
    Ok(Value::Real(if negative { -f } else { f }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numerics_decode() {
        // 12345678 = digits [1234, 5678], weight 1, positive, scale 0
        let raw = [0, 2, 0, 1, 0, 0, 0, 0, 0x04, 0xD2, 0x16, 0x2E];
        assert_eq!(numeric(&raw).unwrap(), Value::Int(12_345_678));
        let negative = [0, 1, 0, 0, 0x40, 0, 0, 0, 0, 7];
        assert_eq!(numeric(&negative).unwrap(), Value::Int(-7));
    }
}
