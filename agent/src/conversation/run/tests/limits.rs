//! A request's limits counted whole: every model call made for it in its budget (its
//! sub-agents', retried and corrected ones), and going round in circles through a cycle of
//! steps or on a page whose only change is a clock.

use mimo_protocol::agent::SubtaskStatus;
use mimo_protocol::TokenUsage;

use super::*;
use crate::records::AgentRun;

fn usage(input_tokens: u64, output_tokens: u64) -> LlmEvent {
    LlmEvent::Usage {
        input_tokens,
        output_tokens,
    }
}

fn with_max_tokens(max: u64) -> Conversation {
    bound().with_config(RunConfig {
        max_tokens: Some(max),
        ..RunConfig::default()
    })
}

fn task_call(id: &str, goal: &str) -> LlmEvent {
    LlmEvent::ToolCall(ToolCall {
        id: id.into(),
        name: "browser_task".into(),
        arguments: json!({ "goal": goal }),
    })
}

fn started(effects: &[Effect]) -> Vec<u32> {
    events(effects)
        .into_iter()
        .filter_map(|e| match e {
            FrontendEvent::SubtaskStarted { subtask, .. } => Some(subtask),
            _ => None,
        })
        .collect()
}

fn model_calls(effects: &[Effect]) -> usize {
    effects
        .iter()
        .filter(|e| matches!(e, Effect::CallLlm(_)))
        .count()
}

/// The person asks; the master hands out two browser jobs, its call using 110 tokens: the
/// first sub-agent's turn.
fn delegated_two_jobs(c: &mut Conversation) -> String {
    let (turn, _) = turn_of(
        &c.answered(|c| c.user_message("Compare two mugs".into(), None, None, 1))
            .unwrap(),
    );
    let effects = reply(
        c,
        &turn,
        vec![
            task_call("job_1", "Find the blue mug's price on http://shop.test/"),
            task_call("job_2", "Find the red mug's price on http://shop.test/"),
            usage(100, 10),
        ],
    );
    assert_eq!(started(&effects), [1]);
    turn_of(&effects).0
}

/// A sub-agent's first step navigates, its call using `used` tokens; the page is prepared:
/// the turn of its next step.
fn sub_agent_navigates(c: &mut Conversation, turn: &str, id: &str, used: (u64, u64)) -> String {
    let navigate = agent_call(id, json!({ "navigate": { "url": "http://shop.test/" } }));
    let start = submitted(&reply(c, turn, vec![navigate, usage(used.0, used.1)]));
    let effects = ok(
        c,
        start,
        json!({ "tabId": 7, "windowId": 1, "url": "http://shop.test/" }),
    );
    turn_of(&prepare_page(c, effects, "[1]<span>12 €</span>")).0
}

fn done(id: &str) -> LlmEvent {
    agent_call(
        id,
        json!({ "done": { "success": true, "text": "It costs 12 €." } }),
    )
}

#[test]
fn sub_agents_that_together_go_over_the_budget_end_the_request() {
    // Each alone is well within 1,000 tokens: the master 110, the first sub-agent 520, the
    // second 410.
    let mut c = with_max_tokens(1_000);
    let turn = delegated_two_jobs(&mut c);
    let next = sub_agent_navigates(&mut c, &turn, "a1", (300, 10));
    let effects = reply(&mut c, &next, vec![done("a2"), usage(200, 10)]);
    assert_eq!(closed(&effects)[0].1.status, SubtaskStatus::Succeeded);
    assert_eq!(
        started(&effects),
        [2],
        "630 tokens so far: the second job starts"
    );
    assert_eq!(
        c.run().unwrap().request_usage,
        TokenUsage {
            input_tokens: 600,
            output_tokens: 30
        },
        "the second sub-agent does not start from zero"
    );

    // The second sub-agent's first step takes the request to 1,040: it is not run, and the
    // request ends there — the master is not asked again.
    let (turn, _) = turn_of(&effects);
    let effects = reply(
        &mut c,
        &turn,
        vec![
            agent_call("b1", json!({ "navigate": { "url": "http://shop.test/" } })),
            usage(400, 10),
        ],
    );
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    let results = closed(&effects);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].1.status, SubtaskStatus::Failed);
    assert_eq!(
        results[0].1.error.as_ref().map(|e| e.code),
        Some(ErrorCode::BudgetExceeded)
    );
    assert_eq!(model_calls(&effects), 0, "{effects:#?}");
    let (status, _, error) = output_of(&effects);
    assert_eq!(status, OutputStatus::Error);
    let error = error.unwrap();
    assert_eq!(error.code, ErrorCode::BudgetExceeded);
    assert!(
        error.message.contains("1040 tokens") && error.message.contains("MIMO_AGENT_MAX_TOKENS"),
        "{}",
        error.message
    );
    assert_eq!(c.task().status, TaskStatus::Error);
}

