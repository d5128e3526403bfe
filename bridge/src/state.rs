//! What a bridge is configured with, and what its connections and invocations share: the
//! configuration as checked, how commands run, the invocation slots, the audit log and the
//! paired extension. The server makes it; dispatch and the tools read it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;

use crate::audit::Audit;
use crate::tools::bash::Shell;

/// What a bridge serves and allows.
#[derive(Debug, Clone)]
pub struct Config {
    /// The folder every path is relative to; nothing outside it is read or written.
    pub root: PathBuf,
    /// What both sides of the handshake prove they know.
    pub secret: String,
    /// What `bash` may run: program names and full argument patterns (`crate::policy`); empty
    /// means any program that cannot run code it is handed, unless `strict`.
    pub allow: Vec<String>,
    /// Only what `allow` allows runs, even when it is empty (then nothing does).
    pub strict: bool,
    /// Invocations running at once, over all connections; more are `E_BUSY`.
    pub max_concurrent: usize,
    /// The audit log (JSON lines); must be outside the root, where no tool can rewrite it.
    pub audit: PathBuf,
    /// The only extension that may connect (its id, as in `chrome-extension://<id>`). `None`:
    /// the one paired before (kept in `pairing_file`), or else the first to authenticate.
    pub extension_id: Option<String>,
    /// Where the paired extension's id is kept between runs; outside the root, like the audit.
    pub pairing_file: PathBuf,
}

pub(crate) struct State {
    pub(crate) config: Config,
    /// How `bash` runs commands: its policy and environment.
    pub(crate) shell: Shell,
    pub(crate) slots: Arc<Semaphore>,
    pub(crate) audit: Audit,
    /// The extension allowed to connect, once known.
    paired: Mutex<Option<String>>,
    /// Wrong proofs in a row; held while a proof is checked, so checks wait for each other.
    pub(crate) failures: tokio::sync::Mutex<u32>,
}

impl State {
    /// A checked configuration's state, `paired` with the extension known to be allowed.
    pub(crate) fn new(config: Config, shell: Shell, audit: Audit, paired: Option<String>) -> Self {
        State {
            slots: Arc::new(Semaphore::new(config.max_concurrent)),
            shell,
            config,
            audit,
            paired: Mutex::new(paired),
            failures: tokio::sync::Mutex::new(0),
        }
    }

    pub(crate) fn paired(&self) -> Option<String> {
        self.paired
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Pairs `id` if no extension is paired yet; whether `id` is the paired one.
    pub(crate) fn pair(&self, id: &str) -> bool {
        let mut paired = self
            .paired
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match paired.as_deref() {
            Some(known) => known == id,
            None => {
                *paired = Some(id.to_owned());
                let file = &self.config.pairing_file;
                let written = file
                    .parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::write(file, format!("{id}\n")));
                match written {
                    Ok(()) => println!(
                        "paired with the extension {id}: only it may connect from now on (kept \
                         in {}; --extension-id names another)",
                        file.display()
                    ),
                    Err(e) => eprintln!(
                        "mimo-bridge: paired with the extension {id} until it stops; cannot keep \
                         it in {}: {e}",
                        file.display()
                    ),
                }
                true
            }
        }
    }
}
