//! `/mcp`: Mimo as an MCP server over Streamable HTTP. Here the transport's outer rules — the
//! `Origin` (403 for another site's page), the methods (POST a JSON-RPC message, DELETE a
//! session, GET with `Last-Event-ID` to resume a call's progress stream that dropped, 405
//! otherwise: Mimo sends no messages of its own, so there is no other GET stream), the
//! client's MCP token or OAuth access token (401 with where to learn how to get one) — then
//! the body goes to the session's object (`mimo_durable::McpSession`), which answers it.

use mimo_agent::credentials::MCP_TOKEN_PREFIX;
use mimo_agent::mcp;
use mimo_agent::mcp::oauth;
use mimo_agent::mcp::session::{admit, Refusal};
use mimo_durable::{
    error_response, rpc_error, transport_refusal, Failure, McpClient, McpTokenCheck,
};
use mimo_protocol::mcp::{
    JsonRpcErrorCode, JsonRpcErrorResponse, ProtectedResourceMetadata, PROTOCOL_VERSION_HEADER,
    SESSION_HEADER,
};
use mimo_protocol::{ErrorCode, ErrorObject};
use worker::{Env, Method, Request, Response, Result};

use crate::auth;

/// Where the protected resource metadata (RFC 9728) is served.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The most a `/mcp` request may hold: a `browser_file_upload` carries its file, up to an
/// attachment's limit, in base64 (4 bytes for every 3), with room for the rest of the call.
pub const MAX_BODY_BYTES: u64 =
    mimo_protocol::artifact::ATTACHMENT_MAX_BYTES.div_ceil(3) * 4 + 64 * 1024;

/// `POST` and `DELETE /mcp` (the body already read, the client not over the failure limit).
pub async fn serve(mut req: Request, env: &Env, client: &str) -> Result<Response> {
    let origin = req.url()?.origin().ascii_serialization();
    // A page of another site reaching a local or logged-in server (DNS rebinding): refused.
    // Clients that are not browsers send no Origin; the web app's own origin is this one.
    if let Some(sent) = req.headers().get("origin")? {
        if sent != origin {
            return transport_error(
                403,
                format!("Origin {sent} may not use this server's MCP endpoint"),
            );
        }
    }
    let method = req.method();
    // A GET resumes a progress stream that dropped (it names its last event); Mimo sends no
    // messages of its own outside a call, so there is no other GET stream.
    let resuming = req.headers().get("last-event-id")?;
    let resumes = method == Method::Get && resuming.is_some();
    if !(matches!(method, Method::Post | Method::Delete) || resumes) {
        let response = transport_error(
            405,
            format!(
                "{method} /mcp: this server sends no messages of its own; POST a JSON-RPC \
                 message, DELETE the session, or GET with Last-Event-ID to resume a call's \
                 stream"
            ),
        )?;
        response.headers().set("allow", "GET, POST, DELETE")?;
        return Ok(response);
    }
    let token_id = match token_of(&req, env).await {
        Ok(token_id) => token_id,
        Err(Failure::Refused(error)) => {
            let response = auth::failed(env, client, error).await?;
            if response.status_code() == 401 {
                response.headers().set(
                    "www-authenticate",
                    &format!("Bearer resource_metadata=\"{origin}{METADATA_PATH}\""),
                )?;
            }
            return Ok(response);
        }
        Err(Failure::Runtime(e)) => return Err(e),
    };
    if let Some(refused) = auth::refuse_if_blocked_anywhere(env, client).await? {
        return Ok(refused);
    }
    let named = req.headers().get(SESSION_HEADER)?;
    // A session is named by its object's unique id, which only this deployment makes: an id
    // it did not make reaches no object (and leaves none behind).
    let session = match &named {
        Some(id) => match McpClient::session(env, id)? {
            Some(session) => Some(session),
            None => return transport_refusal(Refusal::NotFound),
        },
        None => None,
    };
    if let (true, Some(last)) = (resumes, &resuming) {
        let Some(session) = session else {
            return transport_error(400, "GET /mcp names its session in Mcp-Session-Id".into());
        };
        return session.resume(&token_id, last).await;
    }
    if method == Method::Delete {
        let Some(session) = session else {
            return transport_error(
                400,
                "DELETE /mcp names its session in Mcp-Session-Id".into(),
            );
        };
        return session.end(&token_id).await;
    }
    let version = req.headers().get(PROTOCOL_VERSION_HEADER)?;
    let body = req.bytes().await?;
    let (session_id, session, named) = match (named, session) {
        (Some(id), Some(session)) => (id, session, true),
        // Only `initialize` starts a session; anything else is answered here.
        _ => {
            match mcp::read(&body) {
                Err(error) => return rpc_error(&error),
                Ok(incoming) => {
                    if let Err(refusal) =
                        admit(None, incoming.is_initialize(), false, &token_id, None)
                    {
                        return transport_refusal(refusal);
                    }
                }
            }
            let (id, session) = McpClient::new_session(env)?;
            (id, session, false)
        }
    };
    // A client that takes a stream gets one for a call that waits on a run and asked for
    // progress (the transport lets a POST be answered either way).
    let streams = req
        .headers()
        .get("accept")?
        .is_some_and(|accept| accept.contains("text/event-stream"));
    session
        .rpc(
            &session_id,
            named,
            &token_id,
            version.as_deref(),
            streams,
            body,
        )
        .await
}

