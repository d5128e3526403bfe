//! The SQLite of the `McpSession` objects: the deployment's MCP tokens (digests only, as the
//! registry keeps extension credentials: `mimo_agent::credentials`), kept by the one object
//! named [`crate::REGISTRY_NAME`], and one session's row, kept by the object named after it.

use mimo_agent::credentials::{digest, secret, MCP_TOKEN_PREFIX};
use mimo_agent::mcp::session::Session;
use mimo_protocol::mcp::{McpTokenCreated, McpTokenInfo, McpTokenList};
use serde::Deserialize;
use worker::{Result, SqlStorage};

use crate::sql::{int, text, Sql};

const TOKENS_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS mcp_tokens (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);";

const SESSION_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS mcp_session (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    body TEXT NOT NULL
);";

/// The MCP tokens.
pub struct McpTokens<S = SqlStorage> {
    sql: S,
}

impl<S: Sql> McpTokens<S> {
    pub fn open(sql: S) -> Result<Self> {
        sql.run(TOKENS_SCHEMA, vec![])?;
        Ok(Self { sql })
    }

    /// A new token named `name`, from `random` (32 bytes for the secret, 8 for its id): the
    /// secret is returned this once and only its digest kept.
    pub fn create(&self, name: &str, random: &[u8; 40], now: u64) -> Result<McpTokenCreated> {
        let token = secret(MCP_TOKEN_PREFIX, &random[..32]);
        let id = secret("mcp-", &random[32..]);
        self.sql.run(
            "INSERT INTO mcp_tokens (id, token_hash, name, created_at) VALUES (?, ?, ?, ?)",
            vec![text(&id), text(&digest(&token)), text(name), int(now)],
        )?;
        Ok(McpTokenCreated {
            id,
            name: name.to_owned(),
            token,
            created_at: now,
        })
    }

    /// The tokens not revoked, newest first.
    pub fn list(&self) -> Result<McpTokenList> {
        #[derive(Deserialize)]
        struct Row {
            id: String,
            name: String,
            created_at: u64,
        }
        let rows: Vec<Row> = self.sql.rows(
            "SELECT id, name, created_at FROM mcp_tokens WHERE revoked_at IS NULL \
             ORDER BY created_at DESC, id",
            vec![],
        )?;
        Ok(McpTokenList {
            tokens: rows
                .into_iter()
                .map(|r| McpTokenInfo {
                    id: r.id,
                    name: r.name,
                    created_at: r.created_at,
                })
                .collect(),
        })
    }

    /// Revokes the token `id`; whether there was one to revoke.
    pub fn revoke(&self, id: &str, now: u64) -> Result<bool> {
        let revoked: Vec<serde_json::Value> = self.sql.rows(
            "UPDATE mcp_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL \
             RETURNING id",
            vec![int(now), text(id)],
        )?;
        Ok(!revoked.is_empty())
    }

    /// The table, for a test to read what is stored.
    #[cfg(all(test, target_arch = "wasm32"))]
    pub fn sql(&self) -> &S {
        &self.sql
    }

    /// The id of the live token `token`, if it is one.
    pub fn check(&self, token: &str) -> Result<Option<String>> {
        #[derive(Deserialize)]
        struct Row {
            id: String,
        }
        let rows: Vec<Row> = self.sql.rows(
            "SELECT id FROM mcp_tokens WHERE token_hash = ? AND revoked_at IS NULL",
            vec![text(&digest(token))],
        )?;
        Ok(rows.into_iter().next().map(|r| r.id))
    }
}

/// One session's row. Its table is made by the first save only: a request naming no session,
/// or one that does not exist, reads here and must leave no object behind.
pub struct SessionStore<S = SqlStorage> {
    sql: S,
}

impl<S: Sql> SessionStore<S> {
    pub fn open(sql: S) -> Self {
        Self { sql }
    }

    pub fn load(&self) -> Result<Option<Session>> {
        #[derive(Deserialize)]
        struct Row {
            body: String,
        }
        let tables: Vec<serde_json::Value> = self.sql.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'mcp_session'",
            vec![],
        )?;
        if tables.is_empty() {
            return Ok(None);
        }
        let rows: Vec<Row> = self
            .sql
            .rows("SELECT body FROM mcp_session WHERE one = 1", vec![])?;
        match rows.into_iter().next() {
            Some(row) => Ok(Some(serde_json::from_str(&row.body)?)),
            None => Ok(None),
        }
    }

    pub fn save(&self, session: &Session) -> Result<()> {
        self.sql.run(SESSION_SCHEMA, vec![])?;
        self.sql.run(
            "INSERT OR REPLACE INTO mcp_session (one, body) VALUES (1, ?)",
            vec![text(&serde_json::to_string(session)?)],
        )
    }

    /// The store's SQL, for a test to read what is stored.
    #[cfg(all(test, target_arch = "wasm32"))]
    pub fn sql(&self) -> &S {
        &self.sql
    }
}
