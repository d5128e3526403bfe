//! How risky the latest step is, rated on what the page said of its target.

use super::*;

impl Conversation {
    /// How risky the latest step is, rated from the page it was chosen on (seed 002 §6.1).
    pub(super) fn rate_latest_step(&self) -> risk::Assessment {
        let run = self.run.as_ref().expect("run");
        let step = run.steps.last().expect("step");
        let page = run.observation.as_ref();
        // The dialog of a step the person confirmed is the page asking the same question.
        let earlier_confirmed = run
            .steps
            .len()
            .checked_sub(2)
            .is_some_and(|i| run.steps[i].confirmed);
        let no_facts = BTreeMap::new();
        let view = risk::PageView {
            elements: page.map_or("", |o| o.elements.as_str()),
            content: page.map_or("", |o| o.content.as_str()),
            dialog: page
                .and_then(|o| o.dialog.as_ref())
                .filter(|_| !earlier_confirmed),
            facts: page.map_or(&no_facts, |o| &o.facts),
            named_site: self.seen().on_named_site(),
        };
        risk::assess(&step.output.action, view, &self.config.risk)
    }

    /// Where the latest step's target stands in the screenshot of the page it was chosen on,
    /// when it was in view there.
    pub(super) fn latest_target_box(&self) -> Option<BoundingBox> {
        let run = self.run.as_ref()?;
        let index = run.steps.last()?.output.action.target()?;
        let [x, y, w, h] = *run.observation.as_ref()?.boxes.get(&index)?;
        Some(BoundingBox {
            x: x.into(),
            y: y.into(),
            w: w.into(),
            h: h.into(),
        })
    }

    /// What the latest step's target is called on the page it was chosen on.
    pub(super) fn latest_target_name(&self) -> Option<String> {
        let run = self.run.as_ref()?;
        let index = run.steps.last()?.output.action.target()?;
        run.observation.as_ref()?.names.get(&index).cloned()
    }
}
