//! Every rule of the registry, natively: sockets are numbered `u32` here.

use mimo_protocol::extension::{MAX_POLL_WAIT_MS, POLL_PRESENCE_MS};
use mimo_protocol::{
    BrowserInfo, BrowserSnapshot, ClientId, ErrorCode, ErrorObject, ExtensionMessage,
    ServerToExtension, TabEvent, TabInfo, TaskControl,
};

use super::*;
use crate::credentials::digest;
use crate::task::{ActionEvent, SnapshotPush};

const NOW: u64 = 1_000_000;

fn id(id: &str) -> ClientId {
    ClientId::parse(id).unwrap()
}

fn handle(input: Input<u32>) -> Vec<Effect<u32>> {
    Registry.handle(input, NOW)
}

fn reported(client: &str) -> Effect<u32> {
    Effect::ReportPresence {
        client_id: id(client),
        hello: None,
    }
}

fn frame(json: serde_json::Value) -> ExtensionMessage {
    serde_json::from_value(json).unwrap()
}

fn browser() -> BrowserInfo {
    BrowserInfo {
        name: "Chromium".into(),
        version: "140".into(),
        user_agent: String::new(),
    }
}

fn hello(client: &str) -> ExtensionMessage {
    ExtensionMessage::Hello {
        client_id: client.into(),
        name: "Work laptop".into(),
        browser: browser(),
        extension_version: "0.3.0".into(),
    }
}

fn result(task: &str) -> ExtensionMessage {
    frame(serde_json::json!({
        "type": "action_result",
        "outcome": {"actionId": "a1", "attempt": 2, "taskId": task, "status": "ok"},
    }))
}

fn result_ack(task: &str) -> ServerToExtension {
    ServerToExtension::ResultAck {
        task_id: task.into(),
        action_id: "a1".into(),
        attempt: 2,
    }
}

/// A frame of `ext-1` on socket 7, with the facts given.
fn on_socket(message: ExtensionMessage, facts: FrameFacts) -> Vec<Effect<u32>> {
    handle(Input::SocketFrame {
        conn: 7,
        client_id: id("ext-1"),
        paired: true,
        frame: Ok(message),
        facts,
    })
}

fn bound_to(client: &str) -> FrameFacts {
    FrameFacts {
        bound: Some(client.into()),
        snapshot: None,
    }
}

fn to_socket(frame: ServerToExtension) -> Effect<u32> {
    Effect::SendToSocket { conn: 7, frame }
}

fn error_code(effect: &Effect<u32>) -> Option<ErrorCode> {
    match effect {
        Effect::SendToSocket {
            frame: ServerToExtension::Error { error },
            ..
        }
        | Effect::Reply(ServerToExtension::Error { error })
        | Effect::Refuse(error) => Some(error.code),
        _ => None,
    }
}

// Presence and replacement.

#[test]
fn a_newer_socket_replaces_the_older_ones_of_its_client() {
    let effects = handle(Input::SocketOpened {
        client_id: id("ext-1"),
        older: vec![3, 4],
    });
    let replaced = |conn| Effect::CloseSocket {
        conn,
        code: REPLACED,
        reason: "replaced by a newer connection",
    };
    assert_eq!(
        effects,
        [
            replaced(3),
            replaced(4),
            Effect::AcceptSocket {
                client_id: id("ext-1")
            },
            reported("ext-1"),
        ]
    );
}

#[test]
fn a_closed_socket_is_reported_to_the_directory() {
    assert_eq!(
        handle(Input::SocketClosed {
            client_id: id("ext-1")
        }),
        [reported("ext-1")]
    );
}

#[test]
fn online_is_an_open_socket_or_a_poll_within_the_presence_window() {
    let presence = |socket, polled_at| Presence::<u32> { socket, polled_at };
    assert!(presence(Some(1), None).is_online(NOW));
    assert!(presence(None, Some(NOW)).is_online(NOW));
    assert!(presence(None, Some(NOW - POLL_PRESENCE_MS + 1)).is_online(NOW));
    assert!(!presence(None, Some(NOW - POLL_PRESENCE_MS)).is_online(NOW));
    assert!(!presence(None, None).is_online(NOW));
}

