//! Preparing the page after a step: the observation's parts (screenshot, readable text, element
//! list) read one by one, what is missing said, a page held by a dialog stopped at.

use super::*;

/// What `browser_observe` returned, each part read on its own: a part that failed, or whose
/// result is not in its shape, is missing (with why) and leaves the others.
pub(super) struct Observed {
    not_loaded: Option<String>,
    screenshot: Result<ScreenshotResult, String>,
    readability: Result<ReadabilityResult, String>,
    dom_index: Result<DomIndexResult, String>,
    /// The warnings of an element list that is not whole.
    index_warnings: Vec<String>,
}

impl Observed {
    /// `parts`: an [`ObserveResult`](mimo_protocol::action::ObserveResult) as JSON.
    fn read(parts: &serde_json::Value) -> Observed {
        fn part<T: serde::de::DeserializeOwned>(
            parts: &serde_json::Value,
            name: &str,
        ) -> (Result<T, String>, Vec<String>) {
            let part = parts.get(name).cloned().unwrap_or_default();
            let part = match serde_json::from_value::<ObservedPart<serde_json::Value>>(part) {
                Ok(part) => part,
                Err(e) => {
                    return (
                        Err(format!("its result is not understood: {e}")),
                        Vec::new(),
                    )
                }
            };
            let partial = if part.partial {
                part.warnings
            } else {
                Vec::new()
            };
            let result = match (part.result, part.error) {
                (Some(result), _) => serde_json::from_value(result)
                    .map_err(|e| format!("its result is not understood: {e}")),
                (None, Some(error)) => Err(error.to_string()),
                (None, None) => Err("it gave no result".to_owned()),
            };
            (result, partial)
        }
        let (dom_index, index_warnings) = part(parts, "domIndex");
        Observed {
            not_loaded: parts
                .get("notLoaded")
                .and_then(|v| v.as_str())
                .map(str::to_owned),
            screenshot: part(parts, "screenshot").0,
            readability: part(parts, "readability").0,
            dom_index,
            index_warnings,
        }
    }
}

/// The result of an action that succeeded, in its type, as the model reads it; else why not:
/// its error, how it ended, or (a script's report, say) a result not in the shape the action
/// gives.
pub(super) fn parsed<T: serde::de::DeserializeOwned>(record: &ActionRecord) -> Result<T, String> {
    let outcome = record.outcome.as_ref();
    if record.state != ActionState::Succeeded {
        return Err(outcome
            .and_then(|o| o.error.as_ref())
            .map(|e| e.to_string())
            .unwrap_or_else(|| format!("{:?}", record.state)));
    }
    let result = outcome
        .and_then(|o| o.for_model())
        .cloned()
        .ok_or("it gave no result")?;
    serde_json::from_value(result).map_err(|e| format!("its result is not understood: {e}"))
}

/// Shown with a page whose element list is empty.
pub(super) const EMPTY_ELEMENT_LIST: &str =
    "no interactive elements were found on this page: it may \
still be loading, be covered (a dialog, a banner), or be drawn on a canvas. The content below \
is what its text says; wait_for it, scroll, or navigate elsewhere.";

/// Whether a box (pixels of the screenshot) lies at least partly within a screenshot of
/// `width` × `height` (0 × 0: not known, nothing is).
pub(super) fn within(b: &BoundingBox, (width, height): (u32, u32)) -> bool {
    b.w > 0.0
        && b.h > 0.0
        && b.x < f64::from(width)
        && b.y < f64::from(height)
        && b.x + b.w > 0.0
        && b.y + b.h > 0.0
}

impl Conversation {
    /// Asks for the page as the model is to see it: in one action (`browser_observe`) — or, for
    /// a script (whose protocol has no such action), one capture at a time, beginning with the
    /// wait for the page to load.
    pub(super) fn observe(&mut self, turn_id: &str) -> Vec<Effect> {
        let by_script = self
            .task
            .selected_client_id
            .as_deref()
            .is_some_and(is_script_client);
        if by_script {
            let command = ActionCommand::BrowserWaitForLoaded { timeout_ms: None };
            return self.submit_as(turn_id, command, Purpose::Observe, "load");
        }
        // A model that is not shown the screenshot reads nothing of the observation from R2
        // (the text comes inline): its next call does not wait for the uploads.
        let command = ActionCommand::BrowserObserve {
            timeout_ms: None,
            wait_stored: (!self.shows_screenshots()).then_some(false),
        };
        self.submit(turn_id, command, Purpose::Observe)
    }

