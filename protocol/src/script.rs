//! The script API (seed 002 §8): `POST /api/agent/start|next|report|confirm|cancel` and
//! `GET /api/agent/status`, in the seed's wire shapes. A script drives a task without a socket:
//! it starts it with a goal, takes each action the agent decides (`next`), carries it out its
//! own way and reports what it observed (`report`), answers confirmations and reads where the
//! task stands. Underneath, the script is one more polling client of the task (the extension's
//! polling transport), so the same idempotency holds: an action is delivered again until it is
//! reported past, a repeated report is recorded once.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{
    ActionCommand, ActionOutcome, ActionStatus, BrowserAction, ConfirmationRequest, ErrorCode,
    ErrorObject, RiskLevel, TaskStatus,
};

/// Body of `POST /api/agent/start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScriptStart {
    pub goal: String,
    /// Each step waits for `confirm` (seed 002 §4.1.1).
    #[serde(default)]
    pub step_by_step: bool,
    /// A JSON Schema the task's answer must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub answer_schema: Option<serde_json::Value>,
    /// How long `start` may wait for the task's first action (at most 20 s, as `next`'s
    /// `waitMs`); `0`, the default, answers at once, with the action only if it is ready.
    #[serde(default)]
    pub wait_ms: u32,
    /// This task's bound for the script to take an action with `next` (and to come back after
    /// it went quiet), in [`SCRIPT_BOUND_MS`]; the deployment's (2 min by default) without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub take_timeout_ms: Option<u64>,
    /// This task's bound for the script to `report` an action it took, in [`SCRIPT_BOUND_MS`];
    /// the deployment's (10 min by default) without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub report_timeout_ms: Option<u64>,
}

/// The bounds a script may ask for its task (`takeTimeoutMs`, `reportTimeoutMs`): a second to
/// an hour.
pub const SCRIPT_BOUND_MS: std::ops::RangeInclusive<u64> = 1_000..=3_600_000;

/// Body of `POST /api/agent/next`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScriptNext {
    pub task_id: String,
    /// The last action this script received: the next one after it is delivered (without it,
    /// the oldest action not reported past, again and again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub since_action_id: Option<String>,
    /// How long to wait for an action when none is ready (at most 20 s).
    #[serde(default)]
    pub wait_ms: u32,
}

/// Body of `POST /api/agent/report`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScriptReport {
    pub task_id: String,
    pub action_id: String,
    pub observation: Observation,
}

/// Body of `POST /api/agent/confirm`: `actionId` as `next` or `status` gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScriptConfirm {
    pub task_id: String,
    pub action_id: String,
    pub approved: bool,
    /// Why not, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
}

/// Body of `POST /api/agent/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScriptCancel {
    pub task_id: String,
}

/// How an action points at its element (seed 002 §5.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScriptTarget {
    pub by: String,
    pub value: String,
}

/// An action for the script to carry out (seed 002 §5.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScriptAction {
    pub task_id: String,
    pub action_id: String,
    /// The action's name without `browser_` (`click`, `type`, `navigate`, `task_start`, …).
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub target: Option<ScriptTarget>,
    /// The rest of the action's parameters.
    #[ts(type = "Record<string, unknown>")]
    pub params: serde_json::Value,
    pub risk: RiskLevel,
    /// A step waiting for `confirm` (not to be carried out before it is approved).
    pub requires_confirmation: bool,
    /// The seed's action state: `pending | running | done | failed | canceled`.
    pub state: String,
}

/// What a script observed after an action (seed 002 §5.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub visible_text_snippet: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub dom_summary: Option<String>,
    /// The action's result, in the shape the extension would give it (`tabId` for
    /// `task_start`, the element index for `dom_index`, …).
    #[serde(default)]
    #[ts(type = "unknown")]
    pub extracted: serde_json::Value,
    #[serde(default)]
    #[ts(type = "unknown")]
    pub artifacts: serde_json::Value,
    /// Empty: it worked. Else the first error is the action's.
    #[serde(default)]
    pub errors: Vec<ScriptError>,
}

