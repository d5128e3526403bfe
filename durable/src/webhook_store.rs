//! The SQLite of the `WebhookDispatcher`: the deployment's subscriptions (with their secrets,
//! which sign every delivery and so are kept as they are, never shown after creation or
//! rotation) and the deliveries — one row per event per subscription, with its body as
//! signed, its state and what the last attempt met.

use mimo_agent::webhooks::{AfterAttempt, DeliveryState};
use mimo_protocol::webhooks::{
    DeliveryStatus, WebhookDelivery, WebhookEventType, WebhookInfo, WebhookList,
};
use serde::Deserialize;
use worker::{Result, SqlStorage, SqlStorageValue};

use crate::sql::{int, text, Sql};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS webhooks (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    task_id TEXT,
    origin TEXT NOT NULL,
    secret TEXT NOT NULL,
    previous_secret TEXT,
    previous_until INTEGER,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    event TEXT NOT NULL,
    task_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    first_attempt_at INTEGER,
    next_attempt_at INTEGER,
    last_attempt_at INTEGER,
    response_status INTEGER,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    UNIQUE (webhook_id, message_id)
);
CREATE INDEX IF NOT EXISTS deliveries_by_status ON deliveries (status, next_attempt_at);
CREATE INDEX IF NOT EXISTS deliveries_by_webhook ON deliveries (webhook_id, id);";

/// A subscription as stored.
#[derive(Debug, Clone, Deserialize)]
pub struct Subscription {
    pub id: String,
    pub url: String,
    events: String,
    pub task_id: Option<String>,
    pub origin: String,
    pub secret: String,
    pub previous_secret: Option<String>,
    pub previous_until: Option<u64>,
    pub created_at: u64,
}

impl Subscription {
    pub fn events(&self) -> Vec<WebhookEventType> {
        self.events
            .split(',')
            .filter_map(WebhookEventType::parse)
            .collect()
    }

    /// The secrets that sign at `now`: the current one, and the previous one while it overlaps.
    pub fn signing_secrets(&self, now: u64) -> Vec<&str> {
        let mut secrets = vec![self.secret.as_str()];
        if let (Some(previous), Some(until)) = (&self.previous_secret, self.previous_until) {
            if now < until {
                secrets.push(previous);
            }
        }
        secrets
    }

    pub fn info(&self, now: u64) -> WebhookInfo {
        WebhookInfo {
            id: self.id.clone(),
            url: self.url.clone(),
            events: self.events(),
            task_id: self.task_id.clone(),
            created_at: self.created_at,
            previous_secret_until: self.previous_until.filter(|until| *until > now),
        }
    }
}

/// A new subscription's fields.
pub struct NewSubscription<'a> {
    pub id: &'a str,
    pub url: &'a str,
    pub events: &'a [WebhookEventType],
    pub task_id: Option<&'a str>,
    pub origin: &'a str,
    pub secret: &'a str,
}

/// A delivery as stored.
#[derive(Debug, Clone, Deserialize)]
pub struct DeliveryRow {
    pub id: u64,
    pub webhook_id: String,
    pub message_id: String,
    pub event: String,
    pub task_id: String,
    pub seq: u64,
    pub body: String,
    pub status: String,
    pub attempts: u32,
    pub first_attempt_at: Option<u64>,
    pub next_attempt_at: Option<u64>,
    pub last_attempt_at: Option<u64>,
    pub response_status: Option<u16>,
    pub last_error: Option<String>,
    pub created_at: u64,
}

impl DeliveryRow {
    pub fn state(&self) -> DeliveryState {
        DeliveryState {
            id: self.id,
            webhook_id: self.webhook_id.clone(),
            task_id: self.task_id.clone(),
            seq: self.seq,
            attempts: self.attempts,
            first_attempt_at: self.first_attempt_at,
            next_attempt_at: self.next_attempt_at.unwrap_or(0),
        }
    }

    fn wire(self) -> Option<WebhookDelivery> {
        Some(WebhookDelivery {
            id: self.id,
            webhook_id: self.webhook_id,
            message_id: self.message_id,
            kind: WebhookEventType::parse(&self.event)?,
            task_id: self.task_id,
            seq: self.seq,
            status: DeliveryStatus::parse(&self.status)?,
            attempts: self.attempts,
            next_attempt_at: self.next_attempt_at,
            last_attempt_at: self.last_attempt_at,
            response_status: self.response_status,
            last_error: self.last_error,
            created_at: self.created_at,
        })
    }
}

/// How long a delivery that ended (delivered or given up) stays in the log.
pub const DELIVERY_LOG_MS: u64 = 7 * 24 * 60 * 60 * 1000;

pub struct WebhookStore<S = SqlStorage> {
    sql: S,
}

fn opt_int(n: Option<u64>) -> SqlStorageValue {
    n.map_or(SqlStorageValue::Null, int)
}

fn opt_text(s: Option<&str>) -> SqlStorageValue {
    s.map_or(SqlStorageValue::Null, text)
}

impl<S: Sql> WebhookStore<S> {
    pub fn open(sql: S) -> Result<Self> {
        sql.run(SCHEMA, vec![])?;
        Ok(Self { sql })
    }

    pub fn subscriptions(&self) -> Result<Vec<Subscription>> {
        self.sql
            .rows("SELECT * FROM webhooks ORDER BY created_at, id", vec![])
    }

