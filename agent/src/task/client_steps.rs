//! Steps an MCP client asks for, rated as the agent's own steps are (`risk::assess`), on the
//! page the task last read: a click on an element labelled "Delete" or "Pay now", OK to a page
//! asking "Delete everything?", typing a password and submitting it. An MCP client is a model
//! reading pages, which a page can talk into anything; what the person must confirm for the
//! agent, they must confirm for it too. Such a step runs only once the person approved it where
//! they were asked about it: the MCP client's form (elicitation, `mimo_agent::mcp::elicit`),
//! which submits it again, confirmed; or, for a client without forms, the web app and the side
//! panel, where the step waits ([`Held`]) for at most [`ANSWER_WITHIN_MS`]. Otherwise it is
//! refused with `CONFIRMATION_REQUIRED`, saying why.

use std::collections::BTreeMap;

use mimo_protocol::{
    ActionCommand, ActionStatus, AgentAction, ConfirmationRequest, ElementFacts, ErrorCode,
    ErrorObject, PageDialog,
};

use crate::actions::ActionRecord;
use crate::risk::{self, PageView, RiskRules};

/// How long a step waits for the person's answer, in their MCP client or in the web app,
/// before it gives up (the step does not run).
pub const ANSWER_WITHIN_MS: u64 = 5 * 60 * 1000;

/// The number a client step's confirmation carries (`ConfirmationRequested`,
/// `ConfirmationAnswered`, the web app's `confirm`): not one of the agent's steps, which count
/// from 1.
pub const CLIENT_STEP: u32 = 0;

/// What the person is asked about `command`, rated on what the task's `records` last read of
/// the page (its element list and what its elements are, and the question the page asks, if
/// any); `None` when it is below `rules`' level for confirming.
pub fn needs_person(
    command: &ActionCommand,
    records: &[ActionRecord],
    rules: &RiskRules,
) -> Option<ConfirmationRequest> {
    let action = as_agent_action(command)?;
    let page = LastPage::read(records);
    let view = PageView {
        elements: page.elements.as_deref().unwrap_or_default(),
        content: "",
        dialog: page.dialog.as_ref(),
        facts: &page.facts,
        named_site: false,
    };
    let assessment = risk::assess(&action, view, rules);
    if assessment.level < rules.confirm_at {
        return None;
    }
    let target = match command {
        ActionCommand::BrowserClick { target, .. } | ActionCommand::BrowserType { target, .. } => {
            target.click_id.and_then(|id| page.names.get(&id).cloned())
        }
        _ => None,
    };
    Some(ConfirmationRequest {
        step: CLIENT_STEP,
        action,
        reason: assessment.reason(),
        risk: assessment.level,
        facts: assessment.facts.into_iter().map(|(_, why)| why).collect(),
        url: page.url,
        title: page.title,
        screenshot_artifact_id: None,
        target: None,
        target_name: target,
        step_by_step: false,
    })
}

/// A step of the developer API or an MCP client on an element of the index carries what the
/// task last read that element to be (`risk::expect_facts`): a page that swaps the form or the
/// link behind it between that read and the step — or while the person is asked about it — gets
/// `TARGET_CHANGED`, not the step. Nothing is expected while the task has read no index.
pub fn expect_last_read(command: &mut ActionCommand, records: &[ActionRecord]) {
    let page = LastPage::read(records);
    if page.elements.is_some() {
        risk::expect_facts(command, &page.facts);
    }
}

/// The `by` of the `ConfirmationAnswered` that ends a held step nobody answered in time.
pub const UNANSWERED_BY: &str = "timeout";

/// How an MCP client's step goes when the person must confirm it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientConsent {
    /// Refused, saying why: the client may put the question to the person in its own form.
    Unasked,
    /// The person approved this very step in their MCP client: what the rating asks is
    /// answered. What the consent gate asks is not — only the web app and the side panel
    /// answer that.
    ConfirmedInClient,
    /// Held for the person's answer in the web app or the side panel ([`Held`]).
    AskInApp,
}

/// A client step waiting for the person's answer in the web app or the side panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub action_id: String,
    pub tab_id: Option<i32>,
    pub command: ActionCommand,
    /// When it stops waiting and is refused.
    pub until: u64,
}

