//! Messages between the web app and the server on `/ws/web?taskId=…[&lastSeq=N]`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::action::BoundingBox;
use crate::snapshot::ChromeId;
use crate::{
    AgentAction, Attachment, BrowserSnapshot, BrowserTaskResult, ErrorObject, LlmErrorKind,
    PageDialog, Reflection, RiskLevel, TaskStatus, TaskTab, TokenUsage, ToolPhase, ToolResult,
};

/// Web → server (`frontend_message`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(remote = "Self", rename_all = "snake_case")]
#[ts(tag = "type")]
pub enum FrontendMessage {
    /// The person says something in the task's chat.
    #[serde(rename_all = "camelCase")]
    UserMessage {
        content: String,
        /// Chosen by the client for this message (1–128 characters). Sent again with the same
        /// id — after a reconnect that may have lost it — it is stored once; the stored
        /// message echoes it, which is how the client knows it arrived.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        client_message_id: Option<String>,
        /// The answer format for this request: a JSON Schema the answer's `data` must match
        /// (validated by the server; the model is told what is wrong and tries again).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "unknown")]
        answer_schema: Option<serde_json::Value>,
    },
    /// Bind the task to this extension instance.
    #[serde(rename_all = "camelCase")]
    SelectClient { client_id: String },
    /// The next browser run starts on this tab of the person's ("continue on this page");
    /// `null` forgets it.
    #[serde(rename_all = "camelCase")]
    StartOnTab {
        #[serde(default)]
        tab_id: Option<ChromeId>,
    },
    /// The task's own allowed and blocked sites, over the deployment's (`MIMO_ALLOWED_DOMAINS`,
    /// `MIMO_BLOCKED_DOMAINS`): both must let a page be visited. Replaces the earlier ones.
    SetDomains {
        #[serde(default)]
        allowed: Vec<String>,
        #[serde(default)]
        blocked: Vec<String>,
    },
    /// Stop whatever the task is doing.
    Stop {},
    /// The person pauses the task: what is in flight finishes, nothing new starts.
    Pause {},
    /// Answer the latest request again; the answer there is now is kept as an alternative.
    Regenerate {},
    /// Make this answer to the latest request the one in the conversation (switching between
    /// regenerated alternatives).
    #[serde(rename_all = "camelCase")]
    SelectAnswer { message_id: String },
    /// The person hands the browser back after taking over, or resumes a paused task.
    Resume {},
    /// The person takes the browser over: the task pauses and the task tab is theirs until
    /// they resume (the overlay's "Take over", from the web app or the side panel).
    TakeOver {},
    /// The person's answer to `confirmationRequested` for step `step`: run it, or not (and
    /// why not, for the model).
    Confirm {
        step: u32,
        approve: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        reason: Option<String>,
    },
    /// Step-by-step mode (seed 002 §4.1.1): each step the model chooses waits for the person's
    /// "Next step" (a confirmation) before it runs. A risky step waits in either mode.
    #[serde(rename_all = "camelCase")]
    SetStepMode { step_by_step: bool },
    /// Files and commands on this computer (the local bridge, seed 004): `allow` offers the
    /// model the bridge's actions when the task's extension has a bridge connected (off by
    /// default); `confirm` holds each write, edit and command for the person's confirmation
    /// (on by default).
    SetBridge { allow: bool, confirm: bool },
}
via_json_value_internal!(FrontendMessage, "type");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ChatRole {
    User,
    Assistant,
}

/// A stored chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChatMessage {
    pub message_id: String,
    pub role: ChatRole,
    pub content: String,
    #[ts(type = "number")]
    pub created_at: u64,
    /// The client's own id of a message the person sent (see `user_message`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub client_message_id: Option<String>,
    /// Which answer to its request this assistant message belongs to, when the person had it
    /// regenerated: 2, 3, … (the first answer has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub version: Option<u32>,
    /// An answer the person regenerated or switched away from: kept, and shown as an
    /// alternative, but no longer part of the conversation the model sees.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub superseded: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum OutputStatus {
    Ok,
    Partial,
    Error,
}

