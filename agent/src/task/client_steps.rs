//! Steps an MCP client asks for, rated as the agent's own steps are (`risk::assess`), on the
//! page the task last read: a click on an element labelled "Delete" or "Pay now", OK to a page
//! asking "Delete everything?", typing a password and submitting it. An MCP client is a model
//! reading pages, which a page can talk into anything; what the person must confirm for the
//! agent, they must confirm for it too. Such a step is refused with `CONFIRMATION_REQUIRED`,
//! saying why, unless the person approved it where they were asked about it: the MCP client's
//! form (elicitation, `mimo_agent::mcp::elicit`), which submits it again, confirmed.

use std::collections::BTreeMap;

use mimo_protocol::{
    ActionCommand, ActionStatus, AgentAction, ElementFacts, ErrorCode, ErrorObject, PageDialog,
};

use crate::actions::ActionRecord;
use crate::risk::{self, PageView, RiskRules};

/// Why `command` waits for the person, rated on what the task's `records` last read of the page
/// (its element list and what its elements are, and the question the page asks, if any); `None`
/// when it is below `rules`' level for confirming.
pub fn needs_person(
    command: &ActionCommand,
    records: &[ActionRecord],
    rules: &RiskRules,
) -> Option<String> {
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
    (assessment.level >= rules.confirm_at).then(|| assessment.reason())
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
    /// The latest element list (an index's or an observation's text form).
    elements: Option<String>,
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
            for element in index["elements"].as_array().into_iter().flatten() {
                let (Some(id), Some(facts)) = (element["clickId"].as_u64(), element.get("facts"))
                else {
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
        let why = needs_person(&click(1), &records, &rules).expect("rated");
        assert!(why.contains("looks irreversible (“delete”)"), "{why}");
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
        let why = needs_person(&answer(true), &records, &rules).expect("rated");
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
