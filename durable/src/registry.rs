//! `ExtensionRegistry`: the extensions of this deployment, their sockets and browsers, and which
//! task uses which extension (seed 000 `ExtensionRegistry` + `SnapshotStore`).
//!
//! One class, two kinds of object. Each extension client has an object of its own, named
//! `client:<clientId>` (see [`client_object_name`](crate::clients::client_object_name)): its sockets (with the Hibernation API), its
//! polls and outbox, its browser's snapshot, the frames it passes on to its tasks, and copies of
//! its tasks' bindings and of its credential's standing, so that none of its frames touches
//! another object. The deployment's directory, named `global`, keeps pairing, credentials,
//! tickets, failed authentications, the authoritative bindings and the listing; the clients'
//! objects report presence changes to it, and it tells them of bindings and credential changes,
//! awaited before it answers. Which kind an object is follows from its routes: only this
//! crate's clients (`RegistryClient`, `ClientObject`) make stubs of it.
//!
//! The rules are `mimo_agent::registry`'s: this object reads what an input concerns (sockets,
//! SQL), feeds it to [`Registry::handle`] and carries the effects out.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use futures_channel::oneshot;
use futures_util::future::select;
use mimo_agent::credentials::{digest, Confirmer, Principal};
use mimo_agent::registry::{
    listing, not_paired, sharding, Effect, Forwarding, FrameFacts, Input, News, Persist, Presence,
    PresenceReport, Registry, ToTask,
};
use mimo_agent::selection;
use mimo_agent::task::Binding;
use mimo_protocol::extension::{
    ExtensionList, PairRequest, PollRequest, PollResponse, PolledFrame, PING_FRAME, PONG_FRAME,
};
use mimo_protocol::{
    limits::{MAX_EXTENSION_FRAME_BYTES, MAX_POLL_BODY_BYTES},
    BrowserSnapshot, ClientId, ErrorCode, ErrorObject, ExtensionInfo, ExtensionMessage,
    ServerToExtension,
};
use serde::{Deserialize, Serialize};
use worker::*;

use crate::clients::{
    AuthFailure, AuthFailureCount, BindRequest, ClientObject, ConfirmBody, RegistryClient,
    SendToExtension, TaskClient, TicketHolder, TicketRedeem, TokenCheck,
};
use crate::credentials::Credentials;
use crate::deadline::{answered, answered_within, OBJECT_ANSWER_MS};
use crate::error::{Refusable, Reply};
use crate::http::{error_response, now_ms, query_param, read_body, token_generation};
use crate::registry_store::{RegistryStore, EPOCH, HANDED_OVER, REPORTED_AT, REVOKED};
use crate::socket::{finish_close, parse_message};

/// Tag of every extension socket; each also carries `client:<id>`.
const EXTENSION: &str = "extension";

fn client_tag(client_id: &ClientId) -> String {
    format!("client:{client_id}")
}

/// What a socket remembers across hibernation.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SocketAttachment {
    client_id: ClientId,
}

#[cfg_attr(feature = "objects", durable_object)]
pub struct ExtensionRegistry {
    state: State,
    env: Env,
    credentials: Credentials,
    /// The deployment token's generation this instance runs under (see [`token_generation`]).
    generation: String,
    store: RegistryStore,
    /// Wakes the polls each polling client holds open, when a frame is kept for it.
    pollers: RefCell<HashMap<ClientId, Vec<oneshot::Sender<()>>>>,
    /// A client's object: whether the directory's hand-over is done (`Some(true)`), under way
    /// (`Some(false)`) or not known yet.
    handed_over: Cell<Option<bool>>,
    /// When this instance started: the directory's record of an open socket reported before
    /// may be of one a runtime restart dropped, and is checked when listed.
    started_at: u64,
}

/// A directory's record of an open socket older than this (or than the directory's instance)
/// is checked with the client's object when the deployment's extensions are listed: a runtime
/// that restarts drops sockets without their close, so such a record may be stale.
const RECHECK_SOCKET_MS: u64 = 60_000;

