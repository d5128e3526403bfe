//! Every store — the task's, its artifacts', the registry's and its credentials, the skill
//! library's and the task index's: schema, queries and row codecs — compiled to wasm32 and run
//! under Node against a real SQLite (Node's `node:sqlite`), through the [`Sql`] trait the
//! Durable Object's SQLite also implements.

use mimo_agent::actions::ActionRecord;
use mimo_agent::credentials::{digest, Principal};
use mimo_agent::mcp::session::Session;
use mimo_agent::records::{AgentRun, ChatSummary, StoredMessage, TaskRecord};
use mimo_agent::task_index::{IndexEntry, ListQuery};
use mimo_protocol::extension::PairRequest;
use mimo_protocol::{
    BrowserInfo, BrowserSnapshot, ChatMessage, ChatRole, ClientId, ErrorCode, ForkedFrom,
    FrontendEvent, TaskList, TaskStatus,
};
use serde::de::DeserializeOwned;
use wasm_bindgen_test::wasm_bindgen_test;
use worker::js_sys::{global, Array, Function, Reflect};
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::{Result, SqlStorageValue};

use crate::action_store::ActionStore;
use crate::artifacts::ArtifactStore;
use crate::clients::AuthFailure;
use crate::credentials::Credentials;
use crate::error::Failure;
use crate::http::now_ms;
use crate::mcp_store::{McpTokens, SessionStore};
use crate::registry_store::{self, RegistryStore};
use crate::skill_store::SkillStore;
use crate::sql::Sql;
use crate::task_index_store::TaskIndexStore;
use crate::task_store::TaskStore;
use mimo_agent::registry::{PresenceReport, Registration};
use mimo_agent::task::{ArtifactGrant, ArtifactStored, Artifacts, ATTACHMENT};

/// An in-memory database of Node's SQLite (`DatabaseSync`), shared by clones.
#[derive(Clone)]
struct NodeSql(JsValue);

impl NodeSql {
    fn open() -> Self {
        let process = Reflect::get(&global(), &"process".into()).unwrap();
        let load: Function = Reflect::get(&process, &"getBuiltinModule".into())
            .unwrap()
            .dyn_into()
            .unwrap();
        let sqlite = load.call1(&process, &"node:sqlite".into()).unwrap();
        let database: Function = Reflect::get(&sqlite, &"DatabaseSync".into())
            .unwrap()
            .dyn_into()
            .unwrap();
        let db = Reflect::construct(&database, &Array::of1(&":memory:".into())).unwrap();
        NodeSql(db)
    }

    fn call(&self, target: &JsValue, method: &str, args: &Array) -> Result<JsValue> {
        let function: Function = Reflect::get(target, &method.into())?.dyn_into()?;
        Ok(function.apply(target, args)?)
    }

    fn statement(&self, query: &str) -> Result<JsValue> {
        self.call(&self.0, "prepare", &Array::of1(&query.into()))
    }
}

fn js_bindings(bindings: Vec<SqlStorageValue>) -> Array {
    bindings.into_iter().map(JsValue::from).collect()
}

impl Sql for NodeSql {
    fn rows<T: DeserializeOwned>(
        &self,
        query: &str,
        bindings: Vec<SqlStorageValue>,
    ) -> Result<Vec<T>> {
        let statement = self.statement(query)?;
        let rows = self.call(&statement, "all", &js_bindings(bindings))?;
        Ok(serde_wasm_bindgen::from_value(rows)?)
    }

    fn run(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Result<()> {
        if bindings.is_empty() {
            // Possibly several statements (a schema), as the Durable Object's `exec` takes them.
            self.call(&self.0, "exec", &Array::of1(&query.into()))?;
        } else {
            let statement = self.statement(query)?;
            self.call(&statement, "run", &js_bindings(bindings))?;
        }
        Ok(())
    }
}

fn task(status: TaskStatus) -> TaskRecord {
    TaskRecord {
        task_id: "3f2b8c4e-9a1d-4e7f-8b2c-0d5e6f7a8b9c".into(),
        status,
        title: Some("buy a mug — «blue», 12 €".into()),
        selected_client_id: None,
        current_turn: Some("m3".into()),
        message_ids_issued: 3,
        created_at: 1_700_000_000_000,
        updated_at: 1_700_000_000_123,
        start_tab: Some(1_234_567),
        answer_schema: Some(serde_json::json!({ "type": "object", "required": ["price"] })),
        domains: mimo_protocol::DomainPolicy {
            allowed: vec!["shop.example".into()],
            blocked: vec!["pay.shop.example".into()],
        },
        step_by_step: true,
        forked_from: Some(mimo_protocol::task::ForkedFrom {
            task_id: "source-task".into(),
            message_id: "m4".into(),
        }),
        allow_bridge: true,
        confirm_bridge: false,
        script_bounds: Some(mimo_agent::actions::ScriptBounds {
            take_ms: 300_000,
            report_ms: 1_800_000,
        }),
    }
}

fn message(position: u32, role: ChatRole, client_message_id: Option<&str>) -> StoredMessage {
    StoredMessage {
        position,
        message: ChatMessage {
            message_id: format!("m{}", position + 1),
            role,
            content: format!("message at {position}\nwith a second line"),
            created_at: 1_700_000_000_000 + u64::from(position),
            client_message_id: client_message_id.map(str::to_owned),
            // An assistant answer is stored as a regenerated, superseded one.
            version: (role == ChatRole::Assistant).then_some(2),
            superseded: role == ChatRole::Assistant,
        },
    }
}

#[wasm_bindgen_test]
fn the_task_row_and_its_messages_read_back_as_written() {
    let store = TaskStore::open(NodeSql::open()).unwrap();
    assert_eq!(store.load_task().unwrap(), None);
    for status in [
        TaskStatus::Created,
        TaskStatus::WaitingConfirmation,
        TaskStatus::Takeover,
    ] {
        let mut record = task(status);
        record.selected_client_id = Some("client-1".into());
        store.save_task(&record).unwrap();
        assert_eq!(store.load_task().unwrap(), Some(record));
    }
    // Stored out of order (a reply keeps the place reserved when its turn started).
    let messages = [
        message(2, ChatRole::User, Some("c-2")),
        message(0, ChatRole::User, Some("c-1")),
        message(1, ChatRole::Assistant, None),
    ];
    for m in &messages {
        store.save_message(m).unwrap();
    }
    let loaded = store.load_messages().unwrap();
    let positions: Vec<u32> = loaded.iter().map(|m| m.position).collect();
    assert_eq!(positions, [0, 1, 2]);
    assert_eq!(loaded[0], messages[1]);
    assert_eq!(loaded[1], messages[2]);
    assert_eq!(loaded[2], messages[0]);
}

#[wasm_bindgen_test]
fn the_event_log_numbers_events_in_order_and_replays_after_a_sequence_number() {
    let store = TaskStore::open(NodeSql::open()).unwrap();
    assert_eq!(store.last_seq().unwrap(), 0);
    let task_id = "t1";
    let mut sent = Vec::new();
    for n in 0..5 {
        let event = FrontendEvent::ChatDelta {
            message_id: "m2".into(),
            delta: format!("part {n} \"quoted\""),
            finished: n == 4,
        };
        sent.push(store.append_event(task_id, event, 100 + n).unwrap());
    }
    let seqs: Vec<Option<u64>> = sent.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [Some(1), Some(2), Some(3), Some(4), Some(5)]);
    assert_eq!(store.last_seq().unwrap(), 5);
    assert_eq!(store.events_after(task_id, 0).unwrap(), sent);
    assert_eq!(store.events_after(task_id, 3).unwrap(), sent[3..]);
    assert!(store.events_after(task_id, 5).unwrap().is_empty());
}

