//! Keeping secrets out of `Debug` output, logs and error texts.
//!
//! - [`Secret`]: the one type of every secret value in the workspace (bearer tokens, OAuth
//!   tokens and client secrets, credentials, API keys); its `Debug` and `Display` never show it.
//! - [`redact_url`] / [`redact_url_str`]: a URL with its user name and password replaced and the
//!   values of its query replaced (the names stay), its fragment dropped.
//! - [`describe`]: a `reqwest::Error` with its causes, its URL redacted. Every crate of the
//!   workspace describes reqwest's failures with it; [`describe_error`] any other error with its
//!   causes (the transports' own HTTP client and body reading).
//! - [`looks_secret`]: whether a header, variable or flag name looks like it holds a secret.
//! - [`redact_args`]: command-line arguments with the values of secret-looking flags
//!   (`--token=...`, `--api-key ...`), URLs and remembered secrets masked.
//! - [`remember_secret`] and [`mask_secrets`]: a process-wide, bounded set of values known to be
//!   secret. Config interpolation remembers every value it took from the environment, so that a
//!   `--token=${TOKEN}` argument, once expanded, is still masked wherever the expanded text is
//!   shown.

use std::borrow::Cow;
use std::sync::{Mutex, OnceLock};

/// What replaces a hidden value.
pub const REDACTED: &str = "<redacted>";

/// The word put in a URL instead of a hidden part (URLs cannot hold `<` and `>`).
const URL_REDACTED: &str = "redacted";

/// Most remembered secrets; older ones are forgotten first.
const MAX_SECRETS: usize = 1024;

/// Longest part of a secret that is remembered, in bytes: a longer value is remembered by this
/// prefix and its length, and masked whole wherever the prefix appears.
const MAX_SECRET_BYTES: usize = 4096;

/// Shortest remembered value: masking one- to three-character values (`1`, `yes`) everywhere
/// would garble every text without hiding anything worth hiding.
const MIN_SECRET_CHARS: usize = 4;

/// `url` with its user name and password replaced by `redacted`, each query value replaced by
/// `redacted` (the names stay), and its fragment dropped.
pub fn redact_url(url: &url::Url) -> String {
    let mut shown = url.clone();
    shown.set_fragment(None);
    if !shown.username().is_empty() {
        let _ = shown.set_username(URL_REDACTED);
    }
    if shown.password().is_some() {
        let _ = shown.set_password(Some(URL_REDACTED));
    }
    if shown.query().is_some() {
        let names: Vec<String> = shown.query_pairs().map(|(name, _)| name.into_owned()).collect();
        if names.is_empty() {
            shown.set_query(None);
        } else {
            shown.query_pairs_mut().clear().extend_pairs(names.iter().map(|name| (name.as_str(), URL_REDACTED)));
        }
    }
    shown.to_string()
}

/// Like [`redact_url`] for a URL given as text. Text that does not parse as a URL loses
/// everything from its first `?` or `#`, and whatever precedes an `@` in its authority.
pub fn redact_url_str(url: &str) -> String {
    // `user:pw@host` parses too, as a URL of scheme `user`: only a URL with a host is trusted.
    if let Ok(parsed) = url::Url::parse(url.trim())
        && parsed.has_host()
    {
        return redact_url(&parsed);
    }
    let url = url.split(['?', '#']).next().unwrap_or_default();
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, url),
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let rest = match rest[..authority_end].rfind('@') {
        Some(at) => format!("{URL_REDACTED}@{}", &rest[at + 1..]),
        None => rest.to_owned(),
    };
    match scheme {
        Some(scheme) => format!("{scheme}://{rest}"),
        None => rest,
    }
}

/// A `reqwest` error with its causes, the URL it names redacted ([`redact_url`]).
pub fn describe(error: &reqwest::Error) -> String {
    let url = error.url().map(redact_url);
    let mut text = error.to_string();
    if let Some(raw) = error.url() {
        text = text.replace(&format!(" ({raw})"), "").replace(raw.as_str(), "<url>");
    }
    append_causes(&mut text, std::error::Error::source(error));
    if let Some(url) = url {
        text.push_str(&format!(" ({url})"));
    }
    mask_secrets(&text).into_owned()
}

/// Any error with its causes, as one line with secrets masked ([`mask_secrets`]): what the
/// transports' own HTTP client and body reading report.
pub fn describe_error(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    append_causes(&mut text, error.source());
    mask_secrets(&text).into_owned()
}

