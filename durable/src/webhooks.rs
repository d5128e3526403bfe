//! `WebhookDispatcher`: one object for the deployment, keeping its webhook subscriptions and
//! delivering the events the tasks' coordinators report to them. A report only queues (one
//! delivery per event and subscription that hears it, deduplicated by the event's
//! `webhook-id`) and sets the alarm; the alarm sends what is due — the earliest pending event
//! of each task for each subscription, so a task's events arrive in order — and sets itself
//! for the next attempt. The rules are `mimo_agent::webhooks`; here is the I/O.

use std::time::Duration;

use mimo_agent::webhooks::{
    after_attempt, body, due, message_id, new_secret, signature_header, subscribed, Attempt,
    HostPolicy, RetryPolicy, ROTATION_OVERLAP_MS,
};
use mimo_protocol::webhooks::{
    WebhookCreate, WebhookDeliveryList, WebhookEvents, WebhookSecret, MAX_WEBHOOKS,
    MAX_WEBHOOK_URL_CHARS, WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER,
};
use mimo_protocol::{ErrorCode, ErrorObject};
use worker::*;

use crate::alarm;
use crate::deadline::with_deadline;
use crate::http::{error_response, now_ms, random_bytes, read_body};
use crate::webhook_store::{NewSubscription, WebhookStore};

/// How long a receiver may take to answer one delivery.
const RECEIVER_ANSWER_MS: u64 = 10_000;

/// The most deliveries the log answers with.
const LOG_LIMIT: u32 = 200;

#[cfg_attr(feature = "objects", durable_object)]
pub struct WebhookDispatcher {
    state: State,
    env: Env,
    store: WebhookStore,
}

