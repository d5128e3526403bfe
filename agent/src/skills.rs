//! Skills (seed 002 §1, §9), sans I/O: reading a `SKILL.md`, telling whether a skill is for a
//! page, choosing the skills a model call gets, the `<skills>` block of its prompt, and the
//! actions they leave the model. The skill library (a Durable Object) stores and indexes them;
//! a run's conversation asks it for the skills of its goal and page ([`SkillQuery`]) whenever
//! either changes.

use std::collections::BTreeSet;

use mimo_protocol::agent::action_names;
use mimo_protocol::skills::{valid_skill_name, MAX_SKILL_BYTES};
use mimo_protocol::{ErrorCode, ErrorObject, Skill};
use serde::{Deserialize, Serialize};

use crate::front_matter;
use crate::llm;
use crate::text::cut;

mod site;
use site::Site;

/// What a run asks the skill library for: the skills of its goal, on its page (none yet
/// before the first one is open).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillQuery {
    pub goal: String,
    pub url: Option<String>,
}

/// The most skills in one prompt.
pub const MAX_PROMPT_SKILLS: usize = 3;

/// The longest description, in characters.
const MAX_DESCRIPTION_CHARS: usize = 1_024;

/// The most sites one skill names.
const MAX_SITES: usize = 20;

/// The most words of a goal searched for.
const MAX_SEARCH_TERMS: usize = 24;

/// The front matter of a `SKILL.md`. Other keys (Agent Skills' `license`, `metadata`) are
/// allowed and ignored, so that skills written for other agents can be stored as they are.
struct FrontMatter {
    name: String,
    description: String,
    sites: Vec<String>,
    allowed_tools: Vec<String>,
    risk: Vec<String>,
}

impl FrontMatter {
    /// Reads the front matter's YAML ([`front_matter`]); the error says which line and why.
    /// `sites`, `allowed-tools` (or `allowed_tools`) and `risk` are a list or a single text
    /// (Agent Skills writes `allowed-tools: Read, Grep`).
    fn read(yaml: &str) -> Result<Self, String> {
        let (mut name, mut description) = (None, None);
        let (mut sites, mut allowed_tools, mut risk) = (Vec::new(), Vec::new(), Vec::new());
        let mut tools_line = None;
        for entry in front_matter::read(yaml)? {
            match entry.key.as_str() {
                "name" => name = Some(entry.text()?),
                "description" => description = Some(entry.text()?),
                "sites" => sites = entry.texts()?,
                "allowed-tools" | "allowed_tools" => {
                    if let Some(first) = tools_line {
                        return Err(format!(
                            "line {}: `{}` is given twice (first on line {first})",
                            entry.line, entry.key
                        ));
                    }
                    tools_line = Some(entry.line);
                    allowed_tools = entry.texts()?;
                }
                "risk" => risk = entry.texts()?,
                _ => {}
            }
        }
        Ok(FrontMatter {
            name: name.ok_or("it has no `name`")?,
            description: description.ok_or("it has no `description`")?,
            sites,
            allowed_tools,
            risk,
        })
    }
}

