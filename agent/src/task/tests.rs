//! The task machine driven natively, one input at a time, as its coordinator drives it.

use mimo_protocol::{
    ActionCommand, ActionOutcome, ActionStatus, AttemptState, BrowserSnapshot, ErrorCode,
    ErrorObject, FrontendEvent, ServerToExtension, TaskControl, TaskStatus,
};
use serde_json::json;

use super::*;
use crate::actions::{ActionState, Timeouts};
use crate::llm::{LlmEvent, StopReason, ToolCall};
use crate::prompt;

const TASK: &str = "task-1";
const CLIENT: &str = "client-1";
const LLM_TIMEOUT_MS: u64 = 90_000;

fn config() -> TaskConfig {
    TaskConfig::from_lookup(|name| match name {
        "MIMO_LLM_MODEL" => Some("model".into()),
        "MIMO_LLM_TIMEOUT_MS" => Some(LLM_TIMEOUT_MS.to_string()),
        _ => None,
    })
    .0
}

fn created() -> Task {
    created_with(config())
}

/// A task created under the deployment settings `config`.
fn created_with(config: TaskConfig) -> Task {
    let mut task = Task::new(config);
    direct(
        &mut task,
        Input::Create {
            task_id: TASK.into(),
        },
        0,
    );
    task
}

/// A task with its extension chosen.
fn bound() -> Task {
    let mut task = created();
    bind(&mut task, BindPurpose::Requested, 1);
    task
}

/// What the coordinator carries out for a direct input, the skill library answering each
/// lookup at once (with no skills) in its place.
fn direct(task: &mut Task, input: Input, now: u64) -> Vec<Effect> {
    let effects = task
        .handle(input, now, Caller::Direct)
        .unwrap_or_else(|e| panic!("refused: {e}"));
    kept(task, &effects);
    effects
        .into_iter()
        .flat_map(|effect| match effect {
            Effect::LookupSkills { turn_id, .. } => {
                let found = Input::SkillsFound {
                    turn_id,
                    result: Ok(vec![]),
                };
                direct(task, found, now)
            }
            other => vec![other],
        })
        .collect()
}

fn relayed(task: &mut Task, input: Input, now: u64) -> Vec<Effect> {
    let effects = task
        .handle(input, now, Caller::Relay)
        .unwrap_or_else(|e| panic!("refused: {e}"));
    kept(task, &effects);
    effects
}

/// What every input leaves true: nothing the conversation changed is left unsaved, nothing is
/// saved twice over, and no action to submit escapes the task's queue.
fn kept(task: &Task, effects: &[Effect]) {
    if let Some(conversation) = task.conversation.as_ref() {
        assert_eq!(
            task.saved.task.as_ref(),
            Some(conversation.task()),
            "record unsaved"
        );
        assert_eq!(task.saved.run.as_ref(), conversation.run(), "run unsaved");
    }
    let saved = |e: &Effect| match e {
        Effect::SaveTask(record) => Some(format!("{record:?}")),
        Effect::SaveRun(run) => Some(format!("{run:?}")),
        _ => None,
    };
    let saves: Vec<String> = effects.iter().filter_map(saved).collect();
    let unique: std::collections::BTreeSet<&String> = saves.iter().collect();
    assert_eq!(unique.len(), saves.len(), "saved twice over: {saves:#?}");
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Submit { .. })),
        "an action to submit left the task: {effects:#?}"
    );
}

fn bind(task: &mut Task, purpose: BindPurpose, now: u64) -> Vec<Effect> {
    let binding = Binding {
        client_id: CLIENT.into(),
        snapshot: None,
    };
    direct(
        task,
        Input::Bound {
            purpose,
            result: Ok(binding),
        },
        now,
    )
}

fn calls(effects: &[Effect]) -> Vec<LlmCall> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::CallLlm(call) => Some(call.clone()),
            _ => None,
        })
        .collect()
}

fn the_call(effects: &[Effect]) -> LlmCall {
    let calls = calls(effects);
    assert_eq!(calls.len(), 1, "one model call in {effects:#?}");
    calls.into_iter().next().unwrap()
}

fn dispatched(effects: &[Effect]) -> Vec<BrowserAction> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Dispatch(action) => Some(action.clone()),
            _ => None,
        })
        .collect()
}

fn the_dispatch(effects: &[Effect]) -> BrowserAction {
    let actions = dispatched(effects);
    assert_eq!(actions.len(), 1, "one dispatch in {effects:#?}");
    actions.into_iter().next().unwrap()
}

fn statuses(effects: &[Effect]) -> Vec<TaskStatus> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Emit(FrontendEvent::TaskStatus { status, .. }) => Some(*status),
            _ => None,
        })
        .collect()
}

fn finished(effects: &[Effect]) -> Vec<ActionRecord> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::ActionFinished(record) => Some(record.clone()),
            _ => None,
        })
        .collect()
}

fn wakes(effects: &[Effect]) -> Vec<u64> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::WakeAt(at) => Some(*at),
            _ => None,
        })
        .collect()
}

fn command(value: serde_json::Value) -> ActionCommand {
    serde_json::from_value(value).expect("an action command")
}

fn message(content: &str) -> Input {
    Input::UserMessage {
        content: content.into(),
        client_message_id: None,
        answer_schema: None,
    }
}

/// The model answers `turn_id` with one agent step.
fn step(task: &mut Task, turn_id: &str, action: serde_json::Value, now: u64) -> Vec<Effect> {
    let call = LlmEvent::ToolCall(ToolCall {
        id: format!("call_{now}"),
        name: "AgentOutput".into(),
        arguments: json!({
            "evaluation_previous_goal": "fine",
            "memory": "",
            "next_goal": "go on",
            "action": action,
        }),
    });
    let mut effects = direct(
        task,
        Input::Llm {
            turn_id: turn_id.into(),
            event: call,
        },
        now,
    );
    effects.extend(direct(
        task,
        Input::Llm {
            turn_id: turn_id.into(),
            event: LlmEvent::Done {
                stop_reason: StopReason::ToolUse,
            },
        },
        now,
    ));
    effects
}

