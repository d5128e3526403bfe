//! A request's limits, counted whole: its token and cost budget, and going round in circles.
//!
//! **The budget** (`MIMO_AGENT_MAX_TOKENS`, `MIMO_AGENT_MAX_COST`) is the request's — the
//! person's message and everything done to answer it: every model call that ended for it adds
//! what it used to one total (`AgentRun::request_usage`), whether it was a step, a call that
//! failed and was retried, a reply refused as malformed and corrected, the master's calls, each
//! sub-agent's, or a call beside the chat (the title, a summary) answered meanwhile. The total
//! is kept with the run, carried from each run of the request to the next (the master's, each
//! sub-agent's), so a restart keeps it. A step over it is not run (`done` always may), and no
//! further sub-agent or master call starts: the request ends with `BUDGET_EXCEEDED`.
//!
//! **Going round in circles**: each step's choice is a digest of its action and of the page it
//! was chosen on, with what a page changes by itself (digits, times such as `12:04:33`, counters
//! such as "3 new", "5 minutes ago") left out of the page. See [`repetition`] for the rule.

use std::borrow::Cow;
use std::sync::LazyLock;

use mimo_protocol::{AgentAction, ErrorCode, ErrorObject, TokenUsage};
use regex_lite::{Captures, Regex};

use super::{Conversation, Effect};
use crate::llm;
use crate::records::{AgentRun, Observation, RunConfig, Step};
use crate::unicode;

/// The longest cycle of choices recognised as going round in circles.
pub(crate) const MAX_CYCLE: usize = 4;

/// The most choices a run keeps for [`repetition`] (enough for `MIMO_AGENT_MAX_REPEATS` runs of
/// the longest cycle, up to this).
const MAX_KEPT_CHOICES: usize = 256;

fn add(a: TokenUsage, b: TokenUsage) -> TokenUsage {
    TokenUsage {
        input_tokens: a.input_tokens.saturating_add(b.input_tokens),
        output_tokens: a.output_tokens.saturating_add(b.output_tokens),
    }
}

/// The tokens `steps` used (what each step's own call reported).
fn steps_usage(steps: &[Step]) -> TokenUsage {
    steps
        .iter()
        .fold(TokenUsage::default(), |sum, s| add(sum, s.usage))
}

/// What the request of `run` used so far. A run stored before the request's total was kept
/// counts at least its own steps.
pub(crate) fn request_usage(run: &AgentRun) -> TokenUsage {
    let steps = steps_usage(&run.steps);
    TokenUsage {
        input_tokens: run.request_usage.input_tokens.max(steps.input_tokens),
        output_tokens: run.request_usage.output_tokens.max(steps.output_tokens),
    }
}

/// The request's tokens, and what they cost when the model's price is known.
pub(crate) fn spent(run: &AgentRun, price: Option<llm::Price>) -> (TokenUsage, Option<u64>) {
    let used = request_usage(run);
    (
        used,
        price.map(|p| p.cost_micros(used.input_tokens, used.output_tokens)),
    )
}

/// `BUDGET_EXCEEDED` when a request that used `used` is over its budget.
fn budget_error(used: TokenUsage, config: &RunConfig) -> Option<ErrorObject> {
    let tokens = used.input_tokens.saturating_add(used.output_tokens);
    if let Some(max) = config.max_tokens.filter(|max| tokens > *max) {
        return Some(ErrorObject::new(
            ErrorCode::BudgetExceeded,
            format!(
                "The request used {tokens} tokens, over its budget of {max} (MIMO_AGENT_MAX_TOKENS); every model call made for it counts, its sub-agents' and retried ones included. Give a narrower goal, or raise the budget."
            ),
        ));
    }
    let cost = config
        .price
        .map(|p| p.cost_micros(used.input_tokens, used.output_tokens));
    match (config.max_cost_micros, cost) {
        (Some(max), Some(cost)) if cost > max => Some(ErrorObject::new(
            ErrorCode::BudgetExceeded,
            format!(
                "The request cost ${:.4}, over its budget of ${:.4} (MIMO_AGENT_MAX_COST); every model call made for it counts, its sub-agents' and retried ones included. Give a narrower goal, or raise the budget.",
                cost as f64 / 1e6,
                max as f64 / 1e6
            ),
        )),
        _ => None,
    }
}

