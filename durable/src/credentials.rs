//! The registry's side of authentication: pairing codes, extension credentials, WebSocket
//! tickets and failed-authentication counts, in its SQLite (digests only). The rules are
//! `mimo_agent::credentials`; the worker calls these routes before it lets a request in.

use mimo_agent::credentials::{
    digest, extension_token, new_client_id, normalize_pairing_code, pairing_code, secret,
    FailureLimit, Failures, Principal, PAIRING_CODE_TTL_MS, TICKET_PREFIX, TICKET_TTL_MS,
};
use mimo_protocol::extension::{PairRequest, PairResponse, PairingCode, WsTicket};
use mimo_protocol::{ClientId, ErrorCode, ErrorObject};
use serde::Deserialize;
use worker::{Result, SqlStorage};

use crate::sql::{add_column, int, text, Sql};

use crate::clients::AuthFailure;
use crate::error::Reply;
use crate::http::{now_ms, random_bytes};

pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS pairing_codes (
    code_hash TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS credentials (
    token_hash TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE INDEX IF NOT EXISTS credentials_by_client ON credentials (client_id);
CREATE TABLE IF NOT EXISTS tickets (
    ticket_hash TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS auth_failures (
    client TEXT PRIMARY KEY,
    window_start INTEGER NOT NULL,
    count INTEGER NOT NULL
);";

fn refused(message: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::Unauthorized, message)
}

/// The credential tables of the registry's SQLite.
pub struct Credentials<S = SqlStorage> {
    sql: S,
}

impl<S: Sql> Credentials<S> {
    pub fn open(sql: S) -> Result<Self> {
        sql.run(SCHEMA, vec![])?;
        // Added with token generations: a ticket stored before has none, and is refused.
        add_column(&sql, "tickets", "generation", "TEXT NOT NULL DEFAULT ''")?;
        Ok(Self { sql })
    }

    /// A new pairing code, valid for ten minutes and once. Expired ones are swept here.
    pub fn new_pairing_code(&self) -> Result<PairingCode> {
        let now = now_ms();
        self.sql.run(
            "DELETE FROM pairing_codes WHERE expires_at <= ?",
            vec![int(now)],
        )?;
        let code = pairing_code(&random_bytes::<8>()?);
        let expires_at = now + PAIRING_CODE_TTL_MS;
        self.sql.run(
            "INSERT INTO pairing_codes (code_hash, expires_at) VALUES (?, ?)",
            vec![text(&digest(&code)), int(expires_at)],
        )?;
        Ok(PairingCode { code, expires_at })
    }

    /// Trades a pairing code for a credential and the client id the server gives it. An
    /// extension pairing again names the credential it held (`replaces`, revoked or not): it
    /// keeps its id and that credential is revoked — one extension, one credential. Nobody
    /// names an id, so no one can take another extension's id or revoke its credential.
    pub fn pair(&self, request: &PairRequest) -> Reply<PairResponse> {
        let wrong = || {
            refused(
                "the pairing code is wrong, expired or already used; show a new one in the web app",
            )
        };
        let Some(code) = normalize_pairing_code(&request.code) else {
            return Err(wrong().into());
        };
        let now = now_ms();
        // Used once: deleted as it is taken.
        let taken = self.sql.rows::<serde_json::Value>(
            "DELETE FROM pairing_codes WHERE code_hash = ? AND expires_at > ? RETURNING code_hash",
            vec![text(&digest(&code)), int(now)],
        )?;
        if taken.is_empty() {
            return Err(wrong().into());
        }
        let kept = match &request.replaces {
            Some(old) => self.issued_to(old)?,
            None => None,
        };
        let client_id = match kept {
            Some(client_id) => {
                self.revoke(client_id.as_str())?;
                client_id
            }
            None => new_client_id(&random_bytes::<16>()?),
        };
        let token = extension_token(&client_id, &random_bytes::<32>()?);
        self.sql.run(
            "INSERT INTO credentials (token_hash, client_id, created_at) VALUES (?, ?, ?)",
            vec![text(&digest(&token)), text(client_id.as_str()), int(now)],
        )?;
        Ok(PairResponse { client_id, token })
    }

    /// The client an extension token belongs to, if it is valid.
    pub fn client_of(&self, token: &str) -> Result<Option<ClientId>> {
        self.issued(token, true)
    }

    /// The client a credential was issued to, revoked or not.
    fn issued_to(&self, token: &str) -> Result<Option<ClientId>> {
        self.issued(token, false)
    }

    fn issued(&self, token: &str, live_only: bool) -> Result<Option<ClientId>> {
        #[derive(Deserialize)]
        struct Row {
            client_id: ClientId,
        }
        let query = if live_only {
            "SELECT client_id FROM credentials WHERE token_hash = ? AND revoked_at IS NULL"
        } else {
            "SELECT client_id FROM credentials WHERE token_hash = ?"
        };
        let rows: Vec<Row> = self.sql.rows(query, vec![text(&digest(token))])?;
        Ok(rows.into_iter().next().map(|r| r.client_id))
    }

    /// The digest of the client's credential that stands, if one does (the newest: pairing again
    /// revokes the one before).
    pub fn standing_digest(&self, client_id: &str) -> Result<Option<String>> {
        #[derive(Deserialize)]
        struct Row {
            token_hash: String,
        }
        let rows: Vec<Row> = self.sql.rows(
            "SELECT token_hash FROM credentials WHERE client_id = ? AND revoked_at IS NULL \
             ORDER BY created_at DESC LIMIT 1",
            vec![text(client_id)],
        )?;
        Ok(rows.into_iter().next().map(|r| r.token_hash))
    }

    /// Whether the client holds a credential that is not revoked.
    pub fn is_paired(&self, client_id: &str) -> Result<bool> {
        Ok(self.standing_digest(client_id)?.is_some())
    }

    /// Revokes every credential of the client; whether there was one.
    pub fn revoke(&self, client_id: &str) -> Result<bool> {
        let revoked = self
            .sql
            .rows::<serde_json::Value>(
                "UPDATE credentials SET revoked_at = ? WHERE client_id = ? AND revoked_at IS NULL RETURNING client_id",
                vec![int(now_ms()), text(client_id)],
            )?;
        Ok(!revoked.is_empty())
    }

    /// A single-use ticket for one socket of `principal`, bought under the deployment token's
    /// `generation` ([`crate::http::token_generation`]).
    pub fn new_ticket(&self, principal: &Principal, generation: &str) -> Result<WsTicket> {
        let now = now_ms();
        self.sql
            .run("DELETE FROM tickets WHERE expires_at <= ?", vec![int(now)])?;
        let ticket = secret(TICKET_PREFIX, &random_bytes::<24>()?);
        let expires_at = now + TICKET_TTL_MS;
        self.sql.run(
            "INSERT INTO tickets (ticket_hash, principal, expires_at, generation) VALUES (?, ?, ?, ?)",
            vec![
                text(&digest(&ticket)),
                text(&principal.encode()),
                int(expires_at),
                text(generation),
            ],
        )?;
        Ok(WsTicket { ticket, expires_at })
    }

    /// Takes a ticket (it opens one socket only): whose it was, if it is valid. A ticket bought
    /// under another deployment token than today's `generation` is void, and an extension's
    /// ticket once its credential is revoked.
    pub fn redeem(&self, ticket: &str, generation: &str) -> Result<Option<Principal>> {
        #[derive(Deserialize)]
        struct Row {
            principal: String,
            generation: String,
        }
        let rows: Vec<Row> = self.sql.rows(
            "DELETE FROM tickets WHERE ticket_hash = ? AND expires_at > ? RETURNING principal, generation",
            vec![text(&digest(ticket)), int(now_ms())],
        )?;
        let Some(principal) = rows
            .into_iter()
            .next()
            .filter(|r| r.generation == generation)
            .and_then(|r| Principal::decode(&r.principal))
        else {
            return Ok(None);
        };
        match &principal {
            Principal::Extension { client_id } if !self.is_paired(client_id.as_str())? => Ok(None),
            _ => Ok(Some(principal)),
        }
    }

    /// Counts a failed authentication of `client`; until when it is refused, if it is.
    pub fn failed(&self, failure: &AuthFailure) -> Result<Option<u64>> {
        let limit = failure.limit();
        let now = now_ms();
        let before = self.failures(&failure.client, limit, now)?;
        let (now_failures, blocked_until) = limit.fail(before, now);
        self.sql.run(
            "INSERT OR REPLACE INTO auth_failures (client, window_start, count) VALUES (?, ?, ?)",
            vec![
                text(&failure.client),
                int(now_failures.window_start),
                int(now_failures.count.into()),
            ],
        )?;
        Ok(blocked_until)
    }

    /// Until when `client` is refused, if it is, without counting anything: asked when a client
    /// presents a right credential at an isolate that has not seen it fail.
    pub fn blocked_until(&self, failure: &AuthFailure) -> Result<Option<u64>> {
        let limit = failure.limit();
        let now = now_ms();
        Ok(self
            .failures(&failure.client, limit, now)?
            .and_then(|failures| limit.blocked_until(failures, now)))
    }

    /// The client's failures in its current window. Windows that ended count for nothing:
    /// swept here, so the table holds only live clients.
    fn failures(&self, client: &str, limit: FailureLimit, now: u64) -> Result<Option<Failures>> {
        #[derive(Deserialize)]
        struct Row {
            window_start: u64,
            count: u32,
        }
        self.sql.run(
            "DELETE FROM auth_failures WHERE window_start <= ?",
            vec![int(now.saturating_sub(limit.window_ms))],
        )?;
        Ok(self
            .sql
            .rows::<Row>(
                "SELECT window_start, count FROM auth_failures WHERE client = ?",
                vec![text(client)],
            )?
            .into_iter()
            .next()
            .map(|r| Failures {
                window_start: r.window_start,
                count: r.count,
            }))
    }
}
