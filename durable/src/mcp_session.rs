//! `McpSession`: one object per MCP session (its unique id is the `Mcp-Session-Id`), keeping
//! who opened it, the revision it speaks, the task its tool calls act in and the extension that
//! task used, so a session outlives the worker's isolates. The object named
//! [`crate::REGISTRY_NAME`] keeps the deployment's MCP tokens instead (one small table, checked
//! on every `/mcp` request: an object of its own kind rather than the registry's, which relays
//! every extension frame).
//!
//! A session's rules are `mimo_agent::mcp`: this object reads the JSON-RPC body, admits it and
//! carries a tool call out as the developer API does — one action submitted to the task's queue
//! (`POST /actions` of its coordinator), held to the same consent gate, domain policy and audit.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use futures_channel::oneshot;
use futures_util::future::{select, Either, LocalBoxFuture};
use futures_util::StreamExt as _;
use mimo_agent::actions::{ActionRecord, ActionState};
use mimo_agent::mcp::elicit::{self, Decision};
use mimo_agent::mcp::runs::{self, SessionRun, StreamPoint};
use mimo_agent::mcp::session::{self, admit, Refusal, Session};
use mimo_agent::mcp::tools::{self, FormField, FormStop, ToolReply};
use mimo_agent::mcp::{self, BrowserTool, Call, Incoming, TaskTool, Tool};
use mimo_agent::task::ClientConsent;
use mimo_protocol::mcp::{
    CallToolResult, EmptyResult, JsonRpcErrorCode, JsonRpcErrorResponse, JsonRpcResponse,
    McpTokenRequest, RequestId, MAX_MCP_TOKEN_NAME_CHARS, PROTOCOL_VERSION_HEADER, SESSION_HEADER,
};
use mimo_protocol::{ActionCommand, ErrorCode, ErrorObject, TaskControl};
use serde_json::Value;
use worker::*;

use crate::artifacts::read_image;
use crate::clients::{McpTokenCheck, RunGoal, SubmitAction, TaskClient, TokenHolder};
use crate::error::Refusable;
use crate::http::{error_response, now_ms, query_param, random_bytes, read_body};
use crate::mcp_oauth;
use crate::mcp_store::{McpTokens, SessionStore};
use crate::mcp_upload;
use crate::ARTIFACTS;

#[cfg_attr(feature = "objects", durable_object)]
pub struct McpSession {
    state: State,
    env: Env,
    /// The tool calls waiting for the person's answer to a form put to their client, by the
    /// form's request id: the client's response (another request to this object) is handed on.
    asking: Asking,
}

/// Senders of the answers awaited, by request id ([`McpSession::ask_person`]).
type Asking = Rc<RefCell<HashMap<String, oneshot::Sender<Option<Value>>>>>;

