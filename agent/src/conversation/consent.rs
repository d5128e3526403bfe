//! The one place that decides whether an action may be sent to the person's browser (or, through
//! it, to their computer), whoever queued it: the agent's run, a sub-agent, or the developer API
//! (`POST /api/task/{id}/actions`). Every rule that protects the person from what a caller asks
//! is here, so no caller has a path around it (DESIGN.md, "Trust model").
//!
//! The caller's command is never trusted for the task's own rules: a `task_start` gets the
//! deployment's and the task's site rules, the redaction policy and the bridge permission from
//! the task, not from whoever sent it.

use mimo_protocol::bridge::{protected_location, BridgeTool};
use mimo_protocol::{ActionCommand, AgentAction, ChatRole, ErrorCode, ErrorObject};

use super::Conversation;
use crate::flow::{self, PrivateSource, Seen};

/// Who queued an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asker {
    /// The agent's run: `confirmed` when the person confirmed this very step.
    Agent { confirmed: bool },
    /// The developer API: it holds the deployment's token, not the person's consent, so it can
    /// neither confirm a step nor adopt one of the person's tabs.
    Api,
}

/// What becomes of a queued action.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Send it, as given here (the task's own rules put in).
    Send(ActionCommand),
    /// It waits for the person's confirmation, for this reason; then it is sent as given here.
    Ask { command: ActionCommand, why: String },
    /// It never runs.
    Refuse(ErrorObject),
}

impl Conversation {
    /// Decides what becomes of `command`, queued by `asker`: the task's rules first, then where
    /// the step could carry data ([`flow::outbound`]) — a step the person did not confirm that
    /// can send data somewhere they did not ask for waits for them, whatever the page said. A
    /// step whose element is only known when it acts (a point, a key) carries what it was rated
    /// on ([`flow::expect_at_act`]) unless the person confirmed it.
    pub(crate) fn admit(&self, command: ActionCommand, asker: Asker) -> Verdict {
        let verdict = self.admit_by_rules(command, asker);
        if asker == (Asker::Agent { confirmed: true }) {
            return verdict;
        }
        match verdict {
            Verdict::Send(mut command) => {
                let seen = self.seen();
                flow::expect_at_act(&mut command, &seen);
                match flow::outbound(&command, &seen) {
                    Some(why) => Verdict::Ask { command, why },
                    None => Verdict::Send(command),
                }
            }
            other => other,
        }
    }

