//! Wire-format tests: JSON shapes the web app and extension depend on, and the generated
//! TypeScript staying in sync with the Rust types.

use mimo_protocol::*;
use serde_json::json;

fn roundtrip<T>(value: serde_json::Value) -> T
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let parsed: T = serde_json::from_value(value.clone()).expect("parses");
    assert_eq!(
        serde_json::to_value(&parsed).unwrap(),
        value,
        "re-encodes identically"
    );
    parsed
}

#[test]
fn frontend_messages_use_snake_case_types() {
    let m: FrontendMessage = roundtrip(json!({"type": "user_message", "content": "hi"}));
    assert_eq!(
        m,
        FrontendMessage::UserMessage {
            content: "hi".into(),
            client_message_id: None,
            answer_schema: None
        }
    );
    let m: FrontendMessage = roundtrip(json!({
        "type": "user_message", "content": "hi", "clientMessageId": "m-1",
        "answerSchema": {"type": "array"}
    }));
    assert_eq!(
        m,
        FrontendMessage::UserMessage {
            content: "hi".into(),
            client_message_id: Some("m-1".into()),
            answer_schema: Some(json!({"type": "array"}))
        }
    );
    let m: FrontendMessage = roundtrip(json!({"type": "select_client", "clientId": "c1"}));
    assert_eq!(
        m,
        FrontendMessage::SelectClient {
            client_id: "c1".into()
        }
    );
    let m: FrontendMessage = roundtrip(json!({"type": "stop"}));
    assert_eq!(m, FrontendMessage::Stop {});
}

#[test]
fn frontend_events_are_flat_envelopes_with_camel_case_types() {
    let e: EventEnvelope = roundtrip(json!({
        "seq": 7, "taskId": "t1", "at": 1700000000000u64,
        "type": "chatDelta", "messageId": "m1", "delta": "Hel", "finished": false
    }));
    assert_eq!(e.seq, Some(7));
    assert!(matches!(e.event, FrontendEvent::ChatDelta { ref delta, .. } if delta == "Hel"));

    let e: EventEnvelope = roundtrip(json!({
        "taskId": "t1", "at": 1, "type": "taskStatus", "status": "waiting_confirmation"
    }));
    assert_eq!(e.seq, None);
    assert!(matches!(
        e.event,
        FrontendEvent::TaskStatus {
            status: TaskStatus::WaitingConfirmation,
            ..
        }
    ));

    let _: EventEnvelope = roundtrip(json!({
        "seq": 9, "taskId": "t1", "at": 2, "type": "structuredOutput", "status": "error",
        "error": {"code": "LLM_ERROR", "message": "rate limited", "retryable": true},
        "warnings": []
    }));
    let _: EventEnvelope = roundtrip(json!({
        "taskId": "t1", "at": 2, "type": "snapshotSync", "clientId": "c1",
        "snapshot": {"windows": [{"windowId": 1, "focused": true}], "tabs": [
            {"tabId": 5, "windowId": 1, "index": 0, "url": "http://a/", "title": "A",
             "status": "complete", "active": true, "groupId": 3}
        ], "groups": [{"groupId": 3, "windowId": 1, "title": "Mimo", "color": "blue", "collapsed": false}],
        "activeTabId": 5}
    }));
}

#[test]
fn extension_messages_round_trip() {
    let m: ExtensionMessage = roundtrip(json!({
        "type": "hello", "clientId": "c1", "name": "Laptop",
        "browser": {"name": "Chromium", "version": "156", "userAgent": "UA"},
        "extensionVersion": "0.1.0"
    }));
    assert!(matches!(m, ExtensionMessage::Hello { ref client_id, .. } if client_id == "c1"));
    let m: ExtensionMessage = roundtrip(json!({
        "type": "tab_event", "event": {"kind": "tab_removed", "tabId": 4}
    }));
    assert_eq!(
        m,
        ExtensionMessage::TabEvent {
            event: TabEvent::TabRemoved { tab_id: 4 }
        }
    );
    let _: ExtensionMessage = roundtrip(json!({
        "type": "tab_event", "event": {"kind": "window_focused", "windowId": null}
    }));
}

#[test]
fn keep_alive_frames_are_the_serialized_messages() {
    use mimo_protocol::extension::{PING_FRAME, PONG_FRAME};
    assert_eq!(
        serde_json::to_string(&ExtensionMessage::Ping {}).unwrap(),
        PING_FRAME
    );
    assert_eq!(
        serde_json::to_string(&ServerToExtension::Pong {}).unwrap(),
        PONG_FRAME
    );
}

#[test]
fn error_objects_carry_code_message_and_retry_class() {
    let e = ErrorObject::plugin_offline();
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(v["code"], "PLUGIN_OFFLINE");
    assert_eq!(v["retryable"], true);
    assert!(e.message.contains("extension"));
    assert!(!ErrorCode::SchemaValidationFailed.retryable());
    for code in [
        ErrorCode::PluginTimeoutAck,
        ErrorCode::TargetNotFound,
        ErrorCode::LlmError,
    ] {
        assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
    }
}