fn outcome(action: &BrowserAction, status: ActionStatus, result: serde_json::Value) -> Input {
    Input::Extension(ActionEvent::Outcome {
        outcome: ActionOutcome {
            action_id: action.action_id.clone(),
            attempt: action.attempt,
            task_id: TASK.into(),
            status,
            result: Some(result),
            model_result: None,
            error: None,
            warnings: Vec::new(),
            dialog: None,
            tab_id: None,
            waits_for_site: None,
            timings: Vec::new(),
        },
    })
}

fn ack(action: &BrowserAction) -> Input {
    Input::Extension(ActionEvent::Ack {
        action_id: action.action_id.clone(),
        attempt: action.attempt,
    })
}

fn submit(action_id: &str) -> Input {
    Input::Submit {
        action_id: action_id.into(),
        tab_id: None,
        command: command(json!({ "name": "browser_scroll", "params": { "direction": "down" } })),
        rated: false,
        consent: ClientConsent::Unasked,
    }
}

/// The extension reports action `action_id` (submitted by the developer API) done.
fn finish(task: &Task, action_id: &str) -> Input {
    let record = task.actions().get(action_id).expect("submitted");
    Input::Extension(ActionEvent::Outcome {
        outcome: ActionOutcome {
            action_id: action_id.into(),
            attempt: record.attempt,
            task_id: TASK.into(),
            status: ActionStatus::Ok,
            result: Some(json!({})),
            model_result: None,
            error: None,
            warnings: Vec::new(),
            dialog: None,
            tab_id: None,
            waits_for_site: None,
            timings: Vec::new(),
        },
    })
}

/// What storage holds of `task`: its record, its run and its actions.
fn stored(task: &Task) -> Stored {
    Stored {
        task: task.record().cloned(),
        messages: Vec::new(),
        summary: None,
        run: task.conversation.as_ref().and_then(|c| c.run().cloned()),
        actions: task.actions().records().to_vec(),
        artifacts: Vec::new(),
        snapshot: None,
        secrets: Vec::new(),
    }
}

/// A browser run started by a message, at its first action (`task_start`), dispatched.
fn run_at_task_start(task: &mut Task) -> BrowserAction {
    let turn = the_call(&direct(task, message("open the shop"), 2)).turn_id;
    let effects = step(
        task,
        &turn,
        json!({ "navigate": { "url": "http://x/" } }),
        3,
    );
    the_dispatch(&effects)
}

#[test]
fn creating_a_task_stores_it_and_starts_its_log_with_its_status() {
    let mut task = Task::new(config());
    let effects = direct(
        &mut task,
        Input::Create {
            task_id: TASK.into(),
        },
        5,
    );
    let record = task.record().unwrap().clone();
    assert_eq!(record.status, TaskStatus::Created);
    assert_eq!(
        effects,
        vec![
            Effect::SaveTask(record),
            Effect::Emit(FrontendEvent::TaskStatus {
                status: TaskStatus::Created,
                title: None,
                selected_client_id: None,
            }),
        ]
    );
    assert!(direct(
        &mut task,
        Input::Create {
            task_id: "other".into()
        },
        6
    )
    .is_empty());
    assert_eq!(task.record().unwrap().task_id, TASK);
    let empty = Task::new(config())
        .handle(
            Input::Create {
                task_id: String::new(),
            },
            0,
            Caller::Direct,
        )
        .unwrap_err();
    assert_eq!(empty.code, ErrorCode::SchemaValidationFailed);
}

#[test]
fn a_task_that_does_not_exist_refuses_every_input_but_creation() {
    let mut task = Task::new(config());
    for input in [
        message("hi"),
        Input::Control(TaskControl::Stop),
        Input::WebConnected,
        submit("a1"),
    ] {
        let error = task.handle(input, 1, Caller::Direct).unwrap_err();
        assert_eq!(error.code, ErrorCode::NotFound);
    }
    // Nothing to push a snapshot to, nothing due.
    let push = SnapshotPush {
        client_id: CLIENT.into(),
        snapshot: BrowserSnapshot::default(),
    };
    assert!(direct(&mut task, Input::Snapshot(push), 1).is_empty());
    assert!(direct(&mut task, Input::Alarm, 1).is_empty());
}

#[test]
fn a_message_saves_what_it_changes_with_the_data_and_calls_the_model() {
    let mut task = created();
    let effects = direct(&mut task, message("  what is 2+2? "), 10);
    let saved: Vec<&TaskRecord> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::SaveTask(record) => Some(record),
            _ => None,
        })
        .collect();
    // The row as it was when saved: running, with the title of the first message.
    let last = saved.last().expect("the task is saved");
    assert_eq!(last.status, TaskStatus::Running);
    assert_eq!(last.title.as_deref(), Some("what is 2+2?"));
    assert!(last.current_turn.is_some());
    assert!(effects.iter().any(|e| matches!(e,
        Effect::SaveMessage(m) if m.message.content == "what is 2+2?")));
    assert_eq!(statuses(&effects), [TaskStatus::Running]);
    let call = the_call(&effects);
    assert!(task.is_current_turn(&call.turn_id));
    // The alarm covers a restart during the call: it looks again soon, not after the call's
    // whole budget; while the call is live, each look only comes back.
    assert!(wakes(&effects).contains(&(10 + TURN_WATCH_MS)));
    let look = direct(&mut task, Input::Alarm, 10 + TURN_WATCH_MS);
    assert_eq!(wakes(&look), vec![10 + 2 * TURN_WATCH_MS]);
    assert!(calls(&look).is_empty(), "the live call is not made again");
    const { assert!(LLM_TIMEOUT_MS > 3 * TURN_WATCH_MS) };
    // Evicted meanwhile, the object that wakes finds the call gone with the old one and makes
    // it again at that look.
    let mut evicted = restart(&task, saved_messages(&effects));
    let again = direct(&mut evicted, Input::Alarm, 10 + 2 * TURN_WATCH_MS);
    assert_eq!(calls(&again).len(), 1, "the turn cut off is run again");
    // Without an extension, the status is not told to any.
    assert!(!effects.iter().any(|e| matches!(e, Effect::Tell { .. })));
}

