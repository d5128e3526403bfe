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

/// Where a secret may be typed, read from one of its domain rules:
/// `[http://|https://][*.]host[:port]`. Without a scheme the rule means `https`; without a port,
/// the scheme's default port (443, 80). `*.host` is the host and every subdomain. So
/// `example.com` is `https://example.com` only — neither plain `http` nor another port — and a
/// test host served over plain http is named with its scheme: `http://127.0.0.1:8123`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretDomain {
    pub scheme: &'static str,
    pub host: String,
    pub subdomains: bool,
    pub port: u16,
}

impl SecretDomain {
    /// The rule `rule` (letters in any case), or `None` when it is not one: a path, a query,
    /// another scheme, a port out of range, a host with other characters than letters, digits,
    /// `-` and `.`, or an empty label.
    pub fn parse(rule: &str) -> Option<SecretDomain> {
        let rule = rule.to_ascii_lowercase();
        let (scheme, rest) = match (rule.strip_prefix("https://"), rule.strip_prefix("http://")) {
            (Some(rest), _) => ("https", rest),
            (None, Some(rest)) => ("http", rest),
            (None, None) => ("https", rule.as_str()),
        };
        let (subdomains, rest) = match rest.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, rest),
        };
        let (host, port) = match rest.split_once(':') {
            Some((host, port)) => {
                if port.is_empty() || port.len() > 5 || !port.chars().all(|c| c.is_ascii_digit()) {
                    return None;
                }
                (host, port.parse::<u16>().ok()?)
            }
            None => (rest, if scheme == "https" { 443 } else { 80 }),
        };
        let host_ok = !host.is_empty()
            && host.len() <= 253
            && host.split('.').all(|label| {
                !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            });
        (host_ok && port != 0).then(|| SecretDomain {
            scheme,
            host: host.to_owned(),
            subdomains,
            port,
        })
    }

    /// Whether a page of this scheme, host and port (as a browser reads its address) is on this rule.
    fn covers(&self, scheme: &str, host: &str, port: u16) -> bool {
        scheme == self.scheme
            && port == self.port
            && (host == self.host
                || (self.subdomains
                    && host
                        .strip_suffix(self.host.as_str())
                        .is_some_and(|sub| sub.ends_with('.'))))
    }
}

/// A domain a secret may be bound to: a rule [`SecretDomain::parse`] reads.
pub fn valid_secret_domain(domain: &str) -> bool {
    SecretDomain::parse(domain).is_some()
}

/// Whether a secret bound to `domains` may be typed into the page at `url`: an `http(s)` page
/// with a host, whose scheme, host and port (the scheme's default when the URL names none) one
/// of the rules covers (see [`SecretDomain`]). The URL is read as a browser reads it, so that
/// userinfo, backslashes, percent-escapes in the host or an explicit default port cannot make it
/// look like another page. The extension's `secretAllowedAt` is the same rule; both are tested
/// against one table (`protocol/tests/fixtures/secret-domains.json`).
pub fn secret_allowed_at(domains: &[String], url: &str) -> bool {
    let Ok(page) = url::Url::parse(url) else {
        return false;
    };
    let scheme = page.scheme();
    let (Some(host), Some(port)) = (page.host_str(), page.port_or_known_default()) else {
        return false;
    };
    if !matches!(scheme, "http" | "https") || host.is_empty() {
        return false;
    }
    domains
        .iter()
        .filter_map(|rule| SecretDomain::parse(rule))
        .any(|rule| rule.covers(scheme, host, port))
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

    /// The table the extension's `secretAllowedAt` is tested against too.
    #[derive(Deserialize)]
    struct Table {
        cases: Vec<Case>,
        valid: Vec<Valid>,
        invalid: Vec<String>,
    }

    #[derive(Deserialize)]
    struct Valid {
        rule: String,
        allows: String,
    }

    #[derive(Deserialize)]
    struct Case {
        domains: Vec<String>,
        allowed: Vec<String>,
        refused: Vec<String>,
    }

    fn table() -> Table {
        serde_json::from_str(include_str!("../tests/fixtures/secret-domains.json")).unwrap()
    }

    #[test]
    fn a_secret_is_allowed_only_where_the_shared_table_says() {
        let table = table();
        for case in &table.cases {
            for url in &case.allowed {
                assert!(
                    secret_allowed_at(&case.domains, url),
                    "{:?} should allow {url}",
                    case.domains
                );
            }
            for url in &case.refused {
                assert!(
                    !secret_allowed_at(&case.domains, url),
                    "{:?} should refuse {url}",
                    case.domains
                );
            }
        }
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
        let table = table();
        let urls: Vec<&String> = table
            .cases
            .iter()
            .flat_map(|c| c.allowed.iter().chain(&c.refused))
            .collect();
        for Valid { rule, allows } in &table.valid {
            assert!(valid_secret_domain(rule), "{rule} is a rule");
            assert!(
                secret_allowed_at(std::slice::from_ref(rule), allows),
                "{rule} should allow {allows}"
            );
        }
        for rule in &table.invalid {
            assert!(!valid_secret_domain(rule), "{rule} is not a rule");
            for url in &urls {
                assert!(
                    !secret_allowed_at(std::slice::from_ref(rule), url),
                    "{rule} allows {url}"
                );
            }
        }
        assert_eq!(
            SecretDomain::parse("HTTP://*.Example.com:8123"),
            Some(SecretDomain {
                scheme: "http",
                host: "example.com".into(),
                subdomains: true,
                port: 8123
            })
        );
        assert_eq!(SecretDomain::parse("example.com").unwrap().port, 443);
        assert_eq!(SecretDomain::parse("http://example.com").unwrap().port, 80);
    }
}
