//! A chat turn: the person's message, the model call (after the skills for it are looked up),
//! its stream, and how the turn ends.

use super::*;
use mimo_protocol::AgentActionKind;

impl Conversation {
    /// What the person wrote. A message sent again with a `client_message_id` already in the
    /// history (the client could not tell whether the first one arrived) changes nothing.
    pub fn user_message(
        &mut self,
        content: String,
        client_message_id: Option<String>,
        answer_schema: Option<serde_json::Value>,
        now: u64,
    ) -> Result<Vec<Effect>, ErrorObject> {
        if let Some(why) = answer_schema
            .as_ref()
            .and_then(answer_format::schema_problem)
        {
            return Err(ErrorObject::new(ErrorCode::SchemaValidationFailed, why));
        }
        if let Some(id) = &client_message_id {
            if id.is_empty() || id.len() > 128 {
                return Err(ErrorObject::new(
                    ErrorCode::SchemaValidationFailed,
                    "clientMessageId must be 1–128 characters",
                ));
            }
            if self
                .history
                .iter()
                .any(|m| m.message.client_message_id.as_deref() == Some(id))
            {
                return Ok(Vec::new());
            }
        }
        let content = content.trim().to_owned();
        if content.is_empty() {
            return Err(ErrorObject::new(
                ErrorCode::SchemaValidationFailed,
                "message content is empty",
            ));
        }
        if content.len() > MAX_USER_MESSAGE_BYTES {
            return Err(ErrorObject::new(
                ErrorCode::SchemaValidationFailed,
                format!(
                    "message of {} bytes exceeds the limit of {MAX_USER_MESSAGE_BYTES} bytes",
                    content.len()
                ),
            ));
        }
        if self.task.title.is_none() {
            let one_line = content.split_whitespace().collect::<Vec<_>>().join(" ");
            self.task.title = Some(one_line.chars().take(TITLE_CHARS).collect());
        }
        let message = ChatMessage {
            message_id: self.next_message_id(),
            role: ChatRole::User,
            content,
            created_at: now,
            client_message_id,
            version: None,
            superseded: false,
        };
        let stored = self.append(message.clone());
        let mut effects = self.save_message(stored);
        effects.push(Effect::Emit(FrontendEvent::Message {
            message: message.clone(),
        }));
        if let Some(run) = self.run.as_mut().filter(|r| r.is_active()) {
            // The run reads it at its next step (its answer format stays the one it began with).
            run.updates.push(message.content);
            return Ok(effects);
        }
        // The request this message makes is answered in its own format, or freely.
        self.task.answer_schema = answer_schema;
        if self.turn.is_none() {
            effects.extend(self.start_turn(now));
        } else {
            // Answered by the next turn, which starts when the current one ends.
            self.task.updated_at = now;
        }
        Ok(effects)
    }

    /// Feeds one event of turn `turn_id`'s LLM stream. Events of a turn that is no longer
    /// current (stopped, or replaced after a restart) are ignored.
    pub fn llm_event(&mut self, turn_id: &str, event: llm::LlmEvent, now: u64) -> Vec<Effect> {
        if !self.is_current_turn(turn_id) {
            return Vec::new();
        }
        match event {
            llm::LlmEvent::TextDelta(delta) if delta.is_empty() => Vec::new(),
            llm::LlmEvent::TextDelta(delta) => {
                let turn = self.turn.as_mut().expect("current turn");
                turn.text.push_str(&delta);
                vec![Effect::Emit(FrontendEvent::ChatDelta {
                    message_id: turn.message_id.clone(),
                    delta,
                    finished: false,
                })]
            }
            llm::LlmEvent::ToolCall(call) => {
                self.turn
                    .as_mut()
                    .expect("current turn")
                    .tool_calls
                    .push(call);
                Vec::new()
            }
            llm::LlmEvent::Usage {
                input_tokens,
                output_tokens,
            } => {
                self.turn.as_mut().expect("current turn").usage = TokenUsage {
                    input_tokens,
                    output_tokens,
                };
                Vec::new()
            }
            llm::LlmEvent::Done { .. } => {
                // A request with an answer format is answered by `done`'s data: a plain reply
                // — the master's after its sub-tasks too — is corrected like a run's reply
                // without a tool call (the plain reply, in the correction, keeps what the
                // sub-tasks found).
                let in_run = self.run_is_active() || self.task.answer_schema.is_some();
                let turn = self.turn.as_mut().expect("current turn");
                let usage = std::mem::take(&mut turn.usage);
                if in_run || !turn.tool_calls.is_empty() {
                    let tool_calls = std::mem::take(&mut turn.tool_calls);
                    let thought = turn.text.clone();
                    let mut effects = self.count_usage(usage);
                    effects.extend(self.run_turn_done(tool_calls, thought, usage, now));
                    return effects;
                }
                let mut effects = self.count_usage(usage);
                effects.extend(self.finish_turn(now));
                let text = self
                    .history
                    .last()
                    .map(|m| m.message.content.clone())
                    .unwrap_or_default();
                effects.push(Effect::Emit(FrontendEvent::StructuredOutput {
                    status: OutputStatus::Ok,
                    output: Some(json!({ "text": text })),
                    error: None,
                    warnings: Vec::new(),
                }));
                effects.extend(self.transition(TaskStatus::Completed, now));
                if self.awaits_reply() {
                    effects.extend(self.start_turn(now));
                }
                effects
            }
            llm::LlmEvent::Error(error) => {
                // What the failed call used before it failed counts all the same.
                let usage = std::mem::take(&mut self.turn.as_mut().expect("current turn").usage);
                let mut effects = self.count_usage(usage);
                if self.run_is_active() {
                    effects.extend(self.retry_run_call(error, Vec::new(), now));
                    return effects;
                }
                // A failure before any text reached the person is retried ([`next_attempt`]);
                // after text, a retry would repeat it, so the turn fails.
                let turn = self.turn.as_mut().expect("current turn");
                let next = if turn.text.is_empty() {
                    next_attempt(&error, &mut turn.retries, &mut turn.overflows)
                } else {
                    Err(ErrorObject::from(&error))
                };
                let error = match next {
                    Ok((event, delay_ms)) => {
                        effects.push(Effect::Emit(event));
                        effects.push(self.model_call(turn_id.to_owned(), delay_ms));
                        return effects;
                    }
                    Err(error) => error,
                };
                effects.extend(self.finish_turn(now));
                effects.extend(self.end_in_error(error, now));
                effects
            }
        }
    }

