//! The deployment's session list (issue 15, seed 004 §5), sans I/O: the entry a task's
//! coordinator reports to the task index, when a report is due, and the rules of a query of the
//! list (`GET /api/tasks?q=&limit=&before=`) and its cursor. The index itself (a Durable Object
//! with SQLite) stores the entries and answers the queries.

use mimo_protocol::task::{MAX_TASK_SEARCH_CHARS, TASK_LIST_DEFAULT_LIMIT, TASK_LIST_MAX_LIMIT};
use mimo_protocol::{ErrorCode, ErrorObject, ForkedFrom, TaskStatus};
use serde::{Deserialize, Serialize};

use crate::records::TaskRecord;

/// How stale the index may let a task's last activity get: a report that changes only the
/// activity waits until it is this much newer than the last one sent, so a streaming reply or a
/// burst of steps costs one call to the index every few seconds, not one per save.
pub const ACTIVITY_REPORT_MS: u64 = 5_000;

/// The most words of a search: each must be in the title.
pub const MAX_SEARCH_WORDS: usize = 8;

/// A task's entry as its coordinator reports it (the body of the index's `/put`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    pub task_id: String,
    pub title: Option<String>,
    pub status: TaskStatus,
    pub created_at: u64,
    pub last_activity_at: u64,
    /// Set when a fork is created; a report without it leaves what the index holds (a task's
    /// origin never changes).
    #[serde(default)]
    pub forked_from: Option<ForkedFrom>,
}

impl IndexEntry {
    /// The entry of `task`, last active at `last_activity_at` (or when it was last updated, if
    /// that is later).
    pub fn of(task: &TaskRecord, last_activity_at: u64) -> Self {
        Self {
            task_id: task.task_id.clone(),
            title: task.title.clone(),
            status: task.status,
            created_at: task.created_at,
            last_activity_at: last_activity_at.max(task.updated_at),
            forked_from: task.forked_from.clone(),
        }
    }
}

/// What a coordinator last reported to the index, so that it reports again only when that
/// tells the list something new: another title or status, or activity [`ACTIVITY_REPORT_MS`]
/// newer. Kept in memory: a coordinator woken from hibernation reports once more, which also
/// brings a task that predates the index into it.
#[derive(Debug, Default)]
pub struct IndexReporter {
    reported: Option<IndexEntry>,
}

impl IndexReporter {
    /// Whether `entry` is to be reported now.
    pub fn due(&self, entry: &IndexEntry) -> bool {
        match &self.reported {
            None => true,
            Some(last) => {
                last.task_id != entry.task_id
                    || last.title != entry.title
                    || last.status != entry.status
                    || entry.last_activity_at >= last.last_activity_at + ACTIVITY_REPORT_MS
            }
        }
    }

    /// `entry` reached the index.
    pub fn reported(&mut self, entry: IndexEntry) {
        self.reported = Some(entry);
    }

    /// The task is gone (deleted): the next one under this object is reported afresh.
    pub fn forget(&mut self) {
        self.reported = None;
    }
}

/// Where a page of the list starts: after the task last active at `last_activity_at` with id
/// `task_id` (the list is ordered by both, newest first). On the wire, `<ms>_<taskId>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub last_activity_at: u64,
    pub task_id: String,
}

impl Cursor {
    pub fn encode(&self) -> String {
        format!("{}_{}", self.last_activity_at, self.task_id)
    }

    pub fn parse(text: &str) -> Option<Self> {
        let (at, task_id) = text.split_once('_')?;
        let id_ok = !task_id.is_empty()
            && task_id.len() <= 64
            && task_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-');
        let digits_ok = !at.is_empty() && at.bytes().all(|b| b.is_ascii_digit());
        if !(id_ok && digits_ok) {
            return None;
        }
        Some(Self {
            last_activity_at: at.parse().ok()?,
            task_id: task_id.to_owned(),
        })
    }
}

/// A query of the session list, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    /// Words that must all be in the title (any case); none: every task.
    pub words: Vec<String>,
    pub limit: u32,
    pub before: Option<Cursor>,
}