impl DurableObject for McpSession {
    fn new(state: State, env: Env) -> Self {
        Self {
            state,
            env,
            asking: Rc::default(),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let url = req.url()?;
        let param = |name: &str| query_param(&url, name);
        match (req.method(), url.path()) {
            (Method::Post, "/tokens/create") => {
                let request = match read_body::<McpTokenRequest>(&mut req).await {
                    Ok(request) => request,
                    Err(error) => return error_response(&error),
                };
                let name = request.name.trim();
                if name.is_empty() || name.chars().count() > MAX_MCP_TOKEN_NAME_CHARS {
                    return error_response(&ErrorObject::new(
                        ErrorCode::SchemaValidationFailed,
                        format!(
                            "an MCP token's name is 1–{MAX_MCP_TOKEN_NAME_CHARS} characters \
                             (the client it is for)"
                        ),
                    ));
                }
                let created = self.tokens()?.create(name, &random_bytes()?, now_ms())?;
                Ok(Response::from_json(&created)?.with_status(201))
            }
            (Method::Get, "/tokens/list") => Response::from_json(&self.tokens()?.list()?),
            (Method::Post, "/tokens/revoke") => {
                if self
                    .tokens()?
                    .revoke(&param("id").unwrap_or_default(), now_ms())?
                {
                    Ok(Response::empty()?.with_status(204))
                } else {
                    error_response(&ErrorObject::new(ErrorCode::NotFound, "no such MCP token"))
                }
            }
            (_, path) if path.starts_with("/oauth/") => {
                mcp_oauth::route(self.tokens()?, req, path).await
            }
            (Method::Post, "/tokens/check") => {
                let check = match read_body::<McpTokenCheck>(&mut req).await {
                    Ok(check) => check,
                    Err(error) => return error_response(&error),
                };
                match self
                    .tokens()?
                    .check(&check.token, &check.resource, now_ms())?
                {
                    Some(token_id) => Response::from_json(&TokenHolder { token_id }),
                    None => error_response(&ErrorObject::new(
                        ErrorCode::Unauthorized,
                        "unknown, expired or revoked MCP token: make one in the web app (or, for an OAuth client, authorize again)",
                    )),
                }
            }
            (Method::Post, "/rpc") => {
                let version = req.headers().get(PROTOCOL_VERSION_HEADER)?;
                let body = req.bytes().await?;
                self.rpc(
                    &body,
                    &param("sessionId").unwrap_or_default(),
                    param("named").as_deref() == Some("1"),
                    &param("tokenId").unwrap_or_default(),
                    version.as_deref(),
                    param("streams").as_deref() == Some("1"),
                )
                .await
            }
            (Method::Get, "/resume") => {
                let last = req.headers().get("last-event-id")?.unwrap_or_default();
                self.resume(&param("tokenId").unwrap_or_default(), &last)
            }
            (Method::Post, "/end") => {
                let token_id = param("tokenId").unwrap_or_default();
                let store = self.sessions();
                match self.live_session()? {
                    Some(mut session) if session.held_by(&token_id) => {
                        session.ended_at = Some(now_ms());
                        store.save(&session)?;
                        Ok(Response::empty()?.with_status(204))
                    }
                    _ => transport_refusal(Refusal::NotFound),
                }
            }
            _ => error_response(&ErrorObject::new(
                ErrorCode::NotFound,
                "no such MCP session route",
            )),
        }
    }
}

impl McpSession {
    fn tokens(&self) -> Result<McpTokens> {
        McpTokens::open(self.state.storage().sql())
    }

    fn sessions(&self) -> SessionStore {
        SessionStore::open(self.state.storage().sql())
    }

    /// The session, unless it expired (unused for longer than `MIMO_MCP_SESSION_IDLE_SECS`):
    /// then it is as if there were none.
    fn live_session(&self) -> Result<Option<Session>> {
        let idle_secs = self
            .env
            .var("MIMO_MCP_SESSION_IDLE_SECS")
            .ok()
            .and_then(|v| v.to_string().parse::<u64>().ok())
            .unwrap_or(session::SESSION_IDLE_SECS);
        let session = self.sessions().load()?;
        Ok(session.filter(|s| !s.expired(now_ms(), idle_secs.saturating_mul(1000))))
    }