#[wasm_bindgen_test]
fn the_run_and_the_snapshot_read_back_and_clear_forgets_everything() {
    let store = TaskStore::open(NodeSql::open()).unwrap();
    let run: AgentRun = serde_json::from_str(include_str!(
        "../../agent/src/conversation/run/stored/agent_run.json"
    ))
    .unwrap();
    store.save_run(Some(&run)).unwrap();
    assert_eq!(store.load_run().unwrap(), Some(run));
    store.save_run(None).unwrap();
    assert_eq!(store.load_run().unwrap(), None);
    let snapshot = BrowserSnapshot::default();
    store.save_snapshot("client-1", &snapshot).unwrap();
    assert_eq!(
        store.load_snapshot().unwrap(),
        Some(("client-1".to_owned(), snapshot))
    );
    store.save_task(&task(TaskStatus::Running)).unwrap();
    store
        .save_message(&message(0, ChatRole::User, None))
        .unwrap();
    store
        .append_event("t1", FrontendEvent::Ready { last_seq: 0 }, 1)
        .unwrap();
    store.clear().unwrap();
    assert_eq!(store.load_task().unwrap(), None);
    assert!(store.load_messages().unwrap().is_empty());
    assert_eq!(store.last_seq().unwrap(), 0);
    assert_eq!(store.load_snapshot().unwrap(), None);
}

#[wasm_bindgen_test]
fn compactions_are_all_kept_and_the_one_reaching_furthest_is_used() {
    let sql = NodeSql::open();
    let store = TaskStore::open(sql.clone()).unwrap();
    assert_eq!(store.load_summary().unwrap(), None);
    let summary = |up_to: u32, text: &str| ChatSummary {
        up_to,
        text: text.to_owned(),
        messages: up_to + 1,
        created_at: u64::from(up_to) * 10,
    };
    store.save_summary(&summary(9, "the second")).unwrap();
    store.save_summary(&summary(3, "the first")).unwrap();
    assert_eq!(
        store.load_summary().unwrap(),
        Some(summary(9, "the second"))
    );
    let rows: Vec<serde_json::Value> = sql.rows("SELECT up_to FROM summaries", vec![]).unwrap();
    assert_eq!(rows.len(), 2, "the earlier one is kept as a record");
    store.clear().unwrap();
    assert_eq!(store.load_summary().unwrap(), None);
}

#[wasm_bindgen_test]
fn messages_stored_before_client_message_ids_existed_gain_the_column_and_still_read() {
    let sql = NodeSql::open();
    // The messages table as the first release created it.
    sql.run(
        "CREATE TABLE messages (message_id TEXT PRIMARY KEY, position INTEGER NOT NULL, \
         role TEXT NOT NULL, content TEXT NOT NULL, created_at INTEGER NOT NULL); \
         INSERT INTO messages VALUES ('m1', 0, 'user', 'hello', 5);",
        Vec::new(),
    )
    .unwrap();
    let store = TaskStore::open(sql.clone()).unwrap();
    let loaded = store.load_messages().unwrap();
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].message.content, "hello");
    assert_eq!(loaded[0].message.client_message_id, None);
    store
        .save_message(&message(1, ChatRole::User, Some("c-9")))
        .unwrap();
    // Opening again finds the column there.
    let again = TaskStore::open(sql).unwrap();
    assert_eq!(
        again.load_messages().unwrap()[1]
            .message
            .client_message_id
            .as_deref(),
        Some("c-9")
    );
}

#[wasm_bindgen_test]
fn action_records_read_back_in_creation_order_and_replace_by_id() {
    let store = ActionStore::open(NodeSql::open()).unwrap();
    let sample: ActionRecord = serde_json::from_str(include_str!(
        "../../agent/src/conversation/run/stored/action_record.json"
    ))
    .unwrap();
    let mut later = sample.clone();
    later.action_id = "later".into();
    later.created_at = sample.created_at + 10;
    store.save(&later).unwrap();
    store.save(&sample).unwrap();
    assert_eq!(store.load().unwrap(), [sample.clone(), later.clone()]);
    let mut finished = later.clone();
    finished.finished_at = Some(later.created_at + 5);
    store.save(&finished).unwrap();
    assert_eq!(store.load().unwrap(), [sample, finished]);
    store.clear().unwrap();
    assert!(store.load().unwrap().is_empty());
}

fn pair_request(code: &str, replaces: Option<&str>) -> PairRequest {
    PairRequest {
        code: code.into(),
        replaces: replaces.map(Into::into),
    }
}

