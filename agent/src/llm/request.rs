use super::config::{LlmConfig, Provider};
use super::http::HttpRequest;
use super::message::{ChatMessage, ToolSpec};
use super::{anthropic, openai};

/// The streaming chat request for one model turn.
pub fn build_request(
    config: &LlmConfig,
    messages: &[ChatMessage],
    tools: &[ToolSpec],
) -> HttpRequest {
    match config.provider {
        Provider::OpenAi | Provider::OpenAiCompatible => {
            openai::build_request(config, messages, tools)
        }
        Provider::Anthropic => anthropic::build_request(config, messages, tools),
    }
}
