//! Mimo as an MCP server, without I/O: what a JSON-RPC body sent to `/mcp` is, which protocol
//! revision a session speaks, and what each tool asks of the task's action queue and answers
//! from its outcome ([`tools`]). The worker and the session's Durable Object carry it out; a
//! body that is not a request Mimo serves is answered here with JSON-RPC's own error codes
//! before anything runs.

pub mod elicit;
pub mod oauth;
pub mod runs;
pub mod session;
pub mod tools;

use mimo_protocol::mcp::{
    CallToolParams, Implementation, InitializeParams, InitializeResult, JsonRpcErrorCode,
    JsonRpcErrorResponse, RequestId, ServerCapabilities, ToolsCapability, JSONRPC_VERSION,
    LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use runs::TaskTool;
pub use tools::{BrowserTool, Tool};

/// What one `POST /mcp` body holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request Mimo serves, to answer under its id.
    Request { id: RequestId, call: Call },
    /// A notification (`notifications/initialized`, `notifications/cancelled`, …), or a
    /// response without an id the server could have sent: accepted (202), nothing to answer.
    Accepted { method: Option<String> },
    /// The client's response to a request of the server's ([`elicit`]): its `result`, `None`
    /// when it answered with an error. Accepted (202) too.
    Response {
        id: RequestId,
        result: Option<Value>,
    },
}

/// A request Mimo serves, its params read.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    Initialize(InitializeParams),
    Ping,
    ListTools,
    /// A tool call: the tool with its arguments, or why its arguments cannot be used — a tool
    /// execution error (the model reads it and tries again), not a protocol error.
    CallTool {
        tool: Result<Tool, String>,
        /// The client's `progressToken`: it asked for `notifications/progress` on this call.
        progress: Option<RequestId>,
    },
}

impl Incoming {
    /// Whether this is `initialize`, the one request allowed without a session.
    pub fn is_initialize(&self) -> bool {
        matches!(
            self,
            Incoming::Request {
                call: Call::Initialize(_),
                ..
            }
        )
    }
}

/// Reads a body: `PARSE_ERROR` when it is not JSON, `INVALID_REQUEST` when it is not one
/// JSON-RPC 2.0 message (a batch among them: MCP dropped batches in 2025-06-18 and Mimo reads
/// none), `METHOD_NOT_FOUND` for a method Mimo does not serve, `INVALID_PARAMS` when a method's
/// params are wrong or a tool is unknown.
pub fn read(body: &[u8]) -> Result<Incoming, Box<JsonRpcErrorResponse>> {
    let fail = |id: Option<RequestId>, code, message: String| {
        Err(Box::new(JsonRpcErrorResponse::new(id, code, message)))
    };
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(e) => return fail(None, JsonRpcErrorCode::ParseError, format!("not JSON: {e}")),
    };
    let Value::Object(mut message) = value else {
        return fail(
            None,
            JsonRpcErrorCode::InvalidRequest,
            "a message is one JSON-RPC 2.0 object (batches are not accepted)".into(),
        );
    };
    // The id, when it is one a response can carry (a string or a whole number).
    let id = message
        .get("id")
        .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    if message.get("jsonrpc").and_then(Value::as_str) != Some(JSONRPC_VERSION) {
        return fail(
            id,
            JsonRpcErrorCode::InvalidRequest,
            "\"jsonrpc\" must be \"2.0\"".into(),
        );
    }
    let method = match message.remove("method") {
        Some(Value::String(method)) => method,
        Some(_) => {
            return fail(
                id,
                JsonRpcErrorCode::InvalidRequest,
                "\"method\" must be a string".into(),
            )
        }
        // A response to a request of the server's.
        None if message.contains_key("result") || message.contains_key("error") => {
            return Ok(match id {
                Some(id) => Incoming::Response {
                    id,
                    result: message.remove("result"),
                },
                None => Incoming::Accepted { method: None },
            });
        }
        None => {
            return fail(
                id,
                JsonRpcErrorCode::InvalidRequest,
                "a request needs a \"method\"".into(),
            )
        }
    };
    let params = message.remove("params");
    if params
        .as_ref()
        .is_some_and(|p| !(p.is_object() || p.is_null()))
    {
        return fail(
            id,
            JsonRpcErrorCode::InvalidRequest,
            "\"params\" must be an object".into(),
        );
    }
    let Some(raw_id) = message.get("id") else {
        return Ok(Incoming::Accepted {
            method: Some(method),
        });
    };
    let Some(id) = id else {
        return fail(
            None,
            JsonRpcErrorCode::InvalidRequest,
            format!("\"id\" must be a string or a whole number, not {raw_id}"),
        );
    };
    let call = match method.as_str() {
        "initialize" => Call::Initialize(params_of(&id, &method, params)?),
        "ping" => Call::Ping,
        "tools/list" => Call::ListTools,
        "tools/call" => {
            let params: CallToolParams = params_of(&id, &method, params)?;
            let Some(tool) = tools::parse(&params.name, params.arguments) else {
                return fail(
                    Some(id),
                    JsonRpcErrorCode::InvalidParams,
                    format!("unknown tool {:?}: see tools/list", params.name),
                );
            };
            Call::CallTool {
                tool,
                progress: params.meta.and_then(|m| m.progress_token),
            }
        }
        _ => {
            return fail(
                Some(id),
                JsonRpcErrorCode::MethodNotFound,
                format!("method {method:?} is not served here"),
            )
        }
    };
    Ok(Incoming::Request { id, call })
}

fn params_of<T: DeserializeOwned>(
    id: &RequestId,
    method: &str,
    params: Option<Value>,
) -> Result<T, Box<JsonRpcErrorResponse>> {
    serde_json::from_value(params.unwrap_or(Value::Null)).map_err(|e| {
        Box::new(JsonRpcErrorResponse::new(
            Some(id.clone()),
            JsonRpcErrorCode::InvalidParams,
            format!("{method}'s params: {e}"),
        ))
    })
}

/// The revision a session speaks: the one the client asked for when Mimo speaks it, otherwise
/// Mimo's latest (the client then decides whether it can go on).
pub fn negotiate(requested: &str) -> &'static str {
    SUPPORTED_PROTOCOL_VERSIONS
        .into_iter()
        .find(|v| *v == requested)
        .unwrap_or(LATEST_PROTOCOL_VERSION)
}

/// Why a request's `MCP-Protocol-Version` header cannot be served, or `None`. A request
/// without it is taken as 2025-03-26 (the revision before the header existed), as the
/// specification says; one naming a revision Mimo does not speak, or another than the
/// session's, is refused (400).
pub fn version_header_problem(header: Option<&str>, negotiated: &str) -> Option<String> {
    let header = header?.trim();
    if !SUPPORTED_PROTOCOL_VERSIONS.contains(&header) {
        return Some(format!(
            "MCP-Protocol-Version {header:?} is not supported (supported: {})",
            SUPPORTED_PROTOCOL_VERSIONS.join(", ")
        ));
    }
    (header != negotiated)
        .then(|| format!("MCP-Protocol-Version {header:?} is not this session's ({negotiated:?})"))
}

/// `initialize`'s answer in `version`.
pub fn initialize_result(version: &str) -> InitializeResult {
    InitializeResult {
        protocol_version: version.to_owned(),
        capabilities: ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: false,
            }),
        },
        server_info: Implementation {
            name: "mimo".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            title: Some("Mimo".into()),
        },
        instructions: Some(
            "Drives the person's own browser through Mimo. Start with browser_navigate, then \
             browser_snapshot: its elements are numbered, and that number is the `ref` the \
             other tools take. A step the person must confirm waits for them in Mimo's web app."
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests;