    pub(super) fn awaits_reply(&self) -> bool {
        self.in_conversation()
            .last()
            .is_some_and(|m| m.message.role == ChatRole::User)
    }

    /// Answers the latest message: the model may reply in text or start a browser run.
    pub(super) fn start_turn(&mut self, now: u64) -> Vec<Effect> {
        // A new message that needs the browser starts a new run, and counts anew.
        self.run = None;
        self.unrun_usage = TokenUsage::default();
        let turn_id = self.open_turn();
        self.call_model(turn_id, 0, now)
    }

    /// Calls the model for turn `turn_id` after `delay_ms`, once the skills of its goal and
    /// page are known (they are looked up first when either changed); the task is running
    /// (unless the person has taken over: the model may think, but only `resume` hands the
    /// browser back).
    pub(crate) fn call_model(&mut self, turn_id: String, delay_ms: u64, now: u64) -> Vec<Effect> {
        if self.task.status == TaskStatus::Paused {
            // The turn stays open; resuming makes the call.
            self.paused_call = Some((turn_id, delay_ms));
            return Vec::new();
        }
        let mut effects = if self.task.status == TaskStatus::Takeover {
            Vec::new()
        } else {
            self.transition(TaskStatus::Running, now)
        };
        let query = self.skill_query();
        if self.skills.as_ref().map(|s| &s.query) == Some(&query) {
            effects.push(self.model_call(turn_id, delay_ms));
            return effects;
        }
        self.waiting_for_skills = Some(WaitingCall {
            turn_id: turn_id.clone(),
            delay_ms,
            query: query.clone(),
        });
        effects.push(Effect::LookupSkills { turn_id, query });
        effects
    }

    /// The skill library's answer for turn `turn_id` ([`Effect::LookupSkills`]): the model
    /// call waiting for it is made, with these skills in its prompt. Should the library fail,
    /// the call goes without skills and the web app is told.
    pub fn skills_found(
        &mut self,
        turn_id: &str,
        found: Result<Vec<mimo_protocol::Skill>, ErrorObject>,
    ) -> Vec<Effect> {
        let waiting = self.waiting_for_skills.take_if(|w| {
            w.turn_id == turn_id && self.turn.as_ref().is_some_and(|t| t.message_id == turn_id)
        });
        let Some(waiting) = waiting else {
            // The turn was stopped or replaced meanwhile: nothing waits for them.
            return Vec::new();
        };
        let mut effects = Vec::new();
        let skills = found.unwrap_or_else(|error| {
            effects.push(Effect::Emit(FrontendEvent::Warning {
                message: format!(
                    "The skills for this goal and page could not be looked up ({}); the model \
                     goes on without them.",
                    error.message
                ),
            }));
            Vec::new()
        });
        self.skills = Some(SkillsInUse {
            query: waiting.query,
            skills,
        });
        effects.push(self.model_call(waiting.turn_id, waiting.delay_ms));
        effects
    }

