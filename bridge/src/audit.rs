//! The bridge's side of the audit (the coordinator keeps its own): one JSON line per
//! invocation, refused ones included, attributed to its session and agent. Arguments are
//! summarised (paths, sizes, the command), never file contents.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mimo_protocol::bridge::Invoke;
use mimo_protocol::{ErrorCode, ErrorObject};
use serde::Serialize;

pub(crate) struct Audit {
    file: Mutex<File>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    /// ms since the Unix epoch, when the invocation ended.
    ts: u64,
    id: &'a str,
    tool: Option<&'a str>,
    args: serde_json::Value,
    session_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_session_id: Option<&'a str>,
    agent_id: Option<&'a str>,
    /// The protected path the person confirmed writing, when the coordinator says so.
    #[serde(skip_serializing_if = "Option::is_none")]
    confirmed_protected_path: Option<&'a str>,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    duration_ms: u64,
}

impl Audit {
    pub(crate) fn open(path: &Path) -> std::io::Result<Self> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            file: Mutex::new(file),
        })
    }

    /// Appends one invocation. `invoke` is `None` for a frame too broken to parse; `args` is
    /// the summary of its arguments (`null` when they did not parse).
    pub(crate) fn record(
        &self,
        id: &str,
        invoke: Option<&Invoke>,
        args: serde_json::Value,
        outcome: Result<(), &ErrorObject>,
        duration: Duration,
    ) {
        let line = Line {
            ts: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            id,
            tool: invoke.map(|i| i.tool.as_str()),
            args,
            session_id: invoke.map(|i| i.session_id.as_str()),
            parent_session_id: invoke.and_then(|i| i.parent_session_id.as_deref()),
            agent_id: invoke.map(|i| i.agent_id.as_str()),
            confirmed_protected_path: invoke.and_then(|i| i.confirmed_protected_path.as_deref()),
            ok: outcome.is_ok(),
            error: outcome.err().map(|e| e.code),
            message: outcome.err().map(|e| e.message.as_str()),
            duration_ms: duration.as_millis() as u64,
        };
        let mut text = serde_json::to_string(&line).expect("an audit line serializes");
        text.push('\n');
        // One write of the whole line under the lock: lines never interleave. A failure is
        // reported, not fatal: the invocation already happened and its result is on its way.
        let written = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .write_all(text.as_bytes());
        if let Err(e) = written {
            eprintln!("mimo-bridge: cannot write the audit log: {e}");
        }
    }
}
