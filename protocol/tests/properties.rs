//! Property tests of every socket frame type and of the model's tool arguments.
//!
//! - Whatever text arrives on a socket, `parse_frame` returns: a frame, or a
//!   `SCHEMA_VALIDATION_FAILED` error. An accepted frame means the same after a round trip.
//! - Every frame the types can express (generated, all variants) is written and read back equal.
//! - Frames over the size limit are refused before they are parsed.
//! - The `AgentOutput` tool arguments: any JSON value is parsed or refused; valid ones round-trip.
//!
//! The test names start with the `make fuzz` target that runs them longer: `web_frames`,
//! `extension_frames`, `tool_arguments`.

use std::fmt::Debug;

use mimo_proptest::{apply_to_str, cases, json_value, text, text_edits, tweaked, JSON_TOKENS};
use mimo_protocol::action::{ClickStrategy, ScanScope, ScrollDirection, TypeStrategy};
use mimo_protocol::limits::{MAX_EXTENSION_FRAME_BYTES, MAX_WEB_FRAME_BYTES};
use mimo_protocol::*;
use proptest::collection::vec;
use proptest::option::of;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use strum::IntoEnumIterator;

// ---------------------------------------------------------------------------------------------
// Generated values of the protocol types (boxed: unboxed, the nested value trees of the larger
// frames overflow a test thread's stack in debug builds)
// ---------------------------------------------------------------------------------------------

/// A JSON value for an optional field: `Some(null)` is written as `null`, which reads back as
/// `None` and means the same, so it is not generated.
fn present_json() -> BoxedStrategy<Value> {
    json_value()
        .prop_filter("null reads back as absent", |v| !v.is_null())
        .boxed()
}

/// Every code, from the enum itself: a new one is generated as soon as it exists.
fn error_code() -> BoxedStrategy<ErrorCode> {
    select(ErrorCode::iter().collect::<Vec<_>>()).boxed()
}

fn error_object() -> BoxedStrategy<ErrorObject> {
    (error_code(), text(), any::<bool>())
        .prop_map(|(code, message, retryable)| ErrorObject {
            code,
            message,
            retryable,
        })
        .boxed()
}

fn task_status() -> BoxedStrategy<TaskStatus> {
    select(TaskStatus::iter().collect::<Vec<_>>()).boxed()
}

fn scroll_direction() -> BoxedStrategy<ScrollDirection> {
    use ScrollDirection::*;
    select(vec![Up, Down, Left, Right]).boxed()
}

fn reflection() -> BoxedStrategy<Reflection> {
    (text(), text(), text())
        .prop_map(|(evaluation_previous_goal, memory, next_goal)| Reflection {
            evaluation_previous_goal,
            memory,
            next_goal,
        })
        .boxed()
}

fn agent_action() -> BoxedStrategy<AgentAction> {
    prop_oneof![
        text().prop_map(|url| AgentAction::Navigate { url }),
        any::<u32>().prop_map(|index| AgentAction::Click { index }),
        (any::<u32>(), text(), any::<bool>()).prop_map(|(index, text, submit)| {
            AgentAction::Type {
                index,
                text,
                submit,
            }
        }),
        (any::<u32>(), text())
            .prop_map(|(index, option)| AgentAction::SelectOption { index, option }),
        (scroll_direction(), of(any::<u32>()), of(any::<u32>())).prop_map(
            |(direction, index, amount)| AgentAction::Scroll {
                direction,
                index,
                amount,
            }
        ),
        text().prop_map(|key| AgentAction::PressKey { key }),
        any::<u32>().prop_map(|index| AgentAction::Hover { index }),
        Just(AgentAction::Back {}),
        (of(text()), of(text()), of(text()), of(any::<u32>())).prop_map(
            |(text, url, selector, timeout_ms)| AgentAction::WaitFor {
                text,
                url,
                selector,
                timeout_ms,
            }
        ),
        (any::<bool>(), of(text())).prop_map(|(accept, text)| AgentAction::Dialog { accept, text }),
        text().prop_map(|text| AgentAction::ScrollTo { text }),
        (any::<i32>(), any::<i32>()).prop_map(|(x, y)| AgentAction::ClickAt {
            x: x.into(),
            y: y.into()
        }),
        (drag_point(), drag_point()).prop_map(|(from, to)| AgentAction::Drag { from, to }),
        (any::<u32>(), text()).prop_map(|(index, file)| AgentAction::UploadFile { index, file }),
        any::<i32>().prop_map(|tab_id| AgentAction::ReadTab { tab_id }),
        any::<i32>().prop_map(|tab_id| AgentAction::SwitchTab { tab_id }),
        text().prop_map(|url| AgentAction::OpenTab { url }),
        of(any::<i32>()).prop_map(|tab_id| AgentAction::CloseTab { tab_id }),
        (text(), of(any::<u32>()), of(any::<u32>())).prop_map(|(path, offset, limit)| {
            AgentAction::FileRead {
                path,
                offset,
                limit,
            }
        }),
        (text(), text()).prop_map(|(path, content)| AgentAction::FileWrite { path, content }),
        (text(), text(), text()).prop_map(|(path, old, new)| AgentAction::FileEdit {
            path,
            old,
            new
        }),
        (text(), of(any::<u32>())).prop_map(|(command, timeout_ms)| AgentAction::RunCommand {
            command,
            timeout_ms
        }),
        (any::<bool>(), text()).prop_map(|(success, text)| AgentAction::Done {
            success,
            text,
            data: None
        }),
    ]
    .boxed()
}