#[test]
fn a_poll_connects_its_client_by_polling_now_and_the_directory_hears_of_it_now_and_then() {
    let poll = |reported_at| {
        handle(Input::PollArrived {
            client_id: id("ext-1"),
            reported_at,
        })
    };
    let polled = Effect::Persist(Persist::Polled {
        client_id: id("ext-1"),
        at: NOW,
    });
    // Never reported, or last reported half a presence window ago: reported.
    assert_eq!(poll(None), [polled.clone(), reported("ext-1")]);
    assert_eq!(
        poll(Some(NOW - POLL_PRESENCE_MS / 2)),
        [polled.clone(), reported("ext-1")]
    );
    // Reported lately: the directory's record of it still says it polls.
    assert_eq!(poll(Some(NOW - POLL_PRESENCE_MS / 2 + 1)), [polled]);
    assert!(crate::registry::polls(
        Some(NOW - POLL_PRESENCE_MS / 2 + 1),
        NOW + POLL_PRESENCE_MS / 2 - 1
    ));
}

// Where a task's frame goes.

fn send(socket: Option<u32>, polled_at: Option<u64>) -> Vec<Effect<u32>> {
    handle(Input::FrameForClient {
        client_id: id("ext-1"),
        frame: ServerToExtension::Pong {},
        presence: Presence { socket, polled_at },
    })
}

#[test]
fn a_frame_for_a_client_goes_on_its_open_socket_even_while_it_polls() {
    let sent = [Effect::SendToSocket {
        conn: 5,
        frame: ServerToExtension::Pong {},
    }];
    assert_eq!(send(Some(5), None), sent);
    assert_eq!(send(Some(5), Some(NOW)), sent);
}

#[test]
fn a_frame_for_a_polling_client_is_kept_for_its_next_poll_which_is_woken() {
    assert_eq!(
        send(None, Some(NOW - 1_000)),
        [
            Effect::QueueInOutbox {
                client_id: id("ext-1"),
                frame: ServerToExtension::Pong {},
                at: NOW,
            },
            Effect::WakePolls {
                client_id: id("ext-1")
            },
        ]
    );
}

#[test]
fn a_frame_for_a_client_neither_on_a_socket_nor_polling_is_plugin_offline() {
    for polled_at in [None, Some(NOW - POLL_PRESENCE_MS)] {
        let effects = send(None, polled_at);
        let [Effect::Refuse(error)] = effects.as_slice() else {
            panic!("{effects:?}");
        };
        assert_eq!(error.code, ErrorCode::PluginOffline);
        assert!(error.message.contains("(ext-1) is offline"), "{error}");
    }
}

// The outbox.

#[test]
fn a_poll_acknowledges_and_collects_a_batch_dropping_frames_past_their_lifetime() {
    let effects = handle(Input::PollCollect {
        client_id: id("ext-1"),
        ack: 41,
        wait_ms: 5_000,
    });
    assert_eq!(
        effects,
        [Effect::CollectOutbox {
            client_id: id("ext-1"),
            ack: 41,
            stale_before: NOW - OUTBOX_TTL_MS,
            limit: POLL_BATCH,
            hold_ms: 5_000,
        }]
    );
    assert_eq!(OUTBOX_TTL_MS, 30_000);
    assert_eq!(POLL_BATCH, 50);
}

#[test]
fn a_poll_is_held_at_most_the_longest_wait() {
    let effects = handle(Input::PollCollect {
        client_id: id("ext-1"),
        ack: 0,
        wait_ms: 60_000,
    });
    assert!(matches!(
        effects[..],
        [Effect::CollectOutbox { hold_ms, .. }] if hold_ms == MAX_POLL_WAIT_MS
    ));
}

#[test]
fn a_held_poll_collects_once_more_without_waiting_and_counts_as_polling_then() {
    let later = NOW + 20_000;
    assert_eq!(
        Registry.handle::<u32>(
            Input::PollWaited {
                client_id: id("ext-1"),
                ack: 3
            },
            later
        ),
        [
            Effect::CollectOutbox {
                client_id: id("ext-1"),
                ack: 3,
                stale_before: later - OUTBOX_TTL_MS,
                limit: POLL_BATCH,
                hold_ms: 0,
            },
            Effect::Persist(Persist::Polled {
                client_id: id("ext-1"),
                at: later
            }),
        ]
    );
}

