//! The deployment's shared secret (`MIMO_API_TOKEN`) guards every API route and socket.

use mimo_protocol::{ErrorCode, ErrorObject};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use worker::{Env, Request};

/// Accepts `Authorization: Bearer <token>`, or `?token=` for WebSockets, whose browser API
/// cannot set headers.
pub fn check(req: &Request, env: &Env) -> Result<(), ErrorObject> {
    let expected = env
        .secret("MIMO_API_TOKEN")
        .map(|s| s.to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| unauthorized("this deployment has no MIMO_API_TOKEN set; set it with `wrangler secret put MIMO_API_TOKEN` (or in .dev.vars locally)"))?;
    let presented = bearer(req).or_else(|| query_token(req)).ok_or_else(|| {
        unauthorized("missing token: send `Authorization: Bearer <MIMO_API_TOKEN>` (or `?token=` on WebSockets)")
    })?;
    if tokens_match(&presented, &expected) {
        Ok(())
    } else {
        Err(unauthorized("wrong token"))
    }
}

/// Compares digests in constant time, so neither the content nor the length of the token
/// leaks through timing.
fn tokens_match(presented: &str, expected: &str) -> bool {
    Sha256::digest(presented.as_bytes())
        .ct_eq(&Sha256::digest(expected.as_bytes()))
        .into()
}

fn bearer(req: &Request) -> Option<String> {
    let value = req.headers().get("authorization").ok().flatten()?;
    value.strip_prefix("Bearer ").map(|t| t.trim().to_owned())
}

fn query_token(req: &Request) -> Option<String> {
    let url = req.url().ok()?;
    url.query_pairs()
        .find(|(k, _)| k == "token")
        .map(|(_, v)| v.into_owned())
}

fn unauthorized(message: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::Unauthorized, message)
}
