//! What a step's choice becomes: the action command, its tool result for the model, and the
//! facts and scale that go with a command on the page the model read.

use super::*;

/// The action a step's choice becomes (`None` for `done`), the task's attached files naming
/// what `upload_file` sends (a file not attached is the step's error), `agent_id` the agent a
/// bridge invocation is attributed to.
pub fn command_for(
    action: &AgentAction,
    attachments: &[Attachment],
    agent_id: &str,
) -> Result<Option<ActionCommand>, ErrorObject> {
    let target = Target::click_id;
    if let Some((tool, args)) = action.bridge_invocation() {
        return Ok(Some(ActionCommand::BridgeInvoke {
            tool,
            args,
            agent_id: agent_id.to_owned(),
            confirmed_protected_path: None,
        }));
    }
    Ok(Some(match action.clone() {
        AgentAction::Navigate { url } => ActionCommand::BrowserNavigate { url },
        AgentAction::Click { index } => ActionCommand::BrowserClick {
            target: target(index),
            strategy: None,
            checked: None,
        },
        AgentAction::Type {
            index,
            text,
            submit,
        } => ActionCommand::BrowserType {
            target: target(index),
            text,
            submit: Some(submit),
            strategy: None,
        },
        AgentAction::SelectOption { index, option } => ActionCommand::BrowserSelectOption {
            target: target(index),
            option,
        },
        AgentAction::Scroll {
            direction,
            index,
            amount,
        } => ActionCommand::BrowserScroll {
            target: Target {
                click_id: index,
                ..Target::default()
            },
            direction,
            amount,
        },
        AgentAction::PressKey { key } => ActionCommand::BrowserPressKey { key, expect: None },
        AgentAction::Hover { index } => ActionCommand::BrowserHover {
            target: target(index),
        },
        AgentAction::Back {} => ActionCommand::BrowserBack {},
        AgentAction::Forward {} => ActionCommand::BrowserForward {},
        AgentAction::WaitFor {
            text,
            url,
            selector,
            timeout_ms,
        } => ActionCommand::BrowserWaitFor {
            text,
            url,
            selector,
            timeout_ms,
        },
        AgentAction::Dialog { accept, text } => ActionCommand::BrowserDialog { accept, text },
        AgentAction::ScrollTo { text } => ActionCommand::BrowserScrollTo { text },
        AgentAction::ClickAt { x, y } => ActionCommand::BrowserClickAt {
            x,
            y,
            expect: None,
            scale: None,
        },
        AgentAction::HoverAt { x, y } => ActionCommand::BrowserHoverAt { x, y, scale: None },
        AgentAction::Drag { from, to } => {
            let end = |p: DragPoint| DragEnd {
                click_id: p.index,
                x: p.x,
                y: p.y,
            };
            ActionCommand::BrowserDrag {
                from: end(from),
                to: end(to),
                expect: None,
                scale: None,
            }
        }
        AgentAction::ReadTab { tab_id } => ActionCommand::BrowserReadTab { tab_id },
        AgentAction::SwitchTab { tab_id } => ActionCommand::BrowserSwitchTab { tab_id },
        AgentAction::OpenTab { url } => ActionCommand::BrowserOpenTab { url },
        AgentAction::CloseTab { tab_id } => ActionCommand::BrowserCloseTab { tab_id },
        AgentAction::UploadFile { index, file } => {
            let Some(attachment) = attachments.iter().find(|a| a.name == file) else {
                let names: Vec<&str> = attachments.iter().map(|a| a.name.as_str()).collect();
                return Err(ErrorObject::new(
                    ErrorCode::TargetNotFound,
                    if names.is_empty() {
                        format!("no file is attached to this task, so {file:?} cannot be uploaded: ask the user to attach it")
                    } else {
                        format!(
                            "no attached file is named {file:?}; the attached files are {names:?}"
                        )
                    },
                ));
            };
            ActionCommand::BrowserUploadFile {
                target: target(index),
                artifact_id: attachment.artifact_id.clone(),
                name: attachment.name.clone(),
                content_type: attachment.content_type.clone(),
            }
        }
        // Answered by the run itself, from what it already holds.
        AgentAction::Done { .. } | AgentAction::ReadPage { .. } | AgentAction::ListTabs {} => {
            return Ok(None)
        }
        AgentAction::FileRead { .. }
        | AgentAction::FileWrite { .. }
        | AgentAction::FileEdit { .. }
        | AgentAction::RunCommand { .. } => unreachable!("bridge invocations, above"),
    }))
}

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
