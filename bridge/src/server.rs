//! The WebSocket server: 127.0.0.1 only; the paired extension's origin only (the first
//! `chrome-extension://` origin to authenticate is paired and kept, unless `--extension-id`
//! names one); the mutual proof of the secret (`crate::handshake`), wrong proofs answered
//! after a delay that doubles with each one; then `invoke` frames.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use mimo_protocol::bridge::{
    BridgeInfo, BridgeMessage, BridgeRequest, BridgeTool, MAX_BRIDGE_FRAME_BYTES,
};
use strum::IntoEnumIterator;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use crate::audit::Audit;
use crate::dispatch;
use crate::handshake::{self, Side};
use crate::policy::Policy;
use crate::state::{Config, State};
use crate::tools::bash::Shell;

/// How long a new connection has for each frame of the handshake.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// The delay before a wrong proof is answered, doubled by each further one in a row (over all
/// connections, which wait for each other's answers), up to [`MAX_FAILURE_DELAY`]: guesses
/// cannot come faster than that. The right secret resets it.
const FIRST_FAILURE_DELAY: Duration = Duration::from_millis(200);
const MAX_FAILURE_DELAY: Duration = Duration::from_secs(10);

/// Shortest secret accepted from `--secret-file` or the environment.
pub const MIN_SECRET_LEN: usize = 16;

/// A bound bridge, ready to serve.
pub struct Bridge {
    listener: TcpListener,
    state: Arc<State>,
}

