//! Every message that crosses a wire in Mimo, and every error code, as serde types.
//!
//! This crate is the single source of truth for the protocol: the worker, the Durable Objects
//! and the sans-I/O core use these types directly, and the TypeScript types used by `web/` and
//! `extension/` are generated from them (`cargo run -p mimo-protocol --bin gen-ts`), never
//! retyped. A test fails when the checked-in TypeScript is stale.

#[macro_use]
mod via_value;

pub mod action;
pub mod agent;
pub mod artifact;
pub mod audit;
pub mod bridge;
pub mod client_id;
pub mod error;
pub mod extension;
pub mod frontend;
pub mod limits;
pub mod mcp;
pub mod oauth;
pub mod script;
pub mod secrets;
pub mod skills;
pub mod snapshot;
pub mod task;
pub mod time;
pub mod typescript;
pub mod webhooks;

pub use action::{
    ActionCommand, ActionKind, ActionOutcome, ActionStatus, AgentAction, AgentActionKind,
    BrowserAction, DialogKind, DomainPolicy, DragEnd, DragPoint, ElementFacts, FieldKind,
    FormFacts, PageDialog, Rerun, Target, TaskTab,
};
pub use agent::{
    AgentOutput, BrowserTaskArgs, BrowserTaskResult, Reflection, RiskLevel, SubtaskStatus,
    TokenUsage, ToolPhase, ToolResult,
};
pub use artifact::Attachment;
pub use client_id::ClientId;
pub use error::{ErrorCode, ErrorObject, LlmErrorKind};
pub use extension::{
    AttemptState, BrowserInfo, ExtensionInfo, ExtensionMessage, ServerToExtension,
};
pub use frontend::{
    ChatMessage, ChatRole, ConfirmationRequest, EventEnvelope, FrontendEvent, FrontendMessage,
    OutputStatus,
};
pub use secrets::{PiiKind, RedactionPolicy, SecretInfo, SecretScope};
pub use skills::{Skill, SkillHit, SkillList, SkillSearch};
pub use snapshot::{BrowserSnapshot, TabEvent, TabGroupInfo, TabInfo, WindowInfo};
pub use task::{
    ForkRequest, ForkedFrom, ForkedTask, TaskControl, TaskList, TaskListEntry, TaskStatus,
};

/// Parses one text frame received on a socket, mapping every way it can be wrong (not JSON,
/// not an object, unknown `type`, missing or mistyped field, too large) to a
/// `SCHEMA_VALIDATION_FAILED` error whose message says what was wrong.
pub fn parse_frame<T: serde::de::DeserializeOwned>(
    text: &str,
    max_bytes: usize,
) -> Result<T, ErrorObject> {
    if text.len() > max_bytes {
        return Err(ErrorObject::new(
            ErrorCode::SchemaValidationFailed,
            format!(
                "frame of {} bytes exceeds the limit of {max_bytes} bytes",
                text.len()
            ),
        ));
    }
    serde_json::from_str(text).map_err(|e| {
        let what = if e.is_syntax() || e.is_eof() {
            "frame is not valid JSON"
        } else {
            "frame does not match the protocol"
        };
        ErrorObject::new(ErrorCode::SchemaValidationFailed, format!("{what}: {e}"))
    })
}
