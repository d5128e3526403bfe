//! Webhooks' rules, without I/O (the `WebhookDispatcher` object in `mimo-durable` carries them
//! out): which of a task's history events an integrator hears ([`EventMapper`]), the body and
//! its Standard Webhooks signature ([`payload`], [`signature_header`]), which receivers may be
//! called ([`HostPolicy`]), when a failed delivery is tried again and when it is given up
//! ([`RetryPolicy`]), and which deliveries are due — in order per task and subscription, a
//! later event never before an earlier one is delivered or given up ([`due`]).

use std::net::{Ipv4Addr, Ipv6Addr};

use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use mimo_protocol::time::UtcDateTime;
use mimo_protocol::webhooks::{
    DeliveryStatus, WebhookEvent, WebhookEventData, WebhookEventType, WebhookLinks, WebhookPayload,
    WebhookReport,
};
use mimo_protocol::{
    ErrorCode, ErrorObject, EventEnvelope, FrontendEvent, OutputStatus, TaskStatus, ToolPhase,
};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use url::{Host, Url};

/// A secret's prefix (Standard Webhooks); the rest is the key, base64.
pub const SECRET_PREFIX: &str = "whsec_";

/// How long the secret before a rotation still signs, beside the new one.
pub const ROTATION_OVERLAP_MS: u64 = 24 * 60 * 60 * 1000;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// A new secret from 32 random bytes.
pub fn new_secret(random: &[u8; 32]) -> String {
    format!("{SECRET_PREFIX}{}", B64.encode(random))
}

/// One signature, `v1,<base64>`: HMAC-SHA256 with the secret's key over `id.timestamp.body`.
/// `None` for a secret that is not `whsec_` and base64.
pub fn signature(secret: &str, message_id: &str, timestamp_s: u64, body: &str) -> Option<String> {
    let key = B64.decode(secret.strip_prefix(SECRET_PREFIX)?).ok()?;
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&key).ok()?;
    mac.update(format!("{message_id}.{timestamp_s}.").as_bytes());
    mac.update(body.as_bytes());
    Some(format!("v1,{}", B64.encode(mac.finalize().into_bytes())))
}

/// The `webhook-signature` header: a signature by each secret that signs now (the current one,
/// and the one before a rotation while it overlaps), space separated.
pub fn signature_header(
    secrets: &[&str],
    message_id: &str,
    timestamp_s: u64,
    body: &str,
) -> String {
    secrets
        .iter()
        .filter_map(|s| signature(s, message_id, timestamp_s, body))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `webhook-id` of a task's event: the same for every attempt and every "send again".
pub fn message_id(task_id: &str, seq: u64) -> String {
    format!("msg_{}_{seq}", task_id.replace('-', ""))
}

/// What the coordinator hands over for `event`: its routing and its body without links.
pub fn report(event: &WebhookEvent) -> WebhookReport {
    let payload = WebhookPayload {
        kind: event.kind,
        timestamp: rfc3339(event.data.at),
        data: event.data.clone(),
    };
    WebhookReport {
        kind: event.kind,
        task_id: event.data.task_id.clone(),
        seq: event.data.seq,
        screenshot_artifact_id: event.data.screenshot_artifact_id.clone(),
        body: serde_json::to_string(&payload).expect("a payload serializes"),
    }
}

/// The body delivered for `report`, its links under the deployment's `origin`
/// (`https://mimo.example.com`) added as the last field of `data`. The report's body is a
/// payload as [`report`] writes it: an object whose last field is `data`, an object itself, so
/// it ends in `}}` (checked: anything else is delivered as it is).
pub fn body(report: &WebhookReport, origin: &str) -> String {
    let task = &report.task_id;
    let api = format!("{origin}/api/task/{task}");
    let links = WebhookLinks {
        task: format!("{origin}/#/task/{task}"),
        audit: format!("{api}/audit.jsonl"),
        evidence: format!("{api}/export.zip"),
        screenshot: report
            .screenshot_artifact_id
            .as_ref()
            .map(|id| format!("{origin}/api/artifacts/{id}")),
    };
    match (
        report.body.strip_suffix("}}"),
        serde_json::to_string(&links),
    ) {
        (Some(open), Ok(links)) => format!("{open},\"links\":{links}}}}}"),
        _ => report.body.clone(),
    }
}

/// `ms` since the Unix epoch as RFC 3339 in UTC, to the millisecond.
pub fn rfc3339(ms: u64) -> String {
    UtcDateTime::from_unix_ms(ms).rfc3339_millis()
}

/// Follows a task's history and says which events are webhook events. Its state is kept with
/// the task (how far it read, the status it last saw), so it goes on after a restart.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventMapper {
    /// The last history event read.
    pub seq: u64,
    status: Option<TaskStatus>,
    /// The screenshot of the page last observed: the one the next step is chosen on.
    screenshot: Option<String>,
    /// The last turn's error, for the failure that follows it.
    error: Option<ErrorObject>,
    /// The last turn's answer, and whether it did all it was asked, for the completion that
    /// follows it.
    #[serde(default)]
    answer: Option<(serde_json::Value, bool)>,
    /// Whether the task's creation was reported (or is not to be: it was made before
    /// webhooks). Its first status is its creation — `created`, or `completed` for a fork
    /// that ends with an answer.
    #[serde(default = "already")]
    created: bool,
}

