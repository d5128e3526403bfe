//! `TaskIndex`: the deployment's session list (issue 15), one object for the deployment. Each
//! task's coordinator reports its entry (title, status, last activity; a fork's origin) and
//! removes it when the task is deleted; `GET /api/tasks` reads it, newest activity first,
//! searched by title. An object of its own rather than a table of the registry or the skill
//! library: the registry relays every extension frame and the library answers every run's skill
//! lookups, and neither should queue behind the other's traffic; reports are throttled by the
//! coordinators ([`mimo_agent::task_index::IndexReporter`]), so one object keeps up.

use mimo_agent::task_index::{IndexEntry, ListQuery};
use mimo_protocol::{ErrorCode, ErrorObject};
use worker::*;

use crate::http::{error_response, query_param, read_body};
use crate::task_index_store::TaskIndexStore;

#[cfg_attr(feature = "objects", durable_object)]
pub struct TaskIndex {
    store: TaskIndexStore,
}

impl DurableObject for TaskIndex {
    fn new(state: State, _env: Env) -> Self {
        let store = TaskIndexStore::open(state.storage().sql()).expect("task index schema");
        Self { store }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let url = req.url()?;
        let param = |name: &str| query_param(&url, name);
        match (req.method(), url.path()) {
            (Method::Get, "/list") => {
                let (q, limit, before) = (param("q"), param("limit"), param("before"));
                match ListQuery::parse(q.as_deref(), limit.as_deref(), before.as_deref()) {
                    Ok(query) => Response::from_json(&self.store.list(&query)?),
                    Err(error) => error_response(&error),
                }
            }
            (Method::Post, "/put") => match read_body::<IndexEntry>(&mut req).await {
                Ok(entry) => {
                    self.store.put(&entry)?;
                    Response::empty()
                }
                Err(error) => error_response(&error),
            },
            (Method::Post, "/delete") => {
                self.store.delete(&param("taskId").unwrap_or_default())?;
                Response::empty()
            }
            _ => error_response(&ErrorObject::new(
                ErrorCode::NotFound,
                "no such task index route",
            )),
        }
    }
}
