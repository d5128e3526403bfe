//! The SQL the stores run, behind one small trait: the Durable Object's SQLite in production,
//! and Node's own SQLite under `wasm-bindgen-test`, so that the stores' schemas, queries and
//! row codecs are tested compiled to wasm32 (`worker::SqlStorage` has no public constructor).

use serde::de::DeserializeOwned;
use worker::{Result, SqlStorage, SqlStorageValue};

pub trait Sql {
    /// Runs `query` with positional `?` bindings; its rows, each read as a `T`.
    fn rows<T: DeserializeOwned>(
        &self,
        query: &str,
        bindings: Vec<SqlStorageValue>,
    ) -> Result<Vec<T>>;

    /// Runs `query` with positional `?` bindings (without bindings, it may be several
    /// statements, as a schema is).
    fn run(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Result<()>;
}

impl Sql for SqlStorage {
    fn rows<T: DeserializeOwned>(
        &self,
        query: &str,
        bindings: Vec<SqlStorageValue>,
    ) -> Result<Vec<T>> {
        self.exec(query, bindings)?.to_array()
    }

    fn run(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Result<()> {
        self.exec(query, bindings).map(|_| ())
    }
}

/// Adds a column to a table unless it is there (a table stored by an earlier release).
pub fn add_column<S: Sql>(sql: &S, table: &str, name: &str, definition: &str) -> Result<()> {
    let columns: Vec<serde_json::Value> = sql.rows(
        &format!("SELECT name FROM pragma_table_info('{table}') WHERE name = ?"),
        vec![text(name)],
    )?;
    if columns.is_empty() {
        sql.run(
            &format!("ALTER TABLE {table} ADD COLUMN {name} {definition}"),
            vec![],
        )?;
    }
    Ok(())
}

/// A text binding.
pub fn text(s: &str) -> SqlStorageValue {
    SqlStorageValue::String(s.to_owned())
}

/// An integer binding. Times in ms and counters stay far below 2^53: exact in SQLite and in
/// JavaScript.
pub fn int(n: u64) -> SqlStorageValue {
    SqlStorageValue::Integer(n as i64)
}
