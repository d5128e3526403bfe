//! Whether a client is connected, and how: one socket at a time (a newer one replaces the
//! older), or recent polls. Where a frame for the client goes follows from it.

use mimo_protocol::extension::POLL_PRESENCE_MS;
use mimo_protocol::{ClientId, ErrorCode, ErrorObject, ServerToExtension};

use super::{Effect, News, Persist, Presence, PresenceReport};

/// Close code of a socket a newer connection of its client replaces.
pub const REPLACED: u16 = 4000;
/// Close code of a socket whose credential ended (revoked, or paired again): pair again.
pub const REVOKED: u16 = 4401;
/// Why a socket of a revoked credential is closed.
pub(super) const REVOKED_REASON: &str = "this extension's credential was revoked";

impl<C> Presence<C> {
    /// Online means an open socket (sockets survive hibernation, and a runtime restart drops
    /// them, so that presence is never stale) or a recent poll.
    pub fn is_online(&self, now: u64) -> bool {
        self.socket.is_some() || polls(self.polled_at, now)
    }
}

/// Whether a client that last polled at `polled_at` is connected by polling: it polled within
/// the presence window.
pub fn polls(polled_at: Option<u64>, now: u64) -> bool {
    polled_at.is_some_and(|at| now < at + POLL_PRESENCE_MS)
}

/// A socket opens. A restarted service worker leaves its old socket half-open: the newer
/// connection replaces the older ones. The directory hears the client is on a socket.
pub(super) fn socket_opened<C>(client_id: ClientId, older: Vec<C>) -> Vec<Effect<C>> {
    older
        .into_iter()
        .map(|conn| Effect::CloseSocket {
            conn,
            code: REPLACED,
            reason: "replaced by a newer connection",
        })
        .chain([
            Effect::AcceptSocket {
                client_id: client_id.clone(),
            },
            Effect::ReportPresence {
                client_id,
                hello: None,
            },
        ])
        .collect()
}

/// The directory paired the client again (the `epoch`-th change of its credential): its
/// object closes what was opened with the old credential, and checks the new one from now on.
pub(super) fn paired<C>(client_id: ClientId, epoch: u64, credential: String) -> Vec<Effect<C>> {
    vec![Effect::TellClient {
        client_id,
        news: News::Paired { epoch, credential },
    }]
}

/// The directory revoked the client's credential (`revoked`: there was one), the `epoch`-th
/// change of it at `now`: the revocation ends at once, its object closing its sockets and its
/// side panels' on the tasks bound to it before the revocation is answered — and the client is
/// listed offline from then on (the sockets its object closed report no close of their own).
pub(super) fn revoked<C>(
    client_id: ClientId,
    revoked: bool,
    epoch: u64,
    now: u64,
) -> Vec<Effect<C>> {
    if !revoked {
        return vec![Effect::Refuse(not_paired(client_id.as_str()))];
    }
    vec![
        Effect::TellClient {
            client_id: client_id.clone(),
            news: News::Revoked { epoch },
        },
        Effect::Persist(Persist::Presence(PresenceReport {
            client_id,
            socket: false,
            polled_at: None,
            at: now,
            hello: None,
        })),
    ]
}

/// The answer to revoking a client that holds no credential (`named` may not even be an id).
pub fn not_paired(named: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::NotFound,
        format!("no paired extension with clientId {named:?}"),
    )
}

/// A frame for a client goes on its socket, else into its outbox for its next poll, else
/// nowhere: `PLUGIN_OFFLINE`.
pub(super) fn route<C>(
    client_id: ClientId,
    frame: ServerToExtension,
    presence: Presence<C>,
    now: u64,
) -> Vec<Effect<C>> {
    if let Some(conn) = presence.socket {
        return vec![Effect::SendToSocket { conn, frame }];
    }
    if polls(presence.polled_at, now) {
        return vec![
            Effect::QueueInOutbox {
                client_id: client_id.clone(),
                frame,
                at: now,
            },
            Effect::WakePolls { client_id },
        ];
    }
    vec![Effect::Refuse(ErrorObject::new(
        ErrorCode::PluginOffline,
        format!(
            "The extension this task uses ({client_id}) is offline. Open that browser with the \
             Mimo extension connected."
        ),
    ))]
}
