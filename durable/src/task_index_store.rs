//! The task index's SQLite: one row per task of the deployment (title, status, times, where a
//! fork came from), ordered by last activity, and an FTS5 index of the titles with the
//! `trigram` tokenizer. Trigrams rather than words: `unicode61` does not split Chinese or
//! Japanese into words, and a title is searched for parts of it ("航班" in "查找最便宜的航班",
//! "mug" in "mugs"); a `LIKE '%…%'` on a trigram table is answered from the index for a word of
//! three characters or more, and by a scan of the (short) titles for a shorter one. Titles are
//! indexed and searched in lower case (Unicode's, from Rust: SQLite's `LIKE` folds only ASCII),
//! so "ärger" finds "Ärger".

use mimo_agent::task_index::{Cursor, IndexEntry, ListQuery};
use mimo_protocol::{ForkedFrom, TaskList, TaskListEntry, TaskStatus};
use serde::Deserialize;
use worker::{Error, Result, SqlStorage, SqlStorageValue};

use crate::sql::{int, text, Sql};

/// `task_titles` shares its rowids with `tasks`: a title is replaced and deleted by its row's
/// id.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tasks (
    id INTEGER PRIMARY KEY,
    task_id TEXT NOT NULL UNIQUE,
    title TEXT,
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    last_activity_at INTEGER NOT NULL,
    forked_from_task TEXT,
    forked_from_message TEXT
);
CREATE INDEX IF NOT EXISTS tasks_by_activity ON tasks (last_activity_at DESC, task_id DESC);
CREATE INDEX IF NOT EXISTS tasks_by_origin ON tasks (forked_from_task);
CREATE VIRTUAL TABLE IF NOT EXISTS task_titles USING fts5(title, tokenize = 'trigram');";

#[derive(Deserialize)]
struct Row {
    task_id: String,
    title: Option<String>,
    status: String,
    created_at: u64,
    last_activity_at: u64,
    forked_from_task: Option<String>,
    forked_from_message: Option<String>,
}

impl Row {
    fn read(self) -> Result<TaskListEntry> {
        let status: TaskStatus = self
            .status
            .parse()
            .map_err(|_| Error::RustError(format!("stored status {:?}", self.status)))?;
        let forked_from = match (self.forked_from_task, self.forked_from_message) {
            (Some(task_id), Some(message_id)) => Some(ForkedFrom {
                task_id,
                message_id,
            }),
            _ => None,
        };
        Ok(TaskListEntry {
            task_id: self.task_id,
            title: self.title,
            status,
            created_at: self.created_at,
            last_activity_at: self.last_activity_at,
            forked_from,
            forks: Vec::new(),
        })
    }
}

pub struct TaskIndexStore<S = SqlStorage> {
    sql: S,
}

impl<S: Sql> TaskIndexStore<S> {
    pub fn open(sql: S) -> Result<Self> {
        sql.run(SCHEMA, vec![])?;
        Ok(Self { sql })
    }

    /// Stores a task's entry, creating it or updating it. Its last activity never goes back (a
    /// late report cannot move a task down the list), and where it was forked from, once
    /// known, stays.
    pub fn put(&self, entry: &IndexEntry) -> Result<()> {
        let title_changed = self.title_of(&entry.task_id)? != Some(entry.title.clone());
        let (origin_task, origin_message) = match &entry.forked_from {
            Some(origin) => (text(&origin.task_id), text(&origin.message_id)),
            None => (SqlStorageValue::Null, SqlStorageValue::Null),
        };
        self.sql.run(
            "INSERT INTO tasks (task_id, title, status, created_at, last_activity_at, \
             forked_from_task, forked_from_message) VALUES (?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT (task_id) DO UPDATE SET title = excluded.title, \
             status = excluded.status, \
             last_activity_at = MAX(last_activity_at, excluded.last_activity_at), \
             forked_from_task = COALESCE(forked_from_task, excluded.forked_from_task), \
             forked_from_message = COALESCE(forked_from_message, excluded.forked_from_message)",
            vec![
                text(&entry.task_id),
                optional(entry.title.as_deref()),
                text(entry.status.as_str()),
                int(entry.created_at),
                int(entry.last_activity_at),
                origin_task,
                origin_message,
            ],
        )?;
        if title_changed {
            let id = self
                .id_of(&entry.task_id)?
                .ok_or_else(|| Error::RustError("a stored task has no row".into()))?;
            self.sql
                .run("DELETE FROM task_titles WHERE rowid = ?", vec![int(id)])?;
            if let Some(title) = &entry.title {
                self.sql.run(
                    "INSERT INTO task_titles (rowid, title) VALUES (?, ?)",
                    vec![int(id), text(&title.to_lowercase())],
                )?;
            }
        }
        Ok(())
    }

