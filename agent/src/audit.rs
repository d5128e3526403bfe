//! The audit log of a task (seed 002 §7.1), built from its history: the `toolUsed`,
//! `pageObserved`, `confirmationRequested`, `confirmationAnswered` and `modelRetry` events, one
//! record per step. Nothing is kept beside the history, so the log says what the web app saw,
//! and holds no secret the history does not (it holds none).

use mimo_protocol::artifact::{media_type, ArtifactId};
use mimo_protocol::audit::{
    AuditAction, AuditConfirmation, AuditModelRetry, AuditOutcome, AuditPage, AuditRecord,
};
use mimo_protocol::bridge::agent_id;
use mimo_protocol::{AgentAction, BrowserInfo, EventEnvelope, FrontendEvent, ToolPhase};

/// The action's parameters, without its name: `{"click": {"index": 4}}` gives `{"index": 4}`.
fn params_of(action: &AgentAction) -> serde_json::Value {
    match serde_json::to_value(action) {
        Ok(serde_json::Value::Object(map)) => {
            map.into_iter().next().map(|(_, v)| v).unwrap_or_default()
        }
        _ => serde_json::Value::Null,
    }
}

/// The task's audit records, in the order its steps were chosen.
pub fn audit_log(
    task_id: &str,
    client_id: Option<&str>,
    browser: Option<&BrowserInfo>,
    history: &[EventEnvelope],
) -> Vec<AuditRecord> {
    let mut records: Vec<AuditRecord> = Vec::new();
    let mut run = 0;
    // The page the next step is chosen on.
    let mut page: Option<AuditPage> = None;
    // Retries of the model call under way: the step it chooses gets them.
    let mut retries: Vec<AuditModelRetry> = Vec::new();
    // The sub-task under way, whose sub-agent chooses the steps.
    let mut subtask: Option<u32> = None;
    for envelope in history {
        match &envelope.event {
            FrontendEvent::SubtaskStarted { subtask: n, .. } => subtask = Some(*n),
            FrontendEvent::SubtaskFinished { .. } => subtask = None,
            FrontendEvent::ToolUsed {
                step,
                phase: ToolPhase::Start,
                reflection,
                action,
                usage,
                cost_usd,
                risk,
                target,
                target_name,
                skill,
                ..
            } => {
                if *step == 1 {
                    run += 1;
                }
                records.push(AuditRecord {
                    ts: envelope.at,
                    task_id: task_id.to_owned(),
                    run,
                    step: *step,
                    agent_id: agent_id(subtask),
                    action: AuditAction {
                        kind: action.name().to_owned(),
                        target: action.target(),
                        target_name: target_name.clone(),
                        params: params_of(action),
                        risk: *risk,
                        skill: skill.clone(),
                    },
                    reflection: reflection.clone(),
                    // A run's first step is chosen before it has seen a page.
                    before: page.clone().filter(|_| *step != 1).map(|page| AuditPage {
                        target: *target,
                        ..page
                    }),
                    after: None,
                    outcome: None,
                    confirmation: None,
                    client_id: client_id.map(str::to_owned),
                    browser: browser.cloned(),
                    usage: *usage,
                    cost_usd: *cost_usd,
                    model_retries: std::mem::take(&mut retries),
                });
            }
            FrontendEvent::ModelRetry {
                attempt,
                max_attempts,
                reason,
                message,
                delay_ms,
            } => retries.push(AuditModelRetry {
                at: envelope.at,
                attempt: *attempt,
                max_attempts: *max_attempts,
                reason: *reason,
                message: message.clone(),
                delay_ms: *delay_ms,
            }),
            // The turn ended without choosing a step (a reply, a failure): its retries chose
            // nothing.
            FrontendEvent::StructuredOutput { .. } => retries.clear(),
            FrontendEvent::ToolUsed {
                step,
                phase: ToolPhase::End,
                result: Some(result),
                ..
            } => {
                if let Some(record) = current(&mut records, run, *step) {
                    record.outcome = Some(AuditOutcome {
                        ok: result.ok,
                        partial: result.partial,
                        extracted: result.result.clone(),
                        errors: result.error.iter().cloned().collect(),
                        warnings: result.warnings.clone(),
                        at: envelope.at,
                    });
                }
            }
            FrontendEvent::PageObserved {
                step,
                url,
                title,
                screenshot_artifact_id,
                ..
            } => {
                let observed = AuditPage {
                    url: url.clone(),
                    title: title.clone(),
                    screenshot_artifact_id: screenshot_artifact_id.clone(),
                    target: None,
                };
                if let Some(record) = current(&mut records, run, *step) {
                    record.after = Some(observed.clone());
                }
                page = Some(observed);
            }
            FrontendEvent::ConfirmationRequested(request) => {
                if let Some(record) = current(&mut records, run, request.step) {
                    record.action.risk = Some(request.risk);
                    record.confirmation = Some(AuditConfirmation {
                        required: true,
                        reason: request.reason.clone(),
                        facts: request.facts.clone(),
                        step_by_step: request.step_by_step,
                        asked_at: envelope.at,
                        approved: None,
                        by: None,
                        answered_at: None,
                        declined_because: None,
                    });
                }
            }
            FrontendEvent::ConfirmationAnswered {
                step,
                approved,
                by,
                reason,
            } => {
                let asked = current(&mut records, run, *step).and_then(|r| r.confirmation.as_mut());
                if let Some(confirmation) = asked {
                    confirmation.approved = Some(*approved);
                    confirmation.by = Some(by.clone());
                    confirmation.answered_at = Some(envelope.at);
                    confirmation.declined_because = reason.clone();
                }
            }
            _ => {}
        }
    }
    records
}

