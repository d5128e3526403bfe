//! Images in a user message — the screenshot of the page the model acts on: which models take
//! them, what they may be, and what they cost in tokens.

use std::fmt;

use base64::Engine;
use serde::{Deserialize, Serialize};

/// The largest image sent to a model, in bytes before base64. Screenshots are captured as
/// JPEG at most 1280 px wide, a few hundred KB; one far over that is a capture gone wrong, and
/// would cost more than it shows.
pub const MAX_IMAGE_BYTES: u64 = 1_500_000;

/// The formats both OpenAI and Anthropic take.
const MEDIA_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/webp", "image/gif"];

/// An image as both providers take it inline: its media type and its bytes in base64.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    pub media_type: String,
    pub data: String,
}

impl Image {
    /// Whether an image of this type and size may be sent; `Err` says why not. Checked before
    /// the bytes are read, so an oversized one is never loaded.
    pub fn check(media_type: &str, size: u64) -> Result<(), String> {
        if !MEDIA_TYPES.contains(&media_type) {
            return Err(format!(
                "a {media_type} image cannot be sent to the model (it takes JPEG, PNG, WebP or GIF)"
            ));
        }
        if size > MAX_IMAGE_BYTES {
            return Err(format!(
                "the image is {size} bytes, over the {MAX_IMAGE_BYTES} bytes sent to the model"
            ));
        }
        Ok(())
    }

    pub fn from_bytes(media_type: &str, bytes: &[u8]) -> Result<Self, String> {
        Self::check(media_type, bytes.len() as u64)?;
        Ok(Image {
            media_type: media_type.to_owned(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        })
    }

    /// The `data:` URL OpenAI's `image_url` takes.
    pub(crate) fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}

impl fmt::Debug for Image {
    /// Without the bytes, which would flood any log a message is written to.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Image")
            .field("media_type", &self.media_type)
            .field("base64_len", &self.data.len())
            .finish()
    }
}

/// Names of models known to take images, as prefixes of the model name (after any
/// `vendor/` routing prefix, case-insensitive): OpenAI's GPT-4o, 4.1, 4.5, 5 and o-series,
/// Anthropic's Claude 3 and later, Google's Gemini and Gemma 3, and the usual open vision
/// models. `MIMO_AGENT_VISION=on` covers any other.
const IMAGE_MODELS: [&str; 20] = [
    "gpt-4o",
    "chatgpt-4o",
    "gpt-4.1",
    "gpt-4.5",
    "gpt-4-turbo",
    "gpt-5",
    "o1",
    "o3",
    "o4",
    "claude-3",
    "claude-sonnet",
    "claude-opus",
    "claude-haiku",
    "gemini",
    "gemma-3",
    "gemma3",
    "llava",
    "pixtral",
    "llama-4",
    "llama4",
];

/// Models matching [`IMAGE_MODELS`] that take text only.
const TEXT_ONLY_MODELS: [&str; 3] = ["o1-mini", "o1-preview", "o3-mini"];

/// Whether `model` is known to take images: a name of [`IMAGE_MODELS`] (and none of
/// [`TEXT_ONLY_MODELS`]), or one that says so (`…vision…`, `…-vl…`, as in
/// `llama3.2-vision` and `qwen2.5-vl`).
pub fn model_accepts_images(model: &str) -> bool {
    let model = model.trim().to_ascii_lowercase();
    let name = model.rsplit('/').next().unwrap_or_default();
    let listed = IMAGE_MODELS.iter().any(|p| name.starts_with(p))
        && !TEXT_ONLY_MODELS.iter().any(|p| name.starts_with(p));
    listed || name.contains("vision") || name.contains("-vl")
}

/// Size assumed for an image whose size is unknown: the widest screenshot sent.
const UNKNOWN_SIZE: (u32, u32) = (1280, 800);

/// What an image of `width` × `height` pixels costs in input tokens, by the larger of the two
/// providers' published rules, so that a prompt that fits here fits either: OpenAI (detail
/// high) fits it in 2048×2048, brings the short side down to 768 and counts 170 a 512-px tile
/// plus 85; Anthropic brings the long side down to 1568 and counts width × height / 750. About
/// 1,230 tokens for 1280×720.
pub fn image_tokens(width: u32, height: u32) -> usize {
    let (width, height) = if width == 0 || height == 0 {
        UNKNOWN_SIZE
    } else {
        (width, height)
    };
    let (w, h) = (f64::from(width), f64::from(height));
    let fit = (2048.0 / w.max(h)).min(1.0);
    let (w_fit, h_fit) = (w * fit, h * fit);
    let short = (768.0 / w_fit.min(h_fit)).min(1.0);
    let tiles = (w_fit * short / 512.0).ceil() * (h_fit * short / 512.0).ceil();
    let openai = 85.0 + 170.0 * tiles;
    let fit = (1568.0 / w.max(h)).min(1.0);
    let anthropic = (w * fit) * (h * fit) / 750.0;
    openai.max(anthropic).ceil() as usize
}
