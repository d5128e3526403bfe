//! Mimo as an OAuth 2.1 authorization server for MCP clients that speak only OAuth: the wire
//! types of client registration (RFC 7591), the server's metadata (RFC 8414), the token
//! endpoint's answers (RFC 6749 §5) and the web app's consent page. Field names are the RFCs'
//! (snake_case), except the consent page's, which are the web app's.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A client's registration request (RFC 7591 §2), the fields Mimo reads; any other is ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct ClientRegistration {
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub client_name: Option<String>,
    /// Only `none`: a client keeps no secret (a desktop app, a CLI); PKCE proves it instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub token_endpoint_auth_method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub grant_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub response_types: Option<Vec<String>>,
}

/// A registered client (RFC 7591 §3.2.1), as registration answers and the server keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct RegisteredClient {
    pub client_id: String,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub token_endpoint_auth_method: String,
    pub grant_types: Vec<String>,
    pub response_types: Vec<String>,
    /// Seconds since the epoch.
    #[ts(type = "number")]
    pub client_id_issued_at: u64,
}

/// The authorization server's metadata (RFC 8414), at
/// `/.well-known/oauth-authorization-server`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct AuthorizationServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub registration_endpoint: String,
    pub revocation_endpoint: String,
    pub response_types_supported: Vec<String>,
    pub grant_types_supported: Vec<String>,
    pub code_challenge_methods_supported: Vec<String>,
    pub token_endpoint_auth_methods_supported: Vec<String>,
    pub revocation_endpoint_auth_methods_supported: Vec<String>,
    pub scopes_supported: Vec<String>,
}

/// The token endpoint's answer (RFC 6749 §5.1): an access token for `/mcp` and the refresh
/// token that makes the next one (each used once: a new one comes with every refresh).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct TokenResponse {
    pub access_token: String,
    pub token_type: String,
    /// Seconds.
    #[ts(type = "number")]
    pub expires_in: u64,
    pub refresh_token: String,
    pub scope: String,
}

/// An OAuth error (RFC 6749 §5.2; RFC 7591 §3.2.2): `error` is the RFC's code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct OAuthError {
    pub error: String,
    pub error_description: String,
}

impl OAuthError {
    pub fn new(error: &str, description: impl Into<String>) -> Self {
        Self {
            error: error.to_owned(),
            error_description: description.into(),
        }
    }
}

/// What the web app's consent page shows of an authorization request
/// (`GET /api/oauth/authorize?…`, the request's own query).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConsentRequest {
    pub client_name: String,
    pub client_id: String,
    /// Where the client is sent back to, with the code when the person allows it.
    pub redirect_uri: String,
}

/// The person's answer on the consent page (`POST /api/oauth/authorize?…`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConsentAnswer {
    pub allow: bool,
}

/// Where the browser goes next: the client's redirect URI, with the code or the refusal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConsentRedirect {
    pub redirect_to: String,
}