impl Observation {
    /// The seed's fields besides `extracted` and `errors`, those the script gave; none if none.
    fn observed(&self) -> Option<serde_json::Value> {
        let mut observed = serde_json::Map::new();
        let mut keep = |key: &str, value: serde_json::Value| {
            let empty = match &value {
                serde_json::Value::Null => true,
                serde_json::Value::String(s) => s.is_empty(),
                serde_json::Value::Object(o) => o.is_empty(),
                serde_json::Value::Array(a) => a.is_empty(),
                _ => false,
            };
            if !empty {
                observed.insert(key.into(), value);
            }
        };
        keep("url", self.url.clone().into());
        keep("title", self.title.clone().into());
        let text: String = self
            .visible_text_snippet
            .chars()
            .take(OBSERVED_TEXT_CHARS)
            .collect();
        keep("visibleTextSnippet", text.into());
        keep("domSummary", self.dom_summary.clone().into());
        keep("artifacts", self.artifacts.clone());
        (!observed.is_empty()).then_some(serde_json::Value::Object(observed))
    }
}

/// An error as the seed reports it: one of the error codes, and what happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ScriptError {
    pub code: ErrorCode,
    pub message: String,
}

/// How much of the page's text a script's observation keeps (the model reads it with the step's
/// result).
pub const OBSERVED_TEXT_CHARS: usize = 1_000;

impl Observation {
    /// The outcome of `action` it reports: its error if it has one, else its result. What the
    /// script saw besides (the page's address, title and text, its summary, the artifacts it
    /// stored) is kept with the result as `observation`, so the task's record, its export and
    /// `audit.jsonl` have it, and the model reads it with the step's result.
    pub fn outcome(self, action: &BrowserAction) -> ActionOutcome {
        let observed = self.observed();
        let (status, error) = match self.errors.into_iter().next() {
            Some(e) => (
                ActionStatus::Error,
                Some(ErrorObject::new(e.code, e.message)),
            ),
            None => (ActionStatus::Ok, None),
        };
        let result = match (self.extracted, observed) {
            (serde_json::Value::Object(mut result), Some(observed)) => {
                result.insert("observation".into(), observed);
                serde_json::Value::Object(result)
            }
            (serde_json::Value::Null, Some(observed)) => {
                serde_json::json!({ "observation": observed })
            }
            (extracted, _) => extracted,
        };
        ActionOutcome {
            action_id: action.action_id.clone(),
            attempt: action.attempt,
            task_id: action.task_id.clone(),
            status,
            result: error.is_none().then_some(result),
            model_result: None,
            error,
            warnings: Vec::new(),
            dialog: None,
            tab_id: None,
            waits_for_site: None,
            timings: Vec::new(),
        }
    }
}

/// `GET /api/agent/status?taskId=`: where the task stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScriptStatus {
    pub task_id: String,
    /// `RUNNING | WAITING_CONFIRMATION | WAITING_PAGE | TAKEOVER | SUCCEEDED | FAILED | CANCELED`.
    pub status: String,
    /// The step waiting for `confirm`, as an action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub pending_confirmation: Option<ScriptAction>,
    /// Every action of the task, oldest first.
    pub actions: Vec<ScriptAction>,
}

/// The client a script is to its task: it polls for the task's actions as an extension would.
pub fn script_client_id(task_id: &str) -> String {
    format!("{SCRIPT_CLIENT_PREFIX}{task_id}")
}

/// Whether a client is a script (`script_client_id`), not a browser's extension.
pub fn is_script_client(client_id: &str) -> bool {
    client_id.starts_with(SCRIPT_CLIENT_PREFIX)
}

const SCRIPT_CLIENT_PREFIX: &str = "script-";

/// The seed's task status for the task's status; `waiting_page` when the action in flight
/// waits for the page (a load or a condition).
pub fn task_status(status: TaskStatus, waiting_page: bool) -> &'static str {
    match status {
        TaskStatus::WaitingConfirmation => "WAITING_CONFIRMATION",
        TaskStatus::Takeover => "TAKEOVER",
        TaskStatus::Completed => "SUCCEEDED",
        TaskStatus::Error => "FAILED",
        TaskStatus::Canceled => "CANCELED",
        _ if waiting_page => "WAITING_PAGE",
        _ => "RUNNING",
    }
}

/// The id `next`, `status` and `confirm` give a step waiting for confirmation (it has no
/// action yet: the action is made once it is approved).
pub fn confirmation_action_id(step: u32) -> String {
    format!("step-{step}")
}

