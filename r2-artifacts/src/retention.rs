//! Retention: how long a stored artifact is kept, and when the next sweep is due.

/// Default retention of stored artifacts.
pub const DEFAULT_RETENTION_DAYS: f64 = 30.0;

const DAY_MS: f64 = 24.0 * 60.0 * 60.0 * 1000.0;

/// The retention from configuration (`MIMO_ARTIFACT_RETENTION_DAYS`, fractional days allowed),
/// in milliseconds. Missing, unparsable, negative or zero means the default.
pub fn retention_ms(configured_days: Option<&str>) -> u64 {
    let days = configured_days
        .and_then(|d| d.trim().parse::<f64>().ok())
        .filter(|d| d.is_finite() && *d > 0.0)
        .unwrap_or(DEFAULT_RETENTION_DAYS);
    (days * DAY_MS).round().max(1.0) as u64
}

/// Artifacts stored at these times, kept `retention_ms`: which have expired at `now_ms`
/// (indexes into `stored_at`), and when the next one will (`None` if none is left).
pub fn sweep(stored_at: &[u64], retention_ms: u64, now_ms: u64) -> (Vec<usize>, Option<u64>) {
    let mut expired = Vec::new();
    let mut next: Option<u64> = None;
    for (i, &at) in stored_at.iter().enumerate() {
        let expires = at.saturating_add(retention_ms);
        if expires <= now_ms {
            expired.push(i);
        } else {
            next = Some(next.map_or(expires, |n| n.min(expires)));
        }
    }
    (expired, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_comes_from_configuration_in_days() {
        assert_eq!(retention_ms(None), 30 * 86_400_000);
        assert_eq!(retention_ms(Some("1")), 86_400_000);
        assert_eq!(retention_ms(Some(" 0.5 ")), 43_200_000);
        assert_eq!(retention_ms(Some("0.00005")), 4_320);
        for bad in ["", "zero", "-1", "0", "NaN", "inf"] {
            assert_eq!(retention_ms(Some(bad)), 30 * 86_400_000, "{bad:?}");
        }
    }

    #[test]
    fn sweep_finds_the_expired_and_the_next_expiry() {
        let stored = [1_000, 5_000, 2_000, 9_000];
        assert_eq!(sweep(&stored, 1_000, 2_999), (vec![0], Some(3_000)));
        assert_eq!(sweep(&stored, 1_000, 3_000), (vec![0, 2], Some(6_000)));
        assert_eq!(sweep(&stored, 1_000, 10_000), (vec![0, 1, 2, 3], None));
        assert_eq!(sweep(&[], 1_000, 10_000), (vec![], None));
    }
}