/// The refusal of a held step the person declined (`reason`: what they said, if anything) or
/// left unanswered (`answered` false).
pub fn not_approved(answered: bool, reason: Option<&str>) -> ErrorObject {
    if !answered {
        let minutes = ANSWER_WITHIN_MS / 60_000;
        return ErrorObject::new(
            ErrorCode::Timeout,
            format!(
                "Not done: the person did not answer within {minutes} minutes in Mimo, so the step \
                 did not run. Do not try it again unless they ask you to."
            ),
        );
    }
    let said = reason
        .map(|r| format!(", saying {r:?}"))
        .unwrap_or_default();
    ErrorObject::new(
        ErrorCode::ConfirmationRequired,
        format!(
            "Not done: the person declined this step in Mimo{said}, so it did not run. Do not try \
             it again unless they ask you to."
        ),
    )
}

/// Who approved a step confirmed in an MCP client (the `by` of its `ConfirmationAnswered`,
/// whose step is 0: not one of the agent's).
pub const CONFIRMED_BY: &str = "mcp";

/// How the refusal of a step the rating asks about begins: what tells it from the consent
/// gate's (`mimo_agent::mcp::elicit::asked_why`), which an MCP client's form cannot answer.
pub(crate) const NEEDS_PERSON: &str = "this step needs the person's confirmation: ";

/// The refusal of a step the person must confirm, for `why`.
pub fn refusal(why: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::ConfirmationRequired,
        format!("{NEEDS_PERSON}{why}"),
    )
}

/// The agent's action a command is, for the commands a page can make risky (by index).
fn as_agent_action(command: &ActionCommand) -> Option<AgentAction> {
    Some(match command {
        ActionCommand::BrowserClick { target, .. } => AgentAction::Click {
            index: target.click_id?,
        },
        ActionCommand::BrowserType {
            target,
            text,
            submit,
            ..
        } => AgentAction::Type {
            index: target.click_id?,
            text: text.clone(),
            submit: submit.unwrap_or(false),
        },
        ActionCommand::BrowserUploadFile { target, name, .. } => AgentAction::UploadFile {
            index: target.click_id?,
            file: name.clone(),
        },
        ActionCommand::BrowserDialog { accept, text } => AgentAction::Dialog {
            accept: *accept,
            text: text.clone(),
        },
        _ => return None,
    })
}

/// What the task last read of its page.
#[derive(Default)]
struct LastPage {
    url: String,
    title: String,
    /// The latest element list (an index's or an observation's text form).
    elements: Option<String>,
    /// What each element of the latest list says, by index.
    names: BTreeMap<u32, String>,
    /// What the latest list's elements are, by index.
    facts: BTreeMap<u32, ElementFacts>,
    /// The question the page asks, if the latest action left one open.
    dialog: Option<PageDialog>,
}

