//! Information flow (DESIGN.md, "Trust model"): what a run has read that the person did not put on
//! the page it acts on (*private* data: another of their tabs, a file of their computer), which
//! sites the person named, and whether a step can carry data somewhere they did not ask for (an
//! *outbound* step). A page's text cannot change any of it: the rules look at where data came
//! from and where a step sends it, never at the page's wording.
//!
//! Pure: the run hands in what it has seen ([`Seen`]), the consent gate asks [`outbound`].

use std::collections::BTreeSet;
use std::sync::LazyLock;

use base64::Engine;
use mimo_protocol::{ActionCommand, ElementFacts};
use regex_lite::Regex;

use crate::unicode;

/// Where private data came from, as the person would say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivateSource {
    /// "your tab \"Inbox\" (mail.test)", "the file notes.txt on your computer".
    pub what: String,
    /// Its distinctive pieces (e-mail addresses, numbers, codes), lower-cased: a URL or text
    /// holding one of them carries this data.
    pub tokens: BTreeSet<String>,
}

impl PrivateSource {
    pub fn new(what: String, text: &str) -> Self {
        PrivateSource {
            what,
            tokens: tokens(text),
        }
    }
}

/// What a run has seen, for judging its next step.
#[derive(Debug, Clone, Default)]
pub struct Seen<'a> {
    /// Everything the person wrote in the task (their requests and messages during the run).
    pub person: Vec<&'a str>,
    /// The page the step would act on, if any.
    pub page_url: Option<&'a str>,
    /// What that page shows (its readable text).
    pub page_text: Option<&'a str>,
    /// Private data that entered the run, in order.
    pub private: Vec<PrivateSource>,
    /// The facts of the field the run typed into last, and whether that text held data
    /// ([`carries_personal`] or a private token): Enter or Space there sends its form.
    pub last_typed: Option<(&'a ElementFacts, bool)>,
    /// Facts of the element a step targets, by the step's click id.
    pub facts: Option<&'a std::collections::BTreeMap<u32, ElementFacts>>,
}

