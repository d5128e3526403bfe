//! The MCP tools, named as Playwright MCP names them so prompts written for it carry over: each
//! one's schema, how its arguments are read, the one browser action it queues on the task (the
//! same queue, consent gate and audit as every other caller's), and what its outcome answers.

use mimo_protocol::action::{DomIndexResult, ScreenshotResult, Target};
use mimo_protocol::mcp::{CallToolResult, Content, Tool, ToolAnnotations};
use mimo_protocol::{ActionCommand, ActionOutcome, ActionStatus, ErrorCode, ErrorObject};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::actions::ActionRecord;

/// A tool call with its arguments read.
#[derive(Debug, Clone, PartialEq)]
pub enum BrowserTool {
    Navigate {
        url: String,
    },
    NavigateBack,
    Snapshot,
    Click {
        click_id: u32,
    },
    Type {
        click_id: u32,
        text: String,
        submit: bool,
    },
    TakeScreenshot {
        full_page: bool,
    },
    PressKey {
        key: String,
    },
    Hover {
        click_id: u32,
    },
    SelectOption {
        click_id: u32,
        option: String,
    },
    WaitFor(WaitForArgs),
}

/// What a tool call answers, once its action ended: its result, or (a screenshot) the artifact
/// whose image the caller reads and hands to [`screenshot_result`].
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Result(CallToolResult),
    Image(ScreenshotResult),
}

