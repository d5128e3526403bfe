//! `TaskCoordinator`: one Durable Object per task, a shell around `mimo_agent::task::Task`.
//!
//! It routes requests and socket frames to the task as inputs and carries out the effects the
//! task returns: storage, the web app's sockets, model calls, the registry, the alarm. What it
//! learns doing so goes back to the task as another input. The one rule of its own is merging
//! alarms: one alarm serves every purpose, set for the earliest time asked.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use futures_channel::oneshot;
use futures_util::StreamExt;
use mimo_agent::actions::ActionRecord;
use mimo_agent::credentials::Viewer;
use mimo_agent::llm;
use mimo_agent::task::ForkSeed;
use mimo_agent::task::{
    ActionEvent, Caller, ClientConsent, Effect, Input, LlmCall, SnapshotPush, Start, Stored, Task,
    TaskConfig,
};
use mimo_agent::task_index::{IndexEntry, IndexReporter};
use mimo_agent::webhooks::{self, EventMapper, HostPolicy};
use mimo_agent::{audit, script};
use mimo_protocol::audit::AuditRecord;
use mimo_protocol::frontend::{TaskHere, TaskSummary};
use mimo_protocol::script::ScriptStart;
use mimo_protocol::snapshot::ChromeId;
use mimo_protocol::webhooks::WebhookEvents;
use mimo_protocol::{
    limits::MAX_WEB_FRAME_BYTES, ErrorCode, ErrorObject, EventEnvelope, ForkRequest, ForkedFrom,
    FrontendEvent, FrontendMessage, TaskControl,
};
use mimo_r2_artifacts::archive::{self, Body, Entry};
use mimo_r2_artifacts::{store, task_prefix, TaskId};
use serde::Serialize;
use worker::*;

use crate::action_store::ActionStore;
use crate::alarm;
use crate::artifacts::{read_image, ArtifactStore};
use crate::clients::{
    ArtifactGrant, ArtifactStored, BindRequest, ClientObject, ConfirmBody, RegistryClient, RunGoal,
    SkillClient, SubmitAction, TaskIndexClient, WebhookClient,
};
use crate::deadline::{answered, with_deadline, OBJECT_ANSWER_MS};
use crate::error::{Failure, Refusable};
use crate::http::{error_response, now_ms, query_param, read_body, token_generation};
use crate::secret_store::SecretStore;
use crate::socket::{finish_close, parse_message};
use crate::task_store::TaskStore;
use crate::{llm_client, ARTIFACTS};

/// How soon the alarm runs after an effect failed, so that what it left undone is picked up.
const RECOVERY_DELAY_MS: u64 = 1_000;

/// How soon webhook events the webhooks object did not take are reported again.
const WEBHOOK_RETRY_MS: u64 = 5_000;

/// Tag of the web app's sockets.
const WEB: &str = "web";

/// How a waiting request's action ended: its record, or why it never ran.
pub(crate) type Ended = std::result::Result<ActionRecord, ErrorObject>;

#[cfg_attr(feature = "objects", durable_object)]
pub struct TaskCoordinator {
    state: State,
    env: Env,
    pub(crate) store: TaskStore,
    artifacts: ArtifactStore,
    action_store: ActionStore,
    pub(crate) secrets: SecretStore,
    pub(crate) task: RefCell<Task>,
    /// Requests of the developer API (and MCP sessions) waiting for their action to end, or to
    /// be refused after all (a step the person declined), by action id.
    pub(crate) waiters: RefCell<HashMap<String, oneshot::Sender<Ended>>>,
    /// Requests waiting for a run to end (MCP's `run_task`), woken by each recorded event.
    pub(crate) run_waiters: RefCell<Vec<oneshot::Sender<()>>>,
    /// Why the stored task could not be loaded: every route but `/delete` answers with it.
    broken: RefCell<Option<ErrorObject>>,
    started_at: u64,
    /// When the task's history last grew (since this instance started).
    last_activity: Cell<u64>,
    /// What the task index last heard of this task, and whether a report is under way.
    index: RefCell<IndexReporter>,
    reporting: Cell<bool>,
    /// Whether a report of webhook events is under way.
    reporting_webhooks: Cell<bool>,
    /// The tag of the web app's sockets opened under today's deployment token: sockets without
    /// it were opened under a token since rotated, and are closed instead of served.
    token_tag: String,
}

/// Close code of a web app's socket opened under a deployment token since rotated, and of a
/// side panel's once its browser's credential is revoked: sign in, or pair, again.
const CREDENTIAL_ENDED: u16 = 4401;

/// Close code of a side panel's socket once its task is bound to another browser.
const UNBOUND: u16 = 4403;

/// Tag prefix of a side panel's socket, before its extension's client id.
const SIDE_PANEL_TAG: &str = "side-panel:";

/// What `GET /api/task/{taskId}/export` answers.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TaskExport {
    format: &'static str,
    exported_at: u64,
    task: TaskSummary,
    events: Vec<EventEnvelope>,
    actions: Vec<ActionRecord>,
}

/// Names the export's shape, so that tools reading old exports can tell.
const EXPORT_FORMAT: &str = "mimo-task-export/1";

/// The deployment's settings; unusable values are logged, and their defaults apply.
fn config(env: &Env) -> TaskConfig {
    let (config, warnings) = TaskConfig::from_lookup(|name| {
        // Vars and secrets are both strings; a key may be set as either.
        env.var(name)
            .or_else(|_| env.secret(name))
            .ok()
            .map(|v| v.to_string())
    });
    for warning in warnings {
        console_warn!("{}", warning.message);
    }
    config
}

