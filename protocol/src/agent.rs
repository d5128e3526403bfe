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

use crate::action::AgentAction;
use crate::ErrorObject;

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
    use crate::action::{ActionCommand, AgentActionKind};
    use crate::bridge::BridgeTool;
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
        assert_eq!(names.len(), 28, "{names:?}");
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

    /// One action of each kind, in the schema's order, as the model sends it.
    fn one_of_each() -> Vec<serde_json::Value> {
        vec![
            json!({ "navigate": { "url": "https://example.com" } }),
            json!({ "click": { "index": 1 } }),
            json!({ "type": { "index": 1, "text": "mug" } }),
            json!({ "select_option": { "index": 1, "option": "Blue" } }),
            json!({ "scroll": { "direction": "down" } }),
            json!({ "press_key": { "key": "Enter" } }),
            json!({ "hover": { "index": 1 } }),
            json!({ "back": {} }),
            json!({ "forward": {} }),
            json!({ "reload": {} }),
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
        ]
    }

    #[test]
    fn every_actions_name_is_the_one_it_is_sent_and_listed_by() {
        let examples = one_of_each();
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

    /// The command each action becomes is the one its entry of the catalog declares (its own,
    /// or `becomes`), and an action the run answers itself becomes none.
    #[test]
    fn every_action_becomes_the_command_its_kind_declares() {
        let attachments = [crate::artifact::Attachment {
            artifact_id: "art-1".into(),
            name: "cv.pdf".into(),
            content_type: "application/pdf".into(),
            size: 3,
        }];
        for example in one_of_each() {
            let action: AgentAction = serde_json::from_value(example).unwrap();
            let command = action.command(&attachments, "main").unwrap();
            assert_eq!(
                command.as_ref().map(ActionCommand::kind),
                action.kind().command_kind(),
                "{}",
                action.name()
            );
        }
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
        let bridge: Vec<&str> = AgentActionKind::iter()
            .filter(|kind| kind.uses_bridge())
            .map(AgentActionKind::name)
            .collect();
        assert_eq!(
            bridge,
            ["file_read", "file_write", "file_edit", "run_command"]
        );
        let invocation = |action: &AgentAction| match action.command(&[], "subtask-1") {
            Ok(Some(ActionCommand::BridgeInvoke {
                tool,
                args,
                agent_id,
                confirmed_protected_path: None,
            })) => {
                assert_eq!(agent_id, "subtask-1");
                Some((tool, args))
            }
            _ => None,
        };
        let run = AgentAction::RunCommand {
            command: "ls -la".into(),
            timeout_ms: Some(1_000),
        };
        assert_eq!(
            invocation(&run),
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
            invocation(&edit),
            Some((
                BridgeTool::Edit,
                json!({ "path": "a.txt", "old": "x", "new": "y" })
            ))
        );
        assert!(AgentActionKind::names_a_bridge_action(edit.name()));
        assert!(!AgentActionKind::names_a_bridge_action("back"));
        assert!(!AgentActionKind::names_a_bridge_action("no_such_action"));
        assert_eq!(invocation(&AgentAction::Back {}), None);
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
