//! The chat model delegating browser jobs to sub-agents (`browser_task`), driven natively.

use mimo_protocol::agent::SubtaskStatus;

use super::*;
use crate::conversation::MAX_SUBTASKS;
use crate::records::{AgentRun, StoredMessage};

fn task_call(id: &str, args: Value) -> LlmEvent {
    LlmEvent::ToolCall(ToolCall {
        id: id.into(),
        name: "browser_task".into(),
        arguments: args,
    })
}

fn tool_names(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .find_map(|e| match e {
            Effect::CallLlm(LlmCall { tools, .. }) => {
                Some(tools.iter().map(|t| t.name.clone()).collect())
            }
            _ => None,
        })
        .expect("a model call")
}

fn started(effects: &[Effect]) -> Vec<(u32, String, u32)> {
    events(effects)
        .into_iter()
        .filter_map(|e| match e {
            FrontendEvent::SubtaskStarted {
                subtask,
                goal,
                max_steps,
                ..
            } => Some((subtask, goal, max_steps)),
            _ => None,
        })
        .collect()
}

/// The person asks; the master's call offers both tools and is returned.
fn asked(c: &mut Conversation, text: &str) -> String {
    let effects = c
        .answered(|c| c.user_message(text.into(), None, None, 1))
        .unwrap();
    assert_eq!(tool_names(&effects), ["AgentOutput", "browser_task"]);
    turn_of(&effects).0
}

/// The sub-agent's first step navigates and its page is prepared: the turn of its next step.
fn subtask_at_page(c: &mut Conversation, turn: &str, call: &str) -> String {
    let navigate = agent_call(call, json!({ "navigate": { "url": "http://shop.test/" } }));
    let start = submitted(&reply(c, turn, vec![navigate]));
    let effects = ok(
        c,
        start,
        json!({ "tabId": 7, "windowId": 1, "url": "http://shop.test/" }),
    );
    turn_of(&prepare_page(c, effects, "[1]<span>12 €</span>")).0
}

fn price_schema() -> Value {
    json!({ "type": "object", "properties": { "price": { "type": "number" } }, "required": ["price"] })
}

