//! The browser snapshot: windows, tabs and tab groups of one extension's browser, kept live by
//! `full_state_sync` and `tab_event` messages (seed 000 `SnapshotStore`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Chrome's ids are 32-bit integers; `i32` keeps them plain numbers in TypeScript.
pub type ChromeId = i32;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BrowserSnapshot {
    pub windows: Vec<WindowInfo>,
    pub tabs: Vec<TabInfo>,
    pub groups: Vec<TabGroupInfo>,
    /// The active tab of the focused window, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub active_tab_id: Option<ChromeId>,
    /// The local bridge the extension is connected to (authenticated), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub bridge: Option<crate::bridge::BridgeInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WindowInfo {
    pub window_id: ChromeId,
    pub focused: bool,
    /// `normal`, `popup`, …, as Chrome reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub kind: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TabInfo {
    pub tab_id: ChromeId,
    pub window_id: ChromeId,
    pub index: u32,
    pub url: String,
    pub title: String,
    /// `loading` or `complete`.
    pub status: String,
    pub active: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub group_id: Option<ChromeId>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TabGroupInfo {
    pub group_id: ChromeId,
    pub window_id: ChromeId,
    pub title: String,
    pub color: String,
    pub collapsed: bool,
}

/// One change in the browser, sent by the extension as it happens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(remote = "Self", rename_all = "snake_case")]
#[ts(tag = "kind")]
pub enum TabEvent {
    /// A tab appeared or changed (url, title, status, active, group, position).
    TabUpserted {
        tab: TabInfo,
    },
    #[serde(rename_all = "camelCase")]
    TabRemoved {
        tab_id: ChromeId,
    },
    #[serde(rename_all = "camelCase")]
    TabActivated {
        tab_id: ChromeId,
        window_id: ChromeId,
    },
    WindowUpserted {
        window: WindowInfo,
    },
    #[serde(rename_all = "camelCase")]
    WindowRemoved {
        window_id: ChromeId,
    },
    /// `None` when no Chrome window has focus.
    #[serde(rename_all = "camelCase")]
    WindowFocused {
        window_id: Option<ChromeId>,
    },
    GroupUpserted {
        group: TabGroupInfo,
    },
    #[serde(rename_all = "camelCase")]
    GroupRemoved {
        group_id: ChromeId,
    },
}
via_json_value_internal!(TabEvent, "kind");
