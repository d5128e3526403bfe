//! The agent's tool (seed 001's macro tool, seed 003 §3): what the model returns at each step,
//! and the tool result it gets back (seed 000 §5).
//!
//! The JSON Schema offered to the model is generated from these types ([`agent_output_schema`]),
//! so the schema, the parser of the model's arguments and the TypeScript the web app renders
//! steps with all come from one definition.

#[cfg(not(target_arch = "wasm32"))]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::action::{ActionCommand, DragEnd, ScrollDirection, Target};
use crate::artifact::Attachment;
use crate::bridge::{BashArgs, BridgeTool, EditArgs, ReadArgs, WriteArgs};
use crate::{ErrorCode, ErrorObject};

/// The name of the one tool the model calls at every step.
pub const AGENT_TOOL_NAME: &str = "AgentOutput";

/// What the model thinks before acting (page-agent's reflection).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[cfg_attr(not(target_arch = "wasm32"), derive(JsonSchema))]
pub struct Reflection {
    /// Did the previous action achieve its goal? Say success, failure or unknown, and why,
    /// judging from the current page.
    pub evaluation_previous_goal: String,
    /// What to remember for the rest of the task: progress so far, values found, what is left.
    pub memory: String,
    /// The immediate goal of this step's action, in one sentence.
    pub next_goal: String,
}

/// The arguments of the `AgentOutput` tool: a reflection and exactly one action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[cfg_attr(not(target_arch = "wasm32"), derive(JsonSchema))]
pub struct AgentOutput {
    #[serde(flatten)]
    #[ts(flatten)]
    pub reflection: Reflection,
    /// The one action to take now.
    pub action: AgentAction,
}

/// One end of a drag: the element with `index`, or the point `x`, `y` (pixels of the page's
/// screenshot).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[cfg_attr(not(target_arch = "wasm32"), derive(JsonSchema))]
pub struct DragPoint {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub index: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub x: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub y: Option<f64>,
}

