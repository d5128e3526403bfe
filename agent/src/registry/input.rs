//! What happens to the registry, each with what storage and the runtime know of what it
//! concerns (the shell reads that before it feeds the input in).

use mimo_protocol::{BrowserSnapshot, ClientId, ErrorObject, ExtensionMessage, ServerToExtension};

use super::effect::Pending;
use super::messages::{News, PresenceReport};

/// Something that happened to the registry. `C` is the runtime's handle of a socket.
#[derive(Debug, Clone, PartialEq)]
pub enum Input<C> {
    /// An extension opens a socket; `older` are the sockets of the same client still there.
    SocketOpened { client_id: ClientId, older: Vec<C> },
    /// An extension's socket closed.
    SocketClosed { client_id: ClientId },
    /// A frame arrived on an extension's socket (`Err`: it could not be read).
    SocketFrame {
        conn: C,
        client_id: ClientId,
        /// Whether the client's credential is still valid.
        paired: bool,
        frame: Result<ExtensionMessage, ErrorObject>,
        facts: FrameFacts,
    },
    /// A poll arrived, before its frames are handled; the directory last heard of the client's
    /// presence at `reported_at`.
    PollArrived {
        client_id: ClientId,
        reported_at: Option<u64>,
    },
    /// One of a poll's frames, in order.
    PolledFrame {
        client_id: ClientId,
        frame: ExtensionMessage,
        facts: FrameFacts,
    },
    /// A poll's frames are handled: it is answered with what was kept for the client after
    /// `ack`, or held up to `wait_ms` for something to be kept.
    PollCollect {
        client_id: ClientId,
        ack: u64,
        wait_ms: u32,
    },
    /// A held poll was woken, or its wait ran out.
    PollWaited { client_id: ClientId, ack: u64 },
    /// A task sends a frame to a client.
    FrameForClient {
        client_id: ClientId,
        frame: ServerToExtension,
        presence: Presence<C>,
    },
    /// A task's answer to an [`Effect::ForwardToTask`](super::Effect::ForwardToTask).
    Forwarded {
        pending: Pending<C>,
        outcome: Forwarding,
    },
    /// The directory: the client was paired again, the `epoch`-th change of its credential
    /// (sockets opened with the old credential are to close); `credential`: the new token's
    /// digest.
    Paired {
        client_id: ClientId,
        epoch: u64,
        credential: String,
    },
    /// The directory: the client's credential is to be revoked (`revoked`: there was one to
    /// revoke), the `epoch`-th change of it.
    Revoked {
        client_id: ClientId,
        revoked: bool,
        epoch: u64,
    },
    /// The directory: a client's object reports its presence; the directory's last report of
    /// it was made `known_at`.
    PresenceReported {
        report: PresenceReport,
        known_at: Option<u64>,
    },
    /// The directory bound a task to a client (as chosen: see `selection::bind`) at `at`; it
    /// was bound to `before`.
    Bound {
        task_id: String,
        client_id: ClientId,
        before: Option<ClientId>,
        at: u64,
    },
    /// A client's object hears from the directory; it knows of the `known_epoch`-th change of
    /// its credential, and has `sockets` open.
    News {
        client_id: ClientId,
        news: News,
        known_epoch: u64,
        sockets: Vec<C>,
    },
}

/// Where a client is connected: an open socket, and when it last polled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Presence<C> {
    pub socket: Option<C>,
    pub polled_at: Option<u64>,
}

/// What storage knows of what an extension's frame concerns (read as [`FrameFacts::needed`]
/// says).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameFacts {
    /// The client the frame's task is bound to.
    pub bound: Option<String>,
    /// The client's stored browser snapshot.
    pub snapshot: Option<BrowserSnapshot>,
}

/// Which facts a frame needs: the binding of this task, and whether the stored snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs<'a> {
    pub binding_of: Option<&'a str>,
    pub snapshot: bool,
}

impl FrameFacts {
    /// What the shell reads before feeding `frame` in.
    pub fn needed(frame: &ExtensionMessage) -> Needs<'_> {
        let binding_of = match frame {
            ExtensionMessage::ActionAck { task_id, .. }
            | ExtensionMessage::Confirm { task_id, .. }
            | ExtensionMessage::TaskControl { task_id, .. }
            | ExtensionMessage::ActionStatus { task_id, .. } => Some(task_id.as_str()),
            ExtensionMessage::ActionResult { outcome } => Some(outcome.task_id.as_str()),
            ExtensionMessage::Hello { .. }
            | ExtensionMessage::FullStateSync { .. }
            | ExtensionMessage::TabEvent { .. }
            | ExtensionMessage::Ping {} => None,
        };
        Needs {
            binding_of,
            snapshot: matches!(frame, ExtensionMessage::TabEvent { .. }),
        }
    }
}

/// How a frame passed on to its task went.
#[derive(Debug, Clone, PartialEq)]
pub enum Forwarding {
    /// The task took it.
    Taken,
    /// The task refused it for good: sending it again would not help.
    Refused(ErrorObject),
    /// It did not reach the task (why).
    Unreachable(String),
}