#[test]
fn the_lifetime_of_kept_frames_does_not_underflow_at_the_clocks_start() {
    let effects = Registry.handle::<u32>(
        Input::PollCollect {
            client_id: id("ext-1"),
            ack: 0,
            wait_ms: 0,
        },
        5,
    );
    assert!(matches!(
        effects[..],
        [Effect::CollectOutbox {
            stale_before: 0,
            hold_ms: 0,
            ..
        }]
    ));
}

// The hello.

#[test]
fn a_hello_on_a_socket_is_welcomed_and_the_socket_takes_over_what_the_polls_kept() {
    assert_eq!(
        on_socket(hello("ext-1"), FrameFacts::default()),
        [
            // No longer polling, and so reported to the directory with what the hello says,
            // before the extension is welcomed.
            Effect::Persist(Persist::StoppedPolling {
                client_id: id("ext-1")
            }),
            Effect::ReportPresence {
                client_id: id("ext-1"),
                hello: Some(Registration {
                    name: "Work laptop".into(),
                    browser: browser(),
                    extension_version: "0.3.0".into(),
                }),
            },
            to_socket(ServerToExtension::Welcome {
                client_id: "ext-1".into()
            }),
            Effect::DrainOutbox {
                client_id: id("ext-1"),
                conn: 7,
                stale_before: NOW - OUTBOX_TTL_MS,
            },
        ]
    );
}

#[test]
fn a_hello_in_a_poll_is_welcomed_and_the_client_goes_on_polling() {
    let effects = handle(Input::PolledFrame {
        client_id: id("ext-1"),
        frame: hello("ext-1"),
        facts: FrameFacts::default(),
    });
    assert_eq!(
        effects.last(),
        Some(&Effect::Reply(ServerToExtension::Welcome {
            client_id: "ext-1".into()
        }))
    );
    assert!(!effects.iter().any(|e| matches!(
        e,
        Effect::DrainOutbox { .. } | Effect::Persist(Persist::StoppedPolling { .. })
    )));
}

#[test]
fn a_hello_naming_another_client_is_refused_and_nothing_registered() {
    let effects = on_socket(hello("ext-2"), FrameFacts::default());
    assert_eq!(effects.len(), 1, "{effects:?}");
    let Effect::SendToSocket {
        frame: ServerToExtension::Error { error },
        ..
    } = &effects[0]
    else {
        panic!("{effects:?}");
    };
    assert_eq!(error.code, ErrorCode::SchemaValidationFailed);
    assert_eq!(
        error.message,
        "hello names client \"ext-2\" but this connection is \"ext-1\"'s"
    );
}

#[test]
fn a_frame_on_a_socket_whose_credential_was_revoked_closes_it_and_does_nothing_else() {
    let effects = handle(Input::SocketFrame {
        conn: 7,
        client_id: id("ext-1"),
        paired: false,
        frame: Ok(result("t1")),
        facts: bound_to("ext-1"),
    });
    assert_eq!(
        effects,
        [Effect::CloseSocket {
            conn: 7,
            code: REVOKED,
            reason: "this extension's credential was revoked",
        }]
    );
    assert_eq!(REVOKED, 4401);
}

#[test]
fn an_unreadable_frame_is_answered_with_why_and_changes_nothing() {
    let error = ErrorObject::new(ErrorCode::SchemaValidationFailed, "not JSON");
    let effects = handle(Input::SocketFrame {
        conn: 7,
        client_id: id("ext-1"),
        paired: true,
        frame: Err(error.clone()),
        facts: FrameFacts::default(),
    });
    assert_eq!(effects, [to_socket(ServerToExtension::Error { error })]);
}

#[test]
fn a_ping_that_missed_the_auto_response_is_answered() {
    assert_eq!(
        on_socket(ExtensionMessage::Ping {}, FrameFacts::default()),
        [to_socket(ServerToExtension::Pong {})]
    );
}

// What the extension says about its tasks, and acknowledgement.

fn forwarded(pending: Pending<u32>, outcome: Forwarding) -> Vec<Effect<u32>> {
    handle(Input::Forwarded { pending, outcome })
}

