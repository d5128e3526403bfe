//! Regenerating an answer and switching between the alternatives (seed 004 §4.1
//! `brain.run.regenerate`).
//!
//! Every message stays stored. An answer the person regenerates is marked `superseded` and a new
//! one is made, numbered by `version`; choosing an alternative marks the others superseded. The
//! model sees only the messages that are not superseded, so it goes on from the answer the
//! person chose.

use mimo_protocol::{ChatRole, ErrorCode, ErrorObject, FrontendEvent};

use super::{Conversation, Effect};
use crate::records::StoredMessage;

impl Conversation {
    /// The conversation the model sees: every message but superseded answers.
    pub(crate) fn in_conversation(&self) -> impl Iterator<Item = &StoredMessage> {
        self.history.iter().filter(|m| !m.message.superseded)
    }

    /// The version a new answer to the latest request gets: none for the first, else one more
    /// than the highest so far.
    pub(crate) fn answer_version(&self) -> Option<u32> {
        let request = self.request_position();
        self.history
            .iter()
            .filter(|m| m.position > request && m.message.role == ChatRole::Assistant)
            .filter(|m| m.message.superseded)
            .map(|m| m.message.version.unwrap_or(1))
            .max()
            .map(|highest| highest + 1)
    }

    /// The person asks for another answer to their latest request: the answer there is now is
    /// kept as an alternative, and the model answers again from the conversation before it.
    pub fn regenerate(&mut self, now: u64) -> Result<Vec<Effect>, ErrorObject> {
        self.ready_for_answers("regenerate")?;
        let request = self.request_position();
        let answer: Vec<usize> = self
            .history
            .iter()
            .enumerate()
            .filter(|(_, m)| m.position > request && !m.message.superseded)
            .map(|(i, _)| i)
            .collect();
        if answer.is_empty() {
            return Err(ErrorObject::new(
                ErrorCode::SchemaValidationFailed,
                "there is no answer to regenerate yet",
            ));
        }
        let changed: Vec<StoredMessage> = answer
            .into_iter()
            .filter_map(|i| self.mark_superseded(i, true))
            .collect();
        let mut effects = stored_and_told(&changed);
        self.run = None;
        effects.extend(self.start_turn(now));
        effects.extend(self.side_calls(&changed));
        Ok(effects)
    }

    /// The person chooses which answer to their latest request is the one the conversation goes
    /// on from.
    pub fn select_answer(&mut self, message_id: &str) -> Result<Vec<Effect>, ErrorObject> {
        self.ready_for_answers("switch answers")?;
        let request = self.request_position();
        let chosen = self
            .history
            .iter()
            .find(|m| {
                m.message.message_id == message_id
                    && m.position > request
                    && m.message.role == ChatRole::Assistant
            })
            .map(|m| m.message.version.unwrap_or(1))
            .ok_or_else(|| {
                ErrorObject::new(
                    ErrorCode::NotFound,
                    format!("{message_id} is not an answer to the latest request"),
                )
            })?;
        let answers: Vec<usize> = self
            .history
            .iter()
            .enumerate()
            .filter(|(_, m)| m.position > request)
            .map(|(i, _)| i)
            .collect();
        let changed: Vec<StoredMessage> = answers
            .into_iter()
            .filter_map(|i| {
                let other = self.history[i].message.version.unwrap_or(1) != chosen;
                self.mark_superseded(i, other)
            })
            .collect();
        let mut effects = stored_and_told(&changed);
        effects.extend(self.side_calls(&changed));
        Ok(effects)
    }

    /// Answers change only while nothing is being answered.
    fn ready_for_answers(&self, what: &str) -> Result<(), ErrorObject> {
        if self.turn.is_some() || self.run_is_active() || !self.task.status.is_terminal() {
            return Err(ErrorObject::new(
                ErrorCode::SchemaValidationFailed,
                format!("the task is still working: stop it or let it finish to {what}"),
            ));
        }
        Ok(())
    }

    /// Marks history message `i` superseded (or not); the message when that changed it.
    fn mark_superseded(&mut self, i: usize, superseded: bool) -> Option<StoredMessage> {
        let stored = &mut self.history[i];
        if stored.message.superseded == superseded {
            return None;
        }
        stored.message.superseded = superseded;
        Some(stored.clone())
    }
}

/// Messages that changed: stored, and the web app told.
fn stored_and_told(changed: &[StoredMessage]) -> Vec<Effect> {
    changed
        .iter()
        .flat_map(|stored| {
            [
                Effect::SaveMessage(stored.clone()),
                Effect::Emit(FrontendEvent::Message {
                    message: stored.message.clone(),
                }),
            ]
        })
        .collect()
}
