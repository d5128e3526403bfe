//! The run driven natively: a scripted model, and the extension's answers as action records.

use mimo_protocol::{
    ActionCommand, ActionOutcome, ActionStatus, ErrorCode, ErrorObject, FrontendEvent,
    OutputStatus, TaskStatus, ToolPhase,
};
use serde_json::{json, Value};

use super::*;
use crate::actions::{ActionRecord, ActionState};
use crate::conversation::{ConfirmAnswer, Conversation, Effect, LlmCall};
use crate::llm::{LlmError, LlmErrorKind, LlmEvent, StopReason, ToolCall};
use crate::records::RunConfig;

const TASK: &str = "task-1";

/// A conversation with a bound extension, so runs go straight to `task_start`.
fn bound() -> Conversation {
    let mut c = Conversation::new(TASK.into(), 0);
    c.select_client("client-1".into(), 0);
    c
}

/// The names of the actions that use the local bridge.
fn bridge_actions() -> Vec<&'static str> {
    use strum::IntoEnumIterator;
    mimo_protocol::AgentActionKind::iter()
        .filter(|kind| kind.uses_bridge())
        .map(mimo_protocol::AgentActionKind::name)
        .collect()
}

fn turn_of(effects: &[Effect]) -> (String, Vec<llm::ChatMessage>) {
    let calls: Vec<_> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::CallLlm(LlmCall {
                turn_id,
                messages,
                tools,
                ..
            }) => {
                assert_eq!(tools[0].name, "AgentOutput", "the agent tool is offered");
                Some((turn_id.clone(), messages.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 1, "one model call in {effects:#?}");
    calls.into_iter().next().unwrap()
}

fn submitted(effects: &[Effect]) -> (String, ActionCommand) {
    let actions: Vec<_> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Submit { action_id, command } => Some((action_id.clone(), command.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(actions.len(), 1, "one action in {effects:#?}");
    actions.into_iter().next().unwrap()
}

/// The action `effects` submit, if any.
fn submission(effects: &[Effect]) -> Option<(String, ActionCommand)> {
    effects.iter().find_map(|e| match e {
        Effect::Submit { action_id, command } => Some((action_id.clone(), command.clone())),
        _ => None,
    })
}

/// The sub-tasks `effects` close, with their results.
fn closed(effects: &[Effect]) -> Vec<(u32, mimo_protocol::BrowserTaskResult)> {
    events(effects)
        .into_iter()
        .filter_map(|e| match e {
            FrontendEvent::SubtaskFinished {
                subtask, result, ..
            } => Some((subtask, result)),
            _ => None,
        })
        .collect()
}

fn events(effects: &[Effect]) -> Vec<FrontendEvent> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Emit(event) => Some(event.clone()),
            _ => None,
        })
        .collect()
}

fn output_of(effects: &[Effect]) -> (OutputStatus, Option<Value>, Option<ErrorObject>) {
    events(effects)
        .into_iter()
        .find_map(|e| match e {
            FrontendEvent::StructuredOutput {
                status,
                output,
                error,
                ..
            } => Some((status, output, error)),
            _ => None,
        })
        .expect("a structured output")
}

fn agent_call(id: &str, action: Value) -> LlmEvent {
    LlmEvent::ToolCall(ToolCall {
        id: id.into(),
        name: "AgentOutput".into(),
        arguments: json!({
            "evaluation_previous_goal": "fine",
            "memory": format!("memory at {id}"),
            "next_goal": "go on",
            "action": action,
        }),
    })
}

/// The model replies with one tool call (and maybe some text first).
fn reply(c: &mut Conversation, turn: &str, events: Vec<LlmEvent>) -> Vec<Effect> {
    let mut effects = Vec::new();
    for event in events {
        effects.extend(c.answered(|c| c.llm_event(turn, event, 10)));
    }
    effects.extend(c.answered(|c| {
        c.llm_event(
            turn,
            LlmEvent::Done {
                stop_reason: StopReason::ToolUse,
            },
            10,
        )
    }));
    effects
}

fn record(
    action_id: &str,
    command: ActionCommand,
    state: ActionState,
    result: Value,
) -> ActionRecord {
    let (status, error) = match state {
        ActionState::Succeeded => (ActionStatus::Ok, None),
        _ => (
            ActionStatus::Error,
            Some(ErrorObject::new(
                serde_json::from_value(result.clone()).unwrap_or(ErrorCode::InternalError),
                "it failed",
            )),
        ),
    };
    ActionRecord {
        action_id: action_id.into(),
        task_id: TASK.into(),
        client_id: "client-1".into(),
        tab_id: Some(7),
        command,
        state,
        attempt: 1,
        created_at: 0,
        sent_at: None,
        acked_at: None,
        finished_at: Some(20),
        deadline: None,
        outcome: Some(ActionOutcome {
            action_id: action_id.into(),
            attempt: 1,
            task_id: TASK.into(),
            status,
            result: (state == ActionState::Succeeded).then_some(result),
            model_result: None,
            error,
            warnings: Vec::new(),
            dialog: None,
            tab_id: None,
            waits_for_site: None,
            timings: Vec::new(),
        }),
    }
}

fn ok(c: &mut Conversation, (id, command): (String, ActionCommand), result: Value) -> Vec<Effect> {
    c.answered(|c| c.action_finished(&record(&id, command, ActionState::Succeeded, result), 20))
}

fn failed(c: &mut Conversation, (id, command): (String, ActionCommand), code: &str) -> Vec<Effect> {
    c.answered(|c| c.action_finished(&record(&id, command, ActionState::Failed, json!(code)), 20))
}

/// Answers the page's observation (screenshot, readable text, element list) and returns the
/// next model call's effects.
fn prepare_page(c: &mut Conversation, first: Vec<Effect>, index_text: &str) -> Vec<Effect> {
    prepare_page_shot(c, first, index_text, "art_1")
}

/// [`prepare_page`] with screenshot `artifact_id`.
fn prepare_page_shot(
    c: &mut Conversation,
    first: Vec<Effect>,
    index_text: &str,
    artifact_id: &str,
) -> Vec<Effect> {
    let shot =
        json!({ "artifactId": artifact_id, "url": "https://x/a", "width": 1280, "height": 720 });
    prepare_page_with(c, first, index_text, shot)
}

/// [`prepare_page`] with the screenshot's result `shot`.
fn prepare_page_with(
    c: &mut Conversation,
    first: Vec<Effect>,
    index_text: &str,
    screenshot: Value,
) -> Vec<Effect> {
    let look = submitted(&first);
    assert!(matches!(look.1, ActionCommand::BrowserObserve { .. }));
    ok(
        c,
        look,
        json!({
            "screenshot": { "result": screenshot },
            "readability": { "result": { "text": "Blue mug, 12 €", "title": "Shop", "contentLengthBytes": 14, "truncated": false } },
            // Element 1 is in view (its box within the 1280×720 screenshot); any other is not.
            "domIndex": { "result": { "elements": [
                { "clickId": 1, "tag": "button", "text": " Add to\n cart ", "bbox": { "x": 40, "y": 300, "w": 120, "h": 32 } },
                { "clickId": 2, "tag": "button", "text": "Place order" },
                { "clickId": 3, "tag": "a", "text": "ann.lee@mail.example" },
            ], "text": index_text, "url": "http://shop.test/", "title": "Shop" } },
        }),
    )
}

/// Answers the page's observation `look`: each part with its result (`Ok`) or the code it
/// failed with (`Err`); the effects of the answer.
fn observation(
    c: &mut Conversation,
    look: (String, ActionCommand),
    shot: Result<Value, &str>,
    read: Result<Value, &str>,
    index: Result<Value, &str>,
) -> Vec<Effect> {
    assert!(
        matches!(look.1, ActionCommand::BrowserObserve { .. }),
        "{look:?}"
    );
    let part = |p: Result<Value, &str>| match p {
        Ok(result) => json!({ "result": result }),
        Err(code) => json!({ "error": ErrorObject::new(
            serde_json::from_value(json!(code)).unwrap_or(ErrorCode::InternalError),
            "it failed",
        ) }),
    };
    ok(
        c,
        look,
        json!({ "screenshot": part(shot), "readability": part(read), "domIndex": part(index) }),
    )
}

/// A run whose first step navigates: the `task_start` it asks for.
fn opening(c: &mut Conversation) -> (String, ActionCommand) {
    let (turn, _) = turn_of(
        &c.answered(|c| c.user_message("open the shop".into(), None, None, 1))
            .unwrap(),
    );
    let navigate = agent_call("call_a", json!({ "navigate": { "url": "http://x/" } }));
    submitted(&reply(c, &turn, vec![navigate]))
}

/// … with the tab opened: what follows (the page's preparation).
fn navigated(c: &mut Conversation) -> Vec<Effect> {
    let start = opening(c);
    ok(
        c,
        start,
        json!({ "tabId": 7, "windowId": 1, "url": "http://x/" }),
    )
}

/// … and the first page prepared, showing `index_text`: the turn that decides step 2.
fn at_first_page(c: &mut Conversation, index_text: &str) -> String {
    let effects = navigated(c);
    turn_of(&prepare_page(c, effects, index_text)).0
}

#[test]
fn a_browser_task_runs_step_by_step_to_its_answer() {
    let mut c = bound();
    let (turn, messages) = turn_of(
        &c.answered(|c| c.user_message("buy a blue mug".into(), None, None, 1))
            .unwrap(),
    );
    assert!(messages[0].content.contains("AgentOutput"));

    // Step 1 navigates: the tab opens at the URL.
    let effects = reply(
        &mut c,
        &turn,
        vec![
            LlmEvent::TextDelta("Opening the shop.".into()),
            agent_call(
                "call_a",
                json!({ "navigate": { "url": "http://shop.test/" } }),
            ),
            LlmEvent::Usage {
                input_tokens: 100,
                output_tokens: 20,
            },
        ],
    );
    let started = events(&effects);
    assert!(started.iter().any(|e| matches!(e,
        FrontendEvent::ToolUsed { step: 1, phase: ToolPhase::Start, reflection: Some(r), usage: Some(u), .. }
            if r.memory == "memory at call_a" && u.input_tokens == 100)));
    let start = submitted(&effects);
    assert_eq!(start.0, format!("{TASK}.{turn}.start"));
    assert!(
        matches!(&start.1, ActionCommand::TaskStart { url: Some(u), .. } if u == "http://shop.test/")
    );

    let effects = ok(
        &mut c,
        start,
        json!({ "tabId": 7, "windowId": 1, "url": "http://shop.test/" }),
    );
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::ToolUsed { step: 1, phase: ToolPhase::End, result: Some(r), .. } if r.ok && r.tool_call_id == "call_a")));
    let effects = prepare_page(&mut c, effects, "[1]<button>Add to cart</button>");
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::PageObserved { step: 1, screenshot_artifact_id: Some(a), elements: 3, missing, .. }
            if a == "art_1" && missing.is_empty())));
    let (turn, messages) = turn_of(&effects);
    let page = &messages.last().unwrap().content;
    assert!(page.contains("[1]<button>Add to cart</button>") && page.contains("Blue mug, 12 €"));
    let result: Value = serde_json::from_str(&messages[messages.len() - 2].content).unwrap();
    assert_eq!(
        (result["toolCallId"].as_str(), result["ok"].as_bool()),
        (Some("call_a"), Some(true))
    );

    // Step 2 clicks a target that is gone: the failure goes back to the model.
    let click = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call("call_b", json!({ "click": { "index": 1 } }))],
    ));
    assert!(
        matches!(&click.1, ActionCommand::BrowserClick { target, .. } if target.click_id == Some(1))
    );
    let effects = failed(&mut c, click, "TARGET_NOT_FOUND");
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::ToolUsed { step: 2, phase: ToolPhase::End, result: Some(r), summary: Some(s), .. }
            if !r.ok && r.error.as_ref().unwrap().code == ErrorCode::TargetNotFound && s.contains("TARGET_NOT_FOUND"))));
    let (turn, messages) = turn_of(&prepare_page(
        &mut c,
        effects,
        "[2]<button>Add to cart</button>",
    ));
    let result: Value = serde_json::from_str(&messages[messages.len() - 2].content).unwrap();
    assert_eq!(result["ok"], false);
    assert_eq!(result["error"]["code"], "TARGET_NOT_FOUND");
    // The older page is a placeholder now, the latest in full.
    let all: String = messages[1..].iter().map(|m| m.content.clone()).collect();
    assert!(all.contains("<page_placeholder>after step 1"));
    assert!(all.contains("[2]<button>") && !all.contains("[1]<button>"));

    // Step 3 finishes.
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_c",
            json!({ "done": { "success": true, "text": "Added two mugs." } }),
        )],
    );
    let (status, output, _) = output_of(&effects);
    assert_eq!(status, OutputStatus::Ok);
    let output = output.unwrap();
    assert_eq!(output["text"], "Added two mugs.");
    assert_eq!(output["steps"], 3);
    // The run's tokens: step 1's usage (the others reported none).
    assert_eq!(output["usage"]["inputTokens"], 100);
    assert!(events(&effects).iter().any(
        |e| matches!(e, FrontendEvent::Message { message } if message.content == "Added two mugs.")
    ));
    assert_eq!(c.task().status, TaskStatus::Completed);
    assert!(!c.run().unwrap().is_active());
    assert!(!effects
        .iter()
        .any(|e| matches!(e, Effect::Submit { .. } | Effect::CallLlm(_))));
}

