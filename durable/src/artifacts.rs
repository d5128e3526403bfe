//! The task's artifact records: which artifacts were granted, which are stored, and their
//! retention. The bytes live in R2; the coordinator keeps the list so that an artifact is
//! "listed" only once its upload completed, and so a task's deletion or retention can find
//! every object.

use crate::clients::{ArtifactGrant, ArtifactRecord, ArtifactStored};
use mimo_agent::llm::Image;
use mimo_protocol::Attachment;
use serde::Deserialize;
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

    pub fn grant(&self, grant: &ArtifactGrant, now: u64) -> Result<()> {
        self.sql.run(
            "INSERT OR IGNORE INTO artifacts (artifact_id, kind, key, content_type, max_length, \
             action_id, granted_at, name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                text(&grant.artifact_id),
                text(&grant.kind),
                text(&grant.key),
                text(&grant.content_type),
                int(grant.max_length),
                grant
                    .action_id
                    .as_deref()
                    .map(text)
                    .unwrap_or(SqlStorageValue::Null),
                int(now),
                grant
                    .name
                    .as_deref()
                    .map(text)
                    .unwrap_or(SqlStorageValue::Null),
            ],
        )?;
        Ok(())
    }

    pub fn get(&self, artifact_id: &str) -> Result<Option<ArtifactRecord>> {
        let rows: Vec<ArtifactRecord> = self.sql.rows(
            "SELECT artifact_id AS artifactId, kind, key, content_type AS contentType, \
                 max_length AS maxLength, action_id AS actionId, granted_at AS grantedAt, size, \
                 sha256, stored_at AS storedAt, name FROM artifacts WHERE artifact_id = ?",
            vec![text(artifact_id)],
        )?;
        Ok(rows.into_iter().next())
    }

    /// Marks an upload complete; `false` when the artifact was never granted here. A repeated
    /// upload to the same URL replaces the object and the record says so.
    pub fn stored(&self, stored: &ArtifactStored, now: u64) -> Result<bool> {
        let updated: Vec<serde_json::Value> = self.sql.rows(
            "UPDATE artifacts SET size = ?, sha256 = ?, stored_at = ? WHERE artifact_id = ? \
             RETURNING artifact_id",
            vec![
                int(stored.size),
                text(&stored.sha256),
                int(now),
                text(&stored.artifact_id),
            ],
        )?;
        Ok(!updated.is_empty())
    }

    /// The files attached to the task whose upload completed, in the order they were granted.
    pub fn attachments(&self) -> Result<Vec<Attachment>> {
        self.sql.rows(
            "SELECT artifact_id AS artifactId, COALESCE(name, artifact_id) AS name, \
             content_type AS contentType, size \
             FROM artifacts WHERE kind = 'attachment' AND stored_at IS NOT NULL \
             ORDER BY granted_at, artifact_id",
            vec![],
        )
    }

    /// Stored artifacts as `(artifact_id, key, stored_at)`.
    pub fn stored_artifacts(&self) -> Result<Vec<(String, String, u64)>> {
        #[derive(Deserialize)]
        struct Row {
            artifact_id: String,
            key: String,
            stored_at: u64,
        }
        let rows: Vec<Row> = self.sql.rows(
            "SELECT artifact_id, key, stored_at FROM artifacts WHERE stored_at IS NOT NULL",
            vec![],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| (r.artifact_id, r.key, r.stored_at))
            .collect())
    }

    /// Forgets every record, granted or stored (the task is being deleted).
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
