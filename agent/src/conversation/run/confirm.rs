//! A step that waits for the person: the confirmation they give or decline, and the site they
//! must allow Mimo on first.

use super::*;

/// The longest decline reason passed to the model (a person's note, not a prompt).
pub(super) const MAX_DECLINE_REASON_CHARS: usize = 500;

impl Conversation {
    /// Why the consent gate asks the person about the latest step, if it does.
    pub(super) fn gate_asks(&self) -> Option<String> {
        let run = self.run.as_ref()?;
        let step = run.steps.last()?;
        let agent_id = agent_id(run.subtask.as_ref().map(|s| s.number));
        let command = step
            .output
            .action
            .command(&self.attachments, &agent_id)
            .ok()??;
        match self.admit(command, Asker::Agent { confirmed: false }) {
            Verdict::Ask { why, .. } => Some(why),
            Verdict::Send(_) | Verdict::Refuse(_) => None,
        }
    }

    /// The person's answer for a step waiting for confirmation: it runs, or the model hears
    /// that it was declined (`CONFIRMATION_REQUIRED`, with their reason) and chooses again.
    pub fn confirm(
        &mut self,
        step: u32,
        answer: ConfirmAnswer,
        now: u64,
    ) -> Result<Vec<Effect>, ErrorObject> {
        let waiting = self.run.as_ref().is_some_and(|r| {
            r.phase == Phase::Confirming && r.steps.last().is_some_and(|s| s.number == step)
        });
        if !waiting {
            return Err(ErrorObject::new(
                ErrorCode::NotFound,
                format!("step {step} is not waiting for a confirmation"),
            ));
        }
        // A script may approve the page's risky steps (seed 002 §8), but not what the consent
        // gate asks — data leaving for a site the person did not name, a change on their
        // computer: only the person approves those, in the web app or the side panel.
        if answer.approve && answer.by == crate::credentials::Confirmer::Api {
            if let Some(why) = self.gate_asks() {
                return Err(ErrorObject::new(
                    ErrorCode::PermissionDenied,
                    format!(
                        "step {step} waits for the person: {why}. Only they can approve it, in \
                         the web app or the extension's side panel; a script may decline it"
                    ),
                ));
            }
        }
        let reason = answer
            .reason
            .map(|r| {
                r.trim()
                    .chars()
                    .take(MAX_DECLINE_REASON_CHARS)
                    .collect::<String>()
            })
            .filter(|r| !r.is_empty() && !answer.approve);
        let mut effects = vec![Effect::Emit(FrontendEvent::ConfirmationAnswered {
            step,
            approved: answer.approve,
            by: answer.by.name().into(),
            reason: reason.clone(),
        })];
        effects.extend(self.transition(TaskStatus::Running, now));
        let turn_id = self.step_turn_id();
        if answer.approve {
            let run = self.run.as_mut().expect("run");
            run.steps.last_mut().expect("step").confirmed = true;
            effects.extend(self.act(&turn_id, now));
        } else {
            let why = match &reason {
                Some(reason) => format!("The person declined this step, saying: {reason:?}."),
                None => "The person declined this step.".to_owned(),
            };
            effects.extend(self.refuse_step(
                ErrorObject::new(
                    ErrorCode::ConfirmationRequired,
                    format!(
                        "{why} Do not try it again: find another way, or finish with done and \
                         say what is left for them to do."
                    ),
                ),
                now,
            ));
        }
        Ok(effects)
    }

    /// The latest step does not run, for `error`: the model hears why and chooses again (on
    /// the page as it last saw it, since nothing ran).
    pub(super) fn refuse_step(&mut self, error: ErrorObject, now: u64) -> Vec<Effect> {
        let result = self.failed_step(error);
        let mut effects = self.end_step(result);
        effects.extend(self.think(0, now));
        effects
    }

    /// `command` did not run because the person has not allowed Mimo on `site`: the run waits
    /// for them (`waiting_permission`) instead of failing, and sends it again once they allow
    /// the site ([`Conversation::site_allowed`]); at [`SITE_WAIT_MS`] it ends.
    pub(super) fn wait_for_site(
        &mut self,
        site: String,
        command: ActionCommand,
        purpose: Purpose,
        now: u64,
    ) -> Vec<Effect> {
        let until = now + SITE_WAIT_MS;
        let run = self.run.as_mut().expect("run");
        let step = run.steps.last().map_or(0, |s| s.number);
        run.phase = Phase::WaitingSite {
            site: site.clone(),
            command,
            purpose,
            until,
        };
        let mut effects = vec![Effect::Emit(FrontendEvent::SiteAccessNeeded { step, site })];
        effects.extend(self.transition(TaskStatus::WaitingPermission, now));
        effects.push(Effect::WakeAt(until));
        effects
    }

    /// The person did not allow the site within [`SITE_WAIT_MS`]: the step fails, and the run
    /// with it.
    pub(super) fn site_wait_over(&mut self, site: &str, purpose: Purpose, now: u64) -> Vec<Effect> {
        let error = ErrorObject::new(
            ErrorCode::PermissionDenied,
            format!(
                "Mimo is not allowed on {site}, and it was not allowed within {} minutes: \
                 press \"Allow Mimo on {site}\" in the Mimo side panel, then send the message \
                 again.",
                SITE_WAIT_MS / 60_000
            ),
        );
        let mut effects = Vec::new();
        if matches!(purpose, Purpose::Step | Purpose::TaskStart) {
            let result = self.failed_step(error.clone());
            effects.extend(self.end_step(result));
        }
        effects.extend(self.fail_run(error, now));
        effects
    }
}
