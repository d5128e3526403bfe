//! One invocation: parse the frame (`E_ARGS`, `E_TOOL`), take a slot (`E_BUSY`), run the tool
//! with its events, answer and audit.

use std::sync::Arc;
use std::time::Instant;

use mimo_protocol::bridge::{
    BashArgs, BridgeMessage, BridgeRequest, BridgeTool, EditArgs, Invoke, InvokeResult, ReadArgs,
    WriteArgs,
};
use mimo_protocol::{ErrorCode, ErrorObject};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio::sync::mpsc::Sender;
use tokio::sync::OwnedSemaphorePermit;

use crate::state::State;
use crate::tools;

/// A tool with its parsed arguments.
enum Call {
    Read(ReadArgs),
    Write(WriteArgs),
    Edit(EditArgs),
    Bash(BashArgs),
}

impl Call {
    fn parse(invoke: &Invoke) -> Result<(BridgeTool, Self), ErrorObject> {
        let tool: BridgeTool = invoke.tool.parse().map_err(|_| {
            ErrorObject::new(
                ErrorCode::ETool,
                format!("unknown tool `{}` (read, write, edit or bash)", invoke.tool),
            )
        })?;
        let call = match tool {
            BridgeTool::Read => Call::Read(args(invoke)?),
            BridgeTool::Write => Call::Write(args(invoke)?),
            BridgeTool::Edit => Call::Edit(args(invoke)?),
            BridgeTool::Bash => Call::Bash(args(invoke)?),
        };
        Ok((tool, call))
    }

    /// What the audit keeps of the arguments: never file contents.
    fn summary(&self) -> Value {
        match self {
            Call::Read(a) => json!({"path": a.path, "offset": a.offset, "limit": a.limit}),
            Call::Write(a) => json!({"path": a.path, "bytes": a.content.len()}),
            Call::Edit(a) => {
                json!({"path": a.path, "oldBytes": a.old.len(), "newBytes": a.new.len()})
            }
            Call::Bash(a) => json!({"command": a.command, "timeoutMs": a.timeout_ms}),
        }
    }
}

fn args<T: DeserializeOwned>(invoke: &Invoke) -> Result<T, ErrorObject> {
    serde_json::from_value(invoke.args.clone()).map_err(|e| {
        ErrorObject::new(
            ErrorCode::EArgs,
            format!("bad arguments for {}: {e}", invoke.tool),
        )
    })
}

/// An invocation that may run: parsed, with its slot.
pub(crate) struct Accepted {
    invoke: Invoke,
    tool: BridgeTool,
    call: Call,
    started: Instant,
    _slot: OwnedSemaphorePermit,
}

/// Parses a text frame and takes a slot for it, or answers and audits its refusal at once. Run
/// by the socket's reader before anything is spawned, so that a refusal (`E_BUSY` above all)
/// never waits behind running tools.
pub(crate) async fn accept(
    state: &State,
    text: &str,
    out: &Sender<BridgeMessage>,
) -> Option<Accepted> {
    let started = Instant::now();
    match parse(state, text, started) {
        Ok(accepted) => Some(accepted),
        Err(refusal) => {
            let Refusal {
                id,
                invoke,
                args,
                error,
            } = *refusal;
            state
                .audit
                .record(&id, invoke.as_ref(), args, Err(&error), started.elapsed());
            let _ = out
                .send(BridgeMessage::Result(InvokeResult::new(id, Err(error))))
                .await;
            None
        }
    }
}

/// What the answer and the audit line of a refused frame need.
struct Refusal {
    id: String,
    invoke: Option<Invoke>,
    /// The arguments' summary, once they parsed.
    args: Value,
    error: ErrorObject,
}

