//! One task, sans I/O: its conversation, its browser run and its action queue behind one
//! [`Task::handle`] that takes every input the coordinator receives and returns the I/O to do.
//!
//! The coordinator (a Durable Object) only carries effects out: it stores what an effect
//! carries, sends frames, streams model calls, asks the registry for an extension, and sets
//! the alarm. What it learns doing so (an LLM event, a failed delivery, the registry's answer)
//! comes back as another [`Input`]. Every rule — what a control pauses, when a model call waits
//! for the alarm, what a restart picks up, which snapshot is stale — is here, tested natively.

mod artifacts;
pub mod client_steps;
mod config;
mod effect;
mod input;
mod lifecycle;
mod messages;
mod settle;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use mimo_protocol::{
    ActionCommand, BrowserAction, BrowserSnapshot, ErrorCode, ErrorObject, FrontendEvent,
    ServerToExtension, TaskControl, TaskStatus, TokenUsage,
};

use crate::actions::ActionQueue;
use crate::conversation::{self, Asker, Conversation};
use crate::credentials::Confirmer;
use crate::llm;
use crate::records::ActionRecord;
use crate::records::{AgentRun, ChatSummary, StoredMessage, TaskRecord};
use crate::skills::SkillQuery;

pub use artifacts::{ArtifactGrant, ArtifactRecord, ArtifactStored, Artifacts, ATTACHMENT};
pub use client_steps::ClientConsent;
pub use config::{ConfigWarning, Settings, TaskConfig};
pub use effect::{Compaction, Effect, LlmCall, PageImage, SideCall};
pub use input::{BindPurpose, Caller, ForkSeed, Goal, Input, Start};
pub use messages::{ActionEvent, Binding, SnapshotPush};

/// How often the alarm looks at a model call under way: in the object that made it, the call is
/// live and the alarm only comes back; in one the runtime restarted meanwhile (an eviction, a
/// deploy), the call died with the old one and the turn is run again at once — not after the
/// call's whole time budget (issue 26: no silent stall).
pub const TURN_WATCH_MS: u64 = 5_000;

/// The task as its coordinator holds it.
#[derive(Debug)]
pub struct Task {
    config: TaskConfig,
    /// `None` until the task is created, and again once it is deleted.
    conversation: Option<Conversation>,
    actions: ActionQueue,
    artifacts: Artifacts,
    /// Model calls (and the skill lookups before them) of [`Caller::Relay`] inputs, held for
    /// the alarm.
    held: Vec<Effect>,
    /// An MCP client's step waiting for the person's answer in the web app or the side panel.
    waiting_step: Option<client_steps::Held>,
    /// The model calls beside the conversation (naming the task, summarizing it) found while
    /// effects settle: they go after them, so they hold up nothing the task does.
    side_calls: Vec<(SideCall, Vec<llm::ChatMessage>)>,
    saved: Saved,
}

/// What storage holds of a task.
#[derive(Debug, Clone, Default)]
pub struct Stored {
    pub task: Option<TaskRecord>,
    pub messages: Vec<StoredMessage>,
    /// The latest compaction of the conversation.
    pub summary: Option<ChatSummary>,
    pub run: Option<AgentRun>,
    pub actions: Vec<ActionRecord>,
    pub artifacts: Vec<ArtifactRecord>,
    /// The latest snapshot of the bound browser's windows and tabs.
    pub snapshot: Option<BrowserSnapshot>,
    /// The task's own secrets: names and domains (their values stay sealed in storage).
    pub secrets: Vec<mimo_protocol::SecretInfo>,
}

/// What storage holds of the task's record and its browser run, as last saved. The task finds
/// what the conversation changed by comparing with it, and saves that before the effects of the
/// change are carried out: no change is left unsaved, and none is saved twice.
#[derive(Debug, Default)]
struct Saved {
    task: Option<TaskRecord>,
    run: Option<AgentRun>,
}

