//! The chat model as a master agent (seed 003 §2, §7): it hands browser jobs to sub-agents with
//! `browser_task`, each a browser run with its own goal, step budget and compacted context,
//! and answers the person from what they return.
//!
//! A delegated request lives in [`Delegation`], kept with the run: the master's replies and the
//! sub-tasks' results, and the calls still to run. Each call becomes a run marked with its
//! [`Subtask`]; when that run closes (done, failed, over its limits) its result goes back as
//! the call's tool result, the next call starts, and once none is left the master is asked
//! again — to answer, or to delegate more.

use mimo_protocol::agent::{
    BrowserTaskArgs, BrowserTaskResult, SubtaskStatus, BROWSER_TASK_DEFAULT_STEPS,
    BROWSER_TASK_TOOL_NAME,
};
use mimo_protocol::{ChatRole, ErrorCode, ErrorObject, FrontendEvent};

use super::{Conversation, Effect};
use crate::records::{Budget, Delegation, Subtask};
use crate::{answer_format, llm, prompt, text};

/// The most sub-tasks one request may start: a master that keeps delegating is told to answer
/// with what it has.
pub const MAX_SUBTASKS: u32 = 8;

impl Conversation {
    /// The request being answered, while the master delegates: its position and its side.
    pub(crate) fn delegation(&self) -> Option<(u32, &Delegation)> {
        let run = self.run.as_ref()?;
        Some((run.goal_position, run.delegation.as_ref()?))
    }

    /// Whether the master's reply is awaited: its sub-tasks have all returned.
    pub(crate) fn master_waits(&self) -> bool {
        !self.run_is_active() && self.delegation().is_some_and(|(_, d)| d.pending.is_empty())
    }

    /// The master's next call: the chat up to the request, then its own replies and what its
    /// sub-tasks returned.
    pub(crate) fn master_messages(
        &self,
        goal_position: u32,
        delegation: &Delegation,
        budget: Budget,
    ) -> Vec<llm::ChatMessage> {
        let (summary, chat) = self.compacted_chat(Some(goal_position));
        // The sub-tasks' results stay whole: the chat before them is fitted into the rest.
        let results = prompt::estimate_tokens(&delegation.transcript, &[]);
        let budget = Budget {
            context_tokens: budget.context_tokens.saturating_sub(results),
            ..budget
        };
        let mut messages = prompt::chat_messages(summary, &chat, budget);
        messages.extend(delegation.transcript.iter().cloned());
        messages
    }

    /// The master replied with tool calls of which some are `browser_task`: they run one after
    /// the other, each as a sub-agent; any other call in the same reply is answered with an
    /// error (the master delegates or acts, not both at once).
    pub(crate) fn delegate(
        &mut self,
        calls: Vec<llm::ToolCall>,
        thought: String,
        now: u64,
    ) -> Vec<Effect> {
        let goal_position = self.request_position();
        // The run stays until the next one replaces it: it holds what the request used.
        let mut delegation = self
            .run
            .as_mut()
            .filter(|r| r.goal_position == goal_position)
            .and_then(|r| r.delegation.take())
            .unwrap_or_default();
        delegation
            .transcript
            .push(llm::ChatMessage::assistant_with_tool_calls(
                text::cut(&thought, 2_000),
                calls.clone(),
            ));
        for call in calls {
            if call.name == BROWSER_TASK_TOOL_NAME {
                delegation.pending.push(call);
            } else {
                let error = ErrorObject::new(
                    ErrorCode::InvalidTarget,
                    format!(
                        "{} was not run: a reply that calls {BROWSER_TASK_TOOL_NAME} may call \
                         nothing else; call it again after the sub-tasks return",
                        call.name
                    ),
                );
                delegation
                    .transcript
                    .push(llm::ChatMessage::tool_result(call.id, error_json(&error)));
            }
        }
        self.next_subtask(goal_position, delegation, now)
    }

