//! Every wait of the coordinator and the registry has a bound and a name (issue 26 §2): another
//! object, R2 or a provider that never answers must not hold a task without a word.

use std::future::Future;
use std::time::Duration;

use futures_util::future::Either;
use worker::Delay;

use crate::error::{Failure, Reply};

/// How long another object (the registry, the skill library, the session list) may take to
/// answer a request that does not wait for anything itself.
pub const OBJECT_ANSWER_MS: u64 = 10_000;

/// `Some(output)` if `future` finishes within `budget`, else `None`.
pub async fn with_deadline<F: Future>(future: F, budget: Duration) -> Option<F::Output> {
    let future = std::pin::pin!(future);
    let timer = std::pin::pin!(Delay::from(budget));
    match futures_util::future::select(future, timer).await {
        Either::Left((output, _)) => Some(output),
        Either::Right(_) => None,
    }
}

/// `answer` within [`OBJECT_ANSWER_MS`], else a runtime failure saying that `what` did not
/// answer — handled as any failure of the runtime underneath (a dispatch that did not reach the
/// extension, a skill lookup without skills).
pub async fn answered<T>(what: &str, answer: impl Future<Output = Reply<T>>) -> Reply<T> {
    answered_within(what, OBJECT_ANSWER_MS, answer).await
}

/// `answer` within `ms`, else a runtime failure saying that `what` did not answer.
pub async fn answered_within<T>(
    what: &str,
    ms: u64,
    answer: impl Future<Output = Reply<T>>,
) -> Reply<T> {
    match with_deadline(answer, Duration::from_millis(ms)).await {
        Some(answer) => answer,
        None => Err(Failure::Runtime(worker::Error::RustError(format!(
            "{what} did not answer within {} s",
            ms / 1000
        )))),
    }
}