/// Every tool, as `tools/list` describes it.
pub fn list() -> Vec<Tool> {
    let element = json!({
        "type": "string",
        "description": "What the element is, in words, for the person reading the log."
    });
    let reference = json!({
        "type": "string",
        "description": "The element's number in browser_snapshot's list (the [N] before it)."
    });
    let tool = |name: &str, title: &str, description: &str, schema: Value, read_only: bool| Tool {
        name: name.to_owned(),
        title: Some(title.to_owned()),
        description: description.to_owned(),
        input_schema: schema,
        annotations: Some(ToolAnnotations {
            title: Some(title.to_owned()),
            read_only_hint: Some(read_only),
            destructive_hint: (!read_only).then_some(false),
            idempotent_hint: None,
            open_world_hint: Some(true),
        }),
    };
    let object = |properties: Value, required: &[&str]| {
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        })
    };
    vec![
        tool(
            "browser_navigate",
            "Navigate to a URL",
            "Open a URL in the task's tab of the person's browser.",
            object(
                json!({ "url": { "type": "string", "description": "The URL to open." } }),
                &["url"],
            ),
            false,
        ),
        tool(
            "browser_navigate_back",
            "Go back",
            "Go back to the previous page.",
            object(json!({}), &[]),
            false,
        ),
        tool(
            "browser_snapshot",
            "Page snapshot",
            "The page's interactive elements as text, one per line, each numbered [N]: that \
             number is the `ref` of browser_click, browser_type, browser_hover and \
             browser_select_option. Take a new one after the page changes.",
            object(json!({}), &[]),
            true,
        ),
        tool(
            "browser_click",
            "Click",
            "Click an element of the latest snapshot.",
            object(json!({ "element": element, "ref": reference }), &["ref"]),
            false,
        ),
        tool(
            "browser_type",
            "Type text",
            "Type text into an editable element of the latest snapshot.",
            object(
                json!({
                    "element": element,
                    "ref": reference,
                    "text": { "type": "string", "description": "The text to type." },
                    "submit": { "type": "boolean", "description": "Press Enter after typing." }
                }),
                &["ref", "text"],
            ),
            false,
        ),
        tool(
            "browser_take_screenshot",
            "Take a screenshot",
            "A screenshot of the page (PNG or JPEG image content). To act, use \
             browser_snapshot's refs, not the picture.",
            object(
                json!({
                    "fullPage": {
                        "type": "boolean",
                        "description": "The whole scrollable page rather than the viewport."
                    }
                }),
                &[],
            ),
            true,
        ),
        tool(
            "browser_press_key",
            "Press a key",
            "Press a key in the page: a key name such as Enter, Escape, Tab, ArrowDown, or a \
             character, with modifiers as Control+a.",
            object(
                json!({ "key": { "type": "string", "description": "The key to press." } }),
                &["key"],
            ),
            false,
        ),
        tool(
            "browser_hover",
            "Hover",
            "Move the mouse over an element of the latest snapshot.",
            object(json!({ "element": element, "ref": reference }), &["ref"]),
            false,
        ),
        tool(
            "browser_select_option",
            "Select an option",
            "Select an option in a dropdown of the latest snapshot, by its value or label.",
            object(
                json!({
                    "element": element,
                    "ref": reference,
                    "values": {
                        "type": "array",
                        "items": { "type": "string" },
                        "minItems": 1,
                        "maxItems": 1,
                        "description": "The option to select (one)."
                    }
                }),
                &["ref", "values"],
            ),
            false,
        ),
        tool(
            "browser_wait_for",
            "Wait for",
            "Wait until the page shows a text, its URL contains a text, or an element matches \
             a CSS selector (one of them).",
            object(
                json!({
                    "text": { "type": "string", "description": "A text to wait for." },
                    "url": { "type": "string", "description": "Part of the URL to wait for." },
                    "selector": { "type": "string", "description": "A CSS selector to wait for." }
                }),
                &[],
            ),
            true,
        ),
    ]
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NavigateArgs {
    url: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ElementArgs {
    #[serde(rename = "ref")]
    reference: Value,
    /// Playwright MCP's description of the element, for a person's permission prompt: the
    /// `ref` alone names it here.
    #[serde(default, rename = "element")]
    _element: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TypeArgs {
    #[serde(rename = "ref")]
    reference: Value,
    #[serde(default, rename = "element")]
    _element: Option<serde::de::IgnoredAny>,
    text: String,
    #[serde(default)]
    submit: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ScreenshotArgs {
    #[serde(default)]
    full_page: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyArgs {
    key: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SelectArgs {
    #[serde(rename = "ref")]
    reference: Value,
    #[serde(default, rename = "element")]
    _element: Option<serde::de::IgnoredAny>,
    values: Vec<String>,
}

/// `browser_wait_for`'s arguments: exactly one of them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitForArgs {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub selector: Option<String>,
}

/// The tool `name` with its `arguments` read: `None` when there is no such tool, `Err` with
/// what is wrong when the arguments cannot be used.
pub fn parse(
    name: &str,
    arguments: Option<Map<String, Value>>,
) -> Option<Result<BrowserTool, String>> {
    let arguments = Value::Object(arguments.unwrap_or_default());
    let tool = match name {
        "browser_navigate" => args::<NavigateArgs>(name, arguments).and_then(|a| {
            let url = a.url.trim();
            if url.is_empty() {
                return Err(format!("{name}: `url` is empty"));
            }
            Ok(BrowserTool::Navigate {
                url: url.to_owned(),
            })
        }),
        "browser_navigate_back" => {
            args::<NoArgs>(name, arguments).map(|_| BrowserTool::NavigateBack)
        }
        "browser_snapshot" => args::<NoArgs>(name, arguments).map(|_| BrowserTool::Snapshot),
        "browser_click" => args::<ElementArgs>(name, arguments)
            .and_then(|a| click_id(name, &a.reference))
            .map(|click_id| BrowserTool::Click { click_id }),
        "browser_hover" => args::<ElementArgs>(name, arguments)
            .and_then(|a| click_id(name, &a.reference))
            .map(|click_id| BrowserTool::Hover { click_id }),
        "browser_type" => args::<TypeArgs>(name, arguments).and_then(|a| {
            Ok(BrowserTool::Type {
                click_id: click_id(name, &a.reference)?,
                text: a.text,
                submit: a.submit,
            })
        }),
        "browser_take_screenshot" => {
            args::<ScreenshotArgs>(name, arguments).map(|a| BrowserTool::TakeScreenshot {
                full_page: a.full_page,
            })
        }
        "browser_press_key" => args::<KeyArgs>(name, arguments).and_then(|a| {
            if a.key.trim().is_empty() {
                return Err(format!("{name}: `key` is empty"));
            }
            Ok(BrowserTool::PressKey { key: a.key })
        }),
        "browser_select_option" => args::<SelectArgs>(name, arguments).and_then(|a| {
            let click_id = click_id(name, &a.reference)?;
            match <[String; 1]>::try_from(a.values) {
                Ok([option]) => Ok(BrowserTool::SelectOption { click_id, option }),
                Err(values) => Err(format!(
                    "{name}: `values` holds one option (the value or label to select), not {}",
                    values.len()
                )),
            }
        }),
        "browser_wait_for" => args::<WaitForArgs>(name, arguments).and_then(|a| {
            let given = [&a.text, &a.url, &a.selector]
                .iter()
                .filter(|v| v.as_deref().is_some_and(|v| !v.is_empty()))
                .count();
            if given != 1 {
                return Err(format!(
                    "{name}: give exactly one of `text`, `url` and `selector` ({given} given)"
                ));
            }
            Ok(BrowserTool::WaitFor(a))
        }),
        _ => return None,
    };
    Some(tool)
}

fn args<T: DeserializeOwned>(name: &str, arguments: Value) -> Result<T, String> {
    serde_json::from_value(arguments).map_err(|e| format!("{name}'s arguments: {e}"))
}

/// An element's number from a `ref`: `"12"` (Playwright's refs are strings), `"[12]"` as the
/// snapshot shows it, or `12`.
fn click_id(name: &str, reference: &Value) -> Result<u32, String> {
    let number = match reference {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(s) => {
            let s = s.trim();
            let s = s
                .strip_prefix('[')
                .and_then(|s| s.strip_suffix(']'))
                .unwrap_or(s);
            s.parse::<u32>().ok()
        }
        _ => None,
    };
    number.ok_or_else(|| {
        format!(
            "{name}: `ref` {reference} is not an element's number from browser_snapshot (such \
             as \"12\" for the line starting [12])"
        )
    })
}

impl BrowserTool {
    /// The browser action the tool queues on the task, `started` when the task has opened its
    /// tab: the first navigation opens it (in its own window of the person's browser), and
    /// nothing else can run before.
    pub fn command(&self, started: bool) -> Result<ActionCommand, String> {
        if !started {
            let BrowserTool::Navigate { url } = self else {
                return Err(
                    "no page is open for this session yet: call browser_navigate first".into(),
                );
            };
            return Ok(ActionCommand::TaskStart {
                url: Some(url.clone()),
                reuse_existing_tab: None,
                group_title: None,
                adopt_tab_id: None,
                domains: None,
                task_domains: None,
                redaction: None,
            });
        }
        Ok(match self.clone() {
            BrowserTool::Navigate { url } => ActionCommand::BrowserNavigate { url },
            BrowserTool::NavigateBack => ActionCommand::BrowserBack {},
            BrowserTool::Snapshot => ActionCommand::BrowserDomIndex {
                scope: None,
                assign_attr: None,
            },
            BrowserTool::Click { click_id } => ActionCommand::BrowserClick {
                target: Target::click_id(click_id),
                strategy: None,
            },
            BrowserTool::Type {
                click_id,
                text,
                submit,
            } => ActionCommand::BrowserType {
                target: Target::click_id(click_id),
                text,
                submit: submit.then_some(true),
                strategy: None,
            },
            BrowserTool::TakeScreenshot { full_page } => ActionCommand::BrowserScreenshot {
                full_page: full_page.then_some(true),
            },
            BrowserTool::PressKey { key } => ActionCommand::BrowserPressKey { key, expect: None },
            BrowserTool::Hover { click_id } => ActionCommand::BrowserHover {
                target: Target::click_id(click_id),
            },
            BrowserTool::SelectOption { click_id, option } => ActionCommand::BrowserSelectOption {
                target: Target::click_id(click_id),
                option,
            },
            BrowserTool::WaitFor(WaitForArgs {
                text,
                url,
                selector,
            }) => ActionCommand::BrowserWaitFor {
                text,
                url,
                selector,
                timeout_ms: None,
            },
        })
    }

    /// What the call answers once its action is `record` (as the queue left it when the wait
    /// ended: an action still running is said to be, not waited for again).
    pub fn answer(&self, record: &ActionRecord) -> Answer {
        if !record.state.is_final() {
            return Answer::Result(CallToolResult::error(format!(
                "{} ({}) has not finished yet ({:?}); its outcome will show in the task's \
                 history in Mimo's web app",
                record.command.name(),
                record.action_id,
                record.state
            )));
        }
        let Some(outcome) = &record.outcome else {
            return Answer::Result(CallToolResult::error(format!(
                "{} ({}) ended {:?} without an outcome",
                record.command.name(),
                record.action_id,
                record.state
            )));
        };
        if outcome.status == ActionStatus::Error {
            let error = outcome.error.clone().unwrap_or_else(|| {
                ErrorObject::new(
                    ErrorCode::InternalError,
                    "the action failed without an error",
                )
            });
            return Answer::Result(with_notes(
                CallToolResult::error(error_text(&error)),
                outcome,
            ));
        }
        let result = outcome.for_model().cloned().unwrap_or(Value::Null);
        let text = match self {
            BrowserTool::Snapshot => match serde_json::from_value::<DomIndexResult>(result) {
                Ok(index) => snapshot_text(&index),
                Err(e) => format!("the snapshot came back unreadable: {e}"),
            },
            BrowserTool::TakeScreenshot { .. } => {
                return match serde_json::from_value::<ScreenshotResult>(result) {
                    Ok(shot) => Answer::Image(shot),
                    Err(e) => Answer::Result(CallToolResult::error(format!(
                        "the screenshot came back unreadable: {e}"
                    ))),
                }
            }
            BrowserTool::Navigate { url } => format!("Navigated to {url}"),
            BrowserTool::NavigateBack => "Went back".to_owned(),
            BrowserTool::Click { click_id } => format!("Clicked [{click_id}]"),
            BrowserTool::Type {
                click_id, submit, ..
            } => format!(
                "Typed into [{click_id}]{}",
                if *submit { " and pressed Enter" } else { "" }
            ),
            BrowserTool::PressKey { key } => format!("Pressed {key}"),
            BrowserTool::Hover { click_id } => format!("Hovered over [{click_id}]"),
            BrowserTool::SelectOption { click_id, option } => {
                format!("Selected {option:?} in [{click_id}]")
            }
            BrowserTool::WaitFor(_) => "The page is as waited for".to_owned(),
        };
        Answer::Result(with_notes(CallToolResult::text(text), outcome))
    }
}

/// A step the task would not queue (the consent gate, the domain policy, a task without a
/// browser) as a tool error: nothing ran. A step that needs the person's confirmation says so
/// and where it can be done, since an MCP client cannot confirm for the person.
pub fn refused(error: &ErrorObject) -> CallToolResult {
    if error.code == ErrorCode::ConfirmationRequired {
        return CallToolResult::error(format!(
            "Not done: this step waits for the person's confirmation, which an MCP client \
             cannot give. The person can do it from Mimo's web app. ({})",
            error.message
        ));
    }
    CallToolResult::error(format!("Not done: {}", error_text(error)))
}

fn error_text(error: &ErrorObject) -> String {
    format!("{}: {}", error.code.as_str(), error.message)
}

/// The outcome's warnings and any dialog the page shows, after the result's own text.
fn with_notes(mut result: CallToolResult, outcome: &ActionOutcome) -> CallToolResult {
    let mut notes = String::new();
    for warning in &outcome.warnings {
        notes.push_str(&format!("Warning: {warning}\n"));
    }
    if let Some(dialog) = &outcome.dialog {
        notes.push_str(&format!(
            "The page shows a {:?} dialog: {:?}. Nothing else on the page can be used until \
             the person answers it.\n",
            dialog.kind, dialog.message
        ));
    }
    if !notes.is_empty() {
        result.content.push(Content::Text {
            text: notes.trim_end().to_owned(),
        });
    }
    result
}

/// The element list as a snapshot: the page, its tabs when it has several, then one numbered
/// line per element.
fn snapshot_text(index: &DomIndexResult) -> String {
    let mut out = format!("Page URL: {}\nPage title: {}\n", index.url, index.title);
    if index.tabs.len() > 1 {
        out.push_str("Tabs:\n");
        for tab in &index.tabs {
            out.push_str(&format!(
                "- {}{}: {}\n",
                tab.url,
                if tab.current { " (current)" } else { "" },
                tab.title
            ));
        }
    }
    if index.truncated == Some(true) {
        out.push_str("(The list is cut short: scroll and snapshot again for the rest.)\n");
    }
    out.push_str("Elements ([N] is the ref):\n");
    out.push_str(&index.text);
    out
}

/// A screenshot's answer: the image, read from its artifact by the caller (base64), and where
/// it was taken.
pub fn screenshot_result(shot: &ScreenshotResult, data: String, mime_type: &str) -> CallToolResult {
    CallToolResult {
        content: vec![
            Content::Text {
                text: format!(
                    "Screenshot of {} ({}×{} px)",
                    shot.url, shot.width, shot.height
                ),
            },
            Content::Image {
                data,
                mime_type: mime_type.to_owned(),
            },
        ],
        is_error: false,
    }
}
