use mimo_protocol::{AgentAction, ConfirmationRequest, RiskLevel, ToolResult};
use serde_json::json;

use super::*;

#[test]
fn signs_as_the_standard_webhooks_test_vector() {
    // The specification's example (standard-webhooks' libraries test the same).
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let body = r#"{"test": 2432232314}"#;
    assert_eq!(
        signature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body).as_deref(),
        Some("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    );
    assert_eq!(signature("not-a-secret", "m", 1, body), None);
    assert_eq!(signature("whsec_%%%", "m", 1, body), None);
    // Both secrets of a rotation sign, each its own signature.
    let old = new_secret(&[1; 32]);
    let new = new_secret(&[2; 32]);
    assert!(new.starts_with("whsec_") && new.len() == 6 + 44);
    let header = signature_header(&[&new, &old], "msg_1", 5, "{}");
    let parts: Vec<&str> = header.split(' ').collect();
    assert_eq!(parts.len(), 2);
    assert_eq!(Some(parts[0]), signature(&new, "msg_1", 5, "{}").as_deref());
    assert_eq!(Some(parts[1]), signature(&old, "msg_1", 5, "{}").as_deref());
    assert_ne!(parts[0], parts[1]);
    // What is signed is the id, the time and the body: changing any changes it.
    let one = signature(&new, "msg_1", 5, "{}");
    assert_ne!(one, signature(&new, "msg_2", 5, "{}"));
    assert_ne!(one, signature(&new, "msg_1", 6, "{}"));
    assert_ne!(one, signature(&new, "msg_1", 5, "{ }"));
}

#[test]
fn times_are_rfc3339_utc() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(rfc3339(1_614_265_330_123), "2021-02-25T15:02:10.123Z");
    assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
    assert_eq!(rfc3339(4_102_444_799_999), "2099-12-31T23:59:59.999Z");
}

#[test]
fn message_ids_are_stable_per_event() {
    let task = "0b7c6a1e-2f3d-4c5b-8a9e-1f2e3d4c5b6a";
    assert_eq!(message_id(task, 7), message_id(task, 7));
    assert_ne!(message_id(task, 7), message_id(task, 8));
    assert_eq!(
        message_id(task, 7),
        "msg_0b7c6a1e2f3d4c5b8a9e1f2e3d4c5b6a_7"
    );
}

#[test]
fn receivers_outside_the_list_or_in_private_ranges_are_refused() {
    let policy = HostPolicy::new(Some("hooks.example.com, *.example.org,203.0.113.9"), None);
    let ok = |url: &str| policy.check(url).map(|u| u.to_string());
    let code = |url: &str| policy.check(url).unwrap_err().code;
    assert!(ok("https://hooks.example.com/mimo").is_ok());
    assert!(ok("https://HOOKS.example.com./x").is_ok());
    assert!(ok("https://a.b.example.org/x").is_ok());
    for refused in [
        // Not on the list.
        "https://example.org/",
        "https://evil.example.com/",
        "https://hooks.example.com.evil.net/",
        // Not https.
        "http://hooks.example.com/",
        "ftp://hooks.example.com/",
        // Private, loopback, link-local and special ranges, whatever the list says.
        "http://10.0.0.1/",
        "https://10.0.0.1/",
        "https://127.0.0.1/",
        "https://169.254.169.254/latest/meta-data",
        "https://192.168.1.1/",
        "https://172.16.5.4/",
        "https://100.64.0.1/",
        "https://0.0.0.0/",
        "https://[::1]/",
        "https://[fe80::1]/",
        "https://[fd00::1]/",
        "https://[::ffff:10.0.0.1]/",
        "https://2130706433/",
        "https://0x7f.1/",
        "http://localhost:8080/",
        "https://localhost/",
        "https://foo.localhost/",
        "https://printer.local/",
        "https://intranet/",
        "https://user:pw@hooks.example.com/",
        // 203.0.113.0/24 is documentation: listed or not, it is refused.
        "https://203.0.113.9/",
    ] {
        assert_eq!(code(refused), ErrorCode::PermissionDenied, "{refused}");
    }
    assert_eq!(code("not a url"), ErrorCode::SchemaValidationFailed);
    // Without a list, nothing is allowed; `*` allows any public host, never a private one.
    assert!(HostPolicy::new(None, None)
        .check("https://hooks.example.com/")
        .is_err());
    assert!(HostPolicy::new(None, None).calls_none());
    assert!(HostPolicy::new(Some(" , "), Some("false")).calls_none());
    assert!(!HostPolicy::new(None, Some("true")).calls_none());
    assert!(!HostPolicy::new(Some("hooks.example.com"), None).calls_none());
    let any = HostPolicy::new(Some("*"), None);
    assert!(any.check("https://anything.example.net/").is_ok());
    assert!(any.check("https://8.8.8.8/").is_ok());
    assert!(any.check("https://10.1.2.3/").is_err());
    assert!(any.check("http://127.0.0.1:9999/").is_err());
    // Local development: 127.0.0.1 (and [::1]) only, http allowed; not other private ranges,
    // not the name localhost.
    let dev = HostPolicy::new(Some("hooks.example.com"), Some("true"));
    assert!(dev.check("http://127.0.0.1:9999/hook").is_ok());
    assert!(dev.check("http://[::1]:9999/hook").is_ok());
    assert!(dev.check("http://10.0.0.1/").is_err());
    assert!(dev.check("http://localhost:9999/").is_err());
    assert!(dev.check("http://127.0.0.2:9999/").is_err());
    assert!(dev.check("https://other.example.net/").is_err());
}

