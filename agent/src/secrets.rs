//! Secrets typed by placeholder: the deployment's (`MIMO_SECRETS`), a task's own (stored
//! encrypted under `MIMO_SECRETS_KEY`), what the model is told of them (names and domains,
//! never values), and which value the extension may have for which page.
//!
//! The values live only here (the deployment's, in memory, from the environment), in the task's
//! SQLite as AES-256-GCM ciphertext, and in the extension for as long as it needs them to type
//! and to keep them out of what it sends. The model, the events, the exports and the logs see
//! `{{secret:name}}`.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use mimo_protocol::secrets::{
    placeholder, secret_allowed_at, valid_secret_domain, valid_secret_name, PutSecret, SecretValue,
};
use mimo_protocol::{ActionCommand, ErrorCode, ErrorObject, SecretInfo, SecretScope};
use sha2::{Digest, Sha256};

use crate::actions::{ActionRecord, ActionState};
use crate::llm;

/// A secret with its value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    pub name: String,
    pub value: String,
    pub domains: Vec<String>,
}

impl std::fmt::Debug for Secret {
    /// Never the value, so that no log or panic message can hold it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secret")
            .field("name", &self.name)
            .field("value", &"<redacted>")
            .field("domains", &self.domains)
            .finish()
    }
}

impl Secret {
    pub fn info(&self, scope: SecretScope) -> SecretInfo {
        SecretInfo {
            name: self.name.clone(),
            domains: self.domains.clone(),
            scope,
        }
    }
}

/// The key a task's secrets are encrypted under, from `MIMO_SECRETS_KEY` (any string of at
/// least 16 characters; its SHA-256 is the AES-256 key).
#[derive(Clone, PartialEq, Eq)]
pub struct SecretsKey([u8; 32]);

impl std::fmt::Debug for SecretsKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretsKey(<redacted>)")
    }
}

/// The shortest `MIMO_SECRETS_KEY` taken.
pub const MIN_KEY_CHARS: usize = 16;

impl SecretsKey {
    pub fn from_setting(raw: &str) -> Option<SecretsKey> {
        let raw = raw.trim();
        if raw.chars().count() < MIN_KEY_CHARS {
            return None;
        }
        let digest = Sha256::digest(raw.as_bytes());
        let mut key = [0u8; 32];
        key.copy_from_slice(digest.as_slice());
        Some(SecretsKey(key))
    }

    /// `value` encrypted with `nonce` (12 random bytes, never used twice with one key), bound
    /// to the secret's `name` (so a ciphertext moved to another name does not decrypt).
    pub fn seal(&self, nonce: [u8; 12], name: &str, value: &str) -> Vec<u8> {
        let cipher = Aes256Gcm::new_from_slice(&self.0).expect("a 32-byte key");
        cipher
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: value.as_bytes(),
                    aad: name.as_bytes(),
                },
            )
            .expect("AES-GCM encryption of a small value")
    }

    /// The value sealed by [`SecretsKey::seal`], or `None` when the key, the name or the bytes
    /// are not the ones it was sealed with.
    pub fn open(&self, nonce: &[u8], name: &str, sealed: &[u8]) -> Option<String> {
        if nonce.len() != 12 {
            return None;
        }
        let cipher = Aes256Gcm::new_from_slice(&self.0).ok()?;
        let plain = cipher
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: name.as_bytes(),
                },
            )
            .ok()?;
        String::from_utf8(plain).ok()
    }
}

/// The longest secret value taken, in bytes.
pub const MAX_SECRET_BYTES: usize = 4096;
/// The most domains one secret is bound to.
pub const MAX_SECRET_DOMAINS: usize = 20;

/// Checks a secret before it is stored: its name, its value (not empty, at most
/// [`MAX_SECRET_BYTES`]) and its domains (at least one, each a rule
/// [`mimo_protocol::secrets::SecretDomain`] reads).
pub fn check_secret(name: &str, put: &PutSecret) -> Result<(), ErrorObject> {
    let bad = |message: String| Err(ErrorObject::new(ErrorCode::SchemaValidationFailed, message));
    if !valid_secret_name(name) {
        return bad(format!(
            "{name:?} is not a secret name: 1 to 64 letters, digits, '_', '-' or '.'"
        ));
    }
    if put.value.is_empty() || put.value.len() > MAX_SECRET_BYTES {
        return bad(format!(
            "a secret's value must be 1 to {MAX_SECRET_BYTES} bytes"
        ));
    }
    if put.domains.is_empty() || put.domains.len() > MAX_SECRET_DOMAINS {
        return bad(format!(
            "a secret must be bound to 1 to {MAX_SECRET_DOMAINS} domains where it may be typed"
        ));
    }
    if let Some(domain) = put.domains.iter().find(|d| !valid_secret_domain(d)) {
        return bad(format!(
            "{domain:?} is not a domain: write a host (example.com: https on port 443), *.example.com for its subdomains too, host:port for another port, and http:// before it for plain http (http://127.0.0.1:8123)"
        ));
    }
    Ok(())
}

