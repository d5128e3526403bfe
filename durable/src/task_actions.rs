//! The developer API's browser actions: submit one for the task's extension and wait for it to
//! end. The rules (one in flight, timeouts, retries, duplicates) are `mimo_agent::actions`.

use std::time::Duration;

use futures_channel::oneshot;
use futures_util::future::{select, Either};
use mimo_agent::task::client_steps::ANSWER_WITHIN_MS;
use mimo_agent::task::{Caller, ClientConsent, Input};
use worker::{Delay, Response, Result};

use crate::clients::SubmitAction;
use crate::http::{error_response, random_bytes};
use crate::task::TaskCoordinator;

const DEFAULT_WAIT_MS: u64 = 60_000;
const MAX_WAIT_MS: u64 = 120_000;

impl TaskCoordinator {
    /// Submits an action for the task's extension (binding one first if the task has none) and
    /// waits for it to end (or `waitMs`): `200` with the finished record, `202` with the
    /// record as it stands. `consent`: what happens to an MCP client's step the person must
    /// confirm — refused, run (they approved it in their client), or held for their answer in
    /// the web app, the wait starting once they gave it.
    pub(crate) async fn submit_action(
        &self,
        request: SubmitAction,
        consent: ClientConsent,
    ) -> Result<Response> {
        let action_id = format!("act_{}", hex::encode(random_bytes::<12>()?));
        let (sender, receiver) = oneshot::channel();
        self.waiters.borrow_mut().insert(action_id.clone(), sender);
        let input = Input::Submit {
            action_id: action_id.clone(),
            tab_id: request.tab_id,
            command: request.command,
            rated: request.rated,
            consent,
        };
        if let Some(refusal) = self.handle(input, Caller::Direct).await?.into_iter().next() {
            self.waiters.borrow_mut().remove(&action_id);
            return error_response(&refusal);
        }
        let mut wait = request.wait_ms.unwrap_or(DEFAULT_WAIT_MS).min(MAX_WAIT_MS);
        if consent == ClientConsent::AskInApp {
            wait += ANSWER_WITHIN_MS;
        }
        let ended = match select(receiver, Delay::from(Duration::from_millis(wait))).await {
            Either::Left((Ok(ended), _)) => Some(ended),
            _ => None,
        };
        self.waiters.borrow_mut().remove(&action_id);
        match ended {
            Some(Ok(record)) => Response::from_json(&record),
            Some(Err(refusal)) => error_response(&refusal),
            None => {
                let current = self.task.borrow().actions().get(&action_id).cloned();
                Ok(Response::from_json(&current)?.with_status(202))
            }
        }
    }
}