fn agent_output() -> BoxedStrategy<AgentOutput> {
    (reflection(), agent_action())
        .prop_map(|(reflection, action)| AgentOutput { reflection, action })
        .boxed()
}

fn tool_result() -> BoxedStrategy<ToolResult> {
    (
        text(),
        text(),
        any::<bool>(),
        of(present_json()),
        of(error_object()),
        vec(text(), 0..3),
    )
        .prop_map(
            |(tool_call_id, name, ok, result, error, warnings)| ToolResult {
                tool_call_id,
                name,
                ok,
                result,
                model_result: None,
                error,
                // Partial only ever with success.
                partial: ok && warnings.len() == 1,
                warnings,
            },
        )
        .boxed()
}

fn token_usage() -> BoxedStrategy<TokenUsage> {
    (any::<u64>(), any::<u64>())
        .prop_map(|(input_tokens, output_tokens)| TokenUsage {
            input_tokens,
            output_tokens,
        })
        .boxed()
}

fn window() -> BoxedStrategy<WindowInfo> {
    (any::<i32>(), any::<bool>(), of(text()))
        .prop_map(|(window_id, focused, kind)| WindowInfo {
            window_id,
            focused,
            kind,
        })
        .boxed()
}

fn tab() -> BoxedStrategy<TabInfo> {
    (
        (any::<i32>(), any::<i32>(), any::<u32>()),
        (text(), text(), text()),
        (any::<bool>(), of(any::<i32>())),
    )
        .prop_map(
            |((tab_id, window_id, index), (url, title, status), (active, group_id))| TabInfo {
                tab_id,
                window_id,
                index,
                url,
                title,
                status,
                active,
                group_id,
            },
        )
        .boxed()
}

fn group() -> BoxedStrategy<TabGroupInfo> {
    (any::<i32>(), any::<i32>(), text(), text(), any::<bool>())
        .prop_map(
            |(group_id, window_id, title, color, collapsed)| TabGroupInfo {
                group_id,
                window_id,
                title,
                color,
                collapsed,
            },
        )
        .boxed()
}

fn snapshot() -> BoxedStrategy<BrowserSnapshot> {
    (
        vec(window(), 0..3),
        vec(tab(), 0..3),
        vec(group(), 0..2),
        of(any::<i32>()),
    )
        .prop_map(|(windows, tabs, groups, active_tab_id)| BrowserSnapshot {
            windows,
            tabs,
            groups,
            active_tab_id,
            bridge: None,
        })
        .boxed()
}

fn tab_event() -> BoxedStrategy<TabEvent> {
    prop_oneof![
        tab().prop_map(|tab| TabEvent::TabUpserted { tab }),
        any::<i32>().prop_map(|tab_id| TabEvent::TabRemoved { tab_id }),
        (any::<i32>(), any::<i32>())
            .prop_map(|(tab_id, window_id)| TabEvent::TabActivated { tab_id, window_id }),
        window().prop_map(|window| TabEvent::WindowUpserted { window }),
        any::<i32>().prop_map(|window_id| TabEvent::WindowRemoved { window_id }),
        of(any::<i32>()).prop_map(|window_id| TabEvent::WindowFocused { window_id }),
        group().prop_map(|group| TabEvent::GroupUpserted { group }),
        any::<i32>().prop_map(|group_id| TabEvent::GroupRemoved { group_id }),
    ]
    .boxed()
}

