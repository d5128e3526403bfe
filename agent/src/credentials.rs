//! Who may talk to this deployment, decided without I/O: the one-time pairing codes that give
//! an extension a credential of its own, those credentials and the short-lived WebSocket
//! tickets (only their SHA-256 is ever stored), and the limit on failed authentications.
//!
//! The deployment token (`MIMO_API_TOKEN`) opens the web app and the HTTP API. An extension
//! never holds it: the person shows a pairing code in the web app, types it into the
//! extension's options page, and the extension trades it for a token bound to its client id,
//! which can be revoked on its own. Sockets authenticate with a ticket bought with either
//! token, so no long-lived secret travels in a URL.

use mimo_protocol::{ClientId, ErrorCode, ErrorObject, FrontendMessage};
use sha2::{Digest, Sha256};

/// How long a pairing code can be used.
pub const PAIRING_CODE_TTL_MS: u64 = 10 * 60_000;
/// How long a WebSocket ticket can be used (once).
pub const TICKET_TTL_MS: u64 = 60_000;

/// Characters of a pairing code: no 0/O, 1/I/L, so a code read aloud or off a screen is typed
/// right.
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/// Characters in a code (31^8 ≈ 8.5e11 codes; with the failure limit, out of reach of guessing
/// within its ten minutes).
const CODE_LENGTH: usize = 8;

/// Every extension token starts with this, so the worker can tell one from the deployment token
/// without a lookup, and a leaked one is recognizable in logs and secret scanners.
pub const EXTENSION_TOKEN_PREFIX: &str = "mimo_ext_";
/// Every MCP token (a client's credential for `/mcp`, made in the web app) starts with this.
pub const MCP_TOKEN_PREFIX: &str = "mimo_mcp_";
/// Every ticket starts with this.
pub const TICKET_PREFIX: &str = "mimo_tkt_";
/// The start of a client id the server gives an extension at pairing (random after it).
const CLIENT_ID_PREFIX: &str = "ext-";

/// Hex SHA-256: how codes, tokens and tickets are stored and looked up.
pub fn digest(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// A pairing code from random bytes (at least [`CODE_LENGTH`]), shown as `ABCD-EFGH`.
pub fn pairing_code(random: &[u8]) -> String {
    assert!(
        random.len() >= CODE_LENGTH,
        "a pairing code needs {CODE_LENGTH} random bytes"
    );
    let chars: String = random[..CODE_LENGTH]
        .iter()
        // 256 is not a multiple of 31: the first characters are a little likelier, which costs
        // less than a bit of the code's 39.
        .map(|b| CODE_ALPHABET[usize::from(*b) % CODE_ALPHABET.len()] as char)
        .collect();
    format!("{}-{}", &chars[..4], &chars[4..])
}

/// A code as the person typed it (any case, with or without the dash or spaces) in the form it
/// was issued in, or `None` when it cannot be one.
pub fn normalize_pairing_code(typed: &str) -> Option<String> {
    let chars: String = typed
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    let valid = chars.len() == CODE_LENGTH && chars.bytes().all(|b| CODE_ALPHABET.contains(&b));
    valid.then(|| format!("{}-{}", &chars[..4], &chars[4..]))
}

/// A secret with `prefix` from random bytes (URL-safe: hex).
pub fn secret(prefix: &str, random: &[u8]) -> String {
    format!("{prefix}{}", hex::encode(random))
}

/// An extension's token, from random bytes: `mimo_ext_<client id>.<hex>`. It names its client,
/// so the worker checks it at that client's own registry object (which keeps its digest), not at
/// the deployment's directory: an extension's requests (every step's uploads, every poll) touch
/// no object but its own.
pub fn extension_token(client_id: &ClientId, random: &[u8]) -> String {
    format!(
        "{EXTENSION_TOKEN_PREFIX}{client_id}.{}",
        hex::encode(random)
    )
}

/// The client an extension token names ([`extension_token`]), where it checks; `None` for a
/// token issued before tokens named theirs (the directory checks those) or one that cannot be
/// one. A name is only where to look: the client's object admits the token only if its digest
/// is the one it was told at pairing ([`crate::registry::sharding::admits`]).
pub fn token_client(token: &str) -> Option<ClientId> {
    let (client, random) = token
        .strip_prefix(EXTENSION_TOKEN_PREFIX)?
        .split_once('.')?;
    let random_is_hex = !random.is_empty() && random.bytes().all(|b| b.is_ascii_hexdigit());
    random_is_hex
        .then(|| ClientId::parse(client).ok())
        .flatten()
}

/// The client id pairing gives an extension, from random bytes.
pub fn new_client_id(random: &[u8]) -> ClientId {
    ClientId::parse(&secret(CLIENT_ID_PREFIX, random)).expect("a prefix and hex make a client id")
}

/// Who a ticket was bought by, and so what socket it opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// The deployment token's holder: the web app and scripts.
    Deployment,
    /// A paired extension.
    Extension { client_id: ClientId },
}