#[test]
fn once_the_sub_agents_spent_the_budget_no_other_starts_and_the_master_is_not_asked_again() {
    let mut c = with_max_tokens(1_000);
    let turn = delegated_two_jobs(&mut c);
    let next = sub_agent_navigates(&mut c, &turn, "a1", (300, 10));
    // `done` may always finish; the request is then at 1,130.
    let effects = reply(&mut c, &next, vec![done("a2"), usage(700, 10)]);
    assert_eq!(closed(&effects)[0].1.status, SubtaskStatus::Succeeded);
    assert!(started(&effects).is_empty());
    assert_eq!(model_calls(&effects), 0);
    let (_, _, error) = output_of(&effects);
    let error = error.unwrap();
    assert_eq!(error.code, ErrorCode::BudgetExceeded);
    assert!(error.message.contains("1130 tokens"), "{}", error.message);
    assert_eq!(c.task().status, TaskStatus::Error);
}

#[test]
fn retried_and_corrected_calls_count_and_the_total_outlives_a_restart() {
    let config = RunConfig {
        max_tokens: Some(250),
        ..RunConfig::default()
    };
    let mut c = bound().with_config(config.clone());
    let turn = at_first_page(&mut c, "[1]<a>Home</a>");

    // A reply whose arguments do not match the schema used 110 tokens: it is corrected.
    let bad = LlmEvent::ToolCall(ToolCall {
        id: "call_bad".into(),
        name: "AgentOutput".into(),
        arguments: json!({ "action": { "click": { "index": "one" } } }),
    });
    let (turn, messages) = turn_of(&reply(&mut c, &turn, vec![bad, usage(100, 10)]));
    assert!(messages
        .last()
        .unwrap()
        .content
        .contains("SCHEMA_VALIDATION_FAILED"));
    // A call that failed after reporting 30 tokens: retried with backoff.
    c.answered(|c| c.llm_event(&turn, usage(30, 0), 30));
    let effects =
        c.answered(|c| c.llm_event(&turn, LlmEvent::Error(LlmError::network("reset")), 30));
    turn_of(&effects);
    let spent = TokenUsage {
        input_tokens: 130,
        output_tokens: 10,
    };
    assert_eq!(c.run().unwrap().request_usage, spent);

    // The coordinator restarts: the total is in the stored run.
    let stored = serde_json::to_string(c.run().unwrap()).unwrap();
    let run: AgentRun = serde_json::from_str(&stored).unwrap();
    assert_eq!(run.request_usage, spent);
    let mut c =
        Conversation::restore(c.task().clone(), c.history.clone(), Some(run)).with_config(config);
    let (turn, _) = turn_of(&c.answered(|c| c.recover(40)));

    // The step itself uses 120: the request is at 260, over 250 (its steps alone are at 120).
    let effects = reply(
        &mut c,
        &turn,
        vec![
            agent_call("call_b", json!({ "click": { "index": 1 } })),
            usage(100, 20),
        ],
    );
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    let (_, _, error) = output_of(&effects);
    let error = error.unwrap();
    assert_eq!(error.code, ErrorCode::BudgetExceeded);
    assert!(error.message.contains("260 tokens"), "{}", error.message);
}