fn action_outcome() -> BoxedStrategy<ActionOutcome> {
    (
        (text(), any::<u32>(), text()),
        select(vec![
            ActionStatus::Ok,
            ActionStatus::Partial,
            ActionStatus::Error,
        ]),
        of(present_json()),
        of(error_object()),
        vec(text(), 0..3),
        of(page_dialog().prop_map(Box::new)),
        (of(any::<i32>()), of(text())),
    )
        .prop_map(
            |(
                (action_id, attempt, task_id),
                status,
                result,
                error,
                warnings,
                dialog,
                (tab_id, waits_for_site),
            )| {
                ActionOutcome {
                    action_id,
                    attempt,
                    task_id,
                    status,
                    result,
                    model_result: None,
                    error,
                    warnings,
                    dialog,
                    tab_id,
                    waits_for_site,
                    timings: Vec::new(),
                }
            },
        )
        .boxed()
}

fn drag_end() -> BoxedStrategy<DragEnd> {
    (of(any::<u32>()), of(any::<i32>()), of(any::<i32>()))
        .prop_map(|(click_id, x, y)| DragEnd {
            click_id,
            x: x.map(f64::from),
            y: y.map(f64::from),
        })
        .boxed()
}

fn drag_point() -> BoxedStrategy<DragPoint> {
    (of(any::<u32>()), of(any::<i32>()), of(any::<i32>()))
        .prop_map(|(index, x, y)| DragPoint {
            index,
            x: x.map(f64::from),
            y: y.map(f64::from),
        })
        .boxed()
}

fn task_tab() -> BoxedStrategy<TaskTab> {
    (any::<i32>(), text(), text(), any::<bool>())
        .prop_map(|(tab_id, url, title, current)| TaskTab {
            tab_id,
            url,
            title,
            current,
        })
        .boxed()
}

fn page_dialog() -> BoxedStrategy<PageDialog> {
    (
        select(vec![
            DialogKind::Alert,
            DialogKind::Confirm,
            DialogKind::Prompt,
            DialogKind::Beforeunload,
        ]),
        text(),
        of(text()),
        text(),
    )
        .prop_map(|(kind, message, default_prompt, url)| PageDialog {
            kind,
            message,
            default_prompt,
            url,
        })
        .boxed()
}

/// The facts a step was rated on: a form sent somewhere, or none.
fn rated_facts() -> BoxedStrategy<Box<mimo_protocol::ElementFacts>> {
    (of(text()), any::<bool>())
        .prop_map(|(action, submits)| {
            Box::new(mimo_protocol::ElementFacts {
                form: action.map(|action| mimo_protocol::FormFacts {
                    method: "POST".into(),
                    action,
                    cross_origin: submits,
                    fields: Vec::new(),
                }),
                submits,
                ..Default::default()
            })
        })
        .boxed()
}

fn target() -> BoxedStrategy<Target> {
    (
        of(any::<u32>()),
        of(text()),
        of(text()),
        of(text()),
        of(text()),
        of(rated_facts()),
    )
        .prop_map(|(click_id, xpath, selector, label, role, expect)| Target {
            click_id,
            xpath,
            selector,
            label,
            role,
            expect,
        })
        .boxed()
}

