//! `TaskCoordinator`: one Durable Object per task.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::Duration;

use mimo_agent::conversation::{Conversation, Effect};
use mimo_agent::llm;
use mimo_protocol::frontend::TaskSummary;
use mimo_protocol::{
    limits::MAX_WEB_FRAME_BYTES, BrowserSnapshot, ErrorCode, ErrorObject, EventEnvelope,
    FrontendEvent, FrontendMessage,
};
use serde::{Deserialize, Serialize};
use worker::*;

use crate::action_store::ActionStore;
use crate::artifacts::{ArtifactGrant, ArtifactStore, ArtifactStored};
use crate::http::{error_response, json_request, now_ms, read_json};
use crate::socket::{finish_close, parse_message};
use crate::task_actions::{ActionEvent, SubmitAction};
use crate::task_store::TaskStore;
use crate::{llm_client, ARTIFACTS, EXTENSION_REGISTRY, REGISTRY_NAME};
use futures_channel::oneshot;
use mimo_agent::actions::{ActionEffect, ActionQueue, ActionRecord, Timeouts};
use mimo_agent::prompt::Budget;
use mimo_agent::run::RunConfig;
use mimo_protocol::{TaskControl, TaskStatus};
use mimo_r2_artifacts::{retention, store, task_prefix, TaskId};
use std::collections::HashMap;

/// An effect for the work loop: the conversation's or the scheduler's.
pub(crate) enum Work {
    Conversation(Effect),
    Action(ActionEffect),
}

pub(crate) fn wrap<T>(effects: Vec<T>, as_work: fn(T) -> Work) -> Vec<Work> {
    effects.into_iter().map(as_work).collect()
}

/// Where the work loop makes LLM calls.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Llm {
    /// Here, streaming.
    Inline,
    /// In the alarm, soon: the caller is another object (the registry relaying an extension's
    /// frame) that must get its answer as soon as the event is recorded, not after a model
    /// turn. Should this object be evicted first, `recover` finds the turn cut off and runs it.
    Defer,
}

/// How soon the alarm runs `recover` after an effect failed.
const RECOVERY_DELAY_MS: u64 = 1_000;

/// Tag of the web app's sockets.
const WEB: &str = "web";

#[durable_object]
pub struct TaskCoordinator {
    state: State,
    pub(crate) env: Env,
    store: TaskStore,
    artifacts: ArtifactStore,
    pub(crate) action_store: ActionStore,
    pub(crate) actions: RefCell<ActionQueue>,
    /// Requests of the developer API waiting for their action to end, by action id.
    pub(crate) waiters: RefCell<HashMap<String, oneshot::Sender<ActionRecord>>>,
    /// LLM calls a relayed event left for the alarm ([`Llm::Defer`]).
    parked: RefCell<Vec<Effect>>,
    /// `None` until the task is created by `/init`, and again once it is deleted.
    conversation: RefCell<Option<Conversation>>,
    /// Why the stored task could not be loaded: every route but `/delete` answers with it.
    broken: RefCell<Option<ErrorObject>>,
    started_at: u64,
}

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

/// Body of the registry's `/bind` request.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BindRequest {
    pub task_id: String,
    /// An explicit choice; `None` asks for automatic selection.
    pub client_id: Option<String>,
}

/// The registry's answer to `/bind`.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    pub client_id: String,
    pub snapshot: Option<BrowserSnapshot>,
}

/// Body of `/snapshot`, pushed by the registry when the task's extension reports a change.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotPush {
    pub client_id: String,
    pub snapshot: BrowserSnapshot,
}

/// The task as stored: its action queue and its conversation (none before `/init`).
fn load(
    store: &TaskStore,
    action_store: &ActionStore,
    env: &Env,
) -> Result<(ActionQueue, Option<Conversation>)> {
    let mut actions = ActionQueue::restore(action_store.load()?, timeouts(env));
    let conversation = match store.load_task()? {
        Some(task) => Some(
            Conversation::restore(task, store.load_messages()?, store.load_run()?)
                .with_config(run_config(env)),
        ),
        None => None,
    };
    if conversation
        .as_ref()
        .is_some_and(|c| c.task().status == TaskStatus::Takeover)
    {
        // A takeover outlives restarts: pausing returns no effects.
        actions.set_paused(true, now_ms());
    }
    Ok((actions, conversation))
}

