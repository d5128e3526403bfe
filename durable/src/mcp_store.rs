//! The SQLite of the `McpSession` objects: the deployment's MCP tokens (digests only, as the
//! registry keeps extension credentials: `mimo_agent::credentials`) and what OAuth gives
//! (registered clients, codes, grants and their access tokens: `mimo_agent::mcp::oauth`), kept
//! by the one object named [`crate::REGISTRY_NAME`], and one session's row, kept by the object
//! named after it.

use mimo_agent::credentials::{digest, secret, MCP_TOKEN_PREFIX};
use mimo_agent::mcp::oauth::{
    self, IssuedCode, ACCESS_TOKEN_PREFIX, ACCESS_TOKEN_TTL_MS, CODE_PREFIX, GRANT_ID_PREFIX,
    REFRESH_TOKEN_PREFIX, REFRESH_TOKEN_TTL_MS,
};
use mimo_agent::mcp::session::Session;
use mimo_protocol::mcp::{McpTokenCreated, McpTokenInfo, McpTokenList};
use mimo_protocol::oauth::{OAuthError, RegisteredClient, TokenResponse};
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

/// OAuth's records. A grant is what the person allowed one client: its refresh token (replaced
/// at each use) and the access tokens made from it, all revoked with it.
const OAUTH_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS oauth_clients (
    client_id TEXT PRIMARY KEY,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS oauth_codes (
    code_hash TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at INTEGER,
    grant_id TEXT
);
CREATE TABLE IF NOT EXISTS oauth_grants (
    id TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    name TEXT NOT NULL,
    resource TEXT NOT NULL,
    refresh_hash TEXT NOT NULL UNIQUE,
    refresh_expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE TABLE IF NOT EXISTS oauth_access (
    token_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);";

/// Random bytes for one grant's tokens: 8 for its id, 32 for each token.
pub const GRANT_RANDOM_BYTES: usize = 72;

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
        sql.run(OAUTH_SCHEMA, vec![])?;
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
        // A client's OAuth grant is listed with the tokens, and revoked the same way.
        let rows: Vec<Row> = self.sql.rows(
            "SELECT id, name, created_at FROM mcp_tokens WHERE revoked_at IS NULL \
             UNION ALL SELECT id, name || ' (OAuth)', created_at FROM oauth_grants \
             WHERE revoked_at IS NULL ORDER BY created_at DESC, id",
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

    /// Revokes the token (or OAuth grant) `id`; whether there was one to revoke.
    pub fn revoke(&self, id: &str, now: u64) -> Result<bool> {
        let table = if id.starts_with(GRANT_ID_PREFIX) {
            "oauth_grants"
        } else {
            "mcp_tokens"
        };
        let revoked: Vec<serde_json::Value> = self.sql.rows(
            &format!(
                "UPDATE {table} SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL \
                 RETURNING id"
            ),
            vec![int(now), text(id)],
        )?;
        Ok(!revoked.is_empty())
    }

    /// The table, for a test to read what is stored.
    #[cfg(all(test, target_arch = "wasm32"))]
    pub fn sql(&self) -> &S {
        &self.sql
    }

    /// Who holds the live token `token`, if it is one: the MCP token's id, or for an OAuth
    /// access token made for `resource` its grant's (the same across refreshes, so a session
    /// outlives the access token it began with).
    pub fn check(&self, token: &str, resource: &str, now: u64) -> Result<Option<String>> {
        #[derive(Deserialize)]
        struct Row {
            id: String,
        }
        let rows: Vec<Row> = if token.starts_with(ACCESS_TOKEN_PREFIX) {
            self.sql.rows(
                "SELECT g.id FROM oauth_access a JOIN oauth_grants g ON g.id = a.grant_id \
                 WHERE a.token_hash = ? AND a.expires_at > ? AND g.revoked_at IS NULL \
                 AND g.resource = ?",
                vec![text(&digest(token)), int(now), text(resource)],
            )?
        } else {
            self.sql.rows(
                "SELECT id FROM mcp_tokens WHERE token_hash = ? AND revoked_at IS NULL",
                vec![text(&digest(token))],
            )?
        };
        Ok(rows.into_iter().next().map(|r| r.id))
    }

    /// Forgets the clients registered before `before` (seconds, their `client_id_issued_at`)
    /// that never got a grant; how many clients are left without one.
    pub fn sweep_unused_clients(&self, before: u64) -> Result<usize> {
        #[derive(Deserialize)]
        struct Count {
            n: usize,
        }
        let ungranted = "client_id NOT IN (SELECT client_id FROM oauth_grants)";
        self.sql.run(
            &format!(
                "DELETE FROM oauth_clients WHERE {ungranted} \
                 AND json_extract(body, '$.client_id_issued_at') < ?"
            ),
            vec![int(before)],
        )?;
        let left: Vec<Count> = self.sql.rows(
            &format!("SELECT count(*) AS n FROM oauth_clients WHERE {ungranted}"),
            vec![],
        )?;
        Ok(left.into_iter().next().map_or(0, |c| c.n))
    }

    pub fn register_client(&self, client: &RegisteredClient) -> Result<()> {
        self.sql.run(
            "INSERT INTO oauth_clients (client_id, body) VALUES (?, ?)",
            vec![
                text(&client.client_id),
                text(&serde_json::to_string(client)?),
            ],
        )
    }

    pub fn client(&self, client_id: &str) -> Result<Option<RegisteredClient>> {
        #[derive(Deserialize)]
        struct Row {
            body: String,
        }
        let rows: Vec<Row> = self.sql.rows(
            "SELECT body FROM oauth_clients WHERE client_id = ?",
            vec![text(client_id)],
        )?;
        match rows.into_iter().next() {
            Some(row) => Ok(Some(serde_json::from_str(&row.body)?)),
            None => Ok(None),
        }
    }

    /// Keeps `code` (its digest) until its exchange; the code, from 32 random bytes.
    pub fn issue_code(&self, code: &IssuedCode, random: &[u8; 32], now: u64) -> Result<String> {
        let secret_code = secret(CODE_PREFIX, random);
        // Codes past their time are of no use, used or not: dropped as new ones come.
        self.sql.run(
            "DELETE FROM oauth_codes WHERE expires_at <= ?",
            vec![int(now)],
        )?;
        self.sql.run(
            "INSERT INTO oauth_codes (code_hash, body, expires_at) VALUES (?, ?, ?)",
            vec![
                text(&digest(&secret_code)),
                text(&serde_json::to_string(code)?),
                int(code.expires_at),
            ],
        )?;
        Ok(secret_code)
    }

    /// The tokens for `code`, exchanged by `client_id` with `verifier`, or why not. A code
    /// used a second time (stolen, replayed) gives nothing, and what it gave the first time is
    /// revoked (OAuth 2.1 §4.1.3).
    pub fn exchange_code(
        &self,
        code: &str,
        client_id: &str,
        redirect_uri: &str,
        verifier: &str,
        random: &[u8; GRANT_RANDOM_BYTES],
        now: u64,
    ) -> Result<std::result::Result<TokenResponse, OAuthError>> {
        #[derive(Deserialize)]
        struct Row {
            body: String,
            used_at: Option<u64>,
            grant_id: Option<String>,
        }
        let hash = digest(code);
        let rows: Vec<Row> = self.sql.rows(
            "SELECT body, used_at, grant_id FROM oauth_codes WHERE code_hash = ?",
            vec![text(&hash)],
        )?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(Err(OAuthError::new("invalid_grant", "no such code")));
        };
        if row.used_at.is_some() {
            if let Some(grant) = &row.grant_id {
                self.revoke(grant, now)?;
            }
            return Ok(Err(OAuthError::new(
                "invalid_grant",
                "the code was used already: the tokens it gave are revoked",
            )));
        }
        let issued: IssuedCode = serde_json::from_str(&row.body)?;
        if let Err(refused) = issued.redeem(client_id, redirect_uri, verifier, now) {
            return Ok(Err(refused));
        }
        let name = self
            .client(client_id)?
            .map_or_else(|| client_id.to_owned(), |c| c.client_name);
        let grant_id = secret(GRANT_ID_PREFIX, &random[..8]);
        let refresh = secret(REFRESH_TOKEN_PREFIX, &random[8..40]);
        self.sql.run(
            "INSERT INTO oauth_grants (id, client_id, name, resource, refresh_hash, \
             refresh_expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            vec![
                text(&grant_id),
                text(client_id),
                text(&name),
                text(&issued.request.resource),
                text(&digest(&refresh)),
                int(now + REFRESH_TOKEN_TTL_MS),
                int(now),
            ],
        )?;
        self.sql.run(
            "UPDATE oauth_codes SET used_at = ?, grant_id = ? WHERE code_hash = ?",
            vec![int(now), text(&grant_id), text(&hash)],
        )?;
        Ok(Ok(self.access(&grant_id, refresh, &random[40..], now)?))
    }

    /// A new access token and refresh token for the grant `refresh_token` belongs to (which is
    /// used up), or why not.
    pub fn refresh(
        &self,
        refresh_token: &str,
        client_id: &str,
        random: &[u8; GRANT_RANDOM_BYTES],
        now: u64,
    ) -> Result<std::result::Result<TokenResponse, OAuthError>> {
        let refresh = secret(REFRESH_TOKEN_PREFIX, &random[8..40]);
        #[derive(Deserialize)]
        struct Row {
            id: String,
        }
        let rows: Vec<Row> = self.sql.rows(
            "UPDATE oauth_grants SET refresh_hash = ?, refresh_expires_at = ? \
             WHERE refresh_hash = ? AND client_id = ? AND revoked_at IS NULL \
             AND refresh_expires_at > ? RETURNING id",
            vec![
                text(&digest(&refresh)),
                int(now + REFRESH_TOKEN_TTL_MS),
                text(&digest(refresh_token)),
                text(client_id),
                int(now),
            ],
        )?;
        let Some(grant) = rows.into_iter().next() else {
            return Ok(Err(OAuthError::new(
                "invalid_grant",
                "unknown, used, expired or revoked refresh token: authorize again",
            )));
        };
        Ok(Ok(self.access(&grant.id, refresh, &random[40..], now)?))
    }

    /// A new access token of `grant_id`, answered with its `refresh` token.
    fn access(
        &self,
        grant_id: &str,
        refresh: String,
        random: &[u8],
        now: u64,
    ) -> Result<TokenResponse> {
        let token = secret(ACCESS_TOKEN_PREFIX, random);
        self.sql.run(
            "DELETE FROM oauth_access WHERE expires_at <= ?",
            vec![int(now)],
        )?;
        self.sql.run(
            "INSERT INTO oauth_access (token_hash, grant_id, expires_at) VALUES (?, ?, ?)",
            vec![
                text(&digest(&token)),
                text(grant_id),
                int(now + ACCESS_TOKEN_TTL_MS),
            ],
        )?;
        Ok(TokenResponse {
            access_token: token,
            token_type: "Bearer".into(),
            expires_in: ACCESS_TOKEN_TTL_MS / 1000,
            refresh_token: refresh,
            scope: oauth::SCOPE.into(),
        })
    }

    /// Revokes `token` (RFC 7009): a refresh token ends its grant (and every access token of
    /// it); an access token ends alone. Anything else is nothing to revoke.
    pub fn revoke_token(&self, token: &str, now: u64) -> Result<()> {
        if token.starts_with(REFRESH_TOKEN_PREFIX) {
            self.sql.run(
                "UPDATE oauth_grants SET revoked_at = ? WHERE refresh_hash = ? \
                 AND revoked_at IS NULL",
                vec![int(now), text(&digest(token))],
            )
        } else {
            self.sql.run(
                "DELETE FROM oauth_access WHERE token_hash = ?",
                vec![text(&digest(token))],
            )
        }
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
