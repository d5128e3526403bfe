use super::tools::{self, ToolReply};
use super::*;
use crate::actions::{ActionRecord, ActionState};
use mimo_protocol::mcp::{CallToolResult, Content};
use mimo_protocol::{
    ActionCommand, ActionOutcome, ActionStatus, ErrorCode, ErrorObject, TaskStatus,
};
use serde_json::json;

fn code_of(body: &str) -> (Option<RequestId>, i32) {
    let error = read(body.as_bytes()).expect_err("refused");
    assert_eq!(error.jsonrpc, "2.0");
    (error.id, error.error.code)
}

fn call(name: &str, arguments: serde_json::Value) -> Result<BrowserTool, String> {
    match called(name, arguments)? {
        Tool::Browser(tool) => Ok(tool),
        other => panic!("not a browser tool: {other:?}"),
    }
}

fn called(name: &str, arguments: serde_json::Value) -> Result<Tool, String> {
    let body = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": { "name": name, "arguments": arguments }
    });
    match read(body.to_string().as_bytes()).expect("a request") {
        Incoming::Request {
            id,
            call: Call::CallTool { tool, .. },
        } => {
            assert_eq!(id, RequestId::Number(7));
            tool
        }
        other => panic!("not a tool call: {other:?}"),
    }
}

