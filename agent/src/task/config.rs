//! A deployment's task settings, read once from its environment (`wrangler.toml` vars and
//! secrets) through a lookup function, so that every rule about them is tested natively.

use super::artifacts::{days_ms, DEFAULT_RETENTION_DAYS};
use crate::actions::{ScriptBounds, Timeouts};
use crate::llm::{self, LlmConfig, LlmError, LlmErrorKind, Provider};
use crate::records::{Budget, RunConfig};
use crate::risk::RiskRules;
use crate::secrets::{parse_deployment_secrets, Secret, SecretsKey, MIN_KEY_CHARS};
use mimo_protocol::{PiiKind, RedactionPolicy};

/// Everything a task coordinator takes from its environment.
#[derive(Debug, Clone)]
pub struct TaskConfig {
    pub run: RunConfig,
    pub timeouts: Timeouts,
    /// The model endpoint, or why none is usable (reported to the person at their first
    /// message, not at startup, so that a task can still be opened, exported and deleted).
    pub llm: Result<LlmConfig, LlmError>,
    /// The deployment's secrets (`MIMO_SECRETS`), values in memory only.
    pub secrets: Vec<Secret>,
    /// What a task's own secrets are encrypted under (`MIMO_SECRETS_KEY`); without it a task
    /// cannot store one.
    pub secrets_key: Option<SecretsKey>,
    /// How long a stored artifact is kept (`MIMO_ARTIFACT_RETENTION_DAYS`, 30 by default).
    pub artifact_retention_ms: u64,
}

impl Default for TaskConfig {
    /// The defaults, without a model endpoint.
    fn default() -> Self {
        TaskConfig::from_lookup(|_| None).0
    }
}

/// A setting that was set but could not be used; its default applies. The shell logs these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWarning {
    pub name: &'static str,
    pub message: String,
}

impl TaskConfig {
    /// Reads every setting through `lookup` (a variable's value, `None` when unset). A value
    /// that is set but unusable keeps the default and adds a warning naming it, never silently.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> (Self, Vec<ConfigWarning>) {
        let mut reader = Settings::new(&lookup);
        let timeouts = timeouts(&mut reader);
        let llm = llm_config(&lookup);
        let run = run_config(&mut reader, llm.as_ref().ok());
        let (secrets, secrets_key) = secrets(&mut reader);
        let artifact_retention_ms = days_ms(
            reader
                .days("MIMO_ARTIFACT_RETENTION_DAYS")
                .unwrap_or(DEFAULT_RETENTION_DAYS),
        );
        let config = TaskConfig {
            run,
            timeouts,
            llm,
            secrets,
            secrets_key,
            artifact_retention_ms,
        };
        (config, reader.warnings)
    }
}

/// Reads settings through a lookup, collecting a warning for each value that is set but
/// unusable. Every setting of the deployment is read through one, the Worker's own too.
pub struct Settings<'a> {
    lookup: &'a dyn Fn(&str) -> Option<String>,
    warnings: Vec<ConfigWarning>,
}

impl<'a> Settings<'a> {
    pub fn new(lookup: &'a dyn Fn(&str) -> Option<String>) -> Self {
        Settings {
            lookup,
            warnings: Vec::new(),
        }
    }

    /// The warnings of what was read so far.
    pub fn into_warnings(self) -> Vec<ConfigWarning> {
        self.warnings
    }

    fn get(&self, name: &str) -> Option<String> {
        (self.lookup)(name).filter(|v| !v.trim().is_empty())
    }