#[test]
fn a_plain_answer_ends_as_chat_without_a_run() {
    let mut c = bound();
    let (turn, _) = turn_of(
        &c.answered(|c| c.user_message("what is 2+2?".into(), None, None, 1))
            .unwrap(),
    );
    let mut effects = c.answered(|c| c.llm_event(&turn, LlmEvent::TextDelta("4".into()), 2));
    effects.extend(c.answered(|c| {
        c.llm_event(
            &turn,
            LlmEvent::Done {
                stop_reason: StopReason::EndTurn,
            },
            3,
        )
    }));
    assert!(c.run().is_none());
    assert_eq!(c.task().status, TaskStatus::Completed);
    assert!(!effects.iter().any(|e| matches!(
        e,
        Effect::Submit { .. }
            | Effect::Bind {
                client_id: None,
                purpose: BindPurpose::Run
            }
    )));
}

#[test]
fn an_unbound_task_binds_first_and_fails_clearly_when_no_extension_is_online() {
    let navigate = || {
        vec![agent_call(
            "call_a",
            json!({ "navigate": { "url": "http://x/" } }),
        )]
    };
    let mut c = Conversation::new(TASK.into(), 0);
    let (turn, _) = turn_of(
        &c.answered(|c| c.user_message("open the shop".into(), None, None, 1))
            .unwrap(),
    );
    let effects = reply(&mut c, &turn, navigate());
    assert!(effects.contains(&Effect::Bind {
        client_id: None,
        purpose: BindPurpose::Run
    }));
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    // The registry bound one (the shell selects it, then reports): task_start follows.
    c.select_client("client-1".into(), 5);
    let effects = c.answered(|c| c.client_bound(Ok(()), 5));
    assert!(matches!(
        submitted(&effects).1,
        ActionCommand::TaskStart { .. }
    ));

    // Nobody online.
    let mut c = Conversation::new(TASK.into(), 0);
    let (turn, _) = turn_of(
        &c.answered(|c| c.user_message("open the shop".into(), None, None, 1))
            .unwrap(),
    );
    reply(&mut c, &turn, navigate());
    let effects = c.answered(|c| c.client_bound(Err(ErrorObject::plugin_offline()), 5));
    let (status, _, error) = output_of(&effects);
    assert_eq!(status, OutputStatus::Error);
    assert_eq!(error.unwrap().code, ErrorCode::PluginOffline);
    assert_eq!(c.task().status, TaskStatus::Error);
}

#[test]
fn a_reply_without_a_tool_call_or_with_bad_arguments_is_retried_with_the_reason() {
    let mut c = bound();
    let turn = at_first_page(&mut c, "[1]<a>Home</a>");

    // Text only: retried at once, the model told to call the tool.
    let effects = reply(
        &mut c,
        &turn,
        vec![LlmEvent::TextDelta("I will click Home.".into())],
    );
    let (turn, messages) = turn_of(&effects);
    assert!(messages
        .last()
        .unwrap()
        .content
        .contains("must reply with a call of the AgentOutput tool"));
    assert!(effects
        .iter()
        .any(|e| matches!(e, Effect::CallLlm(LlmCall { delay_ms: 0, .. }))));

    // Arguments that do not match the schema: the tool result says what was wrong.
    let bad = LlmEvent::ToolCall(ToolCall {
        id: "call_bad".into(),
        name: "AgentOutput".into(),
        arguments: json!({ "action": { "click": { "index": "one" } } }),
    });
    let (turn, messages) = turn_of(&reply(&mut c, &turn, vec![bad]));
    let last = messages.last().unwrap();
    assert_eq!(last.tool_call_id.as_deref(), Some("call_bad"));
    assert!(
        last.content.contains("SCHEMA_VALIDATION_FAILED"),
        "{}",
        last.content
    );

    // A third failure in a row (network) is retried with backoff; the fourth ends the run.
    let effects =
        c.answered(|c| c.llm_event(&turn, LlmEvent::Error(LlmError::network("reset")), 30));
    assert!(effects
        .iter()
        .any(|e| matches!(e, Effect::CallLlm(LlmCall { delay_ms, .. }) if *delay_ms > 0)));
    let (turn, _) = turn_of(&effects);
    let effects =
        c.answered(|c| c.llm_event(&turn, LlmEvent::Error(LlmError::network("reset again")), 40));
    let (status, _, error) = output_of(&effects);
    assert_eq!(status, OutputStatus::Error);
    assert_eq!(error.unwrap().code, ErrorCode::LlmError);
    assert_eq!(c.task().status, TaskStatus::Error);
}

#[test]
fn a_valid_step_resets_the_retry_count_and_auth_errors_are_not_retried() {
    let mut c = bound();
    let turn = at_first_page(&mut c, "");
    let auth = LlmError::new(LlmErrorKind::Auth, "bad key");
    let effects = c.answered(|c| c.llm_event(&turn, LlmEvent::Error(auth), 30));
    assert!(!effects.iter().any(|e| matches!(e, Effect::CallLlm(_))));
    assert_eq!(output_of(&effects).2.unwrap().code, ErrorCode::LlmError);
}

/// Opens the task's tab and prepares its first page, the screenshot answered with `shot` (its
/// result, or the code it failed with), the rest as they should be; the effects of the last.
fn first_page_with_shot(c: &mut Conversation, shot: Result<Value, &str>) -> Vec<Effect> {
    let start = opening(c);
    let look = submitted(&ok(
        c,
        start,
        json!({ "tabId": 7, "windowId": 1, "url": "http://x/" }),
    ));
    observation(
        c,
        look,
        shot,
        Ok(json!({ "text": "hello", "contentLengthBytes": 5, "truncated": false })),
        Ok(json!({ "elements": [], "text": "", "url": "http://x/", "title": "X" })),
    )
}

#[test]
fn page_preparation_goes_on_with_one_capture_missing_and_fails_without_both() {
    let mut c = bound();
    let effects = first_page_with_shot(&mut c, Err("CDP_UNAVAILABLE"));
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::PageObserved { missing, .. } if missing == &vec!["screenshot".to_owned()])));
    let (turn, messages) = turn_of(&effects);
    assert!(messages
        .last()
        .unwrap()
        .content
        .contains("missing: screenshot"));

    // Next step: both captures fail.
    let click = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call("call_b", json!({ "click": { "index": 1 } }))],
    ));
    let look = submitted(&ok(&mut c, click, json!({ "clicked": true })));
    let effects = observation(
        &mut c,
        look,
        Err("CDP_UNAVAILABLE"),
        Err("READABILITY_TOO_LARGE"),
        Ok(json!({ "elements": [], "text": "", "url": "http://x/", "title": "X" })),
    );
    let (status, _, error) = output_of(&effects);
    assert_eq!(status, OutputStatus::Error);
    let error = error.unwrap();
    assert_eq!(error.code, ErrorCode::PagePrepFailed);
    assert!(error.retryable);
    assert_eq!(c.task().status, TaskStatus::Error);
    assert!(!effects
        .iter()
        .any(|e| matches!(e, Effect::Submit { .. } | Effect::CallLlm(_))));
}

#[test]
fn a_capture_whose_result_is_not_in_its_shape_says_what_is_wrong_with_it() {
    // A script that carries out the actions reports a screenshot without its artifact.
    let mut c = bound();
    let effects = first_page_with_shot(&mut c, Ok(json!({ "width": 800, "height": 600 })));
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::PageObserved { missing, warnings, .. } if missing == &vec!["screenshot".to_owned()]
            && warnings.iter().any(|w| w.starts_with("no screenshot: its result is not understood: missing field `artifactId`")))));
}

#[test]
fn the_step_limit_ends_the_run_with_a_clear_error() {
    let mut c = bound().with_config(RunConfig {
        max_steps: 2,
        ..RunConfig::default()
    });
    let turn = at_first_page(&mut c, "");
    let scroll = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_b",
            json!({ "scroll": { "direction": "down" } }),
        )],
    ));
    assert!(matches!(scroll.1, ActionCommand::BrowserScroll { .. }));
    let effects = ok(&mut c, scroll, json!({}));
    let effects = prepare_page(&mut c, effects, "");
    let (_, _, error) = output_of(&effects);
    let error = error.unwrap();
    assert_eq!(error.code, ErrorCode::StepLimitExceeded);
    assert!(error.message.contains("MIMO_AGENT_MAX_STEPS"));
    assert!(!effects.iter().any(|e| matches!(e, Effect::CallLlm(_))));
}

#[test]
fn stop_ends_the_run_and_late_results_change_nothing() {
    let mut c = bound();
    let start = opening(&mut c);
    c.stop(15);
    assert_eq!(c.task().status, TaskStatus::Canceled);
    assert!(ok(&mut c, start, json!({ "tabId": 7 })).is_empty());
}

#[test]
fn a_closed_task_tab_is_reopened_by_the_next_step() {
    let mut c = bound();
    let turn = at_first_page(&mut c, "");
    let click = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call("call_b", json!({ "click": { "index": 1 } }))],
    ));
    // The person closed the tab: no preparation, the model hears about it at once.
    let effects = failed(&mut c, click, "TASK_TAB_CLOSED");
    let (turn, messages) = turn_of(&effects);
    assert!(messages.last().unwrap().content.contains("No page is open"));
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call("call_c", json!({ "click": { "index": 1 } }))],
    );
    let (_, command) = submitted(&effects);
    assert!(matches!(
        command,
        ActionCommand::TaskStart { url: None, .. }
    ));
}

#[test]
fn points_and_boxes_are_in_the_screenshots_pixels() {
    let mut c = bound();
    let effects = navigated(&mut c);
    // A high-density screen: two image pixels per CSS pixel.
    let shot = json!({ "artifactId": "art_2x", "url": "https://x/a", "width": 1280, "height": 720, "scale": 2.0 });
    let (turn, messages) = turn_of(&prepare_page_with(
        &mut c,
        effects,
        "[1]<button>Add</button>",
        shot,
    ));
    let page = &messages[prompt::page_message(&messages).unwrap()].content;
    assert!(
        page.contains(
            "screenshot: 1280x720 pixels (click_at, hover_at and drag points are in its pixels)"
        ),
        "{page}"
    );
    // Element 1's box (40, 300, 120×32 CSS pixels) is kept in the image's pixels.
    assert_eq!(
        c.run().unwrap().observation.as_ref().unwrap().boxes.get(&1),
        Some(&[80, 600, 240, 64])
    );
    // A point read off the screenshot goes out with the scale it was read at.
    let (_, command) = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_b",
            json!({ "click_at": { "x": 400, "y": 300 } }),
        )],
    ));
    assert!(
        matches!(command, ActionCommand::BrowserClickAt { x, y, scale: Some(s), .. } if x == 400.0 && y == 300.0 && s == 2.0),
        "{command:?}"
    );
}

#[test]
fn a_closed_tab_of_a_task_with_another_goes_on_in_that_one() {
    let mut c = bound();
    let turn = at_first_page(&mut c, "");
    let (id, command) = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call("call_b", json!({ "click": { "index": 1 } }))],
    ));
    // The popup the click was for closed; the extension names the tab the task is in now.
    let mut closed = record(&id, command, ActionState::Failed, json!("TASK_TAB_CLOSED"));
    closed.outcome.as_mut().unwrap().tab_id = Some(8);
    let effects = c.answered(|c| c.action_finished(&closed, 20));
    assert!(c.run().unwrap().tab_open, "the task still has a tab");
    let (_, next) = submitted(&effects);
    assert!(
        matches!(next, ActionCommand::BrowserObserve { .. }),
        "the page it goes on in is looked at: {next:?}"
    );
}

