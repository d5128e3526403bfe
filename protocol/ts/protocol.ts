// Generated from the Rust types in protocol/ by `cargo run -p mimo-protocol --bin gen-ts`.
// Do not edit: change the Rust types and regenerate.

export type ErrorCode = "PLUGIN_OFFLINE" | "PLUGIN_TIMEOUT_ACK" | "PLUGIN_TIMEOUT_EXEC" | "PAGE_PREP_FAILED" | "CDP_UNAVAILABLE" | "INVALID_TASK_TAB" | "TASK_TAB_CLOSED" | "INVALID_TARGET" | "TARGET_NOT_FOUND" | "TARGET_NOT_INTERACTABLE" | "TARGET_CHANGED" | "READABILITY_TOO_LARGE" | "SCHEMA_VALIDATION_FAILED" | "PERMISSION_DENIED" | "CONFIRMATION_REQUIRED" | "TIMEOUT" | "LLM_ERROR" | "UNAUTHORIZED" | "NOT_FOUND" | "INTERNAL_ERROR" | "METHOD_NOT_ALLOWED" | "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "LENGTH_REQUIRED" | "CANCELED" | "STEP_LIMIT_EXCEEDED" | "LOOP_DETECTED" | "BUDGET_EXCEEDED" | "NAVIGATION_IN_PROGRESS" | "RATE_LIMITED" | "UPLOAD_INCOMPLETE" | "E_ARGS" | "E_TOOL" | "E_PATH" | "E_CMD" | "E_BUSY" | "E_TIMEOUT";

export type ErrorObject = { code: ErrorCode, message: string, retryable: boolean, };

export type LlmErrorKind = "network" | "timeout" | "rate_limited" | "overloaded" | "server" | "auth" | "context_too_long" | "content_filtered" | "bad_request" | "invalid_response" | "invalid_tool_arguments" | "no_tool_call" | "image_refused" | "aborted";

export type TaskStatus = "created" | "running" | "ongoing" | "waiting_confirmation" | "waiting_permission" | "takeover" | "paused" | "completed" | "error" | "canceled";

export type TaskControl = "takeover" | "pause" | "resume" | "stop";

export type ForkedFrom = { taskId: string, messageId: string, };

export type ForkRequest = { messageId: string, };

export type ForkedTask = { taskId: string, forkedFrom: ForkedFrom, };

export type TaskListEntry = { taskId: string, 
/**
 * From the first message; none before it.
 */
title?: string, status: TaskStatus, createdAt: number, 
/**
 * When its history last grew (a message, a step, a change of status).
 */
lastActivityAt: number, 
/**
 * The task it was forked from, if it is a fork.
 */
forkedFrom: ForkedFrom | null, 
/**
 * The tasks forked from it, the oldest first.
 */
forks: Array<string>, };

export type TaskList = { tasks: Array<TaskListEntry>, 
/**
 * The `before` that asks for the next page; none after the last.
 */
nextBefore: string | null, };

export type BrowserSnapshot = { windows: Array<WindowInfo>, tabs: Array<TabInfo>, groups: Array<TabGroupInfo>, 
/**
 * The active tab of the focused window, if any.
 */
activeTabId?: number, 
/**
 * The local bridge the extension is connected to (authenticated), if any.
 */
bridge?: BridgeInfo, };

export type WindowInfo = { windowId: number, focused: boolean, 
/**
 * `normal`, `popup`, …, as Chrome reports it.
 */
kind?: string, };

export type TabInfo = { tabId: number, windowId: number, index: number, url: string, title: string, 
/**
 * `loading` or `complete`.
 */
status: string, active: boolean, groupId?: number, };

export type TabGroupInfo = { groupId: number, windowId: number, title: string, color: string, collapsed: boolean, };

export type TabEvent = { "kind": "tab_upserted", tab: TabInfo, } | { "kind": "tab_removed", tabId: number, } | { "kind": "tab_activated", tabId: number, windowId: number, } | { "kind": "window_upserted", window: WindowInfo, } | { "kind": "window_removed", windowId: number, } | { "kind": "window_focused", windowId: number | null, } | { "kind": "group_upserted", group: TabGroupInfo, } | { "kind": "group_removed", groupId: number, };

export type ScanScope = "viewport" | "document";

export type ClickStrategy = "cdp_mouse" | "dom_click";

export type TypeStrategy = "cdp_key" | "dom_input";

export type ScrollDirection = "up" | "down" | "left" | "right";

export type Target = { clickId?: number, xpath?: string, 
/**
 * A CSS selector: its first match, in open shadow roots too.
 */
selector?: string, 
/**
 * What the element says: its visible text or accessible name (a button's or link's text,
 * a field's label, placeholder or `aria-label`), case and spacing ignored; an exact match
 * wins over a partial one, a control over plain text.
 */
label?: string, 
/**
 * An ARIA role, given by the `role` attribute or implied by the element (`button`, `link`,
 * `textbox`, `checkbox`, `combobox`, `heading`, …); with `label`, only the elements of that
 * role whose accessible name matches it.
 */
role?: string, 
/**
 * The element's facts as the step was rated on them (none: it had none): the extension
 * reads them again just before acting and refuses with `TARGET_CHANGED` when they differ.
 * (Boxed: every queued action is as large as its largest kind.)
 */
expect?: ElementFacts, };

export type DragEnd = { clickId?: number, x?: number, y?: number, };

export type DomainPolicy = { allowed: Array<string>, blocked: Array<string>, };

export type PiiKind = "email" | "phone" | "card" | "token";

export type RedactionPolicy = { evidence: boolean, model: boolean, kinds: Array<PiiKind>, };

export type SecretScope = "deployment" | "task";

export type SecretInfo = { name: string, domains: Array<string>, scope: SecretScope, };

export type PutSecret = { value: string, domains: Array<string>, };

export type SecretValueRequest = { name: string, url: string, actionId: string, attempt: number, };

export type SecretValue = { name: string, value: string, domains: Array<string>, };

export type Skill = { 
/**
 * Its name, as in `PUT /api/skills/{name}` ([`valid_skill_name`]).
 */
name: string, 
/**
 * What it is for, in a sentence: the model reads it, and search finds it by it.
 */
description: string, 
/**
 * The pages it is for, as URL patterns (`https://portal.example/expenses/*`,
 * `*.example.com`); none: any site.
 */
sites: Array<string>, 
/**
 * The actions it needs (`navigate`, `click`, …); none: it restricts nothing. While it is in
 * the prompt the model is offered only these (and those of the other skills that list
 * theirs), and `done`.
 */
allowedTools: Array<string>, 
/**
 * What to be careful about (irreversible steps, what to confirm with the person).
 */
risk: Array<string>, 
/**
 * The steps (markdown).
 */
body: string, 
/**
 * When it was last stored (ms since the Unix epoch).
 */
updatedAt: number, };

export type SkillList = { skills: Array<Skill>, };

export type SkillHit = { skill: Skill, 
/**
 * Where its text matches, the matching words in `[` `]`.
 */
snippet: string, };

export type SkillSearch = { results: Array<SkillHit>, };