#[test]
fn a_refused_message_changes_nothing() {
    let mut task = created();
    let error = task.handle(message("   "), 1, Caller::Direct).unwrap_err();
    assert_eq!(error.code, ErrorCode::SchemaValidationFailed);
    assert_eq!(task.record().unwrap().status, TaskStatus::Created);
    let step = task
        .handle(
            Input::Confirm {
                step: 3,
                approve: true,
                reason: None,
                by: crate::credentials::Confirmer::Web,
            },
            1,
            Caller::Direct,
        )
        .unwrap_err();
    assert_eq!(step.code, ErrorCode::NotFound);
}

#[test]
fn a_text_reply_streams_and_completes_the_task() {
    let mut task = created();
    let call = the_call(&direct(&mut task, message("hello"), 1));
    let turn = call.turn_id;
    let delta = direct(
        &mut task,
        Input::Llm {
            turn_id: turn.clone(),
            event: LlmEvent::TextDelta("Hi".into()),
        },
        2,
    );
    assert_eq!(
        delta,
        [Effect::Emit(FrontendEvent::ChatDelta {
            message_id: turn.clone(),
            delta: "Hi".into(),
            finished: false,
        })]
    );
    let done = direct(
        &mut task,
        Input::Llm {
            turn_id: turn.clone(),
            event: LlmEvent::Done {
                stop_reason: StopReason::EndTurn,
            },
        },
        3,
    );
    assert_eq!(statuses(&done), [TaskStatus::Completed]);
    assert!(!task.is_current_turn(&turn));
}

/// The model answers `turn` with `text` and ends it.
fn answer_with(task: &mut Task, turn: &str, text: &str, now: u64) -> Vec<Effect> {
    let turn_id = turn.to_owned();
    let mut effects = direct(
        task,
        Input::Llm {
            turn_id: turn_id.clone(),
            event: LlmEvent::TextDelta(text.into()),
        },
        now,
    );
    effects.extend(direct(
        task,
        Input::Llm {
            turn_id,
            event: LlmEvent::Done {
                stop_reason: StopReason::EndTurn,
            },
        },
        now,
    ));
    effects
}

#[test]
fn the_first_answer_has_the_model_name_the_task_after_everything_else() {
    let mut task = created();
    let turn = the_call(&direct(
        &mut task,
        message("the cheapest flight to Lisbon please"),
        1,
    ))
    .turn_id;
    // A second message waits for the first answer: its model call comes first.
    direct(&mut task, message("and back on Sunday"), 2);
    let done = answer_with(&mut task, &turn, "Flights from 89 €.", 3);
    let Some(Effect::AskModel {
        purpose: SideCall::Title,
        messages,
    }) = done.last()
    else {
        panic!("the title request comes last: {done:#?}");
    };
    assert_eq!(messages[0].content, prompt::TITLE_PROMPT);
    assert!(messages[1]
        .content
        .contains("the cheapest flight to Lisbon please"));
    assert!(messages[1].content.contains("Flights from 89 €."));
    let next = the_call(&done).turn_id;
    assert!(
        !answer_with(&mut task, &next, "Sunday: 95 €.", 4)
            .iter()
            .any(|e| matches!(e, Effect::AskModel { .. })),
        "only the first answer names the task"
    );

    let named = direct(
        &mut task,
        Input::ModelAnswered {
            purpose: SideCall::Title,
            text: Some("\"Cheapest flights to Lisbon.\"\n".into()),
            usage: TokenUsage::default(),
        },
        5,
    );
    let title = Some("Cheapest flights to Lisbon".to_owned());
    assert!(
        matches!(&named[..], [Effect::SaveTask(record), Effect::Emit(FrontendEvent::TaskStatus { title: t, .. })]
        if record.title == title && *t == title)
    );
    assert!(
        direct(
            &mut task,
            Input::ModelAnswered {
                purpose: SideCall::Title,
                text: Some(" \n ".into()),
                usage: TokenUsage::default(),
            },
            6
        )
        .is_empty(),
        "an empty answer leaves the title"
    );
    assert_eq!(task.record().unwrap().title, title);
}

#[test]
fn model_calls_of_relayed_inputs_wait_for_the_alarm() {
    let mut task = bound();
    let start = run_at_task_start(&mut task);
    // The registry relays the result and waits: the next model call is held, the alarm set now.
    let effects = relayed(
        &mut task,
        outcome(
            &start,
            ActionStatus::Ok,
            json!({ "tabId": 7, "windowId": 1, "url": "http://x/" }),
        ),
        20,
    );
    let load = the_dispatch(&effects);
    assert!(matches!(load.command, ActionCommand::BrowserObserve { .. }));
    assert!(calls(&effects).is_empty());
    // Stop relayed from the extension's overlay ends the run without a model call.
    let effects = relayed(&mut task, Input::Control(TaskControl::Stop), 21);
    assert!(calls(&effects).is_empty());
    assert_eq!(statuses(&effects), [TaskStatus::Canceled]);
}

#[test]
fn the_alarm_runs_the_held_model_calls() {
    let mut task = created();
    let effects = relayed(&mut task, message("hello"), 1);
    assert!(calls(&effects).is_empty());
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::LookupSkills { .. })),
        "the skill lookup before the call waits too"
    );
    assert_eq!(wakes(&effects), [1]);
    let alarm = task.handle(Input::Alarm, 2, Caller::Direct).unwrap();
    let Some(Effect::LookupSkills { turn_id, query }) = alarm.first().cloned() else {
        panic!("the held lookup first: {alarm:#?}");
    };
    assert_eq!(query.goal, "hello");
    let found = Input::SkillsFound {
        turn_id,
        result: Ok(vec![]),
    };
    let call = the_call(&direct(&mut task, found, 2));
    assert!(task.is_current_turn(&call.turn_id));
    // Released once.
    assert!(calls(&direct(&mut task, Input::Alarm, 3)).is_empty());
}

#[test]
fn a_run_without_an_extension_asks_for_one_and_a_refusal_fails_the_run() {
    let mut task = created();
    let turn = the_call(&direct(&mut task, message("open the shop"), 1)).turn_id;
    let effects = step(
        &mut task,
        &turn,
        json!({ "navigate": { "url": "http://x/" } }),
        2,
    );
    assert!(effects.contains(&Effect::Bind {
        client_id: None,
        purpose: BindPurpose::Run,
    }));
    assert!(dispatched(&effects).is_empty());
    // The registry has none: the run fails, it is no refusal for anyone.
    let effects = direct(
        &mut task,
        Input::Bound {
            purpose: BindPurpose::Run,
            result: Err(ErrorObject::plugin_offline()),
        },
        3,
    );
    assert!(statuses(&effects).contains(&TaskStatus::Error));
}

