//! Browser actions (seed 000 §4): what the server asks the extension to do, and what comes back.
//!
//! Every action carries `actionId` (the idempotency key), `taskId`, `clientId` and `tabId`
//! where a tab is concerned. The extension answers `action_ack` at once and `action_result` when
//! done; an action delivered twice is executed once and its stored result is sent again.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::snapshot::ChromeId;
use crate::ErrorObject;

#[macro_use]
mod define;
mod catalog;

pub use catalog::{ActionCommand, ActionKind, AgentAction, AgentActionKind, DragPoint};

/// Where a DOM scan looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ScanScope {
    /// The visible viewport, with a margin.
    #[default]
    Viewport,
    /// The whole document.
    Document,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ClickStrategy {
    /// `Input.dispatchMouseEvent` through `chrome.debugger`: trusted events.
    CdpMouse,
    /// `element.click()` and synthetic events.
    DomClick,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TypeStrategy {
    /// `Input.insertText` / `Input.dispatchKeyEvent` through `chrome.debugger`.
    CdpKey,
    /// Setting the value with the native setter and firing `input`/`change`.
    DomInput,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ScrollDirection {
    Up,
    Down,
    Left,
    Right,
}

/// Which element an action targets, named exactly one way: a `clickId` from the latest
/// `browser_dom_index` (the model's way), an XPath, a CSS selector, what it says (`label`), or
/// an ARIA `role`, narrowed by what it says when `label` is given too — the last three let a
/// script drive a page without indexing it. The extension refuses a target named no way or
/// several ways (`INVALID_TARGET`), and a label or role that fits several elements equally well
/// (`INVALID_TARGET`, naming them) rather than guess. (`label`, not `text` or `name`: these
/// fields sit beside the action's own, and `browser_type` has a `text`, `browser_upload_file`
/// a `name`.)
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub click_id: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub xpath: Option<String>,
    /// A CSS selector: its first match, in open shadow roots too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub selector: Option<String>,
    /// What the element says: its visible text or accessible name (a button's or link's text,
    /// a field's label, placeholder or `aria-label`), case and spacing ignored; an exact match
    /// wins over a partial one, a control over plain text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub label: Option<String>,
    /// An ARIA role, given by the `role` attribute or implied by the element (`button`, `link`,
    /// `textbox`, `checkbox`, `combobox`, `heading`, …); with `label`, only the elements of that
    /// role whose accessible name matches it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub role: Option<String>,
    /// The element's facts as the step was rated on them (none: it had none): the extension
    /// reads them again just before acting and refuses with `TARGET_CHANGED` when they differ.
    /// (Boxed: every queued action is as large as its largest kind.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, as = "Option<ElementFacts>")]
    pub expect: Option<Box<ElementFacts>>,
}

impl Target {
    /// An element of the latest DOM index.
    pub fn click_id(id: u32) -> Self {
        Self {
            click_id: Some(id),
            ..Self::default()
        }
    }
}

/// Where a task may go (seed 002 §4.3, with the deployment's `MIMO_ALLOWED_DOMAINS`
/// and `MIMO_BLOCKED_DOMAINS`). A rule is a host (`shop.example`, which covers its subdomains
/// too, on any port) or a host and port (`127.0.0.1:8080`, exactly that). Blocked rules win;
/// with allowed rules, only what they cover may be visited.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DomainPolicy {
    #[serde(default)]
    pub allowed: Vec<String>,
    #[serde(default)]
    pub blocked: Vec<String>,
}

impl DomainPolicy {
    pub fn is_open(&self) -> bool {
        self.allowed.is_empty() && self.blocked.is_empty()
    }

    /// Why `url` may not be visited under the deployment's rules, naming the rule; `None` when
    /// it may. Only web pages are judged here (the extension refuses every other scheme on its
    /// own).
    pub fn refusal(&self, url: &str) -> Option<String> {
        self.refusal_under(url, "MIMO_BLOCKED_DOMAINS", "MIMO_ALLOWED_DOMAINS")
    }

