//! The Worker entry: HTTP router, auth, WebSocket routing to the Durable Objects. The web app's
//! static files are served by the assets binding before this code runs (see `wrangler.toml`).
//! The objects themselves live in their own script (`mimo_objects`, `objects/wrangler.toml`);
//! this one reaches them through bindings that name it.

mod artifacts;
mod auth;
mod mcp;
mod oauth;
mod script;
mod webhooks;

use futures_util::StreamExt;
use mimo_agent::credentials::Principal;
use mimo_agent::task::Settings;
use mimo_durable::{
    error_response, query_param, ClientObject, Failure, RegistryClient, Reply, SkillClient,
    TaskClient, TaskIndexClient, TicketHolder,
};
use mimo_protocol::extension::PairRequest;
use mimo_protocol::frontend::{DemoTask, NewTask, SetupInfo, TaskHere};
use mimo_protocol::limits::MAX_POLL_BODY_BYTES;
use mimo_protocol::secrets::valid_secret_name;
use mimo_protocol::skills::{valid_skill_name, MAX_SKILL_BYTES};
use mimo_protocol::{ClientId, ErrorCode, ErrorObject, ForkRequest, ForkedFrom, ForkedTask};
use worker::*;

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    // The extension's pages and worker call a few routes with fetch; without a host permission
    // for the server, Chrome holds those calls to CORS. Only an extension's own origin is
    // allowed, only on those routes (never `*`); every other origin gets no CORS at all.
    let extension_origin = extension_origin(&req)?;
    if let Some(origin) = &extension_origin {
        if req.method() == Method::Options {
            return with_cors(Response::empty()?.with_status(204), origin, true);
        }
    }
    let response = route(req, env).await?;
    match extension_origin {
        Some(origin) => with_cors(response, &origin, false),
        None => Ok(response),
    }
}

/// Routes an extension reaches with fetch (the socket itself is not held to CORS): signed
/// artifact URLs among them, where it uploads screenshots and page text (Mimo may be allowed on
/// no site at all, so it cannot count on a host permission for its own server).
fn extension_fetch_route(path: &str) -> bool {
    matches!(
        path,
        "/api/extension/pair"
            | "/api/extension/poll"
            | "/api/extension/task"
            | "/api/ws-ticket"
            | "/api/artifacts/presign"
    ) || path.starts_with("/api/artifacts/")
        || path.starts_with("/artifacts/")
        || (path.starts_with("/api/task/") && path.ends_with("/secret-value"))
}

/// The request's `Origin` when it is an extension's (`chrome-extension://…`) on one of its routes.
fn extension_origin(req: &Request) -> Result<Option<String>> {
    let origin = req.headers().get("origin")?;
    let path = req.url()?.path().to_owned();
    Ok(origin.filter(|o| o.starts_with("chrome-extension://") && extension_fetch_route(&path)))
}

/// The response with CORS headers for `origin` (and, for a preflight, what it may send).
fn with_cors(response: Response, origin: &str, preflight: bool) -> Result<Response> {
    // The headers of a response from another object are immutable: copy them.
    let headers = Headers::new();
    for (name, value) in response.headers().entries() {
        headers.set(&name, &value)?;
    }
    headers.set("access-control-allow-origin", origin)?;
    headers.append("vary", "Origin")?;
    if preflight {
        headers.set("access-control-allow-methods", "GET, POST, PUT")?;
        // `if-none-match`: an upload to a signed URL stores only where nothing is yet.
        headers.set(
            "access-control-allow-headers",
            "authorization, content-type, if-none-match",
        )?;
        headers.set("access-control-max-age", "600")?;
    }
    Ok(response.with_headers(headers))
}

