//! The system prompt and the message list sent to the model.

use mimo_protocol::{ChatMessage, ChatRole};

use crate::llm;

/// Who the model is. The browser-task sections of seed 003 §4 join this when the agent loop
/// offers browser tools.
pub const SYSTEM_PROMPT: &str = "You are Mimo, an assistant that can operate the user's web \
browser on their behalf. Answer plainly and concisely. When the user asks for something that \
needs the browser, say what you would do step by step.";

/// The model's view of the conversation: the system prompt, then the stored chat in order.
pub fn chat_messages(history: &[ChatMessage]) -> Vec<llm::ChatMessage> {
    std::iter::once(message(llm::Role::System, SYSTEM_PROMPT.to_owned()))
        .chain(history.iter().map(|m| {
            let role = match m.role {
                ChatRole::User => llm::Role::User,
                ChatRole::Assistant => llm::Role::Assistant,
            };
            message(role, m.content.clone())
        }))
        .collect()
}

fn message(role: llm::Role, content: String) -> llm::ChatMessage {
    llm::ChatMessage {
        role,
        content,
        tool_calls: Vec::new(),
        tool_call_id: None,
    }
}
