//! Model Context Protocol (MCP) over JSON-RPC 2.0: the messages of Mimo's `/mcp` endpoint
//! (Streamable HTTP), written by hand after the specification's schema (revision 2025-11-25,
//! and the two before it that Mimo negotiates down to). Only what Mimo serves is here:
//! `initialize`, `ping`, `tools/list`, `tools/call` and the client's notifications. The rules
//! (negotiation, dispatch, tools) are `mimo_agent::mcp`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The revision Mimo speaks, offered to a client that asks for one Mimo does not know.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// Every revision Mimo answers in, newest first.
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// The HTTP header that names the client's session after `initialize`.
pub const SESSION_HEADER: &str = "mcp-session-id";

/// The HTTP header that names the negotiated revision on every request after `initialize`.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// A request's id: a string or a whole number (never null in MCP).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(untagged)]
pub enum RequestId {
    Number(i64),
    String(String),
}

/// A JSON-RPC request: the client's, as parsed (`params` is read by the method that takes it), or
/// the server's to the client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct JsonRpcRequest {
    pub jsonrpc: String,
    pub id: RequestId,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub params: Option<serde_json::Value>,
}

impl JsonRpcRequest {
    /// A request of the server's to the client (sent on the stream of the call it is about).
    pub fn new(id: RequestId, method: &str, params: &impl Serialize) -> Self {
        Self {
            jsonrpc: JSONRPC_VERSION.into(),
            id,
            method: method.into(),
            params: serde_json::to_value(params).ok(),
        }
    }
}

/// A notification from the client (no id, no answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct JsonRpcNotification {
    pub jsonrpc: String,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub params: Option<serde_json::Value>,
}

/// A successful answer to a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct JsonRpcResponse {
    pub jsonrpc: String,
    pub id: RequestId,
    #[ts(type = "unknown")]
    pub result: serde_json::Value,
}

/// A failed request: without `id` when the request could not be read far enough to know it
/// (MCP's schema leaves it out where JSON-RPC 2.0 would write null).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct JsonRpcErrorResponse {
    pub jsonrpc: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub id: Option<RequestId>,
    pub error: JsonRpcError,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct JsonRpcError {
    /// One of [`JsonRpcErrorCode`]'s.
    pub code: i32,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub data: Option<serde_json::Value>,
}

/// JSON-RPC 2.0's error codes, the ones MCP uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonRpcErrorCode {
    /// The body is not JSON.
    ParseError = -32700,
    /// JSON, but not a JSON-RPC request, notification or response.
    InvalidRequest = -32600,
    MethodNotFound = -32601,
    /// The method's params are missing or wrong (an unknown tool too).
    InvalidParams = -32602,
    InternalError = -32603,
    /// A request the transport refuses (a missing session header, a wrong protocol version
    /// header, a method other than POST or DELETE), in the range JSON-RPC leaves to servers.
    BadRequest = -32000,
    /// The session named is unknown or ended: the client initializes a new one.
    SessionNotFound = -32001,
}

impl JsonRpcErrorResponse {
    pub fn new(id: Option<RequestId>, code: JsonRpcErrorCode, message: impl Into<String>) -> Self {
        Self {
            jsonrpc: JSONRPC_VERSION.to_owned(),
            id,
            error: JsonRpcError {
                code: code as i32,
                message: message.into(),
                data: None,
            },
        }
    }
}

impl JsonRpcResponse {
    pub fn new(id: RequestId, result: &impl Serialize) -> Self {
        Self {
            jsonrpc: JSONRPC_VERSION.to_owned(),
            id,
            result: serde_json::to_value(result).expect("MCP results serialize"),
        }
    }
}

/// The `jsonrpc` member every message carries.
pub const JSONRPC_VERSION: &str = "2.0";

/// A program's name and version (`clientInfo`, `serverInfo`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Implementation {
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
}

/// `initialize`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    pub protocol_version: String,
    /// What the client can do (roots, sampling, elicitation): Mimo asks for none of it yet.
    #[serde(default)]
    #[ts(type = "unknown")]
    pub capabilities: serde_json::Value,
    pub client_info: Implementation,
}

/// `initialize`'s result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: String,
    pub capabilities: ServerCapabilities,
    pub server_info: Implementation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub instructions: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tools: Option<ToolsCapability>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// Whether the server tells the client when its tools change (Mimo's never do).
    pub list_changed: bool,
}

/// One tool as `tools/list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    pub description: String,
    /// A JSON Schema object for the tool's `arguments`.
    #[ts(type = "unknown")]
    pub input_schema: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub annotations: Option<ToolAnnotations>,
}

/// Hints about a tool for the client (never trusted by a client, never relied on here).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub destructive_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub idempotent_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub open_world_hint: Option<bool>,
}

