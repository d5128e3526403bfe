//! The MCP tools, named as Playwright MCP names them so prompts written for it carry over: each
//! one's schema, how its arguments are read, the one browser action it queues on the task (the
//! same queue, consent gate and audit as every other caller's), and what its outcome answers.

use mimo_protocol::action::{DragEnd, ScanScope, ScreenshotResult, Target};
use mimo_protocol::mcp::{CallToolResult, Content};
use mimo_protocol::TaskTab;
use mimo_protocol::{ActionCommand, ActionOutcome, ActionStatus, ErrorCode, ErrorObject};
use serde_json::{Map, Value};

use super::runs::{self, TaskTool};
use crate::actions::ActionRecord;
use crate::json_schema;

/// A tool call with its arguments read: one browser action in the session's task, a form's
/// fields (one action each, in order), or one about the runs of Mimo's own agent ([`runs`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Tool {
    Browser(BrowserTool),
    Form(Vec<FormField>),
    /// A file for a file field: stored among the task's files first, then put into the page
    /// ([`BrowserTool::UploadFile`]).
    Upload {
        click_id: u32,
        file: GivenFile,
    },
    Task(TaskTool),
}

/// A file an MCP client gives (`browser_file_upload`): its bytes come inside the call.
#[derive(Clone, PartialEq)]
pub struct GivenFile {
    pub name: String,
    pub content_type: String,
    pub bytes: Vec<u8>,
}