/// The step named by a confirmation's action id.
pub fn confirmation_step(action_id: &str) -> Option<u32> {
    action_id.strip_prefix("step-")?.parse().ok()
}

/// An action in the seed's shape, from what the server sends an extension; `state` is the
/// seed's action state.
pub fn script_action(action: &BrowserAction, risk: RiskLevel, state: &str) -> ScriptAction {
    let (kind, target, params) = split_command(&action.command);
    ScriptAction {
        task_id: action.task_id.clone(),
        action_id: action.action_id.clone(),
        kind,
        target,
        params,
        risk,
        requires_confirmation: false,
        state: state.to_owned(),
    }
}

/// A step waiting for confirmation, as an action for the script to approve or decline.
pub fn confirmation_action(task_id: &str, request: &ConfirmationRequest) -> ScriptAction {
    let (kind, params) = match serde_json::to_value(&request.action) {
        Ok(serde_json::Value::Object(map)) => map
            .into_iter()
            .next()
            .unwrap_or(("step".into(), serde_json::Value::Null)),
        _ => ("step".into(), serde_json::Value::Null),
    };
    let mut params = params;
    let target = params
        .as_object_mut()
        .and_then(|p| p.remove("index"))
        .map(|index| ScriptTarget {
            by: "index".into(),
            value: index.to_string(),
        });
    if let Some(map) = params.as_object_mut() {
        map.insert("reason".into(), request.reason.clone().into());
        map.insert("url".into(), request.url.clone().into());
    }
    ScriptAction {
        task_id: task_id.to_owned(),
        action_id: confirmation_action_id(request.step),
        kind,
        target,
        params,
        risk: request.risk,
        requires_confirmation: true,
        state: "pending".into(),
    }
}

