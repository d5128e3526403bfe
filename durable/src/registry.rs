//! `ExtensionRegistry`: the extensions of this deployment, their sockets and browsers, and which
//! task uses which extension (seed 000 `ExtensionRegistry` + `SnapshotStore`).

use futures_channel::oneshot;
use futures_util::future::select;
use mimo_agent::selection::{self, Candidate};
use mimo_agent::snapshot;
use mimo_protocol::extension::{
    ExtensionList, PollRequest, PollResponse, PolledFrame, MAX_POLL_WAIT_MS, PING_FRAME,
    POLL_PRESENCE_MS, PONG_FRAME,
};
use mimo_protocol::{
    limits::{MAX_EXTENSION_FRAME_BYTES, MAX_POLL_BODY_BYTES},
    BrowserInfo, BrowserSnapshot, ErrorCode, ErrorObject, ExtensionInfo, ExtensionMessage,
    ServerToExtension, TaskControl,
};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;
use worker::*;

use crate::clients::{
    AuthFailure, AuthFailureCount, BindRequest, ConfirmBody, Confirmer, SendToExtension,
    TaskClient, TicketHolder, TicketRedeem, TokenCheck,
};
use crate::credentials::Credentials;
use crate::deadline::{answered, answered_within, OBJECT_ANSWER_MS};
use crate::error::{Answer, Refusable};
use crate::http::{error_response, now_ms, read_body, token_generation};
use crate::registry_store::RegistryStore;
use crate::socket::{finish_close, parse_message};
use mimo_agent::credentials::Principal;
use mimo_agent::task::{ActionEvent, Binding, SnapshotPush};
use mimo_protocol::extension::PairRequest;

/// Tag of every extension socket; each also carries `client:<id>`.
const EXTENSION: &str = "extension";

/// Snapshot changes are pushed to the tasks most recently bound to the extension, at most this
/// many (older tasks get the current snapshot when they bind again).
const PUSH_TO_TASKS: u32 = 20;

/// The most kept frames one poll delivers (the rest come with the next).
const POLL_BATCH: u32 = 50;

fn client_tag(client_id: &str) -> String {
    format!("client:{client_id}")
}

/// What a socket remembers across hibernation.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SocketAttachment {
    client_id: String,
}

#[durable_object]
pub struct ExtensionRegistry {
    state: State,
    env: Env,
    credentials: Credentials,
    /// The deployment token's generation this instance runs under (see [`token_generation`]).
    generation: String,
    store: RegistryStore,
    /// Wakes the polls each polling client holds open, when a frame is kept for it.
    pollers: RefCell<HashMap<String, Vec<oneshot::Sender<()>>>>,
}

/// Close code of an extension's socket when its credential is revoked.
const REVOKED: u16 = 4401;