/// The MCP token's id, from `Authorization: Bearer`. The deployment token is not one: an MCP
/// client gets its own, which can be revoked alone.
async fn token_of(req: &Request, env: &Env) -> mimo_durable::Reply<String> {
    let Some(token) = auth::bearer(req) else {
        return Err(Failure::Refused(auth::unauthorized(
            "missing token: send `Authorization: Bearer <MCP token>` (make one in the web app)",
        )));
    };
    if !(token.starts_with(MCP_TOKEN_PREFIX) || token.starts_with(oauth::ACCESS_TOKEN_PREFIX)) {
        return Err(Failure::Refused(auth::unauthorized(
            "/mcp takes an MCP token (mimo_mcp_…, made in the web app) or an OAuth access \
             token of this server; not the deployment's or an extension's",
        )));
    }
    let resource = oauth::resource_of(&req.url()?.origin().ascii_serialization());
    let holder = McpClient::tokens(env)?
        .check_token(&McpTokenCheck { token, resource })
        .await?;
    Ok(holder.token_id)
}

fn transport_error(status: u16, message: String) -> Result<Response> {
    let error = JsonRpcErrorResponse::new(None, JsonRpcErrorCode::BadRequest, message);
    Ok(Response::from_json(&error)?.with_status(status))
}

/// `GET /.well-known/oauth-protected-resource`: what `/mcp` is and how a token is sent to it.
pub fn metadata(req: &Request) -> Result<Response> {
    let origin = req.url()?.origin().ascii_serialization();
    Response::from_json(&ProtectedResourceMetadata {
        resource: oauth::resource_of(&origin),
        authorization_servers: vec![origin],
        bearer_methods_supported: vec!["header".into()],
        resource_name: "Mimo".into(),
    })
}

/// `/api/mcp/tokens` (the web app's): make one, list them, revoke one. The tokens' object
/// checks and answers; its answer is passed on as it is.
pub async fn tokens(req: Request, env: &Env, rest: &str) -> Result<Response> {
    let route = match (req.method(), rest) {
        (Method::Post, "") => "/tokens/create".to_owned(),
        (Method::Get, "") => "/tokens/list".to_owned(),
        // A token's id is `mcp-` and hex: anything else names none (and needs no escaping).
        (Method::Delete, id) if id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') => {
            format!("/tokens/revoke?id={id}")
        }
        (Method::Delete, _) => {
            return error_response(&ErrorObject::new(ErrorCode::NotFound, "no such MCP token"))
        }
        (method, _) => {
            return error_response(&ErrorObject::new(
                ErrorCode::MethodNotAllowed,
                format!(
                    "{method} /api/mcp/tokens/{rest}: POST or GET /api/mcp/tokens, DELETE \
                     /api/mcp/tokens/{{id}}"
                ),
            ))
        }
    };
    McpClient::tokens(env)?.forward_tokens(&route, req).await
}
