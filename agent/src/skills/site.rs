//! A skill's site (`sites:` in a `SKILL.md`): which pages a skill is for.
//!
//! The syntax is a small part of the web's URLPattern, and a site means here what it means
//! there: `[scheme://]host[:port][/path]`, where
//! - the scheme is `https://`, `http://` or `http{s}?://` (either); none is either too;
//! - the host is a name or an IP address (`[::1]` for IPv6), matched without regard to case.
//!   `*.example.com` is any host below example.com (`www.example.com`, `a.b.example.com`) but
//!   not example.com itself; `{*.}?example.com` is example.com and any host below it;
//! - the port is a number or `*` (any). None: the scheme's default port only (URLPattern's
//!   rule), so `127.0.0.1` is not `127.0.0.1:8080`; write `127.0.0.1:*` for every port. A page
//!   whose URL names no port is on its scheme's default (so `example.com:443` includes
//!   `https://example.com/`, which URLPattern leaves out when the scheme is not fixed);
//! - the path is matched with regard to case, `*` standing for any run of characters (`/` too).
//!   `\` makes the next character literal (`/c\+\+/*`). No path: every page of the host; `/`:
//!   the host's first page only. Percent-encoded and plain characters are the same character
//!   (`/a b` is `/a%20b`).
//!
//! A page's query and fragment are never compared: a site is for every query of its pages.
//! What else URLPattern has — named groups (`:id`), regular expressions (`(\d+)`), other `{…}`
//! groups and the `?`, `+` modifiers, queries and fragments, user names, other schemes, a `*`
//! anywhere else in a host — is refused naming what is not supported, so that no site means
//! something other than what its author read in it.

use url::Url;