impl DurableObject for TaskCoordinator {
    fn new(state: State, env: Env) -> Self {
        let store = TaskStore::open(state.storage().sql()).expect("task schema");
        let artifacts = ArtifactStore::open(state.storage().sql()).expect("artifact schema");
        let action_store = ActionStore::open(state.storage().sql()).expect("action schema");
        let (actions, conversation, broken) = match load(&store, &action_store, &env) {
            Ok((actions, conversation)) => (actions, conversation, None),
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
                (ActionQueue::new(timeouts(&env)), None, Some(error))
            }
        };
        Self {
            state,
            env,
            store,
            artifacts,
            action_store,
            actions: RefCell::new(actions),
            waiters: RefCell::new(HashMap::new()),
            parked: RefCell::new(Vec::new()),
            conversation: RefCell::new(conversation),
            broken: RefCell::new(broken),
            started_at: now_ms(),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let url = req.url()?;
        let broken = self.broken.borrow().clone();
        if let Some(error) = broken {
            if url.path() != "/delete" {
                return error_response(&error);
            }
        }
        let query = |name: &str| {
            url.query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        match (req.method(), url.path()) {
            (Method::Post, "/init") => {
                let task_id = query("taskId").unwrap_or_default();
                self.init(task_id)
            }
            (Method::Get, "/ws/web") => {
                let last_seq = query("lastSeq").and_then(|s| s.parse().ok()).unwrap_or(0);
                self.connect_web(last_seq).await
            }
            (Method::Get, "/summary") => self.summary(),
            (Method::Get, "/export") => self.export(),
            (Method::Post, "/actions") => {
                let mut req = req;
                let body = req.text().await?;
                match serde_json::from_str::<SubmitAction>(&body) {
                    Ok(submit) => self.submit_action(submit).await,
                    Err(e) => error_response(&ErrorObject::new(
                        ErrorCode::SchemaValidationFailed,
                        format!("the action does not match the protocol: {e}"),
                    )),
                }
            }
            (Method::Get, "/actions") if self.exists() => self.list_actions(),
            (Method::Post, "/control") => {
                let mut req = req;
                let control: TaskControl = match req.json().await {
                    Ok(control) => control,
                    Err(e) => {
                        return error_response(&ErrorObject::new(
                            ErrorCode::SchemaValidationFailed,
                            format!("not a task control: {e}"),
                        ))
                    }
                };
                if !self.exists() {
                    return error_response(&unknown_task());
                }
                self.control(control, Llm::Defer).await?;
                Response::empty()
            }
            (Method::Post, "/action-event") => {
                let mut req = req;
                let event: ActionEvent = match req.json().await {
                    Ok(event) => event,
                    Err(e) => {
                        return error_response(&ErrorObject::new(
                            ErrorCode::SchemaValidationFailed,
                            format!("not an action event: {e}"),
                        ))
                    }
                };
                if !self.exists() {
                    return error_response(&unknown_task());
                }
                self.action_event(event).await?;
                Response::empty()
            }
            (Method::Post, "/delete") => self.delete(query("taskId")).await,
            (Method::Post, "/artifacts/granted") => {
                let mut req = req;
                let grant: ArtifactGrant = req.json().await?;
                if !self.exists() {
                    return error_response(&unknown_task());
                }
                self.artifacts.grant(&grant, now_ms())?;
                Ok(Response::empty()?.with_status(201))
            }
            (Method::Post, "/artifacts/stored") => {
                let mut req = req;
                let stored: ArtifactStored = req.json().await?;
                if !self.exists() || !self.artifacts.stored(&stored, now_ms())? {
                    return error_response(&ErrorObject::new(
                        ErrorCode::NotFound,
                        "no such artifact in this task",
                    ));
                }
                self.schedule_retention().await?;
                Response::empty()
            }
            (Method::Get, "/artifacts/get") => {
                let record = match query("artifactId") {
                    Some(id) if self.exists() => self.artifacts.get(&id)?,
                    _ => None,
                };
                match record {
                    Some(record) => Response::from_json(&record),
                    None => {
                        error_response(&ErrorObject::new(ErrorCode::NotFound, "no such artifact"))
                    }
                }
            }
            (Method::Post, "/snapshot") => {
                let mut req = req;
                let push: SnapshotPush = req.json().await?;
                self.snapshot_changed(push)?;
                Response::empty()
            }
            _ => error_response(&ErrorObject::new(ErrorCode::NotFound, "no such task route")),
        }
    }

    async fn websocket_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        let parsed = parse_message::<FrontendMessage>(message, MAX_WEB_FRAME_BYTES);
        let message = match parsed {
            Ok(message) => message,
            Err(error) => return self.send_error(&ws, error),
        };
        let mut work = self.recover();
        let now = now_ms();
        match message {
            FrontendMessage::UserMessage {
                content,
                client_message_id,
            } => {
                let result =
                    self.with_conversation(|c| c.user_message(content, client_message_id, now))?;
                match result {
                    Ok(effects) => work.extend(effects),
                    Err(error) => return self.send_error(&ws, error),
                }
            }
            FrontendMessage::Stop {} => self.control(TaskControl::Stop, Llm::Inline).await?,
            FrontendMessage::Resume {} => self.control(TaskControl::Resume, Llm::Inline).await?,
            FrontendMessage::Confirm { step, approve } => {
                match self.with_conversation(|c| c.confirm(step, approve, now))? {
                    Ok(effects) => work.extend(effects),
                    Err(error) => return self.send_error(&ws, error),
                }
            }
            FrontendMessage::SelectClient { client_id } => {
                if let Err(error) = self.bind_client(Some(client_id)).await? {
                    return self.send_error(&ws, error);
                }
            }
        }
        self.run(work).await
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

    /// Runs what is due: a turn cut off by a restart, and the artifact retention sweep.
    async fn alarm(&self) -> Result<Response> {
        // This alarm is being handled: clear it, so that what the work below schedules is set
        // anew instead of being mistaken for already pending.
        self.state.storage().delete_alarm().await?;
        self.run_parked().await?;
        let work = self.recover();
        self.run(work).await?;
        self.tick_actions().await?;
        self.sweep_artifacts().await?;
        Response::empty()
    }
}

/// A positive whole number from the environment, if set. A value that is not one is ignored
/// with a warning naming it (the default applies), never silently.
fn env_number(env: &Env, name: &str) -> Option<u64> {
    let raw = env.var(name).ok()?.to_string();
    match raw.trim().parse::<u64>() {
        Ok(n) if n > 0 => Some(n),
        _ => {
            console_warn!("{name}={raw:?} is not a positive whole number; the default applies");
            None
        }
    }
}

/// Action timeouts, from `MIMO_ACTION_ACK_TIMEOUT_MS`, `MIMO_ACTION_EXEC_TIMEOUT_MS`, (for
/// page loads and uploads) `MIMO_ACTION_SLOW_EXEC_TIMEOUT_MS` and (how long an undelivered
/// action waits for its extension) `MIMO_ACTION_OFFLINE_GRACE_MS` where set.
fn timeouts(env: &Env) -> Timeouts {
    let defaults = Timeouts::default();
    Timeouts {
        ack_ms: env_number(env, "MIMO_ACTION_ACK_TIMEOUT_MS").unwrap_or(defaults.ack_ms),
        exec_ms: env_number(env, "MIMO_ACTION_EXEC_TIMEOUT_MS").unwrap_or(defaults.exec_ms),
        slow_exec_ms: env_number(env, "MIMO_ACTION_SLOW_EXEC_TIMEOUT_MS")
            .unwrap_or(defaults.slow_exec_ms),
        offline_grace_ms: env_number(env, "MIMO_ACTION_OFFLINE_GRACE_MS")
            .unwrap_or(defaults.offline_grace_ms),
        ..defaults
    }
}

/// The agent's limits, from `MIMO_AGENT_MAX_STEPS`, `MIMO_AGENT_CONTEXT_TOKENS`,
/// `MIMO_AGENT_TEXT_LIMIT` and `MIMO_AGENT_CONFIRM_RISKY` where set.
fn run_config(env: &Env) -> RunConfig {
    let number = |name: &str| env_number(env, name).map(|n| n as usize);
    let defaults = RunConfig::default();
    RunConfig {
        max_steps: number("MIMO_AGENT_MAX_STEPS").map_or(defaults.max_steps, |n| n as u32),
        budget: Budget {
            context_tokens: number("MIMO_AGENT_CONTEXT_TOKENS")
                .unwrap_or(defaults.budget.context_tokens),
            text_limit: number("MIMO_AGENT_TEXT_LIMIT").unwrap_or(defaults.budget.text_limit),
        },
        confirm_risky: env
            .var("MIMO_AGENT_CONFIRM_RISKY")
            .map(|v| !matches!(v.to_string().trim(), "false" | "off" | "0"))
            .unwrap_or(defaults.confirm_risky),
    }
}

fn unknown_task() -> ErrorObject {
    ErrorObject::new(ErrorCode::NotFound, "unknown task")
}

impl TaskCoordinator {
    /// The task's id and its extension, if the task exists.
    pub(crate) fn task_and_client(&self) -> Option<(String, Option<String>)> {
        self.conversation.borrow().as_ref().map(|c| {
            (
                c.task().task_id.clone(),
                c.task().selected_client_id.clone(),
            )
        })
    }

