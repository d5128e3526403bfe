//! The WebSocket server: 127.0.0.1 only, `chrome-extension://` origins (or none, for command-line
//! clients), a `hello` frame with the secret first, then `invoke` frames.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use mimo_protocol::bridge::{
    BridgeInfo, BridgeMessage, BridgeRequest, BridgeTool, MAX_BRIDGE_FRAME_BYTES,
};
use strum::IntoEnumIterator;
use subtle::ConstantTimeEq;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinSet;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use crate::audit::Audit;
use crate::dispatch;

/// How long a new connection has to send its `hello`.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// Shortest secret accepted from `--secret-file` or the environment.
pub const MIN_SECRET_LEN: usize = 16;

/// What a bridge serves and allows.
#[derive(Debug, Clone)]
pub struct Config {
    /// The folder every path is relative to; nothing outside it is read or written.
    pub root: PathBuf,
    /// What a client must send in its `hello`.
    pub secret: String,
    /// Programs `bash` may run (its first word); empty means any unless `strict`.
    pub allow: Vec<String>,
    /// Only programs in `allow` run, even when it is empty (then none does).
    pub strict: bool,
    /// Invocations running at once, over all connections; more are `E_BUSY`.
    pub max_concurrent: usize,
    /// The audit log (JSON lines); must be outside the root, where no tool can rewrite it.
    pub audit: PathBuf,
}

pub(crate) struct State {
    pub(crate) config: Config,
    pub(crate) slots: Arc<Semaphore>,
    pub(crate) audit: Audit,
}

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
        let audit = Audit::open(&config.audit)
            .map_err(|e| invalid(format!("audit log {}: {e}", config.audit.display())))?;
        if config.audit.canonicalize()?.starts_with(&config.root) {
            return Err(invalid(format!(
                "the audit log {} is inside the root, where the tools could rewrite it",
                config.audit.display()
            )));
        }
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        Ok(Self {
            listener,
            state: Arc::new(State {
                slots: Arc::new(Semaphore::new(config.max_concurrent)),
                config,
                audit,
            }),
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The configuration as checked (the root canonical).
    pub fn config(&self) -> &Config {
        &self.state.config
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

async fn connection(stream: TcpStream, state: Arc<State>) {
    let limits = WebSocketConfig::default()
        .max_message_size(Some(MAX_BRIDGE_FRAME_BYTES))
        .max_frame_size(Some(MAX_BRIDGE_FRAME_BYTES));
    let Ok(mut ws) =
        tokio_tungstenite::accept_hdr_async_with_config(stream, check_origin, Some(limits)).await
    else {
        return;
    };
    if let Err(reason) = hello(&mut ws, &state.config.secret).await {
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

/// Only the extension's pages (or a client without an `Origin`, which no web page can be) may
/// connect: a page on any site could otherwise reach 127.0.0.1 from the person's browser.
#[allow(clippy::result_large_err)] // the signature tungstenite's handshake callback requires
fn check_origin(request: &Request, response: Response) -> Result<Response, ErrorResponse> {
    match request.headers().get("origin") {
        None => Ok(response),
        Some(origin) if origin.as_bytes().starts_with(b"chrome-extension://") => Ok(response),
        Some(_) => {
            let mut refusal = ErrorResponse::new(Some(
                "only the Mimo extension may connect to this bridge".into(),
            ));
            *refusal.status_mut() = StatusCode::FORBIDDEN;
            Err(refusal)
        }
    }
}

/// Waits for the `hello` frame and checks its secret; the error is the close reason.
async fn hello(ws: &mut WebSocketStream<TcpStream>, secret: &str) -> Result<(), &'static str> {
    let frame = tokio::time::timeout(HELLO_TIMEOUT, ws.next())
        .await
        .map_err(|_| "no hello frame in time")?;
    let Some(Ok(Message::Text(text))) = frame else {
        return Err("the first frame must be {\"type\":\"hello\",\"secret\":…}");
    };
    match serde_json::from_str(text.as_str()) {
        Ok(BridgeRequest::Hello { secret: given }) => {
            if bool::from(given.as_bytes().ct_eq(secret.as_bytes())) {
                Ok(())
            } else {
                Err("wrong secret: paste the one mimo-bridge printed into the extension's options")
            }
        }
        _ => Err("the first frame must be {\"type\":\"hello\",\"secret\":…}"),
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