impl Conversation {
    /// A model call made for the latest request ended — answered, failed, refused as malformed,
    /// or beside the chat — having used `usage`: the request's total grows by it. It is kept
    /// with the request's run (saved): the task's run is the latest request's, as each new
    /// request (a message answered, an answer regenerated) starts without one. Before the
    /// request has a run, it is held until its first run takes it.
    pub(crate) fn count_usage(&mut self, usage: TokenUsage) -> Vec<Effect> {
        if usage == TokenUsage::default() {
            return Vec::new();
        }
        match self.run.as_mut() {
            Some(run) => {
                run.request_usage = add(run.request_usage, usage);
                Vec::new()
            }
            None => {
                self.unrun_usage = add(self.unrun_usage, usage);
                Vec::new()
            }
        }
    }

    /// What the latest request used so far.
    fn request_total(&self) -> TokenUsage {
        let runs = self
            .run
            .as_ref()
            .map_or(TokenUsage::default(), request_usage);
        add(runs, self.unrun_usage)
    }

    /// A new run for the latest request, toward the message at `goal_position` (its first, a
    /// sub-agent's, the master's turn after them): it takes over what the request used so far.
    pub(crate) fn request_run(&mut self, goal_position: u32) -> AgentRun {
        let mut run = AgentRun::new(goal_position);
        run.request_usage = self.request_total();
        self.unrun_usage = TokenUsage::default();
        run
    }

    /// `BUDGET_EXCEEDED` when the latest request may make no more model calls.
    pub(crate) fn request_over_budget(&self) -> Option<ErrorObject> {
        budget_error(self.request_total(), &self.config)
    }

    /// Whether the latest step goes round in circles: `LOOP_DETECTED` when its choice completes
    /// the same choice or cycle `MIMO_AGENT_MAX_REPEATS` times in a row; at the 3rd and 5th
    /// time the model is warned (`<loop_warning>`, in the run's corrections).
    pub(crate) fn going_in_circles(&mut self) -> Option<ErrorObject> {
        let max_repeats = self.config.max_repeats;
        let run = self.run.as_mut()?;
        let action = &run.steps.last()?.output.action;
        let choice = choice_digest(action, run.observation.as_ref());
        run.choices.push(choice);
        let keep =
            (MAX_CYCLE.saturating_mul(max_repeats as usize)).clamp(MAX_CYCLE, MAX_KEPT_CHOICES);
        if run.choices.len() > keep {
            let extra = run.choices.len() - keep;
            run.choices.drain(..extra);
        }
        let Repetition { cycle, times } = repetition(&run.choices);
        let grew = times > run.repeats;
        run.repeats = times;
        // The actions of the cycle, in the order they were chosen (`done` is never one).
        let mut names: Vec<&str> = run
            .steps
            .iter()
            .rev()
            .map(|s| s.output.action.name())
            .filter(|name| *name != "done")
            .take(cycle)
            .collect();
        names.reverse();
        let action = names.join(", ");
        if times >= max_repeats {
            let message = if cycle == 1 {
                format!("The agent chose {action} on the same unchanged page {times} times in a row: it is going round in circles (MIMO_AGENT_MAX_REPEATS). Rephrase the goal, or do this step yourself.")
            } else {
                format!("The agent went through the same {cycle} steps ({action}) on pages that did not change {times} times in a row: it is going round in circles (MIMO_AGENT_MAX_REPEATS). Rephrase the goal, or do these steps yourself.")
            };
            return Some(ErrorObject::new(ErrorCode::LoopDetected, message));
        }
        if grew && (times == 3 || times == 5) {
            let said = if cycle == 1 {
                format!("You have chosen {action} on this same page {times} times in a row and the page did not change")
            } else {
                format!("You have gone through the same {cycle} steps ({action}) {times} times in a row and the pages did not change")
            };
            run.corrections = vec![llm::ChatMessage::user(format!(
                "<loop_warning>\n{said}: it is not working. Try another way (another element, scroll_to, navigate), or finish with done and say what stopped you. At {max_repeats} the task ends.\n</loop_warning>"
            ))];
        }
        None
    }
}

