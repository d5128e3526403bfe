//! The OAuth 2.1 authorization server's rules, for MCP clients that only speak OAuth: client
//! registration (RFC 7591; public clients only, proved by PKCE), the authorization request
//! (which errors are shown to the person and which are sent back to the client), the token
//! endpoint's requests and the code's checks (PKCE S256, RFC 7636), and the metadata
//! (RFC 8414). Tokens are audience-bound: an access token names the `/mcp` it was issued for
//! (RFC 8707 `resource`), and is refused by any other. Storing is the shell's
//! (`mimo_durable::mcp_store`); nothing here does I/O.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use mimo_protocol::oauth::{
    AuthorizationServerMetadata, ClientRegistration, OAuthError, RegisteredClient,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use url::Url;

/// An access token for `/mcp` made through OAuth (an MCP token made in the web app is
/// `mimo_mcp_…`).
pub const ACCESS_TOKEN_PREFIX: &str = "mimo_oat_";
/// A refresh token.
pub const REFRESH_TOKEN_PREFIX: &str = "mimo_ort_";
/// An authorization code.
pub const CODE_PREFIX: &str = "mimo_oac_";
/// A registered client's id.
pub const CLIENT_ID_PREFIX: &str = "mcpc-";
/// A grant: what the person allowed one client, listed with the MCP tokens and revoked there.
pub const GRANT_ID_PREFIX: &str = "oauth-";

/// How long an access token lives: short, a refresh makes the next.
pub const ACCESS_TOKEN_TTL_MS: u64 = 60 * 60_000;
/// How long a refresh token lives unused (each use makes a new one).
pub const REFRESH_TOKEN_TTL_MS: u64 = 30 * 24 * 60 * 60_000;
/// How long a code waits for its exchange.
pub const CODE_TTL_MS: u64 = 5 * 60_000;
/// The one scope: the MCP endpoint's tools.
pub const SCOPE: &str = "mcp";

/// How long a registered client is kept without a grant (the person never allowed it):
/// registration is open to anyone, so the registrations that led nowhere are swept.
pub const UNUSED_CLIENT_TTL_MS: u64 = 24 * 60 * 60_000;
/// The most clients kept without a grant at once: past it, registration waits for the sweep.
pub const MAX_UNUSED_CLIENTS: usize = 1_000;
const MAX_REDIRECT_URIS: usize = 10;
const MAX_URI_CHARS: usize = 2_000;
const MAX_CLIENT_NAME_CHARS: usize = 100;
const AUTHORIZATION_CODE: &str = "authorization_code";
const REFRESH_TOKEN: &str = "refresh_token";

/// What the tokens of the deployment at `origin` (scheme and host) are for: its `/mcp`.
pub fn resource_of(origin: &str) -> String {
    format!("{origin}/mcp")
}

/// The server's metadata, for the deployment at `origin` (scheme and host).
pub fn metadata(origin: &str) -> AuthorizationServerMetadata {
    let list = |items: &[&str]| items.iter().map(|&s| s.to_owned()).collect();
    AuthorizationServerMetadata {
        issuer: origin.to_owned(),
        authorization_endpoint: format!("{origin}/oauth/authorize"),
        token_endpoint: format!("{origin}/oauth/token"),
        registration_endpoint: format!("{origin}/oauth/register"),
        revocation_endpoint: format!("{origin}/oauth/revoke"),
        response_types_supported: list(&["code"]),
        grant_types_supported: list(&[AUTHORIZATION_CODE, REFRESH_TOKEN]),
        code_challenge_methods_supported: list(&["S256"]),
        token_endpoint_auth_methods_supported: list(&["none"]),
        revocation_endpoint_auth_methods_supported: list(&["none"]),
        scopes_supported: list(&[SCOPE]),
    }
}

