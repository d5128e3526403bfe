//! What the Worker and the two objects ask each other, in one place: each internal route's body
//! and answer types, and typed clients that send them, so that a route's shape is written once.

use mimo_agent::actions::ActionRecord;
use mimo_agent::credentials::{token_client, Confirmer, FailureLimit};
use mimo_agent::mcp::runs::RunState;
use mimo_agent::registry::{News, PresenceReport};
use mimo_agent::skills::SkillQuery;
use mimo_agent::task::ForkSeed;
use mimo_agent::task::{ActionEvent, Binding, ClientConsent, SnapshotPush};
pub use mimo_agent::task::{ArtifactGrant, ArtifactRecord, ArtifactStored};
use mimo_agent::task_index::IndexEntry;
use mimo_protocol::extension::{
    ExtensionList, PairRequest, PairResponse, PairingCode, PollRequest, PollResponse, WsTicket,
};
use mimo_protocol::frontend::TaskHere;
use mimo_protocol::mcp::PROTOCOL_VERSION_HEADER;
use mimo_protocol::script::{ScriptStart, ScriptStatus};
use mimo_protocol::{
    ActionCommand, BrowserSnapshot, ClientId, ForkRequest, ForkedFrom, ServerToExtension, Skill,
    TaskControl,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use worker::{js_sys, Env, Headers, Method, Request, RequestInit, Response, Result, Stub};

use crate::error::{read_json, read_outcome, Reply};
use crate::http::json_request;
use crate::mcp_oauth::RESOURCE_HEADER;
use crate::registry_store::HandOver;
use crate::{
    EXTENSION_REGISTRY, MCP_SESSION, REGISTRY_NAME, SKILL_LIBRARY, TASK_COORDINATOR, TASK_INDEX,
    WEBHOOK_DISPATCHER,
};

/// Body of the registry's `/bind`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BindRequest {
    pub task_id: String,
    /// An explicit choice; `None` asks for automatic selection.
    pub client_id: Option<String>,
}

/// Body of the registry's `/send`: a frame for an extension's socket (`PLUGIN_OFFLINE` when it
/// has none open).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendToExtension {
    pub client_id: ClientId,
    pub message: ServerToExtension,
}

/// Body of `POST /api/task/{taskId}/actions`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubmitAction {
    pub command: ActionCommand,
    #[serde(default)]
    pub tab_id: Option<i32>,
    /// How long to wait for the action to end before answering with its current state.
    #[serde(default)]
    pub wait_ms: Option<u64>,
    /// Rated as the agent's steps are (an MCP client's): refused when the person must confirm
    /// it. A caller can only make its step stricter with it.
    #[serde(default)]
    pub rated: bool,
}

/// Body of a task's `/run`: a goal given as the person's message (MCP's `run_task`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunGoal {
    pub goal: String,
    #[serde(default)]
    pub answer_schema: Option<serde_json::Value>,
    /// The extension to run it in (the one the session's browser tools used), if known.
    #[serde(default)]
    pub client_id: Option<String>,
}

/// Body of a task's `/confirm`: an answer to a confirmation from the side panel or a script.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfirmBody {
    pub step: u32,
    pub approve: bool,
    #[serde(default)]
    pub reason: Option<String>,
    pub by: Confirmer,
}

/// Body of the registry's `/authenticate`: an extension token to check.
#[derive(Serialize, Deserialize)]
pub struct TokenCheck {
    pub token: String,
}

/// Body of the MCP tokens' `/tokens/check`: a token sent to the `/mcp` of `resource`.
#[derive(Serialize, Deserialize)]
pub struct McpTokenCheck {
    pub token: String,
    pub resource: String,
}

/// Answer of an MCP token's check: which token it is.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenHolder {
    pub token_id: String,
}

/// Body of `/ticket` (issue one for `principal`) and the answer of `/redeem`.
#[derive(Serialize, Deserialize)]
pub struct TicketHolder {
    pub principal: String,
}

/// Body of `/redeem`.
#[derive(Serialize, Deserialize)]
pub struct TicketRedeem {
    pub ticket: String,
}

