//! Regenerating an answer and switching between the alternatives, driven natively.

use mimo_protocol::ChatRole;

use super::*;

/// The model answers turn `turn` with `text` (no tool call).
fn says(c: &mut Conversation, turn: &str, text: &str) -> Vec<Effect> {
    let mut effects = c.answered(|c| c.llm_event(turn, LlmEvent::TextDelta(text.into()), 5));
    effects.extend(c.answered(|c| {
        c.llm_event(
            turn,
            LlmEvent::Done {
                stop_reason: StopReason::EndTurn,
            },
            5,
        )
    }));
    effects
}

fn asked(c: &mut Conversation, text: &str) -> String {
    turn_of(
        &c.answered(|c| c.user_message(text.into(), None, None, 1))
            .unwrap(),
    )
    .0
}

/// (content, version, superseded) of the assistant messages.
fn answers(c: &Conversation) -> Vec<(String, Option<u32>, bool)> {
    c.history()
        .filter(|m| m.role == ChatRole::Assistant)
        .map(|m| (m.content.clone(), m.version, m.superseded))
        .collect()
}

#[test]
fn a_regenerated_answer_is_kept_as_an_alternative_and_the_conversation_goes_on_from_the_chosen_one()
{
    let mut c = bound();
    let turn = asked(&mut c, "Name a colour");
    says(&mut c, &turn, "Blue.");
    let first = c.history().last().unwrap().message_id.clone();

    let effects = c.answered(|c| c.regenerate(10)).unwrap();
    // The old answer is marked, stored and shown as superseded; the model answers again
    // from the conversation before it.
    assert!(events(&effects).iter().any(|e| matches!(e,
        FrontendEvent::Message { message } if message.message_id == first && message.superseded)));
    assert!(effects
        .iter()
        .any(|e| matches!(e, Effect::SaveMessage(m) if m.message.superseded)));
    let (turn, messages) = turn_of(&effects);
    assert_eq!(messages.last().unwrap().content, "Name a colour");
    assert!(!messages.iter().any(|m| m.content == "Blue."));
    says(&mut c, &turn, "Green.");
    let second = c.history().last().unwrap().message_id.clone();
    assert_eq!(
        answers(&c),
        [
            ("Blue.".into(), None, true),
            ("Green.".into(), Some(2), false)
        ]
    );
    assert_eq!(c.task().status, TaskStatus::Completed);

    // Back to the first: the second is kept, superseded.
    let effects = c.select_answer(&first).unwrap();
    assert_eq!(events(&effects).len(), 2, "both messages change");
    assert_eq!(
        answers(&c),
        [
            ("Blue.".into(), None, false),
            ("Green.".into(), Some(2), true)
        ]
    );
    assert!(
        c.select_answer(&first).unwrap().is_empty(),
        "already chosen"
    );

    // A third answer is version 3, and the next message goes on from the chosen answer.
    let (turn, _) = turn_of(&c.answered(|c| c.regenerate(20)).unwrap());
    says(&mut c, &turn, "Red.");
    assert_eq!(answers(&c)[2], ("Red.".into(), Some(3), false));
    c.select_answer(&second).unwrap();
    let (_, messages) = turn_of(
        &c.answered(|c| c.user_message("Another".into(), None, None, 30))
            .unwrap(),
    );
    let said: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
    assert!(said.contains(&"Green.") && !said.contains(&"Blue.") && !said.contains(&"Red."));
}

#[test]
fn answers_change_only_when_nothing_is_being_answered() {
    let mut c = bound();
    assert_eq!(
        c.regenerate(1).unwrap_err().code,
        ErrorCode::SchemaValidationFailed,
        "nothing to regenerate yet"
    );
    let turn = asked(&mut c, "Name a colour");
    // While the answer streams, neither is allowed.
    let busy = c.regenerate(2).unwrap_err();
    assert!(busy.message.contains("still working"), "{}", busy.message);
    says(&mut c, &turn, "Blue.");
    assert_eq!(
        c.select_answer("m999").unwrap_err().code,
        ErrorCode::NotFound
    );
    // The person's own message is not an answer.
    assert_eq!(c.select_answer("m1").unwrap_err().code, ErrorCode::NotFound);
    // A run's answer (its steps' text included) is regenerated as a whole.
    let mut c = bound();
    let turn = asked(&mut c, "open the shop");
    let effects = reply(
        &mut c,
        &turn,
        vec![
            LlmEvent::TextDelta("Opening it.".into()),
            agent_call("a", json!({ "done": { "success": true, "text": "Done." } })),
        ],
    );
    assert_eq!(output_of(&effects).0, OutputStatus::Ok);
    c.answered(|c| c.regenerate(9)).unwrap();
    assert!(answers(&c).iter().all(|(_, _, superseded)| *superseded));
}
