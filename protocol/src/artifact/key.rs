//! Task ids, artifact ids and R2 object keys.
//!
//! An artifact id is `<taskId>.<32 lowercase hex>`: the task is readable from the id itself,
//! so the server can authorize and locate an artifact without a lookup table, and the 128
//! random bits (supplied by the caller, e.g. `crypto.getRandomValues`) make ids unguessable
//! and collision-free.
//!
//! The R2 key is `tasks/<taskId>/<kind>/<artifactId>`. Everything of a task lives under
//! [`task_prefix`] so retention and listing work with one prefix; the kind segment lets a
//! listing be narrowed per kind.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::kind::ArtifactKind;

/// Length of a canonical UUID string.
const UUID_LEN: usize = 36;
/// Byte positions of the dashes in a canonical UUID (8-4-4-4-12).
const UUID_DASHES: [usize; 4] = [8, 13, 18, 23];
/// Random bytes in an artifact id.
pub const ARTIFACT_RANDOM_BYTES: usize = 16;
/// Hex characters of the random part of an artifact id.
const ARTIFACT_RANDOM_HEX: usize = ARTIFACT_RANDOM_BYTES * 2;
/// Length of an artifact id string: UUID, `.`, 32 hex.
pub const ARTIFACT_ID_LEN: usize = UUID_LEN + 1 + ARTIFACT_RANDOM_HEX;
/// First segment of every artifact key.
pub const KEY_ROOT: &str = "tasks/";

/// Why an id was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// Not a canonical lowercase UUID (36 chars, 8-4-4-4-12 hex and dashes).
    #[error("task id is not a canonical lowercase UUID")]
    BadTaskId,
    /// Not `<taskId>.<32 lowercase hex>`.
    #[error("artifact id is not <taskId>.<32 lowercase hex>")]
    BadArtifactId,
    /// Not `tasks/<taskId>/<kind>/<artifactId>` with the same task in both places.
    #[error("not an artifact key")]
    BadKey,
}

/// A task id: a UUID in canonical lowercase form (what `uuid::Uuid::to_string` produces).
/// Only one spelling is accepted because the id is part of signed keys and R2 prefixes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(String);

impl TaskId {
    /// Validates a task id.
    pub fn parse(s: &str) -> Result<Self, IdError> {
        if is_canonical_uuid(s.as_bytes()) {
            Ok(TaskId(s.to_owned()))
        } else {
            Err(IdError::BadTaskId)
        }
    }

    /// The id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for TaskId {
    type Err = IdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TaskId::parse(s)
    }
}

/// An artifact id: `<taskId>.<32 lowercase hex chars>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArtifactId(String);

impl ArtifactId {
    /// A new id for `task_id` from 16 random bytes the caller drew from a CSPRNG
    /// (`crypto.getRandomValues` in a Worker). This crate has no randomness of its own.
    pub fn new(task_id: &TaskId, random: [u8; ARTIFACT_RANDOM_BYTES]) -> Self {
        let mut s = String::with_capacity(ARTIFACT_ID_LEN);
        s.push_str(task_id.as_str());
        s.push('.');
        s.push_str(&hex::encode(random));
        ArtifactId(s)
    }

    /// Validates an artifact id: a canonical lowercase UUID, a `.`, 32 lowercase hex chars.
    pub fn parse(s: &str) -> Result<Self, IdError> {
        // Checked on bytes, not `str` slices: a multi-byte character must not make slicing
        // panic, and every valid id is ASCII anyway.
        let b = s.as_bytes();
        let valid = b.len() == ARTIFACT_ID_LEN
            && is_canonical_uuid(&b[..UUID_LEN])
            && b[UUID_LEN] == b'.'
            && b[UUID_LEN + 1..].iter().all(|&c| is_lower_hex(c));
        if valid {
            Ok(ArtifactId(s.to_owned()))
        } else {
            Err(IdError::BadArtifactId)
        }
    }

    /// The id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The task this artifact belongs to.
    pub fn task_id(&self) -> TaskId {
        TaskId(self.0[..UUID_LEN].to_owned())
    }