/// The actions the model can take. Elements are named by their `index` in the page's element
/// list (`[12]<button>…`), which is the extension's `clickId`.
#[derive(
    Debug,
    Clone,
    PartialEq,
    Serialize,
    Deserialize,
    TS,
    strum::IntoStaticStr,
    strum::EnumDiscriminants,
)]
#[cfg_attr(not(target_arch = "wasm32"), derive(JsonSchema))]
#[serde(remote = "Self", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[strum_discriminants(
    name(AgentActionKind),
    derive(strum::EnumIter, strum::IntoStaticStr),
    strum(serialize_all = "snake_case")
)]
pub enum AgentAction {
    /// Open a URL in the task's tab.
    Navigate { url: String },
    /// Click the element with this index.
    Click { index: u32 },
    /// Replace the content of the input, textarea or editable element with this index by
    /// `text`; `submit` presses Enter afterwards. To type a stored secret write its placeholder
    /// `{{secret:name}}` in `text`: it is filled in at the moment of typing, never shown to you.
    Type {
        index: u32,
        text: String,
        #[serde(default)]
        submit: bool,
    },
    /// Choose an option (by its value or visible label) in the select with this index.
    SelectOption { index: u32, option: String },
    /// Scroll the page, or the scrollable element with `index`; `amount` in pixels (one screen
    /// by default).
    Scroll {
        direction: ScrollDirection,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        index: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        amount: Option<u32>,
    },
    /// Press a key such as `Enter`, `Escape`, `Tab`, `ArrowDown`, optionally with modifiers
    /// (`Control+a`).
    PressKey { key: String },
    /// Move the pointer over the element with this index (opens hover menus).
    Hover { index: u32 },
    /// Go back to the previous page.
    Back {},
    /// Go forward again to the page you went back from.
    Forward {},
    /// Wait until the page shows `text`, its URL contains `url`, or an element matches the CSS
    /// `selector`.
    WaitFor {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        url: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        selector: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        timeout_ms: Option<u32>,
    },
    /// Answer the JavaScript dialog the page shows (an alert, a confirm, a prompt, or "leave
    /// this page?"): `accept` true presses OK (or Leave), false Cancel; `text` is the answer
    /// typed into a prompt.
    Dialog {
        accept: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        text: Option<String>,
    },
    /// Bring `text` into view, wherever it is on the page (also in a scrolling list, and in a
    /// feed that loads more as it is scrolled): one step instead of many scrolls.
    ScrollTo { text: String },
    /// Click at a point of the page (x, y in pixels of the page's screenshot, whose size is
    /// given with the page) where the element list has nothing to name: a control drawn on a
    /// canvas, in SVG or a map.
    ClickAt { x: f64, y: f64 },
    /// Move the mouse to a point of the page (x, y as for click_at).
    HoverAt { x: f64, y: f64 },
    /// Drag from one element or point to another: a card (draggable) to a column (dropzone),
    /// an item of a sortable list to another's place, a slider's knob.
    Drag { from: DragPoint, to: DragPoint },
    /// Put a file the user attached to the task (by its name in <attachments>) into the file
    /// input with this index (or the button or label that opens it).
    UploadFile { index: u32, file: String },
    /// List the user's own open tabs (titles, sites) when the goal is about them.
    ListTabs {},
    /// Read one of the user's own open tabs (listed in <browser_tabs>) without touching it:
    /// for goals about what they have open ("summarise my tabs", "compare these products").
    ReadTab { tab_id: i32 },
    /// Act in another of the task's tabs (the `tabs` of the page list them).
    SwitchTab { tab_id: i32 },
    /// Open a URL in a new tab of the task; it becomes the tab the next actions act in.
    OpenTab { url: String },
    /// Close one of the task's tabs (the current one by default); the task goes on in another.
    CloseTab {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        tab_id: Option<i32>,
    },
    /// Read the page's text on from character `from` (where the content was cut; by default
    /// where the text shown now ends): long articles and tables are read whole this way.
    ReadPage {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        from: Option<u32>,
    },
    /// Read a text file of the folder the user shared from their computer (<local_files>):
    /// `path` is relative to it; `offset` (first line, 0-based) and `limit` (lines) read part of
    /// a long file.
    FileRead {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        offset: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        limit: Option<u32>,
    },
    /// Create or replace a file of the shared folder with `content` (missing folders are made).
    FileWrite { path: String, content: String },
    /// Replace the text `old` by `new` in a file of the shared folder; `old` must occur exactly
    /// once (give enough of the surrounding text to make it unique).
    FileEdit {
        path: String,
        old: String,
        new: String,
    },
    /// Run one allowed program in the shared folder: `command` is the program and its
    /// arguments, quoted as in a shell but run without one (no pipes, redirections, `;`, `&&`).
    /// It is killed after `timeout_ms` (30 s by default). Its exit code, stdout and stderr come
    /// back.
    RunCommand {
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        timeout_ms: Option<u32>,
    },
    /// End the task: `success` says whether the goal was reached, `text` is the final answer
    /// for the person (what was done, values found, or why it could not be done). When the
    /// user gave an answer format (<answer_format>), `data` is the answer as JSON matching it.
    Done {
        success: bool,
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "unknown")]
        data: Option<serde_json::Value>,
    },
}
via_json_value!(AgentAction);

impl AgentAction {
    /// The element of the page's list it acts on, by index, if any.
    pub fn target(&self) -> Option<u32> {
        match self {
            AgentAction::Click { index }
            | AgentAction::Type { index, .. }
            | AgentAction::SelectOption { index, .. }
            | AgentAction::Hover { index }
            | AgentAction::UploadFile { index, .. } => Some(*index),
            AgentAction::Scroll { index, .. } => *index,
            _ => None,
        }
    }

    /// The action's name, e.g. `click`: its variant's, as serde names it.
    pub fn name(&self) -> &'static str {
        self.into()
    }

    pub fn kind(&self) -> AgentActionKind {
        self.into()
    }

    /// The local bridge's tool and arguments (seed 004 §4.2) this action invokes, for the
    /// actions that work in the folder the user shared from their computer.
    pub fn bridge_invocation(&self) -> Option<(BridgeTool, serde_json::Value)> {
        let (tool, args) = match self.clone() {
            AgentAction::FileRead {
                path,
                offset,
                limit,
            } => (
                BridgeTool::Read,
                serde_json::to_value(ReadArgs {
                    path,
                    offset,
                    limit,
                }),
            ),
            AgentAction::FileWrite { path, content } => (
                BridgeTool::Write,
                serde_json::to_value(WriteArgs { path, content }),
            ),
            AgentAction::FileEdit { path, old, new } => (
                BridgeTool::Edit,
                serde_json::to_value(EditArgs { path, old, new }),
            ),
            AgentAction::RunCommand {
                command,
                timeout_ms,
            } => (
                BridgeTool::Bash,
                serde_json::to_value(BashArgs {
                    command,
                    timeout_ms: timeout_ms.map(u64::from),
                }),
            ),
            _ => return None,
        };
        Some((tool, args.expect("bridge arguments serialize")))
    }
}