/// Reads the `SKILL.md` stored as `name` at `now`. A file that is not one — no front matter,
/// YAML that does not parse, a missing or wrong field, a site that is not one ([`site`]), an
/// action that does not exist, no steps — is `SCHEMA_VALIDATION_FAILED` saying what is wrong.
pub fn parse(name: &str, text: &str, now: u64) -> Result<Skill, ErrorObject> {
    if text.len() > MAX_SKILL_BYTES {
        return Err(ErrorObject::new(
            ErrorCode::PayloadTooLarge,
            format!(
                "a SKILL.md of {} bytes is over the limit of {MAX_SKILL_BYTES} bytes",
                text.len()
            ),
        ));
    }
    let invalid = |why: String| {
        ErrorObject::new(
            ErrorCode::SchemaValidationFailed,
            format!("not a valid SKILL.md: {why}"),
        )
    };
    let (yaml, body) = split_front_matter(text).ok_or_else(|| {
        invalid(
            "it must begin with front matter between two `---` lines (name, description, and \
             optionally sites, allowed-tools, risk), followed by the steps"
                .into(),
        )
    })?;
    let front = FrontMatter::read(yaml)
        .map_err(|why| invalid(format!("its front matter does not parse: {why}")))?;
    if !valid_skill_name(&front.name) {
        return Err(invalid(format!(
            "name {:?} must be 1–64 lowercase letters, digits and single hyphens",
            front.name
        )));
    }
    if front.name != name {
        return Err(invalid(format!(
            "its name is {:?} but it is stored as {name:?}: they must be the same",
            front.name
        )));
    }
    let description = front.description.trim().to_owned();
    if description.is_empty() || description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(invalid(format!(
            "description must say what the skill is for, in 1–{MAX_DESCRIPTION_CHARS} characters"
        )));
    }
    let sites = trimmed(front.sites);
    if sites.len() > MAX_SITES {
        return Err(invalid(format!(
            "{} sites, over the limit of {MAX_SITES}",
            sites.len()
        )));
    }
    for site in &sites {
        Site::parse(site).map_err(|why| {
            invalid(format!(
                "site {site:?} cannot be used: {why}. A site is a URL pattern such as \
                 https://portal.example.com/expenses/*, portal.example.com, *.example.com or \
                 http://127.0.0.1:*/shop/*"
            ))
        })?;
    }
    let known = action_names();
    let mut allowed_tools: Vec<String> = Vec::new();
    for tool in front
        .allowed_tools
        .iter()
        .flat_map(|t| t.split([',', ' ', '\t', '\n']))
        .filter(|t| !t.is_empty())
    {
        if !known.iter().any(|k| k == tool) {
            return Err(invalid(format!(
                "allowed-tools names {tool:?}, which is not an action; the actions are {}",
                known.join(", ")
            )));
        }
        if !allowed_tools.iter().any(|t| t == tool) {
            allowed_tools.push(tool.to_owned());
        }
    }
    let body = body.trim().to_owned();
    if body.is_empty() {
        return Err(invalid(
            "it has no steps: write them after the front matter".into(),
        ));
    }
    Ok(Skill {
        name: front.name,
        description,
        sites,
        allowed_tools,
        risk: trimmed(front.risk),
        body,
        updated_at: now,
    })
}

fn trimmed(items: Vec<String>) -> Vec<String> {
    items
        .into_iter()
        .map(|i| i.trim().to_owned())
        .filter(|i| !i.is_empty())
        .collect()
}

/// The front matter (YAML) and the body of a `SKILL.md`: the file opens with a `---` line and
/// the front matter ends at the next `---` line.
fn split_front_matter(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let opening = lines.next()?;
    if opening.trim_end() != "---" {
        return None;
    }
    let start = opening.len();
    let mut at = start;
    for line in lines {
        if line.trim_end() == "---" {
            return Some((&text[start..at], &text[at + line.len()..]));
        }
        at += line.len();
    }
    None
}

/// Whether a skill for `sites` is for the page at `url` (a skill for no site is for none in
/// particular). A site is a small part of URLPattern's syntax ([`site`]).
pub fn is_for_page(sites: &[String], url: &str) -> bool {
    let Ok(url) = url::Url::parse(url) else {
        return false;
    };
    sites
        .iter()
        .any(|site| Site::parse(site).is_ok_and(|site| site.matches(&url)))
}

/// Which skills a model call gets, at most [`MAX_PROMPT_SKILLS`], the best first. On a page:
/// the skills for its site (those that match the goal first), then skills for no particular
/// site that match the goal; a skill for other sites never. Before the first page: the skills
/// that match the goal, whatever their sites (one may say where to go). `hits` are the names of
/// the skills matching the goal, the best first; `sites` is every skill's name and sites.
pub fn choose(hits: &[String], sites: &[(String, Vec<String>)], url: Option<&str>) -> Vec<String> {
    let Some(url) = url else {
        return hits.iter().take(MAX_PROMPT_SKILLS).cloned().collect();
    };
    let sites_of = |name: &str| {
        sites
            .iter()
            .find(|(n, _)| n == name)
            .map_or(&[][..], |(_, s)| s.as_slice())
    };
    let for_page: Vec<&String> = sites
        .iter()
        .filter(|(_, s)| is_for_page(s, url))
        .map(|(name, _)| name)
        .collect();
    let hits_for_page = hits.iter().filter(|h| for_page.contains(h));
    let others_for_page = for_page.iter().copied().filter(|n| !hits.contains(n));
    let general_hits = hits.iter().filter(|h| sites_of(h).is_empty());
    hits_for_page
        .chain(others_for_page)
        .chain(general_hits)
        .take(MAX_PROMPT_SKILLS)
        .cloned()
        .collect()
}