/// Routed by hand rather than with `worker::Router`: authentication and the failure limit come
/// before routing and choose the routes (a paired extension has its own few), and every answer
/// here is a JSON error object — `Router` answers a known path called with another method with
/// a plain-text 405 that no fallback route can replace.
async fn route(req: Request, env: Env) -> Result<Response> {
    let url = req.url()?;
    let path = url.path().to_owned();
    if path == "/api/health" {
        return Response::from_json(&serde_json::json!({ "ok": true }));
    }
    // Signed artifact URLs carry their own authentication (the signature), not the token.
    if path.starts_with("/artifacts/") {
        return artifacts::signed(req, &env).await;
    }
    // RFC 9728 §3.1 places the metadata of `/mcp` at the well-known path followed by `/mcp`;
    // clients ask there first, then at the bare path.
    if path == mcp::METADATA_PATH || path.strip_prefix(mcp::METADATA_PATH) == Some("/mcp") {
        return mcp::metadata(&req);
    }
    if path == oauth::METADATA_PATH {
        return oauth::metadata(&req);
    }
    let oauth = path.starts_with("/oauth/");
    if !(path.starts_with("/api/") || path.starts_with("/ws/") || path == "/mcp" || oauth) {
        return env.assets("ASSETS")?.fetch_request(req).await;
    }
    let req = match with_body_read(req, &path).await? {
        Ok(req) => req,
        Err(too_large) => return error_response(&too_large),
    };
    let client = auth::client_address(&req);
    if let Some(refused) = auth::refuse_if_blocked(&client) {
        return refused;
    }
    if req.method() == Method::Post && path == "/api/extension/pair" {
        return pair(req, &env, &client).await;
    }
    // MCP clients authenticate with their own tokens, on their own endpoint.
    if path == "/mcp" {
        return mcp::serve(req, &env, &client).await;
    }
    // OAuth's own endpoints: a client has no token yet (its codes and tokens are the proof).
    if oauth {
        return oauth::serve(req, &env, &path).await;
    }
    let principal = if path.starts_with("/ws/") {
        auth::from_ticket(&req, &env).await
    } else {
        auth::from_bearer(&req, &env).await
    };
    let principal = match principal {
        Ok(principal) => principal,
        Err(Failure::Refused(error)) => return auth::failed(&env, &client, error).await,
        Err(Failure::Runtime(e)) => return Err(e),
    };
    if let Some(refused) = auth::refuse_if_blocked_anywhere(&env, &client).await? {
        return Ok(refused);
    }
    if let Principal::Extension { client_id } = &principal {
        return extension_route(req, &env, client_id).await;
    }
    let query = |name: &str| query_param(&url, name);
    match (req.method(), path.as_str()) {
        (Method::Get, "/api/task/id") => new_task(&env).await,
        (Method::Get, "/api/setup") => Response::from_json(&SetupInfo {
            model: var(&env, "MIMO_LLM_MODEL").unwrap_or_default(),
            demo: var(&env, "MIMO_DEMO_URL").map(|url| DemoTask::at(&url)),
        }),
        // The session list: the index checks the query (`q`, `limit`, `before`).
        (Method::Get, "/api/tasks") => TaskIndexClient::new(&env)?.list(url.query()).await,
        // The script API (seed 002 §8).
        (_, route) if route.starts_with("/api/agent/") => script::route(req, &env, route).await,
        (Method::Get, "/api/extension/extension-list") => {
            reply(RegistryClient::new(&env)?.list().await)
        }
        (Method::Post, "/api/extension/pairing-code") => {
            reply(RegistryClient::new(&env)?.pairing_code().await)
        }
        (Method::Delete, route) if route.starts_with("/api/extension/") => {
            let client_id = &route["/api/extension/".len()..];
            match RegistryClient::new(&env)?.revoke(client_id).await {
                Ok(()) => Response::empty(),
                Err(failure) => failure.respond(),
            }
        }
        (Method::Post, "/api/ws-ticket") => ticket(&env, &principal).await,
        (_, "/api/oauth/authorize") => oauth::consent(req, &env).await,
        (_, route) if route == "/api/mcp/tokens" || route.starts_with("/api/mcp/tokens/") => {
            let rest = route["/api/mcp/tokens".len()..].trim_start_matches('/');
            mcp::tokens(req, &env, rest).await
        }
        (_, route) if route == "/api/webhooks" || route.starts_with("/api/webhooks/") => {
            webhooks::route(req, &env, &route["/api/webhooks".len()..]).await
        }
        (Method::Get, "/api/skills") => SkillClient::new(&env)?.forward("/list", &[], req).await,
        (Method::Get, "/api/skills/search") => {
            let words = query("q").unwrap_or_default();
            SkillClient::new(&env)?
                .forward("/search", &[("q", &words)], req)
                .await
        }
        (method, route) if route.starts_with("/api/skills/") => {
            skill(method, &route["/api/skills/".len()..], req, &env).await
        }
        (Method::Post, "/api/artifacts/presign") => artifacts::presign(req, &env, None).await,
        (Method::Get, route) if route.starts_with("/api/artifacts/") => {
            artifacts::lookup(&req, &env, &route["/api/artifacts/".len()..], None).await
        }
        (method, route) if route.starts_with("/api/task/") => {
            let (task_id, rest) = route["/api/task/".len()..]
                .split_once('/')
                .unwrap_or((&route["/api/task/".len()..], ""));
            if !valid_task_id(task_id) {
                return error_response(&bad_request(
                    "the path must name a task id from /api/task/id",
                ));
            }
            // Deleting removes the task's history and every artifact it stored in R2; the
            // actions route is the developer API that drives the task's browser directly.
            if method == Method::Post && rest == "fork" {
                return fork(req, &env, task_id).await;
            }
            let secret = rest
                .strip_prefix("secrets/")
                .filter(|name| valid_secret_name(name));
            let object_route = match (&method, rest, secret) {
                (Method::Get, "", _) => "/summary".to_owned(),
                (Method::Delete, "", _) => "/delete".to_owned(),
                (Method::Get | Method::Post, "actions", _) => "/actions".to_owned(),
                (Method::Get, "export", _) => "/export".to_owned(),
                (Method::Get, "export.zip", _) => "/export.zip".to_owned(),
                (Method::Get, "audit.jsonl", _) => "/audit".to_owned(),
                // The task's own secrets: stored and deleted by name, listed without values.
                (Method::Get, "secrets", _) => "/secrets".to_owned(),
                (Method::Put, _, Some(name)) => format!("/secrets/put/{name}"),
                (Method::Delete, _, Some(name)) => format!("/secrets/delete/{name}"),
                _ => {
                    return error_response(&ErrorObject::new(
                        ErrorCode::NotFound,
                        format!("no route for {method} {route}"),
                    ))
                }
            };
            TaskClient::new(&env, task_id)?
                .forward(task_id, &object_route, req)
                .await
        }
        (Method::Get, "/ws/web") => viewer_socket(req, &env, None).await,
        (Method::Get, "/ws/extension") => error_response(&auth::forbidden(
            "an extension connects with a ticket bought with its own credential (pair it from the web app)",
        )),
        _ => error_response(&ErrorObject::new(
            ErrorCode::NotFound,
            format!("no route for {} {path}", req.method()),
        )),
    }
}

