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