fn load(
    store: &TaskStore,
    action_store: &ActionStore,
    artifacts: &ArtifactStore,
    secrets: &SecretStore,
) -> Result<Stored> {
    let task = store.load_task()?;
    let (messages, summary) = match task {
        Some(_) => (store.load_messages()?, store.load_summary()?),
        None => (Vec::new(), None),
    };
    Ok(Stored {
        task,
        messages,
        summary,
        run: store.load_run()?,
        actions: action_store.load()?,
        artifacts: artifacts.all()?,
        snapshot: store.load_snapshot()?.map(|(_, snapshot)| snapshot),
        secrets: secrets.list()?,
    })
}

pub(crate) fn unknown_task() -> ErrorObject {
    ErrorObject::new(ErrorCode::NotFound, "unknown task")
}

impl DurableObject for TaskCoordinator {
    fn new(state: State, env: Env) -> Self {
        let store = TaskStore::open(state.storage().sql()).expect("task schema");
        let artifacts = ArtifactStore::open(state.storage().sql()).expect("artifact schema");
        let action_store = ActionStore::open(state.storage().sql()).expect("action schema");
        let secrets = SecretStore::open(state.storage().sql()).expect("secret schema");
        let config = config(&env);
        let (task, broken) = match load(&store, &action_store, &artifacts, &secrets) {
            Ok(stored) => {
                // A task stored before webhooks were: its events are reported from here on.
                if stored.task.is_some() && matches!(store.load_webhook_cursor(), Ok(None)) {
                    let from_now = store
                        .last_seq()
                        .and_then(|seq| store.save_webhook_cursor(&EventMapper::after(seq)));
                    if let Err(e) = from_now {
                        console_warn!("a task's webhook cursor could not be set: {e}");
                    }
                }
                (Task::restore(config, stored, now_ms()), None)
            }
            Err(e) => {
                // A record this build cannot read (corrupt, or written in a format it does not
                // know): the task answers with the reason instead of failing every request.
                console_error!("a task's stored records cannot be read: {e}");
                let error = ErrorObject::new(
                    ErrorCode::InternalError,
                    format!(
                        "This task's stored records cannot be read ({e}). Nothing was changed; \
                         delete the task to start again."
                    ),
                );
                (Task::new(config), Some(error))
            }
        };
        Self {
            state,
            token_tag: format!("token:{}", token_generation(&env)),
            env,
            store,
            artifacts,
            action_store,
            secrets,
            task: RefCell::new(task),
            waiters: RefCell::new(HashMap::new()),
            run_waiters: RefCell::new(Vec::new()),
            broken: RefCell::new(broken),
            started_at: now_ms(),
            last_activity: Cell::new(0),
            index: RefCell::new(IndexReporter::default()),
            reporting_webhooks: Cell::new(false),
            reporting: Cell::new(false),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let url = req.url()?;
        let broken = self.broken.borrow().clone();
        if let Some(error) = broken {
            if url.path() != "/delete" {
                return error_response(&error);
            }
        }
        let query = |name: &str| query_param(&url, name);
        match (req.method(), url.path()) {
            (Method::Post, "/init") => self.init(query("taskId").unwrap_or_default()).await,
            // Forks: the seed is read from the task forked, the fork created from it, and the
            // task forked told of it (the worker's `POST /api/task/{id}/fork` does the three).
            (Method::Post, "/fork-seed") => match read_body::<ForkRequest>(&mut req).await {
                Ok(fork) => match self.task.borrow().fork_seed(&fork.message_id) {
                    Ok(seed) => Response::from_json(&seed),
                    Err(error) => error_response(&error),
                },
                Err(error) => error_response(&error),
            },
            (Method::Post, "/fork-init") => match read_body::<ForkSeed>(&mut req).await {
                Ok(seed) => {
                    let task_id = query("taskId").unwrap_or_default();
                    self.respond(Input::CreateFork { task_id, seed }, Caller::Direct)
                        .await
                }
                Err(error) => error_response(&error),
            },
            (Method::Post, "/forked") => match read_body::<ForkedFrom>(&mut req).await {
                Ok(fork) => {
                    let input = Input::Forked {
                        task_id: fork.task_id,
                        message_id: fork.message_id,
                    };
                    self.respond(input, Caller::Relay).await
                }
                Err(error) => error_response(&error),
            },
            (Method::Get, "/ws/web") => {
                let last_seq = query("lastSeq").and_then(|s| s.parse().ok()).unwrap_or(0);
                self.connect_web(last_seq, query("clientId")).await
            }
            // An extension's credential ended: its side panel's sockets close at once.
            (Method::Post, "/side-panels/close") => {
                let tag = format!("{SIDE_PANEL_TAG}{}", query("clientId").unwrap_or_default());
                for socket in self.state.get_websockets_with_tag(&tag) {
                    let _ = socket.close(
                        Some(CREDENTIAL_ENDED),
                        Some("this browser's credential was revoked; pair it again"),
                    );
                }
                Response::empty()
            }
            // The side panel starts a task in its own browser, on the person's current tab.
            (Method::Post, "/start-here") => match read_body::<TaskHere>(&mut req).await {
                Ok(here) => {
                    self.start_here(query("clientId").unwrap_or_default(), here.tab_id)
                        .await
                }
                Err(error) => error_response(&error),
            },
            (Method::Get, "/summary") => match self.task_summary()? {
                Some(summary) => Response::from_json(&summary),
                None => error_response(&unknown_task()),
            },
            (Method::Get, "/export") => self.export(),
            (Method::Get, "/export.zip") => self.evidence().await,
            (Method::Get, "/audit") => self.audit().await,
            // `/actions` is also the developer API's (the worker forwards it); `/actions/confirmed`
            // and `/actions/held` are reached by an MCP session's object only — once the person
            // approved the step in their MCP client, or to ask them in the web app: no public
            // route leads to them.
            (Method::Post, route @ ("/actions" | "/actions/confirmed" | "/actions/held")) => {
                let consent = match route {
                    "/actions/confirmed" => ClientConsent::ConfirmedInClient,
                    "/actions/held" => ClientConsent::AskInApp,
                    _ => ClientConsent::Unasked,
                };
                match read_body::<SubmitAction>(&mut req).await {
                    Ok(submit) => self.submit_action(submit, consent).await,
                    Err(error) => error_response(&error),
                }
            }
            (Method::Get, "/actions") if self.exists() => {
                Response::from_json(&self.task.borrow().actions().records())
            }
            (Method::Post, "/run") => match read_body::<RunGoal>(&mut req).await {
                Ok(run) => self.run_goal(run).await,
                Err(error) => error_response(&error),
            },
            (Method::Get, "/run") => {
                let wait_ms = query("waitMs").and_then(|w| w.parse().ok()).unwrap_or(0);
                let after_steps = query("afterSteps").and_then(|n| n.parse().ok());
                self.run_state(wait_ms, after_steps).await
            }
            (Method::Post, "/control") => match read_body::<TaskControl>(&mut req).await {
                Ok(control) => self.respond(Input::Control(control), Caller::Relay).await,
                Err(error) => error_response(&error),
            },
            (Method::Post, "/script/start") => match read_body::<ScriptStart>(&mut req).await {
                Ok(start) => {
                    self.script_start(start, query("clientId").unwrap_or_default())
                        .await
                }
                Err(error) => error_response(&error),
            },
            (Method::Get, "/script/status") => {
                let Some(task) = self.task.borrow().record().cloned() else {
                    return error_response(&unknown_task());
                };
                let history = self.store.events_after(&task.task_id, 0)?;
                let records = self.task.borrow().actions().records().to_vec();
                Response::from_json(&script::status(
                    &task.task_id,
                    task.status,
                    &records,
                    &history,
                ))
            }
            (Method::Post, "/confirm") => match read_body::<ConfirmBody>(&mut req).await {
                Ok(answer) => {
                    let input = Input::Confirm {
                        step: answer.step,
                        approve: answer.approve,
                        reason: answer.reason,
                        by: answer.by,
                    };
                    self.respond(input, Caller::Relay).await
                }
                Err(error) => error_response(&error),
            },
            (Method::Post, "/action-event") => match read_body::<ActionEvent>(&mut req).await {
                Ok(event) => self.respond(Input::Extension(event), Caller::Relay).await,
                Err(error) => error_response(&error),
            },
            (Method::Post, "/snapshot") => match read_body::<SnapshotPush>(&mut req).await {
                Ok(push) => self.respond(Input::Snapshot(push), Caller::Direct).await,
                Err(error) => error_response(&error),
            },
            (Method::Post, "/delete") => self.delete(query("taskId")).await,
            (Method::Get, "/secrets") => self.list_secrets(),
            (Method::Post, "/secret-value") => self.secret_value(&mut req).await,
            (Method::Post, path) if path.starts_with("/secrets/put/") => {
                let name = path["/secrets/put/".len()..].to_owned();
                self.put_secret(&name, &mut req).await
            }
            (Method::Post, path) if path.starts_with("/secrets/delete/") => {
                self.delete_secret(&path["/secrets/delete/".len()..]).await
            }
            (Method::Post, "/artifacts/granted") => {
                let grant: ArtifactGrant = req.json().await?;
                self.respond(Input::ArtifactGranted(grant), Caller::Direct)
                    .await
            }
            (Method::Post, "/artifacts/stored") => {
                let stored: ArtifactStored = req.json().await?;
                self.respond(Input::ArtifactStored(stored), Caller::Direct)
                    .await
            }
            (Method::Get, "/artifacts/get") => {
                let record =
                    query("artifactId").and_then(|id| self.task.borrow().artifact(&id).cloned());
                match record {
                    Some(record) => Response::from_json(&record),
                    None => {
                        error_response(&ErrorObject::new(ErrorCode::NotFound, "no such artifact"))
                    }
                }
            }
            _ => error_response(&ErrorObject::new(ErrorCode::NotFound, "no such task route")),
        }
    }

    async fn websocket_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        let Some(viewer) = self.viewer(&ws) else {
            return Ok(());
        };
        let parsed = parse_message::<FrontendMessage>(message, MAX_WEB_FRAME_BYTES);
        let message = match parsed {
            Ok(message) => message,
            Err(error) => return self.send_error(&ws, error),
        };
        if let Some(refusal) = viewer.refuses(&message) {
            return self.send_error(&ws, refusal);
        }
        let input = Input::from_web(message, viewer.confirmer());
        for refusal in self.handle(input, Caller::Direct).await? {
            self.send_error(&ws, refusal)?;
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
        finish_close(&ws, code);
        Ok(())
    }

    /// Runs what is due: held model calls, what a restart cut off, action timeouts and
    /// retries, the artifacts past their retention.
    async fn alarm(&self) -> Result<Response> {
        // This alarm is being handled: clear it, so that what the work below schedules is set
        // anew instead of being mistaken for already pending.
        self.state.storage().delete_alarm().await?;
        self.handle(Input::Alarm, Caller::Direct).await?;
        Response::empty()
    }
}

/// What carrying out one effect leads to.
enum Followup {
    Nothing,
    /// Something learned, for the task (boxed: inputs carry whole action outcomes).
    Input(Box<Input>),
    /// Effects a model call's stream left once it ended.
    Effects(Vec<Effect>),
}

impl TaskCoordinator {
    pub(crate) fn exists(&self) -> bool {
        self.task.borrow().record().is_some()
    }