/// Why `command` is an outbound step that needs the person, if it is one.
pub fn outbound(command: &ActionCommand, seen: &Seen<'_>) -> Option<String> {
    let after_private = seen.private.first().map(|p| p.what.as_str());
    match command {
        ActionCommand::BrowserNavigate { url } | ActionCommand::BrowserOpenTab { url } => {
            let host = host(url)?;
            let named = seen.named(&host);
            let foreign = !named && !seen.same_site(&host);
            if let Some(source) = seen.carried_private(&after_authority(url)) {
                return Some(format!("it sends data read from {source} to {host}"));
            }
            if foreign {
                if let Some(kind) = url_carries_personal(url) {
                    return Some(format!(
                        "it sends {kind} to {host}, a site you did not name"
                    ));
                }
                if let Some(piece) = seen.carried_shown_piece(url) {
                    return Some(format!(
                        "it sends {piece:?}, part of personal data the page shows, to {host}, a \
                         site you did not name"
                    ));
                }
                if let Some(source) = after_private {
                    return Some(format!(
                        "it opens {host}, a site you did not name, after reading {source}"
                    ));
                }
            }
            None
        }
        ActionCommand::BrowserType {
            target,
            text,
            submit,
            ..
        } => {
            let facts = target.click_id.and_then(|i| seen.facts?.get(&i))?;
            let to = seen.foreign_form(facts)?;
            let sends = if submit == &Some(true) {
                "sends"
            } else {
                "goes into a form that sends it"
            };
            if let Some(source) = seen.carried_private(text) {
                return Some(format!(
                    "the text typed {sends} data read from {source} to {to}"
                ));
            }
            if let Some(kind) = carries_personal(text) {
                return Some(format!("the text typed holds {kind} and {sends} to {to}"));
            }
            after_private.map(|source| {
                format!("it types into a form that sends to {to}, after reading {source}")
            })
        }
        // What a point reaches is only named when the extension acts, so a click or a drag
        // there is rated as the riskiest element it could hit (a submit to another site): asked
        // for after private data entered the run, or on a page of a site the person did not
        // name. On the person's own site it runs, and the extension refuses it there if the
        // point holds anything outbound or irreversible ([`expect_at_act`]).
        ActionCommand::BrowserClickAt { .. } | ActionCommand::BrowserDrag { .. } => {
            if let Some(source) = after_private {
                return Some(format!(
                    "it clicks at a point of the page, which may send a form, after reading \
                     {source}"
                ));
            }
            let page = seen.page_url.and_then(host)?;
            (!seen.named(&page)).then(|| {
                format!(
                    "it clicks at a point of {page}, a site you did not name, where what it \
                     clicks cannot be named before it acts"
                )
            })
        }
        ActionCommand::BrowserPressKey { key, .. } => {
            let (facts, held_data) = seen.last_typed?;
            let to = seen.foreign_form(facts)?;
            let submits = matches!(key.rsplit('+').next(), Some("Enter" | " " | "Space"));
            (submits && (held_data || after_private.is_some())).then(|| {
                format!("{key} sends the form typed into to {to}, a site you did not name")
            })
        }
        ActionCommand::BrowserUploadFile { name, target, .. } => {
            // Into a form that posts elsewhere (the input's own form, as observed; the
            // extension checks it again when it acts), or anywhere on a site not named.
            let facts = target.click_id.and_then(|i| seen.facts?.get(&i));
            if let Some(to) = facts.and_then(|f| seen.foreign_form(f)) {
                return Some(format!(
                    "it puts your file {name:?} into a form that sends it to {to}, a site you \
                     did not name"
                ));
            }
            let page = seen.page_url.and_then(host)?;
            (!seen.named(&page)).then(|| {
                format!("it uploads your file {name:?} to {page}, a site you did not name")
            })
        }
        ActionCommand::BridgeInvoke { tool, args, .. } => {
            use mimo_protocol::bridge::BridgeTool;
            if matches!(tool, BridgeTool::Read) {
                return None;
            }
            if let Some(from_browser) = seen
                .private
                .iter()
                .find(|p| !p.what.starts_with("the file "))
            {
                return Some(format!(
                    "it changes your computer after reading {}",
                    from_browser.what
                ));
            }
            bridge_carries(tool, &strings_of(args), seen)
        }
        _ => None,
    }
}

/// Why a bridge write, edit or command (its arguments' text `text`) carries data somewhere: a
/// command that carries private data (a file's included: a command can send it anywhere) or
/// personal data, or reaches a host the person did not name; a write or edit that puts personal
/// data a page showed onto their computer. A file's own data written to another file stays on
/// the computer and is not asked for.
fn bridge_carries(
    tool: &mimo_protocol::bridge::BridgeTool,
    text: &str,
    seen: &Seen<'_>,
) -> Option<String> {
    use mimo_protocol::bridge::BridgeTool;
    let shown = seen.page_text.is_some();
    match tool {
        BridgeTool::Bash => {
            if let Some(source) = seen.carried_private(text) {
                return Some(format!("the command carries data read from {source}"));
            }
            if let Some(kind) = carries_personal(text) {
                return Some(format!("the command carries {kind}"));
            }
            if let Some(piece) = seen.carried_shown_piece(text) {
                return Some(format!(
                    "the command carries {piece:?}, part of personal data the page shows"
                ));
            }
            let reach = network_reach(text)?;
            let unnamed = match &reach {
                Reach::Hosts(hosts) => hosts.iter().find(|h| !seen.named(h))?.clone(),
                Reach::Program(program) => format!("wherever {program} is told"),
            };
            Some(format!(
                "the command reaches {unnamed}, a site you did not name, and can send your \
                 files there"
            ))
        }
        BridgeTool::Write | BridgeTool::Edit if shown => {
            if let Some(kind) = carries_personal(text) {
                return Some(format!("it writes {kind} a page showed onto your computer"));
            }
            seen.carried_shown_piece(text).map(|piece| {
                format!(
                    "it writes {piece:?}, part of personal data a page showed, onto your computer"
                )
            })
        }
        _ => None,
    }
}

