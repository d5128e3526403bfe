//! The task's secrets over HTTP: the web app stores, lists and deletes the task's own (names and
//! domains listed, never values); the task's extension asks for one value at the moment of
//! typing, for the page it types into. The rules are `mimo_agent::secrets`.

use mimo_agent::secrets::{check_secret, infos, resolve, typing_waits_for};
use mimo_agent::task::{Caller, Input};
use mimo_protocol::secrets::{PutSecret, SecretValueRequest};
use mimo_protocol::{ErrorCode, ErrorObject, SecretInfo};
use serde::de::DeserializeOwned;
use worker::{Request, Response, Result};

use crate::http::{error_response, now_ms, random_bytes};
use crate::task::TaskCoordinator;

/// A secret route's body, refused without echoing any of it (it may hold the value).
async fn body<T: DeserializeOwned>(
    req: &mut Request,
    shape: &str,
) -> std::result::Result<T, ErrorObject> {
    let text = req.text().await.unwrap_or_default();
    serde_json::from_str(&text).map_err(|_| {
        ErrorObject::new(
            ErrorCode::SchemaValidationFailed,
            format!("the body must be {shape}"),
        )
    })
}

impl TaskCoordinator {
    /// The task's secrets and the deployment's: names, domains and where each comes from.
    fn secret_infos(&self) -> Result<Vec<SecretInfo>> {
        let task = self.secrets.list()?;
        Ok(infos(&task, &self.task.borrow().config().secrets))
    }

    /// `GET /api/task/{id}/secrets`.
    pub(crate) fn list_secrets(&self) -> Result<Response> {
        if !self.exists() {
            return error_response(&ErrorObject::new(ErrorCode::NotFound, "unknown task"));
        }
        Response::from_json(&self.secret_infos()?)
    }

    /// `PUT /api/task/{id}/secrets/{name}` with `{value, domains}`.
    pub(crate) async fn put_secret(&self, name: &str, req: &mut Request) -> Result<Response> {
        if !self.exists() {
            return error_response(&ErrorObject::new(ErrorCode::NotFound, "unknown task"));
        }
        let put: PutSecret =
            match body(req, "{\"value\": \"…\", \"domains\": [\"example.com\"]}").await {
                Ok(put) => put,
                Err(error) => return error_response(&error),
            };
        if let Err(error) = check_secret(name, &put) {
            return error_response(&error);
        }
        let Some(key) = self.task.borrow().config().secrets_key.clone() else {
            return error_response(&ErrorObject::new(
                ErrorCode::PermissionDenied,
                "this deployment cannot store a task's secrets: set MIMO_SECRETS_KEY (a random string of at least 16 characters, e.g. `wrangler secret put MIMO_SECRETS_KEY`) to the key they are encrypted with",
            ));
        };
        self.secrets.put(
            &key,
            random_bytes()?,
            name,
            &put.value,
            &put.domains,
            now_ms(),
        )?;
        self.handle(Input::SecretsChanged(self.secrets.list()?), Caller::Direct)
            .await?;
        let stored = self.secret_infos()?.into_iter().find(|s| s.name == name);
        Ok(Response::from_json(&stored)?.with_status(201))
    }

    /// `DELETE /api/task/{id}/secrets/{name}`.
    pub(crate) async fn delete_secret(&self, name: &str) -> Result<Response> {
        if !self.exists() || !self.secrets.delete(name)? {
            return error_response(&ErrorObject::new(
                ErrorCode::NotFound,
                format!("this task has no secret named {name:?}"),
            ));
        }
        self.handle(Input::SecretsChanged(self.secrets.list()?), Caller::Direct)
            .await?;
        Response::empty()
    }

    /// `POST /api/task/{id}/secret-value` (the task's extension only): the value of a secret
    /// for the page at `url`, for the `browser_type` in flight that types it, once per attempt;
    /// or `PERMISSION_DENIED` / `TARGET_NOT_FOUND`.
    pub(crate) async fn secret_value(&self, req: &mut Request) -> Result<Response> {
        if !self.exists() {
            return error_response(&ErrorObject::new(ErrorCode::NotFound, "unknown task"));
        }
        let shape = "{\"name\": \"…\", \"url\": \"…\", \"actionId\": \"…\", \"attempt\": 1}";
        let ask: SecretValueRequest = match body(req, shape).await {
            Ok(ask) => ask,
            Err(error) => return error_response(&error),
        };
        let waiting = typing_waits_for(
            self.task.borrow().actions().get(&ask.action_id),
            ask.attempt,
            &ask.name,
        );
        if let Err(error) = waiting {
            return error_response(&error);
        }
        let task = match self.task.borrow().config().secrets_key.clone() {
            Some(key) => self.secrets.open_all(&key)?,
            None => Vec::new(),
        };
        let answer = resolve(
            &ask.name,
            &ask.url,
            &task,
            &self.task.borrow().config().secrets,
        );
        let value = match answer {
            Ok(value) => value,
            Err(error) => return error_response(&error),
        };
        // Only a value given counts: a refusal leaves the attempt its one answer.
        if !self
            .secrets
            .release(&ask.action_id, ask.attempt, &ask.name)?
        {
            return error_response(&ErrorObject::new(
                ErrorCode::PermissionDenied,
                format!(
                    "the secret {:?} was given for this attempt already",
                    ask.name
                ),
            ));
        }
        Response::from_json(&value)
    }
}