#[wasm_bindgen_test]
fn a_pairing_code_pairs_once_and_pairing_again_keeps_the_id_and_revokes_the_old_credential() {
    let credentials = Credentials::open(NodeSql::open()).unwrap();
    let code = credentials.new_pairing_code().unwrap().code;
    let paired = credentials
        .pair(&pair_request(&code.to_lowercase().replace('-', ""), None))
        .unwrap();
    let id = paired.client_id.clone();
    assert!(
        id.as_str().starts_with("ext-") && id.as_str().len() == 36,
        "an id of the server's: {id}"
    );
    assert_eq!(
        credentials.client_of(&paired.token).unwrap(),
        Some(id.clone())
    );
    assert!(credentials.is_paired(id.as_str()).unwrap());
    // Used once.
    match credentials.pair(&pair_request(&code, None)) {
        Err(Failure::Refused(error)) => assert_eq!(error.code, ErrorCode::Unauthorized),
        other => panic!("a used code pairs again: {:?}", other.map(|p| p.client_id)),
    }
    // Another extension gets an id of its own, and its pairing revokes nothing.
    let other = credentials
        .pair(&pair_request(
            &credentials.new_pairing_code().unwrap().code,
            None,
        ))
        .unwrap();
    assert_ne!(other.client_id, id);
    assert_eq!(
        credentials.client_of(&paired.token).unwrap(),
        Some(id.clone())
    );
    // Pairing the same extension again: its id kept, one extension, one credential.
    let second = credentials.new_pairing_code().unwrap().code;
    let again = credentials
        .pair(&pair_request(&second, Some(&paired.token)))
        .unwrap();
    assert_eq!(again.client_id, id);
    assert_eq!(credentials.client_of(&paired.token).unwrap(), None);
    // What the client's object is handed over to check: the new token's digest.
    assert_eq!(
        credentials.standing_digest(id.as_str()).unwrap(),
        Some(digest(&again.token))
    );
    assert_eq!(
        credentials.client_of(&again.token).unwrap(),
        Some(id.clone())
    );
    // A credential that never was one keeps nothing: a new id.
    let third = credentials.new_pairing_code().unwrap().code;
    let fresh = credentials
        .pair(&pair_request(&third, Some("mimo_ext_forged")))
        .unwrap();
    assert_ne!(fresh.client_id, id);
    assert_eq!(
        credentials.client_of(&again.token).unwrap(),
        Some(id.clone())
    );
    assert!(credentials.revoke(id.as_str()).unwrap());
    assert_eq!(credentials.client_of(&again.token).unwrap(), None);
    assert!(!credentials.is_paired(id.as_str()).unwrap());
    assert_eq!(credentials.standing_digest(id.as_str()).unwrap(), None);
    assert!(!credentials.revoke(id.as_str()).unwrap());
    // Revoked, then paired again by the person with a new code: the same extension, its id kept.
    let fourth = credentials.new_pairing_code().unwrap().code;
    let back = credentials
        .pair(&pair_request(&fourth, Some(&again.token)))
        .unwrap();
    assert_eq!(back.client_id, id);
    assert_eq!(
        credentials.client_of(&again.token).unwrap(),
        None,
        "the revoked one stays dead"
    );
}

#[wasm_bindgen_test]
fn a_ticket_opens_one_socket_and_dies_with_its_extensions_credential_or_the_token() {
    let credentials = Credentials::open(NodeSql::open()).unwrap();
    let web = credentials
        .new_ticket(&Principal::Deployment, "gen-1")
        .unwrap();
    assert_eq!(
        credentials.redeem(&web.ticket, "gen-1").unwrap(),
        Some(Principal::Deployment)
    );
    assert_eq!(
        credentials.redeem(&web.ticket, "gen-1").unwrap(),
        None,
        "single use"
    );
    assert_eq!(
        credentials.redeem("mimo_ticket_forged", "gen-1").unwrap(),
        None
    );
    // Bought under a deployment token since rotated: void (and used up).
    let stale = credentials
        .new_ticket(&Principal::Deployment, "gen-1")
        .unwrap();
    assert_eq!(credentials.redeem(&stale.ticket, "gen-2").unwrap(), None);
    assert_eq!(credentials.redeem(&stale.ticket, "gen-1").unwrap(), None);
    let code = credentials.new_pairing_code().unwrap().code;
    let paired = credentials.pair(&pair_request(&code, None)).unwrap();
    let extension = Principal::Extension {
        client_id: paired.client_id.clone(),
    };
    let ticket = credentials.new_ticket(&extension, "gen-2").unwrap();
    credentials.revoke(paired.client_id.as_str()).unwrap();
    assert_eq!(credentials.redeem(&ticket.ticket, "gen-2").unwrap(), None);
}

#[wasm_bindgen_test]
fn failed_authentications_are_counted_per_client_until_it_is_blocked() {
    let credentials = Credentials::open(NodeSql::open()).unwrap();
    let failure = |client: &str| AuthFailure {
        client: client.into(),
        max_failures: 3,
        window_ms: 60_000,
    };
    // Three failures are allowed; the fourth in the window blocks.
    for _ in 0..3 {
        assert_eq!(credentials.failed(&failure("1.2.3.4")).unwrap(), None);
    }
    // Another client's failures are its own.
    assert_eq!(credentials.failed(&failure("5.6.7.8")).unwrap(), None);
    let blocked = credentials.failed(&failure("1.2.3.4")).unwrap();
    assert!(blocked.is_some_and(|until| until > now_ms()), "{blocked:?}");
}

#[wasm_bindgen_test]
fn an_artifacts_record_is_kept_as_the_task_machine_has_it_and_read_back_whole() {
    let store = ArtifactStore::open(NodeSql::open()).unwrap();
    let mut artifacts = Artifacts::default();
    let grant = |id: &str, kind: &str, name: Option<&str>| ArtifactGrant {
        artifact_id: id.into(),
        kind: kind.into(),
        key: format!("tasks/t/{kind}/{id}"),
        content_type: "image/png".into(),
        max_length: 1_000,
        action_id: (kind == "screenshot").then(|| "act-1".into()),
        name: name.map(Into::into),
    };
    for (id, kind, name, at) in [
        ("a1", "screenshot", None, 10),
        ("f1", ATTACHMENT, Some("id card.pdf"), 11),
    ] {
        let granted = artifacts.grant(grant(id, kind, name), at).unwrap();
        store.save(&granted).unwrap();
    }
    let stored = ArtifactStored {
        artifact_id: "f1".into(),
        size: 640,
        sha256: "ab".repeat(32),
    };
    store.save(&artifacts.stored(stored, 20).unwrap()).unwrap();
    let expected = vec![
        artifacts.get("a1").unwrap().clone(),
        artifacts.get("f1").unwrap().clone(),
    ];
    let mut read = store.all().unwrap();
    read.sort_by(|a, b| a.artifact_id.cmp(&b.artifact_id));
    assert_eq!(
        read, expected,
        "a grant, and a completed upload replacing its grant"
    );
    assert_eq!(
        Artifacts::restore(read).attachments()[0].name,
        "id card.pdf"
    );
    store.forget(&["a1".to_owned()]).unwrap();
    assert_eq!(store.all().unwrap().len(), 1);
    store.clear().unwrap();
    assert!(store.all().unwrap().is_empty());
}