#[test]
fn the_runs_result_says_what_the_whole_request_used() {
    let mut c = bound();
    let turn = at_first_page(&mut c, "[1]<a>Home</a>");
    let (turn, _) = turn_of(&reply(
        &mut c,
        &turn,
        vec![LlmEvent::TextDelta("Hmm.".into()), usage(40, 4)],
    ));
    let effects = reply(&mut c, &turn, vec![done("call_c"), usage(60, 6)]);
    let (_, output, _) = output_of(&effects);
    let output = output.unwrap();
    assert_eq!(output["usage"]["inputTokens"], 100);
    assert_eq!(output["usage"]["outputTokens"], 10);
}

#[test]
fn a_run_stored_before_the_requests_total_was_kept_counts_at_least_its_steps() {
    let mut run: AgentRun = serde_json::from_str(include_str!("../stored/agent_run.json")).unwrap();
    assert_eq!(run.request_usage, TokenUsage::default());
    assert!(run.choices.is_empty(), "its lastChoice is left behind");
    run.steps[0].usage = TokenUsage {
        input_tokens: 500,
        output_tokens: 5,
    };
    assert_eq!(
        crate::conversation::limits::request_usage(&run),
        run.steps[0].usage
    );
}

/// From a first page showing `page(0)`, the model chooses `actions[n % len]` at its n-th step
/// after the first, each step running and the page then showing `page(n + 1)`, `steps` times:
/// the effects of the last.
fn steps_on(
    c: &mut Conversation,
    actions: &[Value],
    steps: u32,
    page: impl Fn(u32) -> String,
) -> Vec<Effect> {
    let mut turn = at_first_page(c, &page(0));
    let mut effects = Vec::new();
    for n in 0..steps {
        let action = actions[n as usize % actions.len()].clone();
        effects = reply(c, &turn, vec![agent_call(&format!("call_{n}"), action)]);
        let Some((action_id, command)) = submission(&effects) else {
            return effects;
        };
        let done = ok(c, (action_id, command), json!({}));
        effects = prepare_page(c, done, &page(n + 1));
        turn = turn_of(&effects).0;
    }
    effects
}

fn at_most(max_repeats: u32) -> Conversation {
    bound().with_config(RunConfig {
        max_repeats,
        ..RunConfig::default()
    })
}

fn ended(effects: &[Effect]) -> Option<ErrorObject> {
    events(effects).into_iter().find_map(|e| match e {
        FrontendEvent::StructuredOutput { error, .. } => error,
        _ => None,
    })
}

/// The warning in the next step's prompt, if any.
fn warned(effects: &[Effect]) -> Option<String> {
    let (_, messages) = turn_of(effects);
    messages
        .iter()
        .map(|m| m.content.clone())
        .find(|m| m.contains("<loop_warning>"))
}

fn clicks(indexes: &[u32]) -> Vec<Value> {
    indexes
        .iter()
        .map(|i| json!({ "click": { "index": i } }))
        .collect()
}

const TWO_BUTTONS: &str = "[1]<button>Older</button>\n[2]<button>Newer</button>";

#[test]
fn an_a_b_cycle_on_an_unchanged_page_is_warned_about_then_ends_the_run() {
    let same = |_| TWO_BUTTONS.to_owned();
    // A,B,A,B,A: twice in full, then half.
    let effects = steps_on(&mut at_most(4), &clicks(&[1, 2]), 5, same);
    assert_eq!(warned(&effects), None);
    // A,B three times: the model is warned, once.
    let effects = steps_on(&mut at_most(4), &clicks(&[1, 2]), 6, same);
    let warning = warned(&effects).expect("a loop warning");
    assert!(
        warning.contains("same 2 steps (click, click) 3 times in a row"),
        "{warning}"
    );
    let effects = steps_on(&mut at_most(4), &clicks(&[1, 2]), 7, same);
    assert_eq!(ended(&effects), None);
    assert_eq!(
        warned(&effects),
        None,
        "said when the cycle completes, not after"
    );
    // The fourth time in full ends the run before that step runs.
    let mut c = at_most(4);
    let effects = steps_on(&mut c, &clicks(&[1, 2]), 8, same);
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    let error = ended(&effects).expect("the run ends");
    assert_eq!(error.code, ErrorCode::LoopDetected);
    assert!(
        error.message.contains("same 2 steps (click, click)")
            && error.message.contains("4 times in a row"),
        "{}",
        error.message
    );
    assert_eq!(c.task().status, TaskStatus::Error);
}

