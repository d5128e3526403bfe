//! A browser run: the agent loop of seed 001 (observe → think → act) inside a conversation.
//!
//! The model's first reply to a message decides: plain text ends as chat; a call of the
//! `AgentOutput` tool starts a run. Then, step by step: the step's action is carried out (the
//! task bound to an extension and its tab opened first), the page is prepared (loaded →
//! screenshot + readability → element index, seed 000 §4.5), and the model is asked for the next
//! step, until it calls `done`, the person stops, an error ends it, or the step limit is reached.
//!
//! The run is persisted as a whole after every change (the task saves it whenever it differs
//! from what storage holds); together with the
//! stored action queue that lets a restarted coordinator continue where it was without running
//! any action twice ([`Conversation::resume_run`]).

use std::collections::BTreeMap;

use mimo_protocol::action::{
    BoundingBox, DomIndexResult, ObservedPart, ReadabilityResult, ScreenshotResult,
};
use mimo_protocol::agent::{SubtaskStatus, AGENT_TOOL_NAME, BROWSER_TASK_TOOL_NAME};
use mimo_protocol::bridge::agent_id;
use mimo_protocol::script::is_script_client;
use mimo_protocol::{
    ActionCommand, ActionStatus, AgentAction, AgentOutput, ChatMessage, ChatRole,
    ConfirmationRequest, ErrorCode, ErrorObject, FrontendEvent, OutputStatus, PageDialog,
    RiskLevel, TaskStatus, TokenUsage, ToolPhase, ToolResult,
};

use serde_json::json;

use super::{next_attempt, Asker, ConfirmAnswer, Conversation, Effect, Verdict};
use crate::actions::{ActionRecord, ActionState};
use crate::llm::{self, LlmError, LlmErrorKind};
use crate::prompt::{self, RunView};
use crate::records::{AgentRun, Budget, Observation, Phase, Purpose, Step};
use crate::task::BindPurpose;
use crate::{answer_format, risk, skills, text};

mod answered;
mod command;
mod confirm;
mod finish;
mod model;
mod observe;
mod rating;

use command::*;

/// How long a run waits for the person to allow Mimo on a site one of its steps needs before
/// it ends: long enough to find the side panel, short enough that a forgotten task ends.
pub const SITE_WAIT_MS: u64 = 10 * 60 * 1000;

impl Conversation {
    pub fn run(&self) -> Option<&AgentRun> {
        self.run.as_ref()
    }

    pub(crate) fn run_is_active(&self) -> bool {
        self.run.as_ref().is_some_and(AgentRun::is_active)
    }

