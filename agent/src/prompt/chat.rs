//! The prompts of chat turns and of the calls beside them: the conversation as the model reads
//! it, the title and the summary of a long chat.

use super::*;

/// The model's view of a plain conversation: the system prompt, the summary of the conversation
/// before `history` if it was compacted, then `history` in order, its oldest messages left out
/// (and the model told how many) while it does not fit `budget`. The latest message always
/// stays.
pub fn chat_messages(
    summary: Option<&str>,
    history: &[ChatMessage],
    budget: Budget,
) -> Vec<llm::ChatMessage> {
    let mut dropped = 0;
    loop {
        let omitted = (dropped > 0).then(|| {
            llm::ChatMessage::system(format!(
                "<earlier_conversation>\n{dropped} earlier messages of this conversation are left out to fit the model's context.\n</earlier_conversation>"
            ))
        });
        let messages: Vec<llm::ChatMessage> =
            std::iter::once(llm::ChatMessage::system(SYSTEM_PROMPT))
                .chain(summary.map(summary_message))
                .chain(omitted)
                .chain(history[dropped..].iter().map(chat_message))
                .collect();
        if dropped + 1 >= history.len() || estimate_tokens(&messages, &[]) <= budget.context_tokens
        {
            return messages;
        }
        dropped += 1;
    }
}

/// A compacted conversation's summary, where its messages were.
pub(super) fn summary_message(summary: &str) -> llm::ChatMessage {
    llm::ChatMessage::system(format!(
        "<conversation_summary>\nThe earlier part of this conversation, summarized when it \
         grew too long (the messages after this follow it):\n{summary}\n</conversation_summary>"
    ))
}

/// A budget nothing exceeds: a prompt built with it is not compacted.
pub const UNLIMITED: Budget = Budget {
    context_tokens: usize::MAX,
    text_limit: usize::MAX,
};

/// What chat messages take of the context, as [`estimate_tokens`] counts.
pub fn chat_tokens<'a>(messages: impl Iterator<Item = &'a ChatMessage>) -> usize {
    estimate_tokens(&messages.map(chat_message).collect::<Vec<_>>(), &[])
}

pub(super) fn chat_message(m: &ChatMessage) -> llm::ChatMessage {
    match m.role {
        ChatRole::User => llm::ChatMessage::user(m.content.clone()),
        ChatRole::Assistant => llm::ChatMessage::assistant(m.content.clone()),
    }
}

/// What the model is asked when it names a task after its first exchange. The scripted LLM
/// server (`tests/llm-server/`) tells a title request by these opening words.
pub const TITLE_PROMPT: &str = "Name this conversation: reply with a short title for it (at most \
six words, in the language the person wrote in), without quotes or a full stop, and nothing \
else.";

/// The model call that names a task: its first message and the first answer, cut short.
pub fn title_messages(first: &ChatMessage, answer: &ChatMessage) -> Vec<llm::ChatMessage> {
    vec![
        llm::ChatMessage::system(TITLE_PROMPT),
        llm::ChatMessage::user(format!(
            "<first_message>\n{}\n</first_message>\n<first_answer>\n{}\n</first_answer>",
            cut(&first.content, 2_000),
            cut(&answer.content, 2_000)
        )),
    ]
}

/// What the model is asked when a long conversation is compacted. The scripted LLM server
/// (`tests/llm-server/`) tells a summary request by these opening words.
pub const SUMMARY_PROMPT: &str = "Summarize this conversation for your own later use: it is too \
long to keep whole, and from now on you will see your summary in place of these messages. Keep \
what the person asked for and still wants, the facts, names, numbers, links and decisions, what \
was done in their browser and what it found, and what is still open. Fold the earlier summary, \
if there is one, into the new one. Write plain prose or short lines, at most 300 words, in the \
language of the conversation, and nothing else.";

/// The longest a message is quoted in a summary request, in characters.
pub(super) const SUMMARY_MESSAGE_CHARS: usize = 4_000;

/// The model call that compacts a conversation: the earlier summary, if any, then the
/// messages it now covers as a transcript, each cut short so the call fits `budget`.
pub fn summary_messages(
    earlier: Option<&str>,
    messages: &[ChatMessage],
    budget: Budget,
) -> Vec<llm::ChatMessage> {
    // About three characters a token (as `estimate_tokens` counts), less the instructions.
    let room = (budget.context_tokens * 3).saturating_sub(SUMMARY_PROMPT.len() + 2_000);
    let each = (room / messages.len().max(1)).clamp(200, SUMMARY_MESSAGE_CHARS);
    let mut transcript = String::new();
    if let Some(earlier) = earlier {
        transcript.push_str(&format!(
            "<earlier_summary>\n{}\n</earlier_summary>\n",
            cut(earlier, SUMMARY_MESSAGE_CHARS)
        ));
    }
    transcript.push_str("<conversation>\n");
    for m in messages {
        let who = match m.role {
            ChatRole::User => "person",
            ChatRole::Assistant => "you",
        };
        transcript.push_str(&format!("[{who}] {}\n", cut(&m.content, each)));
    }
    transcript.push_str("</conversation>");
    vec![
        llm::ChatMessage::system(SUMMARY_PROMPT),
        llm::ChatMessage::user(transcript),
    ]
}
