//! The bridge over a real socket: each tool, each refusal, the handshake and the origin, the
//! concurrency limit, the timeout, streaming and the audit log. (The attacks on its guard rails
//! go through the binary itself: `attacks.rs`.)

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Client, EXTENSION, SECRET};
use futures_util::SinkExt;
use mimo_bridge::{Bridge, Config};
use serde_json::{json, Value};
use tempfile::TempDir;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

struct Env {
    root: TempDir,
    /// A folder beside the root, which nothing may reach.
    outside: TempDir,
    _state: TempDir,
    audit: PathBuf,
    addr: SocketAddr,
}

impl Env {
    async fn start(configure: impl FnOnce(&mut Config)) -> Env {
        let root = TempDir::new().unwrap();
        let outside = TempDir::new().unwrap();
        let state = TempDir::new().unwrap();
        let audit = state.path().join("audit.jsonl");
        let mut config = Config {
            root: root.path().to_owned(),
            secret: SECRET.into(),
            allow: vec![],
            strict: false,
            max_concurrent: 4,
            audit: audit.clone(),
            extension_id: None,
            pairing_file: state.path().join("paired-extension"),
        };
        configure(&mut config);
        let bridge = Bridge::bind(config, 0).await.unwrap();
        let addr = bridge.local_addr().unwrap();
        tokio::spawn(bridge.serve());
        Env {
            root,
            outside,
            _state: state,
            audit,
            addr,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    async fn client(&self) -> Client {
        Client::connect(self.addr, SECRET).await.unwrap()
    }

    fn audit_lines(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.audit)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

#[tokio::test]
async fn read_write_and_edit_files() {
    let env = Env::start(|_| {}).await;
    let mut c = env.client().await;

    let data = c
        .ok(
            "write",
            json!({"path": "src/new/a.txt", "content": "one\ntwo\nthree\n"}),
        )
        .await;
    assert_eq!(
        data,
        json!({"path": "src/new/a.txt", "bytes": 14, "created": true})
    );
    assert_eq!(
        std::fs::read_to_string(env.path("src/new/a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );

    let data = c.ok("read", json!({"path": "src/new/a.txt"})).await;
    assert_eq!(data["content"], "one\ntwo\nthree\n");
    assert_eq!(data["totalLines"], 3);
    let data = c
        .ok(
            "read",
            json!({"path": "src/new/a.txt", "offset": 1, "limit": 1}),
        )
        .await;
    assert_eq!(
        data,
        json!({"path": "src/new/a.txt", "content": "two\n", "offset": 1, "lines": 1,
               "totalLines": 3, "truncated": false})
    );

    let data = c
        .ok(
            "edit",
            json!({"path": "src/new/a.txt", "old": "two", "new": "2"}),
        )
        .await;
    assert_eq!(data, json!({"path": "src/new/a.txt", "line": 2}));
    assert_eq!(
        std::fs::read_to_string(env.path("src/new/a.txt")).unwrap(),
        "one\n2\nthree\n"
    );

    let data = c
        .ok("write", json!({"path": "src/new/a.txt", "content": "x"}))
        .await;
    assert_eq!(data["created"], false);
    assert_eq!(
        std::fs::read_to_string(env.path("src/new/a.txt")).unwrap(),
        "x"
    );
}

#[tokio::test]
async fn a_large_file_is_read_in_parts() {
    let env = Env::start(|_| {}).await;
    let line = format!("{}\n", "x".repeat(999));
    std::fs::write(env.path("big.txt"), line.repeat(300)).unwrap();
    let mut c = env.client().await;
    let data = c.ok("read", json!({"path": "big.txt"})).await;
    assert_eq!(data["truncated"], true);
    assert_eq!(data["lines"], 131); // 131 lines of 1000 bytes fit in 128 KiB
    let data = c
        .ok("read", json!({"path": "big.txt", "offset": 131}))
        .await;
    assert_eq!(data["lines"], 131);
    let data = c
        .ok("read", json!({"path": "big.txt", "offset": 262}))
        .await;
    assert_eq!(
        (data["lines"].clone(), data["truncated"].clone()),
        (json!(38), json!(false))
    );
}

#[tokio::test]
async fn edit_needs_exactly_one_match() {
    let env = Env::start(|_| {}).await;
    std::fs::write(env.path("f.txt"), "aa bb aa").unwrap();
    let mut c = env.client().await;
    let message = c
        .fails(
            "E_TOOL",
            "edit",
            json!({"path": "f.txt", "old": "zz", "new": "y"}),
        )
        .await;
    assert!(message.contains("not found"), "{message}");
    let message = c
        .fails(
            "E_TOOL",
            "edit",
            json!({"path": "f.txt", "old": "aa", "new": "y"}),
        )
        .await;
    assert!(message.contains("matches 2 times"), "{message}");
    c.fails(
        "E_ARGS",
        "edit",
        json!({"path": "f.txt", "old": "", "new": "y"}),
    )
    .await;
    c.fails(
        "E_TOOL",
        "edit",
        json!({"path": "missing.txt", "old": "a", "new": "y"}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(env.path("f.txt")).unwrap(),
        "aa bb aa"
    );
}

#[tokio::test]
async fn paths_outside_the_root_are_refused() {
    let env = Env::start(|_| {}).await;
    let outside = env.outside.path();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(outside, env.path("out-dir")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), env.path("out-file")).unwrap();
    std::os::unix::fs::symlink(outside.join("planted.txt"), env.path("dangling")).unwrap();
    std::fs::create_dir(env.path("sub")).unwrap();
    std::fs::write(env.path("sub/in.txt"), "inside").unwrap();
    let mut c = env.client().await;

    let secret = outside.join("secret.txt").display().to_string();
    for (tool, args) in [
        ("read", json!({"path": "../secret.txt"})),
        ("read", json!({"path": "sub/../sub/in.txt"})),
        ("read", json!({"path": secret})),
        ("read", json!({"path": "/etc/passwd"})),
        ("read", json!({"path": "out-dir/secret.txt"})),
        ("read", json!({"path": "out-file"})),
        (
            "edit",
            json!({"path": "out-file", "old": "secret", "new": "x"}),
        ),
        ("write", json!({"path": "out-file", "content": "x"})),
        ("write", json!({"path": "out-dir/new.txt", "content": "x"})),
        (
            "write",
            json!({"path": "out-dir/deeper/new.txt", "content": "x"}),
        ),
        ("write", json!({"path": "dangling", "content": "x"})),
        ("write", json!({"path": "../escaped.txt", "content": "x"})),
    ] {
        let (_, result) = c.invoke(tool, args.clone()).await;
        assert_eq!(result["error"]["code"], "E_PATH", "{tool} {args}: {result}");
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "secret"
    );
    let left: Vec<_> = std::fs::read_dir(outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec!["secret.txt"], "nothing written outside");

    // A symlink that stays inside is followed, and an absolute path inside is fine.
    std::os::unix::fs::symlink(env.path("sub"), env.path("inner")).unwrap();
    let data = c.ok("read", json!({"path": "inner/in.txt"})).await;
    assert_eq!(
        (data["path"].clone(), data["content"].clone()),
        (json!("sub/in.txt"), json!("inside"))
    );
    let canonical = env.root.path().canonicalize().unwrap().join("sub/in.txt");
    c.ok("read", json!({"path": canonical.display().to_string()}))
        .await;
}

#[tokio::test]
async fn malformed_invocations_are_refused() {
    let env = Env::start(|_| {}).await;
    let mut c = env.client().await;
    let message = c.fails("E_TOOL", "exec", json!({})).await;
    assert!(message.contains("unknown tool"), "{message}");
    c.fails("E_ARGS", "read", json!({})).await;
    c.fails("E_ARGS", "read", json!({"path": "a", "extra": 1}))
        .await;
    c.fails("E_ARGS", "write", json!({"path": "a"})).await;
    c.fails("E_ARGS", "bash", json!({"command": "true", "timeoutMs": 0}))
        .await;
    c.fails("E_ARGS", "bash", json!({"command": "echo 'unclosed"}))
        .await;

    c.send(json!({"type": "invoke", "id": "no-session", "tool": "read", "args": {"path": "a"}}))
        .await;
    let result = c.recv().await;
    assert_eq!(
        (result["id"].clone(), result["error"]["code"].clone()),
        (json!("no-session"), json!("E_ARGS"))
    );
    c.ws.send(Message::text("not json")).await.unwrap();
    let result = c.recv().await;
    assert_eq!(
        (result["id"].clone(), result["error"]["code"].clone()),
        (json!(""), json!("E_ARGS"))
    );
}

#[tokio::test]
async fn bash_streams_output_in_order() {
    // A shell runs only as a pattern allows it.
    let env = Env::start(|c| c.allow = vec!["sh -c *".into(), "ls".into()]).await;
    std::fs::write(env.path("marker.txt"), "").unwrap();
    let mut c = env.client().await;
    let script = "for i in $(seq 1 200); do echo line$i; done; echo oops >&2; exit 3";
    let (events, result) = c
        .invoke("bash", json!({"command": format!("sh -c '{script}'")}))
        .await;
    assert_eq!(events.first().unwrap()["type"], "invoke.started");
    assert_eq!(events.first().unwrap()["tool"], "bash");
    assert_eq!(events.last().unwrap()["type"], "invoke.finished");
    let stream = |kind: &str| -> String {
        events
            .iter()
            .filter(|e| e["type"] == kind)
            .map(|e| e["chunk"].as_str().unwrap())
            .collect()
    };
    let expected: String = (1..=200).map(|i| format!("line{i}\n")).collect();
    assert_eq!(stream("invoke.stdout"), expected);
    assert_eq!(stream("invoke.stderr"), "oops\n");
    assert_eq!(
        result["data"],
        json!({"exitCode": 3, "stdout": expected, "stderr": "oops\n", "truncated": false})
    );

    // It runs in the root.
    let data = c.ok("bash", json!({"command": "ls"})).await;
    assert_eq!(data["stdout"], "marker.txt\n");
}

#[tokio::test]
async fn commands_are_checked() {
    let env = Env::start(|_| {}).await;
    let mut c = env.client().await;
    for command in [
        "echo a; touch pwned",
        "echo a | sh",
        "echo $(touch pwned)",
        "echo a > pwned",
        "echo a && touch pwned",
    ] {
        let message = c.fails("E_CMD", "bash", json!({"command": command})).await;
        assert!(message.contains("shell operator"), "{message}");
    }
    assert!(!env.path("pwned").exists());
    c.fails("E_CMD", "bash", json!({"command": "no-such-program-xyz"}))
        .await;
    // Quoted operators are plain arguments.
    let data = c
        .ok("bash", json!({"command": "echo 'a; b' \"c | d\""}))
        .await;
    assert_eq!(data["stdout"], "a; b c | d\n");

    let strict = Env::start(|c| {
        c.strict = true;
        c.allow = vec!["echo".into()];
    })
    .await;
    let mut c = strict.client().await;
    c.ok("bash", json!({"command": "echo allowed"})).await;
    let message = c.fails("E_CMD", "bash", json!({"command": "ls"})).await;
    assert!(message.contains("not allowed"), "{message}");
    c.fails("E_CMD", "bash", json!({"command": "/bin/echo hi"}))
        .await;

    let none = Env::start(|c| c.strict = true).await;
    none.client()
        .await
        .fails("E_CMD", "bash", json!({"command": "echo hi"}))
        .await;
}

#[tokio::test]
async fn a_command_over_its_time_is_killed_with_its_children() {
    let env = Env::start(|c| c.allow = vec!["sh -c *".into()]).await;
    let mut c = env.client().await;
    // The shell prints the pid of a background child, then waits for it.
    let (events, result) = c
        .invoke(
            "bash",
            json!({"command": "sh -c 'sleep 30 & echo $!; wait'", "timeoutMs": 500}),
        )
        .await;
    assert_eq!(result["error"]["code"], "E_TIMEOUT", "{result}");
    let pid = events
        .iter()
        .find(|e| e["type"] == "invoke.stdout")
        .expect("the pid was streamed before the timeout")["chunk"]
        .as_str()
        .unwrap()
        .trim()
        .to_owned();
    let proc = PathBuf::from(format!("/proc/{pid}"));
    let gone = async {
        while alive(&proc) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), gone)
        .await
        .expect("the background child was killed too");
}

/// A process that exists and is not a zombie.
fn alive(proc: &Path) -> bool {
    std::fs::read_to_string(proc.join("stat")).is_ok_and(|stat| !stat.contains(") Z "))
}

#[tokio::test]
async fn more_invocations_than_allowed_are_busy() {
    let env = Env::start(|c| c.max_concurrent = 1).await;
    let fifo = env.path("hold");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let mut c = env.client().await;

    // `cat hold` holds the only slot until the test writes to the pipe.
    let (held, frame) = c.invoke_frame("bash", json!({"command": "cat hold"}));
    c.send(frame).await;
    assert_eq!(c.recv().await["type"], "invoke.started");
    let message = c.fails("E_BUSY", "read", json!({"path": "hold"})).await;
    assert!(message.contains("1 invocations"), "{message}");
    let mut other = env.client().await;
    other
        .fails("E_BUSY", "bash", json!({"command": "true"}))
        .await;

    tokio::task::spawn_blocking(move || std::fs::write(fifo, "released\n"))
        .await
        .unwrap()
        .unwrap();
    let result = loop {
        let frame = c.recv().await;
        if frame["type"] == "result" {
            break frame;
        }
    };
    assert_eq!(
        (result["id"].clone(), result["data"]["stdout"].clone()),
        (json!(held), json!("released\n"))
    );
    c.ok("bash", json!({"command": "true"})).await;
}

#[tokio::test]
async fn every_invocation_is_audited_without_contents() {
    let env = Env::start(|c| c.max_concurrent = 1).await;
    let mut c = env.client().await;
    c.ok(
        "write",
        json!({"path": "a.txt", "content": "private words"}),
    )
    .await;
    c.fails("E_PATH", "read", json!({"path": "../x"})).await;
    c.fails("E_TOOL", "nope", json!({})).await;
    let lines = env.audit_lines();
    assert_eq!(lines.len(), 3);
    let write = &lines[0];
    assert_eq!(
        (&write["id"], &write["tool"], &write["args"], &write["ok"]),
        (
            &json!("call-1"),
            &json!("write"),
            &json!({"path": "a.txt", "bytes": 13}),
            &json!(true)
        )
    );
    assert_eq!(
        (
            &write["sessionId"],
            &write["parentSessionId"],
            &write["agentId"]
        ),
        (&json!("session-1"), &json!("session-0"), &json!("agent-7"))
    );
    assert!(write["ts"].as_u64().unwrap() > 0 && write["durationMs"].is_u64());
    assert_eq!(
        (&lines[1]["ok"], &lines[1]["error"]),
        (&json!(false), &json!("E_PATH"))
    );
    assert_eq!(
        (&lines[2]["tool"], &lines[2]["error"]),
        (&json!("nope"), &json!("E_TOOL"))
    );
    let text = std::fs::read_to_string(&env.audit).unwrap();
    assert!(!text.contains("private words"));
}

#[tokio::test]
async fn only_the_secret_and_the_extension_get_in() {
    let env = Env::start(|_| {}).await;

    let mut c = Client::open(env.addr, Some(EXTENSION)).await.unwrap();
    let close = c.authenticate("test-secret-0123456780").await.unwrap_err();
    assert_eq!(close.code, CloseCode::Policy);
    assert!(
        close.reason.as_str().contains("wrong secret"),
        "{}",
        close.reason
    );

    // Anything but the handshake's frames in order closes the socket, saying what was expected.
    for (frames, expected) in [
        (
            vec![
                json!({"type": "invoke", "id": "1", "tool": "read", "args": {"path": "a"},
                     "sessionId": "s", "agentId": "a"}),
            ],
            "first frame must be",
        ),
        (
            vec![json!({"type": "hello", "secret": SECRET})],
            "first frame must be",
        ),
        (
            vec![json!({"type": "hello", "nonce": "00"})],
            "64 lowercase hex",
        ),
        (
            vec![json!({"type": "auth", "proof": "00"})],
            "first frame must be",
        ),
    ] {
        let mut c = Client::open(env.addr, Some(EXTENSION)).await.unwrap();
        for frame in frames {
            c.send(frame).await;
        }
        let close = c.closed().await;
        assert!(close.reason.as_str().contains(expected), "{}", close.reason);
    }
    let mut c = Client::open(env.addr, Some(EXTENSION)).await.unwrap();
    c.send(json!({"type": "hello", "nonce": common::CLIENT_NONCE}))
        .await;
    assert_eq!(c.recv().await["type"], "challenge");
    c.send(json!({"type": "hello", "nonce": common::CLIENT_NONCE}))
        .await;
    let close = c.closed().await;
    assert!(
        close.reason.as_str().contains("after the challenge"),
        "{}",
        close.reason
    );

    let Err(WsError::Http(response)) = Client::open(env.addr, Some("https://evil.example")).await
    else {
        panic!("a web page's origin is refused")
    };
    assert_eq!(response.status(), 403);

    let ready = Client::open(env.addr, Some(EXTENSION))
        .await
        .unwrap()
        .authenticate(SECRET)
        .await
        .unwrap();
    assert_eq!(
        (&ready["type"], &ready["tools"], &ready["maxConcurrent"]),
        (
            &json!("ready"),
            &json!(["read", "write", "edit", "bash"]),
            &json!(4)
        )
    );
}

#[tokio::test]
async fn the_audit_log_and_the_pairing_may_not_be_inside_the_root() {
    let root = TempDir::new().unwrap();
    let state = TempDir::new().unwrap();
    let config = Config {
        root: root.path().to_owned(),
        secret: SECRET.into(),
        allow: vec![],
        strict: false,
        max_concurrent: 4,
        audit: root.path().join("logs/audit.jsonl"),
        extension_id: None,
        pairing_file: state.path().join("paired-extension"),
    };
    let Err(e) = Bridge::bind(config.clone(), 0).await else {
        panic!("refused")
    };
    assert!(e.to_string().contains("audit log"), "{e}");
    assert!(e.to_string().contains("inside the root"), "{e}");
    // The pairing file too: a tool could pair another extension by writing it.
    let config = Config {
        audit: state.path().join("audit.jsonl"),
        pairing_file: root.path().join("new/paired"),
        ..config
    };
    let Err(e) = Bridge::bind(config, 0).await else {
        panic!("refused")
    };
    assert!(e.to_string().contains("pairing file"), "{e}");
    assert!(e.to_string().contains("inside the root"), "{e}");
}
