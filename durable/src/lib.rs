//! The Durable Objects: thin shells that feed I/O (sockets, SQLite, fetch, alarms) into the
//! sans-I/O core in `mimo-agent` and carry its effects out.
//!
//! - [`TaskCoordinator`]: one per task. Holds the web app's sockets (hibernatable, tagged
//!   `web`), the task's SQLite (task row, messages, event log, snapshot), and runs LLM turns.
//! - [`ExtensionRegistry`]: one per deployment. Holds the extensions' sockets (tagged by client),
//!   their presence and browser snapshots, and which task uses which extension.
//! - [`SkillLibrary`]: one per deployment. Holds the skills (`SKILL.md`), searchable, and
//!   answers a run's lookups for its goal and page.
//! - [`TaskIndex`]: one per deployment. The session list: every task's title, status and last
//!   activity (and forks), as the tasks' coordinators report them, searchable by title.
//! - [`McpSession`]: one per MCP session (its owner, revision, task and extension), and one
//!   that keeps the deployment's MCP tokens.
//! - [`WebhookDispatcher`]: one per deployment. The webhook subscriptions, and the deliveries
//!   of the events the coordinators report, retried from its alarm, in order per task.

mod action_store;
mod alarm;
mod artifacts;
mod clients;
mod credentials;
mod deadline;
mod error;
mod http;
mod llm_client;
mod mcp_oauth;
mod mcp_session;
mod mcp_store;
mod mcp_upload;
mod registry;
mod registry_store;
mod secret_store;
mod skill_library;
mod skill_store;
mod socket;
mod sql;
#[cfg(all(test, target_arch = "wasm32"))]
mod store_tests;
mod task;
mod task_actions;
mod task_index;
mod task_index_store;
mod task_runs;
mod task_secrets;
mod task_store;
#[cfg(all(test, target_arch = "wasm32"))]
mod wasm_tests;
mod webhook_store;
mod webhooks;

pub use clients::{
    ArtifactGrant, ArtifactRecord, ArtifactStored, AuthFailure, AuthFailureCount, ClientObject,
    ConfirmBody, McpClient, McpTokenCheck, RegistryClient, SkillClient, TaskClient,
    TaskIndexClient, TicketHolder, TicketRedeem, TokenCheck, TokenHolder, WebhookClient,
};
pub use error::{Failure, Refusable, Reply};
pub use http::{error_response, now_ms, query_param, random_bytes};
pub use mcp_oauth::{consent_refused, AuthorizeCheck, RESOURCE_HEADER};
pub use mcp_session::McpSession;
pub use mcp_session::{rpc_error, transport_refusal};
pub use mimo_agent::credentials::Confirmer;
pub use registry::ExtensionRegistry;
pub use skill_library::SkillLibrary;
pub use task::TaskCoordinator;
pub use task_index::TaskIndex;
pub use webhooks::WebhookDispatcher;

/// A class's exports come from `#[durable_object]`, which the `objects` feature applies (the
/// objects' script); without it the class is still a `DurableObject` (for the runtime's type
/// checks) but nothing exports it, so the route worker's bundle leaves its code out.
macro_rules! not_exported {
    ($($class:ty),*) => {
        $(
            #[cfg(not(feature = "objects"))]
            impl worker::has_durable_object_attribute for $class {}
        )*
    };
}
not_exported!(
    TaskCoordinator,
    ExtensionRegistry,
    SkillLibrary,
    TaskIndex,
    McpSession,
    WebhookDispatcher
);

/// Binding names from `wrangler.toml`.
pub const TASK_COORDINATOR: &str = "TASK_COORDINATOR";
pub const EXTENSION_REGISTRY: &str = "EXTENSION_REGISTRY";
pub const SKILL_LIBRARY: &str = "SKILL_LIBRARY";
pub const TASK_INDEX: &str = "TASK_INDEX";
pub const MCP_SESSION: &str = "MCP_SESSION";
pub const WEBHOOK_DISPATCHER: &str = "WEBHOOK_DISPATCHER";
/// The registry, the skill library, the task index and the webhooks are single objects; their name is fixed.
pub const REGISTRY_NAME: &str = "global";
pub const ARTIFACTS: &str = "ARTIFACTS";
