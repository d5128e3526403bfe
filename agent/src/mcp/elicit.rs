//! Asking the person in their MCP client (elicitation, revision 2025-06-18 and later). A tool
//! call whose step the person must confirm — one the page makes risky, rated as the agent's
//! steps are — is put to them as a one-field form in the client that called the tool, on the
//! call's own stream; the step runs once, if they approve it there. What only the web app and
//! the side panel may approve (the consent gate: data leaving for a site they did not name, a
//! change on their computer) stays refused whatever the form says.

use mimo_protocol::mcp::{
    CallToolResult, ElicitAction, ElicitRequestParams, ElicitResult, JsonRpcRequest, RequestId,
};
use mimo_protocol::{ErrorCode, ErrorObject};
use serde_json::{json, Value};

use crate::task::client_steps::NEEDS_PERSON;

/// The method of the server's request.
pub const METHOD: &str = "elicitation/create";

pub use crate::task::client_steps::ANSWER_WITHIN_MS;

/// The form's one field: ticked, the step runs.
const APPROVE: &str = "approve";

/// Whether a client on `version` that declared `capabilities` at `initialize` takes a form:
/// `elicitation: {}` (form, before modes existed) or `elicitation: {"form": {}, …}`.
pub fn supported(version: &str, capabilities: &Value) -> bool {
    if version == "2025-03-26" {
        return false;
    }
    match capabilities.get("elicitation") {
        Some(Value::Object(modes)) => modes.is_empty() || modes.contains_key("form"),
        _ => false,
    }
}

/// Why the task refused a step until the person confirms it, when their MCP client's form may
/// answer that: the rating asked (not the consent gate, nor anything else).
pub fn asked_why(refusal: &ErrorObject) -> Option<&str> {
    if refusal.code != ErrorCode::ConfirmationRequired {
        return None;
    }
    refusal.message.strip_prefix(NEEDS_PERSON)
}

/// The request asking the person about a step, `why` it needs them (the task's words).
pub fn request(id: RequestId, version: &str, why: &str) -> JsonRpcRequest {
    let params = ElicitRequestParams {
        // Modes came with 2025-11-25; a 2025-06-18 client reads a form without one.
        mode: (version != "2025-06-18").then(|| "form".to_owned()),
        message: format!(
            "Mimo asks before a step in your browser: {why}.\n\nTick \"Run this step\" and \
             submit to let it run once; anything else and it does not run."
        ),
        requested_schema: json!({
            "type": "object",
            "properties": {
                APPROVE: {
                    "type": "boolean",
                    "title": "Run this step",
                    "description": "Run this one step in your browser, as asked above.",
                    "default": false
                }
            },
            "required": [APPROVE]
        }),
    };
    JsonRpcRequest::new(id, METHOD, &params)
}

/// What the person answered, from the client's response (`None`: it answered with an error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Approved,
    /// Not approved; the words say how, for the tool's answer.
    NotApproved(String),
}

/// Reads the client's `result` to the request: only a submitted form with the box ticked
/// approves.
pub fn decision(result: Option<&Value>) -> Decision {
    let Some(result) = result else {
        return Decision::NotApproved(
            "the client could not ask them (it answered an error)".into(),
        );
    };
    let Ok(answer) = serde_json::from_value::<ElicitResult>(result.clone()) else {
        return Decision::NotApproved(format!("the client's answer is not one: {result}"));
    };
    match answer.action {
        ElicitAction::Accept
            if answer.content.as_ref().and_then(|c| c.get(APPROVE)) == Some(&json!(true)) =>
        {
            Decision::Approved
        }
        ElicitAction::Accept => {
            Decision::NotApproved("they submitted the form without ticking it".into())
        }
        ElicitAction::Decline => Decision::NotApproved("they declined it".into()),
        ElicitAction::Cancel => Decision::NotApproved("they dismissed the question".into()),
    }
}