impl std::fmt::Debug for GivenFile {
    // Its bytes are not written out: a log line would hold the whole file.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GivenFile")
            .field("name", &self.name)
            .field("content_type", &self.content_type)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// A field of `browser_fill_form`: what it is called, and the step that fills it.
#[derive(Debug, Clone, PartialEq)]
pub struct FormField {
    pub name: String,
    pub step: BrowserTool,
}

/// A browser tool call with its arguments read.
#[derive(Debug, Clone, PartialEq)]
pub enum BrowserTool {
    Navigate {
        url: String,
    },
    NavigateBack,
    Snapshot {
        /// The whole page, or what is in view (the default, as the agent sees it).
        scope: Option<ScanScope>,
        /// Only this element and what it holds (a list, a dialog): a ref of the last snapshot.
        within: Option<u32>,
    },
    Click {
        click_id: u32,
        /// A checkbox or radio button to be left in this state (clicked only when it is not).
        checked: Option<bool>,
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
    Tabs(TabsAction),
    Drag {
        from: u32,
        to: u32,
    },
    HandleDialog {
        accept: bool,
        prompt_text: Option<String>,
    },
    /// A file stored among the task's files put into a file field.
    UploadFile {
        click_id: u32,
        artifact_id: String,
        name: String,
        content_type: String,
    },
}

/// What `browser_tabs` does; an index is a tab's place in the latest list the session was
/// shown (as Playwright MCP's tools number tabs).
#[derive(Debug, Clone, PartialEq)]
pub enum TabsAction {
    List,
    New { url: String },
    Select { index: usize },
    Close { index: Option<usize> },
}

/// What a tool call replies, once its action ended: its result, or (a screenshot) the artifact
/// whose image the caller reads and hands to [`screenshot_result`].
#[derive(Debug, Clone, PartialEq)]
pub enum ToolReply {
    Result(CallToolResult),
    Image(ScreenshotResult),
}

/// Every tool as `tools/list` describes it — names, words and argument schemas — kept as the
/// JSON a client reads: the schemas are also what a call's arguments are checked against
/// ([`json_schema`]), so what a client is told and what is accepted are one text.
const TOOLS: &str = include_str!("tools.json");

/// `tools/list`'s result: every tool ([`mimo_protocol::mcp::ListToolsResult`]), as the JSON
/// text it is (decoding it into `Tool`s only to encode them again would cost the Worker both
/// codecs).
pub fn list() -> Value {
    let tools: Value = serde_json::from_str(TOOLS).expect("tools.json is JSON");
    serde_json::json!({ "tools": tools })
}

/// `browser_wait_for`'s arguments: one of them.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitForArgs {
    pub text: Option<String>,
    pub url: Option<String>,
    pub selector: Option<String>,
}

/// The tool `name` with its `arguments` read: `None` when there is no such tool, `Err` with
/// what is wrong when the arguments cannot be used.
pub fn parse(name: &str, arguments: Option<Map<String, Value>>) -> Option<Result<Tool, String>> {
    let listed = list();
    let schema = listed["tools"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == name)
        .map(|t| &t["inputSchema"])?;
    let arguments = Value::Object(arguments.unwrap_or_default());
    let mismatches = json_schema::validate(schema, &arguments);
    if !mismatches.is_empty() {
        let problems: Vec<String> = mismatches
            .iter()
            .map(|m| format!("at {}: {}", json_schema::shown(&m.path), m.message))
            .collect();
        return Some(Err(format!("{name}'s arguments: {}", problems.join("; "))));
    }
    if let Some(task) = runs::read(name, &arguments) {
        return Some(task.map(Tool::Task));
    }
    if name == "browser_file_upload" {
        return Some(given_file(&arguments).and_then(|file| {
            click_id(name, &arguments["ref"]).map(|click_id| Tool::Upload { click_id, file })
        }));
    }
    if name == "browser_fill_form" {
        let fields = arguments["fields"].as_array().into_iter().flatten();
        return Some(
            fields
                .map(form_field)
                .collect::<Result<_, _>>()
                .map(Tool::Form),
        );
    }
    // Checked against the schema: present and of their types where it says so.
    let text = |key: &str| {
        arguments
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let flag = |key: &str| arguments.get(key).and_then(Value::as_bool) == Some(true);
    let reference = || click_id(name, &arguments["ref"]);
    let end = |key: &str| click_id(name, &arguments[key]);
    let not_blank = |key: &str| match text(key) {
        Some(value) if !value.trim().is_empty() => Ok(value.trim().to_owned()),
        _ => Err(format!("{name}: `{key}` is empty")),
    };
    let tool = match name {
        "browser_navigate" => not_blank("url").map(|url| BrowserTool::Navigate { url }),
        "browser_navigate_back" => Ok(BrowserTool::NavigateBack),
        "browser_snapshot" => snapshot_arguments(name, &arguments)
            .map(|(scope, within)| BrowserTool::Snapshot { scope, within }),
        "browser_click" => reference().map(|click_id| BrowserTool::Click {
            click_id,
            checked: None,
        }),
        "browser_hover" => reference().map(|click_id| BrowserTool::Hover { click_id }),
        "browser_type" => reference().map(|click_id| BrowserTool::Type {
            click_id,
            text: text("text").unwrap_or_default(),
            submit: flag("submit"),
        }),
        "browser_take_screenshot" => Ok(BrowserTool::TakeScreenshot {
            full_page: flag("fullPage"),
        }),
        "browser_press_key" => not_blank("key").map(|key| BrowserTool::PressKey { key }),
        "browser_select_option" => reference().map(|click_id| BrowserTool::SelectOption {
            click_id,
            option: arguments["values"][0]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        }),
        "browser_wait_for" => Ok(BrowserTool::WaitFor(WaitForArgs {
            text: text("text"),
            url: text("url"),
            selector: text("selector"),
        })),
        "browser_drag" => {
            end("startRef").and_then(|from| end("endRef").map(|to| BrowserTool::Drag { from, to }))
        }
        "browser_handle_dialog" => Ok(BrowserTool::HandleDialog {
            accept: flag("accept"),
            prompt_text: text("promptText"),
        }),
        "browser_tabs" => {
            let index = arguments
                .get("index")
                .and_then(Value::as_u64)
                .map(|i| i as usize);
            match (text("action").as_deref(), index) {
                (Some("list"), _) => Ok(TabsAction::List),
                (Some("new"), _) => not_blank("url").map(|url| TabsAction::New { url }),
                (Some("select"), Some(index)) => Ok(TabsAction::Select { index }),
                (Some("select"), None) => Err(format!("{name}: select names the tab's `index`")),
                // The schema lets no other action through.
                (_, index) => Ok(TabsAction::Close { index }),
            }
            .map(BrowserTool::Tabs)
        }
        _ => return None,
    };
    Some(tool.map(Tool::Browser))
}

/// A field of `browser_fill_form` (checked against the schema) and the step that fills it.
fn form_field(field: &Value) -> Result<FormField, String> {
    let text = |key: &str| field[key].as_str().unwrap_or_default();
    let name = text("name").to_owned();
    let click_id = click_id("browser_fill_form", &field["ref"])?;
    let value = text("value");
    let ticked = match value.trim().to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    };
    let step = match (text("type"), ticked) {
        ("checkbox", Some(checked)) => BrowserTool::Click {
            click_id,
            checked: Some(checked),
        },
        ("radio", Some(true)) => BrowserTool::Click {
            click_id,
            checked: Some(true),
        },
        ("radio", Some(false)) => {
            return Err(format!(
                "browser_fill_form: {name:?} is a radio button, which is left unticked by \
                 choosing another of its group (value `true` on that one)"
            ))
        }
        ("checkbox" | "radio", None) => {
            return Err(format!(
                "browser_fill_form: {name:?} takes `true` or `false`, not {value:?}"
            ))
        }
        ("combobox", _) => BrowserTool::SelectOption {
            click_id,
            option: value.to_owned(),
        },
        // A text box, or a slider (typed into as its value, whole).
        _ => BrowserTool::Type {
            click_id,
            text: value.to_owned(),
            submit: false,
        },
    };
    Ok(FormField { name, step })
}

/// `browser_file_upload`'s file (checked against the schema): a file name without a folder,
/// and its base64 content.
fn given_file(arguments: &Value) -> Result<GivenFile, String> {
    use base64::Engine;
    let text = |key: &str| arguments[key].as_str().unwrap_or_default();
    let name = text("name").trim();
    if !mimo_protocol::artifact::valid_file_name(name) {
        return Err(format!(
            "browser_file_upload: {name:?} is not a file name (1 to {} characters, no folder, no \
             control characters)",
            mimo_protocol::artifact::MAX_FILE_NAME_CHARS
        ));
    }
    let data: String = text("data").split_whitespace().collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| format!("browser_file_upload: `data` is not base64 ({e})"))?;
    Ok(GivenFile {
        name: name.to_owned(),
        content_type: text("mimeType").trim().to_owned(),
        bytes,
    })
}

