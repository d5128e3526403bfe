//! The script API's view of a task (seed 002 §8): its status, its actions in the seed's shape
//! and states, and the step waiting for confirmation, from the task's records and history.

use mimo_protocol::script::{self, ScriptStatus};
use mimo_protocol::{
    ActionKind, BrowserAction, EventEnvelope, FrontendEvent, RiskLevel, TaskStatus,
};

use crate::actions::{ActionRecord, ActionState};

/// The seed's action state (`pending | running | done | failed | canceled`).
pub fn action_state(state: ActionState) -> &'static str {
    match state {
        ActionState::Pending | ActionState::Sent => "pending",
        ActionState::Acked | ActionState::Checking => "running",
        ActionState::Succeeded => "done",
        ActionState::Failed | ActionState::TimedOut => "failed",
        ActionState::Canceled => "canceled",
    }
}

/// How risky an action is to a script carrying it out: one that changes the page is medium
/// (a step rated high never reaches a script before it is confirmed).
pub fn action_risk(action: &BrowserAction) -> RiskLevel {
    if action.command.kind().traits().mutating {
        RiskLevel::Medium
    } else {
        RiskLevel::Low
    }
}

/// Where the task stands for a script.
pub fn status(
    task_id: &str,
    task_status: TaskStatus,
    records: &[ActionRecord],
    history: &[EventEnvelope],
) -> ScriptStatus {
    let in_flight = |r: &&ActionRecord| matches!(action_state(r.state), "pending" | "running");
    let waiting_page = records.iter().filter(in_flight).any(|r| {
        matches!(
            r.command.kind(),
            ActionKind::BrowserWaitForLoaded | ActionKind::BrowserWaitFor
        )
    });
    let pending_confirmation = (task_status == TaskStatus::WaitingConfirmation)
        .then(|| {
            history.iter().rev().find_map(|e| match &e.event {
                FrontendEvent::ConfirmationRequested(request) => {
                    Some(script::confirmation_action(task_id, request))
                }
                _ => None,
            })
        })
        .flatten();
    ScriptStatus {
        task_id: task_id.to_owned(),
        status: script::task_status(task_status, waiting_page).to_owned(),
        pending_confirmation,
        actions: records
            .iter()
            .map(|r| {
                let action = r.dispatch();
                script::script_action(&action, action_risk(&action), action_state(r.state))
            })
            .collect(),
    }
}