/// The record of step `step` of run `run`.
fn current(records: &mut [AuditRecord], run: u32, step: u32) -> Option<&mut AuditRecord> {
    records
        .iter_mut()
        .rev()
        .find(|r| r.run == run && r.step == step)
}

/// The screenshots the records refer to (pages before and after), each once, in the order
/// they are first referred to.
pub fn screenshots(records: &[AuditRecord]) -> Vec<&str> {
    let mut ids: Vec<&str> = Vec::new();
    let pages = records
        .iter()
        .flat_map(|r| [r.before.as_ref(), r.after.as_ref()]);
    for id in pages
        .flatten()
        .filter_map(|p| p.screenshot_artifact_id.as_deref())
    {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// The file of screenshot `artifact_id` in the evidence archive: `screenshots/<id>.<ext>`, the
/// extension from its content type when it is known. `None` for a string that is not an
/// artifact id of task `task_id`: the history got it from the extension, and a file name in
/// an archive must not be able to climb out of its folder when unpacked.
pub fn screenshot_file(
    task_id: &str,
    artifact_id: &str,
    content_type: Option<&str>,
) -> Option<String> {
    let id = ArtifactId::parse(artifact_id).ok()?;
    if id.task_id_str() != task_id {
        return None;
    }
    let extension = match content_type.and_then(media_type) {
        Some(t) if t.eq_ignore_ascii_case("image/jpeg") => ".jpg",
        Some(t) if t.eq_ignore_ascii_case("image/png") => ".png",
        Some(t) if t.eq_ignore_ascii_case("image/webp") => ".webp",
        _ => "",
    };
    Some(format!("screenshots/{id}{extension}"))
}

/// The evidence archive's `README.txt`: what it holds and how to check it.
pub fn readme(task_id: &str, title: Option<&str>, steps: usize) -> String {
    let title = title.map(|t| format!(" (“{t}”)")).unwrap_or_default();
    format!(
        "Evidence of Mimo task {task_id}{title}: {steps} steps.

audit.jsonl   The audit log: one JSON object per step, in order. When it was chosen (ts, ms
              since the Unix epoch); the run and step; the action (type, target element,
              parameters, risk); the model's reflection; the page before and after (url, title,
              screenshotArtifactId; on before, the target's box in that screenshot); the outcome;
              the confirmation (asked, approved, by whom, when); the browser (clientId); the
              retries of the model call that chose it (modelRetries: when, attempt, reason,
              delay).
task.json     The whole run (format mimo-task-export/1): the task, every event of its history
              in order, and every browser action with its outcome.
screenshots/  The pages' screenshots, named by their artifact id:
              screenshots/<screenshotArtifactId>.jpg (or .png, .webp).
SHA256SUMS    The SHA-256 of every file here. Check them with: sha256sum -c SHA256SUMS
MISSING.txt   Present only when screenshots were no longer stored when this was exported.

No secret's value is in this archive: a step that typed a secret names it by its placeholder
({{{{secret:name}}}}), and the task's history never holds a value.
"
    )
}

/// The records as JSON Lines.
pub fn to_jsonl(records: &[AuditRecord]) -> String {
    let mut out = String::new();
    for record in records {
        out.push_str(&serde_json::to_string(record).unwrap_or_default());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mimo_protocol::action::BoundingBox;
    use mimo_protocol::{
        ConfirmationRequest, ErrorCode, ErrorObject, LlmErrorKind, Reflection, RiskLevel,
        TokenUsage, ToolResult,
    };
    use serde_json::json;

    fn chromium() -> BrowserInfo {
        BrowserInfo {
            name: "Chromium".into(),
            version: "156".into(),
            user_agent: "Mozilla/5.0".into(),
        }
    }

    fn at(ms: u64, event: FrontendEvent) -> EventEnvelope {
        EventEnvelope {
            seq: Some(ms),
            task_id: "t1".into(),
            at: ms,
            event,
        }
    }

    fn start(step: u32, action: AgentAction, risk: RiskLevel) -> FrontendEvent {
        let target = action.target().map(target_box);
        FrontendEvent::ToolUsed {
            step,
            tool_call_id: format!("call_{step}"),
            phase: ToolPhase::Start,
            reflection: Some(Reflection {
                evaluation_previous_goal: "ok".into(),
                memory: format!("memory {step}"),
                next_goal: "next".into(),
            }),
            action,
            result: None,
            summary: None,
            usage: Some(TokenUsage {
                input_tokens: 100,
                output_tokens: 10,
            }),
            cost_usd: Some(0.001),
            risk: Some(risk),
            target,
            // The element's name when the step acts on one.
            target_name: target.map(|_| "Place order".into()),
            // The second step follows a skill.
            skill: (step == 2).then(|| "shop-checkout".into()),
        }
    }

    fn end(step: u32, action: AgentAction, result: ToolResult) -> FrontendEvent {
        FrontendEvent::ToolUsed {
            step,
            tool_call_id: format!("call_{step}"),
            phase: ToolPhase::End,
            reflection: None,
            action,
            result: Some(result),
            summary: Some("done".into()),
            usage: None,
            cost_usd: None,
            risk: None,
            target: None,
            target_name: None,
            skill: None,
        }
    }

    /// Where the tests' element `index` stands in its page's screenshot.
    fn target_box(index: u32) -> BoundingBox {
        BoundingBox {
            x: f64::from(index) * 10.0,
            y: 40.0,
            w: 80.0,
            h: 20.0,
        }
    }

    fn page(step: u32, url: &str, shot: &str) -> FrontendEvent {
        FrontendEvent::PageObserved {
            step,
            url: url.into(),
            title: format!("Page {step}"),
            screenshot_artifact_id: Some(shot.into()),
            elements: 3,
            missing: vec![],
            warnings: vec![],
            dialog: None,
            tabs: vec![],
        }
    }

    fn result(ok: bool, error: Option<ErrorCode>) -> ToolResult {
        ToolResult {
            tool_call_id: "c".into(),
            name: "click".into(),
            ok,
            result: ok.then(|| json!({ "clicked": true })),
            model_result: None,
            error: error.map(|code| ErrorObject::new(code, "declined")),
            warnings: vec![],
            partial: false,
        }
    }

    #[test]
    fn each_step_is_one_record_with_its_pages_outcome_and_confirmation() {
        let navigate = AgentAction::Navigate {
            url: "https://shop.test/".into(),
        };
        let order = AgentAction::Click { index: 7 };
        let history = vec![
            at(1, start(1, navigate.clone(), RiskLevel::Low)),
            at(2, end(1, navigate, result(true, None))),
            at(3, page(1, "https://shop.test/", "shot_1")),
            at(4, start(2, order.clone(), RiskLevel::High)),
            at(
                5,
                FrontendEvent::ConfirmationRequested(ConfirmationRequest {
                    step: 2,
                    action: order.clone(),
                    reason: "clicking [7] looks irreversible (“place order”)".into(),
                    risk: RiskLevel::High,
                    facts: vec!["clicking [7] looks irreversible (“place order”)".into()],
                    url: "https://shop.test/".into(),
                    title: "Shop".into(),
                    screenshot_artifact_id: Some("shot_1".into()),
                    target: None,
                    target_name: None,
                    step_by_step: false,
                }),
            ),
            at(
                6,
                FrontendEvent::ConfirmationAnswered {
                    step: 2,
                    approved: true,
                    by: "web".into(),
                    reason: None,
                },
            ),
            at(7, end(2, order, result(true, None))),
            at(8, page(2, "https://shop.test/thanks", "shot_2")),
        ];
        let records = audit_log("t1", Some("client-1"), Some(&chromium()), &history);
        assert_eq!(records.len(), 2);
        let first = &records[0];
        assert_eq!(
            (first.run, first.step, first.action.kind.as_str()),
            (1, 1, "navigate")
        );
        assert_eq!(first.action.params, json!({ "url": "https://shop.test/" }));
        assert_eq!(first.before, None);
        assert_eq!(
            first
                .after
                .as_ref()
                .unwrap()
                .screenshot_artifact_id
                .as_deref(),
            Some("shot_1")
        );
        let second = &records[1];
        assert_eq!(second.action.target, Some(7));
        assert_eq!(second.action.target_name.as_deref(), Some("Place order"));
        assert_eq!(first.action.target_name, None);
        assert_eq!(second.action.risk, Some(RiskLevel::High));
        let before = second.before.as_ref().unwrap();
        assert_eq!(before.url, "https://shop.test/");
        assert_eq!(
            before.target,
            Some(target_box(7)),
            "the clicked element's box"
        );
        assert_eq!(second.after.as_ref().unwrap().target, None);
        assert_eq!(
            (
                first.action.skill.as_deref(),
                second.action.skill.as_deref()
            ),
            (None, Some("shop-checkout"))
        );
        assert_eq!(
            second.after.as_ref().unwrap().url,
            "https://shop.test/thanks"
        );
        let confirmation = second.confirmation.as_ref().unwrap();
        assert_eq!(
            (
                confirmation.approved,
                confirmation.by.as_deref(),
                confirmation.asked_at,
                confirmation.answered_at
            ),
            (Some(true), Some("web"), 5, Some(6))
        );
        let outcome = second.outcome.as_ref().unwrap();
        assert!(outcome.ok && outcome.errors.is_empty());
        assert_eq!(outcome.extracted, Some(json!({ "clicked": true })));
        assert_eq!(second.client_id.as_deref(), Some("client-1"));
        assert_eq!(
            second.browser,
            Some(chromium()),
            "the request's origin: its browser"
        );
        assert_eq!(second.reflection.as_ref().unwrap().memory, "memory 2");

        let jsonl = to_jsonl(&records);
        let lines: Vec<serde_json::Value> = jsonl
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1]["action"]["type"], "click");
        assert_eq!(lines[1]["action"]["skill"], "shop-checkout");
        assert_eq!(lines[1]["confirmation"]["approved"], true);
        assert_eq!(lines[1]["before"]["screenshotArtifactId"], "shot_1");
        assert_eq!(lines[1]["after"]["screenshotArtifactId"], "shot_2");
        assert_eq!(lines[1]["before"]["target"]["x"], 70.0);

        // The screenshots the log refers to, each once: shot_1 is step 1's after and step 2's
        // before.
        assert_eq!(screenshots(&records), ["shot_1", "shot_2"]);
    }

    #[test]
    fn a_retried_model_call_is_kept_with_the_step_it_chose() {
        let retry = |attempt: u32, reason: LlmErrorKind, delay_ms: u64| FrontendEvent::ModelRetry {
            attempt,
            max_attempts: 3,
            reason,
            message: "slow down".into(),
            delay_ms,
        };
        let navigate = AgentAction::Navigate {
            url: "https://shop.test/".into(),
        };
        let click = AgentAction::Click { index: 4 };
        let history = [
            at(1, retry(1, LlmErrorKind::RateLimited, 4_000)),
            at(5, retry(2, LlmErrorKind::Overloaded, 2_000)),
            at(8, start(1, navigate.clone(), RiskLevel::Low)),
            at(9, end(1, navigate, result(true, None))),
            at(10, start(2, click.clone(), RiskLevel::Low)),
            // A reply's retries, then a run that failed after one: they chose no step.
            at(20, retry(1, LlmErrorKind::Network, 1_000)),
            at(
                21,
                FrontendEvent::StructuredOutput {
                    status: mimo_protocol::OutputStatus::Error,
                    output: None,
                    error: None,
                    warnings: Vec::new(),
                },
            ),
            at(30, start(1, click, RiskLevel::Low)),
        ];
        let records = audit_log("t1", None, None, &history);
        let kept: Vec<(u32, LlmErrorKind, u64, u64)> = records[0]
            .model_retries
            .iter()
            .map(|r| (r.attempt, r.reason, r.delay_ms, r.at))
            .collect();
        assert_eq!(
            kept,
            [
                (1, LlmErrorKind::RateLimited, 4_000, 1),
                (2, LlmErrorKind::Overloaded, 2_000, 5)
            ]
        );
        assert!(records[1].model_retries.is_empty());
        assert!(records[2].model_retries.is_empty());
        let line = serde_json::to_value(&records[0]).unwrap();
        assert_eq!(line["modelRetries"][0]["reason"], "rate_limited");
        assert_eq!(line["modelRetries"][0]["delayMs"], 4_000);
        assert!(serde_json::to_value(&records[1])
            .unwrap()
            .get("modelRetries")
            .is_none());
    }

    #[test]
    fn a_sub_agents_steps_are_attributed_to_it_and_the_main_agents_to_main() {
        let read = AgentAction::FileRead {
            path: "notes.md".into(),
            offset: None,
            limit: None,
        };
        let history = vec![
            at(
                1,
                FrontendEvent::SubtaskStarted {
                    subtask: 2,
                    tool_call_id: "call_b".into(),
                    goal: "read the notes".into(),
                    max_steps: 5,
                },
            ),
            at(2, start(1, read.clone(), RiskLevel::Low)),
            at(
                3,
                FrontendEvent::SubtaskFinished {
                    subtask: 2,
                    tool_call_id: "call_b".into(),
                    result: mimo_protocol::agent::BrowserTaskResult {
                        status: mimo_protocol::agent::SubtaskStatus::Succeeded,
                        summary: "read".into(),
                        data: None,
                        steps: 1,
                        url: None,
                        error: None,
                    },
                },
            ),
            at(4, start(1, read, RiskLevel::Low)),
        ];
        let records = audit_log("t", None, None, &history);
        let agents: Vec<(&str, &str, &serde_json::Value)> = records
            .iter()
            .map(|r| {
                (
                    r.agent_id.as_str(),
                    r.action.kind.as_str(),
                    &r.action.params,
                )
            })
            .collect();
        let params = json!({ "path": "notes.md" });
        assert_eq!(
            agents,
            [
                ("subtask-2", "file_read", &params),
                ("main", "file_read", &params)
            ]
        );
    }

    #[test]
    fn screenshots_are_filed_by_artifact_id_and_only_real_ids_of_the_task_are() {
        let task = "5f0c2d8e-6a4b-4c1e-9d3f-2b7a8c9e0f11";
        let id = format!("{task}.0123456789abcdef0123456789abcdef");
        assert_eq!(
            screenshot_file(task, &id, Some("image/jpeg")).unwrap(),
            format!("screenshots/{id}.jpg")
        );
        assert_eq!(
            screenshot_file(task, &id, Some("IMAGE/PNG; q=1")).unwrap(),
            format!("screenshots/{id}.png")
        );
        // Not stored any more: no content type, no extension.
        assert_eq!(
            screenshot_file(task, &id, None).unwrap(),
            format!("screenshots/{id}")
        );
        assert_eq!(screenshot_file(task, "../../etc/passwd", None), None);
        let other = "0f0c2d8e-6a4b-4c1e-9d3f-2b7a8c9e0f11.0123456789abcdef0123456789abcdef";
        assert_eq!(screenshot_file(task, other, Some("image/jpeg")), None);
    }

    #[test]
    fn a_declined_step_and_a_second_run_are_told_apart() {
        let order = AgentAction::Click { index: 7 };
        let history = vec![
            at(1, start(1, order.clone(), RiskLevel::High)),
            at(
                2,
                FrontendEvent::ConfirmationRequested(ConfirmationRequest {
                    step: 1,
                    action: order.clone(),
                    reason: "r".into(),
                    risk: RiskLevel::High,
                    facts: vec![],
                    url: String::new(),
                    title: String::new(),
                    screenshot_artifact_id: None,
                    target: None,
                    target_name: None,
                    step_by_step: true,
                }),
            ),
            at(
                3,
                FrontendEvent::ConfirmationAnswered {
                    step: 1,
                    approved: false,
                    by: "extension".into(),
                    reason: Some("not that one".into()),
                },
            ),
            at(
                4,
                end(
                    1,
                    order.clone(),
                    result(false, Some(ErrorCode::ConfirmationRequired)),
                ),
            ),
            // A new run numbers its steps from 1 again.
            at(10, start(1, order, RiskLevel::Low)),
        ];
        let records = audit_log("t1", None, None, &history);
        assert_eq!(
            records.iter().map(|r| (r.run, r.step)).collect::<Vec<_>>(),
            [(1, 1), (2, 1)]
        );
        let declined = records[0].confirmation.as_ref().unwrap();
        assert_eq!(declined.approved, Some(false));
        assert_eq!(declined.by.as_deref(), Some("extension"));
        assert_eq!(declined.declined_because.as_deref(), Some("not that one"));
        assert!(declined.step_by_step);
        let declined = &records[0];
        assert_eq!(
            declined.outcome.as_ref().unwrap().errors[0].code,
            ErrorCode::ConfirmationRequired
        );
        assert!(records[1].confirmation.is_none() && records[1].outcome.is_none());
    }
}