export type ActionCommand = { "name": "task_start", "params": { url?: string, reuseExistingTab?: boolean, groupTitle?: string, 
/**
 * Start on this tab of the person's ("continue on this page") instead of a window of
 * the task's own: it joins the task until the task ends, and is never closed by it.
 */
adoptTabId?: number, 
/**
 * Where the task may go: the extension checks every action's page against it, after
 * redirects too.
 */
domains?: DomainPolicy, 
/**
 * The task's own rules, checked as well as `domains` (boxed: most tasks have none, and
 * every queued action is as large as this one).
 */
taskDomains?: DomainPolicy, 
/**
 * What personal data the extension keeps out of what it sends for the task (absent:
 * the default, evidence filtered).
 */
redaction?: RedactionPolicy, } } | { "name": "task_stop", "params": { closeTab?: boolean, } } | { "name": "browser_debugger_attach", "params": Record<symbol, never> } | { "name": "browser_wait_for_loaded", "params": { timeoutMs?: number, } } | { "name": "browser_screenshot", "params": { fullPage?: boolean, } } | { "name": "browser_readability_extract", "params": Record<symbol, never> } | { "name": "browser_dom_index", "params": { scope?: ScanScope, 
/**
 * The attribute the click ids are written to; `data-mimo_click_id` by default.
 */
assignAttr?: string, 
/**
 * Only one region of the page: this element of the last list (a click id of the top
 * frame) and what it holds. The ids of the rest are forgotten, as any new list does.
 */
within?: number, } } | { "name": "browser_observe", "params": { timeoutMs?: number, 
/**
 * Whether the result waits until the screenshot and the readable text are stored
 * (the default). `false`: it comes as soon as each has its artifact id, and their bytes
 * are stored right after — for a reader that takes neither from R2 at once (the agent
 * whose model is not shown the screenshot: the text comes inline).
 */
waitStored?: boolean, } } | { "name": "browser_xpath_scan", "params": { scope?: ScanScope, } } | { "name": "browser_get_html", "params": { xpath?: string, } } | { "name": "browser_navigate", "params": { url: string, } } | { "name": "browser_click", "params": { strategy?: ClickStrategy, 
/**
 * A checkbox, radio button or switch to be left in this state: its state is read just
 * before acting and it is clicked only when it is not in it already, so a step that
 * means "ticked" never unticks a box the page (or the person) ticked meanwhile.
 */
checked?: boolean, clickId?: number, xpath?: string, 
/**
 * A CSS selector: its first match, in open shadow roots too.
 */
selector?: string, 
/**
 * What the element says: its visible text or accessible name (a button's or link's text,
 * a field's label, placeholder or `aria-label`), case and spacing ignored; an exact match
 * wins over a partial one, a control over plain text.
 */
label?: string, 
/**
 * An ARIA role, given by the `role` attribute or implied by the element (`button`, `link`,
 * `textbox`, `checkbox`, `combobox`, `heading`, …); with `label`, only the elements of that
 * role whose accessible name matches it.
 */
role?: string, 
/**
 * The element's facts as the step was rated on them (none: it had none): the extension
 * reads them again just before acting and refuses with `TARGET_CHANGED` when they differ.
 * (Boxed: every queued action is as large as its largest kind.)
 */
expect?: ElementFacts, } } | { "name": "browser_type", "params": { text: string, 
/**
 * Press Enter after typing.
 */
submit?: boolean, strategy?: TypeStrategy, clickId?: number, xpath?: string, 
/**
 * A CSS selector: its first match, in open shadow roots too.
 */
selector?: string, 
/**
 * What the element says: its visible text or accessible name (a button's or link's text,
 * a field's label, placeholder or `aria-label`), case and spacing ignored; an exact match
 * wins over a partial one, a control over plain text.
 */
label?: string, 
/**
 * An ARIA role, given by the `role` attribute or implied by the element (`button`, `link`,
 * `textbox`, `checkbox`, `combobox`, `heading`, …); with `label`, only the elements of that
 * role whose accessible name matches it.
 */
role?: string, 
/**
 * The element's facts as the step was rated on them (none: it had none): the extension
 * reads them again just before acting and refuses with `TARGET_CHANGED` when they differ.
 * (Boxed: every queued action is as large as its largest kind.)
 */
expect?: ElementFacts, } } | { "name": "browser_select_option", "params": { 
/**
 * The option's value or its visible label.
 */
option: string, clickId?: number, xpath?: string, 
/**
 * A CSS selector: its first match, in open shadow roots too.
 */
selector?: string, 
/**
 * What the element says: its visible text or accessible name (a button's or link's text,
 * a field's label, placeholder or `aria-label`), case and spacing ignored; an exact match
 * wins over a partial one, a control over plain text.
 */
label?: string, 
/**
 * An ARIA role, given by the `role` attribute or implied by the element (`button`, `link`,
 * `textbox`, `checkbox`, `combobox`, `heading`, …); with `label`, only the elements of that
 * role whose accessible name matches it.
 */
role?: string, 
/**
 * The element's facts as the step was rated on them (none: it had none): the extension
 * reads them again just before acting and refuses with `TARGET_CHANGED` when they differ.
 * (Boxed: every queued action is as large as its largest kind.)
 */
expect?: ElementFacts, } } | { "name": "browser_scroll", "params": { direction: ScrollDirection, 
/**
 * Pixels; a viewport (or container) height/width by default.
 */
amount?: number, clickId?: number, xpath?: string, 
/**
 * A CSS selector: its first match, in open shadow roots too.
 */
selector?: string, 
/**
 * What the element says: its visible text or accessible name (a button's or link's text,
 * a field's label, placeholder or `aria-label`), case and spacing ignored; an exact match
 * wins over a partial one, a control over plain text.
 */
label?: string, 
/**
 * An ARIA role, given by the `role` attribute or implied by the element (`button`, `link`,
 * `textbox`, `checkbox`, `combobox`, `heading`, …); with `label`, only the elements of that
 * role whose accessible name matches it.
 */
role?: string, 
/**
 * The element's facts as the step was rated on them (none: it had none): the extension
 * reads them again just before acting and refuses with `TARGET_CHANGED` when they differ.
 * (Boxed: every queued action is as large as its largest kind.)
 */
expect?: ElementFacts, } } | { "name": "browser_press_key", "params": { key: string, 
/**
 * The facts of the focused element the step was rated on (none: nothing outbound).
 */
expect?: ElementFacts, } } | { "name": "browser_hover", "params": { clickId?: number, xpath?: string, 
/**
 * A CSS selector: its first match, in open shadow roots too.
 */
selector?: string, 
/**
 * What the element says: its visible text or accessible name (a button's or link's text,
 * a field's label, placeholder or `aria-label`), case and spacing ignored; an exact match
 * wins over a partial one, a control over plain text.
 */
label?: string, 
/**
 * An ARIA role, given by the `role` attribute or implied by the element (`button`, `link`,
 * `textbox`, `checkbox`, `combobox`, `heading`, …); with `label`, only the elements of that
 * role whose accessible name matches it.
 */
role?: string, 
/**
 * The element's facts as the step was rated on them (none: it had none): the extension
 * reads them again just before acting and refuses with `TARGET_CHANGED` when they differ.
 * (Boxed: every queued action is as large as its largest kind.)
 */
expect?: ElementFacts, } } | { "name": "browser_back", "params": Record<symbol, never> } | { "name": "browser_forward", "params": Record<symbol, never> } | { "name": "browser_reload", "params": Record<symbol, never> } | { "name": "browser_wait_for", "params": { text?: string, url?: string, selector?: string, timeoutMs?: number, } } | { "name": "browser_dialog", "params": { accept: boolean, text?: string, } } | { "name": "browser_scroll_to", "params": { text: string, } } | { "name": "browser_click_at", "params": { x: number, y: number, 
/**
 * The facts at the point the step was rated on.
 */
expect?: ElementFacts, 
/**
 * `x` and `y` are pixels of a screenshot taken at this scale (its pixels per CSS
 * pixel: the device pixel ratio, the width cap, the page's zoom); without it, CSS
 * pixels of the viewport.
 */
scale?: number, } } | { "name": "browser_hover_at", "params": { x: number, y: number, 
/**
 * As for [`ActionCommand::BrowserClickAt`].
 */
scale?: number, } } | { "name": "browser_drag", "params": { from: DragEnd, to: DragEnd, 
/**
 * What the step was rated on at the point it acts (see [`ActionCommand::BrowserClickAt`]).
 */
expect?: ElementFacts, 
/**
 * The scale of the ends' points (see [`ActionCommand::BrowserClickAt`]).
 */
scale?: number, } } | { "name": "browser_upload_file", "params": { 
/**
 * The attachment's artifact.
 */
artifactId: string, name: string, contentType: string, clickId?: number, xpath?: string, 
/**
 * A CSS selector: its first match, in open shadow roots too.
 */
selector?: string, 
/**
 * What the element says: its visible text or accessible name (a button's or link's text,
 * a field's label, placeholder or `aria-label`), case and spacing ignored; an exact match
 * wins over a partial one, a control over plain text.
 */
label?: string, 
/**
 * An ARIA role, given by the `role` attribute or implied by the element (`button`, `link`,
 * `textbox`, `checkbox`, `combobox`, `heading`, …); with `label`, only the elements of that
 * role whose accessible name matches it.
 */
role?: string, 
/**
 * The element's facts as the step was rated on them (none: it had none): the extension
 * reads them again just before acting and refuses with `TARGET_CHANGED` when they differ.
 * (Boxed: every queued action is as large as its largest kind.)
 */
expect?: ElementFacts, } } | { "name": "browser_read_tab", "params": { tabId: number, } } | { "name": "browser_switch_tab", "params": { tabId: number, } } | { "name": "browser_open_tab", "params": { url: string, } } | { "name": "browser_close_tab", "params": { tabId?: number, } } | { "name": "bridge_invoke", "params": { tool: BridgeTool, 
/**
 * The tool's arguments ([`crate::bridge::ReadArgs`], …), relayed as they are.
 */
args: unknown, agentId: string, 
/**
 * The protected location (`.git/`, a shell startup file) the person confirmed this
 * write or edit of: set by the coordinator's consent gate only, never taken from a
 * caller ([`crate::bridge::Invoke::confirmed_protected_path`]).
 */
confirmedProtectedPath?: string, } };

export type Rerun = "read_only" | "idempotent" | "once";

export type Verify = "watched" | "handler" | "look";

export type ActionTraits = { 
/**
 * Whether an attempt whose outcome is unknown may simply be run again.
 */
rerun: Rerun, 
/**
 * It changes the page: the extension refuses it while the person has taken over the task's
 * tab or stopped the task there.
 */
mutating: boolean, 
/**
 * Who checks that it did what it is for, so that a step that changed nothing is never
 * reported as a plain success.
 */
verify: Verify, 
/**
 * It loads a page or uploads an artifact, so it gets the slow execution budget
 * (`MIMO_ACTION_SLOW_EXEC_TIMEOUT_MS`) instead of the usual one.
 */
slow: boolean, 
/**
 * It captures the page for the model (seed 000 §4.5: the screenshot, the readable text); a
 * failed capture is retried after half the usual delay, as page preparation waits on it.
 */
capturesPage: boolean, 
/**
 * It acts in the task's tab (which must be open, and on a site the person allowed); only
 * the actions that open and close that tab do not.
 */
needsTaskTab: boolean, 
/**
 * What the extension's overlay says while it runs. `{name}` stands for the parameter
 * `name`, `{a|b}` for the first of `a` and `b` given, `{target}` for the targeted element
 * (`[clickId]` or the XPath), each shortened and "the page" when absent; `{name:quoted}`
 * quotes the value as JSON.
 */
label: string, };

