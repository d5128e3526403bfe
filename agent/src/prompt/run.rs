//! The prompt of a browser run: its steps and the latest page, fitted to the context budget.

use super::*;

/// A run as the prompt needs it.
#[derive(Debug, Clone, Copy)]
pub struct RunView<'a> {
    /// The summary of the conversation before `chat`, if it was compacted.
    pub summary: Option<&'a str>,
    /// The chat up to and including the message that started the run (after the summary).
    pub chat: &'a [ChatMessage],
    pub steps: &'a [Step],
    pub observation: Option<&'a Observation>,
    /// What the person wrote while the run was going.
    pub updates: &'a [String],
    /// The model's last malformed reply and what was wrong with it, for its retry.
    pub corrections: &'a [llm::ChatMessage],
    /// What the screenshot sent with the latest page costs (0 without one). The image itself
    /// joins the page's message when the call is made ([`page_message`]), but it counts here.
    pub image_tokens: usize,
}

/// A rough token count: about three bytes a token for English and markup, rounded up, plus a
/// little per message. Deliberately pessimistic, so a prompt that fits here fits the provider.
pub fn estimate_tokens(messages: &[llm::ChatMessage], tools: &[llm::ToolSpec]) -> usize {
    let bytes: usize = messages
        .iter()
        .map(|m| {
            m.content.len()
                + m.tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.to_string().len())
                    .sum::<usize>()
                + 16
        })
        .sum::<usize>()
        + tools
            .iter()
            .map(|t| t.description.len() + t.parameters.to_string().len())
            .sum::<usize>();
    bytes.div_ceil(3)
}

/// The messages of a run's next model call, compacted until they fit the budget: page text
/// cut at the text limit; only the latest page in full (older ones are a one-line
/// placeholder); then, while too large, the oldest steps summarized to one line each, the page
/// text shortened, summary lines dropped, and finally the oldest chat dropped.
pub fn run_messages(view: RunView<'_>, budget: Budget) -> Vec<llm::ChatMessage> {
    let tools = [agent_tool(|_| true)];
    let mut shape = Shape {
        summarized: 0,
        dropped_summaries: 0,
        text_limit: budget.text_limit,
        dropped_chat: 0,
    };
    loop {
        let messages = shape.render(&view);
        if estimate_tokens(&messages, &tools) + view.image_tokens <= budget.context_tokens {
            return messages;
        }
        // The most recent step stays whole: the model must see what it just did.
        if shape.summarized + 1 < view.steps.len() {
            shape.summarized += 1;
        } else if shape.text_limit > 500 {
            shape.text_limit /= 2;
        } else if shape.dropped_summaries < shape.summarized {
            shape.dropped_summaries += 1;
        } else if shape.dropped_chat + 1 < view.chat.len() {
            shape.dropped_chat += 1;
        } else {
            // Nothing left to shrink but the goal itself and the system prompt.
            return messages;
        }
    }
}

/// How far a run's prompt is compacted.
pub(super) struct Shape {
    /// The oldest steps shown as one summary line each.
    summarized: usize,
    /// Of those, how many are left out entirely.
    dropped_summaries: usize,
    text_limit: usize,
    /// The oldest chat messages left out (the goal, last, always stays).
    dropped_chat: usize,
}

