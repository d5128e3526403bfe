//! The action scheduler (seed 000 `ActionScheduler`): a task's browser actions, one in flight,
//! each observed to its end — a result, or a timeout that becomes an error code.
//!
//! Lifecycle: `pending → sent → acked → succeeded | failed | timed_out | canceled`. Every
//! record is saved (effect [`Effect::SaveAction`]) before it is dispatched, so after an eviction
//! or restart the queue is rebuilt from storage and nothing runs twice: a dispatched attempt is
//! never dispatched again, only retried as a new attempt after a retryable failure (once, after
//! [`Timeouts::retry_delay_ms`]). Duplicate acks and results are ignored.
//!
//! An attempt that timed out may still be running, or may have run: a page blocked by a
//! `confirm()` holds a click until the dialog closes. Actions that read the page, or end in the
//! same state when run twice ([`Rerun`]), are retried as usual. Any other (a click, typing)
//! goes to `checking`: the extension is asked what became of it (`action_query`), and it is
//! run again only if the extension never received it. Still running, or no answer: it ends
//! `timed_out`, not retryable, and is never run again.

use mimo_protocol::bridge::{BridgeTool, DEFAULT_BASH_TIMEOUT_MS};
use mimo_protocol::script::is_script_client;
use mimo_protocol::{
    ActionCommand, ActionOutcome, ActionStatus, AttemptState, BrowserAction, ErrorCode,
    ErrorObject, Rerun, ServerToExtension,
};

use crate::task::Effect;

pub use crate::records::{ActionRecord, ActionState};

/// How long the extension gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// From dispatch to `action_ack`.
    pub ack_ms: u64,
    /// From ack to the result, for actions that do not say how long they wait.
    pub exec_ms: u64,
    /// Actions that load pages or upload artifacts.
    pub slow_exec_ms: u64,
    /// Extra time beyond an action's own `timeoutMs` (waits).
    pub grace_ms: u64,
    pub retry_delay_ms: u64,
    /// How long an action that could not be delivered (`PLUGIN_OFFLINE`: it never reached the
    /// extension, so sending it again is safe) waits for its extension to come back — a
    /// restarted service worker or runtime reconnects within seconds — retried with backoff.
    pub offline_grace_ms: u64,
    /// What a script that carries out its task's actions (seed 002 §8) gets instead: it takes
    /// an action when it next asks (it may be waiting on a person, or polling `status`), and
    /// carries it out its own way, in minutes rather than seconds.
    pub script: ScriptBounds,
}

pub use crate::records::ScriptBounds;

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            ack_ms: 5_000,
            exec_ms: 15_000,
            slow_exec_ms: 45_000,
            grace_ms: 5_000,
            retry_delay_ms: 1_000,
            offline_grace_ms: 20_000,
            script: ScriptBounds::default(),
        }
    }
}

impl Timeouts {
    /// The bounds for actions carried out by `client_id`: a script's own, else these.
    pub fn for_client(&self, client_id: &str) -> Timeouts {
        if !is_script_client(client_id) {
            return *self;
        }
        let ScriptBounds { take_ms, report_ms } = self.script;
        Timeouts {
            ack_ms: take_ms,
            exec_ms: report_ms,
            slow_exec_ms: report_ms,
            offline_grace_ms: take_ms,
            ..*self
        }
    }

    /// How long a retryable failure waits before its retry: the page captures of page
    /// preparation (seed 000 §4.5: screenshot, readability) half the usual, 500 ms by default.
    pub fn retry_delay_for(&self, command: &ActionCommand) -> u64 {
        if command.kind().traits().captures_page {
            self.retry_delay_ms / 2
        } else {
            self.retry_delay_ms
        }
    }

    /// The execution budget of one action, after its ack: a wait's own timeout and a grace,
    /// else the slow budget for the actions that load pages or upload artifacts.
    pub fn exec_ms(&self, command: &ActionCommand) -> u64 {
        use ActionCommand::*;
        match command {
            BrowserWaitForLoaded { timeout_ms } | BrowserWaitFor { timeout_ms, .. } => {
                u64::from(timeout_ms.unwrap_or(10_000)) + self.grace_ms
            }
            // The wait for the page to load, then the captures.
            BrowserObserve { timeout_ms, .. } => {
                u64::from(timeout_ms.unwrap_or(10_000)) + self.slow_exec_ms
            }
            // A command's own timeout, which the bridge enforces.
            BridgeInvoke {
                tool: BridgeTool::Bash,
                args,
                ..
            } => {
                let timeout = args.get("timeoutMs").and_then(serde_json::Value::as_u64);
                timeout.unwrap_or(DEFAULT_BASH_TIMEOUT_MS) + self.grace_ms
            }
            _ if command.kind().traits().slow => self.slow_exec_ms,
            _ => self.exec_ms,
        }
    }
}

#[derive(Debug, Default)]
pub struct ActionQueue {
    records: Vec<ActionRecord>,
    timeouts: Timeouts,
    /// The person has taken over: nothing new is dispatched (what is in flight may finish).
    paused: bool,
}

impl ActionQueue {
    pub fn new(timeouts: Timeouts) -> Self {
        ActionQueue {
            records: Vec::new(),
            timeouts,
            paused: false,
        }
    }