    fn exists(&self) -> bool {
        self.conversation.borrow().is_some()
    }

    fn bucket(&self) -> Result<Bucket> {
        self.env.bucket(ARTIFACTS)
    }

    fn retention_ms(&self) -> u64 {
        let configured = self
            .env
            .var("MIMO_ARTIFACT_RETENTION_DAYS")
            .ok()
            .map(|v| v.to_string());
        retention::retention_ms(configured.as_deref())
    }

    /// Sets the alarm to `at` unless it is already due sooner: one alarm serves every purpose.
    pub(crate) async fn wake_at(&self, at: u64) -> Result<()> {
        let storage = self.state.storage();
        match storage.get_alarm().await? {
            Some(current) if (current.max(0) as u64) <= at => Ok(()),
            // `set_alarm` takes an offset from now.
            _ => {
                let offset = Duration::from_millis(at.saturating_sub(now_ms()));
                storage.set_alarm(offset).await
            }
        }
    }

    async fn schedule_retention(&self) -> Result<()> {
        let stored: Vec<u64> = self
            .artifacts
            .stored_artifacts()?
            .into_iter()
            .map(|(_, _, at)| at)
            .collect();
        match retention::sweep(&stored, self.retention_ms(), now_ms()).1 {
            Some(next) => self.wake_at(next).await,
            None => Ok(()),
        }
    }

