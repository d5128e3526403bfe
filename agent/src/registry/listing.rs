//! The deployment-wide listing: every client seen, whether it is online and paired, and the
//! candidates a task may be bound to. Kept apart from the per-client rules, so that a client's
//! own state can move to an object of its own while the listing stays one.

use mimo_protocol::{BrowserInfo, ClientId, ExtensionInfo};

use super::Presence;
use crate::selection::Candidate;

/// A client as stored (whether it is online or paired is known elsewhere).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientRecord {
    pub client_id: ClientId,
    pub name: String,
    /// `None` until its `hello` said, or when what was stored cannot be read.
    pub browser: Option<BrowserInfo>,
    pub extension_version: String,
    pub last_seen_at: u64,
    pub last_used_at: Option<u64>,
}

/// A client as the listing sees it at `now`.
pub fn info<C>(
    record: ClientRecord,
    presence: &Presence<C>,
    paired: bool,
    now: u64,
) -> ExtensionInfo {
    let online = presence.is_online(now);
    ExtensionInfo {
        online,
        browser: record.browser.unwrap_or(BrowserInfo {
            name: String::new(),
            version: String::new(),
            user_agent: String::new(),
        }),
        client_id: record.client_id.into(),
        name: record.name,
        extension_version: record.extension_version,
        // Keep-alives never reach the registry, so an open socket is the news: an online
        // client is seen now.
        last_seen_at: if online { now } else { record.last_seen_at },
        last_used_at: record.last_used_at,
        paired,
    }
}

/// The listed clients a task may be bound to.
pub fn candidates(listed: Vec<ExtensionInfo>) -> Vec<Candidate> {
    listed
        .into_iter()
        .map(|e| Candidate {
            client_id: e.client_id,
            online: e.online,
            last_used_at: e.last_used_at,
            last_seen_at: e.last_seen_at,
        })
        .collect()
}