/// A skill's site, read ([`Site::parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Site {
    /// `http` or `https`; `None`: either.
    scheme: Option<&'static str>,
    host: Host,
    port: Port,
    /// The path's literal pieces, percent-decoded, with a `*` between each two; `None`: every
    /// path.
    path: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Host {
    /// This host (as the URL parser writes it: lowercase, IDNA's ASCII form, IPv6 in `[…]`).
    Exact(String),
    /// A host below this domain (`*.`), and the domain itself too when `and_itself` (`{*.}?`).
    Below { domain: String, and_itself: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Port {
    /// The scheme's default (no port in the URL).
    Default,
    Any,
    Is(u16),
}

impl Site {
    /// Reads a site; the error says what is not supported, or what is wrong.
    pub(super) fn parse(site: &str) -> Result<Site, String> {
        let (scheme, rest) = match site.split_once("://") {
            Some((scheme, rest)) if !scheme.contains('/') => {
                let scheme = match scheme.to_ascii_lowercase().as_str() {
                    "https" => Some("https"),
                    "http" => Some("http"),
                    "http{s}?" => None,
                    _ => {
                        return Err(format!(
                            "the scheme {scheme:?} is not supported: a site is http or https \
                             (`https://`, `http://`, `http{{s}}?://` or none for both)"
                        ))
                    }
                };
                (scheme, rest)
            }
            _ => (None, site),
        };
        let (authority, path) = match rest.find('/') {
            Some(slash) => (&rest[..slash], Some(&rest[slash..])),
            None => (rest, None),
        };
        // `{*.}?` and `*.` first: they hold characters no host or port has.
        let (below, authority) = if let Some(rest) = authority.strip_prefix("{*.}?") {
            (Some(Below::AndItself), rest)
        } else if let Some(rest) = authority.strip_prefix("*.") {
            (Some(Below::Only), rest)
        } else {
            (None, authority)
        };
        let (host, port) = split_port(authority)?;
        Ok(Site {
            scheme,
            host: read_host(host, below)?,
            port: read_port(port)?,
            path: path.map(read_path).transpose()?,
        })
    }

    /// Whether the page at `url` is one of this site's.
    pub(super) fn matches(&self, url: &Url) -> bool {
        let scheme_ok = match self.scheme {
            Some(scheme) => url.scheme() == scheme,
            None => matches!(url.scheme(), "http" | "https"),
        };
        let host_ok = match (&self.host, url.host_str()) {
            (_, None) => false,
            (Host::Exact(host), Some(page)) => page == host,
            (Host::Below { domain, and_itself }, Some(page)) => {
                url.domain().is_some()
                    && (page
                        .strip_suffix(domain.as_str())
                        .and_then(|below| below.strip_suffix('.'))
                        .is_some_and(|below| !below.is_empty())
                        || (*and_itself && page == domain))
            }
        };
        let port_ok = match self.port {
            Port::Default => url.port().is_none(),
            Port::Any => true,
            Port::Is(port) => url.port_or_known_default() == Some(port),
        };
        scheme_ok
            && host_ok
            && port_ok
            && self
                .path
                .as_ref()
                .is_none_or(|pieces| wildcard_match(pieces, &decoded(url.path())))
    }
}

/// What URLPattern gives a meaning this syntax does not have, and what to write instead.
fn unsupported(c: char) -> Option<String> {
    let why = match c {
        ':' => "named groups (`:name`) are not supported: write `*` for any text (or `\\:` for a colon)",
        '(' | ')' => "regular expressions (`(…)`) are not supported: write `*` for any text",
        '{' | '}' => "`{…}` groups are not supported (only `{*.}?` before a host and `{s}?` after http)",
        '+' => "the modifier `+` is not supported (write `\\+` for a plus sign)",
        '?' => "a query (`?…`) is not supported: a site is for every query of its pages",
        '#' => "a fragment (`#…`) is not supported: a site is for every fragment of its pages",
        '@' => "a user name (`user@`) is not supported",
        '*' => "`*` is not supported there: a host may begin with `*.` or `{*.}?`, a port may be `*`",
        '\\' => "`\\` is only supported in a path",
        _ => return None,
    };
    Some(why.to_owned())
}

/// The host and the port (after `:`) of an authority.
fn split_port(authority: &str) -> Result<(&str, Option<&str>), String> {
    if let Some(c) = authority.chars().find(|c| "?#@{}()+".contains(*c)) {
        return Err(unsupported(c).unwrap_or_default());
    }
    // An IPv6 address is in brackets, its colons inside them.
    let after_host = match authority.strip_prefix('[') {
        Some(rest) => rest.find(']').map_or(authority.len(), |end| end + 2),
        None => authority.find(':').unwrap_or(authority.len()),
    };
    let (host, rest) = authority.split_at(after_host);
    match rest.strip_prefix(':') {
        Some(port) => Ok((host, Some(port))),
        None if rest.is_empty() => Ok((host, None)),
        None => Err(format!(
            "{rest:?} after the host is neither a port nor a path"
        )),
    }
}

/// Which hosts below a domain a site is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Below {
    /// `*.`: those below it.
    Only,
    /// `{*.}?`: those below it and itself.
    AndItself,
}

fn read_host(name: &str, below: Option<Below>) -> Result<Host, String> {
    // (An IPv6 address's colons are its own.)
    let special = |c| {
        (c != ':' || !name.starts_with('['))
            .then(|| unsupported(c))
            .flatten()
    };
    if let Some(why) = name.chars().find_map(special) {
        return Err(why);
    }
    if name.is_empty() {
        return Err("it names no host".into());
    }
    let parsed = url::Host::parse(name).map_err(|e| format!("{name:?} is not a host: {e}"))?;
    match (below, parsed) {
        (None, parsed) => Ok(Host::Exact(parsed.to_string())),
        (Some(below), url::Host::Domain(domain)) => Ok(Host::Below {
            domain,
            and_itself: below == Below::AndItself,
        }),
        (Some(_), _) => Err(format!(
            "{name:?} is an IP address: it has no hosts below it"
        )),
    }
}

fn read_port(port: Option<&str>) -> Result<Port, String> {
    let Some(port) = port else {
        return Ok(Port::Default);
    };
    if port == "*" {
        return Ok(Port::Any);
    }
    if port.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '$') {
        return Err(unsupported(':').unwrap_or_default());
    }
    if let Some(why) = port.chars().filter(|c| *c != ':').find_map(unsupported) {
        return Err(why);
    }
    match port.parse::<u16>() {
        Ok(number) if port.bytes().all(|b| b.is_ascii_digit()) => Ok(Port::Is(number)),
        _ => Err(format!(
            "the port {port:?} is not a number up to 65535 or `*`"
        )),
    }
}

/// A path's literal pieces (percent-decoded) around its `*`s.
fn read_path(path: &str) -> Result<Vec<String>, String> {
    let mut pieces = vec![String::new()];
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        let piece = pieces.last_mut().expect("one piece at least");
        match c {
            '\\' => piece.push(chars.next().ok_or("a `\\` at the end escapes nothing")?),
            '*' => pieces.push(String::new()),
            c => match unsupported(c) {
                Some(why) => return Err(why),
                None => piece.push(c),
            },
        }
    }
    Ok(pieces.iter().map(|p| decoded(p)).collect())
}