impl DurableObject for ExtensionRegistry {
    fn new(state: State, env: Env) -> Self {
        let store = RegistryStore::open(state.storage().sql()).expect("registry schema");
        // Keep-alives are answered by the runtime itself: an idle extension never wakes us.
        let keep_alive =
            WebSocketRequestResponsePair::new(PING_FRAME, PONG_FRAME).expect("keep-alive pair");
        state.set_websocket_auto_response(&keep_alive);
        let credentials = Credentials::open(state.storage().sql()).expect("credential schema");
        Self {
            state,
            generation: token_generation(&env),
            env,
            credentials,
            store,
            pollers: RefCell::new(HashMap::new()),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let url = req.url()?;
        match (req.method(), url.path()) {
            (Method::Get, "/ws/extension") => {
                let client_id = url
                    .query_pairs()
                    .find(|(k, _)| k == "clientId")
                    .map(|(_, v)| v.into_owned());
                match client_id.filter(|id| valid_client_id(id)) {
                    Some(client_id) => self.accept_extension(client_id),
                    None => error_response(&invalid_client_id()),
                }
            }
            (Method::Post, "/send") => match req.json::<SendToExtension>().await {
                Ok(send) => self.send(send),
                Err(e) => error_response(&ErrorObject::new(
                    ErrorCode::SchemaValidationFailed,
                    format!("not a frame for an extension: {e}"),
                )),
            },
            (Method::Post, "/poll") => {
                let client_id = url
                    .query_pairs()
                    .find(|(k, _)| k == "clientId")
                    .map(|(_, v)| v.into_owned());
                let Some(client_id) = client_id.filter(|id| valid_client_id(id)) else {
                    return error_response(&invalid_client_id());
                };
                let body = req.text().await?;
                if body.len() > MAX_POLL_BODY_BYTES {
                    return error_response(&ErrorObject::new(
                        ErrorCode::SchemaValidationFailed,
                        format!(
                            "a poll of {} bytes is over the limit of {MAX_POLL_BODY_BYTES}; send fewer frames per poll",
                            body.len()
                        ),
                    ));
                }
                match serde_json::from_str::<PollRequest>(&body) {
                    Ok(request) => Response::from_json(&self.poll(&client_id, request).await?),
                    Err(e) => error_response(&ErrorObject::new(
                        ErrorCode::SchemaValidationFailed,
                        format!("not a poll: {e}"),
                    )),
                }
            }
            (Method::Get, "/list") => Response::from_json(&ExtensionList {
                extensions: self.list()?,
            }),
            (Method::Get, "/binding") => {
                let task_id = url
                    .query_pairs()
                    .find(|(k, _)| k == "taskId")
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default();
                match self.store.binding_of(&task_id)? {
                    Some(client_id) => Response::from_json(&client_id),
                    None => error_response(&ErrorObject::new(
                        ErrorCode::NotFound,
                        "the task is bound to no extension",
                    )),
                }
            }
            (Method::Post, "/pairing-code") => {
                Response::from_json(&self.credentials.new_pairing_code()?)
            }
            (Method::Post, "/pair") => match read_body::<PairRequest>(&mut req).await {
                Err(error) => error_response(&error),
                Ok(pair) => match self.credentials.pair(&pair) {
                    Ok(paired) => {
                        // Paired again: a socket opened with the credential it replaced (a
                        // stolen one, perhaps) is closed; the extension opens a new one.
                        self.close_sockets(&paired.client_id, "this extension was paired again");
                        Response::from_json(&paired)
                    }
                    Err(failure) => failure.respond(),
                },
            },
            (Method::Post, "/authenticate") => match read_body::<TokenCheck>(&mut req).await {
                Err(error) => error_response(&error),
                Ok(check) => match self.credentials.client_of(&check.token)? {
                    Some(client_id) => Response::from_json(&TicketHolder {
                        principal: Principal::Extension { client_id }.encode(),
                    }),
                    None => error_response(&ErrorObject::new(
                        ErrorCode::Unauthorized,
                        "this extension's credential is unknown or revoked; pair it again from the web app",
                    )),
                },
            },
            (Method::Post, "/ticket") => match read_body::<TicketHolder>(&mut req).await {
                Err(error) => error_response(&error),
                Ok(holder) => match Principal::decode(&holder.principal) {
                    Some(principal) => Response::from_json(
                        &self.credentials.new_ticket(&principal, &self.generation)?,
                    ),
                    None => error_response(&ErrorObject::new(
                        ErrorCode::SchemaValidationFailed,
                        "no such principal",
                    )),
                },
            },
            (Method::Post, "/redeem") => match read_body::<TicketRedeem>(&mut req).await {
                Err(error) => error_response(&error),
                Ok(redeem) => match self.credentials.redeem(&redeem.ticket, &self.generation)? {
                    Some(principal) => Response::from_json(&TicketHolder {
                        principal: principal.encode(),
                    }),
                    None => error_response(&ErrorObject::new(
                        ErrorCode::Unauthorized,
                        "the socket's ticket is wrong, expired or already used; get a new one from POST /api/ws-ticket",
                    )),
                },
            },
            (Method::Post, "/revoke") => {
                let client_id = url
                    .query_pairs()
                    .find(|(k, _)| k == "clientId")
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default();
                self.revoke(&client_id).await
            }
            (Method::Post, "/auth-failure") => match read_body::<AuthFailure>(&mut req).await {
                Err(error) => error_response(&error),
                Ok(failure) => Response::from_json(&AuthFailureCount {
                    blocked_until: self.credentials.failed(&failure)?,
                }),
            },
            (Method::Post, "/auth-status") => match read_body::<AuthFailure>(&mut req).await {
                Err(error) => error_response(&error),
                Ok(client) => Response::from_json(&AuthFailureCount {
                    blocked_until: self.credentials.blocked_until(&client)?,
                }),
            },
            (Method::Post, "/bind") => {
                let bind: BindRequest = req.json().await?;
                match self.bind(bind) {
                    Ok(binding) => Response::from_json(&binding),
                    Err(failure) => failure.respond(),
                }
            }
            _ => error_response(&ErrorObject::new(
                ErrorCode::NotFound,
                "no such registry route",
            )),
        }
    }

    async fn websocket_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        let Some(client_id) = ws
            .deserialize_attachment::<SocketAttachment>()?
            .map(|a| a.client_id)
        else {
            return Ok(());
        };
        if !self.credentials.is_paired(&client_id)? {
            // Revoked while this socket was open (and the close did not reach it yet).
            let _ = ws.close(
                Some(REVOKED),
                Some("this extension's credential was revoked"),
            );
            return Ok(());
        }
        let parsed = parse_message::<ExtensionMessage>(message, MAX_EXTENSION_FRAME_BYTES);
        let replies = match parsed {
            Ok(message) => self.receive(&client_id, message).await?,
            Err(error) => vec![ServerToExtension::Error { error }],
        };
        for reply in &replies {
            ws.send(reply)?;
        }
        if replies
            .iter()
            .any(|r| matches!(r, ServerToExtension::Welcome { .. }))
        {
            // Back on a socket after polling: what was kept for the polls goes this way now.
            self.store.stopped_polling(&client_id)?;
            for frame in self.store.take_undelivered(&client_id, now_ms())? {
                ws.send_with_str(&frame)?;
            }
        }
        Ok(())
    }

