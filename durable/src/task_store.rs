//! The task coordinator's SQLite: task row, messages, append-only event log, snapshot.

use mimo_agent::records::{AgentRun, ChatSummary, StoredMessage, TaskRecord};
use mimo_agent::webhooks::EventMapper;
use mimo_protocol::{BrowserSnapshot, ChatMessage, EventEnvelope, FrontendEvent};
use serde::Deserialize;
use worker::{Result, SqlStorage, SqlStorageValue};

use crate::sql::{add_column, int, text, Sql};

pub struct TaskStore<S = SqlStorage> {
    sql: S,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS task (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    task_id TEXT NOT NULL,
    status TEXT NOT NULL,
    title TEXT,
    selected_client_id TEXT,
    current_turn TEXT,
    message_ids_issued INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    message_id TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS snapshot (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    client_id TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS agent_run (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS webhook_cursor (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS summaries (
    up_to INTEGER PRIMARY KEY,
    text TEXT NOT NULL,
    messages INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);";

#[derive(Deserialize)]
struct TaskRow {
    task_id: String,
    status: String,
    title: Option<String>,
    selected_client_id: Option<String>,
    current_turn: Option<String>,
    message_ids_issued: u32,
    created_at: u64,
    updated_at: u64,
    start_tab: Option<i32>,
    #[serde(default)]
    answer_schema: Option<String>,
    #[serde(default)]
    domains: Option<String>,
    #[serde(default)]
    step_by_step: u8,
    #[serde(default)]
    forked_from: Option<String>,
    allow_bridge: u8,
    #[serde(default = "confirm_bridge_default")]
    confirm_bridge: u8,
    #[serde(default)]
    script_bounds: Option<String>,
}

/// Tasks stored before the bridge's switches confirm its writes, as new ones do.
fn confirm_bridge_default() -> u8 {
    1
}

#[derive(Deserialize)]
struct MessageRow {
    message_id: String,
    position: u32,
    role: String,
    content: String,
    created_at: u64,
    #[serde(default)]
    client_message_id: Option<String>,
    #[serde(default)]
    version: Option<u32>,
    #[serde(default)]
    superseded: u8,
}

#[derive(Deserialize)]
struct SummaryRow {
    up_to: u32,
    text: String,
    messages: u32,
    created_at: u64,
}

#[derive(Deserialize)]
struct EventRow {
    seq: u64,
    at: u64,
    body: String,
}

#[derive(Deserialize)]
struct SnapshotRow {
    client_id: String,
    body: String,
}

#[derive(Deserialize)]
struct RunRow {
    body: String,
}

#[derive(Deserialize)]
struct Count {
    n: u64,
}

fn opt_text(s: Option<&str>) -> SqlStorageValue {
    s.map(text).unwrap_or(SqlStorageValue::Null)
}

fn parse<T: serde::de::DeserializeOwned>(json: &str) -> Result<T> {
    serde_json::from_str(json)
        .map_err(|e| worker::Error::RustError(format!("corrupt stored JSON: {e}")))
}

impl<S: Sql> TaskStore<S> {
    pub fn open(sql: S) -> Result<Self> {
        sql.run(SCHEMA, vec![])?;
        // Added after the first release: tasks stored before have the table without it.
        let columns: Vec<serde_json::Value> = sql.rows(
            "SELECT name FROM pragma_table_info('messages') WHERE name = 'client_message_id'",
            vec![],
        )?;
        if columns.is_empty() {
            sql.run(
                "ALTER TABLE messages ADD COLUMN client_message_id TEXT",
                vec![],
            )?;
        }
        // Added with "continue on this page".
        let columns: Vec<serde_json::Value> = sql.rows(
            "SELECT name FROM pragma_table_info('task') WHERE name = 'start_tab'",
            vec![],
        )?;
        if columns.is_empty() {
            sql.run("ALTER TABLE task ADD COLUMN start_tab INTEGER", vec![])?;
        }
        // Columns added by later releases, to tasks stored before them.
        add_column(&sql, "task", "answer_schema", "TEXT")?; // answer formats
        add_column(&sql, "task", "domains", "TEXT")?; // a task's own allowed and blocked sites
        add_column(&sql, "task", "step_by_step", "INTEGER NOT NULL DEFAULT 0")?; // step-by-step mode
        add_column(&sql, "task", "forked_from", "TEXT")?; // forks
        add_column(&sql, "task", "allow_bridge", "INTEGER NOT NULL DEFAULT 0")?; // the local bridge
        add_column(&sql, "task", "confirm_bridge", "INTEGER NOT NULL DEFAULT 1")?;
        add_column(&sql, "task", "script_bounds", "TEXT")?; // a script's own bounds
                                                            // regenerated answers and their alternatives
        add_column(&sql, "messages", "version", "INTEGER")?;
        add_column(&sql, "messages", "superseded", "INTEGER NOT NULL DEFAULT 0")?;
        Ok(Self { sql })
    }

    pub fn load_task(&self) -> Result<Option<TaskRecord>> {
        let rows: Vec<TaskRow> = self.sql.rows("SELECT * FROM task WHERE id = 0", vec![])?;
        rows.into_iter()
            .next()
            .map(|r| {
                Ok(TaskRecord {
                    task_id: r.task_id,
                    status: r.status.parse().map_err(|_| {
                        worker::Error::RustError(format!("unknown task status {:?}", r.status))
                    })?,
                    title: r.title,
                    selected_client_id: r.selected_client_id,
                    current_turn: r.current_turn,
                    message_ids_issued: r.message_ids_issued,
                    created_at: r.created_at,
                    updated_at: r.updated_at,
                    start_tab: r.start_tab,
                    answer_schema: r.answer_schema.as_deref().map(parse).transpose()?,
                    domains: r
                        .domains
                        .as_deref()
                        .map(parse)
                        .transpose()?
                        .unwrap_or_default(),
                    step_by_step: r.step_by_step != 0,
                    forked_from: r.forked_from.as_deref().map(parse).transpose()?,
                    allow_bridge: r.allow_bridge != 0,
                    confirm_bridge: r.confirm_bridge != 0,
                    script_bounds: r.script_bounds.as_deref().map(parse).transpose()?,
                })
            })
            .transpose()
    }

    pub fn save_task(&self, t: &TaskRecord) -> Result<()> {
        self.sql.run(
            "INSERT OR REPLACE INTO task (id, task_id, status, title, selected_client_id, current_turn, \
             message_ids_issued, created_at, updated_at, start_tab, answer_schema, domains, \
             step_by_step, forked_from, allow_bridge, confirm_bridge, script_bounds) \
             VALUES (0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                text(&t.task_id),
                text(t.status.as_str()),
                opt_text(t.title.as_deref()),
                opt_text(t.selected_client_id.as_deref()),
                opt_text(t.current_turn.as_deref()),
                int(t.message_ids_issued.into()),
                int(t.created_at),
                int(t.updated_at),
                t.start_tab
                    .map(|tab| SqlStorageValue::Integer(tab.into()))
                    .unwrap_or(SqlStorageValue::Null),
                opt_text(t.answer_schema.as_ref().map(|s| s.to_string()).as_deref()),
                opt_text(
                    (!t.domains.is_open())
                        .then(|| serde_json::to_string(&t.domains).unwrap_or_default())
                        .as_deref(),
                ),
                int(t.step_by_step.into()),
                opt_text(
                    t.forked_from
                        .as_ref()
                        .map(|f| serde_json::to_string(f).unwrap_or_default())
                        .as_deref(),
                ),
                int(t.allow_bridge.into()),
                int(t.confirm_bridge.into()),
                opt_text(
                    t.script_bounds
                        .map(|b| serde_json::to_string(&b).unwrap_or_default())
                        .as_deref(),
                ),
            ],
        )?;
        Ok(())
    }

    pub fn load_messages(&self) -> Result<Vec<StoredMessage>> {
        let rows: Vec<MessageRow> = self
            .sql
            .rows("SELECT * FROM messages ORDER BY position", vec![])?;
        rows.into_iter()
            .map(|r| {
                Ok(StoredMessage {
                    position: r.position,
                    message: ChatMessage {
                        message_id: r.message_id,
                        role: parse(&format!("\"{}\"", r.role))?,
                        content: r.content,
                        created_at: r.created_at,
                        client_message_id: r.client_message_id,
                        version: r.version,
                        superseded: r.superseded != 0,
                    },
                })
            })
            .collect()
    }

    pub fn save_message(&self, m: &StoredMessage) -> Result<()> {
        let role = serde_json::to_value(m.message.role)?;
        self.sql.run(
            "INSERT OR REPLACE INTO messages (message_id, position, role, content, created_at, client_message_id, version, superseded) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                text(&m.message.message_id),
                int(m.position.into()),
                text(role.as_str().unwrap_or_default()),
                text(&m.message.content),
                int(m.message.created_at),
                opt_text(m.message.client_message_id.as_deref()),
                m.message
                    .version
                    .map_or(SqlStorageValue::Null, |v| int(v.into())),
                int(m.message.superseded.into()),
            ],
        )?;
        Ok(())
    }

    /// Keeps a compaction of the conversation beside the earlier ones (one per end position).
    pub fn save_summary(&self, s: &ChatSummary) -> Result<()> {
        self.sql.run(
            "INSERT OR REPLACE INTO summaries (up_to, text, messages, created_at) VALUES (?, ?, ?, ?)",
            vec![
                int(s.up_to.into()),
                text(&s.text),
                int(s.messages.into()),
                int(s.created_at),
            ],
        )?;
        Ok(())
    }

    /// The compaction in use: the one reaching furthest.
    pub fn load_summary(&self) -> Result<Option<ChatSummary>> {
        let rows: Vec<SummaryRow> = self.sql.rows(
            "SELECT * FROM summaries ORDER BY up_to DESC LIMIT 1",
            vec![],
        )?;
        Ok(rows.into_iter().next().map(|r| ChatSummary {
            up_to: r.up_to,
            text: r.text,
            messages: r.messages,
            created_at: r.created_at,
        }))
    }

    /// Appends a history event and returns it as sent, with its sequence number.
    pub fn append_event(
        &self,
        task_id: &str,
        event: FrontendEvent,
        at: u64,
    ) -> Result<EventEnvelope> {
        let body = serde_json::to_string(&event)?;
        let rows: Vec<Count> = self.sql.rows(
            "INSERT INTO events (at, body) VALUES (?, ?) RETURNING seq AS n",
            vec![int(at), text(&body)],
        )?;
        let seq = rows.first().map(|r| r.n);
        Ok(EventEnvelope {
            seq,
            task_id: task_id.to_owned(),
            at,
            event,
        })
    }

    /// Every history event after `after_seq`, in order.
    pub fn events_after(&self, task_id: &str, after_seq: u64) -> Result<Vec<EventEnvelope>> {
        let rows: Vec<EventRow> = self.sql.rows(
            "SELECT seq, at, body FROM events WHERE seq > ? ORDER BY seq",
            vec![int(after_seq)],
        )?;
        rows.into_iter()
            .map(|r| {
                Ok(EventEnvelope {
                    seq: Some(r.seq),
                    task_id: task_id.to_owned(),
                    at: r.at,
                    event: parse(&r.body)?,
                })
            })
            .collect()
    }

    pub fn last_seq(&self) -> Result<u64> {
        let rows: Vec<Count> = self
            .sql
            .rows("SELECT COALESCE(MAX(seq), 0) AS n FROM events", vec![])?;
        Ok(rows.first().map(|r| r.n).unwrap_or(0))
    }

    /// Forgets the task: every row of every table (the tables stay, ready for nothing).
    pub fn clear(&self) -> Result<()> {
        self.sql.run(
            "DELETE FROM task; DELETE FROM messages; DELETE FROM events; DELETE FROM snapshot; \
             DELETE FROM agent_run; DELETE FROM summaries; DELETE FROM webhook_cursor;",
            vec![],
        )?;
        Ok(())
    }

    /// How far the task's history was read for webhooks (`None` for a task stored before
    /// webhooks were).
    pub fn load_webhook_cursor(&self) -> Result<Option<EventMapper>> {
        let rows: Vec<RunRow> = self
            .sql
            .rows("SELECT body FROM webhook_cursor WHERE id = 0", vec![])?;
        rows.into_iter().next().map(|r| parse(&r.body)).transpose()
    }

    pub fn save_webhook_cursor(&self, cursor: &EventMapper) -> Result<()> {
        self.sql.run(
            "INSERT OR REPLACE INTO webhook_cursor (id, body) VALUES (0, ?)",
            vec![text(&serde_json::to_string(cursor)?)],
        )
    }

    /// The browser run, stored whole: it changes at every step and is read only on restart.
    pub fn load_run(&self) -> Result<Option<AgentRun>> {
        let rows: Vec<RunRow> = self
            .sql
            .rows("SELECT body FROM agent_run WHERE id = 0", vec![])?;
        rows.into_iter().next().map(|r| parse(&r.body)).transpose()
    }

    pub fn save_run(&self, run: Option<&AgentRun>) -> Result<()> {
        match run {
            Some(run) => self.sql.run(
                "INSERT OR REPLACE INTO agent_run (id, body) VALUES (0, ?)",
                vec![text(&serde_json::to_string(run)?)],
            )?,
            None => self.sql.run("DELETE FROM agent_run", vec![])?,
        };
        Ok(())
    }

    pub fn load_snapshot(&self) -> Result<Option<(String, BrowserSnapshot)>> {
        let rows: Vec<SnapshotRow> = self
            .sql
            .rows("SELECT client_id, body FROM snapshot WHERE id = 0", vec![])?;
        rows.into_iter()
            .next()
            .map(|r| Ok((r.client_id, parse(&r.body)?)))
            .transpose()
    }

    pub fn save_snapshot(&self, client_id: &str, snapshot: &BrowserSnapshot) -> Result<()> {
        self.sql.run(
            "INSERT OR REPLACE INTO snapshot (id, client_id, body) VALUES (0, ?, ?)",
            vec![text(client_id), text(&serde_json::to_string(snapshot)?)],
        )?;
        Ok(())
    }
}