/// How the latest choice repeats the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Repetition {
    /// How many choices the repeated cycle has (1: the same choice again and again).
    pub cycle: usize,
    /// How many times in a row the cycle ran in full, the latest choice completing it.
    pub times: u32,
}

/// The rule for going round in circles. The latest choices are looked at as one cycle of 1 to
/// [`MAX_CYCLE`] choices repeated back to back: for each length, the longest stretch ending at
/// the latest choice in which every choice equals the one a cycle before it; `times` is how
/// many full cycles that stretch holds (A,B,A,B,A,B: 3 times a cycle of 2; then A: still 3 —
/// the 4th run is not complete; A,A,A: 3 times a cycle of 1; A,B,C,A,B,C: 2 times a cycle of 3).
/// Of the lengths, the one with the most full runs counts (on a tie, the shorter), so
/// A,A,A,A is the same choice 4 times, not a cycle of 2 twice. A choice that repeats nothing
/// counts 1. Each new choice adds at most 1, so no threshold is passed over.
pub(crate) fn repetition(choices: &[u64]) -> Repetition {
    let n = choices.len();
    let mut best = Repetition {
        cycle: 1,
        times: u32::from(n > 0),
    };
    for cycle in 1..=MAX_CYCLE.min(n) {
        let mut stretch = cycle;
        while stretch < n && choices[n - 1 - stretch] == choices[n - 1 - stretch + cycle] {
            stretch += 1;
        }
        let times = (stretch / cycle) as u32;
        if times > best.times {
            best = Repetition { cycle, times };
        }
    }
    best
}

/// A digest of an action and the page it was chosen on (its address, its element list —
/// which says where it and its containers are scrolled — and whether a dialog is open): equal
/// digests are the same choice on a page that did not change. What the page changes by itself
/// is left out of its element list ([`steady_text`]).
pub(crate) fn choice_digest(action: &AgentAction, page: Option<&Observation>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_string(action)
        .unwrap_or_default()
        .hash(&mut hasher);
    if let Some(page) = page {
        page.url.hash(&mut hasher);
        steady_text(&page.elements).hash(&mut hasher);
        page.dialog.is_some().hash(&mut hasher);
    }
    hasher.finish()
}

/// In an element list: what the agent's own steps change, kept as it is (an element's index
/// `[12]<`, a field's `value=…`, where the page and its containers are scrolled); a time said
/// in words ("just now", "a minute ago", "5 min ago"); and any other number (a clock's
/// `12:04:33`, a counter's "3 new", a date), in any script's digits. What is kept is the element
/// list's own notation, which the extension writes in ASCII (a value unquoted only when it is
/// ASCII word characters, `.`, `/`, `:` and `-`), so regex-lite's ASCII `\d` and `\w` are
/// its; a page's own numbers and spaces may be any script's ([`unicode`]).
static CHANGING: LazyLock<Regex> = LazyLock::new(|| {
    let (digit, space) = (unicode::DIGIT, unicode::SPACE);
    Regex::new(&format!(
        r#"(?x)
        (?P<keep>
            \[\d+\]<
          | \bvalue=(?:"(?:[^"\\]|\\.)*"|[\w./:-]+)
          | \bscrolled\ to\ \d+,\d+
          | \b\d+px\ (?:above|below|left|right)\b
        )
      | (?P<ago>
            (?i:\bjust\ now\b
          | \b(?:a|an|one|a\ few|[{digit}]+)[{space}]*(?:s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?|months?|y|years?)\ ago\b)
        )
      | [{digit}]+
        "#,
    ))
    .expect("regex")
});

