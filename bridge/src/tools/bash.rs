//! `bash`: one program run in the root without a shell, as `crate::policy` allows, with a
//! scrubbed environment; its output streamed as `invoke.stdout` / `invoke.stderr` events, killed
//! with its children on timeout.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use mimo_protocol::bridge::{
    BashArgs, BashData, BridgeMessage, DEFAULT_BASH_TIMEOUT_MS, MAX_BASH_TIMEOUT_MS,
    MAX_BRIDGE_OUTPUT_BYTES,
};
use mimo_protocol::{ErrorCode, ErrorObject};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::sync::mpsc::Sender;

use crate::policy::{self, Allowed, Policy};

/// What a command's environment holds: never the bridge's own (its secret may be in
/// `MIMO_BRIDGE_SECRET`, and the shell that started it may hold cloud keys and tokens), only
/// `PATH` (its absolute folders: a relative one would find programs in the root), `HOME` and
/// `LANG`, and git told to use a bare repository only when named (a root that the tools made
/// look like one, with a `config` naming a program, would otherwise run it).
struct ChildEnv {
    /// `PATH` as commands get it; programs are looked up in it.
    path: OsString,
    vars: Vec<(OsString, OsString)>,
}

impl ChildEnv {
    fn from_current() -> Self {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let folders: Vec<PathBuf> = std::env::split_paths(&path)
            .filter(|p| p.is_absolute())
            .collect();
        let path = std::env::join_paths(folders).expect("folders from PATH join again");
        let mut vars = vec![("PATH".into(), path.clone())];
        for name in ["HOME", "LANG"] {
            if let Some(value) = std::env::var_os(name) {
                vars.push((name.into(), value));
            }
        }
        for (name, value) in [
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "safe.bareRepository"),
            ("GIT_CONFIG_VALUE_0", "explicit"),
        ] {
            vars.push((name.into(), value.into()));
        }
        Self { path, vars }
    }
}

/// What commands run with: the policy that must allow each, and the environment they get.
pub(crate) struct Shell {
    policy: Policy,
    env: ChildEnv,
}

impl Shell {
    pub(crate) fn new(policy: Policy) -> Self {
        Shell {
            policy,
            env: ChildEnv::from_current(),
        }
    }
}

/// Runs `args.command` in `root`.
pub(crate) async fn run(
    shell: &Shell,
    root: &Path,
    id: &str,
    args: &BashArgs,
    events: &Sender<BridgeMessage>,
) -> Result<BashData, ErrorObject> {
    let timeout_ms = args.timeout_ms.unwrap_or(DEFAULT_BASH_TIMEOUT_MS);
    if timeout_ms == 0 || timeout_ms > MAX_BASH_TIMEOUT_MS {
        return Err(ErrorObject::new(
            ErrorCode::EArgs,
            format!("timeoutMs must be between 1 and {MAX_BASH_TIMEOUT_MS}"),
        ));
    }
    let (program, words) = program_and_args(shell, root, &args.command)?;
    let mut child = Command::new(&program)
        // As it was asked for: a program that looks at its name sees the one it was given.
        .arg0(&words[0])
        .args(&words[1..])
        .env_clear()
        .envs(shell.env.vars.iter().map(|(k, v)| (k, v)))
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so that a timeout kills what it started too (a grandchild
        // holding the pipes open would otherwise outlive it).
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                ErrorObject::new(ErrorCode::ECmd, format!("program not found: {}", words[0]))
            }
            _ => ErrorObject::new(ErrorCode::ETool, format!("cannot run {}: {e}", words[0])),
        })?;
    // Armed until the program has exited and its output is read: a timeout, or the socket
    // closing (which drops this future), kills the whole group.
    let group = KillGroup(child.id());
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let ran = tokio::time::timeout(Duration::from_millis(timeout_ms), async {
        let (out, err, status) = tokio::join!(
            pump(stdout, events, |chunk| BridgeMessage::Stdout {
                id: id.to_owned(),
                chunk
            }),
            pump(stderr, events, |chunk| BridgeMessage::Stderr {
                id: id.to_owned(),
                chunk
            }),
            child.wait(),
        );
        (out, err, status)
    })
    .await;
    let Ok((stdout, stderr, status)) = ran else {
        return Err(ErrorObject::new(
            ErrorCode::ETimeout,
            format!("`{}` ran over {timeout_ms} ms and was killed", args.command),
        ));
    };
    group.disarm();
    let status = status.map_err(|e| ErrorObject::new(ErrorCode::ETool, e.to_string()))?;
    Ok(BashData {
        exit_code: status.code(),
        truncated: stdout.truncated || stderr.truncated,
        stdout: stdout.kept,
        stderr: stderr.kept,
    })
}

