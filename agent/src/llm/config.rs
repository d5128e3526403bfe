use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Which wire protocol a model endpoint speaks.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::Display,
)]
pub enum Provider {
    #[serde(rename = "openai")]
    #[strum(serialize = "openai")]
    OpenAi,
    #[serde(rename = "anthropic")]
    #[strum(serialize = "anthropic")]
    Anthropic,
    /// Any server implementing OpenAI's Chat Completions API (vLLM, Ollama, llama.cpp, …).
    #[serde(rename = "openai_compatible")]
    #[strum(serialize = "openai_compatible")]
    OpenAiCompatible,
}

impl Provider {
    /// The name used in configuration and serde.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// API root including the version segment; compatible servers have no canonical host.
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            Self::OpenAi => Some("https://api.openai.com/v1"),
            Self::Anthropic => Some("https://api.anthropic.com/v1"),
            Self::OpenAiCompatible => None,
        }
    }
}

impl FromStr for Provider {
    type Err = UnknownProvider;

    /// Case-insensitive, since the value usually comes from hand-written environment config.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai" => Ok(Self::OpenAi),
            "anthropic" => Ok(Self::Anthropic),
            "openai_compatible" => Ok(Self::OpenAiCompatible),
            _ => Err(UnknownProvider(s.to_owned())),
        }
    }
}

/// Returned by [`Provider::from_str`] for a name that is not a known provider.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown LLM provider `{0}` (expected openai, anthropic or openai_compatible)")]
pub struct UnknownProvider(pub String);

/// Everything needed to talk to one model endpoint.
///
/// `Debug` redacts `api_key` so configs can be logged safely.
#[derive(Clone, PartialEq, Eq)]
pub struct LlmConfig {
    pub provider: Provider,
    /// API root including the version segment, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    /// Output token cap. `0` leaves the choice to OpenAI-style servers; Anthropic requires a
    /// positive value.
    pub max_tokens: u32,
    /// Budget for the whole exchange, streamed body included; enforced by the caller.
    pub timeout_ms: u64,
}

impl LlmConfig {
    pub const DEFAULT_MAX_TOKENS: u32 = 4096;
    pub const DEFAULT_TIMEOUT_MS: u64 = 90_000;

    /// A keyless config using the provider's default base URL, which is empty for
    /// [`Provider::OpenAiCompatible`]: set one with [`LlmConfig::with_base_url`].
    pub fn new(provider: Provider, model: impl Into<String>) -> Self {
        Self {
            provider,
            base_url: provider.default_base_url().unwrap_or_default().to_owned(),
            api_key: None,
            model: model.into(),
            max_tokens: Self::DEFAULT_MAX_TOKENS,
            timeout_ms: Self::DEFAULT_TIMEOUT_MS,
        }
    }

    #[must_use]
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    #[must_use]
    pub fn with_api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }
}

impl fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmConfig")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("timeout_ms", &self.timeout_ms)
            .finish()
    }
}
