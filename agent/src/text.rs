//! Text shortened for the model to read, saying how much was left out: a step's thought, a
//! tool's result, a schema's errors, a skill's body.

/// Cuts `text` to at most `limit` characters, saying so.
pub(crate) fn cut(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_owned();
    }
    let kept: String = text.chars().take(limit).collect();
    format!(
        "{kept}\n… (cut: {} more characters)",
        text.chars().count() - limit
    )
}
