//! Forking a conversation at one of its messages, driven natively.

use mimo_protocol::{ChatRole, TaskStatus};

use super::*;
use crate::task::ForkSeed;

fn chat(c: &mut Conversation, question: &str, answer: &str) {
    let (turn, _) = turn_of(
        &c.answered(|c| c.user_message(question.into(), None, None, 1))
            .unwrap(),
    );
    c.answered(|c| c.llm_event(&turn, LlmEvent::TextDelta(answer.into()), 2));
    c.answered(|c| {
        c.llm_event(
            &turn,
            LlmEvent::Done {
                stop_reason: StopReason::EndTurn,
            },
            3,
        )
    });
}

#[test]
fn a_fork_keeps_the_history_up_to_its_message_and_goes_its_own_way() {
    let mut c = bound();
    chat(&mut c, "Name a colour", "Blue.");
    chat(&mut c, "And a fruit?", "A pear.");
    let (turn, _) = turn_of(&c.answered(|c| c.regenerate(5)).unwrap());
    c.llm_event(&turn, LlmEvent::TextDelta("An apple.".into()), 6);
    c.llm_event(
        &turn,
        LlmEvent::Done {
            stop_reason: StopReason::EndTurn,
        },
        6,
    );
    let ids: Vec<String> = c.history().map(|m| m.message_id.clone()).collect();
    assert_eq!(ids, ["m1", "m2", "m3", "m4", "m5"]);

    // Forked at the first answer: the conversation up to it, nothing after.
    let seed = c.fork_seed("m2").unwrap();
    assert_eq!(seed.forked_from.task_id, TASK);
    assert_eq!(seed.forked_from.message_id, "m2");
    assert_eq!(
        seed.messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>(),
        ["Name a colour", "Blue."]
    );
    // Forked at the latest answer: the superseded alternative is left out.
    let latest = c.fork_seed("m5").unwrap();
    let said: Vec<&str> = latest.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(
        said,
        ["Name a colour", "Blue.", "And a fruit?", "An apple."]
    );
    assert_eq!(
        c.fork_seed("m4").unwrap_err().code,
        ErrorCode::NotFound,
        "superseded"
    );
    assert_eq!(c.fork_seed("m99").unwrap_err().code, ErrorCode::NotFound);

    // The seed crosses between objects as JSON.
    let seed: ForkSeed = serde_json::from_value(serde_json::to_value(&latest).unwrap()).unwrap();
    let (mut fork, effects) = Conversation::from_fork("task-2".into(), seed, 50);
    assert_eq!(fork.task().forked_from.as_ref().unwrap().message_id, "m5");
    assert_eq!(fork.task().title.as_deref(), Some("Name a colour"));
    assert_eq!(fork.task().status, TaskStatus::Completed);
    let told = events(&effects);
    assert_eq!(
        told.iter()
            .filter(|e| matches!(e, FrontendEvent::Message { .. }))
            .count(),
        4
    );
    assert!(told.iter().any(|e| matches!(e,
        FrontendEvent::ForkedFrom { origin } if origin.task_id == TASK && origin.message_id == "m5")));
    assert_eq!(
        effects
            .iter()
            .filter(|e| matches!(e, Effect::SaveMessage(_)))
            .count(),
        4
    );

    // It goes on its own way: the model sees the kept history, and new ids follow the kept ones.
    fork.select_client("client-1".into(), 51);
    let effects = fork
        .answered(|f| f.user_message("And a vegetable?".into(), None, None, 60))
        .unwrap();
    let (turn, messages) = turn_of(&effects);
    let said: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
    assert!(said.ends_with(&[
        "Name a colour",
        "Blue.",
        "And a fruit?",
        "An apple.",
        "And a vegetable?"
    ]));
    assert_eq!(turn, "m7");
    assert_eq!(
        fork.history().last().unwrap().role,
        ChatRole::User,
        "the fork's own message"
    );
    // The task forked only notes that it was.
    let noted = c.fork_made("task-2".into(), "m5".into());
    assert!(
        matches!(&events(&noted)[..], [FrontendEvent::Forked { fork }] if fork.task_id == "task-2")
    );
    assert_eq!(c.history().count(), 5, "the task forked is unchanged");
}