    /// [`DomainPolicy::refusal`] under a task's own rules.
    pub fn task_refusal(&self, url: &str) -> Option<String> {
        self.refusal_under(
            url,
            "this task's blocked sites",
            "this task's allowed sites",
        )
    }

    /// Why `url` may not be visited, naming the rule and where it is set. The URL is read as a
    /// browser reads it and hosts compared normalised ([`site_host`]), so no spelling of a
    /// blocked host (case, a trailing dot, IDNA, `\`, userinfo, percent-escapes) gets past.
    fn refusal_under(&self, url: &str, blocked_by: &str, allowed_by: &str) -> Option<String> {
        let (host, port) = host_and_port(url)?;
        let covers = |rule: &String| {
            let rule = rule.trim().trim_start_matches("*.");
            let (rule_host, rule_port) = match rule.rsplit_once(':') {
                Some((h, p)) if !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) => {
                    (h, p.parse::<u16>().ok())
                }
                _ => (rule, None),
            };
            let Some(rule_host) = site_host(rule_host) else {
                return false;
            };
            match rule_port {
                Some(rule_port) => rule_host == host && rule_port == port,
                None => host == rule_host || host.ends_with(&format!(".{rule_host}")),
            }
        };
        if let Some(rule) = self.blocked.iter().find(|r| covers(r)) {
            return Some(format!(
                "{url} is on a blocked domain (rule {rule:?} of {blocked_by})"
            ));
        }
        if !self.allowed.is_empty() && !self.allowed.iter().any(covers) {
            return Some(format!(
                "{url} is not on an allowed domain ({allowed_by}: {})",
                self.allowed.join(", ")
            ));
        }
        None
    }

    /// Why a task's own rules cannot be used, or `None`: at most 100 rules, each a host
    /// (`shop.example`, `*.shop.example`) or a host and port, no scheme or path.
    pub fn problem(&self) -> Option<String> {
        let rules: Vec<&String> = self.allowed.iter().chain(&self.blocked).collect();
        if rules.len() > MAX_TASK_DOMAIN_RULES {
            return Some(format!(
                "{} site rules, over the limit of {MAX_TASK_DOMAIN_RULES}",
                rules.len()
            ));
        }
        rules.into_iter().find_map(|rule| {
            let host = rule.trim().trim_start_matches("*.");
            let valid = !host.is_empty()
                && host.len() <= 253
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '_'));
            (!valid).then(|| {
                format!("{rule:?} is not a site rule: write a host (shop.example, *.shop.example) or host:port, without a scheme or path")
            })
        })
    }
}

/// Most allowed and blocked site rules a task may have.
pub const MAX_TASK_DOMAIN_RULES: usize = 100;

/// The host and port of an http(s) URL as a browser reads it (WHATWG URL parsing: `\` as `/`,
/// userinfo dropped, percent-escapes and IDNA in the host resolved, IPv4 written any way made
/// dotted), the host normalised as [`site_host`] does and the port the scheme's default when the
/// URL names none.
pub(crate) fn host_and_port(url: &str) -> Option<(String, u16)> {
    let parsed = url::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let host = parsed.host_str()?.trim_end_matches('.');
    Some((host.to_owned(), parsed.port_or_known_default()?))
}

/// A host as rules and URLs are compared: lower case, punycode (IDNA), without trailing dots
/// (`evil.test.` is `evil.test`); `None` when it is not a host.
pub fn site_host(host: &str) -> Option<String> {
    let host = host.trim().trim_end_matches('.');
    match url::Host::parse(host).ok()? {
        url::Host::Domain(domain) => Some(domain),
        other => Some(other.to_string()),
    }
}

/// One end of a drag: an element of the latest index (`clickId`), or a point of the viewport
/// (`x`, `y` in CSS pixels, as in a screenshot of the viewport).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DragEnd {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub click_id: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub x: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub y: Option<f64>,
}

