//! An artifact's life through the task machine: granted, stored (a file the person attached is
//! attached then), kept for the retention, swept by the alarm.

use super::*;

const DAY: u64 = 86_400_000;

/// A task whose artifacts are kept one day.
fn kept_a_day() -> Task {
    created_with(
        TaskConfig::from_lookup(|name| match name {
            "MIMO_LLM_MODEL" => Some("model".into()),
            "MIMO_ARTIFACT_RETENTION_DAYS" => Some("1".into()),
            _ => None,
        })
        .0,
    )
}

fn grant(id: &str, kind: &str) -> Input {
    Input::ArtifactGranted(ArtifactGrant {
        artifact_id: id.into(),
        kind: kind.into(),
        key: format!("tasks/{TASK}/{id}"),
        content_type: "text/csv".into(),
        max_length: 10_000,
        action_id: None,
        name: (kind == ATTACHMENT).then(|| format!("{id}.csv")),
    })
}

fn stored(id: &str) -> Input {
    Input::ArtifactStored(ArtifactStored {
        artifact_id: id.into(),
        size: 2_048,
        sha256: "00".into(),
    })
}

fn attached(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Emit(FrontendEvent::FileAttached { attachment }) => {
                Some(attachment.name.clone())
            }
            _ => None,
        })
        .collect()
}

fn saved(effects: &[Effect]) -> Vec<ArtifactRecord> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::SaveArtifact(record) => Some(record.clone()),
            _ => None,
        })
        .collect()
}

fn deleted(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .flat_map(|e| match e {
            Effect::DeleteArtifacts(records) => {
                records.iter().map(|r| r.artifact_id.clone()).collect()
            }
            _ => Vec::new(),
        })
        .collect()
}

#[test]
fn a_file_the_person_attached_is_told_once_its_upload_completes_and_once_only() {
    let mut task = kept_a_day();
    let effects = direct(&mut task, grant("f", ATTACHMENT), 10);
    assert_eq!(saved(&effects)[0].granted_at, 10);
    assert!(attached(&effects).is_empty(), "not before it is stored");
    // A repeated report of the grant keeps the first.
    assert!(direct(&mut task, grant("f", ATTACHMENT), 11).is_empty());

    let effects = direct(&mut task, stored("f"), 20);
    assert_eq!(attached(&effects), ["f.csv"]);
    assert_eq!(saved(&effects)[0].stored_at, Some(20));
    assert_eq!(wakes(&effects), [20 + DAY], "swept when its retention ends");
    assert!(
        attached(&direct(&mut task, stored("f"), 21)).is_empty(),
        "the same upload reported twice is one file"
    );

    // A page's screenshot is no attachment.
    direct(&mut task, grant("shot", "screenshot"), 30);
    assert!(attached(&direct(&mut task, stored("shot"), 31)).is_empty());
}

#[test]
fn an_upload_nobody_granted_in_this_task_is_refused_and_changes_nothing() {
    let mut task = kept_a_day();
    let refused = task
        .handle(stored("elsewhere"), 5, Caller::Direct)
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::NotFound);
    assert!(task.artifact("elsewhere").is_none());

    let mut never_created = Task::new(config());
    for input in [grant("f", ATTACHMENT), stored("f")] {
        let refused = never_created.handle(input, 5, Caller::Direct).unwrap_err();
        assert_eq!(refused.code, ErrorCode::NotFound);
    }
    assert!(never_created.artifact("f").is_none());
}

#[test]
fn the_alarm_sweeps_what_outlived_the_retention_and_wakes_for_the_next() {
    let mut task = kept_a_day();
    for (id, at) in [("a", 100), ("b", 5_000)] {
        direct(&mut task, grant(id, "text"), at);
        direct(&mut task, stored(id), at);
    }
    direct(&mut task, grant("unfinished", "text"), 50);

    let early = direct(&mut task, Input::Alarm, 100 + DAY - 1);
    assert!(deleted(&early).is_empty());
    assert!(wakes(&early).contains(&(100 + DAY)));

    let due = direct(&mut task, Input::Alarm, 100 + DAY);
    assert_eq!(deleted(&due), ["a"]);
    assert!(wakes(&due).contains(&(5_000 + DAY)));
    assert!(task.artifact("a").is_none());

    let last = direct(&mut task, Input::Alarm, 6_000 + DAY);
    assert_eq!(deleted(&last), ["b"]);
    assert!(deleted(&direct(&mut task, Input::Alarm, 7_000 + DAY)).is_empty());
    // An upload that never completed is kept until the task is deleted.
    assert!(task.artifact("unfinished").is_some());
}

#[test]
fn a_restored_task_knows_its_attached_files_and_its_artifacts() {
    let mut task = kept_a_day();
    direct(&mut task, grant("f", ATTACHMENT), 10);
    direct(&mut task, stored("f"), 20);
    direct(&mut task, grant("pending", ATTACHMENT), 30);
    let mut records = vec![task.artifact("pending").unwrap().clone()];
    records.push(task.artifact("f").unwrap().clone());

    let mut restored = Task::restore(
        config(),
        Stored {
            artifacts: records,
            ..super::stored(&task)
        },
        40,
    );
    assert_eq!(restored.artifact("f").unwrap().size, Some(2_048));
    let call = the_call(&direct(&mut restored, message("upload my file"), 50));
    let prompt: String = call.messages.iter().map(|m| m.content.as_str()).collect();
    assert!(prompt.contains("\"f.csv\" (text/csv, 2 KB)"), "{prompt}");
    assert!(!prompt.contains("pending.csv"), "not stored: no attachment");
    // The file the restored task knows is not told again when its upload is reported again.
    assert!(attached(&direct(&mut restored, stored("f"), 60)).is_empty());
}