    pub(crate) fn task_id(&self) -> Option<String> {
        self.task.borrow().record().map(|t| t.task_id.clone())
    }

    /// Feeds `input` to the task and carries out what follows; returns the refusals meant for
    /// whoever sent it (an empty message, an unknown step, no extension to bind).
    pub(crate) async fn handle(&self, input: Input, caller: Caller) -> Result<Vec<ErrorObject>> {
        let mut refusals = Vec::new();
        // A new task's webhook events start with its creation (a fork's too: its first status).
        let creating = matches!(
            &input,
            Input::Create { .. } | Input::CreateFork { .. } if !self.exists()
        );
        let handled = self.task.borrow_mut().handle(input, now_ms(), caller);
        let carried = match handled {
            Ok(effects) => self.carry_out(effects, caller, &mut refusals).await,
            Err(refusal) => {
                refusals.push(refusal);
                Ok(())
            }
        };
        if creating && self.exists() {
            self.store.save_webhook_cursor(&EventMapper::default())?;
        }
        self.report_to_index().await;
        self.report_webhooks().await;
        carried.map(|()| refusals)
    }

    /// Hands the task's new webhook events (read from its history, from where the last report
    /// ended) to the webhooks object, in order; the cursor moves only once they are taken, so
    /// an event is reported at least once (the object drops one it has). One report at a time;
    /// a failure is logged and tried again by the alarm.
    async fn report_webhooks(&self) {
        if self.reporting_webhooks.replace(true) {
            return;
        }
        loop {
            match self.report_webhooks_once().await {
                Ok(true) => continue,
                Ok(false) => break,
                Err(failure) => {
                    console_warn!(
                        "task {}: webhook events not reported yet: {failure}",
                        self.task_label()
                    );
                    if let Err(e) = self.wake_at(now_ms() + WEBHOOK_RETRY_MS).await {
                        console_warn!("task {}: no alarm set: {e}", self.task_label());
                    }
                    break;
                }
            }
        }
        self.reporting_webhooks.set(false);
    }

