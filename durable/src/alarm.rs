//! An object's one alarm, shared by every purpose that needs a wake-up: each asks for its time
//! and the alarm rings at the soonest.

use std::time::Duration;

use worker::{Result, Storage};

use crate::http::now_ms;

/// Sets the alarm to `at` (ms since the epoch) unless it is already due sooner.
pub async fn wake_at(storage: &Storage, at: u64) -> Result<()> {
    match storage.get_alarm().await? {
        Some(current) if (current.max(0) as u64) <= at => Ok(()),
        // `set_alarm` takes an offset from now.
        _ => {
            let offset = Duration::from_millis(at.saturating_sub(now_ms()));
            storage.set_alarm(offset).await
        }
    }
}