#[wasm_bindgen_test]
fn the_registry_keeps_extensions_bindings_and_snapshots() {
    let store = RegistryStore::open(NodeSql::open()).unwrap();
    let report = |client: &str, at, hello| PresenceReport {
        client_id: ClientId::parse(client).unwrap(),
        socket: true,
        polled_at: None,
        at,
        hello,
    };
    store.report(&report("ext-1", 10, None)).unwrap();
    store.report(&report("ext-2", 20, None)).unwrap();
    // Reported again: only "last seen" moves.
    store.report(&report("ext-1", 30, None)).unwrap();
    let browser = BrowserInfo {
        name: "Chromium".into(),
        version: "140".into(),
        user_agent: "Mozilla/5.0 (X11; Linux x86_64)".into(),
    };
    let hello = Registration {
        name: "Work laptop".into(),
        browser: browser.clone(),
        extension_version: "0.3.0".into(),
    };
    store.report(&report("ext-2", 40, Some(hello))).unwrap();
    let mut gone = report("ext-1", 35, None);
    gone.socket = false;
    gone.polled_at = Some(33);
    store.report(&gone).unwrap();
    let presence = store.presence("ext-1").unwrap().unwrap();
    assert!(!presence.socket);
    assert_eq!((presence.polled_at, presence.reported_at), (Some(33), 35));
    assert_eq!(store.presence("ext-3").unwrap(), None);
    let clients = store.clients().unwrap();
    let order: Vec<(&str, u64)> = clients
        .iter()
        .map(|c| (c.client_id.as_str(), c.last_seen_at))
        .collect();
    assert_eq!(
        order,
        [("ext-2", 40), ("ext-1", 35)],
        "most recently seen first"
    );
    assert_eq!(clients[0].browser.as_ref(), Some(&browser));
    assert_eq!(clients[0].name, "Work laptop");
    assert_eq!(clients[0].extension_version, "0.3.0");
    assert_eq!(clients[1].last_used_at, None);

    store.bind("task-a", "ext-1", 50).unwrap();
    store.bind("task-b", "ext-1", 51).unwrap();
    store.bind("task-c", "ext-2", 52).unwrap();
    // Rebinding moves a task.
    store.bind("task-a", "ext-2", 53).unwrap();
    assert_eq!(
        store.binding_of("task-a").unwrap().as_deref(),
        Some("ext-2")
    );
    assert_eq!(store.binding_of("task-none").unwrap(), None);
    assert_eq!(store.tasks_of("ext-2", 20).unwrap(), ["task-a", "task-c"]);
    assert_eq!(store.tasks_of("ext-2", 1).unwrap(), ["task-a"]);
    assert_eq!(store.tasks_of("ext-1", 20).unwrap(), ["task-b"]);
    let used: Vec<Option<u64>> = store
        .clients()
        .unwrap()
        .iter()
        .map(|c| c.last_used_at)
        .collect();
    assert_eq!(used, [Some(53), Some(51)]);

    assert_eq!(store.snapshot("ext-1").unwrap(), None);
    let snapshot = BrowserSnapshot::default();
    store.save_snapshot("ext-1", &snapshot).unwrap();
    assert_eq!(store.snapshot("ext-1").unwrap(), Some(snapshot));
}

#[wasm_bindgen_test]
fn the_directory_hands_a_clients_state_over_to_its_object_numbering_and_all() {
    let directory = RegistryStore::open(NodeSql::open()).unwrap();
    directory.bind("task-a", "ext-1", 50).unwrap();
    directory.bind("task-b", "ext-2", 51).unwrap();
    directory
        .save_snapshot("ext-1", &BrowserSnapshot::default())
        .unwrap();
    directory.polled("ext-1", 60).unwrap();
    directory.keep("ext-1", "f1", 100).unwrap();
    directory.keep("ext-2", "other", 100).unwrap();
    directory.keep("ext-1", "f2", 200).unwrap();
    assert_eq!(directory.next_epoch("ext-1").unwrap(), 1);
    assert_eq!(directory.next_epoch("ext-1").unwrap(), 2);
    assert_eq!(directory.epoch("ext-2").unwrap(), 0);

    let handed = directory.hand_over("ext-1", Some("d1".into())).unwrap();
    assert_eq!(handed.epoch, 2);
    assert!(handed.paired);
    assert_eq!(handed.bindings, [("task-a".to_owned(), 50)]);
    assert_eq!(handed.polled_at, Some(60));
    assert_eq!(handed.snapshot, Some(BrowserSnapshot::default()));
    let frames: Vec<&str> = handed.outbox.iter().map(|k| k.frame.as_str()).collect();
    assert_eq!(frames, ["f1", "f2"]);
    assert_eq!(handed.last_seq, 3);
    // The directory keeps the binding (it is the authority), and forgets the rest.
    assert_eq!(
        directory.binding_of("task-a").unwrap().as_deref(),
        Some("ext-1")
    );
    assert_eq!(directory.snapshot("ext-1").unwrap(), None);
    assert_eq!(directory.polled_at("ext-1").unwrap(), None);
    assert_eq!(directory.undelivered("ext-1", 0, 0, 50).unwrap(), []);
    assert_eq!(directory.undelivered("ext-2", 0, 0, 50).unwrap().len(), 1);

    let object = RegistryStore::open(NodeSql::open()).unwrap();
    object.take_over("ext-1", &handed).unwrap();
    assert_eq!(
        object.binding_of("task-a").unwrap().as_deref(),
        Some("ext-1")
    );
    assert_eq!(object.polled_at("ext-1").unwrap(), Some(60));
    assert_eq!(object.state(registry_store::EPOCH).unwrap(), Some(2));
    assert_eq!(object.state(registry_store::REVOKED).unwrap(), Some(0));
    assert_eq!(object.state(registry_store::HANDED_OVER).unwrap(), Some(1));
    // The token's digest, which the object checks the extension's requests against from now
    // on; forgotten when the credential is revoked.
    assert_eq!(object.credential().unwrap().as_deref(), Some("d1"));
    object.set_credential(Some("d2")).unwrap();
    assert_eq!(object.credential().unwrap().as_deref(), Some("d2"));
    object.set_credential(None).unwrap();
    assert_eq!(object.credential().unwrap(), None);
    // A client with no credential standing is handed over unpaired.
    assert!(!directory.hand_over("ext-2", None).unwrap().paired);
    // The same numbers (f2 stays 3; 2 was ext-2's "other"), and the next frame numbered after
    // every one the directory gave: the extension's acknowledgement of 3 does not forget it.
    let kept = object.undelivered("ext-1", 0, 0, 50).unwrap();
    assert_eq!(kept, [(1, "f1".to_owned()), (3, "f2".to_owned())]);
    object.keep("ext-1", "f3", 300).unwrap();
    assert_eq!(
        object.undelivered("ext-1", 3, 0, 50).unwrap(),
        [(4, "f3".to_owned())]
    );
}