/// What a paired extension may do with its own credential: open its socket, store and look up
/// artifacts of the tasks bound to it, and, for its side panel, start a task in its own
/// browser and watch the tasks bound to it (the conversation and the run, never the task's
/// settings: see the task's `Opener`). Nothing else.
async fn extension_route(mut req: Request, env: &Env, id: &ClientId) -> Result<Response> {
    let client_id = id.as_str();
    let url = req.url()?;
    let path = url.path().to_owned();
    let principal = Principal::Extension {
        client_id: id.clone(),
    };
    match (req.method(), path.as_str()) {
        (Method::Post, "/api/ws-ticket") => ticket(env, &principal).await,
        // The connection without a socket (seed 002 §4.1): the same frames, over requests.
        (Method::Post, "/api/extension/poll") => {
            ClientObject::new(env, id)?.poll(client_id, req).await
        }
        (Method::Post, "/api/artifacts/presign") => {
            artifacts::presign(req, env, Some(client_id)).await
        }
        (Method::Get, route) if route.starts_with("/api/artifacts/") => {
            artifacts::lookup(
                &req,
                env,
                &route["/api/artifacts/".len()..],
                Some(client_id),
            )
            .await
        }
        // A secret's value, at the moment of typing, for a task bound to this extension.
        (Method::Post, route)
            if route.starts_with("/api/task/") && route.ends_with("/secret-value") =>
        {
            let task_id = &route["/api/task/".len()..route.len() - "/secret-value".len()];
            if !valid_task_id(task_id) {
                return error_response(&bad_request(
                    "the path must name a task id from /api/task/id",
                ));
            }
            if let Some(refusal) = artifacts::check_binding(env, task_id, Some(client_id)).await? {
                return error_response(&refusal);
            }
            TaskClient::new(env, task_id)?
                .forward(task_id, "/secret-value", req)
                .await
        }
        // The side panel's own tasks: started on the person's current tab, watched live.
        (Method::Post, "/api/extension/task") => match script::body::<TaskHere>(&mut req).await {
            Ok(here) => task_here(env, client_id, &here).await,
            Err(error) => error_response(&error),
        },
        (Method::Get, "/ws/web") => viewer_socket(req, env, Some(client_id)).await,
        (Method::Get, "/ws/extension") => {
            let named = query_param(&url, "clientId");
            if named.as_deref() != Some(client_id) {
                return error_response(&auth::forbidden(
                    "this ticket was bought for another extension's clientId",
                ));
            }
            require_upgrade(&req)?;
            ClientObject::new(env, id)?
                .connect_extension(client_id, &req)
                .await
        }
        _ => error_response(&auth::forbidden(
            "an extension's credential opens only the extension's routes; use the deployment token",
        )),
    }
}