/// Reads `MIMO_SECRETS`: a JSON object `{"name": {"value": "…", "domains": ["example.com"]}}`.
/// A secret that is not right is left out with a message naming it (never its value); input
/// that is not such an object gives no secrets and a message.
pub fn parse_deployment_secrets(raw: &str) -> (Vec<Secret>, Vec<String>) {
    let mut problems = Vec::new();
    let object: serde_json::Map<String, serde_json::Value> = match serde_json::from_str(raw) {
        Ok(serde_json::Value::Object(object)) => object,
        _ => {
            return (
                Vec::new(),
                vec![
                    "MIMO_SECRETS is not a JSON object {\"name\": {\"value\": \"…\", \"domains\": [\"example.com\"]}}; no deployment secrets apply"
                        .into(),
                ],
            )
        }
    };
    let mut secrets = Vec::new();
    for (name, entry) in object {
        let put: PutSecret = match serde_json::from_value(entry) {
            Ok(put) => put,
            Err(_) => {
                problems.push(format!(
                    "MIMO_SECRETS: {name:?} is not {{\"value\": \"…\", \"domains\": [\"…\"]}}; it is left out"
                ));
                continue;
            }
        };
        match check_secret(&name, &put) {
            Ok(()) => secrets.push(Secret {
                name,
                value: put.value,
                domains: put.domains,
            }),
            Err(error) => problems.push(format!(
                "MIMO_SECRETS: {name:?} is left out: {}",
                error.message
            )),
        }
    }
    (secrets, problems)
}

/// Whether the extension may have the value of `name` now: only for the task's `browser_type`
/// action `action_id`, in flight in its attempt `attempt`, whose text holds the secret's
/// placeholder. A credential gets a secret while the agent types it, never by asking for it.
/// (Once per attempt is the store's to keep: it outlives this process.)
pub fn typing_waits_for(
    record: Option<&ActionRecord>,
    attempt: u32,
    name: &str,
) -> Result<(), ErrorObject> {
    let typing = record.is_some_and(|r| {
        r.attempt == attempt
            && matches!(r.state, ActionState::Sent | ActionState::Acked)
            && matches!(&r.command, ActionCommand::BrowserType { text, .. } if text.contains(&placeholder(name)))
    });
    if typing {
        Ok(())
    } else {
        Err(ErrorObject::new(
            ErrorCode::PermissionDenied,
            format!("no typing of this task is waiting for the secret {name:?}"),
        ))
    }
}

/// The value of `name` for typing into `url`, from the task's secrets (which win) or the
/// deployment's. Unknown: `TARGET_NOT_FOUND`; known but not bound to the page's domain:
/// `PERMISSION_DENIED`. Neither names other secrets or the domains: a refused caller learns
/// nothing it did not send.
pub fn resolve(
    name: &str,
    url: &str,
    task: &[Secret],
    deployment: &[Secret],
) -> Result<SecretValue, ErrorObject> {
    let found = task
        .iter()
        .find(|s| s.name == name)
        .or_else(|| deployment.iter().find(|s| s.name == name));
    let Some(secret) = found else {
        return Err(ErrorObject::new(
            ErrorCode::TargetNotFound,
            format!("there is no secret named {name:?}"),
        ));
    };
    if !secret_allowed_at(&secret.domains, url) {
        return Err(ErrorObject::new(
            ErrorCode::PermissionDenied,
            format!(
                "the secret {name:?} may not be typed on {}",
                page_origin(url)
            ),
        ));
    }
    Ok(SecretValue {
        name: secret.name.clone(),
        value: secret.value.clone(),
        domains: secret.domains.clone(),
    })
}

/// The scheme and host of a URL (no path or query, which may hold anything).
fn page_origin(url: &str) -> String {
    let end = url
        .find("://")
        .map(|i| i + 3)
        .and_then(|start| url[start..].find(['/', '?', '#']).map(|e| start + e))
        .unwrap_or(url.len());
    url[..end.min(200)].to_owned()
}