#[test]
fn retries_double_up_to_an_hour_and_stop_after_a_day() {
    let policy = RetryPolicy::default();
    let mut now = 1_000;
    let first = now;
    let mut delays = Vec::new();
    let mut attempts = 1;
    while let Some(at) = policy.next_attempt(attempts, first, now) {
        delays.push(at - now);
        now = at;
        attempts += 1;
    }
    assert_eq!(&delays[..4], &[10_000, 20_000, 40_000, 80_000]);
    assert!(delays.iter().all(|d| *d <= 3_600_000));
    assert_eq!(*delays.last().unwrap(), 3_600_000);
    assert!(now - first <= 24 * 3_600_000 && now - first > 23 * 3_600_000);
    assert!(attempts > 20 && attempts < 40, "{attempts} attempts");
    // Tests set a fast schedule.
    let fast = RetryPolicy::from_lookup(|name| match name {
        "WEBHOOK_RETRY_BASE_MS" => Some("50".into()),
        "WEBHOOK_RETRY_FOR_MS" => Some("1000".into()),
        _ => None,
    });
    assert_eq!(fast.next_attempt(1, 0, 0), Some(50));
    assert_eq!(fast.next_attempt(3, 0, 500), Some(700));
    assert_eq!(fast.next_attempt(5, 0, 900), None);
    let floor = RetryPolicy::from_lookup(|_| Some("0".into()));
    assert_eq!(floor.base_ms, 10);
}

fn pending(id: u64, webhook: &str, task: &str, seq: u64, next: u64) -> DeliveryState {
    DeliveryState {
        id,
        webhook_id: webhook.into(),
        task_id: task.into(),
        seq,
        attempts: 0,
        first_attempt_at: None,
        next_attempt_at: next,
    }
}

#[test]
fn a_later_event_of_a_task_waits_for_the_earlier_one() {
    let rows = [
        pending(1, "w1", "a", 1, 100),
        pending(2, "w1", "a", 2, 0),
        pending(3, "w1", "b", 1, 0),
        pending(4, "w2", "a", 2, 0),
        pending(5, "w2", "a", 3, 0),
        pending(6, "w3", "c", 9, 300),
    ];
    // a/2 for w1 waits behind a/1 (due at 100); w2 is its own order; c waits for its time.
    assert_eq!(due(&rows, 50), (vec![3, 4], Some(100)));
    assert_eq!(due(&rows, 100), (vec![1, 3, 4], Some(300)));
    assert_eq!(due(&rows[1..], 50), (vec![2, 3, 4], Some(300)));
    assert_eq!(due(&[], 50), (vec![], None));
}

