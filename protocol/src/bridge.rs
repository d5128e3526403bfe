//! Frames of the local bridge (seed 004 §4.2): `mimo-bridge` runs on the person's machine, the
//! extension connects to it on 127.0.0.1 and relays `invoke` frames from the task's coordinator,
//! so nothing on the internet reaches the machine directly.
//!
//! A connection starts with a mutual proof of the secret, in which the client says nothing
//! derived from the secret before the bridge has shown it knows it (so a program that is not the
//! bridge, listening on its port, learns nothing it could replay): the client sends
//! [`BridgeRequest::Hello`] with a fresh nonce; the bridge answers [`BridgeMessage::Challenge`]
//! with its own nonce and its proof; the client checks it and sends [`BridgeRequest::Auth`] with
//! its proof; the bridge checks that and answers [`BridgeMessage::Ready`]. Nonces are 32 random
//! bytes in lowercase hex; a proof is the lowercase hex HMAC-SHA256, keyed with the secret's
//! UTF-8 bytes, of `mimo-bridge v1 <side>\n<client nonce>\n<bridge nonce>`, where `<side>` is
//! `bridge` for the bridge's proof and `client` for the client's. Then each [`Invoke`] gets `invoke.started`, any number of
//! `invoke.stdout` / `invoke.stderr`, `invoke.finished` and its [`InvokeResult`] (`type:
//! "result"`). An invocation refused before it starts (bad frame, unknown tool, no free slot)
//! gets only its result. Errors are [`ErrorObject`]s with the bridge's own codes (`E_ARGS`,
//! `E_TOOL`, `E_PATH`, `E_CMD`, `E_BUSY`, `E_TIMEOUT`, seed 004 §7).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::limits::MAX_EXTENSION_FRAME_BYTES;
use crate::ErrorObject;

/// Largest frame either side sends: a bridge frame crosses the extension's socket to the
/// coordinator whole, so it has that socket's limit.
pub const MAX_BRIDGE_FRAME_BYTES: usize = MAX_EXTENSION_FRAME_BYTES;

/// Most text a `read` result carries, and most of each of stdout and stderr a `bash` result
/// keeps (the events stream all of it): with the envelope, a result stays under
/// [`MAX_BRIDGE_FRAME_BYTES`].
pub const MAX_BRIDGE_OUTPUT_BYTES: usize = 128 * 1024;

/// Largest file `read` and `edit` take: a larger one is `E_TOOL`, never loaded whole.
pub const MAX_BRIDGE_READ_BYTES: u64 = 2 * 1024 * 1024;

/// Length of a handshake nonce in hex digits (32 random bytes).
pub const BRIDGE_NONCE_HEX_LEN: usize = 64;

/// `bash` timeout when the call gives none.
pub const DEFAULT_BASH_TIMEOUT_MS: u64 = 30_000;

/// Longest `timeoutMs` a `bash` call may ask for.
pub const MAX_BASH_TIMEOUT_MS: u64 = 600_000;

/// Client → bridge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BridgeRequest {
    /// First frame of a connection: the client's nonce, which the bridge's proof covers.
    Hello {
        nonce: String,
    },
    /// Third frame, once the bridge's proof checked out: the client's proof.
    Auth {
        proof: String,
    },
    Invoke(Invoke),
}

/// One tool call, attributed to the session and agent that made it (both are audited).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Invoke {
    /// Chosen by the caller; every event and the result carry it back.
    pub id: String,
    /// `read`, `write`, `edit` or `bash` (a string on the wire so that an unknown tool is
    /// `E_TOOL`, not a malformed frame).
    pub tool: String,
    /// The tool's arguments: [`ReadArgs`], [`WriteArgs`], [`EditArgs`] or [`BashArgs`].
    #[ts(type = "unknown")]
    pub args: serde_json::Value,
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_session_id: Option<String>,
    pub agent_id: String,
    /// Set by the coordinator once the person confirmed this very write or edit of a protected
    /// location (see [`protected_location`]): the path they confirmed, which must be the
    /// arguments' `path`. Without it, such a write or edit is `E_PATH`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub confirmed_protected_path: Option<String>,
}

/// Folders whose files configure programs that run on their own (version control hooks and
/// settings, editor tasks): a file written there could run code later, outside any command
/// the person allowed.
const PROTECTED_FOLDERS: [&str; 6] = [".git", ".hg", ".svn", ".jj", ".vscode", ".idea"];

