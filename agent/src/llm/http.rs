//! The HTTP request a provider's API takes, without sending it.

use std::fmt;

/// A request to send with `POST`.
///
/// `Debug` redacts credential headers.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    pub url: String,
    /// Lower-case names.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(name, value)| match name.as_str() {
                "authorization" | "x-api-key" => (name.as_str(), "<redacted>"),
                _ => (name.as_str(), value.as_str()),
            })
            .collect();
        f.debug_struct("HttpRequest")
            .field("url", &self.url)
            .field("headers", &headers)
            .field("body", &self.body)
            .finish()
    }
}

pub(crate) fn endpoint(base_url: &str, path: &str) -> String {
    format!("{}/{path}", base_url.trim_end_matches('/'))
}

pub(crate) fn header(name: &str, value: impl Into<String>) -> (String, String) {
    (name.to_owned(), value.into())
}