    /// The model's turn ended with tool calls, or while a run is going: the run takes it.
    pub(crate) fn run_turn_done(
        &mut self,
        tool_calls: Vec<llm::ToolCall>,
        thought: String,
        usage: TokenUsage,
        now: u64,
    ) -> Vec<Effect> {
        let turn_id = self.task.current_turn.clone().unwrap_or_default();
        let mut effects = self.finish_run_turn(now);
        if !self.run_is_active() {
            if tool_calls.iter().any(|c| c.name == BROWSER_TASK_TOOL_NAME) {
                effects.extend(self.delegate(tool_calls, thought, now));
                return effects;
            }
            self.run = Some(self.request_run(self.request_position()));
        }
        let Some(call) = tool_calls.into_iter().next() else {
            let error = LlmError::new(
                LlmErrorKind::NoToolCall,
                "the model answered without calling AgentOutput",
            );
            let correction = vec![
                llm::ChatMessage::assistant(text::cut(&thought, 2_000)),
                llm::ChatMessage::user(
                    "You must reply with a call of the AgentOutput tool: a reflection and one \
                     action, or the done action to finish.",
                ),
            ];
            effects.extend(self.retry_run_call(error, correction, now));
            return effects;
        };
        let parsed = if call.name == AGENT_TOOL_NAME {
            serde_json::from_value::<AgentOutput>(call.arguments.clone()).map_err(|e| e.to_string())
        } else {
            Err(format!(
                "there is no tool named {:?}; call {AGENT_TOOL_NAME}",
                call.name
            ))
        };
        let output = match parsed {
            Ok(output) => output,
            Err(why) => {
                let error = ErrorObject::new(
                    ErrorCode::SchemaValidationFailed,
                    format!("the arguments do not match the AgentOutput schema: {why}. Call AgentOutput again with valid arguments."),
                );
                let correction = vec![
                    llm::ChatMessage::assistant_with_tool_calls(
                        text::cut(&thought, 2_000),
                        vec![call.clone()],
                    ),
                    llm::ChatMessage::tool_result(
                        call.id.clone(),
                        serde_json::to_string(&ToolResult {
                            tool_call_id: call.id.clone(),
                            name: call.name.clone(),
                            ok: false,
                            result: None,
                            model_result: None,
                            error: Some(error.clone()),
                            warnings: Vec::new(),
                            partial: false,
                        })
                        .unwrap_or_default(),
                    ),
                ];
                let llm_error = LlmError::new(LlmErrorKind::InvalidToolArguments, error.message);
                effects.extend(self.retry_run_call(llm_error, correction, now));
                return effects;
            }
        };
        let run = self.run.as_mut().expect("run");
        run.llm_retries = 0;
        run.corrections.clear();
        let step = Step {
            number: run.steps.len() as u32 + 1,
            turn_id: turn_id.clone(),
            tool_call_id: call.id,
            thought,
            output,
            result: None,
            usage,
            page: None,
            confirmed: false,
            typed_into: None,
        };
        let cost_usd = self
            .config
            .price
            .map(|p| p.cost_micros(usage.input_tokens, usage.output_tokens) as f64 / 1e6);
        run.steps.push(step);
        let risk = self.rate_latest_step().level;
        let target = self.latest_target_box();
        let target_name = self.latest_target_name();
        let step = self
            .run
            .as_ref()
            .and_then(|r| r.steps.last())
            .expect("step");
        effects.push(Effect::Emit(FrontendEvent::ToolUsed {
            step: step.number,
            tool_call_id: step.tool_call_id.clone(),
            phase: ToolPhase::Start,
            reflection: Some(step.output.reflection.clone()),
            action: step.output.action.clone(),
            result: None,
            summary: None,
            usage: Some(usage),
            cost_usd,
            risk: Some(risk),
            target,
            target_name,
            skill: skills::guide(self.skills_in_use(), step.output.action.name())
                .map(str::to_owned),
        }));
        if let Some(error) = self.over_limits() {
            // The step is not run: the model hears why, and the run ends.
            let step = self
                .run
                .as_ref()
                .and_then(|r| r.steps.last())
                .expect("step");
            let result = ToolResult {
                tool_call_id: step.tool_call_id.clone(),
                name: step.output.action.name().to_owned(),
                ok: false,
                result: None,
                model_result: None,
                error: Some(error.clone()),
                warnings: Vec::new(),
                partial: false,
            };
            effects.extend(self.end_step(result));
            effects.extend(self.fail_run(error, now));
            return effects;
        }
        effects.extend(self.act(&turn_id, now));
        effects
    }

    /// Whether the latest step may not run: its request is over its token or cost budget, or
    /// the model goes round in circles (it is warned before, at 3 and 5); see
    /// [`super::limits`]. Finishing is always allowed.
    fn over_limits(&mut self) -> Option<ErrorObject> {
        let step = self.run.as_ref()?.steps.last()?;
        if matches!(step.output.action, AgentAction::Done { .. }) {
            return None;
        }
        self.request_over_budget()
            .or_else(|| self.going_in_circles())
    }

