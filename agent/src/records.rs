//! The task's records as they are stored: plain data, shared by the conversation, the run, the
//! prompt and the coordinator's storage, and depending on none of them.

use std::collections::BTreeMap;

use mimo_protocol::{
    ActionCommand, ActionOutcome, AgentOutput, BrowserAction, ChatMessage, ElementFacts,
    PageDialog, TaskStatus, TaskTab, TokenUsage, ToolResult,
};
use serde::{Deserialize, Serialize};

use crate::llm;

/// The task row as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRecord {
    pub task_id: String,
    pub status: TaskStatus,
    pub title: Option<String>,
    pub selected_client_id: Option<String>,
    /// The assistant message being streamed, if a turn is in progress. Persisted so that a
    /// turn cut off by a restart is noticed and re-run.
    pub current_turn: Option<String>,
    /// How many message ids were handed out; ids are never reused, even for a turn that a
    /// restart cut off before its message was stored.
    pub message_ids_issued: u32,
    pub created_at: u64,
    pub updated_at: u64,
    /// The person's tab the next browser run starts on ("continue on this page"), until a run
    /// takes it.
    pub start_tab: Option<i32>,
    /// The answer format of the request being answered (a JSON Schema), if it gave one: `done`'s
    /// data must match it.
    pub answer_schema: Option<serde_json::Value>,
    /// The task's own allowed and blocked sites, checked as well as the deployment's.
    pub domains: mimo_protocol::DomainPolicy,
    /// Step-by-step mode: each step waits for the person's "Next step".
    pub step_by_step: bool,
    /// The task and message this task was forked from, if it is a fork.
    pub forked_from: Option<mimo_protocol::task::ForkedFrom>,
    /// The model is offered the local bridge's actions (files and commands on the person's
    /// computer) when the task's extension has a bridge connected. Off until the person allows
    /// it for the task.
    pub allow_bridge: bool,
    /// Each write, edit and command through the bridge waits for the person's confirmation.
    pub confirm_bridge: bool,
    /// The bounds of the script that carries out this task's actions, if it asked for its own
    /// when it started the task (else the deployment's).
    pub script_bounds: Option<ScriptBounds>,
}

/// A script's bounds: to take an action (`next`), and to report it (`report`). Until it takes
/// one, an action waits for the script as long as for its taking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScriptBounds {
    pub take_ms: u64,
    pub report_ms: u64,
}

impl Default for ScriptBounds {
    fn default() -> Self {
        ScriptBounds {
            take_ms: 120_000,
            report_ms: 600_000,
        }
    }
}

/// A stored chat message and its place in the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    /// Order in the conversation. An assistant reply keeps the place reserved when its turn
    /// started, so messages the person sends while it streams come after it.
    pub position: u32,
    pub message: ChatMessage,
}

/// A long chat compacted (seed 004 §5 "compaction summary"): the model's summary of the
/// conversation up to and including position `up_to`, which later prompts carry in place of
/// those messages. Each compaction is kept; the latest one is used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatSummary {
    pub up_to: u32,
    pub text: String,
    /// How many messages it stands for, those of the summary before it included.
    pub messages: u32,
    pub created_at: u64,
}

/// How much context a run may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The model's context window in tokens, minus what its answer needs.
    pub context_tokens: usize,
    /// Longest page text (element list, readable content) in characters, before compaction.
    pub text_limit: usize,
}

impl Budget {
    /// The budget after the model refused `overflows` prompts as longer than its context
    /// window: halved each time (the page text to no less than [`MIN_TEXT_LIMIT`] characters).
    pub fn compacted(self, overflows: u32) -> Budget {
        let halve = |n: usize| n.checked_shr(overflows).unwrap_or(0);
        Budget {
            context_tokens: halve(self.context_tokens),
            text_limit: halve(self.text_limit).max(MIN_TEXT_LIMIT.min(self.text_limit)),
        }
    }
}

/// The shortest page text [`Budget::compacted`] leaves.
pub const MIN_TEXT_LIMIT: usize = 500;

impl Default for Budget {
    fn default() -> Self {
        Budget {
            context_tokens: 60_000,
            text_limit: 10_000,
        }
    }
}

