//! Compacting a long conversation (seed 004 §5–§6 "compaction(threshold)"): once the chat takes
//! most of the model's context, its earlier part is summarized by the model, the summary is
//! stored as a record of its own, and every later prompt — a chat turn, the master's, a browser
//! run's — carries the summary in place of those messages. The messages stay stored and shown;
//! only the model's view of them changes. A restart rebuilds the same prompt from the stored
//! summary.

use mimo_protocol::{ChatMessage, ChatRole, FrontendEvent};

use super::{Conversation, Effect};
use crate::records::{ChatSummary, StoredMessage};
use crate::task::Compaction;
use crate::{llm, prompt, text};

/// The conversation is compacted once its prompt takes more than this share (in percent) of
/// the context left after the notes.
const COMPACT_AT_PERCENT: usize = 75;

/// What compaction keeps whole: the latest messages up to this share of the context, starting
/// at one of the person's messages, and at least the latest request with what followed it.
const KEEP_PERCENT: usize = 25;

/// The longest summary kept, in characters (a model that ignores the word limit is cut).
const SUMMARY_CHARS: usize = 6_000;

impl Conversation {
    pub fn with_summary(mut self, summary: Option<ChatSummary>) -> Self {
        self.summary = summary;
        self
    }

    /// The latest compaction, if the conversation was compacted.
    pub fn summary(&self) -> Option<&ChatSummary> {
        self.summary.as_ref()
    }

    /// The chat as the model sees it, up to and including position `through` (all of it for
    /// `None`): the summary of its compacted part, if any, and the messages after it.
    pub(crate) fn compacted_chat(&self, through: Option<u32>) -> (Option<&str>, Vec<ChatMessage>) {
        // A summary reaching past `through` (never made so: compaction keeps the latest
        // request) would leave the prompt without its goal; the whole chat is used then.
        let summary = self
            .summary
            .as_ref()
            .filter(|s| through.is_none_or(|t| s.up_to < t));
        let after = summary.map(|s| s.up_to);
        let chat = self
            .in_conversation()
            .filter(|m| after.is_none_or(|a| m.position > a))
            .filter(|m| through.is_none_or(|t| m.position <= t))
            .map(|m| m.message.clone())
            .collect();
        (summary.map(|s| s.text.as_str()), chat)
    }

    /// The summary call that compacts the conversation, if it has grown past
    /// [`COMPACT_AT_PERCENT`] of the context and has something before what it keeps; `None`
    /// while one is being made. Asked after each answer.
    pub(super) fn compaction_request(&mut self) -> Option<(Compaction, Vec<llm::ChatMessage>)> {
        if self.summarizing.is_some() {
            return None;
        }
        let budget = self.budget_after_notes(self.config.budget);
        let summary = self.summary.as_ref().map(|s| s.text.as_str());
        let after = self.summary.as_ref().map(|s| s.up_to);
        let unsummarized: Vec<&StoredMessage> = self
            .in_conversation()
            .filter(|m| after.is_none_or(|a| m.position > a))
            .collect();
        let chat: Vec<ChatMessage> = unsummarized.iter().map(|m| m.message.clone()).collect();
        let whole = prompt::chat_messages(summary, &chat, prompt::UNLIMITED);
        if prompt::estimate_tokens(&whole, &[]) * 100 <= budget.context_tokens * COMPACT_AT_PERCENT
        {
            return None;
        }
        let keep = kept_from(&unsummarized, budget.context_tokens * KEEP_PERCENT / 100)?;
        let summarized = &chat[..keep];
        let compaction = Compaction {
            up_to: unsummarized[keep - 1].position,
            messages: summarized.len() as u32 + self.summary.as_ref().map_or(0, |s| s.messages),
        };
        let request = prompt::summary_messages(summary, summarized, budget);
        self.summarizing = Some(compaction);
        Some((compaction, request))
    }

    /// The model's answer to a [`Conversation::compaction_request`] (`None`: the call failed,
    /// and the next answer asks again): stored, told, and used from the next prompt on.
    pub fn chat_summarized(
        &mut self,
        compaction: Compaction,
        text: Option<&str>,
        now: u64,
    ) -> Vec<Effect> {
        if self.summarizing == Some(compaction) {
            self.summarizing = None;
        }
        let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
            return Vec::new();
        };
        if self
            .summary
            .as_ref()
            .is_some_and(|s| s.up_to >= compaction.up_to)
        {
            return Vec::new();
        }
        self.keep_summary(ChatSummary {
            up_to: compaction.up_to,
            text: text::cut(text, SUMMARY_CHARS),
            messages: compaction.messages,
            created_at: now,
        })
    }

    /// Takes `summary` as the conversation's compaction: stored, told, and used from the next
    /// prompt on.
    pub(super) fn keep_summary(&mut self, summary: ChatSummary) -> Vec<Effect> {
        let Some(through) = self
            .history
            .iter()
            .find(|m| m.position == summary.up_to)
            .map(|m| m.message.message_id.clone())
        else {
            return Vec::new();
        };
        let effects = vec![
            Effect::Emit(FrontendEvent::ChatCompacted {
                through,
                messages: summary.messages,
                summary: summary.text.clone(),
            }),
            Effect::SaveSummary(summary.clone()),
        ];
        self.summary = Some(summary);
        effects
    }
}

/// Where the part kept whole of `messages` starts: at the earliest of the person's messages
/// from which the rest fits in `keep_tokens`, and no later than their latest one. `None` when
/// that leaves nothing before it to summarize.
fn kept_from(messages: &[&StoredMessage], keep_tokens: usize) -> Option<usize> {
    let is_request = |m: &&StoredMessage| m.message.role == ChatRole::User;
    let mut start = messages.iter().rposition(is_request)?;
    let mut kept = prompt::chat_tokens(messages[start..].iter().map(|m| &m.message));
    while let Some(earlier) = messages[..start].iter().rposition(is_request) {
        let more = prompt::chat_tokens(messages[earlier..start].iter().map(|m| &m.message));
        if kept + more > keep_tokens {
            break;
        }
        kept += more;
        start = earlier;
    }
    (start > 0).then_some(start)
}
