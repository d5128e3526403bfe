//! `mimo-bridge`, the local bridge (seed 004): a WebSocket server on 127.0.0.1 that runs the
//! tools `read`, `write`, `edit` and `bash` in one folder of the person's machine for an
//! authenticated client (the Mimo extension, which relays the coordinator's `invoke` frames).
//!
//! One file per concern, as in mini-redis: [`server`] accepts sockets and runs the handshake of
//! `handshake`, `dispatch` parses an invocation, takes a slot and runs it, `state` holds the
//! configuration and what they all share, `fs_guard` keeps paths in the root, `policy` decides
//! which commands run, `tools/` holds one file per tool, `audit` appends one line per
//! invocation.

mod audit;
mod dispatch;
mod fs_guard;
mod handshake;
mod policy;
#[cfg(test)]
mod properties;
pub mod server;
mod state;
mod tools;

pub use server::Bridge;
pub use state::Config;
