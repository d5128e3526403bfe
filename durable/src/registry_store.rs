//! The registry's SQLite, one schema for both kinds of its objects. The deployment's directory
//! keeps the extensions it has heard of (`clients`, `presence`), which task is bound to which
//! (`bindings`) and each client's credential changes (`credential_epochs`); a client's own
//! object keeps its browser's snapshot, its polls and outbox, its copy of its tasks' bindings
//! and its standing (`client_state`). `snapshots`, `pollers` and `outbox` rows of the directory
//! are those of a deployment from before the clients had objects of their own: each is handed
//! over to its client's object when that object first runs ([`RegistryStore::hand_over`]).

use mimo_agent::registry::listing::ClientRecord;
use mimo_agent::registry::PresenceReport;
use mimo_protocol::{BrowserSnapshot, ClientId};
use serde::{Deserialize, Serialize};
use worker::{Error, Result, SqlStorage, SqlStorageValue};

use crate::sql::{int, text, Sql};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS clients (
    client_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    browser TEXT NOT NULL,
    extension_version TEXT NOT NULL,
    last_seen_at INTEGER NOT NULL,
    last_used_at INTEGER
);
CREATE TABLE IF NOT EXISTS snapshots (
    client_id TEXT PRIMARY KEY,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bindings (
    task_id TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    bound_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS bindings_by_client ON bindings (client_id, bound_at);
CREATE TABLE IF NOT EXISTS pollers (
    client_id TEXT PRIMARY KEY,
    polled_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id TEXT NOT NULL,
    frame TEXT NOT NULL,
    kept_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS outbox_by_client ON outbox (client_id, seq);
CREATE TABLE IF NOT EXISTS presence (
    client_id TEXT PRIMARY KEY,
    socket INTEGER NOT NULL,
    polled_at INTEGER,
    reported_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS credential_epochs (
    client_id TEXT PRIMARY KEY,
    epoch INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS client_state (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS client_credential (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    digest TEXT NOT NULL
);";

/// A client object's `client_state`: its hand-over from the directory is done.
pub const HANDED_OVER: &str = "handed_over";
/// The change of its credential it knows of.
pub const EPOCH: &str = "epoch";
/// Whether its credential is revoked (1) or stands (0).
pub const REVOKED: &str = "revoked";
/// When it last reported its presence to the directory.
pub const REPORTED_AT: &str = "reported_at";

/// A frame kept for a polling client, as handed over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeptFrame {
    pub seq: u64,
    pub frame: String,
    // (Read from the outbox's rows too.)
    #[serde(alias = "kept_at")]
    pub kept_at: u64,
}

/// What the directory hands over to a client's object when that object first runs: the
/// client's standing and bindings, and what a deployment from before the clients had objects
/// of their own kept for it (its snapshot, its polls, its outbox and the outbox's numbering,
/// which its extension's acknowledgements follow).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandOver {
    pub epoch: u64,
    pub paired: bool,
    /// The digest of the client's token that stands, which its object checks from now on.
    #[serde(default)]
    pub credential: Option<String>,
    pub bindings: Vec<(String, u64)>,
    pub snapshot: Option<BrowserSnapshot>,
    pub polled_at: Option<u64>,
    pub outbox: Vec<KeptFrame>,
    /// The last number the directory gave a kept frame (of any client).
    pub last_seq: u64,
}

/// A client's presence as the directory last heard it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PresenceRow {
    pub socket: bool,
    pub polled_at: Option<u64>,
    pub reported_at: u64,
}

#[derive(Deserialize)]
struct ClientRow {
    client_id: ClientId,
    name: String,
    browser: String,
    extension_version: String,
    last_seen_at: u64,
    last_used_at: Option<u64>,
}

pub struct RegistryStore<S = SqlStorage> {
    sql: S,
}

impl<S: Sql> RegistryStore<S> {
    pub fn open(sql: S) -> Result<Self> {
        sql.run(SCHEMA, vec![])?;
        Ok(Self { sql })
    }

    /// What a client's object reported: the client is known from now on, seen at the report's
    /// time, with what its `hello` said if it follows one, and present as it says.
    pub fn report(&self, report: &PresenceReport) -> Result<()> {
        let client_id = report.client_id.as_str();
        self.sql.run(
            "INSERT INTO clients (client_id, name, browser, extension_version, last_seen_at) \
             VALUES (?, '', '{}', '', ?) \
             ON CONFLICT (client_id) DO UPDATE SET last_seen_at = excluded.last_seen_at",
            vec![text(client_id), int(report.at)],
        )?;
        if let Some(hello) = &report.hello {
            self.sql.run(
                "UPDATE clients SET name = ?, browser = ?, extension_version = ? \
                 WHERE client_id = ?",
                vec![
                    text(&hello.name),
                    text(&serde_json::to_string(&hello.browser)?),
                    text(&hello.extension_version),
                    text(client_id),
                ],
            )?;
        }
        self.sql.run(
            "INSERT OR REPLACE INTO presence (client_id, socket, polled_at, reported_at) \
             VALUES (?, ?, ?, ?)",
            vec![
                text(client_id),
                int(report.socket.into()),
                report.polled_at.map_or(SqlStorageValue::Null, int),
                int(report.at),
            ],
        )
    }

    /// The client's presence as the directory last heard it.
    pub fn presence(&self, client_id: &str) -> Result<Option<PresenceRow>> {
        #[derive(Deserialize)]
        struct Row {
            socket: u8,
            polled_at: Option<u64>,
            reported_at: u64,
        }
        let rows: Vec<Row> = self.sql.rows(
            "SELECT socket, polled_at, reported_at FROM presence WHERE client_id = ?",
            vec![text(client_id)],
        )?;
        Ok(rows.into_iter().next().map(|r| PresenceRow {
            socket: r.socket != 0,
            polled_at: r.polled_at,
            reported_at: r.reported_at,
        }))
    }

    /// Every extension seen, the most recently seen first.
    pub fn clients(&self) -> Result<Vec<ClientRecord>> {
        let rows: Vec<ClientRow> = self
            .sql
            .rows("SELECT * FROM clients ORDER BY last_seen_at DESC", vec![])?;
        Ok(rows
            .into_iter()
            .map(|r| ClientRecord {
                browser: serde_json::from_str(&r.browser).ok(),
                client_id: r.client_id,
                name: r.name,
                extension_version: r.extension_version,
                last_seen_at: r.last_seen_at,
                last_used_at: r.last_used_at,
            })
            .collect())
    }

    /// Binds a task to an extension, which is used at `used_at`.
    pub fn bind(&self, task_id: &str, client_id: &str, used_at: u64) -> Result<()> {
        self.sql.run(
            "INSERT OR REPLACE INTO bindings (task_id, client_id, bound_at) VALUES (?, ?, ?)",
            vec![text(task_id), text(client_id), int(used_at)],
        )?;
        self.sql.run(
            "UPDATE clients SET last_used_at = ? WHERE client_id = ?",
            vec![int(used_at), text(client_id)],
        )
    }

    /// A client's object: the task is bound to another client now.
    pub fn unbind(&self, task_id: &str) -> Result<()> {
        self.sql.run(
            "DELETE FROM bindings WHERE task_id = ?",
            vec![text(task_id)],
        )
    }

    pub fn binding_of(&self, task_id: &str) -> Result<Option<String>> {
        #[derive(Deserialize)]
        struct Row {
            client_id: String,
        }
        let rows: Vec<Row> = self.sql.rows(
            "SELECT client_id FROM bindings WHERE task_id = ?",
            vec![text(task_id)],
        )?;
        Ok(rows.into_iter().next().map(|r| r.client_id))
    }

    /// The tasks most recently bound to the extension, at most `limit`, the latest first.
    pub fn tasks_of(&self, client_id: &str, limit: u32) -> Result<Vec<String>> {
        #[derive(Deserialize)]
        struct Row {
            task_id: String,
        }
        let rows: Vec<Row> = self.sql.rows(
            "SELECT task_id FROM bindings WHERE client_id = ? ORDER BY bound_at DESC LIMIT ?",
            vec![text(client_id), int(limit.into())],
        )?;
        Ok(rows.into_iter().map(|r| r.task_id).collect())
    }

    pub fn snapshot(&self, client_id: &str) -> Result<Option<BrowserSnapshot>> {
        #[derive(Deserialize)]
        struct Row {
            body: String,
        }
        let rows: Vec<Row> = self.sql.rows(
            "SELECT body FROM snapshots WHERE client_id = ?",
            vec![text(client_id)],
        )?;
        rows.into_iter()
            .next()
            .map(|r| {
                serde_json::from_str(&r.body)
                    .map_err(|e| Error::RustError(format!("corrupt snapshot: {e}")))
            })
            .transpose()
    }

    pub fn save_snapshot(&self, client_id: &str, snapshot: &BrowserSnapshot) -> Result<()> {
        self.sql.run(
            "INSERT OR REPLACE INTO snapshots (client_id, body) VALUES (?, ?)",
            vec![text(client_id), text(&serde_json::to_string(snapshot)?)],
        )
    }

    /// The extension polled now (it is connected without a socket).
    pub fn polled(&self, client_id: &str, now: u64) -> Result<()> {
        self.sql.run(
            "INSERT OR REPLACE INTO pollers (client_id, polled_at) VALUES (?, ?)",
            vec![text(client_id), int(now)],
        )
    }

    /// When the extension last polled, if it polls.
    pub fn polled_at(&self, client_id: &str) -> Result<Option<u64>> {
        #[derive(Deserialize)]
        struct Row {
            polled_at: u64,
        }
        let rows: Vec<Row> = self.sql.rows(
            "SELECT polled_at FROM pollers WHERE client_id = ?",
            vec![text(client_id)],
        )?;
        Ok(rows.into_iter().next().map(|r| r.polled_at))
    }

    /// The extension connected with a socket: it no longer polls.
    pub fn stopped_polling(&self, client_id: &str) -> Result<()> {
        self.sql.run(
            "DELETE FROM pollers WHERE client_id = ?",
            vec![text(client_id)],
        )
    }

    /// Keeps a frame (JSON) until the polling extension acknowledges it.
    pub fn keep(&self, client_id: &str, frame: &str, now: u64) -> Result<()> {
        self.sql.run(
            "INSERT INTO outbox (client_id, frame, kept_at) VALUES (?, ?, ?)",
            vec![text(client_id), text(frame), int(now)],
        )
    }

    /// Forgets the frames up to `ack` (received) and those kept before `stale_before`; returns
    /// the rest in order, at most `limit`.
    pub fn undelivered(
        &self,
        client_id: &str,
        ack: u64,
        stale_before: u64,
        limit: u32,
    ) -> Result<Vec<(u64, String)>> {
        #[derive(Deserialize)]
        struct Row {
            seq: u64,
            frame: String,
        }
        self.sql.run(
            "DELETE FROM outbox WHERE client_id = ? AND (seq <= ? OR kept_at < ?)",
            vec![text(client_id), int(ack), int(stale_before)],
        )?;
        let rows: Vec<Row> = self.sql.rows(
            "SELECT seq, frame FROM outbox WHERE client_id = ? ORDER BY seq LIMIT ?",
            vec![text(client_id), int(limit.into())],
        )?;
        Ok(rows.into_iter().map(|r| (r.seq, r.frame)).collect())
    }

    /// Takes every frame still kept for the extension (it has a socket again), but those kept
    /// before `stale_before`.
    pub fn take_undelivered(&self, client_id: &str, stale_before: u64) -> Result<Vec<String>> {
        let frames = self.undelivered(client_id, 0, stale_before, u32::MAX)?;
        self.sql.run(
            "DELETE FROM outbox WHERE client_id = ?",
            vec![text(client_id)],
        )?;
        Ok(frames.into_iter().map(|(_, frame)| frame).collect())
    }

    /// The directory: the client's credential changed once more; which change it is.
    pub fn next_epoch(&self, client_id: &str) -> Result<u64> {
        #[derive(Deserialize)]
        struct Row {
            epoch: u64,
        }
        let rows: Vec<Row> = self.sql.rows(
            "INSERT INTO credential_epochs (client_id, epoch) VALUES (?, 1) \
             ON CONFLICT (client_id) DO UPDATE SET epoch = epoch + 1 RETURNING epoch",
            vec![text(client_id)],
        )?;
        Ok(rows.into_iter().next().map_or(1, |r| r.epoch))
    }

    /// The directory: how many times the client's credential changed.
    pub fn epoch(&self, client_id: &str) -> Result<u64> {
        #[derive(Deserialize)]
        struct Row {
            epoch: u64,
        }
        let rows: Vec<Row> = self.sql.rows(
            "SELECT epoch FROM credential_epochs WHERE client_id = ?",
            vec![text(client_id)],
        )?;
        Ok(rows.into_iter().next().map_or(0, |r| r.epoch))
    }

    /// The directory: what it hands over to the client's object (`credential`: the digest of
    /// its token that stands, if one does), forgetting the snapshot, polls and outbox it kept
    /// for the client.
    pub fn hand_over(&self, client_id: &str, credential: Option<String>) -> Result<HandOver> {
        #[derive(Deserialize)]
        struct Binding {
            task_id: String,
            bound_at: u64,
        }
        #[derive(Deserialize)]
        struct Seq {
            seq: u64,
        }
        let bindings: Vec<Binding> = self.sql.rows(
            "SELECT task_id, bound_at FROM bindings WHERE client_id = ?",
            vec![text(client_id)],
        )?;
        let outbox: Vec<KeptFrame> = self.sql.rows(
            "SELECT seq, frame, kept_at FROM outbox WHERE client_id = ? ORDER BY seq",
            vec![text(client_id)],
        )?;
        let last_seq: Vec<Seq> = self.sql.rows(
            "SELECT seq FROM sqlite_sequence WHERE name = 'outbox'",
            vec![],
        )?;
        let handed = HandOver {
            epoch: self.epoch(client_id)?,
            paired: credential.is_some(),
            credential,
            bindings: bindings
                .into_iter()
                .map(|b| (b.task_id, b.bound_at))
                .collect(),
            snapshot: self.snapshot(client_id)?,
            polled_at: self.polled_at(client_id)?,
            outbox,
            last_seq: last_seq.into_iter().next().map_or(0, |r| r.seq),
        };
        for table in ["outbox", "snapshots", "pollers"] {
            self.sql.run(
                &format!("DELETE FROM {table} WHERE client_id = ?"),
                vec![text(client_id)],
            )?;
        }
        Ok(handed)
    }

    /// A client's object takes over what the directory handed over (once: see
    /// [`HANDED_OVER`]). A snapshot or poll of its own, newer, stays.
    pub fn take_over(&self, client_id: &str, handed: &HandOver) -> Result<()> {
        for (task_id, bound_at) in &handed.bindings {
            self.sql.run(
                "INSERT OR IGNORE INTO bindings (task_id, client_id, bound_at) VALUES (?, ?, ?)",
                vec![text(task_id), text(client_id), int(*bound_at)],
            )?;
        }
        if let Some(snapshot) = &handed.snapshot {
            self.sql.run(
                "INSERT OR IGNORE INTO snapshots (client_id, body) VALUES (?, ?)",
                vec![text(client_id), text(&serde_json::to_string(snapshot)?)],
            )?;
        }
        if let Some(polled_at) = handed.polled_at {
            self.sql.run(
                "INSERT OR IGNORE INTO pollers (client_id, polled_at) VALUES (?, ?)",
                vec![text(client_id), int(polled_at)],
            )?;
        }
        for kept in &handed.outbox {
            self.sql.run(
                "INSERT OR IGNORE INTO outbox (seq, client_id, frame, kept_at) VALUES (?, ?, ?, ?)",
                vec![
                    int(kept.seq),
                    text(client_id),
                    text(&kept.frame),
                    int(kept.kept_at),
                ],
            )?;
        }
        // The extension acknowledges by number: the frames kept from now on are numbered
        // after every one the directory numbered, or an acknowledgement of an older one would
        // forget them unread.
        // (A row numbered so, forgotten at once, moves the numbering on; one of the client's
        // own may already carry the number.)
        if handed.last_seq > 0 {
            self.sql.run(
                "INSERT OR IGNORE INTO outbox (seq, client_id, frame, kept_at) \
                 VALUES (?, '', '', 0)",
                vec![int(handed.last_seq)],
            )?;
            self.sql
                .run("DELETE FROM outbox WHERE client_id = ''", vec![])?;
        }
        self.set_state(EPOCH, handed.epoch)?;
        self.set_state(REVOKED, (!handed.paired).into())?;
        self.set_credential(handed.credential.as_deref())?;
        self.set_state(HANDED_OVER, 1)
    }

    /// A value of a client object's `client_state`.
    pub fn state(&self, key: &str) -> Result<Option<u64>> {
        #[derive(Deserialize)]
        struct Row {
            value: u64,
        }
        let rows: Vec<Row> = self.sql.rows(
            "SELECT value FROM client_state WHERE key = ?",
            vec![text(key)],
        )?;
        Ok(rows.into_iter().next().map(|r| r.value))
    }

    /// A client object: the digest of its client's token that stands (none: revoked, or its
    /// client paired before tokens named their client).
    pub fn credential(&self) -> Result<Option<String>> {
        #[derive(Deserialize)]
        struct Row {
            digest: String,
        }
        let rows: Vec<Row> = self
            .sql
            .rows("SELECT digest FROM client_credential", vec![])?;
        Ok(rows.into_iter().next().map(|r| r.digest))
    }

    pub fn set_credential(&self, digest: Option<&str>) -> Result<()> {
        match digest {
            Some(digest) => self.sql.run(
                "INSERT OR REPLACE INTO client_credential (one, digest) VALUES (1, ?)",
                vec![text(digest)],
            ),
            None => self.sql.run("DELETE FROM client_credential", vec![]),
        }
    }

    pub fn set_state(&self, key: &str, value: u64) -> Result<()> {
        self.sql.run(
            "INSERT OR REPLACE INTO client_state (key, value) VALUES (?, ?)",
            vec![text(key), int(value)],
        )
    }
}