/// How a run goes (`MIMO_AGENT_MAX_STEPS`, `MIMO_AGENT_CONTEXT_TOKENS`,
/// `MIMO_AGENT_TEXT_LIMIT`, `MIMO_AGENT_CONFIRM_RISKY`, `MIMO_AGENT_VISION`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunConfig {
    pub max_steps: u32,
    pub budget: Budget,
    /// Whether irreversible steps wait for the person (`MIMO_AGENT_CONFIRM_RISKY`, on).
    pub confirm_risky: bool,
    /// Whether the model is shown the latest page's screenshot (`MIMO_AGENT_VISION`, resolved
    /// against the model).
    pub vision: bool,
    /// How many times in a row the same action, or the same cycle of up to 4 actions, on pages
    /// that do not change ends the run (`MIMO_AGENT_MAX_REPEATS`); the model is warned at 3
    /// and 5.
    pub max_repeats: u32,
    /// The most tokens (input and output) a request may use, its sub-agents and every other
    /// model call made for it included (`MIMO_AGENT_MAX_TOKENS`).
    pub max_tokens: Option<u64>,
    /// The most a request may cost, in millionths of a dollar (`MIMO_AGENT_MAX_COST`, dollars).
    pub max_cost_micros: Option<u64>,
    /// What the model's tokens cost (`MIMO_LLM_PRICE`, or known for common models).
    pub price: Option<crate::llm::Price>,
    /// Where a run may go (`MIMO_ALLOWED_DOMAINS`, `MIMO_BLOCKED_DOMAINS`).
    pub domains: mimo_protocol::DomainPolicy,
    /// How steps are rated and which wait for the person (`MIMO_RISK_RULES`).
    pub risk: crate::risk::RiskRules,
    /// What personal data the extension keeps out of evidence and of the model's text
    /// (`MIMO_REDACT_EVIDENCE`, `MIMO_REDACT_MODEL`, `MIMO_REDACT_KINDS`).
    pub redaction: mimo_protocol::RedactionPolicy,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            max_steps: 40,
            budget: Budget::default(),
            confirm_risky: true,
            vision: false,
            max_repeats: 8,
            max_tokens: None,
            max_cost_micros: None,
            price: None,
            domains: mimo_protocol::DomainPolicy::default(),
            risk: crate::risk::RiskRules::default(),
            redaction: mimo_protocol::RedactionPolicy::default(),
        }
    }
}

/// One step: what the model chose and how it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// 1-based.
    pub number: u32,
    /// The model turn that chose it; the step's actions are named after it.
    pub turn_id: String,
    pub tool_call_id: String,
    /// Text the model wrote before its tool call.
    pub thought: String,
    pub output: AgentOutput,
    pub result: Option<ToolResult>,
    pub usage: TokenUsage,
    /// `url "title"` of the page after the step (the placeholder for older pages).
    pub page: Option<String>,
    /// The person confirmed this (risky) step.
    #[serde(default)]
    pub confirmed: bool,
    /// For a `type` step, the facts of the field it typed into, as they were when it ran: a
    /// later Enter sends that field's form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed_into: Option<ElementFacts>,
}

/// The prepared page the model acts on.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    pub after_step: u32,
    pub url: String,
    pub title: String,
    /// The element index in its compact text form.
    pub elements: String,
    pub element_count: u32,
    /// The readable content (markdown or text).
    pub content: String,
    pub screenshot_artifact_id: Option<String>,
    /// The screenshot's size in pixels (0 when the extension could not tell), for what it
    /// costs the model.
    #[serde(default)]
    pub screenshot_width: u32,
    #[serde(default)]
    pub screenshot_height: u32,
    /// The screenshot's pixels per CSS pixel, when the extension said: points the model reads
    /// off it and element boxes are in its pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot_scale: Option<f64>,
    pub missing: Vec<String>,
    pub warnings: Vec<String>,
    /// A JavaScript dialog open on the page: until it is answered nothing else there can be used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog: Option<PageDialog>,
    /// The task's tabs, the observed one `current`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tabs: Vec<TaskTab>,
    /// Facts about the listed elements that bear on risk, by index (only those that have any).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub facts: BTreeMap<u32, ElementFacts>,
    /// Where the listed elements within the screenshot are (x, y, width, height in its CSS
    /// pixels), by index: a confirmation shows its target there.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub boxes: BTreeMap<u32, [i32; 4]>,
    /// What the listed elements are called (accessible name or text, shortened), by index, for
    /// people's step titles; none that holds personal data.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub names: BTreeMap<u32, String>,
    /// Where the shown part of `content` starts (characters), moved on by `read_page`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub content_from: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What the run waits for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