    /// Carries out the latest step's choice.
    fn act(&mut self, turn_id: &str, now: u64) -> Vec<Effect> {
        let run = self.run.as_ref().expect("run");
        let step = run.steps.last().expect("step");
        // The schema offered only what the skills allow; a model that answers otherwise is
        // refused all the same.
        if let Some(why) = skills::refusal(self.skills_in_use(), step.output.action.name()) {
            return self.refuse_step(ErrorObject::new(ErrorCode::PermissionDenied, why), now);
        }
        let uses_bridge = step.output.action.kind().uses_bridge();
        if uses_bridge && self.usable_bridge().is_none() {
            let why = if self.task.allow_bridge {
                "no local bridge is connected to the extension, so files and commands on the \
                 user's computer cannot be reached: carry on without them, or finish with done \
                 and ask the user to start mimo-bridge"
            } else {
                "this task may not use files or commands on the user's computer: the user has \
                 not allowed it for this task"
            };
            return self.refuse_step(ErrorObject::new(ErrorCode::PermissionDenied, why), now);
        }
        match step.output.action.clone() {
            AgentAction::Done {
                success,
                text,
                data,
            } => return self.answer(success, text, data, now),
            AgentAction::ReadPage { from } => return self.read_page(from, now),
            AgentAction::ListTabs {} => return self.list_tabs(now),
            _ => {}
        }
        let agent_id = agent_id(run.subtask.as_ref().map(|s| s.number));
        let command = match step.output.action.command(&self.attachments, &agent_id) {
            Ok(command) => command.expect("not done"),
            Err(error) => return self.refuse_step(error, now),
        };
        // Whether it may run, and whether the person must be asked first, is decided in one
        // place for every caller, before anything is sent.
        let asker = Asker::Agent {
            confirmed: step.confirmed,
        };
        let (mut command, asks) = match self.admit(command, asker) {
            Verdict::Send(command) => (command, None),
            Verdict::Ask { command, why } => (command, Some(why)),
            Verdict::Refuse(error) => return self.refuse_step(error, now),
        };
        if let Some(page) = run.observation.as_ref() {
            crate::risk::expect_facts(&mut command, &page.facts);
        }
        in_screenshot_pixels(&mut command, run.observation.as_ref());
        if self.task.selected_client_id.is_none() {
            self.run.as_mut().expect("run").phase = Phase::Binding;
            return vec![Effect::Bind {
                client_id: None,
                purpose: BindPurpose::Run,
            }];
        }
        // Asked before anything runs for it, the task's tab included.
        if !step.confirmed {
            let mut rated = self.rate_latest_step();
            // What the consent gate asks for (the bridge's writes, edits and commands by the
            // task's own switch, a step that could carry data away) is asked whatever the
            // rating, and says why when the rating does not; the page's other steps by their
            // rating.
            if let Some(why) = asks.as_ref().filter(|_| rated.level < RiskLevel::High) {
                rated.add(RiskLevel::High, why.clone());
            }
            let risky = asks.is_some()
                || (!uses_bridge
                    && self.config.confirm_risky
                    && rated.level >= self.config.risk.confirm_at);
            if risky || self.task.step_by_step {
                let observation = run.observation.as_ref();
                let target = self.latest_target_box();
                let target_name = self.latest_target_name();
                let request = ConfirmationRequest {
                    step: step.number,
                    action: step.output.action.clone(),
                    reason: if risky {
                        rated.reason()
                    } else {
                        format!("Step by step: {}", rated.reason())
                    },
                    risk: rated.level,
                    facts: rated.facts.into_iter().map(|(_, why)| why).collect(),
                    url: observation.map(|o| o.url.clone()).unwrap_or_default(),
                    title: observation.map(|o| o.title.clone()).unwrap_or_default(),
                    screenshot_artifact_id: observation
                        .and_then(|o| o.screenshot_artifact_id.clone()),
                    target,
                    target_name,
                    step_by_step: !risky,
                };
                self.run.as_mut().expect("run").phase = Phase::Confirming;
                let event = FrontendEvent::ConfirmationRequested(request);
                let mut effects = vec![Effect::Emit(event)];
                effects.extend(self.transition(TaskStatus::WaitingConfirmation, now));
                return effects;
            }
        }
        // Reading one of the person's own tabs needs no tab of the task's.
        if !run.tab_open && command.needs_tab() {
            let url = match &step.output.action {
                AgentAction::Navigate { url } => Some(url.clone()),
                _ => None,
            };
            let title = format!("Mimo: {}", self.task.title.clone().unwrap_or_default());
            let command = self.task_start(url, None, Some(title), self.task.start_tab);
            return self.submit(turn_id, command, Purpose::TaskStart);
        }
        let run = self.run.as_mut().expect("run");
        if let Some(AgentAction::Type { index, .. }) = run.steps.last().map(|s| &s.output.action) {
            let facts = run
                .observation
                .as_ref()
                .and_then(|o| o.facts.get(index))
                .cloned();
            run.steps.last_mut().expect("step").typed_into = facts;
        }
        self.submit(turn_id, command, Purpose::Step)
    }

    /// The latest step's result when it did not run, for `error`.
    fn failed_step(&self, error: ErrorObject) -> ToolResult {
        let step = self
            .run
            .as_ref()
            .and_then(|r| r.steps.last())
            .expect("step");
        ToolResult {
            tool_call_id: step.tool_call_id.clone(),
            name: step.output.action.name().to_owned(),
            ok: false,
            result: None,
            model_result: None,
            error: Some(error),
            warnings: Vec::new(),
            partial: false,
        }
    }

