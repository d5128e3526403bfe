//! Keeps a browser snapshot current from the extension's `tab_event`s (seed 000 `SnapshotStore`).

use mimo_protocol::snapshot::ChromeId;
use mimo_protocol::{BrowserSnapshot, TabEvent};

/// Applies one change to the snapshot. Events may arrive for things the snapshot has not seen
/// (a tab created before the last full sync was taken): they are inserted, never an error.
pub fn apply(snapshot: &mut BrowserSnapshot, event: TabEvent) {
    match event {
        TabEvent::TabUpserted { tab } => {
            if tab.active {
                deactivate_others(snapshot, tab.window_id, tab.tab_id);
                if window_is_focused(snapshot, tab.window_id) {
                    snapshot.active_tab_id = Some(tab.tab_id);
                }
            }
            match snapshot.tabs.iter_mut().find(|t| t.tab_id == tab.tab_id) {
                Some(existing) => *existing = tab,
                None => snapshot.tabs.push(tab),
            }
            sort_tabs(snapshot);
        }
        TabEvent::TabRemoved { tab_id } => {
            snapshot.tabs.retain(|t| t.tab_id != tab_id);
            if snapshot.active_tab_id == Some(tab_id) {
                snapshot.active_tab_id = None;
            }
        }
        TabEvent::TabActivated { tab_id, window_id } => {
            deactivate_others(snapshot, window_id, tab_id);
            if let Some(tab) = snapshot.tabs.iter_mut().find(|t| t.tab_id == tab_id) {
                tab.active = true;
            }
            if window_is_focused(snapshot, window_id) {
                snapshot.active_tab_id = Some(tab_id);
            }
        }
        TabEvent::WindowUpserted { window } => {
            if window.focused {
                focus(snapshot, Some(window.window_id));
            }
            match snapshot
                .windows
                .iter_mut()
                .find(|w| w.window_id == window.window_id)
            {
                Some(existing) => *existing = window,
                None => snapshot.windows.push(window),
            }
        }
        TabEvent::WindowRemoved { window_id } => {
            snapshot.windows.retain(|w| w.window_id != window_id);
            snapshot.groups.retain(|g| g.window_id != window_id);
            let active_gone = snapshot.active_tab_id.is_some_and(|id| {
                snapshot
                    .tabs
                    .iter()
                    .any(|t| t.tab_id == id && t.window_id == window_id)
            });
            snapshot.tabs.retain(|t| t.window_id != window_id);
            if active_gone {
                snapshot.active_tab_id = None;
            }
        }
        TabEvent::WindowFocused { window_id } => focus(snapshot, window_id),
        TabEvent::GroupUpserted { group } => {
            match snapshot
                .groups
                .iter_mut()
                .find(|g| g.group_id == group.group_id)
            {
                Some(existing) => *existing = group,
                None => snapshot.groups.push(group),
            }
        }
        TabEvent::GroupRemoved { group_id } => {
            snapshot.groups.retain(|g| g.group_id != group_id);
            for tab in snapshot
                .tabs
                .iter_mut()
                .filter(|t| t.group_id == Some(group_id))
            {
                tab.group_id = None;
            }
        }
    }
}

fn deactivate_others(snapshot: &mut BrowserSnapshot, window_id: ChromeId, tab_id: ChromeId) {
    for tab in snapshot
        .tabs
        .iter_mut()
        .filter(|t| t.window_id == window_id && t.tab_id != tab_id)
    {
        tab.active = false;
    }
}

/// A window counts as focused when the snapshot says so, or when no window is known to be
/// focused at all (a browser with one window reports no focus change events).
fn window_is_focused(snapshot: &BrowserSnapshot, window_id: ChromeId) -> bool {
    let focused = snapshot.windows.iter().find(|w| w.focused);
    focused.is_none_or(|w| w.window_id == window_id)
}

fn focus(snapshot: &mut BrowserSnapshot, window_id: Option<ChromeId>) {
    for window in snapshot.windows.iter_mut() {
        window.focused = Some(window.window_id) == window_id;
    }
    snapshot.active_tab_id = window_id
        .and_then(|w| snapshot.tabs.iter().find(|t| t.window_id == w && t.active))
        .map(|t| t.tab_id);
}

fn sort_tabs(snapshot: &mut BrowserSnapshot) {
    snapshot
        .tabs
        .sort_by_key(|t| (t.window_id, t.index, t.tab_id));
}

#[cfg(test)]
mod tests {
    use super::*;
    use mimo_protocol::{TabGroupInfo, TabInfo, WindowInfo};

    fn tab(id: ChromeId, window: ChromeId, index: u32, active: bool) -> TabInfo {
        TabInfo {
            tab_id: id,
            window_id: window,
            index,
            url: format!("http://127.0.0.1/{id}"),
            title: format!("Tab {id}"),
            status: "complete".into(),
            active,
            group_id: None,
        }
    }