    /// Deletes the artifacts past their retention, from R2 first (a crash in between leaves a
    /// record whose object is gone, which the next sweep removes; never an unlisted object).
    async fn sweep_artifacts(&self) -> Result<()> {
        let stored = self.artifacts.stored_artifacts()?;
        let times: Vec<u64> = stored.iter().map(|(_, _, at)| *at).collect();
        let (expired, next) = retention::sweep(&times, self.retention_ms(), now_ms());
        if !expired.is_empty() {
            let keys: Vec<String> = expired.iter().map(|&i| stored[i].1.clone()).collect();
            self.bucket()?.delete_multiple(keys).await?;
            let ids: Vec<String> = expired.iter().map(|&i| stored[i].0.clone()).collect();
            self.artifacts.forget(&ids)?;
        }
        if let Some(next) = next {
            self.wake_at(next).await?;
        }
        Ok(())
    }

    /// Deletes the task: its artifacts in R2, every stored row, and its sockets.
    /// `named` is the task id the worker routed by: a task whose records cannot be read is
    /// deleted by it.
    async fn delete(&self, named: Option<String>) -> Result<Response> {
        let stored = self.task_and_client().map(|(task_id, _)| task_id);
        let readable = self.broken.borrow().is_none();
        let Some(task_id) = stored.or(named.filter(|_| !readable)) else {
            return error_response(&unknown_task());
        };
        let prefix = TaskId::parse(&task_id)
            .map(|id| task_prefix(&id))
            .map_err(|e| Error::RustError(format!("stored task id: {e}")))?;
        store::delete_prefix(&self.bucket()?, &prefix).await?;
        self.artifacts.clear()?;
        self.action_store.clear()?;
        *self.actions.borrow_mut() = ActionQueue::new(timeouts(&self.env));
        self.store.clear()?;
        self.state.storage().delete_alarm().await?;
        *self.conversation.borrow_mut() = None;
        *self.broken.borrow_mut() = None;
        for socket in self.state.get_websockets_with_tag(WEB) {
            let _ = socket.close(Some(4404), Some("task deleted"));
        }
        Response::empty()
    }