    /// One JSON-RPC body sent to this session (`named`: the client named it; otherwise it is a
    /// new one, which only `initialize` starts). Nothing runs unless the body reads and the
    /// session admits it.
    async fn rpc(
        &self,
        body: &[u8],
        session_id: &str,
        named: bool,
        token_id: &str,
        version: Option<&str>,
        streams: bool,
    ) -> Result<Response> {
        let incoming = match mcp::read(body) {
            Ok(incoming) => incoming,
            Err(error) => return rpc_error(&error),
        };
        let store = self.sessions();
        let now = now_ms();
        let session = self.live_session()?;
        if let Err(refusal) = admit(
            session.as_ref(),
            incoming.is_initialize(),
            named,
            token_id,
            version,
        ) {
            return transport_refusal(refusal);
        }
        // Each request the session takes starts its idle time again.
        let session = match session {
            Some(session) => Some(self.update(session, |s| s.last_used_at = now)?),
            None => None,
        };
        let (id, call) = match incoming {
            Incoming::Request { id, call } => (id, call),
            Incoming::Response { id, result } => {
                // The person's answer to a form: to the call waiting for it, if one is.
                if let Some(waiting) = self.asking.borrow_mut().remove(&request_key(&id)) {
                    let _ = waiting.send(result);
                }
                return Ok(Response::empty()?.with_status(202));
            }
            Incoming::Accepted { .. } => return Ok(Response::empty()?.with_status(202)),
        };
        let result = match (call, session) {
            (Call::Initialize(params), _) => {
                let version = mcp::negotiate(&params.protocol_version);
                store.save(&Session {
                    session_id: session_id.to_owned(),
                    token_id: token_id.to_owned(),
                    version: version.to_owned(),
                    task_id: None,
                    started: false,
                    tabs: Vec::new(),
                    elicitation: elicit::supported(version, &params.capabilities),
                    client_id: None,
                    runs: Vec::new(),
                    created_at: now,
                    ended_at: None,
                    last_used_at: now,
                })?;
                let response = Response::from_json(&JsonRpcResponse::new(
                    id,
                    &mcp::initialize_result(version),
                ))?;
                response.headers().set(SESSION_HEADER, session_id)?;
                return Ok(response);
            }
            (Call::Ping, _) => serde_json::to_value(EmptyResult {})?,
            (Call::ListTools, _) => tools::list(),
            (
                Call::CallTool {
                    tool: Err(problem), ..
                },
                _,
            ) => serde_json::to_value(CallToolResult::error(problem))?,
            (
                Call::CallTool {
                    tool: Ok(Tool::Browser(tool)),
                    ..
                },
                Some(session),
            ) => return self.browser_call(id, session, tool, streams).await,
            (
                Call::CallTool {
                    tool: Ok(Tool::Upload { click_id, file }),
                    ..
                },
                Some(session),
            ) => {
                let task_id = session.task_id.clone().filter(|_| session.started);
                let Some(task_id) = task_id else {
                    let result = CallToolResult::error(tools::NO_PAGE_YET);
                    return Response::from_json(&JsonRpcResponse::new(id, &result));
                };
                match mcp_upload::store_given(&self.env, &task_id, click_id, file).await? {
                    Ok(step) => return self.browser_call(id, session, step, streams).await,
                    Err(result) => serde_json::to_value(result)?,
                }
            }
            (
                Call::CallTool {
                    tool: Ok(Tool::Form(fields)),
                    ..
                },
                Some(session),
            ) => serde_json::to_value(self.fill_form(session, fields).await?)?,
            (
                Call::CallTool {
                    tool: Ok(Tool::Task(tool)),
                    progress,
                },
                Some(session),
            ) => match self.prepare_task_tool(session, tool).await? {
                Prepared::Answer(result) => serde_json::to_value(result)?,
                Prepared::Wait {
                    task,
                    run,
                    wait_seconds,
                    done_before,
                } => match progress.filter(|_| streams && wait_seconds > 0) {
                    Some(token) => {
                        let point = StreamPoint {
                            task_id: run.task_id.clone(),
                            id,
                            token,
                            after: 0,
                            deadline: now_ms() + u64::from(wait_seconds) * 1000,
                        };
                        let progress = Progress { task, run, point };
                        return progress.answer(done_before).await;
                    }
                    None => serde_json::to_value(run_answer(&task, &run, wait_seconds).await?)?,
                },
            },
            (Call::CallTool { .. }, None) => {
                unreachable!("admit lets no tool call in without a session")
            }
        };
        Response::from_json(&JsonRpcResponse::new(id, &result))
    }

    /// The rest of a progress stream that dropped (`GET /mcp` with `Last-Event-ID`), for the
    /// token that holds the session: from the point the id names, if it is one of this
    /// session's runs.
    fn resume(&self, token_id: &str, last_event_id: &str) -> Result<Response> {
        let session = self.live_session()?;
        let Some(session) = session.filter(|s| s.held_by(token_id)) else {
            return transport_refusal(Refusal::NotFound);
        };
        let point = StreamPoint::parse(last_event_id);
        let run = point
            .as_ref()
            .and_then(|p| runs::run_of(&session.runs, &p.task_id).ok());
        let (Some(point), Some(run)) = (point, run) else {
            return transport_refusal(Refusal::BadRequest(
                "Last-Event-ID names no stream of this session: Mimo resumes only the progress \
                 streams of run_task and get_task"
                    .into(),
            ));
        };
        let task = TaskClient::new(&self.env, &point.task_id)?;
        let run = run.clone();
        Progress { task, run, point }.stream()
    }

