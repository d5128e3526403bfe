//! The task as the web app sees it.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Task status (DESIGN.md, seed 000 §2.1). Transitions are decided in `mimo-agent`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    TS,
    strum::EnumIter,
    strum::IntoStaticStr,
    strum::Display,
    strum::EnumString,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TaskStatus {
    Created,
    Running,
    Ongoing,
    WaitingConfirmation,
    /// A step needs a site the person has not allowed Mimo on yet: the run waits for them to
    /// allow it in the extension (then it goes on by itself) or to stop the task.
    WaitingPermission,
    Takeover,
    /// The person paused the task: no model call and no action starts until they resume.
    Paused,
    Completed,
    Error,
    Canceled,
}

impl TaskStatus {
    /// The stored and wire name, e.g. `waiting_confirmation`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// A finished task: no more scheduling, but a new user message may start another turn.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Error | TaskStatus::Canceled
        )
    }
}

/// Who drives the task's browser: the person taking over pauses automation until they resume
/// (seed 000 §2.1 rule 4); stop ends the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TaskControl {
    Takeover,
    /// Hold the task where it is (seed 004 §6): what is in flight finishes, nothing new starts.
    Pause,
    Resume,
    Stop,
}

/// Where a fork came from: the task, and the message of its history it was forked at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ForkedFrom {
    pub task_id: String,
    pub message_id: String,
}

/// `POST /api/task/{id}/fork`: a new task whose history is this one's up to `messageId`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ForkRequest {
    pub message_id: String,
}

/// The answer to a fork: the new task, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ForkedTask {
    pub task_id: String,
    pub forked_from: ForkedFrom,
}

/// One task of the deployment's session list (`GET /api/tasks`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TaskListEntry {
    pub task_id: String,
    /// From the first message; none before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    pub status: TaskStatus,
    #[ts(type = "number")]
    pub created_at: u64,
    /// When its history last grew (a message, a step, a change of status).
    #[ts(type = "number")]
    pub last_activity_at: u64,
    /// The task it was forked from, if it is a fork.
    pub forked_from: Option<ForkedFrom>,
    /// The tasks forked from it, the oldest first.
    pub forks: Vec<String>,
}

/// `GET /api/tasks?q=&limit=&before=`: a page of the session list, the most recently active
/// first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TaskList {
    pub tasks: Vec<TaskListEntry>,
    /// The `before` that asks for the next page; none after the last.
    pub next_before: Option<String>,
}

/// How many tasks a page of the session list holds unless `limit` says otherwise, and at most.
pub const TASK_LIST_DEFAULT_LIMIT: u32 = 30;
pub const TASK_LIST_MAX_LIMIT: u32 = 100;
/// The longest search of the session list (`q`), in characters.
pub const MAX_TASK_SEARCH_CHARS: usize = 200;
