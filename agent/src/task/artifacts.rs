//! The task's artifacts in R2 (screenshots, page text, element lists, files the person
//! attached): granted when an upload is presigned, stored once it completed, kept for the
//! deployment's retention and then swept, R2 object and record together. Which of them are the
//! person's attached files is decided here too: the stored ones of kind `attachment`.

use mimo_protocol::Attachment;
use serde::{Deserialize, Serialize};

/// The kind of the artifacts that are files the person attached to the task.
pub const ATTACHMENT: &str = "attachment";

/// Default retention of stored artifacts, in days.
pub const DEFAULT_RETENTION_DAYS: f64 = 30.0;

/// A retention of `days` (fractions allowed), in milliseconds (at least one).
pub fn days_ms(days: f64) -> u64 {
    (days * 24.0 * 60.0 * 60.0 * 1000.0).round().max(1.0) as u64
}

/// A presign granted an upload (body of the coordinator's `/artifacts/granted`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactGrant {
    pub artifact_id: String,
    pub kind: String,
    pub key: String,
    pub content_type: String,
    pub max_length: u64,
    pub action_id: Option<String>,
    /// An attachment's file name.
    #[serde(default)]
    pub name: Option<String>,
}

/// An upload completed (body of `/artifacts/stored`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactStored {
    pub artifact_id: String,
    pub size: u64,
    pub sha256: String,
}

/// One artifact of the task as recorded (answer of the coordinator's `/artifacts/get`, and a
/// row of its artifact store); `stored_at` is `None` until its upload completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactRecord {
    pub artifact_id: String,
    pub kind: String,
    pub key: String,
    pub content_type: String,
    pub max_length: u64,
    pub action_id: Option<String>,
    pub granted_at: u64,
    pub size: Option<u64>,
    pub sha256: Option<String>,
    pub stored_at: Option<u64>,
    /// An attachment's file name.
    pub name: Option<String>,
}

impl ArtifactRecord {
    /// The file the person attached, if this is one and its upload completed.
    pub fn attachment(&self) -> Option<Attachment> {
        (self.kind == ATTACHMENT).then_some(())?;
        Some(Attachment {
            artifact_id: self.artifact_id.clone(),
            name: self
                .name
                .clone()
                .unwrap_or_else(|| self.artifact_id.clone()),
            content_type: self.content_type.clone(),
            size: self.stored_at.and(self.size)?,
        })
    }

    /// When it is swept, once stored.
    fn expires_at(&self, retention_ms: u64) -> Option<u64> {
        self.stored_at.map(|at| at.saturating_add(retention_ms))
    }
}

/// The order of the records: as granted (ties by id, as storage sorts them).
fn order(record: &ArtifactRecord) -> (u64, &str) {
    (record.granted_at, &record.artifact_id)
}

/// The task's artifact records, in the order they were granted.
#[derive(Debug, Clone, Default)]
pub struct Artifacts {
    records: Vec<ArtifactRecord>,
}

impl Artifacts {
    pub fn restore(mut records: Vec<ArtifactRecord>) -> Self {
        records.sort_by(|a, b| order(a).cmp(&order(b)));
        Artifacts { records }
    }

    pub fn get(&self, artifact_id: &str) -> Option<&ArtifactRecord> {
        self.records.iter().find(|r| r.artifact_id == artifact_id)
    }

    /// Records a grant, `None` when the artifact was granted already (a repeated report keeps
    /// the first).
    pub fn grant(&mut self, grant: ArtifactGrant, now: u64) -> Option<ArtifactRecord> {
        if self.get(&grant.artifact_id).is_some() {
            return None;
        }
        let record = ArtifactRecord {
            artifact_id: grant.artifact_id,
            kind: grant.kind,
            key: grant.key,
            content_type: grant.content_type,
            max_length: grant.max_length,
            action_id: grant.action_id,
            granted_at: now,
            size: None,
            sha256: None,
            stored_at: None,
            name: grant.name,
        };
        let at = self.records.partition_point(|r| order(r) <= order(&record));
        self.records.insert(at, record.clone());
        Some(record)
    }

    /// Records a completed upload; `None` when the artifact was never granted in this task.
    pub fn stored(&mut self, stored: ArtifactStored, now: u64) -> Option<ArtifactRecord> {
        let record = self
            .records
            .iter_mut()
            .find(|r| r.artifact_id == stored.artifact_id)?;
        record.size = Some(stored.size);
        record.sha256 = Some(stored.sha256);
        record.stored_at = Some(now);
        Some(record.clone())
    }