#[wasm_bindgen_test]
fn the_registrys_outbox_numbers_frames_forgets_acknowledged_and_stale_ones_and_hands_the_rest_over()
{
    let store = RegistryStore::open(NodeSql::open()).unwrap();
    store.keep("ext-1", "f1", 100).unwrap();
    store.keep("ext-2", "other", 100).unwrap();
    store.keep("ext-1", "f2", 200).unwrap();
    store.keep("ext-1", "f3", 300).unwrap();
    let kept = store.undelivered("ext-1", 0, 0, 50).unwrap();
    let frames: Vec<&str> = kept.iter().map(|(_, f)| f.as_str()).collect();
    assert_eq!(
        frames,
        ["f1", "f2", "f3"],
        "in order, the client's own only"
    );
    let seqs: Vec<u64> = kept.iter().map(|(seq, _)| *seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    // At most `limit`.
    assert_eq!(store.undelivered("ext-1", 0, 0, 1).unwrap().len(), 1);
    // Acknowledged up to the first: it is forgotten.
    let after_ack = store.undelivered("ext-1", seqs[0], 0, 50).unwrap();
    assert_eq!(after_ack, kept[1..]);
    assert_eq!(store.undelivered("ext-1", 0, 0, 50).unwrap(), kept[1..]);
    // Kept before 300: stale, dropped unread.
    assert_eq!(store.undelivered("ext-1", 0, 300, 50).unwrap(), kept[2..]);
    // A socket takes what is left, and nothing stays kept.
    store.keep("ext-1", "f4", 400).unwrap();
    assert_eq!(store.take_undelivered("ext-1", 350).unwrap(), ["f4"]);
    assert_eq!(store.undelivered("ext-1", 0, 0, 50).unwrap(), []);
    assert_eq!(store.undelivered("ext-2", 0, 0, 50).unwrap().len(), 1);
}

#[wasm_bindgen_test]
fn a_tasks_secrets_are_stored_sealed_listed_without_values_and_deleted() {
    use crate::secret_store::SecretStore;
    use mimo_agent::secrets::SecretsKey;
    let sql = NodeSql::open();
    let store = SecretStore::open(sql.clone()).unwrap();
    let key = SecretsKey::from_setting("the deployment's secrets key").unwrap();
    let domains = vec!["example.com".to_owned()];
    store
        .put(&key, [1; 12], "pw", "plain-value-42", &domains, 5)
        .unwrap();
    let rows: Vec<serde_json::Value> = sql.rows("SELECT * FROM secrets", vec![]).unwrap();
    assert!(!serde_json::to_string(&rows)
        .unwrap()
        .contains("plain-value-42"));
    assert!(!serde_json::to_string(&rows)
        .unwrap()
        .contains(&hex::encode("plain-value-42")));
    let listed = store.list().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].name, "pw");
    assert_eq!(listed[0].domains, domains);
    let opened = store.open_all(&key).unwrap();
    assert_eq!(opened[0].value, "plain-value-42");
    let other = SecretsKey::from_setting("a different secrets key").unwrap();
    assert!(store.open_all(&other).unwrap().is_empty());
    // Replaced, then deleted.
    store
        .put(&key, [2; 12], "pw", "new-value", &domains, 6)
        .unwrap();
    assert_eq!(store.open_all(&key).unwrap()[0].value, "new-value");
    assert!(store.delete("pw").unwrap());
    assert!(!store.delete("pw").unwrap());
    assert!(store.list().unwrap().is_empty());
}

#[wasm_bindgen_test]
fn a_secret_is_released_once_per_action_attempt_even_after_a_restart() {
    use crate::secret_store::SecretStore;
    let sql = NodeSql::open();
    let store = SecretStore::open(sql.clone()).unwrap();
    assert!(store.release("a1", 1, "pw").unwrap());
    assert!(!store.release("a1", 1, "pw").unwrap());
    // Another secret of the same typing, the next attempt, another action: each once.
    assert!(store.release("a1", 1, "user").unwrap());
    assert!(store.release("a1", 2, "pw").unwrap());
    assert!(store.release("a2", 1, "pw").unwrap());
    // The object restarted: what was given stays given.
    let reopened = SecretStore::open(sql).unwrap();
    assert!(!reopened.release("a1", 2, "pw").unwrap());
}

fn skill_md(name: &str, description: &str, sites: &str, body: &str) -> mimo_protocol::Skill {
    let text =
        format!("---\nname: {name}\ndescription: {description}\nsites: [{sites}]\n---\n{body}\n");
    mimo_agent::skills::parse(name, &text, 7).unwrap()
}

#[wasm_bindgen_test]
fn skills_are_stored_found_by_their_words_and_chosen_for_a_page() {
    let store = SkillStore::open(NodeSql::open()).unwrap();
    let expense = skill_md(
        "file-expense",
        "File an expense claim",
        "portal.test",
        "Open the portal and attach the receipts.",
    );
    let shop = skill_md(
        "shop-checkout",
        "Buy from the shop",
        "shop.test",
        "Pay by card.",
    );
    let careful = skill_md(
        "careful",
        "Confirm before paying",
        "",
        "Ask before any payment.",
    );
    assert!(store.put(&expense).unwrap(), "new");
    assert!(store.put(&shop).unwrap());
    assert!(store.put(&careful).unwrap());
    assert_eq!(store.count().unwrap(), 3);
    assert_eq!(store.get("file-expense").unwrap(), Some(expense.clone()));
    let names = |skills: Vec<mimo_protocol::Skill>| -> Vec<String> {
        skills.into_iter().map(|s| s.name).collect()
    };
    assert_eq!(
        names(store.list().unwrap()),
        ["careful", "file-expense", "shop-checkout"]
    );

    // A word of the steps finds it, stemmed ("receipt" finds "receipts"), with where it matched.
    let hits = store.search("the receipt").unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].skill, expense);
    assert!(
        hits[0].snippet.contains("[receipts]"),
        "{}",
        hits[0].snippet
    );
    // A word of the name weighs more than one of the steps.
    let hits = store.search("pay checkout").unwrap();
    assert_eq!(
        hits.iter()
            .map(|h| h.skill.name.as_str())
            .collect::<Vec<_>>(),
        ["shop-checkout", "careful"]
    );
    assert!(
        store.search("the on my").unwrap().is_empty(),
        "stop words match nothing"
    );
    assert!(
        store.search("\"AND OR (").unwrap().is_empty(),
        "no operator reaches FTS5"
    );

    // Before any page the goal's hits; on a page its site's skills and general hits.
    assert_eq!(
        names(store.matching("pay at the shop", None).unwrap()),
        ["shop-checkout", "careful"]
    );
    assert_eq!(
        names(
            store
                .matching("pay for lunch", Some("http://portal.test/new"))
                .unwrap()
        ),
        ["file-expense", "careful"]
    );

    // Replaced: the old words no longer find it, the new ones do.
    let replaced = skill_md(
        "file-expense",
        "File an expense claim",
        "portal.test",
        "Use the travel form.",
    );
    assert!(!store.put(&replaced).unwrap(), "replaced");
    assert!(store.search("receipts").unwrap().is_empty());
    assert_eq!(store.search("travel").unwrap()[0].skill, replaced);
    assert_eq!(store.count().unwrap(), 3);
    // Deleted: gone from the list and the index.
    assert!(store.delete("file-expense").unwrap());
    assert!(!store.delete("file-expense").unwrap());
    assert!(store.search("travel").unwrap().is_empty());
    assert_eq!(store.get("file-expense").unwrap(), None);
}

