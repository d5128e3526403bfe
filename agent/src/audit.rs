//! The audit log of a task (seed 002 §7.1), built from its history: the `toolUsed`,
//! `pageObserved`, `confirmationRequested` and `confirmationAnswered` events, one record per
//! step. Nothing is kept beside the history, so the log says what the web app saw, and holds no
//! secret the history does not (it holds none).

use mimo_protocol::audit::{AuditAction, AuditConfirmation, AuditOutcome, AuditPage, AuditRecord};
use mimo_protocol::{AgentAction, EventEnvelope, FrontendEvent, ToolPhase};

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
    history: &[EventEnvelope],
) -> Vec<AuditRecord> {
    let mut records: Vec<AuditRecord> = Vec::new();
    let mut run = 0;
    // The page the next step is chosen on.
    let mut page: Option<AuditPage> = None;
    for envelope in history {
        match &envelope.event {
            FrontendEvent::ToolUsed {
                step,
                phase: ToolPhase::Start,
                reflection,
                action,
                usage,
                cost_usd,
                risk,
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
                    action: AuditAction {
                        kind: action.name().to_owned(),
                        target: action.target(),
                        params: params_of(action),
                        risk: *risk,
                        skill: skill.clone(),
                    },
                    reflection: reflection.clone(),
                    before: if *step == 1 { None } else { page.clone() },
                    after: None,
                    outcome: None,
                    confirmation: None,
                    client_id: client_id.map(str::to_owned),
                    usage: *usage,
                    cost_usd: *cost_usd,
                });
            }
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
                };
                if let Some(record) = current(&mut records, run, *step) {
                    record.after = Some(observed.clone());
                }
                page = Some(observed);
            }
            FrontendEvent::ConfirmationRequested {
                step,
                reason,
                risk,
                facts,
                ..
            } => {
                if let Some(record) = current(&mut records, run, *step) {
                    record.action.risk = Some(*risk);
                    record.confirmation = Some(AuditConfirmation {
                        required: true,
                        reason: reason.clone(),
                        facts: facts.clone(),
                        asked_at: envelope.at,
                        approved: None,
                        by: None,
                        answered_at: None,
                    });
                }
            }
            FrontendEvent::ConfirmationAnswered { step, approved, by } => {
                let asked = current(&mut records, run, *step).and_then(|r| r.confirmation.as_mut());
                if let Some(confirmation) = asked {
                    confirmation.approved = Some(*approved);
                    confirmation.by = Some(by.clone());
                    confirmation.answered_at = Some(envelope.at);
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
    use mimo_protocol::{ErrorCode, ErrorObject, Reflection, RiskLevel, TokenUsage, ToolResult};
    use serde_json::json;

    fn at(ms: u64, event: FrontendEvent) -> EventEnvelope {
        EventEnvelope {
            seq: Some(ms),
            task_id: "t1".into(),
            at: ms,
            event,
        }
    }

    fn start(step: u32, action: AgentAction, risk: RiskLevel) -> FrontendEvent {
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
            skill: None,
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
                FrontendEvent::ConfirmationRequested {
                    step: 2,
                    action: order.clone(),
                    reason: "clicking [7] looks irreversible (“place order”)".into(),
                    risk: RiskLevel::High,
                    facts: vec!["clicking [7] looks irreversible (“place order”)".into()],
                    screenshot_artifact_id: Some("shot_1".into()),
                    target: None,
                },
            ),
            at(
                6,
                FrontendEvent::ConfirmationAnswered {
                    step: 2,
                    approved: true,
                    by: "web".into(),
                },
            ),
            at(7, end(2, order, result(true, None))),
            at(8, page(2, "https://shop.test/thanks", "shot_2")),
        ];
        let records = audit_log("t1", Some("client-1"), &history);
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
        assert_eq!(second.action.risk, Some(RiskLevel::High));
        assert_eq!(
            (
                first.action.skill.as_deref(),
                second.action.skill.as_deref()
            ),
            (None, Some("shop-checkout"))
        );
        assert_eq!(second.before.as_ref().unwrap().url, "https://shop.test/");
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
    }

    #[test]
    fn a_declined_step_and_a_second_run_are_told_apart() {
        let order = AgentAction::Click { index: 7 };
        let history = vec![
            at(1, start(1, order.clone(), RiskLevel::High)),
            at(
                2,
                FrontendEvent::ConfirmationRequested {
                    step: 1,
                    action: order.clone(),
                    reason: "r".into(),
                    risk: RiskLevel::High,
                    facts: vec![],
                    screenshot_artifact_id: None,
                    target: None,
                },
            ),
            at(
                3,
                FrontendEvent::ConfirmationAnswered {
                    step: 1,
                    approved: false,
                    by: "web".into(),
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
        let records = audit_log("t1", None, &history);
        assert_eq!(
            records.iter().map(|r| (r.run, r.step)).collect::<Vec<_>>(),
            [(1, 1), (2, 1)]
        );
        let declined = &records[0];
        assert_eq!(
            declined.confirmation.as_ref().unwrap().approved,
            Some(false)
        );
        assert_eq!(
            declined.outcome.as_ref().unwrap().errors[0].code,
            ErrorCode::ConfirmationRequired
        );
        assert!(records[1].confirmation.is_none() && records[1].outcome.is_none());
    }
}
