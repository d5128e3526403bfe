//! The person's controls (stop, take over, pause, resume), and what the conversation does as
//! the browser's actions start and go idle.

use super::*;

impl Conversation {
    /// The person stops the task: the streaming turn ends where it is, its text so far is kept.
    pub fn stop(&mut self, now: u64) -> Vec<Effect> {
        let mut effects = if self.turn.is_some() {
            self.finish_turn(now)
        } else {
            Vec::new()
        };
        effects.extend(self.stop_subtask());
        if let Some(run) = self.run.as_mut().filter(|r| r.is_active()) {
            run.phase = Phase::Finished;
        }
        effects.extend(self.transition(TaskStatus::Canceled, now));
        effects
    }

    /// The person took over the browser: automation pauses (from a running task only).
    pub fn takeover(&mut self, now: u64) -> Vec<Effect> {
        self.transition(TaskStatus::Takeover, now)
    }

    /// The person pauses the task (seed 004 §6): what is in flight (a model reply, an action)
    /// finishes, but no model call and no action starts until they resume.
    pub fn pause(&mut self, now: u64) -> Vec<Effect> {
        self.transition(TaskStatus::Paused, now)
    }

    /// The person handed the browser back, resumed a paused task or allowed the site a step
    /// waited for: a model call held by the pause is made now, an action held for the site is
    /// sent again.
    pub fn resume(&mut self, now: u64) -> Vec<Effect> {
        use TaskStatus::*;
        if !matches!(self.task.status, Takeover | Paused | WaitingPermission) {
            return Vec::new();
        }
        let mut effects = self.transition(Running, now);
        // The extension resumes a task waiting for a site once the person allows one (a paused
        // task may have come to wait meanwhile).
        effects.extend(self.site_allowed());
        if let Some((turn_id, delay_ms)) = self.paused_call.take() {
            if self.is_current_turn(&turn_id) {
                effects.extend(self.call_model(turn_id, delay_ms, now));
            }
        }
        effects
    }

    /// Browser actions started running for the task (the developer API drives it directly).
    /// A task not under way yet, or one that ended, runs again (and is `ongoing` once they are
    /// idle). One that waits for what's next (`ongoing`) stays so: the extension shows each
    /// action while it runs (seed 000 §2.2: an action under way in a `running` or `ongoing`
    /// task puts the overlay `ongoing`), and a status flip each way for every action would tell
    /// every socket, the extension, the session list and the webhooks twice an action, all of it
    /// on the action's way out and its answer's way back.
    pub fn actions_started(&mut self, now: u64) -> Vec<Effect> {
        if matches!(
            self.task.status,
            TaskStatus::Running | TaskStatus::Ongoing | TaskStatus::Takeover | TaskStatus::Paused
        ) {
            return Vec::new();
        }
        self.transition(TaskStatus::Running, now)
    }

    /// The last queued action ended and no reply is streaming: the task waits for what's next.
    pub fn actions_idle(&mut self, now: u64) -> Vec<Effect> {
        if self.task.status != TaskStatus::Running || self.turn.is_some() || self.run_is_active() {
            return Vec::new();
        }
        self.transition(TaskStatus::Ongoing, now)
    }

    /// The task ends in `error`: its answer says so, and its status is `error`.
    pub(crate) fn end_in_error(&mut self, error: ErrorObject, now: u64) -> Vec<Effect> {
        let mut effects = vec![Effect::Emit(FrontendEvent::StructuredOutput {
            status: OutputStatus::Error,
            output: None,
            error: Some(error),
            warnings: Vec::new(),
        })];
        effects.extend(self.transition(TaskStatus::Error, now));
        effects
    }
}
