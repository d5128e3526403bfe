//! The task's stores — schema, queries and row codecs — compiled to wasm32 and run under Node
//! against a real SQLite (Node's `node:sqlite`), through the [`Sql`] trait the Durable Object's
//! SQLite also implements.

use mimo_agent::actions::ActionRecord;
use mimo_agent::records::{AgentRun, StoredMessage, TaskRecord};
use mimo_protocol::{BrowserSnapshot, ChatMessage, ChatRole, FrontendEvent, TaskStatus};
use serde::de::DeserializeOwned;
use wasm_bindgen_test::wasm_bindgen_test;
use worker::js_sys::{global, Array, Function, Reflect};
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::{Result, SqlStorageValue};

use crate::action_store::ActionStore;
use crate::sql::Sql;
use crate::task_store::TaskStore;

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