    /// The person allowed a site (or resumed the task): the action that waited for one is sent
    /// again, under an id of its own. Should the site still be refused, the run waits again.
    pub(crate) fn site_allowed(&mut self) -> Vec<Effect> {
        let Some(Phase::WaitingSite {
            command, purpose, ..
        }) = self.run.as_ref().map(|r| r.phase.clone())
        else {
            return Vec::new();
        };
        let turn_id = self.step_turn_id();
        let run = self.run.as_mut().expect("run");
        run.sent_again += 1;
        let again = format!("{}.again{}", purpose.suffix(), run.sent_again);
        self.submit_as(&turn_id, command, purpose, &again)
    }

    fn submit(&mut self, turn_id: &str, command: ActionCommand, purpose: Purpose) -> Vec<Effect> {
        self.submit_as(turn_id, command, purpose, purpose.suffix())
    }

    /// Submits `command` as the action named `{task}.{turn_id}.{name}`.
    fn submit_as(
        &mut self,
        turn_id: &str,
        command: ActionCommand,
        purpose: Purpose,
        name: &str,
    ) -> Vec<Effect> {
        let action_id = format!("{}.{turn_id}.{name}", self.task.task_id);
        self.run.as_mut().expect("run").phase = Phase::Acting {
            action_id: action_id.clone(),
            command: command.clone(),
            purpose,
        };
        vec![Effect::Submit { action_id, command }]
    }

    /// The registry answered the run's request for an extension.
    pub fn client_bound(&mut self, bound: Result<(), ErrorObject>, now: u64) -> Vec<Effect> {
        if self.run.as_ref().map(|r| &r.phase) != Some(&Phase::Binding) {
            return Vec::new();
        }
        match bound {
            Ok(()) if self.task.selected_client_id.is_some() => {
                let turn_id = self.step_turn_id();
                self.act(&turn_id, now)
            }
            Ok(()) => self.fail_run(ErrorObject::plugin_offline(), now),
            Err(error) => self.fail_run(error, now),
        }
    }

    /// An action of the task ended. Only the one the run waits for moves it on.
    pub fn action_finished(&mut self, record: &ActionRecord, now: u64) -> Vec<Effect> {
        let Some(Phase::Acting {
            action_id,
            purpose,
            command,
        }) = self.run.as_ref().map(|r| r.phase.clone())
        else {
            return Vec::new();
        };
        if action_id != record.action_id || !record.state.is_final() {
            return Vec::new();
        }
        let site = record.outcome.as_ref().and_then(|o| {
            let refused = o.error.as_ref()?.code == ErrorCode::PermissionDenied;
            o.waits_for_site.clone().filter(|_| refused)
        });
        if let Some(site) = site {
            return self.wait_for_site(site, command, purpose, now);
        }
        let offline = record
            .outcome
            .as_ref()
            .and_then(|o| o.error.as_ref())
            .is_some_and(|e| e.code == ErrorCode::PluginOffline);
        if offline {
            // The extension went away and did not come back within the retry: no step can
            // run, and the model cannot help. Say so plainly.
            let mut effects = Vec::new();
            if matches!(purpose, Purpose::Step | Purpose::TaskStart) {
                let step = self
                    .run
                    .as_ref()
                    .and_then(|r| r.steps.last())
                    .expect("step");
                let result = tool_result(step, record);
                effects.extend(self.end_step(result));
            }
            let error = ErrorObject::new(
                ErrorCode::PluginOffline,
                "The Mimo extension went offline in the middle of the task. Check that Chrome is \
                 open and the extension connected (its side panel shows it), then send the \
                 message again.",
            );
            effects.extend(self.fail_run(error, now));
            return effects;
        }
        let turn_id = self.step_turn_id();
        let ok = record.state == ActionState::Succeeded;
        let outcome = record.outcome.as_ref();
        if !matches!(purpose, Purpose::TaskStart | Purpose::Step) {
            if let Some(dialog) = dialog_of(record) {
                return self.held_by_dialog(dialog, now);
            }
        }
        match purpose {
            Purpose::TaskStart | Purpose::Step => {
                let run = self.run.as_mut().expect("run");
                let step = run.steps.last().expect("step");
                let starting_navigation = purpose == Purpose::TaskStart
                    && matches!(step.output.action, AgentAction::Navigate { .. });
                let mut effects = Vec::new();
                if purpose == Purpose::TaskStart && ok {
                    run.tab_open = true;
                    // The person's tab this run started on is taken; a later run starts anew.
                    self.task.start_tab = None;
                    if !starting_navigation {
                        // The tab is open; now the step's own action.
                        effects.extend(self.act(&turn_id, now));
                        return effects;
                    }
                }
                let run = self.run.as_mut().expect("run");
                let step = run.steps.last().expect("step");
                let result = tool_result(step, record);
                // Closed with no other tab of the task to go on in (a tab that closed while the
                // task has another names that one: `tab_id`).
                let tab_closed = result
                    .error
                    .as_ref()
                    .is_some_and(|e| e.code == ErrorCode::TaskTabClosed)
                    && outcome.and_then(|o| o.tab_id).is_none();
                if tab_closed {
                    // The next browser action opens a new tab (seed 000 §4.7).
                    run.tab_open = false;
                }
                effects.extend(self.end_step(result));
                let run = self.run.as_mut().expect("run");
                // Files and commands leave the page as it was: the model sees it as before.
                let on_page = !matches!(record.command, ActionCommand::BridgeInvoke { .. });
                if run.tab_open && on_page {
                    run.preparing = Some(Observation {
                        after_step: run.steps.len() as u32,
                        ..Observation::default()
                    });
                    if let Some(dialog) = dialog_of(record) {
                        effects.extend(self.held_by_dialog(dialog, now));
                        return effects;
                    }
                    effects.extend(self.observe(&turn_id));
                } else {
                    if on_page {
                        run.observation = None;
                    }
                    effects.extend(self.think(0, now));
                }
                effects
            }
            Purpose::Observe => self.observation_part(record, &turn_id, now),
        }
    }