/// How filling a form stopped before its last field.
#[derive(Debug, Clone, PartialEq)]
pub enum FormStop {
    /// The field's step failed or was refused: its answer.
    Failed(CallToolResult),
    /// The field's step needs the person's confirmation (`why`: the task's words).
    NeedsPerson(String),
}

/// `browser_fill_form`'s answer: each field filled, with what its step answered, then the field
/// it stopped at, if it did. A field the person must confirm is left to the one-step tools,
/// which ask them; nothing after it is filled.
pub fn form_answer(
    filled: &[(String, CallToolResult)],
    stopped: Option<(&str, FormStop)>,
) -> CallToolResult {
    let mut lines: Vec<String> = filled
        .iter()
        .map(|(name, result)| format!("{name}: {}", content_text(result)))
        .collect();
    let Some((name, stop)) = stopped else {
        lines.insert(0, format!("Filled {} fields", filled.len()));
        return CallToolResult::text(lines.join("\n"));
    };
    lines.insert(
        0,
        format!("Filled {} fields, then stopped at {name:?}", filled.len()),
    );
    lines.push(match stop {
        FormStop::Failed(result) => format!("{name}: {}", content_text(&result)),
        FormStop::NeedsPerson(why) => format!(
            "{name}: not done, it needs the person's confirmation ({why}). Fill it with \
             browser_type, browser_click or browser_select_option, which ask them."
        ),
    });
    lines.push("The fields after it were not filled.".to_owned());
    CallToolResult::error(lines.join("\n"))
}

/// A result's text parts, on one line each.
fn content_text(result: &CallToolResult) -> String {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    texts.join(" ").replace('\n', " ")
}

/// Why a step on a page cannot run before the session's first navigation.
pub const NO_PAGE_YET: &str = "no page is open for this session yet: call browser_navigate first";