/// What running an action a second time does: it decides whether an attempt whose outcome is
/// unknown (a timeout, a restarted extension) may simply be run again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Rerun {
    /// It only reads the page or waits: a second run does no harm.
    ReadOnly,
    /// It changes the page, but a second run ends in the same state (opening a URL).
    Idempotent,
    /// A second run acts again (a second click, the text typed twice): never run it blindly.
    Once,
}

/// Who checks that an action did what it is for (a step that changed nothing a person would
/// notice is reported as such: a warning, and partial).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Verify {
    /// The extension watches the tab after it; what counts follows from the element it acts on
    /// (a toggle's state, a link's navigation, a menu opening).
    Watched,
    /// The action's handler reads its own result back and says so.
    Handler,
    /// Nothing to check: it only looks, or what it does leaves nothing a page's scripts could see.
    Look,
}

/// What kind of action an action of the catalog is. Every rule that depends on the kind of
/// action reads it from here — the server's scheduler as [`ActionKind::traits`], the extension
/// as the generated `ACTION_TRAITS` table — so a new action is described in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ActionTraits {
    /// Whether an attempt whose outcome is unknown may simply be run again.
    pub rerun: Rerun,
    /// It changes the page: the extension refuses it while the person has taken over the task's
    /// tab or stopped the task there.
    pub mutating: bool,
    /// Who checks that it did what it is for, so that a step that changed nothing is never
    /// reported as a plain success.
    pub verify: Verify,
    /// It loads a page or uploads an artifact, so it gets the slow execution budget
    /// (`MIMO_ACTION_SLOW_EXEC_TIMEOUT_MS`) instead of the usual one.
    pub slow: bool,
    /// It captures the page for the model (seed 000 §4.5: the screenshot, the readable text); a
    /// failed capture is retried after half the usual delay, as page preparation waits on it.
    pub captures_page: bool,
    /// It acts in the task's tab (which must be open, and on a site the person allowed); only
    /// the actions that open and close that tab do not.
    pub needs_task_tab: bool,
    /// What the extension's overlay says while it runs. `{name}` stands for the parameter
    /// `name`, `{a|b}` for the first of `a` and `b` given, `{target}` for the targeted element
    /// (`[clickId]` or the XPath), each shortened and "the page" when absent; `{name:quoted}`
    /// quotes the value as JSON.
    pub label: &'static str,
}

impl ActionKind {
    /// The catalog name, e.g. `browser_click`.
    pub fn name(self) -> &'static str {
        self.into()
    }

    pub const fn rerun(self) -> Rerun {
        self.traits().rerun
    }
}

impl ActionCommand {
    /// The catalog name, e.g. `browser_click`.
    pub fn name(&self) -> String {
        self.kind().name().to_owned()
    }

    pub fn kind(&self) -> ActionKind {
        ActionKind::from(self)
    }

    /// Whether the action acts on (and so needs) the task's tab.
    pub fn needs_tab(&self) -> bool {
        self.kind().traits().needs_task_tab
    }
}

/// Server → extension: one action to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BrowserAction {
    pub action_id: String,
    /// 1 for the first delivery; a retry after a retryable failure is a new attempt, run anew.
    /// A repeated delivery of the same attempt is answered from the extension's stored result.
    pub attempt: u32,
    pub task_id: String,
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tab_id: Option<ChromeId>,
    /// How long the server waits for this attempt's result once it is acknowledged: the
    /// extension ends an attempt that is still running a little before, with an error that
    /// says what it was doing, rather than let it hold the task's queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub budget_ms: Option<u64>,
    #[serde(flatten)]
    pub command: ActionCommand,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ActionStatus {
    Ok,
    /// Done, with something missing or degraded: see `warnings` (and `missing`).
    Partial,
    Error,
}

