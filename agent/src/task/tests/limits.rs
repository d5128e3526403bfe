//! The calls beside the chat (naming the task, summarizing it) count into the budget of the
//! request they are answered in, as the coordinator reports them.

use mimo_protocol::TokenUsage;

use super::*;

/// The deployment's settings with a budget of 1,000 tokens, and `more`.
fn with_budget(more: &'static [(&'static str, &'static str)]) -> TaskConfig {
    TaskConfig::from_lookup(|name| match name {
        "MIMO_LLM_MODEL" => Some("model".into()),
        "MIMO_LLM_TIMEOUT_MS" => Some(LLM_TIMEOUT_MS.to_string()),
        "MIMO_AGENT_MAX_TOKENS" => Some("1000".into()),
        _ => more
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| (*v).to_owned()),
    })
    .0
}

fn used(input_tokens: u64, output_tokens: u64) -> TokenUsage {
    TokenUsage {
        input_tokens,
        output_tokens,
    }
}

/// The model answers `turn_id` with `events`, then the stream ends.
fn reply(task: &mut Task, turn_id: &str, events: Vec<LlmEvent>, now: u64) -> Vec<Effect> {
    let mut effects = Vec::new();
    for event in events.into_iter().chain([LlmEvent::Done {
        stop_reason: StopReason::ToolUse,
    }]) {
        effects.extend(direct(
            task,
            Input::Llm {
                turn_id: turn_id.into(),
                event,
            },
            now,
        ));
    }
    effects
}

/// A step listing the person's tabs: answered by the run itself, its call using `usage`.
fn list_tabs(id: &str, usage: TokenUsage) -> Vec<LlmEvent> {
    vec![
        LlmEvent::ToolCall(ToolCall {
            id: id.into(),
            name: "AgentOutput".into(),
            arguments: json!({
                "evaluation_previous_goal": "fine",
                "memory": "",
                "next_goal": "read the tabs",
                "action": { "list_tabs": {} },
            }),
        }),
        LlmEvent::Usage {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
        },
    ]
}

fn budget_error(effects: &[Effect]) -> Option<ErrorObject> {
    effects.iter().find_map(|e| match e {
        Effect::Emit(FrontendEvent::StructuredOutput {
            error: Some(error), ..
        }) => Some(error.clone()),
        _ => None,
    })
}

#[test]
fn the_title_calls_tokens_count_into_the_budget_of_the_request_it_was_answered_in() {
    let mut task = created_with(with_budget(&[]));
    let turn = the_call(&direct(&mut task, message("which tabs are open?"), 2)).turn_id;
    // The first step's text is the task's first answer: the model is asked for a title.
    let mut first = vec![LlmEvent::TextDelta("Let me look at your tabs.".into())];
    first.extend(list_tabs("call_1", used(100, 10)));
    let effects = reply(&mut task, &turn, first, 3);
    assert!(effects.iter().any(|e| matches!(
        e,
        Effect::AskModel {
            purpose: SideCall::Title,
            ..
        }
    )));
    let next = the_call(&effects).turn_id;

    // The title's call used 920 tokens: counted, and the run is saved with them.
    let effects = direct(
        &mut task,
        Input::ModelAnswered {
            purpose: SideCall::Title,
            text: Some("Open tabs".into()),
            usage: used(900, 20),
        },
        4,
    );
    assert!(
        effects.iter().any(|e| matches!(e,
            Effect::SaveRun(Some(run)) if run.request_usage == used(1_000, 30))),
        "{effects:#?}"
    );
    assert_eq!(task.record().unwrap().title.as_deref(), Some("Open tabs"));

    // The next step takes the request to 1,040 (its steps alone to 120): it is not run.
    let effects = reply(&mut task, &next, list_tabs("call_2", used(10, 0)), 5);
    let error = budget_error(&effects).expect("the run ends");
    assert_eq!(error.code, ErrorCode::BudgetExceeded);
    assert!(error.message.contains("1040 tokens"), "{}", error.message);
    assert_eq!(task.record().unwrap().status, TaskStatus::Error);
}

/// About 300 tokens of a message.
fn long(what: &str) -> String {
    format!("{what}: {}", "words of detail ".repeat(56))
}

#[test]
fn a_summarys_tokens_count_into_the_budget_of_the_request_it_was_answered_in() {
    // A context of 2,400 tokens: three long exchanges are summarized.
    let mut task = created_with(with_budget(&[("MIMO_AGENT_CONTEXT_TOKENS", "2400")]));
    let mut asked = None;
    for i in 1..=3u64 {
        let turn = the_call(&direct(
            &mut task,
            message(&long(&format!("question {i}"))),
            i * 10,
        ))
        .turn_id;
        for effect in answer_with(&mut task, &turn, &long(&format!("answer {i}")), i * 10 + 1) {
            if let Effect::AskModel {
                purpose: SideCall::Summary(compaction),
                ..
            } = effect
            {
                asked = Some(compaction);
            }
        }
    }
    let compaction = asked.expect("a summary is asked for");

    // The next request is being answered when the summary comes back, having used 990 tokens:
    // they are the request's before it has a run, and its run takes them over.
    let turn = the_call(&direct(&mut task, message("which tabs are open?"), 40)).turn_id;
    direct(
        &mut task,
        Input::ModelAnswered {
            purpose: SideCall::Summary(compaction),
            text: Some("The person asked three questions.".into()),
            usage: used(990, 0),
        },
        41,
    );
    let effects = reply(&mut task, &turn, list_tabs("call_1", used(10, 5)), 42);
    let error = budget_error(&effects).expect("the run ends");
    assert_eq!(error.code, ErrorCode::BudgetExceeded);
    assert!(error.message.contains("1005 tokens"), "{}", error.message);
}