#[test]
fn a_restarted_coordinator_continues_without_running_an_action_twice() {
    let mut c = bound();
    let start = opening(&mut c);
    let stored_run = c.run().cloned();
    let restore = || Conversation::restore(c.task().clone(), c.history.clone(), stored_run.clone());

    // The queue never stored the action: it was never sent, so it is submitted now, once.
    let mut fresh = restore();
    let effects = fresh.answered(|c| c.resume_run(|_| None, 30));
    assert_eq!(submitted(&effects), start);
    // The queue has it in flight: wait for its result.
    let mut fresh = restore();
    let in_flight = record(&start.0, start.1.clone(), ActionState::Acked, json!({}));
    assert!(fresh
        .answered(|c| c.resume_run(|_| Some(in_flight.clone()), 30))
        .is_empty());
    // It ended while nobody listened: the run takes the result and prepares the page.
    let mut fresh = restore();
    let done = record(
        &start.0,
        start.1.clone(),
        ActionState::Succeeded,
        json!({ "tabId": 7 }),
    );
    let effects = fresh.answered(|c| c.resume_run(|_| Some(done.clone()), 30));
    assert!(matches!(
        submitted(&effects).1,
        ActionCommand::BrowserObserve { .. }
    ));

    // A model call cut off by the restart is made again.
    let mut thinking = bound();
    let effects = navigated(&mut thinking);
    let (cut_turn, _) = turn_of(&prepare_page(&mut thinking, effects, "[1]<a>Home</a>"));
    let mut fresh = Conversation::restore(
        thinking.task().clone(),
        thinking.history.clone(),
        thinking.run().cloned(),
    );
    assert!(fresh.needs_recovery());
    let effects = fresh.answered(|c| c.recover(40));
    let (new_turn, messages) = turn_of(&effects);
    assert_ne!(new_turn, cut_turn);
    assert!(messages.last().unwrap().content.contains("[1]<a>Home</a>"));
}

#[test]
fn what_the_person_writes_during_a_run_reaches_the_next_step() {
    let mut c = bound();
    let start = opening(&mut c);
    let effects = c
        .answered(|c| c.user_message("only the large mug".into(), None, None, 12))
        .unwrap();
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::CallLlm(_))),
        "no second turn"
    );
    let effects = ok(
        &mut c,
        start,
        json!({ "tabId": 7, "windowId": 1, "url": "http://x/" }),
    );
    let (_, messages) = turn_of(&prepare_page(&mut c, effects, ""));
    assert!(messages
        .last()
        .unwrap()
        .content
        .contains("<user_update>\nonly the large mug"));
}

#[test]
fn a_takeover_lasts_through_the_model_thinking_until_resume() {
    let mut c = bound();
    let turn = at_first_page(&mut c, "");
    c.takeover(50);
    assert_eq!(c.task().status, TaskStatus::Takeover);
    // A failed call is retried while the person drives: still their browser.
    let effects =
        c.answered(|c| c.llm_event(&turn, LlmEvent::Error(LlmError::network("reset")), 60));
    turn_of(&effects);
    assert_eq!(c.task().status, TaskStatus::Takeover);
    c.resume(70);
    assert_eq!(c.task().status, TaskStatus::Running);
}

#[test]
fn a_pause_holds_the_next_model_call_until_resume() {
    let mut c = bound();
    let start = opening(&mut c);
    c.pause(15);
    assert_eq!(c.task().status, TaskStatus::Paused);
    // The tab that was opening opens; its page is prepared (the task's queue holds those
    // actions until resume); then no model call is made.
    let effects = ok(
        &mut c,
        start,
        json!({ "tabId": 7, "windowId": 1, "url": "http://x/" }),
    );
    let effects = prepare_page(&mut c, effects, "[1]<button>Buy</button>");
    assert!(!effects.iter().any(|e| matches!(e, Effect::CallLlm(_))));
    assert_eq!(c.task().status, TaskStatus::Paused);
    // Resume makes the held call, with the page it was for.
    let effects = c.answered(|c| c.resume(30));
    assert_eq!(c.task().status, TaskStatus::Running);
    let (_, messages) = turn_of(&effects);
    assert!(messages
        .last()
        .unwrap()
        .content
        .contains("[1]<button>Buy</button>"));
    // Resuming again changes nothing.
    assert!(c.resume(31).is_empty());
    // A task that is not running cannot be paused.
    c.stop(40);
    assert!(c.pause(41).is_empty());
    assert_eq!(c.task().status, TaskStatus::Canceled);
}

#[test]
fn an_extension_gone_for_good_ends_the_run_with_plugin_offline() {
    let mut c = bound();
    let turn = at_first_page(&mut c, "[1]<a>Home</a>");
    let click = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call("call_b", json!({ "click": { "index": 1 } }))],
    ));
    let effects = failed(&mut c, click, "PLUGIN_OFFLINE");
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::ToolUsed { step: 2, phase: ToolPhase::End, result: Some(r), .. } if !r.ok)));
    let (status, _, error) = output_of(&effects);
    assert_eq!(status, OutputStatus::Error);
    let error = error.unwrap();
    assert_eq!(error.code, ErrorCode::PluginOffline);
    assert!(error.message.contains("went offline"));
    assert!(!effects
        .iter()
        .any(|e| matches!(e, Effect::Submit { .. } | Effect::CallLlm(_))));
}

#[test]
fn an_irreversible_step_waits_for_the_person_who_may_confirm_or_decline() {
    let page = "[1]<button>Add to cart</button>\n[2]<button>Place order</button>";
    let mut c = bound();
    let turn = at_first_page(&mut c, page);
    // Adding to the cart goes ahead; its start says where its target is, for a replay.
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call("call_b", json!({ "click": { "index": 1 } }))],
    );
    let in_view = BoundingBox {
        x: 40.0,
        y: 300.0,
        w: 120.0,
        h: 32.0,
    };
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::ToolUsed { step: 2, phase: ToolPhase::Start, target: Some(b), target_name: Some(name), .. }
            if *b == in_view && name == "Add to cart")));
    // Names for people's step titles, none holding personal data.
    let names = &c.run().unwrap().observation.as_ref().unwrap().names;
    assert_eq!(
        names.values().collect::<Vec<_>>(),
        ["Add to cart", "Place order"]
    );
    let add = submitted(&effects);
    let effects = ok(&mut c, add, json!({ "clicked": true }));
    let turn = turn_of(&prepare_page(&mut c, effects, page)).0;

    // Placing the order waits.
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call("call_c", json!({ "click": { "index": 2 } }))],
    );
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::ConfirmationRequested(r) if r.step == 3 && r.reason.contains("Place order") && !r.step_by_step && r.target.is_none()
            && r.target_name.as_deref() == Some("Place order"))));
    assert!(
        events(&effects).iter().any(|e| matches!(
            e,
            FrontendEvent::ToolUsed {
                step: 3,
                phase: ToolPhase::Start,
                target: None,
                ..
            }
        )),
        "[2] has no box in view"
    );
    assert_eq!(c.task().status, TaskStatus::WaitingConfirmation);
    let wrong = c.answered(|c| c.confirm(2, approve(), 30)).unwrap_err();
    assert_eq!(wrong.code, ErrorCode::NotFound);

    // Declined: the model hears it and chooses again; nothing ran.
    let mut declined = Conversation::restore(c.task().clone(), c.history.clone(), c.run().cloned());
    let effects = declined
        .answered(|c| c.confirm(3, decline("  wrong shop, use the other one  "), 30))
        .unwrap();
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::ConfirmationAnswered { approved: false, by, reason: Some(reason), .. }
            if by == "extension" && reason == "wrong shop, use the other one")));
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    let (_, messages) = turn_of(&effects);
    let result: Value = serde_json::from_str(&messages[messages.len() - 2].content).unwrap();
    assert_eq!(result["error"]["code"], "CONFIRMATION_REQUIRED");
    assert!(
        result["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"wrong shop, use the other one\""),
        "the model hears why: {result}"
    );
    assert_eq!(declined.task().status, TaskStatus::Running);

    // Confirmed (a script may approve a page's risky step too): it runs, once.
    let mut by_script =
        Conversation::restore(c.task().clone(), c.history.clone(), c.run().cloned());
    let scripted = ConfirmAnswer {
        by: crate::credentials::Confirmer::Api,
        ..approve()
    };
    assert!(sent_any(
        &by_script.answered(|c| c.confirm(3, scripted, 30)).unwrap()
    ));
    let effects = c.answered(|c| c.confirm(3, approve(), 30)).unwrap();
    let (_, command) = submitted(&effects);
    assert!(
        matches!(command, ActionCommand::BrowserClick { target, .. } if target.click_id == Some(2))
    );
    assert_eq!(c.task().status, TaskStatus::Running);
    assert!(
        c.answered(|c| c.confirm(3, approve(), 31)).is_err(),
        "answered already"
    );
}

fn sent_any(effects: &[Effect]) -> bool {
    effects.iter().any(|e| matches!(e, Effect::Submit { .. }))
}

fn approve() -> ConfirmAnswer {
    ConfirmAnswer {
        approve: true,
        reason: None,
        by: crate::credentials::Confirmer::Web,
    }
}

fn decline(reason: &str) -> ConfirmAnswer {
    ConfirmAnswer {
        approve: false,
        reason: Some(reason.into()),
        by: crate::credentials::Confirmer::Extension,
    }
}

#[test]
fn step_by_step_every_step_waits_for_next_step_and_a_risky_one_says_why() {
    let page = "[1]<button>Add to cart</button>\n[2]<button>Place order</button>";
    let mut c = bound();
    let turn = at_first_page(&mut c, page);
    let effects = c.set_step_mode(true, 5);
    assert!(events(&effects)
        .iter()
        .any(|e| matches!(e, FrontendEvent::StepMode { step_by_step: true })));
    assert!(c.task().step_by_step);
    assert!(
        c.set_step_mode(true, 6).is_empty(),
        "no change, nothing said"
    );

    // A harmless click waits too, marked as held for the mode.
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call("call_b", json!({ "click": { "index": 1 } }))],
    );
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::ConfirmationRequested(r) if r.step_by_step && r.reason.starts_with("Step by step"))));
    assert_eq!(c.task().status, TaskStatus::WaitingConfirmation);
    // "Next step" runs it.
    let add = submitted(&c.answered(|c| c.confirm(2, approve(), 10)).unwrap());
    let effects = ok(&mut c, add, json!({ "clicked": true }));
    let turn = turn_of(&prepare_page(&mut c, effects, page)).0;

    // A risky step is held for its risk, not for the mode.
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call("call_c", json!({ "click": { "index": 2 } }))],
    );
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::ConfirmationRequested(r) if !r.step_by_step && r.reason.contains("Place order"))));

    // Off again: the next harmless step runs at once.
    c.set_step_mode(false, 20);
    let effects = c.answered(|c| c.confirm(3, approve(), 21)).unwrap();
    submitted(&effects);
}

#[test]
fn confirmations_can_be_turned_off() {
    let mut c = bound().with_config(RunConfig {
        confirm_risky: false,
        ..RunConfig::default()
    });
    let turn = at_first_page(&mut c, "[2]<button>Place order</button>");
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call("call_c", json!({ "click": { "index": 2 } }))],
    );
    assert!(matches!(
        submitted(&effects).1,
        ActionCommand::BrowserClick { .. }
    ));
}

/// Records as the previous release stored them (captured from it, never regenerated): a run in
/// the middle of a step, the action it waits for, and the events of its history. Every stored
/// type must keep reading them — a field added without a default would break every stored task
/// after a deploy.
#[test]
fn records_stored_by_the_previous_release_still_load() {
    let run: AgentRun = serde_json::from_str(include_str!("stored/agent_run.json")).unwrap();
    let action: ActionRecord =
        serde_json::from_str(include_str!("stored/action_record.json")).unwrap();
    let events: Vec<mimo_protocol::EventEnvelope> =
        serde_json::from_str(include_str!("stored/events.json")).unwrap();
    assert_eq!(events.len(), 7);
    assert!(
        matches!(run.phase, Phase::Acting { ref action_id, .. } if *action_id == action.action_id)
    );
    assert_eq!(run.overflows, 0, "no prompt of it was too long");
    // The run picks up from them: the stored click ended, so the page is prepared next.
    let mut c = bound();
    c.answered(|c| c.user_message("buy a blue mug".into(), None, None, 1))
        .unwrap();
    let mut restored = Conversation::restore(c.task().clone(), Vec::new(), Some(run));
    let effects = restored
        .answered(|c| c.resume_run(|id| (id == action.action_id).then(|| action.clone()), 30));
    assert!(matches!(
        submitted(&effects).1,
        ActionCommand::BrowserObserve { .. }
    ));
}

