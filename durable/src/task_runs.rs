//! Runs of Mimo's own agent asked for over MCP (`run_task`): the goal given as the person's
//! message, as the web app gives it, and where the task stands, waiting up to a bound for its
//! run to end. The rules of the answers are `mimo_agent::mcp::runs`.

use std::time::Duration;

use futures_channel::oneshot;
use futures_util::future::select;
use mimo_agent::mcp::runs::{RunEnd, RunState};
use mimo_agent::task::{Caller, Input};
use mimo_protocol::FrontendEvent;
use worker::{Delay, Response, Result};

use crate::clients::RunGoal;
use crate::http::{error_response, now_ms};
use crate::task::{unknown_task, TaskCoordinator};

/// The longest a caller may wait for a run to end in one request.
const MAX_WAIT_MS: u64 = 120_000;

impl TaskCoordinator {
    /// `POST /run`: the task's goal, in the extension named (when the session knows its
    /// browser) or the one chosen as for any task. Its first model call is left to the alarm,
    /// so the caller is answered at once.
    pub(crate) async fn run_goal(&self, run: RunGoal) -> Result<Response> {
        let mut inputs = Vec::new();
        if let Some(client_id) = run.client_id {
            inputs.push((Input::SelectClient { client_id }, Caller::Direct));
        }
        let goal = Input::UserMessage {
            content: run.goal,
            client_message_id: None,
            answer_schema: run.answer_schema,
        };
        inputs.push((goal, Caller::Relay));
        self.answer_all(inputs).await
    }

    /// `GET /run?waitMs=`: where the task stands, waiting up to `wait_ms` for its run to end
    /// (woken by each event the task records).
    pub(crate) async fn run_state(&self, wait_ms: u64) -> Result<Response> {
        let deadline = now_ms() + wait_ms.min(MAX_WAIT_MS);
        loop {
            let Some(state) = self.run_state_now()? else {
                return error_response(&unknown_task());
            };
            let left = deadline.saturating_sub(now_ms());
            if state.status.is_terminal() || left == 0 {
                return Response::from_json(&state);
            }
            let (woken, wake) = oneshot::channel();
            self.run_waiters.borrow_mut().push(woken);
            select(wake, Delay::from(Duration::from_millis(left))).await;
        }
    }

    /// The task as it stands: how its run ended, once it has (its last structured output,
    /// once the task is done; a task given another message runs again).
    fn run_state_now(&self) -> Result<Option<RunState>> {
        let Some(task) = self.task.borrow().record().cloned() else {
            return Ok(None);
        };
        let ended = if !task.status.is_terminal() {
            None
        } else {
            self.store
                .events_after(&task.task_id, 0)?
                .into_iter()
                .rev()
                .find_map(|envelope| match envelope.event {
                    FrontendEvent::StructuredOutput {
                        status,
                        output,
                        error,
                        warnings,
                    } => Some(RunEnd {
                        status,
                        output,
                        error,
                        warnings,
                    }),
                    _ => None,
                })
        };
        Ok(Some(RunState {
            status: task.status,
            title: task.title,
            ended,
        }))
    }

    /// Wakes the requests waiting for a run to end: the task recorded an event.
    pub(crate) fn wake_run_waiters(&self) {
        for waiter in self.run_waiters.borrow_mut().drain(..) {
            let _ = waiter.send(());
        }
    }
}
