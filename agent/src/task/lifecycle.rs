//! A task's beginning and end: created (or forked), started in one request, given its
//! extension, deleted.

use super::*;

impl Task {
    /// Deletes the task (or, `unreadable`, the one of that id whose records could not be read):
    /// everything kept of it is erased, then the machine starts over ([`Input::Erased`]).
    pub(super) fn delete(&self, unreadable: Option<String>) -> Result<Vec<Effect>, ErrorObject> {
        let task_id = self.record().map(|t| t.task_id.clone()).or(unreadable);
        let Some(task_id) = task_id else {
            return Err(ErrorObject::new(ErrorCode::NotFound, "unknown task"));
        };
        Ok(vec![Effect::Erase { task_id }])
    }

    /// A task started in one request ([`Start`]): its bounds and mode, then its extension (the
    /// rest once the registry has bound it: [`BindPurpose::Start`]), as the inputs each would be.
    pub(super) fn start(
        &mut self,
        mut start: Start,
        now: u64,
        caller: Caller,
    ) -> Result<Vec<Effect>, ErrorObject> {
        let mut out = Vec::new();
        if start.take_ms.is_some() || start.report_ms.is_some() {
            let bounds = Input::SetScriptBounds {
                take_ms: start.take_ms.take(),
                report_ms: start.report_ms.take(),
            };
            out.extend(self.handle(bounds, now, caller)?);
        }
        if std::mem::take(&mut start.step_by_step) {
            out.extend(self.handle(Input::SetStepMode(true), now, caller)?);
        }
        match start.client_id.take() {
            // Chosen as the person chooses one, the rest going with the request to the
            // registry.
            Some(client_id) => {
                let purpose = BindPurpose::Start(Box::new(start));
                out.extend(self.select_client(client_id, purpose, now, caller)?);
            }
            None => out.extend(self.start_bound(start, now)?),
        }
        Ok(out)
    }

    /// The extension chosen for the task (by the person, or by a start): the registry is
    /// asked for it, `purpose` saying what follows its answer; a restart's leftovers are picked
    /// up too, as for the person's other inputs.
    pub(super) fn select_client(
        &mut self,
        client_id: String,
        purpose: BindPurpose,
        now: u64,
        caller: Caller,
    ) -> Result<Vec<Effect>, ErrorObject> {
        let Some(conversation) = self.conversation.as_mut() else {
            return Err(ErrorObject::new(ErrorCode::NotFound, "unknown task"));
        };
        let recovered = match caller {
            Caller::Direct => recover(conversation, &self.actions, now),
            Caller::Relay => Vec::new(),
        };
        let mut out = vec![Effect::Bind {
            client_id: Some(client_id),
            purpose,
        }];
        self.settle(recovered, &mut out, false, now, caller);
        Ok(out)
    }

    /// What of a start follows its extension's binding: the tab it starts on, then its goal,
    /// whose model call is held for the alarm.
    pub(super) fn start_bound(
        &mut self,
        start: Start,
        now: u64,
    ) -> Result<Vec<Effect>, ErrorObject> {
        let mut out = Vec::new();
        if let Some(tab_id) = start.on_tab {
            out.extend(self.handle(Input::StartOnTab(Some(tab_id)), now, Caller::Direct)?);
        }
        if let Some(goal) = start.goal {
            let message = Input::UserMessage {
                content: goal.content,
                client_message_id: None,
                answer_schema: goal.answer_schema,
            };
            out.extend(self.handle(message, now, Caller::Relay)?);
        }
        Ok(out)
    }

    pub(super) fn create(
        &mut self,
        task_id: String,
        fork: Option<ForkSeed>,
        now: u64,
    ) -> Result<Vec<Effect>, ErrorObject> {
        if task_id.is_empty() {
            return Err(ErrorObject::new(
                ErrorCode::SchemaValidationFailed,
                "taskId is required",
            ));
        }
        if self.conversation.is_some() {
            return Ok(Vec::new());
        }
        let (created, effects) = match fork {
            // The log starts with the task's status, so every client learns it from the history.
            None => {
                let created = Conversation::new(task_id, now);
                let status = created.status_event();
                (created, vec![status])
            }
            Some(seed) => Conversation::from_fork(task_id, seed, now),
        };
        let mut created = created.with_config(self.config.run.clone());
        created.secrets = crate::secrets::infos(&[], &self.config.secrets);
        self.conversation = Some(created);
        // The task's record first. A new task only stores and tells: nothing runs yet.
        let mut out = Vec::new();
        self.save_changes(&mut out);
        out.extend(effects.into_iter().filter(|effect| {
            matches!(
                effect,
                Effect::SaveMessage(_) | Effect::SaveSummary(_) | Effect::Emit(_)
            )
        }));
        Ok(out)
    }
}