/// NLTK's English stop words (as the `stop-words` crate's `nltk` list has them; kept here,
/// since that crate links every language's list into the Worker).
const ENGLISH_STOP_WORDS: &str =
    "a about above after again against ain all am an and any are aren aren't as at be because \
    been before being below between both but by can couldn couldn't d did didn didn't do does \
    doesn doesn't doing don don't down during each few for from further had hadn hadn't has \
    hasn hasn't have haven haven't having he he'd he'll her here hers herself he's him himself \
    his how i i'd if i'll i'm in into is isn isn't it it'd it'll it's its itself i've just ll \
    m ma me mightn mightn't more most mustn mustn't my myself needn needn't no nor not now o \
    of off on once only or other our ours ourselves out over own re s same shan shan't she \
    she'd she'll she's should shouldn shouldn't should've so some such t than that that'll the \
    their theirs them themselves then there these they they'd they'll they're they've this \
    those through to too under until up ve very was wasn wasn't we we'd we'll we're were weren \
    weren't we've what when where which while who whom why will with won won't wouldn wouldn't \
    y you you'd you'll your you're yours yourself yourselves you've";

/// The words of `text` worth searching skills for: lowercase, each once, without English stop
/// words ("the", "on", "my") — they are in every skill and would make every one a match.
pub fn search_terms(text: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let word = word.to_lowercase();
        if word.chars().count() < 2
            || ENGLISH_STOP_WORDS.split(' ').any(|s| s == word)
            || terms.contains(&word)
        {
            continue;
        }
        terms.push(word);
        if terms.len() == MAX_SEARCH_TERMS {
            break;
        }
    }
    terms
}

/// An SQLite FTS5 query matching any of the words of `text` ([`search_terms`]), each quoted so
/// that none is read as an operator; `None` when it has none to search for.
pub fn match_query(text: &str) -> Option<String> {
    let terms = search_terms(text);
    (!terms.is_empty()).then(|| {
        terms
            .iter()
            .map(|t| format!("\"{t}\""))
            .collect::<Vec<_>>()
            .join(" OR ")
    })
}

/// The actions the model is offered while `skills` are in its prompt: those the skills that
/// list any allow, and `done`; `None` (every action) when none lists any.
pub fn offered_actions(skills: &[Skill]) -> Option<BTreeSet<String>> {
    let mut offered: BTreeSet<String> = skills
        .iter()
        .flat_map(|s| s.allowed_tools.iter().cloned())
        .collect();
    if offered.is_empty() {
        return None;
    }
    // The model can always finish, and say why it cannot go on.
    offered.insert("done".to_owned());
    Some(offered)
}

/// Why the model may not take action `action` while `skills` are in its prompt, or `None`.
pub fn refusal(skills: &[Skill], action: &str) -> Option<String> {
    let offered = offered_actions(skills)?;
    if offered.contains(action) {
        return None;
    }
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    Some(format!(
        "{action} is not among the actions the skills in use ({}) allow: {}. Use one of these, \
         or finish with done and say what is left to do.",
        names.join(", "),
        offered.into_iter().collect::<Vec<_>>().join(", ")
    ))
}

/// The skill that guides a step taking `action`: the first of the prompt's skills that allows
/// it (one listing no actions allows all, and every one allows `done`).
pub fn guide<'a>(skills: &'a [Skill], action: &str) -> Option<&'a str> {
    skills
        .iter()
        .find(|s| {
            action == "done"
                || s.allowed_tools.is_empty()
                || s.allowed_tools.iter().any(|t| t == action)
        })
        .map(|s| s.name.as_str())
}

/// The longest body of a skill shown to the model, in characters.
const PROMPT_BODY_CHARS: usize = 6_000;