// One per run: the room an action takes in the other phases costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub enum Phase {
    /// The model's reply (the task's current turn).
    Thinking,
    /// An extension to be bound to the task.
    Binding,
    /// The person's confirmation of the latest step, which looks irreversible.
    Confirming,
    /// An action, submitted for `purpose`.
    #[serde(rename_all = "camelCase")]
    Acting {
        action_id: String,
        command: ActionCommand,
        purpose: Purpose,
    },
    /// An action, submitted for `purpose`, did not run because the person has not allowed Mimo
    /// on `site`: it is sent again once they do (or resume the task), and the run fails at
    /// `until` if they never do.
    #[serde(rename_all = "camelCase")]
    WaitingSite {
        site: String,
        command: ActionCommand,
        purpose: Purpose,
        until: u64,
    },
    Finished,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// Opening the task's tab (with the step's URL when the step navigates).
    TaskStart,
    /// The step's own action.
    Step,
    /// Preparing the page for the model (`browser_observe`). Runs stored while the page was
    /// prepared one capture at a time load with this purpose, and observe again.
    #[serde(
        alias = "wait_loaded",
        alias = "screenshot",
        alias = "readability",
        alias = "dom_index"
    )]
    Observe,
}

impl Purpose {
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Purpose::TaskStart => "start",
            Purpose::Step => "act",
            Purpose::Observe => "look",
        }
    }
}

/// A browser run, as persisted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRun {
    /// Position of the message that started the run: the chat up to it is the run's context.
    pub goal_position: u32,
    pub phase: Phase,
    pub steps: Vec<Step>,
    /// The latest prepared page.
    pub observation: Option<Observation>,
    /// The page being prepared.
    pub preparing: Option<Observation>,
    /// Whether the task's tab is open (`task_start` succeeded and it was not closed since).
    pub tab_open: bool,
    /// Retries of the model call for the next step.
    pub llm_retries: u32,
    /// What the model must be told before its next step: its last malformed reply and what was
    /// wrong with it, or that it goes round in circles.
    pub corrections: Vec<llm::ChatMessage>,
    /// Messages the person sent during the run.
    pub updates: Vec<String>,
    /// The model refused a screenshot: the rest of the run shows it pages as text only.
    #[serde(default)]
    pub images_refused: bool,
    /// The latest steps' choices, oldest first, each a digest of the action and of the page it
    /// was chosen on (digits and times in its text left out): one choice, or a cycle of up to 4,
    /// repeated on pages that do not change is going round in circles
    /// (`conversation::limits`). A run stored before kept only the latest (`lastChoice`,
    /// now ignored): it starts counting again.
    #[serde(default)]
    pub choices: Vec<u64>,
    /// How many times in a row the latest step completed the choice or cycle it repeats (1:
    /// it repeats nothing).
    #[serde(default)]
    pub repeats: u32,
    /// The tokens every model call of the request used so far — the request being the
    /// person's message at `goal_position`: this run's steps and the calls that were retried or
    /// corrected, the master's calls and every sub-agent's run, and the calls beside the chat
    /// (title, summary) answered meanwhile. Carried from each run of the request to the next;
    /// the budget (`MIMO_AGENT_MAX_TOKENS`, `MIMO_AGENT_MAX_COST`) is checked against it.
    #[serde(default)]
    pub request_usage: TokenUsage,
    /// Answers (`done` data) that did not match the answer format so far.
    #[serde(default)]
    pub answer_attempts: u32,
    /// How many of its prompts the model refused as longer than its context window: each
    /// halved the run's context budget for the rest of the run ([`Budget::compacted`]).
    #[serde(default)]
    pub overflows: u32,
    /// The browser job this run does for the chat model, when it is a sub-agent's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtask: Option<Subtask>,
    /// The chat model's request while it delegates browser jobs: kept with the run so that it
    /// survives a restart, and carried from each sub-task's run to the next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegation: Option<Delegation>,
    /// Actions sent again after the person allowed a site: each gets an id of its own.
    #[serde(default)]
    pub sent_again: u32,
}