/// A script's observation, one capture at a time: the wait for the page, then the screenshot
/// answered with `shot`, the readable text with `read`, the element list; the effects of the
/// last action answered.
fn captured_one_by_one(
    c: &mut Conversation,
    load: (String, ActionCommand),
    shot: Result<Value, &str>,
    read: Result<Value, &str>,
) -> Vec<Effect> {
    assert!(
        matches!(load.1, ActionCommand::BrowserWaitForLoaded { .. }),
        "{load:?}"
    );
    let capture = submitted(&ok(c, load, json!({ "status": "complete" })));
    assert!(
        matches!(capture.1, ActionCommand::BrowserScreenshot { .. }),
        "{capture:?}"
    );
    let answer = |c: &mut Conversation, action, result: Result<Value, &str>| match result {
        Ok(result) => ok(c, action, result),
        Err(code) => failed(c, action, code),
    };
    let text = submitted(&answer(c, capture, shot));
    assert!(
        matches!(text.1, ActionCommand::BrowserReadabilityExtract {}),
        "{text:?}"
    );
    let effects = answer(c, text, read);
    let Some(index) = submission(&effects) else {
        return effects;
    };
    assert!(
        matches!(index.1, ActionCommand::BrowserDomIndex { .. }),
        "{index:?}"
    );
    ok(
        c,
        index,
        json!({ "elements": [], "text": "[1]<a>Home</a>", "url": "http://x/", "title": "X" }),
    )
}

#[test]
fn a_script_is_asked_for_the_page_one_capture_at_a_time() {
    // The script protocol has no `observe`: its executor captures the page action by action.
    let mut c = Conversation::new(TASK.into(), 0);
    c.select_client(mimo_protocol::script::script_client_id(TASK), 0);
    let load = submitted(&navigated(&mut c));
    let effects = captured_one_by_one(
        &mut c,
        load,
        Err("CDP_UNAVAILABLE"),
        Ok(json!({ "text": "Home page", "contentLengthBytes": 9, "truncated": false })),
    );
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::PageObserved { missing, .. } if missing == &vec!["screenshot".to_owned()])));
    let (turn, messages) = turn_of(&effects);
    let page = &messages.last().unwrap().content;
    assert!(
        page.contains("Home page") && page.contains("[1]<a>Home</a>"),
        "{page}"
    );
    // Both captures failing fails the preparation before the element list is asked for.
    let click = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call("call_b", json!({ "click": { "index": 1 } }))],
    ));
    let load = submitted(&ok(&mut c, click, json!({ "clicked": true })));
    let effects = captured_one_by_one(&mut c, load, Err("TIMEOUT"), Err("CDP_UNAVAILABLE"));
    let (_, _, error) = output_of(&effects);
    assert_eq!(error.unwrap().code, ErrorCode::PagePrepFailed);
}

#[test]
fn a_run_stored_mid_capture_by_the_previous_release_goes_on_capturing() {
    // The previous release prepared every page one capture at a time; a run stored waiting for
    // its screenshot takes the result and goes on with the readable text.
    let mut c = bound();
    let effects = navigated(&mut c);
    let (look_id, _) = submitted(&effects);
    let mut stored = serde_json::to_value(c.run().unwrap()).unwrap();
    let shot_id = look_id.replace(".look", ".shot");
    stored["phase"] = json!({
        "kind": "acting", "actionId": shot_id, "purpose": "screenshot",
        "command": { "name": "browser_screenshot", "params": {} },
    });
    let run: AgentRun = serde_json::from_value(stored).unwrap();
    let mut restored = Conversation::restore(c.task().clone(), c.history.clone(), Some(run));
    let shot = record(
        &shot_id,
        ActionCommand::BrowserScreenshot { full_page: None },
        ActionState::Succeeded,
        json!({ "artifactId": "art_1", "url": "https://x/a", "width": 10, "height": 10 }),
    );
    let read = submitted(&restored.answered(|c| c.action_finished(&shot, 30)));
    assert!(matches!(
        read.1,
        ActionCommand::BrowserReadabilityExtract {}
    ));
    let index = submitted(&ok(
        &mut restored,
        read,
        json!({ "text": "t", "contentLengthBytes": 1, "truncated": false }),
    ));
    let effects = ok(
        &mut restored,
        index,
        json!({ "elements": [], "text": "", "url": "http://x/", "title": "X" }),
    );
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::PageObserved { screenshot_artifact_id: Some(a), missing, .. } if a == "art_1" && missing.is_empty())));
    turn_of(&effects);
}

#[test]
fn an_observation_is_read_part_by_part_as_the_protocol_writes_it() {
    use mimo_protocol::action::{ObserveResult, ObservedPart};
    let mut c = bound();
    let look = submitted(&navigated(&mut c));
    // As the extension sends it: the screenshot failed, the element list is cut (partial).
    let parts = ObserveResult {
        not_loaded: Some("the page did not finish loading within 10000 ms".into()),
        screenshot: ObservedPart {
            result: None,
            error: Some(ErrorObject::new(ErrorCode::CdpUnavailable, "no debugger")),
            partial: false,
            warnings: Vec::new(),
        },
        readability: ObservedPart {
            result: Some(
                serde_json::from_value(
                    json!({ "text": "Blue mug", "contentLengthBytes": 8, "truncated": false }),
                )
                .unwrap(),
            ),
            error: None,
            partial: false,
            warnings: Vec::new(),
        },
        dom_index: ObservedPart {
            result: Some(
                serde_json::from_value(
                    json!({ "elements": [{ "clickId": 1, "tag": "button", "text": "Buy" }],
                    "text": "[1]<button>Buy</button>", "url": "http://x/", "title": "X" }),
                )
                .unwrap(),
            ),
            error: None,
            partial: true,
            warnings: vec!["only the first 1 elements are listed".into()],
        },
    };
    let effects = ok(&mut c, look, serde_json::to_value(parts).unwrap());
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::PageObserved { elements: 1, missing, warnings, .. }
            if missing == &vec!["screenshot".to_owned()]
            && warnings.iter().any(|w| w == "no screenshot: CDP_UNAVAILABLE: no debugger")
            && warnings.iter().any(|w| w.starts_with("the page did not finish loading: "))
            && warnings.iter().any(|w| w == "only the first 1 elements are listed"))));
    let (_, messages) = turn_of(&effects);
    let page = &messages.last().unwrap().content;
    assert!(
        page.contains("Blue mug") && page.contains("[1]<button>Buy</button>"),
        "{page}"
    );
}

#[test]
fn an_observation_that_failed_as_a_whole_fails_the_preparation() {
    let mut c = bound();
    let look = submitted(&navigated(&mut c));
    let effects = failed(&mut c, look, "TIMEOUT");
    let (status, _, error) = output_of(&effects);
    assert_eq!(status, OutputStatus::Error);
    assert_eq!(error.unwrap().code, ErrorCode::PagePrepFailed);
}

/// The model's tool arguments, from anything at all to nearly valid: whatever the model sends,
/// the step is taken exactly as the arguments say, or the model is told why they were refused.
/// `make fuzz` runs these longer as the `tool_arguments` target.
mod properties {
    use mimo_proptest::{cases, json_value, text, tweaked};
    use proptest::option::of;
    use proptest::prelude::*;
    use proptest::sample::select;

    use super::*;

    /// Arguments shaped like `AgentOutput`: the reflection and one action of the catalog with
    /// values of the right types (a valid call), before any tweak.
    fn agent_output_json() -> impl Strategy<Value = Value> {
        let action = prop_oneof![
            text().prop_map(|url| json!({ "navigate": { "url": url } })),
            any::<u32>().prop_map(|index| json!({ "click": { "index": index } })),
            (any::<u32>(), text(), any::<bool>()).prop_map(|(index, text, submit)| {
                json!({ "type": { "index": index, "text": text, "submit": submit } })
            }),
            (any::<u32>(), text()).prop_map(|(index, option)| {
                json!({ "select_option": { "index": index, "option": option } })
            }),
            (select(vec!["up", "down", "left", "right"]), of(any::<u32>()), of(any::<u32>()))
                .prop_map(|(direction, index, amount)| {
                    json!({ "scroll": { "direction": direction, "index": index, "amount": amount } })
                }),
            text().prop_map(|key| json!({ "press_key": { "key": key } })),
            any::<u32>().prop_map(|index| json!({ "hover": { "index": index } })),
            Just(json!({ "back": {} })),
            Just(json!({ "forward": {} })),
            (of(text()), of(text()), of(text()), of(any::<u32>())).prop_map(
                |(text, url, selector, timeout_ms)| {
                    json!({ "wait_for": { "text": text, "url": url, "selector": selector,
                                          "timeout_ms": timeout_ms } })
                }
            ),
            (any::<bool>(), text())
                .prop_map(|(success, text)| json!({ "done": { "success": success, "text": text } })),
        ];
        (text(), text(), text(), action).prop_map(|(evaluation, memory, next_goal, action)| {
            json!({
                "evaluation_previous_goal": evaluation,
                "memory": memory,
                "next_goal": next_goal,
                "action": action,
            })
        })
    }

    fn arguments() -> impl Strategy<Value = Value> {
        prop_oneof![
            agent_output_json(),
            agent_output_json().prop_flat_map(|v| tweaked(v, 3)),
            json_value(),
        ]
    }

    proptest! {
        // Each case plays a run up to its first page: about a millisecond natively.
        #![proptest_config(cases(256))]

        #[test]
        fn tool_arguments_are_acted_on_or_refused_with_the_reason(
            arguments in arguments(),
            name in prop_oneof![4 => Just(AGENT_TOOL_NAME.to_owned()), 1 => text()],
            thought in text(),
        ) {
            let mut c = bound();
            let turn = at_first_page(&mut c, "[1]<a>Home</a>");
            let call = LlmEvent::ToolCall(ToolCall {
                id: "call_x".into(),
                name: name.clone(),
                arguments: arguments.clone(),
            });
            let effects = reply(&mut c, &turn, vec![LlmEvent::TextDelta(thought), call]);
            let parsed = serde_json::from_value::<AgentOutput>(arguments);
            match parsed {
                Ok(output) if name == AGENT_TOOL_NAME => {
                    let started = events(&effects).into_iter().any(|e| matches!(e,
                        FrontendEvent::ToolUsed { phase: ToolPhase::Start, action, reflection: Some(r), .. }
                            if action == output.action && r == output.reflection));
                    prop_assert!(started, "{:#?}", effects);
                }
                _ => {
                    let (_, messages) = turn_of(&effects);
                    let told = messages.last().expect("a message");
                    prop_assert_eq!(told.tool_call_id.as_deref(), Some("call_x"));
                    prop_assert!(told.content.contains("SCHEMA_VALIDATION_FAILED"), "{}", told.content);
                }
            }
        }
    }
}

#[test]
fn an_empty_element_list_is_said_to_the_model_and_the_web_app() {
    let mut c = bound();
    let effects = navigated(&mut c);
    let look = submitted(&effects);
    let effects = observation(
        &mut c,
        look,
        Ok(json!({ "artifactId": "art_1", "url": "https://x/a", "width": 10, "height": 10 })),
        Ok(
            json!({ "text": "Loading your dashboard…", "title": "App", "contentLengthBytes": 23, "truncated": false }),
        ),
        Ok(json!({ "elements": [], "text": "", "url": "http://app.test/", "title": "App" })),
    );
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::PageObserved { elements: 0, warnings, .. }
            if warnings.iter().any(|w| w.starts_with("no interactive elements")))));
    let (_, messages) = turn_of(&effects);
    let page = &messages.last().unwrap().content;
    assert!(
        page.contains("warning: no interactive elements were found"),
        "{page}"
    );
    assert!(page.contains("Loading your dashboard…"));
}

