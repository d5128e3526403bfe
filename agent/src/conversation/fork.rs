//! Forking a task at one of its messages (seed 004 §4.1 `brain.session.fork`): a new task whose
//! history is this one's up to that message, linked both ways, that goes on its own way.

use mimo_protocol::task::ForkedFrom;
use mimo_protocol::{ChatMessage, ErrorCode, ErrorObject, FrontendEvent, TaskStatus};

use super::{Conversation, Effect};
use crate::records::{ChatSummary, StoredMessage};
use crate::task::ForkSeed;

impl Conversation {
    /// The seed of a fork at `message_id`: the conversation up to it (answers the person
    /// switched away from left out). A message still streaming cannot be forked at.
    pub fn fork_seed(&self, message_id: &str) -> Result<ForkSeed, ErrorObject> {
        let at = self
            .in_conversation()
            .find(|m| m.message.message_id == message_id)
            .map(|m| m.position)
            .ok_or_else(|| {
                ErrorObject::new(
                    ErrorCode::NotFound,
                    format!("{message_id} is not a message of this task's conversation"),
                )
            })?;
        let kept: Vec<&StoredMessage> = self
            .in_conversation()
            .filter(|m| m.position <= at)
            .collect();
        // The fork numbers its messages afresh, so the summary's end becomes an index.
        let summary = self
            .summary
            .as_ref()
            .filter(|s| s.up_to < at)
            .and_then(|s| {
                let index = kept.iter().rposition(|m| m.position <= s.up_to)?;
                Some(ChatSummary {
                    up_to: index as u32,
                    ..s.clone()
                })
            });
        Ok(ForkSeed {
            forked_from: ForkedFrom {
                task_id: self.task.task_id.clone(),
                message_id: message_id.to_owned(),
            },
            title: self.task.title.clone(),
            messages: kept.into_iter().map(|m| m.message.clone()).collect(),
            summary,
        })
    }

    /// A new task `task_id` forked from `seed`: its history is the seed's, it waits for the
    /// person's next message, and it says where it came from. Returns it with what to store
    /// and tell.
    pub fn from_fork(task_id: String, seed: ForkSeed, now: u64) -> (Self, Vec<Effect>) {
        let mut fork = Conversation::new(task_id, now);
        fork.task.title = seed.title;
        fork.task.forked_from = Some(seed.forked_from.clone());
        // Ids carry on after the highest one kept, so none is handed out twice.
        fork.task.message_ids_issued = seed
            .messages
            .iter()
            .filter_map(|m| m.message_id.strip_prefix('m')?.parse::<u32>().ok())
            .max()
            .unwrap_or(0);
        let mut effects = Vec::new();
        for (position, message) in seed.messages.into_iter().enumerate() {
            let stored = StoredMessage {
                position: position as u32,
                message: ChatMessage {
                    superseded: false,
                    ..message
                },
            };
            effects.push(Effect::SaveMessage(stored.clone()));
            effects.push(Effect::Emit(FrontendEvent::Message {
                message: stored.message.clone(),
            }));
            fork.history.push(stored);
        }
        if let Some(summary) = seed.summary {
            effects.extend(fork.keep_summary(summary));
        }
        // Nothing is asked of the model yet, not even a summary of a long seed (a new task
        // only stores and tells): the fork's first answer asks for what is due then.
        // A fork that ends with an answer is done until the person goes another way.
        if !fork.history.is_empty() && !fork.awaits_reply() {
            fork.task.status = TaskStatus::Completed;
        }
        effects.push(fork.status_event());
        effects.push(Effect::Emit(FrontendEvent::ForkedFrom {
            origin: seed.forked_from,
        }));
        (fork, effects)
    }

    /// A fork of this task was made at `message_id`: the link back to it is kept in the
    /// task's history.
    pub fn fork_made(&self, task_id: String, message_id: String) -> Vec<Effect> {
        vec![Effect::Emit(FrontendEvent::Forked {
            fork: ForkedFrom {
                task_id,
                message_id,
            },
        })]
    }
}