/// The tool's answer when the person did not approve the step (`how`, from [`decision`]), or
/// did not answer in time.
/// What a call says when the person gave no answer within [`ANSWER_WITHIN_MS`].
pub fn unanswered(why: &str) -> CallToolResult {
    let minutes = ANSWER_WITHIN_MS / 60_000;
    not_approved(&format!("no answer within {minutes} minutes"), why)
}

pub fn not_approved(how: &str, why: &str) -> CallToolResult {
    CallToolResult::error(format!(
        "Not done: the person did not approve this step in your MCP client ({how}), so it did \
         not run. It needed them because {why}. Do not try it again unless they ask you to."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unanswered_step_says_how_long_it_waited() {
        let result = serde_json::to_string(&unanswered("it sends a form")).unwrap();
        assert!(result.contains("no answer within 5 minutes"), "{result}");
        assert!(result.contains("it sends a form"), "{result}");
    }

    #[test]
    fn a_client_takes_a_form_when_it_declared_one() {
        let caps = |v: Value| json!({ "elicitation": v });
        assert!(supported("2025-11-25", &caps(json!({}))));
        assert!(supported(
            "2025-11-25",
            &caps(json!({ "form": {}, "url": {} }))
        ));
        assert!(supported("2025-06-18", &caps(json!({}))));
        assert!(!supported("2025-11-25", &caps(json!({ "url": {} }))));
        assert!(!supported("2025-11-25", &caps(json!(true))));
        assert!(!supported("2025-11-25", &json!({ "sampling": {} })));
        // The revision before elicitation existed.
        assert!(!supported("2025-03-26", &caps(json!({}))));
    }

    #[test]
    fn only_the_ratings_question_is_put_to_the_client() {
        let rated = crate::task::client_steps::refusal("“Delete account” looks irreversible");
        assert_eq!(
            asked_why(&rated),
            Some("“Delete account” looks irreversible")
        );
        // The consent gate's question (data leaving for another site) and other refusals are
        // not the client's to answer.
        let gate = ErrorObject::new(
            ErrorCode::ConfirmationRequired,
            "this action needs the person's confirmation (it sends the form to evil.example)",
        );
        assert_eq!(asked_why(&gate), None);
        let other = ErrorObject::new(ErrorCode::PermissionDenied, rated.message.clone());
        assert_eq!(asked_why(&other), None);
    }

    #[test]
    fn only_a_ticked_box_approves() {
        let answer = |v: Value| decision(Some(&v));
        assert_eq!(
            answer(json!({ "action": "accept", "content": { "approve": true } })),
            Decision::Approved
        );
        for not in [
            json!({ "action": "accept", "content": { "approve": false } }),
            json!({ "action": "accept", "content": { "approve": "true" } }),
            json!({ "action": "accept", "content": { "approved": true } }),
            json!({ "action": "accept" }),
            json!({ "action": "decline", "content": { "approve": true } }),
            json!({ "action": "cancel" }),
            json!({ "action": "ACCEPT", "content": { "approve": true } }),
            json!({ "content": { "approve": true } }),
            json!(true),
        ] {
            assert!(
                matches!(answer(not.clone()), Decision::NotApproved(_)),
                "{not}"
            );
        }
        assert!(matches!(decision(None), Decision::NotApproved(_)));
    }

    #[test]
    fn the_form_is_flat_and_says_why() {
        let request = request(
            RequestId::String("e1".into()),
            "2025-11-25",
            "“Delete account”",
        );
        let value = serde_json::to_value(&request).unwrap();
        assert_eq!(value["method"], METHOD);
        assert_eq!(value["params"]["mode"], "form");
        assert!(value["params"]["message"]
            .as_str()
            .unwrap()
            .contains("“Delete account”"));
        assert_eq!(
            value["params"]["requestedSchema"]["required"],
            json!(["approve"])
        );
        let old = serde_json::to_value(request_for_old()).unwrap();
        assert!(old["params"].get("mode").is_none());
    }

    fn request_for_old() -> JsonRpcRequest {
        request(RequestId::Number(1), "2025-06-18", "x")
    }
}