impl LastPage {
    fn read(records: &[ActionRecord]) -> Self {
        let mut page = LastPage::default();
        let finished = records
            .iter()
            .rev()
            .filter_map(|r| r.outcome.as_ref().map(|o| (r, o)));
        for (i, (record, outcome)) in finished.enumerate() {
            // A dialog is open while the latest action to end says so.
            if i == 0 {
                page.dialog = outcome.dialog.as_deref().cloned();
            }
            if outcome.status != ActionStatus::Ok {
                continue;
            }
            let index = match (&record.command, outcome.result.as_ref()) {
                (ActionCommand::BrowserDomIndex { .. }, Some(result)) => result,
                (ActionCommand::BrowserObserve { .. }, Some(result)) => {
                    &result["domIndex"]["result"]
                }
                _ => continue,
            };
            let Some(text) = index["text"].as_str() else {
                continue;
            };
            page.elements = Some(text.to_owned());
            page.url = index["url"].as_str().unwrap_or_default().to_owned();
            page.title = index["title"].as_str().unwrap_or_default().to_owned();
            for element in index["elements"].as_array().into_iter().flatten() {
                let Some(id) = element["clickId"].as_u64() else {
                    continue;
                };
                if let Some(text) = element["text"].as_str().filter(|t| !t.is_empty()) {
                    page.names.insert(id as u32, text.to_owned());
                }
                let Some(facts) = element.get("facts") else {
                    continue;
                };
                if let Ok(facts) = serde_json::from_value::<ElementFacts>(facts.clone()) {
                    page.facts.insert(id as u32, facts);
                }
            }
            break;
        }
        page
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A finished action of the task: `name` with `params`, ended with `result` (and `dialog`).
    fn finished(
        name: &str,
        params: serde_json::Value,
        result: serde_json::Value,
        dialog: Option<serde_json::Value>,
    ) -> ActionRecord {
        let mut outcome = json!({ "actionId": "a", "attempt": 1, "taskId": "t", "status": "ok", "result": result, "warnings": [] });
        if let Some(dialog) = dialog {
            outcome["dialog"] = dialog;
        }
        serde_json::from_value(json!({
            "actionId": "a", "taskId": "t", "clientId": "c", "command": { "name": name, "params": params },
            "state": "succeeded", "attempt": 1, "createdAt": 1, "outcome": outcome
        }))
        .unwrap()
    }

    fn command(value: serde_json::Value) -> ActionCommand {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn an_irreversible_click_or_ok_waits_for_the_person_and_the_rest_goes() {
        let rules = RiskRules::default();
        let page = json!({
            "elements": [{ "clickId": 1, "tag": "button", "text": "Delete account", "frameId": 0 }],
            "text": "page https://mail.example/ \"Mail\"\n[1]<button>Delete account</button>\n[2]<button>Save draft</button>",
            "url": "https://mail.example/", "title": "Mail"
        });
        let mut records = vec![finished("browser_dom_index", json!({}), page.clone(), None)];
        let click =
            |id: u32| command(json!({ "name": "browser_click", "params": { "clickId": id } }));
        let asked = needs_person(&click(1), &records, &rules).expect("rated");
        assert!(
            asked.reason.contains("looks irreversible (“delete”)"),
            "{}",
            asked.reason
        );
        // What the web app shows: the step, the page and what it acts on.
        assert_eq!(asked.step, CLIENT_STEP);
        assert_eq!(asked.action, AgentAction::Click { index: 1 });
        assert_eq!(
            (asked.url.as_str(), asked.title.as_str()),
            ("https://mail.example/", "Mail")
        );
        assert_eq!(asked.target_name.as_deref(), Some("Delete account"));
        assert!(asked.risk >= rules.confirm_at);
        assert_eq!(needs_person(&click(2), &records, &rules), None);
        // The same list read by an observation.
        let observed = finished(
            "browser_observe",
            json!({}),
            json!({ "domIndex": { "result": page, "partial": false, "warnings": [] } }),
            None,
        );
        assert!(needs_person(&click(1), std::slice::from_ref(&observed), &rules).is_some());

        // OK to "Delete everything?" while the page asks it; Cancel goes, and so does OK once the
        // question is gone (a later action ended without it).
        let question = json!({ "kind": "confirm", "message": "Delete all 3 messages for ever?", "url": "https://mail.example/" });
        records.push(finished(
            "browser_click",
            json!({ "clickId": 2 }),
            json!({ "dialogOpened": "confirm" }),
            Some(question),
        ));
        let answer = |accept: bool| {
            command(json!({ "name": "browser_dialog", "params": { "accept": accept } }))
        };
        let why = needs_person(&answer(true), &records, &rules)
            .expect("rated")
            .reason;
        assert!(why.contains("answering OK to the page's question"), "{why}");
        assert_eq!(needs_person(&answer(false), &records, &rules), None);
        records.push(finished(
            "browser_dialog",
            json!({ "accept": false }),
            json!({ "accepted": false }),
            None,
        ));
        assert_eq!(needs_person(&answer(true), &records, &rules), None);

        // The deployment's own rules decide: an irreversible word rated low goes.
        let lax = RiskRules::parse(r#"{"levels": {"irreversibleWord": "low"}}"#).unwrap();
        assert_eq!(needs_person(&click(1), &records, &lax), None);
        // Other commands are not rated here.
        assert_eq!(
            needs_person(
                &command(json!({ "name": "browser_back", "params": {} })),
                &records,
                &rules
            ),
            None
        );
    }
}