#[test]
fn a_bound_run_goes_on_at_its_first_action_and_tells_the_extension_the_status() {
    let mut task = created();
    let turn = the_call(&direct(&mut task, message("open the shop"), 1)).turn_id;
    step(
        &mut task,
        &turn,
        json!({ "navigate": { "url": "http://x/" } }),
        2,
    );
    let effects = bind(&mut task, BindPurpose::Run, 3);
    let start = the_dispatch(&effects);
    assert_eq!(start.client_id, CLIENT);
    assert!(matches!(start.command, ActionCommand::TaskStart { .. }));
    assert_eq!(
        task.record().unwrap().selected_client_id.as_deref(),
        Some(CLIENT)
    );
    // The record is saved before it is dispatched, and the ack timeout is set.
    let save = effects
        .iter()
        .position(|e| matches!(e, Effect::SaveAction(r) if r.action_id == start.action_id))
        .unwrap();
    let dispatch = effects
        .iter()
        .position(|e| matches!(e, Effect::Dispatch(_)))
        .unwrap();
    assert!(save < dispatch);
    assert!(wakes(&effects).contains(&(3 + Timeouts::default().ack_ms)));
    // The status event names the extension, and the extension is told.
    assert!(effects.iter().any(|e| matches!(e, Effect::Tell {
        client_id,
        message: ServerToExtension::TaskState { status: TaskStatus::Running, .. },
    } if client_id == CLIENT)));
}

#[test]
fn an_action_that_ends_moves_the_run_on_and_is_announced_to_its_waiters() {
    let mut task = bound();
    let start = run_at_task_start(&mut task);
    assert!(direct(&mut task, ack(&start), 10)
        .iter()
        .any(|e| matches!(e, Effect::SaveAction(r) if r.state == ActionState::Acked)));
    let effects = direct(
        &mut task,
        outcome(
            &start,
            ActionStatus::Ok,
            json!({ "tabId": 7, "windowId": 1, "url": "http://x/" }),
        ),
        11,
    );
    let ended = finished(&effects);
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0].state, ActionState::Succeeded);
    let next = the_dispatch(&effects);
    assert_eq!(next.tab_id, Some(7), "the task's tab is used next");
    // A repeated result changes nothing.
    let again = direct(
        &mut task,
        outcome(&start, ActionStatus::Ok, json!({ "tabId": 7 })),
        12,
    );
    assert!(finished(&again).is_empty() && dispatched(&again).is_empty());
}

#[test]
fn what_only_the_model_may_read_of_a_result_is_neither_saved_held_nor_handed_to_waiters() {
    let mut task = bound();
    let start = run_at_task_start(&mut task);
    let Input::Extension(ActionEvent::Outcome { mut outcome }) = outcome(
        &start,
        ActionStatus::Ok,
        json!({ "tabId": 7, "text": "[email redacted]" }),
    ) else {
        unreachable!()
    };
    outcome.model_result = Some(json!({ "tabId": 7, "text": "ann@mail.example" }));
    let effects = direct(
        &mut task,
        Input::Extension(ActionEvent::Outcome { outcome }),
        11,
    );
    let kept: Vec<&ActionRecord> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::SaveAction(r) | Effect::ActionFinished(r) if r.action_id == start.action_id => {
                Some(r)
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        kept.len(),
        2,
        "saved, and handed to the developer API's waiters"
    );
    // Nor held: what the web app and exports read of the task's actions.
    let held = task.actions().get(&start.action_id).unwrap();
    for record in kept.into_iter().chain([held]) {
        let outcome = record.outcome.as_ref().unwrap();
        assert_eq!(outcome.model_result, None);
        assert_eq!(outcome.result.as_ref().unwrap()["text"], "[email redacted]");
    }
}

#[test]
fn an_undeliverable_action_waits_for_its_extension_then_fails_the_run() {
    let mut task = bound();
    let start = run_at_task_start(&mut task);
    let effects = direct(
        &mut task,
        Input::DispatchFailed {
            action_id: start.action_id.clone(),
            error: ErrorObject::plugin_offline(),
        },
        10,
    );
    assert!(dispatched(&effects).is_empty());
    let retry_at = *wakes(&effects).iter().min().expect("a retry is scheduled");
    assert!(retry_at > 10);
    // Once the grace has passed, the alarm gives up on the extension: the run fails plainly.
    let mut now = retry_at;
    let mut failed_run = false;
    for _ in 0..50 {
        let effects = direct(&mut task, Input::Alarm, now);
        if let Some(action) = dispatched(&effects).first() {
            direct(
                &mut task,
                Input::DispatchFailed {
                    action_id: action.action_id.clone(),
                    error: ErrorObject::plugin_offline(),
                },
                now,
            );
        }
        if task.record().unwrap().status == TaskStatus::Error {
            failed_run = true;
            break;
        }
        now += Timeouts::default().offline_grace_ms / 4;
    }
    assert!(failed_run, "the run ends when the extension stays away");
}

#[test]
fn takeover_pauses_the_queue_and_resume_dispatches_what_waited() {
    let mut task = bound();
    direct(&mut task, submit("a1"), 1);
    direct(&mut task, submit("a2"), 2);
    let effects = direct(&mut task, Input::Control(TaskControl::Takeover), 3);
    assert_eq!(statuses(&effects), [TaskStatus::Takeover]);
    // What was in flight may finish; what waits stays with the person.
    let done = finish(&task, "a1");
    let effects = relayed(&mut task, done, 4);
    assert_eq!(finished(&effects).len(), 1);
    assert!(dispatched(&effects).is_empty());
    let effects = direct(&mut task, Input::Control(TaskControl::Resume), 5);
    assert_eq!(statuses(&effects), [TaskStatus::Running]);
    assert_eq!(the_dispatch(&effects).action_id, "a2");
}