#[test]
fn an_attempt_delivers_retries_or_gives_up() {
    let policy = RetryPolicy::default();
    let row = pending(1, "w", "t", 1, 0);
    let ok = after_attempt(&row, Attempt::Answered(204), 5, &policy);
    assert_eq!(ok.status, DeliveryStatus::Delivered);
    assert_eq!((ok.attempts, ok.next_attempt_at, ok.error), (1, None, None));
    let failed = after_attempt(&row, Attempt::Answered(500), 5, &policy);
    assert_eq!(failed.status, DeliveryStatus::Pending);
    assert_eq!(failed.next_attempt_at, Some(10_005));
    assert_eq!(failed.response_status, Some(500));
    // A redirect is not followed: it is a failure like any other answer.
    let moved = after_attempt(&row, Attempt::Answered(302), 5, &policy);
    assert_eq!(moved.status, DeliveryStatus::Pending);
    let again = DeliveryState {
        attempts: 1,
        first_attempt_at: Some(5),
        ..row.clone()
    };
    let second = after_attempt(
        &again,
        Attempt::NoAnswer("timed out".into()),
        10_005,
        &policy,
    );
    assert_eq!(
        (
            second.attempts,
            second.first_attempt_at,
            second.next_attempt_at
        ),
        (2, 5, Some(30_005))
    );
    let late = after_attempt(
        &again,
        Attempt::NoAnswer("down".into()),
        5 + 24 * 3_600_000,
        &policy,
    );
    assert_eq!(late.status, DeliveryStatus::Failed);
    let refused = after_attempt(&row, Attempt::Refused("not allowed".into()), 5, &policy);
    assert_eq!(
        (refused.status, refused.next_attempt_at),
        (DeliveryStatus::Failed, None)
    );
}

fn envelope(seq: u64, event: FrontendEvent) -> EventEnvelope {
    EventEnvelope {
        seq: Some(seq),
        task_id: "t1".into(),
        at: 1000 + seq,
        event,
    }
}

fn status(status: TaskStatus) -> FrontendEvent {
    FrontendEvent::TaskStatus {
        status,
        title: None,
        selected_client_id: None,
    }
}

fn step(step: u32, phase: ToolPhase, ok: bool) -> FrontendEvent {
    FrontendEvent::ToolUsed {
        step,
        tool_call_id: format!("call-{step}"),
        phase,
        reflection: None,
        action: AgentAction::Click { index: 4 },
        result: (phase == ToolPhase::End).then(|| ToolResult {
            tool_call_id: format!("call-{step}"),
            name: "click".into(),
            ok,
            result: None,
            model_result: None,
            error: (!ok).then(|| ErrorObject::new(ErrorCode::TargetNotFound, "gone")),
            warnings: vec![],
            partial: false,
        }),
        summary: (phase == ToolPhase::End).then(|| format!("Clicked [4] at step {step}")),
        usage: None,
        cost_usd: None,
        risk: None,
        skill: None,
        target: None,
        target_name: None,
    }
}

