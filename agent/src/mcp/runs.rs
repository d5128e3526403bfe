//! The tools that run Mimo's own agent rather than one browser action — `run_task`,
//! `get_task`, `cancel_task`, `list_tasks` — as the web app runs it: a new task given the goal
//! as the person's message, with the same confirmations, site rules, secrets and audit. What
//! each asks of the session's tasks, and what it answers from where a task stands.

use mimo_protocol::frontend::OutputStatus;
use mimo_protocol::mcp::{CallToolResult, JsonRpcNotification, RequestId, JSONRPC_VERSION};
use mimo_protocol::{
    AgentAction, ErrorObject, EventEnvelope, FrontendEvent, TaskStatus, ToolPhase,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How long `run_task` waits for its run to end when not told: MCP clients give up on a call
/// after about a minute.
pub const RUN_WAIT_SECONDS: u32 = 50;

/// A tool call about the session's runs, its arguments read.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskTool {
    Run {
        goal: String,
        answer_schema: Option<Value>,
        wait_seconds: u32,
    },
    Get {
        task_id: String,
        wait_seconds: u32,
    },
    Cancel {
        task_id: String,
    },
    List,
}

/// A task the session ran, as it keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRun {
    pub task_id: String,
    /// Whether its answer has a schema: then it comes as `structuredContent` too.
    #[serde(default)]
    pub structured: bool,
}

/// Where a task stands, as its coordinator answers: its status and title, and how its last
/// run ended, once it has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunState {
    pub status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// How many steps the task has finished, and the last of them in words.
    #[serde(default)]
    pub steps: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_step: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<RunEnd>,
}

/// How a run ended: the task's `structuredOutput`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunEnd {
    pub status: OutputStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// The tool `name` with its `arguments` (checked against its schema already), or `None` when
/// it is not one of these.
pub fn read(name: &str, arguments: &Value) -> Option<Result<TaskTool, String>> {
    let text = |key: &str| arguments.get(key).and_then(Value::as_str).map(str::trim);
    let wait = |default: u32| {
        arguments
            .get("waitSeconds")
            .and_then(Value::as_u64)
            .map_or(default, |s| s as u32)
    };
    let task_id = || match text("taskId") {
        Some(id) if !id.is_empty() => Ok(id.to_owned()),
        _ => Err(format!("{name}: `taskId` is empty")),
    };
    Some(match name {
        "run_task" => match text("goal") {
            Some(goal) if !goal.is_empty() => Ok(TaskTool::Run {
                goal: goal.to_owned(),
                answer_schema: arguments.get("answerSchema").cloned(),
                wait_seconds: wait(RUN_WAIT_SECONDS),
            }),
            _ => Err("run_task: `goal` is empty".into()),
        },
        "get_task" => task_id().map(|task_id| TaskTool::Get {
            task_id,
            wait_seconds: wait(0),
        }),
        "cancel_task" => task_id().map(|task_id| TaskTool::Cancel { task_id }),
        "list_tasks" => Ok(TaskTool::List),
        _ => return None,
    })
}

/// The session's run of `task_id`, if it ran one: a session reaches only the tasks it started.
pub fn run_of<'a>(runs: &'a [SessionRun], task_id: &str) -> Result<&'a SessionRun, String> {
    runs.iter().find(|r| r.task_id == task_id).ok_or_else(|| {
        format!("no task {task_id} was run in this session (list_tasks lists those that were)")
    })
}

/// Where a status leaves a run that has not ended, in words.
fn standing(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Created => "starting",
        TaskStatus::Running | TaskStatus::Ongoing => "still running",
        TaskStatus::WaitingConfirmation => {
            "waiting for the person to confirm a step in Mimo's web app or side panel"
        }
        TaskStatus::WaitingPermission => {
            "waiting for the person to allow a site for Mimo in their browser"
        }
        TaskStatus::Takeover => "held by the person, who took the browser over",
        TaskStatus::Paused => "paused by the person",
        TaskStatus::Completed => "completed",
        TaskStatus::Error => "failed",
        TaskStatus::Canceled => "canceled",
    }
}

/// What `run_task` and `get_task` answer about the session's `run` as it stands.
pub fn answer(run: &SessionRun, state: &RunState) -> CallToolResult {
    let task_id = &run.task_id;
    let Some(end) = &state.ended else {
        let mut result = CallToolResult::text(format!(
            "Task {task_id} is {}. Call get_task with this taskId (and waitSeconds) to wait for \
             its result, or cancel_task to stop it.",
            standing(state.status)
        ));
        // A run the person canceled before it said anything ended all the same.
        result.is_error = state.status == TaskStatus::Canceled;
        return result;
    };
    if end.status == OutputStatus::Error {
        let why = end
            .error
            .as_ref()
            .map_or("no reason given".to_owned(), |e| {
                format!("{}: {}", e.code.as_str(), e.message)
            });
        return CallToolResult::error(format!("Task {task_id} failed: {why}"));
    }
    // A run's output is its answer (`text`, the schema's `data`, its `steps`…); a chat reply's
    // is its text.
    let output = end.output.as_ref();
    let field = |key: &str| output.and_then(|o| o.get(key));
    let answer = match output {
        Some(Value::String(text)) => text.clone(),
        Some(o) if field("text").is_some_and(Value::is_string) => {
            o["text"].as_str().unwrap_or_default().to_owned()
        }
        Some(other) => serde_json::to_string_pretty(other).unwrap_or_default(),
        None => String::new(),
    };
    let how = if end.status == OutputStatus::Partial {
        "finished with part of what was asked"
    } else {
        "finished"
    };
    let steps = match field("steps").and_then(Value::as_u64) {
        Some(1) => " in 1 step".to_owned(),
        Some(n) => format!(" in {n} steps"),
        None => String::new(),
    };
    let mut text = format!("Task {task_id} {how}{steps}.");
    if !answer.is_empty() {
        text.push_str("\n\n");
        text.push_str(&answer);
    }
    let data = field("data").filter(|d| !d.is_null());
    if let Some(data) = data {
        text.push_str("\n\n");
        text.push_str(&serde_json::to_string_pretty(data).unwrap_or_default());
    }
    for warning in &end.warnings {
        text.push_str(&format!("\nNote: {warning}"));
    }
    let mut result = CallToolResult::text(text);
    // structuredContent is a JSON object; an answer of another shape is in the text only.
    if run.structured {
        result.structured_content = data.filter(|d| d.is_object()).cloned();
    }
    result
}

