//! The script API (seed 002 §8): a task driven over plain requests, in the seed's shapes
//! (`mimo_protocol::script`). The script is the task's executor, a polling client named
//! `script-{taskId}` (the extension's polling transport, `POST /api/extension/poll`): the actions
//! the agent decides are kept for it until it reports past them, its reports are the socket's
//! `action_ack` and `action_result` frames, and so a repeated `next` gives the same action and a
//! repeated `report` is recorded once.

use mimo_agent::actions::{ActionRecord, ActionState};
use mimo_durable::{
    error_response, now_ms, query_param, ClientObject, ConfirmBody, Confirmer, Failure,
    RegistryClient, Reply, TaskClient,
};
use mimo_protocol::extension::{PollRequest, MAX_POLL_WAIT_MS};
use mimo_protocol::script::{
    self, ScriptAction, ScriptCancel, ScriptConfirm, ScriptNext, ScriptReport, ScriptStart,
};
use mimo_protocol::{
    BrowserInfo, ErrorCode, ErrorObject, ExtensionMessage, ServerToExtension, TaskControl,
};
use serde::de::DeserializeOwned;
use serde_json::json;
use worker::{Env, Method, Request, Response, Result};

/// The request's JSON body, or `SCHEMA_VALIDATION_FAILED`.
pub(crate) async fn body<T: DeserializeOwned>(
    req: &mut Request,
) -> std::result::Result<T, ErrorObject> {
    let text = req.text().await.unwrap_or_default();
    serde_json::from_str(&text).map_err(|e| {
        ErrorObject::new(
            ErrorCode::SchemaValidationFailed,
            format!("malformed body: {e}"),
        )
    })
}

/// The response to a script's request: the value as JSON, or the failure's error.
fn respond<T: serde::Serialize>(result: Reply<T>) -> Result<Response> {
    match result {
        Ok(value) => Response::from_json(&value),
        Err(failure) => failure.respond(),
    }
}

/// `/api/agent/*` with the deployment token.
pub async fn route(mut req: Request, env: &Env, path: &str) -> Result<Response> {
    let task_id_ok = |id: &str| uuid::Uuid::parse_str(id).is_ok();
    let unknown = || {
        error_response(&ErrorObject::new(
            ErrorCode::SchemaValidationFailed,
            "taskId must be a task id from POST /api/agent/start",
        ))
    };
    match (req.method(), path) {
        (Method::Post, "/api/agent/start") => match body::<ScriptStart>(&mut req).await {
            Ok(start) if start.goal.trim().is_empty() => error_response(&ErrorObject::new(
                ErrorCode::SchemaValidationFailed,
                "goal must say what the task is to do",
            )),
            Ok(start) => respond(start_task(env, start).await),
            Err(error) => error_response(&error),
        },
        (Method::Post, "/api/agent/next") => match body::<ScriptNext>(&mut req).await {
            Ok(next) if task_id_ok(&next.task_id) => respond(next_action(env, next).await),
            Ok(_) => unknown(),
            Err(error) => error_response(&error),
        },
        (Method::Post, "/api/agent/report") => match body::<ScriptReport>(&mut req).await {
            Ok(report) if task_id_ok(&report.task_id) => respond(report_action(env, report).await),
            Ok(_) => unknown(),
            Err(error) => error_response(&error),
        },
        (Method::Post, "/api/agent/confirm") => match body::<ScriptConfirm>(&mut req).await {
            Ok(confirm) if task_id_ok(&confirm.task_id) => {
                let Some(step) = script::confirmation_step(&confirm.action_id) else {
                    return error_response(&ErrorObject::new(
                        ErrorCode::NotFound,
                        format!(
                            "{:?} is not a step waiting for confirmation (those are `step-N`, from next or status)",
                            confirm.action_id
                        ),
                    ));
                };
                let answer_body = ConfirmBody {
                    step,
                    approve: confirm.approved,
                    reason: confirm.reason,
                    by: Confirmer::Api,
                };
                keep_present(env, &confirm.task_id).await?;
                let task = TaskClient::new(env, &confirm.task_id)?;
                respond(
                    task.confirm(&answer_body)
                        .await
                        .map(|()| json!({ "ok": true })),
                )
            }
            Ok(_) => unknown(),
            Err(error) => error_response(&error),
        },
        (Method::Post, "/api/agent/cancel") => match body::<ScriptCancel>(&mut req).await {
            Ok(cancel) if task_id_ok(&cancel.task_id) => {
                let task = TaskClient::new(env, &cancel.task_id)?;
                respond(
                    task.control(TaskControl::Stop)
                        .await
                        .map(|()| json!({ "ok": true })),
                )
            }
            Ok(_) => unknown(),
            Err(error) => error_response(&error),
        },
        (Method::Get, "/api/agent/status") => {
            let task_id = query_param(&req.url()?, "taskId").unwrap_or_default();
            if !task_id_ok(&task_id) {
                return unknown();
            }
            keep_present(env, &task_id).await?;
            respond(TaskClient::new(env, &task_id)?.script_status().await)
        }
        _ => error_response(&ErrorObject::new(
            ErrorCode::NotFound,
            format!("no route for {} {path}", req.method()),
        )),
    }
}