    /// Changes the session as stored now, not as `read` was loaded: other tool calls of the
    /// session may have saved it while this one waited for its task (reading and writing
    /// SQLite here is synchronous, so nothing comes between the two).
    fn update(&self, read: Session, change: impl FnOnce(&mut Session)) -> Result<Session> {
        let store = self.sessions();
        let mut session = store.load()?.unwrap_or(read);
        change(&mut session);
        store.save(&session)?;
        Ok(session)
    }

    /// Prepares a tool about the session's runs of Mimo's own agent: `run_task` makes a task
    /// of its own for the goal (in the browser the session's other tools used, when it used
    /// one) and is then, as `get_task` is, a wait for the run to end; `cancel_task` and
    /// `list_tasks` are answered at once.
    async fn prepare_task_tool(&self, session: Session, tool: TaskTool) -> Result<Prepared> {
        let answered = |result| Ok(Prepared::Answer(result));
        match tool {
            TaskTool::Run {
                goal,
                answer_schema,
                wait_seconds,
            } => {
                let task_id = uuid::Builder::from_random_bytes(random_bytes()?)
                    .into_uuid()
                    .to_string();
                let task = TaskClient::new(&self.env, &task_id)?;
                if let Err(error) = task.init(&task_id).await.refusal()? {
                    return answered(tools::refused(&error));
                }
                let run = SessionRun {
                    task_id: task_id.clone(),
                    structured: answer_schema.is_some(),
                };
                // Kept before it runs: a client that loses this call's answer still reaches it.
                let session = self.update(session, |s| s.runs.push(run.clone()))?;
                let goal = RunGoal {
                    goal,
                    answer_schema,
                    client_id: session.client_id,
                };
                if let Err(error) = task.run(&goal).await.refusal()? {
                    return answered(tools::refused(&error));
                }
                Ok(Prepared::Wait {
                    task,
                    run,
                    wait_seconds,
                    done_before: Some(0),
                })
            }
            TaskTool::Get {
                task_id,
                wait_seconds,
            } => match runs::run_of(&session.runs, &task_id) {
                Ok(run) => Ok(Prepared::Wait {
                    task: TaskClient::new(&self.env, &task_id)?,
                    run: run.clone(),
                    wait_seconds,
                    done_before: None,
                }),
                Err(why) => answered(CallToolResult::error(why)),
            },
            TaskTool::Cancel { task_id } => match runs::run_of(&session.runs, &task_id) {
                Ok(run) => {
                    let task = TaskClient::new(&self.env, &task_id)?;
                    if let Err(error) = task.control(TaskControl::Stop).await.refusal()? {
                        return answered(tools::refused(&error));
                    }
                    answered(run_answer(&task, run, 0).await?)
                }
                Err(why) => answered(CallToolResult::error(why)),
            },
            TaskTool::List => {
                let states = session.runs.iter().map(|run| async move {
                    let state = match TaskClient::new(&self.env, &run.task_id) {
                        Ok(task) => task.run_state(0, None).await.ok(),
                        Err(_) => None,
                    };
                    (run.clone(), state)
                });
                answered(runs::listing(&futures_util::future::join_all(states).await))
            }
        }
    }

