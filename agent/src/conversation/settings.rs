//! The person's settings of a task: the tab a run starts on, its own sites, step-by-step mode,
//! a script's bounds, the local bridge's switches, and the extension it runs in.

use mimo_protocol::{DomainPolicy, ErrorCode, ErrorObject, FrontendEvent};

use super::{Conversation, Effect};

impl Conversation {
    /// The person asks that the next browser run start on one of their tabs (or no more).
    pub fn start_on_tab(&mut self, tab_id: Option<i32>, now: u64) -> Vec<Effect> {
        if self.task.start_tab == tab_id {
            return Vec::new();
        }
        self.task.start_tab = tab_id;
        self.task.updated_at = now;
        Vec::new()
    }

    /// The person sets the task's own allowed and blocked sites (rules as in
    /// `MIMO_ALLOWED_DOMAINS`): from now on the server refuses going elsewhere, and the next
    /// task tab's extension is told them.
    pub fn set_domains(
        &mut self,
        allowed: Vec<String>,
        blocked: Vec<String>,
        now: u64,
    ) -> Result<Vec<Effect>, ErrorObject> {
        let tidy = |rules: Vec<String>| {
            let mut out: Vec<String> = Vec::new();
            for rule in rules.iter().map(|r| r.trim().to_ascii_lowercase()) {
                if !rule.is_empty() && !out.contains(&rule) {
                    out.push(rule);
                }
            }
            out
        };
        let domains = DomainPolicy {
            allowed: tidy(allowed),
            blocked: tidy(blocked),
        };
        if let Some(why) = domains.problem() {
            return Err(ErrorObject::new(ErrorCode::SchemaValidationFailed, why));
        }
        if domains == self.task.domains {
            return Ok(Vec::new());
        }
        self.task.domains = domains.clone();
        self.task.updated_at = now;
        Ok(vec![Effect::Emit(FrontendEvent::TaskDomains {
            allowed: domains.allowed,
            blocked: domains.blocked,
        })])
    }

    /// Step-by-step mode on or off: from the next step on, each waits for the person.
    pub fn set_step_mode(&mut self, on: bool, now: u64) -> Vec<Effect> {
        if self.task.step_by_step == on {
            return Vec::new();
        }
        self.task.step_by_step = on;
        self.task.updated_at = now;
        vec![Effect::Emit(FrontendEvent::StepMode { step_by_step: on })]
    }

    /// The bounds of the script that carries out this task's actions, kept with the task.
    pub fn set_script_bounds(
        &mut self,
        bounds: crate::records::ScriptBounds,
        now: u64,
    ) -> Vec<Effect> {
        if self.task.script_bounds == Some(bounds) {
            return Vec::new();
        }
        self.task.script_bounds = Some(bounds);
        self.task.updated_at = now;
        Vec::new()
    }

    /// The local bridge's switches for this task: whether its actions are offered, and whether
    /// writes, edits and commands wait for the person.
    pub fn set_bridge(&mut self, allow: bool, confirm: bool, now: u64) -> Vec<Effect> {
        if (self.task.allow_bridge, self.task.confirm_bridge) == (allow, confirm) {
            return Vec::new();
        }
        self.task.allow_bridge = allow;
        self.task.confirm_bridge = confirm;
        self.task.updated_at = now;
        vec![Effect::Emit(FrontendEvent::BridgeMode { allow, confirm })]
    }

    pub fn select_client(&mut self, client_id: String, now: u64) -> Vec<Effect> {
        if self.task.selected_client_id.as_deref() == Some(client_id.as_str()) {
            return Vec::new();
        }
        self.task.selected_client_id = Some(client_id);
        self.task.updated_at = now;
        vec![self.status_event()]
    }
}