    /// A positive whole number, if set.
    pub fn number(&mut self, name: &'static str) -> Option<u64> {
        let raw = self.get(name)?;
        match raw.trim().parse::<u64>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                self.warnings.push(ConfigWarning {
                    name,
                    message: format!(
                        "{name}={raw:?} is not a positive whole number; the default applies"
                    ),
                });
                None
            }
        }
    }

    /// A positive number of days (fractions allowed), if set.
    fn days(&mut self, name: &'static str) -> Option<f64> {
        let raw = self.get(name)?;
        match raw.trim().parse::<f64>() {
            Ok(d) if d.is_finite() && d > 0.0 => Some(d),
            _ => {
                self.warnings.push(ConfigWarning {
                    name,
                    message: format!(
                        "{name}={raw:?} is not a positive number of days; the default applies"
                    ),
                });
                None
            }
        }
    }

    /// A comma-separated list, each item trimmed, empty ones left out.
    fn list(&self, name: &str) -> Vec<String> {
        self.get(name)
            .map(|raw| {
                raw.split(',')
                    .map(|item| item.trim().to_owned())
                    .filter(|item| !item.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A positive amount of dollars, in millionths, if set.
    fn dollars(&mut self, name: &'static str) -> Option<u64> {
        let raw = self.get(name)?;
        match raw.trim().trim_start_matches('$').parse::<f64>() {
            Ok(d) if d.is_finite() && d > 0.0 => Some((d * 1_000_000.0).round() as u64),
            _ => {
                self.warnings.push(ConfigWarning {
                    name,
                    message: format!(
                        "{name}={raw:?} is not a positive amount of dollars; no limit applies"
                    ),
                });
                None
            }
        }
    }

    /// On unless set to `false`, `off` or `0` (or another value than `true`, `on`, `1`, which
    /// is warned about and keeps the default).
    fn switch(&mut self, name: &'static str, default: bool) -> bool {
        let Some(raw) = self.get(name) else {
            return default;
        };
        match raw.trim().to_ascii_lowercase().as_str() {
            "true" | "on" | "1" => true,
            "false" | "off" | "0" => false,
            _ => {
                self.warnings.push(ConfigWarning {
                    name,
                    message: format!(
                        "{name}={raw:?} is not true/false, on/off or 1/0; the default applies"
                    ),
                });
                default
            }
        }
    }
}

/// Action timeouts: `MIMO_ACTION_ACK_TIMEOUT_MS`, `MIMO_ACTION_EXEC_TIMEOUT_MS`, (for page
/// loads and uploads) `MIMO_ACTION_SLOW_EXEC_TIMEOUT_MS` and (how long an undelivered action
/// waits for its extension) `MIMO_ACTION_OFFLINE_GRACE_MS`; for a script that carries out its
/// task's actions, `MIMO_SCRIPT_TAKE_TIMEOUT_MS` and `MIMO_SCRIPT_REPORT_TIMEOUT_MS`.
fn timeouts(reader: &mut Settings) -> Timeouts {
    let defaults = Timeouts::default();
    Timeouts {
        ack_ms: reader
            .number("MIMO_ACTION_ACK_TIMEOUT_MS")
            .unwrap_or(defaults.ack_ms),
        exec_ms: reader
            .number("MIMO_ACTION_EXEC_TIMEOUT_MS")
            .unwrap_or(defaults.exec_ms),
        slow_exec_ms: reader
            .number("MIMO_ACTION_SLOW_EXEC_TIMEOUT_MS")
            .unwrap_or(defaults.slow_exec_ms),
        offline_grace_ms: reader
            .number("MIMO_ACTION_OFFLINE_GRACE_MS")
            .unwrap_or(defaults.offline_grace_ms),
        script: ScriptBounds {
            take_ms: reader
                .number("MIMO_SCRIPT_TAKE_TIMEOUT_MS")
                .unwrap_or(defaults.script.take_ms),
            report_ms: reader
                .number("MIMO_SCRIPT_REPORT_TIMEOUT_MS")
                .unwrap_or(defaults.script.report_ms),
        },
        ..defaults
    }
}

/// The agent's limits: `MIMO_AGENT_MAX_STEPS`, `MIMO_AGENT_CONTEXT_TOKENS`,
/// `MIMO_AGENT_TEXT_LIMIT`, `MIMO_AGENT_CONFIRM_RISKY`, `MIMO_AGENT_VISION` (for `llm`),
/// `MIMO_AGENT_MAX_REPEATS`, `MIMO_AGENT_MAX_TOKENS`, `MIMO_AGENT_MAX_COST` (dollars) and the
/// model's price (`MIMO_LLM_PRICE`, else known for common models).
fn run_config(reader: &mut Settings, llm: Option<&LlmConfig>) -> RunConfig {
    let defaults = RunConfig::default();
    let max_steps = reader
        .number("MIMO_AGENT_MAX_STEPS")
        .map_or(defaults.max_steps, |n| n.min(u64::from(u32::MAX)) as u32);
    let context_tokens = reader
        .number("MIMO_AGENT_CONTEXT_TOKENS")
        .map_or(defaults.budget.context_tokens, |n| n as usize);
    let text_limit = reader
        .number("MIMO_AGENT_TEXT_LIMIT")
        .map_or(defaults.budget.text_limit, |n| n as usize);
    RunConfig {
        max_steps,
        budget: Budget {
            context_tokens,
            text_limit,
        },
        confirm_risky: reader.switch("MIMO_AGENT_CONFIRM_RISKY", defaults.confirm_risky),
        vision: vision(reader, llm),
        max_repeats: reader
            .number("MIMO_AGENT_MAX_REPEATS")
            .map_or(defaults.max_repeats, |n| n.min(u64::from(u32::MAX)) as u32),
        max_tokens: reader.number("MIMO_AGENT_MAX_TOKENS"),
        max_cost_micros: reader.dollars("MIMO_AGENT_MAX_COST"),
        price: price(reader, llm),
        domains: mimo_protocol::DomainPolicy {
            allowed: reader.list("MIMO_ALLOWED_DOMAINS"),
            blocked: reader.list("MIMO_BLOCKED_DOMAINS"),
        },
        risk: risk_rules(reader),
        redaction: redaction(reader),
    }
}

/// The risk policy: `MIMO_RISK_RULES` (JSON, see [`RiskRules`]) over the defaults.
fn risk_rules(reader: &mut Settings) -> RiskRules {
    const NAME: &str = "MIMO_RISK_RULES";
    let Some(raw) = reader.get(NAME) else {
        return RiskRules::default();
    };
    RiskRules::parse(&raw).unwrap_or_else(|why| {
        reader.warnings.push(ConfigWarning {
            name: NAME,
            message: format!("{NAME} is not usable ({why}); the default rules apply"),
        });
        RiskRules::default()
    })
}

/// What personal data the extension keeps out of what it sends: `MIMO_REDACT_EVIDENCE` (on:
/// stored page text, HTML, element lists and screenshots), `MIMO_REDACT_MODEL` (off: the text
/// the model reads) and `MIMO_REDACT_KINDS` (`email,phone,card,token`, all by default).
fn redaction(reader: &mut Settings) -> RedactionPolicy {
    const KINDS: &str = "MIMO_REDACT_KINDS";
    let defaults = RedactionPolicy::default();
    let mut kinds = Vec::new();
    for name in reader.list(KINDS) {
        match PiiKind::parse(&name) {
            Some(kind) if !kinds.contains(&kind) => kinds.push(kind),
            Some(_) => {}
            None => reader.warnings.push(ConfigWarning {
                name: KINDS,
                message: format!(
                    "{KINDS}: {name:?} is not one of email, phone, card, token; it is left out"
                ),
            }),
        }
    }
    if kinds.is_empty() {
        kinds = defaults.kinds;
    }
    RedactionPolicy {
        evidence: reader.switch("MIMO_REDACT_EVIDENCE", defaults.evidence),
        model: reader.switch("MIMO_REDACT_MODEL", defaults.model),
        kinds,
    }
}

/// The deployment's secrets (`MIMO_SECRETS`, JSON) and the key of the tasks' own
/// (`MIMO_SECRETS_KEY`, at least 16 characters). Warnings never hold a value.
fn secrets(reader: &mut Settings) -> (Vec<Secret>, Option<SecretsKey>) {
    const SECRETS: &str = "MIMO_SECRETS";
    const KEY: &str = "MIMO_SECRETS_KEY";
    let secrets = match reader.get(SECRETS) {
        None => Vec::new(),
        Some(raw) => {
            let (secrets, problems) = parse_deployment_secrets(&raw);
            for message in problems {
                reader.warnings.push(ConfigWarning {
                    name: SECRETS,
                    message,
                });
            }
            secrets
        }
    };
    let key = reader.get(KEY).and_then(|raw| {
        let key = SecretsKey::from_setting(&raw);
        if key.is_none() {
            reader.warnings.push(ConfigWarning {
                name: KEY,
                message: format!(
                    "{KEY} is shorter than {MIN_KEY_CHARS} characters; tasks cannot store secrets until it is set to a longer one"
                ),
            });
        }
        key
    });
    (secrets, key)
}

/// What the model's tokens cost: `MIMO_LLM_PRICE` ("input,output" dollars per million
/// tokens), else the list price of a common model.
fn price(reader: &mut Settings, llm: Option<&LlmConfig>) -> Option<llm::Price> {
    const NAME: &str = "MIMO_LLM_PRICE";
    let known = || llm.and_then(|llm| llm::known_price(&llm.model));
    let Some(raw) = reader.get(NAME) else {
        return known();
    };
    llm::Price::parse(&raw).or_else(|| {
        reader.warnings.push(ConfigWarning {
            name: NAME,
            message: format!(
                "{NAME}={raw:?} is not \"input,output\" dollars per million tokens; the known price applies"
            ),
        });
        known()
    })
}

/// Whether the model is shown the page's screenshot: `MIMO_AGENT_VISION` is `auto` (the
/// default: when the model is known to take images), `on` or `off`.
fn vision(reader: &mut Settings, llm: Option<&LlmConfig>) -> bool {
    const NAME: &str = "MIMO_AGENT_VISION";
    let auto = || llm.is_some_and(|llm| llm::model_accepts_images(&llm.model));
    let Some(raw) = reader.get(NAME) else {
        return auto();
    };
    match raw.trim().to_ascii_lowercase().as_str() {
        "auto" => auto(),
        "on" | "true" | "1" => true,
        "off" | "false" | "0" => false,
        _ => {
            reader.warnings.push(ConfigWarning {
                name: NAME,
                message: format!("{NAME}={raw:?} is not auto, on or off; auto applies"),
            });
            auto()
        }
    }
}

/// The model endpoint: `MIMO_LLM_PROVIDER` (openai by default), `MIMO_LLM_MODEL`,
/// `MIMO_LLM_BASE_URL` (required for openai_compatible), `MIMO_LLM_API_KEY` and
/// `MIMO_LLM_TIMEOUT_MS`. The key is never part of an error or a warning.
fn llm_config(lookup: &dyn Fn(&str) -> Option<String>) -> Result<LlmConfig, LlmError> {
    let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
    let provider: Provider = get("MIMO_LLM_PROVIDER")
        .unwrap_or_else(|| "openai".into())
        .parse()
        .map_err(|e| not_configured(&format!("{e}")))?;
    let model = get("MIMO_LLM_MODEL").ok_or_else(|| not_configured("MIMO_LLM_MODEL is not set"))?;
    let mut config = LlmConfig::new(provider, model);
    if let Some(base_url) = get("MIMO_LLM_BASE_URL") {
        config = config.with_base_url(base_url);
    }
    if config.base_url.is_empty() {
        return Err(not_configured(
            "MIMO_LLM_BASE_URL is required for openai_compatible",
        ));
    }
    if let Some(key) = get("MIMO_LLM_API_KEY") {
        config = config.with_api_key(key);
    }
    if let Some(raw) = get("MIMO_LLM_TIMEOUT_MS") {
        config.timeout_ms = raw.trim().parse().map_err(|_| {
            not_configured(&format!(
                "MIMO_LLM_TIMEOUT_MS={raw:?} is not a whole number of milliseconds"
            ))
        })?;
    }
    Ok(config)
}

fn not_configured(why: &str) -> LlmError {
    LlmError::new(
        LlmErrorKind::BadRequest,
        format!("no LLM provider is configured ({why}); set MIMO_LLM_PROVIDER, MIMO_LLM_BASE_URL, MIMO_LLM_MODEL and MIMO_LLM_API_KEY"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> (TaskConfig, Vec<ConfigWarning>) {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        TaskConfig::from_lookup(|name| vars.get(name).cloned())
    }

    #[test]
    fn unset_settings_keep_their_defaults_without_warnings() {
        let (config, warnings) = config(&[]);
        assert_eq!(config.run, RunConfig::default());
        assert_eq!(config.timeouts, Timeouts::default());
        assert_eq!(config.artifact_retention_ms, 30 * 86_400_000);
        assert!(warnings.is_empty());
        let error = config.llm.unwrap_err();
        assert!(
            error.message.contains("MIMO_LLM_MODEL is not set"),
            "{error}"
        );
    }

    #[test]
    fn set_values_are_used() {
        let (config, warnings) = config(&[
            ("MIMO_ACTION_ACK_TIMEOUT_MS", "700"),
            ("MIMO_ACTION_EXEC_TIMEOUT_MS", " 1200 "),
            ("MIMO_ACTION_SLOW_EXEC_TIMEOUT_MS", "3000"),
            ("MIMO_ACTION_OFFLINE_GRACE_MS", "50"),
            ("MIMO_AGENT_MAX_STEPS", "7"),
            ("MIMO_AGENT_CONTEXT_TOKENS", "9000"),
            ("MIMO_AGENT_TEXT_LIMIT", "400"),
            ("MIMO_AGENT_CONFIRM_RISKY", "off"),
            ("MIMO_ARTIFACT_RETENTION_DAYS", " 0.5 "),
        ]);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(config.artifact_retention_ms, 43_200_000);
        assert_eq!(config.timeouts.ack_ms, 700);
        assert_eq!(config.timeouts.exec_ms, 1200);
        assert_eq!(config.timeouts.slow_exec_ms, 3000);
        assert_eq!(config.timeouts.offline_grace_ms, 50);
        assert_eq!(config.timeouts.grace_ms, Timeouts::default().grace_ms);
        assert_eq!(config.run.max_steps, 7);
        assert_eq!(config.run.budget.context_tokens, 9000);
        assert_eq!(config.run.budget.text_limit, 400);
        assert!(!config.run.confirm_risky);
    }

    #[test]
    fn unusable_values_keep_the_default_and_are_named_in_a_warning() {
        let (config, warnings) = config(&[
            ("MIMO_ACTION_ACK_TIMEOUT_MS", "5s"),
            ("MIMO_AGENT_MAX_STEPS", "0"),
            ("MIMO_AGENT_TEXT_LIMIT", "-3"),
            ("MIMO_AGENT_CONFIRM_RISKY", "maybe"),
            ("MIMO_ARTIFACT_RETENTION_DAYS", "-1"),
        ]);
        assert_eq!(config.timeouts.ack_ms, Timeouts::default().ack_ms);
        assert_eq!(config.run, RunConfig::default());
        assert_eq!(config.artifact_retention_ms, 30 * 86_400_000);
        let named: Vec<&str> = warnings.iter().map(|w| w.name).collect();
        assert_eq!(
            named,
            [
                "MIMO_ACTION_ACK_TIMEOUT_MS",
                "MIMO_AGENT_MAX_STEPS",
                "MIMO_AGENT_TEXT_LIMIT",
                "MIMO_AGENT_CONFIRM_RISKY",
                "MIMO_ARTIFACT_RETENTION_DAYS"
            ]
        );
        assert!(warnings[0].message.contains("\"5s\""), "{:?}", warnings[0]);
    }

    #[test]
    fn loop_and_budget_limits_and_the_models_price_are_read() {
        let (config, warnings) = config(&[
            ("MIMO_LLM_MODEL", "gpt-4o-mini"),
            ("MIMO_AGENT_MAX_REPEATS", "4"),
            ("MIMO_AGENT_MAX_TOKENS", "50000"),
            ("MIMO_AGENT_MAX_COST", "$0.25"),
        ]);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(config.run.max_repeats, 4);
        assert_eq!(config.run.max_tokens, Some(50_000));
        assert_eq!(config.run.max_cost_micros, Some(250_000));
        assert_eq!(config.run.price, Some(llm::Price::dollars(0.15, 0.6)));
        let (config, _) = config_with_price("1,2");
        assert_eq!(config.run.price, Some(llm::Price::dollars(1.0, 2.0)));
        let (config, warnings) = config_with_price("cheap");
        assert_eq!(config.run.price, Some(llm::Price::dollars(0.15, 0.6)));
        assert_eq!(warnings[0].name, "MIMO_LLM_PRICE");
        let (config, warnings) = super::TaskConfig::from_lookup(|name| {
            (name == "MIMO_AGENT_MAX_COST").then(|| "free".to_owned())
        });
        assert_eq!(config.run.max_cost_micros, None);
        assert_eq!(warnings[0].name, "MIMO_AGENT_MAX_COST");
        assert_eq!(RunConfig::default().max_repeats, 8);
    }

    fn config_with_price(price: &str) -> (super::TaskConfig, Vec<super::ConfigWarning>) {
        config(&[("MIMO_LLM_MODEL", "gpt-4o-mini"), ("MIMO_LLM_PRICE", price)])
    }

    #[test]
    fn the_model_endpoint_is_read_and_its_key_never_shown() {
        let (config, _) = config(&[
            ("MIMO_LLM_PROVIDER", "Anthropic"),
            ("MIMO_LLM_MODEL", "claude-x"),
            ("MIMO_LLM_API_KEY", "sk-secret"),
            ("MIMO_LLM_TIMEOUT_MS", "2500"),
        ]);
        let llm = config.llm.unwrap();
        assert_eq!(llm.provider, Provider::Anthropic);
        assert_eq!(llm.base_url, "https://api.anthropic.com/v1");
        assert_eq!(llm.api_key.as_deref(), Some("sk-secret"));
        assert_eq!(llm.timeout_ms, 2500);
        assert!(!format!("{llm:?}").contains("sk-secret"));
    }

    #[test]
    fn an_unusable_model_endpoint_says_what_is_missing() {
        let compatible = config(&[
            ("MIMO_LLM_PROVIDER", "openai_compatible"),
            ("MIMO_LLM_MODEL", "m"),
        ])
        .0
        .llm
        .unwrap_err();
        assert!(compatible.message.contains("MIMO_LLM_BASE_URL is required"));
        let provider = config(&[("MIMO_LLM_PROVIDER", "gemini"), ("MIMO_LLM_MODEL", "m")])
            .0
            .llm
            .unwrap_err();
        assert!(provider.message.contains("unknown LLM provider `gemini`"));
        let timeout = config(&[("MIMO_LLM_MODEL", "m"), ("MIMO_LLM_TIMEOUT_MS", "soon")])
            .0
            .llm
            .unwrap_err();
        assert!(timeout.message.contains("MIMO_LLM_TIMEOUT_MS=\"soon\""));
        assert_eq!(timeout.kind, LlmErrorKind::BadRequest);
    }

    #[test]
    fn vision_is_on_for_models_that_take_images_unless_set() {
        let vision = |vars: &[(&str, &str)]| {
            let (config, warnings) = config(vars);
            (config.run.vision, warnings.len())
        };
        assert_eq!(vision(&[("MIMO_LLM_MODEL", "gpt-4o-mini")]), (true, 0));
        assert_eq!(vision(&[("MIMO_LLM_MODEL", "llama3.1")]), (false, 0));
        assert_eq!(vision(&[]), (false, 0), "no model, no vision");
        let set = |model: &str, value: &str| {
            vision(&[("MIMO_LLM_MODEL", model), ("MIMO_AGENT_VISION", value)])
        };
        assert_eq!(set("llama3.1", "on"), (true, 0));
        assert_eq!(set("claude-sonnet-4-5", " OFF "), (false, 0));
        assert_eq!(set("claude-sonnet-4-5", "auto"), (true, 0));
        assert_eq!(set("llama3.1", "auto"), (false, 0));
        let (config, warnings) =
            config(&[("MIMO_LLM_MODEL", "gpt-5"), ("MIMO_AGENT_VISION", "always")]);
        assert!(config.run.vision, "auto applies");
        assert_eq!(warnings[0].name, "MIMO_AGENT_VISION");
        assert!(
            warnings[0].message.contains("\"always\""),
            "{:?}",
            warnings[0]
        );
    }

    #[test]
    fn secrets_and_their_key_are_read_with_warnings_that_never_hold_a_value() {
        let (c, warnings) = config(&[]);
        assert!(c.secrets.is_empty() && c.secrets_key.is_none());
        assert!(warnings.is_empty());
        let (c, warnings) = config(&[
            (
                "MIMO_SECRETS",
                r#"{"pw": {"value": "pw-value-1", "domains": ["example.com"]}, "x y": {"value": "bad-value-2", "domains": ["a.test"]}}"#,
            ),
            ("MIMO_SECRETS_KEY", "0123456789abcdef0123"),
        ]);
        assert_eq!(c.secrets.len(), 1);
        assert_eq!(c.secrets[0].name, "pw");
        assert!(c.secrets_key.is_some());
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].name, "MIMO_SECRETS");
        assert!(!warnings[0].message.contains("value-"), "{:?}", warnings[0]);
        let (c, warnings) = config(&[("MIMO_SECRETS_KEY", "tiny-k3y")]);
        assert!(c.secrets_key.is_none());
        assert_eq!(warnings[0].name, "MIMO_SECRETS_KEY");
        assert!(!warnings[0].message.contains("tiny-k3y"));
        let (c, warnings) = config(&[("MIMO_SECRETS", "[1, 2]")]);
        assert!(c.secrets.is_empty());
        assert_eq!(warnings[0].name, "MIMO_SECRETS");
    }

    #[test]
    fn redaction_defaults_to_evidence_only_with_every_kind() {
        use mimo_protocol::PiiKind;
        let (c, _) = config(&[]);
        assert_eq!(c.run.redaction, mimo_protocol::RedactionPolicy::default());
        assert!(c.run.redaction.evidence && !c.run.redaction.model);
        assert_eq!(c.run.redaction.kinds.len(), 4);
        let (c, warnings) = config(&[
            ("MIMO_REDACT_EVIDENCE", "off"),
            ("MIMO_REDACT_MODEL", "on"),
            ("MIMO_REDACT_KINDS", "email, Card,ssn,email"),
        ]);
        assert!(!c.run.redaction.evidence && c.run.redaction.model);
        assert_eq!(c.run.redaction.kinds, vec![PiiKind::Email, PiiKind::Card]);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].message.contains("\"ssn\""), "{:?}", warnings[0]);
    }
}