    /// What the run has seen, for [`flow::outbound`]: what the person wrote, the page it is on,
    /// the private data it read (another tab, a file of theirs), the field it typed into last.
    pub(crate) fn seen(&self) -> Seen<'_> {
        let mut person: Vec<&str> = self
            .history
            .iter()
            .filter(|m| m.message.role == ChatRole::User)
            .map(|m| m.message.content.as_str())
            .collect();
        let Some(run) = self.run.as_ref() else {
            return Seen {
                person,
                ..Seen::default()
            };
        };
        person.extend(run.updates.iter().map(String::as_str));
        let private = run
            .steps
            .iter()
            .filter_map(|step| {
                // What the model read (it could carry that outward), not what is kept of it.
                let result = step.result.as_ref().filter(|r| r.ok)?.for_model()?;
                let what = match &step.output.action {
                    AgentAction::ReadTab { .. } => {
                        let title = result["title"].as_str().unwrap_or_default();
                        let site = result["url"].as_str().and_then(flow::host);
                        format!("your tab {title:?} ({})", site.unwrap_or_default())
                    }
                    AgentAction::FileRead { path, .. } => {
                        format!("the file {path} on your computer")
                    }
                    _ => return None,
                };
                Some(PrivateSource::new(what, &result.to_string()))
            })
            .collect();
        let mut seen = Seen {
            person,
            page_url: run.observation.as_ref().map(|o| o.url.as_str()),
            page_text: run.observation.as_ref().map(|o| o.content.as_str()),
            private,
            last_typed: None,
            facts: run.observation.as_ref().map(|o| &o.facts),
        };
        seen.last_typed = run
            .steps
            .iter()
            .rev()
            .find_map(|step| match &step.output.action {
                AgentAction::Type { text, .. } => {
                    let facts = step.typed_into.as_ref()?;
                    Some((facts, seen.holds_data(text)))
                }
                _ => None,
            });
        seen
    }

    /// The task's own rules: where it may go, whose tabs, whether it may reach the bridge.
    fn admit_by_rules(&self, command: ActionCommand, asker: Asker) -> Verdict {
        let task = &self.task;
        let refuse =
            |why: String| Verdict::Refuse(ErrorObject::new(ErrorCode::PermissionDenied, why));
        match command {
            ActionCommand::TaskStart {
                url,
                reuse_existing_tab,
                group_title,
                adopt_tab_id,
                ..
            } => {
                if let Some(why) = url.as_deref().and_then(|u| self.domain_refusal(u)) {
                    return refuse(why);
                }
                // Only the person chooses which of their tabs a task continues on, and only a
                // tab on a site the task may visit.
                if adopt_tab_id.is_some() && adopt_tab_id != task.start_tab {
                    return refuse(format!(
                        "tab {} is one of the person's own tabs: only the person can let a task \
                         continue on it (\"continue on this page\" in the web app)",
                        adopt_tab_id.unwrap_or_default()
                    ));
                }
                if let Some(why) = adopt_tab_id.and_then(|tab| self.tab_refusal(tab)) {
                    return refuse(why);
                }
                Verdict::Send(self.task_start(url, reuse_existing_tab, group_title, adopt_tab_id))
            }
            ActionCommand::BrowserReadTab { tab_id } => match self.tab_refusal(tab_id) {
                Some(why) => refuse(why),
                None => Verdict::Send(command),
            },
            ActionCommand::BrowserNavigate { ref url }
            | ActionCommand::BrowserOpenTab { ref url } => match self.domain_refusal(url) {
                Some(why) => refuse(why),
                None => Verdict::Send(command),
            },
            ActionCommand::BridgeInvoke {
                tool,
                args,
                agent_id,
                ..
            } => {
                if !task.allow_bridge {
                    return refuse(
                        "this task may not use files or commands on the person's computer: the \
                         person has not allowed the local bridge for it"
                            .to_owned(),
                    );
                }
                let confirmed = asker == Asker::Agent { confirmed: true };
                // A write or edit where files configure programs that run on their own (`.git/`,
                // a shell startup file) is confirmed as such, even when the person lets the
                // task's other changes run unasked; the bridge refuses it otherwise.
                let path = args["path"].as_str().unwrap_or_default().to_owned();
                let protected = matches!(tool, BridgeTool::Write | BridgeTool::Edit)
                    .then(|| protected_location(&path))
                    .flatten();
                let command = ActionCommand::BridgeInvoke {
                    tool,
                    args,
                    agent_id,
                    confirmed_protected_path: protected
                        .as_ref()
                        .filter(|_| confirmed)
                        .map(|_| path.clone()),
                };
                if let Some(location) = protected.filter(|_| !confirmed) {
                    return Verdict::Ask {
                        command,
                        why: format!(
                            "it changes {path:?} in {location}, where files can make programs run \
                             on the person's computer"
                        ),
                    };
                }
                let changes = match tool {
                    BridgeTool::Read => None,
                    BridgeTool::Write => Some("writes a file on the person's computer"),
                    BridgeTool::Edit => Some("changes a file on the person's computer"),
                    BridgeTool::Bash => Some("runs a command on the person's computer"),
                };
                match (changes.filter(|_| task.confirm_bridge), confirmed) {
                    (None, _) | (Some(_), true) => Verdict::Send(command),
                    (Some(what), false) => Verdict::Ask {
                        command,
                        why: format!("it {what}"),
                    },
                }
            }
            command => Verdict::Send(command),
        }
    }

    /// Why the task may not read or continue on the person's tab `tab_id`: the site it shows is
    /// one the task may not visit (as last synced; the extension checks the tab's address again).
    fn tab_refusal(&self, tab_id: i32) -> Option<String> {
        let tabs = &self.browser.as_ref()?.tabs;
        let tab = tabs.iter().find(|t| t.tab_id == tab_id)?;
        self.domain_refusal(&tab.url)
            .map(|why| format!("tab {tab_id} shows a site this task may not visit: {why}"))
    }

    /// The `task_start` that opens (or reuses) the task's tab, carrying the rules the extension
    /// holds the task to: where it may go, what it keeps out of evidence, whether it may reach
    /// the local bridge.
    pub(crate) fn task_start(
        &self,
        url: Option<String>,
        reuse_existing_tab: Option<bool>,
        group_title: Option<String>,
        adopt_tab_id: Option<i32>,
    ) -> ActionCommand {
        ActionCommand::TaskStart {
            url,
            reuse_existing_tab,
            group_title,
            adopt_tab_id,
            domains: (!self.config.domains.is_open()).then(|| self.config.domains.clone()),
            task_domains: (!self.task.domains.is_open())
                .then(|| Box::new(self.task.domains.clone())),
            redaction: Some(self.config.redaction.clone()),
        }
    }
}

impl Verdict {
    /// The verdict for a caller that cannot wait for the person (the developer API): a step that
    /// needs their confirmation is refused, saying how it could run.
    pub fn or_refuse(self) -> Result<ActionCommand, ErrorObject> {
        match self {
            Verdict::Send(command) => Ok(command),
            Verdict::Refuse(error) => Err(error),
            Verdict::Ask { why, .. } => Err(ErrorObject::new(
                ErrorCode::ConfirmationRequired,
                format!(
                    "this action needs the person's confirmation ({why}), which the developer \
                     API cannot give: ask the agent for it in the task's chat, where the person \
                     is asked, or the person turns off \"confirm bridge steps\" for the task"
                ),
            )),
        }
    }
}