#[test]
fn a_chat_turn_delegates_two_browser_subtasks_and_answers_from_their_results() {
    let mut c = bound();
    let turn = asked(&mut c, "Compare the prices of the blue mug and the red mug");

    // The master hands out two jobs in one reply.
    let effects = reply(
        &mut c,
        &turn,
        vec![
            LlmEvent::TextDelta("I'll look up both.".into()),
            task_call(
                "task_blue",
                json!({ "goal": "Find the blue mug's price on http://shop.test/", "answer_schema": price_schema() }),
            ),
            task_call(
                "task_red",
                json!({ "goal": "Find the red mug's price on http://shop.test/", "max_steps": 4 }),
            ),
        ],
    );
    assert_eq!(
        started(&effects),
        [(
            1,
            "Find the blue mug's price on http://shop.test/".into(),
            15
        )]
    );
    // The sub-agent is offered its browser tool only, and sees its job, not the chat.
    assert_eq!(tool_names(&effects), ["AgentOutput"]);
    let (sub_turn, messages) = turn_of(&effects);
    let all: String = messages.iter().map(|m| m.content.clone()).collect();
    assert!(all.contains("<goal>\nFind the blue mug's price"), "{all}");
    assert!(!all.contains("Compare the prices"), "{all}");
    assert!(all.contains("price"), "its answer format is in its prompt");
    assert_ne!(c.task().status, TaskStatus::Completed);

    // Sub-task 1 navigates, reads the price and closes with data in its format.
    let next = subtask_at_page(&mut c, &sub_turn, "b1");
    let effects = reply(
        &mut c,
        &next,
        vec![agent_call(
            "b2",
            json!({ "done": { "success": true, "text": "The blue mug costs 12 €.", "data": { "price": 12 } } }),
        )],
    );
    let results = closed(&effects);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, 1);
    assert_eq!(results[0].1.status, SubtaskStatus::Succeeded);
    assert_eq!(results[0].1.data, Some(json!({ "price": 12 })));
    assert_eq!(results[0].1.steps, 2);
    assert_eq!(results[0].1.url.as_deref(), Some("http://shop.test/"));
    // No answer reaches the person yet: the second job starts, with its own budget.
    assert!(!events(&effects).iter().any(|e| matches!(
        e,
        FrontendEvent::StructuredOutput { .. } | FrontendEvent::Message { .. }
    )));
    assert_eq!(
        started(&effects),
        [(2, "Find the red mug's price on http://shop.test/".into(), 4)]
    );
    let (sub_turn, messages) = turn_of(&effects);
    let all: String = messages.iter().map(|m| m.content.clone()).collect();
    assert!(
        all.contains("red mug") && !all.contains("blue mug"),
        "{all}"
    );

    // Sub-task 2 gives up at once.
    let effects = reply(
        &mut c,
        &sub_turn,
        vec![agent_call(
            "r1",
            json!({ "done": { "success": false, "text": "The shop has no red mug." } }),
        )],
    );
    let results = closed(&effects);
    assert_eq!(results[0].1.status, SubtaskStatus::Failed);
    assert_eq!(results[0].1.summary, "The shop has no red mug.");

    // The master is asked again, with both results after its own reply.
    assert_eq!(tool_names(&effects), ["AgentOutput", "browser_task"]);
    let (master_turn, messages) = turn_of(&effects);
    assert_eq!(messages.last().unwrap().role, llm::Role::Tool);
    let calls = messages
        .iter()
        .find(|m| !m.tool_calls.is_empty())
        .expect("the master's reply");
    assert_eq!(calls.content, "I'll look up both.");
    assert_eq!(calls.tool_calls.len(), 2);
    let results: Vec<Value> = messages
        .iter()
        .filter(|m| m.role == llm::Role::Tool)
        .map(|m| serde_json::from_str(&m.content).unwrap())
        .collect();
    assert_eq!(results[0]["status"], "succeeded");
    assert_eq!(results[0]["data"]["price"], 12);
    assert_eq!(results[1]["status"], "failed");
    assert!(messages
        .iter()
        .any(|m| m.role == llm::Role::User && m.content.contains("Compare the prices")));

    // It answers in text: the request is done.
    let mut effects = c.answered(|c| {
        c.llm_event(
            &master_turn,
            LlmEvent::TextDelta("Blue: 12 €. The red mug is not sold there.".into()),
            30,
        )
    });
    effects.extend(c.answered(|c| {
        c.llm_event(
            &master_turn,
            LlmEvent::Done {
                stop_reason: StopReason::EndTurn,
            },
            30,
        )
    }));
    assert_eq!(c.task().status, TaskStatus::Completed);
    let (status, output, _) = output_of(&effects);
    assert_eq!(status, OutputStatus::Ok);
    assert_eq!(
        output.unwrap()["text"],
        "Blue: 12 €. The red mug is not sold there."
    );
    let said: Vec<&str> = c
        .history()
        .filter(|m| m.role == mimo_protocol::ChatRole::Assistant)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        said,
        [
            "I'll look up both.",
            "Blue: 12 €. The red mug is not sold there."
        ]
    );
}

#[test]
fn a_subtask_has_its_own_step_budget_and_returns_what_it_did_when_it_runs_out() {
    let mut c = bound().with_config(RunConfig {
        max_steps: 10,
        ..RunConfig::default()
    });
    let turn = asked(&mut c, "check the shop");
    // Asking for more steps than the deployment allows gets the deployment's limit.
    let effects = reply(
        &mut c,
        &turn,
        vec![task_call(
            "t1",
            json!({ "goal": "open http://shop.test/", "max_steps": 50 }),
        )],
    );
    assert_eq!(started(&effects)[0].2, 10);
    c.stop(5);

    let mut c = bound();
    let turn = asked(&mut c, "check the shop");
    let effects = reply(
        &mut c,
        &turn,
        vec![task_call(
            "t1",
            json!({ "goal": "open http://shop.test/", "max_steps": 1 }),
        )],
    );
    let (sub_turn, _) = turn_of(&effects);
    // Its one step used, it closes as failed with what it did, and the master goes on.
    let navigate = agent_call("s1", json!({ "navigate": { "url": "http://shop.test/" } }));
    let start = submitted(&reply(&mut c, &sub_turn, vec![navigate]));
    let effects = ok(
        &mut c,
        start,
        json!({ "tabId": 7, "windowId": 1, "url": "http://shop.test/" }),
    );
    let effects = prepare_page(&mut c, effects, "");
    assert_eq!(closed(&effects)[0].1.status, SubtaskStatus::Failed);
    assert_eq!(
        tool_names(&effects),
        ["AgentOutput", "browser_task"],
        "the master is asked"
    );
    let results: Vec<_> = c
        .run()
        .and_then(|r| r.delegation.as_ref())
        .map(|d| d.transcript.clone())
        .unwrap();
    let last: Value = serde_json::from_str(&results.last().unwrap().content).unwrap();
    assert_eq!(last["status"], "failed");
    assert_eq!(last["error"]["code"], "STEP_LIMIT_EXCEEDED");
    assert!(
        last["summary"].as_str().unwrap().contains("navigate"),
        "{last}"
    );
    assert_eq!(last["steps"], 1);
    assert!(c.task().status != TaskStatus::Error, "the task goes on");
    assert!(!c.run().unwrap().is_active());
}