/// The client `request` registers as `client_id`, or why it may not (RFC 7591 §3.2.2).
/// Clients registered before this (seconds since the epoch, as their `client_id_issued_at`)
/// that still have no grant at `now_ms` are forgotten.
pub fn unused_clients_before(now_ms: u64) -> u64 {
    now_ms.saturating_sub(UNUSED_CLIENT_TTL_MS) / 1000
}

/// Whether another client may register while `unused` clients have no grant.
pub fn room_to_register(unused: usize) -> Result<(), OAuthError> {
    if unused < MAX_UNUSED_CLIENTS {
        return Ok(());
    }
    Err(OAuthError::new(
        "temporarily_unavailable",
        format!(
            "{unused} registered clients have not been allowed by the person yet; registering \
             more waits until the oldest of them expire (a day after registering)"
        ),
    ))
}

pub fn register(
    request: &ClientRegistration,
    client_id: String,
    now_ms: u64,
) -> Result<RegisteredClient, OAuthError> {
    let metadata = |why: String| OAuthError::new("invalid_client_metadata", why);
    if request.redirect_uris.is_empty() || request.redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(OAuthError::new(
            "invalid_redirect_uri",
            format!("register 1 to {MAX_REDIRECT_URIS} redirect_uris"),
        ));
    }
    if let Some(uri) = request.redirect_uris.iter().find(|u| !redirect_allowed(u)) {
        return Err(OAuthError::new(
            "invalid_redirect_uri",
            format!(
                "{uri:?}: a redirect URI is https, http on this machine (localhost, 127.0.0.1, \
                 [::1]) or an app's own scheme, without a fragment"
            ),
        ));
    }
    match request.token_endpoint_auth_method.as_deref() {
        None | Some("none") => {}
        Some(other) => {
            return Err(metadata(format!(
                "token_endpoint_auth_method {other:?}: only \"none\" (a public client, proved by \
                 PKCE)"
            )))
        }
    }
    let known = |given: &Option<Vec<String>>, allowed: &[&str]| {
        given
            .iter()
            .flatten()
            .find(|g| !allowed.contains(&g.as_str()))
            .cloned()
    };
    if let Some(grant) = known(&request.grant_types, &[AUTHORIZATION_CODE, REFRESH_TOKEN]) {
        return Err(metadata(format!(
            "grant type {grant:?}: only authorization_code and refresh_token"
        )));
    }
    if let Some(response) = known(&request.response_types, &["code"]) {
        return Err(metadata(format!("response type {response:?}: only code")));
    }
    let name = request.client_name.as_deref().unwrap_or("").trim();
    if name.chars().count() > MAX_CLIENT_NAME_CHARS {
        return Err(metadata(format!(
            "client_name is at most {MAX_CLIENT_NAME_CHARS} characters"
        )));
    }
    Ok(RegisteredClient {
        client_id,
        client_name: if name.is_empty() {
            "An MCP client"
        } else {
            name
        }
        .to_owned(),
        redirect_uris: request.redirect_uris.clone(),
        token_endpoint_auth_method: "none".into(),
        grant_types: vec![AUTHORIZATION_CODE.into(), REFRESH_TOKEN.into()],
        response_types: vec!["code".into()],
        client_id_issued_at: now_ms / 1000,
    })
}

/// Whether a client may be sent back to `uri`: https; http only to this machine (a desktop
/// client's own listener, RFC 8252 §7.3); or an app's own scheme (§7.1) — never a scheme that
/// runs or reads something in the browser, and never with a fragment.
fn redirect_allowed(uri: &str) -> bool {
    let Ok(url) = Url::parse(uri) else {
        return false;
    };
    if uri.len() > MAX_URI_CHARS || url.fragment().is_some() {
        return false;
    }
    match url.scheme() {
        "https" => url.host().is_some(),
        "http" => matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")),
        "javascript" | "data" | "file" | "blob" | "about" | "vbscript" | "ftp" | "ws" | "wss"
        | "chrome" | "chrome-extension" => false,
        _ => true,
    }
}

