//! The extension's frames, from its socket or a poll alike: its hello, its browser's state,
//! and what it says about its tasks, passed on to them.

use mimo_protocol::{ClientId, ErrorCode, ErrorObject, ExtensionMessage, ServerToExtension};

use super::{
    outbox, presence, Effect, Forwarding, FrameFacts, Pending, Persist, Registration, ToTask, Via,
};
use crate::selection;
use crate::snapshot;
use crate::task::{ActionEvent, SnapshotPush};

/// A frame on a socket: one whose credential was revoked while it was open (and the close did
/// not reach it yet) is closed; one that could not be read is answered with the reason.
pub(super) fn on_socket<C: Clone>(
    conn: C,
    client_id: ClientId,
    paired: bool,
    frame: Result<ExtensionMessage, ErrorObject>,
    facts: FrameFacts,
    now: u64,
) -> Vec<Effect<C>> {
    if !paired {
        return vec![Effect::CloseSocket {
            conn,
            code: super::REVOKED,
            reason: presence::REVOKED_REASON,
        }];
    }
    match frame {
        Ok(frame) => received(Via::Socket(conn), client_id, frame, facts, now),
        Err(error) => vec![Effect::SendToSocket {
            conn,
            frame: ServerToExtension::Error { error },
        }],
    }
}

/// Handles one frame of the extension; the answers (`welcome`, `pong`, `result_ack`,
/// `error`) go back the way it came.
pub(super) fn received<C: Clone>(
    via: Via<C>,
    client_id: ClientId,
    frame: ExtensionMessage,
    facts: FrameFacts,
    now: u64,
) -> Vec<Effect<C>> {
    let pass_on = |task_id: String, what: &'static str, message: ToTask, ack| {
        let pending = Pending {
            via: via.clone(),
            what,
            ack,
        };
        relay(
            &client_id,
            task_id,
            facts.bound.as_deref(),
            message,
            pending,
        )
    };
    match frame {
        ExtensionMessage::Hello {
            client_id: said,
            name,
            browser,
            extension_version,
        } => {
            if said != client_id.as_str() {
                let error = ErrorObject::new(
                    ErrorCode::SchemaValidationFailed,
                    format!(
                        "hello names client {said:?} but this connection is {:?}'s",
                        client_id.as_str()
                    ),
                );
                vec![via.answer(ServerToExtension::Error { error })]
            } else {
                welcome(
                    &via,
                    client_id.clone(),
                    said,
                    name,
                    browser,
                    extension_version,
                    now,
                )
            }
        }
        ExtensionMessage::FullStateSync { snapshot } => {
            snapshot_changed(client_id.clone(), snapshot)
        }
        ExtensionMessage::TabEvent { event } => {
            let before = facts.snapshot.clone().unwrap_or_default();
            let mut after = before.clone();
            snapshot::apply(&mut after, event);
            // Chrome reports many events that change nothing we show (a second activation, a
            // favicon): no push, no write.
            if after == before {
                Vec::new()
            } else {
                snapshot_changed(client_id.clone(), after)
            }
        }
        // A keep-alive that did not match the auto-response byte for byte.
        ExtensionMessage::Ping {} => vec![via.answer(ServerToExtension::Pong {})],
        ExtensionMessage::ActionAck {
            action_id,
            attempt,
            task_id,
        } => {
            let ack = ActionEvent::Ack { action_id, attempt };
            pass_on(
                task_id,
                "an action's ack",
                ToTask::Event(Box::new(ack)),
                None,
            )
        }
        ExtensionMessage::Confirm {
            task_id,
            step,
            approve,
            reason,
        } => {
            let answer = ToTask::Confirm {
                step,
                approve,
                reason,
            };
            pass_on(task_id, "a confirmation", answer, None)
        }
        ExtensionMessage::TaskControl { task_id, control } => {
            pass_on(task_id, "a task control", ToTask::Control(control), None)
        }
        ExtensionMessage::ActionStatus {
            task_id,
            action_id,
            attempt,
            state,
            outcome,
        } => {
            let status = ActionEvent::Status {
                action_id,
                attempt,
                state,
                outcome,
            };
            pass_on(
                task_id,
                "an action's status",
                ToTask::Event(Box::new(status)),
                None,
            )
        }
        ExtensionMessage::ActionResult { outcome } => {
            let ack = ServerToExtension::ResultAck {
                task_id: outcome.task_id.clone(),
                action_id: outcome.action_id.clone(),
                attempt: outcome.attempt,
            };
            let task_id = outcome.task_id.clone();
            let event = ActionEvent::Outcome { outcome };
            pass_on(
                task_id,
                "an action's result",
                ToTask::Event(Box::new(event)),
                Some(ack),
            )
        }
    }
}

