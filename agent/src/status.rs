//! The task state machine (DESIGN.md, seed 000 §2.1): every allowed transition, in one place.

use mimo_protocol::TaskStatus;

/// Whether a task may move from `from` to `to`.
///
/// `created → running ⇄ ongoing → completed | error | canceled`, with `waiting_confirmation`
/// (a risky action waits for the person) and `takeover` (the person drives; automation pauses)
/// entered from an active state and left by resuming (`running`) or canceling;
/// `waiting_permission` (a step needs a site the person has not allowed Mimo on) entered from
/// `running`, left when they allow it (`running`), by the wait's bound (`error`) or by stopping
/// (`canceled`); `paused` (the
/// person holds the task: nothing new starts) entered from `running` or `ongoing`, left by
/// resuming or stopping, or by what was in flight finishing the task. A finished task
/// is not dead: a new user message starts another turn (`→ running`).
pub fn can_transition(from: TaskStatus, to: TaskStatus) -> bool {
    use TaskStatus::*;
    matches!(
        (from, to),
        (Created, Running | Canceled)
            | (
                Running,
                Ongoing
                    | WaitingConfirmation
                    | WaitingPermission
                    | Takeover
                    | Completed
                    | Error
                    | Canceled
            )
            | (Ongoing, Running | Takeover | Completed | Error | Canceled)
            | (
                WaitingConfirmation | WaitingPermission,
                Running | Error | Canceled
            )
            | (Takeover, Running | Canceled)
            | (Running | Ongoing, Paused)
            | (Paused, Running | Completed | Error | Canceled)
            | (Completed | Error | Canceled, Running)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use TaskStatus::*;

    const ALL: [TaskStatus; 10] = [
        Created,
        Running,
        Ongoing,
        WaitingConfirmation,
        WaitingPermission,
        Takeover,
        Paused,
        Completed,
        Error,
        Canceled,
    ];

    #[test]
    fn allowed_transitions_are_exactly_the_designed_ones() {
        let allowed: Vec<(TaskStatus, TaskStatus)> = ALL
            .iter()
            .flat_map(|&f| ALL.iter().map(move |&t| (f, t)))
            .filter(|&(f, t)| can_transition(f, t))
            .collect();
        let expected = vec![
            (Created, Running),
            (Created, Canceled),
            (Running, Ongoing),
            (Running, WaitingConfirmation),
            (Running, WaitingPermission),
            (Running, Takeover),
            (Running, Paused),
            (Running, Completed),
            (Running, Error),
            (Running, Canceled),
            (Ongoing, Running),
            (Ongoing, Takeover),
            (Ongoing, Paused),
            (Ongoing, Completed),
            (Ongoing, Error),
            (Ongoing, Canceled),
            (WaitingConfirmation, Running),
            (WaitingConfirmation, Error),
            (WaitingConfirmation, Canceled),
            (WaitingPermission, Running),
            (WaitingPermission, Error),
            (WaitingPermission, Canceled),
            (Takeover, Running),
            (Takeover, Canceled),
            (Paused, Running),
            (Paused, Completed),
            (Paused, Error),
            (Paused, Canceled),
            (Completed, Running),
            (Error, Running),
            (Canceled, Running),
        ];
        assert_eq!(allowed, expected);
    }

    #[test]
    fn no_state_transitions_to_itself_or_back_to_created() {
        for s in ALL {
            assert!(!can_transition(s, s), "{s:?} → itself");
            assert!(!can_transition(s, Created), "{s:?} → created");
        }
    }
}