export type BrowserAction = { actionId: string, 
/**
 * 1 for the first delivery; a retry after a retryable failure is a new attempt, run anew.
 * A repeated delivery of the same attempt is answered from the extension's stored result.
 */
attempt: number, taskId: string, clientId: string, tabId?: number, 
/**
 * How long the server waits for this attempt's result once it is acknowledged: the
 * extension ends an attempt that is still running a little before, with an error that
 * says what it was doing, rather than let it hold the task's queue.
 */
budgetMs?: number, } & ({ "name": "task_start", "params": { url?: string, reuseExistingTab?: boolean, groupTitle?: string, 
/**
 * Start on this tab of the person's ("continue on this page") instead of a window of
 * the task's own: it joins the task until the task ends, and is never closed by it.
 */
adoptTabId?: number, 
/**
 * Where the task may go: the extension checks every action's page against it, after
 * redirects too.
 */
domains?: DomainPolicy, 
/**
 * The task's own rules, checked as well as `domains` (boxed: most tasks have none, and
 * every queued action is as large as this one).
 */
taskDomains?: DomainPolicy, 
/**
 * What personal data the extension keeps out of what it sends for the task (absent:
 * the default, evidence filtered).
 */
redaction?: RedactionPolicy, } } | { "name": "task_stop", "params": { closeTab?: boolean, } } | { "name": "browser_debugger_attach", "params": Record<symbol, never> } | { "name": "browser_wait_for_loaded", "params": { timeoutMs?: number, } } | { "name": "browser_screenshot", "params": { fullPage?: boolean, } } | { "name": "browser_readability_extract", "params": Record<symbol, never> } | { "name": "browser_dom_index", "params": { scope?: ScanScope, 
/**
 * The attribute the click ids are written to; `data-mimo_click_id` by default.
 */
assignAttr?: string, 
/**
 * Only one region of the page: this element of the last list (a click id of the top
 * frame) and what it holds. The ids of the rest are forgotten, as any new list does.
 */
within?: number, } } | { "name": "browser_observe", "params": { timeoutMs?: number, 
/**
 * Whether the result waits until the screenshot and the readable text are stored
 * (the default). `false`: it comes as soon as each has its artifact id, and their bytes
 * are stored right after — for a reader that takes neither from R2 at once (the agent
 * whose model is not shown the screenshot: the text comes inline).
 */
waitStored?: boolean, } } | { "name": "browser_xpath_scan", "params": { scope?: ScanScope, } } | { "name": "browser_get_html", "params": { xpath?: string, } } | { "name": "browser_navigate", "params": { url: string, } } | { "name": "browser_click", "params": { strategy?: ClickStrategy, 
/**
 * A checkbox, radio button or switch to be left in this state: its state is read just
 * before acting and it is clicked only when it is not in it already, so a step that
 * means "ticked" never unticks a box the page (or the person) ticked meanwhile.
 */
checked?: boolean, clickId?: number, xpath?: string, 
/**
 * A CSS selector: its first match, in open shadow roots too.
 */
selector?: string, 
/**
 * What the element says: its visible text or accessible name (a button's or link's text,
 * a field's label, placeholder or `aria-label`), case and spacing ignored; an exact match
 * wins over a partial one, a control over plain text.
 */
label?: string, 
/**
 * An ARIA role, given by the `role` attribute or implied by the element (`button`, `link`,
 * `textbox`, `checkbox`, `combobox`, `heading`, …); with `label`, only the elements of that
 * role whose accessible name matches it.
 */
role?: string, 
/**
 * The element's facts as the step was rated on them (none: it had none): the extension
 * reads them again just before acting and refuses with `TARGET_CHANGED` when they differ.
 * (Boxed: every queued action is as large as its largest kind.)
 */
expect?: ElementFacts, } } | { "name": "browser_type", "params": { text: string, 
/**
 * Press Enter after typing.
 */
submit?: boolean, strategy?: TypeStrategy, clickId?: number, xpath?: string, 
/**
 * A CSS selector: its first match, in open shadow roots too.
 */
selector?: string, 
/**
 * What the element says: its visible text or accessible name (a button's or link's text,
 * a field's label, placeholder or `aria-label`), case and spacing ignored; an exact match
 * wins over a partial one, a control over plain text.
 */
label?: string, 
/**
 * An ARIA role, given by the `role` attribute or implied by the element (`button`, `link`,
 * `textbox`, `checkbox`, `combobox`, `heading`, …); with `label`, only the elements of that
 * role whose accessible name matches it.
 */
role?: string, 
/**
 * The element's facts as the step was rated on them (none: it had none): the extension
 * reads them again just before acting and refuses with `TARGET_CHANGED` when they differ.
 * (Boxed: every queued action is as large as its largest kind.)
 */
expect?: ElementFacts, } } | { "name": "browser_select_option", "params": { 
/**
 * The option's value or its visible label.
 */
option: string, clickId?: number, xpath?: string, 
/**
 * A CSS selector: its first match, in open shadow roots too.
 */
selector?: string, 
/**
 * What the element says: its visible text or accessible name (a button's or link's text,
 * a field's label, placeholder or `aria-label`), case and spacing ignored; an exact match
 * wins over a partial one, a control over plain text.
 */
label?: string, 
/**
 * An ARIA role, given by the `role` attribute or implied by the element (`button`, `link`,
 * `textbox`, `checkbox`, `combobox`, `heading`, …); with `label`, only the elements of that
 * role whose accessible name matches it.
 */
role?: string, 
/**
 * The element's facts as the step was rated on them (none: it had none): the extension
 * reads them again just before acting and refuses with `TARGET_CHANGED` when they differ.
 * (Boxed: every queued action is as large as its largest kind.)
 */
expect?: ElementFacts, } } | { "name": "browser_scroll", "params": { direction: ScrollDirection, 
/**
 * Pixels; a viewport (or container) height/width by default.
 */
amount?: number, clickId?: number, xpath?: string, 
/**
 * A CSS selector: its first match, in open shadow roots too.
 */
selector?: string, 
/**
 * What the element says: its visible text or accessible name (a button's or link's text,
 * a field's label, placeholder or `aria-label`), case and spacing ignored; an exact match
 * wins over a partial one, a control over plain text.
 */
label?: string, 
/**
 * An ARIA role, given by the `role` attribute or implied by the element (`button`, `link`,
 * `textbox`, `checkbox`, `combobox`, `heading`, …); with `label`, only the elements of that
 * role whose accessible name matches it.
 */
role?: string, 
/**
 * The element's facts as the step was rated on them (none: it had none): the extension
 * reads them again just before acting and refuses with `TARGET_CHANGED` when they differ.
 * (Boxed: every queued action is as large as its largest kind.)
 */
expect?: ElementFacts, } } | { "name": "browser_press_key", "params": { key: string, 
/**
 * The facts of the focused element the step was rated on (none: nothing outbound).
 */
expect?: ElementFacts, } } | { "name": "browser_hover", "params": { clickId?: number, xpath?: string, 
/**
 * A CSS selector: its first match, in open shadow roots too.
 */
selector?: string, 
/**
 * What the element says: its visible text or accessible name (a button's or link's text,
 * a field's label, placeholder or `aria-label`), case and spacing ignored; an exact match
 * wins over a partial one, a control over plain text.
 */
label?: string, 
/**
 * An ARIA role, given by the `role` attribute or implied by the element (`button`, `link`,
 * `textbox`, `checkbox`, `combobox`, `heading`, …); with `label`, only the elements of that
 * role whose accessible name matches it.
 */
role?: string, 
/**
 * The element's facts as the step was rated on them (none: it had none): the extension
 * reads them again just before acting and refuses with `TARGET_CHANGED` when they differ.
 * (Boxed: every queued action is as large as its largest kind.)
 */
expect?: ElementFacts, } } | { "name": "browser_back", "params": Record<symbol, never> } | { "name": "browser_forward", "params": Record<symbol, never> } | { "name": "browser_reload", "params": Record<symbol, never> } | { "name": "browser_wait_for", "params": { text?: string, url?: string, selector?: string, timeoutMs?: number, } } | { "name": "browser_dialog", "params": { accept: boolean, text?: string, } } | { "name": "browser_scroll_to", "params": { text: string, } } | { "name": "browser_click_at", "params": { x: number, y: number, 
/**
 * The facts at the point the step was rated on.
 */
expect?: ElementFacts, 
/**
 * `x` and `y` are pixels of a screenshot taken at this scale (its pixels per CSS
 * pixel: the device pixel ratio, the width cap, the page's zoom); without it, CSS
 * pixels of the viewport.
 */
scale?: number, } } | { "name": "browser_hover_at", "params": { x: number, y: number, 
/**
 * As for [`ActionCommand::BrowserClickAt`].
 */
scale?: number, } } | { "name": "browser_drag", "params": { from: DragEnd, to: DragEnd, 
/**
 * What the step was rated on at the point it acts (see [`ActionCommand::BrowserClickAt`]).
 */
expect?: ElementFacts, 
/**
 * The scale of the ends' points (see [`ActionCommand::BrowserClickAt`]).
 */
scale?: number, } } | { "name": "browser_upload_file", "params": { 
/**
 * The attachment's artifact.
 */
artifactId: string, name: string, contentType: string, clickId?: number, xpath?: string, 
/**
 * A CSS selector: its first match, in open shadow roots too.
 */
selector?: string, 
/**
 * What the element says: its visible text or accessible name (a button's or link's text,
 * a field's label, placeholder or `aria-label`), case and spacing ignored; an exact match
 * wins over a partial one, a control over plain text.
 */
label?: string, 
/**
 * An ARIA role, given by the `role` attribute or implied by the element (`button`, `link`,
 * `textbox`, `checkbox`, `combobox`, `heading`, …); with `label`, only the elements of that
 * role whose accessible name matches it.
 */
role?: string, 
/**
 * The element's facts as the step was rated on them (none: it had none): the extension
 * reads them again just before acting and refuses with `TARGET_CHANGED` when they differ.
 * (Boxed: every queued action is as large as its largest kind.)
 */
expect?: ElementFacts, } } | { "name": "browser_read_tab", "params": { tabId: number, } } | { "name": "browser_switch_tab", "params": { tabId: number, } } | { "name": "browser_open_tab", "params": { url: string, } } | { "name": "browser_close_tab", "params": { tabId?: number, } } | { "name": "bridge_invoke", "params": { tool: BridgeTool, 
/**
 * The tool's arguments ([`crate::bridge::ReadArgs`], …), relayed as they are.
 */
args: unknown, agentId: string, 
/**
 * The protected location (`.git/`, a shell startup file) the person confirmed this
 * write or edit of: set by the coordinator's consent gate only, never taken from a
 * caller ([`crate::bridge::Invoke::confirmed_protected_path`]).
 */
confirmedProtectedPath?: string, } });

export type ActionStatus = "ok" | "partial" | "error";