impl Bridge {
    /// Checks the configuration and binds 127.0.0.1:`port` (0: any free port). The root is
    /// made canonical, so that every path check compares real paths.
    pub async fn bind(mut config: Config, port: u16) -> io::Result<Self> {
        let invalid = |msg: String| io::Error::new(io::ErrorKind::InvalidInput, msg);
        config.root = config
            .root
            .canonicalize()
            .map_err(|e| invalid(format!("root {}: {e}", config.root.display())))?;
        if !config.root.is_dir() {
            return Err(invalid(format!(
                "root {} is not a folder",
                config.root.display()
            )));
        }
        if config.secret.len() < MIN_SECRET_LEN {
            return Err(invalid(format!(
                "the secret must have at least {MIN_SECRET_LEN} characters"
            )));
        }
        if config.max_concurrent == 0 {
            return Err(invalid("--max-concurrent must be at least 1".into()));
        }
        let policy = Policy::new(&config.allow, config.strict).map_err(invalid)?;
        let audit = Audit::open(&config.audit)
            .map_err(|e| invalid(format!("audit log {}: {e}", config.audit.display())))?;
        outside_root(&config.root, &config.audit, "the audit log")?;
        outside_root(&config.root, &config.pairing_file, "the pairing file")?;
        let paired = match &config.extension_id {
            Some(id) if valid_extension_id(id) => Some(id.clone()),
            Some(id) => {
                return Err(invalid(format!(
                    "--extension-id {id}: an extension id is 32 letters a to p (see \
                     chrome://extensions)"
                )))
            }
            None => match std::fs::read_to_string(&config.pairing_file) {
                Ok(text) if valid_extension_id(text.trim()) => Some(text.trim().to_owned()),
                Ok(_) => {
                    return Err(invalid(format!(
                        "the pairing file {} holds no extension id; delete it to pair anew",
                        config.pairing_file.display()
                    )))
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => {
                    return Err(invalid(format!(
                        "the pairing file {}: {e}",
                        config.pairing_file.display()
                    )))
                }
            },
        };
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        Ok(Self {
            listener,
            state: Arc::new(State::new(config, Shell::new(policy), audit, paired)),
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The configuration as checked (the root canonical).
    pub fn config(&self) -> &Config {
        &self.state.config
    }

    /// The extension that may connect, if one is paired (or named by `--extension-id`).
    pub fn paired(&self) -> Option<String> {
        self.state.paired()
    }

    /// Serves connections until the future is dropped.
    pub async fn serve(self) {
        loop {
            match self.listener.accept().await {
                Ok((stream, _)) => {
                    tokio::spawn(connection(stream, self.state.clone()));
                }
                // Out of file descriptors and the like: the next accept may succeed.
                Err(e) => {
                    eprintln!("mimo-bridge: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }
}

/// `file` (which may not exist yet) must not be inside the root, where the tools could rewrite
/// it.
fn outside_root(root: &std::path::Path, file: &std::path::Path, what: &str) -> io::Result<()> {
    let absolute = std::path::absolute(file)?;
    let existing = absolute
        .ancestors()
        .find(|a| a.exists())
        .unwrap_or(std::path::Path::new("/"));
    let missing = absolute
        .strip_prefix(existing)
        .expect("an ancestor is a prefix");
    if existing.canonicalize()?.join(missing).starts_with(root) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{what} {} is inside the root, where the tools could rewrite it",
                file.display()
            ),
        ));
    }
    Ok(())
}

/// Chrome's extension ids: 32 letters from `a` to `p`.
fn valid_extension_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| (b'a'..=b'p').contains(&b))
}

async fn connection(stream: TcpStream, state: Arc<State>) {
    let limits = WebSocketConfig::default()
        .max_message_size(Some(MAX_BRIDGE_FRAME_BYTES))
        .max_frame_size(Some(MAX_BRIDGE_FRAME_BYTES));
    let mut extension = None;
    #[allow(clippy::result_large_err)] // the error tungstenite's handshake callback requires
    let check = |request: &Request, response: Response| {
        check_origin(&state, request, &mut extension).map(|()| response)
    };
    let Ok(mut ws) =
        tokio_tungstenite::accept_hdr_async_with_config(stream, check, Some(limits)).await
    else {
        return;
    };
    let extension = extension.expect("an accepted socket has an extension's origin");
    let authenticated = match authenticate(&mut ws, &state).await {
        Ok(()) if state.pair(&extension) => Ok(()),
        Ok(()) => Err("another extension was paired with this bridge meanwhile".to_owned()),
        Err(reason) => Err(reason),
    };
    if let Err(reason) = authenticated {
        let _ = ws
            .close(Some(CloseFrame {
                code: CloseCode::Policy,
                reason: reason.into(),
            }))
            .await;
        return;
    }
    let (mut sink, mut frames) = ws.split();
    let (out, mut outgoing) = mpsc::channel::<BridgeMessage>(256);
    let _ = out.send(BridgeMessage::Ready(info(&state.config))).await;
    let writer = async move {
        while let Some(message) = outgoing.recv().await {
            let text = serde_json::to_string(&message).expect("a bridge frame serializes");
            if sink.send(Message::text(text)).await.is_err() {
                return;
            }
        }
    };
    let reader = async {
        // Dropped when the socket ends, which aborts what still runs (and kills its commands).
        let mut running = JoinSet::new();
        while let Some(Ok(frame)) = frames.next().await {
            let text = match frame {
                Message::Text(text) => text.as_str().to_owned(),
                Message::Binary(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Message::Close(_) => break,
                _ => continue,
            };
            if let Some(accepted) = dispatch::accept(&state, &text, &out).await {
                running.spawn(dispatch::run(state.clone(), accepted, out.clone()));
            }
            while running.try_join_next().is_some() {}
        }
    };
    tokio::select! {
        () = writer => {}
        () = reader => {}
    }
}

/// Only the paired extension's pages may connect (or, before pairing, any extension's: the
/// secret decides): a page on any site could otherwise reach 127.0.0.1 from the person's
/// browser, and another extension has no business here. A client without an `Origin` is no
/// browser; it has no reason to connect either. Notes the extension's id in `extension`.
#[allow(clippy::result_large_err)] // the error tungstenite's handshake callback requires
fn check_origin(
    state: &State,
    request: &Request,
    extension: &mut Option<String>,
) -> Result<(), ErrorResponse> {
    let origin = request.headers().get("origin").map(|o| o.as_bytes());
    let id = origin
        .and_then(|o| o.strip_prefix(b"chrome-extension://"))
        .and_then(|id| std::str::from_utf8(id).ok())
        .filter(|id| valid_extension_id(id));
    let refusal = match (id, state.paired()) {
        (Some(id), Some(paired)) if id != paired => format!(
            "this bridge is paired with another extension; restart mimo-bridge with \
             --extension-id {id} to use this one"
        ),
        (Some(id), _) => {
            *extension = Some(id.to_owned());
            return Ok(());
        }
        (None, _) => "only the Mimo extension may connect to this bridge".to_owned(),
    };
    let mut refusal = ErrorResponse::new(Some(refusal));
    *refusal.status_mut() = StatusCode::FORBIDDEN;
    Err(refusal)
}

/// The handshake; the error is the close reason.
async fn authenticate(ws: &mut WebSocketStream<TcpStream>, state: &State) -> Result<(), String> {
    const HELLO: &str = "the first frame must be {\"type\":\"hello\",\"nonce\":…}";
    let Some(BridgeRequest::Hello {
        nonce: client_nonce,
    }) = request(ws).await?
    else {
        return Err(HELLO.into());
    };
    if !handshake::valid_nonce(&client_nonce) {
        return Err("the hello's nonce must be 64 lowercase hex digits".into());
    }
    let secret = &state.config.secret;
    let bridge_nonce = handshake::nonce().map_err(|e| format!("no randomness: {e}"))?;
    let challenge = BridgeMessage::Challenge {
        proof: handshake::proof(secret, Side::Bridge, &client_nonce, &bridge_nonce),
        nonce: bridge_nonce.clone(),
    };
    let text = serde_json::to_string(&challenge).expect("a bridge frame serializes");
    ws.send(Message::text(text))
        .await
        .map_err(|e| e.to_string())?;
    let Some(BridgeRequest::Auth { proof }) = request(ws).await? else {
        return Err("the frame after the challenge must be {\"type\":\"auth\",\"proof\":…}".into());
    };
    let mut failures = state.failures.lock().await;
    if handshake::verify(secret, Side::Client, &client_nonce, &bridge_nonce, &proof) {
        *failures = 0;
        return Ok(());
    }
    *failures += 1;
    let delay = FIRST_FAILURE_DELAY.saturating_mul(1 << (*failures - 1).min(16));
    tokio::time::sleep(delay.min(MAX_FAILURE_DELAY)).await;
    Err("wrong secret: paste the one mimo-bridge printed into the extension's options".into())
}

/// The next frame of the handshake, parsed (`None`: not a request).
async fn request(ws: &mut WebSocketStream<TcpStream>) -> Result<Option<BridgeRequest>, String> {
    let frame = tokio::time::timeout(HELLO_TIMEOUT, ws.next())
        .await
        .map_err(|_| "no handshake frame in time".to_owned())?;
    match frame {
        Some(Ok(Message::Text(text))) => Ok(serde_json::from_str(text.as_str()).ok()),
        _ => Ok(None),
    }
}

fn info(config: &Config) -> BridgeInfo {
    BridgeInfo {
        version: env!("CARGO_PKG_VERSION").into(),
        root: config.root.display().to_string(),
        tools: BridgeTool::iter().collect(),
        allow: config.allow.clone(),
        strict: config.strict,
        max_concurrent: config.max_concurrent as u32,
    }
}