    fn init(&self, task_id: String) -> Result<Response> {
        if task_id.is_empty() {
            return error_response(&ErrorObject::new(
                ErrorCode::SchemaValidationFailed,
                "taskId is required",
            ));
        }
        let mut conversation = self.conversation.borrow_mut();
        if let Some(existing) = conversation.as_ref() {
            return Response::from_json(
                &serde_json::json!({ "taskId": existing.task().task_id, "created": false }),
            );
        }
        let created =
            Conversation::new(task_id.clone(), now_ms()).with_config(run_config(&self.env));
        self.store.save_task(created.task())?;
        let first_event = created.status_event();
        *conversation = Some(created);
        drop(conversation);
        // The log starts with the task's status, so every client learns it from the history.
        self.apply(first_event)?;
        Ok(
            Response::from_json(&serde_json::json!({ "taskId": task_id, "created": true }))?
                .with_status(201),
        )
    }

    fn summary(&self) -> Result<Response> {
        match self.task_summary()? {
            Some(summary) => Response::from_json(&summary),
            None => error_response(&unknown_task()),
        }
    }

    /// The whole run for keeping or replaying elsewhere: where the task stands, its history
    /// (every event, as a reconnecting web app replays it) and its actions with their outcomes.
    fn export(&self) -> Result<Response> {
        let Some(task) = self.task_summary()? else {
            return error_response(&unknown_task());
        };
        let events = self.store.events_after(&task.task_id, 0)?;
        let filename = format!("mimo-task-{}.json", task.task_id);
        let body = TaskExport {
            format: EXPORT_FORMAT,
            exported_at: now_ms(),
            task,
            events,
            actions: self.actions.borrow().records().to_vec(),
        };
        let mut response = Response::from_json(&body)?;
        response.headers_mut().set(
            "content-disposition",
            &format!("attachment; filename=\"{filename}\""),
        )?;
        Ok(response)
    }

    fn task_summary(&self) -> Result<Option<TaskSummary>> {
        let conversation = self.conversation.borrow();
        let Some(task) = conversation.as_ref().map(|c| c.task()) else {
            return Ok(None);
        };
        Ok(Some(TaskSummary {
            task_id: task.task_id.clone(),
            status: task.status,
            title: task.title.clone(),
            selected_client_id: task.selected_client_id.clone(),
            created_at: task.created_at,
            updated_at: task.updated_at,
            last_seq: self.store.last_seq()?,
            instance_started_at: self.started_at,
        }))
    }

    /// Accepts a web socket, replays the history it missed, then the current state. Everything
    /// up to `ready` happens synchronously, so no live event can slip between replayed ones.
    async fn connect_web(&self, last_seq: u64) -> Result<Response> {
        let Some((task_id, needs_recovery, has_client)) =
            self.conversation.borrow().as_ref().map(|c| {
                (
                    c.task().task_id.clone(),
                    c.needs_recovery(),
                    c.task().selected_client_id.is_some(),
                )
            })
        else {
            return error_response(&ErrorObject::new(ErrorCode::NotFound, "unknown task"));
        };
        let pair = WebSocketPair::new()?;
        let server = pair.server;
        self.state.accept_websocket_with_tags(&server, &[WEB]);
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
        if needs_recovery {
            // A turn was cut off by a restart. Run it again from the alarm, which may take as
            // long as the model needs; this request must answer the upgrade now.
            self.wake_at(now_ms()).await?;
        }
        if !has_client {
            if let Err(error) = self.bind_client(None).await? {
                server.send(&self.envelope(FrontendEvent::Error { error }))?;
            }
        }
        Response::from_websocket(pair.client)
    }