export type ActionOutcome = { actionId: string, attempt: number, taskId: string, status: ActionStatus, 
/**
 * The action's result (its shape depends on the action: see the `*Result` types), as it is
 * kept: page text and field values with personal data filtered out when the task's evidence
 * is (its `redaction`).
 */
result?: unknown, 
/**
 * The result as the model reads it, when that differs from what is kept (the task filters
 * its evidence but not the model's text): it goes to the model and nowhere else — never
 * stored, shown or exported ([`ActionOutcome::kept`]).
 */
modelResult?: unknown, error?: ErrorObject, warnings: Array<string>, 
/**
 * A JavaScript dialog the page shows when the action ended (opened by it, or before it):
 * until it is answered (`browser_dialog`) the page's scripts are held and nothing else on
 * it can be used. Boxed: most outcomes have none.
 */
dialog?: PageDialog, 
/**
 * The task's current tab after the action (where its next actions act): it changes when
 * the page opened a new tab, or the action switched, opened or closed one.
 */
tabId?: number, 
/**
 * The site (origin) the person has not allowed Mimo on, when that is why the action did not
 * run (`PERMISSION_DENIED`): a run waits for them to allow it instead of failing.
 */
waitsForSite?: string, 
/**
 * Where the attempt's time went in the extension, stage by stage in order (the queue,
 * its log, the checks, the act, the verification, …): the server's span from sending the
 * action to having its result, less these, is the way there and back. Diagnostics only.
 */
timings?: Array<StageTime>, };

export type StageTime = { stage: string, ms: number, };

export type DialogKind = "alert" | "confirm" | "prompt" | "beforeunload";

export type PageDialog = { kind: DialogKind, message: string, 
/**
 * The text a prompt offers.
 */
defaultPrompt?: string, 
/**
 * The page that opened it.
 */
url: string, };

export type TaskTab = { tabId: number, url: string, title: string, 
/**
 * The tab the task's actions act in.
 */
current: boolean, };

export type TaskStartResult = { tabId: number, windowId: number, groupId?: number, url: string, title?: string, };

export type ScreenshotResult = { artifactId: string, url: string, width: number, height: number, 
/**
 * Its pixels per CSS pixel (the device pixel ratio, the width cap, the page's zoom): what
 * maps a point or a box of the page to the image and back.
 */
scale?: number, };

export type ObserveResult = { 
/**
 * Why the page was captured before it finished loading, when it was.
 */
notLoaded?: string, screenshot: ObservedPart<ScreenshotResult>, readability: ObservedPart<ReadabilityResult>, domIndex: ObservedPart<DomIndexResult>, };

export type ObservedPart<T> = { result?: T, error?: ErrorObject, partial: boolean, warnings: Array<string>, };

export type ReadabilityResult = { artifactId?: string, text?: string, markdown?: string, title?: string, contentLengthBytes: number, truncated: boolean, };

export type BoundingBox = { x: number, y: number, w: number, h: number, };

export type DomElement = { clickId: number, tag: string, role?: string, 
/**
 * Accessible name or visible text, shortened.
 */
text?: string, xpath?: string, bbox?: BoundingBox, 
/**
 * The frame the element lives in (0 = top frame).
 */
frameId: number, value?: string, checked?: boolean, disabled?: boolean, expanded?: boolean, 
/**
 * What using it would do beyond the page (seed 002 §6.1): the risk policy rates steps from
 * these, not from the model's words.
 */
facts?: ElementFacts, };

export type ElementFacts = { 
/**
 * The form it sends: clicking it submits it (a submit button), or it is a field of it
 * (Enter submits).
 */
form?: FormFacts, 
/**
 * Whether clicking it submits `form` (a submit button), as against being a field of it.
 */
submits?: boolean, 
/**
 * A link to another origin: where it goes.
 */
leavesTo?: string, 
/**
 * A link that downloads a file.
 */
download?: boolean, 
/**
 * It is inside a frame of another origin than the page's.
 */
crossOriginFrame?: boolean, };

export type FormFacts = { 
/**
 * `GET` or `POST` (`DIALOG` for a form that only closes a dialog).
 */
method: string, 
/**
 * Where it is sent (absolute).
 */
action: string, 
/**
 * The action is on another origin than the page: what is typed goes to another site.
 */
crossOrigin: boolean, 
/**
 * The kinds of fields it holds.
 */
fields?: Array<FieldKind>, };

export type FieldKind = "password" | "payment" | "personal";

export type DomIndexResult = { elements: Array<DomElement>, 
/**
 * The compact text form for the model: one line per element, indented by structure.
 */
text: string, url: string, title: string, scrollX: number, scrollY: number, 
/**
 * The whole index, stored as a `dom_index` artifact when it does not fit in one message;
 * `elements` and `text` then hold only the part that fits.
 */
artifactId?: string, 
/**
 * Set (true) when `elements` and `text` are cut short of the whole index.
 */
truncated?: boolean, 
/**
 * The task's tabs when it has several, the indexed one `current`.
 */
tabs: Array<TaskTab>, };

export type Reflection = { 
/**
 * Did the previous action achieve its goal? Say success, failure or unknown, and why,
 * judging from the current page.
 */
evaluation_previous_goal: string, 
/**
 * What to remember for the rest of the task: progress so far, values found, what is left.
 */
memory: string, 
/**
 * The immediate goal of this step's action, in one sentence.
 */
next_goal: string, };

export type AgentOutput = { 
/**
 * The one action to take now.
 */
action: AgentAction, 
/**
 * Did the previous action achieve its goal? Say success, failure or unknown, and why,
 * judging from the current page.
 */
evaluation_previous_goal: string, 
/**
 * What to remember for the rest of the task: progress so far, values found, what is left.
 */
memory: string, 
/**
 * The immediate goal of this step's action, in one sentence.
 */
next_goal: string, };

export type DragPoint = { index?: number, x?: number, y?: number, };

export type BrowserTaskArgs = { 
/**
 * The whole job in one self-contained instruction: the site or URL to start from, what to
 * do there and what to report back.
 */
goal: string, 
/**
 * The most browser steps it may take (default 15).
 */
max_steps?: number, 
/**
 * A JSON Schema the result's data must match, for values to compare or combine.
 */
answer_schema?: unknown, };

export type SubtaskStatus = "succeeded" | "failed" | "stopped";

export type BrowserTaskResult = { status: SubtaskStatus, 
/**
 * The sub-agent's closing words, or, when it did not close, what its steps did.
 */
summary: string, 
/**
 * Its answer's data (matching the call's answer format, when one was given).
 */
data?: unknown, steps: number, 
/**
 * The page it ended on.
 */
url?: string, error?: ErrorObject, };

export type AgentAction = { "navigate": { url: string, } } | { "click": { index: number, } } | { "type": { index: number, text: string, submit: boolean, } } | { "select_option": { index: number, option: string, } } | { "scroll": { direction: ScrollDirection, index?: number, amount?: number, } } | { "press_key": { key: string, } } | { "hover": { index: number, } } | { "back": Record<symbol, never> } | { "forward": Record<symbol, never> } | { "reload": Record<symbol, never> } | { "wait_for": { text?: string, url?: string, selector?: string, timeout_ms?: number, } } | { "dialog": { accept: boolean, text?: string, } } | { "scroll_to": { text: string, } } | { "click_at": { x: number, y: number, } } | { "hover_at": { x: number, y: number, } } | { "drag": { from: DragPoint, to: DragPoint, } } | { "upload_file": { index: number, file: string, } } | { "list_tabs": Record<symbol, never> } | { "read_tab": { tab_id: number, } } | { "switch_tab": { tab_id: number, } } | { "open_tab": { url: string, } } | { "close_tab": { tab_id?: number, } } | { "read_page": { from?: number, } } | { "file_read": { path: string, offset?: number, limit?: number, } } | { "file_write": { path: string, content: string, } } | { "file_edit": { path: string, old: string, new: string, } } | { "run_command": { command: string, timeout_ms?: number, } } | { "done": { success: boolean, text: string, data?: unknown, } };

export type ToolResult = { toolCallId: string, 
/**
 * The action's name.
 */
name: string, ok: boolean, 
/**
 * What is kept and shown of the result (see [`crate::ActionOutcome::result`]).
 */
result?: unknown, error?: ErrorObject, warnings: Array<string>, 
/**
 * It ran, but not wholly as asked: the warnings say what is off (a typed value the field
 * did not keep, a click that changed nothing).
 */
partial?: boolean, };

export type TokenUsage = { inputTokens: number, outputTokens: number, };

export type ToolPhase = "start" | "end";

export type RiskLevel = "low" | "medium" | "high";

export type AuditRecord = { 
/**
 * When the step was chosen (ms since the Unix epoch).
 */
ts: number, taskId: string, 
/**
 * Which browser run of the task (1-based): each run numbers its steps from 1.
 */
run: number, step: number, 
/**
 * The agent that chose it: `main`, or `subtask-N` for a sub-agent's browser job (the
 * local bridge audits its invocations under the same task id and agent id).
 */
agentId: string, action: AuditAction, reflection?: Reflection, 
/**
 * The page the step was chosen on.
 */
before?: AuditPage, 
/**
 * The page after it.
 */
after?: AuditPage, 
/**
 * What came of it; absent while it runs (or when the run ended first).
 */
outcome?: AuditOutcome, confirmation?: AuditConfirmation, 
/**
 * The extension the task's actions went to (seed 002 §8.2: the request's origin)…
 */
clientId?: string, 
/**
 * …and the browser it runs in, as its `hello` said.
 */
browser?: BrowserInfo, usage?: TokenUsage, costUsd?: number, 
/**
 * The retries of the model call that chose the step (a rate limit, an overloaded
 * provider, a context compacted to fit), in order.
 */
modelRetries?: Array<AuditModelRetry>, };