fn action_command() -> BoxedStrategy<ActionCommand> {
    use ActionCommand::*;
    let scope = || of(select(vec![ScanScope::Viewport, ScanScope::Document]));
    prop_oneof![
        (
            of(text()),
            of(any::<bool>()),
            of(text()),
            of(any::<i32>()),
            of((vec(text(), 0..3), vec(text(), 0..3))),
            of((any::<bool>(), any::<bool>())),
        )
            .prop_map(
                |(url, reuse_existing_tab, group_title, adopt_tab_id, domains, redaction)| {
                    TaskStart {
                        url,
                        reuse_existing_tab,
                        group_title,
                        adopt_tab_id,
                        // The task's own rules: the deployment's swapped, for variety.
                        task_domains: domains.clone().map(|(allowed, blocked)| {
                            Box::new(DomainPolicy {
                                allowed: blocked,
                                blocked: allowed,
                            })
                        }),
                        domains: domains
                            .map(|(allowed, blocked)| DomainPolicy { allowed, blocked }),
                        redaction: redaction.map(|(evidence, model)| {
                            mimo_protocol::RedactionPolicy {
                                evidence,
                                model,
                                kinds: mimo_protocol::PiiKind::ALL.to_vec(),
                            }
                        }),
                    }
                }
            ),
        of(any::<bool>()).prop_map(|close_tab| TaskStop { close_tab }),
        Just(BrowserDebuggerAttach {}),
        of(any::<u32>()).prop_map(|timeout_ms| BrowserWaitForLoaded { timeout_ms }),
        of(any::<bool>()).prop_map(|full_page| BrowserScreenshot { full_page }),
        Just(BrowserReadabilityExtract {}),
        (scope(), of(text()), of(any::<u32>())).prop_map(|(scope, assign_attr, within)| {
            BrowserDomIndex {
                scope,
                assign_attr,
                within,
            }
        }),
        scope().prop_map(|scope| BrowserXpathScan { scope }),
        (
            target(),
            of(select(vec![
                ClickStrategy::CdpMouse,
                ClickStrategy::DomClick
            ])),
            of(any::<bool>())
        )
            .prop_map(|(target, strategy, checked)| BrowserClick {
                target,
                strategy,
                checked
            }),
        (
            target(),
            text(),
            of(any::<bool>()),
            of(select(vec![TypeStrategy::CdpKey, TypeStrategy::DomInput]))
        )
            .prop_map(|(target, text, submit, strategy)| BrowserType {
                target,
                text,
                submit,
                strategy,
            }),
        of(text()).prop_map(|xpath| BrowserGetHtml { xpath }),
        (target(), scroll_direction(), of(any::<u32>())).prop_map(|(target, direction, amount)| {
            BrowserScroll {
                target,
                direction,
                amount,
            }
        }),
        text().prop_map(|url| BrowserNavigate { url }),
        Just(BrowserBack {}),
        Just(BrowserForward {}),
        (target(), text()).prop_map(|(target, option)| BrowserSelectOption { target, option }),
        text().prop_map(|key| BrowserPressKey { key, expect: None }),
        target().prop_map(|target| BrowserHover { target }),
        (of(text()), of(text()), of(text()), of(any::<u32>())).prop_map(
            |(text, url, selector, timeout_ms)| BrowserWaitFor {
                text,
                url,
                selector,
                timeout_ms,
            }
        ),
        (any::<bool>(), of(text())).prop_map(|(accept, text)| BrowserDialog { accept, text }),
        text().prop_map(|text| BrowserScrollTo { text }),
        // Scales in quarters: exact in JSON.
        (any::<i32>(), any::<i32>(), of(1u8..16)).prop_map(|(x, y, q)| BrowserClickAt {
            x: x.into(),
            y: y.into(),
            expect: None,
            scale: q.map(|q| f64::from(q) / 4.0),
        }),
        (any::<i32>(), any::<i32>(), of(1u8..16)).prop_map(|(x, y, q)| BrowserHoverAt {
            x: x.into(),
            y: y.into(),
            scale: q.map(|q| f64::from(q) / 4.0),
        }),
        (drag_end(), drag_end(), of(1u8..16)).prop_map(|(from, to, q)| BrowserDrag {
            from,
            to,
            expect: None,
            scale: q.map(|q| f64::from(q) / 4.0),
        }),
        (target(), text(), text(), text()).prop_map(|(target, artifact_id, name, content_type)| {
            BrowserUploadFile {
                target,
                artifact_id,
                name,
                content_type,
            }
        }),
        any::<i32>().prop_map(|tab_id| BrowserReadTab { tab_id }),
        any::<i32>().prop_map(|tab_id| BrowserSwitchTab { tab_id }),
        text().prop_map(|url| BrowserOpenTab { url }),
        of(any::<i32>()).prop_map(|tab_id| BrowserCloseTab { tab_id }),
        (text(), text(), text(), of(text())).prop_map(
            |(path, content, agent_id, confirmed_protected_path)| BridgeInvoke {
                tool: mimo_protocol::bridge::BridgeTool::Write,
                args: serde_json::json!({ "path": path, "content": content }),
                agent_id,
                confirmed_protected_path,
            }
        ),
    ]
    .boxed()
}