/// Body of `/auth-failure` (a failed authentication from `client`, its address) and of
/// `/auth-status` (is it refused?), under the deployment's limit.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthFailure {
    pub client: String,
    pub max_failures: u32,
    pub window_ms: u64,
}

impl AuthFailure {
    pub fn limit(&self) -> FailureLimit {
        FailureLimit {
            max_failures: self.max_failures,
            window_ms: self.window_ms,
        }
    }
}

/// The answer to `/auth-failure`.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthFailureCount {
    pub blocked_until: Option<u64>,
}

/// What `/init` answers: the task's id, and whether this request created it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    pub task_id: String,
    pub created: bool,
}

/// The registry's directory (one per deployment: pairing, credentials, tickets, bindings, the
/// listing), as the worker, a task's coordinator and the clients' objects talk to it.
pub struct RegistryClient(Stub);

impl RegistryClient {
    pub fn new(env: &Env) -> Result<Self> {
        Ok(Self(
            env.durable_object(EXTENSION_REGISTRY)?
                .get_by_name(REGISTRY_NAME)?,
        ))
    }

    /// Binds a task to an extension (automatic selection when `client_id` is `None`).
    pub async fn bind(&self, request: &BindRequest) -> Reply<Binding> {
        let request = json_request(Method::Post, "/bind", Some(request))?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    /// The extension a task is bound to (`NOT_FOUND` when none).
    pub async fn binding_of(&self, task_id: &str) -> Reply<String> {
        self.get(&format!("/binding?taskId={}", urlencode(task_id)))
            .await
    }

    /// The deployment's extensions, online or not.
    pub async fn list(&self) -> Reply<ExtensionList> {
        self.get("/list").await
    }

    /// A new pairing code for the web app to show.
    pub async fn pairing_code(&self) -> Reply<PairingCode> {
        let request = json_request::<()>(Method::Post, "/pairing-code", None)?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    /// Trades a pairing code for an extension credential (`UNAUTHORIZED` for a wrong code).
    pub async fn pair(&self, request: &PairRequest) -> Reply<PairResponse> {
        self.post("/pair", request).await
    }

    /// Revokes an extension's credential and closes its socket.
    pub async fn revoke(&self, client_id: &str) -> Reply<()> {
        let path = format!("/revoke?clientId={}", urlencode(client_id));
        let request = json_request::<()>(Method::Post, &path, None)?;
        read_outcome(self.0.fetch_with_request(request).await?).await
    }

    /// Whose an extension token is (`UNAUTHORIZED` when unknown or revoked), asked where it is
    /// kept: at the object of the client it names (`mimo_agent::credentials::token_client`),
    /// else — a token from before tokens named their client — at the directory.
    pub async fn authenticate(env: &Env, check: &TokenCheck) -> Reply<TicketHolder> {
        match token_client(&check.token) {
            Some(client_id) => {
                let path = format!(
                    "/client-authenticate?clientId={}",
                    urlencode(client_id.as_str())
                );
                ClientObject::new(env, &client_id)?.post(&path, check).await
            }
            None => Self::new(env)?.post("/authenticate", check).await,
        }
    }

    /// A single-use ticket for one socket of the holder.
    pub async fn ticket(&self, holder: &TicketHolder) -> Reply<WsTicket> {
        self.post("/ticket", holder).await
    }

    /// Whose a socket's ticket is, using it up (`UNAUTHORIZED` when wrong, expired or used).
    pub async fn redeem(&self, redeem: &TicketRedeem) -> Reply<TicketHolder> {
        self.post("/redeem", redeem).await
    }

    /// Counts a failed authentication; says until when the client is blocked, if it now is.
    pub async fn auth_failure(&self, failure: &AuthFailure) -> Reply<AuthFailureCount> {
        self.post("/auth-failure", failure).await
    }

    /// Until when the client is blocked, if it is, counting nothing.
    pub async fn auth_status(&self, client: &AuthFailure) -> Reply<AuthFailureCount> {
        self.post("/auth-status", client).await
    }

    /// A client's object reports the client's presence.
    pub async fn report(&self, report: &PresenceReport) -> Reply<()> {
        let request = json_request(Method::Post, "/report", Some(report))?;
        read_outcome(self.0.fetch_with_request(request).await?).await
    }

    /// A client's object, when it first runs: what the directory keeps for it, handed over.
    pub async fn hand_over(&self, client_id: &ClientId) -> Reply<HandOver> {
        let path = format!("/hand-over?clientId={}", urlencode(client_id.as_str()));
        let request = json_request::<()>(Method::Post, &path, None)?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    async fn get<T: DeserializeOwned>(&self, path: &str) -> Reply<T> {
        let request = json_request::<()>(Method::Get, path, None)?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    async fn post<B: Serialize, T: DeserializeOwned>(&self, route: &str, body: &B) -> Reply<T> {
        let request = json_request(Method::Post, route, Some(body))?;
        read_json(self.0.fetch_with_request(request).await?).await
    }
}

/// An extension client's own registry object (its sockets, polls, outbox and snapshot), as the
/// worker, a task's coordinator and the directory talk to it.
pub struct ClientObject(Stub);

impl ClientObject {
    pub fn new(env: &Env, client_id: &ClientId) -> Result<Self> {
        Ok(Self(
            env.durable_object(EXTENSION_REGISTRY)?
                .get_by_name(&client_object_name(client_id))?,
        ))
    }

    /// The object of `client_id`, named as it is given (a task's stored binding, a path).
    pub fn named(env: &Env, client_id: &str) -> Reply<Self> {
        Ok(Self::new(env, &ClientId::parse(client_id)?)?)
    }

    /// Sends a frame on the extension's socket (`PLUGIN_OFFLINE` when it has none open).
    pub async fn send(&self, client_id: &str, message: ServerToExtension) -> Reply<()> {
        let body = SendToExtension {
            client_id: ClientId::parse(client_id)?,
            message,
        };
        let path = format!("/send?clientId={}", urlencode(body.client_id.as_str()));
        let request = json_request(Method::Post, &path, Some(&body))?;
        read_outcome(self.0.fetch_with_request(request).await?).await
    }

    /// Hands an extension's socket upgrade (`request`, already authenticated) to the registry.
    pub async fn connect_extension(&self, client_id: &str, request: &Request) -> Result<Response> {
        let target = format!(
            "https://internal/ws/extension?clientId={}",
            urlencode(client_id)
        );
        self.0
            .fetch_with_request(Request::new_with_init(&target, &forward(request)?)?)
            .await
    }

    /// A poll made here on behalf of `client_id` (a script: see the script API).
    pub async fn poll_frames(&self, client_id: &str, request: &PollRequest) -> Reply<PollResponse> {
        self.post(&format!("/poll?clientId={}", urlencode(client_id)), request)
            .await
    }

    /// Hands an extension's poll (its body as sent) to the registry.
    pub async fn poll(&self, client_id: &str, mut request: Request) -> Result<Response> {
        let target = format!("https://internal/poll?clientId={}", urlencode(client_id));
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_body(Some(request.text().await?.into()));
        self.0
            .fetch_with_request(Request::new_with_init(&target, &init)?)
            .await
    }

    /// The client this object is (`client_id`) is the one task `task_id` is bound to.
    pub async fn is_bound(&self, client_id: &str, task_id: &str) -> Reply<bool> {
        let path = format!(
            "/bound?clientId={}&taskId={}",
            urlencode(client_id),
            urlencode(task_id)
        );
        let request = json_request::<()>(Method::Get, &path, None)?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    /// Tells the object what the directory decided about its client; answers with the client's
    /// snapshot.
    pub async fn news(&self, client_id: &ClientId, news: &News) -> Reply<Option<BrowserSnapshot>> {
        let path = format!("/news?clientId={}", urlencode(client_id.as_str()));
        let request = json_request(Method::Post, &path, Some(news))?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    /// The client's presence as its object knows it now.
    pub async fn presence(&self, client_id: &ClientId) -> Reply<PresenceReport> {
        let path = format!("/presence?clientId={}", urlencode(client_id.as_str()));
        let request = json_request::<()>(Method::Get, &path, None)?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    async fn post<B: Serialize, T: DeserializeOwned>(&self, route: &str, body: &B) -> Reply<T> {
        let request = json_request(Method::Post, route, Some(body))?;
        read_json(self.0.fetch_with_request(request).await?).await
    }
}

/// The name of an extension client's own registry object.
pub fn client_object_name(client_id: &ClientId) -> String {
    format!("client:{client_id}")
}

/// A task's coordinator, as the registry talks to it.
pub struct TaskClient(Stub);

impl TaskClient {
    pub fn new(env: &Env, task_id: &str) -> Result<Self> {
        Ok(Self(
            env.durable_object(TASK_COORDINATOR)?.get_by_name(task_id)?,
        ))
    }

    /// Relays what the extension says about one of the task's actions.
    pub async fn action_event(&self, event: &ActionEvent) -> Reply<()> {
        self.post("/action-event", event).await
    }

    /// Relays takeover, resume or stop from the extension's overlay.
    pub async fn control(&self, control: TaskControl) -> Reply<()> {
        self.post("/control", &control).await
    }

    /// Relays the person's answer to a confirmation, given outside the web app.
    pub async fn confirm(&self, answer: &ConfirmBody) -> Reply<()> {
        self.post("/confirm", answer).await
    }

    /// Starts a task for a script whose polling client is `client_id`.
    pub async fn script_start(&self, start: &ScriptStart, client_id: &str) -> Reply<()> {
        let path = format!("/script/start?clientId={}", urlencode(client_id));
        self.post(&path, start).await
    }

    /// Where the task stands, for a script.
    pub async fn script_status(&self) -> Reply<ScriptStatus> {
        let request = json_request::<()>(Method::Get, "/script/status", None)?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    /// Every action of the task with its state and outcome.
    pub async fn actions(&self) -> Reply<Vec<ActionRecord>> {
        let request = json_request::<()>(Method::Get, "/actions", None)?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    /// Submits one action, as `POST /api/task/{id}/actions` does, and waits for it: the record
    /// as it ended, or as it stood when the wait did. `consent` is what becomes of an MCP
    /// client's step the person must confirm: refused (`/actions`), run because they approved it
    /// in their MCP client (`/actions/confirmed`: what the rating asked is answered, what the
    /// consent gate asks is not), or held for their answer in the web app or the side panel
    /// (`/actions/held`: answered once it ran, or with why it did not).
    pub async fn submit(
        &self,
        action: &SubmitAction,
        consent: ClientConsent,
    ) -> Reply<Option<ActionRecord>> {
        let path = match consent {
            ClientConsent::Unasked => "/actions",
            ClientConsent::ConfirmedInClient => "/actions/confirmed",
            ClientConsent::AskInApp => "/actions/held",
        };
        let request = json_request(Method::Post, path, Some(action))?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    /// Gives the task a goal to run (`/run`), answered once the task has it.
    pub async fn run(&self, goal: &RunGoal) -> Reply<()> {
        self.post("/run", goal).await
    }

    /// Where the task stands and how its run ended, waiting up to `wait_ms` for it to end (or,
    /// given `after_steps`, to finish a step more than that).
    pub async fn run_state(&self, wait_ms: u64, after_steps: Option<u32>) -> Reply<RunState> {
        let mut path = format!("/run?waitMs={wait_ms}");
        if let Some(steps) = after_steps {
            path.push_str(&format!("&afterSteps={steps}"));
        }
        let request = json_request::<()>(Method::Get, &path, None)?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    /// Pushes the task's extension's new browser snapshot.
    pub async fn snapshot(&self, push: &SnapshotPush) -> Reply<()> {
        self.post("/snapshot", push).await
    }

    /// Creates the task (nothing happens when it exists).
    pub async fn init(&self, task_id: &str) -> Reply<Created> {
        let path = format!("/init?taskId={}", urlencode(task_id));
        let request = json_request::<()>(Method::Post, &path, None)?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    /// What a fork of the task at `message_id` starts from.
    pub async fn fork_seed(&self, message_id: &str) -> Reply<ForkSeed> {
        let body = ForkRequest {
            message_id: message_id.to_owned(),
        };
        let request = json_request(Method::Post, "/fork-seed", Some(&body))?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    /// Closes the sockets `client_id`'s side panel has open on the task (its credential ended).
    pub async fn close_side_panels(&self, client_id: &str) -> Reply<()> {
        let route = format!("/side-panels/close?clientId={}", urlencode(client_id));
        self.post(&route, &()).await
    }

    /// Binds the new task to `client_id`'s browser, its first run on `here`'s tab.
    pub async fn start_here(&self, client_id: &str, here: &TaskHere) -> Reply<()> {
        self.post(
            &format!("/start-here?clientId={}", urlencode(client_id)),
            here,
        )
        .await
    }

    /// Creates the task `task_id` as a fork from `seed`.
    pub async fn fork_init(&self, task_id: &str, seed: &ForkSeed) -> Reply<()> {
        let path = format!("/fork-init?taskId={}", urlencode(task_id));
        self.post(&path, seed).await
    }

    /// Tells the task forked that the fork `fork` was made of it.
    pub async fn forked(&self, fork: &ForkedFrom) -> Reply<()> {
        self.post("/forked", fork).await
    }

    /// Records an upload grant for one of the task's artifacts.
    pub async fn artifact_granted(&self, grant: &ArtifactGrant) -> Reply<()> {
        self.post("/artifacts/granted", grant).await
    }

    /// Records that an artifact's upload completed (`NOT_FOUND` for an artifact never granted).
    pub async fn artifact_stored(&self, stored: &ArtifactStored) -> Reply<()> {
        self.post("/artifacts/stored", stored).await
    }

    /// One of the task's artifacts as recorded.
    pub async fn artifact(&self, artifact_id: &str) -> Reply<ArtifactRecord> {
        let path = format!("/artifacts/get?artifactId={}", urlencode(artifact_id));
        let request = json_request::<()>(Method::Get, &path, None)?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    /// Passes a request of the public API on to the task's `route` (`/summary`, `/actions`, …):
    /// GET as it is, anything else as a POST with the request's body.
    pub async fn forward(
        &self,
        task_id: &str,
        route: &str,
        mut request: Request,
    ) -> Result<Response> {
        let method = request.method();
        let mut init = RequestInit::new();
        if method == Method::Get {
            init.with_method(Method::Get);
        } else {
            init.with_method(Method::Post);
            init.with_body(Some(request.text().await?.into()));
        }
        let target = format!("https://internal{route}?taskId={}", urlencode(task_id));
        self.0
            .fetch_with_request(Request::new_with_init(&target, &init)?)
            .await
    }

    /// Hands a viewer's socket upgrade (`request`, already authenticated) to the task,
    /// replaying the history after `last_seq`: the web app's, or (`side_panel`) the side panel
    /// of the extension the task is bound to (the caller checked the binding).
    pub async fn connect_web(
        &self,
        last_seq: Option<u64>,
        side_panel: Option<&str>,
        request: &Request,
    ) -> Result<Response> {
        let mut target = format!("https://internal/ws/web?lastSeq={}", last_seq.unwrap_or(0));
        if let Some(client_id) = side_panel {
            target.push_str(&format!("&clientId={}", urlencode(client_id)));
        }
        self.0
            .fetch_with_request(Request::new_with_init(&target, &forward(request)?)?)
            .await
    }

    async fn post<T: Serialize>(&self, route: &str, body: &T) -> Reply<()> {
        let request = json_request(Method::Post, route, Some(body))?;
        read_outcome(self.0.fetch_with_request(request).await?).await
    }
}

/// The MCP objects, as the worker talks to them: the tokens' (one) and each session's.
pub struct McpClient(Stub);

impl McpClient {
    /// The object that keeps the MCP tokens.
    pub fn tokens(env: &Env) -> Result<Self> {
        Ok(Self(
            env.durable_object(MCP_SESSION)?
                .get_by_name(REGISTRY_NAME)?,
        ))
    }

    /// A new session's object and its id: the object's unique id, which only this namespace
    /// makes (no one can make up one that reaches an object).
    pub fn new_session(env: &Env) -> Result<(String, Self)> {
        let namespace = env.durable_object(MCP_SESSION)?;
        let id = namespace.unique_id()?;
        Ok((id.to_string(), Self(id.get_stub()?)))
    }

    /// The object of session `session_id`, or `None` when the id is not one of the namespace's.
    pub fn session(env: &Env, session_id: &str) -> Result<Option<Self>> {
        let namespace = env.durable_object(MCP_SESSION)?;
        match namespace.id_from_string(session_id) {
            Ok(id) => Ok(Some(Self(id.get_stub()?))),
            Err(_) => Ok(None),
        }
    }

    /// Passes a request of the web app's token API on to the object's `route`
    /// (`/tokens/create`, `/tokens/list`, `/tokens/revoke?id=`), its answer as it is.
    pub async fn forward_tokens(&self, route: &str, request: Request) -> Result<Response> {
        self.forward(route, Headers::new(), request).await
    }

    /// Passes an OAuth request (`route`: `/oauth/…` with its query) for the tokens of
    /// `resource` on to the object, its answer as it is.
    pub async fn oauth(&self, route: &str, resource: &str, request: Request) -> Result<Response> {
        let headers = Headers::new();
        headers.set(RESOURCE_HEADER, resource)?;
        self.forward(route, headers, request).await
    }

    /// `request` (a GET, or a POST with its body) sent on to the object's `route`.
    async fn forward(
        &self,
        route: &str,
        headers: Headers,
        mut request: Request,
    ) -> Result<Response> {
        let mut init = RequestInit::new();
        init.with_headers(headers);
        if request.method() == Method::Get {
            init.with_method(Method::Get);
        } else {
            init.with_method(Method::Post);
            init.with_body(Some(request.text().await?.into()));
        }
        let target = format!("https://internal{route}");
        self.0
            .fetch_with_request(Request::new_with_init(&target, &init)?)
            .await
    }

    /// Who holds the MCP token `check` names (`UNAUTHORIZED` for none live).
    pub async fn check_token(&self, check: &McpTokenCheck) -> Reply<TokenHolder> {
        let request = json_request(Method::Post, "/tokens/check", Some(check))?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    /// Hands a `POST /mcp` body, sent with `token_id`'s token, to the session: `named` when the
    /// client named the session, otherwise it is a new one. The answer is the HTTP response.
    pub async fn rpc(
        &self,
        session_id: &str,
        named: bool,
        token_id: &str,
        version: Option<&str>,
        streams: bool,
        body: Vec<u8>,
    ) -> Result<Response> {
        let headers = Headers::new();
        if let Some(version) = version {
            headers.set(PROTOCOL_VERSION_HEADER, version)?;
        }
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(js_sys::Uint8Array::from(body.as_slice()).into()));
        let target = format!(
            "https://internal/rpc?sessionId={}&named={}&tokenId={}&streams={}",
            urlencode(session_id),
            u8::from(named),
            urlencode(token_id),
            u8::from(streams)
        );
        self.0
            .fetch_with_request(Request::new_with_init(&target, &init)?)
            .await
    }

    /// The rest of the session's progress stream that `last_event_id` names (`GET /mcp`), if
    /// `token_id`'s token opened the session.
    pub async fn resume(&self, token_id: &str, last_event_id: &str) -> Result<Response> {
        let headers = Headers::new();
        headers.set("last-event-id", last_event_id)?;
        let mut init = RequestInit::new();
        init.with_method(Method::Get).with_headers(headers);
        let target = format!("https://internal/resume?tokenId={}", urlencode(token_id));
        self.0
            .fetch_with_request(Request::new_with_init(&target, &init)?)
            .await
    }

    /// Ends the session (`DELETE /mcp`), if `token_id`'s token opened it.
    pub async fn end(&self, token_id: &str) -> Result<Response> {
        let path = format!("/end?tokenId={}", urlencode(token_id));
        self.0
            .fetch_with_request(json_request::<()>(Method::Post, &path, None)?)
            .await
    }
}

/// The skill library, as the worker and a task's coordinator talk to it.
pub struct SkillClient(Stub);

impl SkillClient {
    pub fn new(env: &Env) -> Result<Self> {
        Ok(Self(
            env.durable_object(SKILL_LIBRARY)?
                .get_by_name(REGISTRY_NAME)?,
        ))
    }

    /// The skills a run's model call gets for its goal and page.
    pub async fn matching(&self, query: &SkillQuery) -> Reply<Vec<Skill>> {
        let request = json_request(Method::Post, "/match", Some(query))?;
        read_json(self.0.fetch_with_request(request).await?).await
    }

    /// Passes a request of the public API on to the library's `route` (`/list`, `/search`,
    /// `/skill`) with the query `params`, keeping its method and body.
    pub async fn forward(
        &self,
        route: &str,
        params: &[(&str, &str)],
        mut request: Request,
    ) -> Result<Response> {
        let mut init = RequestInit::new();
        init.with_method(request.method());
        if request.method() == Method::Put {
            init.with_body(Some(request.text().await?.into()));
        }
        let query: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params)
            .finish();
        let target = format!("https://internal{route}?{query}");
        self.0
            .fetch_with_request(Request::new_with_init(&target, &init)?)
            .await
    }
}

/// The task index (the session list), as a task's coordinator and the worker talk to it.
pub struct TaskIndexClient(Stub);

impl TaskIndexClient {
    pub fn new(env: &Env) -> Result<Self> {
        Ok(Self(
            env.durable_object(TASK_INDEX)?.get_by_name(REGISTRY_NAME)?,
        ))
    }

    /// Creates or updates a task's entry.
    pub async fn put(&self, entry: &IndexEntry) -> Reply<()> {
        let request = json_request(Method::Post, "/put", Some(entry))?;
        read_outcome(self.0.fetch_with_request(request).await?).await
    }

    /// Removes a deleted task's entry.
    pub async fn delete(&self, task_id: &str) -> Reply<()> {
        let path = format!("/delete?taskId={}", urlencode(task_id));
        let request = json_request::<()>(Method::Post, &path, None)?;
        read_outcome(self.0.fetch_with_request(request).await?).await
    }

    /// `GET /api/tasks`: passes the request's query (`q`, `limit`, `before`) on to the index,
    /// which checks it.
    pub async fn list(&self, query: Option<&str>) -> Result<Response> {
        let target = format!("https://internal/list?{}", query.unwrap_or_default());
        self.0.fetch_with_str(&target).await
    }
}

/// The original request's method and headers (the upgrade among them) for the object.
fn forward(request: &Request) -> Result<RequestInit> {
    let mut init = RequestInit::new();
    init.with_method(request.method())
        .with_headers(request.headers().clone());
    Ok(init)
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// The deployment's webhooks object.
pub struct WebhookClient(Stub);

impl WebhookClient {
    pub fn new(env: &Env) -> Result<Self> {
        Ok(Self(
            env.durable_object(WEBHOOK_DISPATCHER)?
                .get_by_name(REGISTRY_NAME)?,
        ))
    }

    /// Hands a task's events (in order) over for delivery.
    pub async fn report(&self, events: &mimo_protocol::webhooks::WebhookEvents) -> Reply<()> {
        let request = json_request(Method::Post, "/events", Some(events))?;
        read_outcome(self.0.fetch_with_request(request).await?).await
    }

    /// Passes a request of `/api/webhooks` on to the object's `route` (`/create`, `/list`,
    /// `/delete?id=`, `/rotate?id=`, `/deliveries?webhook=`, `/resend?id=`), with `body` for a
    /// POST; its answer as it is.
    pub async fn forward(&self, route: &str, body: Option<String>) -> Result<Response> {
        let mut init = RequestInit::new();
        match body {
            None => init.with_method(Method::Get),
            Some(body) => init.with_method(Method::Post).with_body(Some(body.into())),
        };
        self.0
            .fetch_with_request(Request::new_with_init(
                &format!("https://internal{route}"),
                &init,
            )?)
            .await
    }
}