export type AuditAction = { 
/**
 * Its name, e.g. `click`.
 */
type: string, 
/**
 * The element it acts on (its index in the page's element list), if any.
 */
target?: number, 
/**
 * What that element is called on the page (its accessible name or text, shortened; left
 * out when it holds personal data), so a replay says "Click “Sign in”".
 */
targetName?: string, 
/**
 * Its parameters as the model gave them.
 */
params: unknown, risk?: RiskLevel, 
/**
 * The skill that guided it, if one did.
 */
skill?: string, };

export type AuditPage = { url: string, title: string, screenshotArtifactId?: string, 
/**
 * Where the step's target stands in this page's screenshot (on `before`, when it was in
 * view): pixels of the screenshot.
 */
target?: BoundingBox, };

export type AuditOutcome = { ok: boolean, partial?: boolean, 
/**
 * What the step found or did (its result), as the model got it.
 */
extracted?: unknown, errors?: Array<ErrorObject>, warnings?: Array<string>, 
/**
 * When it ended.
 */
at: number, };

export type AuditConfirmation = { required: boolean, reason: string, facts?: Array<string>, 
/**
 * Asked only because the task ran step by step.
 */
stepByStep?: boolean, askedAt: number, 
/**
 * `true` approved, `false` declined, absent: not answered.
 */
approved?: boolean, by?: string, answeredAt?: number, 
/**
 * The reason the person gave for declining.
 */
declinedBecause?: string, };

export type AuditModelRetry = { 
/**
 * When the failed call was answered and the retry decided.
 */
at: number, attempt: number, maxAttempts: number, reason: LlmErrorKind, message: string, delayMs: number, };

export type BrowserInfo = { name: string, version: string, userAgent: string, };

export type AttemptState = "unknown" | "running" | "finished";

export type ExtensionMessage = { "type": "hello", clientId: string, name: string, browser: BrowserInfo, extensionVersion: string, } | { "type": "full_state_sync", snapshot: BrowserSnapshot, } | { "type": "tab_event", event: TabEvent, } | { "type": "ping", } | { "type": "action_ack", actionId: string, attempt: number, taskId: string, } | { "type": "action_result", outcome: ActionOutcome, } | { "type": "action_status", taskId: string, actionId: string, attempt: number, state: AttemptState, 
/**
 * The stored outcome, when `state` is `finished` and the outcome was kept.
 */
outcome?: ActionOutcome, } | { "type": "confirm", taskId: string, step: number, approve: boolean, reason?: string, } | { "type": "task_control", taskId: string, control: TaskControl, };

export type ServerToExtension = { "type": "welcome", clientId: string, } | { "type": "error", error: ErrorObject, } | { "type": "pong", } | { "type": "browser_action", action: BrowserAction, } | { "type": "task_state", taskId: string, status: TaskStatus, 
/**
 * The person allows the task to use the local bridge: without it the extension refuses
 * the task's `bridge_invoke`, whoever sent it.
 */
bridge: boolean, } | { "type": "action_query", taskId: string, actionId: string, attempt: number, } | { "type": "confirmation_requested", taskId: string, request: ConfirmationRequest, } | { "type": "confirmation_settled", taskId: string, step: number, approved: boolean, by: string, } | { "type": "result_ack", taskId: string, actionId: string, attempt: number, };

export type ExtensionInfo = { clientId: string, name: string, browser: BrowserInfo, extensionVersion: string, online: boolean, 
/**
 * Milliseconds since the Unix epoch.
 */
lastSeenAt: number, 
/**
 * When a task was last bound to it, in milliseconds since the Unix epoch.
 */
lastUsedAt?: number, 
/**
 * Whether it holds a credential of its own that is not revoked (only a paired extension
 * can connect).
 */
paired: boolean, };

export type ExtensionList = { extensions: Array<ExtensionInfo>, };

export type PairingCode = { 
/**
 * Like `ABCD-EFGH`; typed in any case, with or without the dash.
 */
code: string, 
/**
 * Milliseconds since the Unix epoch.
 */
expiresAt: number, };

export type PairRequest = { code: string, 
/**
 * The credential this extension held until now, when it pairs again: the server keeps its
 * client id and revokes it. The server assigns every client id: an extension never names
 * one, so it can never take another's id or revoke another's credential.
 */
replaces?: string, };

export type PairResponse = { 
/**
 * The id the server gave this extension: it names it in `hello` and in its socket's URL.
 */
clientId: string, token: string, };

export type WsTicket = { ticket: string, 
/**
 * Milliseconds since the Unix epoch.
 */
expiresAt: number, };

export type PollRequest = { 
/**
 * Every server frame up to this sequence number arrived: the server forgets them.
 * Frames after it are delivered again, so a lost answer loses nothing.
 */
ack: number, 
/**
 * Frames for the server, handled in order exactly as on the socket.
 */
frames: Array<ExtensionMessage>, 
/**
 * How long the server may hold the request while it has nothing to deliver (a long poll),
 * capped at [`MAX_POLL_WAIT_MS`]; `0` answers at once.
 */
waitMs: number, };

export type ScriptStart = { goal: string, 
/**
 * Each step waits for `confirm` (seed 002 §4.1.1).
 */
stepByStep: boolean, 
/**
 * A JSON Schema the task's answer must match.
 */
answerSchema?: unknown, 
/**
 * How long `start` may wait for the task's first action (at most 20 s, as `next`'s
 * `waitMs`); `0`, the default, answers at once, with the action only if it is ready.
 */
waitMs: number, 
/**
 * This task's bound for the script to take an action with `next` (and to come back after
 * it went quiet), in [`SCRIPT_BOUND_MS`]; the deployment's (2 min by default) without it.
 */
takeTimeoutMs?: number, 
/**
 * This task's bound for the script to `report` an action it took, in [`SCRIPT_BOUND_MS`];
 * the deployment's (10 min by default) without it.
 */
reportTimeoutMs?: number, };

export type ScriptNext = { taskId: string, 
/**
 * The last action this script received: the next one after it is delivered (without it,
 * the oldest action not reported past, again and again).
 */
sinceActionId?: string, 
/**
 * How long to wait for an action when none is ready (at most 20 s).
 */
waitMs: number, };

export type ScriptReport = { taskId: string, actionId: string, observation: Observation, };

export type ScriptConfirm = { taskId: string, actionId: string, approved: boolean, 
/**
 * Why not, for the model.
 */
reason?: string, };

export type ScriptCancel = { taskId: string, };

export type ScriptTarget = { by: string, value: string, };

export type ScriptAction = { taskId: string, actionId: string, 
/**
 * The action's name without `browser_` (`click`, `type`, `navigate`, `task_start`, …).
 */
type: string, target?: ScriptTarget, 
/**
 * The rest of the action's parameters.
 */
params: Record<string, unknown>, risk: RiskLevel, 
/**
 * A step waiting for `confirm` (not to be carried out before it is approved).
 */
requiresConfirmation: boolean, 
/**
 * The seed's action state: `pending | running | done | failed | canceled`.
 */
state: string, };

export type Observation = { url: string, title: string, visibleTextSnippet: string, domSummary?: string, 
/**
 * The action's result, in the shape the extension would give it (`tabId` for
 * `task_start`, the element index for `dom_index`, …).
 */
extracted: unknown, artifacts: unknown, 
/**
 * Empty: it worked. Else the first error is the action's.
 */
errors: Array<ScriptError>, };

export type ScriptError = { code: ErrorCode, message: string, };

export type ScriptStatus = { taskId: string, 
/**
 * `RUNNING | WAITING_CONFIRMATION | WAITING_PAGE | TAKEOVER | SUCCEEDED | FAILED | CANCELED`.
 */
status: string, 
/**
 * The step waiting for `confirm`, as an action.
 */
pendingConfirmation?: ScriptAction, 
/**
 * Every action of the task, oldest first.
 */
actions: Array<ScriptAction>, };

export type PollResponse = { 
/**
 * The direct answers to the request's frames, in order (`welcome`, `result_ack`, `pong`,
 * `error`), as the socket would have sent them.
 */
replies: Array<ServerToExtension>, 
/**
 * Frames the server sent since the acknowledged one (actions, task states, questions).
 */
frames: Array<PolledFrame>, };

export type PolledFrame = { seq: number, frame: ServerToExtension, };

export type FrontendMessage = { "type": "user_message", content: string, 
/**
 * Chosen by the client for this message (1–128 characters). Sent again with the same
 * id — after a reconnect that may have lost it — it is stored once; the stored
 * message echoes it, which is how the client knows it arrived.
 */
clientMessageId?: string, 
/**
 * The answer format for this request: a JSON Schema the answer's `data` must match
 * (validated by the server; the model is told what is wrong and tries again).
 */
answerSchema?: unknown, } | { "type": "select_client", clientId: string, } | { "type": "start_on_tab", tabId: number | null, } | { "type": "set_domains", allowed: Array<string>, blocked: Array<string>, } | { "type": "stop", } | { "type": "pause", } | { "type": "regenerate", } | { "type": "select_answer", messageId: string, } | { "type": "resume", } | { "type": "take_over", } | { "type": "confirm", step: number, approve: boolean, reason?: string, } | { "type": "set_step_mode", stepByStep: boolean, } | { "type": "set_bridge", allow: boolean, confirm: boolean, };

export type ChatRole = "user" | "assistant";

export type ChatMessage = { messageId: string, role: ChatRole, content: string, createdAt: number, 
/**
 * The client's own id of a message the person sent (see `user_message`).
 */
clientMessageId?: string, 
/**
 * Which answer to its request this assistant message belongs to, when the person had it
 * regenerated: 2, 3, … (the first answer has none).
 */
version?: number, 
/**
 * An answer the person regenerated or switched away from: kept, and shown as an
 * alternative, but no longer part of the conversation the model sees.
 */
superseded?: boolean, };

export type OutputStatus = "ok" | "partial" | "error";

export type Attachment = { artifactId: string, name: string, contentType: string, size: number, };

