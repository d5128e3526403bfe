//! `SkillLibrary`: the deployment's skills (seed 002 §1, §9), one object for the deployment. It
//! stores each `SKILL.md` as the core reads it (`mimo_agent::skills::parse`), searches them with
//! SQLite's FTS5, and answers a run's lookups with the skills the core chooses for its goal and
//! page. A library of its own, not a table of the registry: lookups come at every change of a
//! run's page, and the registry relays every extension frame.

use mimo_agent::skills::{self, SkillQuery};
use mimo_protocol::skills::MAX_SKILLS;
use mimo_protocol::{ErrorCode, ErrorObject, SkillList, SkillSearch};
use worker::*;

use crate::http::{error_response, now_ms, query_param, read_body};
use crate::skill_store::SkillStore;

#[cfg_attr(feature = "objects", durable_object)]
pub struct SkillLibrary {
    store: SkillStore,
}

impl DurableObject for SkillLibrary {
    fn new(state: State, _env: Env) -> Self {
        let store = SkillStore::open(state.storage().sql()).expect("skill schema");
        Self { store }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let url = req.url()?;
        let param = |name: &str| query_param(&url, name).unwrap_or_default();
        let name = param("name");
        match (req.method(), url.path()) {
            (Method::Get, "/list") => Response::from_json(&SkillList {
                skills: self.store.list()?,
            }),
            (Method::Get, "/search") => Response::from_json(&SkillSearch {
                results: self.store.search(&param("q"))?,
            }),
            (Method::Post, "/match") => match read_body::<SkillQuery>(&mut req).await {
                Ok(query) => {
                    Response::from_json(&self.store.matching(&query.goal, query.url.as_deref())?)
                }
                Err(error) => error_response(&error),
            },
            (Method::Get, "/skill") => match self.store.get(&name)? {
                Some(skill) => Response::from_json(&skill),
                None => error_response(&unknown(&name)),
            },
            (Method::Put, "/skill") => {
                let text = req.text().await?;
                self.put(&name, &text)
            }
            (Method::Delete, "/skill") => {
                if self.store.delete(&name)? {
                    Ok(Response::empty()?.with_status(204))
                } else {
                    error_response(&unknown(&name))
                }
            }
            _ => error_response(&ErrorObject::new(
                ErrorCode::NotFound,
                "no such skill library route",
            )),
        }
    }
}

impl SkillLibrary {
    /// Stores the `SKILL.md` `text` as skill `name`: `201` with the skill when it is new, `200`
    /// when it replaced one.
    fn put(&self, name: &str, text: &str) -> Result<Response> {
        let skill = match skills::parse(name, text, now_ms()) {
            Ok(skill) => skill,
            Err(error) => return error_response(&error),
        };
        if self.store.get(name)?.is_none() && self.store.count()? >= MAX_SKILLS {
            return error_response(&ErrorObject::new(
                ErrorCode::PayloadTooLarge,
                format!("the library holds {MAX_SKILLS} skills, its limit: delete one first"),
            ));
        }
        let created = self.store.put(&skill)?;
        Ok(Response::from_json(&skill)?.with_status(if created { 201 } else { 200 }))
    }
}

fn unknown(name: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::TargetNotFound,
        format!("no skill is named {name:?}"),
    )
}