/// What the model is told of the secrets: their names and domains and how to type them.
pub fn secrets_note(secrets: &[SecretInfo]) -> Option<llm::ChatMessage> {
    if secrets.is_empty() {
        return None;
    }
    let mut note = String::from(
        "<secrets>\nThe user stored these secrets. You never see their values: to type one, write \
         its placeholder in the text of a type action, e.g. {\"type\": {\"index\": 3, \"text\": \
         \"{{secret:name}}\"}}; it is replaced at the moment of typing, and only on the domains \
         listed. Never ask for a value, and never write it anywhere else.\n",
    );
    for s in secrets {
        note.push_str(&format!(
            "- {} (on {})\n",
            placeholder(&s.name),
            s.domains.join(", ")
        ));
    }
    note.push_str("</secrets>");
    Some(llm::ChatMessage::system(note))
}

/// The secrets a task's model is told of: the task's own, then the deployment's that no task
/// secret of the same name hides.
pub fn infos(task: &[SecretInfo], deployment: &[Secret]) -> Vec<SecretInfo> {
    let mut all = task.to_vec();
    for secret in deployment {
        if !all.iter().any(|s| s.name == secret.name) {
            all.push(secret.info(SecretScope::Deployment));
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(name: &str, value: &str, domains: &[&str]) -> Secret {
        Secret {
            name: name.into(),
            value: value.into(),
            domains: domains.iter().map(|d| d.to_string()).collect(),
        }
    }

    #[test]
    fn a_value_is_given_only_for_the_typing_in_flight_that_holds_its_placeholder() {
        let typing = |text: &str, state, attempt| {
            let command: ActionCommand = serde_json::from_value(serde_json::json!({
                "name": "browser_type", "params": { "clickId": 2, "text": text }
            }))
            .unwrap();
            let mut queue = crate::actions::ActionQueue::default();
            queue.submit("a1".into(), "t".into(), "c".into(), Some(1), command, 0);
            let mut record = queue.get("a1").unwrap().clone();
            record.state = state;
            record.attempt = attempt;
            record
        };
        let waiting = typing("user {{secret:pw}}", ActionState::Acked, 2);
        assert!(typing_waits_for(Some(&waiting), 2, "pw").is_ok());
        assert!(typing_waits_for(Some(&typing("x", ActionState::Sent, 1)), 1, "pw").is_err());
        for (record, attempt, name) in [
            (None, 1, "pw"),
            (Some(&waiting), 1, "pw"),
            (Some(&waiting), 2, "other"),
            (Some(&waiting), 2, "p"),
        ] {
            let refused = typing_waits_for(record, attempt, name).unwrap_err();
            assert_eq!(refused.code, ErrorCode::PermissionDenied);
        }
        for state in [
            ActionState::Pending,
            ActionState::Checking,
            ActionState::Succeeded,
            ActionState::Failed,
            ActionState::TimedOut,
            ActionState::Canceled,
        ] {
            let ended = typing("{{secret:pw}}", state, 1);
            assert!(
                typing_waits_for(Some(&ended), 1, "pw").is_err(),
                "{state:?}"
            );
        }
        let other = serde_json::json!({ "name": "browser_navigate", "params": { "url": "https://x.test/{{secret:pw}}" } });
        let mut queue = crate::actions::ActionQueue::default();
        queue.submit(
            "n".into(),
            "t".into(),
            "c".into(),
            None,
            serde_json::from_value(other).unwrap(),
            0,
        );
        let mut navigate = queue.get("n").unwrap().clone();
        navigate.state = ActionState::Acked;
        assert!(typing_waits_for(Some(&navigate), navigate.attempt, "pw").is_err());
    }

    #[test]
    fn deployment_secrets_are_read_and_bad_ones_named_without_their_values() {
        let (secrets, problems) = parse_deployment_secrets(
            r#"{"pw": {"value": "hunter2-secret", "domains": ["example.com", "*.example.org"]},
                "bad name": {"value": "v1-secret", "domains": ["example.com"]},
                "nodomain": {"value": "v2-secret", "domains": []},
                "baddomain": {"value": "v3-secret", "domains": ["https://x.test/"]},
                "shape": "v4-secret"}"#,
        );
        assert_eq!(
            secrets,
            vec![secret(
                "pw",
                "hunter2-secret",
                &["example.com", "*.example.org"]
            )]
        );
        assert_eq!(problems.len(), 4, "{problems:?}");
        for p in &problems {
            assert!(!p.contains("-secret"), "a value in a warning: {p}");
        }
        let (none, problems) = parse_deployment_secrets("not json hunter2");
        assert!(none.is_empty());
        assert!(!problems[0].contains("hunter2"));
        // Debug output never shows a value either.
        assert!(!format!("{secrets:?}").contains("hunter2"));
    }

    #[test]
    fn a_sealed_value_opens_only_with_its_key_nonce_and_name() {
        let key = SecretsKey::from_setting("a key of sixteen chars or more").unwrap();
        let other = SecretsKey::from_setting("another key, also long enough").unwrap();
        assert!(SecretsKey::from_setting("short").is_none());
        let nonce = [7u8; 12];
        let sealed = key.seal(nonce, "pw", "correct horse battery staple");
        assert!(!sealed
            .windows(7)
            .any(|w| w == b"correct" || w == b"battery"));
        assert_eq!(
            key.open(&nonce, "pw", &sealed).as_deref(),
            Some("correct horse battery staple")
        );
        assert_eq!(other.open(&nonce, "pw", &sealed), None);
        assert_eq!(key.open(&[8u8; 12], "pw", &sealed), None);
        assert_eq!(key.open(&nonce, "other", &sealed), None);
        let mut tampered = sealed.clone();
        tampered[0] ^= 1;
        assert_eq!(key.open(&nonce, "pw", &tampered), None);
        assert!(!format!("{key:?}").contains('7'));
    }

    #[test]
    fn a_value_is_given_only_on_its_domains_and_a_refusal_names_no_other_secret_or_domain() {
        let task = [secret("pw", "task-value", &["http://127.0.0.1:8080"])];
        let deployment = [
            secret("pw", "deployment-value", &["example.com"]),
            secret("api", "key-value", &["*.example.com"]),
        ];
        let got = resolve("pw", "http://127.0.0.1:8080/login", &task, &deployment).unwrap();
        assert_eq!(
            got.value, "task-value",
            "the task's secret hides the deployment's"
        );
        let refused = resolve(
            "pw",
            "https://example.com/login?next=/x",
            &task,
            &deployment,
        )
        .unwrap_err();
        assert_eq!(refused.code, ErrorCode::PermissionDenied);
        assert!(
            !refused.message.contains("127.0.0.1:8080"),
            "{}",
            refused.message
        );
        assert!(!refused.message.contains("next="), "{}", refused.message);
        assert!(!refused.message.contains("value"), "{}", refused.message);
        assert_eq!(
            resolve("api", "https://api.example.com/", &task, &deployment)
                .unwrap()
                .value,
            "key-value"
        );
        let unknown = resolve("nope", "https://example.com/", &task, &deployment).unwrap_err();
        assert_eq!(unknown.code, ErrorCode::TargetNotFound);
        assert!(!unknown.message.contains("api"), "{}", unknown.message);
        assert!(!unknown.message.contains("pw"), "{}", unknown.message);
        assert!(!unknown.message.contains("value"));
    }

    #[test]
    fn the_model_is_told_names_and_domains_never_values() {
        let deployment = [secret("pw", "s3cr3t-value", &["example.com"])];
        let task = [SecretInfo {
            name: "api".into(),
            domains: vec!["*.example.org".into()],
            scope: SecretScope::Task,
        }];
        let all = infos(&task, &deployment);
        let note = secrets_note(&all).unwrap();
        let text = format!("{note:?}");
        assert!(text.contains("{{secret:pw}} (on example.com)"), "{text}");
        assert!(text.contains("{{secret:api}} (on *.example.org)"), "{text}");
        assert!(!text.contains("s3cr3t"));
        assert!(secrets_note(&[]).is_none());
    }

    #[test]
    fn secrets_to_store_are_checked() {
        let put = |value: &str, domains: &[&str]| PutSecret {
            value: value.into(),
            domains: domains.iter().map(|d| d.to_string()).collect(),
        };
        assert!(check_secret("pw", &put("x", &["example.com"])).is_ok());
        assert!(check_secret("p w", &put("x", &["example.com"])).is_err());
        assert!(check_secret("pw", &put("", &["example.com"])).is_err());
        assert!(check_secret("pw", &put("x", &[])).is_err());
        assert!(check_secret("pw", &put("x", &["http://127.0.0.1:8123"])).is_ok());
        assert!(check_secret("pw", &put("x", &["ftp://example.com"])).is_err());
        assert!(check_secret("pw", &put("x", &["https://example.com/"])).is_err());
        assert!(check_secret("pw", &put(&"x".repeat(5000), &["example.com"])).is_err());
    }
}