export type FrontendEvent = { "type": "message", message: ChatMessage, } | { "type": "forkedFrom", origin: ForkedFrom, } | { "type": "forked", fork: ForkedFrom, } | { "type": "chatCompacted", through: string, messages: number, summary: string, } | { "type": "subtaskStarted", 
/**
 * 1-based within the request being answered.
 */
subtask: number, toolCallId: string, goal: string, maxSteps: number, } | { "type": "subtaskFinished", subtask: number, toolCallId: string, result: BrowserTaskResult, } | { "type": "taskDomains", allowed: Array<string>, blocked: Array<string>, } | { "type": "chatDelta", messageId: string, delta: string, finished: boolean, } | { "type": "taskStatus", status: TaskStatus, title?: string, selectedClientId?: string, } | { "type": "snapshotSync", clientId: string, snapshot: BrowserSnapshot, } | { "type": "structuredOutput", status: OutputStatus, output?: unknown, error?: ErrorObject, warnings: Array<string>, } | { "type": "toolUsed", 
/**
 * 1-based step number within the run.
 */
step: number, toolCallId: string, phase: ToolPhase, 
/**
 * Present on `start`.
 */
reflection?: Reflection, action: AgentAction, 
/**
 * Present on `end`: what goes back to the model.
 */
result?: ToolResult, 
/**
 * Present on `end`: one line for people.
 */
summary?: string, 
/**
 * Tokens of the model call that chose this step (on `start`).
 */
usage?: TokenUsage, 
/**
 * What that call cost in dollars, when the model's price is known (on `start`).
 */
costUsd?: number, 
/**
 * How risky the step is rated, from the facts of the page it was chosen on (on `start`).
 */
risk?: RiskLevel, 
/**
 * The skill that guided the step (on `start`): the first of the prompt's `<skills>`
 * that allows its action.
 */
skill?: string, 
/**
 * Where the element the step acts on stands in the screenshot of the page it was
 * chosen on (pixels of that screenshot; on `start`, when it is in view), so a
 * replay can outline it.
 */
target?: BoundingBox, 
/**
 * What the element the step acts on is called on the page (its accessible name or
 * text, shortened; on `start`), so people read "Click “Sign in”", not an index. Left
 * out when it holds personal data.
 */
targetName?: string, } | { "type": "confirmationRequested" } & ConfirmationRequest | { "type": "siteAccessNeeded", step: number, site: string, } | { "type": "confirmationAnswered", step: number, approved: boolean, 
/**
 * Where they answered: `web` (the web app or a script on its socket), `extension`
 * (the side panel), `api` (`POST /api/agent/confirm`) or `mcp` (an MCP client's
 * elicitation).
 */
by: string, 
/**
 * Why they declined, as the model was told.
 */
reason?: string, } | { "type": "stepMode", stepByStep: boolean, } | { "type": "bridgeMode", allow: boolean, confirm: boolean, } | { "type": "pageObserved", 
/**
 * The step the observation follows (0 before the first action's result).
 */
step: number, url: string, title: string, screenshotArtifactId?: string, 
/**
 * How many interactive elements the index found.
 */
elements: number, 
/**
 * What could not be captured (`screenshot`, `readability`, `dom_index`).
 */
missing: Array<string>, warnings: Array<string>, 
/**
 * A JavaScript dialog the page shows, waiting for an answer.
 */
dialog?: PageDialog, 
/**
 * The task's tabs when it has several, the observed one `current`.
 */
tabs: Array<TaskTab>, } | { "type": "fileAttached", attachment: Attachment, } | { "type": "warning", message: string, } | { "type": "modelRetry", attempt: number, maxAttempts: number, reason: LlmErrorKind, message: string, delayMs: number, } | { "type": "ready", lastSeq: number, } | { "type": "error", error: ErrorObject, };

export type ConfirmationRequest = { step: number, action: AgentAction, 
/**
 * Why it needs a confirmation, and what it acts on.
 */
reason: string, 
/**
 * How risky the step is rated.
 */
risk: RiskLevel, 
/**
 * Each fact about the page that made it so, for people.
 */
facts: Array<string>, 
/**
 * The page it would act on.
 */
url: string, title: string, 
/**
 * The page as the model saw it, with where the target is on it.
 */
screenshotArtifactId?: string, target?: BoundingBox, 
/**
 * What the target is called on the page (see `toolUsed`'s `targetName`).
 */
targetName?: string, 
/**
 * Held only because the task runs step by step (not for its risk): "Next step" runs it.
 */
stepByStep?: boolean, };

export type EventEnvelope = { 
/**
 * Position in the task's event log; absent for events that are not history.
 */
seq?: number, taskId: string, 
/**
 * Milliseconds since the Unix epoch.
 */
at: number, } & ({ "type": "message", message: ChatMessage, } | { "type": "forkedFrom", origin: ForkedFrom, } | { "type": "forked", fork: ForkedFrom, } | { "type": "chatCompacted", through: string, messages: number, summary: string, } | { "type": "subtaskStarted", 
/**
 * 1-based within the request being answered.
 */
subtask: number, toolCallId: string, goal: string, maxSteps: number, } | { "type": "subtaskFinished", subtask: number, toolCallId: string, result: BrowserTaskResult, } | { "type": "taskDomains", allowed: Array<string>, blocked: Array<string>, } | { "type": "chatDelta", messageId: string, delta: string, finished: boolean, } | { "type": "taskStatus", status: TaskStatus, title?: string, selectedClientId?: string, } | { "type": "snapshotSync", clientId: string, snapshot: BrowserSnapshot, } | { "type": "structuredOutput", status: OutputStatus, output?: unknown, error?: ErrorObject, warnings: Array<string>, } | { "type": "toolUsed", 
/**
 * 1-based step number within the run.
 */
step: number, toolCallId: string, phase: ToolPhase, 
/**
 * Present on `start`.
 */
reflection?: Reflection, action: AgentAction, 
/**
 * Present on `end`: what goes back to the model.
 */
result?: ToolResult, 
/**
 * Present on `end`: one line for people.
 */
summary?: string, 
/**
 * Tokens of the model call that chose this step (on `start`).
 */
usage?: TokenUsage, 
/**
 * What that call cost in dollars, when the model's price is known (on `start`).
 */
costUsd?: number, 
/**
 * How risky the step is rated, from the facts of the page it was chosen on (on `start`).
 */
risk?: RiskLevel, 
/**
 * The skill that guided the step (on `start`): the first of the prompt's `<skills>`
 * that allows its action.
 */
skill?: string, 
/**
 * Where the element the step acts on stands in the screenshot of the page it was
 * chosen on (pixels of that screenshot; on `start`, when it is in view), so a
 * replay can outline it.
 */
target?: BoundingBox, 
/**
 * What the element the step acts on is called on the page (its accessible name or
 * text, shortened; on `start`), so people read "Click “Sign in”", not an index. Left
 * out when it holds personal data.
 */
targetName?: string, } | { "type": "confirmationRequested" } & ConfirmationRequest | { "type": "siteAccessNeeded", step: number, site: string, } | { "type": "confirmationAnswered", step: number, approved: boolean, 
/**
 * Where they answered: `web` (the web app or a script on its socket), `extension`
 * (the side panel), `api` (`POST /api/agent/confirm`) or `mcp` (an MCP client's
 * elicitation).
 */
by: string, 
/**
 * Why they declined, as the model was told.
 */
reason?: string, } | { "type": "stepMode", stepByStep: boolean, } | { "type": "bridgeMode", allow: boolean, confirm: boolean, } | { "type": "pageObserved", 
/**
 * The step the observation follows (0 before the first action's result).
 */
step: number, url: string, title: string, screenshotArtifactId?: string, 
/**
 * How many interactive elements the index found.
 */
elements: number, 
/**
 * What could not be captured (`screenshot`, `readability`, `dom_index`).
 */
missing: Array<string>, warnings: Array<string>, 
/**
 * A JavaScript dialog the page shows, waiting for an answer.
 */
dialog?: PageDialog, 
/**
 * The task's tabs when it has several, the observed one `current`.
 */
tabs: Array<TaskTab>, } | { "type": "fileAttached", attachment: Attachment, } | { "type": "warning", message: string, } | { "type": "modelRetry", attempt: number, maxAttempts: number, reason: LlmErrorKind, message: string, delayMs: number, } | { "type": "ready", lastSeq: number, } | { "type": "error", error: ErrorObject, });

export type NewTask = { taskId: string, };

export type TaskHere = { tabId: number, };

export type SetupInfo = { 
/**
 * The model the agent uses (`MIMO_LLM_MODEL`).
 */
model: string, 
/**
 * A demo task that works with no model key (`make dev` with the scripted model serves a
 * demo shop and sets `MIMO_DEMO_URL`); absent on a real deployment.
 */
demo?: DemoTask, };

export type DemoTask = { url: string, goal: string, };

export type TaskSummary = { taskId: string, status: TaskStatus, title?: string, selectedClientId?: string, createdAt: number, updatedAt: number, 
/**
 * Sequence number of the newest history event.
 */
lastSeq: number, 
/**
 * When the task's coordinator instance now in memory was constructed. It changes when the
 * object hibernates and wakes, or the runtime restarts: state must survive both.
 */
instanceStartedAt: number, };

export type ArtifactKind = "screenshot" | "html" | "readability" | "dom_index" | "attachment";

export type PresignRequest = { 
/**
 * The task the artifact belongs to (canonical lowercase UUID; refused at parse time
 * otherwise).
 */
taskId: string, 
/**
 * What the artifact holds.
 */
kind: ArtifactKind, 
/**
 * The `Content-Type` the upload will send.
 */
contentType: string, 
/**
 * The exact number of bytes the upload will send (also the signed maximum).
 */
contentLength: number, 
/**
 * The action that produced the artifact, if any (for the caller's records; not signed).
 */
actionId?: string, 
/**
 * The file's name, for an attachment (required there; see `valid_file_name`).
 */
name?: string, };