/// A page's element list without what changes by itself ([`CHANGING`]): a live clock or a
/// ticker's counter is not a change of the page; an index, a field's value or a scroll is.
pub(crate) fn steady_text(text: &str) -> Cow<'_, str> {
    CHANGING.replace_all(text, |c: &Captures| {
        if let Some(kept) = c.name("keep") {
            kept.as_str().to_owned()
        } else if c.name("ago").is_some() {
            "#ago".to_owned()
        } else {
            "#".to_owned()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_of_up_to_four_are_counted_in_full_runs() {
        let times = |choices: &[u64]| {
            let r = repetition(choices);
            (r.cycle, r.times)
        };
        assert_eq!(times(&[]), (1, 0));
        assert_eq!(times(&[1]), (1, 1));
        assert_eq!(times(&[1, 2, 3]), (1, 1));
        assert_eq!(times(&[1, 1, 1]), (1, 3));
        assert_eq!(times(&[1, 1, 1, 1]), (1, 4));
        assert_eq!(times(&[1, 2, 1, 2]), (2, 2));
        assert_eq!(times(&[1, 2, 1, 2, 1, 2]), (2, 3));
        assert_eq!(times(&[1, 2, 1, 2, 1, 2, 1]), (2, 3));
        assert_eq!(times(&[9, 1, 2, 3, 1, 2, 3]), (3, 2));
        assert_eq!(times(&[1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4]), (4, 3));
        // Five different choices again and again are not recognised.
        assert_eq!(times(&[1, 2, 3, 4, 5, 1, 2, 3, 4, 5]), (1, 1));
        // A change breaks the stretch.
        assert_eq!(times(&[1, 2, 1, 2, 1, 3, 1, 2]), (1, 1));
    }

    #[test]
    fn what_a_page_changes_by_itself_is_left_out_and_what_steps_change_is_kept() {
        let steady = |text: &str| steady_text(text).into_owned();
        assert_eq!(
            steady("<span>12:04:33</span>\n[2]<a>Inbox (3 new)</a>"),
            steady("<span>12:05:07</span>\n[2]<a>Inbox (14 new)</a>")
        );
        assert_eq!(
            steady("<p>Updated just now</p>"),
            steady("<p>Updated 5 minutes ago</p>")
        );
        assert_eq!(
            steady("<p>posted a minute ago</p>"),
            steady("<p>posted 2h ago</p>")
        );
        assert_ne!(
            steady("[1]<button>Next</button>"),
            steady("[2]<button>Next</button>")
        );
        assert_ne!(
            steady(r#"[3]<input type=number value="1">"#),
            steady(r#"[3]<input type=number value="2">"#)
        );
        assert_ne!(
            steady("page http://x/ \"X\": scrolled to 0,0 of 1280x4000, viewport 1280x720, 3280px below"),
            steady("page http://x/ \"X\": scrolled to 0,720 of 1280x4000, viewport 1280x720, 2560px below")
        );
        assert_ne!(
            steady("[4]<div scrollable: 0px above, 900px below>"),
            steady("[4]<div scrollable: 300px above, 600px below>")
        );
        assert_ne!(steady("<h1>Step one</h1>"), steady("<h1>Step two</h1>"));
        // Any script's digits, and Unicode's spaces, as the regex crate's `\d` and `\s` had it.
        assert_eq!(
            steady("<span>١٢:٠٤</span><b>３ new</b>"),
            steady("<span>١٢:٠٥</span><b>１４ new</b>")
        );
        assert_eq!(steady("<span>٣</span>"), "<span>#</span>");
        assert_eq!(
            steady("<p>posted 59\u{a0}s ago</p>"),
            steady("<p>posted 1\u{202f}min ago</p>")
        );
        assert_eq!(steady("<p>5\u{a0}min ago</p>"), "<p>#ago</p>");
        assert_ne!(
            steady(r#"[3]<input value="١">"#),
            steady(r#"[3]<input value="٢">"#)
        );
        assert_ne!(steady("[3]<input value=a1>"), steady("[3]<input value=a2>"));
    }
}
