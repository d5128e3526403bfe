//! Who is asking. The deployment's shared secret (`MIMO_API_TOKEN`, `Authorization: Bearer`)
//! opens the web app's API; a paired extension's own token (`mimo_ext_…`) opens only what an
//! extension needs; a WebSocket opens with a single-use ticket bought with either
//! (`POST /api/ws-ticket`), never with a token in its URL. Failed attempts are counted per
//! client address, and a client over the limit is refused for the rest of the window. The
//! records live in the registry (`mimo_durable::credentials`), the rules in
//! `mimo_agent::credentials`.

use std::cell::RefCell;
use std::collections::HashMap;

use mimo_agent::credentials::{client_key, FailureLimit, Principal, EXTENSION_TOKEN_PREFIX};
use mimo_durable::{
    error_response, now_ms, query_param, AuthFailure, AuthFailureCount, Failure, Refusable,
    RegistryClient, Reply, TicketRedeem, TokenCheck,
};
use mimo_protocol::{ErrorCode, ErrorObject};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use worker::{Env, Request, Response, Result};

thread_local! {
    /// Clients this isolate knows to be over the failure limit, until when. The registry
    /// counts; this spares it (and the token check) the requests of a client it refused.
    static BLOCKED: RefCell<HashMap<String, u64>> = RefCell::new(HashMap::new());
    /// Clients whose right credential this isolate let in after the registry said they were not
    /// refused, and when it said so. A client can go over the limit at another isolate: a right
    /// guess here is let in only once the registry was asked, and asked again after
    /// [`VERIFIED_FOR_MS`].
    static VERIFIED: RefCell<HashMap<String, u64>> = RefCell::new(HashMap::new());
}

/// How long a registry's "not refused" holds in this isolate. A client over the limit at
/// another isolate has its next wrong guess here refused at once (the registry answers the
/// failure with the block); within this time only a right one still gets in.
const VERIFIED_FOR_MS: u64 = 10_000;

/// The most clients an isolate remembers as verified; past it, it forgets them all (and asks
/// again), so an address-rotating client cannot grow the map.
const MAX_VERIFIED: usize = 10_000;

/// The client failures are counted for: its address as Cloudflare saw it (set by the edge, not
/// by the client), an IPv6 address by its /64 ([`client_key`]); requests without it (local runs)
/// count as one client.
pub fn client_address(req: &Request) -> String {
    let address = req.headers().get("cf-connecting-ip").ok().flatten();
    address.map_or_else(|| "local".into(), |a| client_key(&a))
}

/// `RATE_LIMITED` (with `Retry-After`) while the client is over the limit.
pub fn refuse_if_blocked(client: &str) -> Option<Result<Response>> {
    let now = now_ms();
    let until = BLOCKED.with(|b| b.borrow().get(client).copied())?;
    if until <= now {
        BLOCKED.with(|b| b.borrow_mut().remove(client));
        return None;
    }
    Some(rate_limited(until, now))
}

fn rate_limited(until: u64, now: u64) -> Result<Response> {
    let seconds = until.saturating_sub(now).div_ceil(1000).max(1);
    let error = ErrorObject::new(
        ErrorCode::RateLimited,
        format!("too many failed authentications from this client; try again in {seconds} s"),
    );
    let response = error_response(&error)?;
    response
        .headers()
        .set("retry-after", &seconds.to_string())?;
    Ok(response)
}

/// `RATE_LIMITED` when the registry counts the client over the limit — asked before a right
/// credential is let in at an isolate that has not seen the client fail, so the limit holds
/// across isolates, not only in the one that refused the last guess.
pub async fn refuse_if_blocked_anywhere(env: &Env, client: &str) -> Result<Option<Response>> {
    let now = now_ms();
    let fresh = VERIFIED.with(|v| {
        v.borrow()
            .get(client)
            .is_some_and(|at| now.saturating_sub(*at) < VERIFIED_FOR_MS)
    });
    if fresh {
        return Ok(None);
    }
    let status = RegistryClient::new(env)?
        .auth_status(&limited(env, client))
        .await
        .refusal()?;
    if let Ok(AuthFailureCount {
        blocked_until: Some(until),
    }) = status
    {
        BLOCKED.with(|b| b.borrow_mut().insert(client.to_owned(), until));
        return rate_limited(until, now).map(Some);
    }
    VERIFIED.with(|v| {
        let mut verified = v.borrow_mut();
        if verified.len() >= MAX_VERIFIED {
            verified.clear();
        }
        verified.insert(client.to_owned(), now);
    });
    Ok(None)
}