/// `tools/list`'s params (Mimo's list is one page).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    pub tools: Vec<Tool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub next_cursor: Option<String>,
}

/// `tools/call`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct CallToolParams {
    pub name: String,
    #[serde(default)]
    #[ts(optional, type = "Record<string, unknown>")]
    pub arguments: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub meta: Option<RequestMeta>,
}

/// A request's `_meta`: what Mimo reads of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RequestMeta {
    /// Where the client wants `notifications/progress` for this request to say they are for:
    /// it asks for them by sending one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub progress_token: Option<RequestId>,
}

/// `tools/call`'s result: what the tool did, or (`isError`) why it did not, for the model to
/// read and act on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    pub content: Vec<Content>,
    /// The result as JSON, when the tool has one (`run_task` given an answer schema: the
    /// answer in that shape); its text is in `content` too, for clients that read only that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "Record<string, unknown>")]
    pub structured_content: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

impl CallToolResult {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::Text { text: text.into() }],
            structured_content: None,
            is_error: false,
        }
    }

    pub fn error(text: impl Into<String>) -> Self {
        Self {
            is_error: true,
            ..Self::text(text)
        }
    }
}

/// One block of a tool's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    Text {
        text: String,
    },
    /// An image, base64-encoded.
    #[serde(rename_all = "camelCase")]
    Image {
        data: String,
        mime_type: String,
    },
}

/// An empty result (`ping`'s).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
pub struct EmptyResult {}

/// `POST /api/mcp/tokens`: a new MCP token for one client, named so the person knows which.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct McpTokenRequest {
    pub name: String,
}

/// A new MCP token: `token` is shown this once (only its digest is kept).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpTokenCreated {
    pub id: String,
    pub name: String,
    pub token: String,
    #[ts(type = "number")]
    pub created_at: u64,
}

/// `elicitation/create`'s params, form mode: the server asks the client's user to fill in
/// `requested_schema` (flat, primitive fields), showing `message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestParams {
    /// `form`; left out for a client on 2025-06-18, the revision before modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mode: Option<String>,
    pub message: String,
    #[ts(type = "unknown")]
    pub requested_schema: serde_json::Value,
}

/// The client's answer to `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ElicitResult {
    pub action: ElicitAction,
    /// What the user filled in (with `accept`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "Record<string, unknown>")]
    pub content: Option<serde_json::Map<String, serde_json::Value>>,
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted the form.
    Accept,
    /// Said no.
    Decline,
    /// Dismissed it without choosing.
    Cancel,
}

/// One MCP token as listed, without its secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpTokenInfo {
    pub id: String,
    pub name: String,
    #[ts(type = "number")]
    pub created_at: u64,
}

/// `GET /api/mcp/tokens`: the tokens not revoked, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct McpTokenList {
    pub tokens: Vec<McpTokenInfo>,
}

/// The longest name of an MCP token, in characters.
pub const MAX_MCP_TOKEN_NAME_CHARS: usize = 100;

/// The OAuth 2.0 protected resource metadata (RFC 9728) served at
/// `/.well-known/oauth-protected-resource`: which resource `/mcp` is and how a bearer token is
/// sent to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ProtectedResourceMetadata {
    pub resource: String,
    /// This deployment: it makes tokens in its web app, and through OAuth 2.1
    /// (`/.well-known/oauth-authorization-server`).
    pub authorization_servers: Vec<String>,
    pub bearer_methods_supported: Vec<String>,
    pub resource_name: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_read_and_write_as_the_specification_spells_them() {
        let init: InitializeParams = serde_json::from_value(json!({
            "protocolVersion": "2025-06-18",
            "capabilities": { "elicitation": {} },
            "clientInfo": { "name": "inspector", "version": "1.0" }
        }))
        .unwrap();
        assert_eq!(init.protocol_version, "2025-06-18");
        let result = CallToolResult {
            content: vec![
                Content::Text { text: "ok".into() },
                Content::Image {
                    data: "iVBO".into(),
                    mime_type: "image/png".into(),
                },
            ],
            structured_content: None,
            is_error: true,
        };
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({
                "content": [
                    { "type": "text", "text": "ok" },
                    { "type": "image", "data": "iVBO", "mimeType": "image/png" }
                ],
                "isError": true
            })
        );
        let error = JsonRpcErrorResponse::new(None, JsonRpcErrorCode::ParseError, "not JSON");
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            json!({ "jsonrpc": "2.0", "error": { "code": -32700, "message": "not JSON" } })
        );
        let ids: Vec<RequestId> = serde_json::from_value(json!([1, "a"])).unwrap();
        assert_eq!(ids, [RequestId::Number(1), RequestId::String("a".into())]);
    }
}