    /// An action of the page's observation ended: the whole of it, or one capture of a script's
    /// (load → screenshot → readable text → element list; a run stored mid-way by a release
    /// that captured one at a time goes on the same way).
    pub(super) fn observation_part(
        &mut self,
        record: &ActionRecord,
        turn_id: &str,
        now: u64,
    ) -> Vec<Effect> {
        let outcome = record.outcome.as_ref();
        let refused = outcome
            .and_then(|o| o.error.as_ref())
            .filter(|e| e.code == ErrorCode::PermissionDenied)
            .cloned();
        match &record.command {
            ActionCommand::BrowserObserve { .. } => {
                if let Some(refused) = refused {
                    // The page may not be read at all (its domain is blocked): say that, not
                    // that it could not be prepared.
                    return self.fail_run(refused, now);
                }
                match parsed::<serde_json::Value>(record) {
                    Ok(parts) => {
                        let observed = Observed::read(&parts);
                        if let Some(why) = observed.not_loaded {
                            self.preparing()
                                .warnings
                                .push(format!("the page did not finish loading: {why}"));
                        }
                        self.shot_taken(observed.screenshot);
                        self.text_read(observed.readability);
                        self.indexed(observed.dom_index, observed.index_warnings);
                    }
                    Err(why) => {
                        self.prep_missing("screenshot", why.clone());
                        self.prep_missing("readability", why.clone());
                        self.prep_missing("dom_index", why);
                    }
                }
                self.fail_if_unprepared(now)
                    .unwrap_or_else(|| self.observed(now))
            }
            ActionCommand::BrowserWaitForLoaded { .. } => {
                if let Err(why) = parsed::<serde_json::Value>(record) {
                    self.preparing()
                        .warnings
                        .push(format!("the page did not finish loading: {why}"));
                }
                let command = ActionCommand::BrowserScreenshot { full_page: None };
                self.submit_as(turn_id, command, Purpose::Observe, "shot")
            }
            ActionCommand::BrowserScreenshot { .. } => {
                self.shot_taken(parsed(record));
                let command = ActionCommand::BrowserReadabilityExtract {};
                self.submit_as(turn_id, command, Purpose::Observe, "read")
            }
            ActionCommand::BrowserReadabilityExtract {} => {
                self.text_read(parsed(record));
                if let Some(refused) = refused.filter(|_| self.preparing().missing.len() >= 2) {
                    // Neither capture may read the page (its domain is blocked): say that.
                    return self.fail_run(refused, now);
                }
                if let Some(failed) = self.fail_if_unprepared(now) {
                    return failed;
                }
                let command = ActionCommand::BrowserDomIndex {
                    scope: None,
                    assign_attr: None,
                    within: None,
                };
                self.submit_as(turn_id, command, Purpose::Observe, "index")
            }
            ActionCommand::BrowserDomIndex { .. } => {
                let partial = outcome
                    .filter(|o| o.status == ActionStatus::Partial)
                    .map(|o| o.warnings.clone())
                    .unwrap_or_default();
                self.indexed(parsed(record), partial);
                self.observed(now)
            }
            // Not a capture (a stored run from before any of these): look at the page.
            _ => self.observe(turn_id),
        }
    }

    /// Seed 000 §4.5: neither a screenshot nor the page's text fails the preparation (the
    /// run's end); `None` while one of them is there.
    pub(super) fn fail_if_unprepared(&mut self, now: u64) -> Option<Vec<Effect>> {
        let page = self.preparing();
        let missing = |what: &str| page.missing.iter().any(|m| m == what);
        if !(missing("screenshot") && missing("readability")) {
            return None;
        }
        let why = page.warnings.join("; ");
        let error = ErrorObject::new(
            ErrorCode::PagePrepFailed,
            format!("The page could not be prepared: neither a screenshot nor its text could be captured ({why})."),
        );
        Some(self.fail_run(error, now))
    }

    /// The observation's screenshot, or why there is none.
    pub(super) fn shot_taken(&mut self, shot: Result<ScreenshotResult, String>) {
        match shot {
            Ok(shot) => {
                let page = self.preparing();
                page.screenshot_artifact_id = Some(shot.artifact_id);
                page.screenshot_width = shot.width;
                page.screenshot_height = shot.height;
                page.screenshot_scale = shot.scale.filter(|s| s.is_finite() && *s > 0.0);
            }
            Err(why) => self.prep_missing("screenshot", why),
        }
    }