/// `GET`, `PUT` (the `SKILL.md` as the body) and `DELETE /api/skills/{name}`.
async fn skill(method: Method, name: &str, req: Request, env: &Env) -> Result<Response> {
    if !matches!(method, Method::Get | Method::Put | Method::Delete) {
        return error_response(&ErrorObject::new(
            ErrorCode::MethodNotAllowed,
            format!("{method} /api/skills/{{name}}: use GET, PUT or DELETE"),
        ));
    }
    if !valid_skill_name(name) {
        return error_response(&bad_request(
            "a skill's name is 1–64 lowercase letters, digits and single hyphens (and not \
             \"search\")",
        ));
    }
    let length = req.headers().get("content-length")?;
    if length.and_then(|l| l.parse::<usize>().ok()) > Some(MAX_SKILL_BYTES) {
        return error_response(&ErrorObject::new(
            ErrorCode::PayloadTooLarge,
            format!("a SKILL.md is at most {MAX_SKILL_BYTES} bytes"),
        ));
    }
    SkillClient::new(env)?
        .forward("/skill", &[("name", name)], req)
        .await
}

/// `POST /api/ws-ticket`: a ticket for one socket of `principal`.
async fn ticket(env: &Env, principal: &Principal) -> Result<Response> {
    let holder = TicketHolder {
        principal: principal.encode(),
    };
    reply(RegistryClient::new(env)?.ticket(&holder).await)
}

/// `POST /api/extension/pair`: a pairing code for an extension credential. A wrong code counts
/// as a failed authentication.
async fn pair(mut req: Request, env: &Env, client: &str) -> Result<Response> {
    // A right code from a client that another isolate refused is refused here too, and is not
    // used up.
    if let Some(refused) = auth::refuse_if_blocked_anywhere(env, client).await? {
        return Ok(refused);
    }
    let body = req.text().await?;
    let pair: PairRequest = match serde_json::from_str(&body) {
        Ok(pair) => pair,
        Err(e) => return error_response(&bad_request(&format!("not a pairing request: {e}"))),
    };
    match RegistryClient::new(env)?.pair(&pair).await {
        Ok(paired) => Response::from_json(&paired),
        Err(Failure::Refused(error)) if error.code == ErrorCode::Unauthorized => {
            auth::failed(env, client, error).await
        }
        Err(failure) => failure.respond(),
    }
}

/// `GET /ws/web?taskId=…[&lastSeq=N]`: a viewer's socket on a task. The web app's (`side_panel`
/// none) opens on any task; an extension's side panel's only on a task bound to its browser.
async fn viewer_socket(req: Request, env: &Env, side_panel: Option<&str>) -> Result<Response> {
    let url = req.url()?;
    let query = |name: &str| query_param(&url, name);
    let Some(task_id) = query("taskId").filter(|id| valid_task_id(id)) else {
        return error_response(&bad_request("taskId must be a task id from /api/task/id"));
    };
    require_upgrade(&req)?;
    let last_seq = match query("lastSeq").map(|s| s.parse::<u64>()) {
        None => None,
        Some(Ok(last_seq)) => Some(last_seq),
        Some(Err(_)) => {
            return error_response(&bad_request("lastSeq must be a non-negative integer"))
        }
    };
    if let Some(refusal) = artifacts::check_binding(env, &task_id, side_panel).await? {
        return error_response(&refusal);
    }
    TaskClient::new(env, &task_id)?
        .connect_web(last_seq, side_panel, &req)
        .await
}

/// `POST /api/extension/task`: a task of `client_id`'s side panel, bound to its browser, its
/// first run on the tab the person looks at.
async fn task_here(env: &Env, client_id: &str, here: &TaskHere) -> Result<Response> {
    let task_id = uuid::Uuid::new_v4().to_string();
    let task = TaskClient::new(env, &task_id)?;
    let started = match task.init(&task_id).await {
        Ok(_) => task.start_here(client_id, here).await,
        Err(failure) => Err(failure),
    };
    match started {
        Ok(()) => Response::from_json(&NewTask { task_id }),
        Err(failure) => failure.respond(),
    }
}

/// Creates a task and returns its id. Ids are random v4 UUIDs: knowing one is what lets a
/// socket join the task, so they must not be guessable.
async fn new_task(env: &Env) -> Result<Response> {
    let task_id = uuid::Uuid::new_v4().to_string();
    match TaskClient::new(env, &task_id)?.init(&task_id).await {
        Ok(_) => Response::from_json(&NewTask { task_id }),
        Err(failure) => failure.respond(),
    }
}

