//! One MCP session's rules: who may use it, in which revision, and what a request that does not
//! fit is answered (the Streamable HTTP transport's 400 and 404).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::version_header_problem;

/// A session as its Durable Object keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub session_id: String,
    /// The MCP token that opened it: only that token's requests reach it.
    pub token_id: String,
    /// The revision negotiated at `initialize`.
    pub version: String,
    /// The Mimo task its tool calls act in, made at the first tool call.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Whether the task's tab was opened (by the session's first navigation).
    #[serde(default)]
    pub started: bool,
    /// The task's tab ids as last listed to the client: what `browser_tabs`' indexes name.
    #[serde(default)]
    pub tabs: Vec<i32>,
    /// Whether the client takes the server's forms ([`super::elicit`]): a step the person must
    /// confirm is then asked there.
    #[serde(default)]
    pub elicitation: bool,
    /// The extension (browser) the task's actions ran in last.
    #[serde(default)]
    pub client_id: Option<String>,
    /// The tasks `run_task` started in this session, oldest first: the only ones its other run
    /// tools reach.
    #[serde(default)]
    pub runs: Vec<super::runs::SessionRun>,
    pub created_at: u64,
    #[serde(default)]
    pub ended_at: Option<u64>,
    /// When a request last reached it (0: none since it was made).
    #[serde(default)]
    pub last_used_at: u64,
}

/// How long a session lasts unused when the deployment does not say
/// (`MIMO_MCP_SESSION_IDLE_SECS`): a day. After that it is gone (404), and the client
/// initializes a new one, as the transport asks of it.
pub const SESSION_IDLE_SECS: u64 = 24 * 60 * 60;

impl Session {
    /// Whether a request with `token_id`'s token may use it: the token that opened it, and it
    /// has not ended. Any other client is told there is no such session (404).
    pub fn held_by(&self, token_id: &str) -> bool {
        self.ended_at.is_none() && self.token_id == token_id
    }

    /// Whether it went unused for longer than `idle_ms` before `now`: expired, as if it never
    /// was (its client gets 404 and starts a new one).
    pub fn expired(&self, now: u64, idle_ms: u64) -> bool {
        now.saturating_sub(self.last_used_at.max(self.created_at)) > idle_ms
    }
}

/// Why a request cannot use a session, as the transport answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 400: the request is not one the session can take (its `MCP-Protocol-Version`, a second
    /// `initialize`, no session named).
    BadRequest(String),
    /// 404: no such session for this client, or it ended: the client starts a new one.
    NotFound,
}

/// Whether a request may go to the session stored as `session` (none: never initialized here):
/// a request other than `initialize` needs a live session opened by the same token, and its
/// version header must be the session's; `initialize` only starts a session not yet begun.
pub fn admit(
    session: Option<&Session>,
    initialize: bool,
    named: bool,
    token_id: &str,
    version_header: Option<&str>,
) -> Result<(), Refusal> {
    match session {
        None if initialize && !named => Ok(()),
        None if !named => Err(Refusal::BadRequest(
            "send the Mcp-Session-Id header that initialize answered with (or initialize first)"
                .into(),
        )),
        None => Err(Refusal::NotFound),
        Some(s) if !s.held_by(token_id) => Err(Refusal::NotFound),
        Some(_) if initialize => Err(Refusal::BadRequest(
            "this session is initialized already: initialize without an Mcp-Session-Id for a \
             new one"
                .into(),
        )),
        Some(s) => match version_header_problem(version_header, &s.version) {
            Some(problem) => Err(Refusal::BadRequest(problem)),
            None => Ok(()),
        },
    }
}

/// The task a session's tool calls act in, named by the session (a UUID from a digest of its
/// id): tool calls sent at once as its first all make the same task (making one is idempotent),
/// never one each with the session keeping whichever saved last.
pub fn task_id_for(session_id: &str) -> String {
    let digest = Sha256::digest(format!("mimo mcp session task\n{session_id}"));
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    // Version 4 and the RFC 4122 variant, as every other task id is.
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex = hex::encode(bytes);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sessions_task_is_named_by_the_session_as_a_canonical_uuid() {
        let a = task_id_for("5f3c0a");
        assert_eq!(
            a,
            task_id_for("5f3c0a"),
            "the same for every call of the session"
        );
        assert_ne!(a, task_id_for("5f3c0b"), "another session, another task");
        assert!(mimo_protocol::artifact::TaskId::parse(&a).is_ok(), "{a}");
        assert_eq!(&a[14..15], "4");
    }

    fn live() -> Session {
        Session {
            session_id: "s".into(),
            token_id: "tok-a".into(),
            version: "2025-06-18".into(),
            task_id: None,
            started: false,
            tabs: Vec::new(),
            elicitation: false,
            client_id: None,
            runs: Vec::new(),
            created_at: 1,
            ended_at: None,
            last_used_at: 0,
        }
    }

    #[test]
    fn a_session_unused_for_longer_than_its_idle_time_expires() {
        let session = live();
        assert!(!session.expired(1_001, 1_000), "used (made) at 1");
        assert!(session.expired(1_002, 1_000));
        let used = Session {
            last_used_at: 5_000,
            ..live()
        };
        assert!(
            !used.expired(6_000, 1_000),
            "each request starts the wait again"
        );
        assert!(used.expired(6_001, 1_000));
    }

    #[test]
    fn a_session_takes_its_own_tokens_requests_in_its_own_revision() {
        let session = live();
        assert_eq!(
            admit(Some(&session), false, true, "tok-a", Some("2025-06-18")),
            Ok(())
        );
        assert_eq!(admit(Some(&session), false, true, "tok-a", None), Ok(()));
        assert!(matches!(
            admit(Some(&session), false, true, "tok-a", Some("2025-11-25")),
            Err(Refusal::BadRequest(_))
        ));
        assert!(matches!(
            admit(Some(&session), false, true, "tok-a", Some("1999-01-01")),
            Err(Refusal::BadRequest(_))
        ));
        // Another client's token does not learn the session exists.
        assert_eq!(
            admit(Some(&session), false, true, "tok-b", Some("2025-06-18")),
            Err(Refusal::NotFound)
        );
        assert!(matches!(
            admit(Some(&session), true, true, "tok-a", None),
            Err(Refusal::BadRequest(_))
        ));
        let ended = Session {
            ended_at: Some(2),
            ..live()
        };
        assert_eq!(
            admit(Some(&ended), false, true, "tok-a", None),
            Err(Refusal::NotFound)
        );
    }

    #[test]
    fn only_initialize_starts_a_session_and_others_must_name_one() {
        assert_eq!(admit(None, true, false, "tok-a", None), Ok(()));
        assert!(matches!(
            admit(None, false, false, "tok-a", None),
            Err(Refusal::BadRequest(_))
        ));
        assert_eq!(
            admit(None, false, true, "tok-a", None),
            Err(Refusal::NotFound)
        );
        assert_eq!(
            admit(None, true, true, "tok-a", None),
            Err(Refusal::NotFound)
        );
    }
}
