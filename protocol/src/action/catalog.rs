//! The action catalog: one entry per action, and nothing else decides what an action is.
//!
//! An entry holds what the model is told of the action (its arguments and their doc comments,
//! which become the tool's JSON Schema), how a step of it reads for people (`wording`), the
//! element it acts on (`target`), the command the extension runs (its parameters), the
//! command's traits (rerun class, page-changing, verification, budget, overlay label), and how
//! the model's action becomes that command (`into`). [`AgentAction`], [`ActionCommand`], their
//! names, the schema, the prompt's list of actions, the TypeScript types, the extension's
//! `ACTION_TRAITS` and the web app's `STEP_WORDING` all come from here (the macro that reads it
//! is in `define.rs`, whose documentation gives the four shapes of an entry).
//!
//! Wording templates: `{arg}` the argument as it is; `{arg:quoted}` in quotes, shortened to 60
//! characters; `{arg:round}` a number rounded; `{arg:element}` the element with that index (its
//! name on the page when known, else `element [index]`); `{arg:end}` a drag's end (an element,
//! or a point); `{arg?}` nothing, but the argument must be true; `[a|b]` the first alternative
//! all of whose arguments are given (present, not false), else nothing. The first letter is
//! capitalised where it is shown.
//!
//! Overlay labels (`traits.label`): `{name}` stands for the command's parameter `name`, `{a|b}`
//! for the first of `a` and `b` given, `{target}` for the targeted element (`[clickId]` or the
//! XPath), each shortened and "the page" when absent; `{name:quoted}` quotes the value as JSON.

#[cfg(not(target_arch = "wasm32"))]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{
    ActionTraits, ClickStrategy, DomainPolicy, DragEnd, ElementFacts, Rerun, ScanScope,
    ScrollDirection, Target, TypeStrategy, Verify,
};
use crate::artifact::Attachment;
use crate::bridge::{BashArgs, BridgeTool, EditArgs, ReadArgs, WriteArgs};
use crate::snapshot::ChromeId;
use crate::{ErrorCode, ErrorObject};

/// What a model action's command is made with besides its arguments (see
/// [`AgentAction::command`]).
struct CommandContext<'a> {
    /// The files attached to the task (what `upload_file` names).
    attachments: &'a [Attachment],
    /// The agent a bridge invocation is attributed to (`main`, or a sub-agent's `subtask-N`).
    agent_id: &'a str,
}

impl CommandContext<'_> {
    /// The local bridge's `tool` invoked with `args`.
    fn bridge(&self, tool: BridgeTool, args: impl Serialize) -> ActionCommand {
        ActionCommand::BridgeInvoke {
            tool,
            args: serde_json::to_value(args).expect("bridge arguments serialize"),
            agent_id: self.agent_id.to_owned(),
            confirmed_protected_path: None,
        }
    }

    /// Puts the attached file named `file` into the element `index`; a name that is not
    /// attached is the step's error.
    fn upload(&self, index: u32, file: &str) -> Result<ActionCommand, ErrorObject> {
        let Some(attachment) = self.attachments.iter().find(|a| a.name == file) else {
            let names: Vec<&str> = self.attachments.iter().map(|a| a.name.as_str()).collect();
            return Err(ErrorObject::new(
                ErrorCode::TargetNotFound,
                if names.is_empty() {
                    format!("no file is attached to this task, so {file:?} cannot be uploaded: ask the user to attach it")
                } else {
                    format!("no attached file is named {file:?}; the attached files are {names:?}")
                },
            ));
        };
        Ok(ActionCommand::BrowserUploadFile {
            target: Target::click_id(index),
            artifact_id: attachment.artifact_id.clone(),
            name: attachment.name.clone(),
            content_type: attachment.content_type.clone(),
        })
    }
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

impl From<DragPoint> for DragEnd {
    fn from(point: DragPoint) -> Self {
        DragEnd {
            click_id: point.index,
            x: point.x,
            y: point.y,
        }
    }
}