impl Task {
    /// A task that does not exist yet.
    pub fn new(config: TaskConfig) -> Self {
        let actions = ActionQueue::new(config.timeouts);
        Task {
            config,
            conversation: None,
            actions,
            artifacts: Artifacts::default(),
            held: Vec::new(),
            waiting_step: None,
            side_calls: Vec::new(),
            saved: Saved::default(),
        }
    }

    /// The task as storage has it, after an eviction or a restart. What a restart cut off is
    /// picked up by the next input that can afford it (a web app's message, the alarm).
    pub fn restore(config: TaskConfig, stored: Stored, now: u64) -> Self {
        let mut actions = ActionQueue::restore(stored.actions, config.timeouts);
        if let Some(bounds) = stored.task.as_ref().and_then(|t| t.script_bounds) {
            actions.set_script_bounds(bounds);
        }
        let artifacts = Artifacts::restore(stored.artifacts);
        let attachments = artifacts.attachments();
        let snapshot = stored.snapshot;
        let conversation = stored.task.map(|task| {
            let mut conversation = Conversation::restore(task, stored.messages, stored.run)
                .with_config(config.run.clone())
                .with_attachments(attachments)
                .with_summary(stored.summary);
            conversation.secrets = crate::secrets::infos(&stored.secrets, &config.secrets);
            conversation.browser = snapshot;
            conversation
        });
        if conversation
            .as_ref()
            .is_some_and(|c| matches!(c.task().status, TaskStatus::Takeover | TaskStatus::Paused))
        {
            // A takeover or a pause outlives restarts. Pausing returns no effects.
            actions.set_paused(true, now);
        }
        let saved = Saved {
            task: conversation.as_ref().map(|c| c.task().clone()),
            run: conversation.as_ref().and_then(|c| c.run().cloned()),
        };
        Task {
            config,
            conversation,
            actions,
            artifacts,
            held: Vec::new(),
            waiting_step: None,
            side_calls: Vec::new(),
            saved,
        }
    }

    /// An artifact of the task, by its id.
    pub fn artifact(&self, artifact_id: &str) -> Option<&ArtifactRecord> {
        self.artifacts.get(artifact_id)
    }

    pub fn config(&self) -> &TaskConfig {
        &self.config
    }

    /// The task row, if the task exists.
    pub fn record(&self) -> Option<&TaskRecord> {
        self.conversation.as_ref().map(|c| c.task())
    }

    /// What a fork of this task at `message_id` starts from.
    pub fn fork_seed(&self, message_id: &str) -> Result<ForkSeed, ErrorObject> {
        self.conversation
            .as_ref()
            .ok_or_else(|| ErrorObject::new(ErrorCode::NotFound, "unknown task"))?
            .fork_seed(message_id)
    }

    pub fn actions(&self) -> &ActionQueue {
        &self.actions
    }

    /// Whether model call `turn_id` is still wanted: a call whose turn was stopped or replaced
    /// is not made, and its stream is cut.
    pub fn is_current_turn(&self, turn_id: &str) -> bool {
        self.conversation
            .as_ref()
            .is_some_and(|c| c.is_current_turn(turn_id))
    }

