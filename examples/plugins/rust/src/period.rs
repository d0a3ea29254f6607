//! The period a summary covers, in UTC seconds from the WASI clock.

use std::time::{SystemTime, UNIX_EPOCH};

/// The most days a summary may cover, and the fewest.
pub const MIN_DAYS: i64 = 1;
pub const MAX_DAYS: i64 = 366;

/// The last `days` days up to `to` (Unix seconds, UTC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    pub days: i64,
    pub from: i64,
    pub to: i64,
}

impl Period {
    /// The last `days` days up to now.
    pub fn last_days(days: i64) -> Period {
        // A clock before 1970 is not a clock worth arguing with: use 0.
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        Period::ending_at(days, now)
    }

    pub fn ending_at(days: i64, to: i64) -> Period {
        Period {
            days,
            from: to - days * 86_400,
            to,
        }
    }
}

/// Formats Unix seconds as RFC 3339 UTC, e.g. `2026-11-01T00:00:00Z`.
pub fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        y,
        m,
        d,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_793_491_199), "2026-10-31T23:59:59Z");
        assert_eq!(rfc3339(1_793_491_200), "2026-11-01T00:00:00Z");
        assert_eq!(rfc3339(4_107_542_400), "2100-03-01T00:00:00Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn period_counts_back_whole_days() {
        let p = Period::ending_at(30, 1_793_491_200);
        assert_eq!(
            (rfc3339(p.from).as_str(), rfc3339(p.to).as_str()),
            ("2026-10-02T00:00:00Z", "2026-11-01T00:00:00Z")
        );
    }
}