#[test]
fn stopping_during_a_subtask_ends_it_as_stopped_by_the_person() {
    let mut c = bound();
    let turn = asked(&mut c, "check two shops");
    let effects = reply(
        &mut c,
        &turn,
        vec![
            task_call("t1", json!({ "goal": "open http://a.test/" })),
            task_call("t2", json!({ "goal": "open http://b.test/" })),
        ],
    );
    let (sub_turn, _) = turn_of(&effects);
    let navigate = agent_call("s1", json!({ "navigate": { "url": "http://a.test/" } }));
    let start = submitted(&reply(&mut c, &sub_turn, vec![navigate]));
    let effects = c.stop(20);
    let results = closed(&effects);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].1.status, SubtaskStatus::Stopped);
    assert_eq!(c.task().status, TaskStatus::Canceled);
    // Nothing else of the request runs: no second sub-task, no model call, late results ignored.
    assert!(started(&effects).is_empty());
    assert!(!effects.iter().any(|e| matches!(e, Effect::CallLlm(_))));
    assert!(ok(&mut c, start, json!({ "tabId": 7 })).is_empty());
    let transcript = &c.run().unwrap().delegation.as_ref().unwrap().transcript;
    assert!(transcript.last().unwrap().content.contains("stopped"));
}

#[test]
fn bad_calls_go_back_to_the_master_and_the_number_of_subtasks_is_bounded() {
    let mut c = bound();
    let turn = asked(&mut c, "do it");
    let effects = reply(
        &mut c,
        &turn,
        vec![
            task_call("empty", json!({ "goal": "  " })),
            task_call(
                "schema",
                json!({ "goal": "x", "answer_schema": { "type": "nonsense" } }),
            ),
            agent_call("direct", json!({ "back": {} })),
        ],
    );
    // No sub-task starts: the master hears why at once.
    assert!(started(&effects).is_empty());
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    let (mut turn, messages) = turn_of(&effects);
    let results: Vec<Value> = messages
        .iter()
        .filter(|m| m.role == llm::Role::Tool)
        .map(|m| serde_json::from_str(&m.content).unwrap())
        .collect();
    assert_eq!(results.len(), 3, "every call is answered");
    let codes: Vec<&str> = results
        .iter()
        .map(|r| r["error"]["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        [
            "INVALID_TARGET",
            "SCHEMA_VALIDATION_FAILED",
            "SCHEMA_VALIDATION_FAILED"
        ]
    );

    // A master that keeps delegating is stopped at MAX_SUBTASKS.
    for n in 1..=MAX_SUBTASKS {
        let effects = reply(
            &mut c,
            &turn,
            vec![task_call(
                &format!("again{n}"),
                json!({ "goal": "look again" }),
            )],
        );
        assert_eq!(started(&effects)[0].0, n);
        let (sub_turn, _) = turn_of(&effects);
        let effects = reply(
            &mut c,
            &sub_turn,
            vec![agent_call(
                &format!("done{n}"),
                json!({ "done": { "success": true, "text": "looked" } }),
            )],
        );
        turn = turn_of(&effects).0;
    }
    let effects = reply(
        &mut c,
        &turn,
        vec![task_call("one_more", json!({ "goal": "look again" }))],
    );
    assert!(started(&effects).is_empty());
    let (_, messages) = turn_of(&effects);
    let last: Value = serde_json::from_str(&messages.last().unwrap().content).unwrap();
    assert_eq!(last["error"]["code"], "BUDGET_EXCEEDED");
}

