//! OAuth 2.1 for MCP clients that only speak OAuth: the authorization server's metadata
//! (RFC 8414), registration, the authorization endpoint (which sends the person to the web
//! app's consent page), the token endpoint and revocation — all answered by the object that
//! keeps the MCP tokens (`mimo_durable::McpClient::oauth`) — and the consent page's API,
//! behind the deployment token like the rest of the web app's.

use mimo_agent::mcp::oauth;
use mimo_durable::{consent_refused, error_response, AuthorizeCheck, McpClient};
use mimo_protocol::{ErrorCode, ErrorObject};
use worker::{Env, Method, Request, Response, Result, Url};

/// Where the authorization server's metadata is served.
pub const METADATA_PATH: &str = "/.well-known/oauth-authorization-server";

/// Where the web app asks the person (its route, in the page's hash).
const CONSENT_PAGE: &str = "/#/authorize";

fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// `req` passed on to the tokens' object at `path`, with its query, for the `/mcp` of this
/// origin; the object's answer.
async fn ask(req: Request, env: &Env, path: &str) -> Result<Response> {
    let url = req.url()?;
    let route = match url.query() {
        Some(query) => format!("{path}?{query}"),
        None => path.to_owned(),
    };
    let resource = oauth::resource_of(&origin(&url));
    McpClient::tokens(env)?.oauth(&route, &resource, req).await
}

/// The authorization request in `req`'s query, checked by the tokens' object.
async fn checked(req: Request, env: &Env) -> Result<AuthorizeCheck> {
    ask(req, env, "/oauth/authorize").await?.json().await
}

/// `GET /.well-known/oauth-authorization-server`.
pub fn metadata(req: &Request) -> Result<Response> {
    Response::from_json(&oauth::metadata(&origin(&req.url()?)))
}

/// `/oauth/…`: the public endpoints (no token: a client has none yet).
pub async fn serve(req: Request, env: &Env, path: &str) -> Result<Response> {
    let url = req.url()?;
    match (req.method(), path) {
        (Method::Get, "/oauth/authorize") => match checked(req, env).await? {
            // The person is asked in the web app, where they are signed in; the request goes
            // with them, checked again when they answer.
            AuthorizeCheck::Consent(_) => {
                let query = url.query().unwrap_or_default();
                Response::redirect(url.join(&format!("{CONSENT_PAGE}?{query}"))?)
            }
            AuthorizeCheck::Redirect(to) => Response::redirect(Url::parse(&to)?),
            AuthorizeCheck::Shown(why) => Ok(Response::ok(format!(
                "Mimo cannot authorize this client: {why}."
            ))?
            .with_status(400)),
        },
        (Method::Post, "/oauth/register" | "/oauth/token" | "/oauth/revoke") => {
            ask(req, env, path).await
        }
        (method, _) => error_response(&ErrorObject::new(
            ErrorCode::MethodNotAllowed,
            format!(
                "{method} {path}: GET /oauth/authorize, POST /oauth/register, /oauth/token or \
                 /oauth/revoke"
            ),
        )),
    }
}

/// `GET` and `POST /api/oauth/authorize?…` (the web app's consent page, signed in): what the
/// request asks, and the person's answer — where their browser goes next.
pub async fn consent(req: Request, env: &Env) -> Result<Response> {
    match req.method() {
        Method::Get => match checked(req, env).await? {
            AuthorizeCheck::Consent(request) => Response::from_json(&request),
            AuthorizeCheck::Redirect(_) => {
                consent_refused("its request is not valid (the client is sent the error)")
            }
            AuthorizeCheck::Shown(why) => consent_refused(&why),
        },
        // The object answers in the web app's shape, refusals too.
        Method::Post => ask(req, env, "/oauth/approve").await,
        method => error_response(&ErrorObject::new(
            ErrorCode::MethodNotAllowed,
            format!("{method} /api/oauth/authorize: GET or POST"),
        )),
    }
}