    /// Rebuilds the queue from stored records (in creation order).
    pub fn restore(mut records: Vec<ActionRecord>, timeouts: Timeouts) -> Self {
        records.sort_by_key(|r| r.created_at);
        ActionQueue {
            records,
            timeouts,
            paused: false,
        }
    }

    /// The task's script asked for its own bounds: actions it takes from now on get them.
    pub fn set_script_bounds(&mut self, bounds: ScriptBounds) {
        self.timeouts.script = bounds;
    }

    /// Pauses dispatching (takeover) or resumes it, dispatching what waits.
    pub fn set_paused(&mut self, paused: bool, now: u64) -> Vec<Effect> {
        self.paused = paused;
        if paused {
            Vec::new()
        } else {
            self.dispatch_next(now)
        }
    }

    /// Whether nothing is waiting or running.
    pub fn is_idle(&self) -> bool {
        self.records.iter().all(|r| r.state.is_final())
    }

    pub fn records(&self) -> &[ActionRecord] {
        &self.records
    }

    pub fn get(&self, action_id: &str) -> Option<&ActionRecord> {
        self.records.iter().find(|r| r.action_id == action_id)
    }

    /// The tab the task acts in now: the latest one an outcome named (see `ActionOutcome::tab_id`),
    /// else the one its latest successful `task_start` opened.
    pub fn task_tab(&self) -> Option<i32> {
        self.records.iter().rev().find_map(|r| {
            let outcome = r.outcome.as_ref()?;
            let started = matches!(r.command, ActionCommand::TaskStart { .. })
                && r.state == ActionState::Succeeded;
            let opened = started
                .then(|| outcome.result.as_ref()?.get("tabId")?.as_i64())
                .flatten()
                .map(|id| id as i32);
            // The current tab after the latest action that told it (a tab the page opened, one
            // switched to), else the tab the task started in.
            outcome.tab_id.or(opened)
        })
    }

    /// When [`ActionQueue::tick`] must run next.
    pub fn next_deadline(&self) -> Option<u64> {
        self.records
            .iter()
            .filter(|r| !r.state.is_final())
            .filter_map(|r| r.deadline)
            .min()
    }

    /// Queues an action; it is dispatched at once when nothing else is in flight. Actions on
    /// the task's tab get that tab when the caller named none.
    pub fn submit(
        &mut self,
        action_id: String,
        task_id: String,
        client_id: String,
        tab_id: Option<i32>,
        command: ActionCommand,
        now: u64,
    ) -> Vec<Effect> {
        let tab_id = tab_id.or_else(|| command.needs_tab().then(|| self.task_tab()).flatten());
        let record = ActionRecord {
            action_id,
            task_id,
            client_id,
            tab_id,
            command,
            state: ActionState::Pending,
            attempt: 0,
            created_at: now,
            sent_at: None,
            acked_at: None,
            finished_at: None,
            deadline: None,
            outcome: None,
        };
        self.records.push(record.clone());
        let mut effects = vec![Effect::SaveAction(record)];
        effects.extend(self.dispatch_next(now));
        effects
    }

    /// The extension acknowledged an attempt.
    pub fn acked(&mut self, action_id: &str, attempt: u32, now: u64) -> Vec<Effect> {
        let all = self.timeouts;
        let Some(record) = self.current_attempt(action_id, attempt) else {
            return Vec::new();
        };
        let timeouts = all.for_client(&record.client_id);
        if record.state != ActionState::Sent {
            return Vec::new();
        }
        record.state = ActionState::Acked;
        record.acked_at = Some(now);
        record.deadline = Some(now + timeouts.exec_ms(&record.command));
        vec![Effect::SaveAction(record.clone())]
    }

    /// The extension reported how an attempt ended. A result for an attempt that already
    /// ended (a duplicate, or one that timed out first) changes nothing.
    pub fn outcome(&mut self, outcome: ActionOutcome, now: u64) -> Vec<Effect> {
        let Some(record) = self.current_attempt(&outcome.action_id, outcome.attempt) else {
            return Vec::new();
        };
        if !matches!(
            record.state,
            ActionState::Sent | ActionState::Acked | ActionState::Checking
        ) {
            return Vec::new();
        }
        let action_id = record.action_id.clone();
        let failed = outcome.status == ActionStatus::Error;
        let retryable = outcome.error.as_ref().is_some_and(|e| e.retryable);
        if failed && retryable {
            return self.retry_or_fail(&action_id, ActionState::Failed, outcome, now);
        }
        let state = if failed {
            ActionState::Failed
        } else {
            ActionState::Succeeded
        };
        self.finish(&action_id, state, outcome, now)
    }