impl AgentAction {
    /// The command this action becomes (`None` for the ones the run answers itself: `done`,
    /// `read_page`, `list_tabs`), the task's attached files naming what `upload_file` sends (a
    /// file not attached is the step's error), `agent_id` the agent a bridge invocation is
    /// attributed to.
    pub fn command(
        &self,
        attachments: &[Attachment],
        agent_id: &str,
    ) -> Result<Option<ActionCommand>, ErrorObject> {
        let target = Target::click_id;
        if let Some((tool, args)) = self.bridge_invocation() {
            return Ok(Some(ActionCommand::BridgeInvoke {
                tool,
                args,
                agent_id: agent_id.to_owned(),
                confirmed_protected_path: None,
            }));
        }
        Ok(Some(match self.clone() {
            AgentAction::Navigate { url } => ActionCommand::BrowserNavigate { url },
            AgentAction::Click { index } => ActionCommand::BrowserClick {
                target: target(index),
                strategy: None,
                checked: None,
            },
            AgentAction::Type {
                index,
                text,
                submit,
            } => ActionCommand::BrowserType {
                target: target(index),
                text,
                submit: Some(submit),
                strategy: None,
            },
            AgentAction::SelectOption { index, option } => ActionCommand::BrowserSelectOption {
                target: target(index),
                option,
            },
            AgentAction::Scroll {
                direction,
                index,
                amount,
            } => ActionCommand::BrowserScroll {
                target: Target {
                    click_id: index,
                    ..Target::default()
                },
                direction,
                amount,
            },
            AgentAction::PressKey { key } => ActionCommand::BrowserPressKey { key, expect: None },
            AgentAction::Hover { index } => ActionCommand::BrowserHover {
                target: target(index),
            },
            AgentAction::Back {} => ActionCommand::BrowserBack {},
            AgentAction::Forward {} => ActionCommand::BrowserForward {},
            AgentAction::WaitFor {
                text,
                url,
                selector,
                timeout_ms,
            } => ActionCommand::BrowserWaitFor {
                text,
                url,
                selector,
                timeout_ms,
            },
            AgentAction::Dialog { accept, text } => ActionCommand::BrowserDialog { accept, text },
            AgentAction::ScrollTo { text } => ActionCommand::BrowserScrollTo { text },
            AgentAction::ClickAt { x, y } => ActionCommand::BrowserClickAt {
                x,
                y,
                expect: None,
                scale: None,
            },
            AgentAction::HoverAt { x, y } => ActionCommand::BrowserHoverAt { x, y, scale: None },
            AgentAction::Drag { from, to } => {
                let end = |p: DragPoint| DragEnd {
                    click_id: p.index,
                    x: p.x,
                    y: p.y,
                };
                ActionCommand::BrowserDrag {
                    from: end(from),
                    to: end(to),
                    expect: None,
                    scale: None,
                }
            }
            AgentAction::ReadTab { tab_id } => ActionCommand::BrowserReadTab { tab_id },
            AgentAction::SwitchTab { tab_id } => ActionCommand::BrowserSwitchTab { tab_id },
            AgentAction::OpenTab { url } => ActionCommand::BrowserOpenTab { url },
            AgentAction::CloseTab { tab_id } => ActionCommand::BrowserCloseTab { tab_id },
            AgentAction::UploadFile { index, file } => {
                let Some(attachment) = attachments.iter().find(|a| a.name == file) else {
                    let names: Vec<&str> = attachments.iter().map(|a| a.name.as_str()).collect();
                    return Err(ErrorObject::new(
                        ErrorCode::TargetNotFound,
                        if names.is_empty() {
                            format!("no file is attached to this task, so {file:?} cannot be uploaded: ask the user to attach it")
                        } else {
                            format!(
                                "no attached file is named {file:?}; the attached files are {names:?}"
                            )
                        },
                    ));
                };
                ActionCommand::BrowserUploadFile {
                    target: target(index),
                    artifact_id: attachment.artifact_id.clone(),
                    name: attachment.name.clone(),
                    content_type: attachment.content_type.clone(),
                }
            }
            // Answered by the run itself, from what it already holds.
            AgentAction::Done { .. } | AgentAction::ReadPage { .. } | AgentAction::ListTabs {} => {
                return Ok(None)
            }
            AgentAction::FileRead { .. }
            | AgentAction::FileWrite { .. }
            | AgentAction::FileEdit { .. }
            | AgentAction::RunCommand { .. } => unreachable!("bridge invocations, above"),
        }))
    }
}