/// Extension → server: how an action ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ActionOutcome {
    pub action_id: String,
    pub attempt: u32,
    pub task_id: String,
    pub status: ActionStatus,
    /// The action's result (its shape depends on the action: see the `*Result` types), as it is
    /// kept: page text and field values with personal data filtered out when the task's evidence
    /// is (its `redaction`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub result: Option<serde_json::Value>,
    /// The result as the model reads it, when that differs from what is kept (the task filters
    /// its evidence but not the model's text): it goes to the model and nowhere else — never
    /// stored, shown or exported ([`ActionOutcome::kept`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub model_result: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<ErrorObject>,
    #[serde(default)]
    pub warnings: Vec<String>,
    /// A JavaScript dialog the page shows when the action ended (opened by it, or before it):
    /// until it is answered (`browser_dialog`) the page's scripts are held and nothing else on
    /// it can be used. Boxed: most outcomes have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub dialog: Option<Box<PageDialog>>,
    /// The task's current tab after the action (where its next actions act): it changes when
    /// the page opened a new tab, or the action switched, opened or closed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tab_id: Option<ChromeId>,
    /// The site (origin) the person has not allowed Mimo on, when that is why the action did not
    /// run (`PERMISSION_DENIED`): a run waits for them to allow it instead of failing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub waits_for_site: Option<String>,
    /// Where the attempt's time went in the extension, stage by stage in order (the queue,
    /// its log, the checks, the act, the verification, …): the server's span from sending the
    /// action to having its result, less these, is the way there and back. Diagnostics only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<StageTime>>", optional)]
    pub timings: Vec<StageTime>,
}

/// One stage of an attempt in the extension and its milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct StageTime {
    pub stage: String,
    pub ms: f64,
}

impl ActionOutcome {
    /// The result as the model reads it.
    pub fn for_model(&self) -> Option<&serde_json::Value> {
        self.model_result.as_ref().or(self.result.as_ref())
    }

    /// The outcome as it may be kept: without what only the model may read.
    pub fn kept(mut self) -> Self {
        self.model_result = None;
        self
    }
}

/// One of a task's tabs (a task starts with one; links and `window.open` add more).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TaskTab {
    pub tab_id: ChromeId,
    pub url: String,
    pub title: String,
    /// The tab the task's actions act in.
    pub current: bool,
}

/// The kinds of JavaScript dialog a page can open (CDP `Page.DialogType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DialogKind {
    Alert,
    Confirm,
    Prompt,
    Beforeunload,
}

/// A JavaScript dialog open in a tab (CDP `Page.javascriptDialogOpening`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PageDialog {
    pub kind: DialogKind,
    pub message: String,
    /// The text a prompt offers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub default_prompt: Option<String>,
    /// The page that opened it.
    pub url: String,
}

/// Result of `task_start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TaskStartResult {
    pub tab_id: ChromeId,
    pub window_id: ChromeId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub group_id: Option<ChromeId>,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
}

/// Result of `browser_screenshot`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScreenshotResult {
    pub artifact_id: String,
    pub url: String,
    pub width: u32,
    pub height: u32,
    /// Its pixels per CSS pixel (the device pixel ratio, the width cap, the page's zoom): what
    /// maps a point or a box of the page to the image and back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub scale: Option<f64>,
}

/// Result of `browser_readability_extract` (size rules: `READABILITY_*` constants).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReadabilityResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub artifact_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub markdown: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[ts(type = "number")]
    pub content_length_bytes: u64,
    pub truncated: bool,
}

/// Result of `browser_observe`: the page as the model is shown it, each part with its own
/// outcome — one that failed leaves the others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ObserveResult {
    /// Why the page was captured before it finished loading, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub not_loaded: Option<String>,
    pub screenshot: ObservedPart<ScreenshotResult>,
    pub readability: ObservedPart<ReadabilityResult>,
    pub dom_index: ObservedPart<DomIndexResult>,
}