    /// One report of what the history holds after the cursor; whether there was any.
    async fn report_webhooks_once(&self) -> std::result::Result<bool, Failure> {
        let Some(task_id) = self.task_id() else {
            return Ok(false);
        };
        let last = self.store.last_seq()?;
        // Set when the task was made (or, for one from before webhooks, loaded).
        let Some(mut cursor) = self.store.load_webhook_cursor()? else {
            return Ok(false);
        };
        if last <= cursor.seq {
            return Ok(false);
        }
        let events: Vec<_> = self
            .store
            .events_after(&task_id, cursor.seq)?
            .iter()
            .filter_map(|envelope| cursor.read(envelope))
            .map(|event| webhooks::report(&event))
            .collect();
        // A deployment that lists no receiver has no webhooks: its tasks (every step of them)
        // make no call to the one webhooks object.
        let setting = |name: &str| self.env.var(name).ok().map(|v| v.to_string());
        let policy = HostPolicy::new(
            setting("WEBHOOK_ALLOWED_HOSTS").as_deref(),
            setting("WEBHOOK_ALLOW_LOOPBACK").as_deref(),
        );
        if !events.is_empty() && !policy.calls_none() {
            let webhooks = WebhookClient::new(&self.env)?;
            answered("the webhooks", webhooks.report(&WebhookEvents { events })).await?;
        }
        self.store.save_webhook_cursor(&cursor)?;
        Ok(true)
    }

    /// Reports the task's entry to the task index when that tells the session list something
    /// new: a title, a status, activity a few seconds newer ([`IndexReporter`]). One report at
    /// a time: the one under way looks again when it is done, so a newer status is never
    /// overtaken by an older one. A failure is logged and never the task's; the next report
    /// carries the same.
    async fn report_to_index(&self) {
        if self.reporting.replace(true) {
            return;
        }
        loop {
            let entry = self
                .task
                .borrow()
                .record()
                .map(|task| IndexEntry::of(task, self.last_activity.get()));
            let Some(entry) = entry.filter(|e| self.index.borrow().due(e)) else {
                break;
            };
            let reported = match TaskIndexClient::new(&self.env) {
                Ok(index) => answered("the session list", index.put(&entry)).await,
                Err(e) => Err(e.into()),
            };
            match reported {
                Ok(()) => self.index.borrow_mut().reported(entry),
                Err(failure) => {
                    console_warn!(
                        "task {}: the session list was not updated: {failure}",
                        entry.task_id
                    );
                    break;
                }
            }
        }
        self.reporting.set(false);
    }

    /// [`TaskCoordinator::handle`] for a request: empty, or the first refusal.
    pub(crate) async fn respond(&self, input: Input, caller: Caller) -> Result<Response> {
        match self.handle(input, caller).await?.into_iter().next() {
            None => Response::empty(),
            Some(refusal) => error_response(&refusal),
        }
    }

    /// Carries out effects in order; what each leads to joins the queue. One that fails does
    /// not drop the ones after it: the failure is logged, the rest is carried out, and an
    /// early alarm lets the task pick up what the failed one left undone. The first failure is
    /// returned.
    async fn carry_out(
        &self,
        effects: Vec<Effect>,
        caller: Caller,
        refusals: &mut Vec<ErrorObject>,
    ) -> Result<()> {
        let mut queue: VecDeque<Effect> = effects.into();
        let mut failure: Option<Error> = None;
        while let Some(effect) = queue.pop_front() {
            match self.effect(effect).await {
                Ok(Followup::Nothing) => {}
                Ok(Followup::Effects(more)) => queue.extend(more),
                Ok(Followup::Input(input)) => {
                    let handled = self.task.borrow_mut().handle(*input, now_ms(), caller);
                    match handled {
                        Ok(more) => queue.extend(more),
                        Err(refusal) => refusals.push(refusal),
                    }
                }
                Err(e) => {
                    console_error!("task {}: an effect failed: {e}", self.task_label());
                    failure.get_or_insert(e);
                }
            }
        }
        match failure {
            None => Ok(()),
            Some(e) => {
                self.wake_at(now_ms() + RECOVERY_DELAY_MS).await?;
                Err(e)
            }
        }
    }

