//! The shells' glue run where it runs: compiled to wasm32, under Node (whose `Response`,
//! `Headers` and `crypto` are the web's, as in workerd) by `wasm-bindgen-test-runner`.
//! `make test` runs them with `cargo test --target wasm32-unknown-unknown -p mimo-durable`.

use mimo_protocol::{ErrorCode, ErrorObject};
use strum::IntoEnumIterator;
use wasm_bindgen_test::wasm_bindgen_test;
use worker::{Method, Response, WebSocketIncomingMessage};

use crate::error::{read_json, read_outcome, Failure};
use crate::http::{error_response, json_request, now_ms, random_bytes};
use crate::socket::parse_message;

#[wasm_bindgen_test]
async fn every_error_code_answers_with_its_status_and_reads_back_whole() {
    for code in ErrorCode::iter() {
        let error = ErrorObject::new(code, format!("because of {code}"));
        let response = error_response(&error).unwrap();
        let status = response.status_code();
        assert!((400..600).contains(&status), "{code}: {status}");
        let expected = match code {
            ErrorCode::NotFound => 404,
            ErrorCode::Unauthorized => 401,
            ErrorCode::PermissionDenied => 403,
            ErrorCode::RateLimited => 429,
            ErrorCode::PayloadTooLarge | ErrorCode::ReadabilityTooLarge => 413,
            ErrorCode::InternalError => 500,
            _ => status,
        };
        assert_eq!(status, expected, "{code}");
        match read_json::<()>(response).await {
            Err(Failure::Refused(read)) => assert_eq!(read, error),
            other => panic!("{code}: {other:?}"),
        }
    }
}

#[wasm_bindgen_test]
async fn an_answer_that_is_no_error_object_keeps_its_status_and_body() {
    let page = Response::error("<html>worker threw</html>", 503).unwrap();
    let Err(Failure::Refused(error)) = read_outcome(page).await else {
        panic!("a refusal")
    };
    assert_eq!(error.code, ErrorCode::InternalError);
    assert_eq!(error.message, "503: <html>worker threw</html>");
}

#[wasm_bindgen_test]
async fn a_success_is_read_as_its_value() {
    let response = Response::from_json(&vec![1, 2, 3]).unwrap();
    assert_eq!(read_json::<Vec<u8>>(response).await.unwrap(), vec![1, 2, 3]);
    read_outcome(Response::empty().unwrap()).await.unwrap();
}

#[wasm_bindgen_test]
async fn internal_requests_carry_json_bodies() {
    let mut request = json_request(Method::Post, "/bind", Some(&["a", "b"])).unwrap();
    assert_eq!(request.method(), Method::Post);
    assert_eq!(request.path(), "/bind");
    assert_eq!(
        request.headers().get("content-type").unwrap().as_deref(),
        Some("application/json")
    );
    assert_eq!(request.text().await.unwrap(), r#"["a","b"]"#);
    let get = json_request::<()>(Method::Get, "/list", None).unwrap();
    assert_eq!(get.headers().get("content-type").unwrap(), None);
}

#[wasm_bindgen_test]
fn frames_are_parsed_or_refused_as_schema_errors() {
    let text = WebSocketIncomingMessage::String(r#"{"type":"stop"}"#.into());
    assert!(parse_message::<mimo_protocol::FrontendMessage>(text, 1024).is_ok());
    let binary = WebSocketIncomingMessage::Binary(vec![1, 2, 3]);
    let refused = parse_message::<mimo_protocol::FrontendMessage>(binary, 1024).unwrap_err();
    assert_eq!(refused.code, ErrorCode::SchemaValidationFailed);
    let long =
        WebSocketIncomingMessage::String(format!(r#"{{"type":"stop","x":"{}"}}"#, "x".repeat(64)));
    let refused = parse_message::<mimo_protocol::FrontendMessage>(long, 32).unwrap_err();
    assert_eq!(refused.code, ErrorCode::SchemaValidationFailed);
}

#[wasm_bindgen_test]
fn the_runtime_gives_time_and_randomness() {
    let now = now_ms();
    let js_now = worker::js_sys::Date::now() as u64;
    assert!(js_now.abs_diff(now) < 1_000, "{now} vs {js_now}");
    let a = random_bytes::<16>().unwrap();
    let b = random_bytes::<16>().unwrap();
    assert_ne!(a, b);
    assert_ne!(a, [0u8; 16]);
}