    /// Binds the task to an extension through the registry (automatic selection when
    /// `client_id` is `None`), then shows the binding and the extension's browser.
    pub(crate) async fn bind_client(
        &self,
        client_id: Option<String>,
    ) -> Result<std::result::Result<(), ErrorObject>> {
        match self.bind(client_id).await? {
            Ok(effects) => {
                self.run(effects).await?;
                Ok(Ok(()))
            }
            Err(error) => Ok(Err(error)),
        }
    }

    /// Asks the registry for a binding and shows the extension's browser; returns the
    /// conversation's effects of the new selection, for the caller to carry out.
    async fn bind(
        &self,
        client_id: Option<String>,
    ) -> Result<std::result::Result<Vec<Effect>, ErrorObject>> {
        let Some((task_id, _)) = self.task_and_client() else {
            return Ok(Err(unknown_task()));
        };
        let registry = self
            .env
            .durable_object(EXTENSION_REGISTRY)?
            .get_by_name(REGISTRY_NAME)?;
        let request = json_request(
            Method::Post,
            "/bind",
            Some(&BindRequest { task_id, client_id }),
        )?;
        let binding: Binding = match read_json(registry.fetch_with_request(request).await?).await? {
            Ok(binding) => binding,
            Err(error) => return Ok(Err(error)),
        };
        let effects =
            self.with_conversation(|c| c.select_client(binding.client_id.clone(), now_ms()))?;
        if let Some(snapshot) = binding.snapshot {
            self.snapshot_changed(SnapshotPush {
                client_id: binding.client_id,
                snapshot,
            })?;
        }
        Ok(Ok(effects))
    }

    fn snapshot_changed(&self, push: SnapshotPush) -> Result<()> {
        let selected = self
            .conversation
            .borrow()
            .as_ref()
            .and_then(|c| c.task().selected_client_id.clone());
        if selected.as_deref() != Some(push.client_id.as_str()) {
            // A push for an extension this task no longer uses: stale, ignore it.
            return Ok(());
        }
        self.store.save_snapshot(&push.client_id, &push.snapshot)?;
        self.broadcast(&self.envelope(FrontendEvent::SnapshotSync {
            client_id: push.client_id,
            snapshot: push.snapshot,
        }));
        Ok(())
    }

    /// Effects that pick up what a restart cut off: a model turn is re-run, a browser run
    /// continues from the stored action queue (nothing when there is nothing to pick up).
    fn recover(&self) -> Vec<Effect> {
        let now = now_ms();
        let actions = self.actions.borrow();
        self.conversation
            .borrow_mut()
            .as_mut()
            .map(|c| {
                let mut effects = c.recover(now);
                effects.extend(c.resume_run(|id| actions.get(id).cloned(), now));
                effects
            })
            .unwrap_or_default()
    }

    pub(crate) fn with_conversation<T>(&self, f: impl FnOnce(&mut Conversation) -> T) -> Result<T> {
        let mut conversation = self.conversation.borrow_mut();
        let conversation = conversation
            .as_mut()
            .ok_or_else(|| Error::RustError("task not initialized".into()))?;
        Ok(f(conversation))
    }

    /// Carries out the conversation's effects in order (see [`TaskCoordinator::work`]).
    pub(crate) async fn run(&self, effects: Vec<Effect>) -> Result<()> {
        self.work(wrap(effects, Work::Conversation), false, Llm::Inline)
            .await
    }

    /// Carries out the scheduler's effects in order (see [`TaskCoordinator::work`]); the alarm
    /// is set for its next deadline even when there are none (a tick that found nothing due).
    pub(crate) async fn run_action_effects(&self, effects: Vec<ActionEffect>) -> Result<()> {
        self.work(wrap(effects, Work::Action), true, Llm::Inline)
            .await
    }