#[test]
fn a_tasks_history_maps_to_its_webhook_events() {
    let history = vec![
        status(TaskStatus::Created),
        status(TaskStatus::Created),
        FrontendEvent::Warning {
            message: "hi".into(),
        },
        status(TaskStatus::Running),
        FrontendEvent::PageObserved {
            step: 0,
            url: "https://shop.example/".into(),
            title: "Shop".into(),
            screenshot_artifact_id: Some("shot-1".into()),
            elements: 3,
            missing: vec![],
            warnings: vec![],
            dialog: None,
            tabs: vec![],
        },
        step(1, ToolPhase::Start, true),
        step(1, ToolPhase::End, true),
        status(TaskStatus::Paused),
        status(TaskStatus::Takeover),
        status(TaskStatus::Running),
        FrontendEvent::ConfirmationRequested(ConfirmationRequest {
            step: 2,
            action: AgentAction::Click { index: 9 },
            reason: "submits a payment".into(),
            risk: RiskLevel::default(),
            facts: vec![],
            url: String::new(),
            title: String::new(),
            screenshot_artifact_id: Some("shot-2".into()),
            target: None,
            target_name: None,
            step_by_step: false,
        }),
        status(TaskStatus::WaitingConfirmation),
        FrontendEvent::ConfirmationAnswered {
            step: 2,
            approved: false,
            by: "api".into(),
            reason: Some("no".into()),
        },
        status(TaskStatus::Running),
        step(3, ToolPhase::End, false),
        FrontendEvent::StructuredOutput {
            status: mimo_protocol::OutputStatus::Error,
            output: None,
            error: Some(ErrorObject::new(ErrorCode::LoopDetected, "circles")),
            warnings: vec![],
        },
        status(TaskStatus::Error),
        status(TaskStatus::Running),
        status(TaskStatus::Completed),
        status(TaskStatus::Canceled),
    ];
    let mut mapper = EventMapper::default();
    let events: Vec<WebhookEvent> = history
        .into_iter()
        .zip(1..)
        .filter_map(|(event, seq)| mapper.read(&envelope(seq, event)))
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "task.created",
            "task.step_finished",
            "task.paused",
            "task.resumed",
            "task.confirmation_requested",
            "task.confirmation_answered",
            "task.step_finished",
            "task.failed",
            "task.completed",
            "task.canceled",
        ]
    );
    let finished = &events[1].data;
    assert_eq!(finished.seq, 7);
    assert_eq!(finished.step, Some(1));
    assert_eq!(finished.action.as_deref(), Some("click"));
    assert_eq!(finished.ok, Some(true));
    assert_eq!(finished.summary.as_deref(), Some("Clicked [4] at step 1"));
    assert_eq!(finished.screenshot_artifact_id.as_deref(), Some("shot-1"));
    assert_eq!(events[4].data.reason.as_deref(), Some("submits a payment"));
    assert_eq!(
        events[4].data.screenshot_artifact_id.as_deref(),
        Some("shot-2")
    );
    assert_eq!(events[5].data.ok, Some(false));
    assert_eq!(events[5].data.by.as_deref(), Some("api"));
    assert_eq!(
        events[6].data.error.as_ref().unwrap().code,
        ErrorCode::TargetNotFound
    );
    assert_eq!(
        events[7].data.error.as_ref().unwrap().code,
        ErrorCode::LoopDetected
    );
    assert_eq!(events[8].data.error, None);
    // Read again (after a restart, from a stored cursor): nothing is reported twice.
    let stored: EventMapper =
        serde_json::from_str(&serde_json::to_string(&mapper).unwrap()).unwrap();
    assert_eq!(stored, mapper);
    let mut again = stored;
    assert_eq!(again.read(&envelope(3, status(TaskStatus::Created))), None);
    assert!(again
        .read(&envelope(30, status(TaskStatus::Running)))
        .is_none());
}