    async fn effect(&self, effect: Effect) -> Result<Followup> {
        match effect {
            // A new title or status reaches the session list before a model call, however long
            // it streams (the rest is reported once the input's work is done, in `handle`).
            Effect::CallLlm(call) => {
                self.report_to_index().await;
                Ok(Followup::Effects(self.call_llm(call).await?))
            }
            Effect::AskModel { purpose, messages } => {
                self.report_to_index().await;
                let (text, usage) = self.ask_model(&messages).await;
                Ok(Followup::Input(Box::new(Input::ModelAnswered {
                    purpose,
                    text,
                    usage,
                })))
            }
            Effect::Bind { client_id, purpose } => {
                let Some(task_id) = self.task_id() else {
                    return Ok(Followup::Nothing);
                };
                let request = BindRequest { task_id, client_id };
                let registry = RegistryClient::new(&self.env)?;
                let result = answered("the registry", registry.bind(&request))
                    .await
                    .refusal()?;
                Ok(Followup::Input(Box::new(Input::Bound { purpose, result })))
            }
            Effect::LookupSkills { turn_id, query } => {
                // A library that cannot answer leaves the call without skills: it never fails
                // the run.
                let found = match SkillClient::new(&self.env) {
                    Ok(library) => answered("the skill library", library.matching(&query)).await,
                    Err(e) => Err(e.into()),
                };
                let result = found.map_err(|failure| ErrorObject::from(&failure));
                Ok(Followup::Input(Box::new(Input::SkillsFound {
                    turn_id,
                    result,
                })))
            }
            Effect::Dispatch(action) => {
                let action_id = action.action_id.clone();
                let client_id = action.client_id.clone();
                let message = mimo_protocol::ServerToExtension::BrowserAction { action };
                let sent = self.send_to_client(&client_id, message).await;
                // Whatever keeps it from the extension — offline, or the registry unreachable —
                // is a failed dispatch for the scheduler to deal with.
                let error = match sent {
                    Ok(()) => return Ok(Followup::Nothing),
                    Err(Failure::Refused(error)) => error,
                    Err(Failure::Runtime(e)) => ErrorObject::new(
                        ErrorCode::PluginOffline,
                        format!(
                            "the action could not be handed to the extension's connection: {e}"
                        ),
                    ),
                };
                Ok(Followup::Input(Box::new(Input::DispatchFailed {
                    action_id,
                    error,
                })))
            }
            Effect::Tell { client_id, message } => {
                // Best effort: an offline extension learns the same later.
                match self.send_to_client(&client_id, message).await {
                    Ok(()) => {}
                    Err(Failure::Refused(error)) if error.code == ErrorCode::PluginOffline => {}
                    Err(failure) => console_warn!("could not tell the extension: {failure}"),
                }
                Ok(Followup::Nothing)
            }
            // Not reported to the session list here: that is a call to another object, which
            // an action dispatched after this save (a developer API action starting the task
            // running) would wait for.
            Effect::SaveTask(record) => {
                self.store.save_task(&record)?;
                Ok(Followup::Nothing)
            }
            Effect::WakeAt(at) => {
                self.wake_at(at).await?;
                Ok(Followup::Nothing)
            }
            Effect::DeleteArtifacts(records) => {
                let keys = records.iter().map(|r| r.key.clone()).collect();
                self.bucket()?.delete_multiple(keys).await?;
                let ids: Vec<String> = records.into_iter().map(|r| r.artifact_id).collect();
                self.artifacts.forget(&ids)?;
                Ok(Followup::Nothing)
            }
            Effect::Erase { task_id } => {
                self.erase(&task_id).await?;
                Ok(Followup::Input(Box::new(Input::Erased)))
            }
            Effect::ActionFinished(record) => {
                if let Some(sender) = self.waiters.borrow_mut().remove(&record.action_id) {
                    // The waiting request may have given up already; nothing to tell then.
                    let _ = sender.send(Ok(record));
                }
                Ok(Followup::Nothing)
            }
            Effect::StepRefused { action_id, error } => {
                if let Some(sender) = self.waiters.borrow_mut().remove(&action_id) {
                    let _ = sender.send(Err(error));
                }
                Ok(Followup::Nothing)
            }
            stored => {
                self.store_or_show(stored)?;
                Ok(Followup::Nothing)
            }
        }
    }

    /// The effects that are storage and the web app's sockets only (carried out at once, also
    /// while a model call streams).
    /// Hands a message to the extension client's registry object, which holds its socket.
    async fn send_to_client(
        &self,
        client_id: &str,
        message: mimo_protocol::ServerToExtension,
    ) -> std::result::Result<(), Failure> {
        let object = ClientObject::named(&self.env, client_id)?;
        answered(
            "the extension's registry object",
            object.send(client_id, message),
        )
        .await
    }

    fn store_or_show(&self, effect: Effect) -> Result<()> {
        match effect {
            Effect::Emit(event) => {
                let task_id = self.task_id().unwrap_or_default();
                let envelope = self.store.append_event(&task_id, event, now_ms())?;
                self.last_activity.set(envelope.at);
                self.broadcast(&envelope);
                self.wake_run_waiters();
            }
            Effect::Show(event) => self.broadcast(&self.envelope(event)),
            Effect::SaveMessage(message) => self.store.save_message(&message)?,
            Effect::SaveSummary(summary) => self.store.save_summary(&summary)?,
            Effect::SaveRun(run) => self.store.save_run(run.as_ref())?,
            Effect::SaveAction(record) => self.action_store.save(&record)?,
            Effect::SaveArtifact(record) => self.artifacts.save(&record)?,
            Effect::SaveSnapshot(push) => {
                self.store.save_snapshot(&push.client_id, &push.snapshot)?
            }
            // Named, not printed: formatting an effect would bring every type's Debug into
            // the worker.
            _ => {
                return Err(Error::RustError(
                    "an effect other than storage or sockets was taken for one".into(),
                ))
            }
        }
        Ok(())
    }