    /// The task id as a string slice (no allocation).
    pub fn task_id_str(&self) -> &str {
        &self.0[..UUID_LEN]
    }

    /// The R2 key of this artifact when stored as `kind`:
    /// `tasks/<taskId>/<kind>/<artifactId>`.
    pub fn object_key(&self, kind: ArtifactKind) -> String {
        format!(
            "{KEY_ROOT}{}/{}/{}",
            self.task_id_str(),
            kind.as_str(),
            self.0
        )
    }

    /// The keys this artifact may be stored under, one per kind. The id does not carry the
    /// kind, so a route that only has the id (e.g. `GET /api/artifacts/{artifactId}`) either
    /// lists [`task_prefix`] or `head`s these.
    pub fn candidate_keys(&self) -> [String; ArtifactKind::ALL.len()] {
        ArtifactKind::ALL.map(|k| self.object_key(k))
    }
}

impl fmt::Display for ArtifactId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for ArtifactId {
    type Err = IdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ArtifactId::parse(s)
    }
}

impl Serialize for ArtifactId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for ArtifactId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        ArtifactId::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl Serialize for TaskId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for TaskId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        TaskId::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// The R2 prefix holding every artifact of a task: `tasks/<taskId>/` (with the trailing slash,
/// so one task's prefix never matches another id that merely starts the same way).
pub fn task_prefix(task_id: &TaskId) -> String {
    format!("{KEY_ROOT}{}/", task_id.as_str())
}

/// Splits an R2 key `tasks/<taskId>/<kind>/<artifactId>` back into its parts, checking that
/// the artifact id belongs to the task of the key (useful for retention jobs and listings).
pub fn parse_object_key(key: &str) -> Result<(ArtifactKind, ArtifactId), IdError> {
    let rest = key.strip_prefix(KEY_ROOT).ok_or(IdError::BadKey)?;
    let mut parts = rest.split('/');
    let (Some(task), Some(kind), Some(id), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(IdError::BadKey);
    };
    let kind: ArtifactKind = kind.parse().map_err(|_| IdError::BadKey)?;
    let id = ArtifactId::parse(id).map_err(|_| IdError::BadKey)?;
    if id.task_id_str() != task {
        return Err(IdError::BadKey);
    }
    Ok((kind, id))
}

fn is_lower_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
}