/// An element's number from a `ref`: `"12"` (Playwright's refs are strings), `"[12]"` as the
/// snapshot shows it, or `12`.
/// `browser_snapshot`'s `scope` and `target` (a ref), when given.
fn snapshot_arguments(
    name: &str,
    arguments: &Value,
) -> Result<(Option<ScanScope>, Option<u32>), String> {
    let within = match arguments.get("target") {
        None | Some(Value::Null) => None,
        Some(target) => Some(click_id(name, target)?),
    };
    // The schema lets only "viewport" and "document" through.
    let scope = arguments.get("scope").and_then(Value::as_str).map(|scope| {
        if scope == "document" {
            ScanScope::Document
        } else {
            ScanScope::Viewport
        }
    });
    Ok((scope, within))
}

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
    /// `tabs` are the task's tab ids as last listed to the session (what an index names).
    pub fn command(&self, started: bool, tabs: &[i32]) -> Result<ActionCommand, String> {
        if !started {
            let BrowserTool::Navigate { url } = self else {
                return Err(NO_PAGE_YET.into());
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
            // A region is read whole, as far as it reaches.
            BrowserTool::Snapshot { scope, within } => ActionCommand::BrowserDomIndex {
                scope: scope.or(within.map(|_| ScanScope::Document)),
                assign_attr: None,
                within,
            },
            BrowserTool::Click { click_id, checked } => ActionCommand::BrowserClick {
                target: Target::click_id(click_id),
                strategy: None,
                checked,
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
            BrowserTool::Drag { from, to } => {
                let end = |click_id| DragEnd {
                    click_id: Some(click_id),
                    x: None,
                    y: None,
                };
                ActionCommand::BrowserDrag {
                    from: end(from),
                    to: end(to),
                    expect: None,
                    scale: None,
                }
            }
            BrowserTool::HandleDialog {
                accept,
                prompt_text,
            } => ActionCommand::BrowserDialog {
                accept,
                text: prompt_text,
            },
            BrowserTool::UploadFile {
                click_id,
                artifact_id,
                name,
                content_type,
            } => ActionCommand::BrowserUploadFile {
                target: Target::click_id(click_id),
                artifact_id,
                name,
                content_type,
            },
            BrowserTool::Tabs(action) => {
                let tab = |index: usize| {
                    tabs.get(index).copied().ok_or_else(|| {
                        format!(
                            "there is no tab {index} in the latest list ({} tabs): list them \
                             again with browser_tabs",
                            tabs.len()
                        )
                    })
                };
                match action {
                    // The element list carries the task's tabs: it reads, and changes nothing.
                    TabsAction::List => ActionCommand::BrowserDomIndex {
                        scope: None,
                        assign_attr: None,
                        within: None,
                    },
                    TabsAction::New { url } => ActionCommand::BrowserOpenTab { url },
                    TabsAction::Select { index } => ActionCommand::BrowserSwitchTab {
                        tab_id: tab(index)?,
                    },
                    TabsAction::Close { index } => ActionCommand::BrowserCloseTab {
                        tab_id: index.map(tab).transpose()?,
                    },
                }
            }
        })
    }

    /// What the call answers once its action is `record` (as the queue left it when the wait
    /// ended: an action still running is said to be, not waited for again).
    pub fn reply(&self, record: &ActionRecord) -> ToolReply {
        if !record.state.is_final() {
            return ToolReply::Result(CallToolResult::error(format!(
                "{} ({}) has not finished yet ({:?}); its outcome will show in the task's \
                 history in Mimo's web app",
                record.command.name(),
                record.action_id,
                record.state
            )));
        }
        let Some(outcome) = &record.outcome else {
            return ToolReply::Result(CallToolResult::error(format!(
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
            return ToolReply::Result(with_notes(
                CallToolResult::error(error_text(&error)),
                outcome,
            ));
        }
        // Results are read field by field rather than decoded whole: each derived decoder of
        // a result type would cost the Worker its own code for the few fields read here.
        let result = outcome.for_model().unwrap_or(&Value::Null);
        let field = |key: &str| result.get(key).and_then(Value::as_str).unwrap_or_default();
        let text = match self {
            BrowserTool::Snapshot { within, .. } => {
                let mut text = snapshot_text(
                    field("url"),
                    field("title"),
                    &tabs_in(result),
                    result.get("truncated") == Some(&Value::Bool(true)),
                    field("text"),
                );
                if let Some(region) = within {
                    text.insert_str(
                        0,
                        &format!("(Only what was [{region}]; the refs of the rest are forgotten: snapshot without a target for them.)\n"),
                    );
                }
                text
            }
            BrowserTool::TakeScreenshot { .. } => {
                let size = |key: &str| result.get(key).and_then(Value::as_u64).unwrap_or(0) as u32;
                return match field("artifactId") {
                    "" => ToolReply::Result(CallToolResult::error(
                        "the screenshot came back without its artifact",
                    )),
                    artifact_id => ToolReply::Image(ScreenshotResult {
                        artifact_id: artifact_id.to_owned(),
                        url: field("url").to_owned(),
                        width: size("width"),
                        height: size("height"),
                        scale: None,
                    }),
                };
            }
            BrowserTool::Navigate { url } => format!("Navigated to {url}"),
            BrowserTool::NavigateBack => "Went back".to_owned(),
            BrowserTool::Click {
                click_id,
                checked: None,
            } => format!("Clicked [{click_id}]"),
            BrowserTool::Click {
                click_id,
                checked: Some(checked),
            } => {
                let state = if *checked { "ticked" } else { "unticked" };
                match result.get("clicked") {
                    Some(Value::Bool(false)) => format!("[{click_id}] was {state} already"),
                    _ => format!("Clicked [{click_id}]: it is {state}"),
                }
            }
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
            BrowserTool::Drag { from, to } => format!("Dragged [{from}] onto [{to}]"),
            BrowserTool::HandleDialog { accept, .. } => {
                format!(
                    "{} the dialog",
                    if *accept { "Accepted" } else { "Dismissed" }
                )
            }
            BrowserTool::UploadFile { click_id, name, .. } => {
                format!("Put {name:?} into [{click_id}]")
            }
            BrowserTool::Tabs(_) => tabs_text(&task_tabs(record)),
        };
        ToolReply::Result(with_notes(CallToolResult::text(text), outcome))
    }
}

/// A step the task would not queue (the consent gate, the domain policy, a task without a
/// browser) as a tool error: nothing ran. A step that needs the person's confirmation says so
/// and where it can be done, since an MCP client cannot confirm for the person.
pub fn refused(error: &ErrorObject) -> CallToolResult {
    if error.code == ErrorCode::ConfirmationRequired {
        return CallToolResult::error(format!(
            "Not done: this step waits for the person's confirmation. Mimo asks them in the MCP \
             client when the client takes forms (elicitation) and the step is one they may \
             approve there; otherwise they can do it from Mimo's web app. ({})",
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

/// The element list as a snapshot: the page, its tabs when it has several (numbered as
/// `browser_tabs` numbers them), then one numbered line per element.
fn snapshot_text(url: &str, title: &str, tabs: &[TaskTab], truncated: bool, list: &str) -> String {
    let mut out = format!("Page URL: {url}\nPage title: {title}\n");
    if tabs.len() > 1 {
        out.push_str(&tabs_text(tabs));
        out.push('\n');
    }
    if truncated {
        out.push_str("(The list is cut short: scroll and snapshot again for the rest.)\n");
    }
    out.push_str("Elements ([N] is the ref):\n");
    out.push_str(list);
    out
}

/// The `tabs` of a result (the task's tabs, as a tab action and the element list give them).
fn tabs_in(result: &Value) -> Vec<TaskTab> {
    let tabs = result.get("tabs").and_then(Value::as_array);
    tabs.into_iter()
        .flatten()
        .filter_map(|tab| {
            let text = |key: &str| tab.get(key).and_then(Value::as_str).unwrap_or_default();
            Some(TaskTab {
                tab_id: i32::try_from(tab.get("tabId")?.as_i64()?).ok()?,
                url: text("url").to_owned(),
                title: text("title").to_owned(),
                current: tab.get("current") == Some(&Value::Bool(true)),
            })
        })
        .collect()
}

/// The task's tabs after an action that lists them (a tab action, the element list): each
/// says them all, except an element list of a task with one tab, which is that tab.
pub fn task_tabs(record: &ActionRecord) -> Vec<TaskTab> {
    let Some(result) = record.outcome.as_ref().and_then(ActionOutcome::for_model) else {
        return Vec::new();
    };
    let listed = tabs_in(result);
    if !listed.is_empty() {
        return listed;
    }
    let tab_id = record
        .outcome
        .as_ref()
        .and_then(|o| o.tab_id)
        .or(record.tab_id);
    let field = |key: &str| result.get(key).and_then(Value::as_str).unwrap_or_default();
    tab_id
        .map(|tab_id| TaskTab {
            tab_id,
            url: field("url").to_owned(),
            title: field("title").to_owned(),
            current: true,
        })
        .into_iter()
        .collect()
}

fn tabs_text(tabs: &[TaskTab]) -> String {
    let mut out = String::from("Tabs (index: URL — title):");
    for (index, tab) in tabs.iter().enumerate() {
        out.push_str(&format!(
            "\n- {index}{}: {} — {}",
            if tab.current { " (current)" } else { "" },
            tab.url,
            tab.title
        ));
    }
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
        structured_content: None,
        is_error: false,
    }
}