    /// Streams one model call, after its backoff, with the page's screenshot when it names one
    /// (one that cannot be read is left out, and the web app told). Deltas reach the web app
    /// as they arrive; what the stream's end asks for (an action, another call, a status
    /// change) is returned for the work queue, in order.
    async fn call_llm(&self, mut call: LlmCall) -> Result<Vec<Effect>> {
        if call.delay_ms > 0 {
            Delay::from(Duration::from_millis(call.delay_ms)).await;
        }
        if !self.task.borrow().is_current_turn(&call.turn_id) {
            // Stopped (or replaced) while waiting: no call to make.
            return Ok(Vec::new());
        }
        if let Some(page_image) = &call.image {
            // Outside the model call's own budget: R2 that does not answer leaves the call
            // without the screenshot, said so, rather than holding it.
            let budget = Duration::from_millis(OBJECT_ANSWER_MS);
            let image = with_deadline(self.read_image(&page_image.artifact_id), budget)
                .await
                .unwrap_or_else(|| {
                    Err(format!(
                        "R2 did not give it within {} s",
                        OBJECT_ANSWER_MS / 1000
                    ))
                });
            match image {
                Ok(image) => call.attach(image),
                Err(why) => {
                    console_warn!(
                        "task {}: no screenshot for the model: {why}",
                        self.task_label()
                    );
                    self.store_or_show(Effect::Emit(LlmCall::image_unavailable(&why)))?;
                }
            }
        }
        let mut rest: Vec<Effect> = Vec::new();
        let mut failure = None;
        let mut on_event = |event: llm::LlmEvent| -> bool {
            let input = Input::Llm {
                turn_id: call.turn_id.clone(),
                event,
            };
            let handled = self
                .task
                .borrow_mut()
                .handle(input, now_ms(), Caller::Direct);
            for effect in handled.unwrap_or_default() {
                match effect {
                    // Sent at once while nothing waits before it, so the order holds.
                    Effect::Emit(FrontendEvent::ChatDelta { .. }) if rest.is_empty() => {
                        if let Err(e) = self.store_or_show(effect) {
                            failure = Some(e);
                            return false;
                        }
                    }
                    other => rest.push(other),
                }
            }
            // Stop (or a newer turn) makes this one no longer current: end the stream.
            self.task.borrow().is_current_turn(&call.turn_id)
        };
        let config = self.task.borrow().config().llm.clone();
        match config {
            Ok(config) => {
                llm_client::stream_completion(&config, &call.messages, &call.tools, &mut on_event)
                    .await
            }
            Err(error) => {
                on_event(llm::LlmEvent::Error(error));
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(rest),
        }
    }

    /// The text of the model's answer to a call beside the conversation (a title, a summary),
    /// offering no tools; `None` when the call failed (nobody is told: it is not a step of the
    /// task).
    async fn ask_model(
        &self,
        messages: &[llm::ChatMessage],
    ) -> (Option<String>, mimo_protocol::TokenUsage) {
        let mut usage = mimo_protocol::TokenUsage::default();
        let Ok(config) = self.task.borrow().config().llm.clone() else {
            return (None, usage);
        };
        let mut text = String::new();
        let mut done = false;
        llm_client::stream_completion(&config, messages, &[], |event| {
            match event {
                llm::LlmEvent::TextDelta(delta) => text.push_str(&delta),
                llm::LlmEvent::Done { .. } => done = true,
                llm::LlmEvent::Error(error) => {
                    console_warn!(
                        "task {}: no answer from the model beside the chat: {error}",
                        self.task_label()
                    )
                }
                // Counted into the request's budget, whether the call is answered or not.
                llm::LlmEvent::Usage {
                    input_tokens,
                    output_tokens,
                } => {
                    usage = mimo_protocol::TokenUsage {
                        input_tokens,
                        output_tokens,
                    }
                }
                llm::LlmEvent::ToolCall(_) => {}
            }
            true
        })
        .await;
        (done.then_some(text), usage)
    }

    /// Artifact `artifact_id` of this task as an image for the model; `Err` says why it cannot
    /// be one. Its size is checked before its bytes are read.
    async fn read_image(&self, artifact_id: &str) -> std::result::Result<llm::Image, String> {
        let record = self
            .task
            .borrow()
            .artifact(artifact_id)
            .cloned()
            .ok_or("it is not an artifact of this task")?;
        read_image(&self.bucket().map_err(|e| e.to_string())?, &record).await
    }

    fn task_label(&self) -> String {
        self.task_id().unwrap_or_default()
    }

    fn bucket(&self) -> Result<Bucket> {
        self.env.bucket(ARTIFACTS)
    }

    /// Sets the alarm to `at` unless it is already due sooner: one alarm serves every purpose.
    async fn wake_at(&self, at: u64) -> Result<()> {
        alarm::wake_at(&self.state.storage(), at).await
    }

    /// Deletes the task, as the task machine decides (`Input::Delete`, carried out by
    /// [`Self::erase`]). `named` is the task id the worker routed by: a task whose records cannot
    /// be read is deleted by it.
    async fn delete(&self, named: Option<String>) -> Result<Response> {
        let unreadable = named.filter(|_| self.broken.borrow().is_some());
        let handled =
            self.task
                .borrow_mut()
                .handle(Input::Delete { unreadable }, now_ms(), Caller::Direct);
        let effects = match handled {
            Ok(effects) => effects,
            Err(refusal) => return error_response(&refusal),
        };
        let mut refusals = Vec::new();
        self.carry_out(effects, Caller::Direct, &mut refusals)
            .await?;
        Response::empty()
    }

    /// Erases task `task_id`: its artifacts in R2 first, every stored row, its alarm; closes
    /// its viewers' sockets; takes it out of the session list.
    async fn erase(&self, task_id: &str) -> Result<()> {
        let prefix = TaskId::parse(task_id)
            .map(|id| task_prefix(&id))
            .map_err(|e| Error::RustError(format!("stored task id: {e}")))?;
        store::delete_prefix(&self.bucket()?, &prefix).await?;
        self.artifacts.clear()?;
        self.action_store.clear()?;
        self.secrets.clear()?;
        self.store.clear()?;
        self.state.storage().delete_alarm().await?;
        *self.broken.borrow_mut() = None;
        for socket in self.state.get_websockets_with_tag(WEB) {
            let _ = socket.close(Some(4404), Some("task deleted"));
        }
        self.index.borrow_mut().forget();
        self.last_activity.set(0);
        let removed = match TaskIndexClient::new(&self.env) {
            Ok(index) => index.delete(task_id).await,
            Err(e) => Err(e.into()),
        };
        if let Err(failure) = removed {
            console_warn!("task {task_id}: not removed from the session list: {failure}");
        }
        Ok(())
    }

    async fn init(&self, task_id: String) -> Result<Response> {
        if let Some(existing) = self.task_id() {
            return Response::from_json(
                &serde_json::json!({ "taskId": existing, "created": false }),
            );
        }
        if let Some(refusal) = self
            .handle(
                Input::Create {
                    task_id: task_id.clone(),
                },
                Caller::Direct,
            )
            .await?
            .into_iter()
            .next()
        {
            return error_response(&refusal);
        }
        Ok(
            Response::from_json(&serde_json::json!({ "taskId": task_id, "created": true }))?
                .with_status(201),
        )
    }

    /// The whole run for keeping or replaying elsewhere: where the task stands, its history
    /// (every event, as a reconnecting web app replays it) and its actions with their outcomes.
    /// `None` for no task.
    fn export_body(&self) -> Result<Option<TaskExport>> {
        let Some(task) = self.task_summary()? else {
            return Ok(None);
        };
        let events = self.store.events_after(&task.task_id, 0)?;
        Ok(Some(TaskExport {
            format: EXPORT_FORMAT,
            exported_at: now_ms(),
            task,
            events,
            actions: self.task.borrow().actions().records().to_vec(),
        }))
    }

    fn export(&self) -> Result<Response> {
        let Some(body) = self.export_body()? else {
            return error_response(&unknown_task());
        };
        let filename = format!("mimo-task-{}.json", body.task.task_id);
        let mut response = Response::from_json(&body)?;
        response.headers_mut().set(
            "content-disposition",
            &format!("attachment; filename=\"{filename}\""),
        )?;
        Ok(response)
    }

    /// A task started by a script (`POST /api/agent/start`): the script (`client_id`, a
    /// polling client) is its extension ([`Start::script`]).
    async fn script_start(&self, start: ScriptStart, client_id: String) -> Result<Response> {
        let start = Start::script(start, client_id);
        self.respond(Input::Start(start), Caller::Direct).await
    }

    /// A task the side panel of `client_id`'s browser starts on the tab the person looks at:
    /// bound to that browser, its first run on `tab_id`. The goal comes on the panel's socket.
    async fn start_here(&self, client_id: String, tab_id: ChromeId) -> Result<Response> {
        let start = Start {
            client_id: Some(client_id),
            on_tab: Some(tab_id),
            ..Start::default()
        };
        self.respond(Input::Start(start), Caller::Direct).await
    }

    /// The task's audit records (seed 002 §7.1), one per step, built from `events`, its history,
    /// with the browser of the extension that ran them (as the registry knows it; none when
    /// the registry cannot say).
    async fn audit_records(&self, events: &[EventEnvelope]) -> Result<Vec<AuditRecord>> {
        let Some(task) = self.task.borrow().record().cloned() else {
            return Ok(Vec::new());
        };
        let browser = match &task.selected_client_id {
            Some(client_id) => RegistryClient::new(&self.env)?
                .list()
                .await
                .ok()
                .and_then(|list| {
                    list.extensions
                        .into_iter()
                        .find(|e| &e.client_id == client_id)
                })
                .map(|e| e.browser),
            None => None,
        };
        Ok(audit::audit_log(
            &task.task_id,
            task.selected_client_id.as_deref(),
            browser.as_ref(),
            events,
        ))
    }

    /// The task's audit log: one JSON line per step.
    async fn audit(&self) -> Result<Response> {
        let Some(task_id) = self.task_id() else {
            return error_response(&unknown_task());
        };
        let records = self
            .audit_records(&self.store.events_after(&task_id, 0)?)
            .await?;
        let mut response = Response::ok(audit::to_jsonl(&records))?;
        let headers = response.headers_mut();
        headers.set("content-type", "application/x-ndjson; charset=utf-8")?;
        headers.set(
            "content-disposition",
            &format!("attachment; filename=\"mimo-audit-{task_id}.jsonl\""),
        )?;
        Ok(response)
    }

    /// The evidence archive (seed 002 §7.2): `README.txt`, the audit log, the whole run as
    /// `task.json`, and the screenshots the log refers to, then `SHA256SUMS` (and `MISSING.txt`
    /// for screenshots no longer stored). Written as the reader takes it: each screenshot is
    /// read from R2 into the zip chunk by chunk when its turn comes, so the archive is never
    /// whole in memory here. Secrets are not in it because the history holds none.
    async fn evidence(&self) -> Result<Response> {
        let Some(export) = self.export_body()? else {
            return error_response(&unknown_task());
        };
        let task_id = export.task.task_id.clone();
        let records = self.audit_records(&export.events).await?;
        let text = |name: &str, bytes: Vec<u8>| Entry {
            name: name.to_owned(),
            body: Body::Bytes(bytes),
        };
        let mut entries = vec![
            text(
                "README.txt",
                audit::readme(&task_id, export.task.title.as_deref(), records.len()).into_bytes(),
            ),
            text("audit.jsonl", audit::to_jsonl(&records).into_bytes()),
            text("task.json", serde_json::to_vec_pretty(&export)?),
        ];
        for artifact_id in audit::screenshots(&records) {
            // Forgotten past its retention, it has no record: named missing in the archive.
            let record = self.task.borrow().artifact(artifact_id).cloned();
            let content_type = record.as_ref().map(|r| r.content_type.as_str());
            if let Some(name) = audit::screenshot_file(&task_id, artifact_id, content_type) {
                entries.push(Entry {
                    name,
                    body: Body::Object(record.map(|r| r.key)),
                });
            }
        }
        let bucket = self.bucket()?;
        let open = move |key: Option<String>| {
            let bucket = bucket.clone();
            async move {
                let Some(key) = key else {
                    return Ok(None);
                };
                match bucket.get(key).execute().await? {
                    Some(object) => object.body().map(|body| body.stream()).transpose(),
                    None => Ok(None),
                }
            }
        };
        let zip = archive::zip_stream(entries, export.exported_at, open)
            .map(|chunk| chunk.map_err(|e| Error::RustError(e.to_string())));
        let mut response = Response::from_stream(zip)?;
        let headers = response.headers_mut();
        headers.set("content-type", "application/zip")?;
        headers.set(
            "content-disposition",
            &format!("attachment; filename=\"mimo-task-{task_id}.zip\""),
        )?;
        Ok(response)
    }

    fn task_summary(&self) -> Result<Option<TaskSummary>> {
        let Some(task) = self.task.borrow().record().cloned() else {
            return Ok(None);
        };
        Ok(Some(TaskSummary {
            task_id: task.task_id,
            status: task.status,
            title: task.title,
            selected_client_id: task.selected_client_id,
            created_at: task.created_at,
            updated_at: task.updated_at,
            last_seq: self.store.last_seq()?,
            instance_started_at: self.started_at,
        }))
    }

    /// Accepts a web socket, replays the history it missed, then the current state. Everything
    /// up to `ready` happens synchronously, so no live event can slip between replayed ones.
    /// `side_panel`: the extension whose side panel opened it (the worker checked that the
    /// task is bound to it); otherwise the web app opened it under the deployment token.
    async fn connect_web(&self, last_seq: u64, side_panel: Option<String>) -> Result<Response> {
        let Some(task_id) = self.task_id() else {
            return error_response(&unknown_task());
        };
        let pair = WebSocketPair::new()?;
        let server = pair.server;
        let opened_by = match &side_panel {
            Some(client_id) => format!("{SIDE_PANEL_TAG}{client_id}"),
            None => self.token_tag.clone(),
        };
        self.state
            .accept_websocket_with_tags(&server, &[WEB, &opened_by]);
        for envelope in self.store.events_after(&task_id, last_seq)? {
            server.send(&envelope)?;
        }
        if let Some((client_id, snapshot)) = self.store.load_snapshot()? {
            server.send(&self.envelope(FrontendEvent::SnapshotSync {
                client_id,
                snapshot,
            }))?;
        }
        server.send(&self.envelope(FrontendEvent::Ready {
            last_seq: self.store.last_seq()?,
        }))?;
        for refusal in self.handle(Input::WebConnected, Caller::Direct).await? {
            server.send(&self.envelope(FrontendEvent::Error { error: refusal }))?;
        }
        Response::from_websocket(pair.client)
    }

    /// An envelope for an event that is not history (no sequence number).
    fn envelope(&self, event: FrontendEvent) -> EventEnvelope {
        EventEnvelope {
            seq: None,
            task_id: self.task_id().unwrap_or_default(),
            at: now_ms(),
            event,
        }
    }

    fn broadcast(&self, envelope: &EventEnvelope) {
        let Ok(text) = serde_json::to_string(envelope) else {
            return;
        };
        for socket in self.state.get_websockets_with_tag(WEB) {
            // A socket that is closing fails to send; the others must still get the event.
            if self.viewer(&socket).is_some() {
                let _ = socket.send_with_str(&text);
            }
        }
    }

    /// Who opened a socket of the task's viewers, while they still may: the web app under
    /// today's deployment token, or the side panel of the extension the task is bound to. A
    /// socket that may no longer is closed here: one opened under a token since rotated (the
    /// web app asks for the new one), or a side panel's once the task went to another browser.
    fn viewer(&self, socket: &WebSocket) -> Option<Viewer> {
        let tags = self.state.get_tags(socket);
        if tags.contains(&self.token_tag) {
            return Some(Viewer::WebApp);
        }
        let bound = self
            .task
            .borrow()
            .record()
            .and_then(|t| t.selected_client_id.clone());
        let side_panel = tags
            .iter()
            .filter_map(|tag| tag.strip_prefix(SIDE_PANEL_TAG))
            .any(|client_id| bound.as_deref() == Some(client_id));
        if side_panel {
            return Some(Viewer::SidePanel);
        }
        let (code, reason) = if tags.iter().any(|tag| tag.starts_with(SIDE_PANEL_TAG)) {
            (UNBOUND, "the task is no longer bound to this browser")
        } else {
            (
                CREDENTIAL_ENDED,
                "the deployment token changed; sign in with the new one",
            )
        };
        let _ = socket.close(Some(code), Some(reason));
        None
    }

    fn send_error(&self, ws: &WebSocket, error: ErrorObject) -> Result<()> {
        ws.send(&self.envelope(FrontendEvent::Error { error }))
    }
}
