//! One task's conversation: user messages in, streamed assistant turns out.
//!
//! [`Conversation`] is the sans-I/O heart of the task coordinator. Each input (a user message,
//! an LLM stream event, stop, a client selection, a restart) returns the task's [`Effect`]s, in
//! order: the task routes them (an action to its queue) and saves what the input changed of the
//! task's record and the run. The shell never decides anything itself.

use mimo_protocol::bridge::BridgeInfo;
use mimo_protocol::{
    limits::MAX_USER_MESSAGE_BYTES, Attachment, BrowserSnapshot, ChatMessage, ChatRole,
    DomainPolicy, ErrorCode, ErrorObject, FrontendEvent, OutputStatus, TaskStatus, TokenUsage,
};
use serde_json::json;

use crate::records::{AgentRun, Budget, ChatSummary, Phase, RunConfig, StoredMessage, TaskRecord};
use crate::skills::{self, SkillQuery};
use crate::task::{Compaction, Effect, LlmCall, PageImage, SideCall};
use crate::{answer_format, llm, prompt, status::can_transition};

mod alternatives;
mod compaction;
mod consent;
mod context;
mod controls;
mod delegation;
mod fork;
mod limits;
mod retry;
mod settings;
mod title;
mod turn;

pub use consent::{Asker, Verdict};

mod run;
pub use run::SITE_WAIT_MS;

pub use delegation::MAX_SUBTASKS;
pub(crate) use retry::next_attempt;
pub use retry::{llm_backoff_ms, LLM_RETRIES, MAX_OVERFLOWS};
use title::TITLE_CHARS;

/// The person's answer to a confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmAnswer {
    pub approve: bool,
    /// Why they declined (passed to the model).
    pub reason: Option<String>,
    /// Where they answered.
    pub by: crate::credentials::Confirmer,
}

#[derive(Debug)]
struct Turn {
    message_id: String,
    position: u32,
    text: String,
    /// Retries of the LLM call made so far.
    retries: u32,
    /// How often the model refused this turn's chat as too long ([`next_attempt`]).
    overflows: u32,
    tool_calls: Vec<llm::ToolCall>,
    usage: TokenUsage,
}

/// The skills of a goal and a page, as the skill library answered.
#[derive(Debug)]
struct SkillsInUse {
    query: SkillQuery,
    skills: Vec<mimo_protocol::Skill>,
}

/// A model call waiting for the skills of `query`.
#[derive(Debug)]
struct WaitingCall {
    turn_id: String,
    delay_ms: u64,
    query: SkillQuery,
}

#[derive(Debug)]
pub struct Conversation {
    pub(crate) task: TaskRecord,
    pub(crate) history: Vec<StoredMessage>,
    turn: Option<Turn>,
    /// The browser run of the latest message that needed the browser.
    pub(crate) run: Option<AgentRun>,
    pub(crate) config: RunConfig,
    /// The files the person attached to the task.
    pub(crate) attachments: Vec<Attachment>,
    /// The bound browser's windows and tabs, as last synced: the person's own tabs.
    pub(crate) browser: Option<BrowserSnapshot>,
    /// The secrets the model may type by placeholder: names and domains, never values.
    pub(crate) secrets: Vec<mimo_protocol::SecretInfo>,
    /// The skills in the model's prompt: those of the goal and page it was last asked about.
    /// Not stored: after a restart the next call looks them up again.
    skills: Option<SkillsInUse>,
    /// The model call waiting for the skill library's answer.
    waiting_for_skills: Option<WaitingCall>,
    /// The model call held while the task is paused (turn, delay): made on resume. Not stored:
    /// after a restart the cut-off turn is re-run, and held again.
    paused_call: Option<(String, u64)>,
    /// The latest compaction of the conversation: later prompts carry it in place of the
    /// messages it stands for.
    summary: Option<ChatSummary>,
    /// The compaction whose summary the model is writing. Not stored: after a restart the
    /// next answer asks again.
    summarizing: Option<Compaction>,
    /// What the latest request's model calls used before it has a run to keep it (its first
    /// call, until that call starts the run; a request answered in chat keeps it only here).
    unrun_usage: TokenUsage,
}