fn parse(state: &State, text: &str, started: Instant) -> Result<Accepted, Box<Refusal>> {
    let refuse = |id: String, invoke: Option<Invoke>, args: Value, error: ErrorObject| {
        Box::new(Refusal {
            id,
            invoke,
            args,
            error,
        })
    };
    let frame: Value = serde_json::from_str(text).map_err(|e| {
        let error = ErrorObject::new(ErrorCode::EArgs, format!("frame is not JSON: {e}"));
        refuse(String::new(), None, Value::Null, error)
    })?;
    // The id, if there is one, so that even a malformed invocation is answered to its caller.
    let id = frame
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let invoke = match serde_json::from_value(frame) {
        Ok(BridgeRequest::Invoke(invoke)) => invoke,
        Ok(BridgeRequest::Hello { .. } | BridgeRequest::Auth { .. }) => {
            let error = ErrorObject::new(ErrorCode::EArgs, "already authenticated");
            return Err(refuse(id, None, Value::Null, error));
        }
        Err(e) => {
            let error = ErrorObject::new(ErrorCode::EArgs, format!("not an invoke frame: {e}"));
            return Err(refuse(id, None, Value::Null, error));
        }
    };
    let (tool, call) = match Call::parse(&invoke) {
        Ok(parsed) => parsed,
        Err(error) => return Err(refuse(id, Some(invoke), Value::Null, error)),
    };
    let Ok(slot) = state.slots.clone().try_acquire_owned() else {
        let error = ErrorObject::new(
            ErrorCode::EBusy,
            format!(
                "{} invocations are running, the most this bridge allows; retry when one ends",
                state.config.max_concurrent
            ),
        );
        return Err(refuse(id, Some(invoke), call.summary(), error));
    };
    Ok(Accepted {
        invoke,
        tool,
        call,
        started,
        _slot: slot,
    })
}

/// Runs an accepted invocation: `invoke.started`, the tool (with its own events),
/// `invoke.finished`, the result, the audit line.
pub(crate) async fn run(state: Arc<State>, accepted: Accepted, out: Sender<BridgeMessage>) {
    let Accepted {
        invoke,
        tool,
        call,
        started,
        _slot,
    } = accepted;
    let id = invoke.id.clone();
    let _ = out
        .send(BridgeMessage::Started {
            id: id.clone(),
            tool,
        })
        .await;
    let summary = call.summary();
    let root = state.config.root.clone();
    // The person's confirmation of a protected write holds for the path they confirmed only.
    let confirmed = |path: &str| invoke.confirmed_protected_path.as_deref() == Some(path);
    let outcome = match call {
        Call::Bash(args) => tools::bash::run(&state.shell, &root, &id, &args, &out)
            .await
            .map(to_value),
        // Plain blocking file operations, off the runtime's threads.
        Call::Read(args) => blocking(move || tools::read::run(&root, &args)).await,
        Call::Write(args) => {
            let confirmed = confirmed(&args.path);
            blocking(move || tools::write::run(&root, &args, confirmed)).await
        }
        Call::Edit(args) => {
            let confirmed = confirmed(&args.path);
            blocking(move || tools::edit::run(&root, &args, confirmed)).await
        }
    };
    let duration = started.elapsed();
    state.audit.record(
        &id,
        Some(&invoke),
        summary,
        outcome.as_ref().map(|_| ()),
        duration,
    );
    let _ = out
        .send(BridgeMessage::Finished {
            id: id.clone(),
            ok: outcome.is_ok(),
            duration_ms: duration.as_millis() as u64,
        })
        .await;
    let _ = out
        .send(BridgeMessage::Result(InvokeResult::new(id, outcome)))
        .await;
}

async fn blocking<T: serde::Serialize + Send + 'static>(
    tool: impl FnOnce() -> Result<T, ErrorObject> + Send + 'static,
) -> Result<Value, ErrorObject> {
    tokio::task::spawn_blocking(tool)
        .await
        .map_err(|e| ErrorObject::new(ErrorCode::ETool, format!("the tool failed: {e}")))?
        .map(to_value)
}

fn to_value<T: serde::Serialize>(data: T) -> Value {
    serde_json::to_value(data).expect("tool data serializes")
}
