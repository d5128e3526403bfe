//! Secrets typed by placeholder, and what personal data is kept out of evidence.
//!
//! A secret is a named value (a password, an API key) bound to the domains where it may be
//! typed. The model only ever sees its name and writes `{{secret:name}}` in a `type` action; the
//! extension asks the task for the value at the moment of typing, for the page it is about to
//! type into, and the task answers only when that page is on one of the secret's domains.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a secret comes from: the deployment (`MIMO_SECRETS`) or the task (the web app).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SecretScope {
    Deployment,
    Task,
}

/// A secret as anyone but the extension at the moment of typing sees it: its name and domains,
/// never its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SecretInfo {
    pub name: String,
    pub domains: Vec<String>,
    pub scope: SecretScope,
}

/// `PUT /api/task/{taskId}/secrets/{name}`: a task's own secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PutSecret {
    pub value: String,
    pub domains: Vec<String>,
}

/// `POST /api/task/{taskId}/secret-value` (the extension, with its own credential): the value
/// of `name` for typing into the page at `url`, for the `browser_type` action `action_id` in
/// its attempt `attempt`, whose text holds the secret's placeholder. Answered once per attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SecretValueRequest {
    pub name: String,
    pub url: String,
    pub action_id: String,
    pub attempt: u32,
}

/// The answer to a [`SecretValueRequest`]: the value, and the domains it is bound to (the
/// extension checks the tab's address against them again before typing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SecretValue {
    pub name: String,
    pub value: String,
    pub domains: Vec<String>,
}

/// The placeholder the model writes for a secret.
pub fn placeholder(name: &str) -> String {
    format!("{{{{secret:{name}}}}}")
}

/// The names of the `{{secret:name}}` placeholders in `text`, in order, each once.
pub fn placeholders(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{secret:") {
        let after = &rest[start + "{{secret:".len()..];
        let Some(end) = after.find("}}") else { break };
        let name = after[..end].trim();
        if valid_secret_name(name) && !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
        rest = &after[end..];
    }
    names
}

/// A secret's name: 1 to 64 letters, digits, `_`, `-` or `.`.
pub fn valid_secret_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// A domain a secret may be bound to: `example.com` (that host, on any port), `*.example.com`
/// (the host and every subdomain) or `host:port` (that host on that port only).
pub fn valid_secret_domain(domain: &str) -> bool {
    let host = domain.strip_prefix("*.").unwrap_or(domain);
    let host = match host.rsplit_once(':') {
        Some((h, port)) if !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    };
    !host.is_empty()
        && host.len() <= 253
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.'))
        && !host.starts_with('.')
        && !host.ends_with('.')
}

/// Whether a secret bound to `domains` may be typed into the page at `url`: an `http(s)` page
/// whose host one of them names (`*.` rules cover subdomains too; a rule with a port only that
/// port). Nothing else — no other scheme, no page without a host — ever gets a secret.
pub fn secret_allowed_at(domains: &[String], url: &str) -> bool {
    let Some((host, port)) = crate::action::host_and_port(url) else {
        return false;
    };
    if host.is_empty() {
        return false;
    }
    domains.iter().any(|rule| {
        let rule = rule.trim().to_ascii_lowercase();
        let (pattern, wildcard) = match rule.strip_prefix("*.") {
            Some(rest) => (rest.to_owned(), true),
            None => (rule.clone(), false),
        };
        let (rule_host, rule_port) = match pattern.rsplit_once(':') {
            Some((h, p)) if !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) => {
                (h.to_owned(), Some(p.to_owned()))
            }
            _ => (pattern.clone(), None),
        };
        if rule_port.is_some() && rule_port != Some(port.to_string()) {
            return false;
        }
        host == rule_host || (wildcard && host.ends_with(&format!(".{rule_host}")))
    })
}

/// A kind of personal data the evidence filter knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum PiiKind {
    Email,
    Phone,
    Card,
    Token,
}