fn index_entry(task_id: &str, title: Option<&str>, status: TaskStatus, at: u64) -> IndexEntry {
    IndexEntry {
        task_id: task_id.into(),
        title: title.map(str::to_owned),
        status,
        created_at: at,
        last_activity_at: at,
        forked_from: None,
    }
}

fn listed(store: &TaskIndexStore<NodeSql>, q: Option<&str>, before: Option<&str>) -> TaskList {
    store
        .list(&ListQuery::parse(q, Some("2"), before).unwrap())
        .unwrap()
}

fn ids(list: &TaskList) -> Vec<&str> {
    list.tasks.iter().map(|t| t.task_id.as_str()).collect()
}

#[wasm_bindgen_test]
fn the_task_index_lists_by_last_activity_pages_searches_titles_and_links_forks() {
    let store = TaskIndexStore::open(NodeSql::open()).unwrap();
    store
        .put(&index_entry(
            "a",
            Some("Find the cheapest flight"),
            TaskStatus::Completed,
            100,
        ))
        .unwrap();
    store
        .put(&index_entry(
            "b",
            Some("查找最便宜的航班"),
            TaskStatus::Running,
            200,
        ))
        .unwrap();
    store
        .put(&index_entry("c", None, TaskStatus::Created, 300))
        .unwrap();
    store
        .put(&index_entry(
            "d",
            Some("Buy 2 mugs (50% off_sale)"),
            TaskStatus::Error,
            300,
        ))
        .unwrap();

    // Newest activity first (a tie by task id, descending), two a page, then the rest.
    let first = listed(&store, None, None);
    assert_eq!(ids(&first), ["d", "c"]);
    assert_eq!(first.next_before.as_deref(), Some("300_c"));
    let second = listed(&store, None, first.next_before.as_deref());
    assert_eq!(ids(&second), ["b", "a"]);
    assert_eq!(second.next_before, None, "the last page");
    let b = &second.tasks[0];
    assert_eq!(
        (
            b.title.as_deref(),
            b.status,
            b.created_at,
            b.last_activity_at
        ),
        (Some("查找最便宜的航班"), TaskStatus::Running, 200, 200)
    );
    assert_eq!(first.tasks[1].title, None);

    // Every word must be in the title, in any case (Unicode's), anywhere in it; CJK by its
    // characters, shorter than a trigram too.
    assert_eq!(ids(&listed(&store, Some("CHEAP flight"), None)), ["a"]);
    assert_eq!(
        ids(&listed(&store, Some("cheap train"), None)),
        Vec::<&str>::new()
    );
    assert_eq!(ids(&listed(&store, Some("航班"), None)), ["b"]);
    store
        .put(&index_entry(
            "e",
            Some("Ärger mit der Straße"),
            TaskStatus::Canceled,
            10,
        ))
        .unwrap();
    assert_eq!(ids(&listed(&store, Some("ärger STRAẞE"), None)), ["e"]);
    assert!(store.delete("e").unwrap());
    assert_eq!(ids(&listed(&store, Some("便宜的航"), None)), ["b"]);
    assert_eq!(ids(&listed(&store, Some("e"), None)), ["d", "a"]);
    // LIKE's wildcards are matched as themselves.
    assert_eq!(ids(&listed(&store, Some("50%"), None)), ["d"]);
    assert_eq!(ids(&listed(&store, Some("%"), None)), ["d"]);
    assert_eq!(ids(&listed(&store, Some("f_s"), None)), ["d"]);
    assert_eq!(ids(&listed(&store, Some("t_e"), None)), Vec::<&str>::new());

    // Updated: a new title is searched, the old one no longer; activity never goes back.
    store
        .put(&index_entry(
            "c",
            Some("Reply to Ana"),
            TaskStatus::Running,
            400,
        ))
        .unwrap();
    store
        .put(&index_entry(
            "a",
            Some("Find the cheapest flight"),
            TaskStatus::Completed,
            50,
        ))
        .unwrap();
    assert_eq!(ids(&listed(&store, Some("ana"), None)), ["c"]);
    assert_eq!(ids(&listed(&store, None, None)), ["c", "d"]);
    let all = store
        .list(&ListQuery::parse(None, None, None).unwrap())
        .unwrap();
    assert_eq!(ids(&all), ["c", "d", "b", "a"]);
    assert_eq!(
        all.tasks[3].last_activity_at, 100,
        "a late report keeps the newer activity"
    );

    // A fork names its origin and the origin lists its forks, the oldest first; a report
    // without the origin keeps it.
    let origin = ForkedFrom {
        task_id: "a".into(),
        message_id: "m-3".into(),
    };
    for (fork, at) in [("f2", 600), ("f1", 500)] {
        store
            .put(&IndexEntry {
                forked_from: Some(origin.clone()),
                ..index_entry(
                    fork,
                    Some("Find the cheapest flight"),
                    TaskStatus::Created,
                    at,
                )
            })
            .unwrap();
    }
    store
        .put(&index_entry("f1", Some("Fork"), TaskStatus::Running, 700))
        .unwrap();
    let all = store
        .list(&ListQuery::parse(None, None, None).unwrap())
        .unwrap();
    let entry = |id: &str| all.tasks.iter().find(|t| t.task_id == id).unwrap().clone();
    assert_eq!(entry("a").forks, ["f1", "f2"]);
    assert_eq!(entry("f1").forked_from, Some(origin.clone()));
    assert_eq!(entry("f2").forked_from, Some(origin));
    assert!(entry("b").forks.is_empty() && entry("b").forked_from.is_none());

    // Deleted: gone from the list and the search; its forks still name it.
    assert!(store.delete("a").unwrap());
    assert!(!store.delete("a").unwrap());
    assert_eq!(ids(&listed(&store, Some("cheapest"), None)), ["f2"]);
    let all = store
        .list(&ListQuery::parse(None, None, None).unwrap())
        .unwrap();
    assert_eq!(ids(&all), ["f1", "f2", "c", "d", "b"]);
}