impl Principal {
    /// As stored with a ticket.
    pub fn encode(&self) -> String {
        match self {
            Principal::Deployment => "deployment".into(),
            Principal::Extension { client_id } => format!("extension:{client_id}"),
        }
    }

    pub fn decode(stored: &str) -> Option<Principal> {
        match stored.split_once(':') {
            None if stored == "deployment" => Some(Principal::Deployment),
            Some(("extension", client_id)) => ClientId::parse(client_id)
                .ok()
                .map(|client_id| Principal::Extension { client_id }),
            _ => None,
        }
    }
}

/// Who opened one of a task's viewer sockets (`/ws/web`), and so what it may send there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Viewer {
    /// The web app, under the deployment token: the person's every control.
    WebApp,
    /// The side panel of the task's own browser, under its extension's credential: the
    /// conversation and the run (say, pause, stop, take over, confirm), never the task's
    /// settings. A stolen extension credential must not widen what the task may do: turn the
    /// bridge on, allow sites, end step-by-step, or move the task to another browser.
    SidePanel,
}

impl Viewer {
    /// Why this viewer may not send `message`, if it may not.
    pub fn refuses(self, message: &FrontendMessage) -> Option<ErrorObject> {
        let setting = match (self, message) {
            (Viewer::WebApp, _) => return None,
            (_, FrontendMessage::SetBridge { .. }) => "the bridge",
            (_, FrontendMessage::SetDomains { .. }) => "the task's sites",
            (_, FrontendMessage::SetStepMode { .. }) => "step by step",
            (_, FrontendMessage::SelectClient { .. }) => "the task's browser",
            _ => return None,
        };
        Some(ErrorObject::new(
            ErrorCode::PermissionDenied,
            format!("the side panel cannot change {setting}: change it in the web app"),
        ))
    }

    /// Who answers a confirmation on this socket.
    pub fn confirmer(self) -> Confirmer {
        match self {
            Viewer::WebApp => Confirmer::Web,
            Viewer::SidePanel => Confirmer::Extension,
        }
    }
}

/// Where the person (or a script) answered a confirmation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confirmer {
    /// The web app's socket.
    Web,
    /// The extension's side panel.
    Extension,
    /// A script, through `POST /api/agent/confirm`: it may decline what the rating asks, never
    /// approve what only the person may.
    Api,
}

impl Confirmer {
    /// The name the task's history gives it (`ConfirmationAnswered.by`).
    pub fn name(self) -> &'static str {
        match self {
            Confirmer::Web => "web",
            Confirmer::Extension => "extension",
            Confirmer::Api => "api",
        }
    }
}

/// The limit on failed authentications per client (address): at most `max_failures` in a
/// window of `window_ms`; past it, the client is refused until the window ends, whatever it
/// sends — so a guess that would have been right is not even looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailureLimit {
    pub max_failures: u32,
    pub window_ms: u64,
}