/// Files a shell (or direnv) runs when it starts or enters the folder.
const PROTECTED_FILES: [&str; 16] = [
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".kshrc",
    ".mkshrc",
    ".envrc",
    "config.fish",
];

/// The protected location a path (relative to the bridge's root, `/`-separated) is in or is:
/// `.git/` (any folder of [`PROTECTED_FOLDERS`], at any depth) or a shell startup file such as
/// `.bashrc`. Names are compared as a case-insensitive file system would see them (letter case,
/// code points macOS ignores, trailing dots and spaces), so `.GIT/hooks` and `.git./hooks` are
/// `.git/` too. `None`: a plain location.
pub fn protected_location(path: &str) -> Option<String> {
    let mut components = path
        .split(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != ".");
    let mut last = None;
    for component in components.by_ref() {
        let name = fold_name(component);
        if let Some(folder) = PROTECTED_FOLDERS.iter().find(|f| **f == name) {
            return Some(format!("{folder}/"));
        }
        last = Some(name);
    }
    let last = last?;
    PROTECTED_FILES
        .iter()
        .find(|f| **f == last)
        .map(|f| (*f).to_owned())
}

/// A file name as a case-insensitive, normalization-lenient file system compares it.
fn fold_name(name: &str) -> String {
    let kept: String = name
        .chars()
        .filter(|c| !matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}'))
        .flat_map(char::to_lowercase)
        .collect();
    kept.trim_end_matches(['.', ' ']).to_owned()
}

/// The agent an invocation (and an audited step) is attributed to: `main`, or `subtask-N` for
/// the sub-agent doing the request's `N`th browser job.
pub fn agent_id(subtask: Option<u32>) -> String {
    subtask.map_or_else(|| "main".to_owned(), |n| format!("subtask-{n}"))
}

/// The bridge's tools.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    TS,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum BridgeTool {
    Read,
    Write,
    Edit,
    Bash,
}

/// `read`: a UTF-8 text file under the root, whole or some of its lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadArgs {
    /// Relative to the bridge's root.
    pub path: String,
    /// First line to return, 0-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub offset: Option<u32>,
    /// Most lines to return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub limit: Option<u32>,
}

/// `read`'s data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReadData {
    pub path: String,
    /// The lines asked for, each with its line ending as in the file.
    pub content: String,
    pub offset: u32,
    /// Lines in `content`.
    pub lines: u32,
    /// Lines in the whole file.
    pub total_lines: u32,
    /// `content` stopped at [`MAX_BRIDGE_OUTPUT_BYTES`] (at a line end) before the lines asked
    /// for; read on from `offset + lines`.
    pub truncated: bool,
}

/// `write`: creates or replaces a file under the root (missing folders are created).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WriteArgs {
    pub path: String,
    pub content: String,
}

/// `write`'s data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WriteData {
    pub path: String,
    #[ts(type = "number")]
    pub bytes: u64,
    /// The file did not exist before.
    pub created: bool,
}

/// `edit`: replaces `old` by `new` in a file, where `old` occurs exactly once (none is
/// `E_TOOL` "not found", several is `E_TOOL` "matches N times": give more context).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EditArgs {
    pub path: String,
    pub old: String,
    pub new: String,
}

/// `edit`'s data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct EditData {
    pub path: String,
    /// 1-based line where the replaced text began.
    pub line: u32,
}

/// `bash`: one program with its arguments, split as a shell would (quotes, backslashes) but run
/// without a shell, in the root; pipes, redirections, `;`, `&&` and substitutions are refused
/// (`E_CMD`). The name is the seed's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BashArgs {
    pub command: String,
    /// Default [`DEFAULT_BASH_TIMEOUT_MS`], at most [`MAX_BASH_TIMEOUT_MS`]; on expiry the
    /// process and its children are killed (`E_TIMEOUT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub timeout_ms: Option<u64>,
}

/// `bash`'s data: a command that ran and exited is a success whatever its exit code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BashData {
    /// `null` when a signal ended it.
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Output beyond [`MAX_BRIDGE_OUTPUT_BYTES`] per stream was streamed but not kept here.
    pub truncated: bool,
}

/// What a bridge allows, told to a client once it is authenticated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BridgeInfo {
    pub version: String,
    /// The folder every path is relative to.
    pub root: String,
    pub tools: Vec<BridgeTool>,
    /// What `bash` may run: program names and full argument patterns (`git status`, `npm run
    /// *`); empty and not strict means any program that is not an interpreter.
    pub allow: Vec<String>,
    pub strict: bool,
    pub max_concurrent: u32,
}

