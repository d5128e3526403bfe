//! How one input's work settles: the conversation's and the scheduler's effects answer each
//! other until only I/O for the coordinator is left.

use super::*;

impl Task {
    /// Lets the conversation and the scheduler answer each other until only I/O is left, which
    /// is appended to `out` in order (the model call naming the task, when one is due, last).
    /// When the scheduler was involved the alarm is set for its next deadline, and an idle
    /// queue tells the conversation.
    pub(super) fn settle(
        &mut self,
        work: Vec<Work>,
        out: &mut Vec<Effect>,
        mut touches_actions: bool,
        now: u64,
        caller: Caller,
    ) {
        let mut queue: VecDeque<Work> = work.into();
        loop {
            while let Some(item) = queue.pop_front() {
                match item {
                    Work::Conversation(effect) => {
                        queue.extend(self.conversation_effect(effect, out, now, caller))
                    }
                    Work::Action(effect) => {
                        touches_actions = true;
                        queue.extend(self.action_effect(effect, out, now));
                    }
                }
            }
            if !touches_actions {
                break;
            }
            touches_actions = false;
            if let Some(at) = self.actions.next_deadline() {
                out.push(Effect::WakeAt(at));
            }
            if self.actions.is_idle() {
                if let Some(conversation) = self.conversation.as_mut() {
                    let idle = conversation.actions_idle(now);
                    queue.extend(idle.into_iter().map(Work::Conversation));
                }
            }
            if queue.is_empty() {
                break;
            }
        }
        for (purpose, messages) in std::mem::take(&mut self.side_calls) {
            self.toward_model(Effect::AskModel { purpose, messages }, 0, out, now, caller);
        }
    }

    fn conversation_effect(
        &mut self,
        effect: conversation::Effect,
        out: &mut Vec<Effect>,
        now: u64,
        caller: Caller,
    ) -> Vec<Work> {
        let Some(conversation) = self.conversation.as_ref() else {
            return Vec::new();
        };
        match effect {
            conversation::Effect::Emit(event) => {
                // The extension's overlay follows the task's status; its side panel shows the
                // confirmations, and drops each once answered (here or there).
                let task_id = conversation.task().task_id.clone();
                let selected = conversation.task().selected_client_id.clone();
                let bridge = conversation.task().allow_bridge;
                let tell = match &event {
                    FrontendEvent::TaskStatus {
                        status,
                        selected_client_id: Some(client_id),
                        ..
                    } => Some(Effect::Tell {
                        client_id: client_id.clone(),
                        message: ServerToExtension::TaskState {
                            task_id,
                            status: *status,
                            bridge,
                        },
                    }),
                    FrontendEvent::BridgeMode { .. } => selected.map(|client_id| Effect::Tell {
                        client_id,
                        message: ServerToExtension::TaskState {
                            task_id,
                            status: conversation.task().status,
                            bridge,
                        },
                    }),
                    FrontendEvent::ConfirmationRequested(request) => {
                        selected.map(|client_id| Effect::Tell {
                            client_id,
                            message: ServerToExtension::ConfirmationRequested {
                                task_id,
                                request: Box::new(request.clone()),
                            },
                        })
                    }
                    FrontendEvent::ConfirmationAnswered {
                        step, approved, by, ..
                    } => selected.map(|client_id| Effect::Tell {
                        client_id,
                        message: ServerToExtension::ConfirmationSettled {
                            task_id,
                            step: *step,
                            approved: *approved,
                            by: by.clone(),
                        },
                    }),
                    _ => None,
                };
                out.push(Effect::Emit(event));
                out.extend(tell);
            }
            conversation::Effect::SaveTask => {
                out.push(Effect::SaveTask(conversation.task().clone()))
            }
            conversation::Effect::SaveMessage(message) => out.push(Effect::SaveMessage(message)),
            // Asked once the rest of the input's work is done (see `settle`).
            conversation::Effect::AskModel { purpose, messages } => {
                self.side_calls.push((purpose, messages))
            }
            conversation::Effect::SaveSummary(summary) => out.push(Effect::SaveSummary(summary)),
            conversation::Effect::SaveRun => out.push(Effect::SaveRun(conversation.run().cloned())),
            conversation::Effect::CallLlm(call) => {
                let delay_ms = call.delay_ms;
                self.toward_model(Effect::CallLlm(call), delay_ms, out, now, caller);
            }
            conversation::Effect::LookupSkills { turn_id, query } => {
                let lookup = Effect::LookupSkills { turn_id, query };
                self.toward_model(lookup, 0, out, now, caller);
            }
            conversation::Effect::BindClient => out.push(Effect::Bind {
                client_id: None,
                purpose: BindPurpose::Run,
            }),
            conversation::Effect::WakeAt(at) => out.push(Effect::WakeAt(at)),
            conversation::Effect::SubmitAction { action_id, command } => {
                let task = conversation.task();
                let submitted = queue(&mut self.actions, task, action_id, None, command, now);
                return submitted.into_iter().map(Work::Action).collect();
            }
        }
        Vec::new()
    }

    /// A model call, or the skill lookup it waits for, after `delay_ms`: held for the alarm when
    /// an object waits for `caller`'s answer, else made now.
    fn toward_model(
        &mut self,
        effect: Effect,
        delay_ms: u64,
        out: &mut Vec<Effect>,
        now: u64,
        caller: Caller,
    ) {
        match caller {
            Caller::Relay => {
                self.held.push(effect);
                out.push(Effect::WakeAt(now));
            }
            Caller::Direct => {
                if self.config.llm.is_ok() {
                    // Should the runtime restart before the call ends, this alarm finds the
                    // turn cut off and runs it again.
                    out.push(Effect::WakeAt(now + delay_ms + TURN_WATCH_MS));
                }
                out.push(effect);
            }
        }
    }

    /// One of the scheduler's effects: I/O for the coordinator, and an action's end heard by
    /// the conversation too.
    fn action_effect(&mut self, effect: Effect, out: &mut Vec<Effect>, now: u64) -> Vec<Work> {
        let Effect::ActionFinished(record) = effect else {
            out.push(effect);
            return Vec::new();
        };
        // The developer API's waiters get the record as it is kept.
        out.push(Effect::ActionFinished(record.clone().kept()));
        match self.conversation.as_mut() {
            Some(conversation) => conversation
                .action_finished(&record, now)
                .into_iter()
                .map(Work::Conversation)
                .collect(),
            None => Vec::new(),
        }
    }
}