/// What the model is told of the skills for its goal and page (`<skills>`), or nothing when
/// there are none. Skills are the person's own instructions, unlike a page's text.
pub fn skills_note(skills: &[Skill]) -> Option<llm::ChatMessage> {
    if skills.is_empty() {
        return None;
    }
    let mut note = String::from(
        "<skills>\nThe user wrote down how they do things on these sites. When a skill fits the \
         goal, follow its steps (adapt them to what the page shows) and heed its risk notes.\n",
    );
    if let Some(offered) = offered_actions(skills) {
        note.push_str(&format!(
            "While these skills apply, only these actions are offered: {}.\n",
            offered.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    for skill in skills {
        note.push_str(&format!(
            "<skill name=\"{}\">\ndescription: {}\n",
            skill.name, skill.description
        ));
        if !skill.sites.is_empty() {
            note.push_str(&format!("sites: {}\n", skill.sites.join(", ")));
        }
        if !skill.allowed_tools.is_empty() {
            note.push_str(&format!(
                "allowed actions: {}\n",
                skill.allowed_tools.join(", ")
            ));
        }
        for risk in &skill.risk {
            note.push_str(&format!("risk: {risk}\n"));
        }
        note.push_str(&format!(
            "steps:\n{}\n</skill>\n",
            cut(&skill.body, PROMPT_BODY_CHARS)
        ));
    }
    note.push_str("</skills>");
    Some(llm::ChatMessage::system(note))
}

#[cfg(test)]
mod tests {
    use proptest::collection::vec;
    use proptest::prelude::*;

    use super::*;

    const EXPENSE: &str = "---
name: file-expense
description: File an expense claim on the ACME portal.
sites:
  - https://portal.acme.test/expenses/*
  - '*.acme-intra.test'
allowed-tools: [navigate, click, type, upload_file]
risk: Submitting is final; confirm the amount first.
license: MIT
---
1. Open https://portal.acme.test/expenses/new
2. Type the amount and attach the receipt.
";

    fn skill(name: &str, sites: &[&str], tools: &[&str]) -> Skill {
        Skill {
            name: name.into(),
            description: format!("{name} things"),
            sites: sites.iter().map(|s| s.to_string()).collect(),
            allowed_tools: tools.iter().map(|s| s.to_string()).collect(),
            risk: vec![],
            body: "1. Do it.".into(),
            updated_at: 0,
        }
    }

    #[test]
    fn a_skill_md_is_read_from_its_front_matter_and_steps() {
        let parsed = parse("file-expense", EXPENSE, 42).unwrap();
        assert_eq!(
            parsed,
            Skill {
                name: "file-expense".into(),
                description: "File an expense claim on the ACME portal.".into(),
                sites: vec![
                    "https://portal.acme.test/expenses/*".into(),
                    "*.acme-intra.test".into()
                ],
                allowed_tools: vec![
                    "navigate".into(),
                    "click".into(),
                    "type".into(),
                    "upload_file".into()
                ],
                risk: vec!["Submitting is final; confirm the amount first.".into()],
                body: "1. Open https://portal.acme.test/expenses/new\n2. Type the amount and attach the receipt.".into(),
                updated_at: 42,
            }
        );
        // Agent Skills' comma-separated tools, CRLF line ends and a byte-order mark read the same.
        let crlf = "\u{feff}---\r\nname: x\r\ndescription: d\r\nallowed-tools: click, type\r\n---\r\nsteps\r\n";
        let parsed = parse("x", crlf, 0).unwrap();
        assert_eq!(parsed.allowed_tools, ["click", "type"]);
        assert_eq!(parsed.body, "steps");
        assert!(parsed.sites.is_empty() && parsed.risk.is_empty());
    }

    #[test]
    fn the_example_skills_are_valid_and_for_their_sites() {
        let examples = [
            (
                "file-expense",
                include_str!("../../tests/fixtures/skills/file-expense/SKILL.md"),
                Some("https://expenses.example.com/claims/new"),
            ),
            (
                "mug-shop",
                include_str!("../../tests/fixtures/skills/mug-shop/SKILL.md"),
                Some("http://127.0.0.1:41234/shop/product.html?id=blue"),
            ),
            (
                "careful-payments",
                include_str!("../../tests/fixtures/skills/careful-payments/SKILL.md"),
                None,
            ),
        ];
        for (name, text, page) in examples {
            let skill = parse(name, text, 0).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(page.is_some(), !skill.sites.is_empty(), "{name}");
            if let Some(page) = page {
                assert!(is_for_page(&skill.sites, page), "{name} on {page}");
            }
        }
    }

    #[test]
    fn a_file_that_is_not_a_skill_says_what_is_wrong() {
        let with = |front: &str, body: &str| format!("---\n{front}\n---\n{body}");
        let cases = [
            (
                "no front matter".to_owned(),
                "front matter between two `---` lines",
            ),
            (
                "---\nname: x\ndescription: d\n".to_owned(),
                "front matter between",
            ),
            (with("name: [x", "s"), "does not parse: line 1"),
            (with("description: d", "s"), "does not parse"),
            (
                with("name: x\ndescription: d\nsites: 3", "s"),
                "does not parse",
            ),
            (with("name: X\ndescription: d", "s"), "lowercase"),
            (with("name: y\ndescription: d", "s"), "stored as \"x\""),
            (with("name: x\ndescription: ' '", "s"), "description"),
            (
                with(
                    "name: x\ndescription: d\nsites: ['https://example.com/(unclosed']",
                    "s",
                ),
                "site \"https://example.com/(unclosed\" cannot be used: regular expressions \
                 (`(…)`) are not supported",
            ),
            (
                with("name: x\ndescription: d\nallowed-tools: [click, fly]", "s"),
                "\"fly\", which is not an action; the actions are navigate, click",
            ),
            (with("name: x\ndescription: d", " \n"), "no steps"),
        ];
        for (text, says) in cases {
            let error = parse("x", &text, 0).unwrap_err();
            assert_eq!(error.code, ErrorCode::SchemaValidationFailed, "{text}");
            assert!(error.message.contains(says), "{text}: {}", error.message);
        }
        let huge = with("name: x\ndescription: d", &"s".repeat(MAX_SKILL_BYTES));
        assert_eq!(
            parse("x", &huge, 0).unwrap_err().code,
            ErrorCode::PayloadTooLarge
        );
    }

    #[test]
    fn the_front_matter_takes_lists_or_one_text_and_ignores_other_keys() {
        let text = "---
# Agent Skills' keys load as they are.
name: 'x'   # quoted
description: \"Pay, then \\\"confirm\\\"\"
sites: \"*.acme.test\"
allowed_tools:
- click
- 'type'
risk: [a, 'b, c']
license: Apache-2.0
metadata:
  author: someone
  version: \"1.0\"
---
steps
";
        let skill = parse("x", text, 0).unwrap();
        assert_eq!(skill.description, "Pay, then \"confirm\"");
        assert_eq!(skill.sites, ["*.acme.test"]);
        assert_eq!(skill.allowed_tools, ["click", "type"]);
        assert_eq!(skill.risk, ["a", "b, c"]);
        // Empty or absent lists; a number as the description is its text.
        let skill = parse(
            "x",
            "---\nname: x\ndescription: 12\nsites:\nrisk: ~\n---\ns",
            0,
        )
        .unwrap();
        assert_eq!(skill.description, "12");
        assert!(skill.sites.is_empty() && skill.risk.is_empty());

        let with = |front: &str| format!("---\n{front}\n---\nsteps");
        for (front, says) in [
            ("description: d", "does not parse: it has no `name`"),
            ("name: x", "does not parse: it has no `description`"),
            (
                "name: x\ndescription:",
                "does not parse: line 2: `description` has no value",
            ),
            ("name: [x]\ndescription: d", "line 1: `name` must be text"),
            (
                "name: x\ndescription: d\nallowed-tools: click\nallowed_tools: type",
                "line 4: `allowed_tools` is given twice (first on line 3)",
            ),
            (
                "name: x\ndescription: d\nsites:\n  a: b",
                "line 3: `sites` must be text or a list",
            ),
            (
                "name: x\ndescription: d\nrisk: [a, true]",
                "`true` in `risk` is a boolean",
            ),
            (
                "name: x\ndescription: d\nsites: *.acme.test",
                "line 3: `*.acme.test` begins with an alias",
            ),
            (
                "name: x\ndescription: |\n  d",
                "line 2: `|` begins with block text",
            ),
            (
                "name: x\nname: x\ndescription: d",
                "line 2: `name` is given twice",
            ),
        ] {
            let error = parse("x", &with(front), 0).unwrap_err();
            assert_eq!(error.code, ErrorCode::SchemaValidationFailed, "{front}");
            assert!(
                error
                    .message
                    .starts_with("not a valid SKILL.md: its front matter does not parse: ")
                    && error.message.contains(says),
                "{front}: {}",
                error.message
            );
        }
    }

    #[test]
    fn sites_are_url_patterns_and_a_bare_host_means_its_every_page() {
        let sites = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let expenses = sites(&["https://portal.acme.test/expenses/*"]);
        assert!(is_for_page(
            &expenses,
            "https://portal.acme.test/expenses/new?x=1#top"
        ));
        assert!(!is_for_page(&expenses, "https://portal.acme.test/reports/"));
        assert!(!is_for_page(
            &expenses,
            "http://portal.acme.test/expenses/new"
        ));
        let host = sites(&["portal.acme.test"]);
        assert!(is_for_page(&host, "http://portal.acme.test/"));
        assert!(is_for_page(&host, "https://portal.acme.test/a/b"));
        assert!(!is_for_page(&host, "https://evil.test/portal.acme.test"));
        let subdomains = sites(&["*.acme.test"]);
        assert!(is_for_page(&subdomains, "https://www.acme.test/"));
        assert!(!is_for_page(&subdomains, "https://acme.test/"));
        let port = sites(&["http://127.0.0.1:8080/claim*"]);
        assert!(is_for_page(&port, "http://127.0.0.1:8080/claim.html"));
        assert!(!is_for_page(&port, "http://127.0.0.1:9090/claim.html"));
        assert!(!is_for_page(&host, "not a url"));
        assert!(!is_for_page(&[], "https://portal.acme.test/"));
    }

    #[test]
    fn a_page_gets_its_sites_skills_then_general_ones_that_match_the_goal() {
        let sites = vec![
            ("expense".to_owned(), vec!["portal.acme.test".to_owned()]),
            ("travel".to_owned(), vec!["portal.acme.test".to_owned()]),
            ("shop".to_owned(), vec!["shop.test".to_owned()]),
            ("careful".to_owned(), vec![]),
            ("tables".to_owned(), vec![]),
        ];
        let hits: Vec<String> = ["shop", "careful", "travel"].map(String::from).to_vec();
        // Before any page: what matches the goal, wherever it is for.
        assert_eq!(choose(&hits, &sites, None), ["shop", "careful", "travel"]);
        // On the portal: its skills (the goal's first), then general matches; never the shop's.
        assert_eq!(
            choose(&hits, &sites, Some("https://portal.acme.test/x")),
            ["travel", "expense", "careful"]
        );
        assert_eq!(
            choose(&hits, &sites, Some("https://elsewhere.test/")),
            ["careful"]
        );
        assert!(choose(&[], &sites, Some("https://elsewhere.test/")).is_empty());
        let many: Vec<(String, Vec<String>)> = (0..5)
            .map(|i| (format!("s{i}"), vec!["portal.acme.test".to_owned()]))
            .collect();
        assert_eq!(
            choose(&[], &many, Some("https://portal.acme.test/")).len(),
            MAX_PROMPT_SKILLS
        );
    }

    #[test]
    fn a_goal_is_searched_for_by_its_words_without_stop_words() {
        assert_eq!(
            search_terms("File an expense on OUR portal: the expense is 12 €, see portal.acme"),
            ["file", "expense", "portal", "12", "see", "acme"]
        );
        assert_eq!(
            match_query("the \"claim\" OR NOT e-mail").as_deref(),
            Some("\"claim\" OR \"mail\"")
        );
        assert_eq!(match_query("it is on the"), None);
        let long: String = (0..100).map(|i| format!("word{i} ")).collect();
        assert_eq!(search_terms(&long).len(), MAX_SEARCH_TERMS);
        // NLTK's 198 English words, one space apart.
        let words: Vec<&str> = ENGLISH_STOP_WORDS.split(' ').collect();
        assert_eq!(words.len(), 198);
        assert!(words
            .iter()
            .all(|w| !w.is_empty() && !w.contains(char::is_whitespace)));
        assert_eq!((words[0], words[197]), ("a", "you've"));
    }

    #[test]
    fn listed_actions_restrict_what_is_offered_and_name_the_guide() {
        let expense = skill("expense", &["portal.acme.test"], &["navigate", "click"]);
        let upload = skill("upload", &[], &["upload_file"]);
        let careful = skill("careful", &[], &[]);
        assert_eq!(offered_actions(std::slice::from_ref(&careful)), None);
        assert_eq!(offered_actions(&[]), None);
        let both = [expense.clone(), careful.clone(), upload.clone()];
        assert_eq!(
            offered_actions(&both)
                .unwrap()
                .into_iter()
                .collect::<Vec<_>>(),
            ["click", "done", "navigate", "upload_file"]
        );
        assert_eq!(refusal(&both, "click"), None);
        assert_eq!(refusal(&both, "done"), None);
        let refused = refusal(&both, "type").unwrap();
        assert!(
            refused
                .contains("(expense, careful, upload) allow: click, done, navigate, upload_file"),
            "{refused}"
        );
        assert_eq!(refusal(std::slice::from_ref(&careful), "type"), None);
        assert_eq!(guide(&both, "click"), Some("expense"));
        assert_eq!(guide(&both, "upload_file"), Some("careful"));
        assert_eq!(
            guide(&[expense.clone(), upload], "upload_file"),
            Some("upload")
        );
        assert_eq!(
            guide(std::slice::from_ref(&expense), "done"),
            Some("expense")
        );
        assert_eq!(guide(&[expense], "type"), None);
        assert_eq!(guide(&[], "click"), None);
    }

    #[test]
    fn the_prompt_block_holds_each_skill_and_what_is_offered() {
        assert!(skills_note(&[]).is_none());
        let mut expense = parse("file-expense", EXPENSE, 0).unwrap();
        let steps = expense.body.chars().count();
        expense.body.push_str(&"x".repeat(PROMPT_BODY_CHARS));
        let cut_note = format!("(cut: {steps} more characters)");
        let note = skills_note(&[expense]).unwrap();
        assert_eq!(note.role, llm::Role::System);
        let text = &note.content;
        assert!(text.starts_with("<skills>\n") && text.ends_with("</skills>"));
        for part in [
            "only these actions are offered: click, done, navigate, type, upload_file.",
            "<skill name=\"file-expense\">\ndescription: File an expense claim on the ACME portal.",
            "sites: https://portal.acme.test/expenses/*, *.acme-intra.test",
            "allowed actions: navigate, click, type, upload_file",
            "risk: Submitting is final; confirm the amount first.",
            "steps:\n1. Open https://portal.acme.test/expenses/new",
            &cut_note,
        ] {
            assert!(text.contains(part), "{part} in {text}");
        }
    }

    /// A site pattern, of each kind the README shows.
    fn site() -> impl Strategy<Value = String> {
        prop_oneof![
            "https://[a-z]{1,8}\\.(test|example)(/[a-z0-9]{1,6}){0,2}/\\*",
            "\\*\\.[a-z]{1,8}\\.test",
            "[a-z]{1,8}(-[a-z]{1,4})?\\.test",
            "http://127\\.0\\.0\\.1:\\*/[a-z]{1,6}/\\*",
            "https://\\{\\*\\.\\}\\?[a-z]{1,8}\\.test/\\*",
        ]
    }

    /// Text of which something remains once trimmed.
    fn note() -> impl Strategy<Value = String> {
        prop_oneof![mimo_proptest::text(), "[^\\n]{1,60}"]
            .prop_filter("not blank", |s| !s.trim().is_empty())
    }

    proptest! {
        #![proptest_config(mimo_proptest::cases(256))]

        #[test]
        fn front_matter_of_any_skill_written_in_any_style_reads_back(
            name in "[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}".prop_filter("not a route", |n| n != "search"),
            description in note(),
            sites in vec(site(), 0..5),
            tools in proptest::sample::subsequence(action_names(), 0..5),
            risk in vec(note(), 0..4),
            styles in vec(any::<u8>(), 6),
        ) {
            use crate::front_matter::tests::{list_written, scalar_written};
            // One item may be written as the text alone; tools also as Agent Skills' `a, b`.
            let many = |key: &str, items: &[String], style: u8| match items {
                [one] if style.is_multiple_of(3) => format!("{key}: {}\n", scalar_written(one, style / 3, false)),
                [_, ..] if key == "allowed-tools" && style % 3 == 1 => {
                    format!("{key}: {}\n", items.join(", "))
                }
                _ => list_written(key, items, style, style.is_multiple_of(7)),
            };
            let text = format!(
                "---\nname: {}\ndescription: {}\n{}{}{}---\n1. Do it.\n",
                scalar_written(&name, styles[0], false),
                scalar_written(&description, styles[1], false),
                many("sites", &sites, styles[2]),
                many("allowed-tools", &tools, styles[3]),
                many("risk", &risk, styles[4]),
            );
            let skill = parse(&name, &text, 5).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
            prop_assert_eq!(
                skill,
                Skill {
                    name: name.clone(),
                    description: description.trim().to_owned(),
                    sites,
                    allowed_tools: tools,
                    risk: risk.iter().map(|r| r.trim().to_owned()).collect(),
                    body: "1. Do it.".into(),
                    updated_at: 5,
                },
                "{:?}", text
            );
        }
    }
}