impl Shape {
    fn render(&self, view: &RunView<'_>) -> Vec<llm::ChatMessage> {
        let mut system = String::from(SYSTEM_PROMPT);
        system.push_str("\n\n");
        system.push_str(&BROWSER_SECTIONS);
        let mut messages = vec![llm::ChatMessage::system(system)];
        messages.extend(view.summary.map(summary_message));
        let chat = &view.chat[self.dropped_chat.min(view.chat.len().saturating_sub(1))..];
        if let Some((goal, earlier)) = chat.split_last() {
            messages.extend(earlier.iter().map(chat_message));
            messages.push(llm::ChatMessage::user(format!(
                "<goal>\n{}\n</goal>",
                goal.content
            )));
        }
        let (old, recent) = view.steps.split_at(self.summarized.min(view.steps.len()));
        if !old.is_empty() {
            let mut summary = String::from("<earlier_steps>\n");
            if self.dropped_summaries > 0 {
                summary.push_str(&format!(
                    "({} earlier steps omitted)\n",
                    self.dropped_summaries
                ));
            }
            for step in &old[self.dropped_summaries.min(old.len())..] {
                summary.push_str(&step_line(step));
                summary.push('\n');
            }
            summary.push_str("</earlier_steps>");
            messages.push(llm::ChatMessage::user(summary));
        }
        for (i, step) in recent.iter().enumerate() {
            messages.push(llm::ChatMessage::assistant_with_tool_calls(
                cut(&step.thought, 1_000),
                vec![llm::ToolCall {
                    id: step.tool_call_id.clone(),
                    name: AGENT_TOOL_NAME.to_owned(),
                    arguments: serde_json::to_value(&step.output).unwrap_or_default(),
                }],
            ));
            let mut result = step.result.clone().unwrap_or_else(|| ToolResult {
                tool_call_id: step.tool_call_id.clone(),
                name: step.output.action.name().to_owned(),
                ok: false,
                result: None,
                model_result: None,
                error: None,
                warnings: vec!["no result was recorded".into()],
                partial: false,
            });
            // The model reads its own view of the result (the rest of the step as kept).
            result.result = result.model_result.take().or(result.result);
            let latest = i + 1 == recent.len();
            // The latest result may carry what the model asked to read (another tab's text).
            let limit = if latest {
                self.text_limit.max(2_000)
            } else {
                2_000
            };
            messages.push(llm::ChatMessage::tool_result(
                step.tool_call_id.clone(),
                cut(&serde_json::to_string(&result).unwrap_or_default(), limit),
            ));
            if !latest {
                if let Some(page) = &step.page {
                    messages.push(llm::ChatMessage::user(format!(
                        "<page_placeholder>after step {}: {page} (details omitted; see the latest page)</page_placeholder>",
                        step.number
                    )));
                }
            }
        }
        let mut now = String::new();
        if let Some(observation) = view.observation {
            now.push_str(&render_observation(observation, self.text_limit));
        } else if !view.steps.is_empty() {
            now.push_str("<page>\nNo page is open in the task's tab.\n</page>");
        }
        for update in view.updates {
            now.push_str(&format!(
                "\n<user_update>\n{}\n</user_update>",
                cut(update, 4_000)
            ));
        }
        if !now.is_empty() {
            messages.push(llm::ChatMessage::user(now.trim_start().to_owned()));
        }
        messages.extend(view.corrections.iter().cloned());
        messages
    }
}

/// Where the latest page is among a run's messages: the last user message that opens with
/// `<page>` (the page's own text cannot write that tag, [`fenced`]). Its screenshot goes
/// with it.
pub fn page_message(messages: &[llm::ChatMessage]) -> Option<usize> {
    messages
        .iter()
        .rposition(|m| m.role == llm::Role::User && m.content.starts_with("<page>"))
}

/// The step in one line, for the summary of earlier steps.
pub fn step_line(step: &Step) -> String {
    let action = serde_json::to_string(&step.output.action).unwrap_or_default();
    let outcome = match &step.result {
        Some(r) if r.ok => "ok".to_owned(),
        Some(r) => match &r.error {
            Some(e) => format!("failed ({})", e.code),
            None => "failed".to_owned(),
        },
        None => "no result".to_owned(),
    };
    format!(
        "Step {}: {} → {}. Memory: {}",
        step.number,
        cut(&action, 200),
        outcome,
        cut(&step.output.reflection.memory, 300)
    )
}

/// The `<page>` section, page texts cut at `text_limit` characters each.
pub fn render_observation(observation: &Observation, text_limit: usize) -> String {
    let mut out = format!(
        "<page>\nThe task's tab after step {} (earlier pages are omitted).\nurl: {}\ntitle: {}\n",
        observation.after_step,
        fenced(&observation.url),
        fenced(&observation.title)
    );
    if observation.screenshot_width > 0 && observation.screenshot_height > 0 {
        out.push_str(&format!(
            "screenshot: {}x{} pixels (click_at, hover_at and drag points are in its pixels)\n",
            observation.screenshot_width, observation.screenshot_height
        ));
    }
    if !observation.missing.is_empty() {
        out.push_str(&format!("missing: {}\n", observation.missing.join(", ")));
    }
    for warning in &observation.warnings {
        out.push_str(&format!("warning: {warning}\n"));
    }
    if observation.tabs.len() > 1 {
        out.push_str(&render_tabs(&observation.tabs));
    }
    if let Some(dialog) = &observation.dialog {
        out.push_str(&render_dialog(dialog));
    }
    out.push_str("<interactive_elements>\n");
    out.push_str(&fenced(&cut(&observation.elements, text_limit)));
    out.push_str("\n</interactive_elements>\n<content>\n");
    out.push_str(&fenced(&text_window(
        &observation.content,
        observation.content_from,
        text_limit,
    )));
    out.push_str("\n</content>\n</page>");
    out
}