    fn two_windows() -> BrowserSnapshot {
        BrowserSnapshot {
            windows: vec![
                WindowInfo {
                    window_id: 1,
                    focused: true,
                    kind: None,
                },
                WindowInfo {
                    window_id: 2,
                    focused: false,
                    kind: None,
                },
            ],
            tabs: vec![
                tab(10, 1, 0, true),
                tab(11, 1, 1, false),
                tab(20, 2, 0, true),
            ],
            groups: vec![],
            active_tab_id: Some(10),
            bridge: None,
        }
    }

    #[test]
    fn new_active_tab_in_focused_window_becomes_the_active_tab() {
        let mut s = two_windows();
        apply(
            &mut s,
            TabEvent::TabUpserted {
                tab: tab(12, 1, 2, true),
            },
        );
        assert_eq!(s.active_tab_id, Some(12));
        assert!(!s.tabs.iter().find(|t| t.tab_id == 10).unwrap().active);
        assert_eq!(
            s.tabs.iter().map(|t| t.tab_id).collect::<Vec<_>>(),
            vec![10, 11, 12, 20]
        );
    }

    #[test]
    fn activation_in_a_background_window_does_not_change_the_active_tab() {
        let mut s = two_windows();
        apply(
            &mut s,
            TabEvent::TabUpserted {
                tab: tab(21, 2, 1, false),
            },
        );
        apply(
            &mut s,
            TabEvent::TabActivated {
                tab_id: 21,
                window_id: 2,
            },
        );
        assert_eq!(s.active_tab_id, Some(10));
        assert!(s.tabs.iter().find(|t| t.tab_id == 21).unwrap().active);
        assert!(!s.tabs.iter().find(|t| t.tab_id == 20).unwrap().active);
        apply(&mut s, TabEvent::WindowFocused { window_id: Some(2) });
        assert_eq!(s.active_tab_id, Some(21));
        apply(&mut s, TabEvent::WindowFocused { window_id: None });
        assert_eq!(s.active_tab_id, None);
        assert!(s.windows.iter().all(|w| !w.focused));
    }

    #[test]
    fn updates_replace_and_removals_clean_up() {
        let mut s = two_windows();
        let mut renamed = tab(11, 1, 1, false);
        renamed.title = "Renamed".into();
        apply(&mut s, TabEvent::TabUpserted { tab: renamed });
        assert_eq!(s.tabs.iter().filter(|t| t.tab_id == 11).count(), 1);
        assert_eq!(
            s.tabs.iter().find(|t| t.tab_id == 11).unwrap().title,
            "Renamed"
        );
        apply(&mut s, TabEvent::TabRemoved { tab_id: 10 });
        assert_eq!(s.active_tab_id, None);
        apply(&mut s, TabEvent::WindowRemoved { window_id: 2 });
        assert_eq!(s.windows.len(), 1);
        assert!(s.tabs.iter().all(|t| t.window_id == 1));
    }

    #[test]
    fn removing_a_group_ungroups_its_tabs() {
        let mut s = two_windows();
        let group = TabGroupInfo {
            group_id: 5,
            window_id: 1,
            title: "Mimo".into(),
            color: "blue".into(),
            collapsed: false,
        };
        apply(
            &mut s,
            TabEvent::GroupUpserted {
                group: group.clone(),
            },
        );
        let mut grouped = tab(11, 1, 1, false);
        grouped.group_id = Some(5);
        apply(&mut s, TabEvent::TabUpserted { tab: grouped });
        apply(
            &mut s,
            TabEvent::GroupUpserted {
                group: TabGroupInfo {
                    title: "Task".into(),
                    ..group
                },
            },
        );
        assert_eq!(s.groups.len(), 1);
        assert_eq!(s.groups[0].title, "Task");
        apply(&mut s, TabEvent::GroupRemoved { group_id: 5 });
        assert!(s.groups.is_empty());
        assert_eq!(
            s.tabs.iter().find(|t| t.tab_id == 11).unwrap().group_id,
            None
        );
    }

    #[test]
    fn events_for_unknown_windows_insert_them() {
        let mut s = BrowserSnapshot::default();
        apply(
            &mut s,
            TabEvent::TabUpserted {
                tab: tab(1, 9, 0, true),
            },
        );
        assert_eq!(
            s.active_tab_id,
            Some(1),
            "with no focus information the tab's window counts as focused"
        );
        apply(
            &mut s,
            TabEvent::WindowUpserted {
                window: WindowInfo {
                    window_id: 9,
                    focused: true,
                    kind: Some("normal".into()),
                },
            },
        );
        assert_eq!(s.windows.len(), 1);
        assert_eq!(s.active_tab_id, Some(1));
    }
}