/// An authorization request that may be put to the person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthorizeRequest {
    pub client_id: String,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub state: Option<String>,
    /// The `/mcp` the tokens are for.
    pub resource: String,
}

/// Why an authorization request is refused.
#[derive(Debug, Clone, PartialEq)]
pub enum AuthorizeRefusal {
    /// Told to the person only: the client or its redirect URI is not known, so nothing may be
    /// sent to where the request says (RFC 6749 §4.1.2.1).
    Shown(String),
    /// Sent back to the client: its redirect URI with `error` and the request's `state`.
    Redirect(String),
}

/// Checks the query of an authorization request by `client` (`None`: no such client) for the
/// tokens of `resource` (this deployment's `/mcp`).
pub fn authorize(
    query: &[(String, String)],
    client: Option<&RegisteredClient>,
    resource: &str,
) -> Result<AuthorizeRequest, AuthorizeRefusal> {
    let shown = |why: &str| AuthorizeRefusal::Shown(why.to_owned());
    let mut seen: Vec<&str> = Vec::new();
    for (name, _) in query {
        if seen.contains(&name.as_str()) {
            return Err(shown(&format!("the request names {name} twice")));
        }
        seen.push(name);
    }
    let param = |name: &str| {
        query
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let Some(client_id) = param("client_id") else {
        return Err(shown("the request names no client_id"));
    };
    let Some(client) = client.filter(|c| c.client_id == client_id) else {
        return Err(shown(&format!(
            "no client {client_id:?} is registered here: the client registers first \
             (/oauth/register)"
        )));
    };
    let redirect_uri = match (param("redirect_uri"), client.redirect_uris.as_slice()) {
        (Some(uri), registered) if registered.iter().any(|r| r == uri) => uri.to_owned(),
        (Some(uri), _) => {
            return Err(shown(&format!(
                "{uri:?} is not one of the client's registered redirect URIs"
            )))
        }
        (None, [only]) => only.clone(),
        (None, _) => return Err(shown("the request names no redirect_uri")),
    };
    let state = param("state").map(str::to_owned);
    let refuse = |error: &str, why: &str| {
        let mut back = vec![("error", error), ("error_description", why)];
        if let Some(state) = &state {
            back.push(("state", state));
        }
        AuthorizeRefusal::Redirect(with_query(&redirect_uri, &back))
    };
    if param("response_type") != Some("code") {
        return Err(refuse(
            "unsupported_response_type",
            "only response_type=code (the authorization code flow)",
        ));
    }
    let Some(code_challenge) = param("code_challenge") else {
        return Err(refuse(
            "invalid_request",
            "PKCE is required: send code_challenge with code_challenge_method=S256",
        ));
    };
    if param("code_challenge_method") != Some("S256") {
        return Err(refuse(
            "invalid_request",
            "only code_challenge_method=S256 (not plain)",
        ));
    }
    if code_challenge.len() != 43
        || !code_challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(refuse(
            "invalid_request",
            "code_challenge is the unpadded base64url of a SHA-256 (43 characters)",
        ));
    }
    if param("resource").is_some_and(|r| r.trim_end_matches('/') != resource) {
        return Err(refuse(
            "invalid_target",
            &format!("this server's tokens are for {resource} only"),
        ));
    }
    Ok(AuthorizeRequest {
        client_id: client_id.to_owned(),
        redirect_uri,
        code_challenge: code_challenge.to_owned(),
        state,
        resource: resource.to_owned(),
    })
}

impl AuthorizeRequest {
    /// Where the browser goes when the person has answered: the client's redirect URI with the
    /// code (`Some`), or with `access_denied`.
    pub fn answered(&self, code: Option<&str>) -> String {
        let mut back = match code {
            Some(code) => vec![("code", code)],
            None => vec![
                ("error", "access_denied"),
                ("error_description", "the person did not allow it"),
            ],
        };
        if let Some(state) = &self.state {
            back.push(("state", state));
        }
        with_query(&self.redirect_uri, &back)
    }
}