fn browser_action() -> BoxedStrategy<BrowserAction> {
    (
        (text(), any::<u32>(), text(), text()),
        (of(any::<i32>()), of(any::<u64>())),
        action_command(),
    )
        .prop_map(
            |((action_id, attempt, task_id, client_id), (tab_id, budget_ms), command)| {
                BrowserAction {
                    action_id,
                    attempt,
                    task_id,
                    client_id,
                    tab_id,
                    budget_ms,
                    command,
                }
            },
        )
        .boxed()
}

fn frontend_message() -> BoxedStrategy<FrontendMessage> {
    prop_oneof![
        (
            text(),
            proptest::option::of(text()),
            proptest::option::of(text())
        )
            .prop_map(|(content, client_message_id, field)| {
                FrontendMessage::UserMessage {
                    content,
                    client_message_id,
                    answer_schema: field.map(|name| {
                        serde_json::json!({
                            "type": "object", "required": [name]
                        })
                    }),
                }
            }),
        text().prop_map(|client_id| FrontendMessage::SelectClient { client_id }),
        Just(FrontendMessage::Stop {}),
        (vec(text(), 0..3), vec(text(), 0..3))
            .prop_map(|(allowed, blocked)| FrontendMessage::SetDomains { allowed, blocked }),
        Just(FrontendMessage::Resume {}),
        Just(FrontendMessage::TakeOver {}),
        Just(FrontendMessage::Pause {}),
        Just(FrontendMessage::Regenerate {}),
        text().prop_map(|message_id| FrontendMessage::SelectAnswer { message_id }),
        (any::<u32>(), any::<bool>(), of(text())).prop_map(|(step, approve, reason)| {
            FrontendMessage::Confirm {
                step,
                approve,
                reason,
            }
        }),
        any::<bool>().prop_map(|step_by_step| FrontendMessage::SetStepMode { step_by_step }),
    ]
    .boxed()
}