/// Server → web (`frontend_event`), always wrapped in an [`EventEnvelope`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(remote = "Self", rename_all = "camelCase")]
#[ts(tag = "type")]
// Events are built, sent and dropped one at a time; boxing the large step variants would only
// make them clumsier to build and match.
#[allow(clippy::large_enum_variant)]
pub enum FrontendEvent {
    /// A stored chat message (the person's, echoed to every tab of the task).
    Message { message: ChatMessage },
    /// This task is a fork: its history up to here is that task's up to that message. (Not
    /// `taskId` at the top: the envelope's `taskId` is this task's.)
    ForkedFrom { origin: crate::task::ForkedFrom },
    /// A fork of this task was made at one of its messages (`POST /api/task/{id}/fork`): the
    /// fork's id and the message.
    Forked { fork: crate::task::ForkedFrom },
    /// The conversation grew too long for the model's context and its earlier part was
    /// summarized: from now on the model sees `summary` in place of the messages up to and
    /// including `through` (`messages` of them, those of an earlier summary included). The
    /// messages themselves stay stored and shown.
    #[serde(rename_all = "camelCase")]
    ChatCompacted {
        through: String,
        messages: u32,
        summary: String,
    },
    /// The chat model handed a browser job to a sub-agent (`browser_task`): the steps up to its
    /// `subtaskFinished` are the sub-agent's.
    #[serde(rename_all = "camelCase")]
    SubtaskStarted {
        /// 1-based within the request being answered.
        subtask: u32,
        tool_call_id: String,
        goal: String,
        max_steps: u32,
    },
    /// The sub-agent closed: what goes back to the chat model.
    #[serde(rename_all = "camelCase")]
    SubtaskFinished {
        subtask: u32,
        tool_call_id: String,
        result: BrowserTaskResult,
    },
    /// The task's own allowed and blocked sites, as set now.
    TaskDomains {
        allowed: Vec<String>,
        blocked: Vec<String>,
    },
    /// A piece of the assistant's streamed reply; `finished` closes message `messageId`.
    #[serde(rename_all = "camelCase")]
    ChatDelta {
        message_id: String,
        delta: String,
        finished: bool,
    },
    #[serde(rename_all = "camelCase")]
    TaskStatus {
        status: TaskStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        title: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        selected_client_id: Option<String>,
    },
    /// The current browser snapshot of the task's extension (not sequenced: state, not history).
    #[serde(rename_all = "camelCase")]
    SnapshotSync {
        client_id: String,
        snapshot: BrowserSnapshot,
    },
    /// The outcome of a turn.
    StructuredOutput {
        status: OutputStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "unknown")]
        output: Option<serde_json::Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        error: Option<ErrorObject>,
        #[serde(default)]
        warnings: Vec<String>,
    },
    /// A step of the agent: `start` when the model chose the action, `end` with its result.
    #[serde(rename_all = "camelCase")]
    ToolUsed {
        /// 1-based step number within the run.
        step: u32,
        tool_call_id: String,
        phase: ToolPhase,
        /// Present on `start`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        reflection: Option<Reflection>,
        action: AgentAction,
        /// Present on `end`: what goes back to the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        result: Option<ToolResult>,
        /// Present on `end`: one line for people.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        summary: Option<String>,
        /// Tokens of the model call that chose this step (on `start`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        usage: Option<TokenUsage>,
        /// What that call cost in dollars, when the model's price is known (on `start`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        cost_usd: Option<f64>,
        /// How risky the step is rated, from the facts of the page it was chosen on (on `start`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        risk: Option<RiskLevel>,
        /// The skill that guided the step (on `start`): the first of the prompt's `<skills>`
        /// that allows its action.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        skill: Option<String>,
        /// Where the element the step acts on stands in the screenshot of the page it was
        /// chosen on (pixels of that screenshot; on `start`, when it is in view), so a
        /// replay can outline it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        target: Option<BoundingBox>,
        /// What the element the step acts on is called on the page (its accessible name or
        /// text, shortened; on `start`), so people read "Click “Sign in”", not an index. Left
        /// out when it holds personal data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        target_name: Option<String>,
    },
    /// A risky step waits for the person (task status `waiting_confirmation`), or any step in
    /// step-by-step mode; they answer with `confirm` (here, in the extension's side panel, or
    /// with `POST /api/agent/confirm`).
    ConfirmationRequested(ConfirmationRequest),
    /// Step `step` needs `site`, which the person has not allowed Mimo on (task status
    /// `waiting_permission`): the run goes on once they allow it in the extension's side panel
    /// (or all sites in its options).
    SiteAccessNeeded { step: u32, site: String },
    /// The person answered the confirmation of step `step`: run it (`approved`) or not. Step
    /// 0 is an MCP client's step, approved in that client's form (`by` is `mcp`).
    ConfirmationAnswered {
        step: u32,
        approved: bool,
        /// Where they answered: `web` (the web app or a script on its socket), `extension`
        /// (the side panel), `api` (`POST /api/agent/confirm`) or `mcp` (an MCP client's
        /// elicitation).
        by: String,
        /// Why they declined, as the model was told.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        reason: Option<String>,
    },
    /// Whether each step waits for the person (`set_step_mode`), replayed to every web app.
    #[serde(rename_all = "camelCase")]
    StepMode { step_by_step: bool },
    /// The task's switches for the local bridge (`set_bridge`), replayed to every web app.
    /// Whether a bridge is connected is the snapshot's (`snapshotSync`).
    BridgeMode { allow: bool, confirm: bool },
    /// The page was prepared for the model (loaded, screenshot, readability, element index).
    #[serde(rename_all = "camelCase")]
    PageObserved {
        /// The step the observation follows (0 before the first action's result).
        step: u32,
        url: String,
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        screenshot_artifact_id: Option<String>,
        /// How many interactive elements the index found.
        elements: u32,
        /// What could not be captured (`screenshot`, `readability`, `dom_index`).
        #[serde(default)]
        missing: Vec<String>,
        #[serde(default)]
        warnings: Vec<String>,
        /// A JavaScript dialog the page shows, waiting for an answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        dialog: Option<PageDialog>,
        /// The task's tabs when it has several, the observed one `current`.
        #[serde(default)]
        tabs: Vec<TaskTab>,
    },
    /// The person attached a file to the task.
    FileAttached { attachment: Attachment },
    /// Something the person should know that does not stop the task (the model took no
    /// screenshot and goes on reading pages as text; a screenshot could not be sent).
    Warning { message: String },
    /// A model call failed and is made again (seed 004 §7: retries are observable): retry
    /// `attempt` of at most `maxAttempts`, after `delayMs`, because of `reason` (`message` is
    /// what the provider or the gateway said). For `context_too_long` the context was compacted
    /// harder first (older steps summarised, page text shortened, older chat left out).
    #[serde(rename_all = "camelCase")]
    ModelRetry {
        attempt: u32,
        max_attempts: u32,
        reason: LlmErrorKind,
        message: String,
        #[ts(type = "number")]
        delay_ms: u64,
    },
    /// Replay after (re)connecting is complete; live events follow. Not sequenced.
    #[serde(rename_all = "camelCase")]
    Ready {
        #[ts(type = "number")]
        last_seq: u64,
    },
    /// Something the web app sent or asked for failed. Sent only to the socket concerned and not
    /// stored: failures that are part of the task's history are `structuredOutput` errors.
    Error { error: ErrorObject },
}
via_json_value_internal!(FrontendEvent, "type");