/// One part of an observation: its result, or why there is none; `partial` and `warnings` as an
/// action's own would say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ObservedPart<T> {
    #[serde(default = "none", skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub result: Option<T>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<ErrorObject>,
    #[serde(default)]
    pub partial: bool,
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// `Option::None` for any `T` (serde's `default` would ask `T: Default`).
fn none<T>() -> Option<T> {
    None
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, TS)]
pub struct BoundingBox {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

/// One interactive element found by `browser_dom_index`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DomElement {
    pub click_id: u32,
    pub tag: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub role: Option<String>,
    /// Accessible name or visible text, shortened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub xpath: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub bbox: Option<BoundingBox>,
    /// The frame the element lives in (0 = top frame).
    #[serde(default)]
    pub frame_id: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub checked: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub disabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub expanded: Option<bool>,
    /// What using it would do beyond the page (seed 002 §6.1): the risk policy rates steps from
    /// these, not from the model's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub facts: Option<ElementFacts>,
}

/// Facts about an element that make using it risky, as the page defines them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ElementFacts {
    /// The form it sends: clicking it submits it (a submit button), or it is a field of it
    /// (Enter submits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub form: Option<FormFacts>,
    /// Whether clicking it submits `form` (a submit button), as against being a field of it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub submits: bool,
    /// A link to another origin: where it goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub leaves_to: Option<String>,
    /// A link that downloads a file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub download: bool,
    /// It is inside a frame of another origin than the page's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cross_origin_frame: bool,
}

/// A form an element belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FormFacts {
    /// `GET` or `POST` (`DIALOG` for a form that only closes a dialog).
    pub method: String,
    /// Where it is sent (absolute).
    pub action: String,
    /// The action is on another origin than the page: what is typed goes to another site.
    pub cross_origin: bool,
    /// The kinds of fields it holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FieldKind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum FieldKind {
    Password,
    /// A card number, its code or expiry, an account number.
    Payment,
    /// An e-mail address, a phone number, a postal address, a name or a birth date.
    Personal,
}