/// An action's name without `browser_`, its target in the seed's shape, and its other
/// parameters.
fn split_command(command: &ActionCommand) -> (String, Option<ScriptTarget>, serde_json::Value) {
    let value = serde_json::to_value(command).unwrap_or_default();
    let name = value["name"].as_str().unwrap_or_default();
    let kind = name.strip_prefix("browser_").unwrap_or(name).to_owned();
    let mut params = value.get("params").cloned().unwrap_or_default();
    // A target is flattened into the parameters: its way of pointing comes out as the seed's
    // `target` (the element index as `by: "index"`).
    let target = params.as_object_mut().and_then(|p| {
        // A role comes before its label: the label then names it (stays in `params`).
        [
            ("clickId", "index"),
            ("xpath", "xpath"),
            ("selector", "selector"),
            ("role", "role"),
            ("label", "text"),
        ]
        .into_iter()
        .find_map(|(key, by)| {
            let value = p.remove(key)?;
            Some(ScriptTarget {
                by: by.to_owned(),
                value: match value {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                },
            })
        })
    });
    (kind, target, params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AgentAction;
    use serde_json::json;

    fn browser_action(command: serde_json::Value) -> BrowserAction {
        let mut action = json!({
            "actionId": "act_1", "attempt": 1, "taskId": "t1", "clientId": "script-t1"
        });
        action
            .as_object_mut()
            .unwrap()
            .extend(command.as_object().unwrap().clone());
        serde_json::from_value(action).unwrap()
    }

    #[test]
    fn an_action_is_given_in_the_seeds_shape() {
        let click = browser_action(json!({ "name": "browser_click", "params": { "clickId": 12 } }));
        let shaped =
            serde_json::to_value(script_action(&click, RiskLevel::Medium, "running")).unwrap();
        assert_eq!(
            shaped,
            json!({
                "taskId": "t1", "actionId": "act_1", "type": "click",
                "target": { "by": "index", "value": "12" }, "params": {},
                "risk": "medium", "requiresConfirmation": false, "state": "running"
            })
        );
        let start = browser_action(
            json!({ "name": "task_start", "params": { "url": "https://shop.test/" } }),
        );
        let shaped = script_action(&start, RiskLevel::Low, "pending");
        assert_eq!((shaped.kind.as_str(), shaped.target), ("task_start", None));
        assert_eq!(shaped.params["url"], "https://shop.test/");
    }

    #[test]
    fn a_step_waiting_for_confirmation_is_an_action_to_approve() {
        let request = ConfirmationRequest {
            step: 4,
            action: AgentAction::Click { index: 7 },
            reason: "clicking [7] looks irreversible".into(),
            risk: RiskLevel::High,
            facts: vec![],
            url: "https://shop.test/cart".into(),
            title: "Cart".into(),
            screenshot_artifact_id: None,
            target: None,
            target_name: Some("Place order".into()),
            step_by_step: false,
        };
        let action = confirmation_action("t1", &request);
        assert_eq!(action.action_id, "step-4");
        assert_eq!(confirmation_step(&action.action_id), Some(4));
        assert_eq!(confirmation_step("act_1"), None);
        assert!(action.requires_confirmation);
        assert_eq!(action.risk, RiskLevel::High);
        assert_eq!(action.kind, "click");
        assert_eq!(
            action.target,
            Some(ScriptTarget {
                by: "index".into(),
                value: "7".into()
            })
        );
        assert_eq!(action.params["reason"], "clicking [7] looks irreversible");
    }

    #[test]
    fn statuses_map_to_the_seeds() {
        assert_eq!(task_status(TaskStatus::Running, false), "RUNNING");
        assert_eq!(task_status(TaskStatus::Ongoing, true), "WAITING_PAGE");
        assert_eq!(
            task_status(TaskStatus::WaitingConfirmation, true),
            "WAITING_CONFIRMATION"
        );
        assert_eq!(task_status(TaskStatus::Completed, false), "SUCCEEDED");
        assert_eq!(task_status(TaskStatus::Error, false), "FAILED");
        assert_eq!(task_status(TaskStatus::Canceled, false), "CANCELED");
        assert_eq!(task_status(TaskStatus::Takeover, false), "TAKEOVER");
    }

    #[test]
    fn an_observation_reads_with_defaults_and_errors() {
        let o: Observation = serde_json::from_value(json!({
            "url": "https://shop.test/", "title": "Shop",
            "errors": [{ "code": "TARGET_NOT_FOUND", "message": "gone" }]
        }))
        .unwrap();
        assert_eq!(o.errors[0].code, ErrorCode::TargetNotFound);
        assert_eq!(o.extracted, serde_json::Value::Null);
        let click = browser_action(json!({ "name": "browser_click", "params": { "clickId": 1 } }));
        let failed = o.outcome(&click);
        assert_eq!(failed.status, ActionStatus::Error);
        assert_eq!(failed.error.unwrap().code, ErrorCode::TargetNotFound);
        let fine: Observation =
            serde_json::from_value(json!({ "extracted": { "clicked": true } })).unwrap();
        let done = fine.outcome(&click);
        assert_eq!(
            (done.status, done.result),
            (ActionStatus::Ok, Some(json!({ "clicked": true })))
        );
    }

    #[test]
    fn what_a_script_saw_is_kept_with_the_result() {
        let click = browser_action(json!({ "name": "browser_click", "params": { "clickId": 1 } }));
        let long = "x".repeat(OBSERVED_TEXT_CHARS + 50);
        let seen: Observation = serde_json::from_value(json!({
            "url": "https://shop.test/cart", "title": "Cart", "visibleTextSnippet": long,
            "domSummary": "a cart", "extracted": { "clicked": true },
            "artifacts": { "screenshots": ["art_1"] }, "errors": []
        }))
        .unwrap();
        let result = seen.outcome(&click).result.unwrap();
        assert_eq!(result["clicked"], json!(true));
        let observation = &result["observation"];
        assert_eq!(observation["url"], "https://shop.test/cart");
        assert_eq!(observation["title"], "Cart");
        assert_eq!(observation["domSummary"], "a cart");
        assert_eq!(
            observation["artifacts"],
            json!({ "screenshots": ["art_1"] })
        );
        assert_eq!(
            observation["visibleTextSnippet"].as_str().unwrap().len(),
            OBSERVED_TEXT_CHARS
        );
        // With nothing but a result, the result as it is; with nothing at all, what was seen.
        let bare: Observation = serde_json::from_value(json!({ "extracted": [1, 2] })).unwrap();
        assert_eq!(bare.outcome(&click).result, Some(json!([1, 2])));
        let only: Observation = serde_json::from_value(json!({ "title": "Cart" })).unwrap();
        assert_eq!(
            only.outcome(&click).result,
            Some(json!({ "observation": { "title": "Cart" } }))
        );
    }
}
