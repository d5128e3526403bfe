//! The task as the web app sees it.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Task status (DESIGN.md, seed 000 §2.1). Transitions are decided in `mimo-agent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS, strum::EnumIter)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Created,
    Running,
    Ongoing,
    WaitingConfirmation,
    Takeover,
    Completed,
    Error,
    Canceled,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Created => "created",
            TaskStatus::Running => "running",
            TaskStatus::Ongoing => "ongoing",
            TaskStatus::WaitingConfirmation => "waiting_confirmation",
            TaskStatus::Takeover => "takeover",
            TaskStatus::Completed => "completed",
            TaskStatus::Error => "error",
            TaskStatus::Canceled => "canceled",
        }
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
    Resume,
    Stop,
}

impl std::str::FromStr for TaskStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        serde_json::from_value(serde_json::Value::String(s.to_owned()))
            .map_err(|_| format!("unknown task status {s:?}"))
    }
}
