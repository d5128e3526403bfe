//! `mimo-bridge --root DIR [--port P] [--allow CMD…] [--strict] [--extension-id ID]`: see the
//! README's "The local bridge".

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use mimo_bridge::{Bridge, Config};

/// The local bridge of Mimo: read, write, edit files and run allowed commands in one folder,
/// for the Mimo extension, over a WebSocket on 127.0.0.1.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// The folder the tools work in; nothing outside it is read or written.
    #[arg(long)]
    root: PathBuf,
    /// Port on 127.0.0.1 (0: any free port; the address is printed).
    #[arg(long, default_value_t = 8765)]
    port: u16,
    /// Only 127.0.0.1 (or `localhost`): the bridge is never reachable from another machine.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// What `bash` may run: a program by name (`git`: any arguments but those that make it run
    /// other programs), or a whole command as a pattern (`'git status'`, `'npm run *'`: `*`
    /// within a word matches any characters, a last word `**` any further words; what a
    /// pattern matches runs as written, interpreters included). Without it, any program that
    /// is not an interpreter runs, unless --strict.
    #[arg(long, num_args = 1.., value_name = "CMD")]
    allow: Vec<String>,
    /// Run only what --allow allows (with none, `bash` runs nothing).
    #[arg(long)]
    strict: bool,
    /// Invocations running at once; more are refused with E_BUSY.
    #[arg(long, default_value_t = 4)]
    max_concurrent: usize,
    /// A file holding the secret (else $MIMO_BRIDGE_SECRET, else a new random one, printed).
    #[arg(long)]
    secret_file: Option<PathBuf>,
    /// The audit log, outside the root [default: $XDG_STATE_HOME/mimo-bridge/audit.jsonl,
    /// or ~/.local/state/mimo-bridge/audit.jsonl].
    #[arg(long)]
    audit: Option<PathBuf>,
    /// The only extension that may connect (its id, from chrome://extensions). Without it, the
    /// first extension that proves it knows the secret is paired, and kept in --pairing-file.
    #[arg(long, value_name = "ID")]
    extension_id: Option<String>,
    /// Where the paired extension's id is kept, outside the root [default:
    /// $XDG_STATE_HOME/mimo-bridge/paired-extension, or ~/.local/state/…]; delete it to pair
    /// another extension.
    #[arg(long)]
    pairing_file: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mimo-bridge: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    if args.host != "127.0.0.1" && args.host != "localhost" {
        return Err(format!(
            "--host {}: the bridge listens on 127.0.0.1 only; the extension on this machine \
             connects to it, so nothing else needs to",
            args.host
        ));
    }
    let (secret, generated) = secret(args.secret_file.as_ref())?;
    let config = Config {
        root: args.root,
        secret,
        allow: args.allow,
        strict: args.strict,
        max_concurrent: args.max_concurrent,
        audit: args
            .audit
            .unwrap_or_else(|| state_folder().join("audit.jsonl")),
        extension_id: args.extension_id,
        pairing_file: args
            .pairing_file
            .unwrap_or_else(|| state_folder().join("paired-extension")),
    };
    let bridge = Bridge::bind(config, args.port)
        .await
        .map_err(|e| e.to_string())?;
    let addr = bridge.local_addr().map_err(|e| e.to_string())?;
    let config = bridge.config();
    println!(
        "mimo-bridge {}: serving {} on ws://{addr}",
        env!("CARGO_PKG_VERSION"),
        config.root.display()
    );
    println!("audit log: {}", config.audit.display());
    match bridge.paired() {
        Some(id) => println!("only the extension {id} may connect"),
        None => println!("the first extension to connect with the secret will be paired"),
    }
    if generated {
        println!("secret: {}", config.secret);
        println!(
            "Paste this secret and ws://{addr} into the Mimo extension's options page (Local \
             bridge). A new one is made at every start unless --secret-file or \
             MIMO_BRIDGE_SECRET gives one."
        );
    }
    tokio::select! {
        () = bridge.serve() => Ok(()),
        // Returning drops the runtime and with it every running invocation, which kills the
        // commands' process groups (Ctrl-C does not reach them: they have their own group).
        signal = tokio::signal::ctrl_c() => signal.map_err(|e| e.to_string()),
    }
}

/// The secret and whether it was generated (only then is it printed).
fn secret(file: Option<&PathBuf>) -> Result<(String, bool), String> {
    if let Some(file) = file {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("--secret-file {}: {e}", file.display()))?;
        return Ok((text.trim().to_owned(), false));
    }
    if let Ok(secret) = std::env::var("MIMO_BRIDGE_SECRET") {
        return Ok((secret, false));
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for the secret: {e}"))?;
    Ok((hex::encode(bytes), true))
}

/// Where the bridge keeps its audit log and pairing by default.
fn state_folder() -> PathBuf {
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state")))
        .unwrap_or_else(std::env::temp_dir);
    state.join("mimo-bridge")
}