#[test]
fn a_restart_while_the_master_answers_asks_it_again_without_running_the_subtasks_again() {
    let mut c = bound();
    let turn = asked(&mut c, "price of the mug");
    let effects = reply(
        &mut c,
        &turn,
        vec![task_call("t1", json!({ "goal": "find the mug's price" }))],
    );
    let (sub_turn, _) = turn_of(&effects);
    let effects = reply(
        &mut c,
        &sub_turn,
        vec![agent_call(
            "d1",
            json!({ "done": { "success": true, "text": "12 €" } }),
        )],
    );
    let (master_turn, before) = turn_of(&effects);
    c.llm_event(&master_turn, LlmEvent::TextDelta("It co".into()), 30);

    // The coordinator is evicted: the task row, the messages and the run are what is stored.
    let stored_run: AgentRun =
        serde_json::from_value(serde_json::to_value(c.run().unwrap()).unwrap()).unwrap();
    let history: Vec<StoredMessage> = c.history.clone();
    let mut restored = Conversation::restore(c.task().clone(), history, Some(stored_run));
    assert!(restored.needs_recovery());
    let effects = restored.answered(|r| r.recover(40));
    assert!(started(&effects).is_empty());
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    let (again, messages) = turn_of(&effects);
    assert_ne!(again, master_turn);
    assert_eq!(messages.len(), before.len());
    assert!(messages.last().unwrap().content.contains("12 €"));
}

#[test]
fn a_sub_agents_bridge_invocations_are_attributed_to_it() {
    let mut c = bound();
    c.browser = Some(mimo_protocol::BrowserSnapshot {
        bridge: Some(mimo_protocol::bridge::BridgeInfo {
            version: "0.1.0".into(),
            root: "/home/ann/notes".into(),
            tools: Vec::new(),
            allow: Vec::new(),
            strict: false,
            max_concurrent: 4,
        }),
        ..mimo_protocol::BrowserSnapshot::default()
    });
    c.set_bridge(true, true, 0);
    let turn = asked(&mut c, "Sum up my notes");
    let effects = reply(
        &mut c,
        &turn,
        vec![task_call("task_notes", json!({ "goal": "Read notes.md" }))],
    );
    let (sub_turn, _) = turn_of(&effects);
    let read = submitted(&reply(
        &mut c,
        &sub_turn,
        vec![agent_call(
            "n1",
            json!({ "file_read": { "path": "notes.md" } }),
        )],
    ));
    assert!(
        matches!(&read.1, ActionCommand::BridgeInvoke { agent_id, .. } if agent_id == "subtask-1"),
        "{read:?}"
    );
}

#[test]
fn a_request_with_an_answer_format_gets_the_masters_answer_in_that_format() {
    let mut c = bound();
    let effects = c
        .answered(|c| {
            c.user_message(
                "What does the blue mug cost?".into(),
                None,
                Some(price_schema()),
                1,
            )
        })
        .unwrap();
    let turn = turn_of(&effects).0;
    let effects = reply(
        &mut c,
        &turn,
        vec![task_call(
            "task_blue",
            json!({ "goal": "Find the blue mug's price on http://shop.test/" }),
        )],
    );
    let next = subtask_at_page(&mut c, &turn_of(&effects).0, "b1");
    let done = json!({ "done": { "success": true, "text": "The blue mug costs 12 €." } });
    let effects = reply(&mut c, &next, vec![agent_call("b2", done)]);
    let (master, messages) = turn_of(&effects);
    let all: String = messages.iter().map(|m| m.content.clone()).collect();
    assert!(
        all.contains("<answer_format>"),
        "the master is told the format"
    );

    // A plain answer is not passed off as the asked format: it goes back, with what it said.
    let effects = reply(
        &mut c,
        &master,
        vec![LlmEvent::TextDelta("The blue mug costs 12 €.".into())],
    );
    assert!(!events(&effects)
        .iter()
        .any(|e| matches!(e, FrontendEvent::StructuredOutput { .. })));
    let (again, messages) = turn_of(&effects);
    let said: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
    assert!(said.contains(&"The blue mug costs 12 €."), "{said:?}");
    assert!(said.last().unwrap().contains("AgentOutput"), "{said:?}");

    let answer =
        json!({ "done": { "success": true, "text": "It costs 12 €.", "data": { "price": 12 } } });
    let effects = reply(&mut c, &again, vec![agent_call("m2", answer)]);
    let (status, output, _) = output_of(&effects);
    assert_eq!(status, OutputStatus::Ok);
    assert_eq!(output.unwrap()["data"], json!({ "price": 12 }));
    assert_eq!(c.task().status, TaskStatus::Completed);
}