/// The one `ForwardToTask` of `effects`.
fn forward_of(effects: &[Effect<u32>]) -> (String, ToTask, Pending<u32>) {
    let forwards: Vec<_> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::ForwardToTask {
                task_id,
                message,
                pending,
            } => Some((task_id.clone(), message.clone(), pending.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(forwards.len(), 1, "{effects:?}");
    forwards.into_iter().next().unwrap()
}

#[test]
fn a_result_for_a_task_bound_to_the_client_goes_to_the_task_and_waits_for_it() {
    let effects = on_socket(result("t1"), bound_to("ext-1"));
    assert_eq!(
        effects.len(),
        1,
        "no ack before the task has it: {effects:?}"
    );
    let (task_id, message, pending) = forward_of(&effects);
    assert_eq!(task_id, "t1");
    let ToTask::Event(event) = message else {
        panic!("{message:?}");
    };
    assert!(matches!(*event, ActionEvent::Outcome { ref outcome } if outcome.action_id == "a1"));
    assert_eq!(pending.what, "an action's result");
    assert_eq!(pending.ack, Some(result_ack("t1")));
    // Taken: acknowledged, so the extension stops resending it.
    assert_eq!(
        forwarded(pending, Forwarding::Taken),
        [to_socket(result_ack("t1"))]
    );
}

#[test]
fn a_result_the_task_refuses_for_good_is_answered_with_the_refusal_and_acknowledged() {
    let (_, _, pending) = forward_of(&on_socket(result("t1"), bound_to("ext-1")));
    let refusal = ErrorObject::new(ErrorCode::NotFound, "no such action");
    let effects = forwarded(pending, Forwarding::Refused(refusal.clone()));
    assert_eq!(
        effects,
        [
            Effect::Warn(format!("refused an action's result: {refusal}")),
            to_socket(ServerToExtension::Error { error: refusal }),
            to_socket(result_ack("t1")),
        ]
    );
}

#[test]
fn a_result_that_did_not_reach_its_task_is_left_unacknowledged_to_be_sent_again() {
    let (_, _, pending) = forward_of(&on_socket(result("t1"), bound_to("ext-1")));
    let effects = forwarded(pending, Forwarding::Unreachable("timed out".into()));
    let [Effect::SendToSocket {
        frame: ServerToExtension::Error { error },
        ..
    }] = effects.as_slice()
    else {
        panic!("only an error, no ack: {effects:?}");
    };
    assert_eq!(error.code, ErrorCode::InternalError);
    assert_eq!(
        error.message,
        "an action's result could not reach its task (timed out); it is kept to be sent again"
    );
}

#[test]
fn a_client_cannot_report_on_a_task_bound_to_another_and_its_result_is_acknowledged() {
    for facts in [bound_to("ext-2"), FrameFacts::default()] {
        let effects = on_socket(result("t1"), facts);
        assert!(
            !effects
                .iter()
                .any(|e| matches!(e, Effect::ForwardToTask { .. })),
            "{effects:?}"
        );
        assert_eq!(error_code(&effects[1]), Some(ErrorCode::PermissionDenied));
        // Refused for good: sending it again would not help.
        assert_eq!(effects[2], to_socket(result_ack("t1")));
    }
}

#[test]
fn acks_statuses_confirmations_and_controls_go_to_their_task_with_no_ack_of_their_own() {
    let cases = [
        (
            frame(serde_json::json!({
                "type": "action_ack", "actionId": "a1", "attempt": 1, "taskId": "t1",
            })),
            "an action's ack",
            ToTask::Event(Box::new(ActionEvent::Ack {
                action_id: "a1".into(),
                attempt: 1,
            })),
        ),
        (
            frame(serde_json::json!({
                "type": "action_status", "taskId": "t1", "actionId": "a1", "attempt": 1,
                "state": "running",
            })),
            "an action's status",
            ToTask::Event(Box::new(ActionEvent::Status {
                action_id: "a1".into(),
                attempt: 1,
                state: mimo_protocol::AttemptState::Running,
                outcome: None,
            })),
        ),
        (
            ExtensionMessage::Confirm {
                task_id: "t1".into(),
                step: 3,
                approve: false,
                reason: Some("not that one".into()),
            },
            "a confirmation",
            ToTask::Confirm {
                step: 3,
                approve: false,
                reason: Some("not that one".into()),
            },
        ),
        (
            ExtensionMessage::TaskControl {
                task_id: "t1".into(),
                control: TaskControl::Takeover,
            },
            "a task control",
            ToTask::Control(TaskControl::Takeover),
        ),
    ];
    for (message, what, expected) in cases {
        let (task_id, sent, pending) = forward_of(&on_socket(message, bound_to("ext-1")));
        assert_eq!((task_id.as_str(), &sent), ("t1", &expected));
        assert_eq!((pending.what, pending.ack.clone()), (what, None));
        assert_eq!(forwarded(pending, Forwarding::Taken), []);
    }
}

#[test]
fn what_a_poll_says_is_answered_among_the_polls_replies() {
    let effects = handle(Input::PolledFrame {
        client_id: id("ext-1"),
        frame: result("t1"),
        facts: bound_to("ext-1"),
    });
    let (_, _, pending) = forward_of(&effects);
    assert_eq!(pending.via, Via::Poll);
    assert_eq!(
        forwarded(pending, Forwarding::Taken),
        [Effect::Reply(result_ack("t1"))]
    );
}

#[test]
fn a_frame_needs_the_binding_of_its_task_and_a_tab_event_the_stored_snapshot() {
    let needs = |message| {
        let needs = FrameFacts::needed(&message);
        (needs.binding_of.map(str::to_owned), needs.snapshot)
    };
    assert_eq!(needs(result("t9")), (Some("t9".into()), false));
    assert_eq!(needs(hello("ext-1")), (None, false));
    assert_eq!(needs(tab_event(tab(1, "https://a.example/"))), (None, true));
}

// Snapshots.

fn tab(tab_id: i64, url: &str) -> TabInfo {
    TabInfo {
        tab_id: tab_id as _,
        window_id: 1,
        index: 0,
        url: url.into(),
        title: String::new(),
        status: "complete".into(),
        active: true,
        group_id: None,
    }
}

fn tab_event(tab: TabInfo) -> ExtensionMessage {
    ExtensionMessage::TabEvent {
        event: TabEvent::TabUpserted { tab },
    }
}

fn pushed(snapshot: BrowserSnapshot) -> [Effect<u32>; 2] {
    [
        Effect::Persist(Persist::Snapshot {
            client_id: id("ext-1"),
            snapshot: snapshot.clone(),
        }),
        Effect::PushSnapshot {
            push: SnapshotPush {
                client_id: "ext-1".into(),
                snapshot,
            },
            tasks: PUSH_TO_TASKS,
        },
    ]
}

#[test]
fn a_full_sync_is_stored_and_pushed_to_the_latest_tasks_of_the_client() {
    let snapshot = BrowserSnapshot {
        tabs: vec![tab(1, "https://a.example/")],
        ..BrowserSnapshot::default()
    };
    let effects = on_socket(
        ExtensionMessage::FullStateSync {
            snapshot: snapshot.clone(),
        },
        FrameFacts::default(),
    );
    assert_eq!(effects, pushed(snapshot));
    assert_eq!(PUSH_TO_TASKS, 20);
}

#[test]
fn a_tab_event_changes_the_stored_snapshot_and_is_pushed() {
    let before = BrowserSnapshot {
        tabs: vec![tab(1, "https://a.example/")],
        ..BrowserSnapshot::default()
    };
    let facts = FrameFacts {
        bound: None,
        snapshot: Some(before.clone()),
    };
    let effects = on_socket(tab_event(tab(1, "https://b.example/")), facts);
    let mut after = before;
    crate::snapshot::apply(
        &mut after,
        TabEvent::TabUpserted {
            tab: tab(1, "https://b.example/"),
        },
    );
    assert_eq!(after.tabs[0].url, "https://b.example/");
    assert_eq!(effects, pushed(after));
}

#[test]
fn a_tab_event_that_changes_nothing_is_neither_stored_nor_pushed() {
    let mut before = BrowserSnapshot::default();
    crate::snapshot::apply(
        &mut before,
        TabEvent::TabUpserted {
            tab: tab(1, "https://a.example/"),
        },
    );
    let facts = FrameFacts {
        bound: None,
        snapshot: Some(before),
    };
    assert_eq!(
        on_socket(tab_event(tab(1, "https://a.example/")), facts),
        []
    );
}

#[test]
fn a_tab_event_before_any_snapshot_starts_one() {
    let effects = on_socket(
        tab_event(tab(1, "https://a.example/")),
        FrameFacts::default(),
    );
    assert!(matches!(
        &effects[0],
        Effect::Persist(Persist::Snapshot { snapshot, .. }) if snapshot.tabs.len() == 1
    ));
}

// Credentials.

fn news(news: News, known_epoch: u64) -> Vec<Effect<u32>> {
    handle(Input::News {
        client_id: id("ext-1"),
        news,
        known_epoch,
        sockets: vec![2],
    })
}

#[test]
fn the_directory_tells_a_client_paired_again_which_closes_the_old_credentials_sockets() {
    assert_eq!(
        handle(Input::Paired {
            client_id: id("ext-1"),
            epoch: 3,
            credential: "d3".into(),
        }),
        [Effect::TellClient {
            client_id: id("ext-1"),
            news: News::Paired {
                epoch: 3,
                credential: "d3".into()
            },
        }]
    );
    assert_eq!(
        news(paired(3), 2),
        [
            // The new token's digest, which the object checks the extension's requests against.
            Effect::Persist(Persist::Credential {
                client_id: id("ext-1"),
                epoch: 3,
                revoked: false,
                credential: Some("d3".into()),
            }),
            Effect::CloseSocket {
                conn: 2,
                code: REVOKED,
                reason: "this extension was paired again",
            }
        ]
    );
}

#[test]
fn a_revoked_client_loses_its_sockets_and_its_side_panels_before_the_revocation_is_answered() {
    // The directory does not answer until the client's object has been told.
    assert_eq!(
        handle(Input::Revoked {
            client_id: id("ext-1"),
            revoked: true,
            epoch: 4,
        }),
        [
            Effect::TellClient {
                client_id: id("ext-1"),
                news: News::Revoked { epoch: 4 },
            },
            // Listed offline at once: the sockets its object closes report no close.
            Effect::Persist(Persist::Presence(PresenceReport {
                client_id: id("ext-1"),
                socket: false,
                polled_at: None,
                at: NOW,
                hello: None,
            })),
        ]
    );
    assert_eq!(
        news(News::Revoked { epoch: 4 }, 3),
        [
            // Its digest forgotten with it.
            Effect::Persist(Persist::Credential {
                client_id: id("ext-1"),
                epoch: 4,
                revoked: true,
                credential: None,
            }),
            Effect::CloseSocket {
                conn: 2,
                code: REVOKED,
                reason: "this extension's credential was revoked",
            },
            Effect::CloseSidePanels {
                client_id: id("ext-1"),
                tasks: PUSH_TO_TASKS,
            },
        ]
    );
}

#[test]
fn a_credential_change_older_than_the_one_a_client_knows_changes_nothing() {
    // Revoked (epoch 5), then an older pairing's news arrives late: still revoked, and the
    // open sockets (none should be) are not touched by it; a repeated revocation neither.
    assert_eq!(news(paired(4), 5), []);
    assert_eq!(news(News::Revoked { epoch: 5 }, 5), []);
    assert_eq!(news(paired(5), 5), []);
}

fn paired(epoch: u64) -> News {
    News::Paired {
        epoch,
        credential: format!("d{epoch}"),
    }
}

#[test]
fn a_clients_object_admits_only_the_token_it_was_told_of_while_it_stands() {
    let told = digest("mimo_ext_ext-1.aa");
    assert!(sharding::admits(Some(&told), false, &told));
    // Another token (a made-up one under this client's name, the one a pairing replaced), a
    // revoked credential, an object told of none (a client paired before tokens named it):
    // refused.
    for presented in [
        digest("mimo_ext_ext-1.ab"),
        digest("mimo_ext_ext-2.aa"),
        String::new(),
        told[..63].to_owned(),
        format!("{told}0"),
        told.to_uppercase(),
    ] {
        assert!(
            !sharding::admits(Some(&told), false, &presented),
            "{presented}"
        );
    }
    assert!(!sharding::admits(Some(&told), true, &told));
    assert!(!sharding::admits(None, false, &told));
    assert!(
        !sharding::admits(Some(""), false, ""),
        "an empty digest is none"
    );
}

#[test]
fn revoking_a_client_without_a_credential_is_not_found_and_tells_no_one() {
    let effects = handle(Input::Revoked {
        client_id: id("ext-1"),
        revoked: false,
        epoch: 0,
    });
    let [Effect::Refuse(error)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(error.code, ErrorCode::NotFound);
    assert_eq!(error.message, "no paired extension with clientId \"ext-1\"");
}

// The directory and the clients' objects.

#[test]
fn binding_writes_the_directory_then_tells_the_new_client_and_the_old_one() {
    let bind = |before: Option<&str>| {
        handle(Input::Bound {
            task_id: "t1".into(),
            client_id: id("ext-2"),
            before: before.map(id),
            at: 50,
        })
    };
    let written = Effect::Persist(Persist::Bound {
        client_id: id("ext-2"),
        task_id: "t1".into(),
        at: 50,
    });
    let told_new = Effect::TellClient {
        client_id: id("ext-2"),
        news: News::Bound {
            task_id: "t1".into(),
            at: 50,
        },
    };
    assert_eq!(
        bind(Some("ext-1")),
        [
            written.clone(),
            Effect::TellClient {
                client_id: id("ext-1"),
                news: News::Unbound {
                    task_id: "t1".into()
                },
            },
            told_new.clone(),
        ]
    );
    // First bound, or bound again to the same client: only that client hears.
    assert_eq!(bind(None), [written.clone(), told_new.clone()]);
    assert_eq!(bind(Some("ext-2")), [written, told_new]);
}

#[test]
fn a_client_object_keeps_its_copy_of_its_bindings() {
    assert_eq!(
        news(
            News::Bound {
                task_id: "t1".into(),
                at: 50
            },
            0
        ),
        [Effect::Persist(Persist::Bound {
            client_id: id("ext-1"),
            task_id: "t1".into(),
            at: 50,
        })]
    );
    assert_eq!(
        news(
            News::Unbound {
                task_id: "t1".into()
            },
            0
        ),
        [Effect::Persist(Persist::Unbound {
            task_id: "t1".into()
        })]
    );
}

#[test]
fn the_directory_keeps_a_presence_report_unless_it_has_a_newer_one() {
    let report = PresenceReport {
        client_id: id("ext-1"),
        socket: true,
        polled_at: None,
        at: NOW,
        hello: None,
    };
    let reported = |known_at| {
        handle(Input::PresenceReported {
            report: report.clone(),
            known_at,
        })
    };
    let kept = [Effect::Persist(Persist::Presence(report.clone()))];
    assert_eq!(reported(None), kept);
    assert_eq!(reported(Some(NOW)), kept);
    assert_eq!(reported(Some(NOW - 1)), kept);
    // Two reports of one object crossed: the older one changes nothing.
    assert_eq!(reported(Some(NOW + 1)), []);
}

#[test]
fn news_and_presence_reports_keep_their_wire_shape() {
    let bound = News::Bound {
        task_id: "t1".into(),
        at: 5,
    };
    assert_eq!(
        serde_json::to_value(&bound).unwrap(),
        serde_json::json!({"type": "bound", "taskId": "t1", "at": 5})
    );
    let report: PresenceReport = serde_json::from_value(serde_json::json!({
        "clientId": "ext-1", "socket": false, "polledAt": 7, "at": 9, "hello": null
    }))
    .unwrap();
    assert_eq!(report.polled_at, Some(7));
}

// The listing.

fn record(client: &str) -> listing::ClientRecord {
    listing::ClientRecord {
        client_id: id(client),
        name: "Work laptop".into(),
        browser: None,
        extension_version: "0.3.0".into(),
        last_seen_at: 10,
        last_used_at: Some(5),
    }
}

#[test]
fn a_listed_online_client_is_seen_now_and_an_offline_one_when_it_was() {
    let online = listing::info(
        record("ext-1"),
        &Presence::<u32> {
            socket: Some(1),
            polled_at: None,
        },
        true,
        NOW,
    );
    assert!(online.online && online.paired);
    assert_eq!(online.last_seen_at, NOW);
    assert_eq!(online.browser.name, "", "no hello yet: an empty browser");
    let offline = listing::info(
        record("ext-2"),
        &Presence::<u32> {
            socket: None,
            polled_at: Some(NOW - POLL_PRESENCE_MS),
        },
        false,
        NOW,
    );
    assert!(!offline.online && !offline.paired);
    assert_eq!(offline.last_seen_at, 10);
    let candidates = listing::candidates(vec![online, offline]);
    assert_eq!(
        candidates
            .iter()
            .map(|c| (c.client_id.as_str(), c.online, c.last_used_at))
            .collect::<Vec<_>>(),
        [("ext-1", true, Some(5)), ("ext-2", false, Some(5))]
    );
}