/// Any call of a script keeps it present to its task (as an extension's poll does): a script
/// that waits on a person or polls `status` is not taken for gone. Only for a task a script
/// carries out (the API also answers for tasks run in a browser); a failure here is logged,
/// never the call's.
async fn keep_present(env: &Env, task_id: &str) -> Result<()> {
    let registry = RegistryClient::new(env)?;
    match registry.binding_of(task_id).await {
        Ok(client_id) if script::is_script_client(&client_id) => {
            let polled = match ClientObject::named(env, &client_id) {
                Ok(object) => object.poll_frames(&client_id, &poll(0, vec![], 0)).await,
                Err(failure) => Err(failure),
            };
            if let Err(failure) = polled {
                worker::console_error!(
                    "keeping the script of task {task_id} present failed: {failure}"
                );
            }
        }
        _ => {}
    }
    Ok(())
}

/// A new task with the script as its executor, started on `goal`.
async fn start_task(env: &Env, start: ScriptStart) -> Reply<serde_json::Value> {
    // Bounds out of range are refused before a task exists (the task checks them again).
    mimo_agent::script::bounds(
        start.take_timeout_ms,
        start.report_timeout_ms,
        Default::default(),
    )
    .map_err(Failure::Refused)?;
    let task_id = uuid::Uuid::new_v4().to_string();
    let task = TaskClient::new(env, &task_id)?;
    task.init(&task_id).await?;
    let client_id = script::script_client_id(&task_id);
    // The script's client says hello, as an extension does, so that the task can bind to it.
    let hello = ExtensionMessage::Hello {
        client_id: client_id.clone(),
        name: "Script (API)".into(),
        browser: BrowserInfo {
            name: "script".into(),
            version: String::new(),
            user_agent: String::new(),
        },
        extension_version: String::new(),
    };
    let polled = ClientObject::named(env, &client_id)?
        .poll_frames(&client_id, &poll(0, vec![hello], 0))
        .await?;
    if let Some(ServerToExtension::Error { error }) = polled.replies.into_iter().next() {
        return Err(Failure::Refused(error));
    }
    task.script_start(&start, &client_id).await?;
    // The first action, when it is ready (or comes within the wait asked for): the script
    // needs no `next` to begin.
    let first = ScriptNext {
        task_id: task_id.clone(),
        since_action_id: None,
        wait_ms: start.wait_ms,
    };
    let next = next_action(env, first).await?;
    Ok(json!({ "taskId": task_id, "status": next["status"], "nextAction": next["action"] }))
}

fn poll(ack: u64, frames: Vec<ExtensionMessage>, wait_ms: u32) -> PollRequest {
    PollRequest {
        ack,
        frames,
        wait_ms,
    }
}