    /// Runs `tool` as one action of the session's task (made at its first tool call, as the
    /// web app makes one), and answers from its outcome. A step the task refuses — one the
    /// person must confirm, a blocked site, no browser online — ran nowhere: a tool error, or,
    /// when the person may approve it in the client, a question for them.
    async fn call_tool(&self, mut session: Session, tool: &BrowserTool) -> Result<Called> {
        let command = match tool.command(session.started, &session.tabs) {
            Ok(command) => command,
            Err(problem) => return Ok(Called::Answered(CallToolResult::error(problem))),
        };
        let task_id = match &session.task_id {
            Some(task_id) => task_id.clone(),
            None => {
                let task_id = session::task_id_for(&session.session_id);
                if let Err(error) = TaskClient::new(&self.env, &task_id)?
                    .init(&task_id)
                    .await
                    .refusal()?
                {
                    return Ok(Called::Answered(tools::refused(&error)));
                }
                session = self.update(session, |s| s.task_id = Some(task_id.clone()))?;
                task_id
            }
        };
        let task = TaskClient::new(&self.env, &task_id)?;
        let starts = matches!(command, ActionCommand::TaskStart { .. });
        let submit = SubmitAction {
            command,
            tab_id: None,
            wait_ms: None,
            rated: true,
        };
        let record = match task
            .submit(&submit, ClientConsent::Unasked)
            .await
            .refusal()?
        {
            Ok(Some(record)) => record,
            Ok(None) => {
                return Ok(Called::Answered(CallToolResult::error(
                    "the task did not keep the action it was given",
                )))
            }
            Err(refusal) => {
                return Ok(match elicit::asked_why(&refusal) {
                    Some(why) => Called::NeedsPerson {
                        task_id,
                        submit,
                        why: why.to_owned(),
                    },
                    None => Called::Answered(tools::refused(&refusal)),
                })
            }
        };
        let started = starts && record.state == ActionState::Succeeded;
        // What the answer lists is what the client's next indexes name.
        let listed = matches!(tool, BrowserTool::Tabs(_) | BrowserTool::Snapshot { .. })
            && record.state == ActionState::Succeeded;
        if started || listed || session.client_id.as_deref() != Some(record.client_id.as_str()) {
            self.update(session, |s| {
                s.started |= started;
                if listed {
                    s.tabs = tools::task_tabs(&record).iter().map(|t| t.tab_id).collect();
                }
                s.client_id = Some(record.client_id.clone());
            })?;
        }
        reply_of(&self.env, &task, tool, &record)
            .await
            .map(Called::Answered)
    }

    /// A browser tool's call: its step run and answered, or put to the person when it needs
    /// them — in their client's form if it takes one, otherwise in the web app and the side
    /// panel, the call waiting for their answer.
    async fn browser_call(
        &self,
        id: RequestId,
        session: Session,
        tool: BrowserTool,
        streams: bool,
    ) -> Result<Response> {
        let (version, forms) = (session.version.clone(), session.elicitation);
        let (task_id, submit, why) = match self.call_tool(session, &tool).await? {
            Called::Answered(result) => {
                return Response::from_json(&JsonRpcResponse::new(id, &result))
            }
            Called::NeedsPerson {
                task_id,
                submit,
                why,
            } => (task_id, submit, why),
        };
        let ask = Ask {
            id,
            version,
            task_id,
            submit,
            why,
            tool,
        };
        match (forms, streams) {
            (true, true) => self.ask_person(ask),
            (_, true) => self.ask_in_app(ask),
            (_, false) => {
                let id = ask.id.clone();
                let result = ask.run(&self.env, ClientConsent::AskInApp).await;
                Response::from_json(&JsonRpcResponse::new(id, &result))
            }
        }
    }

    /// Fills a form's `fields` one step each, in order, as `browser_*` calls of their own
    /// would: it stops at the first that fails or that the person must confirm, which is left to
    /// those calls (they ask the person), so nothing after it runs.
    async fn fill_form(&self, session: Session, fields: Vec<FormField>) -> Result<CallToolResult> {
        let mut filled = Vec::new();
        let mut session = session;
        for field in fields {
            let stop = match self.call_tool(session.clone(), &field.step).await? {
                Called::Answered(result) if !result.is_error => {
                    filled.push((field.name, result));
                    // As the step left it: the task's tab, its extension.
                    session = self.sessions().load()?.unwrap_or(session);
                    continue;
                }
                Called::Answered(result) => FormStop::Failed(result),
                Called::NeedsPerson { why, .. } => FormStop::NeedsPerson(why),
            };
            return Ok(tools::form_answer(&filled, Some((&field.name, stop))));
        }
        Ok(tools::form_answer(&filled, None))
    }

