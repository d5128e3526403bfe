//! A long conversation compacted into a stored summary that later prompts, a restarted task's
//! and a fork's included, carry in place of its earlier messages.

use super::*;
use crate::records::ChatSummary;
use crate::task::Compaction;

/// A context of 2,400 tokens: three exchanges of [`long`] messages pass the compaction
/// threshold (three quarters of it), two do not.
fn small_context() -> TaskConfig {
    TaskConfig::from_lookup(|name| match name {
        "MIMO_LLM_MODEL" => Some("model".into()),
        "MIMO_LLM_TIMEOUT_MS" => Some(LLM_TIMEOUT_MS.to_string()),
        "MIMO_AGENT_CONTEXT_TOKENS" => Some("2400".into()),
        _ => None,
    })
    .0
}

/// About 300 tokens of a message.
fn long(what: &str) -> String {
    format!("{what}: {}", "words of detail ".repeat(56))
}

fn created_small() -> Task {
    created_with(small_context())
}

/// The person asks `question` and the model answers `answer`: every effect, in order.
fn exchange(task: &mut Task, question: &str, answer: &str, now: u64) -> Vec<Effect> {
    let mut effects = direct(task, message(&long(question)), now);
    let turn = the_call(&effects).turn_id;
    effects.extend(answer_with(task, &turn, &long(answer), now + 1));
    effects
}

/// Exchanges `numbers` ("question 1" answered by "answer 1" at 10, …): every effect, in order.
fn exchanges(task: &mut Task, numbers: std::ops::RangeInclusive<u32>) -> Vec<Effect> {
    numbers
        .flat_map(|i| {
            exchange(
                task,
                &format!("question {i}"),
                &format!("answer {i}"),
                u64::from(i) * 10,
            )
        })
        .collect()
}

fn summary_requests(effects: &[Effect]) -> Vec<(Compaction, Vec<llm::ChatMessage>)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::AskModel {
                purpose: SideCall::Summary(compaction),
                messages,
            } => Some((*compaction, messages.clone())),
            _ => None,
        })
        .collect()
}

fn summarized(
    task: &mut Task,
    compaction: Compaction,
    text: Option<&str>,
    now: u64,
) -> Vec<Effect> {
    direct(
        task,
        Input::ModelAnswered {
            purpose: SideCall::Summary(compaction),
            text: text.map(str::to_owned),
            usage: TokenUsage::default(),
        },
        now,
    )
}

fn saved_summaries(effects: &[Effect]) -> Vec<ChatSummary> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::SaveSummary(s) => Some(s.clone()),
            _ => None,
        })
        .collect()
}

