//! The script API's view of a task (seed 002 §8): its status, its actions in the seed's shape
//! and states, and the step waiting for confirmation, from the task's records and history.

use mimo_protocol::script::{self, ScriptStatus, SCRIPT_BOUND_MS};
use mimo_protocol::{
    ActionKind, BrowserAction, ErrorCode, ErrorObject, EventEnvelope, FrontendEvent, RiskLevel,
    TaskStatus,
};

use crate::actions::{ActionRecord, ActionState, ScriptBounds};

/// The bounds a script asked for its task (`takeTimeoutMs`, `reportTimeoutMs`), each within
/// [`SCRIPT_BOUND_MS`], the deployment's where it asked none. A bound outside is refused, not
/// clamped: a script that asked for a day would otherwise be cut off without knowing why.
pub fn bounds(
    take_ms: Option<u64>,
    report_ms: Option<u64>,
    deployment: ScriptBounds,
) -> Result<ScriptBounds, ErrorObject> {
    for (name, asked) in [("takeTimeoutMs", take_ms), ("reportTimeoutMs", report_ms)] {
        if let Some(ms) = asked.filter(|ms| !SCRIPT_BOUND_MS.contains(ms)) {
            return Err(ErrorObject::new(
                ErrorCode::SchemaValidationFailed,
                format!(
                    "{name} is {ms}: it must be from {} to {} ms (a second to an hour)",
                    SCRIPT_BOUND_MS.start(),
                    SCRIPT_BOUND_MS.end()
                ),
            ));
        }
    }
    Ok(ScriptBounds {
        take_ms: take_ms.unwrap_or(deployment.take_ms),
        report_ms: report_ms.unwrap_or(deployment.report_ms),
    })
}

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
            ActionKind::BrowserWaitForLoaded
                | ActionKind::BrowserWaitFor
                | ActionKind::BrowserObserve
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
                let action = r.dispatch(None);
                script::script_action(&action, action_risk(&action), action_state(r.state))
            })
            .collect(),
    }
}