#[test]
fn pause_holds_the_queue_through_a_restart_and_resume_dispatches_what_waited() {
    let mut task = bound();
    direct(&mut task, submit("a1"), 1);
    direct(&mut task, submit("a2"), 2);
    let effects = direct(&mut task, Input::Control(TaskControl::Pause), 3);
    assert_eq!(statuses(&effects), [TaskStatus::Paused]);
    // What was in flight finishes; nothing new starts.
    let done = finish(&task, "a1");
    let effects = relayed(&mut task, done, 4);
    assert_eq!(finished(&effects).len(), 1);
    assert!(dispatched(&effects).is_empty());
    let stored = stored(&task);
    let mut restored = Task::restore(config(), stored, 5);
    assert_eq!(restored.record().unwrap().status, TaskStatus::Paused);
    assert!(dispatched(&direct(&mut restored, submit("a3"), 6)).is_empty());
    let effects = direct(&mut restored, Input::Control(TaskControl::Resume), 7);
    assert_eq!(statuses(&effects), [TaskStatus::Running]);
    assert_eq!(the_dispatch(&effects).action_id, "a2");
    // Stop ends a paused task too.
    let effects = direct(&mut restored, Input::Control(TaskControl::Pause), 8);
    assert_eq!(statuses(&effects), [TaskStatus::Paused]);
    let effects = direct(&mut restored, Input::Control(TaskControl::Stop), 9);
    assert_eq!(statuses(&effects), [TaskStatus::Canceled]);
}

#[test]
fn a_takeover_outlives_a_restart() {
    let mut task = bound();
    direct(&mut task, submit("a1"), 1);
    let done = finish(&task, "a1");
    direct(&mut task, done, 2);
    direct(&mut task, submit("a2"), 3);
    direct(&mut task, Input::Control(TaskControl::Takeover), 4);
    let stored = stored(&task);
    let mut restored = Task::restore(config(), stored, 5);
    assert_eq!(restored.record().unwrap().status, TaskStatus::Takeover);
    let effects = direct(&mut restored, submit("a3"), 6);
    assert!(dispatched(&effects).is_empty(), "paused after the restart");
}

#[test]
fn stop_cancels_every_action_and_ends_the_turn() {
    let mut task = bound();
    direct(&mut task, submit("a1"), 1);
    direct(&mut task, submit("a2"), 2);
    let effects = direct(&mut task, Input::Control(TaskControl::Stop), 3);
    let canceled: Vec<String> = finished(&effects)
        .into_iter()
        .filter(|r| r.state == ActionState::Canceled)
        .map(|r| r.action_id)
        .collect();
    assert!(canceled.contains(&"a2".to_string()), "{effects:#?}");
    assert!(statuses(&effects).contains(&TaskStatus::Canceled));
}

#[test]
fn the_developer_api_binds_first_when_the_task_has_no_extension() {
    let mut task = created();
    let effects = direct(&mut task, submit("a1"), 1);
    let purpose = match effects.as_slice() {
        [Effect::Bind {
            client_id: None,
            purpose,
        }] => purpose.clone(),
        other => panic!("a binding is asked for: {other:#?}"),
    };
    let effects = bind(&mut task, purpose.clone(), 2);
    let action = the_dispatch(&effects);
    assert_eq!(
        (action.action_id.as_str(), action.client_id.as_str()),
        ("a1", CLIENT)
    );
    assert_eq!(statuses(&effects).last(), Some(&TaskStatus::Running));
    // No extension: the refusal is the answer, nothing is queued.
    let mut task = created();
    let refusal = task
        .handle(
            Input::Bound {
                purpose,
                result: Err(ErrorObject::plugin_offline()),
            },
            3,
            Caller::Direct,
        )
        .unwrap_err();
    assert_eq!(refusal.code, ErrorCode::PluginOffline);
    assert!(task.actions().records().is_empty());
}

#[test]
fn the_person_choosing_an_extension_gets_the_registrys_refusal() {
    let mut task = created();
    let effects = direct(
        &mut task,
        Input::SelectClient {
            client_id: "c9".into(),
        },
        1,
    );
    assert_eq!(
        effects,
        [Effect::Bind {
            client_id: Some("c9".into()),
            purpose: BindPurpose::Requested,
        }]
    );
    let refusal = task
        .handle(
            Input::Bound {
                purpose: BindPurpose::Requested,
                result: Err(ErrorObject::new(ErrorCode::NotFound, "no such extension")),
            },
            2,
            Caller::Direct,
        )
        .unwrap_err();
    assert_eq!(refusal.code, ErrorCode::NotFound);
    assert_eq!(task.record().unwrap().selected_client_id, None);
}

#[test]
fn a_binding_shows_the_extensions_browser_and_stale_snapshots_are_ignored() {
    let mut task = created();
    let snapshot = BrowserSnapshot::default();
    let effects = direct(
        &mut task,
        Input::Bound {
            purpose: BindPurpose::Requested,
            result: Ok(Binding {
                client_id: CLIENT.into(),
                snapshot: Some(snapshot.clone()),
            }),
        },
        1,
    );
    let push = SnapshotPush {
        client_id: CLIENT.into(),
        snapshot: snapshot.clone(),
    };
    assert!(effects.contains(&Effect::SaveSnapshot(push.clone())));
    assert!(effects.iter().any(|e| matches!(e, Effect::Show(FrontendEvent::SnapshotSync { client_id, .. }) if client_id == CLIENT)));
    assert_eq!(
        direct(&mut task, Input::Snapshot(push.clone()), 2).len(),
        2,
        "saved and shown"
    );
    let stale = SnapshotPush {
        client_id: "another".into(),
        snapshot,
    };
    assert!(direct(&mut task, Input::Snapshot(stale), 3).is_empty());
}

#[test]
fn a_web_app_connecting_asks_for_an_extension_and_for_recovery() {
    let mut task = created();
    assert_eq!(
        direct(&mut task, Input::WebConnected, 1),
        [Effect::Bind {
            client_id: None,
            purpose: BindPurpose::Requested,
        }]
    );
    // A turn cut off by a restart: the alarm, now, runs it again.
    let mut task = bound();
    direct(&mut task, message("hello"), 2);
    let stored = Stored {
        task: task.record().cloned(),
        messages: Vec::new(),
        summary: None,
        run: None,
        actions: Vec::new(),
        artifacts: Vec::new(),
        snapshot: None,
        secrets: Vec::new(),
    };
    let mut restored = Task::restore(config(), stored, 3);
    assert_eq!(
        direct(&mut restored, Input::WebConnected, 4),
        [Effect::WakeAt(4)]
    );
}

