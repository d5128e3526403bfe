//! The OAuth 2.1 routes of the object that keeps the MCP tokens: registration, the check of an
//! authorization request and the person's answer to it, the token endpoint and revocation. The
//! rules are `mimo_agent::mcp::oauth`; the records `crate::mcp_store`. The worker
//! (`mimo_worker::oauth`) serves the public endpoints and the web app's consent page through
//! these, and says which `/mcp` the tokens are for in [`RESOURCE_HEADER`].

use mimo_agent::credentials::secret;
use mimo_agent::mcp::oauth::{
    self, AuthorizeRefusal, AuthorizeRequest, IssuedCode, TokenRequest, CLIENT_ID_PREFIX,
};
use mimo_protocol::oauth::{
    ClientRegistration, ConsentAnswer, ConsentRedirect, ConsentRequest, OAuthError,
};
use mimo_protocol::{ErrorCode, ErrorObject};
use serde::{Deserialize, Serialize};
use worker::{Method, Request, Response, Result};

use crate::http::{error_response, now_ms, random_bytes};
use crate::mcp_store::{McpTokens, GRANT_RANDOM_BYTES};

/// The header that names the `/mcp` (origin and path) an authorization is for.
pub const RESOURCE_HEADER: &str = "x-mimo-resource";

/// What an authorization request leads to, as the object tells the worker.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AuthorizeCheck {
    /// The person is asked.
    Consent(ConsentRequest),
    /// Sent back to the client at once, with an error.
    Redirect(String),
    /// Shown to the person only: the client or its redirect URI is not known.
    Shown(String),
}

/// Serves `path` (`/oauth/…`) for the deployment's tokens.
pub async fn route(tokens: McpTokens, mut req: Request, path: &str) -> Result<Response> {
    let url = req.url()?;
    let resource = req.headers().get(RESOURCE_HEADER)?.unwrap_or_default();
    let query: Vec<(String, String)> = url
        .query_pairs()
        .map(|(n, v)| (n.into_owned(), v.into_owned()))
        .collect();
    match (req.method(), path) {
        (Method::Post, "/oauth/register") => {
            let body = req.text().await?;
            let request: ClientRegistration = match serde_json::from_str(&body) {
                Ok(request) => request,
                Err(e) => {
                    let error = OAuthError::new("invalid_client_metadata", format!("{e}"));
                    return oauth_error(&error);
                }
            };
            // Registration is open: what never led to a grant is swept, and a flood of them
            // waits for that.
            let unused = tokens.sweep_unused_clients(oauth::unused_clients_before(now_ms()))?;
            if let Err(error) = oauth::room_to_register(unused) {
                return oauth_error(&error);
            }
            let client_id = secret(CLIENT_ID_PREFIX, &random_bytes::<16>()?);
            match oauth::register(&request, client_id, now_ms()) {
                Ok(client) => {
                    tokens.register_client(&client)?;
                    Ok(no_store(Response::from_json(&client)?.with_status(201))?)
                }
                Err(error) => oauth_error(&error),
            }
        }
        (Method::Get, "/oauth/authorize") => {
            let check = match checked(&tokens, &query, &resource)? {
                Ok((request, client_name)) => AuthorizeCheck::Consent(ConsentRequest {
                    client_name,
                    client_id: request.client_id,
                    redirect_uri: request.redirect_uri,
                }),
                Err(AuthorizeRefusal::Redirect(to)) => AuthorizeCheck::Redirect(to),
                Err(AuthorizeRefusal::Shown(why)) => AuthorizeCheck::Shown(why),
            };
            Response::from_json(&check)
        }
        (Method::Post, "/oauth/approve") => {
            let body = req.text().await?;
            // Answered to the web app (the consent page), in its error shape.
            let Ok(answer) = serde_json::from_str::<ConsentAnswer>(&body) else {
                return consent_refused("the answer must be {\"allow\": bool}");
            };
            let redirect_to = match checked(&tokens, &query, &resource)? {
                Ok((request, _)) if answer.allow => {
                    let issued = IssuedCode::new(request.clone(), now_ms());
                    let code = tokens.issue_code(&issued, &random_bytes()?, now_ms())?;
                    request.answered(Some(&code))
                }
                Ok((request, _)) => request.answered(None),
                Err(AuthorizeRefusal::Redirect(to)) => to,
                Err(AuthorizeRefusal::Shown(why)) => return consent_refused(&why),
            };
            Response::from_json(&ConsentRedirect { redirect_to })
        }
        (Method::Post, "/oauth/token") => {
            let form = form(&req.bytes().await?);
            let request = match oauth::token_request(&form) {
                Ok(request) => request,
                Err(error) => return oauth_error(&error),
            };
            let random = random_bytes::<GRANT_RANDOM_BYTES>()?;
            let answer = match request {
                TokenRequest::Code {
                    code,
                    client_id,
                    redirect_uri,
                    code_verifier,
                } => tokens.exchange_code(
                    &code,
                    &client_id,
                    &redirect_uri,
                    &code_verifier,
                    &random,
                    now_ms(),
                )?,
                TokenRequest::Refresh {
                    refresh_token,
                    client_id,
                } => tokens.refresh(&refresh_token, &client_id, &random, now_ms())?,
            };
            match answer {
                Ok(issued) => no_store(Response::from_json(&issued)?),
                Err(error) => oauth_error(&error),
            }
        }
        (Method::Post, "/oauth/revoke") => {
            let form = form(&req.bytes().await?);
            match form.iter().find(|(n, _)| n == "token") {
                Some((_, token)) => {
                    tokens.revoke_token(token, now_ms())?;
                    // RFC 7009 §2.2: 200 whether or not there was such a token.
                    Ok(Response::empty()?)
                }
                None => oauth_error(&OAuthError::new("invalid_request", "token is required")),
            }
        }
        _ => oauth_error(&OAuthError::new("invalid_request", "no such OAuth route")),
    }
}

/// The request `query` checked against its client's registration, with the client's name.
fn checked(
    tokens: &McpTokens,
    query: &[(String, String)],
    resource: &str,
) -> Result<std::result::Result<(AuthorizeRequest, String), AuthorizeRefusal>> {
    let client_id = query.iter().find(|(n, _)| n == "client_id");
    let client = match client_id {
        Some((_, id)) => tokens.client(id)?,
        None => None,
    };
    Ok(oauth::authorize(query, client.as_ref(), resource)
        .map(|request| (request, client.map(|c| c.client_name).unwrap_or_default())))
}

fn form(body: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(body)
        .map(|(n, v)| (n.into_owned(), v.into_owned()))
        .collect()
}

/// Why the consent page cannot go on with a request.
pub fn consent_refused(why: &str) -> Result<Response> {
    error_response(&ErrorObject::new(
        ErrorCode::SchemaValidationFailed,
        format!("Mimo cannot authorize this client: {why}"),
    ))
}

/// Tokens are never cached (RFC 6749 §5.1).
fn no_store(response: Response) -> Result<Response> {
    response.headers().set("cache-control", "no-store")?;
    Ok(response)
}

/// An OAuth error: 400, as RFC 6749 §5.2 and RFC 7591 §3.2.2 answer them.
fn oauth_error(error: &OAuthError) -> Result<Response> {
    no_store(Response::from_json(error)?.with_status(400))
}