    /// The extension's answer to `action_query` about an attempt being checked.
    pub fn attempt_status(
        &mut self,
        action_id: &str,
        attempt: u32,
        state: AttemptState,
        outcome: Option<ActionOutcome>,
        now: u64,
    ) -> Vec<Effect> {
        let Some(record) = self.current_attempt(action_id, attempt) else {
            return Vec::new();
        };
        if record.state != ActionState::Checking {
            return Vec::new();
        }
        let name = record.command.name();
        let timeout = record
            .outcome
            .clone()
            .expect("a checked attempt keeps its timeout");
        match (state, outcome) {
            (AttemptState::Finished, Some(outcome)) => self.outcome(outcome, now),
            // Never started: running it now is its first run.
            (AttemptState::Unknown, _) => {
                self.retry_or_fail(action_id, ActionState::TimedOut, timeout, now)
            }
            (AttemptState::Running, _) => self.give_up(
                action_id,
                timeout,
                format!(
                    "{name} is still running in the browser after its time ran out (a dialog or \
                     a long script may be blocking the page); it was not run again"
                ),
                now,
            ),
            (AttemptState::Finished, None) => self.give_up(
                action_id,
                timeout,
                format!(
                    "{name} ended in the browser, but its outcome was lost; it was not run again"
                ),
                now,
            ),
        }
    }

    /// The action could not be delivered (no extension online, say). Offline, it waits for the
    /// extension with backoff for [`Timeouts::offline_grace_ms`]; then it fails.
    pub fn dispatch_failed(
        &mut self,
        action_id: &str,
        error: ErrorObject,
        now: u64,
    ) -> Vec<Effect> {
        let all = self.timeouts;
        let Some(record) = self
            .records
            .iter_mut()
            .find(|r| r.action_id == action_id && r.state == ActionState::Sent)
        else {
            return Vec::new();
        };
        let timeouts = all.for_client(&record.client_id);
        let offline = error.code == ErrorCode::PluginOffline;
        let outcome = error_outcome(record, error);
        if offline && now < record.created_at + timeouts.offline_grace_ms {
            let backoff = (500u64 << record.attempt.saturating_sub(1).min(3)).min(4_000);
            record.state = ActionState::Pending;
            record.deadline = Some(now + backoff);
            record.outcome = Some(outcome);
            return vec![Effect::SaveAction(record.clone())];
        }
        self.retry_or_fail(action_id, ActionState::Failed, outcome, now)
    }

    /// Timeouts and due retries.
    pub fn tick(&mut self, now: u64) -> Vec<Effect> {
        let mut effects = Vec::new();
        let due: Vec<(String, ActionState)> = self
            .records
            .iter()
            .filter(|r| !r.state.is_final() && r.deadline.is_some_and(|d| d <= now))
            .map(|r| (r.action_id.clone(), r.state))
            .collect();
        for (action_id, state) in due {
            let record = self.get(&action_id).expect("due record").clone();
            let name = record.command.name();
            let error = match state {
                ActionState::Sent => ErrorObject::new(
                    ErrorCode::PluginTimeoutAck,
                    format!("the extension did not acknowledge {name} in time"),
                ),
                ActionState::Acked => ErrorObject::new(
                    ErrorCode::PluginTimeoutExec,
                    format!("{name} did not finish in time"),
                ),
                ActionState::Pending => {
                    effects.extend(self.dispatch_next(now));
                    continue;
                }
                ActionState::Checking => {
                    let timeout = record.outcome.clone().expect("a checked attempt's timeout");
                    let message = format!(
                        "the extension did not say whether {name} ran; it was not run again"
                    );
                    effects.extend(self.give_up(&action_id, timeout, message, now));
                    continue;
                }
                _ => continue,
            };
            let timeout = error_outcome(&record, error);
            if record.command.kind().rerun() == Rerun::Once {
                effects.extend(self.check(&action_id, timeout, now));
                continue;
            }
            effects.extend(self.retry_or_fail(&action_id, ActionState::TimedOut, timeout, now));
        }
        effects
    }

    /// Cancels everything not yet finished (the task was stopped).
    pub fn cancel_all(&mut self, now: u64) -> Vec<Effect> {
        let open: Vec<String> = self
            .records
            .iter()
            .filter(|r| !r.state.is_final())
            .map(|r| r.action_id.clone())
            .collect();
        let mut effects = Vec::new();
        for action_id in open {
            let record = self.get(&action_id).expect("open record").clone();
            let error = ErrorObject::new(
                ErrorCode::Canceled,
                "the task was stopped before the action ended",
            );
            let outcome = error_outcome(&record, error);
            effects.extend(self.end(&action_id, ActionState::Canceled, outcome, now));
        }
        effects
    }

    /// An attempt that timed out may have run: ask the extension before anything else.
    fn check(&mut self, action_id: &str, timeout: ActionOutcome, now: u64) -> Vec<Effect> {
        let all = self.timeouts;
        let record = self.record_mut(action_id);
        let ack_ms = all.for_client(&record.client_id).ack_ms;
        record.state = ActionState::Checking;
        record.deadline = Some(now + ack_ms);
        record.outcome = Some(timeout);
        vec![
            Effect::SaveAction(record.clone()),
            query(record.dispatch(None)),
        ]
    }

    /// Ends a timed-out attempt for good: it may have run, so it is not retried.
    fn give_up(
        &mut self,
        action_id: &str,
        mut timeout: ActionOutcome,
        message: String,
        now: u64,
    ) -> Vec<Effect> {
        if let Some(error) = timeout.error.as_mut() {
            error.message = format!("{}: {message}", error.message);
            error.retryable = false;
        }
        self.finish(action_id, ActionState::TimedOut, timeout, now)
    }

