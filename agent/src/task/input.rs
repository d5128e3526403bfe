//! What the coordinator hands the task: every input, who waits for its answer, and why an
//! extension is asked for.

use mimo_protocol::task::ForkedFrom;
use mimo_protocol::{ChatMessage, FrontendMessage};
use serde::{Deserialize, Serialize};

use super::*;

/// Something that happened to the task.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// The task is created (nothing happens when it exists).
    Create { task_id: String },
    /// The person deletes the task. `unreadable`: the id the request named, given only when
    /// the task's records could not be read (such a task is deleted by that name).
    Delete { unreadable: Option<String> },
    /// What [`Effect::Erase`] said to erase is gone: the machine starts over as a task not yet
    /// created. (Not before: an erasure that failed leaves the task as it was, to be deleted
    /// again.)
    Erased,
    /// The task is created as a fork of another (nothing happens when it exists).
    CreateFork { task_id: String, seed: ForkSeed },
    /// A fork of this task was made at one of its messages.
    Forked { task_id: String, message_id: String },
    /// A web app's socket was accepted and has replayed the history.
    WebConnected,
    UserMessage {
        content: String,
        client_message_id: Option<String>,
        answer_schema: Option<serde_json::Value>,
    },
    /// The person's answer for a step waiting for confirmation.
    Confirm {
        step: u32,
        approve: bool,
        reason: Option<String>,
        /// Where the person answered.
        by: Confirmer,
    },
    /// Step-by-step mode on or off.
    SetStepMode(bool),
    /// The script that starts the task asks for its own bounds (ms; `None`: the deployment's).
    SetScriptBounds {
        take_ms: Option<u64>,
        report_ms: Option<u64>,
    },
    /// Answer the latest request again, keeping the answer as an alternative.
    Regenerate,
    /// Make this alternative answer to the latest request the current one.
    SelectAnswer { message_id: String },
    /// The local bridge's switches: its actions allowed, writes/edits/commands confirmed.
    SetBridge { allow: bool, confirm: bool },
    /// The person chose an extension for the task.
    SelectClient { client_id: String },
    /// A task started in one request ([`Start`]).
    Start(Start),
    /// Takeover, resume or stop, from the web app or the extension's overlay.
    Control(TaskControl),
    /// The skill library's answer to an [`Effect::LookupSkills`].
    SkillsFound {
        turn_id: String,
        result: Result<Vec<mimo_protocol::Skill>, ErrorObject>,
    },
    /// One event of a model call's stream ([`Effect::CallLlm`]).
    Llm {
        turn_id: String,
        event: llm::LlmEvent,
    },
    /// The model's answer to an [`Effect::AskModel`]: the text of its reply, `None` when the
    /// call failed, and the tokens it used (counted into the request's budget, a failed
    /// call's too).
    ModelAnswered {
        purpose: SideCall,
        text: Option<String>,
        usage: TokenUsage,
    },
    /// An ack, result or attempt status from the extension, relayed by the registry.
    Extension(ActionEvent),
    /// The person asks that the next browser run start on one of their tabs.
    StartOnTab(Option<i32>),
    /// The person set the task's own allowed and blocked sites.
    SetDomains {
        allowed: Vec<String>,
        blocked: Vec<String>,
    },
    /// The task's own secrets changed (stored or deleted, from the web app): the names the
    /// model is told from its next call on.
    SecretsChanged(Vec<mimo_protocol::SecretInfo>),
    /// An upload of an artifact of the task was presigned.
    ArtifactGranted(ArtifactGrant),
    /// An artifact's upload completed (a file the person attached is attached now).
    ArtifactStored(ArtifactStored),
    /// An [`Effect::Dispatch`] could not be handed to the extension.
    DispatchFailed {
        action_id: String,
        error: ErrorObject,
    },
    /// The registry's answer to an [`Effect::Bind`].
    Bound {
        purpose: BindPurpose,
        result: Result<Binding, ErrorObject>,
    },
    /// The developer API submits an action for the task's extension.
    Submit {
        action_id: String,
        tab_id: Option<i32>,
        command: ActionCommand,
        /// An MCP client's step: rated as the agent's are ([`client_steps`]).
        rated: bool,
        /// What happens to a rated step the person must confirm.
        consent: ClientConsent,
    },
    /// The alarm rang: what is due runs (held model calls, restart recovery, timeouts).
    Alarm,
    /// The registry pushes a browser snapshot of an extension.
    Snapshot(SnapshotPush),
}

