//! How a failed model call goes on: made again after a backoff, compacted harder, or ended.

use mimo_protocol::{ErrorObject, FrontendEvent};

use crate::llm;

/// How many times one turn's LLM call is retried after a retryable failure (seed 001).
pub const LLM_RETRIES: u32 = 3;

/// How many times a conversation's (a chat turn's, a run's) prompt may be refused as longer
/// than the model's context window, each time compacted harder and sent again, before it ends
/// with `LLM_ERROR`.
pub const MAX_OVERFLOWS: u32 = 3;

/// The wait before retry `attempt` (1-based): exponential from 1 s, or what the provider asked
/// for (`Retry-After`), capped at 20 s.
pub fn llm_backoff_ms(attempt: u32, retry_after_ms: Option<u64>) -> u64 {
    let exponential = 1_000u64 << attempt.saturating_sub(1).min(5);
    retry_after_ms.unwrap_or(exponential).min(20_000)
}

/// How a failed model call goes on, given how often it was retried (`retries`) and its
/// conversation's prompt refused as too long (`overflows`), both counted up here: it is made
/// again after a delay, and the web app is told why (the event), or it is not (the error to
/// end with). A prompt too long for the model is compacted harder (the caller's budget
/// follows `overflows`) and sent again at once; a malformed reply is corrected at once; a
/// rate limit, an overloaded provider or a network failure wait ([`llm_backoff_ms`]).
pub(crate) fn next_attempt(
    error: &llm::LlmError,
    retries: &mut u32,
    overflows: &mut u32,
) -> Result<(FrontendEvent, u64), ErrorObject> {
    use llm::LlmErrorKind::*;
    let (attempt, max_attempts, delay_ms) = match error.kind {
        ContextTooLong if *overflows < MAX_OVERFLOWS => {
            *overflows += 1;
            (*overflows, MAX_OVERFLOWS, 0)
        }
        ContextTooLong => {
            return Err(ErrorObject {
                message: format!(
                    "The conversation is too long for the model even with its older parts \
                     summarised {MAX_OVERFLOWS} times ({}). Start a new task with a narrower \
                     goal, or set MIMO_AGENT_CONTEXT_TOKENS below the model's context window.",
                    error.message
                ),
                ..ErrorObject::from(error)
            })
        }
        _ if !error.retryable || *retries >= LLM_RETRIES => return Err(ErrorObject::from(error)),
        // The model is told what was wrong; there is nothing to wait for.
        NoToolCall | InvalidToolArguments => {
            *retries += 1;
            (*retries, LLM_RETRIES, 0)
        }
        _ => {
            *retries += 1;
            let delay_ms = llm_backoff_ms(*retries, error.retry_after_ms);
            (*retries, LLM_RETRIES, delay_ms)
        }
    };
    let event = FrontendEvent::ModelRetry {
        attempt,
        max_attempts,
        reason: error.kind,
        message: error.message.clone(),
        delay_ms,
    };
    Ok((event, delay_ms))
}
