//! A step on a site the person has not allowed Mimo on waits for them (`waiting_permission`)
//! instead of failing the run: it is sent again, under a new id, once they allow the site (the
//! extension resumes the task), and the run ends only when they never do.

use super::*;
use crate::conversation::SITE_WAIT_MS;

const SITE: &str = "http://x";

/// The extension's answer to `action`: not run, because Mimo is not allowed on [`SITE`].
fn site_refused(action: &BrowserAction) -> Input {
    Input::Extension(ActionEvent::Outcome {
        outcome: ActionOutcome {
            action_id: action.action_id.clone(),
            attempt: action.attempt,
            task_id: TASK.into(),
            status: ActionStatus::Error,
            result: None,
            model_result: None,
            error: Some(ErrorObject::new(
                ErrorCode::PermissionDenied,
                format!("Mimo is not allowed on {SITE}"),
            )),
            warnings: Vec::new(),
            dialog: None,
            tab_id: None,
            waits_for_site: Some(SITE.into()),
            timings: Vec::new(),
        },
    })
}

fn site_events(effects: &[Effect]) -> Vec<(u32, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Emit(FrontendEvent::SiteAccessNeeded { step, site }) => {
                Some((*step, site.clone()))
            }
            _ => None,
        })
        .collect()
}

/// A run whose first step (opening its tab on [`SITE`]) was refused for the site, at `now`.
fn waiting(task: &mut Task, now: u64) -> (BrowserAction, Vec<Effect>) {
    let start = run_at_task_start(task);
    let effects = direct(task, site_refused(&start), now);
    (start, effects)
}

#[test]
fn a_step_on_a_site_not_allowed_waits_for_the_person_and_goes_on_once_allowed() {
    let mut task = bound();
    let (start, effects) = waiting(&mut task, 10);
    assert_eq!(statuses(&effects), [TaskStatus::WaitingPermission]);
    assert_eq!(site_events(&effects), [(1, SITE.to_owned())]);
    assert!(
        calls(&effects).is_empty(),
        "the model is not asked meanwhile"
    );
    assert!(dispatched(&effects).is_empty());
    assert!(wakes(&effects).contains(&(10 + SITE_WAIT_MS)));
    // The extension is told (its side panel and overlay follow the status).
    assert!(effects.iter().any(|e| matches!(
        e,
        Effect::Tell {
            message: ServerToExtension::TaskState {
                status: TaskStatus::WaitingPermission,
                ..
            },
            ..
        }
    )));

    // The person allowed the site: the extension resumes the task, and the same command goes
    // out again under an id of its own.
    let effects = direct(&mut task, Input::Control(TaskControl::Resume), 20);
    assert_eq!(statuses(&effects), [TaskStatus::Running]);
    let again = the_dispatch(&effects);
    assert_ne!(again.action_id, start.action_id);
    assert_eq!(again.command, start.command);

    // It runs; the run goes on to prepare the page.
    let effects = direct(
        &mut task,
        outcome(
            &again,
            ActionStatus::Ok,
            json!({ "tabId": 7, "windowId": 1, "url": "http://x/" }),
        ),
        21,
    );
    assert!(matches!(
        the_dispatch(&effects).command,
        ActionCommand::BrowserObserve { .. }
    ));
    assert_eq!(task.record().unwrap().status, TaskStatus::Running);
}

#[test]
fn refused_again_it_waits_again_under_yet_another_id() {
    let mut task = bound();
    let (start, _) = waiting(&mut task, 10);
    let first = the_dispatch(&direct(&mut task, Input::Control(TaskControl::Resume), 20));
    let effects = direct(&mut task, site_refused(&first), 21);
    assert_eq!(statuses(&effects), [TaskStatus::WaitingPermission]);
    let second = the_dispatch(&direct(&mut task, Input::Control(TaskControl::Resume), 30));
    let ids = [&start.action_id, &first.action_id, &second.action_id];
    assert!(
        ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2],
        "{ids:?}"
    );
}

