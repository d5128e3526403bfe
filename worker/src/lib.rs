//! The Worker entry: HTTP router, auth, WebSocket routing to the Durable Objects. The web app's
//! static files are served by the assets binding before this code runs (see `wrangler.toml`).

mod artifacts;
mod auth;

use mimo_durable::{
    error_response, json_request, EXTENSION_REGISTRY, REGISTRY_NAME, TASK_COORDINATOR,
};
use mimo_protocol::frontend::NewTask;
use mimo_protocol::{ErrorCode, ErrorObject};
use worker::*;

// The Durable Object classes must be exported by this module for the runtime to find them.
pub use mimo_durable::{ExtensionRegistry, TaskCoordinator};

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    let url = req.url()?;
    let path = url.path().to_owned();
    if path == "/api/health" {
        return Response::from_json(&serde_json::json!({ "ok": true }));
    }
    // Signed artifact URLs carry their own authentication (the signature), not the token.
    if path.starts_with("/artifacts/") {
        return artifacts::signed(req, &env).await;
    }
    if !(path.starts_with("/api/") || path.starts_with("/ws/")) {
        return env.assets("ASSETS")?.fetch_request(req).await;
    }
    if let Err(error) = auth::check(&req, &env) {
        return error_response(&error);
    }
    let query = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    match (req.method(), path.as_str()) {
        (Method::Get, "/api/task/id") => new_task(&env).await,
        (Method::Get, "/api/extension/extension-list") => {
            registry(&env)?
                .fetch_with_request(json_request::<()>(Method::Get, "/list", None)?)
                .await
        }
        (Method::Post, "/api/artifacts/presign") => artifacts::presign(req, &env).await,
        (Method::Get, route) if route.starts_with("/api/artifacts/") => {
            artifacts::lookup(&req, &env, &route["/api/artifacts/".len()..]).await
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
            let object_route = match (&method, rest) {
                (Method::Get, "") => "/summary",
                (Method::Delete, "") => "/delete",
                (Method::Get | Method::Post, "actions") => "/actions",
                (Method::Get, "export") => "/export",
                _ => {
                    return error_response(&ErrorObject::new(
                        ErrorCode::NotFound,
                        format!("no route for {method} {route}"),
                    ))
                }
            };
            let verb = if method == Method::Get {
                Method::Get
            } else {
                Method::Post
            };
            let mut init = RequestInit::new();
            init.with_method(verb);
            if method == Method::Post {
                let mut req = req;
                init.with_body(Some(req.text().await?.into()));
            }
            let target = format!("https://internal{object_route}?taskId={task_id}");
            task(&env, task_id)?
                .fetch_with_request(Request::new_with_init(&target, &init)?)
                .await
        }
        (Method::Get, "/ws/web") => {
            let Some(task_id) = query("taskId").filter(|id| valid_task_id(id)) else {
                return error_response(&bad_request("taskId must be a task id from /api/task/id"));
            };
            require_upgrade(&req)?;
            let mut target = String::from("https://internal/ws/web");
            if let Some(last_seq) = query("lastSeq") {
                let Ok(last_seq) = last_seq.parse::<u64>() else {
                    return error_response(&bad_request("lastSeq must be a non-negative integer"));
                };
                target.push_str(&format!("?lastSeq={last_seq}"));
            }
            task(&env, &task_id)?
                .fetch_with_request(Request::new_with_init(&target, &forward(&req)?)?)
                .await
        }
        (Method::Get, "/ws/extension") => {
            require_upgrade(&req)?;
            let client_id = query("clientId").unwrap_or_default();
            let target = format!(
                "https://internal/ws/extension?clientId={}",
                urlencode(&client_id)
            );
            registry(&env)?
                .fetch_with_request(Request::new_with_init(&target, &forward(&req)?)?)
                .await
        }
        _ => error_response(&ErrorObject::new(
            ErrorCode::NotFound,
            format!("no route for {} {path}", req.method()),
        )),
    }
}

/// Creates a task and returns its id. Ids are random v4 UUIDs: knowing one is what lets a
/// socket join the task, so they must not be guessable.
async fn new_task(env: &Env) -> Result<Response> {
    let task_id = uuid::Uuid::new_v4().to_string();
    let init = json_request::<()>(Method::Post, &format!("/init?taskId={task_id}"), None)?;
    let response = task(env, &task_id)?.fetch_with_request(init).await?;
    if response.status_code() >= 300 {
        return Ok(response);
    }
    Response::from_json(&NewTask { task_id })
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

/// The original request's method and headers (the upgrade among them) for the object.
fn forward(req: &Request) -> Result<RequestInit> {
    let mut init = RequestInit::new();
    init.with_method(req.method())
        .with_headers(req.headers().clone());
    Ok(init)
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// A configured var or secret, if set and not empty.
fn var(env: &Env, name: &str) -> Option<String> {
    env.var(name)
        .ok()
        .map(|v| v.to_string())
        .filter(|v| !v.is_empty())
}

fn task(env: &Env, task_id: &str) -> Result<Stub> {
    env.durable_object(TASK_COORDINATOR)?.get_by_name(task_id)
}

fn registry(env: &Env) -> Result<Stub> {
    env.durable_object(EXTENSION_REGISTRY)?
        .get_by_name(REGISTRY_NAME)
}