export type PresignResponse = { 
/**
 * The new artifact's id.
 */
artifactId: string, 
/**
 * Where to `PUT` the body.
 */
uploadUrl: string, 
/**
 * Where to `GET` it once stored (404 until then), so an uploader needs no third request:
 * an upload to this Worker's URL is stored when its `PUT` answers 201; one straight to R2
 * (200) is confirmed by `GET /api/artifacts/{artifactId}`, which also signs a fresh URL.
 */
downloadUrl: string, 
/**
 * When the URL stops working, milliseconds since the Unix epoch.
 */
expiresAt: number, };

export type DownloadResponse = { 
/**
 * The artifact's id.
 */
artifactId: string, 
/**
 * The artifact's kind.
 */
kind: ArtifactKind, 
/**
 * Where to `GET` the body.
 */
downloadUrl: string, 
/**
 * When the URL stops working, milliseconds since the Unix epoch.
 */
expiresAt: number, };

export type BridgeRequest = { "type": "hello", nonce: string, } | { "type": "auth", proof: string, } | { "type": "invoke" } & Invoke;

export type Invoke = { 
/**
 * Chosen by the caller; every event and the result carry it back.
 */
id: string, 
/**
 * `read`, `write`, `edit` or `bash` (a string on the wire so that an unknown tool is
 * `E_TOOL`, not a malformed frame).
 */
tool: string, 
/**
 * The tool's arguments: [`ReadArgs`], [`WriteArgs`], [`EditArgs`] or [`BashArgs`].
 */
args: unknown, sessionId: string, parentSessionId?: string, agentId: string, 
/**
 * Set by the coordinator once the person confirmed this very write or edit of a protected
 * location (see [`protected_location`]): the path they confirmed, which must be the
 * arguments' `path`. Without it, such a write or edit is `E_PATH`.
 */
confirmedProtectedPath?: string, };

export type BridgeTool = "read" | "write" | "edit" | "bash";

export type ReadArgs = { 
/**
 * Relative to the bridge's root.
 */
path: string, 
/**
 * First line to return, 0-based.
 */
offset?: number, 
/**
 * Most lines to return.
 */
limit?: number, };

export type ReadData = { path: string, 
/**
 * The lines asked for, each with its line ending as in the file.
 */
content: string, offset: number, 
/**
 * Lines in `content`.
 */
lines: number, 
/**
 * Lines in the whole file.
 */
totalLines: number, 
/**
 * `content` stopped at [`MAX_BRIDGE_OUTPUT_BYTES`] (at a line end) before the lines asked
 * for; read on from `offset + lines`.
 */
truncated: boolean, };

export type WriteArgs = { path: string, content: string, };

export type WriteData = { path: string, bytes: number, 
/**
 * The file did not exist before.
 */
created: boolean, };

export type EditArgs = { path: string, old: string, new: string, };

export type EditData = { path: string, 
/**
 * 1-based line where the replaced text began.
 */
line: number, };

export type BashArgs = { command: string, 
/**
 * Default [`DEFAULT_BASH_TIMEOUT_MS`], at most [`MAX_BASH_TIMEOUT_MS`]; on expiry the
 * process and its children are killed (`E_TIMEOUT`).
 */
timeoutMs?: number, };

export type BashData = { 
/**
 * `null` when a signal ended it.
 */
exitCode: number | null, stdout: string, stderr: string, 
/**
 * Output beyond [`MAX_BRIDGE_OUTPUT_BYTES`] per stream was streamed but not kept here.
 */
truncated: boolean, };

export type BridgeInfo = { version: string, 
/**
 * The folder every path is relative to.
 */
root: string, tools: Array<BridgeTool>, 
/**
 * What `bash` may run: program names and full argument patterns (`git status`, `npm run
 * *`); empty and not strict means any program that is not an interpreter.
 */
allow: Array<string>, strict: boolean, maxConcurrent: number, };

export type BridgeMessage = { "type": "challenge", nonce: string, proof: string, } | { "type": "ready" } & BridgeInfo | { "type": "result" } & InvokeResult | { "type": "invoke.started", id: string, tool: BridgeTool, } | { "type": "invoke.stdout", id: string, chunk: string, } | { "type": "invoke.stderr", id: string, chunk: string, } | { "type": "invoke.finished", id: string, ok: boolean, durationMs: number, };

export type InvokeResult = { 
/**
 * The invocation's id; empty when the frame was too broken to have one.
 */
id: string, ok: boolean, 
/**
 * The tool's data ([`ReadData`], [`WriteData`], [`EditData`], [`BashData`]) when `ok`.
 */
data?: unknown, error?: ErrorObject, };

export type RequestId = number | string;

export type JsonRpcRequest = { jsonrpc: string, id: RequestId, method: string, params?: unknown, };

export type JsonRpcNotification = { jsonrpc: string, method: string, params?: unknown, };

export type JsonRpcResponse = { jsonrpc: string, id: RequestId, result: unknown, };

export type JsonRpcErrorResponse = { jsonrpc: string, id?: RequestId, error: JsonRpcError, };

export type JsonRpcError = { 
/**
 * One of [`JsonRpcErrorCode`]'s.
 */
code: number, message: string, data?: unknown, };

export type Implementation = { name: string, version: string, title?: string, };

export type InitializeParams = { protocolVersion: string, 
/**
 * What the client can do (roots, sampling, elicitation): Mimo asks for none of it yet.
 */
capabilities: unknown, clientInfo: Implementation, };

export type InitializeResult = { protocolVersion: string, capabilities: ServerCapabilities, serverInfo: Implementation, instructions?: string, };

export type ServerCapabilities = { tools?: ToolsCapability, };

export type ToolsCapability = { 
/**
 * Whether the server tells the client when its tools change (Mimo's never do).
 */
listChanged: boolean, };

export type Tool = { name: string, title?: string, description: string, 
/**
 * A JSON Schema object for the tool's `arguments`.
 */
inputSchema: unknown, annotations?: ToolAnnotations, };

export type ToolAnnotations = { title?: string, readOnlyHint?: boolean, destructiveHint?: boolean, idempotentHint?: boolean, openWorldHint?: boolean, };

export type ListToolsParams = { cursor?: string, };

export type ListToolsResult = { tools: Array<Tool>, nextCursor?: string, };

export type CallToolParams = { name: string, arguments?: Record<string, unknown>, _meta?: RequestMeta, };

export type RequestMeta = { 
/**
 * Where the client wants `notifications/progress` for this request to say they are for:
 * it asks for them by sending one.
 */
progressToken?: RequestId, };

export type CallToolResult = { content: Array<Content>, 
/**
 * The result as JSON, when the tool has one (`run_task` given an answer schema: the
 * answer in that shape); its text is in `content` too, for clients that read only that.
 */
structuredContent?: Record<string, unknown>, isError?: boolean, };

export type Content = { "type": "text", text: string, } | { "type": "image", data: string, mimeType: string, };

export type EmptyResult = Record<symbol, never>;

export type ElicitRequestParams = { 
/**
 * `form`; left out for a client on 2025-06-18, the revision before modes.
 */
mode?: string, message: string, requestedSchema: unknown, };

export type ElicitResult = { action: ElicitAction, 
/**
 * What the user filled in (with `accept`).
 */
content?: Record<string, unknown>, };

export type ElicitAction = "accept" | "decline" | "cancel";

export type ProtectedResourceMetadata = { resource: string, 
/**
 * This deployment: it makes tokens in its web app, and through OAuth 2.1
 * (`/.well-known/oauth-authorization-server`).
 */
authorization_servers: Array<string>, bearer_methods_supported: Array<string>, resource_name: string, };

export type McpTokenRequest = { name: string, };

export type McpTokenCreated = { id: string, name: string, token: string, createdAt: number, };

export type McpTokenInfo = { id: string, name: string, createdAt: number, };

export type McpTokenList = { tokens: Array<McpTokenInfo>, };

export type ConsentRequest = { clientName: string, clientId: string, 
/**
 * Where the client is sent back to, with the code when the person allows it.
 */
redirectUri: string, };

export type ConsentAnswer = { allow: boolean, };

export type ConsentRedirect = { redirectTo: string, };

export type WebhookEventType = "task.created" | "task.step_finished" | "task.confirmation_requested" | "task.confirmation_answered" | "task.paused" | "task.resumed" | "task.completed" | "task.failed" | "task.canceled";

export type WebhookEventData = { taskId: string, 
/**
 * The event's position in the task's history: events of a task are delivered in its order.
 */
seq: number, 
/**
 * When it happened, in ms since the Unix epoch.
 */
at: number, 
/**
 * The task's status after it (created, paused, resumed and the endings).
 */
status?: TaskStatus, 
/**
 * The step (step finished, confirmation requested and answered).
 */
step?: number, 
/**
 * The step's action, e.g. `click`.
 */
action?: string, 
/**
 * Whether the step succeeded (step finished), was approved (confirmation answered), or
 * the task did what it was asked (completed; `false`: it ended without doing all of it).
 */
ok?: boolean, 
/**
 * The step's one line for people.
 */
summary?: string, 
/**
 * Why a confirmation is asked, or why the person declined.
 */
reason?: string, 
/**
 * Where a confirmation was answered (`web`, `extension`, `api`).
 */
by?: string, 
/**
 * What failed (a step, or the run).
 */
error?: ErrorObject, 
/**
 * What the task answered (completed): `{"text": …}`, or the answer in the task's answer
 * schema.
 */
output?: unknown, 
/**
 * The screenshot of the page the step was chosen on, or that a confirmation is asked on.
 */
screenshotArtifactId?: string, 
/**
 * Where the evidence is: set in a delivered body (the deployment's links), not in a
 * coordinator's report.
 */
links?: WebhookLinks, };

export type WebhookEvent = { type: WebhookEventType, data: WebhookEventData, };