    pub fn subscription(&self, id: &str) -> Result<Option<Subscription>> {
        let rows: Vec<Subscription> = self
            .sql
            .rows("SELECT * FROM webhooks WHERE id = ?", vec![text(id)])?;
        Ok(rows.into_iter().next())
    }

    pub fn list(&self, now: u64) -> Result<WebhookList> {
        Ok(WebhookList {
            webhooks: self.subscriptions()?.iter().map(|s| s.info(now)).collect(),
        })
    }

    pub fn create(&self, new: &NewSubscription, now: u64) -> Result<()> {
        let events: Vec<&str> = new.events.iter().map(|e| e.as_str()).collect();
        self.sql.run(
            "INSERT INTO webhooks (id, url, events, task_id, origin, secret, created_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?)",
            vec![
                text(new.id),
                text(new.url),
                text(&events.join(",")),
                opt_text(new.task_id),
                text(new.origin),
                text(new.secret),
                int(now),
            ],
        )
    }

    /// Deletes subscription `id` and its deliveries; whether there was one.
    pub fn delete(&self, id: &str) -> Result<bool> {
        let gone: Vec<serde_json::Value> = self.sql.rows(
            "DELETE FROM webhooks WHERE id = ? RETURNING id",
            vec![text(id)],
        )?;
        self.sql.run(
            "DELETE FROM deliveries WHERE webhook_id = ?",
            vec![text(id)],
        )?;
        Ok(!gone.is_empty())
    }

    /// A new secret for `id`; the current one keeps signing until `previous_until`.
    pub fn rotate(&self, id: &str, secret: &str, previous_until: u64) -> Result<bool> {
        let rotated: Vec<serde_json::Value> = self.sql.rows(
            "UPDATE webhooks SET previous_secret = secret, previous_until = ?, secret = ? \
             WHERE id = ? RETURNING id",
            vec![int(previous_until), text(secret), text(id)],
        )?;
        Ok(!rotated.is_empty())
    }

    /// A delivery of an event to a subscription, due at `now`; none if it is there already
    /// (the task reported the event again). Whether it is new.
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue(
        &self,
        webhook_id: &str,
        message_id: &str,
        event: WebhookEventType,
        task_id: &str,
        seq: u64,
        body: &str,
        now: u64,
    ) -> Result<bool> {
        let added: Vec<serde_json::Value> = self.sql.rows(
            "INSERT INTO deliveries (webhook_id, message_id, event, task_id, seq, body, status, \
             next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?) \
             ON CONFLICT (webhook_id, message_id) DO NOTHING RETURNING id",
            vec![
                text(webhook_id),
                text(message_id),
                text(event.as_str()),
                text(task_id),
                int(seq),
                text(body),
                int(now),
                int(now),
            ],
        )?;
        Ok(!added.is_empty())
    }

    pub fn pending(&self) -> Result<Vec<DeliveryRow>> {
        self.sql.rows(
            "SELECT * FROM deliveries WHERE status = 'pending' ORDER BY id",
            vec![],
        )
    }

    /// Records an attempt's outcome.
    pub fn attempted(&self, id: u64, after: &AfterAttempt, now: u64) -> Result<()> {
        self.sql.run(
            "UPDATE deliveries SET status = ?, attempts = ?, first_attempt_at = ?, \
             next_attempt_at = ?, last_attempt_at = ?, response_status = ?, last_error = ? \
             WHERE id = ?",
            vec![
                text(after.status.as_str()),
                int(u64::from(after.attempts)),
                int(after.first_attempt_at),
                opt_int(after.next_attempt_at),
                int(now),
                opt_int(after.response_status.map(u64::from)),
                opt_text(after.error.as_deref()),
                int(id),
            ],
        )
    }

    /// "Send again": the delivery is pending once more, due now, with a day of attempts
    /// ahead; its id and body stay (the receiver dedupes by the id). Whether there was one.
    pub fn resend(&self, id: u64, now: u64) -> Result<bool> {
        let again: Vec<serde_json::Value> = self.sql.rows(
            "UPDATE deliveries SET status = 'pending', next_attempt_at = ?, \
             first_attempt_at = NULL WHERE id = ? RETURNING id",
            vec![int(now), int(id)],
        )?;
        Ok(!again.is_empty())
    }

    /// The log: the newest deliveries first, of one subscription or all.
    pub fn log(&self, webhook_id: Option<&str>, limit: u32) -> Result<Vec<WebhookDelivery>> {
        let rows: Vec<DeliveryRow> = match webhook_id {
            Some(id) => self.sql.rows(
                "SELECT * FROM deliveries WHERE webhook_id = ? ORDER BY id DESC LIMIT ?",
                vec![text(id), int(u64::from(limit))],
            )?,
            None => self.sql.rows(
                "SELECT * FROM deliveries ORDER BY id DESC LIMIT ?",
                vec![int(u64::from(limit))],
            )?,
        };
        Ok(rows.into_iter().filter_map(DeliveryRow::wire).collect())
    }

    /// Forgets deliveries that ended more than [`DELIVERY_LOG_MS`] ago.
    pub fn prune(&self, now: u64) -> Result<()> {
        self.sql.run(
            "DELETE FROM deliveries WHERE status != 'pending' AND last_attempt_at < ?",
            vec![int(now.saturating_sub(DELIVERY_LOG_MS))],
        )
    }
}