    /// The one loop that carries out effects, the conversation's and the scheduler's, in order.
    /// Each may produce more (an ended action moves the run on, a model turn asks for an
    /// action), which join the queue. LLM calls stream here, their deltas sent as they arrive
    /// — or, with [`Llm::Defer`], are left to the alarm. At the end the alarm is set for the
    /// scheduler's next deadline.
    ///
    /// One effect that fails does not drop the ones queued after it: the failure is logged,
    /// the rest is carried out, the alarm is set, and an early alarm lets `recover` pick up
    /// what the failed effect left undone. The first failure is returned.
    pub(crate) async fn work(
        &self,
        work: Vec<Work>,
        mut touched_actions: bool,
        llm: Llm,
    ) -> Result<()> {
        let mut queue: VecDeque<Work> = work.into();
        let mut failure: Option<Error> = None;
        loop {
            while let Some(item) = queue.pop_front() {
                let more = match item {
                    Work::Conversation(effect @ Effect::CallLlm { .. }) if llm == Llm::Defer => {
                        self.parked.borrow_mut().push(effect);
                        self.wake_at(now_ms()).await.map(|()| Vec::new())
                    }
                    Work::Conversation(effect) => self.carry_out(effect).await,
                    Work::Action(effect) => {
                        touched_actions = true;
                        self.carry_out_action(effect).await
                    }
                };
                match more {
                    Ok(more) => queue.extend(more),
                    Err(e) => {
                        console_error!("task {}: an effect failed: {e}", self.task_label());
                        failure.get_or_insert(e);
                    }
                }
            }
            if !touched_actions {
                break;
            }
            touched_actions = false;
            let next = self.actions.borrow().next_deadline();
            if let Some(at) = next {
                if let Err(e) = self.wake_at(at).await {
                    failure.get_or_insert(e);
                }
            }
            if self.actions.borrow().is_idle() {
                let idle = self.with_conversation(|c| c.actions_idle(now_ms()))?;
                queue.extend(wrap(idle, Work::Conversation));
            }
            if queue.is_empty() {
                break;
            }
        }
        match failure {
            None => Ok(()),
            Some(e) => {
                // Whatever the failed effect left undone, the alarm's `recover` picks up.
                self.wake_at(now_ms() + RECOVERY_DELAY_MS).await?;
                Err(e)
            }
        }
    }

    /// LLM calls left by a relayed event for the alarm (see [`Llm::Defer`]).
    async fn run_parked(&self) -> Result<()> {
        let parked = std::mem::take(&mut *self.parked.borrow_mut());
        self.work(wrap(parked, Work::Conversation), false, Llm::Inline)
            .await
    }

    fn task_label(&self) -> String {
        self.task_and_client()
            .map(|(task_id, _)| task_id)
            .unwrap_or_default()
    }

    async fn carry_out(&self, effect: Effect) -> Result<Vec<Work>> {
        match effect {
            Effect::CallLlm {
                turn_id,
                messages,
                tools,
                delay_ms,
            } => {
                if delay_ms > 0 {
                    Delay::from(Duration::from_millis(delay_ms)).await;
                }
                // Stopped (or replaced) while waiting: no call to make.
                let current = self
                    .conversation
                    .borrow()
                    .as_ref()
                    .is_some_and(|c| c.is_current_turn(&turn_id));
                if !current {
                    return Ok(Vec::new());
                }
                let followups = self.stream_turn(&turn_id, &messages, &tools).await?;
                Ok(followups.into_iter().map(Work::Conversation).collect())
            }
            Effect::BindClient => {
                let (effects, bound) = match self.bind(None).await? {
                    Ok(effects) => (effects, Ok(())),
                    Err(error) => (Vec::new(), Err(error)),
                };
                let mut work: Vec<Work> = effects.into_iter().map(Work::Conversation).collect();
                let next = self.with_conversation(|c| c.client_bound(bound, now_ms()))?;
                work.extend(next.into_iter().map(Work::Conversation));
                Ok(work)
            }
            Effect::SubmitAction { action_id, command } => {
                let Some((task_id, client_id)) = self.task_and_client() else {
                    return Ok(Vec::new());
                };
                // Without a bound extension the dispatch fails as PLUGIN_OFFLINE, through the
                // scheduler's usual path.
                let effects = self.actions.borrow_mut().submit(
                    action_id,
                    task_id,
                    client_id.unwrap_or_default(),
                    None,
                    command,
                    now_ms(),
                );
                Ok(effects.into_iter().map(Work::Action).collect())
            }
            Effect::Emit(FrontendEvent::TaskStatus {
                status,
                title,
                selected_client_id,
            }) => {
                let client = selected_client_id.clone();
                self.apply(Effect::Emit(FrontendEvent::TaskStatus {
                    status,
                    title,
                    selected_client_id,
                }))?;
                // The extension's overlay follows the task's status.
                if let Some(client_id) = client {
                    self.tell_extension(&client_id, status).await;
                }
                Ok(Vec::new())
            }
            other => {
                self.apply(other)?;
                Ok(Vec::new())
            }
        }
    }

