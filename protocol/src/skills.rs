//! Skills (seed 002 §1, §9): how a site is used, written down by people as `SKILL.md` files —
//! YAML front matter (name, description, the sites it is for, the actions it allows, risk notes)
//! and a body of steps. The deployment stores them (`PUT /api/skills/{name}`), finds them by
//! their words (`GET /api/skills/search?q=`), and puts the ones matching a run's goal and page
//! into the model's prompt (`<skills>`), where their allowed actions restrict what it is offered.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A stored skill, as parsed from its `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Skill {
    /// Its name, as in `PUT /api/skills/{name}` ([`valid_skill_name`]).
    pub name: String,
    /// What it is for, in a sentence: the model reads it, and search finds it by it.
    pub description: String,
    /// The pages it is for, as URL patterns (`https://portal.example/expenses/*`,
    /// `*.example.com`); none: any site.
    #[serde(default)]
    pub sites: Vec<String>,
    /// The actions it needs (`navigate`, `click`, …); none: it restricts nothing. While it is in
    /// the prompt the model is offered only these (and those of the other skills that list
    /// theirs), and `done`.
    #[serde(default)]
    pub allowed_tools: Vec<String>,
    /// What to be careful about (irreversible steps, what to confirm with the person).
    #[serde(default)]
    pub risk: Vec<String>,
    /// The steps (markdown).
    pub body: String,
    /// When it was last stored (ms since the Unix epoch).
    #[ts(type = "number")]
    pub updated_at: u64,
}

/// `GET /api/skills`: every stored skill, by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SkillList {
    pub skills: Vec<Skill>,
}

/// One result of `GET /api/skills/search?q=`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SkillHit {
    pub skill: Skill,
    /// Where its text matches, the matching words in `[` `]`.
    pub snippet: String,
}

/// `GET /api/skills/search?q=`: the skills matching any word of `q`, the best first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SkillSearch {
    pub results: Vec<SkillHit>,
}

/// The largest `SKILL.md` accepted, in UTF-8 bytes: a procedure, not a manual (the model reads
/// every skill in its prompt whole).
pub const MAX_SKILL_BYTES: usize = 16 * 1024;

/// The most skills a deployment stores.
pub const MAX_SKILLS: usize = 500;

/// A skill's name (as Agent Skills names them): 1 to 64 lowercase letters, digits and single
/// hyphens, not starting or ending with one. `search` is taken by the search route.
pub fn valid_skill_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name != "search"
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_names_are_lowercase_words_joined_by_hyphens() {
        for good in ["file-expense", "a", "shop2", &"x".repeat(64)] {
            assert!(valid_skill_name(good), "{good}");
        }
        for bad in [
            "",
            "File-Expense",
            "file_expense",
            "-file",
            "file-",
            "file--expense",
            "file expense",
            "../x",
            "search",
            &"x".repeat(65),
        ] {
            assert!(!valid_skill_name(bad), "{bad}");
        }
    }
}
