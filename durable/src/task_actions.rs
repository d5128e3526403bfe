//! The coordinator's browser actions: the developer API that submits one and waits for it, the
//! acks and results relayed by the registry, and the scheduler's effects carried out. The
//! rules (one in flight, timeouts, retry once, duplicates) are `mimo_agent::actions`.

use std::time::Duration;

use futures_channel::oneshot;
use futures_util::future::{select, Either};
use mimo_agent::actions::ActionRecord;
use mimo_protocol::{
    ActionCommand, ActionOutcome, BrowserAction, ErrorCode, ErrorObject, ServerToExtension,
    TaskControl, TaskStatus,
};
use serde::{Deserialize, Serialize};
use worker::{Delay, Method, Response, Result};

use crate::http::{error_response, json_request, now_ms, random_bytes, read_outcome};
use crate::task::TaskCoordinator;
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
}

/// Body of the registry's `/notify`: a message for an extension, if it is online.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Notify {
    pub client_id: String,
    pub message: ServerToExtension,
}

/// Body of the registry's `/dispatch`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Dispatch {
    pub client_id: String,
    pub action: BrowserAction,
}

const DEFAULT_WAIT_MS: u64 = 60_000;
const MAX_WAIT_MS: u64 = 120_000;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

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
        let action_id = format!("act_{}", hex(&random_bytes::<12>()?));
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

    /// An ack or a result relayed by the registry.
    pub(crate) async fn action_event(&self, event: ActionEvent) -> Result<()> {
        let now = now_ms();
        let effects = match event {
            ActionEvent::Ack { action_id, attempt } => {
                self.actions.borrow_mut().acked(&action_id, attempt, now)
            }
            ActionEvent::Outcome { outcome } => self.actions.borrow_mut().outcome(outcome, now),
        };
        self.run_action_effects(effects).await
    }

    /// Takeover, resume or stop, from the web app or the extension's overlay.
    pub(crate) async fn control(&self, control: TaskControl) -> Result<()> {
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
        self.run(work).await?;
        self.run_action_effects(action_effects).await
    }

    /// Tells the task's extension its new status (best effort: an offline extension learns it
    /// from the next action).
    pub(crate) async fn tell_extension(&self, client_id: &str, status: TaskStatus) -> Result<()> {
        let Some((task_id, _)) = self.task_and_client() else {
            return Ok(());
        };
        let registry = self
            .env
            .durable_object(EXTENSION_REGISTRY)?
            .get_by_name(REGISTRY_NAME)?;
        let body = Notify {
            client_id: client_id.to_owned(),
            message: ServerToExtension::TaskState { task_id, status },
        };
        registry
            .fetch_with_request(json_request(Method::Post, "/notify", Some(&body))?)
            .await?;
        Ok(())
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

    /// Hands an action to the registry, which sends it on the extension's socket.
    pub(crate) async fn dispatch(
        &self,
        action: BrowserAction,
    ) -> Result<std::result::Result<(), ErrorObject>> {
        let registry = self
            .env
            .durable_object(EXTENSION_REGISTRY)?
            .get_by_name(REGISTRY_NAME)?;
        let body = Dispatch {
            client_id: action.client_id.clone(),
            action,
        };
        let request = json_request(Method::Post, "/dispatch", Some(&body))?;
        read_outcome(registry.fetch_with_request(request).await?).await
    }
}