    async fn carry_out_action(&self, effect: ActionEffect) -> Result<Vec<Work>> {
        match effect {
            ActionEffect::Save(record) => {
                self.action_store.save(&record)?;
                Ok(Vec::new())
            }
            ActionEffect::Query(action) => {
                self.query_attempt(action).await;
                Ok(Vec::new())
            }
            ActionEffect::Dispatch(action) => match self.dispatch(action.clone()).await {
                Ok(()) => Ok(Vec::new()),
                Err(error) => {
                    let more = self.actions.borrow_mut().dispatch_failed(
                        &action.action_id,
                        error,
                        now_ms(),
                    );
                    Ok(more.into_iter().map(Work::Action).collect())
                }
            },
            ActionEffect::Finished(record) => {
                self.notify(record.clone());
                let next = self.with_conversation(|c| c.action_finished(&record, now_ms()))?;
                Ok(next.into_iter().map(Work::Conversation).collect())
            }
        }
    }

    /// Streams one LLM turn. Deltas reach the web app as they arrive; what the turn's end asks
    /// for (an action, another call, a status change) is returned for the work loop.
    async fn stream_turn(
        &self,
        turn_id: &str,
        messages: &[llm::ChatMessage],
        tools: &[llm::ToolSpec],
    ) -> Result<Vec<Effect>> {
        let mut followups = Vec::new();
        let mut failure = None;
        let mut handle = |event: llm::LlmEvent| -> bool {
            let effects = match self.with_conversation(|c| c.llm_event(turn_id, event, now_ms())) {
                Ok(effects) => effects,
                Err(e) => {
                    failure = Some(e);
                    return false;
                }
            };
            for effect in effects {
                match effect {
                    Effect::Emit(FrontendEvent::ChatDelta { .. }) if followups.is_empty() => {
                        if let Err(e) = self.apply(effect) {
                            failure = Some(e);
                            return false;
                        }
                    }
                    other => followups.push(other),
                }
            }
            // Stop (or a newer turn) makes this one no longer current: end the stream.
            self.conversation
                .borrow()
                .as_ref()
                .is_some_and(|c| c.is_current_turn(turn_id))
        };
        let config = llm_client::config_from_env(&self.env);
        if let Ok(config) = &config {
            // Should the runtime restart during the call, this alarm finds the turn cut off
            // and runs it again (`recover`).
            self.wake_at(now_ms() + config.timeout_ms + 5_000).await?;
        }
        match config {
            Ok(config) => {
                llm_client::stream_completion(&config, messages, tools, &mut handle).await
            }
            Err(error) => {
                handle(llm::LlmEvent::Error(error));
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(followups),
        }
    }

    fn apply(&self, effect: Effect) -> Result<()> {
        match effect {
            Effect::Emit(event) => {
                let task_id = self.with_conversation(|c| c.task().task_id.clone())?;
                let envelope = self.store.append_event(&task_id, event, now_ms())?;
                self.broadcast(&envelope);
            }
            Effect::SaveTask => self.with_conversation(|c| self.store.save_task(c.task()))??,
            Effect::SaveMessage(message) => self.store.save_message(&message)?,
            Effect::SaveRun => self.with_conversation(|c| self.store.save_run(c.run()))??,
            Effect::CallLlm { .. } | Effect::BindClient | Effect::SubmitAction { .. } => {
                unreachable!("carried out by `carry_out`")
            }
        }
        Ok(())
    }

    /// An envelope for an event that is not history (no sequence number).
    fn envelope(&self, event: FrontendEvent) -> EventEnvelope {
        let task_id = self
            .conversation
            .borrow()
            .as_ref()
            .map(|c| c.task().task_id.clone())
            .unwrap_or_default();
        EventEnvelope {
            seq: None,
            task_id,
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
            let _ = socket.send_with_str(&text);
        }
    }

    fn send_error(&self, ws: &WebSocket, error: ErrorObject) -> Result<()> {
        ws.send(&self.envelope(FrontendEvent::Error { error }))
    }
}