    /// Removes a task's entry; `false` when there was none. The tasks forked from it keep
    /// naming it as their origin.
    pub fn delete(&self, task_id: &str) -> Result<bool> {
        let Some(id) = self.id_of(task_id)? else {
            return Ok(false);
        };
        self.sql
            .run("DELETE FROM task_titles WHERE rowid = ?", vec![int(id)])?;
        self.sql
            .run("DELETE FROM tasks WHERE id = ?", vec![int(id)])?;
        Ok(true)
    }

    /// A page of the list: the tasks whose title holds every word of the query (any case),
    /// the most recently active first, after the query's cursor; each with its forks.
    pub fn list(&self, query: &ListQuery) -> Result<TaskList> {
        let mut conditions = Vec::new();
        let mut bindings = Vec::new();
        for word in &query.words {
            conditions.push(
                "id IN (SELECT rowid FROM task_titles WHERE title LIKE ? ESCAPE '\\')".to_owned(),
            );
            bindings.push(text(&like_pattern(&word.to_lowercase())));
        }
        if let Some(cursor) = &query.before {
            conditions.push(
                "(last_activity_at < ? OR (last_activity_at = ? AND task_id < ?))".to_owned(),
            );
            bindings.extend([
                int(cursor.last_activity_at),
                int(cursor.last_activity_at),
                text(&cursor.task_id),
            ]);
        }
        let filter = if conditions.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", conditions.join(" AND "))
        };
        // One more than the page, to tell whether another page follows.
        bindings.push(int(u64::from(query.limit) + 1));
        let rows: Vec<Row> = self.sql.rows(
            &format!(
                "SELECT task_id, title, status, created_at, last_activity_at, \
                 forked_from_task, forked_from_message FROM tasks {filter} \
                 ORDER BY last_activity_at DESC, task_id DESC LIMIT ?"
            ),
            bindings,
        )?;
        let mut tasks = rows
            .into_iter()
            .map(Row::read)
            .collect::<Result<Vec<_>>>()?;
        let more = tasks.len() > query.limit as usize;
        tasks.truncate(query.limit as usize);
        self.add_forks(&mut tasks)?;
        let next_before = tasks.last().filter(|_| more).map(|last| {
            Cursor {
                last_activity_at: last.last_activity_at,
                task_id: last.task_id.clone(),
            }
            .encode()
        });
        Ok(TaskList { tasks, next_before })
    }

    /// Fills in each entry's forks, the oldest first, in one query.
    fn add_forks(&self, tasks: &mut [TaskListEntry]) -> Result<()> {
        #[derive(Deserialize)]
        struct Fork {
            task_id: String,
            forked_from_task: String,
        }
        if tasks.is_empty() {
            return Ok(());
        }
        let places = vec!["?"; tasks.len()].join(", ");
        let forks: Vec<Fork> = self.sql.rows(
            &format!(
                "SELECT task_id, forked_from_task FROM tasks WHERE forked_from_task IN ({places}) \
                 ORDER BY created_at, task_id"
            ),
            tasks.iter().map(|t| text(&t.task_id)).collect(),
        )?;
        for fork in forks {
            if let Some(origin) = tasks
                .iter_mut()
                .find(|t| t.task_id == fork.forked_from_task)
            {
                origin.forks.push(fork.task_id);
            }
        }
        Ok(())
    }

    fn id_of(&self, task_id: &str) -> Result<Option<u64>> {
        #[derive(Deserialize)]
        struct Id {
            id: u64,
        }
        let rows: Vec<Id> = self.sql.rows(
            "SELECT id FROM tasks WHERE task_id = ?",
            vec![text(task_id)],
        )?;
        Ok(rows.first().map(|r| r.id))
    }

    /// The stored title: `None` for no entry, `Some(None)` for an entry without one.
    fn title_of(&self, task_id: &str) -> Result<Option<Option<String>>> {
        #[derive(Deserialize)]
        struct Title {
            title: Option<String>,
        }
        let rows: Vec<Title> = self.sql.rows(
            "SELECT title FROM tasks WHERE task_id = ?",
            vec![text(task_id)],
        )?;
        Ok(rows.into_iter().next().map(|r| r.title))
    }
}

fn optional(value: Option<&str>) -> SqlStorageValue {
    value.map_or(SqlStorageValue::Null, text)
}

/// `LIKE` pattern for titles holding `word`, its own `%`, `_` and `\` matched as themselves.
fn like_pattern(word: &str) -> String {
    let mut pattern = String::from("%");
    for c in word.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}