    /// The files the person attached, in the order they were attached.
    pub fn attachments(&self) -> Vec<Attachment> {
        self.records
            .iter()
            .filter_map(ArtifactRecord::attachment)
            .collect()
    }

    /// Takes out the artifacts whose retention has ended at `now` (to be deleted, from R2
    /// first), and says when the next one's ends.
    pub fn sweep(&mut self, retention_ms: u64, now: u64) -> (Vec<ArtifactRecord>, Option<u64>) {
        let (expired, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.records)
            .into_iter()
            .partition(|r| r.expires_at(retention_ms).is_some_and(|at| at <= now));
        self.records = kept;
        let next = self
            .records
            .iter()
            .filter_map(|r| r.expires_at(retention_ms))
            .min();
        (expired, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(id: &str, kind: &str, name: Option<&str>) -> ArtifactGrant {
        ArtifactGrant {
            artifact_id: id.into(),
            kind: kind.into(),
            key: format!("tasks/t/{id}"),
            content_type: "text/plain".into(),
            max_length: 100,
            action_id: None,
            name: name.map(Into::into),
        }
    }

    fn stored(id: &str, size: u64) -> ArtifactStored {
        ArtifactStored {
            artifact_id: id.into(),
            size,
            sha256: "ab".into(),
        }
    }

    #[test]
    fn a_grant_is_recorded_once_and_a_completed_upload_only_if_granted() {
        let mut artifacts = Artifacts::default();
        let first = artifacts.grant(grant("a", "screenshot", None), 10).unwrap();
        assert_eq!((first.granted_at, first.stored_at), (10, None));
        assert_eq!(artifacts.grant(grant("a", "text", None), 20), None);
        assert_eq!(artifacts.get("a").unwrap().kind, "screenshot");
        assert_eq!(artifacts.stored(stored("nope", 1), 30), None);
        let done = artifacts.stored(stored("a", 7), 30).unwrap();
        assert_eq!((done.size, done.stored_at), (Some(7), Some(30)));
    }

    #[test]
    fn the_attachments_are_the_stored_files_the_person_attached_in_order() {
        let mut artifacts = Artifacts::default();
        artifacts.grant(grant("b", ATTACHMENT, Some("b.csv")), 2);
        artifacts.grant(grant("shot", "screenshot", None), 3);
        artifacts.grant(grant("a", ATTACHMENT, None), 1);
        artifacts.grant(grant("pending", ATTACHMENT, Some("p.txt")), 4);
        for id in ["b", "shot", "a"] {
            artifacts.stored(stored(id, 5), 9);
        }
        let names = |artifacts: &Artifacts| -> Vec<String> {
            artifacts
                .attachments()
                .into_iter()
                .map(|a| a.name)
                .collect()
        };
        // Granted in that order; one without a name is named by its id; one still uploading
        // is no attachment yet. The same after a restart.
        assert_eq!(names(&artifacts), ["a", "b.csv"]);
        let mut shuffled = artifacts.records.clone();
        shuffled.reverse();
        assert_eq!(names(&Artifacts::restore(shuffled)), ["a", "b.csv"]);
    }

    #[test]
    fn a_sweep_takes_the_expired_and_says_when_the_next_expires() {
        let mut artifacts = Artifacts::default();
        for (id, at) in [("a", 1_000), ("b", 5_000), ("c", 2_000), ("d", 9_000)] {
            artifacts.grant(grant(id, "text", None), at);
            artifacts.stored(stored(id, 1), at);
        }
        artifacts.grant(grant("unstored", "text", None), 0);
        let ids = |records: Vec<ArtifactRecord>| -> Vec<String> {
            records.into_iter().map(|r| r.artifact_id).collect()
        };
        let (expired, next) = artifacts.sweep(1_000, 2_999);
        assert_eq!((ids(expired), next), (vec!["a".to_owned()], Some(3_000)));
        let (expired, next) = artifacts.sweep(1_000, 6_000);
        assert_eq!(
            (ids(expired), next),
            (vec!["c".into(), "b".into()], Some(10_000))
        );
        let (expired, next) = artifacts.sweep(1_000, 10_000);
        assert_eq!((ids(expired), next), (vec!["d".to_owned()], None));
        // An upload that never completed is not swept by retention (its task's deletion
        // erases it).
        assert!(artifacts.get("unstored").is_some());
    }
}