    /// Carries `input` through the conversation and the scheduler. `Err` is a refusal for the
    /// caller (an empty message, an unknown step, no extension to bind): nothing changed.
    pub fn handle(
        &mut self,
        input: Input,
        now: u64,
        caller: Caller,
    ) -> Result<Vec<Effect>, ErrorObject> {
        if let Input::Create { task_id } = input {
            return self.create(task_id, None, now);
        }
        if let Input::CreateFork { task_id, seed } = input {
            return self.create(task_id, Some(seed), now);
        }
        if let Input::Snapshot(push) = input {
            return Ok(self.snapshot(push));
        }
        if let Input::Delete { unreadable } = input {
            return self.delete(unreadable);
        }
        if let Input::Erased = input {
            *self = Task::new(self.config.clone());
            return Ok(Vec::new());
        }
        if let Input::Alarm = input {
            return Ok(self.alarm(now));
        }
        if let Input::Start(start) = input {
            return self.start(start, now, caller);
        }
        if let Input::SelectClient { client_id } = input {
            return self.select_client(client_id, BindPurpose::Requested, now, caller);
        }
        let Some(conversation) = self.conversation.as_mut() else {
            return Err(ErrorObject::new(ErrorCode::NotFound, "unknown task"));
        };
        let mut work: Vec<Effect> = Vec::new();
        let mut out: Vec<Effect> = Vec::new();
        // Inputs that may follow a restart pick up what it cut off first.
        let recovers = matches!(
            input,
            Input::UserMessage { .. }
                | Input::Regenerate
                | Input::Confirm { .. }
                | Input::Control(_)
        ) && caller == Caller::Direct;
        if recovers {
            work.extend(recover(conversation, &self.actions, now));
        }
        let mut touches_actions = false;
        // What of a start waits for the extension it was bound to.
        let mut started = None;
        match input {
            Input::Create { .. }
            | Input::CreateFork { .. }
            | Input::Snapshot(_)
            | Input::Alarm
            | Input::Delete { .. }
            | Input::Erased
            | Input::Start(_)
            | Input::SelectClient { .. } => {
                unreachable!("above")
            }
            Input::Forked {
                task_id,
                message_id,
            } => {
                work.extend(conversation.fork_made(task_id, message_id));
            }
            Input::WebConnected => {
                if conversation.needs_recovery() {
                    // A turn was cut off by a restart. The alarm runs it again: it may take as
                    // long as the model needs, and the socket's upgrade must be answered now.
                    out.push(Effect::WakeAt(now));
                }
                if conversation.task().selected_client_id.is_none() {
                    out.push(Effect::Bind {
                        client_id: None,
                        purpose: BindPurpose::Requested,
                    });
                }
            }
            Input::UserMessage {
                content,
                client_message_id,
                answer_schema,
            } => {
                let effects =
                    conversation.user_message(content, client_message_id, answer_schema, now)?;
                work.extend(effects);
            }
            Input::Confirm {
                step,
                approve,
                reason,
                by,
            } if step == client_steps::CLIENT_STEP && self.waiting_step.is_some() => {
                if approve && by == Confirmer::Api {
                    return Err(ErrorObject::new(
                        ErrorCode::PermissionDenied,
                        "the step an MCP client asked for waits for the person: only they can \
                         approve it, in the web app or the extension's side panel; a script may \
                         decline it",
                    ));
                }
                let held = self.waiting_step.take().expect("checked above");
                let reason = reason
                    .map(|r| r.trim().chars().take(500).collect::<String>())
                    .filter(|r| !r.is_empty() && !approve);
                work.push(Effect::Emit(FrontendEvent::ConfirmationAnswered {
                    step,
                    approved: approve,
                    by: by.name().into(),
                    reason: reason.clone(),
                }));
                if approve {
                    touches_actions |= self.send_submitted(held, &mut out, &mut work, now);
                } else {
                    out.push(Effect::StepRefused {
                        action_id: held.action_id,
                        error: client_steps::not_approved(true, reason.as_deref()),
                    });
                }
            }
            Input::Confirm {
                step,
                approve,
                reason,
                by,
            } => {
                let answer = conversation::ConfirmAnswer {
                    approve,
                    reason,
                    by,
                };
                work.extend(conversation.confirm(step, answer, now)?);
            }
            Input::SetStepMode(on) => {
                work.extend(conversation.set_step_mode(on, now));
            }
            Input::SetScriptBounds { take_ms, report_ms } => {
                let bounds =
                    crate::script::bounds(take_ms, report_ms, self.config.timeouts.script)?;
                self.actions.set_script_bounds(bounds);
                work.extend(conversation.set_script_bounds(bounds, now));
            }
            Input::Regenerate => {
                work.extend(conversation.regenerate(now)?);
            }
            Input::SelectAnswer { message_id } => {
                work.extend(conversation.select_answer(&message_id)?);
            }
            Input::SetBridge { allow, confirm } => {
                work.extend(conversation.set_bridge(allow, confirm, now));
            }
            Input::SetDomains { allowed, blocked } => {
                work.extend(conversation.set_domains(allowed, blocked, now)?);
            }
            Input::StartOnTab(tab_id) => {
                work.extend(conversation.start_on_tab(tab_id, now));
            }
            Input::ArtifactGranted(grant) => {
                out.extend(self.artifacts.grant(grant, now).map(Effect::SaveArtifact));
            }
            Input::ArtifactStored(stored) => {
                let Some(record) = self.artifacts.stored(stored, now) else {
                    return Err(ErrorObject::new(
                        ErrorCode::NotFound,
                        "no such artifact in this task",
                    ));
                };
                // Swept once its retention ends (an earlier alarm sweeps it as well).
                out.push(Effect::WakeAt(now + self.config.artifact_retention_ms));
                if let Some(attachment) = record.attachment() {
                    work.extend(conversation.file_attached(attachment));
                }
                out.push(Effect::SaveArtifact(record));
            }
            // With the deployment's: the model is told the names from its next call on.
            Input::SecretsChanged(task) => {
                conversation.secrets = crate::secrets::infos(&task, &self.config.secrets);
            }
            Input::Control(control) => {
                touches_actions = true;
                let (said, scheduled) = match control {
                    // The queue pauses with the task: nothing new reaches the browser.
                    TaskControl::Takeover => (
                        conversation.takeover(now),
                        self.actions.set_paused(true, now),
                    ),
                    TaskControl::Pause => {
                        (conversation.pause(now), self.actions.set_paused(true, now))
                    }
                    TaskControl::Resume => (
                        conversation.resume(now),
                        self.actions.set_paused(false, now),
                    ),
                    TaskControl::Stop => (conversation.stop(now), self.actions.cancel_all(now)),
                };
                work.extend(said);
                touches_actions |= !scheduled.is_empty();
                work.extend(scheduled);
            }
            Input::SkillsFound { turn_id, result } => {
                work.extend(conversation.skills_found(&turn_id, result));
            }
            Input::Llm { turn_id, event } => {
                work.extend(conversation.llm_event(&turn_id, event, now));
            }
            Input::ModelAnswered {
                purpose,
                text,
                usage,
            } => {
                work.extend(conversation.count_usage(usage));
                let effects = match (purpose, text) {
                    (SideCall::Title, Some(title)) => conversation.title_suggested(&title, now),
                    (SideCall::Title, None) => Vec::new(),
                    (SideCall::Summary(compaction), text) => {
                        conversation.chat_summarized(compaction, text.as_deref(), now)
                    }
                };
                work.extend(effects);
            }
            Input::Extension(event) => {
                touches_actions = true;
                let effects = match event {
                    ActionEvent::Ack { action_id, attempt } => {
                        self.actions.acked(&action_id, attempt, now)
                    }
                    ActionEvent::Outcome { outcome } => self.actions.outcome(outcome, now),
                    ActionEvent::Status {
                        action_id,
                        attempt,
                        state,
                        outcome,
                    } => self
                        .actions
                        .attempt_status(&action_id, attempt, state, outcome, now),
                };
                work.extend(effects);
            }
            Input::DispatchFailed { action_id, error } => {
                touches_actions = true;
                work.extend(self.actions.dispatch_failed(&action_id, error, now));
            }
            Input::Bound { purpose, result } => {
                let binding = match (result, &purpose) {
                    (Ok(binding), _) => Some(binding),
                    (Err(error), BindPurpose::Run) => {
                        work.extend(conversation.client_bound(Err(error), now));
                        None
                    }
                    (Err(error), _) => return Err(error),
                };
                if let Some(binding) = binding {
                    let client_id = binding.client_id.clone();
                    work.extend(conversation.select_client(client_id.clone(), now));
                    if let Some(snapshot) = binding.snapshot {
                        conversation.browser = Some(snapshot.clone());
                        out.extend(show_snapshot(SnapshotPush {
                            client_id,
                            snapshot,
                        }));
                    }
                    match purpose {
                        BindPurpose::Run => work.extend(conversation.client_bound(Ok(()), now)),
                        BindPurpose::Requested => {}
                        BindPurpose::Start(rest) => started = Some(rest),
                        BindPurpose::Submit {
                            action_id,
                            tab_id,
                            command,
                        } => {
                            touches_actions = true;
                            let (submitted, started) = self.submit(action_id, tab_id, command, now);
                            work.extend(submitted);
                            work.extend(started);
                        }
                    }
                }
            }
            Input::Submit {
                action_id,
                tab_id,
                command,
                rated,
                consent,
            } => {
                // The developer API is held to the agent's rules; what needs the person is
                // refused, since the API cannot answer for them.
                let verdict = conversation.admit(command, Asker::Api);
                let mut ask = None;
                if let (true, conversation::Verdict::Send(command)) = (rated, &verdict) {
                    let run = &self.config.run;
                    let asked =
                        client_steps::needs_person(command, self.actions.records(), &run.risk);
                    match (asked.filter(|_| run.confirm_risky), consent) {
                        (Some(asked), ClientConsent::Unasked) => {
                            return Err(client_steps::refusal(&asked.reason))
                        }
                        (Some(_), ClientConsent::ConfirmedInClient) => {
                            out.push(Effect::Emit(FrontendEvent::ConfirmationAnswered {
                                step: client_steps::CLIENT_STEP,
                                approved: true,
                                by: client_steps::CONFIRMED_BY.into(),
                                reason: None,
                            }))
                        }
                        (Some(asked), ClientConsent::AskInApp) => ask = Some(asked),
                        (None, _) => {}
                    }
                }
                let mut command = verdict.or_refuse()?;
                client_steps::expect_last_read(&mut command, self.actions.records());
                let held = client_steps::Held {
                    action_id,
                    tab_id,
                    command,
                    until: now + client_steps::ANSWER_WITHIN_MS,
                };
                match ask {
                    Some(_) if self.waiting_step.is_some() => {
                        return Err(ErrorObject::new(
                            ErrorCode::ConfirmationRequired,
                            "another step of this task waits for the person's answer in Mimo: \
                             ask again once they have answered it",
                        ))
                    }
                    Some(asked) => {
                        out.push(Effect::WakeAt(held.until));
                        self.waiting_step = Some(held);
                        work.push(Effect::Emit(FrontendEvent::ConfirmationRequested(asked)));
                    }
                    None => touches_actions |= self.send_submitted(held, &mut out, &mut work, now),
                }
            }
        }
        self.settle(work, &mut out, touches_actions, now, caller);
        if let Some(rest) = started {
            out.extend(self.start_bound(*rest, now)?);
        }
        Ok(out)
    }