#[test]
fn a_dialog_the_step_opened_stops_the_preparation_and_is_answered_by_the_model() {
    let mut c = bound();
    let turn = at_first_page(&mut c, "[1]<button>Empty trash</button>");
    let click = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call("call_b", json!({ "click": { "index": 1 } }))],
    ));
    let mut clicked = record(&click.0, click.1, ActionState::Succeeded, json!({}));
    let asking = PageDialog {
        kind: mimo_protocol::DialogKind::Confirm,
        message: "Delete everything in the trash?".into(),
        default_prompt: None,
        url: "http://shop.test/".into(),
    };
    clicked.outcome.as_mut().unwrap().dialog = Some(Box::new(asking.clone()));
    let effects = c.answered(|c| c.action_finished(&clicked, 20));

    // Nothing on the page can be read while the dialog holds its scripts: no preparation.
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::PageObserved { step: 2, dialog: Some(d), url, title, .. }
            if d == &asking && url == "http://shop.test/" && title == "Shop")));
    let (turn, messages) = turn_of(&effects);
    let page = &messages.last().unwrap().content;
    assert!(
        page.contains("a confirm dialog") && page.contains("\"Delete everything in the trash?\""),
        "{page}"
    );
    assert!(page.contains("use the dialog action"), "{page}");

    // OK to "Delete everything?" is the irreversible step: it waits for the person.
    let ok_dialog = json!({ "dialog": { "accept": true } });
    let effects = reply(&mut c, &turn, vec![agent_call("call_c", ok_dialog)]);
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::ConfirmationRequested(r) if r.step == 3 && r.reason.contains("Delete everything"))));
    assert_eq!(c.task().status, TaskStatus::WaitingConfirmation);
    let answer = submitted(&c.answered(|c| c.confirm(3, approve(), 30)).unwrap());
    assert_eq!(
        answer.1,
        ActionCommand::BrowserDialog {
            accept: true,
            text: None
        }
    );
    // Answered, the page goes on: it is prepared as after any step.
    let effects = ok(&mut c, answer, json!({ "accepted": true }));
    assert!(matches!(
        submitted(&effects).1,
        ActionCommand::BrowserObserve { .. }
    ));
}

#[test]
fn a_dialog_found_while_preparing_the_page_ends_the_preparation_with_it() {
    let mut c = bound();
    let effects = navigated(&mut c);
    let look = submitted(&effects);
    let mut loaded = record(
        &look.0,
        look.1,
        ActionState::Failed,
        json!("TARGET_NOT_INTERACTABLE"),
    );
    loaded.outcome.as_mut().unwrap().dialog = Some(Box::new(PageDialog {
        kind: mimo_protocol::DialogKind::Alert,
        message: "Welcome!".into(),
        default_prompt: None,
        url: "http://x/".into(),
    }));
    let effects = c.answered(|c| c.action_finished(&loaded, 20));
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::PageObserved { dialog: Some(d), missing, .. } if d.message == "Welcome!" && missing.is_empty())));
    let (_, messages) = turn_of(&effects);
    assert!(messages.last().unwrap().content.contains("an alert"));
}

#[test]
fn an_attached_file_is_named_to_the_model_and_uploaded_by_its_name() {
    let mut c = bound();
    let contract = mimo_protocol::Attachment {
        artifact_id: "art_contract".into(),
        name: "contract.pdf".into(),
        content_type: "application/pdf".into(),
        size: 120_000,
    };
    let told = c.file_attached(contract.clone());
    assert!(events(&told).iter().any(
        |e| matches!(e, FrontendEvent::FileAttached { attachment } if attachment == &contract)
    ));
    assert!(
        c.file_attached(contract.clone()).is_empty(),
        "the same file told twice is one file"
    );
    let turn = at_first_page(&mut c, "[1]<input type=file name=contract>");
    // An unknown name is the step's error; the model chooses again.
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_b",
            json!({ "upload_file": { "index": 1, "file": "cv.pdf" } }),
        )],
    );
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::ToolUsed { phase: ToolPhase::End, result: Some(r), .. }
            if r.error.as_ref().is_some_and(|e| e.code == ErrorCode::TargetNotFound && e.message.contains("\"contract.pdf\"")))));
    let (turn, messages) = turn_of(&effects);
    let note = messages
        .iter()
        .find(|m| m.content.contains("<attachments>"))
        .expect("the model is told of the attached files");
    assert!(
        note.content
            .contains("\"contract.pdf\" (application/pdf, 118 KB)"),
        "{}",
        note.content
    );
    let upload = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_c",
            json!({ "upload_file": { "index": 1, "file": "contract.pdf" } }),
        )],
    ));
    assert_eq!(
        upload.1,
        ActionCommand::BrowserUploadFile {
            target: mimo_protocol::Target {
                // Element 1 had no risky facts when the step was rated: it must have none still.
                expect: Some(Box::default()),
                ..mimo_protocol::Target::click_id(1)
            },
            artifact_id: "art_contract".into(),
            name: "contract.pdf".into(),
            content_type: "application/pdf".into(),
        }
    );
}

#[test]
fn the_persons_tabs_are_listed_and_read_without_opening_a_tab_of_the_task() {
    let mut c = bound();
    let tab = |tab_id: i32, title: &str, url: &str| mimo_protocol::TabInfo {
        tab_id,
        window_id: 1,
        index: 0,
        url: url.into(),
        title: title.into(),
        status: "complete".into(),
        active: tab_id == 5,
        group_id: None,
    };
    c.browser = Some(mimo_protocol::BrowserSnapshot {
        windows: Vec::new(),
        tabs: vec![
            tab(5, "Blue mug – Shop", "https://shop.test/mug?session=s3cr3t"),
            tab(6, "Settings", "chrome://settings"),
        ],
        groups: Vec::new(),
        active_tab_id: Some(5),
        bridge: None,
    });
    let (turn, messages) = turn_of(
        &c.answered(|c| {
            c.user_message(
                "what is the price of the mug I have open?".into(),
                None,
                None,
                1,
            )
        })
        .unwrap(),
    );
    let tabs = messages
        .iter()
        .find(|m| m.content.contains("<browser_tabs>"))
        .expect("the person's tabs are listed");
    assert!(
        tabs.content.contains(
            "- tab_id 5 (the tab the user is looking at): \"Blue mug – Shop\" https://shop.test\n"
        ),
        "titles and origins only, never a path or query: {}",
        tabs.content
    );
    assert!(!tabs.content.contains("s3cr3t"));
    assert!(
        !tabs.content.contains("chrome://"),
        "only web pages: {}",
        tabs.content
    );
    let read = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call("call_a", json!({ "read_tab": { "tab_id": 5 } }))],
    ));
    assert_eq!(read.1, ActionCommand::BrowserReadTab { tab_id: 5 });
    // Read, the model hears what the tab says; no tab of the task was opened to read it.
    let effects = ok(
        &mut c,
        read,
        json!({ "tabId": 5, "title": "Blue mug – Shop", "text": "Blue mug, 12 €" }),
    );
    let (_, messages) = turn_of(&effects);
    assert!(messages
        .iter()
        .any(|m| m.content.contains("Blue mug, 12 €")));
    assert!(!c.run().unwrap().tab_open);
}

#[test]
fn a_run_continues_on_the_persons_tab_when_asked_and_only_that_run() {
    let mut c = bound();
    assert!(c.start_on_tab(Some(42), 0).is_empty());
    let (turn, messages) = turn_of(
        &c.answered(|c| c.user_message("add this to my cart".into(), None, None, 1))
            .unwrap(),
    );
    assert!(messages
        .iter()
        .any(|m| m.content.contains("continue on their tab 42")));
    let start = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_a",
            json!({ "wait_for": { "url": "shop.test" } }),
        )],
    ));
    assert!(matches!(
        start.1,
        ActionCommand::TaskStart {
            adopt_tab_id: Some(42),
            ..
        }
    ));
    let effects = ok(
        &mut c,
        start,
        json!({ "tabId": 42, "windowId": 1, "url": "http://shop.test/" }),
    );
    assert_eq!(c.task().start_tab, None, "taken by this run");
    // The step's own action follows in that tab.
    assert!(matches!(
        submitted(&effects).1,
        ActionCommand::BrowserWaitFor { .. }
    ));
}

/// The screenshot a model call among `effects` asks to send, and the message it joins.
fn image_of(effects: &[Effect]) -> Option<(String, llm::ChatMessage)> {
    effects.iter().find_map(|e| match e {
        Effect::CallLlm(LlmCall {
            messages,
            image: Some(image),
            ..
        }) => Some((image.artifact_id.clone(), messages[image.message].clone())),
        _ => None,
    })
}

/// Whether the observation `effects` submit waits for its captures to be stored.
fn observe_waits_stored(effects: &[Effect]) -> Option<bool> {
    match submitted(effects).1 {
        ActionCommand::BrowserObserve { wait_stored, .. } => wait_stored,
        other => panic!("not an observation: {other:?}"),
    }
}

fn with_vision() -> Conversation {
    bound().with_config(RunConfig {
        vision: true,
        ..RunConfig::default()
    })
}

#[test]
fn with_vision_each_call_sends_the_latest_pages_screenshot_only() {
    let mut c = with_vision();
    let first = c
        .answered(|c| c.user_message("buy a blue mug".into(), None, None, 1))
        .unwrap();
    assert_eq!(image_of(&first), None, "no page yet");
    let (turn, _) = turn_of(&first);
    let navigate = agent_call("call_a", json!({ "navigate": { "url": "http://x/" } }));
    let start = submitted(&reply(&mut c, &turn, vec![navigate]));
    let effects = ok(&mut c, start, json!({ "tabId": 7, "url": "http://x/" }));
    // The model reads the screenshot from R2 at once: the observation waits until it is stored.
    assert_eq!(observe_waits_stored(&effects), None);
    let effects = prepare_page_shot(&mut c, effects, "[1]<button>Add</button>", "art_1");
    let (artifact, page) = image_of(&effects).expect("the screenshot goes with the page");
    assert_eq!(artifact, "art_1");
    assert!(page.content.starts_with("<page>") && page.content.contains("[1]<button>Add"));
    assert_eq!(page.role, llm::Role::User);

    let (turn, _) = turn_of(&effects);
    let click = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call("call_b", json!({ "click": { "index": 1 } }))],
    ));
    let effects = ok(&mut c, click, json!({}));
    let effects = prepare_page_shot(&mut c, effects, "[2]<button>Next</button>", "art_2");
    let (artifact, page) = image_of(&effects).unwrap();
    assert_eq!(artifact, "art_2", "only the latest page's");
    assert!(page.content.contains("[2]<button>Next"));
    let (_, messages) = turn_of(&effects);
    assert!(
        messages.iter().all(|m| m.image.is_none()),
        "the core names the image; the coordinator reads and attaches it"
    );

    // A page without a screenshot sends none (the previous page's is not the page).
    let (turn, _) = turn_of(&effects);
    let click = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call("call_c", json!({ "click": { "index": 2 } }))],
    ));
    let look = submitted(&ok(&mut c, click, json!({})));
    let effects = observation(
        &mut c,
        look,
        Err("CDP_UNAVAILABLE"),
        Ok(json!({ "text": "t", "title": "T", "contentLengthBytes": 1, "truncated": false })),
        Ok(json!({ "elements": [], "text": "", "url": "http://x/", "title": "" })),
    );
    turn_of(&effects);
    assert_eq!(image_of(&effects), None);
}

#[test]
fn without_vision_no_screenshot_is_sent() {
    let mut c = bound();
    let effects = navigated(&mut c);
    // Nothing of the observation is read from R2: the next call does not wait for the uploads.
    assert_eq!(observe_waits_stored(&effects), Some(false));
    let effects = prepare_page(&mut c, effects, "[1]<button>Add</button>");
    turn_of(&effects);
    assert_eq!(image_of(&effects), None);
}

#[test]
fn a_model_that_refuses_the_screenshot_goes_on_with_text_for_the_rest_of_the_run() {
    let mut c = with_vision();
    let effects = navigated(&mut c);
    let effects = prepare_page(&mut c, effects, "[1]<button>Add</button>");
    let (turn, _) = turn_of(&effects);
    assert!(image_of(&effects).is_some());
    let refused = LlmError::new(
        LlmErrorKind::ImageRefused,
        "image_url is only supported by certain models",
    );
    let effects = c.answered(|c| c.llm_event(&turn, LlmEvent::Error(refused.clone()), 30));
    // The same call again at once, without the image, and the web app told why.
    let (retry, messages) = turn_of(&effects);
    assert!(effects.iter().any(|e| matches!(
        e,
        Effect::CallLlm(LlmCall {
            delay_ms: 0,
            image: None,
            ..
        })
    )));
    assert!(messages.last().unwrap().content.contains("[1]<button>Add"));
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::Warning { message } if message.contains("image_url is only supported") && message.contains("text only"))));
    assert!(c.run().unwrap().images_refused, "kept with the run");
    assert_eq!(c.run().unwrap().llm_retries, 0, "not a failed call");

    // Later pages go without it too.
    let click = submitted(&reply(
        &mut c,
        &retry,
        vec![agent_call("call_b", json!({ "click": { "index": 1 } }))],
    ));
    let effects = ok(&mut c, click, json!({}));
    assert_eq!(observe_waits_stored(&effects), Some(false));
    let effects = prepare_page_shot(&mut c, effects, "[2]<button>Next</button>", "art_2");
    let (turn, _) = turn_of(&effects);
    assert_eq!(image_of(&effects), None);
    // Refused again without an image, it is an error like any bad request.
    let effects = c.answered(|c| c.llm_event(&turn, LlmEvent::Error(refused), 40));
    let (status, _, error) = output_of(&effects);
    assert_eq!(status, OutputStatus::Error);
    assert_eq!(error.unwrap().code, ErrorCode::LlmError);
}