    /// Puts the step of `ask` to the person in their client (a form on the call's stream) and
    /// answers the call once they did: approved, the step is submitted again, confirmed, and
    /// answered from its outcome; otherwise (declined, dismissed, no answer within
    /// [`elicit::ANSWER_WITHIN_MS`]) it never runs. Comments keep the stream alive meanwhile.
    fn ask_person(&self, ask: Ask) -> Result<Response> {
        let key = format!("mimo-ask-{}", hex::encode(random_bytes::<12>()?));
        let (sender, receiver) = oneshot::channel();
        self.asking.borrow_mut().insert(key.clone(), sender);
        let question = sse(
            None,
            &elicit::request(RequestId::String(key.clone()), &ask.version, &ask.why),
        )?;
        let deadline = now_ms() + elicit::ANSWER_WITHIN_MS;
        let (env, asking) = (self.env.clone(), self.asking.clone());
        // A client that goes away takes the stream with it, and the wait ends with it.
        let forget = Forget {
            key: key.clone(),
            asking: asking.clone(),
        };
        let waiting = Waiting::Ask(question, receiver);
        let frames = futures_util::stream::unfold(Some(waiting), move |state| {
            let _ = &forget;
            let (env, asking, key) = (env.clone(), asking.clone(), key.clone());
            let ask = ask.clone();
            async move {
                match state? {
                    Waiting::Ask(question, receiver) => {
                        Some((Ok(question), Some(Waiting::Answer(receiver))))
                    }
                    Waiting::Answer(receiver) => {
                        let left = deadline.saturating_sub(now_ms()).min(KEEP_ALIVE_MS);
                        let answer = match select(
                            receiver,
                            Delay::from(Duration::from_millis(left)),
                        )
                        .await
                        {
                            Either::Left((answer, _)) => answer.ok(),
                            Either::Right((_, receiver)) if now_ms() < deadline => {
                                let alive = b": waiting for the person\n\n".to_vec();
                                return Some((Ok(alive), Some(Waiting::Answer(receiver))));
                            }
                            Either::Right(_) => None,
                        };
                        asking.borrow_mut().remove(&key);
                        let result = match answer {
                            Some(result) => match elicit::decision(result.as_ref()) {
                                Decision::Approved => {
                                    ask.run(&env, ClientConsent::ConfirmedInClient).await
                                }
                                Decision::NotApproved(how) => elicit::not_approved(&how, &ask.why),
                            },
                            None => elicit::unanswered(&ask.why),
                        };
                        Some((
                            sse(None, &JsonRpcResponse::new(ask.id.clone(), &result)),
                            None,
                        ))
                    }
                }
            }
        });
        event_stream(frames)
    }
}

impl McpSession {
    /// Holds the step of `ask` for the person's answer in the web app or the side panel (a
    /// client without forms) and answers the call once it ran, or with why it did not (declined
    /// there, or no answer within [`elicit::ANSWER_WITHIN_MS`]). Comments keep the stream alive
    /// meanwhile; a client that goes away leaves the step to its answer, unheard.
    fn ask_in_app(&self, ask: Ask) -> Result<Response> {
        let env = self.env.clone();
        let id = ask.id.clone();
        let held: LocalBoxFuture<'static, CallToolResult> =
            Box::pin(async move { ask.run(&env, ClientConsent::AskInApp).await });
        let frames = futures_util::stream::unfold(Some(held), move |state| {
            let id = id.clone();
            async move {
                let keep_alive = Delay::from(Duration::from_millis(KEEP_ALIVE_MS));
                match select(state?, keep_alive).await {
                    Either::Left((result, _)) => {
                        Some((sse(None, &JsonRpcResponse::new(id, &result)), None))
                    }
                    Either::Right((_, held)) => {
                        let alive = b": waiting for the person in Mimo\n\n".to_vec();
                        Some((Ok(alive), Some(held)))
                    }
                }
            }
        });
        event_stream(frames)
    }
}

/// How often a stream waiting for the person says it is alive.
const KEEP_ALIVE_MS: u64 = 15_000;

/// What came of a browser tool call's step.
enum Called {
    Answered(CallToolResult),
    /// The task refused the step until the person confirms it, in their client's form or in
    /// the web app (`why`: the task's words).
    NeedsPerson {
        task_id: String,
        submit: SubmitAction,
        why: String,
    },
}

/// A step put to the person in their client.
#[derive(Clone)]
struct Ask {
    /// The tool call's request id.
    id: RequestId,
    version: String,
    task_id: String,
    submit: SubmitAction,
    why: String,
    tool: BrowserTool,
}

impl Ask {
    /// Submits the step again, approved by the person in their client or to be asked in the web
    /// app (`consent`): run once, answered from its outcome, or with why it did not run.
    async fn run(&self, env: &Env, consent: ClientConsent) -> CallToolResult {
        self.submit(env, consent)
            .await
            .unwrap_or_else(|e| CallToolResult::error(format!("the step could not be run: {e}")))
    }