impl Conversation {
    pub fn new(task_id: String, now: u64) -> Self {
        let task = TaskRecord {
            task_id,
            status: TaskStatus::Created,
            title: None,
            selected_client_id: None,
            current_turn: None,
            message_ids_issued: 0,
            created_at: now,
            updated_at: now,
            start_tab: None,
            answer_schema: None,
            domains: DomainPolicy::default(),
            step_by_step: false,
            forked_from: None,
            allow_bridge: false,
            confirm_bridge: true,
            script_bounds: None,
        };
        Self {
            task,
            history: Vec::new(),
            turn: None,
            run: None,
            config: RunConfig::default(),
            attachments: Vec::new(),
            browser: None,
            secrets: Vec::new(),
            skills: None,
            waiting_for_skills: None,
            paused_call: None,
            summary: None,
            summarizing: None,
            unrun_usage: TokenUsage::default(),
        }
    }

    pub fn with_config(mut self, config: RunConfig) -> Self {
        self.config = config;
        self
    }

    /// Rebuilds the conversation from storage (after eviction or a restart). Call
    /// [`Conversation::recover`] before feeding it new input.
    pub fn restore(
        task: TaskRecord,
        mut history: Vec<StoredMessage>,
        run: Option<AgentRun>,
    ) -> Self {
        history.sort_by_key(|m| m.position);
        Self {
            task,
            history,
            turn: None,
            run,
            config: RunConfig::default(),
            attachments: Vec::new(),
            browser: None,
            secrets: Vec::new(),
            skills: None,
            waiting_for_skills: None,
            paused_call: None,
            summary: None,
            summarizing: None,
            unrun_usage: TokenUsage::default(),
        }
    }

    pub fn with_attachments(mut self, attachments: Vec<Attachment>) -> Self {
        self.attachments = attachments;
        self
    }

    /// A file the person attached: the model is told of it from its next call on, the web
    /// app at once. The same file told twice (a repeated upload's report) is one file.
    pub fn file_attached(&mut self, attachment: Attachment) -> Vec<Effect> {
        if let Some(known) = self
            .attachments
            .iter_mut()
            .find(|a| a.artifact_id == attachment.artifact_id)
        {
            *known = attachment;
            return Vec::new();
        }
        self.attachments.push(attachment.clone());
        vec![Effect::Emit(FrontendEvent::FileAttached { attachment })]
    }

    pub fn task(&self) -> &TaskRecord {
        &self.task
    }

    pub fn history(&self) -> impl Iterator<Item = &ChatMessage> {
        self.history.iter().map(|m| &m.message)
    }

    pub fn is_current_turn(&self, turn_id: &str) -> bool {
        self.turn.as_ref().is_some_and(|t| t.message_id == turn_id)
    }

    /// Whether a stored turn was cut off (the process running it is gone) and must be re-run.
    /// A model call of this object is under way (or waits for its turn to be made).
    pub fn in_turn(&self) -> bool {
        self.turn.is_some()
    }

    pub fn needs_recovery(&self) -> bool {
        self.task.current_turn.is_some() && self.turn.is_none()
    }

    /// Closes a turn that a restart cut off and runs it again, so no user message goes
    /// unanswered. The web app sees the old message finish and a new one stream.
    pub fn recover(&mut self, now: u64) -> Vec<Effect> {
        let Some(interrupted) = self
            .task
            .current_turn
            .clone()
            .filter(|_| self.turn.is_none())
        else {
            return Vec::new();
        };
        let mut effects = vec![Effect::Emit(FrontendEvent::ChatDelta {
            message_id: interrupted,
            delta: String::new(),
            finished: true,
        })];
        self.task.current_turn = None;
        if self
            .run
            .as_ref()
            .is_some_and(|r| r.phase == Phase::Thinking)
        {
            effects.extend(self.think(0, now));
        } else if self.master_waits() {
            // The master's answer after its sub-tasks was cut off: it is asked again, and the
            // sub-tasks are not run again.
            let turn_id = self.open_turn();
            effects.extend(self.call_model(turn_id, 0, now));
        } else if self.awaits_reply() {
            effects.extend(self.start_turn(now));
        }
        effects
    }

    /// The bridge the model may use: the task allows it and its extension has one connected.
    pub(crate) fn usable_bridge(&self) -> Option<&BridgeInfo> {
        let bridge = self.browser.as_ref()?.bridge.as_ref()?;
        self.task.allow_bridge.then_some(bridge)
    }