fn frontend_event() -> BoxedStrategy<FrontendEvent> {
    use FrontendEvent::*;
    let chat_message = (
        text(),
        select(vec![ChatRole::User, ChatRole::Assistant]),
        text(),
        any::<u64>(),
        proptest::option::of(text()),
        (proptest::option::of(1..10u32), any::<bool>()),
    )
        .prop_map(
            |(message_id, role, content, created_at, client_message_id, (version, superseded))| {
                ChatMessage {
                    message_id,
                    role,
                    content,
                    created_at,
                    client_message_id,
                    version,
                    superseded,
                }
            },
        );
    let output_status = select(vec![
        OutputStatus::Ok,
        OutputStatus::Partial,
        OutputStatus::Error,
    ]);
    prop_oneof![
        chat_message.prop_map(|message| Message { message }),
        (vec(text(), 0..3), vec(text(), 0..3))
            .prop_map(|(allowed, blocked)| TaskDomains { allowed, blocked }),
        (text(), text(), any::<bool>()).prop_map(|(message_id, delta, finished)| ChatDelta {
            message_id,
            delta,
            finished,
        }),
        (task_status(), of(text()), of(text())).prop_map(|(status, title, selected_client_id)| {
            TaskStatus {
                status,
                title,
                selected_client_id,
            }
        }),
        (text(), snapshot()).prop_map(|(client_id, snapshot)| SnapshotSync {
            client_id,
            snapshot
        }),
        (
            output_status,
            of(present_json()),
            of(error_object()),
            vec(text(), 0..3)
        )
            .prop_map(|(status, output, error, warnings)| StructuredOutput {
                status,
                output,
                error,
                warnings,
            }),
        (
            (
                any::<u32>(),
                text(),
                select(vec![ToolPhase::Start, ToolPhase::End])
            ),
            (of(reflection()), agent_action(), of(tool_result())),
            (
                of(text()),
                of(token_usage()),
                of(any::<u32>()),
                of((0u16..2000, 0u16..2000))
            ),
        )
            .prop_map(
                |(
                    (step, tool_call_id, phase),
                    (reflection, action, result),
                    (summary, usage, micros, at),
                )| {
                    ToolUsed {
                        step,
                        tool_call_id,
                        phase,
                        reflection,
                        action,
                        result,
                        summary: summary.clone(),
                        usage,
                        // Exact in JSON: whole millionths of a dollar.
                        cost_usd: micros.map(|m| f64::from(m) / 1e6),
                        risk: usage.map(|_| mimo_protocol::RiskLevel::Low),
                        // Whole pixels: exact in JSON.
                        target: at.map(|(x, y)| mimo_protocol::action::BoundingBox {
                            x: x.into(),
                            y: y.into(),
                            w: 80.0,
                            h: 24.0,
                        }),
                        target_name: summary,
                        skill: usage.map(|_| "file-expense".to_owned()),
                    }
                }
            ),
        (any::<u32>(), any::<bool>(), text(), of(text())).prop_map(
            |(step, approved, by, reason)| ConfirmationAnswered {
                step,
                approved,
                by,
                reason,
            }
        ),
        any::<bool>().prop_map(|step_by_step| StepMode { step_by_step }),
        (any::<u32>(), text()).prop_map(|(step, site)| SiteAccessNeeded { step, site }),
        (
            any::<u32>(),
            agent_action(),
            text(),
            vec(text(), 0..3),
            of(text()),
            of((0u16..2000, 0u16..2000)),
            (text(), text(), any::<bool>()),
        )
            .prop_map(
                |(step, action, reason, facts, shot, at, (url, title, step_by_step))| {
                    ConfirmationRequested(mimo_protocol::ConfirmationRequest {
                        step,
                        action,
                        reason,
                        url,
                        title,
                        step_by_step,
                        risk: if facts.is_empty() {
                            mimo_protocol::RiskLevel::Medium
                        } else {
                            mimo_protocol::RiskLevel::High
                        },
                        facts,
                        screenshot_artifact_id: shot.clone(),
                        // Whole pixels: exact in JSON.
                        target: at.map(|(x, y)| mimo_protocol::action::BoundingBox {
                            x: x.into(),
                            y: y.into(),
                            w: 120.0,
                            h: 32.0,
                        }),
                        target_name: shot,
                    })
                }
            ),
        (
            (any::<u32>(), text(), text(), of(text())),
            (
                any::<u32>(),
                vec(text(), 0..3),
                vec(text(), 0..3),
                of(page_dialog()),
                vec(task_tab(), 0..3),
            ),
        )
            .prop_map(
                |(
                    (step, url, title, screenshot_artifact_id),
                    (elements, missing, warnings, dialog, tabs),
                )| {
                    PageObserved {
                        step,
                        url,
                        title,
                        screenshot_artifact_id,
                        elements,
                        missing,
                        warnings,
                        dialog,
                        tabs,
                    }
                }
            ),
        (text(), text(), text(), any::<u64>()).prop_map(
            |(artifact_id, name, content_type, size)| {
                FileAttached {
                    attachment: Attachment {
                        artifact_id,
                        name,
                        content_type,
                        size,
                    },
                }
            }
        ),
        any::<u64>().prop_map(|last_seq| Ready { last_seq }),
        error_object().prop_map(|error| Error { error }),
    ]
    .boxed()
}

fn event_envelope() -> BoxedStrategy<EventEnvelope> {
    (of(any::<u64>()), text(), any::<u64>(), frontend_event())
        .prop_map(|(seq, task_id, at, event)| EventEnvelope {
            seq,
            task_id,
            at,
            event,
        })
        .boxed()
}