    async fn submit(&self, env: &Env, consent: ClientConsent) -> Result<CallToolResult> {
        let task = TaskClient::new(env, &self.task_id)?;
        Ok(match task.submit(&self.submit, consent).await.refusal()? {
            Ok(Some(record)) => reply_of(env, &task, &self.tool, &record).await?,
            Ok(None) => CallToolResult::error("the task did not keep the action it was given"),
            Err(refusal) => tools::refused(&refusal),
        })
    }
}

/// Forgets a wait for the person's answer when its stream is dropped.
struct Forget {
    key: String,
    asking: Asking,
}

impl Drop for Forget {
    fn drop(&mut self) {
        self.asking.borrow_mut().remove(&self.key);
    }
}

/// Where a stream putting a step to the person is.
enum Waiting {
    /// The form to send first.
    Ask(Vec<u8>, oneshot::Receiver<Option<Value>>),
    /// Waiting for the person's answer.
    Answer(oneshot::Receiver<Option<Value>>),
}

/// What a tool call replies once its step is `record`: its result, or the screenshot it took.
async fn reply_of(
    env: &Env,
    task: &TaskClient,
    tool: &BrowserTool,
    record: &ActionRecord,
) -> Result<CallToolResult> {
    match tool.reply(record) {
        ToolReply::Result(result) => Ok(result),
        ToolReply::Image(shot) => {
            let image = match task.artifact(&shot.artifact_id).await.refusal()? {
                Ok(record) => read_image(&env.bucket(ARTIFACTS)?, &record).await,
                Err(error) => Err(error.message),
            };
            Ok(match image {
                Ok(image) => tools::screenshot_result(&shot, image.data, &image.media_type),
                Err(why) => CallToolResult::error(format!(
                    "the screenshot was taken ({}) but cannot be read: {why}",
                    shot.artifact_id
                )),
            })
        }
    }
}

/// The key of a request id among those awaited.
fn request_key(id: &RequestId) -> String {
    match id {
        RequestId::String(s) => s.clone(),
        RequestId::Number(n) => n.to_string(),
    }
}

/// What a tool about the session's runs comes to before any wait: its answer, or a wait for
/// the run to end.
enum Prepared {
    Answer(CallToolResult),
    Wait {
        task: TaskClient,
        run: SessionRun,
        wait_seconds: u32,
        /// The steps done before the call (a new run's are all news; `None`: as it stands).
        done_before: Option<u32>,
    },
}

/// Where the session's `run` stands, once it ended or `wait_seconds` passed.
async fn run_answer(
    task: &TaskClient,
    run: &SessionRun,
    wait_seconds: u32,
) -> Result<CallToolResult> {
    let wait_ms = u64::from(wait_seconds) * 1000;
    Ok(match task.run_state(wait_ms, None).await.refusal()? {
        Ok(state) => runs::answer(run, &state),
        Err(error) => tools::refused(&error),
    })
}

/// A call that waits for a run, when its client asked for progress and takes a stream.
struct Progress {
    task: TaskClient,
    run: SessionRun,
    /// Where its stream starts: the call's ids, the steps the client has heard of, its end.
    point: StreamPoint,
}

impl Progress {
    /// The answer to the call: a run that ended already is answered as any call is; otherwise
    /// [`Progress::stream`], the steps heard of those done before the call (`None`: as it
    /// stands).
    async fn answer(mut self, done_before: Option<u32>) -> Result<Response> {
        let id = self.point.id.clone();
        match self.task.run_state(0, None).await.refusal()? {
            Ok(state) if !state.status.is_terminal() => {
                self.point.after = done_before.unwrap_or(state.steps);
                self.stream()
            }
            Ok(state) => {
                Response::from_json(&JsonRpcResponse::new(id, &runs::answer(&self.run, &state)))
            }
            Err(error) => Response::from_json(&JsonRpcResponse::new(id, &tools::refused(&error))),
        }
    }