/// The model clicking [1] on a page that never changes, `steps` times; the effects of the last.
fn click_in_circles(c: &mut Conversation, steps: u32) -> Vec<Effect> {
    let mut turn = at_first_page(c, "[1]<button>Next</button>");
    let mut effects = Vec::new();
    for n in 0..steps {
        effects = reply(
            c,
            &turn,
            vec![
                agent_call(&format!("call_{n}"), json!({ "click": { "index": 1 } })),
                LlmEvent::Usage {
                    input_tokens: 100,
                    output_tokens: 10,
                },
            ],
        );
        let Some((action_id, command)) = submission(&effects) else {
            return effects;
        };
        let clicked = ok(c, (action_id, command), json!({}));
        let next = prepare_page(c, clicked, "[1]<button>Next</button>");
        turn = turn_of(&next).0;
        effects = next;
    }
    effects
}

#[test]
fn the_same_action_on_an_unchanged_page_is_warned_about_then_ends_the_run() {
    let at_most_six = || {
        bound().with_config(RunConfig {
            max_repeats: 6,
            ..RunConfig::default()
        })
    };
    let effects = click_in_circles(&mut at_most_six(), 2);
    let (_, messages) = turn_of(&effects);
    assert!(!messages
        .iter()
        .any(|m| m.content.contains("<loop_warning>")));
    let effects = click_in_circles(&mut at_most_six(), 3);
    let (_, messages) = turn_of(&effects);
    let warning = &messages.last().unwrap().content;
    assert!(
        warning.contains("<loop_warning>") && warning.contains("click on this same page 3 times"),
        "{warning}"
    );
    // At the limit the step is not run and the run ends.
    let mut c = at_most_six();
    let effects = click_in_circles(&mut c, 6);
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    let (status, _, error) = output_of(&effects);
    assert_eq!(status, OutputStatus::Error);
    let error = error.unwrap();
    assert_eq!(error.code, ErrorCode::LoopDetected);
    assert!(
        error.message.contains("6 times in a row"),
        "{}",
        error.message
    );
    assert_eq!(c.task().status, TaskStatus::Error);
}

#[test]
fn a_run_over_its_token_or_cost_budget_ends_before_its_next_step() {
    let mut c = bound().with_config(RunConfig {
        max_tokens: Some(250),
        ..RunConfig::default()
    });
    // 110 tokens a step: the third click's choice takes the run to 330.
    let effects = click_in_circles(&mut c, 3);
    let (status, _, error) = output_of(&effects);
    assert_eq!(status, OutputStatus::Error);
    let error = error.unwrap();
    assert_eq!(error.code, ErrorCode::BudgetExceeded);
    assert!(error.message.contains("330 tokens"), "{}", error.message);

    let priced = || {
        bound().with_config(RunConfig {
            max_cost_micros: Some(2_000),
            price: Some(crate::llm::Price::dollars(5.0, 20.0)),
            ..RunConfig::default()
        })
    };
    // 100 × 5 + 10 × 20 = 700 millionths of a dollar a step, shown with each step.
    let effects = click_in_circles(&mut priced(), 2);
    assert!(events(&effects)
        .iter()
        .all(|e| !matches!(e, FrontendEvent::StructuredOutput { .. })));
    let effects = click_in_circles(&mut priced(), 3);
    let started: Vec<f64> = events(&effects)
        .iter()
        .filter_map(|e| match e {
            FrontendEvent::ToolUsed {
                phase: ToolPhase::Start,
                cost_usd: Some(cost),
                ..
            } => Some(*cost),
            _ => None,
        })
        .collect();
    assert_eq!(started, [0.0007]);
    let (_, _, error) = output_of(&effects);
    assert_eq!(error.unwrap().code, ErrorCode::BudgetExceeded);
}

#[test]
fn a_blocked_domain_is_refused_before_anything_is_sent_and_the_extension_is_told_the_rules() {
    let domains = mimo_protocol::DomainPolicy {
        allowed: Vec::new(),
        blocked: vec!["evil.test".into()],
    };
    let mut c = bound().with_config(RunConfig {
        domains: domains.clone(),
        ..RunConfig::default()
    });
    let (turn, _) = turn_of(
        &c.answered(|c| c.user_message("open the shop".into(), None, None, 1))
            .unwrap(),
    );
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_a",
            json!({ "navigate": { "url": "https://www.evil.test/login" } }),
        )],
    );
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::ToolUsed { phase: ToolPhase::End, result: Some(r), .. }
            if r.error.as_ref().is_some_and(|e| e.code == ErrorCode::PermissionDenied && e.message.contains("\"evil.test\" of MIMO_BLOCKED_DOMAINS")))));
    let (turn, _) = turn_of(&effects);
    let start = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_b",
            json!({ "navigate": { "url": "https://shop.test/" } }),
        )],
    ));
    assert!(matches!(start.1, ActionCommand::TaskStart { domains: Some(d), .. } if d == domains));
}

fn price_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "name": { "type": "string" }, "price": { "type": "number" } },
        "required": ["name", "price"]
    })
}

/// A run asked for an answer in `price_schema`'s format, at its first page.
fn asked_for_a_price(c: &mut Conversation) -> String {
    let (turn, messages) = turn_of(
        &c.answered(|c| {
            c.user_message(
                "price of the blue mug".into(),
                None,
                Some(price_schema()),
                1,
            )
        })
        .unwrap(),
    );
    let all: String = messages.iter().map(|m| m.content.clone()).collect();
    assert!(
        all.contains("<answer_format>") && all.contains("\"price\""),
        "{all}"
    );
    let navigate = agent_call("call_a", json!({ "navigate": { "url": "http://x/" } }));
    let start = submitted(&reply(c, &turn, vec![navigate]));
    let effects = ok(
        c,
        start,
        json!({ "tabId": 7, "windowId": 1, "url": "http://x/" }),
    );
    turn_of(&prepare_page(c, effects, "[1]<button>Add</button>")).0
}

fn done_with(c: &mut Conversation, turn: &str, id: &str, data: Value) -> Vec<Effect> {
    let done = json!({ "done": { "success": true, "text": "The mug costs 12 €.", "data": data } });
    reply(c, turn, vec![agent_call(id, done)])
}

#[test]
fn an_answer_in_the_asked_format_is_the_runs_structured_output() {
    let mut c = bound();
    let turn = asked_for_a_price(&mut c);
    let effects = done_with(
        &mut c,
        &turn,
        "call_b",
        json!({ "name": "Blue mug", "price": 12 }),
    );
    let (status, output, _) = output_of(&effects);
    assert_eq!(status, OutputStatus::Ok);
    let output = output.unwrap();
    assert_eq!(output["data"], json!({ "name": "Blue mug", "price": 12 }));
    assert_eq!(output["text"], "The mug costs 12 €.");
    assert!(c.task().answer_schema.is_some());
}

#[test]
fn a_wrong_answer_goes_back_to_the_model_then_the_run_ends_partial_without_passing_it_off() {
    let mut c = bound();
    let mut turn = asked_for_a_price(&mut c);
    for attempt in 1..answer_format::MAX_ANSWER_ATTEMPTS {
        let id = format!("call_{attempt}");
        let effects = done_with(
            &mut c,
            &turn,
            &id,
            json!({ "name": "Blue mug", "price": "12 €" }),
        );
        assert!(
            !events(&effects)
                .iter()
                .any(|e| matches!(e, FrontendEvent::StructuredOutput { .. })),
            "attempt {attempt} does not end the run"
        );
        let (next, messages) = turn_of(&effects);
        let result: Value = serde_json::from_str(&messages.last().unwrap().content)
            .or_else(|_| serde_json::from_str(&messages[messages.len() - 2].content))
            .unwrap();
        assert_eq!(result["error"]["code"], "SCHEMA_VALIDATION_FAILED");
        let why = result["error"]["message"].as_str().unwrap();
        assert!(
            why.contains("/price") && why.contains("call done again"),
            "{why}"
        );
        turn = next;
    }
    let effects = done_with(&mut c, &turn, "call_last", json!({ "name": "Blue mug" }));
    let (status, output, _) = output_of(&effects);
    assert_eq!(status, OutputStatus::Partial);
    let output = output.unwrap();
    assert!(output.get("data").is_none(), "{output}");
    assert_eq!(output["invalidData"], json!({ "name": "Blue mug" }));
    assert_eq!(output["success"], false);
    let warnings = events(&effects)
        .into_iter()
        .find_map(|e| match e {
            FrontendEvent::StructuredOutput { warnings, .. } => Some(warnings),
            _ => None,
        })
        .unwrap();
    assert!(
        warnings[0].contains("\"price\" is a required property"),
        "{warnings:?}"
    );
}

#[test]
fn a_plain_reply_to_a_request_with_an_answer_format_is_sent_back_for_done() {
    let mut c = bound();
    let (turn, _) = turn_of(
        &c.answered(|c| {
            c.user_message(
                "what is 2+2?".into(),
                None,
                Some(json!({ "type": "integer" })),
                1,
            )
        })
        .unwrap(),
    );
    let effects = reply(&mut c, &turn, vec![LlmEvent::TextDelta("4".into())]);
    let (turn, messages) = turn_of(&effects);
    assert!(messages.last().unwrap().content.contains("AgentOutput"));
    let done = json!({ "done": { "success": true, "text": "4", "data": 4 } });
    let effects = reply(&mut c, &turn, vec![agent_call("call_a", done)]);
    assert_eq!(output_of(&effects).1.unwrap()["data"], 4);
    // The next request, without a format, is answered freely.
    let (turn, messages) = turn_of(
        &c.answered(|c| c.user_message("thanks".into(), None, None, 30))
            .unwrap(),
    );
    assert!(!messages
        .iter()
        .any(|m| m.content.contains("<answer_format>")));
    let effects = reply(
        &mut c,
        &turn,
        vec![LlmEvent::TextDelta("You're welcome.".into())],
    );
    assert_eq!(output_of(&effects).0, OutputStatus::Ok);
}

#[test]
fn a_broken_answer_schema_is_refused_and_nothing_is_stored() {
    let mut c = bound();
    let error = c
        .answered(|c| c.user_message("x".into(), None, Some(json!({ "type": "nonsense" })), 1))
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::SchemaValidationFailed);
    assert!(error.message.contains("answerSchema"), "{}", error.message);
    assert_eq!(c.history().count(), 0);
}

#[test]
fn read_page_moves_the_shown_text_on_and_says_where_it_ends() {
    let mut c = Conversation::new(TASK.into(), 0).with_config(RunConfig {
        budget: Budget {
            text_limit: 600,
            ..Budget::default()
        },
        ..RunConfig::default()
    });
    c.select_client("client-1".into(), 0);
    let effects = navigated(&mut c);
    let look = submitted(&effects);
    let text: String = (0..100)
        .map(|i| format!("row {i:03} |"))
        .collect::<Vec<_>>()
        .join("\n");
    let effects = observation(
        &mut c,
        look,
        Ok(json!({ "artifactId": "a", "url": "http://x/", "width": 10, "height": 10 })),
        Ok(json!({ "text": text, "contentLengthBytes": text.len(), "truncated": false })),
        Ok(json!({ "elements": [], "text": "", "url": "http://x/", "title": "Table" })),
    );
    let (turn, messages) = turn_of(&effects);
    let page = &messages.last().unwrap().content;
    assert!(
        page.contains("row 000") && !page.contains("row 099"),
        "{page}"
    );
    assert!(page.contains("read_page with from=600 reads on"), "{page}");

    // Without `from` it goes on where the text was cut; nothing is sent to the browser.
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call("call_b", json!({ "read_page": {} }))],
    );
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    let (turn, messages) = turn_of(&effects);
    let page = &messages.last().unwrap().content;
    assert!(page.contains("characters 600–999 of 999"), "{page}");
    assert!(!page.contains("row 000"), "{page}");
    assert!(page.contains("row 099"), "{page}");

    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_c",
            json!({ "read_page": { "from": 5000 } }),
        )],
    );
    let (_, messages) = turn_of(&effects);
    let result: Value = serde_json::from_str(&messages[messages.len() - 2].content).unwrap();
    assert_eq!(result["error"]["code"], "INVALID_TARGET");
    assert!(result["error"]["message"]
        .as_str()
        .unwrap()
        .contains("past its end"));
}

