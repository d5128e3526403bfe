//! The registry's SQLite: the extensions it has seen, their browsers' snapshots, and which task
//! is bound to which extension.

use mimo_agent::registry::listing::ClientRecord;
use mimo_protocol::{BrowserInfo, BrowserSnapshot, ClientId};
use serde::Deserialize;
use worker::{Error, Result, SqlStorage};

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
CREATE INDEX IF NOT EXISTS outbox_by_client ON outbox (client_id, seq);";

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

    /// An extension connected: known from now on, seen now.
    pub fn connected(&self, client_id: &str, now: u64) -> Result<()> {
        self.sql.run(
            "INSERT INTO clients (client_id, name, browser, extension_version, last_seen_at) \
             VALUES (?, '', '{}', '', ?) \
             ON CONFLICT (client_id) DO UPDATE SET last_seen_at = excluded.last_seen_at",
            vec![text(client_id), int(now)],
        )
    }

    /// What the extension's `hello` said of itself.
    pub fn register(
        &self,
        client_id: &str,
        name: &str,
        browser: &BrowserInfo,
        version: &str,
        now: u64,
    ) -> Result<()> {
        self.sql.run(
            "UPDATE clients SET name = ?, browser = ?, extension_version = ?, last_seen_at = ? \
             WHERE client_id = ?",
            vec![
                text(name),
                text(&serde_json::to_string(browser)?),
                text(version),
                int(now),
                text(client_id),
            ],
        )
    }

    pub fn touch(&self, client_id: &str, now: u64) -> Result<()> {
        self.sql.run(
            "UPDATE clients SET last_seen_at = ? WHERE client_id = ?",
            vec![int(now), text(client_id)],
        )
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
}