/// `uri` with `params` added to its query.
fn with_query(uri: &str, params: &[(&str, &str)]) -> String {
    let Ok(mut url) = Url::parse(uri) else {
        return uri.to_owned();
    };
    url.query_pairs_mut().extend_pairs(params);
    url.into()
}

/// Whether `verifier` is the PKCE verifier of `challenge` (S256).
pub fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    well_formed && URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())) == challenge
}

/// A request to the token endpoint (RFC 6749 §4.1.3, §6).
#[derive(Debug, Clone, PartialEq)]
pub enum TokenRequest {
    Code {
        code: String,
        client_id: String,
        redirect_uri: String,
        code_verifier: String,
    },
    Refresh {
        refresh_token: String,
        client_id: String,
    },
}

/// The token endpoint's form (`application/x-www-form-urlencoded`) as a request.
pub fn token_request(form: &[(String, String)]) -> Result<TokenRequest, OAuthError> {
    let param = |name: &str| {
        form.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| OAuthError::new("invalid_request", format!("{name} is required")))
    };
    match param("grant_type")?.as_str() {
        AUTHORIZATION_CODE => Ok(TokenRequest::Code {
            code: param("code")?,
            client_id: param("client_id")?,
            redirect_uri: param("redirect_uri")?,
            code_verifier: param("code_verifier")?,
        }),
        REFRESH_TOKEN => Ok(TokenRequest::Refresh {
            refresh_token: param("refresh_token")?,
            client_id: param("client_id")?,
        }),
        other => Err(OAuthError::new(
            "unsupported_grant_type",
            format!("grant_type {other:?}: authorization_code or refresh_token"),
        )),
    }
}

/// A code as the server keeps it until its exchange.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IssuedCode {
    pub request: AuthorizeRequest,
    pub expires_at: u64,
}

impl IssuedCode {
    pub fn new(request: AuthorizeRequest, now_ms: u64) -> Self {
        Self {
            request,
            expires_at: now_ms + CODE_TTL_MS,
        }
    }