/// Bridge → client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type")]
pub enum BridgeMessage {
    /// The answer to `hello`: the bridge's nonce and its proof over both nonces.
    #[serde(rename = "challenge")]
    Challenge { nonce: String, proof: String },
    #[serde(rename = "ready")]
    Ready(BridgeInfo),
    #[serde(rename = "result")]
    Result(InvokeResult),
    #[serde(rename = "invoke.started", rename_all = "camelCase")]
    Started { id: String, tool: BridgeTool },
    #[serde(rename = "invoke.stdout")]
    Stdout { id: String, chunk: String },
    #[serde(rename = "invoke.stderr")]
    Stderr { id: String, chunk: String },
    #[serde(rename = "invoke.finished", rename_all = "camelCase")]
    Finished {
        id: String,
        ok: bool,
        #[ts(type = "number")]
        duration_ms: u64,
    },
}

/// `{id, ok: true, data}` or `{id, ok: false, error}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InvokeResult {
    /// The invocation's id; empty when the frame was too broken to have one.
    pub id: String,
    pub ok: bool,
    /// The tool's data ([`ReadData`], [`WriteData`], [`EditData`], [`BashData`]) when `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub data: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<ErrorObject>,
}

impl InvokeResult {
    pub fn new(id: impl Into<String>, outcome: Result<serde_json::Value, ErrorObject>) -> Self {
        let id = id.into();
        match outcome {
            Ok(data) => Self {
                id,
                ok: true,
                data: Some(data),
                error: None,
            },
            Err(error) => Self {
                id,
                ok: false,
                data: None,
                error: Some(error),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;
    use serde_json::json;

    #[test]
    fn frames_are_shaped_as_in_the_seed() {
        let invoke: BridgeRequest = serde_json::from_value(json!({
            "type": "invoke", "id": "1", "tool": "read", "args": {"path": "a.txt"},
            "sessionId": "s", "agentId": "a"
        }))
        .unwrap();
        let BridgeRequest::Invoke(invoke) = invoke else {
            panic!("not an invoke")
        };
        assert_eq!(invoke.parent_session_id, None);
        assert_eq!(
            serde_json::to_value(BridgeMessage::Result(InvokeResult::new(
                "1",
                Ok(json!({"x": 1}))
            )))
            .unwrap(),
            json!({"type": "result", "id": "1", "ok": true, "data": {"x": 1}})
        );
        let error = ErrorObject::new(ErrorCode::EBusy, "busy");
        assert_eq!(
            serde_json::to_value(BridgeMessage::Result(InvokeResult::new("2", Err(error))))
                .unwrap(),
            json!({"type": "result", "id": "2", "ok": false,
                   "error": {"code": "E_BUSY", "message": "busy", "retryable": true}})
        );
        assert_eq!(
            serde_json::to_value(BridgeMessage::Finished {
                id: "1".into(),
                ok: true,
                duration_ms: 3
            })
            .unwrap(),
            json!({"type": "invoke.finished", "id": "1", "ok": true, "durationMs": 3})
        );
    }

    #[test]
    fn protected_locations_are_found_however_they_are_spelled() {
        for (path, location) in [
            (".git/hooks/pre-commit", ".git/"),
            ("sub/.git/config", ".git/"),
            (".GIT/hooks/x", ".git/"),
            (".git./hooks/x", ".git/"),
            (".git /config", ".git/"),
            (".g\u{200c}it/config", ".git/"),
            ("./.git", ".git/"),
            ("a//.hg/hgrc", ".hg/"),
            (".vscode/tasks.json", ".vscode/"),
            ("p/.idea/workspace.xml", ".idea/"),
            (".bashrc", ".bashrc"),
            ("home/.ZSHRC", ".zshrc"),
            ("proj/.envrc", ".envrc"),
        ] {
            assert_eq!(
                protected_location(path).as_deref(),
                Some(location),
                "{path}"
            );
        }
        for path in [
            "src/git/x",
            ".github/workflows/ci.yml",
            ".gitignore",
            "bashrc",
            "a.git/x",
            "",
        ] {
            assert_eq!(protected_location(path), None, "{path}");
        }
    }

    #[test]
    fn tools_parse_from_their_wire_names() {
        use strum::IntoEnumIterator;
        for tool in BridgeTool::iter() {
            let name: &str = tool.into();
            assert_eq!(name.parse::<BridgeTool>().unwrap(), tool);
            assert_eq!(serde_json::to_value(tool).unwrap(), name);
        }
        assert!("exec".parse::<BridgeTool>().is_err());
    }
}