/// Where the part of `text` shown from character `from` ends: `limit` characters on, or
/// earlier at the end of a line when one ends in the second half of the window, so that a
/// table row or a sentence is never cut in two.
pub fn window_end(text: &str, from: usize, limit: usize) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let from = from.min(chars.len());
    let to = (from + limit).min(chars.len());
    if to == chars.len() {
        return to;
    }
    chars[from..to]
        .iter()
        .rposition(|c| *c == '\n')
        .map(|i| from + i + 1)
        .filter(|end| *end > from + limit / 2)
        .unwrap_or(to)
}

/// The part of a page's text shown: from character `from` to [`window_end`], saying what is
/// left out on either side and how to read on (`read_page`).
pub fn text_window(text: &str, from: usize, limit: usize) -> String {
    let total = text.chars().count();
    let from = from.min(total);
    let to = window_end(text, from, limit);
    let mut shown: String = text.chars().skip(from).take(to - from).collect();
    if from > 0 {
        shown.insert_str(
            0,
            &format!("… (characters {from}–{to} of {total}: the text before is not shown)\n"),
        );
    }
    if to < total {
        if !shown.ends_with('\n') {
            shown.push('\n');
        }
        shown.push_str(&format!(
            "… (cut at character {to} of {total}: read_page with from={to} reads on)"
        ));
    }
    shown
}

/// The task's tabs, when it has several: which one this page is, and how to reach the others.
pub(super) fn render_tabs(tabs: &[TaskTab]) -> String {
    let mut out = String::from(
        "tabs: the task has several; actions act in the current one, switch_tab changes it\n",
    );
    for tab in tabs {
        out.push_str(&format!(
            "- tab_id {}{}: {} {}\n",
            tab.tab_id,
            if tab.current { " (current)" } else { "" },
            fenced(&format!("{:?}", cut(&tab.title, 80))),
            fenced(&cut(&tab.url, 200))
        ));
    }
    out
}

/// The dialog a page shows, in front of everything else on it.
pub(super) fn render_dialog(dialog: &PageDialog) -> String {
    let kind = match dialog.kind {
        DialogKind::Alert => "an alert",
        DialogKind::Confirm => "a confirm dialog (OK / Cancel)",
        DialogKind::Prompt => "a prompt (a text field, OK / Cancel)",
        DialogKind::Beforeunload => "a \"leave this page?\" dialog (Leave / Stay)",
    };
    let mut out = format!(
        "dialog: the page shows {kind}: {}\n",
        fenced(&format!("{:?}", cut(&dialog.message, 1_000)))
    );
    if let Some(default) = &dialog.default_prompt {
        out.push_str(&format!(
            "dialog default answer: {}\n",
            fenced(&format!("{default:?}"))
        ));
    }
    out.push_str(
        "Nothing else on the page can be used until it is answered: use the dialog action \
         (accept=true for OK, false for Cancel; text for a prompt's answer).\n",
    );
    out
}

/// The sections a page is shown in. Page text cannot open or close one of them: a page that
/// writes `</page>` followed by instructions must not appear to the model as the user speaking.
pub(super) const PAGE_TAGS: [&str; 3] = ["page", "interactive_elements", "content"];

/// Page text with every opening or closing tag of [`PAGE_TAGS`] (in any case) defused by
/// writing its `<` as `&lt;`.
pub(super) fn fenced(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (at, _) in lower.match_indices('<') {
        let rest = lower[at + 1..].trim_start_matches('/');
        let is_tag = PAGE_TAGS.iter().any(|tag| {
            rest.strip_prefix(tag).is_some_and(|after| {
                after.starts_with(['>', ' ', '\t', '\n', '/']) || after.is_empty()
            })
        });
        if is_tag {
            out.push_str(&text[last..at]);
            out.push_str("&lt;");
            last = at + 1;
        }
    }
    out.push_str(&text[last..]);
    out
}