fn extension_message() -> BoxedStrategy<ExtensionMessage> {
    use ExtensionMessage::*;
    let browser = (text(), text(), text()).prop_map(|(name, version, user_agent)| BrowserInfo {
        name,
        version,
        user_agent,
    });
    let attempt_state = select(vec![
        AttemptState::Unknown,
        AttemptState::Running,
        AttemptState::Finished,
    ]);
    let control = select(vec![
        mimo_protocol::TaskControl::Takeover,
        mimo_protocol::TaskControl::Resume,
        mimo_protocol::TaskControl::Stop,
    ]);
    prop_oneof![
        (text(), text(), browser, text()).prop_map(
            |(client_id, name, browser, extension_version)| Hello {
                client_id,
                name,
                browser,
                extension_version,
            }
        ),
        snapshot().prop_map(|snapshot| FullStateSync { snapshot }),
        tab_event().prop_map(|event| TabEvent { event }),
        Just(Ping {}),
        (text(), any::<u32>(), text()).prop_map(|(action_id, attempt, task_id)| ActionAck {
            action_id,
            attempt,
            task_id,
        }),
        action_outcome().prop_map(|outcome| ActionResult { outcome }),
        (
            (text(), text(), any::<u32>()),
            attempt_state,
            of(action_outcome())
        )
            .prop_map(
                |((task_id, action_id, attempt), state, outcome)| ActionStatus {
                    task_id,
                    action_id,
                    attempt,
                    state,
                    outcome,
                }
            ),
        (text(), control).prop_map(|(task_id, control)| TaskControl { task_id, control }),
    ]
    .boxed()
}

fn server_to_extension() -> BoxedStrategy<ServerToExtension> {
    use ServerToExtension::*;
    let attempt = || (text(), text(), any::<u32>());
    prop_oneof![
        text().prop_map(|client_id| Welcome { client_id }),
        error_object().prop_map(|error| Error { error }),
        Just(Pong {}),
        browser_action().prop_map(|action| BrowserAction { action }),
        (text(), task_status(), any::<bool>()).prop_map(|(task_id, status, bridge)| TaskState {
            task_id,
            status,
            bridge
        }),
        attempt().prop_map(|(task_id, action_id, attempt)| ActionQuery {
            task_id,
            action_id,
            attempt,
        }),
        attempt().prop_map(|(task_id, action_id, attempt)| ResultAck {
            task_id,
            action_id,
            attempt,
        }),
    ]
    .boxed()
}

// ---------------------------------------------------------------------------------------------
// Inputs that are not (quite) frames
// ---------------------------------------------------------------------------------------------

/// Text as it may arrive on a socket: anything at all, bytes read as UTF-8 the way a runtime
/// would (lossily), or deeply nested brackets (the parser must refuse them, not overflow).
fn junk() -> BoxedStrategy<String> {
    prop_oneof![
        "(?s).{0,64}",
        vec(any::<u8>(), 0..64).prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
        (select(vec!["[", "{\"a\":", "{\"type\":"]), 0..2000usize)
            .prop_map(|(open, depth)| open.repeat(depth)),
    ]
    .boxed()
}

/// Frame text close to valid: a generated frame of type `T` with JSON-level or text-level
/// mutations.
fn near_frames<T: Serialize + Debug, S: Strategy<Value = T>>(
    frames: fn() -> S,
) -> impl Strategy<Value = String> {
    let as_json = frames().prop_map(|f| serde_json::to_value(f).expect("serializes"));
    prop_oneof![
        as_json
            .prop_flat_map(|v| tweaked(v, 3))
            .prop_map(|v| v.to_string()),
        (frames(), text_edits(JSON_TOKENS, 4)).prop_map(|(frame, edits)| {
            apply_to_str(&serde_json::to_string(&frame).expect("serializes"), &edits)
        }),
    ]
}

// ---------------------------------------------------------------------------------------------
// The properties, checked the same way for every frame type
// ---------------------------------------------------------------------------------------------

/// A generated frame is written and read back equal, within the limit of its socket.
fn round_trips<T>(frame: &T, max_bytes: usize) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let text = serde_json::to_string(frame).expect("every frame serializes");
    prop_assert_eq!(&parse_frame::<T>(&text, max_bytes)?, frame);
    Ok(())
}

/// Any text is either a frame that means the same after a round trip, or a
/// `SCHEMA_VALIDATION_FAILED` error (never retryable: sending it again cannot help) that says
/// what was wrong.
fn parsed_or_refused<T>(text: &str, max_bytes: usize) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    match parse_frame::<T>(text, max_bytes) {
        Ok(frame) => round_trips(&frame, usize::MAX),
        Err(error) => {
            prop_assert_eq!(error.code, ErrorCode::SchemaValidationFailed);
            prop_assert!(!error.retryable);
            prop_assert!(error.message.starts_with("frame "), "{}", error.message);
            Ok(())
        }
    }
}