impl Default for FailureLimit {
    fn default() -> Self {
        FailureLimit {
            max_failures: 20,
            window_ms: 60_000,
        }
    }
}

/// One client's failures in its current window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failures {
    pub window_start: u64,
    pub count: u32,
}

impl FailureLimit {
    /// Counts one more failure: the client's new record, and until when it is refused (if it
    /// is now over the limit).
    pub fn fail(&self, before: Option<Failures>, now: u64) -> (Failures, Option<u64>) {
        let current = match before {
            Some(f) if now < f.window_start + self.window_ms => Failures {
                window_start: f.window_start,
                count: f.count.saturating_add(1),
            },
            _ => Failures {
                window_start: now,
                count: 1,
            },
        };
        (current, self.blocked_until(current, now))
    }

    /// Until when a client with these failures is refused, if it is.
    pub fn blocked_until(&self, failures: Failures, now: u64) -> Option<u64> {
        let end = failures.window_start + self.window_ms;
        (failures.count > self.max_failures && now < end).then_some(end)
    }
}

/// The key a client's failed authentications are counted under: an IPv4 address as it is, an
/// IPv6 address by its /64 (one subscriber holds a whole /64, so counting single addresses
/// would give a guesser 2^64 fresh counters).
pub fn client_key(address: &str) -> String {
    match address.trim().parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(v6)) if v6.to_ipv4_mapped().is_none() => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
        Ok(std::net::IpAddr::V6(v6)) => v6.to_ipv4_mapped().expect("mapped").to_string(),
        Ok(v4) => v4.to_string(),
        Err(_) => address.trim().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ipv6_clients_are_counted_by_their_64_and_ipv4_by_address() {
        use super::client_key;
        assert_eq!(client_key("2001:db8:1:2::1"), "2001:db8:1:2::/64");
        assert_eq!(
            client_key("2001:0db8:0001:0002:ffff:ffff:ffff:ffff"),
            "2001:db8:1:2::/64"
        );
        assert_ne!(client_key("2001:db8:1:3::1"), client_key("2001:db8:1:2::1"));
        assert_eq!(client_key("203.0.113.7"), "203.0.113.7");
        assert_eq!(client_key("::ffff:203.0.113.7"), "203.0.113.7");
        assert_eq!(client_key("local"), "local");
    }

    use super::*;

    #[test]
    fn pairing_codes_read_unambiguously_and_are_typed_loosely() {
        let code = pairing_code(&[0, 1, 2, 3, 30, 31, 255, 128, 9]);
        assert_eq!(code, "ABCD-9AHE");
        assert!(!code.contains(['0', 'O', '1', 'I', 'L']));
        assert_eq!(normalize_pairing_code(" abcd 9ahe "), Some(code.clone()));
        assert_eq!(normalize_pairing_code("ABCD9AHE"), Some(code));
        for wrong in [
            "",
            "ABCD-9AB",
            "ABCD-9ABAA",
            "ABCD-0ABA",
            "ABCD-9AB!",
            "ÄBCD-9ABA",
        ] {
            assert_eq!(normalize_pairing_code(wrong), None, "{wrong:?}");
        }
    }

    #[test]
    fn extension_tokens_name_their_client() {
        let client = new_client_id(&[0x11; 16]);
        let token = extension_token(&client, &[0xab; 32]);
        assert!(token.starts_with("mimo_ext_ext-1111"));
        assert_eq!(token_client(&token), Some(client.clone()));
        assert_ne!(token, extension_token(&client, &[0xac; 32]));
        // A token from before tokens named their client, and what cannot be a token, are
        // checked at the directory (which knows none of the latter).
        for other in [
            secret(EXTENSION_TOKEN_PREFIX, &[0xab; 32]).as_str(),
            "mimo_ext_",
            "mimo_ext_.abcd",
            "mimo_ext_ext-11.",
            "mimo_ext_ext-11.not-hex",
            "mimo_ext_ext/11.abcd",
            "mimo_ext_ext 11.abcd",
            "mimo_mcp_ext-11.abcd",
            "ext-11.abcd",
        ] {
            assert_eq!(token_client(other), None, "{other}");
        }
        // The client part names where it is checked, nothing more: a made-up secret under a
        // real client's name is only sent to that client's object, which refuses it.
        assert_eq!(
            token_client(&format!("mimo_ext_{client}.{}", "0".repeat(64))),
            Some(client)
        );
    }

    #[test]
    fn secrets_are_stored_as_digests_only() {
        let token = secret(EXTENSION_TOKEN_PREFIX, &[0xab; 32]);
        assert_eq!(token.len(), EXTENSION_TOKEN_PREFIX.len() + 64);
        assert!(token.starts_with("mimo_ext_abab"));
        let stored = digest(&token);
        assert_eq!(stored.len(), 64);
        assert_ne!(stored, digest(&secret(EXTENSION_TOKEN_PREFIX, &[0xac; 32])));
        assert!(!stored.contains("abababab"), "the digest, not the token");
    }

    #[test]
    fn principals_survive_storage() {
        for p in [
            Principal::Deployment,
            Principal::Extension {
                client_id: ClientId::parse("c-1").unwrap(),
            },
        ] {
            assert_eq!(Principal::decode(&p.encode()), Some(p));
        }
        assert_eq!(Principal::decode("extension:"), None);
        assert_eq!(Principal::decode("extension:a/b"), None);
        assert_eq!(Principal::decode("root"), None);
    }

    #[test]
    fn failures_over_the_limit_block_the_client_until_its_window_ends() {
        let limit = FailureLimit {
            max_failures: 3,
            window_ms: 1_000,
        };
        let mut record = None;
        for at in [100, 200, 300] {
            let (next, blocked) = limit.fail(record, at);
            assert_eq!(blocked, None, "failure at {at} is within the limit");
            record = Some(next);
        }
        let (next, blocked) = limit.fail(record, 400);
        assert_eq!(
            blocked,
            Some(1_100),
            "the fourth failure blocks until the window ends"
        );
        assert_eq!(limit.blocked_until(next, 1_099), Some(1_100));
        assert_eq!(limit.blocked_until(next, 1_100), None);
        // A new window starts afresh.
        let (fresh, blocked) = limit.fail(Some(next), 1_100);
        assert_eq!((fresh.count, blocked), (1, None));
    }

    #[test]
    fn a_side_panel_runs_the_task_but_never_changes_its_settings() {
        let settings = [
            FrontendMessage::SetBridge {
                allow: true,
                confirm: false,
            },
            FrontendMessage::SetDomains {
                allowed: vec!["attacker.example".into()],
                blocked: vec![],
            },
            FrontendMessage::SetStepMode {
                step_by_step: false,
            },
            FrontendMessage::SelectClient {
                client_id: "ext-other".into(),
            },
        ];
        for message in &settings {
            let refusal = Viewer::SidePanel.refuses(message).expect("refused");
            assert_eq!(refusal.code, ErrorCode::PermissionDenied);
            assert_eq!(Viewer::WebApp.refuses(message), None);
        }
        let run = [
            FrontendMessage::UserMessage {
                content: "go on".into(),
                client_message_id: None,
                answer_schema: None,
            },
            FrontendMessage::Pause {},
            FrontendMessage::TakeOver {},
            FrontendMessage::Resume {},
            FrontendMessage::Stop {},
            FrontendMessage::Confirm {
                step: 1,
                approve: true,
                reason: None,
            },
        ];
        for message in &run {
            assert_eq!(Viewer::SidePanel.refuses(message), None);
        }
        assert_eq!(Viewer::SidePanel.confirmer().name(), "extension");
        assert_eq!(Viewer::WebApp.confirmer().name(), "web");
    }
}