/// What `list_tasks` answers: the session's runs, newest first, each as it stands (`None`:
/// could not be read).
pub fn listing(runs: &[(SessionRun, Option<RunState>)]) -> CallToolResult {
    if runs.is_empty() {
        return CallToolResult::text("No task was run in this session yet (run_task runs one).");
    }
    let lines: Vec<String> = runs
        .iter()
        .rev()
        .map(|(run, state)| match state {
            Some(state) => format!(
                "- {}: {}{}",
                run.task_id,
                match &state.ended {
                    Some(end) if end.status == OutputStatus::Error => "failed",
                    Some(_) => "finished",
                    None => standing(state.status),
                },
                state
                    .title
                    .as_deref()
                    .map(|t| format!(" — {t}"))
                    .unwrap_or_default()
            ),
            None => format!("- {}: could not be read just now", run.task_id),
        })
        .collect();
    CallToolResult::text(format!("Tasks run in this session:\n{}", lines.join("\n")))
}

impl RunState {
    /// Where a task of `status` and `title` stands, read from its `history`: its finished
    /// steps, and how its run ended once it has (its last structured output, once the task is
    /// done; a task given another message runs again, and an output before then is not its
    /// end).
    pub fn of(status: TaskStatus, title: Option<String>, history: &[EventEnvelope]) -> RunState {
        let mut state = RunState {
            status,
            title,
            steps: 0,
            last_step: None,
            ended: None,
        };
        for envelope in history {
            match &envelope.event {
                FrontendEvent::ToolUsed {
                    step,
                    phase: ToolPhase::End,
                    action,
                    ..
                } => {
                    state.steps += 1;
                    state.last_step = Some(step_words(*step, action));
                }
                FrontendEvent::StructuredOutput {
                    status,
                    output,
                    error,
                    warnings,
                } if state.status.is_terminal() => {
                    state.ended = Some(RunEnd {
                        status: *status,
                        output: output.clone(),
                        error: error.clone(),
                        warnings: warnings.clone(),
                    })
                }
                _ => {}
            }
        }
        state
    }
}

/// A finished step in words, for progress: the action and what it was given, cut short.
pub fn step_words(step: u32, action: &AgentAction) -> String {
    let value = serde_json::to_value(action).unwrap_or(Value::Null);
    // An action is `{"<name>": {…its arguments}}`.
    let arguments = value
        .as_object()
        .and_then(|o| o.values().next())
        .map(Value::to_string)
        .unwrap_or_default();
    let mut words = format!("Step {step}: {} {arguments}", action.name());
    if words.chars().count() > 160 {
        words = words.chars().take(159).collect::<String>() + "…";
    }
    words.trim_end().to_owned()
}

/// The `notifications/progress` for the client's `token`: the steps the run has finished
/// (the count only grows, as the specification asks), the last one in words.
/// Where a call's progress stream stands, carried by its events' ids: a client whose stream
/// dropped asks for the rest with the last id it saw (`GET /mcp`, `Last-Event-ID`), and the
/// stream goes on from there — the run's state says what came since, so nothing is kept for
/// it. The id names only a run of the session it is sent in (the session checks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamPoint {
    /// The run's task.
    #[serde(rename = "t")]
    pub task_id: String,
    /// The call's request id, which its answer carries.
    #[serde(rename = "i")]
    pub id: RequestId,
    /// Its progress token.
    #[serde(rename = "p")]
    pub token: RequestId,
    /// The steps the client has heard of.
    #[serde(rename = "s")]
    pub after: u32,
    /// When the call's wait ends (ms since the epoch).
    #[serde(rename = "d")]
    pub deadline: u64,
}

const STREAM_POINT_PREFIX: &str = "run-";

impl StreamPoint {
    /// The point as an SSE event id (one line of URL-safe characters).
    pub fn event_id(&self) -> String {
        use base64::Engine as _;
        let json = serde_json::to_vec(self).expect("a stream point serializes");
        let coded = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json);
        format!("{STREAM_POINT_PREFIX}{coded}")
    }

    /// The point an event id names, if it is one.
    pub fn parse(event_id: &str) -> Option<Self> {
        use base64::Engine as _;
        let coded = event_id.trim().strip_prefix(STREAM_POINT_PREFIX)?;
        let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(coded)
            .ok()?;
        serde_json::from_slice(&json).ok()
    }

    /// The same stream, `steps` heard of.
    pub fn at(&self, steps: u32) -> Self {
        Self {
            after: steps,
            ..self.clone()
        }
    }
}

pub fn progress(token: &RequestId, state: &RunState) -> JsonRpcNotification {
    let mut params = serde_json::json!({ "progressToken": token, "progress": state.steps });
    if let Some(step) = &state.last_step {
        params["message"] = Value::String(step.clone());
    }
    JsonRpcNotification {
        jsonrpc: JSONRPC_VERSION.into(),
        method: "notifications/progress".into(),
        params: Some(params),
    }
}