export type WebhookReport = { type: WebhookEventType, taskId: string, seq: number, screenshotArtifactId?: string, 
/**
 * A [`WebhookPayload`] without links, as JSON.
 */
body: string, };

export type WebhookEvents = { events: Array<WebhookReport>, };

export type WebhookLinks = { 
/**
 * The task in the web app.
 */
task: string, 
/**
 * The task's audit log, one JSON line per step (`GET /api/task/{id}/audit.jsonl`).
 */
audit: string, 
/**
 * The evidence archive (`GET /api/task/{id}/export.zip`).
 */
evidence: string, 
/**
 * The screenshot's signed download (`GET /api/artifacts/{id}`).
 */
screenshot?: string, };

export type WebhookPayload = { type: WebhookEventType, 
/**
 * When the event happened, RFC 3339 in UTC.
 */
timestamp: string, data: WebhookEventData, };

export type WebhookCreate = { 
/**
 * The receiver: `https://` on a host the deployment allows (`WEBHOOK_ALLOWED_HOSTS`).
 */
url: string, 
/**
 * The events it hears; none listed is every one.
 */
events: Array<WebhookEventType>, 
/**
 * Only this task's events; none is every task of the deployment.
 */
taskId?: string, };

export type WebhookInfo = { id: string, url: string, 
/**
 * Empty: every event.
 */
events: Array<WebhookEventType>, taskId: string | null, createdAt: number, 
/**
 * Until when the secret before the last rotation still signs too (ms), if it does.
 */
previousSecretUntil: number | null, };

export type WebhookSecret = { webhook: WebhookInfo, secret: string, };

export type WebhookList = { webhooks: Array<WebhookInfo>, };

export type DeliveryStatus = "pending" | "delivered" | "failed";

export type WebhookDelivery = { id: number, webhookId: string, 
/**
 * The `webhook-id` header.
 */
messageId: string, type: WebhookEventType, taskId: string, seq: number, status: DeliveryStatus, attempts: number, nextAttemptAt: number | null, lastAttemptAt: number | null, 
/**
 * The receiver's HTTP status at the last attempt.
 */
responseStatus: number | null, 
/**
 * Why the last attempt failed.
 */
lastError: string | null, createdAt: number, };

export type WebhookDeliveryList = { deliveries: Array<WebhookDelivery>, };

export const MAX_WEB_FRAME_BYTES = 65536;
export const MAX_EXTENSION_FRAME_BYTES = 524288;
export const MAX_USER_MESSAGE_BYTES = 32768;
export const MAX_SKILL_BYTES = 16384;
export const READABILITY_INLINE_LIMIT_BYTES = 262144;
export const READABILITY_MAX_BYTES = 2097152;
export const SCREENSHOT_MAX_BYTES = 20971520;
export const HTML_MAX_BYTES = 20971520;
export const DOM_INDEX_MAX_BYTES = 20971520;
export const ATTACHMENT_MAX_BYTES = 10485760;
export const MAX_POLL_WAIT_MS = 20000;
export const POLL_PRESENCE_MS = 30000;
export const MAX_BRIDGE_FRAME_BYTES = 524288;
export const MAX_BRIDGE_OUTPUT_BYTES = 131072;
export const DEFAULT_BASH_TIMEOUT_MS = 30000;
export const MAX_BASH_TIMEOUT_MS = 600000;
export type ActionName = ActionCommand["name"];
export const ACTION_TRAITS = {
  "task_start": {"rerun":"idempotent","mutating":false,"verify":"handler","slow":true,"capturesPage":false,"needsTaskTab":false,"label":"starting"},
  "task_stop": {"rerun":"idempotent","mutating":false,"verify":"handler","slow":false,"capturesPage":false,"needsTaskTab":false,"label":"stopping"},
  "browser_debugger_attach": {"rerun":"read_only","mutating":false,"verify":"handler","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"getting ready"},
  "browser_wait_for_loaded": {"rerun":"read_only","mutating":false,"verify":"handler","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"waiting for the page to load"},
  "browser_screenshot": {"rerun":"read_only","mutating":false,"verify":"look","slow":true,"capturesPage":true,"needsTaskTab":true,"label":"taking a screenshot"},
  "browser_readability_extract": {"rerun":"read_only","mutating":false,"verify":"look","slow":true,"capturesPage":true,"needsTaskTab":true,"label":"reading the page"},
  "browser_dom_index": {"rerun":"read_only","mutating":false,"verify":"look","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"reading the page"},
  "browser_observe": {"rerun":"read_only","mutating":false,"verify":"look","slow":true,"capturesPage":true,"needsTaskTab":true,"label":"looking at the page"},
  "browser_xpath_scan": {"rerun":"read_only","mutating":false,"verify":"look","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"reading the page"},
  "browser_get_html": {"rerun":"read_only","mutating":false,"verify":"look","slow":true,"capturesPage":false,"needsTaskTab":true,"label":"reading the page"},
  "browser_navigate": {"rerun":"idempotent","mutating":true,"verify":"handler","slow":true,"capturesPage":false,"needsTaskTab":true,"label":"opening {url}"},
  "browser_click": {"rerun":"once","mutating":true,"verify":"watched","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"clicking {target}"},
  "browser_type": {"rerun":"once","mutating":true,"verify":"handler","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"typing into {target}"},
  "browser_select_option": {"rerun":"once","mutating":true,"verify":"watched","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"choosing {option:quoted}"},
  "browser_scroll": {"rerun":"once","mutating":true,"verify":"handler","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"scrolling {direction}"},
  "browser_press_key": {"rerun":"once","mutating":true,"verify":"watched","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"pressing {key}"},
  "browser_hover": {"rerun":"idempotent","mutating":true,"verify":"look","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"pointing at {target}"},
  "browser_back": {"rerun":"once","mutating":true,"verify":"handler","slow":true,"capturesPage":false,"needsTaskTab":true,"label":"going back"},
  "browser_forward": {"rerun":"once","mutating":true,"verify":"handler","slow":true,"capturesPage":false,"needsTaskTab":true,"label":"going forward"},
  "browser_reload": {"rerun":"idempotent","mutating":true,"verify":"handler","slow":true,"capturesPage":false,"needsTaskTab":true,"label":"reloading the page"},
  "browser_wait_for": {"rerun":"read_only","mutating":false,"verify":"handler","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"waiting for {text|selector|url}"},
  "browser_dialog": {"rerun":"once","mutating":true,"verify":"handler","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"answering the page's dialog"},
  "browser_scroll_to": {"rerun":"idempotent","mutating":true,"verify":"handler","slow":true,"capturesPage":false,"needsTaskTab":true,"label":"looking for {text:quoted}"},
  "browser_click_at": {"rerun":"once","mutating":true,"verify":"watched","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"clicking at {x},{y}"},
  "browser_hover_at": {"rerun":"idempotent","mutating":true,"verify":"look","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"pointing at {x},{y}"},
  "browser_drag": {"rerun":"once","mutating":true,"verify":"watched","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"dragging"},
  "browser_upload_file": {"rerun":"once","mutating":true,"verify":"handler","slow":true,"capturesPage":false,"needsTaskTab":true,"label":"attaching {name:quoted}"},
  "browser_read_tab": {"rerun":"read_only","mutating":false,"verify":"look","slow":true,"capturesPage":false,"needsTaskTab":false,"label":"reading tab {tabId}"},
  "browser_switch_tab": {"rerun":"idempotent","mutating":true,"verify":"handler","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"switching to tab {tabId}"},
  "browser_open_tab": {"rerun":"once","mutating":true,"verify":"handler","slow":true,"capturesPage":false,"needsTaskTab":true,"label":"opening {url} in a new tab"},
  "browser_close_tab": {"rerun":"once","mutating":true,"verify":"handler","slow":false,"capturesPage":false,"needsTaskTab":true,"label":"closing tab {tabId}"},
  "bridge_invoke": {"rerun":"once","mutating":false,"verify":"handler","slow":false,"capturesPage":false,"needsTaskTab":false,"label":"using files on this computer ({tool})"},
} as const satisfies Record<ActionName, ActionTraits>;
type KeysOf<T> = T extends unknown ? keyof T : never;
export type AgentActionName = KeysOf<AgentAction>;
export const STEP_WORDING: Record<AgentActionName, string> = {
  "navigate": "go to {url}",
  "click": "click {index:element}",
  "type": "type {text:quoted} into {index:element}[{submit?} and submit]",
  "select_option": "choose {option:quoted} in {index:element}",
  "scroll": "scroll {direction}[ in {index:element}]",
  "press_key": "press {key}",
  "hover": "point at {index:element}",
  "back": "go back",
  "forward": "go forward",
  "reload": "reload the page",
  "wait_for": "wait for [the text {text:quoted}|the address {url:quoted}|the element {selector:quoted}]",
  "dialog": "answer the page's dialog: [{accept?}OK|Cancel][ with {text:quoted}]",
  "scroll_to": "scroll to {text:quoted}",
  "click_at": "click at {x:round},{y:round}",
  "hover_at": "point at {x:round},{y:round}",
  "drag": "drag {from:end} to {to:end}",
  "upload_file": "attach {file:quoted} to {index:element}",
  "list_tabs": "list your open tabs",
  "read_tab": "read your tab {tab_id}",
  "switch_tab": "switch to tab {tab_id}",
  "open_tab": "open {url} in a new tab",
  "close_tab": "[close tab {tab_id}|close this tab]",
  "read_page": "[read the page on from character {from}|read more of the page]",
  "file_read": "read the file {path:quoted} on this computer",
  "file_write": "write the file {path:quoted} on this computer",
  "file_edit": "edit the file {path:quoted} on this computer",
  "run_command": "run {command:quoted} on this computer",
  "done": "[{success?}finish|give up]",
};
export const PING_FRAME = "{\"type\":\"ping\"}";
export const PONG_FRAME = "{\"type\":\"pong\"}";