/// A task as storage holds it after `task` ran until now, with `messages` stored.
fn restart(task: &Task, messages: Vec<StoredMessage>) -> Task {
    let stored = Stored {
        task: task.record().cloned(),
        messages,
        summary: task
            .conversation
            .as_ref()
            .and_then(|c| c.summary().cloned()),
        run: task.conversation.as_ref().and_then(|c| c.run().cloned()),
        actions: task.actions().records().to_vec(),
        artifacts: Vec::new(),
        snapshot: None,
        secrets: Vec::new(),
    };
    Task::restore(config(), stored, 100)
}

fn saved_messages(effects: &[Effect]) -> Vec<StoredMessage> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::SaveMessage(m) => Some(m.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_alarm_reruns_a_model_turn_a_restart_cut_off() {
    let mut task = created();
    let effects = direct(&mut task, message("hello"), 1);
    let cut = the_call(&effects).turn_id;
    let mut restored = restart(&task, saved_messages(&effects));
    let effects = direct(&mut restored, Input::Alarm, 101);
    assert!(effects.contains(&Effect::Emit(FrontendEvent::ChatDelta {
        message_id: cut.clone(),
        delta: String::new(),
        finished: true,
    })));
    let again = the_call(&effects);
    assert_ne!(again.turn_id, cut);
    assert!(restored.is_current_turn(&again.turn_id));
}

#[test]
fn a_message_after_a_restart_first_picks_up_the_cut_off_turn() {
    let mut task = created();
    let effects = direct(&mut task, message("hello"), 1);
    let mut restored = restart(&task, saved_messages(&effects));
    let effects = direct(&mut restored, message("are you there?"), 101);
    // The cut-off turn is closed and answered again; the new message waits for it.
    assert_eq!(calls(&effects).len(), 1);
    assert!(effects.iter().any(|e| matches!(e,
        Effect::Emit(FrontendEvent::ChatDelta { finished: true, delta, .. }) if delta.is_empty())));
}

#[test]
fn after_a_restart_a_run_takes_the_result_that_arrived_meanwhile() {
    let mut task = bound();
    let start = run_at_task_start(&mut task);
    // The extension's result was stored by the scheduler, but the process ended before the
    // run heard of it.
    let mut queue = ActionQueue::restore(task.actions().records().to_vec(), Timeouts::default());
    queue.outcome(
        ActionOutcome {
            action_id: start.action_id.clone(),
            attempt: start.attempt,
            task_id: TASK.into(),
            status: ActionStatus::Ok,
            result: Some(json!({ "tabId": 7, "windowId": 1, "url": "http://x/" })),
            model_result: None,
            error: None,
            warnings: Vec::new(),
            dialog: None,
            tab_id: None,
            waits_for_site: None,
            timings: Vec::new(),
        },
        50,
    );
    let stored = Stored {
        task: task.record().cloned(),
        messages: Vec::new(),
        summary: None,
        run: task.conversation.as_ref().and_then(|c| c.run().cloned()),
        actions: queue.records().to_vec(),
        artifacts: Vec::new(),
        snapshot: None,
        secrets: Vec::new(),
    };
    let mut restored = Task::restore(config(), stored, 100);
    let effects = direct(&mut restored, Input::Alarm, 101);
    let next = the_dispatch(&effects);
    assert!(matches!(next.command, ActionCommand::BrowserObserve { .. }));
}

#[test]
fn after_a_restart_a_run_submits_the_action_it_had_not_stored_yet() {
    let mut task = bound();
    let start = run_at_task_start(&mut task);
    // The run was saved asking for the action; the queue's record never was.
    let stored = Stored {
        actions: Vec::new(),
        ..stored(&task)
    };
    let mut restored = Task::restore(config(), stored, 100);
    let effects = direct(&mut restored, Input::Alarm, 101);
    assert_eq!(the_dispatch(&effects).action_id, start.action_id);
    // Once: the next alarm finds it in flight.
    assert!(dispatched(&direct(&mut restored, Input::Alarm, 102)).is_empty());
}

#[test]
fn a_point_or_key_from_the_api_carries_the_cores_expectation_not_the_callers() {
    let mut task = bound();
    let steps = [
        (
            "at",
            json!({ "name": "browser_click_at", "params": { "x": 5, "y": 6,
                "expect": { "submits": true } } }),
        ),
        (
            "drag",
            json!({ "name": "browser_drag", "params": { "from": { "x": 1, "y": 2 },
                "to": { "x": 3, "y": 4 } } }),
        ),
        (
            "key",
            json!({ "name": "browser_press_key", "params": { "key": "Enter" } }),
        ),
    ];
    for (id, step) in steps {
        direct(
            &mut task,
            Input::Submit {
                action_id: id.into(),
                tab_id: Some(7),
                command: command(step),
                rated: false,
                consent: ClientConsent::Unasked,
            },
            1,
        );
        let sent =
            serde_json::to_value(&task.actions().get(id).expect("queued").command).expect("json");
        assert_eq!(sent["params"]["expect"], json!({}), "{id}: {sent}");
    }
}

#[test]
fn an_action_whose_outcome_is_unknown_is_asked_about_not_run_again() {
    let mut task = bound();
    direct(
        &mut task,
        Input::Submit {
            action_id: "click".into(),
            tab_id: Some(7),
            command: command(json!({ "name": "browser_click", "params": { "clickId": 3 } })),
            rated: false,
            consent: ClientConsent::Unasked,
        },
        1,
    );
    let action = task.actions().get("click").unwrap().clone();
    let sent = action.dispatch(None);
    direct(&mut task, ack(&sent), 2);
    let deadline = task.actions().next_deadline().unwrap();
    let effects = direct(&mut task, Input::Alarm, deadline);
    assert!(dispatched(&effects).is_empty(), "never rerun blindly");
    assert!(effects.iter().any(|e| matches!(e, Effect::Tell {
        message: ServerToExtension::ActionQuery { action_id, .. }, ..
    } if action_id == "click")));
    // Still running: it ends timed out, and is not run again.
    let effects = relayed(
        &mut task,
        Input::Extension(ActionEvent::Status {
            action_id: "click".into(),
            attempt: action.attempt,
            state: AttemptState::Running,
            outcome: None,
        }),
        deadline + 1,
    );
    assert_eq!(finished(&effects)[0].state, ActionState::TimedOut);
    assert!(dispatched(&effects).is_empty());
}

#[test]
fn the_queue_going_idle_leaves_the_running_task_ongoing() {
    let mut task = bound();
    direct(&mut task, submit("a1"), 1);
    let done = finish(&task, "a1");
    let effects = relayed(&mut task, done, 2);
    assert_eq!(statuses(&effects), [TaskStatus::Ongoing]);
}

#[test]
fn a_screenshot_read_by_the_coordinator_joins_the_message_the_call_names() {
    let mut call = LlmCall {
        turn_id: "m2".into(),
        messages: vec![
            llm::ChatMessage::system("s"),
            llm::ChatMessage::user("<page>…</page>"),
            llm::ChatMessage::user("You must reply with a call of the AgentOutput tool"),
        ],
        tools: Vec::new(),
        delay_ms: 0,
        image: Some(PageImage {
            artifact_id: "a".into(),
            message: 1,
        }),
    };
    let image = llm::Image::from_bytes("image/jpeg", b"jpeg").unwrap();
    call.attach(image.clone());
    let images: Vec<_> = call.messages.iter().map(|m| m.image.clone()).collect();
    assert_eq!(images, [None, Some(image), None]);
    assert!(matches!(LlmCall::image_unavailable("it is not stored"),
        FrontendEvent::Warning { message } if message.contains("(it is not stored)")));
}

#[test]
fn the_model_is_told_secret_names_and_domains_and_never_a_value() {
    let config = TaskConfig::from_lookup(|name| match name {
        "MIMO_LLM_MODEL" => Some("model".into()),
        "MIMO_SECRETS" => Some(
            r#"{"pw": {"value": "deployment-pw-9f3k", "domains": ["login.example.com"]}}"#.into(),
        ),
        _ => None,
    })
    .0;
    let mut task = Task::new(config);
    direct(
        &mut task,
        Input::Create {
            task_id: TASK.into(),
        },
        0,
    );
    direct(
        &mut task,
        Input::SecretsChanged(vec![mimo_protocol::SecretInfo {
            name: "api".into(),
            domains: vec!["*.example.org".into()],
            scope: mimo_protocol::SecretScope::Task,
        }]),
        0,
    );
    let effects = direct(
        &mut task,
        Input::UserMessage {
            content: "Log in".into(),
            client_message_id: None,
            answer_schema: None,
        },
        1,
    );
    let call = the_call(&effects);
    let text = serde_json::to_string(
        &call
            .messages
            .iter()
            .map(|m| format!("{m:?}"))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    assert!(
        text.contains("{{secret:pw}} (on login.example.com)"),
        "{text}"
    );
    assert!(text.contains("{{secret:api}} (on *.example.org)"), "{text}");
    assert!(!text.contains("deployment-pw-9f3k"));
    let tools = format!("{:?}", call.tools);
    assert!(
        tools.contains("{{secret:name}}"),
        "the type action says how to write one"
    );
}

mod artifacts;
mod compaction;
mod consent;
mod limits;
mod site_wait;

#[test]
fn a_script_asks_for_its_own_bounds_which_stay_with_the_task() {
    let mut task = created();
    let ask = |take_ms, report_ms| Input::SetScriptBounds { take_ms, report_ms };
    // Out of range either way: refused, named, and nothing changed.
    for (input, named) in [
        (ask(Some(999), None), "takeTimeoutMs is 999"),
        (ask(None, Some(3_600_001)), "reportTimeoutMs is 3600001"),
    ] {
        let refused = task.handle(input, 1, Caller::Direct).unwrap_err();
        assert_eq!(refused.code, ErrorCode::SchemaValidationFailed);
        assert!(refused.message.contains(named), "{}", refused.message);
    }
    assert_eq!(task.record().unwrap().script_bounds, None);

    let effects = direct(&mut task, ask(Some(300_000), None), 2);
    let asked = crate::actions::ScriptBounds {
        take_ms: 300_000,
        report_ms: config().timeouts.script.report_ms,
    };
    assert!(effects
        .iter()
        .any(|e| matches!(e, Effect::SaveTask(t) if t.script_bounds == Some(asked))));
    // Restored after an eviction, the task's actions for its script get those bounds; an
    // extension's keep the extension's.
    let mut restored = Task::restore(config(), stored(&task), 3);
    let script = mimo_protocol::script::script_client_id(TASK);
    let hover = || ActionCommand::BrowserHover {
        target: mimo_protocol::Target::click_id(1),
    };
    restored
        .actions
        .submit("s".into(), TASK.into(), script, None, hover(), 10);
    assert_eq!(restored.actions.next_deadline(), Some(10 + asked.take_ms));
    let mut other = Task::restore(config(), stored(&created()), 3);
    let extension = config().timeouts.ack_ms;
    other
        .actions
        .submit("e".into(), TASK.into(), CLIENT.into(), None, hover(), 10);
    assert_eq!(other.actions.next_deadline(), Some(10 + extension));
}

/// A frame of a viewer's socket becomes the task's input, a confirmation carrying who answered
/// on that socket, whatever the frame says.
#[test]
fn a_web_frame_becomes_the_tasks_input_with_its_sockets_confirmer() {
    let frame: mimo_protocol::FrontendMessage = serde_json::from_value(
        json!({ "type": "confirm", "step": 2, "approve": true, "by": "api" }),
    )
    .unwrap();
    assert_eq!(
        Input::from_web(frame, crate::credentials::Confirmer::Extension),
        Input::Confirm {
            step: 2,
            approve: true,
            reason: None,
            by: crate::credentials::Confirmer::Extension,
        }
    );
    let stop: mimo_protocol::FrontendMessage =
        serde_json::from_value(json!({ "type": "stop" })).unwrap();
    assert_eq!(
        Input::from_web(stop, crate::credentials::Confirmer::Web),
        Input::Control(TaskControl::Stop)
    );
}

#[test]
fn deleting_erases_the_task_and_only_then_starts_the_machine_over() {
    let mut task = created();
    let delete = |unreadable: Option<&str>| Input::Delete {
        unreadable: unreadable.map(str::to_owned),
    };
    assert_eq!(
        task.handle(delete(None), 10, Caller::Direct),
        Ok(vec![Effect::Erase {
            task_id: TASK.into()
        }])
    );
    // Until the erasure is done, the task is as it was (an erasure that failed is tried again).
    assert!(task.record().is_some());
    assert_eq!(
        task.handle(delete(Some("another")), 11, Caller::Direct),
        Ok(vec![Effect::Erase {
            task_id: TASK.into()
        }]),
        "a readable task is deleted by its own id, never by the name the request gave"
    );
    assert_eq!(task.handle(Input::Erased, 12, Caller::Direct), Ok(vec![]));
    assert!(task.record().is_none());
    let unknown = task.handle(delete(None), 13, Caller::Direct).unwrap_err();
    assert_eq!(unknown.code, ErrorCode::NotFound);
    let refused = task
        .handle(
            Input::UserMessage {
                content: "hello".into(),
                client_message_id: None,
                answer_schema: None,
            },
            14,
            Caller::Direct,
        )
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::NotFound);
    // One whose records could not be read is deleted by the name the request routed by.
    assert_eq!(
        task.handle(delete(Some("task-9")), 15, Caller::Direct),
        Ok(vec![Effect::Erase {
            task_id: "task-9".into()
        }])
    );
    // And the machine takes a task anew.
    direct(
        &mut task,
        Input::Create {
            task_id: "task-2".into(),
        },
        16,
    );
    assert_eq!(task.record().map(|t| t.task_id.as_str()), Some("task-2"));
}

/// Why the effects ask the registry for an extension.
fn bind_purpose(effects: &[Effect]) -> BindPurpose {
    effects
        .iter()
        .find_map(|e| match e {
            Effect::Bind { purpose, .. } => Some(purpose.clone()),
            _ => None,
        })
        .expect("a binding asked for")
}

fn script_start(goal: &str, take_ms: Option<u64>) -> Start {
    Start::script(
        mimo_protocol::script::ScriptStart {
            goal: goal.into(),
            step_by_step: true,
            answer_schema: None,
            wait_ms: 0,
            take_timeout_ms: take_ms,
            report_timeout_ms: None,
        },
        CLIENT.into(),
    )
}

/// A script's start is one input: its bounds and mode at once, its client asked of the
/// registry with the rest of the start, and once bound, its goal recorded and its model call
/// held for the alarm (the script has its task id at once).
#[test]
fn a_start_binds_its_client_then_holds_its_goal_for_the_alarm() {
    let mut task = created();
    let effects = direct(
        &mut task,
        Input::Start(script_start("Buy a mug", Some(5_000))),
        1,
    );
    assert!(
        task.record().unwrap().step_by_step,
        "its mode is set at once"
    );
    let binds: Vec<&Effect> = effects
        .iter()
        .filter(|e| matches!(e, Effect::Bind { .. }))
        .collect();
    let [Effect::Bind {
        client_id,
        purpose: purpose @ BindPurpose::Start(rest),
    }] = binds.as_slice()
    else {
        panic!("one binding of the start in {effects:#?}");
    };
    assert_eq!(client_id.as_deref(), Some(CLIENT));
    assert_eq!(
        rest.client_id, None,
        "the rest of the start, its client asked for"
    );
    assert!(calls(&effects).is_empty());
    let purpose = purpose.clone();
    let bound = bind(&mut task, purpose, 2);
    assert_eq!(
        task.record().unwrap().selected_client_id.as_deref(),
        Some(CLIENT)
    );
    assert!(bound
        .iter()
        .any(|e| matches!(e, Effect::SaveMessage(m) if m.message.content == "Buy a mug")));
    assert!(calls(&bound).is_empty(), "held for the alarm: {bound:#?}");
    assert!(bound.contains(&Effect::WakeAt(2)));
    let call = the_call(&direct(&mut task, Input::Alarm, 3));
    assert!(call
        .messages
        .iter()
        .any(|m| m.content.contains("Buy a mug")));
}

/// The first refusal is the answer and stops the rest: bounds out of range bind nothing; a
/// client the registry refuses records no goal.
#[test]
fn a_start_stops_at_its_first_refusal() {
    let mut task = created();
    let refusal = task
        .handle(Input::Start(script_start("g", Some(1))), 1, Caller::Direct)
        .unwrap_err();
    assert_eq!(refusal.code, ErrorCode::SchemaValidationFailed, "{refusal}");
    assert!(
        !task.record().unwrap().step_by_step,
        "nothing after the refusal"
    );
    let effects = direct(&mut task, Input::Start(script_start("g", None)), 2);
    let purpose = bind_purpose(&effects);
    let refusal = task
        .handle(
            Input::Bound {
                purpose,
                result: Err(ErrorObject::new(ErrorCode::NotFound, "no such extension")),
            },
            3,
            Caller::Direct,
        )
        .unwrap_err();
    assert_eq!(refusal.code, ErrorCode::NotFound);
    assert_eq!(task.record().unwrap().selected_client_id, None);
    assert!(
        calls(&direct(&mut task, Input::Alarm, 4)).is_empty(),
        "no goal to answer"
    );
}

/// The side panel's start: bound to the browser it was asked in, its first run on the tab the
/// person looks at, and no goal yet (it comes on the panel's socket).
#[test]
fn a_start_on_a_tab_waits_for_its_goal() {
    let mut task = created();
    let start = Start {
        client_id: Some(CLIENT.into()),
        on_tab: Some(42),
        ..Start::default()
    };
    let effects = direct(&mut task, Input::Start(start), 1);
    assert_eq!(task.record().unwrap().start_tab, None, "once bound");
    let purpose = bind_purpose(&effects);
    let bound = bind(&mut task, purpose, 2);
    assert!(calls(&bound).is_empty());
    assert!(!bound.iter().any(|e| matches!(e, Effect::SaveMessage(_))));
    let record = task.record().unwrap();
    assert_eq!(record.selected_client_id.as_deref(), Some(CLIENT));
    assert_eq!(record.start_tab, Some(42));
}