#[test]
fn a_step_that_ran_only_partly_is_told_to_the_model_as_partial_with_why() {
    let mut c = bound();
    let turn = at_first_page(&mut c, "[1]<button>Subscribe</button>");
    let click = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call("call_b", json!({ "click": { "index": 1 } }))],
    ));
    let mut done = record(
        &click.0,
        click.1,
        ActionState::Succeeded,
        json!({ "clicked": true }),
    );
    let outcome = done.outcome.as_mut().unwrap();
    outcome.status = ActionStatus::Partial;
    outcome.warnings = vec!["no visible effect: after the click the page did not change".into()];
    let effects = c.answered(|c| c.action_finished(&done, 20));
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::ToolUsed { phase: ToolPhase::End, result: Some(r), summary: Some(s), .. }
            if r.ok && r.partial && s.contains("no visible effect"))));
    let (_, messages) = turn_of(&prepare_page(
        &mut c,
        effects,
        "[1]<button>Subscribe</button>",
    ));
    let result: Value = serde_json::from_str(&messages[messages.len() - 2].content).unwrap();
    assert_eq!(result["partial"], true);
    assert!(result["warnings"][0]
        .as_str()
        .unwrap()
        .contains("no visible effect"));
}

#[test]
fn a_tasks_own_sites_are_kept_with_the_deployments_and_told_to_the_extension() {
    let mut c = bound().with_config(RunConfig {
        domains: mimo_protocol::DomainPolicy {
            allowed: Vec::new(),
            blocked: vec!["evil.test".into()],
        },
        ..RunConfig::default()
    });
    // Rules that are not hosts are refused, and nothing changes.
    let bad = c
        .set_domains(vec!["https://shop.test/cart".into()], vec![], 1)
        .unwrap_err();
    assert_eq!(bad.code, ErrorCode::SchemaValidationFailed);
    assert!(bad.message.contains("not a site rule"), "{}", bad.message);
    let effects = c
        .set_domains(
            vec![" Shop.test ".into(), "shop.test".into()],
            vec!["ads.shop.test".into()],
            1,
        )
        .unwrap();
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::TaskDomains { allowed, blocked } if allowed == &["shop.test"] && blocked == &["ads.shop.test"])));
    assert!(
        c.set_domains(vec!["shop.test".into()], vec!["ads.shop.test".into()], 2)
            .unwrap()
            .is_empty(),
        "the same rules again change nothing"
    );

    let (turn, _) = turn_of(
        &c.answered(|c| c.user_message("compare prices".into(), None, None, 3))
            .unwrap(),
    );
    let refused = |c: &mut Conversation, turn: &str, id: &str, url: &str| {
        let effects = reply(
            c,
            turn,
            vec![agent_call(id, json!({ "navigate": { "url": url } }))],
        );
        assert!(
            !effects.iter().any(|e| matches!(e, Effect::Submit { .. })),
            "{url}"
        );
        let why = events(&effects)
            .into_iter()
            .find_map(|e| match e {
                FrontendEvent::ToolUsed {
                    phase: ToolPhase::End,
                    result: Some(r),
                    ..
                } => r.error,
                _ => None,
            })
            .unwrap();
        assert_eq!(why.code, ErrorCode::PermissionDenied);
        (turn_of(&effects).0, why.message)
    };
    let (turn, why) = refused(&mut c, &turn, "call_a", "https://other.test/");
    assert!(
        why.contains("this task's allowed sites: shop.test"),
        "{why}"
    );
    let (turn, why) = refused(&mut c, &turn, "call_b", "https://ads.shop.test/");
    assert!(
        why.contains("\"ads.shop.test\" of this task's blocked sites"),
        "{why}"
    );
    // The deployment's rules still hold.
    let (turn, why) = refused(&mut c, &turn, "call_c", "https://evil.test/");
    assert!(why.contains("MIMO_BLOCKED_DOMAINS"), "{why}");
    let start = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_d",
            json!({ "navigate": { "url": "https://www.shop.test/" } }),
        )],
    ));
    assert!(
        matches!(&start.1, ActionCommand::TaskStart { task_domains: Some(d), .. }
        if d.allowed == ["shop.test"] && d.blocked == ["ads.shop.test"])
    );
}

/// The skill lookup among `effects`, the model call waiting for it.
fn lookup_of(effects: &[Effect]) -> (String, crate::skills::SkillQuery) {
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::CallLlm(_))),
        "the call waits for the skills: {effects:#?}"
    );
    let lookups: Vec<_> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::LookupSkills { turn_id, query } => Some((turn_id.clone(), query.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(lookups.len(), 1, "one lookup in {effects:#?}");
    lookups.into_iter().next().unwrap()
}

/// The actions the model call among `effects` offers.
fn offered(effects: &[Effect]) -> Vec<String> {
    let tools = effects.iter().find_map(|e| match e {
        Effect::CallLlm(LlmCall { tools, .. }) => Some(tools[0].parameters.clone()),
        _ => None,
    });
    tools.expect("a model call")["properties"]["action"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|variant| variant["required"][0].as_str().unwrap().to_owned())
        .collect()
}

const EXPENSE_SKILL: &str = "---
name: file-expense
description: File an expense claim on the expense portal.
sites: [portal.test]
allowed-tools: navigate, click, type
risk: Submitting is final.
---
1. Open http://portal.test/expenses/new and fill in the amount.
";

#[test]
fn the_skills_of_the_goal_and_page_guide_the_run_and_restrict_its_actions() {
    let expense = crate::skills::parse("file-expense", EXPENSE_SKILL, 0).unwrap();
    let mut c = bound();
    // The goal's skills are looked up before the model is first asked; the task runs meanwhile.
    let effects = c
        .user_message("file an expense for lunch".into(), None, None, 1)
        .unwrap();
    assert!(events(&effects).iter().any(|e| matches!(
        e,
        FrontendEvent::TaskStatus {
            status: TaskStatus::Running,
            ..
        }
    )));
    let (turn, query) = lookup_of(&effects);
    assert_eq!(
        query,
        crate::skills::SkillQuery {
            goal: "file an expense for lunch".into(),
            url: None
        }
    );
    let effects = c.skills_found(&turn, Ok(vec![expense]));
    let (same_turn, messages) = turn_of(&effects);
    assert_eq!(same_turn, turn);
    let note = messages
        .iter()
        .find(|m| m.content.starts_with("<skills>"))
        .expect("the skills block");
    assert!(note.content.contains("<skill name=\"file-expense\">"));
    assert!(note
        .content
        .contains("1. Open http://portal.test/expenses/new"));
    assert_eq!(offered(&effects), ["navigate", "click", "type", "done"]);

    // An action the skill does not allow is refused, and the model asked again (the skills are
    // known: no second lookup).
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_a",
            json!({ "scroll": { "direction": "down" } }),
        )],
    );
    let refused = events(&effects)
        .into_iter()
        .find_map(|e| match e {
            FrontendEvent::ToolUsed {
                phase: ToolPhase::End,
                result: Some(r),
                ..
            } => r.error,
            _ => None,
        })
        .expect("the refusal");
    assert_eq!(refused.code, ErrorCode::PermissionDenied);
    assert!(refused
        .message
        .contains("(file-expense) allow: click, done, navigate, type"));
    assert!(events(&effects).iter().any(|e| matches!(
        e,
        FrontendEvent::ToolUsed {
            phase: ToolPhase::Start,
            skill: None,
            ..
        }
    )));
    let (turn, _) = turn_of(&effects);

    // An allowed one runs, and its step names the skill.
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_b",
            json!({ "navigate": { "url": "http://portal.test/expenses/new" } }),
        )],
    );
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::ToolUsed { step: 2, phase: ToolPhase::Start, skill: Some(s), .. } if s == "file-expense")));
    let start = submitted(&effects);

    // On the first page (the site changed), its skills are looked up again; this site has none:
    // the prompt has no skills and every action is offered.
    let look = submitted(&ok(&mut c, start, json!({ "tabId": 7, "windowId": 1 })));
    let effects = c.action_finished(
        &record(
            &look.0,
            look.1,
            ActionState::Succeeded,
            json!({
                "screenshot": { "error": ErrorObject::new(ErrorCode::CdpUnavailable, "it failed") },
                "readability": { "result": { "text": "Expenses", "title": "Expenses", "contentLengthBytes": 8, "truncated": false } },
                "domIndex": { "result": { "elements": [], "text": "", "url": "http://shop.test/#top", "title": "Shop" } },
            }),
        ),
        30,
    );
    let (turn, query) = lookup_of(&effects);
    assert_eq!(
        query.url.as_deref(),
        Some("http://shop.test/"),
        "without the fragment"
    );
    assert_eq!(query.goal, "file an expense for lunch");
    let effects = c.skills_found(&turn, Ok(vec![]));
    let (_, messages) = turn_of(&effects);
    assert!(!messages.iter().any(|m| m.content.starts_with("<skills>")));
    assert_eq!(
        offered(&effects).len(),
        mimo_protocol::agent::action_names().len() - bridge_actions().len(),
        "all but the bridge's, as no bridge is connected"
    );
}

#[test]
fn a_lookup_that_fails_or_comes_too_late_changes_nothing_it_should_not() {
    let mut c = bound();
    let effects = c
        .user_message("open the shop".into(), None, None, 1)
        .unwrap();
    let (turn, _) = lookup_of(&effects);
    // The library could not answer: the model is asked without skills, and the person told.
    let effects = c.skills_found(
        &turn,
        Err(ErrorObject::new(ErrorCode::InternalError, "library down")),
    );
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::Warning { message } if message.contains("library down"))));
    let (_, messages) = turn_of(&effects);
    assert!(!messages.iter().any(|m| m.content.starts_with("<skills>")));
    // An answer for a turn that no longer waits (answered, stopped) is ignored.
    assert!(c.skills_found(&turn, Ok(vec![])).is_empty());
    c.stop(2);
    let effects = c
        .user_message("file an expense".into(), None, None, 3)
        .unwrap();
    let (turn, _) = lookup_of(&effects);
    c.stop(4);
    assert!(c.skills_found(&turn, Ok(vec![])).is_empty());
}

#[test]
fn each_retried_step_call_is_told_to_the_web_app_with_its_reason_and_wait() {
    let mut c = bound();
    let turn = at_first_page(&mut c, "[1]<a>Home</a>");
    let limited = LlmError {
        retry_after_ms: Some(4_000),
        ..LlmError::new(LlmErrorKind::RateLimited, "Rate limit reached")
    };
    let effects = c.answered(|c| c.llm_event(&turn, LlmEvent::Error(limited), 30));
    assert_eq!(
        events(&effects),
        [FrontendEvent::ModelRetry {
            attempt: 1,
            max_attempts: crate::conversation::LLM_RETRIES,
            reason: LlmErrorKind::RateLimited,
            message: "Rate limit reached".into(),
            delay_ms: 4_000,
        }]
    );
    assert!(effects.iter().any(|e| matches!(
        e,
        Effect::CallLlm(LlmCall {
            delay_ms: 4_000,
            ..
        })
    )));
    // A reply without the tool is corrected at once: the second retry, without a wait.
    let (turn, _) = turn_of(&effects);
    let effects = reply(&mut c, &turn, vec![LlmEvent::TextDelta("Hmm.".into())]);
    assert!(events(&effects).contains(&FrontendEvent::ModelRetry {
        attempt: 2,
        max_attempts: crate::conversation::LLM_RETRIES,
        reason: LlmErrorKind::NoToolCall,
        message: "the model answered without calling AgentOutput".into(),
        delay_ms: 0,
    }));
}

/// Anthropic's answer to a prompt longer than the model's window.
fn overflow() -> LlmError {
    llm::classify_http_status(
        llm::Provider::Anthropic,
        400,
        None,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
    )
}

