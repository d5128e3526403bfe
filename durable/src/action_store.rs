//! The task's actions in SQLite: every record is saved before it is dispatched, so the queue
//! survives eviction and restarts.

use mimo_agent::actions::ActionRecord;
use serde::Deserialize;
use worker::{Result, SqlStorage, SqlStorageValue};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS actions (
    action_id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    body TEXT NOT NULL
);";

pub struct ActionStore {
    sql: SqlStorage,
}

impl ActionStore {
    pub fn open(sql: SqlStorage) -> Result<Self> {
        sql.exec(SCHEMA, None)?;
        Ok(Self { sql })
    }

    pub fn save(&self, record: &ActionRecord) -> Result<()> {
        self.sql.exec(
            "INSERT OR REPLACE INTO actions (action_id, created_at, body) VALUES (?, ?, ?)",
            vec![
                SqlStorageValue::String(record.action_id.clone()),
                SqlStorageValue::Integer(record.created_at as i64),
                SqlStorageValue::String(serde_json::to_string(record)?),
            ],
        )?;
        Ok(())
    }

    pub fn load(&self) -> Result<Vec<ActionRecord>> {
        #[derive(Deserialize)]
        struct Row {
            body: String,
        }
        let rows: Vec<Row> = self
            .sql
            .exec(
                "SELECT body FROM actions ORDER BY created_at, action_id",
                None,
            )?
            .to_array()?;
        rows.iter()
            .map(|r| {
                serde_json::from_str(&r.body)
                    .map_err(|e| worker::Error::RustError(format!("corrupt stored action: {e}")))
            })
            .collect()
    }

    pub fn clear(&self) -> Result<()> {
        self.sql.exec("DELETE FROM actions", None)?;
        Ok(())
    }
}