    /// After a restart: picks the run up where storage says it was. `lookup` finds an action
    /// in the stored queue. An action the queue never stored was never sent, so it is
    /// submitted (once); one that ended while nobody listened is taken as it ended.
    pub fn resume_run(
        &mut self,
        lookup: impl Fn(&str) -> Option<ActionRecord>,
        now: u64,
    ) -> Vec<Effect> {
        match self.run.as_ref().map(|r| r.phase.clone()) {
            Some(Phase::Binding) => vec![Effect::Bind {
                client_id: None,
                purpose: BindPurpose::Run,
            }],
            Some(Phase::Acting {
                action_id, command, ..
            }) => match lookup(&action_id) {
                None => vec![Effect::Submit { action_id, command }],
                Some(record) if record.state.is_final() => self.action_finished(&record, now),
                Some(_) => Vec::new(),
            },
            Some(Phase::WaitingSite {
                site,
                purpose,
                until,
                ..
            }) => {
                if now >= until {
                    self.site_wait_over(&site, purpose, now)
                } else {
                    vec![Effect::WakeAt(until)]
                }
            }
            _ => Vec::new(),
        }
    }

    /// Records the latest step's result and tells the web app.
    fn end_step(&mut self, result: ToolResult) -> Vec<Effect> {
        let run = self.run.as_mut().expect("run");
        let step = run.steps.last_mut().expect("step");
        let summary = result_summary(&step.output.action, &result);
        step.result = Some(result.clone());
        vec![Effect::Emit(FrontendEvent::ToolUsed {
            step: step.number,
            tool_call_id: step.tool_call_id.clone(),
            phase: ToolPhase::End,
            reflection: None,
            action: step.output.action.clone(),
            result: Some(result),
            summary: Some(summary),
            usage: None,
            cost_usd: None,
            risk: None,
            target: None,
            target_name: None,
            skill: None,
        })]
    }

    /// The run ends with an error the person can act on.
    pub(crate) fn fail_run(&mut self, error: ErrorObject, now: u64) -> Vec<Effect> {
        let mut effects = self.finish_run_turn(now);
        if let Some(run) = self.run.as_ref().filter(|r| r.subtask.is_some()) {
            // A sub-agent's failure is the master's to handle: it hears what the steps did.
            let done: Vec<String> = run.steps.iter().map(prompt::step_line).collect();
            let summary = text::cut(&done.join("\n"), 4_000);
            let result = run.close(SubtaskStatus::Failed, summary, None, Some(error));
            effects.extend(self.subtask_closed(result, now));
            return effects;
        }
        if let Some(run) = self.run.as_mut() {
            run.phase = Phase::Finished;
        }
        effects.extend(self.end_in_error(error, now));
        effects
    }

    /// The id of the turn that chose the latest step (actions are named after it).
    fn step_turn_id(&self) -> String {
        self.run
            .as_ref()
            .and_then(|r| r.steps.last())
            .map(|s| s.turn_id.clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
