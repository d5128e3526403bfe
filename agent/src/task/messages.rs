//! What the registry tells a task's coordinator, as it travels between the two objects.

use mimo_protocol::{ActionOutcome, AttemptState, BrowserSnapshot};
use serde::{Deserialize, Serialize};

/// The registry's answer to a binding request: the task's extension and, if it has reported
/// one, its browser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    pub client_id: String,
    pub snapshot: Option<BrowserSnapshot>,
}

/// A browser snapshot the registry pushes when an extension reports a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotPush {
    pub client_id: String,
    pub snapshot: BrowserSnapshot,
}

/// What the registry relays from the extension about the task's actions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ActionEvent {
    #[serde(rename_all = "camelCase")]
    Ack {
        action_id: String,
        attempt: u32,
    },
    Outcome {
        outcome: ActionOutcome,
    },
    /// The answer to an `action_query`.
    #[serde(rename_all = "camelCase")]
    Status {
        action_id: String,
        attempt: u32,
        state: AttemptState,
        #[serde(default)]
        outcome: Option<ActionOutcome>,
    },
}