    /// Starts the next pending sub-task, or, with none left, asks the master again — unless the
    /// request is over its budget: then it ends with `BUDGET_EXCEEDED`, and nothing more of it
    /// runs (what the sub-tasks returned was shown as each finished).
    fn next_subtask(
        &mut self,
        goal_position: u32,
        mut delegation: Delegation,
        now: u64,
    ) -> Vec<Effect> {
        let mut effects = Vec::new();
        if let Some(error) = self.request_over_budget() {
            let mut run = self.request_run(goal_position);
            run.phase = crate::records::Phase::Finished;
            run.delegation = Some(delegation);
            self.run = Some(run);
            effects.extend(self.fail_run(error, now));
            return effects;
        }
        while let Some(call) = delegation.pending.first().cloned() {
            let args = match self.subtask_args(&call, delegation.started) {
                Ok(args) => args,
                Err(error) => {
                    delegation.pending.remove(0);
                    delegation
                        .transcript
                        .push(llm::ChatMessage::tool_result(call.id, error_json(&error)));
                    continue;
                }
            };
            delegation.started += 1;
            let max_steps = args
                .max_steps
                .unwrap_or(BROWSER_TASK_DEFAULT_STEPS)
                .clamp(1, self.config.max_steps.max(1));
            let subtask = Subtask {
                number: delegation.started,
                tool_call_id: call.id,
                goal: args.goal.trim().to_owned(),
                max_steps,
                answer_schema: args.answer_schema,
            };
            effects.push(Effect::Emit(FrontendEvent::SubtaskStarted {
                subtask: subtask.number,
                tool_call_id: subtask.tool_call_id.clone(),
                goal: subtask.goal.clone(),
                max_steps,
            }));
            let mut run = self.request_run(goal_position);
            run.subtask = Some(subtask);
            run.delegation = Some(delegation);
            self.run = Some(run);
            effects.extend(self.think(0, now));
            return effects;
        }
        // Every call has returned: the master answers, or delegates again.
        let mut run = self.request_run(goal_position);
        run.phase = crate::records::Phase::Finished;
        run.delegation = Some(delegation);
        self.run = Some(run);
        let turn_id = self.open_turn();
        effects.extend(self.call_model(turn_id, 0, now));
        effects
    }

    /// The arguments of `browser_task` call `call`, or why it is not run.
    fn subtask_args(
        &self,
        call: &llm::ToolCall,
        started: u32,
    ) -> Result<BrowserTaskArgs, ErrorObject> {
        let invalid = |why: String| ErrorObject::new(ErrorCode::SchemaValidationFailed, why);
        if started >= MAX_SUBTASKS {
            return Err(ErrorObject::new(
                ErrorCode::BudgetExceeded,
                format!(
                    "this request already ran {MAX_SUBTASKS} browser sub-tasks, the most it may: \
                     answer with what they returned"
                ),
            ));
        }
        let args: BrowserTaskArgs = serde_json::from_value(call.arguments.clone())
            .map_err(|e| invalid(format!("the arguments do not match browser_task: {e}")))?;
        if args.goal.trim().is_empty() {
            return Err(invalid(
                "goal is empty: say what the sub-agent is to do".into(),
            ));
        }
        if let Some(why) = args
            .answer_schema
            .as_ref()
            .and_then(answer_format::schema_problem)
        {
            return Err(invalid(format!("answer_schema: {why}")));
        }
        Ok(args)
    }

    /// The sub-agent's run closed with `result`: it goes back to the master as the call's tool
    /// result, and the request goes on.
    pub(crate) fn subtask_closed(&mut self, result: BrowserTaskResult, now: u64) -> Vec<Effect> {
        let Some(run) = self.run.as_mut() else {
            return Vec::new();
        };
        run.phase = crate::records::Phase::Finished;
        let goal_position = run.goal_position;
        let Some(subtask) = run.subtask.clone() else {
            return Vec::new();
        };
        let mut delegation = run.delegation.take().unwrap_or_default();
        delegation.answered(&subtask.tool_call_id, &result);
        let mut effects = vec![Effect::Emit(FrontendEvent::SubtaskFinished {
            subtask: subtask.number,
            tool_call_id: subtask.tool_call_id,
            result,
        })];
        effects.extend(self.next_subtask(goal_position, delegation, now));
        effects
    }

    /// The person stopped the request while a sub-agent ran: it ends as stopped by them, and
    /// nothing else of the request runs.
    pub(crate) fn stop_subtask(&mut self) -> Vec<Effect> {
        let Some(run) = self.run.as_mut().filter(|r| r.is_active()) else {
            return Vec::new();
        };
        let Some(subtask) = run.subtask.clone() else {
            return Vec::new();
        };
        let result = run.close(
            SubtaskStatus::Stopped,
            "Stopped by the person.".into(),
            None,
            None,
        );
        if let Some(delegation) = run.delegation.as_mut() {
            delegation.answered(&subtask.tool_call_id, &result);
            delegation.pending.clear();
        }
        vec![Effect::Emit(FrontendEvent::SubtaskFinished {
            subtask: subtask.number,
            tool_call_id: subtask.tool_call_id,
            result,
        })]
    }

    /// The position of the request being answered: the latest message of the person.
    pub(crate) fn request_position(&self) -> u32 {
        self.history
            .iter()
            .rev()
            .find(|m| m.message.role == ChatRole::User)
            .map(|m| m.position)
            .unwrap_or(0)
    }
}

fn error_json(error: &ErrorObject) -> String {
    serde_json::json!({ "ok": false, "error": error }).to_string()
}