/// Every string in a bridge invocation's arguments, one per line (a command, a path, a file's
/// new content): what it could carry.
fn strings_of(args: &serde_json::Value) -> String {
    match args {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => {
            items.iter().map(strings_of).collect::<Vec<_>>().join("\n")
        }
        serde_json::Value::Object(map) => {
            map.values().map(strings_of).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// Where a shell command can send things.
enum Reach {
    /// The hosts it names (in URLs, or as arguments of a network program).
    Hosts(Vec<String>),
    /// A network program whose destination cannot be read from the command (a variable, a
    /// file of addresses).
    Program(String),
}

/// Programs whose purpose is reaching other machines.
const NETWORK_PROGRAMS: &[&str] = &[
    "curl", "wget", "nc", "ncat", "netcat", "socat", "ssh", "scp", "sftp", "rsync", "ftp",
    "telnet", "http", "https", "xh", "aria2c", "lynx", "w3m",
];

/// Where the shell command `command` reaches, if anywhere: the hosts of its URLs (whatever
/// program or language fetches them) and, when it runs a network program, every word of it
/// that reads as a host name (`user@host:path` included).
fn network_reach(command: &str) -> Option<Reach> {
    let mut hosts: Vec<String> = URL_IN_TEXT
        .find_iter(command)
        .filter_map(|m| host(m.as_str()))
        .collect();
    let program = words(command)
        .map(str::to_ascii_lowercase)
        .find(|w| NETWORK_PROGRAMS.contains(&w.as_str()));
    if let Some(program) = program {
        for word in command.split(|c: char| c.is_whitespace() || "'\"=;|&()<>".contains(c)) {
            let bare = word.rsplit('@').next().unwrap_or(word);
            let bare = bare.split([':', '/']).next().unwrap_or(bare);
            if HOST_NAME.is_match(bare) {
                hosts.extend(host(&format!("http://{bare}/")));
            }
        }
        if hosts.is_empty() {
            return Some(Reach::Program(program));
        }
    }
    (!hosts.is_empty()).then_some(Reach::Hosts(hosts))
}

/// What a step whose element is only known when it acts is rated on, for the extension to check
/// then (`TARGET_CHANGED` otherwise): at a point (a click, a drag), nothing outbound or
/// irreversible; for a key, the field the run typed into last (nothing outbound when none).
/// Set on every step the person did not confirm; a confirmed one was rated as the riskiest
/// target it could reach and carries none.
pub fn expect_at_act(command: &mut ActionCommand, seen: &Seen<'_>) {
    match command {
        ActionCommand::BrowserClickAt { expect, .. }
        | ActionCommand::BrowserDrag { expect, .. } => {
            *expect = Some(Box::default());
        }
        ActionCommand::BrowserPressKey { expect, .. } => {
            let typed = seen.last_typed.map(|(facts, _)| facts.clone());
            *expect = Some(Box::new(typed.unwrap_or_default()));
        }
        _ => {}
    }
}

impl Seen<'_> {
    /// Whether the page the step acts on is on a site the person named.
    pub fn on_named_site(&self) -> bool {
        self.page_url.and_then(host).is_some_and(|h| self.named(&h))
    }

    /// Whether the person named `host` (or its site) in what they wrote.
    fn named(&self, host: &str) -> bool {
        let site = site_of(host);
        let label = site.split('.').next().unwrap_or(&site);
        self.person.iter().any(|text| {
            let text = text.to_lowercase();
            text.contains(host)
                || text.contains(&site)
                || (label.len() >= 3 && words(&text).any(|w| w == label))
        })
    }

    /// Where the form of a field sends what is typed into it, when that is a site the person
    /// did not name and not the page's own.
    fn foreign_form(&self, facts: &ElementFacts) -> Option<String> {
        let form = facts.form.as_ref().filter(|f| f.cross_origin)?;
        let to = host(&form.action)?;
        (!self.named(&to) && !self.same_site(&to)).then_some(to)
    }

    /// Whether text the run typed carries data: personal data, or a piece of private data.
    pub fn holds_data(&self, text: &str) -> bool {
        carries_personal(text).is_some() || self.carried_private(text).is_some()
    }

    /// A piece of the personal data the page shows (an e-mail address's name before the `@`, a
    /// group of four or more digits of a phone or card number) that `url`, decoded every way it
    /// may be encoded, carries: the data split across a URL's parameters is still sent.
    fn carried_shown_piece(&self, url: &str) -> Option<String> {
        let shown = url_payload(self.page_text?);
        let payload = url_payload(url);
        let names = EMAIL.find_iter(&shown).filter_map(|m| {
            let name = m.as_str().split('@').next()?;
            (name.len() >= 4).then(|| name.to_owned())
        });
        let groups = LONG_NUMBER
            .find_iter(&shown)
            .filter(|m| carries_personal(m.as_str()).is_some())
            .flat_map(|m| {
                m.as_str()
                    .split(|c: char| !c.is_ascii_digit())
                    .filter(|g| g.len() >= 4)
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            });
        names
            .chain(groups)
            .find(|piece| payload.contains(piece.as_str()))
    }

    /// Whether `host` is on the site of the page the step acts on.
    fn same_site(&self, host: &str) -> bool {
        self.page_url
            .and_then(self::host)
            .is_some_and(|page| site_of(&page) == site_of(host))
    }

    /// The private source one of whose pieces `text` (a URL, decoded every way it may be
    /// encoded, or typed text) carries.
    fn carried_private(&self, text: &str) -> Option<&str> {
        let decoded = url_payload(text);
        self.private
            .iter()
            .find(|p| p.tokens.iter().any(|t| decoded.contains(t.as_str())))
            .map(|p| p.what.as_str())
    }
}

/// A URL's host, lower-cased, without a trailing dot.
pub fn host(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    let host = parsed
        .host_str()?
        .trim_end_matches('.')
        .to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

/// What a URL carries past its scheme, host and port (its path, query and fragment): the
/// address of a site is no data of the person's, though a tab read may show the same port.
fn after_authority(url: &str) -> String {
    match url::Url::parse(url.trim()) {
        Ok(parsed) => {
            let mut rest = parsed.path().to_owned();
            for part in [parsed.query(), parsed.fragment()].into_iter().flatten() {
                rest.push('\n');
                rest.push_str(part);
            }
            rest
        }
        Err(_) => url.to_owned(),
    }
}

/// The site of a host: its last two labels (three under a two-letter second level such as
/// `co.uk`), an IP address whole.
fn site_of(host: &str) -> String {
    if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        return host.to_owned();
    }
    let labels: Vec<&str> = host.split('.').collect();
    let keep = match labels.as_slice() {
        [.., second, tld] if tld.len() == 2 && second.len() <= 3 && labels.len() > 2 => 3,
        _ => 2,
    };
    labels[labels.len().saturating_sub(keep)..].join(".")
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty())
}

/// Everything a URL (or text) could carry, lower-cased: as written, percent-decoded (`+` as a
/// space), and each of its parts decoded from base64 when that gives text.
fn url_payload(text: &str) -> String {
    let lower = text.to_lowercase();
    let unplussed = text.replace('+', " ");
    let decoded = percent_decode(&unplussed);
    let mut out = format!("{lower}\n{}", decoded.to_lowercase());
    for part in decoded.split(|c: char| "/?&=#;:, ".contains(c)) {
        if part.len() < 8 {
            continue;
        }
        let engines = [
            &base64::engine::general_purpose::STANDARD,
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ];
        for engine in engines {
            if let Some(text) = engine
                .decode(part.trim_end_matches('='))
                .or_else(|_| engine.decode(part))
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
            {
                out.push('\n');
                out.push_str(&text.to_lowercase());
                break;
            }
        }
    }
    out
}

/// `%XX` sequences decoded, twice (a value encoded twice is still the value).
fn percent_decode(text: &str) -> String {
    fn once(text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match (bytes[i], hex) {
                (b'%', Some(byte)) => {
                    out.push(byte);
                    i += 3;
                }
                (byte, _) => {
                    out.push(byte);
                    i += 1;
                }
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
    once(&once(text))
}

// regex-lite's `\d`, `\s` and `(?i)` are ASCII's; these say Unicode's where the `regex` crate's
// meant it ([`unicode`]): a number in any script's digits, any space ending a URL, and the two
// letters case folding makes ASCII ones (a host name written with them is an ASCII one to the
// URL parser). `\b` is ASCII's: a URL glued to a letter of another script is found too.
static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    let f = unicode::FOLDS_TO_ASCII;
    Regex::new(&format!(
        r"(?i)[a-z0-9._%+{f}-]+@[a-z0-9{f}-]+(\.[a-z0-9{f}-]+)+"
    ))
    .expect("regex")
});
static LONG_NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    let d = unicode::DIGIT;
    Regex::new(&format!(r"\+?\(?[{d}][{d} ().-]{{7,}}[{d}]")).expect("regex")
});
static URL_IN_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    let s = unicode::SPACE;
    Regex::new(&format!(r#"(?i)\b[a-z][a-z0-9+.-]*://[^{s}'"<>`]+"#)).expect("regex")
});
/// A host name as a command's argument: labels of letters, digits and hyphens, the last one
/// letters (so `out.txt` is one too: asking about a file name is the safe mistake), or an IPv4
/// address.
static HOST_NAME: LazyLock<Regex> = LazyLock::new(|| {
    let (f, d) = (unicode::FOLDS_TO_ASCII, unicode::DIGIT);
    Regex::new(&format!(
        r"(?i)^([a-z0-9{f}-]+\.)+[a-z{f}]{{2,}}\.?$|^[{d}]{{1,3}}(\.[{d}]{{1,3}}){{3}}$"
    ))
    .expect("regex")
});
static TOKEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9@._+-]{5,}").expect("regex"));