    /// The record of an action known to be queued.
    fn record_mut(&mut self, action_id: &str) -> &mut ActionRecord {
        self.records
            .iter_mut()
            .find(|r| r.action_id == action_id)
            .expect("a queued action")
    }

    fn current_attempt(&mut self, action_id: &str, attempt: u32) -> Option<&mut ActionRecord> {
        self.records
            .iter_mut()
            .find(|r| r.action_id == action_id && r.attempt == attempt)
    }

    /// A retryable failure of the first attempt is retried once after the retry delay;
    /// otherwise the action ends in `state` with `outcome`.
    fn retry_or_fail(
        &mut self,
        action_id: &str,
        state: ActionState,
        outcome: ActionOutcome,
        now: u64,
    ) -> Vec<Effect> {
        let timeouts = self.timeouts;
        let record = self.record_mut(action_id);
        let delay = timeouts.retry_delay_for(&record.command);
        let retryable = outcome.error.as_ref().is_some_and(|e| e.retryable);
        if retryable && record.attempt < 2 {
            record.state = ActionState::Pending;
            record.deadline = Some(now + delay);
            record.outcome = Some(outcome);
            return vec![Effect::SaveAction(record.clone())];
        }
        self.finish(action_id, state, outcome, now)
    }

    /// Ends an action, then dispatches the next one.
    fn finish(
        &mut self,
        action_id: &str,
        state: ActionState,
        outcome: ActionOutcome,
        now: u64,
    ) -> Vec<Effect> {
        let mut effects = self.end(action_id, state, outcome, now);
        effects.extend(self.dispatch_next(now));
        effects
    }

    fn end(
        &mut self,
        action_id: &str,
        state: ActionState,
        outcome: ActionOutcome,
        now: u64,
    ) -> Vec<Effect> {
        let record = self.record_mut(action_id);
        record.state = state;
        record.finished_at = Some(now);
        record.deadline = None;
        // Held, saved and shown without what only the model may read: the run hears the whole
        // outcome once, as the action ends.
        record.outcome = Some(outcome.clone().kept());
        let kept = record.clone();
        let heard = ActionRecord {
            outcome: Some(outcome),
            ..kept.clone()
        };
        vec![Effect::SaveAction(kept), Effect::ActionFinished(heard)]
    }

    /// Dispatches the oldest pending action that is due, if nothing is in flight.
    fn dispatch_next(&mut self, now: u64) -> Vec<Effect> {
        let in_flight = self.records.iter().any(|r| {
            matches!(
                r.state,
                ActionState::Sent | ActionState::Acked | ActionState::Checking
            )
        });
        if in_flight || self.paused {
            return Vec::new();
        }
        let all = self.timeouts;
        let Some(record) = self
            .records
            .iter_mut()
            .find(|r| r.state == ActionState::Pending)
            .filter(|r| r.deadline.is_none_or(|d| d <= now))
        else {
            return Vec::new();
        };
        let timeouts = all.for_client(&record.client_id);
        record.state = ActionState::Sent;
        record.attempt += 1;
        record.sent_at = Some(now);
        record.acked_at = None;
        record.deadline = Some(now + timeouts.ack_ms);
        let budget_ms = timeouts.exec_ms(&record.command);
        vec![
            Effect::SaveAction(record.clone()),
            Effect::Dispatch(record.dispatch(Some(budget_ms))),
        ]
    }
}

/// Asks the extension what became of this attempt (`action_query`). Best effort: without an
/// answer the check times out.
fn query(action: BrowserAction) -> Effect {
    Effect::Tell {
        client_id: action.client_id,
        message: ServerToExtension::ActionQuery {
            task_id: action.task_id,
            action_id: action.action_id,
            attempt: action.attempt,
        },
    }
}