#[wasm_bindgen_test]
fn mcp_tokens_are_kept_as_digests_listed_without_secrets_and_revoked_for_good() {
    let tokens = McpTokens::open(NodeSql::open()).unwrap();
    let mut random = [7u8; 40];
    let first = tokens.create("Claude Code", &random, 10).unwrap();
    random[0] = 8;
    random[39] = 9;
    let second = tokens.create("Inspector", &random, 20).unwrap();
    assert!(first.token.starts_with("mimo_mcp_") && first.token.len() == 9 + 64);
    assert!(first.id.starts_with("mcp-") && first.id != second.id);
    assert_eq!(
        tokens.check(&first.token, MCP, 0).unwrap(),
        Some(first.id.clone())
    );
    assert_eq!(tokens.check("mimo_mcp_nope", MCP, 0).unwrap(), None);
    let listed = tokens.list().unwrap().tokens;
    assert_eq!(
        listed.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["Inspector", "Claude Code"],
        "newest first"
    );
    // Only the digest is stored: the secret appears nowhere in the table.
    let rows: Vec<serde_json::Value> = tokens_sql(&tokens);
    assert!(!serde_json::to_string(&rows).unwrap().contains(&first.token));
    assert!(tokens.revoke(&first.id, 30).unwrap());
    assert!(!tokens.revoke(&first.id, 31).unwrap(), "once");
    assert_eq!(tokens.check(&first.token, MCP, 0).unwrap(), None);
    assert_eq!(tokens.list().unwrap().tokens.len(), 1);
    assert_eq!(
        tokens.check(&second.token, MCP, 0).unwrap(),
        Some(second.id)
    );
}

const MCP: &str = "https://mimo.example/mcp";

#[wasm_bindgen_test]
fn an_oauth_code_gives_tokens_once_refreshes_rotate_and_revoking_ends_the_grant() {
    use mimo_agent::mcp::oauth::{authorize, register, IssuedCode, ACCESS_TOKEN_TTL_MS};
    use mimo_protocol::oauth::ClientRegistration;
    let tokens = McpTokens::open(NodeSql::open()).unwrap();
    let registration = ClientRegistration {
        redirect_uris: vec!["http://127.0.0.1:9/cb".into()],
        client_name: Some("Claude".into()),
        ..ClientRegistration::default()
    };
    let client = register(&registration, "mcpc-1".into(), 0).unwrap();
    tokens.register_client(&client).unwrap();
    assert_eq!(tokens.client("mcpc-1").unwrap(), Some(client.clone()));
    assert_eq!(tokens.client("mcpc-2").unwrap(), None);
    // RFC 7636's example pair.
    let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    let query: Vec<(String, String)> = [
        ("response_type", "code"),
        ("client_id", "mcpc-1"),
        (
            "code_challenge",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        ),
        ("code_challenge_method", "S256"),
    ]
    .iter()
    .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
    .collect();
    let request = authorize(&query, Some(&client), MCP).unwrap();
    let code = tokens
        .issue_code(&IssuedCode::new(request, 100), &[1; 32], 100)
        .unwrap();
    let exchange = |verifier: &str, random: u8, now: u64| {
        tokens
            .exchange_code(
                &code,
                "mcpc-1",
                "http://127.0.0.1:9/cb",
                verifier,
                &[random; 72],
                now,
            )
            .unwrap()
    };
    assert_eq!(
        exchange("x".repeat(43).as_str(), 2, 200).unwrap_err().error,
        "invalid_grant"
    );
    let first = exchange(verifier, 2, 200).unwrap();
    assert!(
        first.access_token.starts_with("mimo_oat_") && first.refresh_token.starts_with("mimo_ort_")
    );
    let grant = tokens
        .check(&first.access_token, MCP, 300)
        .unwrap()
        .expect("a live token");
    assert!(grant.starts_with("oauth-"));
    // Bound to its resource, and to its time.
    assert_eq!(
        tokens
            .check(&first.access_token, "https://other.example/mcp", 300)
            .unwrap(),
        None
    );
    assert_eq!(
        tokens
            .check(&first.access_token, MCP, 200 + ACCESS_TOKEN_TTL_MS)
            .unwrap(),
        None
    );
    assert_eq!(
        tokens
            .list()
            .unwrap()
            .tokens
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["Claude (OAuth)"]
    );

    // A refresh makes new tokens of the same grant; the used refresh token is spent.
    let second = tokens
        .refresh(&first.refresh_token, "mcpc-1", &[3; 72], 400)
        .unwrap()
        .unwrap();
    assert_eq!(
        tokens.check(&second.access_token, MCP, 500).unwrap(),
        Some(grant.clone())
    );
    let again = tokens
        .refresh(&first.refresh_token, "mcpc-1", &[4; 72], 500)
        .unwrap();
    assert_eq!(again.unwrap_err().error, "invalid_grant");
    let other_client = tokens
        .refresh(&second.refresh_token, "mcpc-2", &[4; 72], 500)
        .unwrap();
    assert_eq!(other_client.unwrap_err().error, "invalid_grant");

    // The code replayed: refused, and the grant it gave revoked with every token of it.
    assert_eq!(
        exchange(verifier, 5, 600).unwrap_err().error,
        "invalid_grant"
    );
    assert_eq!(tokens.check(&second.access_token, MCP, 700).unwrap(), None);
    assert!(tokens.list().unwrap().tokens.is_empty());

    // A new grant: revoking its refresh token (RFC 7009) ends its access tokens too; an
    // access token alone ends alone.
    let code = tokens
        .issue_code(
            &IssuedCode::new(authorize(&query, Some(&client), MCP).unwrap(), 800),
            &[6; 32],
            800,
        )
        .unwrap();
    let third = tokens
        .exchange_code(
            &code,
            "mcpc-1",
            "http://127.0.0.1:9/cb",
            verifier,
            &[7; 72],
            900,
        )
        .unwrap()
        .unwrap();
    let fourth = tokens
        .refresh(&third.refresh_token, "mcpc-1", &[8; 72], 950)
        .unwrap()
        .unwrap();
    tokens.revoke_token(&third.access_token, 960).unwrap();
    assert_eq!(tokens.check(&third.access_token, MCP, 970).unwrap(), None);
    assert!(tokens
        .check(&fourth.access_token, MCP, 970)
        .unwrap()
        .is_some());
    tokens.revoke_token(&fourth.refresh_token, 980).unwrap();
    assert_eq!(tokens.check(&fourth.access_token, MCP, 990).unwrap(), None);
    // Only digests are kept.
    let stored: Vec<serde_json::Value> = tokens
        .sql()
        .rows("SELECT * FROM oauth_grants UNION ALL SELECT token_hash, grant_id, expires_at, 0, 0, 0, 0, 0 FROM oauth_access", vec![])
        .unwrap();
    let stored = serde_json::to_string(&stored).unwrap();
    assert!(!stored.contains(&fourth.access_token) && !stored.contains(&fourth.refresh_token));

    // Registrations that never led to a grant are swept once old; a client with a grant
    // (mcpc-1's, revoked or not) and a recent registration stay.
    let registered = |id: &str, at_ms: u64| register(&registration, id.into(), at_ms).unwrap();
    tokens
        .register_client(&registered("mcpc-old", 1_000))
        .unwrap();
    tokens
        .register_client(&registered("mcpc-new", 9_000_000))
        .unwrap();
    assert_eq!(
        tokens.sweep_unused_clients(1).unwrap(),
        2,
        "none old enough"
    );
    assert_eq!(tokens.sweep_unused_clients(5_000).unwrap(), 1);
    assert_eq!(tokens.client("mcpc-old").unwrap(), None);
    assert!(tokens.client("mcpc-new").unwrap().is_some());
    assert_eq!(tokens.client("mcpc-1").unwrap(), Some(client));
}

