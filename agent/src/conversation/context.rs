//! What a model call is told beside the conversation: the notes on the task's context (files,
//! secrets, tabs, the answer format) and the budget they leave.

use super::*;

impl Conversation {
    /// The messages of a chat turn's model call: the conversation, as much of it as fits.
    /// While the chat model delegates, its own replies and what its sub-tasks returned follow.
    pub(super) fn chat_call_messages(&self) -> Vec<llm::ChatMessage> {
        let overflows = self.turn.as_ref().map_or(0, |t| t.overflows);
        let budget = self.budget_after_notes(self.config.budget.compacted(overflows));
        let messages = match self.delegation() {
            Some((goal_position, delegation)) => {
                self.master_messages(goal_position, delegation, budget)
            }
            None => {
                let (summary, chat) = self.compacted_chat(None);
                prompt::chat_messages(summary, &chat, budget)
            }
        };
        self.with_context_notes(messages)
    }

    /// The answer format of the request being worked on: a sub-task's own, else the task's.
    pub(crate) fn answer_schema(&self) -> Option<&serde_json::Value> {
        match self
            .run
            .as_ref()
            .filter(|r| r.is_active())
            .and_then(|r| r.subtask.as_ref())
        {
            Some(subtask) => subtask.answer_schema.as_ref(),
            None => self.task.answer_schema.as_ref(),
        }
    }

    /// `budget` less what the context notes take: they take their part of the context before
    /// the conversation is fitted into the rest.
    pub(crate) fn budget_after_notes(&self, budget: Budget) -> Budget {
        let notes = prompt::estimate_tokens(&self.context_notes(), &[]);
        Budget {
            context_tokens: budget.context_tokens.saturating_sub(notes),
            ..budget
        }
    }

    /// What a model call is told besides the conversation: the skills for its goal and page,
    /// the files attached to the task, the secrets it may type and the person's open tabs.
    pub(crate) fn context_notes(&self) -> Vec<llm::ChatMessage> {
        [
            skills::skills_note(self.skills_in_use()),
            prompt::attachments_note(&self.attachments),
            crate::secrets::secrets_note(&self.secrets),
            self.browser
                .as_ref()
                .filter(|_| self.asks_about_tabs())
                .and_then(prompt::browser_tabs_note),
            self.usable_bridge().map(prompt::local_files_note),
            self.task
                .start_tab
                .map(|tab| prompt::start_tab_note(tab, self.browser.as_ref())),
            self.answer_schema().map(prompt::answer_format_note),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// Whether the request being answered (the person's latest message, and what they wrote
    /// during its run) is about their open tabs.
    fn asks_about_tabs(&self) -> bool {
        let latest = self
            .history
            .iter()
            .rev()
            .find(|m| m.message.role == ChatRole::User)
            .map(|m| m.message.content.as_str());
        let updates = self
            .run
            .iter()
            .flat_map(|r| r.updates.iter().map(String::as_str));
        latest.into_iter().chain(updates).any(prompt::mentions_tabs)
    }

    /// `messages` with the context notes right after the system prompt.
    pub(crate) fn with_context_notes(
        &self,
        mut messages: Vec<llm::ChatMessage>,
    ) -> Vec<llm::ChatMessage> {
        let at = messages.len().min(1);
        messages.splice(at..at, self.context_notes());
        messages
    }
}