fn error_outcome(record: &ActionRecord, error: ErrorObject) -> ActionOutcome {
    ActionOutcome {
        action_id: record.action_id.clone(),
        attempt: record.attempt,
        task_id: record.task_id.clone(),
        status: ActionStatus::Error,
        result: None,
        model_result: None,
        error: Some(error),
        warnings: Vec::new(),
        dialog: None,
        tab_id: None,
        waits_for_site: None,
        timings: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const T: Timeouts = Timeouts {
        ack_ms: 100,
        exec_ms: 1_000,
        slow_exec_ms: 5_000,
        grace_ms: 500,
        retry_delay_ms: 1_000,
        offline_grace_ms: 10_000,
        script: ScriptBounds {
            take_ms: 60_000,
            report_ms: 300_000,
        },
    };

    fn click(id: u32) -> ActionCommand {
        ActionCommand::BrowserClick {
            target: mimo_protocol::Target::click_id(id),
            strategy: None,
            checked: None,
        }
    }

    fn submit(q: &mut ActionQueue, id: &str, command: ActionCommand, now: u64) -> Vec<Effect> {
        q.submit(
            id.into(),
            "task".into(),
            "client".into(),
            None,
            command,
            now,
        )
    }

    /// The attempts sent (`query`: asked about) by these effects.
    fn attempts(effects: &[Effect], query: bool) -> Vec<(String, u32)> {
        effects
            .iter()
            .filter_map(|e| match (e, query) {
                (Effect::Dispatch(a), false) => Some((a.action_id.clone(), a.attempt)),
                (
                    Effect::Tell {
                        message:
                            ServerToExtension::ActionQuery {
                                action_id, attempt, ..
                            },
                        ..
                    },
                    true,
                ) => Some((action_id.clone(), *attempt)),
                _ => None,
            })
            .collect()
    }

    fn dispatched(effects: &[Effect]) -> Vec<(String, u32)> {
        attempts(effects, false)
    }

    fn queried(effects: &[Effect]) -> Vec<(String, u32)> {
        attempts(effects, true)
    }

    fn finished(effects: &[Effect]) -> Vec<(String, ActionState)> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::ActionFinished(r) => Some((r.action_id.clone(), r.state)),
                _ => None,
            })
            .collect()
    }

    fn outcome(
        id: &str,
        attempt: u32,
        status: ActionStatus,
        error: Option<ErrorObject>,
    ) -> ActionOutcome {
        ActionOutcome {
            action_id: id.into(),
            attempt,
            task_id: "task".into(),
            status,
            result: Some(json!({})),
            model_result: None,
            error,
            warnings: vec![],
            dialog: None,
            tab_id: None,
            waits_for_site: None,
            timings: Vec::new(),
        }
    }

    fn ok(id: &str, attempt: u32) -> ActionOutcome {
        outcome(id, attempt, ActionStatus::Ok, None)
    }

    #[test]
    fn one_action_in_flight_the_rest_wait_their_turn_in_order() {
        let mut q = ActionQueue::new(T);
        let first = submit(&mut q, "a", click(1), 0);
        assert!(
            matches!(first[0], Effect::SaveAction(ref r) if r.state == ActionState::Pending),
            "saved before sent"
        );
        assert_eq!(dispatched(&first), vec![("a".into(), 1)]);
        assert!(dispatched(&submit(&mut q, "b", click(2), 1)).is_empty());
        assert!(dispatched(&submit(&mut q, "c", click(3), 2)).is_empty());
        q.acked("a", 1, 10);
        let done = q.outcome(ok("a", 1), 20);
        assert_eq!(finished(&done), vec![("a".into(), ActionState::Succeeded)]);
        assert_eq!(dispatched(&done), vec![("b".into(), 1)]);
        let done = q.outcome(ok("b", 1), 30);
        assert_eq!(dispatched(&done), vec![("c".into(), 1)]);
    }

    fn hover(id: u32) -> ActionCommand {
        ActionCommand::BrowserHover {
            target: mimo_protocol::Target::click_id(id),
        }
    }

    fn error_of(q: &ActionQueue, id: &str) -> ErrorObject {
        q.get(id)
            .unwrap()
            .outcome
            .as_ref()
            .unwrap()
            .error
            .clone()
            .unwrap()
    }

    #[test]
    fn no_ack_in_time_is_plugin_timeout_ack_retried_once_after_the_delay() {
        let mut q = ActionQueue::new(T);
        // Running it twice ends the same way, so it is simply retried.
        submit(&mut q, "a", hover(1), 0);
        assert_eq!(q.next_deadline(), Some(100));
        assert!(q.tick(99).is_empty());
        let timed_out = q.tick(100);
        assert!(finished(&timed_out).is_empty(), "retried, not finished");
        assert_eq!(q.get("a").unwrap().state, ActionState::Pending);
        assert_eq!(q.next_deadline(), Some(1_100));
        assert!(dispatched(&q.tick(1_099)).is_empty());
        assert_eq!(
            dispatched(&q.tick(1_100)),
            vec![("a".into(), 2)],
            "a new attempt"
        );
        let failed = q.tick(1_200);
        assert_eq!(finished(&failed), vec![("a".into(), ActionState::TimedOut)]);
        let error = q
            .get("a")
            .unwrap()
            .outcome
            .as_ref()
            .unwrap()
            .error
            .clone()
            .unwrap();
        assert_eq!(error.code, ErrorCode::PluginTimeoutAck);
    }

    #[test]
    fn a_script_has_minutes_to_take_and_report_an_action() {
        let mut q = ActionQueue::new(T);
        let script = mimo_protocol::script::script_client_id("task");
        let sent = q.submit("s".into(), "task".into(), script, None, hover(1), 0);
        assert_eq!(dispatched(&sent), vec![("s".into(), 1)]);
        // An extension would have timed out long since; the script takes it when it asks.
        assert_eq!(q.next_deadline(), Some(T.script.take_ms));
        assert!(q.tick(T.ack_ms * 10).is_empty());
        q.acked("s", 1, 30_000);
        assert_eq!(q.next_deadline(), Some(30_000 + T.script.report_ms));
        assert!(q.tick(30_000 + T.exec_ms * 10).is_empty());
        assert_eq!(q.get("s").unwrap().state, ActionState::Acked);
        // An extension's action beside it keeps the extension's bounds.
        assert_eq!(T.for_client("ext-1"), T);
        // Undelivered (the script was away), it waits for the script as long as for its
        // taking, not an extension's grace.
        let mut q = ActionQueue::new(T);
        let script = mimo_protocol::script::script_client_id("task");
        q.submit("u".into(), "task".into(), script, None, hover(1), 0);
        let mut ended = q.dispatch_failed("u", ErrorObject::plugin_offline(), 1);
        let mut now = 1;
        while now < T.offline_grace_ms * 3 {
            now = q.next_deadline().expect("waits");
            ended.extend(q.tick(now));
            if q.get("u").unwrap().state == ActionState::Sent {
                ended.extend(q.dispatch_failed("u", ErrorObject::plugin_offline(), now));
            }
        }
        assert!(
            finished(&ended).is_empty(),
            "still waiting for the script at {now} ms"
        );
    }

    #[test]
    fn an_acked_action_that_runs_too_long_is_plugin_timeout_exec() {
        let mut q = ActionQueue::new(Timeouts {
            retry_delay_ms: 10,
            ..T
        });
        submit(&mut q, "a", hover(1), 0);
        q.acked("a", 1, 50);
        assert_eq!(q.next_deadline(), Some(1_050));
        q.tick(1_050);
        q.tick(1_060);
        q.acked("a", 2, 1_070);
        let effects = q.tick(2_070);
        assert_eq!(
            finished(&effects),
            vec![("a".into(), ActionState::TimedOut)]
        );
        let error = q
            .get("a")
            .unwrap()
            .outcome
            .as_ref()
            .unwrap()
            .error
            .clone()
            .unwrap();
        assert_eq!(error.code, ErrorCode::PluginTimeoutExec);
        assert!(error.retryable);
    }

    #[test]
    fn a_click_that_timed_out_while_still_running_is_never_run_again() {
        let mut q = ActionQueue::new(T);
        submit(&mut q, "a", click(1), 0);
        submit(&mut q, "b", click(2), 1);
        q.acked("a", 1, 50);
        let timed_out = q.tick(1_050);
        assert_eq!(
            queried(&timed_out),
            vec![("a".into(), 1)],
            "asked, not retried"
        );
        assert!(dispatched(&timed_out).is_empty());
        assert!(finished(&timed_out).is_empty());
        assert_eq!(q.get("a").unwrap().state, ActionState::Checking);
        assert_eq!(q.next_deadline(), Some(1_150));
        assert!(
            dispatched(&q.tick(1_100)).is_empty(),
            "b waits: a is not settled"
        );
        let answered = q.attempt_status("a", 1, AttemptState::Running, None, 1_120);
        assert_eq!(
            finished(&answered),
            vec![("a".into(), ActionState::TimedOut)]
        );
        assert_eq!(
            dispatched(&answered),
            vec![("b".into(), 1)],
            "then the next one goes"
        );
        let error = error_of(&q, "a");
        assert_eq!(error.code, ErrorCode::PluginTimeoutExec);
        assert!(
            !error.retryable,
            "the model is told not to count on a retry"
        );
        assert!(error.message.contains("still running"), "{}", error.message);
        // However late its result comes, and whatever is asked again, it ran once.
        assert!(q.outcome(ok("a", 1), 5_000).is_empty());
        assert!(q
            .tick(10_000)
            .iter()
            .all(|e| !matches!(e, Effect::Dispatch(a) if a.action_id == "a")));
        assert_eq!(q.get("a").unwrap().attempt, 1);
    }

    #[test]
    fn a_click_the_extension_never_received_is_sent_again_as_a_new_attempt() {
        let mut q = ActionQueue::new(T);
        submit(&mut q, "a", click(1), 0);
        assert_eq!(queried(&q.tick(100)), vec![("a".into(), 1)]);
        let answered = q.attempt_status("a", 1, AttemptState::Unknown, None, 120);
        assert!(finished(&answered).is_empty());
        assert_eq!(q.get("a").unwrap().state, ActionState::Pending);
        assert_eq!(dispatched(&q.tick(1_120)), vec![("a".into(), 2)]);
        // An answer about an attempt no longer being checked changes nothing.
        assert!(q
            .attempt_status("a", 1, AttemptState::Running, None, 1_130)
            .is_empty());
        assert!(q
            .outcome(ok("a", 2), 1_140)
            .iter()
            .any(|e| matches!(e, Effect::ActionFinished(r) if r.state == ActionState::Succeeded)));
    }

    #[test]
    fn a_click_that_finished_unseen_takes_its_stored_outcome_or_the_late_result() {
        let mut q = ActionQueue::new(T);
        submit(&mut q, "a", click(1), 0);
        q.acked("a", 1, 10);
        q.tick(1_010);
        let answered = q.attempt_status("a", 1, AttemptState::Finished, Some(ok("a", 1)), 1_020);
        assert_eq!(
            finished(&answered),
            vec![("a".into(), ActionState::Succeeded)]
        );

        submit(&mut q, "b", click(2), 2_000);
        q.tick(2_100);
        assert_eq!(q.get("b").unwrap().state, ActionState::Checking);
        let late = q.outcome(ok("b", 1), 2_110);
        assert_eq!(finished(&late), vec![("b".into(), ActionState::Succeeded)]);

        submit(&mut q, "c", click(3), 3_000);
        q.tick(3_100);
        let lost = q.attempt_status("c", 1, AttemptState::Finished, None, 3_110);
        assert_eq!(finished(&lost), vec![("c".into(), ActionState::TimedOut)]);
        assert!(error_of(&q, "c").message.contains("outcome was lost"));
    }

    #[test]
    fn a_click_nobody_answers_for_ends_without_a_retry() {
        let mut q = ActionQueue::new(T);
        submit(&mut q, "a", click(1), 0);
        q.acked("a", 1, 10);
        q.tick(1_010);
        let silent = q.tick(1_110);
        assert_eq!(finished(&silent), vec![("a".into(), ActionState::TimedOut)]);
        assert!(dispatched(&silent).is_empty());
        let error = error_of(&q, "a");
        assert_eq!(error.code, ErrorCode::PluginTimeoutExec);
        assert!(!error.retryable);
        assert!(error
            .message
            .contains("did not say whether browser_click ran"));
        assert_eq!(q.next_deadline(), None);
    }

    #[test]
    fn waits_get_their_own_timeout_and_page_loads_the_slow_one() {
        let wait = ActionCommand::BrowserWaitFor {
            text: Some("Cart".into()),
            url: None,
            selector: None,
            timeout_ms: Some(20_000),
        };
        assert_eq!(T.exec_ms(&wait), 20_500);
        assert_eq!(
            T.exec_ms(&ActionCommand::BrowserNavigate {
                url: "http://x/".into()
            }),
            5_000
        );
        assert_eq!(T.exec_ms(&click(1)), 1_000);
    }

    #[test]
    fn retryable_errors_are_retried_once_others_fail_at_once() {
        let mut q = ActionQueue::new(T);
        submit(&mut q, "a", click(1), 0);
        let cdp = ErrorObject::new(ErrorCode::CdpUnavailable, "debugger detached");
        assert!(
            finished(&q.outcome(outcome("a", 1, ActionStatus::Error, Some(cdp.clone())), 10))
                .is_empty()
        );
        assert_eq!(dispatched(&q.tick(1_010)), vec![("a".into(), 2)]);
        let effects = q.outcome(outcome("a", 2, ActionStatus::Error, Some(cdp)), 1_020);
        assert_eq!(finished(&effects), vec![("a".into(), ActionState::Failed)]);

        submit(&mut q, "b", click(2), 2_000);
        let missing = ErrorObject::new(ErrorCode::TargetNotFound, "no element 2");
        let effects = q.outcome(outcome("b", 1, ActionStatus::Error, Some(missing)), 2_010);
        assert_eq!(finished(&effects), vec![("b".into(), ActionState::Failed)]);
        assert_eq!(q.get("b").unwrap().attempt, 1);

        // A page capture is retried sooner (seed 000 §4.5).
        submit(
            &mut q,
            "c",
            ActionCommand::BrowserScreenshot { full_page: None },
            3_000,
        );
        let busy = ErrorObject::new(ErrorCode::CdpUnavailable, "capture failed");
        q.outcome(outcome("c", 1, ActionStatus::Error, Some(busy)), 3_010);
        assert!(dispatched(&q.tick(3_509)).is_empty());
        assert_eq!(dispatched(&q.tick(3_510)), vec![("c".into(), 2)]);
    }

    #[test]
    fn duplicate_and_stale_acks_and_results_are_ignored() {
        let mut q = ActionQueue::new(T);
        submit(&mut q, "a", click(1), 0);
        assert_eq!(q.acked("a", 1, 5).len(), 1);
        assert!(q.acked("a", 1, 6).is_empty(), "second ack");
        assert_eq!(finished(&q.outcome(ok("a", 1), 10)).len(), 1);
        assert!(q.outcome(ok("a", 1), 11).is_empty(), "second result");
        assert!(q.outcome(ok("zzz", 1), 12).is_empty(), "unknown action");
        submit(&mut q, "b", click(2), 20);
        assert!(
            q.outcome(ok("b", 7), 21).is_empty(),
            "result of an attempt never sent"
        );
        assert_eq!(q.get("b").unwrap().state, ActionState::Sent);
    }

    #[test]
    fn after_a_restart_nothing_is_sent_twice_and_late_results_still_land() {
        let mut q = ActionQueue::new(T);
        submit(&mut q, "a", click(1), 0);
        q.acked("a", 1, 5);
        submit(&mut q, "b", click(2), 6);
        // Storage holds what was saved; the process restarts.
        let mut restored = ActionQueue::restore(q.records().to_vec(), T);
        assert!(
            dispatched(&restored.tick(10)).is_empty(),
            "the in-flight attempt is not re-sent"
        );
        let effects = restored.outcome(ok("a", 1), 20);
        assert_eq!(
            finished(&effects),
            vec![("a".into(), ActionState::Succeeded)]
        );
        assert_eq!(dispatched(&effects), vec![("b".into(), 1)]);
    }

    #[test]
    fn a_failed_delivery_is_retried_then_reported() {
        let mut q = ActionQueue::new(T);
        submit(&mut q, "a", click(1), 0);
        let refused = ErrorObject::new(ErrorCode::InternalError, "the registry refused it");
        assert!(finished(&q.dispatch_failed("a", refused.clone(), 1)).is_empty());
        q.tick(1_001);
        let effects = q.dispatch_failed("a", refused, 1_002);
        assert_eq!(finished(&effects), vec![("a".into(), ActionState::Failed)]);
        let error = q
            .get("a")
            .unwrap()
            .outcome
            .as_ref()
            .unwrap()
            .error
            .clone()
            .unwrap();
        assert_eq!(error.code, ErrorCode::InternalError);
    }

    #[test]
    fn an_undelivered_action_waits_for_its_extension_with_backoff_then_fails() {
        let mut q = ActionQueue::new(T);
        submit(&mut q, "a", click(1), 0);
        let offline = ErrorObject::plugin_offline();
        let mut now = 10;
        let mut waits = Vec::new();
        loop {
            let effects = q.dispatch_failed("a", offline.clone(), now);
            if !finished(&effects).is_empty() {
                break;
            }
            let due = q.next_deadline().unwrap();
            waits.push(due - now);
            now = due;
            assert_eq!(dispatched(&q.tick(now)).len(), 1, "sent again when due");
        }
        assert_eq!(
            &waits[..5],
            &[500, 1_000, 2_000, 4_000, 4_000],
            "backoff, capped"
        );
        assert!(
            now >= T.offline_grace_ms,
            "gave up only after the grace ({now} ms)"
        );
        assert_eq!(q.get("a").unwrap().state, ActionState::Failed);
        // Back within the grace, it is delivered and runs.
        submit(&mut q, "b", click(2), 100_000);
        q.dispatch_failed("b", offline, 100_001);
        let again = q.tick(100_501);
        assert_eq!(dispatched(&again), vec![("b".into(), 2)]);
        q.acked("b", 2, 100_510);
        assert!(q
            .outcome(ok("b", 2), 100_520)
            .iter()
            .any(|e| matches!(e, Effect::ActionFinished(r) if r.state == ActionState::Succeeded)));
    }

    #[test]
    fn the_task_tab_comes_from_task_start_and_fills_in_tab_actions() {
        let mut q = ActionQueue::new(T);
        submit(
            &mut q,
            "start",
            ActionCommand::TaskStart {
                url: None,
                reuse_existing_tab: None,
                group_title: None,
                adopt_tab_id: None,
                domains: None,
                task_domains: None,
                redaction: None,
            },
            0,
        );
        let mut started = ok("start", 1);
        started.result = Some(json!({"tabId": 42, "windowId": 3, "url": "about:blank"}));
        q.outcome(started, 10);
        assert_eq!(q.task_tab(), Some(42));
        let effects = submit(&mut q, "c", click(1), 20);
        let Effect::Dispatch(action) = &effects[2] else {
            panic!("{effects:?}")
        };
        assert_eq!(action.tab_id, Some(42));
        let explicit = q.submit(
            "d".into(),
            "task".into(),
            "client".into(),
            Some(7),
            click(1),
            30,
        );
        assert!(matches!(&explicit[0], Effect::SaveAction(r) if r.tab_id == Some(7)));
    }

    #[test]
    fn the_task_tab_follows_the_tab_an_outcome_names_as_current() {
        let mut q = ActionQueue::new(T);
        let start = ActionCommand::TaskStart {
            url: None,
            reuse_existing_tab: None,
            group_title: None,
            adopt_tab_id: None,
            domains: None,
            task_domains: None,
            redaction: None,
        };
        submit(&mut q, "start", start, 0);
        let mut started = ok("start", 1);
        started.result = Some(json!({"tabId": 42, "windowId": 3, "url": "about:blank"}));
        q.outcome(started, 10);
        // The click made the page open a tab, where the task goes on.
        submit(&mut q, "c", click(1), 20);
        let mut clicked = ok("c", 1);
        clicked.tab_id = Some(43);
        q.outcome(clicked, 30);
        assert_eq!(q.task_tab(), Some(43));
        // An outcome that names no tab changes nothing.
        submit(&mut q, "d", click(2), 40);
        q.outcome(ok("d", 1), 50);
        assert_eq!(q.task_tab(), Some(43));
        let effects = submit(&mut q, "e", click(3), 60);
        assert!(matches!(&effects[0], Effect::SaveAction(r) if r.tab_id == Some(43)));
    }

    #[test]
    fn a_takeover_holds_new_dispatches_until_resumed() {
        let mut q = ActionQueue::new(T);
        submit(&mut q, "a", click(1), 0);
        assert!(q.set_paused(true, 1).is_empty());
        let done = q.outcome(ok("a", 1), 2);
        assert_eq!(finished(&done).len(), 1, "what was in flight finishes");
        assert!(dispatched(&submit(&mut q, "b", click(2), 3)).is_empty());
        assert!(dispatched(&q.tick(5_000)).is_empty());
        assert!(!q.is_idle());
        assert_eq!(
            dispatched(&q.set_paused(false, 5_001)),
            vec![("b".into(), 1)]
        );
        q.outcome(ok("b", 1), 5_002);
        assert!(q.is_idle());
    }

    #[test]
    fn stopping_cancels_what_is_open() {
        let mut q = ActionQueue::new(T);
        submit(&mut q, "a", click(1), 0);
        submit(&mut q, "b", click(2), 1);
        let effects = q.cancel_all(5);
        assert_eq!(
            finished(&effects),
            vec![
                ("a".into(), ActionState::Canceled),
                ("b".into(), ActionState::Canceled)
            ]
        );
        assert!(dispatched(&effects).is_empty());
        assert_eq!(q.next_deadline(), None);
    }
}
