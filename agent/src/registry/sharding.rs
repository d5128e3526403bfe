//! What the deployment's directory and a client's own object tell each other.
//!
//! Each extension client has an object of its own (its sockets, outbox, polls, snapshot, and a
//! copy of its tasks' bindings and of whether its credential stands), so that its frames never
//! touch another; the directory (one per deployment) keeps the credentials, the authoritative
//! bindings and the listing. A client's object reports its presence to the directory when it
//! changes ([`PresenceReport`]); the directory tells a client's object what it decided about it
//! ([`News`]), and waits for it to be told before it answers.

use mimo_protocol::ClientId;

use super::messages::{News, PresenceReport};
use super::{presence, Effect, Persist, PUSH_TO_TASKS, REVOKED};
use mimo_protocol::extension::POLL_PRESENCE_MS;
use subtle::ConstantTimeEq;

/// A polling client's presence is reported again once the last report is this old, so that the
/// directory's idea of its last poll is never more than half the presence window behind.
pub const REPORT_POLLS_EVERY_MS: u64 = POLL_PRESENCE_MS / 2;

/// Whether a poll at `now` is to be reported, the last report being `reported_at`.
pub(super) fn poll_report_due(reported_at: Option<u64>, now: u64) -> bool {
    reported_at.is_none_or(|at| now >= at + REPORT_POLLS_EVERY_MS)
}

/// The directory hears of a client's presence. A report older than the one it has (two
/// reports of one object crossing on their way) changes nothing.
pub(super) fn reported<C>(report: PresenceReport, known_at: Option<u64>) -> Vec<Effect<C>> {
    if known_at.is_some_and(|known| report.at < known) {
        return Vec::new();
    }
    vec![Effect::Persist(Persist::Presence(report))]
}

/// The directory bound a task: it writes it, then tells the client's object and the one the
/// task was bound to before, if another.
pub(super) fn bound<C>(
    task_id: String,
    client_id: ClientId,
    before: Option<ClientId>,
    at: u64,
) -> Vec<Effect<C>> {
    let mut effects = vec![Effect::Persist(Persist::Bound {
        client_id: client_id.clone(),
        task_id: task_id.clone(),
        at,
    })];
    if let Some(before) = before.filter(|b| *b != client_id) {
        effects.push(Effect::TellClient {
            client_id: before,
            news: News::Unbound {
                task_id: task_id.clone(),
            },
        });
    }
    effects.push(Effect::TellClient {
        client_id,
        news: News::Bound { task_id, at },
    });
    effects
}

/// A client's object hears from the directory. A change of credential older than the one it
/// knows (`known_epoch`) is stale — a revocation and a pairing crossing on their way — and
/// changes nothing.
pub(super) fn news<C>(
    client_id: ClientId,
    news: News,
    known_epoch: u64,
    sockets: Vec<C>,
) -> Vec<Effect<C>> {
    match news {
        News::Bound { task_id, at } => vec![Effect::Persist(Persist::Bound {
            client_id,
            task_id,
            at,
        })],
        News::Unbound { task_id } => vec![Effect::Persist(Persist::Unbound { task_id })],
        // (Also the news of a first pairing, which the object took over from the directory
        // when the news made it run.)
        News::Revoked { epoch } | News::Paired { epoch, .. } if epoch <= known_epoch => Vec::new(),
        News::Revoked { epoch } => {
            let mut effects = vec![Effect::Persist(Persist::Credential {
                client_id: client_id.clone(),
                epoch,
                revoked: true,
                credential: None,
            })];
            effects.extend(close_all(sockets, presence::REVOKED_REASON));
            effects.push(Effect::CloseSidePanels {
                client_id,
                tasks: PUSH_TO_TASKS,
            });
            effects
        }
        News::Paired { epoch, credential } => {
            // Paired again, perhaps because the credential was stolen: what was opened with
            // the old one closes, the old token is refused from now on, and the extension opens
            // a new socket with the new one.
            let mut effects = vec![Effect::Persist(Persist::Credential {
                client_id,
                epoch,
                revoked: false,
                credential: Some(credential),
            })];
            effects.extend(close_all(sockets, "this extension was paired again"));
            effects
        }
    }
}

/// Whether a client's object admits a request made with a token of digest `presented`: its
/// credential stands (`revoked` is false) and is the one it was told of (`stored`, the digest
/// of the token the last pairing issued). An object told of none (its client paired before
/// tokens named their client, whose tokens the directory checks) admits none. The digests are
/// compared in constant time.
pub fn admits(stored: Option<&str>, revoked: bool, presented: &str) -> bool {
    let Some(stored) = stored.filter(|stored| !revoked && !stored.is_empty()) else {
        return false;
    };
    bool::from(stored.as_bytes().ct_eq(presented.as_bytes()))
}

fn close_all<C>(sockets: Vec<C>, reason: &'static str) -> Vec<Effect<C>> {
    sockets
        .into_iter()
        .map(|conn| Effect::CloseSocket {
            conn,
            code: REVOKED,
            reason,
        })
        .collect()
}