/// The program file to run and the command's words, if it may run: no shell operators, and
/// allowed by the policy.
fn program_and_args(
    shell: &Shell,
    root: &Path,
    command: &str,
) -> Result<(PathBuf, Vec<String>), ErrorObject> {
    if let Some(op) = shell_operator(command) {
        return Err(ErrorObject::new(
            ErrorCode::ECmd,
            format!(
                "`{op}` is a shell operator, and commands run without a shell: run one program \
                 with its arguments (no pipes, redirections, `;`, `&&` or substitutions)"
            ),
        ));
    }
    let words = shell_words::split(command).map_err(|e| {
        ErrorObject::new(ErrorCode::EArgs, format!("cannot split the command: {e}"))
    })?;
    if words.is_empty() {
        return Err(ErrorObject::new(ErrorCode::EArgs, "the command is empty"));
    }
    let allowed = shell.policy.check(&words)?;
    let Some(program) = find_program(&words[0], root, &shell.env.path) else {
        return Err(ErrorObject::new(
            ErrorCode::ECmd,
            format!("program not found: {}", words[0]),
        ));
    };
    if allowed == Allowed::Program {
        policy::check_program_file(root, &words[0], &program, &words[1..])?;
    }
    Ok((program, words))
}

/// The executable file `program` names: a path (relative to the root, where it runs), or a
/// name looked up in `path`.
fn find_program(program: &str, root: &Path, path: &OsStr) -> Option<PathBuf> {
    let executable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        return Some(root.join(program)).filter(|p| executable(p));
    }
    std::env::split_paths(path)
        .map(|folder| folder.join(program))
        .find(|p| executable(p))
}

/// The first character (outside quotes) that a shell would read as an operator. Without a shell
/// it would be passed on literally, which is never what the caller meant.
pub(crate) fn shell_operator(command: &str) -> Option<char> {
    let mut quote = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => {
                chars.next();
            }
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, ';' | '|' | '&' | '<' | '>' | '(' | ')' | '`' | '$' | '\n') => return Some(c),
            (None, _) => {}
        }
    }
    None
}

/// What was kept of one output stream.
struct Kept {
    kept: String,
    truncated: bool,
}

/// Streams one pipe as events, chunk by chunk in order, and keeps the first
/// `MAX_BRIDGE_OUTPUT_BYTES` of it.
async fn pump(
    mut pipe: impl AsyncRead + Unpin,
    events: &Sender<BridgeMessage>,
    event: impl Fn(String) -> BridgeMessage,
) -> Kept {
    let mut kept = Kept {
        kept: String::new(),
        truncated: false,
    };
    let mut pending = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = pipe.read(&mut buf).await.unwrap_or(0);
        let chunk = decode(&mut pending, &buf[..n], n == 0);
        if !chunk.is_empty() {
            let room = MAX_BRIDGE_OUTPUT_BYTES - kept.kept.len();
            let part = super::cut(&chunk, room);
            kept.truncated |= part.len() < chunk.len();
            kept.kept.push_str(part);
            // A client that went away ends the invocation through the dropped future.
            let _ = events.send(event(chunk)).await;
        }
        if n == 0 {
            return kept;
        }
    }
}

/// Appends `bytes` to `pending` and takes out the text it completes, keeping a UTF-8 sequence
/// cut by the chunk's end for the next chunk (`eof`: none will come; decode what is left).
fn decode(pending: &mut Vec<u8>, bytes: &[u8], eof: bool) -> String {
    pending.extend_from_slice(bytes);
    let keep = if eof { 0 } else { incomplete_tail(pending) };
    let text = String::from_utf8_lossy(&pending[..pending.len() - keep]).into_owned();
    pending.drain(..pending.len() - keep);
    text
}

/// Bytes at the end of `bytes` that begin a UTF-8 sequence and are fewer than it needs.
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if byte & 0xC0 != 0x80 {
            let needs = match byte {
                0xF0.. => 4,
                0xE0.. => 3,
                0xC0.. => 2,
                _ => 1,
            };
            return if needs > back { back } else { 0 };
        }
    }
    0
}

/// Kills a process group when dropped, unless disarmed (the program ended on its own; its id
/// may then be reused).
struct KillGroup(Option<u32>);

impl KillGroup {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for KillGroup {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            // SAFETY: kill(2) with a negative pid signals a process group; no memory is shared.
            unsafe {
                libc::kill(-(pgid as libc::pid_t), libc::SIGKILL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_outside_quotes_are_refused() {
        assert_eq!(shell_operator("ls; rm -rf /"), Some(';'));
        assert_eq!(shell_operator("cat a | sh"), Some('|'));
        assert_eq!(shell_operator("echo $(id)"), Some('$'));
        assert_eq!(shell_operator("echo `id`"), Some('`'));
        assert_eq!(shell_operator("echo hi > f"), Some('>'));
        assert_eq!(shell_operator("grep 'a|b;c' \"x > y\" a\\;b"), None);
        assert_eq!(shell_operator("echo 'it''s' \"a \\\" | b\""), None);
    }

    #[test]
    fn a_character_cut_between_chunks_is_decoded_whole() {
        let bytes = "aé€😀".as_bytes();
        for split in 0..=bytes.len() {
            let mut pending = Vec::new();
            let mut text = decode(&mut pending, &bytes[..split], false);
            text += &decode(&mut pending, &bytes[split..], false);
            text += &decode(&mut pending, &[], true);
            assert_eq!(text, "aé€😀", "split at {split}");
        }
    }
}