/// A cursor stored before `created` existed was past the task's creation.
fn already() -> bool {
    true
}

impl EventMapper {
    /// A mapper that reports only what follows event `seq` (a task's history from before
    /// webhooks is not reported, its creation included).
    pub fn after(seq: u64) -> Self {
        Self {
            seq,
            created: true,
            ..Self::default()
        }
    }

    /// Reads `envelope` (the next of the task's history): the webhook event it is, if any.
    pub fn read(&mut self, envelope: &EventEnvelope) -> Option<WebhookEvent> {
        let seq = envelope.seq?;
        if seq <= self.seq {
            return None;
        }
        self.seq = seq;
        let mut data = WebhookEventData {
            task_id: envelope.task_id.clone(),
            seq,
            at: envelope.at,
            status: None,
            step: None,
            action: None,
            ok: None,
            summary: None,
            reason: None,
            by: None,
            error: None,
            output: None,
            screenshot_artifact_id: None,
            links: None,
        };
        let kind = match &envelope.event {
            FrontendEvent::TaskStatus { status, .. } => {
                let status = *status;
                let before = self.status.replace(status);
                if before == Some(status) {
                    return None;
                }
                data.status = Some(status);
                let held = |s: Option<TaskStatus>| {
                    matches!(s, Some(TaskStatus::Paused | TaskStatus::Takeover))
                };
                if !std::mem::replace(&mut self.created, true) {
                    return Some(WebhookEvent {
                        kind: WebhookEventType::TaskCreated,
                        data,
                    });
                }
                match status {
                    TaskStatus::Created => WebhookEventType::TaskCreated,
                    TaskStatus::Completed => {
                        if let Some((output, ok)) = self.answer.take() {
                            data.output = Some(output);
                            data.ok = Some(ok);
                        }
                        WebhookEventType::TaskCompleted
                    }
                    TaskStatus::Canceled => WebhookEventType::TaskCanceled,
                    TaskStatus::Error => {
                        data.error = self.error.take();
                        WebhookEventType::TaskFailed
                    }
                    _ if held(Some(status)) => {
                        if held(before) {
                            return None;
                        }
                        WebhookEventType::TaskPaused
                    }
                    _ if held(before) => WebhookEventType::TaskResumed,
                    _ => {
                        self.error = None;
                        return None;
                    }
                }
            }
            FrontendEvent::StructuredOutput {
                status,
                output,
                error,
                ..
            } => {
                self.error.clone_from(error);
                self.answer = output
                    .clone()
                    .map(|output| (output, *status == OutputStatus::Ok));
                return None;
            }
            FrontendEvent::PageObserved {
                screenshot_artifact_id,
                ..
            } => {
                self.screenshot.clone_from(screenshot_artifact_id);
                return None;
            }
            FrontendEvent::ToolUsed {
                step,
                phase: ToolPhase::End,
                action,
                result,
                summary,
                ..
            } => {
                data.step = Some(*step);
                data.action = Some(action.name().to_owned());
                data.ok = result.as_ref().map(|r| r.ok);
                data.error = result.as_ref().and_then(|r| r.error.clone());
                data.summary.clone_from(summary);
                data.screenshot_artifact_id.clone_from(&self.screenshot);
                WebhookEventType::TaskStepFinished
            }
            FrontendEvent::ConfirmationRequested(request) => {
                data.step = Some(request.step);
                data.action = Some(request.action.name().to_owned());
                data.reason = Some(request.reason.clone());
                data.screenshot_artifact_id
                    .clone_from(&request.screenshot_artifact_id);
                WebhookEventType::TaskConfirmationRequested
            }
            FrontendEvent::ConfirmationAnswered {
                step,
                approved,
                by,
                reason,
            } => {
                data.step = Some(*step);
                data.ok = Some(*approved);
                data.by = Some(by.clone());
                data.reason.clone_from(reason);
                WebhookEventType::TaskConfirmationAnswered
            }
            _ => return None,
        };
        Some(WebhookEvent { kind, data })
    }
}