/// A hello that names the connection's own client: what it says goes to the directory before
/// it is welcomed (so that the listing has it once the extension knows it is connected), and a
/// socket takes over what was kept for the client's polls.
fn welcome<C: Clone>(
    via: &Via<C>,
    client_id: ClientId,
    said: String,
    name: String,
    browser: mimo_protocol::BrowserInfo,
    extension_version: String,
    now: u64,
) -> Vec<Effect<C>> {
    let mut effects = Vec::new();
    if let Via::Socket(_) = via {
        effects.push(Effect::Persist(Persist::StoppedPolling {
            client_id: client_id.clone(),
        }));
    }
    effects.push(Effect::ReportPresence {
        client_id: client_id.clone(),
        hello: Some(Registration {
            name,
            browser,
            extension_version,
        }),
    });
    effects.push(via.answer(ServerToExtension::Welcome { client_id: said }));
    if let Via::Socket(conn) = via {
        effects.push(outbox::hand_to_socket(client_id, conn.clone(), now));
    }
    effects
}

/// The client's new snapshot is stored and pushed to the tasks that use it.
fn snapshot_changed<C>(
    client_id: ClientId,
    snapshot: mimo_protocol::BrowserSnapshot,
) -> Vec<Effect<C>> {
    vec![
        Effect::Persist(Persist::Snapshot {
            client_id: client_id.clone(),
            snapshot: snapshot.clone(),
        }),
        Effect::PushSnapshot {
            push: SnapshotPush {
                client_id: client_id.into(),
                snapshot,
            },
            tasks: super::PUSH_TO_TASKS,
        },
    ]
}

/// What the extension says about a task goes to that task only if the task is bound to it
/// (`bound`): an extension cannot report on another browser's task.
fn relay<C: Clone>(
    client_id: &ClientId,
    task_id: String,
    bound: Option<&str>,
    message: ToTask,
    pending: Pending<C>,
) -> Vec<Effect<C>> {
    match selection::may_act_for(bound, client_id.as_str(), &task_id) {
        Ok(()) => vec![Effect::ForwardToTask {
            task_id,
            message,
            pending,
        }],
        Err(refusal) => forwarded(pending, Forwarding::Refused(refusal)),
    }
}

/// The task's answer to a frame passed on. Taken, or refused for good: either way the
/// extension can stop resending it (a refusal is answered with an `error`). Only a frame that
/// did not reach the task is left unacknowledged, so that the next connection sends it again.
pub(super) fn forwarded<C: Clone>(pending: Pending<C>, outcome: Forwarding) -> Vec<Effect<C>> {
    let Pending { via, what, ack } = pending;
    let mut effects = Vec::new();
    match outcome {
        Forwarding::Taken => {}
        Forwarding::Refused(error) => {
            effects.push(Effect::Warn(format!("refused {what}: {error}")));
            effects.push(via.answer(ServerToExtension::Error { error }));
        }
        Forwarding::Unreachable(why) => {
            let error = ErrorObject::new(
                ErrorCode::InternalError,
                format!("{what} could not reach its task ({why}); it is kept to be sent again"),
            );
            return vec![via.answer(ServerToExtension::Error { error })];
        }
    }
    effects.extend(ack.map(|ack| via.answer(ack)));
    effects
}