impl FrontendEvent {
    /// Whether the event belongs to the task's history (stored with a sequence number and
    /// replayed on reconnect) rather than being a view of current state or a reply to one socket.
    pub fn is_history(&self) -> bool {
        !matches!(
            self,
            FrontendEvent::SnapshotSync { .. }
                | FrontendEvent::Ready { .. }
                | FrontendEvent::Error { .. }
        )
    }
}

/// What actually goes on the web socket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct EventEnvelope {
    /// Position in the task's event log; absent for events that are not history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub seq: Option<u64>,
    pub task_id: String,
    /// Milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub at: u64,
    #[serde(flatten)]
    pub event: FrontendEvent,
}

/// Body of `GET /api/setup`: what the web app's first screen tells a new user about this
/// deployment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SetupInfo {
    /// The model the agent uses (`MIMO_LLM_MODEL`).
    pub model: String,
    /// A demo task that works with no model key (`make dev` with the scripted model serves a
    /// demo shop and sets `MIMO_DEMO_URL`); absent on a real deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub demo: Option<DemoTask>,
}

/// The demo task: a goal on the demo shop at `url`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DemoTask {
    pub url: String,
    pub goal: String,
}

impl DemoTask {
    /// The demo on the shop at `url` (its home page).
    pub fn at(url: &str) -> Self {
        DemoTask {
            url: url.to_owned(),
            goal: format!("Open the demo shop at {url}, find the blue mug and add two to the cart"),
        }
    }
}

/// Body of `POST /api/extension/task`: the side panel starts a task in its own browser, on
/// the tab the person is looking at (answered with [`NewTask`]). The task is bound to the
/// extension whose credential asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskHere {
    pub tab_id: ChromeId,
}

/// Body of `GET /api/task/id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NewTask {
    pub task_id: String,
}

