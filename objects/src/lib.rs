//! The Durable Objects' Worker script: the classes of `mimo_durable`, exported for the runtime
//! (the `objects` feature). Nothing else is served here: every request reaches the objects
//! through the route worker (`mimo_worker`) and its bindings, which name this script.

use worker::{event, Context, Env, Request, Response, Result};

// The runtime finds the classes among this module's exports.
pub use mimo_durable::{
    ExtensionRegistry, McpSession, SkillLibrary, TaskCoordinator, TaskIndex, WebhookDispatcher,
};

/// The script's own URL serves nothing: the route worker is the deployment's front door.
#[event(fetch)]
async fn fetch(_req: Request, _env: Env, _ctx: Context) -> Result<Response> {
    Response::error(
        "Not found: this script only holds Mimo's Durable Objects",
        404,
    )
}
