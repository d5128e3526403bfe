//! The coordinator's browser actions: the developer API that submits one and waits for it, the
//! acks and results relayed by the registry, and the scheduler's effects carried out. The
//! rules (one in flight, timeouts, retry once, duplicates) are `mimo_agent::actions`.

use std::time::Duration;

use futures_channel::oneshot;
use futures_util::future::{select, Either};
use mimo_agent::actions::ActionRecord;
use mimo_protocol::{
    ActionCommand, ActionOutcome, AttemptState, BrowserAction, ErrorCode, ErrorObject,
    ServerToExtension, TaskControl, TaskStatus,
};
use serde::{Deserialize, Serialize};
use worker::{console_warn, Delay, Method, Response, Result};

use crate::http::{error_response, json_request, now_ms, random_bytes, read_outcome};
use crate::task::{wrap, Llm, TaskCoordinator, Work};
use crate::{EXTENSION_REGISTRY, REGISTRY_NAME};

/// Body of `POST /api/task/{taskId}/actions`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubmitAction {
    pub command: ActionCommand,
    #[serde(default)]
    pub tab_id: Option<i32>,
    /// How long to wait for the action to end before answering with its current state.
    #[serde(default)]
    pub wait_ms: Option<u64>,
}

/// What the registry relays from the extension to the task.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ActionEvent {
    #[serde(rename_all = "camelCase")]
    Ack {
        action_id: String,
        attempt: u32,
    },
    Outcome {
        outcome: ActionOutcome,
    },
    /// The answer to an `action_query`.
    #[serde(rename_all = "camelCase")]
    Status {
        action_id: String,
        attempt: u32,
        state: AttemptState,
        #[serde(default)]
        outcome: Option<ActionOutcome>,
    },
}

/// Body of the registry's `/send`: a frame for an extension's socket (`PLUGIN_OFFLINE` when it
/// has none open).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendToExtension {
    pub client_id: String,
    pub message: ServerToExtension,
}

const DEFAULT_WAIT_MS: u64 = 60_000;
const MAX_WAIT_MS: u64 = 120_000;

impl TaskCoordinator {
    /// Submits an action for the task's extension and waits for it to end (or `waitMs`):
    /// `200` with the finished record, `202` with the record as it stands.
    pub(crate) async fn submit_action(&self, request: SubmitAction) -> Result<Response> {
        let Some((task_id, client)) = self.task_and_client() else {
            return error_response(&ErrorObject::new(ErrorCode::NotFound, "unknown task"));
        };
        let client_id = match client {
            Some(client_id) => client_id,
            None => {
                if let Err(error) = self.bind_client(None).await? {
                    return error_response(&error);
                }
                match self.task_and_client().and_then(|(_, c)| c) {
                    Some(client_id) => client_id,
                    None => return error_response(&ErrorObject::plugin_offline()),
                }
            }
        };
        let action_id = format!("act_{}", hex::encode(random_bytes::<12>()?));
        let (sender, receiver) = oneshot::channel();
        self.waiters.borrow_mut().insert(action_id.clone(), sender);
        let effects = self.actions.borrow_mut().submit(
            action_id.clone(),
            task_id,
            client_id,
            request.tab_id,
            request.command,
            now_ms(),
        );
        self.run_action_effects(effects).await?;
        let started = self.with_conversation(|c| c.actions_started(now_ms()))?;
        self.run(started).await?;
        let wait =
            Duration::from_millis(request.wait_ms.unwrap_or(DEFAULT_WAIT_MS).min(MAX_WAIT_MS));
        let finished = match select(receiver, Delay::from(wait)).await {
            Either::Left((Ok(record), _)) => Some(record),
            _ => None,
        };
        self.waiters.borrow_mut().remove(&action_id);
        match finished {
            Some(record) => Response::from_json(&record),
            None => {
                let current = self.actions.borrow().get(&action_id).cloned();
                Ok(Response::from_json(&current)?.with_status(202))
            }
        }
    }

    pub(crate) fn list_actions(&self) -> Result<Response> {
        Response::from_json(&self.actions.borrow().records())
    }