action_catalog! {
    // ---- The server's own commands ----

    /// Opens the task's own tab, in its own unfocused window, grouped and titled.
    #[serde(rename_all = "camelCase")]
    command TaskStart {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        url: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        reuse_existing_tab: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        group_title: Option<String>,
        /// Start on this tab of the person's ("continue on this page") instead of a window of
        /// the task's own: it joins the task until the task ends, and is never closed by it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        adopt_tab_id: Option<ChromeId>,
        /// Where the task may go: the extension checks every action's page against it, after
        /// redirects too.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        domains: Option<DomainPolicy>,
        /// The task's own rules, checked as well as `domains` (boxed: most tasks have none, and
        /// every queued action is as large as this one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, as = "Option<DomainPolicy>")]
        task_domains: Option<Box<DomainPolicy>>,
        /// What personal data the extension keeps out of what it sends for the task (absent:
        /// the default, evidence filtered).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        redaction: Option<crate::secrets::RedactionPolicy>,
    }
    traits {
        rerun: Idempotent,
        mutating: false,
        // Verified: the task's tab opened or taken.
        verify: Handler,
        slow: true,
        captures_page: false,
        needs_task_tab: false,
        label: "starting",
    }

    #[serde(rename_all = "camelCase")]
    command TaskStop {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        close_tab: Option<bool>,
    }
    traits {
        rerun: Idempotent,
        mutating: false,
        // Verified: the task's tabs let go.
        verify: Handler,
        slow: false,
        captures_page: false,
        needs_task_tab: false,
        label: "stopping",
    }

    command BrowserDebuggerAttach {}
    traits {
        rerun: ReadOnly,
        mutating: false,
        // Verified: the debugger attached.
        verify: Handler,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "getting ready",
    }

    #[serde(rename_all = "camelCase")]
    command BrowserWaitForLoaded {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        timeout_ms: Option<u32>,
    }
    traits {
        rerun: ReadOnly,
        mutating: false,
        // Its budget is its own timeout (`Timeouts::exec_ms`).
        // Verified: the page loaded.
        verify: Handler,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "waiting for the page to load",
    }

    #[serde(rename_all = "camelCase")]
    command BrowserScreenshot {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        full_page: Option<bool>,
    }
    traits {
        rerun: ReadOnly,
        mutating: false,
        verify: Look,
        slow: true,
        captures_page: true,
        needs_task_tab: true,
        label: "taking a screenshot",
    }

    command BrowserReadabilityExtract {}
    traits {
        rerun: ReadOnly,
        mutating: false,
        verify: Look,
        slow: true,
        captures_page: true,
        needs_task_tab: true,
        label: "reading the page",
    }

    #[serde(rename_all = "camelCase")]
    command BrowserDomIndex {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        scope: Option<ScanScope>,
        /// The attribute the click ids are written to; `data-mimo_click_id` by default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        assign_attr: Option<String>,
        /// Only one region of the page: this element of the last list (a click id of the top
        /// frame) and what it holds. The ids of the rest are forgotten, as any new list does.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        within: Option<u32>,
    }
    traits {
        rerun: ReadOnly,
        mutating: false,
        verify: Look,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "reading the page",
    }

    /// Prepares the page for the model in one round trip: waits for it to load (up to
    /// `timeout_ms`), then takes its screenshot, readable text and element list together. Each
    /// part succeeds or fails on its own ([`ObserveResult`](super::ObserveResult)).
    #[serde(rename_all = "camelCase")]
    command BrowserObserve {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        timeout_ms: Option<u32>,
        /// Whether the result waits until the screenshot and the readable text are stored
        /// (the default). `false`: it comes as soon as each has its artifact id, and their bytes
        /// are stored right after — for a reader that takes neither from R2 at once (the agent
        /// whose model is not shown the screenshot: the text comes inline).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        wait_stored: Option<bool>,
    }
    traits {
        rerun: ReadOnly,
        mutating: false,
        verify: Look,
        slow: true,
        captures_page: true,
        needs_task_tab: true,
        label: "looking at the page",
    }

    command BrowserXpathScan {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        scope: Option<ScanScope>,
    }
    traits {
        rerun: ReadOnly,
        mutating: false,
        verify: Look,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "reading the page",
    }

    command BrowserGetHtml {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        xpath: Option<String>,
    }
    traits {
        rerun: ReadOnly,
        mutating: false,
        verify: Look,
        slow: true,
        captures_page: false,
        needs_task_tab: true,
        label: "reading the page",
    }

    // ---- The model's actions, in the order the model is offered them ----

    /// Open a URL in the task's tab.
    model Navigate { url: String }
    wording "go to {url}";
    command BrowserNavigate {
        url: String,
    }
    traits {
        rerun: Idempotent,
        mutating: true,
        // Verified: the page at the address loaded.
        verify: Handler,
        slow: true,
        captures_page: false,
        needs_task_tab: true,
        label: "opening {url}",
    }
    into |cx| ActionCommand::BrowserNavigate { url };

    /// Click the element with this index.
    model Click { index: u32 }
    wording "click {index:element}";
    target Some(*index);
    command BrowserClick {
        #[serde(flatten)]
        target: Target,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        strategy: Option<ClickStrategy>,
        /// A checkbox, radio button or switch to be left in this state: its state is read just
        /// before acting and it is clicked only when it is not in it already, so a step that
        /// means "ticked" never unticks a box the page (or the person) ticked meanwhile.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        checked: Option<bool>,
    }
    traits {
        rerun: Once,
        mutating: true,
        // Verified: what the element's kind does.
        verify: Watched,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "clicking {target}",
    }
    into |cx| ActionCommand::BrowserClick {
        target: Target::click_id(index),
        strategy: None,
        checked: None,
    };

    /// Replace the content of the input, textarea or editable element with this index by
    /// `text`; `submit` presses Enter afterwards. To type a stored secret write its placeholder
    /// `{{secret:name}}` in `text`: it is filled in at the moment of typing, never shown to you.
    model Type {
        index: u32,
        text: String,
        #[serde(default)]
        submit: bool,
    }
    wording "type {text:quoted} into {index:element}[{submit?} and submit]";
    target Some(*index);
    command BrowserType {
        #[serde(flatten)]
        target: Target,
        text: String,
        /// Press Enter after typing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        submit: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        strategy: Option<TypeStrategy>,
    }
    traits {
        rerun: Once,
        mutating: true,
        // Verified: the field's value, read back.
        verify: Handler,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "typing into {target}",
    }
    into |cx| ActionCommand::BrowserType {
        target: Target::click_id(index),
        text,
        submit: Some(submit),
        strategy: None,
    };

    /// Choose an option (by its value or visible label) in the select with this index.
    model SelectOption { index: u32, option: String }
    wording "choose {option:quoted} in {index:element}";
    target Some(*index);
    command BrowserSelectOption {
        #[serde(flatten)]
        target: Target,
        /// The option's value or its visible label.
        option: String,
    }
    traits {
        rerun: Once,
        mutating: true,
        // Verified: the chosen option, read back.
        verify: Watched,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "choosing {option:quoted}",
    }
    into |cx| ActionCommand::BrowserSelectOption {
        target: Target::click_id(index),
        option,
    };

    /// Scroll the page, or the scrollable element with `index`; `amount` in pixels (one screen
    /// by default).
    model Scroll {
        direction: ScrollDirection,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        index: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        amount: Option<u32>,
    }
    wording "scroll {direction}[ in {index:element}]";
    target *index;
    /// Scrolls the page, or the element targeted (a scrollable container).
    command BrowserScroll {
        #[serde(flatten)]
        target: Target,
        direction: ScrollDirection,
        /// Pixels; a viewport (or container) height/width by default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        amount: Option<u32>,
    }
    traits {
        rerun: Once,
        mutating: true,
        // Verified: the page or element scrolled (else: nothing left to scroll).
        verify: Handler,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "scrolling {direction}",
    }
    into |cx| ActionCommand::BrowserScroll {
        target: Target {
            click_id: index,
            ..Target::default()
        },
        direction,
        amount,
    };

    /// Press a key such as `Enter`, `Escape`, `Tab`, `ArrowDown`, optionally with modifiers
    /// (`Control+a`).
    model PressKey { key: String }
    wording "press {key}";
    /// A key such as `Enter`, `Escape`, `Tab`, `ArrowDown`, optionally with modifiers
    /// (`Control+a`). With `expect`, Enter or Space is pressed only if the focused element's
    /// facts (its form's target, a link's destination) are not outbound, or are the ones the
    /// step was rated on (the field typed into last); `TARGET_CHANGED` otherwise.
    command BrowserPressKey {
        key: String,
        /// The facts of the focused element the step was rated on (none: nothing outbound).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, as = "Option<ElementFacts>")]
        expect: Option<Box<ElementFacts>>,
    }
    traits {
        rerun: Once,
        mutating: true,
        // Verified: any change at a place that does not change by itself.
        verify: Watched,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "pressing {key}",
    }
    into |cx| ActionCommand::BrowserPressKey { key, expect: None };

    /// Move the pointer over the element with this index (opens hover menus).
    model Hover { index: u32 }
    wording "point at {index:element}";
    target Some(*index);
    command BrowserHover {
        #[serde(flatten)]
        target: Target,
    }
    traits {
        rerun: Idempotent,
        mutating: true,
        // Verified: a CSS hover leaves nothing a page's scripts could see.
        verify: Look,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "pointing at {target}",
    }
    into |cx| ActionCommand::BrowserHover {
        target: Target::click_id(index),
    };

    /// Go back to the previous page.
    model Back {}
    wording "go back";
    command BrowserBack {}
    traits {
        rerun: Once,
        mutating: true,
        // Verified: the previous page of the tab's history.
        verify: Handler,
        slow: true,
        captures_page: false,
        needs_task_tab: true,
        label: "going back",
    }
    into |cx| ActionCommand::BrowserBack {};

    /// Go forward again to the page you went back from.
    model Forward {}
    wording "go forward";
    command BrowserForward {}
    traits {
        rerun: Once,
        mutating: true,
        // Verified: the next page of the tab's history.
        verify: Handler,
        slow: true,
        captures_page: false,
        needs_task_tab: true,
        label: "going forward",
    }
    into |cx| ActionCommand::BrowserForward {};

    /// Load the page again from its address (a page that changed since, or did not load
    /// whole). A page that answered a form is not reloaded: navigate to its address instead.
    model Reload {}
    wording "reload the page";
    /// Loads the task's page again and waits for it. The answer to a form is refused
    /// (`INVALID_TARGET`): reloading it could send the form again.
    command BrowserReload {}
    traits {
        // Loading the same address again ends in the same place.
        rerun: Idempotent,
        mutating: true,
        // Verified: the page loaded again.
        verify: Handler,
        slow: true,
        captures_page: false,
        needs_task_tab: true,
        label: "reloading the page",
    }
    into |cx| ActionCommand::BrowserReload {};

    /// Wait until the page shows `text`, its URL contains `url`, or an element matches the CSS
    /// `selector`.
    model WaitFor {
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
    }
    wording "wait for [the text {text:quoted}|the address {url:quoted}|the element {selector:quoted}]";
    /// Waits until the page shows a text, reaches a URL (substring), or has an element
    /// matching a CSS selector.
    #[serde(rename_all = "camelCase")]
    command BrowserWaitFor {
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
    }
    traits {
        rerun: ReadOnly,
        mutating: false,
        // Its budget is its own timeout (`Timeouts::exec_ms`).
        // Verified: the text, element or address appeared.
        verify: Handler,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "waiting for {text|selector|url}",
    }
    into |cx| ActionCommand::BrowserWaitFor {
        text,
        url,
        selector,
        timeout_ms,
    };

    /// Answer the JavaScript dialog the page shows (an alert, a confirm, a prompt, or "leave
    /// this page?"): `accept` true presses OK (or Leave), false Cancel; `text` is the answer
    /// typed into a prompt.
    model Dialog {
        accept: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        text: Option<String>,
    }
    wording "answer the page's dialog: [{accept?}OK|Cancel][ with {text:quoted}]";
    /// Answers the JavaScript dialog (`alert`, `confirm`, `prompt`, `beforeunload`) open in the
    /// task's tab: OK (`accept`) or Cancel, with `text` typed into a prompt.
    command BrowserDialog {
        accept: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        text: Option<String>,
    }
    traits {
        // A dialog answered twice: the second finds none, or a new one it must not answer.
        rerun: Once,
        mutating: true,
        // Verified: the dialog answered and closed.
        verify: Handler,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "answering the page's dialog",
    }
    into |cx| ActionCommand::BrowserDialog { accept, text };

    /// Bring `text` into view, wherever it is on the page (also in a scrolling list, and in a
    /// feed that loads more as it is scrolled): one step instead of many scrolls.
    model ScrollTo { text: String }
    wording "scroll to {text:quoted}";
    /// Brings a text into view (find-in-page), in the page or the scroll container holding it;
    /// a page that loads more as it is scrolled is scrolled to its end until the text appears.
    command BrowserScrollTo {
        text: String,
    }
    traits {
        // Scrolling to the same text again ends in the same place.
        rerun: Idempotent,
        mutating: true,
        // A feed loads as it is scrolled.
        // Verified: the text found and in view.
        verify: Handler,
        slow: true,
        captures_page: false,
        needs_task_tab: true,
        label: "looking for {text:quoted}",
    }
    into |cx| ActionCommand::BrowserScrollTo { text };

    /// Click at a point of the page (x, y in pixels of the page's screenshot, whose size is
    /// given with the page) where the element list has nothing to name: a control drawn on a
    /// canvas, in SVG or a map.
    model ClickAt { x: f64, y: f64 }
    wording "click at {x:round},{y:round}";
    /// A trusted click at a point of the viewport (CSS pixels): for what the element list cannot
    /// name — a control drawn on a canvas, in SVG, on a map. With `expect`, the extension reads
    /// the facts of the element at the point when it acts and refuses with `TARGET_CHANGED`
    /// when they are outbound or irreversible (a submit of a form to another site or holding a
    /// password or payment field, a link to another site, a frame of another site) and differ
    /// from `expect`: a step rated as "nothing outbound here" (`{}`) cannot send a form. Without
    /// it (the person confirmed the step as the riskiest target it could be) nothing is checked.
    command BrowserClickAt {
        x: f64,
        y: f64,
        /// The facts at the point the step was rated on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, as = "Option<ElementFacts>")]
        expect: Option<Box<ElementFacts>>,
        /// `x` and `y` are pixels of a screenshot taken at this scale (its pixels per CSS
        /// pixel: the device pixel ratio, the width cap, the page's zoom); without it, CSS
        /// pixels of the viewport.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        scale: Option<f64>,
    }
    traits {
        rerun: Once,
        mutating: true,
        // Verified: what the element at the point does.
        verify: Watched,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "clicking at {x},{y}",
    }
    into |cx| ActionCommand::BrowserClickAt {
        x,
        y,
        expect: None,
        scale: None,
    };

    /// Move the mouse to a point of the page (x, y as for click_at).
    model HoverAt { x: f64, y: f64 }
    wording "point at {x:round},{y:round}";
    /// Moves the mouse to a point of the viewport (hover menus drawn at a point).
    command BrowserHoverAt {
        x: f64,
        y: f64,
        /// As for [`ActionCommand::BrowserClickAt`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        scale: Option<f64>,
    }
    traits {
        rerun: Idempotent,
        mutating: true,
        // Verified: a CSS hover leaves nothing a page's scripts could see.
        verify: Look,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "pointing at {x},{y}",
    }
    into |cx| ActionCommand::BrowserHoverAt { x, y, scale: None };

    /// Drag from one element or point to another: a card (draggable) to a column (dropzone),
    /// an item of a sortable list to another's place, a slider's knob.
    model Drag { from: DragPoint, to: DragPoint }
    wording "drag {from:end} to {to:end}";
    /// Drags with trusted input from one element or point to another: HTML5 drag and drop (the
    /// drag CDP intercepts, then dropped) and pointer-based dragging (press, moves, release).
    /// Both ends are checked as `browser_click_at` checks its point.
    command BrowserDrag {
        from: DragEnd,
        to: DragEnd,
        /// What the step was rated on at the point it acts (see [`ActionCommand::BrowserClickAt`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, as = "Option<ElementFacts>")]
        expect: Option<Box<ElementFacts>>,
        /// The scale of the ends' points (see [`ActionCommand::BrowserClickAt`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        scale: Option<f64>,
    }
    traits {
        rerun: Once,
        mutating: true,
        // Verified: the dragged element moved, or where it was dropped changed.
        verify: Watched,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "dragging",
    }
    into |cx| ActionCommand::BrowserDrag {
        from: from.into(),
        to: to.into(),
        expect: None,
        scale: None,
    };

    /// Put a file the user attached to the task (by its name in <attachments>) into the file
    /// input with this index (or the button or label that opens it).
    model UploadFile { index: u32, file: String }
    wording "attach {file:quoted} to {index:element}";
    target Some(*index);
    /// Puts a file the person attached to the task into a file input (the input itself, the
    /// label of one, or an element holding one), with the `input` and `change` events a page
    /// expects from the file chooser.
    #[serde(rename_all = "camelCase")]
    command BrowserUploadFile {
        #[serde(flatten)]
        target: Target,
        /// The attachment's artifact.
        artifact_id: String,
        name: String,
        content_type: String,
    }
    traits {
        rerun: Once,
        mutating: true,
        // It downloads the file first.
        // Verified: the files set on the input, read back.
        verify: Handler,
        slow: true,
        captures_page: false,
        needs_task_tab: true,
        label: "attaching {name:quoted}",
    }
    into |cx| cx.upload(index, &file)?;

    /// List the user's own open tabs (titles, sites) when the goal is about them.
    model ListTabs {}
    wording "list your open tabs";
    answered;

    /// Read one of the user's own open tabs (listed in <browser_tabs>) without touching it:
    /// for goals about what they have open ("summarise my tabs", "compare these products").
    model ReadTab { tab_id: i32 }
    wording "read your tab {tab_id}";
    /// Reads one of the person's own tabs (not the task's): its readable text, as the person
    /// sees it, on a site they allowed. Nothing in it is touched.
    #[serde(rename_all = "camelCase")]
    command BrowserReadTab {
        tab_id: ChromeId,
    }
    traits {
        rerun: ReadOnly,
        mutating: false,
        verify: Look,
        slow: true,
        captures_page: false,
        // The person's tab, not the task's.
        needs_task_tab: false,
        label: "reading tab {tabId}",
    }
    into |cx| ActionCommand::BrowserReadTab { tab_id };

    /// Act in another of the task's tabs (the `tabs` of the page list them).
    model SwitchTab { tab_id: i32 }
    wording "switch to tab {tab_id}";
    /// Makes another of the task's tabs the one its actions act in (and shows it in its window).
    #[serde(rename_all = "camelCase")]
    command BrowserSwitchTab {
        tab_id: ChromeId,
    }
    traits {
        rerun: Idempotent,
        mutating: true,
        // Verified: the task in the other tab.
        verify: Handler,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "switching to tab {tabId}",
    }
    into |cx| ActionCommand::BrowserSwitchTab { tab_id };

    /// Open a URL in a new tab of the task; it becomes the tab the next actions act in.
    model OpenTab { url: String }
    wording "open {url} in a new tab";
    /// Opens a URL in a new tab of the task (its window and group), which becomes the current one.
    command BrowserOpenTab {
        url: String,
    }
    traits {
        // A second run opens a second tab.
        rerun: Once,
        mutating: true,
        // Verified: a new tab at the address.
        verify: Handler,
        slow: true,
        captures_page: false,
        needs_task_tab: true,
        label: "opening {url} in a new tab",
    }
    into |cx| ActionCommand::BrowserOpenTab { url };

    /// Close one of the task's tabs (the current one by default); the task goes on in another.
    model CloseTab {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        tab_id: Option<i32>,
    }
    wording "[close tab {tab_id}|close this tab]";
    /// Closes one of the task's tabs (the current one by default); the task's last tab stays.
    #[serde(rename_all = "camelCase")]
    command BrowserCloseTab {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        tab_id: Option<ChromeId>,
    }
    traits {
        rerun: Once,
        mutating: true,
        // Verified: the tab closed.
        verify: Handler,
        slow: false,
        captures_page: false,
        needs_task_tab: true,
        label: "closing tab {tabId}",
    }
    into |cx| ActionCommand::BrowserCloseTab { tab_id };

    /// Read the page's text on from character `from` (where the content was cut; by default
    /// where the text shown now ends): long articles and tables are read whole this way.
    model ReadPage {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        from: Option<u32>,
    }
    wording "[read the page on from character {from}|read more of the page]";
    answered;

    /// Relays one invocation to the local bridge the extension is connected to (seed 004
    /// §4.2), attributed to the task (its session) and `agent_id` (`main`, or the sub-agent's
    /// `subtask-N`); the bridge's result is the action's, its `E_*` errors the action's error.
    #[serde(rename_all = "camelCase")]
    command BridgeInvoke {
        tool: BridgeTool,
        /// The tool's arguments ([`crate::bridge::ReadArgs`], …), relayed as they are.
        #[ts(type = "unknown")]
        args: serde_json::Value,
        agent_id: String,
        /// The protected location (`.git/`, a shell startup file) the person confirmed this
        /// write or edit of: set by the coordinator's consent gate only, never taken from a
        /// caller ([`crate::bridge::Invoke::confirmed_protected_path`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        confirmed_protected_path: Option<String>,
    }
    traits {
        // A write, an edit or a command run twice acts twice.
        rerun: Once,
        // It works on the person's computer, not on the page.
        mutating: false,
        // Verified: the bridge's answer.
        verify: Handler,
        slow: false,
        captures_page: false,
        needs_task_tab: false,
        label: "using files on this computer ({tool})",
    }

    /// Read a text file of the folder the user shared from their computer (<local_files>):
    /// `path` is relative to it; `offset` (first line, 0-based) and `limit` (lines) read part of
    /// a long file.
    model FileRead {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        offset: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        limit: Option<u32>,
    }
    wording "read the file {path:quoted} on this computer";
    becomes BridgeInvoke;
    into |cx| cx.bridge(BridgeTool::Read, ReadArgs { path, offset, limit });

    /// Create or replace a file of the shared folder with `content` (missing folders are made).
    model FileWrite { path: String, content: String }
    wording "write the file {path:quoted} on this computer";
    becomes BridgeInvoke;
    into |cx| cx.bridge(BridgeTool::Write, WriteArgs { path, content });

    /// Replace the text `old` by `new` in a file of the shared folder; `old` must occur exactly
    /// once (give enough of the surrounding text to make it unique).
    model FileEdit {
        path: String,
        old: String,
        new: String,
    }
    wording "edit the file {path:quoted} on this computer";
    becomes BridgeInvoke;
    into |cx| cx.bridge(BridgeTool::Edit, EditArgs { path, old, new });

    /// Run one allowed program in the shared folder: `command` is the program and its
    /// arguments, quoted as in a shell but run without one (no pipes, redirections, `;`, `&&`).
    /// It is killed after `timeout_ms` (30 s by default). Its exit code, stdout and stderr come
    /// back.
    model RunCommand {
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        timeout_ms: Option<u32>,
    }
    wording "run {command:quoted} on this computer";
    becomes BridgeInvoke;
    into |cx| cx.bridge(
        BridgeTool::Bash,
        BashArgs {
            command,
            timeout_ms: timeout_ms.map(u64::from),
        },
    );

    /// End the task: `success` says whether the goal was reached, `text` is the final answer
    /// for the person (what was done, values found, or why it could not be done). When the
    /// user gave an answer format (<answer_format>), `data` is the answer as JSON matching it.
    model Done {
        success: bool,
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "unknown")]
        data: Option<serde_json::Value>,
    }
    wording "[{success?}finish|give up]";
    answered;
}

impl AgentAction {
    /// The action's name, e.g. `click`: its variant's, as serde names it.
    pub fn name(&self) -> &'static str {
        self.into()
    }

    pub fn kind(&self) -> AgentActionKind {
        self.into()
    }
}

impl AgentActionKind {
    /// The action's name, e.g. `click`.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// Whether it works in the folder the person shared from their computer, through the local
    /// bridge: such actions are offered only when the task's extension has a bridge connected
    /// and the task allows it.
    pub const fn uses_bridge(self) -> bool {
        matches!(self.command_kind(), Some(ActionKind::BridgeInvoke))
    }

    /// Whether the action named `name` uses the bridge ([`AgentActionKind::uses_bridge`]).
    pub fn names_a_bridge_action(name: &str) -> bool {
        name.parse::<AgentActionKind>()
            .is_ok_and(AgentActionKind::uses_bridge)
    }
}
