//! One task's conversation: user messages in, streamed assistant turns out.
//!
//! [`Conversation`] is the sans-I/O heart of the task coordinator. Each input (a user message,
//! an LLM stream event, stop, a client selection, a restart) returns the [`Effect`]s the shell
//! must carry out, in order. The shell never decides anything itself.

use mimo_protocol::{
    limits::MAX_USER_MESSAGE_BYTES, ChatMessage, ChatRole, ErrorCode, ErrorObject, FrontendEvent,
    OutputStatus, TaskStatus,
};
use serde_json::json;

use crate::{llm, prompt, status::can_transition};

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
}

/// A stored chat message and its place in the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    /// Order in the conversation. An assistant reply keeps the place reserved when its turn
    /// started, so messages the person sends while it streams come after it.
    pub position: u32,
    pub message: ChatMessage,
}

/// What the shell must do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Append to the task's event log (it gets the next sequence number) and send to every web
    /// socket of the task.
    Emit(FrontendEvent),
    /// Store the task row as it is now ([`Conversation::task`]).
    SaveTask,
    SaveMessage(StoredMessage),
    /// Stream a completion and feed each event to [`Conversation::llm_event`] with `turn_id`.
    CallLlm {
        turn_id: String,
        messages: Vec<llm::ChatMessage>,
    },
}

#[derive(Debug)]
struct Turn {
    message_id: String,
    position: u32,
    text: String,
}

#[derive(Debug)]
pub struct Conversation {
    task: TaskRecord,
    history: Vec<StoredMessage>,
    turn: Option<Turn>,
}

/// Longest title derived from the first message, in characters.
const TITLE_CHARS: usize = 60;

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
        };
        Self {
            task,
            history: Vec::new(),
            turn: None,
        }
    }

    /// Rebuilds the conversation from storage (after eviction or a restart). Call
    /// [`Conversation::recover`] before feeding it new input.
    pub fn restore(task: TaskRecord, mut history: Vec<StoredMessage>) -> Self {
        history.sort_by_key(|m| m.position);
        Self {
            task,
            history,
            turn: None,
        }
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
        if self.awaits_reply() {
            effects.extend(self.start_turn(now));
        } else {
            effects.push(Effect::SaveTask);
        }
        effects
    }

    pub fn user_message(&mut self, content: String, now: u64) -> Result<Vec<Effect>, ErrorObject> {
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
            self.task.title = Some(content.chars().take(TITLE_CHARS).collect());
        }
        let message = ChatMessage {
            message_id: self.next_message_id(),
            role: ChatRole::User,
            content,
            created_at: now,
        };
        let stored = StoredMessage {
            position: self.next_position(),
            message: message.clone(),
        };
        self.history.push(stored.clone());
        let mut effects = vec![
            Effect::SaveMessage(stored),
            Effect::Emit(FrontendEvent::Message { message }),
        ];
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
            // No tools are offered to a chat turn; the agent loop handles tool calls.
            llm::LlmEvent::ToolCall(_) | llm::LlmEvent::Usage { .. } => Vec::new(),
            llm::LlmEvent::Done { .. } => {
                let mut effects = self.finish_turn(now);
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
                let mut effects = self.finish_turn(now);
                effects.push(Effect::Emit(FrontendEvent::StructuredOutput {
                    status: OutputStatus::Error,
                    output: None,
                    error: Some(ErrorObject {
                        code: ErrorCode::LlmError,
                        message: format!("The language model failed: {error}"),
                        retryable: error.retryable,
                    }),
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
        effects.extend(self.transition(TaskStatus::Canceled, now));
        effects
    }

    pub fn select_client(&mut self, client_id: String, now: u64) -> Vec<Effect> {
        if self.task.selected_client_id.as_deref() == Some(client_id.as_str()) {
            return Vec::new();
        }
        self.task.selected_client_id = Some(client_id);
        self.task.updated_at = now;
        vec![Effect::SaveTask, self.status_event()]
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
        self.history
            .last()
            .is_some_and(|m| m.message.role == ChatRole::User)
    }

    fn start_turn(&mut self, now: u64) -> Vec<Effect> {
        let turn = Turn {
            message_id: self.next_message_id(),
            position: self.next_position(),
            text: String::new(),
        };
        let turn_id = turn.message_id.clone();
        let messages = prompt::chat_messages(&self.history().cloned().collect::<Vec<_>>());
        self.task.current_turn = Some(turn_id.clone());
        self.turn = Some(turn);
        let mut effects = self.transition(TaskStatus::Running, now);
        if effects.is_empty() {
            effects.push(Effect::SaveTask);
        }
        effects.push(Effect::CallLlm { turn_id, messages });
        effects
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
        };
        let stored = StoredMessage {
            position: turn.position,
            message,
        };
        let at = self.history.partition_point(|m| m.position < turn.position);
        self.history.insert(at, stored.clone());
        vec![
            Effect::Emit(FrontendEvent::ChatDelta {
                message_id: turn.message_id,
                delta: String::new(),
                finished: true,
            }),
            Effect::SaveMessage(stored),
        ]
    }

    /// Moves to `to` if the state machine allows it; a refused move changes nothing.
    fn transition(&mut self, to: TaskStatus, now: u64) -> Vec<Effect> {
        if !can_transition(self.task.status, to) {
            return Vec::new();
        }
        self.task.status = to;
        self.task.updated_at = now;
        vec![Effect::SaveTask, self.status_event()]
    }

    fn next_position(&self) -> u32 {
        let reserved = self.turn.as_ref().map(|t| t.position + 1).unwrap_or(0);
        let stored = self.history.last().map(|m| m.position + 1).unwrap_or(0);
        reserved.max(stored)
    }

    /// Message ids are unique within the task and need no randomness: the task id is already
    /// unguessable and the counter only grows.
    fn next_message_id(&mut self) -> String {
        self.task.message_ids_issued += 1;
        format!("m{}", self.task.message_ids_issued)
    }
}