fn is_canonical_uuid(s: &[u8]) -> bool {
    s.len() == UUID_LEN
        && s.iter().enumerate().all(|(i, &b)| {
            if UUID_DASHES.contains(&i) {
                b == b'-'
            } else {
                is_lower_hex(b)
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASK: &str = "3f2b8c4e-9a1d-4e7f-8b2c-0d5e6f7a8b9c";
    const RANDOM: [u8; 16] = [
        0x00, 0x01, 0x02, 0x0a, 0x10, 0x7f, 0x80, 0xab, 0xcd, 0xef, 0xff, 0x12, 0x34, 0x56, 0x78,
        0x9a,
    ];

    fn task() -> TaskId {
        TaskId::parse(TASK).unwrap()
    }

    #[test]
    fn artifact_id_round_trip() {
        let id = ArtifactId::new(&task(), RANDOM);
        assert_eq!(
            id.as_str(),
            "3f2b8c4e-9a1d-4e7f-8b2c-0d5e6f7a8b9c.0001020a107f80abcdefff123456789a"
        );
        assert_eq!(id.as_str().len(), ARTIFACT_ID_LEN);
        let parsed = ArtifactId::parse(id.as_str()).unwrap();
        assert_eq!(parsed, id);
        assert_eq!(parsed.task_id(), task());
        assert_eq!(parsed.task_id_str(), TASK);
        assert_eq!(id.to_string().parse::<ArtifactId>().unwrap(), id);
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(serde_json::from_str::<ArtifactId>(&json).unwrap(), id);
        assert!(serde_json::from_str::<ArtifactId>("\"nope\"").is_err());
    }

    #[test]
    fn bad_artifact_ids_refused() {
        let good = ArtifactId::new(&task(), RANDOM).as_str().to_owned();
        let mut bad = vec![
            String::new(),
            TASK.to_owned(),
            format!("{TASK}."),
            format!("{TASK}.0001020a107f80abcdefff123456789"), // 31 hex
            format!("{TASK}.0001020a107f80abcdefff123456789ab"), // 33 hex
            format!("{TASK}.0001020A107F80ABCDEFFF123456789A"), // uppercase
            format!("{TASK}.0001020a107f80abcdefff12345678zz"), // not hex
            format!("{TASK}/0001020a107f80abcdefff123456789a"), // wrong separator
            format!("{}.0001020a107f80abcdefff123456789a", TASK.to_uppercase()),
            format!("{}.0001020a107f80abcdefff123456789a", TASK.replace('-', "")),
            format!(" {good}"),
            format!("{good}\n"),
            good.replace('.', "/"),
        ];
        // Multi-byte characters must not make slicing panic.
        bad.push(format!("{}é.0001020a107f80abcdefff1234567", &TASK[..35]));
        bad.push("é".repeat(ARTIFACT_ID_LEN / 2) + "a");
        for b in bad {
            assert_eq!(ArtifactId::parse(&b), Err(IdError::BadArtifactId), "{b:?}");
        }
    }

    #[test]
    fn task_ids() {
        assert!(TaskId::parse(TASK).is_ok());
        assert!(TaskId::parse("00000000-0000-0000-0000-000000000000").is_ok());
        for bad in [
            "",
            "3F2B8C4E-9A1D-4E7F-8B2C-0D5E6F7A8B9C",
            "3f2b8c4e9a1d4e7f8b2c0d5e6f7a8b9c",
            "{3f2b8c4e-9a1d-4e7f-8b2c-0d5e6f7a8b9c}",
            "3f2b8c4e-9a1d-4e7f-8b2c-0d5e6f7a8b9",
            "3f2b8c4e-9a1d-4e7f-8b2c-0d5e6f7a8b9c0",
            "3f2b8c4e-9a1d-4e7f-8b2c_0d5e6f7a8b9c",
            "3f2b8c4e9-a1d-4e7f-8b2c-0d5e6f7a8b9c",
            "3f2b8c4g-9a1d-4e7f-8b2c-0d5e6f7a8b9c",
            "../../../../../../../../../../../..",
        ] {
            assert_eq!(TaskId::parse(bad), Err(IdError::BadTaskId), "{bad:?}");
        }
    }

    #[test]
    fn keys_and_prefix() {
        let id = ArtifactId::new(&task(), RANDOM);
        let key = id.object_key(ArtifactKind::Screenshot);
        assert_eq!(
            key,
            format!("tasks/{TASK}/screenshot/{TASK}.0001020a107f80abcdefff123456789a")
        );
        assert_eq!(task_prefix(&task()), format!("tasks/{TASK}/"));
        for k in ArtifactKind::ALL {
            assert!(id.object_key(k).starts_with(&task_prefix(&task())));
            assert_eq!(parse_object_key(&id.object_key(k)), Ok((k, id.clone())));
        }
        assert_eq!(
            id.candidate_keys(),
            [
                id.object_key(ArtifactKind::Screenshot),
                id.object_key(ArtifactKind::Html),
                id.object_key(ArtifactKind::Readability),
                id.object_key(ArtifactKind::DomIndex),
                id.object_key(ArtifactKind::Attachment),
            ]
        );
    }

    #[test]
    fn bad_keys_refused() {
        let id = ArtifactId::new(&task(), RANDOM);
        let other = "00000000-0000-0000-0000-000000000000";
        for bad in [
            String::new(),
            format!("tasks/{TASK}/screenshot"),
            format!("tasks/{TASK}/video/{id}"),
            format!("tasks/{other}/html/{id}"),
            format!("tasks/{TASK}/html/{id}/x"),
            format!("task/{TASK}/html/{id}"),
            format!("tasks/{TASK}/html/{TASK}"),
        ] {
            assert_eq!(parse_object_key(&bad), Err(IdError::BadKey), "{bad:?}");
        }
    }
}