    async fn websocket_close(
        &self,
        ws: WebSocket,
        code: usize,
        _reason: String,
        _clean: bool,
    ) -> Result<()> {
        if let Some(attachment) = ws.deserialize_attachment::<SocketAttachment>()? {
            self.store.touch(&attachment.client_id, now_ms())?;
        }
        finish_close(&ws, code);
        Ok(())
    }
}

/// How a relay to a task went.
enum Relayed {
    /// The task took it.
    Done,
    /// Refused for good (not this extension's task, or the task's own refusal): sending it
    /// again would not help.
    Refused(ErrorObject),
}

/// What the extension says about a task, passed on to the task if it is bound to it.
enum ToTask {
    // Boxed: an outcome (a JSON value, order-preserving since answers keep their key order) is large.
    Event(Box<ActionEvent>),
    Control(TaskControl),
    Confirm(ConfirmBody),
}

/// Answers a relay that did not go through with an `error` frame, and logs it. `true` when the
/// frame was dealt with for good (taken or refused), `false` when it did not reach the task.
fn refusal_reply(
    replies: &mut Vec<ServerToExtension>,
    what: &str,
    relayed: Result<Relayed>,
) -> bool {
    match relayed {
        Ok(Relayed::Done) => true,
        Ok(Relayed::Refused(error)) => {
            console_warn!("refused {what}: {error}");
            replies.push(ServerToExtension::Error { error });
            true
        }
        Err(e) => {
            console_error!("could not relay {what}: {e}");
            let error = ErrorObject::new(
                ErrorCode::InternalError,
                format!("{what} could not reach its task ({e}); it is kept to be sent again"),
            );
            replies.push(ServerToExtension::Error { error });
            false
        }
    }
}

fn invalid_client_id() -> ErrorObject {
    ErrorObject::new(
        ErrorCode::SchemaValidationFailed,
        "clientId must be 1–128 characters of letters, digits, '-' or '_'",
    )
}

