//! `/api/webhooks` (the deployment token's, like every `/api` route): subscriptions made,
//! listed, deleted and their secrets rotated; the delivery log, and "send again". The
//! webhooks' object (`mimo_durable::WebhookDispatcher`) checks and answers; its answer is
//! passed on as it is.

use mimo_durable::{error_response, WebhookClient};
use mimo_protocol::{ErrorCode, ErrorObject};
use worker::{Env, Method, Request, Response, Result};

/// `rest` is the path after `/api/webhooks`.
pub async fn route(mut req: Request, env: &Env, rest: &str) -> Result<Response> {
    let url = req.url()?;
    let client = WebhookClient::new(env)?;
    let id_ok =
        |id: &str| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let parts: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
    match (req.method(), parts.as_slice()) {
        (Method::Get, [""]) => client.forward("/list", None).await,
        // The object reads and checks the body; the origin is where the links point.
        (Method::Post, [""]) => {
            // An origin's ASCII form (scheme, host, port) needs no escaping in a query.
            let origin = url.origin().ascii_serialization();
            let body = req.text().await?;
            client
                .forward(&format!("/create?origin={origin}"), Some(body))
                .await
        }
        (Method::Get, ["deliveries"]) => {
            let webhook = url
                .query_pairs()
                .find(|(k, _)| k == "webhook")
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default();
            if !webhook.is_empty() && !id_ok(&webhook) {
                return not_found();
            }
            client
                .forward(&format!("/deliveries?webhook={webhook}"), None)
                .await
        }
        (Method::Post, ["deliveries", id, "resend"]) if id.bytes().all(|b| b.is_ascii_digit()) => {
            client
                .forward(&format!("/resend?id={id}"), Some(String::new()))
                .await
        }
        (Method::Delete, [id]) if id_ok(id) => {
            client
                .forward(&format!("/delete?id={id}"), Some(String::new()))
                .await
        }
        (Method::Post, [id, "rotate"]) if id_ok(id) => {
            client
                .forward(&format!("/rotate?id={id}"), Some(String::new()))
                .await
        }
        (method, _) => error_response(&ErrorObject::new(
            ErrorCode::NotFound,
            format!(
                "no route for {method} /api/webhooks{rest}: GET or POST /api/webhooks, DELETE \
                 /api/webhooks/{{id}}, POST /api/webhooks/{{id}}/rotate, GET \
                 /api/webhooks/deliveries?webhook=, POST /api/webhooks/deliveries/{{id}}/resend"
            ),
        )),
    }
}

fn not_found() -> Result<Response> {
    error_response(&ErrorObject::new(ErrorCode::NotFound, "no such webhook"))
}