/// Counts a failed authentication, and answers it: `UNAUTHORIZED` with the reason, or
/// `RATE_LIMITED` when this failure put the client over the limit.
pub async fn failed(env: &Env, client: &str, error: ErrorObject) -> Result<Response> {
    VERIFIED.with(|v| v.borrow_mut().remove(client));
    if let Ok(AuthFailureCount {
        blocked_until: Some(until),
    }) = RegistryClient::new(env)?
        .auth_failure(&limited(env, client))
        .await
        .refusal()?
    {
        BLOCKED.with(|b| b.borrow_mut().insert(client.to_owned(), until));
        return rate_limited(until, now_ms());
    }
    error_response(&error)
}

/// The client under the deployment's limit, as the registry counts it.
fn limited(env: &Env, client: &str) -> AuthFailure {
    let limit = failure_limit(env);
    AuthFailure {
        client: client.to_owned(),
        max_failures: limit.max_failures,
        window_ms: limit.window_ms,
    }
}

/// `MIMO_AUTH_MAX_FAILURES` per `MIMO_AUTH_FAILURE_WINDOW_MS`, where set.
fn failure_limit(env: &Env) -> FailureLimit {
    let defaults = FailureLimit::default();
    let number = |name| crate::number_setting(env, name);
    FailureLimit {
        max_failures: number("MIMO_AUTH_MAX_FAILURES")
            .map_or(defaults.max_failures, |n| n.min(u64::from(u32::MAX)) as u32),
        window_ms: number("MIMO_AUTH_FAILURE_WINDOW_MS").unwrap_or(defaults.window_ms),
    }
}

/// Who sent an HTTP API request, from its bearer token.
pub async fn from_bearer(req: &Request, env: &Env) -> Reply<Principal> {
    let expected = match env.secret("MIMO_API_TOKEN").map(|s| s.to_string()) {
        Ok(token) if !token.is_empty() => token,
        _ => return Err(Failure::Refused(unauthorized("this deployment has no MIMO_API_TOKEN set; set it with `wrangler secret put MIMO_API_TOKEN` (or in .dev.vars locally)"))),
    };
    let Some(presented) = bearer(req) else {
        return Err(Failure::Refused(unauthorized(
            "missing token: send `Authorization: Bearer <MIMO_API_TOKEN>`",
        )));
    };
    if tokens_match(&presented, &expected) {
        return Ok(Principal::Deployment);
    }
    if !presented.starts_with(EXTENSION_TOKEN_PREFIX) {
        return Err(Failure::Refused(unauthorized("wrong token")));
    }
    let check = TokenCheck { token: presented };
    let answer = RegistryClient::authenticate(env, &check).await?;
    Principal::decode(&answer.principal)
        .ok_or_else(|| Failure::Refused(unauthorized("unknown principal")))
}

/// Who opens a WebSocket, from its single-use `?ticket=`. A token in the URL is refused: it
/// would stay in logs and histories.
pub async fn from_ticket(req: &Request, env: &Env) -> Reply<Principal> {
    let url = req.url()?;
    let param = |name: &str| query_param(&url, name);
    if param("token").is_some() {
        return Err(Failure::Refused(unauthorized(
            "a token is not accepted in a URL; open the socket with ?ticket= from POST /api/ws-ticket",
        )));
    }
    let Some(ticket) = param("ticket") else {
        return Err(Failure::Refused(unauthorized(
            "missing ticket: open the socket with ?ticket= from POST /api/ws-ticket",
        )));
    };
    let answer = RegistryClient::new(env)?
        .redeem(&TicketRedeem { ticket })
        .await?;
    Principal::decode(&answer.principal)
        .ok_or_else(|| Failure::Refused(unauthorized("unknown principal")))
}

/// Compares digests in constant time, so neither the content nor the length of the token
/// leaks through timing.
fn tokens_match(presented: &str, expected: &str) -> bool {
    Sha256::digest(presented.as_bytes())
        .ct_eq(&Sha256::digest(expected.as_bytes()))
        .into()
}

pub fn bearer(req: &Request) -> Option<String> {
    let value = req.headers().get("authorization").ok().flatten()?;
    value.strip_prefix("Bearer ").map(|t| t.trim().to_owned())
}

pub fn unauthorized(message: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::Unauthorized, message)
}

pub fn forbidden(message: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::PermissionDenied, message)
}
