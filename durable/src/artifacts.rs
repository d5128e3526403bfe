//! The task's artifact records in SQL, as the task machine decides them
//! (`mimo_agent::task::Artifacts`: granted, stored, attached, swept). The bytes live in R2; the
//! list lets a task's deletion or retention find every object.

use mimo_agent::llm::Image;
use mimo_agent::task::ArtifactRecord;
use worker::{Bucket, Result, SqlStorage, SqlStorageValue};

use crate::sql::{add_column, int, text, Sql};

pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS artifacts (
    artifact_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    content_type TEXT NOT NULL,
    max_length INTEGER NOT NULL,
    action_id TEXT,
    granted_at INTEGER NOT NULL,
    size INTEGER,
    sha256 TEXT,
    stored_at INTEGER,
    name TEXT
);";

/// The stored artifact `record` as an image, as a model (or an MCP client) is shown it; `Err`
/// says why it cannot be one. Its size is checked before its bytes are read.
pub async fn read_image(
    bucket: &Bucket,
    record: &ArtifactRecord,
) -> std::result::Result<Image, String> {
    let object = bucket
        .get(&record.key)
        .execute()
        .await
        .map_err(|e| format!("R2: {e}"))?
        .ok_or("it is not stored")?;
    Image::check(&record.content_type, object.size())?;
    let body = object.body().ok_or("R2 returned it without a body")?;
    let bytes = body.bytes().await.map_err(|e| format!("R2: {e}"))?;
    Image::from_bytes(&record.content_type, &bytes)
}

pub struct ArtifactStore<S = SqlStorage> {
    sql: S,
}

impl<S: Sql> ArtifactStore<S> {
    pub fn open(sql: S) -> Result<Self> {
        sql.run(SCHEMA, vec![])?;
        // Added with attachments: tasks stored before have the table without it.
        add_column(&sql, "artifacts", "name", "TEXT")?;
        Ok(Self { sql })
    }

    /// Stores a record (a new grant, or its completed upload).
    pub fn save(&self, record: &ArtifactRecord) -> Result<()> {
        let optional_text =
            |value: &Option<String>| value.as_deref().map(text).unwrap_or(SqlStorageValue::Null);
        let optional_int = |value: Option<u64>| value.map(int).unwrap_or(SqlStorageValue::Null);
        self.sql.run(
            "INSERT OR REPLACE INTO artifacts (artifact_id, kind, key, content_type, max_length, \
             action_id, granted_at, size, sha256, stored_at, name) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                text(&record.artifact_id),
                text(&record.kind),
                text(&record.key),
                text(&record.content_type),
                int(record.max_length),
                optional_text(&record.action_id),
                int(record.granted_at),
                optional_int(record.size),
                optional_text(&record.sha256),
                optional_int(record.stored_at),
                optional_text(&record.name),
            ],
        )?;
        Ok(())
    }

    /// Every record, as the task machine holds them.
    pub fn all(&self) -> Result<Vec<ArtifactRecord>> {
        self.sql.rows(
            "SELECT artifact_id AS artifactId, kind, key, content_type AS contentType, \
                 max_length AS maxLength, action_id AS actionId, granted_at AS grantedAt, size, \
                 sha256, stored_at AS storedAt, name FROM artifacts",
            vec![],
        )
    }

    pub fn clear(&self) -> Result<()> {
        self.sql.run("DELETE FROM artifacts", vec![])?;
        Ok(())
    }

    pub fn forget(&self, artifact_ids: &[String]) -> Result<()> {
        for id in artifact_ids {
            self.sql.run(
                "DELETE FROM artifacts WHERE artifact_id = ?",
                vec![text(id)],
            )?;
        }
        Ok(())
    }
}
