//! What the bridge's tests share: a WebSocket client that speaks the bridge's protocol, the
//! handshake computed independently of the bridge's own code (the HMAC of the documented
//! message), and the real `mimo-bridge` binary started as a person would.
#![allow(dead_code)] // each test file uses its own part

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub const SECRET: &str = "test-secret-0123456789";

/// The extension the tests connect as (an id is 32 letters a to p).
pub const EXTENSION_ID: &str = "abcdefghijklmnopabcdefghijklmnop";
pub const EXTENSION: &str = "chrome-extension://abcdefghijklmnopabcdefghijklmnop";

/// HMAC-SHA256 of `mimo-bridge v1 <side>\n<client nonce>\n<bridge nonce>`, as the protocol says.
pub fn proof(secret: &str, side: &str, client_nonce: &str, bridge_nonce: &str) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("mimo-bridge v1 {side}\n{client_nonce}\n{bridge_nonce}").as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

pub const CLIENT_NONCE: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

pub struct Client {
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u32,
}

impl Client {
    pub async fn open(addr: SocketAddr, origin: Option<&str>) -> Result<Client, WsError> {
        let mut request = format!("ws://{addr}").into_client_request().unwrap();
        if let Some(origin) = origin {
            request
                .headers_mut()
                .insert("origin", origin.parse().unwrap());
        }
        let (ws, _) = tokio_tungstenite::connect_async(request).await?;
        Ok(Client { ws, next_id: 0 })
    }

    pub async fn send(&mut self, frame: Value) {
        self.ws
            .send(Message::text(frame.to_string()))
            .await
            .unwrap();
    }

    /// The next frame; the socket must not close.
    pub async fn recv(&mut self) -> Value {
        match self.next_message().await {
            Message::Text(text) => serde_json::from_str(text.as_str()).unwrap(),
            other => panic!("expected a text frame, got {other:?}"),
        }
    }

    pub async fn next_message(&mut self) -> Message {
        tokio::time::timeout(Duration::from_secs(10), self.ws.next())
            .await
            .expect("a frame within 10 s")
            .expect("the socket is open")
            .expect("no socket error")
    }

    pub fn invoke_frame(&mut self, tool: &str, args: Value) -> (String, Value) {
        self.next_id += 1;
        let id = format!("call-{}", self.next_id);
        let frame = json!({"type": "invoke", "id": id, "tool": tool, "args": args,
                           "sessionId": "session-1", "parentSessionId": "session-0",
                           "agentId": "agent-7"});
        (id, frame)
    }

    /// Sends one invocation; returns its events (in order) and its result.
    pub async fn invoke(&mut self, tool: &str, args: Value) -> (Vec<Value>, Value) {
        let (id, frame) = self.invoke_frame(tool, args);
        self.send(frame).await;
        let mut events = Vec::new();
        loop {
            let frame = self.recv().await;
            assert_eq!(frame["id"], id.as_str(), "{frame}");
            if frame["type"] == "result" {
                return (events, frame);
            }
            events.push(frame);
        }
    }

    /// The data of a successful invocation.
    pub async fn ok(&mut self, tool: &str, args: Value) -> Value {
        let (_, result) = self.invoke(tool, args).await;
        assert_eq!(result["ok"], true, "{result}");
        result["data"].clone()
    }

    /// The error of a failed invocation, checked to have `code`.
    pub async fn fails(&mut self, code: &str, tool: &str, args: Value) -> String {
        let (_, result) = self.invoke(tool, args).await;
        assert_eq!(result["ok"], false, "{result}");
        assert_eq!(result["error"]["code"], code, "{result}");
        result["error"]["message"].as_str().unwrap().to_owned()
    }
}

impl Client {
    /// Opens a socket to the bridge as the test extension, and proves `secret`: the frame that
    /// follows (`ready` for the right secret), or the close frame that ended the connection.
    pub async fn connect(addr: SocketAddr, secret: &str) -> Result<Client, CloseFrame> {
        let mut client = Client::open(addr, Some(EXTENSION)).await.unwrap();
        client.authenticate(secret).await?;
        Ok(client)
    }

    /// The handshake: checks the bridge's proof (it must know the right secret), then proves
    /// `secret`; `Ok` once `ready`.
    pub async fn authenticate(&mut self, secret: &str) -> Result<Value, CloseFrame> {
        self.send(json!({"type": "hello", "nonce": CLIENT_NONCE}))
            .await;
        let challenge = self.recv().await;
        assert_eq!(challenge["type"], "challenge", "{challenge}");
        let bridge_nonce = challenge["nonce"].as_str().unwrap();
        assert_eq!(bridge_nonce.len(), 64);
        assert_eq!(
            challenge["proof"],
            proof(SECRET, "bridge", CLIENT_NONCE, bridge_nonce),
            "the bridge proves it knows the secret"
        );
        let auth = proof(secret, "client", CLIENT_NONCE, bridge_nonce);
        self.send(json!({"type": "auth", "proof": auth})).await;
        match self.next_message().await {
            Message::Text(text) => {
                let ready: Value = serde_json::from_str(text.as_str()).unwrap();
                assert_eq!(ready["type"], "ready", "{ready}");
                Ok(ready)
            }
            Message::Close(Some(close)) => Err(close),
            other => panic!("expected ready or a close, got {other:?}"),
        }
    }

    /// The result of the invocation `id`, its events skipped.
    pub async fn result(&mut self, id: &str) -> Value {
        loop {
            let frame = self.recv().await;
            if frame["type"] == "result" && frame["id"] == id {
                return frame;
            }
        }
    }

    /// The close frame the bridge ends the socket with.
    pub async fn closed(&mut self) -> CloseFrame {
        match self.next_message().await {
            Message::Close(Some(close)) => close,
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
}

/// The `mimo-bridge` binary, started with `args` after `--root`, `--port 0`, the secret file,
/// the audit log and the pairing file in `state`; ended when dropped.
pub struct Binary {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Binary {
    pub async fn start(root: &Path, state: &Path, args: &[&str], env: &[(&str, &str)]) -> Binary {
        let secret_file = state.join("secret");
        std::fs::write(&secret_file, SECRET).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_mimo-bridge"));
        command
            .arg("--root")
            .arg(root)
            .args(["--port", "0", "--audit"])
            .arg(state.join("audit.jsonl"))
            .arg("--pairing-file")
            .arg(state.join("paired-extension"))
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        if !env.iter().any(|(k, _)| *k == "MIMO_BRIDGE_SECRET") {
            command.arg("--secret-file").arg(&secret_file);
        }
        let mut child = command.spawn().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let addr = loop {
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .expect("mimo-bridge starts")
                .unwrap()
                .expect("mimo-bridge prints its address");
            if let Some(at) = line.find("ws://") {
                break line[at + 5..].parse().unwrap();
            }
        };
        // The rest of its output (pairing notices) is not needed, but must not fill the pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Binary { child, addr }
    }

    pub async fn client(&self) -> Client {
        Client::connect(self.addr, SECRET).await.unwrap()
    }
}