fn decoded(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// Whether `text` is `pieces` with any text (none too) between each two.
fn wildcard_match(pieces: &[String], text: &str) -> bool {
    let [first, middle @ .., last] = pieces else {
        return pieces.first().is_some_and(|only| only == text);
    };
    let Some(mut rest) = text.strip_prefix(first.as_str()) else {
        return false;
    };
    for piece in middle {
        match rest.find(piece.as_str()) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.ends_with(last.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(site: &str, url: &str) -> bool {
        let site = Site::parse(site).unwrap_or_else(|e| panic!("{site}: {e}"));
        site.matches(&Url::parse(url).unwrap())
    }

    fn refused(site: &str) -> String {
        Site::parse(site).expect_err(site)
    }

    #[test]
    fn a_scheme_is_http_https_or_either() {
        for (site, http, https) in [
            ("https://a.test", false, true),
            ("HTTP://a.test", true, false),
            ("http{s}?://a.test", true, true),
            ("a.test", true, true),
        ] {
            assert_eq!(matches(site, "http://a.test/x"), http, "{site}");
            assert_eq!(matches(site, "https://a.test/x"), https, "{site}");
            assert!(!matches(site, "ftp://a.test/x"), "{site}");
        }
        for scheme in [
            "ftp://a.test",
            "*://a.test",
            "file:///x",
            "http{s}://a.test",
        ] {
            assert!(
                refused(scheme).contains("is not supported: a site is http or https"),
                "{scheme}"
            );
        }
    }

    #[test]
    fn a_host_is_matched_without_case_and_a_star_means_the_hosts_below() {
        assert!(matches("Portal.ACME.test", "https://portal.acme.test/"));
        assert!(matches("portal.acme.test", "https://PORTAL.acme.test/"));
        assert!(!matches("portal.acme.test", "https://acme.test/"));
        assert!(!matches("portal.acme.test", "https://x.portal.acme.test/"));
        assert!(!matches("acme.test", "https://notacme.test/"));
        assert!(matches("*.acme.test", "https://www.acme.test/"));
        assert!(matches("*.acme.test", "https://a.b.acme.test/"));
        assert!(!matches("*.acme.test", "https://acme.test/"));
        assert!(!matches("*.acme.test", "https://evilacme.test/"));
        assert!(!matches("*.acme.test", "https://acme.test.evil/"));
        assert!(matches("{*.}?acme.test", "https://acme.test/"));
        assert!(matches(
            "https://{*.}?acme.test/*",
            "https://www.acme.test/a"
        ));
        assert!(!matches("{*.}?acme.test", "https://evilacme.test/"));
        // Names as the URL parser writes them: IDNA's ASCII form, IPv4 and IPv6 addresses.
        assert!(matches("café.test", "https://xn--caf-dma.test/"));
        assert!(matches("xn--caf-dma.test", "https://CAFÉ.test/"));
        assert!(matches("*.café.test", "https://www.café.test/"));
        assert!(matches("127.0.0.1", "http://127.0.0.1/"));
        assert!(matches("http://[::1]:8080/*", "http://[0:0::1]:8080/a"));
        assert!(!matches("127.0.0.1", "http://127.0.0.2/"));
        assert!(refused("*.127.0.0.1").contains("is an IP address"));
        for (site, says) in [
            ("https://*/x", "`*` is not supported there"),
            ("portal.*.test", "`*` is not supported there"),
            ("*acme.test", "`*` is not supported there"),
            ("{www.}?acme.test", "`{…}` groups are not supported"),
            ("https://(www|app).acme.test", "regular expressions (`(…)`)"),
            ("https://user@acme.test/", "a user name"),
            ("https://acme.test?x=1", "a query"),
            ("https://acme.test#top", "a fragment"),
            ("https://", "it names no host"),
            ("/expenses/*", "it names no host"),
            ("a b.test", "is not a host"),
            ("https://[::1/", "is not a host"),
        ] {
            let why = refused(site);
            assert!(why.contains(says), "{site}: {why}");
        }
    }

    #[test]
    fn a_port_is_a_number_or_any_and_none_is_the_default() {
        assert!(matches(
            "http://127.0.0.1:8080/*",
            "http://127.0.0.1:8080/a"
        ));
        assert!(!matches(
            "http://127.0.0.1:8080/*",
            "http://127.0.0.1:9090/a"
        ));
        assert!(!matches("http://127.0.0.1:8080/*", "http://127.0.0.1/a"));
        assert!(matches("127.0.0.1:*", "http://127.0.0.1:41234/a"));
        assert!(matches("127.0.0.1:*", "https://127.0.0.1/a"));
        // No port: the scheme's default only.
        assert!(matches("a.test", "https://a.test:443/"));
        assert!(matches("a.test", "http://a.test/"));
        assert!(!matches("a.test", "https://a.test:8443/"));
        assert!(!matches("a.test", "http://a.test:443/"));
        // A port that is a scheme's default is that scheme's page without one.
        assert!(matches("https://a.test:443", "https://a.test/"));
        assert!(matches("a.test:443", "https://a.test/"));
        assert!(matches("a.test:443", "http://a.test:443/"));
        assert!(!matches("a.test:443", "http://a.test/"));
        for (site, says) in [
            ("a.test:", "the port \"\" is not a number"),
            ("a.test:65536", "is not a number up to 65535"),
            ("a.test:+80", "the modifier `+`"),
            ("a.test:8x", "the port \"8x\" is not a number"),
            ("a.test:port", "named groups (`:name`)"),
            ("a.test:(\\d+)", "regular expressions"),
            ("a.test:80:81", "the port \"80:81\""),
        ] {
            let why = refused(site);
            assert!(why.contains(says), "{site}: {why}");
        }
    }

    #[test]
    fn a_path_is_matched_with_case_and_a_star_means_any_text() {
        let site = "https://a.test/expenses/*";
        assert!(matches(site, "https://a.test/expenses/"));
        assert!(matches(site, "https://a.test/expenses/new/2?x=1#top"));
        assert!(!matches(site, "https://a.test/expenses"));
        assert!(!matches(site, "https://a.test/Expenses/new"));
        assert!(!matches(site, "https://a.test/reports/expenses/new"));
        // No star: that page only, with any query and fragment; a trailing slash is a
        // different page.
        assert!(matches("a.test/shop", "https://a.test/shop?page=2#x"));
        assert!(!matches("a.test/shop", "https://a.test/shop/"));
        assert!(!matches("a.test/shop/", "https://a.test/shop"));
        // `/` is the first page only; no path, every page.
        assert!(matches("a.test/", "https://a.test"));
        assert!(!matches("a.test/", "https://a.test/x"));
        assert!(matches("a.test", "https://a.test/x/y"));
        // Stars anywhere, each any text (none too).
        assert!(matches(
            "a.test/*/claim*.html",
            "https://a.test/x/y/claim.html"
        ));
        assert!(matches(
            "a.test/*/claim*.html",
            "https://a.test//claim-2.html"
        ));
        assert!(!matches(
            "a.test/*/claim*.html",
            "https://a.test/claim.html"
        ));
        assert!(!matches(
            "a.test/*/claim*.html",
            "https://a.test/x/claim.htm"
        ));
        assert!(matches("a.test/a*a", "https://a.test/aa"));
        assert!(!matches("a.test/a*a", "https://a.test/a"));
        assert!(matches("a.test/*", "https://a.test/"));
        // Escapes and percent-encoding.
        assert!(matches("a.test/c\\+\\+/\\*", "https://a.test/c++/*"));
        assert!(!matches("a.test/c\\+\\+/\\*", "https://a.test/c++/x"));
        assert!(matches("a.test/wiki/A\\:B", "https://a.test/wiki/A:B"));
        assert!(matches("a.test/a b/é", "https://a.test/a%20b/%C3%A9"));
        assert!(matches("a.test/a%20b/*", "https://a.test/a b/x"));
        for (site, says) in [
            ("a.test/items/:id", "named groups (`:name`)"),
            ("a.test/items/(\\d+)", "regular expressions (`(…)`)"),
            ("https://example.com/(unclosed", "regular expressions"),
            ("a.test/{items}?", "`{…}` groups"),
            ("a.test/c++", "the modifier `+`"),
            ("a.test/search?q=*", "a query"),
            ("a.test/*?", "a query"),
            ("a.test/a#b", "a fragment"),
            ("a.test/a\\", "escapes nothing"),
        ] {
            let why = refused(site);
            assert!(why.contains(says), "{site}: {why}");
        }
    }

    #[test]
    fn only_http_pages_with_a_host_match() {
        assert!(!matches("a.test", "file:///a.test/x"));
        assert!(!matches("a.test/*", "data:text/plain,a.test"));
        assert!(!matches("{*.}?a.test", "http://1.2.3.4/"));
    }
}