/// A browser job the chat model handed to a sub-agent (`browser_task`, seed 003 §7): the run
/// works toward `goal` alone, within its own steps, and its closing summary goes back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subtask {
    /// 1-based within the request.
    pub number: u32,
    pub tool_call_id: String,
    pub goal: String,
    pub max_steps: u32,
    #[serde(default)]
    pub answer_schema: Option<serde_json::Value>,
}

/// The chat model's side of a delegated request (seed 003 §2): its replies with their tool
/// calls and the results that came back, which its next call is shown after the chat.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delegation {
    pub transcript: Vec<llm::ChatMessage>,
    /// `browser_task` calls not answered yet, in order: the first is the one running.
    pub pending: Vec<llm::ToolCall>,
    /// Sub-tasks started for this request so far.
    pub started: u32,
}

impl Delegation {
    /// Call `tool_call_id` is answered with `result`: the master sees it on its next call.
    pub fn answered(&mut self, tool_call_id: &str, result: &mimo_protocol::BrowserTaskResult) {
        self.pending.retain(|c| c.id != tool_call_id);
        self.transcript.push(llm::ChatMessage::tool_result(
            tool_call_id,
            serde_json::to_string(result).unwrap_or_default(),
        ));
    }
}

impl AgentRun {
    /// A sub-agent's close: how it ended, with the steps it took and the page it ended on.
    pub fn close(
        &self,
        status: mimo_protocol::SubtaskStatus,
        summary: String,
        data: Option<serde_json::Value>,
        error: Option<mimo_protocol::ErrorObject>,
    ) -> mimo_protocol::BrowserTaskResult {
        mimo_protocol::BrowserTaskResult {
            status,
            summary,
            data,
            steps: self.steps.len() as u32,
            url: self.observation.as_ref().map(|o| o.url.clone()),
            error,
        }
    }

    /// A run toward the message at `goal_position`, before its first step.
    pub fn new(goal_position: u32) -> Self {
        AgentRun {
            goal_position,
            phase: Phase::Thinking,
            steps: Vec::new(),
            observation: None,
            preparing: None,
            tab_open: false,
            llm_retries: 0,
            corrections: Vec::new(),
            updates: Vec::new(),
            images_refused: false,
            choices: Vec::new(),
            repeats: 0,
            request_usage: TokenUsage::default(),
            answer_attempts: 0,
            overflows: 0,
            subtask: None,
            delegation: None,
            sent_again: 0,
        }
    }

    pub fn is_active(&self) -> bool {
        self.phase != Phase::Finished
    }
}

/// Where a browser action is in its life (see `crate::actions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionState {
    /// Waiting its turn, or waiting to be retried.
    Pending,
    /// Delivered to the extension, not yet acknowledged.
    Sent,
    /// The extension has it and is running it.
    Acked,
    /// It timed out, and may have run: the extension is asked what became of it.
    Checking,
    Succeeded,
    Failed,
    TimedOut,
    Canceled,
}

impl ActionState {
    pub fn is_final(self) -> bool {
        matches!(
            self,
            ActionState::Succeeded
                | ActionState::Failed
                | ActionState::TimedOut
                | ActionState::Canceled
        )
    }
}

/// One action as stored and as shown to the web app and the developer API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionRecord {
    pub action_id: String,
    pub task_id: String,
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_id: Option<i32>,
    pub command: ActionCommand,
    pub state: ActionState,
    /// The attempt dispatched last (0 before the first dispatch).
    pub attempt: u32,
    pub created_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acked_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<u64>,
    /// When the current wait ends: the ack or execution timeout, or the retry time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<ActionOutcome>,
}

impl ActionRecord {
    /// The record as it may be kept and shown: its outcome without what only the model may
    /// read ([`ActionOutcome::kept`]).
    pub fn kept(mut self) -> Self {
        self.outcome = self.outcome.map(ActionOutcome::kept);
        self
    }

    /// The action as its client receives it, given `budget_ms` to carry it out.
    pub fn dispatch(&self, budget_ms: Option<u64>) -> BrowserAction {
        BrowserAction {
            action_id: self.action_id.clone(),
            attempt: self.attempt,
            task_id: self.task_id.clone(),
            client_id: self.client_id.clone(),
            tab_id: self.tab_id,
            budget_ms,
            command: self.command.clone(),
        }
    }
}
