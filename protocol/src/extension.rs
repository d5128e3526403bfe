//! Messages between the extension and the server on `/ws/extension`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::task::TaskControl;
use crate::{
    ActionOutcome, BrowserAction, BrowserSnapshot, ClientId, ConfirmationRequest, ErrorObject,
    TabEvent, TaskStatus,
};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BrowserInfo {
    pub name: String,
    pub version: String,
    #[serde(default)]
    pub user_agent: String,
}

/// Extension → server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(remote = "Self", rename_all = "snake_case")]
#[ts(tag = "type")]
pub enum ExtensionMessage {
    /// First message on every connection: who this extension instance is.
    #[serde(rename_all = "camelCase")]
    Hello {
        client_id: String,
        name: String,
        browser: BrowserInfo,
        extension_version: String,
    },
    /// The whole browser state; replaces the stored snapshot.
    FullStateSync { snapshot: BrowserSnapshot },
    /// One incremental change.
    TabEvent { event: TabEvent },
    /// Keep-alive. Sent exactly as [`PING_FRAME`], it is answered by the runtime without waking
    /// the registry (a hibernation auto-response).
    Ping {},
    /// An action was received (sent at once, before it runs).
    #[serde(rename_all = "camelCase")]
    ActionAck {
        action_id: String,
        attempt: u32,
        task_id: String,
    },
    /// An action ended.
    ActionResult { outcome: ActionOutcome },
    /// The answer to `action_query`: what became of an attempt.
    #[serde(rename_all = "camelCase")]
    ActionStatus {
        task_id: String,
        action_id: String,
        attempt: u32,
        state: AttemptState,
        /// The stored outcome, when `state` is `finished` and the outcome was kept.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        outcome: Option<ActionOutcome>,
    },
    /// The person's answer to a confirmation, from the side panel.
    #[serde(rename_all = "camelCase")]
    Confirm {
        task_id: String,
        step: u32,
        approve: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        reason: Option<String>,
    },
    /// The person took over the task's tab, resumed, or stopped the task from the overlay.
    #[serde(rename_all = "camelCase")]
    TaskControl {
        task_id: String,
        control: TaskControl,
    },
}
via_json_value_internal!(ExtensionMessage, "type");

/// What the extension's action log knows of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum AttemptState {
    /// Never received (or long forgotten): it did not run.
    Unknown,
    /// Running now, or waiting behind another action of its task.
    Running,
    /// It ended; the outcome comes with the answer when it was kept.
    Finished,
}

/// The exact keep-alive frame an extension sends, and the exact answer.
pub const PING_FRAME: &str = r#"{"type":"ping"}"#;
pub const PONG_FRAME: &str = r#"{"type":"pong"}"#;

/// Server → extension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(remote = "Self", rename_all = "snake_case")]
#[ts(tag = "type")]
// A message is built, sent and dropped; boxing the action would only make it clumsier to use.
#[allow(clippy::large_enum_variant)]
pub enum ServerToExtension {
    /// Answer to `hello`: the connection is registered.
    #[serde(rename_all = "camelCase")]
    Welcome { client_id: String },
    /// A frame was refused; the connection stays open.
    Error { error: ErrorObject },
    /// Answer to `ping`.
    Pong {},
    /// Run this action (the extension acks it at once).
    BrowserAction { action: BrowserAction },
    /// The task's status changed (the overlay follows it: takeover, resumed, stopped, done), or
    /// the person changed whether it may use the local bridge.
    #[serde(rename_all = "camelCase")]
    TaskState {
        task_id: String,
        status: TaskStatus,
        /// The person allows the task to use the local bridge: without it the extension refuses
        /// the task's `bridge_invoke`, whoever sent it.
        #[serde(default)]
        bridge: bool,
    },
    /// What became of this attempt? Asked before an attempt whose outcome is unknown (it timed
    /// out) is run again: only one that never started may be. Answered with `action_status`;
    /// the attempt is never started by the question.
    #[serde(rename_all = "camelCase")]
    ActionQuery {
        task_id: String,
        action_id: String,
        attempt: u32,
    },
    /// A step of the task waits for the person: the side panel shows it with Confirm and
    /// Decline, as the web app does (seed 002 §6.2).
    #[serde(rename_all = "camelCase")]
    ConfirmationRequested {
        task_id: String,
        request: Box<ConfirmationRequest>,
    },
    /// The confirmation of `step` was answered (here or elsewhere): the side panel drops it.
    #[serde(rename_all = "camelCase")]
    ConfirmationSettled {
        task_id: String,
        step: u32,
        approved: bool,
        by: String,
    },
    /// The server has an attempt's result (recorded now, or earlier, or no longer wanted): the
    /// extension stops resending it. Only results without this answer are resent on `welcome`.
    #[serde(rename_all = "camelCase")]
    ResultAck {
        task_id: String,
        action_id: String,
        attempt: u32,
    },
}
via_json_value_internal!(ServerToExtension, "type");