/// A frame longer than the limit is refused for its size, whatever it holds; at the limit it
/// is read.
fn refused_over_the_limit<T>(frame: &T, cut: Index) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let text = serde_json::to_string(frame).expect("every frame serializes");
    let limit = cut.index(text.len());
    let error = parse_frame::<T>(&text, limit).expect_err("over the limit");
    prop_assert_eq!(error.code, ErrorCode::SchemaValidationFailed);
    prop_assert!(error.message.contains("exceeds"), "{}", error.message);
    prop_assert_eq!(&parse_frame::<T>(&text, text.len())?, frame);
    Ok(())
}

proptest! {
    // Each property runs in well under a second natively; `make fuzz` raises the count.
    #![proptest_config(cases(256))]

    #[test]
    fn web_frames_round_trip(message in frontend_message(), event in event_envelope()) {
        round_trips(&message, MAX_WEB_FRAME_BYTES)?;
        // Events are written by the server and read back from storage on replay.
        round_trips(&event, usize::MAX)?;
    }

    #[test]
    fn web_frames_from_any_text_are_parsed_or_refused(text in junk()) {
        parsed_or_refused::<FrontendMessage>(&text, MAX_WEB_FRAME_BYTES)?;
        parsed_or_refused::<EventEnvelope>(&text, usize::MAX)?;
    }

    #[test]
    fn web_frames_mutated_are_parsed_or_refused(
        message in near_frames(frontend_message),
        event in near_frames(event_envelope),
    ) {
        parsed_or_refused::<FrontendMessage>(&message, MAX_WEB_FRAME_BYTES)?;
        parsed_or_refused::<EventEnvelope>(&event, usize::MAX)?;
    }

    #[test]
    fn web_frames_over_the_limit_are_refused(message in frontend_message(), cut in any::<Index>()) {
        refused_over_the_limit(&message, cut)?;
    }

    #[test]
    fn extension_frames_round_trip(message in extension_message(), command in server_to_extension()) {
        round_trips(&message, MAX_EXTENSION_FRAME_BYTES)?;
        round_trips(&command, MAX_EXTENSION_FRAME_BYTES)?;
    }

    #[test]
    fn extension_frames_from_any_text_are_parsed_or_refused(text in junk()) {
        parsed_or_refused::<ExtensionMessage>(&text, MAX_EXTENSION_FRAME_BYTES)?;
        parsed_or_refused::<ServerToExtension>(&text, MAX_EXTENSION_FRAME_BYTES)?;
    }

    #[test]
    fn extension_frames_mutated_are_parsed_or_refused(
        message in near_frames(extension_message),
        command in near_frames(server_to_extension),
    ) {
        parsed_or_refused::<ExtensionMessage>(&message, MAX_EXTENSION_FRAME_BYTES)?;
        parsed_or_refused::<ServerToExtension>(&command, MAX_EXTENSION_FRAME_BYTES)?;
    }

    #[test]
    fn extension_frames_over_the_limit_are_refused(
        message in extension_message(),
        command in server_to_extension(),
        cut in any::<Index>(),
    ) {
        refused_over_the_limit(&message, cut)?;
        refused_over_the_limit(&command, cut)?;
    }

    #[test]
    fn tool_arguments_round_trip(output in agent_output()) {
        // As the run reads them (a parsed JSON value) and as the model sends them (text).
        let value = serde_json::to_value(&output).expect("serializes");
        prop_assert_eq!(&serde_json::from_value::<AgentOutput>(value.clone())?, &output);
        prop_assert_eq!(serde_json::from_str::<AgentOutput>(&value.to_string())?, output);
    }

    #[test]
    fn tool_arguments_from_any_json_are_parsed_or_refused(
        arguments in prop_oneof![
            json_value(),
            agent_output().prop_flat_map(|o| tweaked(serde_json::to_value(o).expect("serializes"), 3)),
        ],
    ) {
        if let Ok(output) = serde_json::from_value::<AgentOutput>(arguments) {
            let again = serde_json::to_value(&output).expect("serializes");
            prop_assert_eq!(serde_json::from_value::<AgentOutput>(again)?, output);
        }
    }
}