#[test]
fn bad_frames_are_schema_validation_failures_that_say_why() {
    let cases = [
        ("not json", "not valid JSON"),
        ("{\"type\": \"launch_missiles\"}", "does not match"),
        ("{\"type\": \"user_message\"}", "content"),
        ("[1,2]", "does not match"),
    ];
    for (frame, why) in cases {
        let err = parse_frame::<FrontendMessage>(frame, 1024).unwrap_err();
        assert_eq!(err.code, ErrorCode::SchemaValidationFailed, "{frame}");
        assert!(err.message.contains(why), "{frame}: {}", err.message);
    }
    let big = format!(
        "{{\"type\":\"user_message\",\"content\":\"{}\"}}",
        "x".repeat(2000)
    );
    let err = parse_frame::<FrontendMessage>(&big, 1024).unwrap_err();
    assert!(err.message.contains("exceeds"), "{}", err.message);
}

#[test]
fn checked_in_typescript_is_current() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = root.join(typescript::TYPESCRIPT_PATH);
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == typescript::typescript_module(),
        "{} is stale: run `cargo run -p mimo-protocol --bin gen-ts` and commit the result",
        path.display()
    );
}

/// The model's tool schemas the worker reads are the ones the types generate now.
#[test]
fn written_tool_schemas_are_current() {
    use mimo_protocol::agent::*;
    for (schema, generated) in [
        (agent_output_schema(), generated_agent_output_schema()),
        (browser_task_schema(), generated_browser_task_schema()),
    ] {
        assert!(
            schema == generated,
            "protocol/schemas/ is stale: run `cargo run -p mimo-protocol --bin gen-ts` and commit the result"
        );
    }
}

#[test]
fn browser_actions_carry_ids_name_and_params() {
    let m: ServerToExtension = roundtrip(json!({
        "type": "browser_action",
        "action": {
            "actionId": "a1", "attempt": 1, "taskId": "t1", "clientId": "c1", "tabId": 7,
            "name": "browser_click", "params": {"clickId": 12, "strategy": "cdp_mouse"}
        }
    }));
    let ServerToExtension::BrowserAction { action } = m else {
        panic!("not an action")
    };
    assert_eq!(action.command.name(), "browser_click");
    assert!(action.command.needs_tab());
    assert_eq!(
        action.command,
        ActionCommand::BrowserClick {
            target: Target::click_id(12),
            strategy: Some(mimo_protocol::action::ClickStrategy::CdpMouse),
            checked: None,
        }
    );
    let start: ActionCommand =
        roundtrip(json!({"name": "task_start", "params": {"url": "http://127.0.0.1/"}}));
    assert!(!start.needs_tab());
    let _: ActionCommand = roundtrip(json!({"name": "browser_back", "params": {}}));
    let _: ActionCommand = roundtrip(json!({
        "name": "browser_type", "params": {"xpath": "//input[1]", "text": "blue mug", "submit": true}
    }));
    let _: ActionCommand = roundtrip(
        json!({"name": "browser_wait_for", "params": {"text": "Cart", "timeoutMs": 5000}}),
    );
    assert!(
        serde_json::from_value::<ActionCommand>(json!({"name": "browser_fly", "params": {}}))
            .is_err()
    );
    assert!(serde_json::from_value::<ActionCommand>(
        json!({"name": "browser_navigate", "params": {}})
    )
    .is_err());
}

#[test]
fn acks_and_outcomes_round_trip() {
    let _: ExtensionMessage =
        roundtrip(json!({"type": "action_ack", "actionId": "a1", "attempt": 1, "taskId": "t1"}));
    let m: ExtensionMessage = roundtrip(json!({
        "type": "action_result",
        "outcome": {
            "actionId": "a1", "attempt": 2, "taskId": "t1", "status": "error",
            "error": {"code": "TARGET_NOT_FOUND", "message": "no element 12", "retryable": false},
            "warnings": ["fell back to DOM events"]
        }
    }));
    let ExtensionMessage::ActionResult { outcome } = m else {
        panic!("not a result")
    };
    assert_eq!(outcome.status, ActionStatus::Error);
    assert_eq!(outcome.error.unwrap().code, ErrorCode::TargetNotFound);
}

/// Found by `extension_frames_round_trip` and `web_frames_round_trip`: without serde_json's
/// `float_roundtrip`, these numbers were read back one unit in the last place off, so an action's
/// result (bounding boxes, scroll positions) changed between the extension's frame, the stored
/// record and its replay.
#[test]
fn floats_in_frames_read_back_exactly() {
    for x in [-1.4174305617176495e169, 5.207102616288504e-113] {
        let frame = json!({
            "type": "action_result",
            "outcome": { "actionId": "a1", "attempt": 1, "taskId": "t1", "status": "ok",
                         "result": [x], "warnings": [] }
        })
        .to_string();
        let ExtensionMessage::ActionResult { outcome } = parse_frame(&frame, frame.len()).unwrap()
        else {
            panic!("not a result")
        };
        assert_eq!(outcome.result.unwrap()[0].as_f64(), Some(x), "{frame}");
    }
}