impl DurableObject for WebhookDispatcher {
    fn new(state: State, env: Env) -> Self {
        let store = WebhookStore::open(state.storage().sql()).expect("webhook schema");
        Self { state, env, store }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let url = req.url()?;
        let param = |name: &str| {
            url.query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        let id = param("id").unwrap_or_default();
        let not_found =
            || error_response(&ErrorObject::new(ErrorCode::NotFound, "no such webhook"));
        let now = now_ms();
        match (req.method(), url.path()) {
            // The deployment's origin, for the links, as the worker was reached.
            (Method::Post, "/create") => match read_body::<WebhookCreate>(&mut req).await {
                Ok(create) => self.create(&create, &param("origin").unwrap_or_default(), now),
                Err(error) => error_response(&error),
            },
            (Method::Get, "/list") => Response::from_json(&self.store.list(now)?),
            (Method::Post, "/delete") => {
                if self.store.delete(&id)? {
                    Response::empty()
                } else {
                    not_found()
                }
            }
            (Method::Post, "/rotate") => {
                let secret = new_secret(&random_bytes()?);
                if !self.store.rotate(&id, &secret, now + ROTATION_OVERLAP_MS)? {
                    return not_found();
                }
                let Some(subscription) = self.store.subscription(&id)? else {
                    return not_found();
                };
                Response::from_json(&WebhookSecret {
                    webhook: subscription.info(now),
                    secret,
                })
            }
            (Method::Get, "/deliveries") => Response::from_json(&WebhookDeliveryList {
                deliveries: self.store.log(
                    param("webhook").as_deref().filter(|w| !w.is_empty()),
                    LOG_LIMIT,
                )?,
            }),
            (Method::Post, "/resend") => {
                let found = id
                    .parse()
                    .ok()
                    .map(|n| self.store.resend(n, now))
                    .transpose()?;
                if found != Some(true) {
                    return error_response(&ErrorObject::new(
                        ErrorCode::NotFound,
                        "no such delivery",
                    ));
                }
                self.wake_at(now).await?;
                Response::empty()
            }
            (Method::Post, "/events") => match read_body::<WebhookEvents>(&mut req).await {
                Ok(events) => {
                    if self.enqueue(&events, now)? {
                        self.wake_at(now).await?;
                    }
                    Response::empty()
                }
                Err(error) => error_response(&error),
            },
            _ => error_response(&ErrorObject::new(
                ErrorCode::NotFound,
                "no such webhook route",
            )),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        self.state.storage().delete_alarm().await?;
        self.deliver().await?;
        Response::empty()
    }
}

impl WebhookDispatcher {
    fn setting(&self, name: &str) -> Option<String> {
        self.env.var(name).ok().map(|v| v.to_string())
    }

    fn policy(&self) -> HostPolicy {
        HostPolicy::new(
            self.setting("WEBHOOK_ALLOWED_HOSTS").as_deref(),
            self.setting("WEBHOOK_ALLOW_LOOPBACK").as_deref(),
        )
    }

    /// A subscription, if its receiver is allowed: nothing is stored otherwise.
    fn create(&self, request: &WebhookCreate, origin: &str, now: u64) -> Result<Response> {
        let refuse = |message: String| {
            error_response(&ErrorObject::new(
                ErrorCode::SchemaValidationFailed,
                message,
            ))
        };
        if request.url.chars().count() > MAX_WEBHOOK_URL_CHARS {
            return refuse(format!(
                "a webhook URL is at most {MAX_WEBHOOK_URL_CHARS} characters"
            ));
        }
        if let Some(task) = &request.task_id {
            if uuid::Uuid::parse_str(task).is_err() {
                return refuse("taskId must be a task id from /api/task/id".into());
            }
        }
        let url = match self.policy().check(&request.url) {
            Ok(url) => url,
            Err(error) => return error_response(&error),
        };
        if self.store.subscriptions()?.len() >= MAX_WEBHOOKS {
            return refuse(format!(
                "this deployment has {MAX_WEBHOOKS} webhooks, the most it keeps"
            ));
        }
        let random: [u8; 40] = random_bytes()?;
        let id = format!("wh_{}", hex::encode(&random[32..]));
        let secret = new_secret(random[..32].try_into().expect("32 bytes"));
        let mut events = request.events.clone();
        events.dedup();
        self.store.create(
            &NewSubscription {
                id: &id,
                url: url.as_str(),
                events: &events,
                task_id: request.task_id.as_deref(),
                origin,
                secret: &secret,
            },
            now,
        )?;
        let Some(subscription) = self.store.subscription(&id)? else {
            return Err(Error::RustError("the new webhook was not stored".into()));
        };
        Ok(Response::from_json(&WebhookSecret {
            webhook: subscription.info(now),
            secret,
        })?
        .with_status(201))
    }

    /// Queues a delivery of each event to each subscription that hears it; whether any is new.
    fn enqueue(&self, events: &WebhookEvents, now: u64) -> Result<bool> {
        let subscriptions = self.store.subscriptions()?;
        let mut queued = false;
        for event in &events.events {
            let id = message_id(&event.task_id, event.seq);
            for subscription in &subscriptions {
                if !subscribed(
                    &subscription.events(),
                    subscription.task_id.as_deref(),
                    event,
                ) {
                    continue;
                }
                queued |= self.store.enqueue(
                    &subscription.id,
                    &id,
                    event.kind,
                    &event.task_id,
                    event.seq,
                    &body(event, &subscription.origin),
                    now,
                )?;
            }
        }
        Ok(queued)
    }

    /// Sends what is due, each task's events for each subscription in order (a success lets
    /// the next one go at once), then sets the alarm for the next attempt.
    async fn deliver(&self) -> Result<()> {
        let policy = RetryPolicy::from_lookup(|name| self.setting(name));
        let hosts = self.policy();
        loop {
            let now = now_ms();
            let pending = self.store.pending()?;
            let states: Vec<_> = pending.iter().map(|row| row.state()).collect();
            let (send, next) = due(&states, now);
            if send.is_empty() {
                if let Some(at) = next {
                    self.wake_at(at).await?;
                }
                self.store.prune(now)?;
                return Ok(());
            }
            let attempts = send.iter().filter_map(|id| {
                let row = pending.iter().find(|row| row.id == *id)?;
                Some(async {
                    let attempt = self.attempt(row, &hosts).await;
                    let now = now_ms();
                    let after = after_attempt(&row.state(), attempt, now, &policy);
                    self.store.attempted(row.id, &after, now)
                })
            });
            for result in futures_util::future::join_all(attempts).await {
                result?;
            }
        }
    }

    /// One attempt at delivering `row`: signed with the subscription's secrets as of now.
    async fn attempt(
        &self,
        row: &crate::webhook_store::DeliveryRow,
        hosts: &HostPolicy,
    ) -> Attempt {
        let subscription = match self.store.subscription(&row.webhook_id) {
            Ok(Some(subscription)) => subscription,
            Ok(None) => return Attempt::Refused("the webhook was deleted".into()),
            Err(e) => return Attempt::NoAnswer(format!("storage: {e}")),
        };
        let url = match hosts.check(&subscription.url) {
            Ok(url) => url,
            Err(error) => return Attempt::Refused(error.message),
        };
        let now = now_ms();
        let timestamp = now / 1000;
        let signature = signature_header(
            &subscription.signing_secrets(now),
            &row.message_id,
            timestamp,
            &row.body,
        );
        let sent = async {
            let headers = Headers::new();
            headers.set("content-type", "application/json")?;
            headers.set("user-agent", "Mimo-Webhooks/1")?;
            headers.set(WEBHOOK_ID_HEADER, &row.message_id)?;
            headers.set(WEBHOOK_TIMESTAMP_HEADER, &timestamp.to_string())?;
            headers.set(WEBHOOK_SIGNATURE_HEADER, &signature)?;
            let mut init = RequestInit::new();
            init.with_method(Method::Post)
                .with_headers(headers)
                .with_redirect(RequestRedirect::Manual)
                .with_body(Some(row.body.clone().into()));
            let request = Request::new_with_init(url.as_str(), &init)?;
            Fetch::Request(request)
                .send()
                .await
                .map(|r| r.status_code())
        };
        match with_deadline(sent, Duration::from_millis(RECEIVER_ANSWER_MS)).await {
            Some(Ok(status)) => Attempt::Answered(status),
            Some(Err(e)) => Attempt::NoAnswer(format!("the request failed: {e}")),
            None => Attempt::NoAnswer(format!("no answer within {} s", RECEIVER_ANSWER_MS / 1000)),
        }
    }

    /// Sets the alarm to `at` unless it is already due sooner: one alarm serves every purpose.
    async fn wake_at(&self, at: u64) -> Result<()> {
        alarm::wake_at(&self.state.storage(), at).await
    }
}