impl ListQuery {
    /// Reads `q`, `limit` and `before` as given in the request's query (absent: `None`);
    /// a bad one is `SCHEMA_VALIDATION_FAILED` saying what is expected.
    pub fn parse(
        q: Option<&str>,
        limit: Option<&str>,
        before: Option<&str>,
    ) -> Result<Self, ErrorObject> {
        let bad = |message: String| ErrorObject::new(ErrorCode::SchemaValidationFailed, message);
        let q = q.unwrap_or_default();
        if q.chars().count() > MAX_TASK_SEARCH_CHARS {
            return Err(bad(format!(
                "q is at most {MAX_TASK_SEARCH_CHARS} characters"
            )));
        }
        let mut words: Vec<String> = Vec::new();
        for word in q.split_whitespace() {
            if !words.iter().any(|w| w == word) {
                words.push(word.to_owned());
            }
        }
        if words.len() > MAX_SEARCH_WORDS {
            return Err(bad(format!("q has at most {MAX_SEARCH_WORDS} words")));
        }
        let limit = match limit {
            None => TASK_LIST_DEFAULT_LIMIT,
            Some(text) => match text.parse::<u32>() {
                Ok(n) if (1..=TASK_LIST_MAX_LIMIT).contains(&n) => n,
                _ => {
                    return Err(bad(format!(
                        "limit must be a whole number from 1 to {TASK_LIST_MAX_LIMIT}, not {text:?}"
                    )))
                }
            },
        };
        let before = match before {
            None => None,
            Some(text) => Some(Cursor::parse(text).ok_or_else(|| {
                bad(format!(
                    "before must be the nextBefore of a previous page, not {text:?}"
                ))
            })?),
        };
        Ok(Self {
            words,
            limit,
            before,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(title: Option<&str>, status: TaskStatus, updated_at: u64) -> TaskRecord {
        TaskRecord {
            task_id: "t-1".into(),
            status,
            title: title.map(str::to_owned),
            selected_client_id: None,
            current_turn: None,
            message_ids_issued: 0,
            created_at: 10,
            updated_at,
            start_tab: None,
            answer_schema: None,
            domains: Default::default(),
            step_by_step: false,
            forked_from: None,
            allow_bridge: false,
            confirm_bridge: true,
            script_bounds: None,
        }
    }

    #[test]
    fn an_entry_is_last_active_at_its_latest_event_or_update() {
        let task = record(Some("Buy mugs"), TaskStatus::Running, 500);
        let entry = IndexEntry::of(&task, 900);
        assert_eq!(entry.task_id, "t-1");
        assert_eq!(entry.title.as_deref(), Some("Buy mugs"));
        assert_eq!(entry.status, TaskStatus::Running);
        assert_eq!(entry.created_at, 10);
        assert_eq!(entry.last_activity_at, 900);
        assert_eq!(entry.forked_from, None);
        assert_eq!(IndexEntry::of(&task, 0).last_activity_at, 500);
    }

    #[test]
    fn a_report_is_due_for_a_new_title_or_status_or_activity_a_few_seconds_newer() {
        let mut reporter = IndexReporter::default();
        let first = IndexEntry::of(&record(None, TaskStatus::Created, 0), 1_000);
        assert!(reporter.due(&first), "nothing reported yet");
        reporter.reported(first.clone());
        assert!(!reporter.due(&first));

        // Activity alone: not until it is ACTIVITY_REPORT_MS newer.
        let soon = IndexEntry::of(
            &record(None, TaskStatus::Created, 0),
            1_000 + ACTIVITY_REPORT_MS - 1,
        );
        assert!(!reporter.due(&soon));
        let later = IndexEntry::of(
            &record(None, TaskStatus::Created, 0),
            1_000 + ACTIVITY_REPORT_MS,
        );
        assert!(reporter.due(&later));

        // A title or a status: at once.
        let titled = IndexEntry::of(&record(Some("Buy mugs"), TaskStatus::Created, 0), 1_001);
        assert!(reporter.due(&titled));
        let running = IndexEntry::of(&record(None, TaskStatus::Running, 0), 1_001);
        assert!(reporter.due(&running));

        // Forgotten (the task was deleted): reported afresh.
        reporter.forget();
        assert!(reporter.due(&first));
    }

    #[test]
    fn a_cursor_round_trips_and_refuses_what_is_not_one() {
        let cursor = Cursor {
            last_activity_at: 1_712_345_678_901,
            task_id: "0b6f4c1e-8d2a-4f7b-9c3e-5a1d2e3f4a5b".into(),
        };
        assert_eq!(
            cursor.encode(),
            "1712345678901_0b6f4c1e-8d2a-4f7b-9c3e-5a1d2e3f4a5b"
        );
        assert_eq!(Cursor::parse(&cursor.encode()), Some(cursor));
        for bad in [
            "",
            "_",
            "12_",
            "_abc",
            "-1_abc",
            "1.5_abc",
            "12 abc",
            "12_a'b",
            "99999999999999999999999_abc",
        ] {
            assert_eq!(Cursor::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_query_is_read_with_its_defaults_and_refused_with_why() {
        let all = ListQuery::parse(None, None, None).unwrap();
        assert_eq!(
            all,
            ListQuery {
                words: vec![],
                limit: TASK_LIST_DEFAULT_LIMIT,
                before: None
            }
        );
        let q = ListQuery::parse(Some("  cheap  航班 cheap "), Some("5"), Some("7_abc")).unwrap();
        assert_eq!(q.words, ["cheap", "航班"], "split on spaces, each once");
        assert_eq!(q.limit, 5);
        assert_eq!(q.before.unwrap().task_id, "abc");
        assert_eq!(
            ListQuery::parse(Some("   "), None, None)
                .unwrap()
                .words
                .len(),
            0
        );

        let message = |q: Option<&str>, limit: Option<&str>, before: Option<&str>| {
            let error = ListQuery::parse(q, limit, before).unwrap_err();
            assert_eq!(error.code, ErrorCode::SchemaValidationFailed);
            error.message
        };
        for limit in ["0", "101", "-1", "ten", "", "2.5"] {
            assert!(
                message(None, Some(limit), None).starts_with("limit must be a whole number"),
                "{limit:?}"
            );
        }
        assert!(message(None, None, Some("yesterday")).starts_with("before must be"));
        let long = "a".repeat(MAX_TASK_SEARCH_CHARS + 1);
        assert!(message(Some(&long), None, None).contains("at most 200 characters"));
        // Counted in characters, not bytes.
        assert!(ListQuery::parse(Some(&"航".repeat(MAX_TASK_SEARCH_CHARS)), None, None).is_ok());
        assert!(message(Some("a b c d e f g h i"), None, None).contains("at most 8 words"));
    }
}
