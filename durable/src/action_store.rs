//! The task's actions in SQLite: every record is saved before it is dispatched, so the queue
//! survives eviction and restarts.

use mimo_agent::actions::ActionRecord;
use serde::Deserialize;
use worker::{Result, SqlStorage, SqlStorageValue};

use crate::sql::Sql;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS actions (
    action_id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    body TEXT NOT NULL
);";

pub struct ActionStore<S = SqlStorage> {
    sql: S,
}

impl<S: Sql> ActionStore<S> {
    pub fn open(sql: S) -> Result<Self> {
        sql.run(SCHEMA, vec![])?;
        Ok(Self { sql })
    }

    pub fn save(&self, record: &ActionRecord) -> Result<()> {
        self.sql.run(
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
        let rows: Vec<Row> = self.sql.rows(
            "SELECT body FROM actions ORDER BY created_at, action_id",
            vec![],
        )?;
        rows.iter()
            .map(|r| {
                serde_json::from_str(&r.body)
                    .map_err(|e| worker::Error::RustError(format!("corrupt stored action: {e}")))
            })
            .collect()
    }

    pub fn clear(&self) -> Result<()> {
        self.sql.run("DELETE FROM actions", vec![])?;
        Ok(())
    }
}