impl AgentActionKind {
    /// The action's name, e.g. `click`.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// How a step of this action reads for people (the web app's step titles), as a template
    /// of the action's arguments, written out for every action so that a new one has to say it:
    ///
    /// - `{arg}` the argument as it is; `{arg:quoted}` in quotes, shortened to 60 characters;
    ///   `{arg:round}` a number rounded; `{arg:element}` the element with that index (its name
    ///   on the page when known, else `element [index]`); `{arg:end}` a drag's end (an element,
    ///   or a point); `{arg?}` nothing, but the argument must be true.
    /// - `[a|b]`: the first alternative all of whose arguments are given (present, not false),
    ///   else nothing.
    ///
    /// The first letter is capitalised where it is shown.
    pub const fn wording(self) -> &'static str {
        use AgentActionKind::*;
        match self {
            Navigate => "go to {url}",
            Click => "click {index:element}",
            Type => "type {text:quoted} into {index:element}[{submit?} and submit]",
            SelectOption => "choose {option:quoted} in {index:element}",
            Scroll => "scroll {direction}[ in {index:element}]",
            PressKey => "press {key}",
            Hover => "point at {index:element}",
            Back => "go back",
            Forward => "go forward",
            WaitFor => {
                "wait for [the text {text:quoted}|the address {url:quoted}|the element {selector:quoted}]"
            }
            Dialog => "answer the page's dialog: [{accept?}OK|Cancel][ with {text:quoted}]",
            ScrollTo => "scroll to {text:quoted}",
            ClickAt => "click at {x:round},{y:round}",
            HoverAt => "point at {x:round},{y:round}",
            Drag => "drag {from:end} to {to:end}",
            UploadFile => "attach {file:quoted} to {index:element}",
            ListTabs => "list your open tabs",
            ReadTab => "read your tab {tab_id}",
            SwitchTab => "switch to tab {tab_id}",
            OpenTab => "open {url} in a new tab",
            CloseTab => "[close tab {tab_id}|close this tab]",
            ReadPage => "[read the page on from character {from}|read more of the page]",
            FileRead => "read the file {path:quoted} on this computer",
            FileWrite => "write the file {path:quoted} on this computer",
            FileEdit => "edit the file {path:quoted} on this computer",
            RunCommand => "run {command:quoted} on this computer",
            Done => "[{success?}finish|give up]",
        }
    }
}

/// The actions that use the local bridge ([`AgentAction::bridge_invocation`]): offered only
/// when the task's extension has a bridge connected and the task allows it.
pub const BRIDGE_ACTIONS: [&str; 4] = ["file_read", "file_write", "file_edit", "run_command"];

/// A tool result as it goes back to the model (seed 000 §5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    pub tool_call_id: String,
    /// The action's name.
    pub name: String,
    pub ok: bool,
    /// What is kept and shown of the result (see [`crate::ActionOutcome::result`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub result: Option<serde_json::Value>,
    /// What the model reads of it when that differs ([`crate::ActionOutcome::model_result`]):
    /// held in memory for the run's prompts, and never serialized — not into the run's record,
    /// the event log, the web app or an export (a run continued after a restart reads `result`).
    #[serde(skip)]
    #[ts(skip)]
    pub model_result: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<ErrorObject>,
    #[serde(default)]
    pub warnings: Vec<String>,
    /// It ran, but not wholly as asked: the warnings say what is off (a typed value the field
    /// did not keep, a click that changed nothing).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

impl ToolResult {
    /// The result as the model reads it.
    pub fn for_model(&self) -> Option<&serde_json::Value> {
        self.model_result.as_ref().or(self.result.as_ref())
    }
}

/// How risky a step is (seed 002 §6.1), rated by the risk policy from facts about its target.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize, TS,
)]
#[serde(rename_all = "snake_case")]
pub enum RiskLevel {
    #[default]
    Low,
    Medium,
    High,
}

/// Tokens one model call used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    #[ts(type = "number")]
    pub input_tokens: u64,
    #[ts(type = "number")]
    pub output_tokens: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolPhase {
    Start,
    End,
}