fn valid_client_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl ExtensionRegistry {
    /// Handles one frame of the extension, from its socket or a poll alike; returns the
    /// direct answers to send back (`welcome`, `pong`, `result_ack`, `error`).
    async fn receive(
        &self,
        client_id: &str,
        message: ExtensionMessage,
    ) -> Result<Vec<ServerToExtension>> {
        self.store.touch(client_id, now_ms())?;
        let mut replies = Vec::new();
        match message {
            ExtensionMessage::Hello {
                client_id: said,
                name,
                browser,
                extension_version,
            } => {
                if said != client_id {
                    let error = ErrorObject::new(
                        ErrorCode::SchemaValidationFailed,
                        format!(
                            "hello names client {said:?} but this connection is {client_id:?}'s"
                        ),
                    );
                    replies.push(ServerToExtension::Error { error });
                } else {
                    self.store.register(
                        client_id,
                        &name,
                        &browser,
                        &extension_version,
                        now_ms(),
                    )?;
                    replies.push(ServerToExtension::Welcome { client_id: said });
                }
            }
            ExtensionMessage::FullStateSync { snapshot } => {
                self.snapshot_changed(client_id, snapshot).await?
            }
            ExtensionMessage::TabEvent { event } => {
                let before = self.store.snapshot(client_id)?.unwrap_or_default();
                let mut after = before.clone();
                snapshot::apply(&mut after, event);
                // Chrome reports many events that change nothing we show (a second
                // activation, a favicon): no push, no write.
                if after != before {
                    self.snapshot_changed(client_id, after).await?;
                }
            }
            // A keep-alive that did not match the auto-response byte for byte.
            ExtensionMessage::Ping {} => replies.push(ServerToExtension::Pong {}),
            ExtensionMessage::ActionAck {
                action_id,
                attempt,
                task_id,
            } => {
                let ack = ActionEvent::Ack { action_id, attempt };
                let relayed = self
                    .relay(client_id, &task_id, ToTask::Event(Box::new(ack)))
                    .await;
                refusal_reply(&mut replies, "an action's ack", relayed);
            }
            ExtensionMessage::Confirm {
                task_id,
                step,
                approve,
                reason,
            } => {
                let answer = ConfirmBody {
                    step,
                    approve,
                    reason,
                    by: Confirmer::Extension,
                };
                let relayed = self
                    .relay(client_id, &task_id, ToTask::Confirm(answer))
                    .await;
                refusal_reply(&mut replies, "a confirmation", relayed);
            }
            ExtensionMessage::TaskControl { task_id, control } => {
                let relayed = self
                    .relay(client_id, &task_id, ToTask::Control(control))
                    .await;
                refusal_reply(&mut replies, "a task control", relayed);
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
                let relayed = self
                    .relay(client_id, &task_id, ToTask::Event(Box::new(status)))
                    .await;
                refusal_reply(&mut replies, "an action's status", relayed);
            }
            ExtensionMessage::ActionResult { outcome } => {
                let ack = ServerToExtension::ResultAck {
                    task_id: outcome.task_id.clone(),
                    action_id: outcome.action_id.clone(),
                    attempt: outcome.attempt,
                };
                let task_id = outcome.task_id.clone();
                let event = ActionEvent::Outcome { outcome };
                let relayed = self
                    .relay(client_id, &task_id, ToTask::Event(Box::new(event)))
                    .await;
                // Recorded, or refused for good: either way the extension can stop resending
                // it. Only a result that did not reach the task is left unacknowledged, so
                // that the next connection sends it again.
                if refusal_reply(&mut replies, "an action's result", relayed) {
                    replies.push(ack);
                }
            }
        }
        Ok(replies)
    }

    /// A poll (`POST /api/extension/poll`): the request's frames handled in order, then what
    /// was kept for the extension since its acknowledgement — waiting up to `wait_ms` for
    /// something to arrive when nothing is kept.
    async fn poll(&self, client_id: &str, request: PollRequest) -> Result<PollResponse> {
        let now = now_ms();
        self.store.connected(client_id, now)?;
        self.store.polled(client_id, now)?;
        let mut replies = Vec::new();
        for frame in request.frames {
            replies.extend(self.receive(client_id, frame).await?);
        }
        let mut frames = self.undelivered(client_id, request.ack)?;
        let wait = request.wait_ms.min(MAX_POLL_WAIT_MS);
        if frames.is_empty() && wait > 0 {
            let (wake, woken) = oneshot::channel();
            // Every poll held for the client is woken (an extension holds one while it sends,
            // a script may ask twice at once).
            self.pollers
                .borrow_mut()
                .entry(client_id.to_owned())
                .or_default()
                .push(wake);
            let timeout = Delay::from(Duration::from_millis(wait.into()));
            let _ = select(woken, timeout).await;
            // This poll's wake-up is gone with it; drop it (and any other ended poll's).
            if let Some(waiting) = self.pollers.borrow_mut().get_mut(client_id) {
                waiting.retain(|wake| !wake.is_canceled());
            }
            frames = self.undelivered(client_id, request.ack)?;
            // Held this long, it still counts as polling now.
            self.store.polled(client_id, now_ms())?;
        }
        Ok(PollResponse { replies, frames })
    }

    /// The frames kept for a polling extension after `ack`, decoded.
    fn undelivered(&self, client_id: &str, ack: u64) -> Result<Vec<PolledFrame>> {
        let kept = self
            .store
            .undelivered(client_id, ack, now_ms(), POLL_BATCH)?;
        Ok(kept
            .into_iter()
            .filter_map(|(seq, frame)| {
                let frame = serde_json::from_str(&frame).ok()?;
                Some(PolledFrame { seq, frame })
            })
            .collect())
    }

    /// Accepts an extension's socket. A newer connection of the same client replaces the
    /// older one (a restarted service worker leaves its old socket half-open).
    fn accept_extension(&self, client_id: String) -> Result<Response> {
        for old in self.state.get_websockets_with_tag(&client_tag(&client_id)) {
            let _ = old.close(Some(4000), Some("replaced by a newer connection"));
        }
        let pair = WebSocketPair::new()?;
        let tag = client_tag(&client_id);
        self.state
            .accept_websocket_with_tags(&pair.server, &[EXTENSION, &tag]);
        pair.server.serialize_attachment(SocketAttachment {
            client_id: client_id.clone(),
        })?;
        self.store.connected(&client_id, now_ms())?;
        Response::from_websocket(pair.client)
    }

    /// Revokes an extension's credential and closes its sockets at once: its own, and its side
    /// panel's on the tasks bound to it.
    async fn revoke(&self, client_id: &str) -> Result<Response> {
        if !self.credentials.revoke(client_id)? {
            return error_response(&ErrorObject::new(
                ErrorCode::NotFound,
                format!("no paired extension with clientId {client_id:?}"),
            ));
        }
        self.close_sockets(client_id, "this extension's credential was revoked");
        let tasks = self.store.tasks_of(client_id, PUSH_TO_TASKS)?;
        let closes = tasks.into_iter().map(|task_id| async move {
            let task = TaskClient::new(&self.env, &task_id)?;
            answered("a task", task.close_side_panels(client_id)).await
        });
        for result in futures_util::future::join_all(closes).await {
            // One unreachable task must not keep the others' side panels open.
            if let Err(failure) = result {
                console_error!("closing a side panel's socket failed: {failure}");
            }
        }
        Response::empty()
    }

    /// Closes the client's sockets as its credential ends (`REVOKED`: pair again).
    fn close_sockets(&self, client_id: &str, reason: &str) {
        for socket in self.state.get_websockets_with_tag(&client_tag(client_id)) {
            let _ = socket.close(Some(REVOKED), Some(reason));
        }
    }

    /// Online means an open socket (sockets survive hibernation, and a runtime restart drops
    /// them, so that presence is never stale) or a recent poll.
    fn is_online(&self, client_id: &str) -> Result<bool> {
        Ok(self.open_socket(client_id).is_some() || self.polls(client_id)?)
    }

    /// Whether the extension is connected by polling: it polled within the presence window.
    fn polls(&self, client_id: &str) -> Result<bool> {
        let polled_at = self.store.polled_at(client_id)?;
        Ok(polled_at.is_some_and(|at| now_ms() < at + POLL_PRESENCE_MS))
    }

    fn list(&self) -> Result<Vec<ExtensionInfo>> {
        let now = now_ms();
        self.store
            .clients()?
            .into_iter()
            .map(|r| {
                let online = self.is_online(&r.client_id)?;
                let paired = self.credentials.is_paired(&r.client_id)?;
                Ok(ExtensionInfo {
                    online,
                    browser: r.browser.unwrap_or(BrowserInfo {
                        name: String::new(),
                        version: String::new(),
                        user_agent: String::new(),
                    }),
                    client_id: r.client_id,
                    name: r.name,
                    extension_version: r.extension_version,
                    // Keep-alives never reach this object, so an open socket is the news: an
                    // online extension is seen now.
                    last_seen_at: if online { now } else { r.last_seen_at },
                    last_used_at: r.last_used_at,
                    paired,
                })
            })
            .collect()
    }

    fn bind(&self, req: BindRequest) -> Answer<Binding> {
        let candidates: Vec<Candidate> = self
            .list()?
            .into_iter()
            .map(|e| Candidate {
                client_id: e.client_id,
                online: e.online,
                last_used_at: e.last_used_at,
                last_seen_at: e.last_seen_at,
            })
            .collect();
        let bound = self.store.binding_of(&req.task_id)?;
        let chosen = selection::bind(
            &candidates,
            req.client_id.as_deref(),
            bound.as_deref(),
            now_ms(),
        )?;
        self.store
            .bind(&req.task_id, &chosen.client_id, chosen.used_at)?;
        Ok(Binding {
            snapshot: self.store.snapshot(&chosen.client_id)?,
            client_id: chosen.client_id,
        })
    }

    /// The extension's open socket, if it is online.
    fn open_socket(&self, client_id: &str) -> Option<WebSocket> {
        self.state
            .get_websockets_with_tag(&client_tag(client_id))
            .into_iter()
            .find(|ws| {
                AsRef::<web_sys::WebSocket>::as_ref(ws).ready_state() == web_sys::WebSocket::OPEN
            })
    }

    /// Sends a frame on the extension's socket, or keeps it for the extension's next poll.
    fn send(&self, send: SendToExtension) -> Result<Response> {
        if let Some(socket) = self.open_socket(&send.client_id) {
            socket.send(&send.message)?;
            return Response::empty();
        }
        if self.polls(&send.client_id)? {
            let frame = serde_json::to_string(&send.message)?;
            self.store.keep(&send.client_id, &frame, now_ms())?;
            let woken = self.pollers.borrow_mut().remove(&send.client_id);
            for wake in woken.into_iter().flatten() {
                // A poll that already ended has dropped its end: nothing to wake.
                let _ = wake.send(());
            }
            return Response::empty();
        }
        error_response(&ErrorObject::new(
            ErrorCode::PluginOffline,
            format!(
                "The extension this task uses ({}) is offline. Open that browser with the \
                 Mimo extension connected.",
                send.client_id
            ),
        ))
    }

    /// Passes what the extension says about a task (an ack, a result, a takeover) to that task,
    /// if it is bound to this extension: an extension cannot report on another browser's task.
    /// `Err` only when the task could not be reached.
    async fn relay(&self, client_id: &str, task_id: &str, what: ToTask) -> Result<Relayed> {
        let bound = self.store.binding_of(task_id)?;
        if let Err(refusal) = selection::may_act_for(bound.as_deref(), client_id, task_id) {
            return Ok(Relayed::Refused(refusal));
        }
        let task = TaskClient::new(&self.env, task_id)?;
        // The task may itself wait on this registry (its next dispatch) within its own bound:
        // this one is twice that. Past it the extension's frame goes unacknowledged, and is
        // sent again.
        let within = 2 * OBJECT_ANSWER_MS;
        let what_task = format!("task {task_id}");
        let answer = match what {
            ToTask::Event(event) => {
                answered_within(&what_task, within, task.action_event(&event)).await
            }
            ToTask::Control(control) => {
                answered_within(&what_task, within, task.control(control)).await
            }
            ToTask::Confirm(answer) => {
                answered_within(&what_task, within, task.confirm(&answer)).await
            }
        };
        Ok(match answer.refusal()? {
            Ok(()) => Relayed::Done,
            Err(error) => Relayed::Refused(error),
        })
    }

    /// Stores the extension's new snapshot and pushes it to the tasks that use it.
    async fn snapshot_changed(&self, client_id: &str, snapshot: BrowserSnapshot) -> Result<()> {
        self.store.save_snapshot(client_id, &snapshot)?;
        let tasks = self.store.tasks_of(client_id, PUSH_TO_TASKS)?;
        let push = SnapshotPush {
            client_id: client_id.to_owned(),
            snapshot,
        };
        let sends = tasks.into_iter().map(|task_id| {
            let task = TaskClient::new(&self.env, &task_id);
            let push = &push;
            async move { answered("a task", task?.snapshot(push)).await }
        });
        for result in futures_util::future::join_all(sends).await {
            // One unreachable task must not keep the others from their snapshot.
            if let Err(failure) = result {
                console_error!("snapshot push failed: {failure}");
            }
        }
        Ok(())
    }
}