#[test]
fn an_a_b_c_cycle_on_an_unchanged_page_ends_the_run() {
    let same = |_| TWO_BUTTONS.to_owned();
    let cycle = [
        json!({ "click": { "index": 1 } }),
        json!({ "scroll": { "direction": "down" } }),
        json!({ "click": { "index": 2 } }),
    ];
    let effects = steps_on(&mut at_most(3), &cycle, 8, same);
    assert_eq!(ended(&effects), None);
    let effects = steps_on(&mut at_most(3), &cycle, 9, same);
    let error = ended(&effects).expect("the run ends");
    assert_eq!(error.code, ErrorCode::LoopDetected);
    assert!(
        error
            .message
            .contains("same 3 steps (click, scroll, click)")
            && error.message.contains("3 times in a row"),
        "{}",
        error.message
    );
}

#[test]
fn a_page_whose_only_change_is_a_clock_or_a_counter_is_unchanged() {
    let ticking = |n: u32| {
        let when = if n == 0 {
            "just now".to_owned()
        } else {
            format!("{n} minutes ago")
        };
        format!(
            "<span>12:0{n}:{:02}</span>\n[1]<button>Next</button>\n[2]<a>Inbox ({} new)</a>\n<p>Updated {when}</p>",
            n * 7 % 60,
            n + 3
        )
    };
    let effects = steps_on(&mut at_most(6), &clicks(&[1]), 3, ticking);
    let warning = warned(&effects).expect("a loop warning");
    assert!(
        warning.contains("click on this same page 3 times"),
        "{warning}"
    );
    let effects = steps_on(&mut at_most(6), &clicks(&[1]), 6, ticking);
    let error = ended(&effects).expect("the run ends");
    assert_eq!(error.code, ErrorCode::LoopDetected);
    assert!(
        error.message.contains("6 times in a row"),
        "{}",
        error.message
    );
}

#[test]
fn a_page_that_really_changes_is_not_a_loop() {
    const HEADINGS: [&str; 8] = [
        "Welcome", "Shipping", "Payment", "Returns", "Contact", "About", "Press", "Careers",
    ];
    // Its text changes.
    let paging = |n: u32| {
        format!(
            "[1]<button>Next</button>\n<h1>{}</h1>",
            HEADINGS[n as usize % 8]
        )
    };
    let effects = steps_on(&mut at_most(3), &clicks(&[1]), 6, paging);
    assert_eq!(ended(&effects), None);
    assert_eq!(warned(&effects), None);
    // A field's value changes: "+" clicked to count up is a change, numbers though they are.
    let counting = |n: u32| format!("[1]<button>+</button>\n[2]<input type=number value={n}>");
    let effects = steps_on(&mut at_most(3), &clicks(&[1]), 6, counting);
    assert_eq!(ended(&effects), None);
    assert_eq!(warned(&effects), None);
    // The page scrolls on.
    let scrolling = |n: u32| {
        format!(
            "page http://shop.test/ \"Shop\": scrolled to 0,{} of 1280x9000, viewport 1280x720, {}px below\n[1]<a>Item</a>",
            n * 720,
            9000 - 720 - n * 720
        )
    };
    let scroll = [json!({ "scroll": { "direction": "down" } })];
    let effects = steps_on(&mut at_most(3), &scroll, 6, scrolling);
    assert_eq!(ended(&effects), None);
    assert_eq!(warned(&effects), None);
}