/// What carrying out an input's effects gave the request that brought it.
#[derive(Default)]
struct Carried {
    /// A poll's answers to its frames.
    replies: Vec<ServerToExtension>,
    /// A poll's frames, kept for the client.
    frames: Vec<PolledFrame>,
    refusal: Option<ErrorObject>,
    /// The client's end of an accepted socket.
    accepted: Option<WebSocket>,
    /// The client's snapshot, as the client's object answered news of a binding.
    snapshot: Option<BrowserSnapshot>,
}

/// The answer to an extension token that is not (or no longer) one.
fn unknown_credential() -> ErrorObject {
    ErrorObject::new(
        ErrorCode::Unauthorized,
        "this extension's credential is unknown or revoked; pair it again from the web app",
    )
}

/// The `clientId` of a request's query.
fn query_client_id(url: &Url) -> std::result::Result<ClientId, ErrorObject> {
    ClientId::parse(&query_param(url, "clientId").unwrap_or_default())
}

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
            handed_over: Cell::new(None),
            started_at: now_ms(),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let url = req.url()?;
        let path = url.path().to_owned();
        if path == "/client-authenticate" {
            return self.authenticate_here(&mut req, &url).await;
        }
        // A client's object: each of its routes names the client.
        if matches!(
            path.as_str(),
            "/ws/extension" | "/send" | "/poll" | "/bound" | "/news" | "/presence"
        ) {
            let client_id = match query_client_id(&url) {
                Ok(client_id) => client_id,
                Err(error) => return error_response(&error),
            };
            if let Err(failure) = self.take_over(&client_id).await {
                return failure.respond();
            }
            return self.client_route(req, &url, client_id).await;
        }
        match (req.method(), path.as_str()) {
            (Method::Get, "/list") => Response::from_json(&ExtensionList {
                extensions: self.list().await?,
            }),
            (Method::Get, "/binding") => {
                let task_id = query_param(&url, "taskId").unwrap_or_default();
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
                        let epoch = self.store.next_epoch(paired.client_id.as_str())?;
                        let client_id = paired.client_id.clone();
                        // Its object checks the new token from now on: told before the token
                        // is given out, so its first use finds it.
                        let credential = digest(&paired.token);
                        let input = Input::Paired {
                            client_id,
                            epoch,
                            credential,
                        };
                        self.run(input).await?;
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
                    None => error_response(&unknown_credential()),
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
                self.revoke(&query_param(&url, "clientId").unwrap_or_default())
                    .await
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
                match self.bind(bind).await {
                    Ok(binding) => Response::from_json(&binding),
                    Err(failure) => failure.respond(),
                }
            }
            (Method::Post, "/report") => match read_body::<PresenceReport>(&mut req).await {
                Err(error) => error_response(&error),
                Ok(report) => {
                    let known_at = self
                        .store
                        .presence(report.client_id.as_str())?
                        .map(|p| p.reported_at);
                    self.run(Input::PresenceReported { report, known_at })
                        .await?;
                    Response::empty()
                }
            },
            (Method::Post, "/hand-over") => match query_client_id(&url) {
                Ok(client_id) => {
                    let credential = self.credentials.standing_digest(client_id.as_str())?;
                    Response::from_json(&self.store.hand_over(client_id.as_str(), credential)?)
                }
                Err(error) => error_response(&error),
            },
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
        // The client's object knows whether its credential stands (the directory told it, and
        // waited for it, before the revocation was answered).
        let paired = self.store.state(REVOKED)? != Some(1);
        let frame = parse_message::<ExtensionMessage>(message, MAX_EXTENSION_FRAME_BYTES);
        let facts = match &frame {
            Ok(frame) if paired => self.facts(&client_id, frame)?,
            _ => FrameFacts::default(),
        };
        let input = Input::SocketFrame {
            conn: ws,
            client_id,
            paired,
            frame,
            facts,
        };
        self.run(input).await?;
        Ok(())
    }

    async fn websocket_close(
        &self,
        ws: WebSocket,
        code: usize,
        _reason: String,
        _clean: bool,
    ) -> Result<()> {
        // Closed first, so that the presence reported counts only the client's other sockets.
        finish_close(&ws, code);
        if let Some(attachment) = ws.deserialize_attachment::<SocketAttachment>()? {
            let input = Input::SocketClosed {
                client_id: attachment.client_id,
            };
            self.run(input).await?;
        }
        Ok(())
    }
}

