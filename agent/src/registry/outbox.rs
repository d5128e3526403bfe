//! The frames kept for a polling client: how long they live, how a poll acknowledges and
//! collects them, and how a socket takes them over.

use mimo_protocol::extension::MAX_POLL_WAIT_MS;
use mimo_protocol::ClientId;

use super::{Effect, Persist};

/// A frame kept for a polling extension older than this is dropped unread: every frame is an
/// action (acked within seconds or retried anew), a question about one, or a state the next
/// frames supersede, so delivering it late could only run a step its task gave up on.
pub const OUTBOX_TTL_MS: u64 = 30_000;

/// The most kept frames one poll delivers (the rest come with the next).
pub const POLL_BATCH: u32 = 50;

/// Frames kept before this are stale at `now`.
fn stale_before(now: u64) -> u64 {
    now.saturating_sub(OUTBOX_TTL_MS)
}

/// A poll arrived: the client is connected, by polling, now. The directory hears of it when
/// it last heard long enough ago (`reported_at`), or never.
pub(super) fn poll_arrived<C>(
    client_id: ClientId,
    reported_at: Option<u64>,
    now: u64,
) -> Vec<Effect<C>> {
    let mut effects = vec![Effect::Persist(Persist::Polled {
        client_id: client_id.clone(),
        at: now,
    })];
    if super::sharding::poll_report_due(reported_at, now) {
        effects.push(Effect::ReportPresence {
            client_id,
            hello: None,
        });
    }
    effects
}

/// A poll's frames are handled: it acknowledges what it received (`ack`) and takes what was
/// kept after, waiting up to `wait_ms` (at most [`MAX_POLL_WAIT_MS`]) when nothing is.
pub(super) fn collect<C>(client_id: ClientId, ack: u64, wait_ms: u32, now: u64) -> Vec<Effect<C>> {
    vec![Effect::CollectOutbox {
        client_id,
        ack,
        stale_before: stale_before(now),
        limit: POLL_BATCH,
        hold_ms: wait_ms.min(MAX_POLL_WAIT_MS),
    }]
}

/// A held poll's wait ended: it takes what is kept now, and, held this long, it still counts
/// as polling now.
pub(super) fn waited<C>(client_id: ClientId, ack: u64, now: u64) -> Vec<Effect<C>> {
    vec![
        Effect::CollectOutbox {
            client_id: client_id.clone(),
            ack,
            stale_before: stale_before(now),
            limit: POLL_BATCH,
            hold_ms: 0,
        },
        Effect::Persist(Persist::Polled { client_id, at: now }),
    ]
}

/// Back on a socket after polling (welcomed there, and no longer polling): what was kept for
/// the polls goes on the socket now.
pub(super) fn hand_to_socket<C>(client_id: ClientId, conn: C, now: u64) -> Effect<C> {
    Effect::DrainOutbox {
        client_id,
        conn,
        stale_before: stale_before(now),
    }
}
