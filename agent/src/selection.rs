//! Which extension instance a task uses (seed 000 `ExtensionRegistry`).

use mimo_protocol::{ErrorCode, ErrorObject};

/// What the registry knows about one extension instance when choosing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub client_id: String,
    pub online: bool,
    pub last_used_at: Option<u64>,
    pub last_seen_at: u64,
}

/// Picks the extension for a task.
///
/// A task already bound to an extension keeps it: acting in a different browser than the one
/// the person chose (or was shown) would be acting in the wrong place, so a bound extension that
/// is offline is an error, not a reason to switch. An unbound task gets the only online
/// extension, or, with several online, the most recently used one (then the most recently seen).
pub fn choose_client(candidates: &[Candidate], bound: Option<&str>) -> Result<String, ErrorObject> {
    if let Some(bound) = bound {
        return match candidates.iter().find(|c| c.client_id == bound) {
            Some(c) if c.online => Ok(c.client_id.clone()),
            _ => Err(ErrorObject::new(
                ErrorCode::PluginOffline,
                format!(
                    "The extension this task uses ({bound}) is offline. Open that browser with \
                     the Mimo extension connected, or pick another extension for this task."
                ),
            )),
        };
    }
    candidates
        .iter()
        .filter(|c| c.online)
        .max_by_key(|c| (c.last_used_at, c.last_seen_at))
        .map(|c| c.client_id.clone())
        .ok_or_else(ErrorObject::plugin_offline)
}

/// A task's binding as decided: the extension, and the time to record as its last use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    pub client_id: String,
    pub used_at: u64,
}

/// Binds a task to an extension: the person's `explicit` choice (honoured even while that
/// extension is offline: they picked that browser, and the task waits for it; an unknown one is
/// `NOT_FOUND`), else [`choose_client`] with the task's current binding `bound`.
///
/// Uses are ordered strictly, even within one millisecond (the runtime's clock only moves
/// between I/O events), so "most recently used" is never a tie.
pub fn bind(
    candidates: &[Candidate],
    explicit: Option<&str>,
    bound: Option<&str>,
    now: u64,
) -> Result<Bound, ErrorObject> {
    let client_id = match explicit {
        Some(explicit) if candidates.iter().any(|c| c.client_id == explicit) => explicit.to_owned(),
        Some(explicit) => {
            return Err(ErrorObject::new(
                ErrorCode::NotFound,
                format!("no extension with clientId {explicit:?}"),
            ))
        }
        None => choose_client(candidates, bound)?,
    };
    let latest = candidates
        .iter()
        .filter_map(|c| c.last_used_at)
        .max()
        .unwrap_or(0);
    Ok(Bound {
        client_id,
        used_at: now.max(latest + 1),
    })
}

/// Whether extension `client_id` may act for task `task_id` — report on its actions (an ack, a
/// result, a takeover), store and read its artifacts: only while the task is bound to it, so
/// that no extension acts on another browser's task.
pub fn may_act_for(bound: Option<&str>, client_id: &str, task_id: &str) -> Result<(), ErrorObject> {
    if bound == Some(client_id) {
        return Ok(());
    }
    Err(ErrorObject::new(
        ErrorCode::PermissionDenied,
        format!("task {task_id} is not bound to this extension"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bound_extension_may_act_for_on_a_task() {
        assert!(may_act_for(Some("a"), "a", "t1").is_ok());
        let other = may_act_for(Some("b"), "a", "t1").unwrap_err();
        assert_eq!(other.code, ErrorCode::PermissionDenied);
        assert!(other.message.contains("t1"));
        assert!(may_act_for(None, "a", "t1").is_err());
    }

    #[test]
    fn an_explicit_choice_is_honoured_offline_and_an_unknown_one_refused() {
        let c = [cand("a", false, Some(5), 5), cand("b", true, Some(9), 9)];
        let bound = bind(&c, Some("a"), Some("b"), 20).unwrap();
        assert_eq!(
            bound,
            Bound {
                client_id: "a".into(),
                used_at: 20
            }
        );
        let error = bind(&c, Some("zz"), None, 20).unwrap_err();
        assert_eq!(error.code, ErrorCode::NotFound);
    }

    #[test]
    fn automatic_binding_keeps_the_bound_extension_and_fails_when_it_is_offline() {
        let c = [cand("a", false, Some(5), 5), cand("b", true, Some(9), 9)];
        assert_eq!(bind(&c, None, None, 20).unwrap().client_id, "b");
        assert_eq!(
            bind(&c, None, Some("a"), 20).unwrap_err().code,
            ErrorCode::PluginOffline
        );
    }

    #[test]
    fn uses_are_ordered_strictly_within_one_millisecond() {
        let c = [cand("a", true, Some(20), 1), cand("b", true, None, 1)];
        // The clock has not moved since "a" was used: "b", used now, is still the later one.
        let bound = bind(&c, Some("b"), None, 20).unwrap();
        assert_eq!(bound.used_at, 21);
        assert_eq!(bind(&c, None, None, 50).unwrap().used_at, 50);
    }

    fn cand(id: &str, online: bool, used: Option<u64>, seen: u64) -> Candidate {
        Candidate {
            client_id: id.into(),
            online,
            last_used_at: used,
            last_seen_at: seen,
        }
    }

    #[test]
    fn the_only_online_extension_is_chosen() {
        let c = [cand("a", false, Some(9), 9), cand("b", true, None, 1)];
        assert_eq!(choose_client(&c, None).unwrap(), "b");
    }

    #[test]
    fn with_several_online_the_most_recently_used_wins() {
        let c = [
            cand("a", true, Some(5), 100),
            cand("b", true, Some(7), 1),
            cand("c", true, None, 200),
        ];
        assert_eq!(choose_client(&c, None).unwrap(), "b");
        let never_used = [cand("a", true, None, 100), cand("b", true, None, 300)];
        assert_eq!(choose_client(&never_used, None).unwrap(), "b");
    }

    #[test]
    fn none_online_is_plugin_offline_and_retryable() {
        let err = choose_client(&[cand("a", false, Some(1), 1)], None).unwrap_err();
        assert_eq!(err.code, ErrorCode::PluginOffline);
        assert!(err.retryable);
        assert_eq!(
            choose_client(&[], None).unwrap_err().code,
            ErrorCode::PluginOffline
        );
    }

    #[test]
    fn a_bound_extension_is_kept_and_never_silently_replaced() {
        let c = [cand("a", true, Some(9), 9), cand("b", true, None, 1)];
        assert_eq!(choose_client(&c, Some("b")).unwrap(), "b");
        let offline = [cand("a", true, Some(9), 9), cand("b", false, None, 1)];
        let err = choose_client(&offline, Some("b")).unwrap_err();
        assert_eq!(err.code, ErrorCode::PluginOffline);
        assert!(err.message.contains("(b)"));
    }
}