/// One extension instance as listed to the web app (`GET /api/extension/extension-list`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionInfo {
    pub client_id: String,
    pub name: String,
    pub browser: BrowserInfo,
    pub extension_version: String,
    pub online: bool,
    /// Milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub last_seen_at: u64,
    /// When a task was last bound to it, in milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub last_used_at: Option<u64>,
    /// Whether it holds a credential of its own that is not revoked (only a paired extension
    /// can connect).
    #[serde(default)]
    pub paired: bool,
}

/// Body of `GET /api/extension/extension-list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionList {
    pub extensions: Vec<ExtensionInfo>,
}

/// Body of `POST /api/extension/pairing-code` (with the deployment token): a one-time code the
/// person types into the extension's options page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PairingCode {
    /// Like `ABCD-EFGH`; typed in any case, with or without the dash.
    pub code: String,
    /// Milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub expires_at: u64,
}

/// Body of `POST /api/extension/pair` (no token: the code is the proof).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PairRequest {
    pub code: String,
    /// The credential this extension held until now, when it pairs again: the server keeps its
    /// client id and revokes it. The server assigns every client id: an extension never names
    /// one, so it can never take another's id or revoke another's credential.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub replaces: Option<String>,
}

/// The answer to a pairing: the extension's credential, shown this once and stored only as a
/// digest on the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PairResponse {
    /// The id the server gave this extension: it names it in `hello` and in its socket's URL.
    #[ts(type = "string")]
    pub client_id: ClientId,
    pub token: String,
}

/// Body of `POST /api/ws-ticket`: a single-use ticket that opens one WebSocket (`?ticket=`) of
/// the token's holder within a minute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WsTicket {
    pub ticket: String,
    /// Milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub expires_at: u64,
}

/// Body of `POST /api/extension/poll`: the extension's connection without a socket, for networks
/// that block WebSockets (seed 002 §4.1). It carries the same frames as the socket, both ways:
/// what the extension would have sent, in order, and the acknowledgement of what it received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PollRequest {
    /// Every server frame up to this sequence number arrived: the server forgets them.
    /// Frames after it are delivered again, so a lost answer loses nothing.
    #[ts(type = "number")]
    pub ack: u64,
    /// Frames for the server, handled in order exactly as on the socket.
    #[serde(default)]
    pub frames: Vec<ExtensionMessage>,
    /// How long the server may hold the request while it has nothing to deliver (a long poll),
    /// capped at [`MAX_POLL_WAIT_MS`]; `0` answers at once.
    #[serde(default)]
    pub wait_ms: u32,
}

/// The longest a poll is held open.
pub const MAX_POLL_WAIT_MS: u32 = 20_000;

/// An extension that polled within this long counts as connected: a frame for it is kept until
/// its next poll instead of failing with `PLUGIN_OFFLINE`.
pub const POLL_PRESENCE_MS: u64 = 30_000;

/// The answer to a poll.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PollResponse {
    /// The direct answers to the request's frames, in order (`welcome`, `result_ack`, `pong`,
    /// `error`), as the socket would have sent them.
    pub replies: Vec<ServerToExtension>,
    /// Frames the server sent since the acknowledged one (actions, task states, questions).
    pub frames: Vec<PolledFrame>,
}

/// A frame kept for a polling extension, numbered so that it is acknowledged once received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PolledFrame {
    #[ts(type = "number")]
    pub seq: u64,
    pub frame: ServerToExtension,
}