impl PiiKind {
    pub const ALL: [PiiKind; 4] = [
        PiiKind::Email,
        PiiKind::Phone,
        PiiKind::Card,
        PiiKind::Token,
    ];

    pub fn parse(name: &str) -> Option<PiiKind> {
        match name.trim().to_ascii_lowercase().as_str() {
            "email" | "e-mail" | "emails" => Some(PiiKind::Email),
            "phone" | "phones" | "tel" => Some(PiiKind::Phone),
            "card" | "cards" | "credit_card" => Some(PiiKind::Card),
            "token" | "tokens" | "key" | "keys" => Some(PiiKind::Token),
            _ => None,
        }
    }
}

/// What the extension filters out of what it sends (seed 002 §4.5.1): `evidence` — stored
/// artifacts (page text, HTML, element lists, screenshots with such fields masked); `model` —
/// the text sent inline to the server, which the model reads. Cookies and `localStorage` are
/// never read either way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RedactionPolicy {
    pub evidence: bool,
    pub model: bool,
    pub kinds: Vec<PiiKind>,
}

impl Default for RedactionPolicy {
    /// Evidence filtered, the model's text not: every kind.
    fn default() -> Self {
        RedactionPolicy {
            evidence: true,
            model: false,
            kinds: PiiKind::ALL.to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn domains(d: &[&str]) -> Vec<String> {
        d.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_plain_domain_is_that_host_a_wildcard_its_subdomains_too_and_a_port_only_that_port() {
        let d = domains(&["example.com", "*.example.org", "127.0.0.1:8080"]);
        assert!(secret_allowed_at(&d, "https://example.com/login"));
        assert!(secret_allowed_at(&d, "http://EXAMPLE.com:444/x"));
        assert!(!secret_allowed_at(&d, "https://www.example.com/"));
        assert!(!secret_allowed_at(&d, "https://evil-example.com/"));
        assert!(!secret_allowed_at(&d, "https://example.com.evil.test/"));
        assert!(secret_allowed_at(&d, "https://example.org/"));
        assert!(secret_allowed_at(&d, "https://a.b.example.org/"));
        assert!(!secret_allowed_at(&d, "https://notexample.org/"));
        assert!(secret_allowed_at(&d, "http://127.0.0.1:8080/login"));
        assert!(!secret_allowed_at(&d, "http://127.0.0.1:8081/login"));
        assert!(!secret_allowed_at(&d, "http://127.0.0.1/login"));
        // Userinfo does not fool it, nor other schemes.
        assert!(!secret_allowed_at(&d, "https://example.com@evil.test/"));
        assert!(!secret_allowed_at(&d, "javascript:alert(1)//example.com"));
        assert!(!secret_allowed_at(&d, "file:///example.com"));
        assert!(!secret_allowed_at(&[], "https://example.com/"));
    }

    #[test]
    fn placeholders_are_found_once_each_and_bad_names_ignored() {
        assert_eq!(
            placeholders("{{secret:pw}} and {{secret:api.key}} again {{secret:pw}}"),
            vec!["pw", "api.key"]
        );
        assert_eq!(
            placeholders("{{secret:}} {{secret:a b}} {{secret:x"),
            Vec::<String>::new()
        );
        assert_eq!(placeholder("pw"), "{{secret:pw}}");
    }

    #[test]
    fn names_and_domains_are_checked() {
        assert!(valid_secret_name("github_pw-2.x"));
        assert!(!valid_secret_name(""));
        assert!(!valid_secret_name("a b"));
        assert!(!valid_secret_name("{{x}}"));
        assert!(valid_secret_domain("example.com"));
        assert!(valid_secret_domain("*.example.com"));
        assert!(valid_secret_domain("127.0.0.1:8080"));
        assert!(!valid_secret_domain("https://example.com"));
        assert!(!valid_secret_domain("*"));
        assert!(!valid_secret_domain("example.com/path"));
    }
}
