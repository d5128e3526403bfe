//! The run's model calls: what the model is shown at each step (the page, its screenshot when
//! the model takes images, within the run's budget), and a failed call tried again.

use super::*;

impl Conversation {
    /// Asks the model for the next step (after `delay_ms`), unless the step limit is reached.
    pub(crate) fn think(&mut self, delay_ms: u64, now: u64) -> Vec<Effect> {
        let run = self.run.as_mut().expect("run");
        let max_steps = run
            .subtask
            .as_ref()
            .map_or(self.config.max_steps, |s| s.max_steps);
        if run.steps.len() as u32 >= max_steps {
            let why = if run.subtask.is_some() {
                format!("The sub-task used all of its {max_steps} steps without finishing.")
            } else {
                format!("The task used all of its {max_steps} steps without finishing. Give a narrower goal, or raise MIMO_AGENT_MAX_STEPS.")
            };
            return self.fail_run(ErrorObject::new(ErrorCode::StepLimitExceeded, why), now);
        }
        run.phase = Phase::Thinking;
        let turn_id = self.open_turn();
        self.call_model(turn_id, delay_ms, now)
    }

    /// The latest page, when the model is shown its screenshot: vision is on, the model has not
    /// refused one during this run, and the page has one. Only the latest page's is ever sent.
    pub(in crate::conversation) fn page_screenshot(&self) -> Option<&Observation> {
        let page = self.run.as_ref()?.observation.as_ref()?;
        (self.shows_screenshots() && page.screenshot_artifact_id.is_some()).then_some(page)
    }

    /// Whether the run's model is shown the page's screenshot: vision is on, and the model has
    /// not refused one during this run.
    pub(in crate::conversation) fn shows_screenshots(&self) -> bool {
        self.config.vision && self.run.as_ref().is_some_and(|run| !run.images_refused)
    }

    /// The context the run's prompt fits in: the configured one, halved for each of its prompts
    /// the model refused as too long.
    pub(super) fn run_budget(&self) -> Budget {
        let overflows = self.run.as_ref().map_or(0, |r| r.overflows);
        self.config.budget.compacted(overflows)
    }

    /// The messages of the run's next model call.
    pub(crate) fn run_messages(&self) -> Vec<llm::ChatMessage> {
        let run = self.run.as_ref().expect("run");
        // A sub-agent sees only the job it was given, not the conversation.
        let (summary, chat) = match &run.subtask {
            Some(subtask) => (
                None,
                vec![ChatMessage {
                    message_id: subtask.tool_call_id.clone(),
                    role: ChatRole::User,
                    content: subtask.goal.clone(),
                    created_at: 0,
                    client_message_id: None,
                    version: None,
                    superseded: false,
                }],
            ),
            None => self.compacted_chat(Some(run.goal_position)),
        };
        let budget = self.budget_after_notes(self.run_budget());
        self.with_context_notes(prompt::run_messages(
            RunView {
                summary,
                chat: &chat,
                steps: &run.steps,
                observation: run.observation.as_ref(),
                updates: &run.updates,
                corrections: &run.corrections,
                image_tokens: self.page_screenshot().map_or(0, |page| {
                    llm::image_tokens(page.screenshot_width, page.screenshot_height)
                }),
            },
            budget,
        ))
    }

    /// A failed model call of the run: made again while retries last ([`next_attempt`]: with
    /// backoff, or on a context compacted harder when the prompt was too long; a new turn, so
    /// text already shown stays as it was), else the run ends with `LLM_ERROR`.
    pub(crate) fn retry_run_call(
        &mut self,
        error: LlmError,
        correction: Vec<llm::ChatMessage>,
        now: u64,
    ) -> Vec<Effect> {
        let mut effects = self.finish_run_turn(now);
        if error.kind == LlmErrorKind::ImageRefused && self.page_screenshot().is_some() {
            // A model that takes no images still reads the page's text: the same call goes
            // again at once without the screenshot, and so does every later one.
            self.run.as_mut().expect("run").images_refused = true;
            effects.push(Effect::Emit(FrontendEvent::Warning {
                message: format!(
                    "The model did not take the page's screenshot ({}); for the rest of this \
                     task it reads the pages as text only.",
                    error.message
                ),
            }));
            effects.extend(self.think(0, now));
            return effects;
        }
        let run = self.run.as_mut().expect("run");
        match next_attempt(&error, &mut run.llm_retries, &mut run.overflows) {
            Ok((event, delay_ms)) => {
                run.corrections = correction;
                effects.push(Effect::Emit(event));
                effects.extend(self.think(delay_ms, now));
            }
            Err(error) => effects.extend(self.fail_run(error, now)),
        }
        effects
    }
}
