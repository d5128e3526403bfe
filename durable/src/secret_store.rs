//! A task's own secrets in its SQLite: the name, the domains, and the value sealed with
//! AES-256-GCM under `MIMO_SECRETS_KEY` (a fresh random nonce per write). The plaintext is never
//! stored; without the key nothing can be read back.

use mimo_agent::secrets::{Secret, SecretsKey};
use mimo_protocol::{SecretInfo, SecretScope};
use serde::Deserialize;
use worker::{Result, SqlStorage};

use crate::sql::{int, text, Sql};

pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS secrets (
    name TEXT PRIMARY KEY,
    domains TEXT NOT NULL,
    nonce TEXT NOT NULL,
    sealed TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS secret_releases (
    action_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (action_id, attempt, name)
);";

#[derive(Deserialize)]
struct Row {
    name: String,
    domains: String,
    nonce: String,
    sealed: String,
}

pub struct SecretStore<S = SqlStorage> {
    sql: S,
}

impl<S: Sql> SecretStore<S> {
    pub fn open(sql: S) -> Result<Self> {
        sql.run(SCHEMA, vec![])?;
        Ok(Self { sql })
    }

    /// Stores (or replaces) a secret, sealed under `key` with `nonce`.
    pub fn put(
        &self,
        key: &SecretsKey,
        nonce: [u8; 12],
        name: &str,
        value: &str,
        domains: &[String],
        now: u64,
    ) -> Result<()> {
        let sealed = key.seal(nonce, name, value);
        self.sql.run(
            "INSERT OR REPLACE INTO secrets (name, domains, nonce, sealed, updated_at) \
             VALUES (?, ?, ?, ?, ?)",
            vec![
                text(name),
                text(&serde_json::to_string(domains)?),
                text(&hex::encode(nonce)),
                text(&hex::encode(sealed)),
                int(now),
            ],
        )
    }

    /// Whether there was one to delete.
    pub fn delete(&self, name: &str) -> Result<bool> {
        let existed = self.rows()?.iter().any(|r| r.name == name);
        self.sql
            .run("DELETE FROM secrets WHERE name = ?", vec![text(name)])?;
        Ok(existed)
    }

    fn rows(&self) -> Result<Vec<Row>> {
        self.sql.rows(
            "SELECT name, domains, nonce, sealed FROM secrets ORDER BY name",
            vec![],
        )
    }

    /// Names and domains, never values.
    pub fn list(&self) -> Result<Vec<SecretInfo>> {
        Ok(self
            .rows()?
            .into_iter()
            .map(|r| SecretInfo {
                name: r.name,
                domains: serde_json::from_str(&r.domains).unwrap_or_default(),
                scope: SecretScope::Task,
            })
            .collect())
    }

    /// Every secret opened with `key`; one that does not open (another key) is left out.
    pub fn open_all(&self, key: &SecretsKey) -> Result<Vec<Secret>> {
        Ok(self
            .rows()?
            .into_iter()
            .filter_map(|r| {
                let nonce = hex::decode(&r.nonce).ok()?;
                let sealed = hex::decode(&r.sealed).ok()?;
                let value = key.open(&nonce, &r.name, &sealed)?;
                Some(Secret {
                    name: r.name,
                    value,
                    domains: serde_json::from_str(&r.domains).unwrap_or_default(),
                })
            })
            .collect())
    }

    /// Records that the value of `name` was given for an action's attempt: `false` when it was
    /// given before (a value is given once per attempt, even across restarts).
    pub fn release(&self, action_id: &str, attempt: u32, name: &str) -> Result<bool> {
        let key = || vec![text(action_id), int(attempt.into()), text(name)];
        #[derive(Deserialize)]
        struct Given {}
        let given: Vec<Given> = self.sql.rows(
            "SELECT 1 AS given FROM secret_releases WHERE action_id = ? AND attempt = ? AND name = ?",
            key(),
        )?;
        if !given.is_empty() {
            return Ok(false);
        }
        self.sql.run(
            "INSERT INTO secret_releases (action_id, attempt, name) VALUES (?, ?, ?)",
            key(),
        )?;
        Ok(true)
    }

    pub fn clear(&self) -> Result<()> {
        self.sql.run("DELETE FROM secrets", vec![])?;
        self.sql.run("DELETE FROM secret_releases", vec![])
    }
}