impl ExtensionRegistry {
    /// Feeds `input` to the registry's rules and carries out what follows, in order: what an
    /// effect learns (a task's answer, a poll's wait ended) is fed in again, its effects
    /// queued.
    async fn run(&self, input: Input<WebSocket>) -> Result<Carried> {
        let mut carried = Carried::default();
        let mut queue: VecDeque<_> = Registry.handle(input, now_ms()).into();
        while let Some(effect) = queue.pop_front() {
            if let Some(input) = self.effect(effect, &mut carried).await? {
                queue.extend(Registry.handle(input, now_ms()));
            }
        }
        Ok(carried)
    }

    async fn effect(
        &self,
        effect: Effect<WebSocket>,
        carried: &mut Carried,
    ) -> Result<Option<Input<WebSocket>>> {
        match effect {
            Effect::SendToSocket { conn, frame } => conn.send(&frame)?,
            Effect::Reply(frame) => carried.replies.push(frame),
            Effect::Refuse(error) => carried.refusal = Some(error),
            Effect::AcceptSocket { client_id } => {
                let pair = WebSocketPair::new()?;
                let tag = client_tag(&client_id);
                self.state
                    .accept_websocket_with_tags(&pair.server, &[EXTENSION, &tag]);
                pair.server
                    .serialize_attachment(SocketAttachment { client_id })?;
                carried.accepted = Some(pair.client);
            }
            Effect::CloseSocket { conn, code, reason } => {
                // The socket may already be gone; there is nothing left to do then.
                let _ = conn.close(Some(code), Some(reason));
            }
            Effect::Persist(persist) => self.persist(persist)?,
            Effect::QueueInOutbox {
                client_id,
                frame,
                at,
            } => {
                let frame = serde_json::to_string(&frame)?;
                self.store.keep(client_id.as_str(), &frame, at)?;
            }
            Effect::WakePolls { client_id } => {
                let woken = self.pollers.borrow_mut().remove(&client_id);
                for wake in woken.into_iter().flatten() {
                    // A poll that already ended has dropped its end: nothing to wake.
                    let _ = wake.send(());
                }
            }
            Effect::DrainOutbox {
                client_id,
                conn,
                stale_before,
            } => {
                for frame in self
                    .store
                    .take_undelivered(client_id.as_str(), stale_before)?
                {
                    conn.send_with_str(&frame)?;
                }
            }
            Effect::CollectOutbox {
                client_id,
                ack,
                stale_before,
                limit,
                hold_ms,
            } => {
                let kept = self
                    .store
                    .undelivered(client_id.as_str(), ack, stale_before, limit)?;
                carried.frames = kept
                    .into_iter()
                    .filter_map(|(seq, frame)| {
                        let frame = serde_json::from_str(&frame).ok()?;
                        Some(PolledFrame { seq, frame })
                    })
                    .collect();
                if carried.frames.is_empty() && hold_ms > 0 {
                    self.hold_poll(&client_id, hold_ms).await;
                    return Ok(Some(Input::PollWaited { client_id, ack }));
                }
            }
            Effect::ForwardToTask {
                task_id,
                message,
                pending,
            } => {
                let outcome = match self.forward(&task_id, message).await {
                    Ok(Ok(())) => Forwarding::Taken,
                    Ok(Err(refusal)) => Forwarding::Refused(refusal),
                    Err(e) => {
                        console_error!("could not relay {}: {e}", pending.what);
                        Forwarding::Unreachable(e.to_string())
                    }
                };
                return Ok(Some(Input::Forwarded { pending, outcome }));
            }
            Effect::PushSnapshot { push, tasks } => {
                let task_ids = self.store.tasks_of(&push.client_id, tasks)?;
                let sends = task_ids.into_iter().map(|task_id| {
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
            }
            Effect::CloseSidePanels { client_id, tasks } => {
                let task_ids = self.store.tasks_of(client_id.as_str(), tasks)?;
                let client_id = &client_id;
                let closes = task_ids.into_iter().map(|task_id| async move {
                    let task = TaskClient::new(&self.env, &task_id)?;
                    answered("a task", task.close_side_panels(client_id.as_str())).await
                });
                for result in futures_util::future::join_all(closes).await {
                    // One unreachable task must not keep the others' side panels open.
                    if let Err(failure) = result {
                        console_error!("closing a side panel's socket failed: {failure}");
                    }
                }
            }
            Effect::ReportPresence { client_id, hello } => {
                let report = PresenceReport {
                    socket: self.open_socket(&client_id).is_some(),
                    polled_at: self.store.polled_at(client_id.as_str())?,
                    at: now_ms(),
                    hello,
                    client_id,
                };
                // The listing waits for the next report should this one not get through; the
                // extension's frames do not.
                match answered(
                    "the directory",
                    RegistryClient::new(&self.env)?.report(&report),
                )
                .await
                {
                    Ok(()) => self.store.set_state(REPORTED_AT, report.at)?,
                    Err(failure) => console_error!("presence report failed: {failure}"),
                }
            }
            Effect::TellClient { client_id, news } => {
                let object = ClientObject::new(&self.env, &client_id)?;
                let told = answered("a client's object", object.news(&client_id, &news)).await;
                match told {
                    Ok(snapshot) => carried.snapshot = snapshot,
                    Err(failure) => {
                        return Err(Error::RustError(format!(
                            "could not tell {client_id}'s object: {failure}"
                        )))
                    }
                }
            }
            Effect::Warn(warning) => console_warn!("{warning}"),
        }
        Ok(None)
    }

    fn persist(&self, persist: Persist) -> Result<()> {
        match persist {
            Persist::Snapshot {
                client_id,
                snapshot,
            } => self.store.save_snapshot(client_id.as_str(), &snapshot),
            Persist::Polled { client_id, at } => self.store.polled(client_id.as_str(), at),
            Persist::StoppedPolling { client_id } => self.store.stopped_polling(client_id.as_str()),
            Persist::Presence(report) => self.store.report(&report),
            Persist::Bound {
                client_id,
                task_id,
                at,
            } => self.store.bind(&task_id, client_id.as_str(), at),
            Persist::Unbound { task_id } => self.store.unbind(&task_id),
            Persist::Credential {
                epoch,
                revoked,
                credential,
                ..
            } => {
                self.store.set_state(EPOCH, epoch)?;
                self.store.set_state(REVOKED, revoked.into())?;
                self.store.set_credential(credential.as_deref())
            }
        }
    }

    /// Holds a poll until a frame is kept for its client or `hold_ms` pass.
    async fn hold_poll(&self, client_id: &ClientId, hold_ms: u32) {
        let (wake, woken) = oneshot::channel();
        // Every poll held for the client is woken (an extension holds one while it sends, a
        // script may ask twice at once).
        self.pollers
            .borrow_mut()
            .entry(client_id.clone())
            .or_default()
            .push(wake);
        let timeout = Delay::from(Duration::from_millis(hold_ms.into()));
        let _ = select(woken, timeout).await;
        // This poll's wake-up is gone with it; drop it (and any other ended poll's).
        if let Some(waiting) = self.pollers.borrow_mut().get_mut(client_id) {
            waiting.retain(|wake| !wake.is_canceled());
        }
    }

    /// What storage knows of what an extension's frame concerns.
    fn facts(&self, client_id: &ClientId, frame: &ExtensionMessage) -> Result<FrameFacts> {
        let needs = FrameFacts::needed(frame);
        Ok(FrameFacts {
            bound: match needs.binding_of {
                Some(task_id) => self.store.binding_of(task_id)?,
                None => None,
            },
            snapshot: match needs.snapshot {
                true => self.store.snapshot(client_id.as_str())?,
                false => None,
            },
        })
    }

    /// A poll (`POST /api/extension/poll`): the request's frames handled in order, then what
    /// was kept for the extension since its acknowledgement.
    async fn poll(&self, client_id: ClientId, request: PollRequest) -> Result<PollResponse> {
        let input = Input::PollArrived {
            client_id: client_id.clone(),
            reported_at: self.store.state(REPORTED_AT)?,
        };
        self.run(input).await?;
        let mut replies = Vec::new();
        for frame in request.frames {
            let facts = self.facts(&client_id, &frame)?;
            let input = Input::PolledFrame {
                client_id: client_id.clone(),
                frame,
                facts,
            };
            replies.extend(self.run(input).await?.replies);
        }
        let input = Input::PollCollect {
            client_id,
            ack: request.ack,
            wait_ms: request.wait_ms,
        };
        let frames = self.run(input).await?.frames;
        Ok(PollResponse { replies, frames })
    }

    /// The directory revokes an extension's credential; the client's object, told before this
    /// answers, closes what it opened.
    async fn revoke(&self, named: &str) -> Result<Response> {
        let revoked = self.credentials.revoke(named)?;
        let carried = match ClientId::parse(named) {
            Ok(client_id) => {
                let epoch = match revoked {
                    true => self.store.next_epoch(client_id.as_str())?,
                    false => self.store.epoch(client_id.as_str())?,
                };
                self.run(Input::Revoked {
                    client_id,
                    revoked,
                    epoch,
                })
                .await?
            }
            // No such id was ever issued, so none was revoked.
            Err(_) => Carried {
                refusal: Some(not_paired(named)),
                ..Carried::default()
            },
        };
        match carried.refusal {
            Some(refusal) => error_response(&refusal),
            None => Response::empty(),
        }
    }

    /// A client's object's routes: its extension's socket and polls, its tasks' frames for it,
    /// and what the directory tells or asks it.
    async fn client_route(
        &self,
        mut req: Request,
        url: &Url,
        client_id: ClientId,
    ) -> Result<Response> {
        match (req.method(), url.path()) {
            (Method::Get, "/ws/extension") => {
                let older = self.sockets(&client_id);
                let carried = self.run(Input::SocketOpened { client_id, older }).await?;
                match carried.accepted {
                    Some(socket) => Response::from_websocket(socket),
                    None => Err(Error::RustError("the socket was not accepted".into())),
                }
            }
            (Method::Post, "/send") => match req.json::<SendToExtension>().await {
                Ok(send) if send.client_id == client_id => self.send(send).await,
                Ok(_) => error_response(&ErrorObject::new(
                    ErrorCode::SchemaValidationFailed,
                    "a frame for another client's object",
                )),
                Err(e) => error_response(&ErrorObject::new(
                    ErrorCode::SchemaValidationFailed,
                    format!("not a frame for an extension: {e}"),
                )),
            },
            (Method::Post, "/poll") => {
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
                    Ok(request) => Response::from_json(&self.poll(client_id, request).await?),
                    Err(e) => error_response(&ErrorObject::new(
                        ErrorCode::SchemaValidationFailed,
                        format!("not a poll: {e}"),
                    )),
                }
            }
            (Method::Get, "/bound") => {
                let task_id = query_param(url, "taskId").unwrap_or_default();
                let bound = self.store.binding_of(&task_id)?;
                Response::from_json(&(bound.as_deref() == Some(client_id.as_str())))
            }
            (Method::Post, "/news") => match read_body::<News>(&mut req).await {
                Err(error) => error_response(&error),
                Ok(news) => {
                    let input = Input::News {
                        sockets: self.sockets(&client_id),
                        known_epoch: self.store.state(EPOCH)?.unwrap_or(0),
                        client_id: client_id.clone(),
                        news,
                    };
                    self.run(input).await?;
                    Response::from_json(&self.store.snapshot(client_id.as_str())?)
                }
            },
            (Method::Get, "/presence") => Response::from_json(&PresenceReport {
                socket: self.open_socket(&client_id).is_some(),
                polled_at: self.store.polled_at(client_id.as_str())?,
                at: now_ms(),
                hello: None,
                client_id,
            }),
            _ => error_response(&ErrorObject::new(
                ErrorCode::NotFound,
                "no such registry route",
            )),
        }
    }

    /// A client's object checks an extension token that names its client
    /// (`mimo_agent::credentials::token_client`) against the digest it was told at pairing, so
    /// the extension's requests touch no object but its own. An object never told of a pairing
    /// (a token made up under an id that has none) refuses without asking the directory or
    /// storing anything.
    async fn authenticate_here(&self, req: &mut Request, url: &Url) -> Result<Response> {
        let client_id = match query_client_id(url) {
            Ok(client_id) => client_id,
            Err(error) => return error_response(&error),
        };
        let check = match read_body::<TokenCheck>(req).await {
            Ok(check) => check,
            Err(error) => return error_response(&error),
        };
        let told = self.store.state(HANDED_OVER)?.is_some();
        let revoked = self.store.state(REVOKED)? == Some(1);
        let stored = if told { self.store.credential()? } else { None };
        if !sharding::admits(stored.as_deref(), revoked, &digest(&check.token)) {
            return error_response(&unknown_credential());
        }
        Response::from_json(&TicketHolder {
            principal: Principal::Extension { client_id }.encode(),
        })
    }

    /// A client's object, before it first handles anything: it takes over what the directory
    /// keeps for its client (its standing, its bindings, and what a deployment from before the
    /// clients had objects of their own kept for it). Once; a request that comes meanwhile
    /// waits for it.
    async fn take_over(&self, client_id: &ClientId) -> crate::error::Reply<()> {
        loop {
            match self.handed_over.get() {
                Some(true) => return Ok(()),
                Some(false) => Delay::from(Duration::from_millis(5)).await,
                None if self.store.state(HANDED_OVER)?.is_some() => {
                    self.handed_over.set(Some(true));
                }
                None => {
                    self.handed_over.set(Some(false));
                    let handed = answered(
                        "the directory",
                        RegistryClient::new(&self.env)?.hand_over(client_id),
                    )
                    .await
                    .and_then(|handed| Ok(self.store.take_over(client_id.as_str(), &handed)?));
                    self.handed_over.set(handed.is_ok().then_some(true));
                    return handed;
                }
            }
        }
    }

    /// Sends a frame from a task to its extension, as the registry's rules route it.
    async fn send(&self, send: SendToExtension) -> Result<Response> {
        let input = Input::FrameForClient {
            presence: self.presence(&send.client_id)?,
            client_id: send.client_id,
            frame: send.message,
        };
        match self.run(input).await?.refusal {
            Some(refusal) => error_response(&refusal),
            None => Response::empty(),
        }
    }

    /// The client's sockets (the runtime keeps them across hibernation).
    fn sockets(&self, client_id: &ClientId) -> Vec<WebSocket> {
        self.state.get_websockets_with_tag(&client_tag(client_id))
    }

    /// The client's open socket, if any.
    fn open_socket(&self, client_id: &ClientId) -> Option<WebSocket> {
        self.sockets(client_id).into_iter().find(|ws| {
            AsRef::<web_sys::WebSocket>::as_ref(ws).ready_state() == web_sys::WebSocket::OPEN
        })
    }

    /// A client's object: where its client is connected, its open socket, its last poll.
    fn presence(&self, client_id: &ClientId) -> Result<Presence<WebSocket>> {
        Ok(Presence {
            socket: self.open_socket(client_id),
            polled_at: self.store.polled_at(client_id.as_str())?,
        })
    }

    /// The directory: the deployment's extensions, as the clients' objects reported them. A
    /// report of an open socket that is old is checked with the client's object first.
    async fn list(&self) -> Result<Vec<ExtensionInfo>> {
        let now = now_ms();
        let records = self.store.clients()?;
        let checks = records.iter().map(|record| async move {
            let known = self.store.presence(record.client_id.as_str())?;
            match known {
                Some(row)
                    if row.socket
                        && (row.reported_at < self.started_at
                            || now >= row.reported_at + RECHECK_SOCKET_MS) =>
                {
                    let object = ClientObject::new(&self.env, &record.client_id)?;
                    match answered("a client's object", object.presence(&record.client_id)).await {
                        Ok(report) => {
                            // A report that came in while the object was asked is newer: it
                            // stands (the object's socket may have opened since it answered).
                            let latest = self.store.presence(record.client_id.as_str())?;
                            match latest.filter(|l| l.reported_at > report.at) {
                                Some(latest) => Ok(Presence {
                                    socket: latest.socket.then_some(()),
                                    polled_at: latest.polled_at,
                                }),
                                None => {
                                    self.store.report(&report)?;
                                    Ok(Presence {
                                        socket: report.socket.then_some(()),
                                        polled_at: report.polled_at,
                                    })
                                }
                            }
                        }
                        // Unknown: as last reported.
                        Err(_) => Ok(Presence {
                            socket: Some(()),
                            polled_at: row.polled_at,
                        }),
                    }
                }
                Some(row) => Ok::<_, Error>(Presence {
                    socket: row.socket.then_some(()),
                    polled_at: row.polled_at,
                }),
                None => Ok(Presence {
                    socket: None,
                    polled_at: None,
                }),
            }
        });
        let presences = futures_util::future::join_all(checks).await;
        records
            .into_iter()
            .zip(presences)
            .map(|(record, presence)| {
                let presence = presence?;
                let paired = self.credentials.is_paired(record.client_id.as_str())?;
                Ok(listing::info(record, &presence, paired, now))
            })
            .collect()
    }

    /// The directory binds a task, and tells the client's object (and the one it was bound to
    /// before) before it answers, so that a frame sent right after goes where it should.
    async fn bind(&self, req: BindRequest) -> Reply<Binding> {
        let candidates = listing::candidates(self.list().await?);
        let bound = self.store.binding_of(&req.task_id)?;
        let chosen = selection::bind(
            &candidates,
            req.client_id.as_deref(),
            bound.as_deref(),
            now_ms(),
        )?;
        let client_id = ClientId::parse(&chosen.client_id)?;
        let input = Input::Bound {
            task_id: req.task_id,
            client_id,
            before: bound.and_then(|b| ClientId::parse(&b).ok()),
            at: chosen.used_at,
        };
        let carried = self.run(input).await?;
        Ok(Binding {
            snapshot: carried.snapshot,
            client_id: chosen.client_id,
        })
    }

    /// Passes what the extension says about a task to that task: its answer, its refusal,
    /// or `Err` when it could not be reached.
    async fn forward(
        &self,
        task_id: &str,
        message: ToTask,
    ) -> Result<std::result::Result<(), ErrorObject>> {
        let task = TaskClient::new(&self.env, task_id)?;
        // The task may itself wait on this registry (its next dispatch) within its own bound:
        // this one is twice that. Past it the extension's frame goes unacknowledged, and is
        // sent again.
        let within = 2 * OBJECT_ANSWER_MS;
        let what_task = format!("task {task_id}");
        let answer = match message {
            ToTask::Event(event) => {
                answered_within(&what_task, within, task.action_event(&event)).await
            }
            ToTask::Control(control) => {
                answered_within(&what_task, within, task.control(control)).await
            }
            ToTask::Confirm {
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
                answered_within(&what_task, within, task.confirm(&answer)).await
            }
        };
        answer.refusal()
    }
}
