//! One task's conversation: user messages in, streamed assistant turns out.
//!
//! [`Conversation`] is the sans-I/O heart of the task coordinator. Each input (a user message,
//! an LLM stream event, stop, a client selection, a restart) returns the [`Effect`]s the shell
//! must carry out, in order. The shell never decides anything itself.

use mimo_protocol::agent::BRIDGE_ACTIONS;
use mimo_protocol::bridge::BridgeInfo;
use mimo_protocol::{
    limits::MAX_USER_MESSAGE_BYTES, ActionCommand, Attachment, BrowserSnapshot, ChatMessage,
    ChatRole, DomainPolicy, ErrorCode, ErrorObject, FrontendEvent, OutputStatus, TaskStatus,
    TokenUsage,
};
use serde_json::json;

use crate::records::{AgentRun, Budget, ChatSummary, Phase, RunConfig, StoredMessage, TaskRecord};
use crate::skills::{self, SkillQuery};
use crate::{answer_format, llm, prompt, status::can_transition};

mod alternatives;
mod compaction;
mod consent;
mod delegation;
mod fork;
mod limits;
mod retry;
mod settings;
mod title;

pub use compaction::Compaction;
pub use consent::{Asker, Verdict};

pub use fork::ForkSeed;
mod run;
pub use run::SITE_WAIT_MS;

pub use delegation::MAX_SUBTASKS;
pub(crate) use retry::next_attempt;
pub use retry::{llm_backoff_ms, LLM_RETRIES, MAX_OVERFLOWS};
use title::TITLE_CHARS;

/// What the shell must do, in order.
#[derive(Debug, Clone, PartialEq)]
// Effects are short-lived (returned, carried out, dropped); their size does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Effect {
    /// Append to the task's event log (it gets the next sequence number) and send to every web
    /// socket of the task.
    Emit(FrontendEvent),
    /// Store the task row as it is now ([`Conversation::task`]).
    SaveTask,
    SaveMessage(StoredMessage),
    /// Store a compaction of the conversation (kept with the earlier ones; the latest is used).
    SaveSummary(ChatSummary),
    /// Store the browser run as it is now ([`Conversation::run`]).
    SaveRun,
    /// Stream a completion offering `tools`, after waiting `delay_ms` (a retry's backoff), and
    /// feed each event to [`Conversation::llm_event`] with `turn_id`.
    CallLlm {
        turn_id: String,
        messages: Vec<llm::ChatMessage>,
        tools: Vec<llm::ToolSpec>,
        delay_ms: u64,
        image: Option<PageImage>,
    },
    /// Ask the skill library for the skills of `query` and report its answer to
    /// [`Conversation::skills_found`]: the model call of turn `turn_id` waits for them.
    LookupSkills {
        turn_id: String,
        query: SkillQuery,
    },
    /// Bind the task to an extension (automatic selection) and report to
    /// [`Conversation::client_bound`].
    BindClient,
    /// Queue a browser action on the task's extension; its end is reported to
    /// [`Conversation::action_finished`].
    SubmitAction {
        action_id: String,
        command: ActionCommand,
    },
    /// Make sure the task is woken by `at` (a wait of the run's has a bound).
    WakeAt(u64),
}

/// The person's answer to a confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmAnswer {
    pub approve: bool,
    /// Why they declined (passed to the model).
    pub reason: Option<String>,
    /// Where they answered.
    pub by: crate::credentials::Confirmer,
}