    /// Whether the exchange (`client_id`, `redirect_uri`, `code_verifier`) may have the tokens.
    /// A code used before never reaches this: the shell refuses it, and revokes what it gave.
    pub fn redeem(
        &self,
        client_id: &str,
        redirect_uri: &str,
        code_verifier: &str,
        now_ms: u64,
    ) -> Result<(), OAuthError> {
        let refused = |why: &str| Err(OAuthError::new("invalid_grant", why));
        if now_ms >= self.expires_at {
            return refused("the code expired: authorize again");
        }
        if client_id != self.request.client_id {
            return refused("the code was issued to another client");
        }
        if redirect_uri != self.request.redirect_uri {
            return refused("redirect_uri is not the one the code was issued for");
        }
        if !pkce_matches(code_verifier, &self.request.code_challenge) {
            return refused("code_verifier does not match the code_challenge");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESOURCE: &str = "https://mimo.example/mcp";

    fn client() -> RegisteredClient {
        let request = ClientRegistration {
            redirect_uris: vec![
                "http://127.0.0.1:33418/callback".into(),
                "https://claude.ai/api/mcp/auth_callback".into(),
            ],
            client_name: Some("Claude".into()),
            ..ClientRegistration::default()
        };
        register(&request, "mcpc-1".into(), 5_000).unwrap()
    }

    fn query(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    /// RFC 7636 appendix B's verifier and challenge.
    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    fn good() -> Vec<(&'static str, &'static str)> {
        vec![
            ("response_type", "code"),
            ("client_id", "mcpc-1"),
            ("redirect_uri", "http://127.0.0.1:33418/callback"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
            ("state", "xyz"),
            ("resource", RESOURCE),
        ]
    }

    #[test]
    fn registrations_without_a_grant_are_swept_after_a_day_and_capped_meanwhile() {
        let day = UNUSED_CLIENT_TTL_MS;
        // In seconds, as client_id_issued_at.
        assert_eq!(unused_clients_before(3 * day), 2 * day / 1000);
        assert_eq!(
            unused_clients_before(day / 2),
            0,
            "none before the first day"
        );
        assert!(room_to_register(0).is_ok());
        assert!(room_to_register(MAX_UNUSED_CLIENTS - 1).is_ok());
        for unused in [MAX_UNUSED_CLIENTS, MAX_UNUSED_CLIENTS + 1] {
            let refused = room_to_register(unused).unwrap_err();
            assert_eq!(refused.error, "temporarily_unavailable");
        }
    }

    #[test]
    fn registration_takes_public_clients_with_safe_redirects_only() {
        let c = client();
        assert_eq!(c.client_name, "Claude");
        assert_eq!(c.token_endpoint_auth_method, "none");
        assert_eq!(c.client_id_issued_at, 5);
        let with = |uris: &[&str]| ClientRegistration {
            redirect_uris: uris.iter().map(|&u| u.to_owned()).collect(),
            ..ClientRegistration::default()
        };
        for ok in [
            "http://localhost:6274/oauth/callback",
            "http://[::1]:9/cb",
            "vscode://vscode.github-authentication/did-authenticate",
            "com.example.app:/oauth2redirect",
        ] {
            assert!(register(&with(&[ok]), "c".into(), 0).is_ok(), "{ok}");
        }
        for bad in [
            "http://evil.example/cb",
            "https://ok.example/cb#frag",
            "javascript:alert(1)",
            "data:text/html,hi",
            "file:///etc/passwd",
            "not a uri",
        ] {
            let refused = register(&with(&[bad]), "c".into(), 0).unwrap_err();
            assert_eq!(refused.error, "invalid_redirect_uri", "{bad}");
        }
        assert_eq!(
            register(&with(&[]), "c".into(), 0).unwrap_err().error,
            "invalid_redirect_uri"
        );
        let secret = ClientRegistration {
            token_endpoint_auth_method: Some("client_secret_basic".into()),
            ..with(&["https://ok.example/cb"])
        };
        assert_eq!(
            register(&secret, "c".into(), 0).unwrap_err().error,
            "invalid_client_metadata"
        );
        let implicit = ClientRegistration {
            response_types: Some(vec!["token".into()]),
            ..with(&["https://ok.example/cb"])
        };
        assert_eq!(
            register(&implicit, "c".into(), 0).unwrap_err().error,
            "invalid_client_metadata"
        );
    }

    #[test]
    fn an_authorization_request_is_checked_and_its_errors_go_where_they_may() {
        let c = client();
        let request = authorize(&query(&good()), Some(&c), RESOURCE).unwrap();
        assert_eq!(request.redirect_uri, "http://127.0.0.1:33418/callback");
        assert_eq!(request.state.as_deref(), Some("xyz"));
        assert_eq!(
            request.answered(Some("mimo_oac_1")),
            "http://127.0.0.1:33418/callback?code=mimo_oac_1&state=xyz"
        );
        assert_eq!(
            request.answered(None),
            "http://127.0.0.1:33418/callback?error=access_denied&error_description=the+person+did+not+allow+it&state=xyz"
        );

        // Not a known client, or not its redirect URI: told to the person, never redirected.
        let changed = |name: &str, value: &'static str| {
            let mut q = good();
            q.retain(|(n, _)| *n != name);
            if !value.is_empty() {
                q.push((name, value));
            }
            query(&q)
        };
        for (q, client) in [
            (changed("redirect_uri", "https://evil.example/cb"), Some(&c)),
            (changed("client_id", "mcpc-2"), Some(&c)),
            (changed("client_id", ""), Some(&c)),
            (query(&good()), None),
        ] {
            assert!(
                matches!(
                    authorize(&q, client, RESOURCE),
                    Err(AuthorizeRefusal::Shown(_))
                ),
                "{q:?}"
            );
        }
        let mut twice = query(&good());
        twice.push(("redirect_uri".into(), "https://evil.example/cb".into()));
        assert!(matches!(
            authorize(&twice, Some(&c), RESOURCE),
            Err(AuthorizeRefusal::Shown(_))
        ));
        // Two registered and none named: which one is not guessed.
        assert!(matches!(
            authorize(&changed("redirect_uri", ""), Some(&c), RESOURCE),
            Err(AuthorizeRefusal::Shown(_))
        ));

        // The rest go back to the client, with its state.
        for (q, error) in [
            (changed("code_challenge", ""), "invalid_request"),
            (changed("code_challenge_method", "plain"), "invalid_request"),
            (changed("code_challenge_method", ""), "invalid_request"),
            (changed("code_challenge", "short"), "invalid_request"),
            (
                changed("response_type", "token"),
                "unsupported_response_type",
            ),
            (
                changed("resource", "https://other.example/mcp"),
                "invalid_target",
            ),
        ] {
            match authorize(&q, Some(&c), RESOURCE) {
                Err(AuthorizeRefusal::Redirect(to)) => {
                    assert!(
                        to.starts_with("http://127.0.0.1:33418/callback?error=")
                            && to.contains(&format!("error={error}&"))
                            && to.ends_with("&state=xyz"),
                        "{to}"
                    );
                }
                other => panic!("{q:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_code_is_exchanged_by_its_client_with_its_verifier_before_it_expires() {
        let request = authorize(&query(&good()), Some(&client()), RESOURCE).unwrap();
        let code = IssuedCode::new(request, 1_000);
        let uri = "http://127.0.0.1:33418/callback";
        assert!(code.redeem("mcpc-1", uri, VERIFIER, 2_000).is_ok());
        for (client, redirect, verifier, now) in [
            ("mcpc-2", uri, VERIFIER, 2_000),
            ("mcpc-1", "http://localhost:33418/callback", VERIFIER, 2_000),
            ("mcpc-1", uri, &VERIFIER[1..], 2_000),
            ("mcpc-1", uri, CHALLENGE, 2_000),
            ("mcpc-1", uri, VERIFIER, 1_000 + CODE_TTL_MS),
        ] {
            let refused = code.redeem(client, redirect, verifier, now).unwrap_err();
            assert_eq!(refused.error, "invalid_grant");
        }
    }

    #[test]
    fn the_token_endpoint_reads_both_grants_and_refuses_others() {
        let form = query(&[
            ("grant_type", "authorization_code"),
            ("code", "c"),
            ("client_id", "mcpc-1"),
            ("redirect_uri", "u"),
            ("code_verifier", "v"),
        ]);
        assert!(matches!(
            token_request(&form),
            Ok(TokenRequest::Code { .. })
        ));
        let refresh = query(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", "r"),
            ("client_id", "mcpc-1"),
        ]);
        assert!(matches!(
            token_request(&refresh),
            Ok(TokenRequest::Refresh { .. })
        ));
        let missing = query(&[("grant_type", "authorization_code"), ("code", "c")]);
        assert_eq!(
            token_request(&missing).unwrap_err().error,
            "invalid_request"
        );
        let password = query(&[("grant_type", "password")]);
        assert_eq!(
            token_request(&password).unwrap_err().error,
            "unsupported_grant_type"
        );
        assert_eq!(token_request(&[]).unwrap_err().error, "invalid_request");
    }

    #[test]
    fn the_metadata_names_this_servers_endpoints() {
        let m = metadata("https://mimo.example");
        assert_eq!(m.issuer, "https://mimo.example");
        assert_eq!(m.token_endpoint, "https://mimo.example/oauth/token");
        assert_eq!(m.code_challenge_methods_supported, ["S256"]);
    }
}