    /// The skills in the model's prompt.
    pub(crate) fn skills_in_use(&self) -> &[mimo_protocol::Skill] {
        self.skills.as_ref().map_or(&[], |s| &s.skills)
    }

    /// What the skills of the next model call are looked up by: the goal (the message that
    /// started the run, or the one being answered) and the page the run is on — before the
    /// first page, the person's tab it is to start on, if any. The page's fragment does not
    /// make it another page.
    fn skill_query(&self) -> SkillQuery {
        let run = self.run.as_ref().filter(|r| r.is_active());
        let goal = match run {
            Some(run) => self
                .history
                .iter()
                .find(|m| m.position == run.goal_position),
            None => self
                .history
                .iter()
                .rfind(|m| m.message.role == ChatRole::User),
        };
        let page = run
            .and_then(|r| r.observation.as_ref())
            .map(|o| o.url.clone())
            .filter(|url| !url.is_empty());
        let start_tab = || {
            let tab = self.task.start_tab?;
            let tabs = &self.browser.as_ref()?.tabs;
            tabs.iter().find(|t| t.tab_id == tab).map(|t| t.url.clone())
        };
        let url = page
            .or_else(start_tab)
            .map(|url| match url.split_once('#') {
                Some((page, _)) => page.to_owned(),
                None => url,
            });
        SkillQuery {
            goal: goal.map(|m| m.message.content.clone()).unwrap_or_default(),
            url,
        }
    }

    /// The model call of turn `turn_id`: the run's next step while a run is going, else the
    /// reply to the chat. It offers the actions the skills in use allow.
    fn model_call(&self, turn_id: String, delay_ms: u64) -> Effect {
        let (messages, image) = if self.run_is_active() {
            let messages = self.run_messages();
            let image = self.page_screenshot().and_then(|page| {
                Some(PageImage {
                    artifact_id: page.screenshot_artifact_id.clone()?,
                    message: prompt::page_message(&messages)?,
                })
            });
            (messages, image)
        } else {
            (self.chat_call_messages(), None)
        };
        let offered = skills::offered_actions(self.skills_in_use());
        let bridge = self.usable_bridge().is_some();
        let mut tools = vec![prompt::agent_tool(|action| {
            (bridge || !AgentActionKind::names_a_bridge_action(action))
                && offered.as_ref().is_none_or(|o| o.contains(action))
        })];
        // Delegating is the chat model's: a sub-agent does its job itself.
        if !self.run_is_active() {
            tools.push(prompt::browser_task_tool());
        }
        Effect::CallLlm(LlmCall {
            turn_id,
            messages,
            tools,
            delay_ms,
            image,
        })
    }

    /// Reserves the next message for a model turn and makes it current.
    pub(crate) fn open_turn(&mut self) -> String {
        let turn = Turn {
            message_id: self.next_message_id(),
            position: self.next_position(),
            text: String::new(),
            retries: 0,
            overflows: 0,
            tool_calls: Vec::new(),
            usage: TokenUsage::default(),
        };
        let turn_id = turn.message_id.clone();
        self.task.current_turn = Some(turn_id.clone());
        self.turn = Some(turn);
        turn_id
    }

    /// Ends a turn of a run: text the model wrote is kept as a message; a turn without text
    /// leaves none.
    pub(crate) fn finish_run_turn(&mut self, now: u64) -> Vec<Effect> {
        match &self.turn {
            Some(turn) if turn.text.is_empty() => {
                self.turn = None;
                self.task.current_turn = None;
                Vec::new()
            }
            Some(_) => self.finish_turn(now),
            None => Vec::new(),
        }
    }

    /// Ends the current turn: its message is closed for the web app and stored.
    pub(super) fn finish_turn(&mut self, now: u64) -> Vec<Effect> {
        let Some(turn) = self.turn.take() else {
            return Vec::new();
        };
        self.task.current_turn = None;
        let message = ChatMessage {
            message_id: turn.message_id.clone(),
            role: ChatRole::Assistant,
            content: turn.text,
            created_at: now,
            client_message_id: None,
            version: self.answer_version(),
            superseded: false,
        };
        let stored = StoredMessage {
            position: turn.position,
            message,
        };
        let at = self.history.partition_point(|m| m.position < turn.position);
        self.history.insert(at, stored.clone());
        let mut effects = vec![Effect::Emit(FrontendEvent::ChatDelta {
            message_id: turn.message_id,
            delta: String::new(),
            finished: true,
        })];
        effects.extend(self.save_message(stored.clone()));
        if stored.message.version.is_some() {
            // A regenerated answer: the web app learns which alternative it is.
            effects.push(Effect::Emit(FrontendEvent::Message {
                message: stored.message,
            }));
        }
        effects
    }
}