fn contents(messages: &[llm::ChatMessage]) -> String {
    messages
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_long_chat_is_summarized_once_and_the_summary_stands_in_for_its_earlier_part() {
    let mut task = created_small();
    let effects = exchanges(&mut task, 1..=2);
    assert!(summary_requests(&effects).is_empty(), "short enough still");
    let effects = exchange(&mut task, "question 3", "answer 3", 30);
    // Asked after the answer is stored and told, as the last thing.
    let [(compaction, request)] = &summary_requests(&effects)[..] else {
        panic!("one summary request in {effects:#?}");
    };
    assert!(matches!(effects.last(), Some(Effect::AskModel { .. })));
    // The two earlier exchanges are summarized; the latest one is kept whole.
    assert_eq!(
        *compaction,
        Compaction {
            up_to: 3,
            messages: 4
        }
    );
    assert_eq!(request[0].content, prompt::SUMMARY_PROMPT);
    let asked = &request[1].content;
    assert!(asked.contains("[person] question 1") && asked.contains("[you] answer 2"));
    assert!(!asked.contains("question 3") && !asked.contains("<earlier_summary>"));

    // While it is being written, no other is asked for.
    let effects = exchange(&mut task, "question 4", "answer 4", 40);
    assert!(summary_requests(&effects).is_empty());

    let effects = summarized(
        &mut task,
        *compaction,
        Some("  The person asked 1 and 2.\n"),
        50,
    );
    let [summary] = &saved_summaries(&effects)[..] else {
        panic!("one summary stored in {effects:#?}");
    };
    assert_eq!(
        *summary,
        ChatSummary {
            up_to: 3,
            text: "The person asked 1 and 2.".into(),
            messages: 4,
            created_at: 50,
        }
    );
    assert!(
        effects.contains(&Effect::Emit(FrontendEvent::ChatCompacted {
            through: "m4".into(),
            messages: 4,
            summary: "The person asked 1 and 2.".into(),
        }))
    );

    // The next prompt has the summary where the first two exchanges were.
    let next = the_call(&direct(&mut task, message(&long("question 5")), 60));
    let prompt_text = contents(&next.messages);
    assert!(prompt_text.contains("<conversation_summary>"));
    assert!(prompt_text.contains("The person asked 1 and 2."));
    assert!(!prompt_text.contains("question 1") && !prompt_text.contains("answer 2"));
    for kept in [
        "question 3",
        "answer 3",
        "question 4",
        "answer 4",
        "question 5",
    ] {
        assert!(prompt_text.contains(kept), "{kept} is kept whole");
    }
    assert!(
        !prompt_text.contains("<earlier_conversation>"),
        "nothing is left out unsaid"
    );
}

#[test]
fn a_restarted_task_rebuilds_the_same_prompt_from_the_stored_summary() {
    let mut task = created_small();
    let effects = exchanges(&mut task, 1..=3);
    let stored = saved_messages(&effects);
    let mut asked = summary_requests(&effects);
    let (compaction, _) = asked.pop().expect("a summary request");
    let effects = summarized(
        &mut task,
        compaction,
        Some("Earlier: questions 1 and 2."),
        40,
    );
    let summary = saved_summaries(&effects).pop().expect("stored");

    let mut restored = restart(&task, stored.clone());
    let live = the_call(&direct(&mut task, message("and now?"), 200));
    let rebuilt = the_call(&direct(&mut restored, message("and now?"), 200));
    assert_eq!(rebuilt.messages, live.messages);
    assert!(contents(&rebuilt.messages).contains("Earlier: questions 1 and 2."));

    // Without the stored summary the prompt would be another one (the whole chat again): the
    // record is what makes them the same.
    let stored_without = Stored {
        task: restored.record().cloned(),
        messages: stored,
        summary: None,
        ..Stored::default()
    };
    let mut forgetful = Task::restore(small_context(), stored_without, 100);
    let cut = the_call(&direct(&mut forgetful, message("and now?"), 200));
    assert_ne!(cut.messages, live.messages);
    assert_eq!(summary.up_to, 3);
}

#[test]
fn a_failed_summary_is_asked_again_after_the_next_answer_and_folds_into_the_next_one() {
    let mut task = created_small();
    let mut asked = summary_requests(&exchanges(&mut task, 1..=3));
    let (first, _) = asked.pop().unwrap();
    assert!(
        summarized(&mut task, first, None, 31).is_empty(),
        "a failed call"
    );
    assert!(
        summarized(&mut task, first, Some(" \n"), 32).is_empty(),
        "an empty one"
    );

    let effects = exchange(&mut task, "question 4", "answer 4", 40);
    let [(again, _)] = &summary_requests(&effects)[..] else {
        panic!("asked again in {effects:#?}");
    };
    assert_eq!(
        *again,
        Compaction {
            up_to: 5,
            messages: 6
        }
    );
    let effects = summarized(&mut task, *again, Some("Questions 1 to 3."), 42);
    assert_eq!(saved_summaries(&effects).len(), 1);
    // An answer to the older request, come late, is not taken: it covers less.
    assert!(summarized(&mut task, first, Some("late"), 43).is_empty());

    // The next compaction folds the summary before it into its own.
    let folded = summary_requests(&exchanges(&mut task, 5..=7));
    let (next, request) = folded.first().cloned().expect("compacted again");
    assert!(request[1]
        .content
        .contains("<earlier_summary>\nQuestions 1 to 3.\n</earlier_summary>"));
    assert!(!request[1].content.contains("question 3"));
    assert!(request[1].content.contains("[person] question 4"));
    assert_eq!(
        next,
        Compaction {
            up_to: 9,
            messages: 10
        },
        "exchanges 4 and 5 and the six messages before"
    );
}

#[test]
fn a_fork_after_the_summarized_part_keeps_the_summary_and_one_inside_it_does_not() {
    let mut task = created_small();
    let mut asked = summary_requests(&exchanges(&mut task, 1..=3));
    let (compaction, _) = asked.pop().unwrap();
    summarized(&mut task, compaction, Some("Questions 1 and 2."), 40);

    let inside = task.fork_seed("m3").unwrap();
    assert_eq!(inside.summary, None, "forked within the summarized part");
    let after = task.fork_seed("m6").unwrap();
    assert_eq!(after.summary.as_ref().map(|s| s.up_to), Some(3));

    let mut fork = Task::new(small_context());
    let effects = direct(
        &mut fork,
        Input::CreateFork {
            task_id: "task-2".into(),
            seed: after,
        },
        50,
    );
    assert_eq!(saved_summaries(&effects).len(), 1);
    assert!(effects.iter().any(|e| matches!(e,
        Effect::Emit(FrontendEvent::ChatCompacted { through, messages: 4, .. }) if through == "m4")));
    let call = the_call(&direct(&mut fork, message("another way"), 60));
    let text = contents(&call.messages);
    assert!(text.contains("Questions 1 and 2.") && !text.contains("question 1"));
    assert!(text.contains("question 3") && text.contains("another way"));
}

#[test]
fn a_fork_of_a_long_chat_asks_for_its_summary_at_its_first_answer() {
    // Long enough to be compacted in any context (the deployment's default one too), and
    // forked before its summary came: the seed carries none.
    let mut task = created_small();
    assert_eq!(summary_requests(&exchanges(&mut task, 1..=90)).len(), 1);
    let seed = task.fork_seed("m180").unwrap();
    assert_eq!(seed.summary, None);

    let mut fork = Task::new(small_context());
    let created = direct(
        &mut fork,
        Input::CreateFork {
            task_id: "task-2".into(),
            seed,
        },
        50,
    );
    assert!(
        !created.iter().any(|e| matches!(e, Effect::AskModel { .. })),
        "a new task asks nothing of the model: {created:#?}"
    );
    // Nor is a summary taken to be under way: the first answer asks for it.
    let answered = exchange(&mut fork, "another way", "another answer", 60);
    assert_eq!(summary_requests(&answered).len(), 1, "{answered:#?}");
}
