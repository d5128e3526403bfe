//! The extension registry, sans I/O: presence (a socket, or recent polls), where a frame for a
//! client goes (its socket, its poll outbox, or `PLUGIN_OFFLINE`), how long kept frames live,
//! the extension's hello, which connection replaces which, what it says about its tasks
//! (passed on only to tasks bound to it, and acknowledged only once the task has it or refused
//! it for good), and snapshot fan-out — behind one [`Registry::handle`].
//!
//! The registry's Durable Object only carries effects out: it reads what an input concerns
//! (the client's sockets and last poll, the binding of a frame's task, the stored snapshot),
//! feeds it in with the input, and writes, sends and forwards as the effects say; what it
//! learns forwarding (the task's answer) comes back as another [`Input`]. The state is
//! storage's, read per input, so the same rules serve every object: each extension client has
//! one of its own (its sockets, polls, outbox, snapshot, and copies of its bindings and of its
//! credential's standing), and the deployment's directory keeps credentials, bindings and the
//! listing (`listing.rs`), told of presence by the clients' objects (`sharding.rs`).

mod effect;
mod frames;
mod input;
pub mod listing;
mod messages;
mod outbox;
mod presence;
pub mod sharding;
#[cfg(test)]
mod tests;

pub use effect::{Effect, Pending, Persist, ToTask, Via};
pub use input::{Forwarding, FrameFacts, Input, Needs, Presence};
pub use messages::{News, PresenceReport, Registration};
pub use outbox::{OUTBOX_TTL_MS, POLL_BATCH};
pub use presence::{not_paired, polls, REPLACED, REVOKED};

/// Snapshot changes are pushed to the tasks most recently bound to the client, at most this
/// many; a revocation closes the side panels of as many.
pub const PUSH_TO_TASKS: u32 = 20;

/// The registry's rules. It holds no state of its own: each input carries what storage and
/// the runtime know of what it concerns.
#[derive(Debug, Default, Clone, Copy)]
pub struct Registry;

impl Registry {
    /// What to do about `input` at `now`, in order. `C` is the runtime's handle of a socket.
    pub fn handle<C: Clone>(&self, input: Input<C>, now: u64) -> Vec<Effect<C>> {
        match input {
            Input::SocketOpened { client_id, older } => presence::socket_opened(client_id, older),
            Input::SocketClosed { client_id } => vec![Effect::ReportPresence {
                client_id,
                hello: None,
            }],
            Input::SocketFrame {
                conn,
                client_id,
                paired,
                frame,
                facts,
            } => frames::on_socket(conn, client_id, paired, frame, facts, now),
            Input::PollArrived {
                client_id,
                reported_at,
            } => outbox::poll_arrived(client_id, reported_at, now),
            Input::PolledFrame {
                client_id,
                frame,
                facts,
            } => frames::received(Via::Poll, client_id, frame, facts, now),
            Input::PollCollect {
                client_id,
                ack,
                wait_ms,
            } => outbox::collect(client_id, ack, wait_ms, now),
            Input::PollWaited { client_id, ack } => outbox::waited(client_id, ack, now),
            Input::FrameForClient {
                client_id,
                frame,
                presence,
            } => presence::route(client_id, frame, presence, now),
            Input::Forwarded { pending, outcome } => frames::forwarded(pending, outcome),
            Input::Paired {
                client_id,
                epoch,
                credential,
            } => presence::paired(client_id, epoch, credential),
            Input::Revoked {
                client_id,
                revoked,
                epoch,
            } => presence::revoked(client_id, revoked, epoch, now),
            Input::PresenceReported { report, known_at } => sharding::reported(report, known_at),
            Input::Bound {
                task_id,
                client_id,
                before,
                at,
            } => sharding::bound(task_id, client_id, before, at),
            Input::News {
                client_id,
                news,
                known_epoch,
                sockets,
            } => sharding::news(client_id, news, known_epoch, sockets),
        }
    }
}