/// What personal data `text` (typed text, or a URL's query and fragment) holds, decoded as
/// [`url_payload`] does: an e-mail address, a card number (13 to 19 digits passing the Luhn
/// check) or a phone number (9 to 15 digits written as one: a leading `+`, or groups).
pub fn carries_personal(text: &str) -> Option<&'static str> {
    let payload = url_payload(text);
    if EMAIL.is_match(&payload) {
        return Some("an e-mail address");
    }
    for m in LONG_NUMBER.find_iter(&payload) {
        let written = m.as_str();
        let digits: Vec<u32> = written.chars().filter_map(|c| c.to_digit(10)).collect();
        if (13..=19).contains(&digits.len()) && luhn(&digits) {
            return Some("a card number");
        }
        let grouped = written.starts_with('+') || written.contains([' ', '-', '(', '.']);
        if (9..=15).contains(&digits.len()) && grouped {
            return Some("a phone number");
        }
    }
    None
}

/// What personal data a URL carries: an e-mail address anywhere in it, a phone or card number
/// in its query or fragment (a long number in a path is an id, not a person's).
fn url_carries_personal(url: &str) -> Option<&'static str> {
    if EMAIL.is_match(&url_payload(url)) {
        return Some("an e-mail address");
    }
    let parsed = url::Url::parse(url.trim()).ok()?;
    let rest = [parsed.query(), parsed.fragment()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("#");
    carries_personal(&rest)
}

fn luhn(digits: &[u32]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| match (i % 2 == 1, d * 2) {
            (true, doubled) if doubled > 9 => doubled - 9,
            (true, doubled) => doubled,
            (false, _) => d,
        })
        .sum();
    sum.is_multiple_of(10)
}

/// The distinctive pieces of private text: e-mail addresses, and runs of letters and digits
/// that hold a digit (codes, numbers, ids), lower-cased. Plain words are left out: a URL holding
/// "invoice" carries nothing of a tab that says it.
fn tokens(text: &str) -> BTreeSet<String> {
    const MOST: usize = 4000;
    let mut out = BTreeSet::new();
    for m in EMAIL.find_iter(text) {
        out.insert(m.as_str().to_lowercase());
    }
    for m in TOKEN.find_iter(text) {
        let token = m.as_str().trim_matches(|c: char| ".+-_".contains(c));
        if token.len() >= 5 && token.chars().any(|c| c.is_ascii_digit()) {
            out.insert(token.to_lowercase());
        }
        if out.len() >= MOST {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests;