/// Which receivers the deployment may call: hosts on its list (`WEBHOOK_ALLOWED_HOSTS`: names,
/// `*.example.com` for the names under one, `*` for any public host), over `https`, and never
/// an address of a private, loopback, link-local or otherwise special range — except, for local
/// development and tests only, `http(s)://127.0.0.1` and `[::1]` when
/// `WEBHOOK_ALLOW_LOOPBACK` is `true`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostPolicy {
    hosts: Vec<String>,
    loopback: bool,
}

impl HostPolicy {
    pub fn new(allowed_hosts: Option<&str>, allow_loopback: Option<&str>) -> Self {
        Self {
            hosts: allowed_hosts
                .unwrap_or_default()
                .split([',', ' ', '\n'])
                .map(|h| h.trim().trim_end_matches('.').to_ascii_lowercase())
                .filter(|h| !h.is_empty())
                .collect(),
            loopback: allow_loopback.is_some_and(|v| matches!(v.trim(), "true" | "1")),
        }
    }

    /// Whether the deployment may call no receiver at all (no host listed, no loopback): then no
    /// webhook can exist, and tasks report their events to no one.
    pub fn calls_none(&self) -> bool {
        self.hosts.is_empty() && !self.loopback
    }

    /// The receiver `url` if the deployment may call it; otherwise `PERMISSION_DENIED` (or
    /// `SCHEMA_VALIDATION_FAILED` for what is no URL) saying why.
    pub fn check(&self, raw: &str) -> Result<Url, ErrorObject> {
        let refused = |why: String| {
            Err(ErrorObject::new(
                ErrorCode::PermissionDenied,
                format!("webhook receiver refused: {why}"),
            ))
        };
        let url = Url::parse(raw.trim()).map_err(|e| {
            ErrorObject::new(
                ErrorCode::SchemaValidationFailed,
                format!("the webhook URL is not a URL: {e}"),
            )
        })?;
        if !url.username().is_empty() || url.password().is_some() {
            return refused("a receiver URL carries no credentials".into());
        }
        let loopback = match url.host() {
            Some(Host::Ipv4(ip)) => ip == Ipv4Addr::LOCALHOST,
            Some(Host::Ipv6(ip)) => ip == Ipv6Addr::LOCALHOST,
            _ => false,
        };
        if loopback && self.loopback && matches!(url.scheme(), "http" | "https") {
            return Ok(url);
        }
        if url.scheme() != "https" {
            return refused(format!("{} is not https", url.scheme()));
        }
        let allowed = match url.host() {
            None => return refused("no host".into()),
            Some(Host::Ipv4(ip)) => {
                if special_v4(ip) {
                    return refused(format!("{ip} is a private or special address"));
                }
                self.listed(&ip.to_string())
            }
            Some(Host::Ipv6(ip)) => {
                let special = ip
                    .to_ipv4_mapped()
                    .map_or_else(|| special_v6(ip), special_v4);
                if special {
                    return refused(format!("[{ip}] is a private or special address"));
                }
                self.listed(&format!("[{ip}]"))
            }
            Some(Host::Domain(name)) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                let local = ["localhost", "local", "internal", "localdomain", "home.arpa"];
                if !name.contains('.')
                    || local
                        .iter()
                        .any(|l| name == *l || name.ends_with(&format!(".{l}")))
                {
                    return refused(format!("{name} is a local name"));
                }
                self.listed(&name)
            }
        };
        if !allowed {
            return refused(format!(
                "{} is not in this deployment's WEBHOOK_ALLOWED_HOSTS",
                url.host_str().unwrap_or_default()
            ));
        }
        Ok(url)
    }

    fn listed(&self, host: &str) -> bool {
        self.hosts.iter().any(|pattern| {
            pattern == "*"
                || pattern == host
                || pattern
                    .strip_prefix("*.")
                    .is_some_and(|domain| host.ends_with(&format!(".{domain}")))
        })
    }
}

/// Private, loopback, link-local, shared, documentation, benchmarking, multicast and reserved
/// IPv4 ranges: nothing a public receiver has.
fn special_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        || a >= 240
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (18..20).contains(&b))
}

fn special_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || first == 0x2001 && ip.segments()[1] == 0x0db8
        || ip.to_ipv4().is_some()
}

/// When deliveries are tried again: `base_ms`, doubled after each failure up to `max_delay_ms`,
/// for `give_up_after_ms` from the first attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub base_ms: u64,
    pub max_delay_ms: u64,
    pub give_up_after_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            base_ms: 10_000,
            max_delay_ms: 60 * 60 * 1000,
            give_up_after_ms: 24 * 60 * 60 * 1000,
        }
    }
}