    /// The observation's readable text, or why there is none.
    pub(super) fn text_read(&mut self, text: Result<ReadabilityResult, String>) {
        match text {
            Ok(r) => {
                let page = self.preparing();
                page.content = r.markdown.or(r.text).unwrap_or_default();
                if r.truncated {
                    page.warnings.push(format!(
                        "the readable text ({} bytes) is too long to show; only the element list is",
                        r.content_length_bytes
                    ));
                }
                if let Some(title) = r.title {
                    page.title = title;
                }
            }
            Err(why) => self.prep_missing("readability", why),
        }
    }

    /// The observation's element list, or why there is none; `partial`: the warnings of an
    /// index that is not whole.
    pub(super) fn indexed(&mut self, index: Result<DomIndexResult, String>, partial: Vec<String>) {
        let index = match index {
            Ok(index) => index,
            Err(why) => return self.prep_missing("dom_index", why),
        };
        let page = self.preparing();
        page.url = index.url;
        if !index.title.is_empty() {
            page.title = index.title;
        }
        page.element_count = index.elements.len() as u32;
        let shot = (page.screenshot_width, page.screenshot_height);
        for element in &index.elements {
            if let Some(facts) = &element.facts {
                page.facts.insert(element.click_id, facts.clone());
            }
            if let Some(name) = element.text.as_deref().and_then(display_name) {
                page.names.insert(element.click_id, name);
            }
            // Boxes are kept in the screenshot's pixels, where they are drawn.
            let scale = page.screenshot_scale.unwrap_or(1.0);
            let in_shot = element.bbox.map(|b| BoundingBox {
                x: b.x * scale,
                y: b.y * scale,
                w: b.w * scale,
                h: b.h * scale,
            });
            if let Some(b) = in_shot.filter(|b| within(b, shot)) {
                let rounded = [b.x, b.y, b.w, b.h].map(|v| v.round() as i32);
                page.boxes.insert(element.click_id, rounded);
            }
        }
        page.elements = index.text;
        page.tabs = index.tabs;
        if index.elements.is_empty() {
            // Said, so that the model neither guesses indexes nor gives up.
            page.warnings.push(EMPTY_ELEMENT_LIST.to_owned());
        }
        page.warnings.extend(partial);
    }

    /// The page shows a JavaScript dialog: the page is observed as it is, the dialog in front,
    /// without reading what the dialog holds back (the page's scripts wait for its answer).
    pub(super) fn held_by_dialog(&mut self, dialog: PageDialog, now: u64) -> Vec<Effect> {
        let earlier = self.run.as_ref().and_then(|r| r.observation.clone());
        let page = self.preparing();
        if page.url.is_empty() {
            if let Some(earlier) = earlier.filter(|o| o.url == dialog.url) {
                page.title = earlier.title;
            }
            page.url = dialog.url.clone();
        }
        page.dialog = Some(dialog);
        self.observed(now)
    }

    /// The page being prepared is ready: it becomes the run's observation, shown to the web app,
    /// and the model is asked for the next step.
    pub(super) fn observed(&mut self, now: u64) -> Vec<Effect> {
        let run = self.run.as_mut().expect("run");
        let page = run.preparing.take().unwrap_or_default();
        if let Some(step) = run.steps.last_mut() {
            step.page = Some(format!("{} {:?}", page.url, page.title));
        }
        let event = FrontendEvent::PageObserved {
            step: page.after_step,
            url: page.url.clone(),
            title: page.title.clone(),
            screenshot_artifact_id: page.screenshot_artifact_id.clone(),
            elements: page.element_count,
            missing: page.missing.clone(),
            warnings: page.warnings.clone(),
            dialog: page.dialog.clone(),
            // One tab is the usual case: nothing to tell.
            tabs: if page.tabs.len() > 1 {
                page.tabs.clone()
            } else {
                Vec::new()
            },
        };
        run.observation = Some(page);
        let mut effects = vec![Effect::Emit(event)];
        effects.extend(self.think(0, now));
        effects
    }

    pub(super) fn preparing(&mut self) -> &mut Observation {
        self.run
            .as_mut()
            .expect("run")
            .preparing
            .get_or_insert_with(Observation::default)
    }

    pub(super) fn prep_missing(&mut self, what: &str, why: String) {
        let page = self.preparing();
        page.missing.push(what.to_owned());
        page.warnings.push(format!("no {what}: {why}"));
    }
}
