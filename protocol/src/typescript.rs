//! Generation of the TypeScript protocol module used by `web/` and `extension/`.

use strum::IntoEnumIterator;
use ts_rs::{Config, TS};

use crate::{
    action, agent, audit, bridge, error, extension, frontend, mcp, oauth, script, secrets, skills,
    snapshot, task, webhooks,
};

/// Where the generated module is checked in, relative to the workspace root.
pub const TYPESCRIPT_PATH: &str = "protocol/ts/protocol.ts";

macro_rules! declarations {
    ($cfg:expr; $($ty:ty),* $(,)?) => {
        vec![$(format!("export {}", <$ty as TS>::decl($cfg))),*]
    };
}

/// The whole generated module, deterministic so a test can compare it with the checked-in copy.
pub fn typescript_module() -> String {
    // Every integer we send fits in a double; `bigint` would not survive `JSON.parse`.
    let cfg = &Config::new().with_large_int("number");
    let decls = declarations![cfg;
        error::ErrorCode,
        error::ErrorObject,
        error::LlmErrorKind,
        task::TaskStatus,
        task::TaskControl,
        task::ForkedFrom,
        task::ForkRequest,
        task::ForkedTask,
        task::TaskListEntry,
        task::TaskList,
        snapshot::BrowserSnapshot,
        snapshot::WindowInfo,
        snapshot::TabInfo,
        snapshot::TabGroupInfo,
        snapshot::TabEvent,
        action::ScanScope,
        action::ClickStrategy,
        action::TypeStrategy,
        action::ScrollDirection,
        action::Target,
        action::DragEnd,
        action::DomainPolicy,
        secrets::PiiKind,
        secrets::RedactionPolicy,
        secrets::SecretScope,
        secrets::SecretInfo,
        secrets::PutSecret,
        secrets::SecretValueRequest,
        secrets::SecretValue,
        skills::Skill,
        skills::SkillList,
        skills::SkillHit,
        skills::SkillSearch,
        action::ActionCommand,
        action::Rerun,
        action::Verify,
        action::ActionTraits,
        action::BrowserAction,
        action::ActionStatus,
        action::ActionOutcome,
        action::StageTime,
        action::DialogKind,
        action::PageDialog,
        action::TaskTab,
        action::TaskStartResult,
        action::ScreenshotResult,
        action::ObserveResult,
        action::ObservedPart<serde_json::Value>,
        action::ReadabilityResult,
        action::BoundingBox,
        action::DomElement,
        action::ElementFacts,
        action::FormFacts,
        action::FieldKind,
        action::DomIndexResult,
        agent::Reflection,
        agent::AgentOutput,
        action::DragPoint,
        agent::BrowserTaskArgs,
        agent::SubtaskStatus,
        agent::BrowserTaskResult,
        action::AgentAction,
        agent::ToolResult,
        agent::TokenUsage,
        agent::ToolPhase,
        agent::RiskLevel,
        audit::AuditRecord,
        audit::AuditAction,
        audit::AuditPage,
        audit::AuditOutcome,
        audit::AuditConfirmation,
        audit::AuditModelRetry,
        extension::BrowserInfo,
        extension::AttemptState,
        extension::ExtensionMessage,
        extension::ServerToExtension,
        extension::ExtensionInfo,
        extension::ExtensionList,
        extension::PairingCode,
        extension::PairRequest,
        extension::PairResponse,
        extension::WsTicket,
        extension::PollRequest,
        script::ScriptStart,
        script::ScriptNext,
        script::ScriptReport,
        script::ScriptConfirm,
        script::ScriptCancel,
        script::ScriptTarget,
        script::ScriptAction,
        script::Observation,
        script::ScriptError,
        script::ScriptStatus,
        extension::PollResponse,
        extension::PolledFrame,
        frontend::FrontendMessage,
        frontend::ChatRole,
        frontend::ChatMessage,
        frontend::OutputStatus,
        crate::artifact::Attachment,
        frontend::FrontendEvent,
        frontend::ConfirmationRequest,
        frontend::EventEnvelope,
        frontend::NewTask,
        frontend::TaskHere,
        frontend::SetupInfo,
        frontend::DemoTask,
        frontend::TaskSummary,
        crate::artifact::ArtifactKind,
        crate::artifact::PresignRequest,
        crate::artifact::PresignResponse,
        crate::artifact::DownloadResponse,
        bridge::BridgeRequest,
        bridge::Invoke,
        bridge::BridgeTool,
        bridge::ReadArgs,
        bridge::ReadData,
        bridge::WriteArgs,
        bridge::WriteData,
        bridge::EditArgs,
        bridge::EditData,
        bridge::BashArgs,
        bridge::BashData,
        bridge::BridgeInfo,
        bridge::BridgeMessage,
        bridge::InvokeResult,
        mcp::RequestId,
        mcp::JsonRpcRequest,
        mcp::JsonRpcNotification,
        mcp::JsonRpcResponse,
        mcp::JsonRpcErrorResponse,
        mcp::JsonRpcError,
        mcp::Implementation,
        mcp::InitializeParams,
        mcp::InitializeResult,
        mcp::ServerCapabilities,
        mcp::ToolsCapability,
        mcp::Tool,
        mcp::ToolAnnotations,
        mcp::ListToolsParams,
        mcp::ListToolsResult,
        mcp::CallToolParams,
        mcp::RequestMeta,
        mcp::CallToolResult,
        mcp::Content,
        mcp::EmptyResult,
        mcp::ElicitRequestParams,
        mcp::ElicitResult,
        mcp::ElicitAction,
        mcp::ProtectedResourceMetadata,
        mcp::McpTokenRequest,
        mcp::McpTokenCreated,
        mcp::McpTokenInfo,
        mcp::McpTokenList,
        oauth::ConsentRequest,
        oauth::ConsentAnswer,
        oauth::ConsentRedirect,
        webhooks::WebhookEventType,
        webhooks::WebhookEventData,
        webhooks::WebhookEvent,
        webhooks::WebhookReport,
        webhooks::WebhookEvents,
        webhooks::WebhookLinks,
        webhooks::WebhookPayload,
        webhooks::WebhookCreate,
        webhooks::WebhookInfo,
        webhooks::WebhookSecret,
        webhooks::WebhookList,
        webhooks::DeliveryStatus,
        webhooks::WebhookDelivery,
        webhooks::WebhookDeliveryList,
    ];
    let limits = [
        ("MAX_WEB_FRAME_BYTES", crate::limits::MAX_WEB_FRAME_BYTES),
        (
            "MAX_EXTENSION_FRAME_BYTES",
            crate::limits::MAX_EXTENSION_FRAME_BYTES,
        ),
        (
            "MAX_USER_MESSAGE_BYTES",
            crate::limits::MAX_USER_MESSAGE_BYTES,
        ),
        ("MAX_SKILL_BYTES", skills::MAX_SKILL_BYTES),
        // The artifact limits live in r2-artifacts; the extension reads them from here.
        (
            "READABILITY_INLINE_LIMIT_BYTES",
            crate::artifact::READABILITY_INLINE_LIMIT_BYTES as usize,
        ),
        (
            "READABILITY_MAX_BYTES",
            crate::artifact::READABILITY_MAX_BYTES as usize,
        ),
        (
            "SCREENSHOT_MAX_BYTES",
            crate::artifact::SCREENSHOT_MAX_BYTES as usize,
        ),
        ("HTML_MAX_BYTES", crate::artifact::HTML_MAX_BYTES as usize),
        (
            "DOM_INDEX_MAX_BYTES",
            crate::artifact::DOM_INDEX_MAX_BYTES as usize,
        ),
        (
            "ATTACHMENT_MAX_BYTES",
            crate::artifact::ATTACHMENT_MAX_BYTES as usize,
        ),
        ("MAX_POLL_WAIT_MS", extension::MAX_POLL_WAIT_MS as usize),
        ("POLL_PRESENCE_MS", extension::POLL_PRESENCE_MS as usize),
        ("MAX_BRIDGE_FRAME_BYTES", bridge::MAX_BRIDGE_FRAME_BYTES),
        ("MAX_BRIDGE_OUTPUT_BYTES", bridge::MAX_BRIDGE_OUTPUT_BYTES),
        (
            "DEFAULT_BASH_TIMEOUT_MS",
            bridge::DEFAULT_BASH_TIMEOUT_MS as usize,
        ),
        ("MAX_BASH_TIMEOUT_MS", bridge::MAX_BASH_TIMEOUT_MS as usize),
    ];
    let mut out = String::from(
        "// Generated from the Rust types in protocol/ by `cargo run -p mimo-protocol --bin gen-ts`.\n\
         // Do not edit: change the Rust types and regenerate.\n\n",
    );
    for decl in decls {
        out.push_str(&decl);
        out.push_str("\n\n");
    }
    for (name, value) in limits {
        out.push_str(&format!("export const {name} = {value};\n"));
    }
    // One row per action, with literal types (`as const`) so the extension's types can depend
    // on a trait, and checked against `ActionTraits` so no action or trait is missing.
    out.push_str("export type ActionName = ActionCommand[\"name\"];\n");
    out.push_str("export const ACTION_TRAITS = {\n");
    for kind in action::ActionKind::iter() {
        let traits = serde_json::to_string(&kind.traits()).expect("traits serialize");
        out.push_str(&format!("  {:?}: {traits},\n", kind.name()));
    }
    out.push_str("} as const satisfies Record<ActionName, ActionTraits>;\n");
    // How each of the model's actions reads for people (`AgentActionKind::wording`).
    out.push_str("type KeysOf<T> = T extends unknown ? keyof T : never;\n");
    out.push_str("export type AgentActionName = KeysOf<AgentAction>;\n");
    out.push_str("export const STEP_WORDING: Record<AgentActionName, string> = {\n");
    for kind in action::AgentActionKind::iter() {
        out.push_str(&format!("  {:?}: {:?},\n", kind.name(), kind.wording()));
    }
    out.push_str("};\n");
    for (name, value) in [
        ("PING_FRAME", extension::PING_FRAME),
        ("PONG_FRAME", extension::PONG_FRAME),
    ] {
        out.push_str(&format!("export const {name} = {value:?};\n"));
    }
    out
}