/// The action the task has handed to the script and not heard the end of (one at a time per
/// task), unless the script reported it already (`since`); else, when a
/// step waits for confirmation, that step; else none — waiting up to `wait_ms` for one. Taken
/// from the task's own records, so concurrent and repeated calls give the same action.
async fn next_action(env: &Env, next: ScriptNext) -> Reply<serde_json::Value> {
    let task = TaskClient::new(env, &next.task_id)?;
    let client_id = script::script_client_id(&next.task_id);
    let registry = ClientObject::named(env, &client_id)?;
    let deadline = now_ms() + u64::from(next.wait_ms.min(MAX_POLL_WAIT_MS));
    loop {
        // Read (and so forget) what the server kept for the script: a script needs only the
        // task's records, and this poll keeps it present.
        let kept = registry
            .poll_frames(&client_id, &poll(0, vec![], 0))
            .await?;
        let seen = kept.frames.last().map_or(0, |f| f.seq);
        // `since` is the last action the script reported: the attempt it reported is not
        // handed out again, a retry of it (a new attempt) is.
        let holds = |r: &ActionRecord| {
            Some(&r.action_id) == next.since_action_id.as_ref()
                && r.outcome.as_ref().is_some_and(|o| o.attempt == r.attempt)
        };
        let in_flight = task.actions().await?.into_iter().find(|r| {
            matches!(
                r.state,
                ActionState::Sent | ActionState::Acked | ActionState::Checking
            ) && !holds(r)
        });
        if let Some(record) = in_flight {
            let action = record.dispatch(None);
            // Received: the task hears the ack (again, for a repeated `next`: harmless).
            let received = ExtensionMessage::ActionAck {
                action_id: action.action_id.clone(),
                attempt: action.attempt,
                task_id: action.task_id.clone(),
            };
            registry
                .poll_frames(&client_id, &poll(seen, vec![received], 0))
                .await?;
            let risk = mimo_agent::script::action_risk(&action);
            let shaped: ScriptAction = script::script_action(&action, risk, "running");
            let status = task.script_status().await?;
            return Ok(json!({ "action": shaped, "status": status.status }));
        }
        // Nothing to carry out: a step waiting for the person, or a task that ended, is the
        // answer at once; else wait.
        let status = task.script_status().await?;
        let settled = matches!(status.status.as_str(), "SUCCEEDED" | "FAILED" | "CANCELED");
        let left = deadline.saturating_sub(now_ms());
        if status.pending_confirmation.is_some() || settled || left == 0 {
            return Ok(json!({ "action": status.pending_confirmation, "status": status.status }));
        }
        // Held until the task sends the script something (an action), or the time is up.
        let wait = left.try_into().unwrap_or(MAX_POLL_WAIT_MS);
        registry
            .poll_frames(&client_id, &poll(seen, vec![], wait))
            .await?;
    }
}

/// The script's observation, as the action's result (recorded once however often it comes).
async fn report_action(env: &Env, report: ScriptReport) -> Reply<serde_json::Value> {
    let task = TaskClient::new(env, &report.task_id)?;
    let Some(record) = task
        .actions()
        .await?
        .into_iter()
        .find(|r| r.action_id == report.action_id)
    else {
        return Err(Failure::Refused(ErrorObject::new(
            ErrorCode::NotFound,
            format!(
                "task {} has no action {:?}",
                report.task_id, report.action_id
            ),
        )));
    };
    let outcome = report.observation.outcome(&record.dispatch(None));
    let result = ExtensionMessage::ActionResult { outcome };
    let client_id = script::script_client_id(&report.task_id);
    let polled = ClientObject::named(env, &client_id)?
        .poll_frames(&client_id, &poll(0, vec![result], 0))
        .await?;
    for reply in polled.replies {
        match reply {
            ServerToExtension::ResultAck { .. } => return Ok(json!({ "recorded": true })),
            ServerToExtension::Error { error } => return Err(Failure::Refused(error)),
            _ => {}
        }
    }
    Err(Failure::Refused(ErrorObject::new(
        ErrorCode::InternalError,
        "the report was not acknowledged; send it again",
    )))
}
