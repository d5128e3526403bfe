//! What a step's choice becomes: the action command, its tool result for the model, and the
//! facts and scale that go with a command on the page the model read.

use super::*;

/// The tool result of an ended action (seed 000 §5).
pub(super) fn tool_result(step: &Step, record: &ActionRecord) -> ToolResult {
    let outcome = record.outcome.as_ref();
    let ok = record.state == ActionState::Succeeded;
    let error = if ok {
        None
    } else {
        Some(
            outcome
                .and_then(|o| o.error.clone())
                .unwrap_or_else(|| ErrorObject::new(ErrorCode::InternalError, "the action failed")),
        )
    };
    ToolResult {
        tool_call_id: step.tool_call_id.clone(),
        name: step.output.action.name().to_owned(),
        ok,
        result: outcome.and_then(|o| o.result.clone()).filter(|_| ok),
        model_result: outcome.and_then(|o| o.model_result.clone()).filter(|_| ok),
        error,
        warnings: outcome.map(|o| o.warnings.clone()).unwrap_or_default(),
        partial: ok && outcome.is_some_and(|o| o.status == ActionStatus::Partial),
    }
}

/// The model reads points off the page's screenshot: a point step says at what scale that was
/// taken, so that the extension maps it to CSS pixels (a high-density screen, a wide window, a
/// zoomed page draw the screenshot larger or smaller than the page's CSS pixels).
pub(super) fn in_screenshot_pixels(command: &mut ActionCommand, page: Option<&Observation>) {
    let Some(at) = page.and_then(|p| p.screenshot_scale) else {
        return;
    };
    match command {
        ActionCommand::BrowserClickAt { scale, .. }
        | ActionCommand::BrowserHoverAt { scale, .. }
        | ActionCommand::BrowserDrag { scale, .. } => *scale = Some(at),
        _ => {}
    }
}

/// An element's name as a step title shows it: whitespace collapsed, at most 60 characters,
/// nothing when empty or when it holds personal data (the event log keeps titles).
pub(super) fn display_name(text: &str) -> Option<String> {
    let name = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if name.is_empty() || crate::flow::carries_personal(&name).is_some() {
        return None;
    }
    Some(text::cut(&name, 60))
}

/// The JavaScript dialog the page showed when an action ended: preparing the page stops there, as
/// nothing on it can be read or used until the dialog is answered.
pub(super) fn dialog_of(record: &ActionRecord) -> Option<PageDialog> {
    record.outcome.as_ref()?.dialog.as_deref().cloned()
}

/// One line for people: what the step did.
pub(super) fn result_summary(action: &AgentAction, result: &ToolResult) -> String {
    match (&result.error, action) {
        (Some(error), _) => format!("{} failed: {}", action.name(), error),
        (None, AgentAction::Done { text, .. }) => text::cut(text, 200),
        (None, _) if result.warnings.is_empty() => format!("{}: done", action.name()),
        (None, _) => format!("{}: done ({})", action.name(), result.warnings.join("; ")),
    }
}
