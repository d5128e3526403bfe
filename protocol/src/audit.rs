//! The audit log of a task (seed 002 §7.1): one JSON line per step — when, what action on
//! which target with which parameters and risk, what the page was before and after (address,
//! title, screenshots), what came of it, who confirmed it and when, and through which browser.
//! Built from the task's history (`agent::audit`), so it says exactly what the web app saw.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::action::BoundingBox;
use crate::{BrowserInfo, ErrorObject, LlmErrorKind, Reflection, RiskLevel, TokenUsage};

/// One step of a task, as audited.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    /// When the step was chosen (ms since the Unix epoch).
    #[ts(type = "number")]
    pub ts: u64,
    pub task_id: String,
    /// Which browser run of the task (1-based): each run numbers its steps from 1.
    pub run: u32,
    pub step: u32,
    /// The agent that chose it: `main`, or `subtask-N` for a sub-agent's browser job (the
    /// local bridge audits its invocations under the same task id and agent id).
    pub agent_id: String,
    pub action: AuditAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reflection: Option<Reflection>,
    /// The page the step was chosen on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub before: Option<AuditPage>,
    /// The page after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub after: Option<AuditPage>,
    /// What came of it; absent while it runs (or when the run ended first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub outcome: Option<AuditOutcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub confirmation: Option<AuditConfirmation>,
    /// The extension the task's actions went to (seed 002 §8.2: the request's origin)…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub client_id: Option<String>,
    /// …and the browser it runs in, as its `hello` said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub browser: Option<BrowserInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub usage: Option<TokenUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost_usd: Option<f64>,
    /// The retries of the model call that chose the step (a rate limit, an overloaded
    /// provider, a context compacted to fit), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_retries: Vec<AuditModelRetry>,
}

/// A retry of the model call that chose a step (the history's `modelRetry`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditModelRetry {
    /// When the failed call was answered and the retry decided.
    #[ts(type = "number")]
    pub at: u64,
    pub attempt: u32,
    pub max_attempts: u32,
    pub reason: LlmErrorKind,
    pub message: String,
    #[ts(type = "number")]
    pub delay_ms: u64,
}

/// The action of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditAction {
    /// Its name, e.g. `click`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The element it acts on (its index in the page's element list), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub target: Option<u32>,
    /// What that element is called on the page (its accessible name or text, shortened; left
    /// out when it holds personal data), so a replay says "Click “Sign in”".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub target_name: Option<String>,
    /// Its parameters as the model gave them.
    #[ts(type = "unknown")]
    pub params: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub risk: Option<RiskLevel>,
    /// The skill that guided it, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub skill: Option<String>,
}

/// A page as a step saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditPage {
    pub url: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub screenshot_artifact_id: Option<String>,
    /// Where the step's target stands in this page's screenshot (on `before`, when it was in
    /// view): pixels of the screenshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub target: Option<BoundingBox>,
}

/// What came of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditOutcome {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// What the step found or did (its result), as the model got it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub extracted: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorObject>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// When it ended.
    #[ts(type = "number")]
    pub at: u64,
}

/// A step's confirmation: asked, and how it was answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditConfirmation {
    pub required: bool,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<String>,
    /// Asked only because the task ran step by step.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub step_by_step: bool,
    #[ts(type = "number")]
    pub asked_at: u64,
    /// `true` approved, `false` declined, absent: not answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub approved: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub answered_at: Option<u64>,
    /// The reason the person gave for declining.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub declined_because: Option<String>,
}