    /// An ack, a result or an attempt's status relayed by the registry. The registry waits for
    /// this answer, so a model turn it leads to is left to the alarm.
    pub(crate) async fn action_event(&self, event: ActionEvent) -> Result<()> {
        let now = now_ms();
        let effects = match event {
            ActionEvent::Ack { action_id, attempt } => {
                self.actions.borrow_mut().acked(&action_id, attempt, now)
            }
            ActionEvent::Outcome { outcome } => self.actions.borrow_mut().outcome(outcome, now),
            ActionEvent::Status {
                action_id,
                attempt,
                state,
                outcome,
            } => self
                .actions
                .borrow_mut()
                .attempt_status(&action_id, attempt, state, outcome, now),
        };
        self.work(wrap(effects, Work::Action), true, Llm::Defer)
            .await
    }

    /// Takeover, resume or stop, from the web app or the extension's overlay (relayed by the
    /// registry, which waits: `Llm::Defer`).
    pub(crate) async fn control(&self, control: TaskControl, llm: Llm) -> Result<()> {
        let now = now_ms();
        let (work, action_effects) = match control {
            TaskControl::Takeover => (
                self.with_conversation(|c| c.takeover(now))?,
                self.actions.borrow_mut().set_paused(true, now),
            ),
            TaskControl::Resume => (
                self.with_conversation(|c| c.resume(now))?,
                self.actions.borrow_mut().set_paused(false, now),
            ),
            TaskControl::Stop => (
                self.with_conversation(|c| c.stop(now))?,
                self.actions.borrow_mut().cancel_all(now),
            ),
        };
        let mut all = wrap(work, Work::Conversation);
        all.extend(wrap(action_effects, Work::Action));
        self.work(all, true, llm).await
    }

    /// Tells the task's extension its new status. Best effort: an offline extension learns it
    /// from the next action, and a failure is only logged.
    pub(crate) async fn tell_extension(&self, client_id: &str, status: TaskStatus) {
        let Some((task_id, _)) = self.task_and_client() else {
            return;
        };
        let message = ServerToExtension::TaskState { task_id, status };
        match self.send_to_extension(client_id, message).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) if error.code == ErrorCode::PluginOffline => {}
            Ok(Err(error)) => {
                console_warn!("could not tell the extension the task's status: {error}")
            }
            Err(e) => console_warn!("could not tell the extension the task's status: {e}"),
        }
    }

    /// Timeouts and retries that are due (from the alarm).
    pub(crate) async fn tick_actions(&self) -> Result<()> {
        let effects = self.actions.borrow_mut().tick(now_ms());
        self.run_action_effects(effects).await
    }

    pub(crate) fn notify(&self, record: ActionRecord) {
        if let Some(sender) = self.waiters.borrow_mut().remove(&record.action_id) {
            // The waiting request may have given up already; nothing to tell then.
            let _ = sender.send(record);
        }
    }

    /// Hands a frame to the registry, which sends it on the extension's socket: `Err` when the
    /// registry could not be reached, the registry's refusal (`PLUGIN_OFFLINE`) inside.
    pub(crate) async fn send_to_extension(
        &self,
        client_id: &str,
        message: ServerToExtension,
    ) -> Result<std::result::Result<(), ErrorObject>> {
        let registry = self
            .env
            .durable_object(EXTENSION_REGISTRY)?
            .get_by_name(REGISTRY_NAME)?;
        let body = SendToExtension {
            client_id: client_id.to_owned(),
            message,
        };
        let request = json_request(Method::Post, "/send", Some(&body))?;
        read_outcome(registry.fetch_with_request(request).await?).await
    }

    /// Sends an action to its extension. Whatever keeps it from the extension — offline, or
    /// the registry unreachable — is a failed dispatch for the scheduler to deal with.
    pub(crate) async fn dispatch(
        &self,
        action: BrowserAction,
    ) -> std::result::Result<(), ErrorObject> {
        let client_id = action.client_id.clone();
        match self
            .send_to_extension(&client_id, ServerToExtension::BrowserAction { action })
            .await
        {
            Ok(sent) => sent,
            Err(e) => Err(ErrorObject::new(
                ErrorCode::PluginOffline,
                format!("the action could not be handed to the extension's connection: {e}"),
            )),
        }
    }

    /// Asks the extension what became of a timed-out attempt. Best effort: unanswered, the
    /// check times out in the scheduler.
    pub(crate) async fn query_attempt(&self, action: BrowserAction) {
        let query = ServerToExtension::ActionQuery {
            task_id: action.task_id,
            action_id: action.action_id,
            attempt: action.attempt,
        };
        match self.send_to_extension(&action.client_id, query).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => console_warn!("could not ask about an action: {error}"),
            Err(e) => console_warn!("could not ask about an action: {e}"),
        }
    }
}