impl RetryPolicy {
    /// The policy with `WEBHOOK_RETRY_BASE_MS` and `WEBHOOK_RETRY_FOR_MS` where set (tests
    /// make retries fast with them).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let number = |name| lookup(name).and_then(|v| v.trim().parse::<u64>().ok());
        let defaults = Self::default();
        Self {
            base_ms: number("WEBHOOK_RETRY_BASE_MS").map_or(defaults.base_ms, |n| n.max(10)),
            give_up_after_ms: number("WEBHOOK_RETRY_FOR_MS").unwrap_or(defaults.give_up_after_ms),
            ..defaults
        }
    }

    /// When to try again after `attempts` failed attempts, the first at `first_at`; `None`
    /// to give up.
    pub fn next_attempt(&self, attempts: u32, first_at: u64, now: u64) -> Option<u64> {
        let doublings = attempts.saturating_sub(1).min(40);
        let delay = self
            .base_ms
            .saturating_mul(1u64 << doublings)
            .min(self.max_delay_ms);
        let at = now.saturating_add(delay);
        (at <= first_at.saturating_add(self.give_up_after_ms)).then_some(at)
    }
}

/// What a delivery's row holds of its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryState {
    pub id: u64,
    pub webhook_id: String,
    pub task_id: String,
    pub seq: u64,
    pub attempts: u32,
    pub first_attempt_at: Option<u64>,
    pub next_attempt_at: u64,
}

/// Of the pending deliveries (in the order they were queued), those to send now, and when the
/// next one will be due. Only the
/// earliest pending event of each task for each subscription may be sent: a later one waits
/// until it is delivered or given up.
pub fn due(pending: &[DeliveryState], now: u64) -> (Vec<u64>, Option<u64>) {
    let mut heads: Vec<&DeliveryState> = Vec::new();
    for d in pending {
        match heads
            .iter_mut()
            .find(|h| h.webhook_id == d.webhook_id && h.task_id == d.task_id)
        {
            Some(head) if d.seq < head.seq => *head = d,
            Some(_) => {}
            None => heads.push(d),
        }
    }
    let send = heads
        .iter()
        .filter(|h| h.next_attempt_at <= now)
        .map(|h| h.id)
        .collect();
    let next = heads
        .iter()
        .map(|h| h.next_attempt_at)
        .filter(|at| *at > now)
        .min();
    (send, next)
}

/// How an attempt went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// The receiver answered with this HTTP status.
    Answered(u16),
    /// No answer: the connection failed or timed out.
    NoAnswer(String),
    /// The receiver is no longer allowed: given up at once.
    Refused(String),
}

/// A delivery after an attempt: its status, the next attempt if any, the status and error to
/// show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AfterAttempt {
    pub status: DeliveryStatus,
    pub attempts: u32,
    pub first_attempt_at: u64,
    pub next_attempt_at: Option<u64>,
    pub response_status: Option<u16>,
    pub error: Option<String>,
}

/// Where `delivery` stands after `attempt` made at `now`: delivered on a 2xx (a redirect is
/// not followed: it is a failure), otherwise tried again on the schedule, or given up.
pub fn after_attempt(
    delivery: &DeliveryState,
    attempt: Attempt,
    now: u64,
    policy: &RetryPolicy,
) -> AfterAttempt {
    let attempts = delivery.attempts.saturating_add(1);
    let first_attempt_at = delivery.first_attempt_at.unwrap_or(now);
    let (response_status, error, retry) = match attempt {
        Attempt::Answered(status) if (200..300).contains(&status) => (Some(status), None, false),
        Attempt::Answered(status) => (
            Some(status),
            Some(format!("the receiver answered HTTP {status}")),
            true,
        ),
        Attempt::NoAnswer(why) => (None, Some(why), true),
        Attempt::Refused(why) => (None, Some(why), false),
    };
    let next_attempt_at = if retry {
        policy.next_attempt(attempts, first_attempt_at, now)
    } else {
        None
    };
    let status = match (&error, next_attempt_at) {
        (None, _) => DeliveryStatus::Delivered,
        (Some(_), Some(_)) => DeliveryStatus::Pending,
        (Some(_), None) => DeliveryStatus::Failed,
    };
    AfterAttempt {
        status,
        attempts,
        first_attempt_at,
        next_attempt_at,
        response_status,
        error,
    }
}

/// Whether a subscription (to `events`, every one when empty; to `task`, every task when none)
/// hears `event`.
pub fn subscribed(events: &[WebhookEventType], task: Option<&str>, event: &WebhookReport) -> bool {
    (events.is_empty() || events.contains(&event.kind)) && task.is_none_or(|t| t == event.task_id)
}

#[cfg(test)]
mod tests;
