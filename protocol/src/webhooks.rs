//! Webhooks: subscriptions to a task's events (deployment-wide or one task's), managed over
//! `/api/webhooks`, and what is delivered to the receiver — Standard Webhooks
//! (<https://www.standardwebhooks.com>): headers `webhook-id`, `webhook-timestamp` and
//! `webhook-signature`, a JSON body `{type, timestamp, data}`. The rules (signing, the
//! receivers allowed, the retry schedule, the order per task) are `mimo_agent::webhooks`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{ErrorObject, TaskStatus};

/// The header carrying the message's id: the same for every attempt and every "send again"
/// of one event, so a receiver dedupes by it.
pub const WEBHOOK_ID_HEADER: &str = "webhook-id";
/// Seconds since the Unix epoch of this attempt.
pub const WEBHOOK_TIMESTAMP_HEADER: &str = "webhook-timestamp";
/// `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per valid secret, space separated.
pub const WEBHOOK_SIGNATURE_HEADER: &str = "webhook-signature";

/// What a subscription can hear of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
pub enum WebhookEventType {
    #[serde(rename = "task.created")]
    TaskCreated,
    /// A step of the agent ended, with its summary and links to the evidence.
    #[serde(rename = "task.step_finished")]
    TaskStepFinished,
    #[serde(rename = "task.confirmation_requested")]
    TaskConfirmationRequested,
    #[serde(rename = "task.confirmation_answered")]
    TaskConfirmationAnswered,
    /// Paused by the person, or taken over by them.
    #[serde(rename = "task.paused")]
    TaskPaused,
    #[serde(rename = "task.resumed")]
    TaskResumed,
    #[serde(rename = "task.completed")]
    TaskCompleted,
    #[serde(rename = "task.failed")]
    TaskFailed,
    #[serde(rename = "task.canceled")]
    TaskCanceled,
}

impl WebhookEventType {
    pub const ALL: [WebhookEventType; 9] = [
        Self::TaskCreated,
        Self::TaskStepFinished,
        Self::TaskConfirmationRequested,
        Self::TaskConfirmationAnswered,
        Self::TaskPaused,
        Self::TaskResumed,
        Self::TaskCompleted,
        Self::TaskFailed,
        Self::TaskCanceled,
    ];

    /// The wire name, e.g. `task.step_finished`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TaskCreated => "task.created",
            Self::TaskStepFinished => "task.step_finished",
            Self::TaskConfirmationRequested => "task.confirmation_requested",
            Self::TaskConfirmationAnswered => "task.confirmation_answered",
            Self::TaskPaused => "task.paused",
            Self::TaskResumed => "task.resumed",
            Self::TaskCompleted => "task.completed",
            Self::TaskFailed => "task.failed",
            Self::TaskCanceled => "task.canceled",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// One event of a task, as its coordinator hands it to the webhooks' object: the fields that
/// apply to its type (`data` of the body, less the links, which are the deployment's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WebhookEventData {
    pub task_id: String,
    /// The event's position in the task's history: events of a task are delivered in its order.
    #[ts(type = "number")]
    pub seq: u64,
    /// When it happened, in ms since the Unix epoch.
    #[ts(type = "number")]
    pub at: u64,
    /// The task's status after it (created, paused, resumed and the endings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub status: Option<TaskStatus>,
    /// The step (step finished, confirmation requested and answered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub step: Option<u32>,
    /// The step's action, e.g. `click`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub action: Option<String>,
    /// Whether the step succeeded (step finished), was approved (confirmation answered), or
    /// the task did what it was asked (completed; `false`: it ended without doing all of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub ok: Option<bool>,
    /// The step's one line for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub summary: Option<String>,
    /// Why a confirmation is asked, or why the person declined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    /// Where a confirmation was answered (`web`, `extension`, `api`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub by: Option<String>,
    /// What failed (a step, or the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<ErrorObject>,
    /// What the task answered (completed): `{"text": …}`, or the answer in the task's answer
    /// schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub output: Option<serde_json::Value>,
    /// The screenshot of the page the step was chosen on, or that a confirmation is asked on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub screenshot_artifact_id: Option<String>,
    /// Where the evidence is: set in a delivered body (the deployment's links), not in a
    /// coordinator's report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub links: Option<WebhookLinks>,
}