/// The request with its body read before it is routed, or `PAYLOAD_TOO_LARGE` once it is over
/// the route's limit — counted as it streams in, so a chunked body without a length is held to
/// it too and never read whole. A route that answers before reading the body — a refusal —
/// makes workerd close the connection after the answer without saying so, and a client that
/// keeps connections alive sends its next request into the closed socket (undici's "fetch
/// failed"): read here, each route gets the body as sent. Signed uploads, the one large body,
/// stream on their own route (`artifacts::signed`).
async fn with_body_read(
    mut req: Request,
    path: &str,
) -> Result<std::result::Result<Request, ErrorObject>> {
    if matches!(req.method(), Method::Get | Method::Head) {
        return Ok(Ok(req));
    }
    let limit = body_limit(path);
    let too_large = || {
        ErrorObject::new(
            ErrorCode::PayloadTooLarge,
            format!("the body of {path} is over its limit of {limit} bytes"),
        )
    };
    let declared = req
        .headers()
        .get("content-length")?
        .and_then(|l| l.parse::<u64>().ok());
    if declared.is_some_and(|l| l > limit) {
        return Ok(Err(too_large()));
    }
    if req.inner().body().is_none() {
        return Ok(Ok(req));
    }
    let mut stream = req.stream()?;
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        body.extend_from_slice(&chunk?);
        if body.len() as u64 > limit {
            return Ok(Err(too_large()));
        }
    }
    let mut init = RequestInit::new();
    init.with_method(req.method())
        .with_headers(req.headers().clone())
        .with_body((!body.is_empty()).then(|| js_sys::Uint8Array::from(body.as_slice()).into()));
    Ok(Ok(Request::new_with_init(req.url()?.as_str(), &init)?))
}

/// The most an API request's body may hold: a poll carries up to four extension frames, an MCP
/// call a file to upload; every other route takes small JSON (a chat message, a skill, an
/// action).
fn body_limit(path: &str) -> u64 {
    match path {
        "/api/extension/poll" => MAX_POLL_BODY_BYTES as u64,
        "/mcp" => mcp::MAX_BODY_BYTES,
        _ => artifacts::DRAIN_LIMIT_BYTES,
    }
}

/// `POST /api/task/{id}/fork {messageId}`: a new task whose history is this one's up to that
/// message, linked both ways (seed 004 §4.1).
async fn fork(mut req: Request, env: &Env, task_id: &str) -> Result<Response> {
    let Ok(body) = req.json::<ForkRequest>().await else {
        return error_response(&bad_request(
            "the body must be JSON: {\"messageId\": \"<id of a message of the task>\"}",
        ));
    };
    let source = TaskClient::new(env, task_id)?;
    let seed = match source.fork_seed(&body.message_id).await {
        Ok(seed) => seed,
        Err(failure) => return failure.respond(),
    };
    let fork_id = uuid::Uuid::new_v4().to_string();
    if let Err(failure) = TaskClient::new(env, &fork_id)?
        .fork_init(&fork_id, &seed)
        .await
    {
        return failure.respond();
    }
    let link = ForkedFrom {
        task_id: fork_id.clone(),
        message_id: body.message_id,
    };
    // The fork exists with its link back; the link from here is best kept, never a failure.
    if let Err(failure) = source.forked(&link).await {
        console_warn!("task {task_id} was not told of its fork {fork_id}: {failure:?}");
    }
    Ok(Response::from_json(&ForkedTask {
        task_id: fork_id,
        forked_from: seed.forked_from,
    })?
    .with_status(201))
}

fn valid_task_id(id: &str) -> bool {
    uuid::Uuid::parse_str(id).is_ok()
}

fn bad_request(message: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::SchemaValidationFailed, message)
}

fn require_upgrade(req: &Request) -> Result<()> {
    match req.headers().get("upgrade")? {
        Some(v) if v.eq_ignore_ascii_case("websocket") => Ok(()),
        _ => Err(Error::RustError("expected a WebSocket upgrade".into())),
    }
}

/// Another object's answer as this request's response.
fn reply<T: serde::Serialize>(answer: Reply<T>) -> Result<Response> {
    match answer {
        Ok(value) => Response::from_json(&value),
        Err(failure) => failure.respond(),
    }
}

/// A configured var or secret, if set and not empty.
fn var(env: &Env, name: &str) -> Option<String> {
    env.var(name)
        .ok()
        .map(|v| v.to_string())
        .filter(|v| !v.is_empty())
}

/// A positive whole number from the configuration, read as the core reads every setting: a
/// value that is not one is named in a warning and its default applies.
fn number_setting(env: &Env, name: &'static str) -> Option<u64> {
    let lookup = |name: &str| var(env, name);
    let mut settings = Settings::new(&lookup);
    let value = settings.number(name);
    for warning in settings.into_warnings() {
        console_warn!("{}", warning.message);
    }
    value
}
