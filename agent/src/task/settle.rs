//! How one input's work settles: the conversation's and the scheduler's effects answer each
//! other until only I/O for the coordinator is left.

use super::*;

impl Task {
    /// Lets the conversation and the scheduler answer each other until only I/O is left, which
    /// is appended to `out` in order (the model call naming the task, when one is due, last).
    /// What the conversation changed is saved before the effects of the change (see [`Saved`]).
    /// When the scheduler was involved the alarm is set for its next deadline, and an idle
    /// queue tells the conversation.
    pub(super) fn settle(
        &mut self,
        work: Vec<Effect>,
        out: &mut Vec<Effect>,
        mut touches_actions: bool,
        now: u64,
        caller: Caller,
    ) {
        self.save_changes(out);
        let mut queue: VecDeque<Effect> = work.into();
        loop {
            while let Some(effect) = queue.pop_front() {
                let routed = self.route(effect, out, now, caller);
                touches_actions |= routed.touches_actions;
                queue.extend(routed.work);
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
                    queue.extend(conversation.actions_idle(now));
                    self.save_changes(out);
                }
            }
            if queue.is_empty() {
                break;
            }
        }
        self.save_changes(out);
        for (purpose, messages) in std::mem::take(&mut self.side_calls) {
            self.toward_model(Effect::AskModel { purpose, messages }, 0, out, now, caller);
        }
    }

    /// Saves the task's record and its run where they differ from what storage holds.
    pub(super) fn save_changes(&mut self, out: &mut Vec<Effect>) {
        let Some(conversation) = self.conversation.as_ref() else {
            return;
        };
        if self.saved.task.as_ref() != Some(conversation.task()) {
            let task = conversation.task().clone();
            self.saved.task = Some(task.clone());
            out.push(Effect::SaveTask(task));
        }
        if self.saved.run.as_ref() != conversation.run() {
            self.saved.run = conversation.run().cloned();
            out.push(Effect::SaveRun(self.saved.run.clone()));
        }
    }

    /// One effect of the conversation or the scheduler: I/O for the coordinator, or work for
    /// the other of the two (an action to queue, an action's end to hear of).
    fn route(&mut self, effect: Effect, out: &mut Vec<Effect>, now: u64, caller: Caller) -> Routed {
        match effect {
            Effect::Emit(event) => {
                let tell = self.tell_extension(&event);
                out.push(Effect::Emit(event));
                out.extend(tell);
            }
            // Asked once the rest of the input's work is done (see `settle`).
            Effect::AskModel { purpose, messages } => self.side_calls.push((purpose, messages)),
            Effect::CallLlm(call) => {
                let delay_ms = call.delay_ms;
                self.toward_model(Effect::CallLlm(call), delay_ms, out, now, caller);
            }
            lookup @ Effect::LookupSkills { .. } => self.toward_model(lookup, 0, out, now, caller),
            Effect::Submit { action_id, command } => {
                let Some(conversation) = self.conversation.as_ref() else {
                    return Routed::default();
                };
                let task = conversation.task();
                return Routed {
                    work: queue(&mut self.actions, task, action_id, None, command, now),
                    touches_actions: true,
                };
            }
            Effect::ActionFinished(record) => {
                // The developer API's waiters get the record as it is kept.
                out.push(Effect::ActionFinished(record.clone().kept()));
                let Some(conversation) = self.conversation.as_mut() else {
                    return Routed::default();
                };
                let heard = conversation.action_finished(&record, now);
                self.save_changes(out);
                // Whatever ended the action (the queue, the extension's result, a dispatch that
                // failed) touched the queue itself and said so: hearing of the end does not.
                return Routed {
                    work: heard,
                    touches_actions: false,
                };
            }
            other => out.push(other),
        }
        Routed::default()
    }

    /// What the extension hears of an event of the task: its overlay follows the task's
    /// status; its side panel shows the confirmations, and drops each once answered (here or
    /// there).
    fn tell_extension(&self, event: &FrontendEvent) -> Option<Effect> {
        let task = self.conversation.as_ref()?.task();
        let task_id = task.task_id.clone();
        let selected = task.selected_client_id.clone();
        let bridge = task.allow_bridge;
        match event {
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
                    status: task.status,
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
        }
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
}

/// What routing one effect leaves to do: more effects to route, and whether they came from the
/// action queue (its deadlines and idleness are looked at again).
#[derive(Default)]
struct Routed {
    work: Vec<Effect>,
    touches_actions: bool,
}