/// `text` followed by each cause from `source` on that it does not already say.
fn append_causes(text: &mut String, mut source: Option<&(dyn std::error::Error + 'static)>) {
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
}

/// Whether a header, variable or flag name looks like it holds a secret: it contains `auth`,
/// `token`, `key`, `secret`, `password`, `passwd`, `credential`, `cookie` or `session` (any
/// case).
pub fn looks_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["auth", "token", "key", "secret", "password", "passwd", "credential", "cookie", "session"]
        .iter()
        .any(|word| name.contains(word))
}

/// Command-line arguments safe to show: `--flag=value` and `--flag value` lose the value when
/// the flag [`looks_secret`], `Bearer ...` loses its token, URLs are redacted
/// ([`redact_url_str`]) and remembered secrets are masked ([`mask_secrets`]).
pub fn redact_args(args: &[String]) -> Vec<String> {
    let mut shown = Vec::with_capacity(args.len());
    let mut hide_next = false;
    for arg in args {
        if std::mem::take(&mut hide_next) && !arg.starts_with('-') {
            shown.push(REDACTED.to_owned());
            continue;
        }
        shown.push(redact_arg(arg, &mut hide_next));
    }
    shown
}

fn redact_arg(arg: &str, hide_next: &mut bool) -> String {
    if let Some(flag) = arg.strip_prefix('-') {
        let flag = flag.trim_start_matches('-');
        match flag.split_once('=') {
            Some((name, _)) if looks_secret(name) => {
                return format!("{}={REDACTED}", &arg[..arg.len() - flag.len() + name.len()]);
            }
            Some(_) => {}
            None => *hide_next = looks_secret(flag),
        }
    }
    if let Some(at) = arg.to_ascii_lowercase().find("bearer ") {
        return format!("{}{REDACTED}", &arg[..at + "bearer ".len()]);
    }
    let arg = match arg.find("://") {
        Some(_) if !arg.contains(char::is_whitespace) => match arg.split_once('=') {
            // `--url=https://...`: keep the flag, redact the URL.
            Some((flag, url)) if flag.starts_with('-') => format!("{flag}={}", redact_url_str(url)),
            _ => redact_url_str(arg),
        },
        _ => arg.to_owned(),
    };
    mask_secrets(&arg).into_owned()
}

/// A remembered secret: its first [`MAX_SECRET_BYTES`] at most, and its whole length.
struct Remembered {
    prefix: String,
    len: usize,
}

fn secrets() -> &'static Mutex<Vec<Remembered>> {
    static SECRETS: OnceLock<Mutex<Vec<Remembered>>> = OnceLock::new();
    SECRETS.get_or_init(Mutex::default)
}

/// Remember `value` as a secret: from now on [`mask_secrets`] (and so every `Debug` output and
/// error text that goes through it) replaces it with `<redacted>`. Values shorter than four
/// characters are not remembered. The set is bounded (1024 values, the oldest forgotten first).
pub fn remember_secret(value: &str) {
    let value = value.trim();
    if value.chars().count() < MIN_SECRET_CHARS {
        return;
    }
    let mut cut = value.len().min(MAX_SECRET_BYTES);
    while !value.is_char_boundary(cut) {
        cut -= 1;
    }
    let (prefix, len) = (&value[..cut], value.len());
    let mut set = secrets().lock().unwrap_or_else(|p| p.into_inner());
    if set.iter().any(|s| s.prefix == prefix && s.len == len) {
        return;
    }
    if set.len() == MAX_SECRETS {
        set.remove(0);
    }
    set.push(Remembered { prefix: prefix.to_owned(), len });
}

/// `text` with every remembered secret ([`remember_secret`]) replaced by `<redacted>`.
pub fn mask_secrets(text: &str) -> Cow<'_, str> {
    let set = secrets().lock().unwrap_or_else(|p| p.into_inner());
    let mut found: Vec<&Remembered> = set.iter().filter(|s| text.contains(s.prefix.as_str())).collect();
    // Longest first, so that a secret containing another is masked whole.
    found.sort_by_key(|s| std::cmp::Reverse(s.len));
    let mut out = Cow::Borrowed(text);
    for secret in found {
        if out.contains(secret.prefix.as_str()) {
            out = Cow::Owned(mask_one(&out, secret));
        }
    }
    out
}

