//! The skill library's SQLite: each skill as stored, and an FTS5 index of its words (name,
//! description, sites, risk notes, steps), stemmed (`porter`) so that "claims" finds "claim",
//! ranked by FTS5's BM25.

use mimo_agent::skills;
use mimo_protocol::{Skill, SkillHit};
use serde::Deserialize;
use worker::{Error, Result, SqlStorage};

use crate::sql::{int, text, Sql};

/// `skill_words` shares its rowids with `skills`: a skill's words are replaced and deleted by
/// its row's id.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS skills (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    skill TEXT NOT NULL,
    sites TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS skill_words USING fts5(
    name, description, sites, risk, body,
    tokenize = 'porter unicode61'
);";

/// How much a match in each column of `skill_words` counts (name, description, sites, risk,
/// body): a skill named or described by a word is about it; its steps mention many.
const RANK: &str = "bm25(skill_words, 10.0, 5.0, 2.0, 1.0, 1.0)";

/// The most skills a search answers with.
const SEARCH_LIMIT: u32 = 20;

#[derive(Deserialize)]
struct SkillRow {
    skill: String,
}

impl SkillRow {
    fn read(self) -> Result<Skill> {
        serde_json::from_str(&self.skill)
            .map_err(|e| Error::RustError(format!("corrupt skill: {e}")))
    }
}

pub struct SkillStore<S = SqlStorage> {
    sql: S,
}

impl<S: Sql> SkillStore<S> {
    pub fn open(sql: S) -> Result<Self> {
        sql.run(SCHEMA, vec![])?;
        Ok(Self { sql })
    }

    /// Stores `skill`, replacing the one of the same name; `true` when it is new.
    pub fn put(&self, skill: &Skill) -> Result<bool> {
        let created = self.id_of(&skill.name)?.is_none();
        self.sql.run(
            "INSERT INTO skills (name, skill, sites, updated_at) VALUES (?, ?, ?, ?) \
             ON CONFLICT (name) DO UPDATE SET skill = excluded.skill, sites = excluded.sites, \
             updated_at = excluded.updated_at",
            vec![
                text(&skill.name),
                text(&serde_json::to_string(skill)?),
                text(&serde_json::to_string(&skill.sites)?),
                int(skill.updated_at),
            ],
        )?;
        let id = self
            .id_of(&skill.name)?
            .ok_or_else(|| Error::RustError("a stored skill has no row".into()))?;
        self.sql
            .run("DELETE FROM skill_words WHERE rowid = ?", vec![int(id)])?;
        self.sql.run(
            "INSERT INTO skill_words (rowid, name, description, sites, risk, body) \
             VALUES (?, ?, ?, ?, ?, ?)",
            vec![
                int(id),
                text(&skill.name),
                text(&skill.description),
                text(&skill.sites.join(" ")),
                text(&skill.risk.join("\n")),
                text(&skill.body),
            ],
        )?;
        Ok(created)
    }

    /// Deletes the skill `name`; `false` when there is none.
    pub fn delete(&self, name: &str) -> Result<bool> {
        let Some(id) = self.id_of(name)? else {
            return Ok(false);
        };
        self.sql
            .run("DELETE FROM skill_words WHERE rowid = ?", vec![int(id)])?;
        self.sql
            .run("DELETE FROM skills WHERE id = ?", vec![int(id)])?;
        Ok(true)
    }

    pub fn get(&self, name: &str) -> Result<Option<Skill>> {
        let rows: Vec<SkillRow> = self
            .sql
            .rows("SELECT skill FROM skills WHERE name = ?", vec![text(name)])?;
        rows.into_iter().next().map(SkillRow::read).transpose()
    }

    /// Every skill, by name.
    pub fn list(&self) -> Result<Vec<Skill>> {
        let rows: Vec<SkillRow> = self
            .sql
            .rows("SELECT skill FROM skills ORDER BY name", vec![])?;
        rows.into_iter().map(SkillRow::read).collect()
    }

    pub fn count(&self) -> Result<usize> {
        #[derive(Deserialize)]
        struct Row {
            n: u64,
        }
        let rows: Vec<Row> = self.sql.rows("SELECT COUNT(*) AS n FROM skills", vec![])?;
        Ok(rows.first().map_or(0, |r| r.n as usize))
    }

    /// The skills matching any word of `words` ([`skills::match_query`]), the best first, with
    /// where they match.
    pub fn search(&self, words: &str) -> Result<Vec<SkillHit>> {
        #[derive(Deserialize)]
        struct Row {
            skill: String,
            snippet: String,
        }
        let Some(query) = skills::match_query(words) else {
            return Ok(Vec::new());
        };
        let rows: Vec<Row> = self.sql.rows(
            &format!(
                "SELECT skills.skill AS skill, \
                 snippet(skill_words, -1, '[', ']', '…', 16) AS snippet \
                 FROM skill_words JOIN skills ON skills.id = skill_words.rowid \
                 WHERE skill_words MATCH ? ORDER BY {RANK} LIMIT ?"
            ),
            vec![text(&query), int(SEARCH_LIMIT.into())],
        )?;
        rows.into_iter()
            .map(|r| {
                Ok(SkillHit {
                    skill: SkillRow { skill: r.skill }.read()?,
                    snippet: r.snippet,
                })
            })
            .collect()
    }

    /// The skills a run's model call gets for its goal and page ([`skills::choose`]).
    pub fn matching(&self, goal: &str, url: Option<&str>) -> Result<Vec<Skill>> {
        #[derive(Deserialize)]
        struct Row {
            name: String,
            sites: String,
        }
        let hits: Vec<String> = self
            .search(goal)?
            .into_iter()
            .map(|hit| hit.skill.name)
            .collect();
        let rows: Vec<Row> = self.sql.rows("SELECT name, sites FROM skills", vec![])?;
        let sites = rows
            .into_iter()
            .map(|r| {
                let sites = serde_json::from_str(&r.sites)
                    .map_err(|e| Error::RustError(format!("corrupt sites of {}: {e}", r.name)))?;
                Ok((r.name, sites))
            })
            .collect::<Result<Vec<(String, Vec<String>)>>>()?;
        let mut chosen = Vec::new();
        for name in skills::choose(&hits, &sites, url) {
            chosen.extend(self.get(&name)?);
        }
        Ok(chosen)
    }

    fn id_of(&self, name: &str) -> Result<Option<u64>> {
        #[derive(Deserialize)]
        struct Row {
            id: u64,
        }
        let rows: Vec<Row> = self
            .sql
            .rows("SELECT id FROM skills WHERE name = ?", vec![text(name)])?;
        Ok(rows.first().map(|r| r.id))
    }
}
