//! Parsing what people type into billing requests: prices as decimal strings, billing months
//! as `YYYY-MM`, and the file name of an export. Pure, so every edge is unit-tested.

use chrono::{DateTime, Datelike, NaiveDate, Utc};

use super::Period;

/// Why an input was refused; the message is safe to show.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error("expected a non-negative decimal with at most 12 integer and 6 fractional digits, like 2.50")]
    Price,
    #[error("expected a month as YYYY-MM, like 2026-11")]
    Month,
}

/// A price per GPU-hour (`"2.50"`) as micro-units (`2_500_000`), exactly: no float on the way,
/// and at most six decimals (the price book's `numeric(18, 6)`); anything else is refused
/// rather than rounded.
pub fn parse_price_micros(s: &str) -> Result<i64, InputError> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || int.len() > 12 || frac.len() > 6 || !digits(int) || !digits(frac) {
        return Err(InputError::Price);
    }
    if s.contains('.') && frac.is_empty() {
        return Err(InputError::Price);
    }
    let int: i64 = int.parse().map_err(|_| InputError::Price)?;
    let frac: i64 = format!("{frac:0<6}").parse().map_err(|_| InputError::Price)?;
    Ok(int * 1_000_000 + frac)
}

/// `YYYY-MM` as the half-open UTC month `[first day, first day of the next month)`.
pub fn month_period(s: &str) -> Result<Period, InputError> {
    let b = s.as_bytes();
    if b.len() != 7 || b[4] != b'-' || !b.iter().enumerate().all(|(i, c)| i == 4 || c.is_ascii_digit()) {
        return Err(InputError::Month);
    }
    let year: i32 = s[..4].parse().map_err(|_| InputError::Month)?;
    let month: u32 = s[5..].parse().map_err(|_| InputError::Month)?;
    let start = NaiveDate::from_ymd_opt(year, month, 1).ok_or(InputError::Month)?;
    let next = if month == 12 { NaiveDate::from_ymd_opt(year + 1, 1, 1) } else { start.with_month(month + 1) }
        .ok_or(InputError::Month)?;
    Ok(Period { start: midnight(start), end: midnight(next) })
}

fn midnight(d: NaiveDate) -> DateTime<Utc> {
    d.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc()
}

/// The download name of an export: `grus-usage-<scope>-<period>.<ext>`, where the period is
/// `YYYY-MM` for a calendar month and `<start>_<end>` (compact UTC) otherwise. `scope` is a
/// tenant slug or `all`, both already restricted to `[a-z0-9-]`.
pub fn export_file_name(scope: &str, period: Period, extension: &str) -> String {
    let label = match month_period(&period.start.format("%Y-%m").to_string()) {
        Ok(m) if m == period => period.start.format("%Y-%m").to_string(),
        _ => format!("{}_{}", period.start.format("%Y%m%dT%H%M%SZ"), period.end.format("%Y%m%dT%H%M%SZ")),
    };
    format!("grus-usage-{scope}-{label}.{extension}")
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn prices_parse_exactly() {
        assert_eq!(parse_price_micros("2.50"), Ok(2_500_000));
        assert_eq!(parse_price_micros("0"), Ok(0));
        assert_eq!(parse_price_micros("3"), Ok(3_000_000));
        assert_eq!(parse_price_micros("0.000001"), Ok(1));
        assert_eq!(parse_price_micros("999999999999.999999"), Ok(999_999_999_999_999_999));
        for bad in ["", ".5", "5.", "-1", "+1", "1e3", "1.0000001", "1,5", " 1", "1 ", "1.2.3", "1000000000000", "NaN"]
        {
            assert_eq!(parse_price_micros(bad), Err(InputError::Price), "{bad:?}");
        }
    }

    #[test]
    fn months() {
        let p = month_period("2026-11").unwrap();
        assert_eq!(p.start, Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap());
        assert_eq!(p.end, Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap());
        let dec = month_period("2026-12").unwrap();
        assert_eq!(dec.end, Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap());
        for bad in ["2026-13", "2026-00", "2026-1", "26-11", "2026/11", "2026-11-01", "abcd-ef", "+026-11"] {
            assert_eq!(month_period(bad), Err(InputError::Month), "{bad:?}");
        }
    }

    #[test]
    fn file_names() {
        let m = month_period("2026-02").unwrap();
        assert_eq!(export_file_name("all", m, "csv"), "grus-usage-all-2026-02.csv");
        let odd = Period { start: m.start, end: Utc.with_ymd_and_hms(2026, 2, 3, 12, 0, 0).unwrap() };
        assert_eq!(export_file_name("acme", odd, "jsonl"), "grus-usage-acme-20260201T000000Z_20260203T120000Z.jsonl");
    }
}