#[test]
fn a_page_the_step_led_to_on_a_site_not_allowed_waits_too_and_is_read_once_allowed() {
    let mut task = bound();
    let start = run_at_task_start(&mut task);
    let effects = direct(
        &mut task,
        outcome(
            &start,
            ActionStatus::Ok,
            json!({ "tabId": 7, "windowId": 1, "url": "http://x/" }),
        ),
        11,
    );
    let load = the_dispatch(&effects);
    let effects = direct(&mut task, site_refused(&load), 12);
    assert_eq!(statuses(&effects), [TaskStatus::WaitingPermission]);
    let effects = direct(&mut task, Input::Control(TaskControl::Resume), 13);
    let again = the_dispatch(&effects);
    assert_eq!(again.command, load.command);
    assert_ne!(again.action_id, load.action_id);
}

#[test]
fn the_wait_outlives_a_restart_and_ends_the_run_at_its_bound() {
    let mut task = bound();
    let (_, _) = waiting(&mut task, 10);
    let mut restored = Task::restore(config(), stored(&task), 100);
    assert_eq!(
        restored.record().unwrap().status,
        TaskStatus::WaitingPermission
    );
    // An alarm before the bound sends nothing and keeps the bound.
    let effects = direct(&mut restored, Input::Alarm, 200);
    assert!(dispatched(&effects).is_empty() && calls(&effects).is_empty());
    assert!(wakes(&effects).contains(&(10 + SITE_WAIT_MS)));
    // At the bound the step fails, saying why, and the run with it.
    let effects = direct(&mut restored, Input::Alarm, 10 + SITE_WAIT_MS);
    assert_eq!(statuses(&effects), [TaskStatus::Error]);
    let ended = effects.iter().find_map(|e| match e {
        Effect::Emit(FrontendEvent::ToolUsed {
            phase: mimo_protocol::ToolPhase::End,
            result: Some(result),
            ..
        }) => result.error.clone(),
        _ => None,
    });
    let error = ended.expect("the step ends with the refusal");
    assert_eq!(error.code, ErrorCode::PermissionDenied);
    assert!(error.message.contains("Allow Mimo on http://x"), "{error}");
    assert!(dispatched(&effects).is_empty());
}

#[test]
fn stopping_a_task_that_waits_for_a_site_sends_nothing_again() {
    let mut task = bound();
    waiting(&mut task, 10);
    let effects = direct(&mut task, Input::Control(TaskControl::Stop), 20);
    assert_eq!(statuses(&effects), [TaskStatus::Canceled]);
    assert!(dispatched(&effects).is_empty());
    // A resume after the stop brings nothing back.
    let effects = direct(&mut task, Input::Control(TaskControl::Resume), 30);
    assert!(dispatched(&effects).is_empty() && statuses(&effects).is_empty());
}

#[test]
fn a_task_paused_while_its_step_was_refused_sends_it_again_on_resume() {
    let mut task = bound();
    let start = run_at_task_start(&mut task);
    direct(&mut task, Input::Control(TaskControl::Pause), 5);
    let effects = direct(&mut task, site_refused(&start), 6);
    assert!(statuses(&effects).is_empty(), "it stays paused");
    let effects = direct(&mut task, Input::Control(TaskControl::Resume), 7);
    assert_eq!(statuses(&effects), [TaskStatus::Running]);
    assert_eq!(the_dispatch(&effects).command, start.command);
}

#[test]
fn the_developer_apis_action_refused_for_a_site_does_not_hold_the_task() {
    let mut task = bound();
    let action = the_dispatch(&direct(&mut task, submit("api-1"), 1));
    let effects = direct(&mut task, site_refused(&action), 2);
    assert!(!statuses(&effects).contains(&TaskStatus::WaitingPermission));
    assert_eq!(finished(&effects)[0].state, ActionState::Failed);
}
