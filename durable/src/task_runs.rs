//! Runs of Mimo's own agent asked for over MCP (`run_task`): the goal given as the person's
//! message, as the web app gives it, and where the task stands, waiting up to a bound for its
//! run to end. The rules of the answers are `mimo_agent::mcp::runs`.

use std::time::Duration;

use futures_channel::oneshot;
use futures_util::future::select;
use mimo_agent::mcp::runs::RunState;
use mimo_agent::task::{Caller, Goal, Input, Start};
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
        let start = Start {
            client_id: run.client_id,
            goal: Some(Goal {
                content: run.goal,
                answer_schema: run.answer_schema,
            }),
            ..Start::default()
        };
        self.respond(Input::Start(start), Caller::Direct).await
    }

    /// `GET /run?waitMs=[&afterSteps=]`: where the task stands, waiting up to `wait_ms` for
    /// its run to end — or, given `after_steps`, for it to finish a step more than that
    /// (progress) — woken by each event the task records.
    pub(crate) async fn run_state(
        &self,
        wait_ms: u64,
        after_steps: Option<u32>,
    ) -> Result<Response> {
        let deadline = now_ms() + wait_ms.min(MAX_WAIT_MS);
        loop {
            let Some(state) = self.run_state_now()? else {
                return error_response(&unknown_task());
            };
            let left = deadline.saturating_sub(now_ms());
            let stepped = after_steps.is_some_and(|n| state.steps > n);
            if state.status.is_terminal() || stepped || left == 0 {
                return Response::from_json(&state);
            }
            let (woken, wake) = oneshot::channel();
            self.run_waiters.borrow_mut().push(woken);
            select(wake, Delay::from(Duration::from_millis(left))).await;
        }
    }

    /// The task as it stands (`RunState::of` its history).
    fn run_state_now(&self) -> Result<Option<RunState>> {
        let Some(task) = self.task.borrow().record().cloned() else {
            return Ok(None);
        };
        let history = self.store.events_after(&task.task_id, 0)?;
        Ok(Some(RunState::of(task.status, task.title, &history)))
    }

    /// Wakes the requests waiting for a run to end: the task recorded an event.
    pub(crate) fn wake_run_waiters(&self) {
        for waiter in self.run_waiters.borrow_mut().drain(..) {
            let _ = waiter.send(());
        }
    }
}