    /// A snapshot pushed for an extension this task no longer uses is stale, and ignored.
    fn snapshot(&mut self, push: SnapshotPush) -> Vec<Effect> {
        let selected = self.record().and_then(|t| t.selected_client_id.as_deref());
        if selected != Some(push.client_id.as_str()) {
            return Vec::new();
        }
        if let Some(conversation) = self.conversation.as_mut() {
            conversation.browser = Some(push.snapshot.clone());
        }
        show_snapshot(push)
    }

    /// Held model calls, what a restart cut off, and the scheduler's timeouts and retries.
    fn alarm(&mut self, now: u64) -> Vec<Effect> {
        let mut out: Vec<Effect> = std::mem::take(&mut self.held);
        let mut work: Vec<Effect> = Vec::new();
        if let Some(held) = self.waiting_step.take_if(|held| now >= held.until) {
            work.push(Effect::Emit(FrontendEvent::ConfirmationAnswered {
                step: client_steps::CLIENT_STEP,
                approved: false,
                by: client_steps::UNANSWERED_BY.into(),
                reason: None,
            }));
            out.push(Effect::StepRefused {
                action_id: held.action_id,
                error: client_steps::not_approved(false, None),
            });
        }
        if let Some(conversation) = self.conversation.as_mut() {
            work.extend(recover(conversation, &self.actions, now));
            // A call this object is making: looked at again soon (see [`TURN_WATCH_MS`]).
            if conversation.in_turn() {
                out.push(Effect::WakeAt(now + TURN_WATCH_MS));
            }
        }
        work.extend(self.actions.tick(now));
        self.settle(work, &mut out, true, now, Caller::Direct);
        let (expired, next) = self.artifacts.sweep(self.config.artifact_retention_ms, now);
        if !expired.is_empty() {
            out.push(Effect::DeleteArtifacts(expired));
        }
        out.extend(next.map(Effect::WakeAt));
        out
    }