#[test]
fn bad_json_rpc_gets_the_specifications_error_codes() {
    assert_eq!(code_of("{not json"), (None, -32700));
    assert_eq!(code_of(""), (None, -32700));
    // A batch, a bare value, a wrong or missing version, a method that is not a string.
    assert_eq!(
        code_of(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
        (None, -32600)
    );
    assert_eq!(code_of("42"), (None, -32600));
    let one = Some(RequestId::Number(1));
    assert_eq!(
        code_of(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
        (one.clone(), -32600)
    );
    assert_eq!(
        code_of(r#"{"id":1,"method":"ping"}"#),
        (one.clone(), -32600)
    );
    assert_eq!(
        code_of(r#"{"jsonrpc":"2.0","id":1,"method":5}"#),
        (one.clone(), -32600)
    );
    assert_eq!(
        code_of(r#"{"jsonrpc":"2.0","id":1}"#),
        (one.clone(), -32600)
    );
    assert_eq!(
        code_of(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#),
        (one.clone(), -32600)
    );
    // An id a response cannot carry.
    assert_eq!(
        code_of(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
        (None, -32600)
    );
    assert_eq!(
        code_of(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#),
        (None, -32600)
    );
    // A method Mimo does not serve; params that do not fit; a tool that does not exist.
    assert_eq!(
        code_of(r#"{"jsonrpc":"2.0","id":"x","method":"resources/list"}"#),
        (Some(RequestId::String("x".into())), -32601)
    );
    assert_eq!(
        code_of(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
        (one.clone(), -32602)
    );
    assert_eq!(
        code_of(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#),
        (one.clone(), -32602)
    );
    assert_eq!(
        code_of(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"browser_evaluate"}}"#
        ),
        (one, -32602)
    );
}

#[test]
fn notifications_and_responses_are_accepted_without_an_answer() {
    assert_eq!(
        read(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
        Ok(Incoming::Accepted {
            method: Some("notifications/initialized".into())
        })
    );
    // Even one Mimo has no use for: a notification is never answered.
    assert!(matches!(
        read(br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{"a":1}}"#),
        Ok(Incoming::Accepted { .. })
    ));
    // Responses to the server's requests (elicitations), with their result or none for an
    // error; one without a usable id answers nothing Mimo asked.
    assert_eq!(
        read(br#"{"jsonrpc":"2.0","id":"e-1","result":{"action":"cancel"}}"#),
        Ok(Incoming::Response {
            id: RequestId::String("e-1".into()),
            result: Some(json!({ "action": "cancel" }))
        })
    );
    assert_eq!(
        read(br#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}"#),
        Ok(Incoming::Response {
            id: RequestId::Number(3),
            result: None
        })
    );
    assert_eq!(
        read(br#"{"jsonrpc":"2.0","id":null,"result":{}}"#),
        Ok(Incoming::Accepted { method: None })
    );
}

#[test]
fn requests_mimo_serves_are_read_with_their_params() {
    let init = read(
        json!({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "client", "version": "1" }
            }
        })
        .to_string()
        .as_bytes(),
    )
    .unwrap();
    assert!(init.is_initialize());
    let Incoming::Request {
        call: Call::Initialize(params),
        ..
    } = init
    else {
        panic!("{init:?}")
    };
    assert_eq!(params.protocol_version, "2025-06-18");
    for (method, expected) in [("ping", Call::Ping), ("tools/list", Call::ListTools)] {
        let body = json!({ "jsonrpc": "2.0", "id": 2, "method": method });
        let read = read(body.to_string().as_bytes()).unwrap();
        assert!(!read.is_initialize());
        assert_eq!(
            read,
            Incoming::Request {
                id: RequestId::Number(2),
                call: expected
            }
        );
    }
}

#[test]
fn versions_negotiate_down_to_what_the_client_speaks_and_headers_are_checked() {
    for version in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        assert_eq!(negotiate(version), version);
        assert_eq!(initialize_result(version).protocol_version, version);
        assert_eq!(version_header_problem(Some(version), version), None);
    }
    assert_eq!(negotiate("2024-11-05"), "2025-11-25");
    assert_eq!(negotiate("2099-01-01"), "2025-11-25");
    assert!(initialize_result("2025-11-25").capabilities.tools.is_some());
    // No header: the revision before the header existed, as the specification says.
    assert_eq!(version_header_problem(None, "2025-06-18"), None);
    assert!(version_header_problem(Some("2024-11-05"), "2025-11-25")
        .unwrap()
        .contains("not supported"));
    assert!(version_header_problem(Some("2025-06-18"), "2025-11-25")
        .unwrap()
        .contains("not this session's"));
}

#[test]
fn every_listed_tool_is_one_that_parses_and_every_schema_is_an_object() {
    let listed: mimo_protocol::mcp::ListToolsResult =
        serde_json::from_value(tools::list()).expect("a tools/list result");
    let listed = listed.tools;
    assert_eq!(listed.len(), 19);
    for tool in &listed {
        assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
        assert_eq!(tool.input_schema["additionalProperties"], false);
        // Every keyword of it is one the argument check knows.
        assert!(
            crate::json_schema::check(&tool.input_schema).is_ok(),
            "{}",
            tool.name
        );
        // With its required arguments filled in, each one reads.
        let mut arguments = serde_json::Map::new();
        let required = tool.input_schema["required"].as_array().cloned();
        for required in required.unwrap_or_default() {
            let name = required.as_str().unwrap();
            let value = match name {
                "action" => json!("list"),
                "ref" | "startRef" | "endRef" => json!("3"),
                "accept" => json!(true),
                "values" => json!(["a"]),
                "data" => json!("aGk="),
                "fields" => {
                    json!([{ "name": "Name", "type": "textbox", "ref": "3", "value": "Ada" }])
                }
                "url" => json!("https://shop.example/"),
                _ => json!("x"),
            };
            arguments.insert(name.to_owned(), value);
        }
        if tool.name == "browser_wait_for" {
            arguments.insert("text".into(), json!("Done"));
        }
        let parsed = tools::parse(&tool.name, Some(arguments));
        assert!(matches!(parsed, Some(Ok(_))), "{}: {parsed:?}", tool.name);
    }
    assert_eq!(tools::parse("browser_evaluate", None), None);
}

#[test]
fn the_run_tools_read_their_arguments_and_keep_a_session_to_its_own_tasks() {
    let schema = json!({ "type": "object", "properties": { "price": { "type": "number" } } });
    assert_eq!(
        called(
            "run_task",
            json!({ "goal": " Find the mug's price ", "answerSchema": schema, "waitSeconds": 5 })
        ),
        Ok(Tool::Task(TaskTool::Run {
            goal: "Find the mug's price".into(),
            answer_schema: Some(schema),
            wait_seconds: 5,
        }))
    );
    assert_eq!(
        called("run_task", json!({ "goal": "Go" })),
        Ok(Tool::Task(TaskTool::Run {
            goal: "Go".into(),
            answer_schema: None,
            wait_seconds: runs::RUN_WAIT_SECONDS,
        }))
    );
    assert!(called("run_task", json!({ "goal": "  " })).is_err());
    // A wait past what a client waits for a call, a schema that is not an object: refused.
    assert!(called("run_task", json!({ "goal": "Go", "waitSeconds": 600 })).is_err());
    assert!(called(
        "run_task",
        json!({ "goal": "Go", "answerSchema": "a price" })
    )
    .is_err());
    assert_eq!(
        called("get_task", json!({ "taskId": "t-1" })),
        Ok(Tool::Task(TaskTool::Get {
            task_id: "t-1".into(),
            wait_seconds: 0,
        }))
    );
    assert_eq!(
        called("cancel_task", json!({ "taskId": "t-1" })),
        Ok(Tool::Task(TaskTool::Cancel {
            task_id: "t-1".into()
        }))
    );
    assert_eq!(
        called("list_tasks", json!({})),
        Ok(Tool::Task(TaskTool::List))
    );
    let mine = [runs::SessionRun {
        task_id: "t-1".into(),
        structured: false,
    }];
    assert!(runs::run_of(&mine, "t-1").is_ok());
    assert!(runs::run_of(&mine, "t-2")
        .unwrap_err()
        .contains("no task t-2 was run in this session"));
}

#[test]
fn a_runs_answer_says_where_it_stands_and_gives_its_result_once_it_ended() {
    use mimo_protocol::frontend::OutputStatus;
    use mimo_protocol::TaskStatus;
    let run = runs::SessionRun {
        task_id: "t-1".into(),
        structured: true,
    };
    let state = |status, ended| runs::RunState {
        status,
        title: Some("Mug price".into()),
        steps: 2,
        last_step: Some("Step 2: done".into()),
        ended,
    };
    let text = |result: &CallToolResult| match &result.content[0] {
        Content::Text { text } => text.clone(),
        other => panic!("not text: {other:?}"),
    };
    let waiting = runs::answer(&run, &state(TaskStatus::WaitingConfirmation, None));
    assert!(!waiting.is_error);
    assert!(text(&waiting).contains("waiting for the person to confirm a step"));
    assert!(text(&waiting).contains("get_task"));
    let answered = runs::RunEnd {
        status: OutputStatus::Ok,
        output: Some(json!({
            "success": true, "text": "It costs 12.50.", "data": { "price": 12.5 }, "steps": 2
        })),
        error: None,
        warnings: vec!["the page changed".into()],
    };
    let done = runs::answer(&run, &state(TaskStatus::Completed, Some(answered.clone())));
    assert_eq!(done.structured_content, Some(json!({ "price": 12.5 })));
    conforms("CallToolResult", &json!(done));
    assert_eq!(
        text(&done),
        "Task t-1 finished in 2 steps.\n\nIt costs 12.50.\n\n{\n  \"price\": 12.5\n}\nNote: the page changed"
    );
    // A run asked for no schema: the answer's text, no structured content.
    let plain = runs::SessionRun {
        structured: false,
        ..run.clone()
    };
    let said = runs::RunEnd {
        output: Some(json!({ "text": "It costs 12.50." })),
        warnings: Vec::new(),
        ..answered
    };
    let done = runs::answer(&plain, &state(TaskStatus::Completed, Some(said)));
    assert_eq!(text(&done), "Task t-1 finished.\n\nIt costs 12.50.");
    assert_eq!(done.structured_content, None);
    let failed = runs::RunEnd {
        status: OutputStatus::Error,
        output: None,
        error: Some(ErrorObject::new(ErrorCode::StepLimitExceeded, "40 steps")),
        warnings: Vec::new(),
    };
    let failed = runs::answer(&run, &state(TaskStatus::Error, Some(failed)));
    assert!(failed.is_error);
    assert!(text(&failed).contains("failed: STEP_LIMIT_EXCEEDED: 40 steps"));
    let listed = runs::listing(&[
        (run.clone(), Some(state(TaskStatus::Running, None))),
        (plain, None),
    ]);
    assert_eq!(
        text(&listed),
        "Tasks run in this session:\n- t-1: could not be read just now\n- t-1: still running — Mug price"
    );
}

#[test]
fn a_runs_progress_counts_its_finished_steps_and_says_the_last() {
    use mimo_protocol::mcp::RequestId;
    use mimo_protocol::{AgentAction, TaskStatus};
    let click = AgentAction::Click { index: 7 };
    assert_eq!(runs::step_words(3, &click), r#"Step 3: click {"index":7}"#);
    let long = AgentAction::Navigate {
        url: format!("https://shop.example/{}", "a".repeat(300)),
    };
    let words = runs::step_words(1, &long);
    assert_eq!(words.chars().count(), 160);
    assert!(words.ends_with('…'));
    let state = runs::RunState {
        status: TaskStatus::Running,
        title: None,
        steps: 3,
        last_step: Some(runs::step_words(3, &click)),
        ended: None,
    };
    let note = runs::progress(&RequestId::String("p-1".into()), &state);
    assert_eq!(
        json!(note),
        json!({
            "jsonrpc": "2.0", "method": "notifications/progress",
            "params": { "progressToken": "p-1", "progress": 3, "message": "Step 3: click {\"index\":7}" }
        })
    );
    // A progress token comes with the call that asked for it.
    let body = json!({
        "jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": { "name": "list_tasks", "arguments": {}, "_meta": { "progressToken": 42 } }
    });
    let Ok(Incoming::Request {
        call: Call::CallTool { progress, .. },
        ..
    }) = read(body.to_string().as_bytes())
    else {
        panic!("not a tool call")
    };
    assert_eq!(progress, Some(RequestId::Number(42)));
}

#[test]
fn tools_map_to_the_browser_actions_of_the_catalog() {
    let cases = [
        (
            "browser_navigate",
            json!({ "url": " https://shop.example/a " }),
            json!({ "name": "browser_navigate", "params": { "url": "https://shop.example/a" } }),
        ),
        (
            "browser_navigate_back",
            json!({}),
            json!({ "name": "browser_back", "params": {} }),
        ),
        (
            "browser_snapshot",
            json!({}),
            json!({ "name": "browser_dom_index", "params": {} }),
        ),
        (
            "browser_click",
            json!({ "ref": "12", "element": "Buy button" }),
            json!({ "name": "browser_click", "params": { "clickId": 12 } }),
        ),
        (
            "browser_click",
            json!({ "ref": "[4]" }),
            json!({ "name": "browser_click", "params": { "clickId": 4 } }),
        ),
        (
            "browser_type",
            json!({ "ref": 5, "text": "hello", "submit": true }),
            json!({ "name": "browser_type", "params": { "clickId": 5, "text": "hello", "submit": true } }),
        ),
        (
            "browser_type",
            json!({ "ref": "5", "text": "hello" }),
            json!({ "name": "browser_type", "params": { "clickId": 5, "text": "hello" } }),
        ),
        (
            "browser_take_screenshot",
            json!({ "fullPage": true }),
            json!({ "name": "browser_screenshot", "params": { "fullPage": true } }),
        ),
        (
            "browser_press_key",
            json!({ "key": "Control+a" }),
            json!({ "name": "browser_press_key", "params": { "key": "Control+a" } }),
        ),
        (
            "browser_hover",
            json!({ "ref": "9" }),
            json!({ "name": "browser_hover", "params": { "clickId": 9 } }),
        ),
        (
            "browser_select_option",
            json!({ "ref": "2", "values": ["Blue"] }),
            json!({ "name": "browser_select_option", "params": { "clickId": 2, "option": "Blue" } }),
        ),
        (
            "browser_wait_for",
            json!({ "url": "/done" }),
            json!({ "name": "browser_wait_for", "params": { "url": "/done" } }),
        ),
        (
            "browser_drag",
            json!({ "startRef": "3", "startElement": "Card", "endRef": 7, "endElement": "Done" }),
            json!({ "name": "browser_drag", "params": { "from": { "clickId": 3 }, "to": { "clickId": 7 } } }),
        ),
        (
            "browser_handle_dialog",
            json!({ "accept": true, "promptText": "Ada" }),
            json!({ "name": "browser_dialog", "params": { "accept": true, "text": "Ada" } }),
        ),
        (
            "browser_handle_dialog",
            json!({ "accept": false }),
            json!({ "name": "browser_dialog", "params": { "accept": false } }),
        ),
    ];
    for (name, arguments, expected) in cases {
        let tool = call(name, arguments).expect(name);
        let expected: ActionCommand = serde_json::from_value(expected).unwrap();
        assert_eq!(tool.command(true, &[]), Ok(expected), "{name}");
    }
}

#[test]
fn the_first_navigation_opens_the_tasks_tab_and_nothing_runs_before_it() {
    let navigate = call(
        "browser_navigate",
        json!({ "url": "https://shop.example/" }),
    )
    .unwrap();
    assert_eq!(
        navigate.command(false, &[]),
        Ok(serde_json::from_value(
            json!({ "name": "task_start", "params": { "url": "https://shop.example/" } })
        )
        .unwrap())
    );
    for tool in [
        BrowserTool::Snapshot {
            scope: None,
            within: None,
        },
        BrowserTool::Click {
            click_id: 1,
            checked: None,
        },
        BrowserTool::NavigateBack,
    ] {
        let problem = tool.command(false, &[]).expect_err("no page yet");
        assert!(problem.contains("call browser_navigate first"), "{problem}");
    }
}

#[test]
fn arguments_that_cannot_be_used_are_tool_errors_naming_the_problem() {
    let cases = [
        ("browser_navigate", json!({}), "url"),
        ("browser_navigate", json!({ "url": "  " }), "empty"),
        (
            "browser_navigate",
            json!({ "url": "https://a.example", "x": 1 }),
            "Additional properties",
        ),
        (
            "browser_snapshot",
            json!({ "selector": "#main" }),
            "Additional properties",
        ),
        // A region is named by its ref, never by a selector the page could answer for.
        (
            "browser_snapshot",
            json!({ "target": "#main" }),
            "is not an element's number",
        ),
        ("browser_click", json!({}), "ref"),
        (
            "browser_click",
            json!({ "ref": "e12" }),
            "not an element's number",
        ),
        (
            "browser_click",
            json!({ "ref": -1 }),
            "not an element's number",
        ),
        ("browser_click", json!({ "ref": true }), "is not of types"),
        ("browser_type", json!({ "ref": "1" }), "text"),
        (
            "browser_type",
            json!({ "ref": "1", "text": 5 }),
            r#"at /text: 5 is not of type "string""#,
        ),
        ("browser_press_key", json!({ "key": " " }), "empty"),
        (
            "browser_select_option",
            json!({ "ref": "1", "values": [] }),
            "has less than",
        ),
        (
            "browser_select_option",
            json!({ "ref": "1", "values": ["a", "b"] }),
            "has more than",
        ),
        ("browser_wait_for", json!({}), "has less than"),
        (
            "browser_wait_for",
            json!({ "text": "a", "url": "b" }),
            "has more than",
        ),
        (
            "browser_wait_for",
            json!({ "time": 3 }),
            "Additional properties",
        ),
    ];
    for (name, arguments, says) in cases {
        let problem = call(name, arguments.clone()).expect_err(name);
        assert!(problem.contains(says), "{name} {arguments}: {problem}");
    }
}

fn record(
    command: ActionCommand,
    state: ActionState,
    outcome: Option<ActionOutcome>,
) -> ActionRecord {
    serde_json::from_value(json!({
        "actionId": "act_1", "taskId": "t", "clientId": "c", "command": command,
        "state": state, "attempt": 1, "createdAt": 0, "outcome": outcome
    }))
    .unwrap()
}

fn outcome(
    status: ActionStatus,
    result: serde_json::Value,
    error: Option<ErrorObject>,
) -> ActionOutcome {
    serde_json::from_value(json!({
        "actionId": "act_1", "attempt": 1, "taskId": "t",
        "status": status, "result": result, "error": error
    }))
    .unwrap()
}

fn text_of(answer: ToolReply) -> (String, bool) {
    let ToolReply::Result(CallToolResult {
        content, is_error, ..
    }) = answer
    else {
        panic!("not a result: {answer:?}")
    };
    let text = content
        .into_iter()
        .map(|c| match c {
            Content::Text { text } => text,
            Content::Image { .. } => panic!("an image"),
        })
        .collect::<Vec<_>>()
        .join("\n");
    (text, is_error)
}

#[test]
fn outcomes_answer_as_tool_results() {
    let snapshot = BrowserTool::Snapshot {
        scope: None,
        within: None,
    };
    let index = json!({
        "elements": [], "url": "https://shop.example/", "title": "Shop",
        "text": "[1]<button>Buy</button>\n[2]<input placeholder=Name>",
        "tabs": [
            { "tabId": 1, "url": "https://shop.example/", "title": "Shop", "current": true },
            { "tabId": 2, "url": "https://shop.example/help", "title": "Help", "current": false }
        ]
    });
    let done = record(
        snapshot.command(true, &[]).unwrap(),
        ActionState::Succeeded,
        Some(outcome(ActionStatus::Ok, index, None)),
    );
    let (text, is_error) = text_of(snapshot.reply(&done));
    assert!(!is_error);
    assert!(
        text.starts_with("Page URL: https://shop.example/\nPage title: Shop\n"),
        "{text}"
    );
    assert!(
        text.contains("- 1: https://shop.example/help — Help\n"),
        "{text}"
    );
    assert!(
        text.ends_with("[1]<button>Buy</button>\n[2]<input placeholder=Name>"),
        "{text}"
    );

    let click = BrowserTool::Click {
        click_id: 1,
        checked: None,
    };
    let mut clicked = outcome(ActionStatus::Ok, json!({}), None);
    clicked.warnings = vec!["clicked with DOM events".into()];
    let (text, is_error) = text_of(click.reply(&record(
        click.command(true, &[]).unwrap(),
        ActionState::Succeeded,
        Some(clicked),
    )));
    assert!(!is_error);
    assert_eq!(text, "Clicked [1]\nWarning: clicked with DOM events");

    let failed = outcome(
        ActionStatus::Error,
        serde_json::Value::Null,
        Some(ErrorObject::new(
            ErrorCode::TargetNotFound,
            "no element [1]",
        )),
    );
    let (text, is_error) = text_of(click.reply(&record(
        click.command(true, &[]).unwrap(),
        ActionState::Failed,
        Some(failed),
    )));
    assert!(is_error);
    assert_eq!(text, "TARGET_NOT_FOUND: no element [1]");

    // Still running when the wait ended: said, not waited for.
    let (text, is_error) = text_of(click.reply(&record(
        click.command(true, &[]).unwrap(),
        ActionState::Acked,
        None,
    )));
    assert!(is_error);
    assert!(text.contains("has not finished yet"), "{text}");
    let (text, is_error) = text_of(click.reply(&record(
        click.command(true, &[]).unwrap(),
        ActionState::TimedOut,
        None,
    )));
    assert!(is_error);
    assert!(text.contains("ended TimedOut without an outcome"), "{text}");
}

#[test]
fn a_screenshot_answers_with_its_image() {
    let shot = BrowserTool::TakeScreenshot { full_page: false };
    let result =
        json!({ "artifactId": "a1", "url": "https://shop.example/", "width": 800, "height": 600 });
    let answer = shot.reply(&record(
        shot.command(true, &[]).unwrap(),
        ActionState::Succeeded,
        Some(outcome(ActionStatus::Ok, result, None)),
    ));
    let ToolReply::Image(taken) = answer else {
        panic!("{answer:?}")
    };
    assert_eq!(taken.artifact_id, "a1");
    let result = tools::screenshot_result(&taken, "iVBORw0KGgo=".into(), "image/png");
    assert!(!result.is_error);
    assert_eq!(
        result.content[1],
        Content::Image {
            data: "iVBORw0KGgo=".into(),
            mime_type: "image/png".into()
        }
    );
}

#[test]
fn a_step_the_task_refuses_is_a_tool_error_and_one_needing_the_person_says_where() {
    let held = tools::refused(&ErrorObject::new(
        ErrorCode::ConfirmationRequired,
        "this action needs the person's confirmation (it sends a form to another site)",
    ));
    assert!(held.is_error);
    let Content::Text { text } = &held.content[0] else {
        panic!()
    };
    assert!(
        text.contains("waits for the person's confirmation"),
        "{text}"
    );
    assert!(text.contains("Mimo's web app"), "{text}");
    let blocked = tools::refused(&ErrorObject::new(
        ErrorCode::PermissionDenied,
        "https://evil.example/ is on a blocked domain",
    ));
    assert!(blocked.is_error);
    assert_eq!(
        blocked.content[0],
        Content::Text {
            text: "Not done: PERMISSION_DENIED: https://evil.example/ is on a blocked domain"
                .into()
        }
    );
}

#[test]
fn tabs_are_named_by_their_index_in_the_latest_list() {
    let tabs = [41, 42, 43];
    let cases = [
        (
            json!({ "action": "list" }),
            json!({ "name": "browser_dom_index", "params": {} }),
        ),
        (
            json!({ "action": "new", "url": "https://shop.example/" }),
            json!({ "name": "browser_open_tab", "params": { "url": "https://shop.example/" } }),
        ),
        (
            json!({ "action": "select", "index": 2 }),
            json!({ "name": "browser_switch_tab", "params": { "tabId": 43 } }),
        ),
        (
            json!({ "action": "close", "index": 0 }),
            json!({ "name": "browser_close_tab", "params": { "tabId": 41 } }),
        ),
        (
            json!({ "action": "close" }),
            json!({ "name": "browser_close_tab", "params": {} }),
        ),
    ];
    for (arguments, expected) in cases {
        let tool = call("browser_tabs", arguments.clone()).expect("reads");
        let expected: ActionCommand = serde_json::from_value(expected).unwrap();
        assert_eq!(tool.command(true, &tabs), Ok(expected), "{arguments}");
    }
    let beyond = call("browser_tabs", json!({ "action": "select", "index": 3 })).unwrap();
    assert!(beyond
        .command(true, &tabs)
        .unwrap_err()
        .contains("no tab 3 in the latest list (3 tabs)"));
    for (arguments, says) in [
        (
            json!({ "action": "select" }),
            "select names the tab's `index`",
        ),
        (json!({ "action": "new" }), "`url` is empty"),
        (json!({ "action": "reload" }), "at /action"),
        (json!({ "action": "select", "index": -1 }), "at /index"),
    ] {
        let problem = call("browser_tabs", arguments.clone()).unwrap_err();
        assert!(problem.contains(says), "{arguments}: {problem}");
    }
}

#[test]
fn a_tab_answer_lists_the_tabs_by_index() {
    let tabs = BrowserTool::Tabs(tools::TabsAction::New {
        url: "https://shop.example/help".into(),
    });
    let result = json!({
        "tabId": 42, "url": "https://shop.example/help", "title": "Help",
        "tabs": [
            { "tabId": 41, "url": "https://shop.example/", "title": "Shop", "current": false },
            { "tabId": 42, "url": "https://shop.example/help", "title": "Help", "current": true }
        ]
    });
    let opened = record(
        tabs.command(true, &[]).unwrap(),
        ActionState::Succeeded,
        Some(outcome(ActionStatus::Ok, result, None)),
    );
    let (text, is_error) = text_of(tabs.reply(&opened));
    assert!(!is_error);
    assert_eq!(
        text,
        "Tabs (index: URL — title):\n- 0: https://shop.example/ — Shop\n- 1 (current): \
         https://shop.example/help — Help"
    );
    assert_eq!(
        tools::task_tabs(&opened)
            .iter()
            .map(|t| t.tab_id)
            .collect::<Vec<_>>(),
        [41, 42]
    );
    // An element list of a task with one tab lists that tab.
    let list = BrowserTool::Tabs(tools::TabsAction::List);
    let mut indexed = outcome(
        ActionStatus::Ok,
        json!({ "elements": [], "text": "", "url": "https://shop.example/", "title": "Shop", "tabs": [] }),
        None,
    );
    indexed.tab_id = Some(41);
    let (text, _) = text_of(list.reply(&record(
        list.command(true, &[]).unwrap(),
        ActionState::Succeeded,
        Some(indexed),
    )));
    assert_eq!(
        text,
        "Tabs (index: URL — title):\n- 0 (current): https://shop.example/ — Shop"
    );
}

/// How `value` differs from the definition `name` of the specification's schema (its part
/// Mimo uses).
fn against_spec(name: &str, value: &serde_json::Value) -> Vec<crate::json_schema::Mismatch> {
    let mut schema: serde_json::Value =
        serde_json::from_str(include_str!("spec-2025-11-25.json")).unwrap();
    schema["$ref"] = json!(format!("#/$defs/{name}"));
    assert!(crate::json_schema::check(&schema).is_ok(), "{name}");
    crate::json_schema::validate(&schema, value)
}

fn conforms(name: &str, value: &serde_json::Value) {
    let mismatches = against_spec(name, value);
    assert!(mismatches.is_empty(), "{name}: {mismatches:?}\n{value}");
}

#[test]
fn messages_conform_to_the_specifications_schema() {
    for version in mimo_protocol::mcp::SUPPORTED_PROTOCOL_VERSIONS {
        conforms("InitializeResult", &json!(initialize_result(version)));
    }
    conforms("ListToolsResult", &tools::list());
    let shot = mimo_protocol::action::ScreenshotResult {
        artifact_id: "a1".into(),
        url: "https://shop.example/".into(),
        width: 800,
        height: 600,
        scale: None,
    };
    for result in [
        CallToolResult::text("Clicked [1]"),
        CallToolResult::error("TARGET_NOT_FOUND: no element [1]"),
        tools::screenshot_result(&shot, "iVBORw0KGgo=".into(), "image/png"),
    ] {
        conforms("CallToolResult", &json!(result));
    }
    let ok = mimo_protocol::mcp::JsonRpcResponse::new(
        RequestId::String("a".into()),
        &mimo_protocol::mcp::EmptyResult {},
    );
    conforms("JSONRPCResultResponse", &json!(ok));
    for body in ["{", r#"{"jsonrpc":"2.0","id":3,"method":"nope"}"#] {
        let error = read(body.as_bytes()).unwrap_err();
        conforms("JSONRPCErrorResponse", &json!(error));
    }
    // The check bites: JSON-RPC's null id, which MCP's schema does not allow, and a tool
    // result without its content.
    let null_id =
        json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32700, "message": "x" } });
    assert!(!against_spec("JSONRPCErrorResponse", &null_id).is_empty());
    assert!(!against_spec("CallToolResult", &json!({ "isError": true })).is_empty());
    // What Mimo reads, as a client sends it, reads as the specification describes it.
    let params = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": { "elicitation": {} },
        "clientInfo": { "name": "client", "version": "1" }
    });
    conforms("InitializeRequestParams", &params);
    let call = json!({ "name": "browser_click", "arguments": { "ref": "1" } });
    conforms("CallToolRequestParams", &call);
    // The server's question to the person, and their answers as a client sends them.
    for version in mimo_protocol::mcp::SUPPORTED_PROTOCOL_VERSIONS {
        let ask = elicit::request(RequestId::String("e-1".into()), version, "“Delete account”");
        conforms("ElicitRequest", &json!(ask));
    }
    conforms(
        "ElicitResult",
        &json!({ "action": "accept", "content": { "approve": true } }),
    );
    conforms("ElicitResult", &json!({ "action": "decline" }));
    assert!(!against_spec("ElicitRequest", &json!({ "jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": { "message": "x", "requestedSchema": { "type": "object", "properties": { "a": { "type": "object" } } } } })).is_empty());
}

/// The form's fields in order, each the one step that fills it.
fn form(fields: serde_json::Value) -> Result<Vec<tools::FormField>, String> {
    match called("browser_fill_form", json!({ "fields": fields }))? {
        Tool::Form(fields) => Ok(fields),
        other => panic!("not a form: {other:?}"),
    }
}

#[test]
fn a_form_is_filled_one_step_per_field_in_order() {
    let fields = form(json!([
        { "name": "Name", "type": "textbox", "ref": "3", "value": "Ada Lovelace" },
        { "name": "Newsletter", "type": "checkbox", "ref": "[4]", "value": "False" },
        { "name": "Terms", "type": "checkbox", "ref": 5, "value": "true" },
        { "name": "Express", "type": "radio", "ref": "6", "value": "true" },
        { "name": "Country", "type": "combobox", "ref": "7", "value": "France" },
        { "name": "Volume", "type": "slider", "ref": "8", "value": "40" }
    ]))
    .expect("read");
    let steps: Vec<serde_json::Value> = fields
        .iter()
        .map(|f| serde_json::to_value(f.step.command(true, &[]).unwrap()).unwrap())
        .collect();
    assert_eq!(
        steps,
        [
            json!({ "name": "browser_type", "params": { "clickId": 3, "text": "Ada Lovelace" } }),
            json!({ "name": "browser_click", "params": { "clickId": 4, "checked": false } }),
            json!({ "name": "browser_click", "params": { "clickId": 5, "checked": true } }),
            json!({ "name": "browser_click", "params": { "clickId": 6, "checked": true } }),
            json!({ "name": "browser_select_option", "params": { "clickId": 7, "option": "France" } }),
            json!({ "name": "browser_type", "params": { "clickId": 8, "text": "40" } }),
        ]
    );
    assert_eq!(fields[1].name, "Newsletter");

    // What cannot be done is said before anything runs.
    let radio =
        form(json!([{ "name": "Standard", "type": "radio", "ref": "6", "value": "false" }]));
    assert!(radio
        .expect_err("refused")
        .contains("choosing another of its group"));
    let unclear =
        form(json!([{ "name": "Terms", "type": "checkbox", "ref": "5", "value": "yes" }]));
    assert!(unclear
        .expect_err("refused")
        .contains("takes `true` or `false`"));
    for bad in [
        json!([]),
        json!([{ "name": "Name", "type": "date", "ref": "3", "value": "x" }]),
        json!([{ "name": "Name", "type": "textbox", "value": "x" }]),
        json!([{ "name": "Name", "type": "textbox", "ref": "three", "value": "x" }]),
    ] {
        assert!(form(bad.clone()).is_err(), "{bad}");
    }
}

#[test]
fn a_box_already_as_asked_is_said_to_be_so() {
    let tick = BrowserTool::Click {
        click_id: 5,
        checked: Some(true),
    };
    let answered = |result: serde_json::Value| {
        let done = record(
            tick.command(true, &[]).unwrap(),
            ActionState::Succeeded,
            Some(outcome(ActionStatus::Ok, result, None)),
        );
        text_of(tick.reply(&done))
    };
    assert_eq!(
        answered(json!({ "clicked": false, "checked": true })),
        ("[5] was ticked already".to_owned(), false)
    );
    assert_eq!(
        answered(json!({ "clicked": true, "strategy": "cdp_mouse" })),
        ("Clicked [5]: it is ticked".to_owned(), false)
    );
}

#[test]
fn a_form_answers_each_field_and_where_it_stopped() {
    let filled = vec![
        ("Name".to_owned(), CallToolResult::text("Typed into [3]")),
        (
            "Terms".to_owned(),
            CallToolResult::text("[5] was ticked already"),
        ),
    ];
    let all = tools::form_answer(&filled, None);
    assert!(!all.is_error);
    assert_eq!(
        text_of(ToolReply::Result(all)).0,
        "Filled 2 fields\nName: Typed into [3]\nTerms: [5] was ticked already"
    );

    let failed = tools::form_answer(
        &filled[..1],
        Some((
            "Country",
            tools::FormStop::Failed(CallToolResult::error(
                "TARGET_NOT_FOUND: no option \"Narnia\"",
            )),
        )),
    );
    assert!(failed.is_error);
    let (text, _) = text_of(ToolReply::Result(failed));
    assert!(text.starts_with("Filled 1 fields, then stopped at \"Country\"\nName: Typed into [3]\nCountry: TARGET_NOT_FOUND"), "{text}");
    assert!(
        text.ends_with("The fields after it were not filled."),
        "{text}"
    );

    let asked = tools::form_answer(
        &[],
        Some((
            "Password",
            tools::FormStop::NeedsPerson("typing a password into a form for another site".into()),
        )),
    );
    assert!(asked.is_error);
    let (text, _) = text_of(ToolReply::Result(asked));
    assert!(
        text.contains("Password: not done, it needs the person's confirmation (typing a password"),
        "{text}"
    );
    assert!(
        text.contains("browser_type, browser_click or browser_select_option, which ask them"),
        "{text}"
    );
}

#[test]
fn a_file_to_upload_comes_inside_the_call() {
    let upload = |arguments: serde_json::Value| called("browser_file_upload", arguments);
    let Tool::Upload { click_id, file } = upload(json!({
        "ref": "[9]", "element": "Invoice field", "name": "invoice.pdf",
        "mimeType": "application/pdf", "data": "JVBE\nRi0x"
    }))
    .expect("read") else {
        panic!("not an upload")
    };
    assert_eq!(click_id, 9);
    assert_eq!(file.name, "invoice.pdf");
    assert_eq!(file.content_type, "application/pdf");
    assert_eq!(file.bytes, b"%PDF-1");
    // Its bytes are not written out where the tool is logged.
    assert!(!format!("{file:?}").contains("37, 80"), "{file:?}");

    let bad = |name: &str, data: &str| {
        upload(json!({ "ref": "9", "name": name, "mimeType": "text/plain", "data": data }))
            .expect_err("refused")
    };
    assert!(bad("../etc/passwd", "aGk=").contains("is not a file name"));
    assert!(bad("notes.txt", "not base64!").contains("`data` is not base64"));

    // Stored, it is the catalog's upload of that artifact.
    let step = tools::BrowserTool::UploadFile {
        click_id: 9,
        artifact_id: "art-1".into(),
        name: "invoice.pdf".into(),
        content_type: "application/pdf".into(),
    };
    assert_eq!(
        serde_json::to_value(step.command(true, &[]).unwrap()).unwrap(),
        json!({ "name": "browser_upload_file", "params": { "clickId": 9, "artifactId": "art-1", "name": "invoice.pdf", "contentType": "application/pdf" } })
    );
}

#[test]
fn a_progress_streams_event_id_carries_where_it_stands_and_nothing_else_reads_as_one() {
    let point = runs::StreamPoint {
        task_id: "5f0c2d8e-6a4b-4c1e-9d3f-2b7a8c9e0f11".into(),
        id: RequestId::Number(7),
        token: RequestId::String("tok".into()),
        after: 2,
        deadline: 1_000,
    };
    let id = point.event_id();
    // One line of URL-safe characters: an SSE id field.
    assert!(id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    assert_eq!(runs::StreamPoint::parse(&id), Some(point.clone()));
    assert_eq!(
        runs::StreamPoint::parse(&point.at(3).event_id())
            .unwrap()
            .after,
        3
    );
    for other in ["", "run-", "run-!!", "42", &id[4..], "run-e30"] {
        assert_eq!(runs::StreamPoint::parse(other), None, "{other}");
    }
}

#[test]
fn a_snapshot_reads_the_page_in_view_the_whole_page_or_one_region() {
    let snapshot =
        |arguments: Value| match tools::parse("browser_snapshot", arguments.as_object().cloned()) {
            Some(Ok(Tool::Browser(tool))) => tool.command(true, &[]).map_err(|e| e.to_string()),
            other => Err(format!("{other:?}")),
        };
    let index = |scope: Option<&str>, within: Option<u32>| {
        let mut params = json!({});
        if let Some(scope) = scope {
            params["scope"] = json!(scope);
        }
        if let Some(within) = within {
            params["within"] = json!(within);
        }
        serde_json::from_value::<ActionCommand>(
            json!({ "name": "browser_dom_index", "params": params }),
        )
        .unwrap()
    };
    assert_eq!(snapshot(json!({})), Ok(index(None, None)));
    assert_eq!(
        snapshot(json!({ "scope": "document" })),
        Ok(index(Some("document"), None))
    );
    // A region is read as far as it reaches, unless the client says otherwise.
    assert_eq!(
        snapshot(json!({ "target": "12" })),
        Ok(index(Some("document"), Some(12)))
    );
    assert_eq!(
        snapshot(json!({ "target": "[12]", "scope": "viewport" })),
        Ok(index(Some("viewport"), Some(12)))
    );
    for bad in [json!({ "scope": "page" }), json!({ "target": "the list" })] {
        assert!(
            matches!(
                tools::parse("browser_snapshot", bad.as_object().cloned()),
                Some(Err(_))
            ),
            "{bad}"
        );
    }
    // Its answer says that the rest of the page's refs are gone.
    let region = BrowserTool::Snapshot {
        scope: None,
        within: Some(12),
    };
    let done = record(
        region.command(true, &[]).unwrap(),
        ActionState::Succeeded,
        Some(outcome(
            ActionStatus::Ok,
            json!({ "elements": [], "url": "u", "title": "t", "text": "[1]<button>Item 1</button>" }),
            None,
        )),
    );
    let (text, _) = text_of(region.reply(&done));
    assert!(
        text.starts_with("(Only what was [12]; the refs of the rest are forgotten"),
        "{text}"
    );
    assert!(text.ends_with("[1]<button>Item 1</button>"), "{text}");
}

#[test]
fn a_runs_state_counts_its_finished_steps_and_ends_with_its_last_output_once_done() {
    let event = |seq: u64, event: Value| -> mimo_protocol::EventEnvelope {
        let mut envelope = json!({ "seq": seq, "taskId": "t", "at": seq });
        envelope
            .as_object_mut()
            .unwrap()
            .extend(event.as_object().unwrap().clone());
        serde_json::from_value(envelope).expect("an event")
    };
    let step = |seq, step, phase: &str| {
        event(
            seq,
            json!({ "type": "toolUsed", "step": step, "toolCallId": format!("c{step}"), "phase": phase, "action": { "click": { "index": step } } }),
        )
    };
    let output = |seq, status: &str, text: &str| {
        event(
            seq,
            json!({ "type": "structuredOutput", "status": status, "output": { "text": text } }),
        )
    };
    let history = [
        step(1, 1, "start"),
        step(2, 1, "end"),
        output(3, "partial", "first run"),
        step(4, 2, "start"),
        step(5, 2, "end"),
        output(6, "ok", "second run"),
    ];
    // Steps count once each, at their end; the last one in words.
    let running = runs::RunState::of(TaskStatus::Running, Some("Buy".into()), &history[..4]);
    assert_eq!(running.steps, 1);
    assert_eq!(
        running.last_step.as_deref(),
        Some("Step 1: click {\"index\":1}")
    );
    // An output while the task runs again (another message) is not the end of its run.
    assert_eq!(running.ended, None);
    let done = runs::RunState::of(TaskStatus::Completed, None, &history);
    assert_eq!(done.steps, 2);
    let ended = done.ended.expect("ended");
    assert_eq!(ended.status, mimo_protocol::frontend::OutputStatus::Ok);
    assert_eq!(ended.output, Some(json!({ "text": "second run" })));
    assert_eq!(
        runs::RunState::of(TaskStatus::Created, None, &[]),
        runs::RunState {
            status: TaskStatus::Created,
            title: None,
            steps: 0,
            last_step: None,
            ended: None
        }
    );
}
