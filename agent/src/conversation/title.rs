//! The task's title: taken from the first message, then named by the model after the first
//! exchange.

use mimo_protocol::ChatRole;

use super::{Conversation, Effect};
use crate::llm;
use crate::prompt;
use crate::records::StoredMessage;

/// Longest title derived from the first message, in characters.
pub(super) const TITLE_CHARS: usize = 60;

impl Conversation {
    /// The model call that names the task, when `saved` is its first answer: the title taken
    /// from the first message is then refreshed from the whole first exchange.
    pub(super) fn title_request(&self, saved: &StoredMessage) -> Option<Vec<llm::ChatMessage>> {
        let answer = &saved.message;
        let first_answer = self
            .history
            .iter()
            .find(|m| m.message.role == ChatRole::Assistant)?;
        if answer.role != ChatRole::Assistant
            || answer.content.trim().is_empty()
            || first_answer.message.message_id != answer.message_id
        {
            return None;
        }
        let first = self
            .history
            .iter()
            .find(|m| m.message.role == ChatRole::User)?;
        Some(prompt::title_messages(&first.message, answer))
    }

    /// The model's answer to [`Conversation::title_request`]: the task is named after it (one
    /// line, at most [`TITLE_CHARS`] characters, no quotes). An answer with nothing usable
    /// leaves the title as it was.
    pub fn title_suggested(&mut self, suggested: &str, now: u64) -> Vec<Effect> {
        let Some(title) = clean_title(suggested) else {
            return Vec::new();
        };
        if self.task.title.as_deref() == Some(title.as_str()) {
            return Vec::new();
        }
        self.task.title = Some(title);
        self.task.updated_at = now;
        vec![self.status_event()]
    }
}

/// A model's suggested title as a title: its first line with text, without quotes, markdown
/// marks, a `Title:` label or a closing full stop, whitespace collapsed, cut to
/// [`TITLE_CHARS`] characters. `None` when nothing is left.
fn clean_title(suggested: &str) -> Option<String> {
    const QUOTES: &[char] = &['"', '\'', '`', '“', '”', '‘', '’', '«', '»', '„'];
    let line = suggested.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = line.trim_start_matches(['#', '*', '-', ' ']);
    let line = match line.get(..6) {
        Some(label) if label.eq_ignore_ascii_case("title:") => &line[6..],
        _ => line,
    };
    let words: Vec<&str> = line.split_whitespace().collect();
    let joined: String = words
        .join(" ")
        .chars()
        .filter(|c| !QUOTES.contains(c))
        .collect();
    let trimmed = joined.trim_matches(|c: char| c == '*' || c == '.' || c.is_whitespace());
    let title: String = trimmed.chars().take(TITLE_CHARS).collect();
    let title = title.trim_end().to_owned();
    (!title.is_empty()).then_some(title)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suggested_title_is_cleaned_to_one_short_line() {
        for (suggested, title) in [
            (
                "Cheapest flights to Lisbon",
                Some("Cheapest flights to Lisbon"),
            ),
            ("\"Cheapest flights\".\n", Some("Cheapest flights")),
            (
                "\n\n  **Title:** “Mug order”  \nThe person wants…",
                Some("Mug order"),
            ),
            ("# Compare   two\tmugs.", Some("Compare two mugs")),
            ("' \"\n . ", None),
            ("", None),
        ] {
            assert_eq!(clean_title(suggested).as_deref(), title, "{suggested:?}");
        }
        let long = clean_title(&"word ".repeat(40)).unwrap();
        assert!(long.chars().count() <= TITLE_CHARS && !long.ends_with(' '));
    }
}