/// Where `gen-ts` writes the model's tool schemas, relative to the workspace root.
pub const AGENT_OUTPUT_SCHEMA_PATH: &str = "protocol/schemas/agent_output.json";
pub const BROWSER_TASK_SCHEMA_PATH: &str = "protocol/schemas/browser_task.json";

/// The JSON Schema of [`AgentOutput`], with every sub-schema inlined: several
/// OpenAI-compatible servers do not resolve `$ref`. As generated from the types
/// ([`generated_agent_output_schema`]) and written to [`AGENT_OUTPUT_SCHEMA_PATH`].
pub fn agent_output_schema() -> serde_json::Value {
    agent_output_schema_offering(|_| true)
}

/// [`agent_output_schema`] offering only the actions `offered` keeps (by name): the model cannot
/// choose the others.
pub fn agent_output_schema_offering(offered: impl Fn(&str) -> bool) -> serde_json::Value {
    let mut schema: serde_json::Value =
        serde_json::from_str(include_str!("../schemas/agent_output.json"))
            .expect("the written schema is JSON");
    if let Some(serde_json::Value::Array(actions)) = schema.pointer_mut(ACTION_VARIANTS) {
        actions.retain(|variant| action_name(variant).is_some_and(&offered));
    }
    schema
}

/// The JSON Schema of [`AgentOutput`] generated from the types (draft 7, sub-schemas inlined).
#[cfg(not(target_arch = "wasm32"))]
pub fn generated_agent_output_schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<AgentOutput>().to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    schema
}

/// The chat model's tool that hands one browser job to a sub-agent (seed 003 §2, §7).
pub const BROWSER_TASK_TOOL_NAME: &str = "browser_task";

/// The steps a sub-agent may take when the call does not say.
pub const BROWSER_TASK_DEFAULT_STEPS: u32 = 15;

/// Hand one browser job to a sub-agent: it works in the browser on its own, with its own step
/// budget, and returns its result (a summary, and data in the answer format when one is given).
/// Call it once per independent job (one site, one product); calls in one reply run one after
/// the other. The sub-agent sees only this goal, not the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[cfg_attr(not(target_arch = "wasm32"), derive(JsonSchema))]
pub struct BrowserTaskArgs {
    /// The whole job in one self-contained instruction: the site or URL to start from, what to
    /// do there and what to report back.
    pub goal: String,
    /// The most browser steps it may take (default 15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub max_steps: Option<u32>,
    /// A JSON Schema the result's data must match, for values to compare or combine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub answer_schema: Option<serde_json::Value>,
}

/// The JSON Schema of [`BrowserTaskArgs`], as offered to the model (written by `gen-ts` to
/// [`BROWSER_TASK_SCHEMA_PATH`] from [`generated_browser_task_schema`]).
pub fn browser_task_schema() -> serde_json::Value {
    serde_json::from_str(include_str!("../schemas/browser_task.json"))
        .expect("the written schema is JSON")
}

/// The JSON Schema of [`BrowserTaskArgs`] generated from the type.
#[cfg(not(target_arch = "wasm32"))]
pub fn generated_browser_task_schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut schema = generator
        .into_root_schema_for::<BrowserTaskArgs>()
        .to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
        object.remove("description");
    }
    schema
}

/// How a browser sub-task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SubtaskStatus {
    /// The sub-agent finished and says the job is done.
    Succeeded,
    /// It finished without doing the job, ran out of steps or budget, or failed.
    Failed,
    /// The person stopped it (seed 003 `data-manual-stop`).
    Stopped,
}

/// What a browser sub-task returns to the chat model (its `close`), and what the web app shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BrowserTaskResult {
    pub status: SubtaskStatus,
    /// The sub-agent's closing words, or, when it did not close, what its steps did.
    pub summary: String,
    /// Its answer's data (matching the call's answer format, when one was given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub data: Option<serde_json::Value>,
    pub steps: u32,
    /// The page it ended on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<ErrorObject>,
}

/// Where the schema lists the actions: one object schema per [`AgentAction`] variant.
const ACTION_VARIANTS: &str = "/properties/action/oneOf";

/// The action a variant of the schema is: its one required property.
fn action_name(variant: &serde_json::Value) -> Option<&str> {
    variant.pointer("/required/0")?.as_str()
}

