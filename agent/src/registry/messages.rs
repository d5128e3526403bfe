//! What the deployment's directory and a client's own object tell each other ([`super::sharding`]
//! has the rules): a client's presence, reported to the directory, and the directory's news for
//! a client's object.

use mimo_protocol::{BrowserInfo, ClientId};
use serde::{Deserialize, Serialize};

/// A client's presence as its object knows it, `at` the time of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PresenceReport {
    pub client_id: ClientId,
    /// Whether it has an open socket.
    pub socket: bool,
    /// When it last polled, if it polls.
    pub polled_at: Option<u64>,
    pub at: u64,
    /// What its `hello` said of itself, when this report follows one.
    pub hello: Option<Registration>,
}

/// What an extension's `hello` says of itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Registration {
    pub name: String,
    pub browser: BrowserInfo,
    pub extension_version: String,
}

/// What the directory tells a client's object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum News {
    /// A task is bound to the client from now on (`at`: when it was).
    Bound { task_id: String, at: u64 },
    /// A task bound to the client was bound to another.
    Unbound { task_id: String },
    /// The client's credential was revoked (the `epoch`-th change of its credential).
    Revoked { epoch: u64 },
    /// The client was paired again (the `epoch`-th change of its credential); `credential` is
    /// the digest of its new token, which its object checks the extension's requests against.
    Paired { epoch: u64, credential: String },
}
