use super::*;
use crate::llm::{LlmError, LlmErrorKind, LlmEvent, Role, StopReason};

fn conversation() -> Conversation {
    Conversation::new("task-1".into(), 1_000)
}

fn delta(text: &str) -> LlmEvent {
    LlmEvent::TextDelta(text.into())
}

fn done() -> LlmEvent {
    LlmEvent::Done {
        stop_reason: StopReason::EndTurn,
    }
}

/// The turn id of the single LLM call among `effects`.
fn llm_call(effects: &[Effect]) -> (String, Vec<llm::ChatMessage>) {
    let calls: Vec<_> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::CallLlm(LlmCall {
                turn_id, messages, ..
            }) => Some((turn_id.clone(), messages.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 1, "exactly one LLM call in {effects:?}");
    calls.into_iter().next().unwrap()
}

fn emitted(effects: &[Effect]) -> Vec<&FrontendEvent> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Emit(event) => Some(event),
            _ => None,
        })
        .collect()
}

fn statuses(effects: &[Effect]) -> Vec<TaskStatus> {
    emitted(effects)
        .into_iter()
        .filter_map(|e| match e {
            FrontendEvent::TaskStatus { status, .. } => Some(*status),
            _ => None,
        })
        .collect()
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
fn a_user_message_is_stored_echoed_and_starts_a_streamed_turn() {
    let mut c = conversation();
    let effects = c
        .answered(|c| {
            c.user_message(
                "  Find the blue mug\n  on this page ".into(),
                None,
                None,
                2_000,
            )
        })
        .unwrap();
    let saved = saved_messages(&effects);
    assert_eq!(saved.len(), 1);
    assert_eq!(
        saved[0].message.content,
        "Find the blue mug\n  on this page"
    );
    assert_eq!(saved[0].position, 0);
    assert!(matches!(
        effects[1],
        Effect::Emit(FrontendEvent::Message { .. })
    ));
    assert_eq!(statuses(&effects), vec![TaskStatus::Running]);
    assert_eq!(
        c.task().title.as_deref(),
        Some("Find the blue mug on this page")
    );
    let (turn, messages) = llm_call(&effects);
    assert!(
        matches!(effects.last(), Some(Effect::CallLlm(_))),
        "the call comes last"
    );
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].role, Role::System);
    assert_eq!(
        (messages[1].role, messages[1].content.as_str()),
        (Role::User, "Find the blue mug\n  on this page")
    );
    assert!(c.is_current_turn(&turn));
    assert_eq!(c.task().current_turn.as_deref(), Some(turn.as_str()));

    let streamed = c.answered(|c| c.llm_event(&turn, delta("Hel"), 2_100));
    assert_eq!(
        emitted(&streamed),
        vec![&FrontendEvent::ChatDelta {
            message_id: turn.clone(),
            delta: "Hel".into(),
            finished: false
        }]
    );
    assert!(
        c.answered(|c| c.llm_event(&turn, delta(""), 2_150))
            .is_empty(),
        "empty deltas are not events"
    );
    c.answered(|c| c.llm_event(&turn, delta("lo"), 2_200));
    let finished = c.answered(|c| c.llm_event(&turn, done(), 2_300));
    let saved = saved_messages(&finished);
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].message.content, "Hello");
    assert_eq!(saved[0].message.role, ChatRole::Assistant);
    assert_eq!(saved[0].position, 1);
    let events = emitted(&finished);
    assert_eq!(
        events[0],
        &FrontendEvent::ChatDelta {
            message_id: turn.clone(),
            delta: String::new(),
            finished: true
        }
    );
    assert!(events.iter().any(|e| matches!(e,
        FrontendEvent::StructuredOutput { status: OutputStatus::Ok, output: Some(o), .. } if o["text"] == "Hello")));
    assert_eq!(statuses(&finished), vec![TaskStatus::Completed]);
    assert!(!c.is_current_turn(&turn));
    assert_eq!(c.task().current_turn, None);
    // Storing the first answer makes naming the task due: an effect of its own, with the
    // first exchange to name it after.
    let asked: Vec<_> = finished
        .iter()
        .filter_map(|e| match e {
            Effect::AskModel { purpose, messages } => Some((*purpose, messages.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(asked.len(), 1, "{finished:?}");
    assert_eq!(asked[0].0, SideCall::Title);
    let exchange: String = asked[0].1.iter().map(|m| m.content.clone()).collect();
    assert!(exchange.contains("Find the blue mug") && exchange.contains("Hello"));
}

#[test]
fn only_the_first_answer_asks_for_a_title() {
    let mut c = conversation();
    let first = c
        .answered(|c| c.user_message("Hi".into(), None, None, 2_000))
        .unwrap();
    let (turn, _) = llm_call(&first);
    c.answered(|c| c.llm_event(&turn, delta("Hello"), 2_100));
    let answered = c.answered(|c| c.llm_event(&turn, done(), 2_200));
    assert!(answered.iter().any(|e| matches!(
        e,
        Effect::AskModel {
            purpose: SideCall::Title,
            ..
        }
    )));
    let second = c
        .answered(|c| c.user_message("And now?".into(), None, None, 3_000))
        .unwrap();
    let (turn, _) = llm_call(&second);
    c.answered(|c| c.llm_event(&turn, delta("Still here"), 3_100));
    let again = c.answered(|c| c.llm_event(&turn, done(), 3_200));
    assert_eq!(saved_messages(&again).len(), 1);
    assert!(
        !again.iter().any(|e| matches!(e, Effect::AskModel { .. })),
        "{again:?}"
    );
}

#[test]
fn a_message_sent_again_with_its_client_id_is_stored_once() {
    let mut c = conversation();
    let id = Some("msg-1".to_owned());
    let first = c
        .answered(|c| c.user_message("buy a mug".into(), id.clone(), None, 1))
        .unwrap();
    assert_eq!(
        saved_messages(&first)[0]
            .message
            .client_message_id
            .as_deref(),
        Some("msg-1"),
        "stored with its id, so the echo tells the client it arrived"
    );
    assert!(c
        .answered(|c| c.user_message("buy a mug".into(), id, None, 2))
        .unwrap()
        .is_empty());
    assert_eq!(c.history().count(), 1);
    // Without an id, or with another, it is a new message; a bad id is refused.
    assert!(!c
        .answered(|c| c.user_message("buy a mug".into(), Some("msg-2".into()), None, 3))
        .unwrap()
        .is_empty());
    assert_eq!(c.history().count(), 2);
    let long = Some("x".repeat(129));
    assert_eq!(
        c.answered(|c| c.user_message("x".into(), long, None, 4))
            .unwrap_err()
            .code,
        ErrorCode::SchemaValidationFailed
    );
    // It survives a restart.
    let restored = Conversation::restore(c.task().clone(), c.history.clone(), None);
    let mut restored = restored;
    assert!(restored
        .answered(|c| c.user_message("buy a mug".into(), Some("msg-2".into()), None, 5))
        .unwrap()
        .is_empty());
}

#[test]
fn messages_sent_during_a_turn_are_answered_next_in_conversation_order() {
    let mut c = conversation();
    let (first, _) = llm_call(
        &c.answered(|c| c.user_message("one".into(), None, None, 1))
            .unwrap(),
    );
    let queued = c
        .answered(|c| c.user_message("two".into(), None, None, 2))
        .unwrap();
    assert!(
        queued.iter().all(|e| !matches!(e, Effect::CallLlm(_))),
        "no second call while one streams"
    );
    assert_eq!(
        saved_messages(&queued)[0].position,
        2,
        "after the reserved place of the reply"
    );
    c.answered(|c| c.llm_event(&first, delta("answer one"), 3));
    let effects = c.answered(|c| c.llm_event(&first, done(), 4));
    let (second, messages) = llm_call(&effects);
    assert_ne!(second, first);
    let contents: Vec<_> = messages[1..]
        .iter()
        .map(|m| (m.role, m.content.as_str()))
        .collect();
    assert_eq!(
        contents,
        vec![
            (Role::User, "one"),
            (Role::Assistant, "answer one"),
            (Role::User, "two")
        ]
    );
    assert_eq!(
        statuses(&effects),
        vec![TaskStatus::Completed, TaskStatus::Running]
    );
}

#[test]
fn events_of_a_turn_that_is_no_longer_current_are_ignored() {
    let mut c = conversation();
    let (turn, _) = llm_call(
        &c.answered(|c| c.user_message("hi".into(), None, None, 1))
            .unwrap(),
    );
    assert!(c
        .answered(|c| c.llm_event("m99", delta("stray"), 2))
        .is_empty());
    c.answered(|c| c.llm_event(&turn, done(), 3));
    assert!(c
        .answered(|c| c.llm_event(&turn, delta("late"), 4))
        .is_empty());
    assert!(
        c.answered(|c| c.llm_event(&turn, done(), 5)).is_empty(),
        "a turn ends once"
    );
}

#[test]
fn stop_keeps_the_partial_reply_and_cancels() {
    let mut c = conversation();
    let (turn, _) = llm_call(
        &c.answered(|c| c.user_message("tell me a story".into(), None, None, 1))
            .unwrap(),
    );
    c.answered(|c| c.llm_event(&turn, delta("Once upon"), 2));
    let effects = c.stop(3);
    assert_eq!(saved_messages(&effects)[0].message.content, "Once upon");
    assert_eq!(statuses(&effects), vec![TaskStatus::Canceled]);
    assert!(c
        .answered(|c| c.llm_event(&turn, delta(" a time"), 4))
        .is_empty());
    assert!(
        c.stop(5).is_empty(),
        "stopping a stopped task changes nothing"
    );
    // A new message starts again.
    let restarted = c
        .answered(|c| c.user_message("again".into(), None, None, 6))
        .unwrap();
    assert_eq!(statuses(&restarted), vec![TaskStatus::Running]);
}

#[test]
fn an_llm_error_ends_the_turn_with_a_structured_error() {
    let mut c = conversation();
    let (turn, _) = llm_call(
        &c.answered(|c| c.user_message("hi".into(), None, None, 1))
            .unwrap(),
    );
    let error = LlmError::new(LlmErrorKind::RateLimited, "slow down");
    // Retried with backoff first, as the same turn, the web app told each time.
    for attempt in 1..=LLM_RETRIES {
        let retry = c.answered(|c| c.llm_event(&turn, LlmEvent::Error(error.clone()), 2));
        let wait = llm_backoff_ms(attempt, None);
        assert!(
            matches!(&retry[..], [
                Effect::Emit(FrontendEvent::ModelRetry { attempt: a, max_attempts: LLM_RETRIES, reason: LlmErrorKind::RateLimited, message, delay_ms: d }),
                Effect::CallLlm(LlmCall { turn_id, delay_ms, .. }),
            ] if *a == attempt && message == "slow down" && *d == wait && *turn_id == turn && *delay_ms == wait),
            "{retry:?}"
        );
    }
    let effects = c.answered(|c| c.llm_event(&turn, LlmEvent::Error(error), 2));
    let output = emitted(&effects)
        .into_iter()
        .find_map(|e| match e {
            FrontendEvent::StructuredOutput {
                status: OutputStatus::Error,
                error: Some(error),
                ..
            } => Some(error.clone()),
            _ => None,
        })
        .expect("a structured error");
    assert_eq!(output.code, ErrorCode::LlmError);
    assert!(output.retryable, "rate limits are retryable");
    assert!(output.message.contains("slow down"));
    assert_eq!(statuses(&effects), vec![TaskStatus::Error]);
    let auth = LlmError::new(LlmErrorKind::Auth, "bad key");
    let (turn, _) = llm_call(
        &c.answered(|c| c.user_message("again".into(), None, None, 3))
            .unwrap(),
    );
    let effects = c.answered(|c| c.llm_event(&turn, LlmEvent::Error(auth), 4));
    assert!(emitted(&effects).iter().any(|e| matches!(
        e,
        FrontendEvent::StructuredOutput {
            error: Some(ErrorObject {
                retryable: false,
                ..
            }),
            ..
        }
    )));
}

#[test]
fn a_chat_too_long_for_the_model_leaves_out_older_messages_and_is_asked_again() {
    let budget = Budget {
        context_tokens: 4_000,
        ..Budget::default()
    };
    let mut c = conversation().with_config(RunConfig {
        budget,
        ..RunConfig::default()
    });
    let long = |n: usize| format!("{n} {}", "words ".repeat(200));
    let mut turn = String::new();
    for n in 0..3 {
        let effects = c
            .answered(|c| c.user_message(long(n), None, None, 1))
            .unwrap();
        turn = llm_call(&effects).0;
        if n < 2 {
            c.answered(|c| c.llm_event(&turn, delta(&long(10 + n)), 2));
            c.answered(|c| c.llm_event(&turn, done(), 3));
        }
    }
    let overflow = LlmError::new(
        LlmErrorKind::ContextTooLong,
        "prompt is too long: 210000 tokens > 200000 maximum",
    );
    let effects = c.answered(|c| c.llm_event(&turn, LlmEvent::Error(overflow.clone()), 4));
    assert_eq!(
        emitted(&effects),
        vec![&FrontendEvent::ModelRetry {
            attempt: 1,
            max_attempts: MAX_OVERFLOWS,
            reason: LlmErrorKind::ContextTooLong,
            message: overflow.message.clone(),
            delay_ms: 0,
        }]
    );
    let (again, messages) = llm_call(&effects);
    assert_eq!(again, turn, "the same turn, asked again at once");
    assert!(
        messages[1]
            .content
            .contains("earlier messages of this conversation are left out"),
        "{messages:#?}"
    );
    assert!(messages.last().unwrap().content.starts_with("2 "));
    assert!(prompt::estimate_tokens(&messages, &[]) <= budget.compacted(1).context_tokens);
    // Compacting does not use up the retries of failures that pass by themselves, and it
    // has its own bound: then the turn ends, saying what to do.
    for attempt in 2..=MAX_OVERFLOWS {
        let effects = c.answered(|c| c.llm_event(&turn, LlmEvent::Error(overflow.clone()), 5));
        assert!(
            matches!(emitted(&effects)[..], [FrontendEvent::ModelRetry { attempt: a, .. }] if *a == attempt)
        );
    }
    let effects = c.answered(|c| c.llm_event(&turn, LlmEvent::Error(overflow), 6));
    let error = emitted(&effects)
        .into_iter()
        .find_map(|e| match e {
            FrontendEvent::StructuredOutput {
                error: Some(error), ..
            } => Some(error.clone()),
            _ => None,
        })
        .expect("an error");
    assert_eq!(error.code, ErrorCode::LlmError);
    assert!(!error.retryable);
    assert!(
        error.message.contains("MIMO_AGENT_CONTEXT_TOKENS"),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("prompt is too long"),
        "{}",
        error.message
    );
}

#[test]
fn a_failure_after_text_was_shown_is_not_retried() {
    let mut c = conversation();
    let (turn, _) = llm_call(
        &c.answered(|c| c.user_message("hi".into(), None, None, 1))
            .unwrap(),
    );
    c.answered(|c| c.llm_event(&turn, delta("Half an ans"), 2));
    let cut = LlmError::network("connection reset");
    let effects = c.answered(|c| c.llm_event(&turn, LlmEvent::Error(cut), 3));
    assert!(effects.iter().all(|e| !matches!(e, Effect::CallLlm(_))));
    assert_eq!(statuses(&effects), vec![TaskStatus::Error]);
    assert_eq!(saved_messages(&effects)[0].message.content, "Half an ans");
}

#[test]
fn backoff_grows_and_honours_retry_after() {
    assert_eq!(llm_backoff_ms(1, None), 1_000);
    assert_eq!(llm_backoff_ms(2, None), 2_000);
    assert_eq!(llm_backoff_ms(3, None), 4_000);
    assert_eq!(llm_backoff_ms(30, None), 20_000);
    assert_eq!(llm_backoff_ms(1, Some(3_000)), 3_000);
    assert_eq!(llm_backoff_ms(1, Some(60_000)), 20_000);
}

#[test]
fn invalid_messages_are_refused_and_change_nothing() {
    let mut c = conversation();
    for content in ["", "   \n ", &"x".repeat(MAX_USER_MESSAGE_BYTES + 1)] {
        let error = c
            .answered(|c| c.user_message(content.to_owned(), None, None, 1))
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::SchemaValidationFailed);
    }
    assert_eq!(c.history().count(), 0);
    assert_eq!(c.task().status, TaskStatus::Created);
    assert_eq!(c.task().message_ids_issued, 0);
}

#[test]
fn a_turn_cut_off_by_a_restart_is_closed_and_run_again_with_a_new_id() {
    let mut c = conversation();
    let (turn, _) = llm_call(
        &c.answered(|c| c.user_message("hi".into(), None, None, 1))
            .unwrap(),
    );
    c.answered(|c| c.llm_event(&turn, delta("partial"), 2));
    // What storage holds: the task row and the user message; the partial reply is lost.
    let stored: Vec<StoredMessage> = c.history.clone();
    let mut restored = Conversation::restore(c.task().clone(), stored, None);
    assert!(restored.needs_recovery());
    let effects = restored.answered(|c| c.recover(10));
    assert_eq!(
        emitted(&effects)[0],
        &FrontendEvent::ChatDelta {
            message_id: turn.clone(),
            delta: String::new(),
            finished: true
        }
    );
    let (rerun, messages) = llm_call(&effects);
    assert_ne!(rerun, turn, "ids are never reused");
    assert_eq!(messages.last().unwrap().content, "hi");
    assert!(!restored.needs_recovery());
    assert!(
        restored.answered(|c| c.recover(11)).is_empty(),
        "recovery happens once"
    );
    let finished = restored.answered(|c| c.llm_event(&rerun, done(), 12));
    assert_eq!(
        saved_messages(&finished)[0].position,
        1,
        "the reply takes the place reserved for it"
    );
}

#[test]
fn takeover_pauses_a_running_task_and_resume_continues_it() {
    let mut c = conversation();
    assert!(
        c.takeover(1).is_empty(),
        "nothing to take over in a new task"
    );
    assert_eq!(statuses(&c.actions_started(2)), vec![TaskStatus::Running]);
    assert!(c.actions_started(3).is_empty());
    assert_eq!(statuses(&c.takeover(4)), vec![TaskStatus::Takeover]);
    assert!(
        c.actions_started(5).is_empty(),
        "new actions do not end a takeover"
    );
    assert!(c.actions_idle(6).is_empty());
    assert_eq!(statuses(&c.resume(7)), vec![TaskStatus::Running]);
    assert!(c.resume(8).is_empty(), "resume only ends a takeover");
    assert_eq!(statuses(&c.actions_idle(9)), vec![TaskStatus::Ongoing]);
    assert!(
        c.actions_started(10).is_empty(),
        "an ongoing task stays ongoing while its actions run"
    );
    assert!(c.actions_idle(11).is_empty());
    assert_eq!(c.task().status, TaskStatus::Ongoing);
    assert_eq!(statuses(&c.stop(12)), vec![TaskStatus::Canceled]);
    assert_eq!(
        statuses(&c.actions_started(13)),
        vec![TaskStatus::Running],
        "an ended task runs again"
    );
    assert_eq!(statuses(&c.actions_idle(14)), vec![TaskStatus::Ongoing]);
}

#[test]
fn selecting_the_same_client_again_is_a_no_op() {
    let mut c = conversation();
    let effects = c.select_client("alpha".into(), 1);
    assert!(matches!(
        effects[..],
        [Effect::Emit(FrontendEvent::TaskStatus { .. })]
    ));
    assert!(c.select_client("alpha".into(), 2).is_empty());
    assert_eq!(c.task().selected_client_id.as_deref(), Some("alpha"));
}
