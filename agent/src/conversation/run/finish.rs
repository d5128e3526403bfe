//! How a run ends: the model's answer checked against the answer format, and the run's last
//! event, message and status.

use super::*;

/// The model's final answer.
pub(super) struct FinalAnswer {
    success: bool,
    text: String,
    data: Option<serde_json::Value>,
    /// Why `data` is not in the answer format, when it never came to match it.
    invalid: Option<String>,
}

impl FinalAnswer {
    fn new(success: bool, text: String, data: Option<serde_json::Value>) -> Self {
        FinalAnswer {
            success,
            text,
            data,
            invalid: None,
        }
    }
}

impl Conversation {
    /// The model called `done`. With an answer format, its data must match it: a mismatch goes
    /// back to the model, until it has had [`answer_format::MAX_ANSWER_ATTEMPTS`]; then the run ends
    /// with the answer it has, marked partial.
    pub(super) fn answer(
        &mut self,
        success: bool,
        text: String,
        data: Option<serde_json::Value>,
        now: u64,
    ) -> Vec<Effect> {
        let mismatch = self
            .answer_schema()
            .filter(|_| success)
            .and_then(|schema| answer_format::mismatch(schema, data.as_ref()));
        let run = self.run.as_mut().expect("run");
        let step = run.steps.last().expect("step");
        let tool_call_id = step.tool_call_id.clone();
        let Some(why) = mismatch else {
            let result = ToolResult {
                tool_call_id,
                name: "done".into(),
                ok: true,
                result: Some(json!({ "success": success })),
                model_result: None,
                error: None,
                warnings: Vec::new(),
                partial: false,
            };
            let mut effects = self.end_step(result);
            effects.extend(self.finish_run(FinalAnswer::new(success, text, data), now));
            return effects;
        };
        run.answer_attempts += 1;
        let attempts = run.answer_attempts;
        let result = ToolResult {
            tool_call_id,
            name: "done".into(),
            ok: false,
            result: None,
            model_result: None,
            error: Some(ErrorObject::new(
                ErrorCode::SchemaValidationFailed,
                why.clone(),
            )),
            warnings: Vec::new(),
            partial: false,
        };
        let mut effects = self.end_step(result);
        if attempts < answer_format::MAX_ANSWER_ATTEMPTS {
            effects.extend(self.think(0, now));
            return effects;
        }
        let answer = FinalAnswer {
            invalid: Some(format!(
                "After {attempts} attempts the answer still does not match the answer format: {why}"
            )),
            ..FinalAnswer::new(false, text, data)
        };
        effects.extend(self.finish_run(answer, now));
        effects
    }

    /// The run is over with the model's answer.
    pub(super) fn finish_run(&mut self, answer: FinalAnswer, now: u64) -> Vec<Effect> {
        let FinalAnswer {
            success,
            text,
            data,
            invalid,
        } = answer;
        if self.run.as_ref().is_some_and(|r| r.subtask.is_some()) {
            let run = self.run.as_ref().expect("run");
            let status = if success && invalid.is_none() {
                SubtaskStatus::Succeeded
            } else {
                SubtaskStatus::Failed
            };
            let summary = match invalid {
                Some(why) => format!("{text}\n({why})"),
                None => text,
            };
            let result = run.close(status, summary, data, None);
            return self.subtask_closed(result, now);
        }
        let price = self.config.price;
        let (steps, usage, cost) = {
            let run = self.run.as_mut().expect("run");
            run.phase = Phase::Finished;
            let (usage, cost) = crate::conversation::limits::spent(run, price);
            (run.steps.len(), usage, cost)
        };
        let cost_usd = cost.map(|micros| micros as f64 / 1e6);
        let mut output = json!({ "success": success, "text": text, "steps": steps, "usage": usage, "costUsd": cost_usd });
        if let Some(data) = data {
            // Data that does not match the format is kept, but never passed off as the answer.
            let key = if invalid.is_some() {
                "invalidData"
            } else {
                "data"
            };
            output[key] = data;
        }
        let message = ChatMessage {
            message_id: self.next_message_id(),
            role: ChatRole::Assistant,
            content: text.clone(),
            created_at: now,
            client_message_id: None,
            version: self.answer_version(),
            superseded: false,
        };
        let stored = self.append(message.clone());
        let mut effects = vec![
            Effect::SaveMessage(stored.clone()),
            Effect::Emit(FrontendEvent::Message { message }),
            Effect::Emit(FrontendEvent::StructuredOutput {
                status: if success {
                    OutputStatus::Ok
                } else {
                    OutputStatus::Partial
                },
                output: Some(output),
                error: None,
                warnings: match invalid {
                    Some(why) => vec![why],
                    None if success => Vec::new(),
                    None => vec!["The agent could not complete the task.".into()],
                },
            }),
        ];
        effects.extend(self.transition(TaskStatus::Completed, now));
        effects.extend(self.side_calls(&[stored]));
        effects
    }
}