    /// A developer API's or MCP client's step that may run now: sent, or held until the task
    /// has an extension. Whether it touched the action queue.
    fn send_submitted(
        &mut self,
        step: client_steps::Held,
        out: &mut Vec<Effect>,
        work: &mut Vec<Effect>,
        now: u64,
    ) -> bool {
        let client_steps::Held {
            action_id,
            tab_id,
            command,
            ..
        } = step;
        let bound = self
            .conversation
            .as_ref()
            .is_some_and(|c| c.task().selected_client_id.is_some());
        if !bound {
            out.push(Effect::Bind {
                client_id: None,
                purpose: BindPurpose::Submit {
                    action_id,
                    tab_id,
                    command,
                },
            });
            return false;
        }
        let (submitted, started) = self.submit(action_id, tab_id, command, now);
        work.extend(submitted);
        work.extend(started);
        true
    }

    fn submit(
        &mut self,
        action_id: String,
        tab_id: Option<i32>,
        command: ActionCommand,
        now: u64,
    ) -> (Vec<Effect>, Vec<Effect>) {
        let Some(conversation) = self.conversation.as_mut() else {
            return (Vec::new(), Vec::new());
        };
        let submitted = queue(
            &mut self.actions,
            conversation.task(),
            action_id,
            tab_id,
            command,
            now,
        );
        (submitted, conversation.actions_started(now))
    }
}

fn show_snapshot(push: SnapshotPush) -> Vec<Effect> {
    let event = FrontendEvent::SnapshotSync {
        client_id: push.client_id.clone(),
        snapshot: push.snapshot.clone(),
    };
    vec![Effect::SaveSnapshot(push), Effect::Show(event)]
}

/// Queues an action for the task's extension. Without a bound one the dispatch fails as
/// `PLUGIN_OFFLINE`, through the scheduler's usual path.
fn queue(
    actions: &mut ActionQueue,
    task: &TaskRecord,
    action_id: String,
    tab_id: Option<i32>,
    command: ActionCommand,
    now: u64,
) -> Vec<Effect> {
    actions.submit(
        action_id,
        task.task_id.clone(),
        task.selected_client_id.clone().unwrap_or_default(),
        tab_id,
        command,
        now,
    )
}

/// What picks up a restart's leftovers: a model turn cut off is run again, a browser run
/// continues from the stored action queue (nothing when there is nothing to pick up).
fn recover(conversation: &mut Conversation, actions: &ActionQueue, now: u64) -> Vec<Effect> {
    let mut effects = conversation.recover(now);
    effects.extend(conversation.resume_run(|id| actions.get(id).cloned(), now));
    effects
}