    /// Why the task may not go to `url`: the deployment's rules, then its own.
    pub(crate) fn domain_refusal(&self, url: &str) -> Option<String> {
        self.config
            .domains
            .refusal(url)
            .or_else(|| self.task.domains.task_refusal(url))
    }

    /// The current status as an event (sent to a web socket on connect).
    pub fn status_event(&self) -> Effect {
        Effect::Emit(FrontendEvent::TaskStatus {
            status: self.task.status,
            title: self.task.title.clone(),
            selected_client_id: self.task.selected_client_id.clone(),
        })
    }

    /// Moves to `to` if the state machine allows it; a refused move changes nothing.
    pub(crate) fn transition(&mut self, to: TaskStatus, now: u64) -> Vec<Effect> {
        if !can_transition(self.task.status, to) {
            return Vec::new();
        }
        self.task.status = to;
        self.task.updated_at = now;
        vec![self.status_event()]
    }

    /// Puts `message` at the end of the history; what storage is to keep.
    pub(crate) fn append(&mut self, message: ChatMessage) -> StoredMessage {
        let stored = StoredMessage {
            position: self.next_position(),
            message,
        };
        self.history.push(stored.clone());
        stored
    }

    /// Stores a message of the history (new, or changed), with what storing it makes due
    /// ([`Conversation::side_calls`]).
    fn save_message(&mut self, stored: StoredMessage) -> Vec<Effect> {
        let mut effects = self.side_calls(std::slice::from_ref(&stored));
        effects.insert(0, Effect::SaveMessage(stored));
        effects
    }

    /// What storing these messages of the history asks of the model beside the conversation:
    /// the task's title after its first answer, and a summary of the earlier conversation
    /// once it grew too long for the context (each answer may make it so).
    fn side_calls(&mut self, saved: &[StoredMessage]) -> Vec<Effect> {
        let mut effects = Vec::new();
        for stored in saved {
            if let Some(messages) = self.title_request(stored) {
                effects.push(Effect::AskModel {
                    purpose: SideCall::Title,
                    messages,
                });
            }
            if stored.message.role != ChatRole::Assistant {
                continue;
            }
            if let Some((compaction, messages)) = self.compaction_request() {
                effects.push(Effect::AskModel {
                    purpose: SideCall::Summary(compaction),
                    messages,
                });
            }
        }
        effects
    }

    pub(crate) fn next_position(&self) -> u32 {
        let reserved = self.turn.as_ref().map(|t| t.position + 1).unwrap_or(0);
        let stored = self.history.last().map(|m| m.position + 1).unwrap_or(0);
        reserved.max(stored)
    }

    /// Message ids are unique within the task and need no randomness: the task id is already
    /// unguessable and the counter only grows.
    pub(crate) fn next_message_id(&mut self) -> String {
        self.task.message_ids_issued += 1;
        format!("m{}", self.task.message_ids_issued)
    }
}

/// What the coordinator does with a conversation's effects when the skill library holds no
/// skills: each lookup is answered at once, with none. Tests of everything but skills drive
/// the conversation through it.
#[cfg(test)]
impl Conversation {
    pub(crate) fn answered<T: WithEffects>(&mut self, act: impl FnOnce(&mut Self) -> T) -> T {
        act(self).map_effects(|effects| {
            effects
                .into_iter()
                .flat_map(|effect| match effect {
                    Effect::LookupSkills { turn_id, .. } => self.skills_found(&turn_id, Ok(vec![])),
                    other => vec![other],
                })
                .collect()
        })
    }
}

/// What a conversation's inputs return: effects, or effects unless refused.
#[cfg(test)]
pub(crate) trait WithEffects {
    fn map_effects(self, f: impl FnOnce(Vec<Effect>) -> Vec<Effect>) -> Self;
}

#[cfg(test)]
impl WithEffects for Vec<Effect> {
    fn map_effects(self, f: impl FnOnce(Vec<Effect>) -> Vec<Effect>) -> Self {
        f(self)
    }
}

#[cfg(test)]
impl WithEffects for Result<Vec<Effect>, ErrorObject> {
    fn map_effects(self, f: impl FnOnce(Vec<Effect>) -> Vec<Effect>) -> Self {
        self.map(f)
    }
}

#[cfg(test)]
mod tests;
