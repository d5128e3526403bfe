//! The sans-I/O core of Mimo.
//!
//! Nothing here performs I/O or reads a clock: callers feed in events together with the time and
//! get back effects (events to emit, records to store, LLM calls to make), which the Durable
//! Object shells in `mimo-durable` carry out. That keeps every rule testable natively and fast.

pub mod actions;
pub mod answer_format;
pub mod audit;
pub mod conversation;
pub mod credentials;
pub mod flow;
mod front_matter;
pub mod json_schema;
pub mod llm;
pub mod mcp;
pub mod prompt;
pub mod records;
pub mod registry;
pub mod risk;
pub mod script;
pub mod secrets;
pub mod selection;
pub mod skills;
pub mod snapshot;
pub mod status;
pub mod task;
pub mod task_index;
mod text;
mod unicode;
pub mod webhooks;