/// A task's event as the coordinator reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WebhookEvent {
    #[serde(rename = "type")]
    pub kind: WebhookEventType,
    pub data: WebhookEventData,
}

/// A task's event as its coordinator hands it to the webhooks' object: what routes it, and the
/// body to deliver as written by the coordinator (`data` without its links, which are the
/// subscription's deployment origin's: `mimo_agent::webhooks::body` adds them), so the object
/// never reads the event's fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WebhookReport {
    #[serde(rename = "type")]
    pub kind: WebhookEventType,
    pub task_id: String,
    #[ts(type = "number")]
    pub seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub screenshot_artifact_id: Option<String>,
    /// A [`WebhookPayload`] without links, as JSON.
    pub body: String,
}

/// `POST` to the webhooks' object: the events of one task, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WebhookEvents {
    pub events: Vec<WebhookReport>,
}

/// Where a delivered event's evidence is (the deployment token opens the API ones).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WebhookLinks {
    /// The task in the web app.
    pub task: String,
    /// The task's audit log, one JSON line per step (`GET /api/task/{id}/audit.jsonl`).
    pub audit: String,
    /// The evidence archive (`GET /api/task/{id}/export.zip`).
    pub evidence: String,
    /// The screenshot's signed download (`GET /api/artifacts/{id}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub screenshot: Option<String>,
}

/// The body a receiver gets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WebhookPayload {
    #[serde(rename = "type")]
    pub kind: WebhookEventType,
    /// When the event happened, RFC 3339 in UTC.
    pub timestamp: String,
    pub data: WebhookEventData,
}

/// `POST /api/webhooks`: a subscription.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WebhookCreate {
    /// The receiver: `https://` on a host the deployment allows (`WEBHOOK_ALLOWED_HOSTS`).
    pub url: String,
    /// The events it hears; none listed is every one.
    #[serde(default)]
    pub events: Vec<WebhookEventType>,
    /// Only this task's events; none is every task of the deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub task_id: Option<String>,
}

/// A subscription, without its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WebhookInfo {
    pub id: String,
    pub url: String,
    /// Empty: every event.
    pub events: Vec<WebhookEventType>,
    pub task_id: Option<String>,
    #[ts(type = "number")]
    pub created_at: u64,
    /// Until when the secret before the last rotation still signs too (ms), if it does.
    #[ts(type = "number | null")]
    pub previous_secret_until: Option<u64>,
}

/// The answer to a creation or a rotation: the secret (`whsec_…`), shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WebhookSecret {
    pub webhook: WebhookInfo,
    pub secret: String,
}

/// `GET /api/webhooks`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WebhookList {
    pub webhooks: Vec<WebhookInfo>,
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// Not delivered yet: waiting for its next attempt, or for an earlier event of its task.
    Pending,
    /// The receiver answered 2xx.
    Delivered,
    /// Given up: a day of attempts failed, or the receiver is no longer allowed.
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Failed => "failed",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [Self::Pending, Self::Delivered, Self::Failed]
            .into_iter()
            .find(|s| s.as_str() == name)
    }
}

/// One event for one subscription, and how delivering it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDelivery {
    #[ts(type = "number")]
    pub id: u64,
    pub webhook_id: String,
    /// The `webhook-id` header.
    pub message_id: String,
    #[serde(rename = "type")]
    pub kind: WebhookEventType,
    pub task_id: String,
    #[ts(type = "number")]
    pub seq: u64,
    pub status: DeliveryStatus,
    pub attempts: u32,
    #[ts(type = "number | null")]
    pub next_attempt_at: Option<u64>,
    #[ts(type = "number | null")]
    pub last_attempt_at: Option<u64>,
    /// The receiver's HTTP status at the last attempt.
    pub response_status: Option<u16>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    #[ts(type = "number")]
    pub created_at: u64,
}

/// `GET /api/webhooks/deliveries?webhook=`: the newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDeliveryList {
    pub deliveries: Vec<WebhookDelivery>,
}

/// The most subscriptions a deployment keeps, and the longest receiver URL.
pub const MAX_WEBHOOKS: usize = 50;
pub const MAX_WEBHOOK_URL_CHARS: usize = 2048;