/// Body of `GET /api/task/{taskId}`: where a task stands, without its history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TaskSummary {
    pub task_id: String,
    pub status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub selected_client_id: Option<String>,
    #[ts(type = "number")]
    pub created_at: u64,
    #[ts(type = "number")]
    pub updated_at: u64,
    /// Sequence number of the newest history event.
    #[ts(type = "number")]
    pub last_seq: u64,
    /// When the task's coordinator instance now in memory was constructed. It changes when the
    /// object hibernates and wakes, or the runtime restarts: state must survive both.
    #[ts(type = "number")]
    pub instance_started_at: u64,
}

/// A step waiting for the person: what it does, how risky it is and why, on which page, and
/// where its target is on the page's screenshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConfirmationRequest {
    pub step: u32,
    pub action: AgentAction,
    /// Why it needs a confirmation, and what it acts on.
    pub reason: String,
    /// How risky the step is rated.
    #[serde(default)]
    pub risk: RiskLevel,
    /// Each fact about the page that made it so, for people.
    #[serde(default)]
    pub facts: Vec<String>,
    /// The page it would act on.
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub title: String,
    /// The page as the model saw it, with where the target is on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub screenshot_artifact_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub target: Option<BoundingBox>,
    /// What the target is called on the page (see `toolUsed`'s `targetName`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub target_name: Option<String>,
    /// Held only because the task runs step by step (not for its risk): "Next step" runs it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub step_by_step: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wire form is `{"type", …fields}`, the tag written first, read in any order, nested
    /// in an envelope or alone, a variant holding a struct among them.
    #[test]
    fn events_are_read_and_written_with_their_type_among_their_fields() {
        let warning = FrontendEvent::Warning {
            message: "slow".into(),
        };
        assert_eq!(
            serde_json::to_string(&warning).unwrap(),
            r#"{"type":"warning","message":"slow"}"#
        );
        let read: FrontendEvent =
            serde_json::from_str(r#"{"message":"slow","type":"warning"}"#).unwrap();
        assert_eq!(read, warning);
        let asked = FrontendEvent::ConfirmationRequested(
            serde_json::from_value(serde_json::json!({
                "step": 3, "action": {"back": {}}, "reason": "it leaves the page",
                "url": "https://a.example/", "title": "A",
            }))
            .unwrap(),
        );
        let envelope = EventEnvelope {
            seq: Some(7),
            task_id: "t1".into(),
            at: 5,
            event: asked,
        };
        let text = serde_json::to_string(&envelope).unwrap();
        assert!(
            text.contains(r#""type":"confirmationRequested","step":3"#),
            "{text}"
        );
        assert_eq!(
            serde_json::from_str::<EventEnvelope>(&text).unwrap(),
            envelope
        );
        let error = |text: &str| {
            serde_json::from_str::<FrontendEvent>(text)
                .unwrap_err()
                .to_string()
        };
        assert!(error(r#"{"type":"fly"}"#).contains("unknown variant `fly`"));
        assert!(error(r#"{"message":"x"}"#).contains("missing field `type`"));
        assert!(error(r#"{"type":1}"#).contains("`type` must be a string"));
        assert!(error(r#""warning""#).contains("expected an object"));
        assert!(error(r#"{"type":"warning"}"#).contains("missing field `message`"));
    }

    /// An event is flattened into its envelope: a field of the same name as the envelope's
    /// (`seq`, `taskId`, `at`) would be sent twice and one of them lost on the way.
    #[test]
    fn no_event_field_shares_a_name_with_the_envelope() {
        let cfg = ts_rs::Config::new().with_large_int("number");
        let clashes = |decl: &str| -> Vec<String> {
            decl.split("{ \"type\":")
                .skip(1)
                .flat_map(|variant| {
                    // The variant's own fields: up to its first nested or closing brace.
                    let top_level = variant.split(['{', '}']).next().unwrap_or_default();
                    top_level
                        .split([',', ' '])
                        .map(|word| word.trim_end_matches(':').trim_end_matches('?'))
                        .filter(|word| ["seq", "taskId", "at"].contains(word))
                        .map(|word| format!("{word} in {top_level}"))
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        assert_eq!(
            clashes(r#"{ "type": "forked", taskId: string, } | { "type": "x", at?: number, }"#)
                .len(),
            2,
            "the check finds a clash"
        );
        assert_eq!(clashes(&FrontendEvent::decl(&cfg)), Vec::<String>::new());
    }
}