/// Result of `browser_dom_index` (and, with the same elements, `browser_xpath_scan`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DomIndexResult {
    pub elements: Vec<DomElement>,
    /// The compact text form for the model: one line per element, indented by structure.
    #[serde(default)]
    pub text: String,
    pub url: String,
    pub title: String,
    #[serde(default)]
    pub scroll_x: f64,
    #[serde(default)]
    pub scroll_y: f64,
    /// The whole index, stored as a `dom_index` artifact when it does not fit in one message;
    /// `elements` and `text` then hold only the part that fits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub artifact_id: Option<String>,
    /// Set (true) when `elements` and `text` are cut short of the whole index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub truncated: Option<bool>,
    /// The task's tabs when it has several, the indexed one `current`.
    #[serde(default)]
    pub tabs: Vec<TaskTab>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::IntoEnumIterator;

    #[test]
    fn domain_rules_cover_hosts_subdomains_and_exact_ports_and_blocked_ones_win() {
        let policy = DomainPolicy {
            allowed: vec!["shop.example".into(), "127.0.0.1:8080".into()],
            blocked: vec!["pay.shop.example".into()],
        };
        assert_eq!(policy.refusal("https://shop.example/cart"), None);
        assert_eq!(policy.refusal("https://www.shop.example:8443/a?b#c"), None);
        assert_eq!(policy.refusal("http://127.0.0.1:8080/x"), None);
        let blocked = policy.refusal("https://pay.shop.example/checkout").unwrap();
        assert!(
            blocked.contains("\"pay.shop.example\" of MIMO_BLOCKED_DOMAINS"),
            "{blocked}"
        );
        for url in [
            "https://evil.example/",
            "https://notshop.example/",
            "http://127.0.0.1:9090/",
            "https://shop.example.evil.test/",
        ] {
            assert!(
                policy
                    .refusal(url)
                    .unwrap()
                    .contains("not on an allowed domain"),
                "{url}"
            );
        }
        assert_eq!(
            policy.refusal("about:blank"),
            None,
            "not a web page: judged elsewhere"
        );
        assert!(DomainPolicy::default().is_open());
        assert_eq!(DomainPolicy::default().refusal("https://any.test/"), None);
        let only_blocked = DomainPolicy {
            allowed: vec![],
            blocked: vec!["*.ads.test".into()],
        };
        assert!(only_blocked.refusal("https://x.ads.test/").is_some());
        assert_eq!(only_blocked.refusal("https://news.test/"), None);
    }

    /// Every catalog name as serde writes it, from the TypeScript union generated from serde.
    fn serde_names() -> Vec<String> {
        let decl = <ActionCommand as TS>::decl(&ts_rs::Config::new());
        decl.split("\"name\": \"")
            .skip(1)
            .map(|rest| rest.split('"').next().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn kinds_are_named_as_on_the_wire() {
        let kinds: Vec<String> = ActionKind::iter().map(|k| k.name().to_owned()).collect();
        assert_eq!(kinds, serde_names());
        let html = ActionCommand::BrowserGetHtml { xpath: None };
        assert_eq!(html.name(), "browser_get_html");
        assert_eq!(
            serde_json::to_value(&html).unwrap()["name"],
            html.kind().name()
        );
    }

    /// The wire form is `{"name", "params"}` whichever comes first, nested or alone, with the
    /// decoder's own words for what is wrong.
    #[test]
    fn commands_are_read_and_written_as_name_and_params() {
        let back = ActionCommand::BrowserBack {};
        let written = serde_json::to_string(&back).unwrap();
        assert_eq!(written, r#"{"name":"browser_back","params":{}}"#);
        let typed = ActionCommand::BrowserType {
            target: Target::click_id(4),
            text: "hi".into(),
            submit: Some(true),
            strategy: None,
        };
        let value = serde_json::to_value(&typed).unwrap();
        assert_eq!(value["name"], "browser_type");
        assert_eq!(value["params"]["text"], "hi");
        for text in [
            serde_json::to_string(&value).unwrap(),
            format!(
                r#"{{"params":{},"name":"browser_type","extra":1}}"#,
                value["params"]
            ),
        ] {
            let read: ActionCommand = serde_json::from_str(&text).unwrap();
            assert_eq!(read, typed, "{text}");
            // Inside another value too.
            let nested: Vec<ActionCommand> = serde_json::from_str(&format!("[{text}]")).unwrap();
            assert_eq!(nested, vec![typed.clone()]);
        }
        let error = |text: &str| {
            serde_json::from_str::<ActionCommand>(text)
                .unwrap_err()
                .to_string()
        };
        assert!(error(r#"{"name":"browser_fly","params":{}}"#)
            .contains("unknown variant `browser_fly`"));
        assert!(error(r#"{"name":"browser_back"}"#).contains("missing field `params`"));
        assert!(error(r#"{"params":{}}"#).contains("missing field `name`"));
        assert!(error(r#"{"name":7,"params":{}}"#).contains("`name` must be a string"));
        assert!(error(r#"["browser_back",{}]"#).contains("expected an object"));
        assert!(error(r#"{"name":"browser_type","params":{"text":3}}"#).contains("invalid type"));
    }

    fn names_where(pick: fn(ActionTraits) -> bool) -> Vec<&'static str> {
        ActionKind::iter()
            .filter(|k| pick(k.traits()))
            .map(ActionKind::name)
            .collect()
    }

    /// The traits the scheduler's and the extension's behaviour depends on, pinned action by
    /// action: changing one changes what a timeout, a takeover or a restart does to it.
    #[test]
    fn traits_pin_the_behaviour_that_depends_on_them() {
        assert_eq!(
            names_where(|t| t.rerun == Rerun::ReadOnly),
            [
                "browser_debugger_attach",
                "browser_wait_for_loaded",
                "browser_screenshot",
                "browser_readability_extract",
                "browser_dom_index",
                "browser_observe",
                "browser_xpath_scan",
                "browser_get_html",
                "browser_wait_for",
                "browser_read_tab",
            ]
        );
        assert_eq!(
            names_where(|t| t.rerun == Rerun::Idempotent),
            [
                "task_start",
                "task_stop",
                "browser_navigate",
                "browser_hover",
                "browser_reload",
                "browser_scroll_to",
                "browser_hover_at",
                "browser_switch_tab",
            ]
        );
        assert_eq!(
            names_where(|t| t.rerun == Rerun::Once),
            [
                "browser_click",
                "browser_type",
                "browser_select_option",
                "browser_scroll",
                "browser_press_key",
                "browser_back",
                "browser_forward",
                "browser_dialog",
                "browser_click_at",
                "browser_drag",
                "browser_upload_file",
                "browser_open_tab",
                "browser_close_tab",
                "bridge_invoke",
            ]
        );
        assert_eq!(
            names_where(|t| t.mutating),
            [
                "browser_navigate",
                "browser_click",
                "browser_type",
                "browser_select_option",
                "browser_scroll",
                "browser_press_key",
                "browser_hover",
                "browser_back",
                "browser_forward",
                "browser_reload",
                "browser_dialog",
                "browser_scroll_to",
                "browser_click_at",
                "browser_hover_at",
                "browser_drag",
                "browser_upload_file",
                "browser_switch_tab",
                "browser_open_tab",
                "browser_close_tab",
            ]
        );
        assert_eq!(
            names_where(|t| t.slow),
            [
                "task_start",
                "browser_screenshot",
                "browser_readability_extract",
                "browser_observe",
                "browser_get_html",
                "browser_navigate",
                "browser_back",
                "browser_forward",
                "browser_reload",
                "browser_scroll_to",
                "browser_upload_file",
                "browser_read_tab",
                "browser_open_tab",
            ]
        );
        assert_eq!(
            names_where(|t| t.captures_page),
            [
                "browser_screenshot",
                "browser_readability_extract",
                "browser_observe",
            ]
        );
        assert_eq!(
            names_where(|t| t.verify == Verify::Watched),
            [
                "browser_click",
                "browser_select_option",
                "browser_press_key",
                "browser_click_at",
                "browser_drag",
            ]
        );
        assert_eq!(
            names_where(|t| t.verify == Verify::Look),
            [
                "browser_screenshot",
                "browser_readability_extract",
                "browser_dom_index",
                "browser_observe",
                "browser_xpath_scan",
                "browser_get_html",
                "browser_hover",
                "browser_hover_at",
                "browser_read_tab",
            ]
        );
        assert_eq!(
            names_where(|t| !t.needs_task_tab),
            [
                "task_start",
                "task_stop",
                "browser_read_tab",
                "bridge_invoke",
            ]
        );
    }

    /// A label's `{…}` names parameters of its own action: a misspelt one would show
    /// "the page" in the overlay without any error.
    #[test]
    fn labels_name_their_actions_parameters() {
        let decl = <ActionCommand as TS>::decl(&ts_rs::Config::new());
        for variant in decl.split("{ \"name\": \"").skip(1) {
            let name = variant.split('"').next().unwrap();
            let params = variant.split("\"params\": ").nth(1).unwrap();
            let has = |param: &str| {
                params
                    .split(|c: char| c.is_whitespace() || c == '{')
                    .filter_map(|word| word.strip_suffix(':'))
                    .any(|field| field.trim_end_matches('?') == param)
            };
            let kind = ActionKind::iter().find(|k| k.name() == name).unwrap();
            let label = kind.traits().label;
            for slot in label
                .split('{')
                .skip(1)
                .map(|s| s.split('}').next().unwrap())
            {
                let names = slot.strip_suffix(":quoted").unwrap_or(slot);
                for param in names.split('|') {
                    match param {
                        "target" => assert!(has("clickId") && has("xpath"), "{name}: {label}"),
                        _ => assert!(has(param), "{name}: {label} names no parameter {param}"),
                    }
                }
            }
        }
    }
}
