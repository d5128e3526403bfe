//! The shared table of site rules (tests/fixtures/domain-rules.json), run against the server's
//! `DomainPolicy`; the extension's test runs the same table against `domainRefusal`.

use mimo_protocol::DomainPolicy;
use serde::Deserialize;

#[derive(Deserialize)]
struct Table {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    #[serde(default)]
    allowed: Vec<String>,
    #[serde(default)]
    blocked: Vec<String>,
    url: String,
    refused: bool,
}

#[test]
fn every_spelling_of_a_host_is_judged_as_the_browser_reads_it() {
    let table: Table =
        serde_json::from_str(include_str!("fixtures/domain-rules.json")).expect("the table");
    assert!(table.cases.len() >= 30);
    for case in table.cases {
        let policy = DomainPolicy {
            allowed: case.allowed.clone(),
            blocked: case.blocked.clone(),
        };
        let refusal = policy.refusal(&case.url);
        assert_eq!(
            refusal.is_some(),
            case.refused,
            "{:?} under allowed {:?} blocked {:?}: {refusal:?}",
            case.url,
            case.allowed,
            case.blocked
        );
        // The task's own rules are read the same way.
        assert_eq!(policy.task_refusal(&case.url).is_some(), case.refused);
    }
}
