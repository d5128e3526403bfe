//! The I/O the registry asks of its shell, each carrying what it needs.

use mimo_protocol::{BrowserSnapshot, ClientId, ErrorObject, ServerToExtension, TaskControl};

use super::messages::{News, PresenceReport, Registration};

use crate::task::{ActionEvent, SnapshotPush};

/// I/O for the shell, in order. `C` is the runtime's handle of a socket.
#[derive(Debug, Clone, PartialEq)]
// Effects are short-lived (returned, carried out, dropped); their size does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Effect<C> {
    /// Send a frame on an extension's socket.
    SendToSocket {
        conn: C,
        frame: ServerToExtension,
    },
    /// One of the answers of the poll being handled (its `replies`).
    Reply(ServerToExtension),
    /// The request is refused with this error (the task's send, the revocation).
    Refuse(ErrorObject),
    /// Accept the socket being opened, as the client's.
    AcceptSocket {
        client_id: ClientId,
    },
    CloseSocket {
        conn: C,
        code: u16,
        reason: &'static str,
    },
    Persist(Persist),
    /// Keep a frame for a polling client, numbered after the ones kept before it.
    QueueInOutbox {
        client_id: ClientId,
        frame: ServerToExtension,
        at: u64,
    },
    /// Wake every poll held for the client: something was kept for it.
    WakePolls {
        client_id: ClientId,
    },
    /// Send on the socket every frame kept for the client, in order, and forget them; those
    /// kept before `stale_before` are dropped unsent.
    DrainOutbox {
        client_id: ClientId,
        conn: C,
        stale_before: u64,
    },
    /// Answer the poll with the frames kept for the client after `ack`, at most `limit`, in
    /// order: those up to `ack` (received) and those kept before `stale_before` are forgotten.
    /// When there are none and `hold_ms` is not 0, hold the poll up to `hold_ms` for
    /// [`Effect::WakePolls`], then report [`Input::PollWaited`](super::Input::PollWaited).
    CollectOutbox {
        client_id: ClientId,
        ack: u64,
        stale_before: u64,
        limit: u32,
        hold_ms: u32,
    },
    /// Pass what the extension says to its task; report how it went as
    /// [`Input::Forwarded`](super::Input::Forwarded) with `pending`.
    ForwardToTask {
        task_id: String,
        message: ToTask,
        pending: Pending<C>,
    },
    /// Push the snapshot to the tasks most recently bound to its client, at most `tasks` of
    /// them (older ones get the current snapshot when they bind again). One unreachable task
    /// does not keep the others from it.
    PushSnapshot {
        push: SnapshotPush,
        tasks: u32,
    },
    /// Close the client's side-panel sockets on the tasks most recently bound to it, at most
    /// `tasks` of them.
    CloseSidePanels {
        client_id: ClientId,
        tasks: u32,
    },
    /// Tell the directory the client's presence as it is now (its open socket, its last poll),
    /// with what its `hello` said when it follows one.
    ReportPresence {
        client_id: ClientId,
        hello: Option<Registration>,
    },
    /// Tell the client's object what the directory decided about it, and wait until it has.
    TellClient {
        client_id: ClientId,
        news: News,
    },
    /// Log a warning.
    Warn(String),
}

/// What the registry's storage is to remember: a client's object its own state, the
/// directory the deployment's.
#[derive(Debug, Clone, PartialEq)]
pub enum Persist {
    Snapshot {
        client_id: ClientId,
        snapshot: BrowserSnapshot,
    },
    /// The client polled `at`.
    Polled { client_id: ClientId, at: u64 },
    /// The client is on a socket: it no longer polls.
    StoppedPolling { client_id: ClientId },
    /// The directory: what a client's object reported (the client is known from now on, seen
    /// `at`).
    Presence(PresenceReport),
    /// A task is bound to the client, `at` (the directory's binding, or a client's copy).
    Bound {
        client_id: ClientId,
        task_id: String,
        at: u64,
    },
    /// A client's object: the task is bound to another client now.
    Unbound { task_id: String },
    /// A client's object: its credential changed (the `epoch`-th time), revoked or paired;
    /// `credential`: the digest of the token that stands now (none once revoked).
    Credential {
        client_id: ClientId,
        epoch: u64,
        revoked: bool,
        credential: Option<String>,
    },
}

/// What the extension says about a task, for that task.
#[derive(Debug, Clone, PartialEq)]
pub enum ToTask {
    // Boxed: an outcome (a JSON value, order-preserving since answers keep their key order) is
    // large.
    Event(Box<ActionEvent>),
    Control(TaskControl),
    Confirm {
        step: u32,
        approve: bool,
        reason: Option<String>,
    },
}

/// A frame passed on to its task, waiting for the task's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending<C> {
    /// Where the frame came from, and so where the answer goes.
    pub via: Via<C>,
    /// What it is, in words ("an action's result").
    pub what: &'static str,
    /// The acknowledgement owed once the task has it or refused it for good.
    pub ack: Option<ServerToExtension>,
}

/// How an extension's frame reached the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Via<C> {
    Socket(C),
    Poll,
}

impl<C> Via<C> {
    /// Sends `frame` back the way the frame being answered came.
    pub fn answer(&self, frame: ServerToExtension) -> Effect<C>
    where
        C: Clone,
    {
        match self {
            Via::Socket(conn) => Effect::SendToSocket {
                conn: conn.clone(),
                frame,
            },
            Via::Poll => Effect::Reply(frame),
        }
    }
}