/// The names of every action the model can take (`navigate`, `click`, …), in the schema's order.
pub fn action_names() -> Vec<String> {
    let schema = agent_output_schema();
    let variants = schema.pointer(ACTION_VARIANTS).and_then(|v| v.as_array());
    variants
        .into_iter()
        .flatten()
        .filter_map(action_name)
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use strum::IntoEnumIterator;

    #[test]
    fn schema_requires_the_reflection_and_one_action() {
        let schema = agent_output_schema();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        for field in ["evaluation_previous_goal", "memory", "next_goal", "action"] {
            assert!(required.contains(&field), "{field} not required: {schema}");
        }
        let text = schema.to_string();
        assert!(
            !text.contains("$ref"),
            "sub-schemas must be inlined: {text}"
        );
        for action in ["navigate", "click", "type", "scroll", "done", "wait_for"] {
            assert!(text.contains(&format!("\"{action}\"")), "{action} missing");
        }
        // The doc comments become the model's guidance.
        assert!(text.contains("End the task"));
    }

    #[test]
    fn the_schema_names_every_action_and_can_offer_only_some() {
        let names = action_names();
        assert_eq!(names.len(), 27, "{names:?}");
        assert_eq!(names.first().map(String::as_str), Some("navigate"));
        assert!(names.iter().any(|n| n == "done") && names.iter().any(|n| n == "read_page"));
        let some = agent_output_schema_offering(|name| name == "click" || name == "done");
        let offered: Vec<&str> = some
            .pointer(ACTION_VARIANTS)
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .filter_map(action_name)
            .collect();
        assert_eq!(offered, ["click", "done"]);
        // The model's arguments still parse with every action (the run refuses the others).
        assert_eq!(some["required"], agent_output_schema()["required"]);
    }

    #[test]
    fn every_actions_name_is_the_one_it_is_sent_and_listed_by() {
        let examples = [
            json!({ "navigate": { "url": "https://example.com" } }),
            json!({ "click": { "index": 1 } }),
            json!({ "type": { "index": 1, "text": "mug" } }),
            json!({ "select_option": { "index": 1, "option": "Blue" } }),
            json!({ "scroll": { "direction": "down" } }),
            json!({ "press_key": { "key": "Enter" } }),
            json!({ "hover": { "index": 1 } }),
            json!({ "back": {} }),
            json!({ "forward": {} }),
            json!({ "wait_for": { "text": "Done" } }),
            json!({ "dialog": { "accept": true } }),
            json!({ "scroll_to": { "text": "Reviews" } }),
            json!({ "click_at": { "x": 1.0, "y": 2.0 } }),
            json!({ "hover_at": { "x": 1.0, "y": 2.0 } }),
            json!({ "drag": { "from": { "index": 1 }, "to": { "index": 2 } } }),
            json!({ "upload_file": { "index": 1, "file": "cv.pdf" } }),
            json!({ "list_tabs": {} }),
            json!({ "read_tab": { "tab_id": 3 } }),
            json!({ "switch_tab": { "tab_id": 3 } }),
            json!({ "open_tab": { "url": "https://example.com" } }),
            json!({ "close_tab": {} }),
            json!({ "read_page": {} }),
            json!({ "file_read": { "path": "a.txt" } }),
            json!({ "file_write": { "path": "a.txt", "content": "x" } }),
            json!({ "file_edit": { "path": "a.txt", "old": "x", "new": "y" } }),
            json!({ "run_command": { "command": "ls" } }),
            json!({ "done": { "success": true, "text": "Bought." } }),
        ];
        let mut names = Vec::new();
        for example in examples {
            let sent = example.as_object().unwrap().keys().next().unwrap().clone();
            let action: AgentAction = serde_json::from_value(example).unwrap();
            assert_eq!(action.name(), sent);
            names.push(sent);
        }
        assert_eq!(
            names,
            action_names(),
            "one example of every action, in the schema's order"
        );
    }

    /// Every action's wording names only arguments it has, in a form the web app knows, and a
    /// `{arg?}` condition only on a true-or-false argument.
    #[test]
    fn every_wording_names_the_actions_own_arguments() {
        let schema = agent_output_schema();
        let variants = schema.pointer(ACTION_VARIANTS).unwrap().as_array().unwrap();
        let kinds: Vec<&str> = AgentActionKind::iter().map(AgentActionKind::name).collect();
        assert_eq!(kinds, action_names(), "one kind per action of the schema");
        for kind in AgentActionKind::iter() {
            let name = kind.name();
            let variant = variants
                .iter()
                .find(|v| action_name(v) == Some(name))
                .unwrap();
            let args = &variant["properties"][name]["properties"];
            let wording = kind.wording();
            assert!(!wording.is_empty(), "{name}");
            assert_eq!(
                wording.matches('[').count(),
                wording.matches(']').count(),
                "{name}: {wording}"
            );
            for placeholder in wording.split('{').skip(1) {
                let inner = placeholder.split_once('}').map(|(p, _)| p);
                let inner = inner.unwrap_or_else(|| panic!("{name}: an unclosed {{ in {wording}"));
                let (arg, form) = match inner.strip_suffix('?') {
                    Some(arg) => (arg, "?"),
                    None => inner.split_once(':').unwrap_or((inner, "")),
                };
                let described = &args[arg];
                assert!(described.is_object(), "{name}: no argument {arg} in {args}");
                let types = described["type"].to_string();
                match form {
                    "" | "quoted" => {}
                    "?" => assert!(types.contains("boolean"), "{name}: {arg} is {types}"),
                    "round" => assert!(types.contains("number"), "{name}: {arg} is {types}"),
                    "element" => assert!(types.contains("integer"), "{name}: {arg} is {types}"),
                    "end" => assert!(described["properties"]["index"].is_object(), "{name}"),
                    other => panic!("{name}: no form {other:?} (in {wording})"),
                }
            }
        }
        assert_eq!(AgentAction::Forward {}.kind().wording(), "go forward");
    }

    #[test]
    fn the_bridge_actions_invoke_the_bridge_tools() {
        let names = action_names();
        for name in BRIDGE_ACTIONS {
            assert!(names.iter().any(|n| n == name), "{name} not in the schema");
        }
        let run = AgentAction::RunCommand {
            command: "ls -la".into(),
            timeout_ms: Some(1_000),
        };
        assert_eq!(
            run.bridge_invocation(),
            Some((
                BridgeTool::Bash,
                json!({ "command": "ls -la", "timeoutMs": 1_000 })
            ))
        );
        let edit: AgentAction = serde_json::from_value(
            json!({ "file_edit": { "path": "a.txt", "old": "x", "new": "y" } }),
        )
        .unwrap();
        assert_eq!(
            edit.bridge_invocation(),
            Some((
                BridgeTool::Edit,
                json!({ "path": "a.txt", "old": "x", "new": "y" })
            ))
        );
        assert!(BRIDGE_ACTIONS.contains(&edit.name()));
        assert_eq!(AgentAction::Back {}.bridge_invocation(), None);
    }

    #[test]
    fn browser_task_offers_a_goal_an_optional_budget_and_answer_format() {
        let schema = browser_task_schema();
        assert_eq!(schema["required"], json!(["goal"]), "{schema}");
        assert_eq!(schema["properties"]["goal"]["type"], "string");
        assert!(schema["properties"]["max_steps"].is_object(), "{schema}");
        assert!(
            schema["properties"]["answer_schema"].is_object(),
            "{schema}"
        );
        assert!(!schema.to_string().contains("$ref"));
        let args: BrowserTaskArgs =
            serde_json::from_value(json!({ "goal": "g", "max_steps": 3 })).unwrap();
        assert_eq!((args.goal.as_str(), args.max_steps), ("g", Some(3)));
        assert!(serde_json::from_value::<BrowserTaskArgs>(json!({ "max_steps": 3 })).is_err());
    }

    #[test]
    fn arguments_parse_in_the_shape_the_schema_describes() {
        let output: AgentOutput = serde_json::from_value(json!({
            "evaluation_previous_goal": "Start",
            "memory": "nothing yet",
            "next_goal": "Open the shop",
            "action": { "type": { "index": 4, "text": "mug" } }
        }))
        .unwrap();
        assert_eq!(
            output.action,
            AgentAction::Type {
                index: 4,
                text: "mug".into(),
                submit: false
            }
        );
        let missing_memory = serde_json::from_value::<AgentOutput>(json!({
            "evaluation_previous_goal": "", "next_goal": "", "action": { "back": {} }
        }));
        assert!(missing_memory.unwrap_err().to_string().contains("memory"));
        let two_actions = serde_json::from_value::<AgentOutput>(json!({
            "evaluation_previous_goal": "", "memory": "", "next_goal": "",
            "action": { "back": {}, "click": { "index": 1 } }
        }));
        assert!(two_actions.is_err());
    }
}