/// The latest page's screenshot, to be sent with a model call: the shell reads artifact
/// `artifact_id` and attaches it to the call's message `message` (the page's). Reading it is
/// I/O, so the call only names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageImage {
    pub artifact_id: String,
    pub message: usize,
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

    /// The messages of a chat turn's model call: the conversation, as much of it as fits.
    /// While the chat model delegates, its own replies and what its sub-tasks returned follow.
    fn chat_call_messages(&self) -> Vec<llm::ChatMessage> {
        let overflows = self.turn.as_ref().map_or(0, |t| t.overflows);
        let budget = self.budget_after_notes(self.config.budget.compacted(overflows));
        let messages = match self.delegation() {
            Some((goal_position, delegation)) => {
                self.master_messages(goal_position, delegation, budget)
            }
            None => {
                let (summary, chat) = self.compacted_chat(None);
                prompt::chat_messages(summary, &chat, budget)
            }
        };
        self.with_context_notes(messages)
    }

    /// The answer format of the request being worked on: a sub-task's own, else the task's.
    pub(crate) fn answer_schema(&self) -> Option<&serde_json::Value> {
        match self
            .run
            .as_ref()
            .filter(|r| r.is_active())
            .and_then(|r| r.subtask.as_ref())
        {
            Some(subtask) => subtask.answer_schema.as_ref(),
            None => self.task.answer_schema.as_ref(),
        }
    }

    /// `budget` less what the context notes take: they take their part of the context before
    /// the conversation is fitted into the rest.
    pub(crate) fn budget_after_notes(&self, budget: Budget) -> Budget {
        let notes = prompt::estimate_tokens(&self.context_notes(), &[]);
        Budget {
            context_tokens: budget.context_tokens.saturating_sub(notes),
            ..budget
        }
    }

    /// What a model call is told besides the conversation: the skills for its goal and page,
    /// the files attached to the task, the secrets it may type and the person's open tabs.
    pub(crate) fn context_notes(&self) -> Vec<llm::ChatMessage> {
        [
            skills::skills_note(self.skills_in_use()),
            prompt::attachments_note(&self.attachments),
            crate::secrets::secrets_note(&self.secrets),
            self.browser
                .as_ref()
                .filter(|_| self.asks_about_tabs())
                .and_then(prompt::browser_tabs_note),
            self.usable_bridge().map(prompt::local_files_note),
            self.task
                .start_tab
                .map(|tab| prompt::start_tab_note(tab, self.browser.as_ref())),
            self.answer_schema().map(prompt::answer_format_note),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// Whether the request being answered (the person's latest message, and what they wrote
    /// during its run) is about their open tabs.
    fn asks_about_tabs(&self) -> bool {
        let latest = self
            .history
            .iter()
            .rev()
            .find(|m| m.message.role == ChatRole::User)
            .map(|m| m.message.content.as_str());
        let updates = self
            .run
            .iter()
            .flat_map(|r| r.updates.iter().map(String::as_str));
        latest.into_iter().chain(updates).any(prompt::mentions_tabs)
    }

    /// `messages` with the context notes right after the system prompt.
    pub(crate) fn with_context_notes(
        &self,
        mut messages: Vec<llm::ChatMessage>,
    ) -> Vec<llm::ChatMessage> {
        let at = messages.len().min(1);
        messages.splice(at..at, self.context_notes());
        messages
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
        } else {
            effects.push(Effect::SaveTask);
        }
        effects
    }

    /// What the person wrote. A message sent again with a `client_message_id` already in the
    /// history (the client could not tell whether the first one arrived) changes nothing.
    pub fn user_message(
        &mut self,
        content: String,
        client_message_id: Option<String>,
        answer_schema: Option<serde_json::Value>,
        now: u64,
    ) -> Result<Vec<Effect>, ErrorObject> {
        if let Some(why) = answer_schema
            .as_ref()
            .and_then(answer_format::schema_problem)
        {
            return Err(ErrorObject::new(ErrorCode::SchemaValidationFailed, why));
        }
        if let Some(id) = &client_message_id {
            if id.is_empty() || id.len() > 128 {
                return Err(ErrorObject::new(
                    ErrorCode::SchemaValidationFailed,
                    "clientMessageId must be 1–128 characters",
                ));
            }
            if self
                .history
                .iter()
                .any(|m| m.message.client_message_id.as_deref() == Some(id))
            {
                return Ok(Vec::new());
            }
        }
        let content = content.trim().to_owned();
        if content.is_empty() {
            return Err(ErrorObject::new(
                ErrorCode::SchemaValidationFailed,
                "message content is empty",
            ));
        }
        if content.len() > MAX_USER_MESSAGE_BYTES {
            return Err(ErrorObject::new(
                ErrorCode::SchemaValidationFailed,
                format!(
                    "message of {} bytes exceeds the limit of {MAX_USER_MESSAGE_BYTES} bytes",
                    content.len()
                ),
            ));
        }
        if self.task.title.is_none() {
            let one_line = content.split_whitespace().collect::<Vec<_>>().join(" ");
            self.task.title = Some(one_line.chars().take(TITLE_CHARS).collect());
        }
        let message = ChatMessage {
            message_id: self.next_message_id(),
            role: ChatRole::User,
            content,
            created_at: now,
            client_message_id,
            version: None,
            superseded: false,
        };
        let stored = self.append(message.clone());
        let mut effects = vec![
            Effect::SaveMessage(stored),
            Effect::Emit(FrontendEvent::Message {
                message: message.clone(),
            }),
        ];
        if let Some(run) = self.run.as_mut().filter(|r| r.is_active()) {
            // The run reads it at its next step (its answer format stays the one it began with).
            run.updates.push(message.content);
            effects.push(Effect::SaveRun);
            return Ok(effects);
        }
        // The request this message makes is answered in its own format, or freely.
        self.task.answer_schema = answer_schema;
        if self.turn.is_none() {
            effects.extend(self.start_turn(now));
        } else {
            // Answered by the next turn, which starts when the current one ends.
            self.task.updated_at = now;
            effects.push(Effect::SaveTask);
        }
        Ok(effects)
    }

    /// Feeds one event of turn `turn_id`'s LLM stream. Events of a turn that is no longer
    /// current (stopped, or replaced after a restart) are ignored.
    pub fn llm_event(&mut self, turn_id: &str, event: llm::LlmEvent, now: u64) -> Vec<Effect> {
        if !self.is_current_turn(turn_id) {
            return Vec::new();
        }
        match event {
            llm::LlmEvent::TextDelta(delta) if delta.is_empty() => Vec::new(),
            llm::LlmEvent::TextDelta(delta) => {
                let turn = self.turn.as_mut().expect("current turn");
                turn.text.push_str(&delta);
                vec![Effect::Emit(FrontendEvent::ChatDelta {
                    message_id: turn.message_id.clone(),
                    delta,
                    finished: false,
                })]
            }
            llm::LlmEvent::ToolCall(call) => {
                self.turn
                    .as_mut()
                    .expect("current turn")
                    .tool_calls
                    .push(call);
                Vec::new()
            }
            llm::LlmEvent::Usage {
                input_tokens,
                output_tokens,
            } => {
                self.turn.as_mut().expect("current turn").usage = TokenUsage {
                    input_tokens,
                    output_tokens,
                };
                Vec::new()
            }
            llm::LlmEvent::Done { .. } => {
                // A request with an answer format is answered by `done`'s data: a plain reply
                // — the master's after its sub-tasks too — is corrected like a run's reply
                // without a tool call (the plain reply, in the correction, keeps what the
                // sub-tasks found).
                let in_run = self.run_is_active() || self.task.answer_schema.is_some();
                let turn = self.turn.as_mut().expect("current turn");
                let usage = std::mem::take(&mut turn.usage);
                if in_run || !turn.tool_calls.is_empty() {
                    let tool_calls = std::mem::take(&mut turn.tool_calls);
                    let thought = turn.text.clone();
                    let mut effects = self.count_usage(usage);
                    effects.extend(self.run_turn_done(tool_calls, thought, usage, now));
                    return effects;
                }
                let mut effects = self.count_usage(usage);
                effects.extend(self.finish_turn(now));
                let text = self
                    .history
                    .last()
                    .map(|m| m.message.content.clone())
                    .unwrap_or_default();
                effects.push(Effect::Emit(FrontendEvent::StructuredOutput {
                    status: OutputStatus::Ok,
                    output: Some(json!({ "text": text })),
                    error: None,
                    warnings: Vec::new(),
                }));
                effects.extend(self.transition(TaskStatus::Completed, now));
                if self.awaits_reply() {
                    effects.extend(self.start_turn(now));
                }
                effects
            }
            llm::LlmEvent::Error(error) => {
                // What the failed call used before it failed counts all the same.
                let usage = std::mem::take(&mut self.turn.as_mut().expect("current turn").usage);
                let mut effects = self.count_usage(usage);
                if self.run_is_active() {
                    effects.extend(self.retry_run_call(error, Vec::new(), now));
                    return effects;
                }
                // A failure before any text reached the person is retried ([`next_attempt`]);
                // after text, a retry would repeat it, so the turn fails.
                let turn = self.turn.as_mut().expect("current turn");
                let next = if turn.text.is_empty() {
                    next_attempt(&error, &mut turn.retries, &mut turn.overflows)
                } else {
                    Err(ErrorObject::from(&error))
                };
                let error = match next {
                    Ok((event, delay_ms)) => {
                        effects.push(Effect::Emit(event));
                        effects.push(self.model_call(turn_id.to_owned(), delay_ms));
                        return effects;
                    }
                    Err(error) => error,
                };
                effects.extend(self.finish_turn(now));
                effects.push(Effect::Emit(FrontendEvent::StructuredOutput {
                    status: OutputStatus::Error,
                    output: None,
                    error: Some(error),
                    warnings: Vec::new(),
                }));
                effects.extend(self.transition(TaskStatus::Error, now));
                effects
            }
        }
    }

    /// The person stops the task: the streaming turn ends where it is, its text so far is kept.
    pub fn stop(&mut self, now: u64) -> Vec<Effect> {
        let mut effects = if self.turn.is_some() {
            self.finish_turn(now)
        } else {
            Vec::new()
        };
        effects.extend(self.stop_subtask());
        if let Some(run) = self.run.as_mut().filter(|r| r.is_active()) {
            run.phase = Phase::Finished;
            effects.push(Effect::SaveRun);
        }
        effects.extend(self.transition(TaskStatus::Canceled, now));
        effects
    }

    /// The person took over the browser: automation pauses (from a running task only).
    pub fn takeover(&mut self, now: u64) -> Vec<Effect> {
        self.transition(TaskStatus::Takeover, now)
    }

    /// The person pauses the task (seed 004 §6): what is in flight (a model reply, an action)
    /// finishes, but no model call and no action starts until they resume.
    pub fn pause(&mut self, now: u64) -> Vec<Effect> {
        self.transition(TaskStatus::Paused, now)
    }

    /// The person handed the browser back, resumed a paused task or allowed the site a step
    /// waited for: a model call held by the pause is made now, an action held for the site is
    /// sent again.
    pub fn resume(&mut self, now: u64) -> Vec<Effect> {
        use TaskStatus::*;
        if !matches!(self.task.status, Takeover | Paused | WaitingPermission) {
            return Vec::new();
        }
        let mut effects = self.transition(Running, now);
        // The extension resumes a task waiting for a site once the person allows one (a paused
        // task may have come to wait meanwhile).
        effects.extend(self.site_allowed());
        if let Some((turn_id, delay_ms)) = self.paused_call.take() {
            if self.is_current_turn(&turn_id) {
                effects.extend(self.call_model(turn_id, delay_ms, now));
            }
        }
        effects
    }

    /// Browser actions started running for the task (the developer API drives it directly).
    pub fn actions_started(&mut self, now: u64) -> Vec<Effect> {
        if matches!(
            self.task.status,
            TaskStatus::Running | TaskStatus::Takeover | TaskStatus::Paused
        ) {
            return Vec::new();
        }
        self.transition(TaskStatus::Running, now)
    }

    /// The last queued action ended and no reply is streaming: the task waits for what's next.
    pub fn actions_idle(&mut self, now: u64) -> Vec<Effect> {
        if self.task.status != TaskStatus::Running || self.turn.is_some() || self.run_is_active() {
            return Vec::new();
        }
        self.transition(TaskStatus::Ongoing, now)
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

    fn awaits_reply(&self) -> bool {
        self.in_conversation()
            .last()
            .is_some_and(|m| m.message.role == ChatRole::User)
    }

    /// Answers the latest message: the model may reply in text or start a browser run.
    fn start_turn(&mut self, now: u64) -> Vec<Effect> {
        // A new message that needs the browser starts a new run, and counts anew.
        self.run = None;
        self.unrun_usage = TokenUsage::default();
        let turn_id = self.open_turn();
        self.call_model(turn_id, 0, now)
    }

    /// Calls the model for turn `turn_id` after `delay_ms`, once the skills of its goal and
    /// page are known (they are looked up first when either changed); the task is running
    /// (unless the person has taken over: the model may think, but only `resume` hands the
    /// browser back).
    pub(crate) fn call_model(&mut self, turn_id: String, delay_ms: u64, now: u64) -> Vec<Effect> {
        if self.task.status == TaskStatus::Paused {
            // The turn stays open; resuming makes the call.
            self.paused_call = Some((turn_id, delay_ms));
            return vec![Effect::SaveTask, Effect::SaveRun];
        }
        let mut effects = if self.task.status == TaskStatus::Takeover {
            Vec::new()
        } else {
            self.transition(TaskStatus::Running, now)
        };
        effects.push(Effect::SaveTask);
        effects.push(Effect::SaveRun);
        let query = self.skill_query();
        if self.skills.as_ref().map(|s| &s.query) == Some(&query) {
            effects.push(self.model_call(turn_id, delay_ms));
            return effects;
        }
        self.waiting_for_skills = Some(WaitingCall {
            turn_id: turn_id.clone(),
            delay_ms,
            query: query.clone(),
        });
        effects.push(Effect::LookupSkills { turn_id, query });
        effects
    }

    /// The skill library's answer for turn `turn_id` ([`Effect::LookupSkills`]): the model
    /// call waiting for it is made, with these skills in its prompt. Should the library fail,
    /// the call goes without skills and the web app is told.
    pub fn skills_found(
        &mut self,
        turn_id: &str,
        found: Result<Vec<mimo_protocol::Skill>, ErrorObject>,
    ) -> Vec<Effect> {
        let waiting = self.waiting_for_skills.take_if(|w| {
            w.turn_id == turn_id && self.turn.as_ref().is_some_and(|t| t.message_id == turn_id)
        });
        let Some(waiting) = waiting else {
            // The turn was stopped or replaced meanwhile: nothing waits for them.
            return Vec::new();
        };
        let mut effects = Vec::new();
        let skills = found.unwrap_or_else(|error| {
            effects.push(Effect::Emit(FrontendEvent::Warning {
                message: format!(
                    "The skills for this goal and page could not be looked up ({}); the model \
                     goes on without them.",
                    error.message
                ),
            }));
            Vec::new()
        });
        self.skills = Some(SkillsInUse {
            query: waiting.query,
            skills,
        });
        effects.push(self.model_call(waiting.turn_id, waiting.delay_ms));
        effects
    }

    /// The skills in the model's prompt.
    pub(crate) fn skills_in_use(&self) -> &[mimo_protocol::Skill] {
        self.skills.as_ref().map_or(&[], |s| &s.skills)
    }

    /// What the skills of the next model call are looked up by: the goal (the message that
    /// started the run, or the one being answered) and the page the run is on — before the
    /// first page, the person's tab it is to start on, if any. The page's fragment does not
    /// make it another page.
    fn skill_query(&self) -> SkillQuery {
        let run = self.run.as_ref().filter(|r| r.is_active());
        let goal = match run {
            Some(run) => self
                .history
                .iter()
                .find(|m| m.position == run.goal_position),
            None => self
                .history
                .iter()
                .rfind(|m| m.message.role == ChatRole::User),
        };
        let page = run
            .and_then(|r| r.observation.as_ref())
            .map(|o| o.url.clone())
            .filter(|url| !url.is_empty());
        let start_tab = || {
            let tab = self.task.start_tab?;
            let tabs = &self.browser.as_ref()?.tabs;
            tabs.iter().find(|t| t.tab_id == tab).map(|t| t.url.clone())
        };
        let url = page
            .or_else(start_tab)
            .map(|url| match url.split_once('#') {
                Some((page, _)) => page.to_owned(),
                None => url,
            });
        SkillQuery {
            goal: goal.map(|m| m.message.content.clone()).unwrap_or_default(),
            url,
        }
    }

    /// The model call of turn `turn_id`: the run's next step while a run is going, else the
    /// reply to the chat. It offers the actions the skills in use allow.
    fn model_call(&self, turn_id: String, delay_ms: u64) -> Effect {
        let (messages, image) = if self.run_is_active() {
            let messages = self.run_messages();
            let image = self.page_screenshot().and_then(|page| {
                Some(PageImage {
                    artifact_id: page.screenshot_artifact_id.clone()?,
                    message: prompt::page_message(&messages)?,
                })
            });
            (messages, image)
        } else {
            (self.chat_call_messages(), None)
        };
        let offered = skills::offered_actions(self.skills_in_use());
        let bridge = self.usable_bridge().is_some();
        let mut tools = vec![prompt::agent_tool(|action| {
            (bridge || !BRIDGE_ACTIONS.contains(&action))
                && offered.as_ref().is_none_or(|o| o.contains(action))
        })];
        // Delegating is the chat model's: a sub-agent does its job itself.
        if !self.run_is_active() {
            tools.push(prompt::browser_task_tool());
        }
        Effect::CallLlm {
            turn_id,
            messages,
            tools,
            delay_ms,
            image,
        }
    }

    /// Reserves the next message for a model turn and makes it current.
    pub(crate) fn open_turn(&mut self) -> String {
        let turn = Turn {
            message_id: self.next_message_id(),
            position: self.next_position(),
            text: String::new(),
            retries: 0,
            overflows: 0,
            tool_calls: Vec::new(),
            usage: TokenUsage::default(),
        };
        let turn_id = turn.message_id.clone();
        self.task.current_turn = Some(turn_id.clone());
        self.turn = Some(turn);
        turn_id
    }

    /// Ends a turn of a run: text the model wrote is kept as a message; a turn without text
    /// leaves none.
    pub(crate) fn finish_run_turn(&mut self, now: u64) -> Vec<Effect> {
        match &self.turn {
            Some(turn) if turn.text.is_empty() => {
                self.turn = None;
                self.task.current_turn = None;
                vec![Effect::SaveTask]
            }
            Some(_) => self.finish_turn(now),
            None => Vec::new(),
        }
    }

    /// Ends the current turn: its message is closed for the web app and stored.
    fn finish_turn(&mut self, now: u64) -> Vec<Effect> {
        let Some(turn) = self.turn.take() else {
            return Vec::new();
        };
        self.task.current_turn = None;
        let message = ChatMessage {
            message_id: turn.message_id.clone(),
            role: ChatRole::Assistant,
            content: turn.text,
            created_at: now,
            client_message_id: None,
            version: self.answer_version(),
            superseded: false,
        };
        let stored = StoredMessage {
            position: turn.position,
            message,
        };
        let at = self.history.partition_point(|m| m.position < turn.position);
        self.history.insert(at, stored.clone());
        let mut effects = vec![
            Effect::Emit(FrontendEvent::ChatDelta {
                message_id: turn.message_id,
                delta: String::new(),
                finished: true,
            }),
            Effect::SaveMessage(stored.clone()),
        ];
        if stored.message.version.is_some() {
            // A regenerated answer: the web app learns which alternative it is.
            effects.push(Effect::Emit(FrontendEvent::Message {
                message: stored.message,
            }));
        }
        effects
    }

    /// Moves to `to` if the state machine allows it; a refused move changes nothing.
    pub(crate) fn transition(&mut self, to: TaskStatus, now: u64) -> Vec<Effect> {
        if !can_transition(self.task.status, to) {
            return Vec::new();
        }
        self.task.status = to;
        self.task.updated_at = now;
        vec![Effect::SaveTask, self.status_event()]
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