#[test]
fn a_step_too_long_for_the_model_is_asked_again_compacted_and_the_run_goes_on() {
    // The prompt of the run's 4th step when everything fits.
    let mut roomy = bound();
    let (_, whole) = turn_of(&click_in_circles(&mut roomy, 2));
    assert!(!whole.iter().any(|m| m.content.contains("<earlier_steps>")));
    let fits = prompt::estimate_tokens(&whole, &[prompt::agent_tool(|_| true)]) + 50;
    let mut c = bound().with_config(RunConfig {
        budget: Budget {
            context_tokens: fits,
            ..Budget::default()
        },
        ..RunConfig::default()
    });
    let (turn, messages) = turn_of(&click_in_circles(&mut c, 2));
    assert_eq!(messages, whole, "nothing is compacted while it fits");

    let effects = c.answered(|c| c.llm_event(&turn, LlmEvent::Error(overflow()), 50));
    assert_eq!(
        events(&effects),
        [FrontendEvent::ModelRetry {
            attempt: 1,
            max_attempts: crate::conversation::MAX_OVERFLOWS,
            reason: LlmErrorKind::ContextTooLong,
            message: "prompt is too long: 210000 tokens > 200000 maximum".into(),
            delay_ms: 0,
        }]
    );
    let (turn, compacted) = turn_of(&effects);
    assert!(
        compacted
            .iter()
            .any(|m| m.content.contains("<earlier_steps>")),
        "older steps summarised: {compacted:#?}"
    );
    assert!(
        prompt::estimate_tokens(&compacted, &[]) < prompt::estimate_tokens(&whole, &[]),
        "a shorter prompt"
    );
    // Kept in the run (which the task stores), so the next steps (and a restarted
    // coordinator) keep to it.
    let stored: AgentRun =
        serde_json::from_value(serde_json::to_value(c.run().unwrap()).unwrap()).unwrap();
    assert_eq!(stored.overflows, 1);
    let restored = Conversation::restore(c.task().clone(), c.history.clone(), Some(stored))
        .with_config(c.config.clone());
    assert_eq!(restored.run_messages(), c.run_messages());

    let done = reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_done",
            json!({ "done": { "success": true, "text": "Clicked through." } }),
        )],
    );
    let (status, output, _) = output_of(&done);
    assert_eq!(status, OutputStatus::Ok);
    assert_eq!(output.unwrap()["text"], "Clicked through.");
}

#[test]
fn a_step_still_too_long_after_compacting_ends_the_run_saying_what_to_do() {
    let mut c = bound();
    let mut turn = at_first_page(&mut c, "[1]<a>Home</a>");
    for attempt in 1..=crate::conversation::MAX_OVERFLOWS {
        let effects = c.answered(|c| c.llm_event(&turn, LlmEvent::Error(overflow()), 30));
        assert!(
            matches!(events(&effects)[..], [FrontendEvent::ModelRetry { attempt: a, reason: LlmErrorKind::ContextTooLong, .. }] if a == attempt)
        );
        turn = turn_of(&effects).0;
    }
    assert_eq!(
        c.run().unwrap().overflows,
        crate::conversation::MAX_OVERFLOWS
    );
    let effects = c.answered(|c| c.llm_event(&turn, LlmEvent::Error(overflow()), 40));
    let (status, _, error) = output_of(&effects);
    assert_eq!(status, OutputStatus::Error);
    let error = error.unwrap();
    assert_eq!(error.code, ErrorCode::LlmError);
    assert!(!error.retryable);
    assert!(
        error.message.contains("MIMO_AGENT_CONTEXT_TOKENS"),
        "{}",
        error.message
    );
    assert_eq!(c.task().status, TaskStatus::Error);
}

mod answers;
mod consent;
mod delegation;
mod fork;
mod limits;

/// The tool result the model is shown last in a call's messages.
fn last_tool_result(effects: &[Effect]) -> Value {
    let (_, messages) = turn_of(effects);
    serde_json::from_str(&messages[messages.len() - 2].content).unwrap()
}

fn with_bridge(c: &mut Conversation, connected: bool) {
    c.browser = Some(mimo_protocol::BrowserSnapshot {
        bridge: connected.then(|| mimo_protocol::bridge::BridgeInfo {
            version: "0.1.0".into(),
            root: "/home/ann/notes".into(),
            tools: Vec::new(),
            allow: vec!["ls".into()],
            strict: true,
            max_concurrent: 4,
        }),
        ..mimo_protocol::BrowserSnapshot::default()
    });
}

#[test]
fn the_bridge_is_offered_only_when_connected_and_allowed_and_a_model_using_it_anyway_is_refused() {
    let mut c = bound();
    with_bridge(&mut c, true);
    let effects = c
        .answered(|c| c.user_message("sum up notes.md".into(), None, None, 1))
        .unwrap();
    assert!(!offered(&effects).iter().any(|a| a == "file_read"));
    let (turn, messages) = turn_of(&effects);
    assert!(!messages
        .iter()
        .any(|m| m.content.starts_with("<local_files>")));
    // Not allowed for the task: refused, and nothing is sent.
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_a",
            json!({ "file_read": { "path": "notes.md" } }),
        )],
    );
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    let result = last_tool_result(&effects);
    assert_eq!(result["error"]["code"], "PERMISSION_DENIED", "{result}");
    assert!(result["error"]["message"]
        .as_str()
        .unwrap()
        .contains("not allowed it"));

    // Allowed, but the bridge went away: still refused, saying so.
    assert_eq!(
        events(&c.set_bridge(true, true, 2)),
        vec![FrontendEvent::BridgeMode {
            allow: true,
            confirm: true
        }]
    );
    assert!(c.set_bridge(true, true, 3).is_empty(), "unchanged");
    with_bridge(&mut c, false);
    let turn = turn_of(&effects).0;
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_b",
            json!({ "run_command": { "command": "ls" } }),
        )],
    );
    assert!(!offered(&effects).iter().any(|a| a == "run_command"));
    let result = last_tool_result(&effects);
    assert_eq!(result["error"]["code"], "PERMISSION_DENIED");
    assert!(result["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no local bridge is connected"));

    // Connected and allowed: offered, with the folder and what may run.
    with_bridge(&mut c, true);
    let turn = turn_of(&effects).0;
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_c",
            json!({ "file_read": { "path": "notes.md", "limit": 20 } }),
        )],
    );
    let read = submitted(&effects);
    assert_eq!(
        read.1,
        ActionCommand::BridgeInvoke {
            tool: mimo_protocol::bridge::BridgeTool::Read,
            args: json!({ "path": "notes.md", "limit": 20 }),
            agent_id: "main".into(),
            confirmed_protected_path: None,
        },
        "no tab is opened for it, and nothing waits: reading is low risk"
    );
    let effects = ok(
        &mut c,
        read,
        json!({ "path": "notes.md", "content": "buy milk\n" }),
    );
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Submit { .. })),
        "no page to prepare after a file step"
    );
    for action in bridge_actions() {
        assert!(offered(&effects).iter().any(|a| a == action), "{action}");
    }
    let (_, messages) = turn_of(&effects);
    let note = messages
        .iter()
        .find(|m| m.content.starts_with("<local_files>"))
        .expect("the model is told of the folder");
    assert!(
        note.content.contains("\"/home/ann/notes\"")
            && note.content.contains("only these programs may be run: ls"),
        "{}",
        note.content
    );
    assert!(messages.iter().any(|m| m.content.contains("buy milk")));
}

#[test]
fn bridge_writes_wait_for_confirmation_unless_turned_off_and_its_errors_reach_the_model() {
    let mut c = bound();
    with_bridge(&mut c, true);
    c.set_bridge(true, true, 0);
    let (turn, _) = turn_of(
        &c.answered(|c| c.user_message("write a todo file".into(), None, None, 1))
            .unwrap(),
    );
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_a",
            json!({ "file_write": { "path": "todo.txt", "content": "milk" } }),
        )],
    );
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::ConfirmationRequested(r) if r.risk == mimo_protocol::RiskLevel::High && r.reason == "it writes the file \"todo.txt\" on your computer")));
    assert_eq!(c.task().status, TaskStatus::WaitingConfirmation);
    let write = submitted(&c.answered(|c| c.confirm(1, approve(), 5)).unwrap());
    assert!(
        matches!(&write.1, ActionCommand::BridgeInvoke { tool: mimo_protocol::bridge::BridgeTool::Write, args, .. } if args["content"] == "milk")
    );
    // The bridge's refusal is the step's error, as the model sees it.
    let effects = failed(&mut c, write, "E_PATH");
    assert_eq!(last_tool_result(&effects)["error"]["code"], "E_PATH");

    // Turned off for the task: commands run unasked.
    c.set_bridge(true, false, 6);
    let turn = turn_of(&effects).0;
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_b",
            json!({ "run_command": { "command": "ls -la", "timeout_ms": 1000 } }),
        )],
    );
    let (_, command) = submitted(&effects);
    assert_eq!(
        command,
        ActionCommand::BridgeInvoke {
            tool: mimo_protocol::bridge::BridgeTool::Bash,
            args: json!({ "command": "ls -la", "timeoutMs": 1000 }),
            agent_id: "main".into(),
            confirmed_protected_path: None,
        }
    );
    assert!(!events(&effects)
        .iter()
        .any(|e| matches!(e, FrontendEvent::ConfirmationRequested(_))));
}

/// `ok`, with a result whose kept form filters what the model's view shows.
fn ok_with_views(
    c: &mut Conversation,
    (id, command): (String, ActionCommand),
    kept: Value,
    model: Value,
) -> Vec<Effect> {
    let mut finished = record(&id, command, ActionState::Succeeded, kept);
    if let Some(outcome) = finished.outcome.as_mut() {
        outcome.model_result = Some(model);
    }
    c.answered(|c| c.action_finished(&finished, 20))
}

#[test]
fn the_model_reads_its_view_of_a_result_and_only_the_filtered_one_is_kept_or_shown() {
    let mut c = bound();
    let (turn, _) = turn_of(
        &c.answered(|c| c.user_message("who wrote to me? check tab 5".into(), None, None, 1))
            .unwrap(),
    );
    let read = submitted(&reply(
        &mut c,
        &turn,
        vec![agent_call("call_a", json!({ "read_tab": { "tab_id": 5 } }))],
    ));
    let effects = ok_with_views(
        &mut c,
        read,
        json!({ "tabId": 5, "title": "Inbox", "text": "From [email redacted]: lunch?" }),
        json!({ "tabId": 5, "title": "Inbox", "text": "From ann.lee@mail.example: lunch?" }),
    );
    let (_, messages) = turn_of(&effects);
    assert!(
        messages
            .iter()
            .any(|m| m.content.contains("ann.lee@mail.example")),
        "the model reads what the tab said"
    );
    // Shown to the web app (and so kept in the event log): the filtered result only.
    let shown = serde_json::to_string(&events(&effects)).unwrap();
    assert!(shown.contains("[email redacted]"), "{shown}");
    assert!(!shown.contains("ann.lee"), "{shown}");
    // The run as stored: the filtered result only; the model's view lives in memory.
    let stored = serde_json::to_string(c.run().unwrap()).unwrap();
    assert!(!stored.contains("ann.lee"), "{stored}");
    assert!(stored.contains("[email redacted]"));
    // What the model read still counts as private data that must not leave unasked.
    let (turn, _) = turn_of(&effects);
    let leak = reply(
        &mut c,
        &turn,
        vec![agent_call(
            "call_b",
            json!({ "navigate": { "url": "https://ann.example.net/?to=ann.lee@mail.example" } }),
        )],
    );
    assert!(
        events(&leak)
            .iter()
            .any(|e| matches!(e, FrontendEvent::ConfirmationRequested { .. })),
        "asked of the person: {:?}",
        events(&leak)
    );
}

#[test]
fn the_model_lists_the_persons_tabs_with_an_action_titles_and_origins_only() {
    let mut c = bound();
    c.browser = Some(mimo_protocol::BrowserSnapshot {
        windows: Vec::new(),
        tabs: vec![mimo_protocol::TabInfo {
            tab_id: 5,
            window_id: 1,
            index: 0,
            url: "https://mail.example/inbox?session=s3cr3t#msg-42".into(),
            title: "Inbox (3)".into(),
            status: "complete".into(),
            active: true,
            group_id: None,
        }],
        groups: Vec::new(),
        active_tab_id: Some(5),
        bridge: None,
    });
    // Not a request about tabs: none are shown unasked.
    let (turn, messages) = turn_of(
        &c.answered(|c| c.user_message("compare the prices".into(), None, None, 1))
            .unwrap(),
    );
    assert!(!messages.iter().any(|m| m.content.contains("Inbox")));
    let effects = reply(
        &mut c,
        &turn,
        vec![agent_call("call_a", json!({ "list_tabs": {} }))],
    );
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Submit { .. })),
        "answered by the run itself"
    );
    let (_, messages) = turn_of(&effects);
    let listed = messages
        .iter()
        .rfind(|m| m.content.contains("Inbox (3)"))
        .expect("the model hears the list");
    assert!(listed.content.contains("https://mail.example"));
    assert!(!listed.content.contains("s3cr3t") && !listed.content.contains("/inbox"));
}

#[test]
fn going_back_forward_and_reloading_become_the_history_commands() {
    for (action, command) in [
        (AgentAction::Back {}, ActionCommand::BrowserBack {}),
        (AgentAction::Forward {}, ActionCommand::BrowserForward {}),
        (AgentAction::Reload {}, ActionCommand::BrowserReload {}),
    ] {
        assert_eq!(action.command(&[], "agent"), Ok(Some(command)));
    }
}