/// `text` with each occurrence of `secret` masked: the remembered prefix and, for a secret longer
/// than it, as many bytes after it as the secret has (to the end of the text at most).
fn mask_one(text: &str, secret: &Remembered) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(secret.prefix.as_str()) {
        out.push_str(&rest[..at]);
        out.push_str(REDACTED);
        let mut end = (at + secret.len).min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// A secret string: a bearer or OAuth token, a client secret, a credential, an API key. Its `Debug`
/// and `Display` never show it; [`Secret::expose`] is the one way to the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wrap a secret.
    pub fn new(secret: impl Into<String>) -> Self {
        Secret(secret.into())
    }

    /// The secret itself, for the header or request that needs it. Do not log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(REDACTED)
    }
}

impl From<String> for Secret {
    fn from(s: String) -> Self {
        Secret(s)
    }
}

impl From<&str> for Secret {
    fn from(s: &str) -> Self {
        Secret(s.to_owned())
    }
}

/// Shows a string (with `Debug`, quoted) through [`mask_secrets`].
pub struct Masked<'a>(pub &'a str);

impl std::fmt::Debug for Masked<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*mask_secrets(self.0), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_credentials_and_query_values() {
        let u = url::Url::parse("https://user:pw@h:8443/mcp?token=abc&x=1#frag").unwrap();
        assert_eq!(redact_url(&u), "https://redacted:redacted@h:8443/mcp?token=redacted&x=redacted");
        assert_eq!(redact_url_str("http://h/mcp"), "http://h/mcp");
        assert_eq!(redact_url_str("http://u:pw@[bad/x?k=v"), "http://redacted@[bad/x");
        assert_eq!(redact_url_str("u:pw@host"), "redacted@host");
    }

    #[test]
    fn args_lose_secret_values() {
        remember_secret("remembered-value-1");
        let args: Vec<String> = [
            "--token=abc",
            "--api-key",
            "def",
            "--verbose",
            "--name=x",
            "Authorization: Bearer ghi",
            "--url=https://u:pw@h/x?k=jkl",
            "--flag=pre-remembered-value-1-post",
            "-p",
            "keep",
        ]
        .map(String::from)
        .to_vec();
        let shown = redact_args(&args);
        assert_eq!(
            shown,
            [
                "--token=<redacted>",
                "--api-key",
                "<redacted>",
                "--verbose",
                "--name=x",
                "Authorization: Bearer <redacted>",
                "--url=https://redacted:redacted@h/x?k=redacted",
                "--flag=pre-<redacted>-post",
                "-p",
                "keep",
            ]
        );
    }

    #[test]
    fn a_secret_never_shows_but_through_expose() {
        let secret = Secret::new("sk-live-value-42");
        let copy: Secret = String::from("sk-live-value-42").into();
        assert_eq!(secret, copy);
        assert_eq!(secret.expose(), "sk-live-value-42");
        let shown = [
            format!("{secret}"),
            format!("{secret:?}"),
            format!("{secret:#?}"),
            format!("{:?}", Some(&secret)),
            format!("{:?}", vec![secret.clone()]),
        ];
        for text in &shown {
            assert!(!text.contains("sk-live") && !text.contains("42"), "{text}");
            assert!(text.contains(REDACTED), "{text}");
        }
        assert_ne!(Secret::from("a"), Secret::from("b"));
    }

    #[test]
    fn short_values_are_not_remembered() {
        remember_secret("ab");
        assert_eq!(mask_secrets("a tab b"), "a tab b");
        // Longer than what is remembered of it: still masked whole, and nothing after it.
        let long = format!("long-{}-end", "s".repeat(2 * MAX_SECRET_BYTES));
        remember_secret(&long);
        assert_eq!(mask_secrets(&format!("key={long} next")), format!("key={REDACTED} next"));
        remember_secret("longer-secret-xyz");
        assert_eq!(mask_secrets("a longer-secret-xyz b"), "a <redacted> b");
    }

    #[test]
    fn an_error_is_described_with_its_new_causes_and_no_remembered_secret() {
        remember_secret("error-chain-secret-7");
        let io = std::io::Error::other("token error-chain-secret-7 refused");
        let outer = std::io::Error::other(io);
        // The outer error says what its cause says: the cause is not repeated.
        assert_eq!(describe_error(&outer), "token <redacted> refused");
        #[derive(Debug)]
        struct Wrapper(std::io::Error);
        impl std::fmt::Display for Wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("client error (Connect)")
            }
        }
        impl std::error::Error for Wrapper {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let wrapped = Wrapper(std::io::Error::other("connection refused"));
        assert_eq!(describe_error(&wrapped), "client error (Connect): connection refused");
    }
}