#[test]
fn the_body_links_to_the_evidence_and_filters_hold() {
    let mut mapper = EventMapper::default();
    mapper.read(&envelope(
        1,
        FrontendEvent::PageObserved {
            step: 0,
            url: String::new(),
            title: String::new(),
            screenshot_artifact_id: Some("art-1".into()),
            elements: 0,
            missing: vec![],
            warnings: vec![],
            dialog: None,
            tabs: vec![],
        },
    ));
    let event = mapper
        .read(&envelope(2, step(1, ToolPhase::End, true)))
        .unwrap();
    let reported = report(&event);
    assert_eq!((reported.kind, reported.seq), (event.kind, 2));
    let text = body(&reported, "https://mimo.example.com");
    // The body is a payload: the event's data, with the links last.
    let read: WebhookPayload = serde_json::from_str(&text).unwrap();
    assert_eq!(read.kind, event.kind);
    assert_eq!(
        WebhookEventData {
            links: None,
            ..read.data.clone()
        },
        event.data
    );
    assert!(read.data.links.is_some());
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["type"], "task.step_finished");
    assert_eq!(json["timestamp"], "1970-01-01T00:00:01.002Z");
    assert_eq!(json["data"]["taskId"], "t1");
    assert_eq!(json["data"]["seq"], 2);
    assert_eq!(
        json["data"]["links"]["task"],
        "https://mimo.example.com/#/task/t1"
    );
    assert_eq!(
        json["data"]["links"]["audit"],
        "https://mimo.example.com/api/task/t1/audit.jsonl"
    );
    assert_eq!(
        json["data"]["links"]["screenshot"],
        "https://mimo.example.com/api/artifacts/art-1"
    );
    assert!(subscribed(&[], None, &reported));
    assert!(subscribed(
        &[WebhookEventType::TaskStepFinished],
        Some("t1"),
        &reported
    ));
    assert!(!subscribed(
        &[WebhookEventType::TaskCreated],
        None,
        &reported
    ));
    assert!(!subscribed(&[], Some("t2"), &reported));
    // A body not written by `report` is delivered as it is, never made invalid.
    let odd = WebhookReport {
        body: "[]".into(),
        ..reported.clone()
    };
    assert_eq!(body(&odd, "https://x"), "[]");
    for kind in WebhookEventType::ALL {
        assert_eq!(WebhookEventType::parse(kind.as_str()), Some(kind));
        assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
    }
}

#[test]
fn a_fork_is_created_once_whatever_its_first_status_and_a_completion_carries_the_answer() {
    // A fork that ends with an answer: its history is its messages, then its status.
    for first in [TaskStatus::Created, TaskStatus::Completed] {
        let mut mapper = EventMapper::default();
        let events: Vec<WebhookEvent> = [status(first), status(TaskStatus::Running)]
            .into_iter()
            .zip(1..)
            .filter_map(|(event, seq)| mapper.read(&envelope(seq, event)))
            .collect();
        assert_eq!(events.len(), 1, "{first:?}: {events:?}");
        assert_eq!(events[0].kind, WebhookEventType::TaskCreated);
        assert_eq!(events[0].data.status, Some(first));
    }
    // A task from before webhooks (its cursor after its history) does not report a creation.
    let mut legacy = EventMapper::after(9);
    assert!(legacy
        .read(&envelope(10, status(TaskStatus::Running)))
        .is_none());
    // Nor does a cursor stored before creations were tracked.
    let mut stored: EventMapper = serde_json::from_value(json!({ "seq": 9 })).unwrap();
    assert!(stored
        .read(&envelope(10, status(TaskStatus::Running)))
        .is_none());

    // The answer (and whether all was done) goes with the completion that follows it, once.
    let mut mapper = EventMapper::default();
    let answered = |status, output| FrontendEvent::StructuredOutput {
        status,
        output: Some(output),
        error: None,
        warnings: vec![],
    };
    let history = [
        status(TaskStatus::Created),
        answered(
            OutputStatus::Partial,
            json!({ "text": "Found two of three" }),
        ),
        status(TaskStatus::Completed),
        status(TaskStatus::Running),
        status(TaskStatus::Completed),
    ];
    let events: Vec<WebhookEvent> = history
        .into_iter()
        .zip(1..)
        .filter_map(|(event, seq)| mapper.read(&envelope(seq, event)))
        .collect();
    let completions: Vec<&WebhookEvent> = events
        .iter()
        .filter(|e| e.kind == WebhookEventType::TaskCompleted)
        .collect();
    assert_eq!(completions.len(), 2);
    assert_eq!(
        completions[0].data.output,
        Some(json!({ "text": "Found two of three" }))
    );
    assert_eq!(completions[0].data.ok, Some(false));
    assert_eq!(completions[1].data.output, None);
}