/// A task started in one request — by a script (`POST /api/agent/start`), by an MCP client's
/// run, from the side panel ("start here") — in this order: its bounds and mode, the extension
/// it runs in, the tab it starts on, its goal. The first refusal is the answer, and stops the
/// rest. The goal's model call is held for the alarm whoever asks, so that the caller has its
/// answer (the task's id) at once, not after the model's first turn.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Start {
    /// The script's own bounds (ms; `None`: the deployment's), when it asks for either.
    pub take_ms: Option<u64>,
    pub report_ms: Option<u64>,
    pub step_by_step: bool,
    /// The extension (a browser, or a script polling as one); the rest waits for its binding.
    pub client_id: Option<String>,
    /// The tab of the person's the first run starts on.
    pub on_tab: Option<i32>,
    pub goal: Option<Goal>,
}

/// A goal, as a message of the person's.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    pub content: String,
    pub answer_schema: Option<serde_json::Value>,
}

impl Start {
    /// A script's start (`POST /api/agent/start`), the script itself (`client_id`, polling) the
    /// extension its actions go to.
    pub fn script(start: mimo_protocol::script::ScriptStart, client_id: String) -> Start {
        Start {
            take_ms: start.take_timeout_ms,
            report_ms: start.report_timeout_ms,
            step_by_step: start.step_by_step,
            client_id: Some(client_id),
            on_tab: None,
            goal: Some(Goal {
                content: start.goal,
                answer_schema: start.answer_schema,
            }),
        }
    }
}

impl Input {
    /// What a frame of the web app's socket (or the side panel's) asks of the task; `by`: who
    /// answers a confirmation on that socket.
    pub fn from_web(message: FrontendMessage, by: Confirmer) -> Input {
        match message {
            FrontendMessage::UserMessage {
                content,
                client_message_id,
                answer_schema,
            } => Input::UserMessage {
                content,
                client_message_id,
                answer_schema,
            },
            FrontendMessage::Stop {} => Input::Control(TaskControl::Stop),
            FrontendMessage::Pause {} => Input::Control(TaskControl::Pause),
            FrontendMessage::Regenerate {} => Input::Regenerate,
            FrontendMessage::SelectAnswer { message_id } => Input::SelectAnswer { message_id },
            FrontendMessage::Resume {} => Input::Control(TaskControl::Resume),
            FrontendMessage::TakeOver {} => Input::Control(TaskControl::Takeover),
            FrontendMessage::Confirm {
                step,
                approve,
                reason,
            } => Input::Confirm {
                step,
                approve,
                reason,
                by,
            },
            FrontendMessage::SetStepMode { step_by_step } => Input::SetStepMode(step_by_step),
            FrontendMessage::SetBridge { allow, confirm } => Input::SetBridge { allow, confirm },
            FrontendMessage::SelectClient { client_id } => Input::SelectClient { client_id },
            FrontendMessage::StartOnTab { tab_id } => Input::StartOnTab(tab_id),
            FrontendMessage::SetDomains { allowed, blocked } => {
                Input::SetDomains { allowed, blocked }
            }
        }
    }
}

/// Who waits for the answer to an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// A socket of the web app, or the alarm: model calls are streamed at once.
    Direct,
    /// Another object (the registry relaying the extension's frame) that must get its answer
    /// as soon as the input is recorded, not after a model turn: model calls are held for the
    /// alarm, which runs them soon. Should the object be evicted first, the alarm's recovery
    /// finds the turn cut off and runs it.
    Relay,
}

/// Why an extension is asked for.
#[derive(Debug, Clone, PartialEq)]
// One at a time, while an extension is bound: its size does not matter.
#[allow(clippy::large_enum_variant)]
pub enum BindPurpose {
    /// The browser run needs one: a refusal fails the run.
    Run,
    /// The person (or a web app connecting to a task without one) asked: a refusal is the
    /// answer to them.
    Requested,
    /// A task started in one request goes on once it has its extension: the rest of the
    /// [`Start`].
    Start(Box<Start>),
    /// The developer API submits an action once the task has an extension.
    Submit {
        action_id: String,
        tab_id: Option<i32>,
        command: ActionCommand,
    },
}

/// What a fork starts from, as the task forked hands it to the new one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkSeed {
    pub forked_from: ForkedFrom,
    pub title: Option<String>,
    /// The conversation up to and including the message forked at, in order.
    pub messages: Vec<ChatMessage>,
    /// The compaction of those messages, if the task had one before the message forked at:
    /// its `up_to` is an index into `messages`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<ChatSummary>,
}
