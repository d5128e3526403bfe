use super::anthropic::AnthropicStream;
use super::config::Provider;
use super::event::{LlmEvent, ProviderStream};
use super::openai::OpenAiStream;
use super::sse::SseDecoder;

/// Decodes a streamed response body of one provider into [`LlmEvent`]s.
///
/// Feed body chunks to [`push`](Self::push) as they arrive, split anywhere, then call
/// [`finish`](Self::finish) at the end of the body. Across both, exactly one terminal event
/// ([`LlmEvent::is_terminal`]) is produced, last; input after it is ignored.
#[derive(Debug)]
pub struct StreamParser {
    sse: SseDecoder,
    protocol: Box<dyn ProviderStream>,
    finished: bool,
}

impl StreamParser {
    pub fn new(provider: Provider) -> Self {
        let protocol: Box<dyn ProviderStream> = match provider {
            Provider::OpenAi | Provider::OpenAiCompatible => Box::<OpenAiStream>::default(),
            Provider::Anthropic => Box::<AnthropicStream>::default(),
        };
        Self {
            sse: SseDecoder::new(),
            protocol,
            finished: false,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) -> Vec<LlmEvent> {
        let mut out = Vec::new();
        if self.finished {
            return out;
        }
        for event in self.sse.push(bytes) {
            self.protocol.on_event(&event, &mut out);
            if out.last().is_some_and(LlmEvent::is_terminal) {
                self.finished = true;
                break;
            }
        }
        out
    }

    /// Ends the body. If no terminal event was produced yet, yields the outstanding events and
    /// either `Done` or a retryable error for a stream cut short.
    pub fn finish(&mut self) -> Vec<LlmEvent> {
        let mut out = Vec::new();
        if !std::mem::replace(&mut self.finished, true) {
            self.protocol.finish(&mut out);
        }
        out
    }
}