    /// The transport's SSE from `point` on: an event that says where the stream stands first
    /// (its id is what a client whose stream dropped resumes from), a `notifications/progress`
    /// for each step the run finishes (each with its id), then the call's answer.
    fn stream(self) -> Result<Response> {
        let Progress { task, run, point } = self;
        let primer = format!("id: {}\ndata: \n\n", point.event_id()).into_bytes();
        let first = futures_util::stream::once(async move { Ok(primer) });
        let events =
            futures_util::stream::unfold(Some((task, run, point)), move |waiting| async move {
                let (task, run, point) = waiting?;
                let left = point.deadline.saturating_sub(now_ms());
                let answer = |result: &CallToolResult| {
                    sse(None, &JsonRpcResponse::new(point.id.clone(), result))
                };
                let frame = match task.run_state(left, Some(point.after)).await.refusal() {
                    Ok(Ok(state))
                        if !state.status.is_terminal()
                            && state.steps > point.after
                            && now_ms() < point.deadline =>
                    {
                        let next = point.at(state.steps);
                        let note = sse(Some(&next), &runs::progress(&point.token, &state));
                        return Some((note, Some((task, run, next))));
                    }
                    Ok(Ok(state)) => answer(&runs::answer(&run, &state)),
                    Ok(Err(error)) => answer(&tools::refused(&error)),
                    Err(e) => answer(&CallToolResult::error(format!(
                        "the task could not be read: {e}"
                    ))),
                };
                Some((frame, None))
            });
        event_stream(first.chain(events))
    }
}

/// A response streaming `frames` as the transport's SSE.
fn event_stream(
    frames: impl futures_util::Stream<Item = Result<Vec<u8>>> + 'static,
) -> Result<Response> {
    let response = Response::from_stream(frames)?;
    response
        .headers()
        .set("content-type", "text/event-stream")?;
    response.headers().set("cache-control", "no-cache")?;
    Ok(response)
}

/// One message as a server-sent event, with the id of the stream's point after it, if any.
fn sse<T: serde::Serialize>(point: Option<&StreamPoint>, message: &T) -> Result<Vec<u8>> {
    let id = point.map_or_else(String::new, |p| format!("id: {}\n", p.event_id()));
    Ok(format!(
        "{id}event: message\ndata: {}\n\n",
        serde_json::to_string(message)?
    )
    .into_bytes())
}

/// A body that is not a request Mimo serves: JSON-RPC's error, with 400 when the body could not
/// be read as a request at all (no id), otherwise in a 200 as any answer to a request.
pub fn rpc_error(error: &JsonRpcErrorResponse) -> Result<Response> {
    let status = if error.id.is_none() { 400 } else { 200 };
    Ok(Response::from_json(error)?.with_status(status))
}

/// The transport's refusal of a request the session cannot take.
pub fn transport_refusal(refusal: Refusal) -> Result<Response> {
    let (status, code, message) = match refusal {
        Refusal::BadRequest(message) => (400, JsonRpcErrorCode::BadRequest, message),
        Refusal::NotFound => (
            404,
            JsonRpcErrorCode::SessionNotFound,
            "no such MCP session (unknown or ended): initialize a new one".to_owned(),
        ),
    };
    Ok(Response::from_json(&JsonRpcErrorResponse::new(None, code, message))?.with_status(status))
}