fn tokens_sql(tokens: &McpTokens<NodeSql>) -> Vec<serde_json::Value> {
    tokens
        .sql()
        .rows("SELECT * FROM mcp_tokens", vec![])
        .unwrap()
}

#[wasm_bindgen_test]
fn an_mcp_session_row_round_trips_and_reading_none_stores_nothing() {
    let store = SessionStore::open(NodeSql::open());
    assert_eq!(store.load().unwrap(), None);
    // Reading a session that is not there stores nothing (no table, so no object is kept).
    let tables: Vec<serde_json::Value> = store
        .sql()
        .rows("SELECT name FROM sqlite_master", vec![])
        .unwrap();
    assert_eq!(tables, Vec::<serde_json::Value>::new());
    let mut session = Session {
        session_id: "ab".repeat(16),
        token_id: "mcp-1".into(),
        version: "2025-06-18".into(),
        task_id: None,
        started: false,
        tabs: Vec::new(),
        elicitation: false,
        client_id: None,
        runs: Vec::new(),
        created_at: 5,
        ended_at: None,
        last_used_at: 0,
    };
    store.save(&session).unwrap();
    assert_eq!(store.load().unwrap(), Some(session.clone()));
    session.task_id = Some("t".into());
    session.started = true;
    session.runs.push(mimo_agent::mcp::runs::SessionRun {
        task_id: "r".into(),
        structured: true,
    });
    session.ended_at = Some(9);
    store.save(&session).unwrap();
    assert_eq!(store.load().unwrap(), Some(session));
}

#[wasm_bindgen_test]
fn webhooks_are_stored_queued_once_per_event_attempted_resent_and_deleted() {
    use mimo_agent::webhooks::{after_attempt, due, Attempt, RetryPolicy};
    use mimo_protocol::webhooks::{DeliveryStatus, WebhookEventType};

    use crate::webhook_store::{NewSubscription, WebhookStore};

    let store = WebhookStore::open(NodeSql::open()).unwrap();
    let events = [
        WebhookEventType::TaskCreated,
        WebhookEventType::TaskCompleted,
    ];
    store
        .create(
            &NewSubscription {
                id: "wh_1",
                url: "https://hooks.example.com/",
                events: &events,
                task_id: Some("t1"),
                origin: "https://mimo.example.com",
                secret: "whsec_old",
            },
            10,
        )
        .unwrap();
    let subscription = store.subscription("wh_1").unwrap().unwrap();
    assert_eq!(subscription.events(), events);
    assert_eq!(subscription.task_id.as_deref(), Some("t1"));
    assert_eq!(subscription.signing_secrets(11), ["whsec_old"]);
    let info = store.list(11).unwrap().webhooks;
    assert_eq!(info.len(), 1);
    assert!(!serde_json::to_string(&info).unwrap().contains("whsec_"));
    // Rotated: both sign until the overlap ends, then only the new one.
    assert!(store.rotate("wh_1", "whsec_new", 100).unwrap());
    let rotated = store.subscription("wh_1").unwrap().unwrap();
    assert_eq!(rotated.signing_secrets(50), ["whsec_new", "whsec_old"]);
    assert_eq!(rotated.signing_secrets(100), ["whsec_new"]);
    assert_eq!(rotated.info(50).previous_secret_until, Some(100));
    assert_eq!(rotated.info(100).previous_secret_until, None);
    assert!(!store.rotate("wh_2", "whsec_x", 100).unwrap());

    // One delivery per event: an event reported again is not queued twice.
    let created = WebhookEventType::TaskCreated;
    assert!(store
        .enqueue("wh_1", "msg_t1_1", created, "t1", 1, "{}", 20)
        .unwrap());
    assert!(!store
        .enqueue("wh_1", "msg_t1_1", created, "t1", 1, "{}", 21)
        .unwrap());
    let done = WebhookEventType::TaskCompleted;
    assert!(store
        .enqueue("wh_1", "msg_t1_9", done, "t1", 9, "{}", 22)
        .unwrap());
    let pending = store.pending().unwrap();
    assert_eq!(pending.len(), 2);
    let states: Vec<_> = pending.iter().map(|r| r.state()).collect();
    assert_eq!(due(&states, 30).0, [pending[0].id], "the later event waits");

    // A failed attempt, recorded: pending with its next try; the log shows it.
    let policy = RetryPolicy::default();
    let after = after_attempt(&states[0], Attempt::Answered(500), 30, &policy);
    store.attempted(pending[0].id, &after, 30).unwrap();
    let log = store.log(Some("wh_1"), 10).unwrap();
    assert_eq!(log.len(), 2);
    let first = log.iter().find(|d| d.seq == 1).unwrap();
    assert_eq!(first.status, DeliveryStatus::Pending);
    assert_eq!((first.attempts, first.response_status), (1, Some(500)));
    assert_eq!(first.next_attempt_at, Some(10_030));
    assert_eq!(
        first.last_error.as_deref(),
        Some("the receiver answered HTTP 500")
    );
    assert_eq!(log[0].seq, 9, "newest first");
    // Delivered, then sent again: pending once more, due now, with its attempts kept.
    let row = store.pending().unwrap().remove(0);
    let delivered = after_attempt(&row.state(), Attempt::Answered(204), 40, &policy);
    store.attempted(row.id, &delivered, 40).unwrap();
    assert_eq!(store.pending().unwrap().len(), 1);
    assert!(store.resend(row.id, 50).unwrap());
    assert!(!store.resend(999, 50).unwrap());
    let again = store.pending().unwrap().remove(0);
    assert_eq!(
        (again.id, again.attempts, again.next_attempt_at),
        (row.id, 2, Some(50))
    );
    assert_eq!(again.first_attempt_at, None, "a new day of attempts");
    // Ended deliveries leave the log after a week; deleting a webhook takes its log with it.
    store.attempted(again.id, &delivered, 60).unwrap();
    store
        .prune(60 + crate::webhook_store::DELIVERY_LOG_MS + 1)
        .unwrap();
    assert_eq!(
        store.log(None, 10).unwrap().len(),
        1,
        "the pending one stays"
    );
    assert!(store.delete("wh_1").unwrap());
    assert!(!store.delete("wh_1").unwrap());
    assert!(store.log(None, 10).unwrap().is_empty());
    assert!(store.list(0).unwrap().webhooks.is_empty());
}
