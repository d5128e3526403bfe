//! What the two objects ask each other, in one place: each request's body type and a typed
//! client that sends it, so that a route's shape is written once on each side.

use mimo_agent::task::{ActionEvent, Binding, SnapshotPush};
use mimo_protocol::{ActionCommand, ErrorObject, ServerToExtension, TaskControl};
use serde::{Deserialize, Serialize};
use worker::{Env, Method, Result, Stub};

use crate::http::{json_request, read_json, read_outcome};
use crate::{EXTENSION_REGISTRY, REGISTRY_NAME, TASK_COORDINATOR};

/// Body of the registry's `/bind`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BindRequest {
    pub task_id: String,
    /// An explicit choice; `None` asks for automatic selection.
    pub client_id: Option<String>,
}

/// Body of the registry's `/send`: a frame for an extension's socket (`PLUGIN_OFFLINE` when it
/// has none open).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendToExtension {
    pub client_id: String,
    pub message: ServerToExtension,
}

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

/// An answer of the other object: `Err` when it could not be reached, its refusal inside.
pub type Answer<T> = Result<std::result::Result<T, ErrorObject>>;

/// The registry, as a task's coordinator talks to it.
pub struct RegistryClient(Stub);

impl RegistryClient {
    pub fn new(env: &Env) -> Result<Self> {
        Ok(Self(
            env.durable_object(EXTENSION_REGISTRY)?
                .get_by_name(REGISTRY_NAME)?,
        ))
    }

    /// Binds a task to an extension (automatic selection when `client_id` is `None`).
    pub async fn bind(&self, request: &BindRequest) -> Answer<Binding> {
        let request = json_request(Method::Post, "/bind", Some(request))?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    /// Sends a frame on the extension's socket (`PLUGIN_OFFLINE` when it has none open).
    pub async fn send(&self, client_id: &str, message: ServerToExtension) -> Answer<()> {
        let body = SendToExtension {
            client_id: client_id.to_owned(),
            message,
        };
        let request = json_request(Method::Post, "/send", Some(&body))?;
        read_outcome(self.0.fetch_with_request(request).await?).await
    }
}

/// A task's coordinator, as the registry talks to it.
pub struct TaskClient(Stub);

impl TaskClient {
    pub fn new(env: &Env, task_id: &str) -> Result<Self> {
        Ok(Self(
            env.durable_object(TASK_COORDINATOR)?.get_by_name(task_id)?,
        ))
    }

    /// Relays what the extension says about one of the task's actions.
    pub async fn action_event(&self, event: &ActionEvent) -> Answer<()> {
        self.post("/action-event", event).await
    }

    /// Relays takeover, resume or stop from the extension's overlay.
    pub async fn control(&self, control: TaskControl) -> Answer<()> {
        self.post("/control", &control).await
    }

    /// Pushes the task's extension's new browser snapshot.
    pub async fn snapshot(&self, push: &SnapshotPush) -> Answer<()> {
        self.post("/snapshot", push).await
    }

    async fn post<T: Serialize>(&self, route: &str, body: &T) -> Answer<()> {
        let request = json_request(Method::Post, route, Some(body))?;
        read_outcome(self.0.fetch_with_request(request).await?).await
    }
}
