//! The browser part of an OAuth authorization, done over HTTP, for the interop tests against real
//! authorization servers (`tests/tests/peers_oauth.rs`), and later for driving `mcp login
//! --no-browser` from a test.
//!
//! - [`click_through`]: given an authorization URL, do what a person in a browser would: follow
//!   the redirects to the login page, sign in with a user name, accept the consent page, and
//!   follow redirects until the one to the `redirect_uri` the URL names. Returns that final
//!   redirect URL (with `code`, `state`, `iss`) without requesting it: a caller that has a real
//!   listener there (`mcp login`) GETs it itself. Cookies are kept across the steps. It fills
//!   oidc-provider's development login and consent forms, and works for any server that
//!   approves at once (one redirect straight back) or shows plain HTML forms.
//! - [`HttpBrowser`]: a [`BrowserStep`] that runs [`click_through`] and counts how many times it
//!   was asked (a second run with stored tokens must not ask again).
//!
//! Nothing here prints a code or a token: progress lines name only the method and the first
//! segment of each path visited.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_transport::auth::browser::{AuthorizationResponse, BrowserStep, PendingRedirect};
use mcp_transport::auth::{AuthError, AuthStep};
use mcp_transport::redact::describe;
use reqwest::header::{CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};
use url::Url;

use crate::peers::{HttpPeer, free_port, repo_peer_file};

/// The most requests one click-through makes before giving up.
const MAX_STEPS: usize = 20;

/// The password typed into a login form (oidc-provider's development login takes any).
const PASSWORD: &str = "peer-test-password";

/// Click through the authorization at `authorization_url` as the user `login`, and return the
/// URL the authorization server finally redirects to: the `redirect_uri` of the authorization
/// URL, with the response parameters. The redirect URL itself is not requested. Each request is
/// bounded by `step_timeout`.
pub async fn click_through(authorization_url: &Url, login: &str, step_timeout: Duration) -> Result<Url, String> {
    let redirect_uri = authorization_url
        .query_pairs()
        .find(|(k, _)| k == "redirect_uri")
        .map(|(_, v)| v.into_owned())
        .ok_or("the authorization URL has no redirect_uri")?;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(step_timeout)
        .build()
        .map_err(|e| format!("cannot build an HTTP client: {}", describe(&e)))?;
    let mut cookies = CookieJar::default();
    let mut next = Request::Get(authorization_url.clone());
    for _ in 0..MAX_STEPS {
        let url = next.url().clone();
        let mut request = match &next {
            Request::Get(url) => client.get(url.clone()),
            Request::Post(url, form) => {
                let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish();
                client.post(url.clone()).header(CONTENT_TYPE, "application/x-www-form-urlencoded").body(body)
            }
        };
        if let Some(header) = cookies.header() {
            request = request.header(COOKIE, header);
        }
        println!("browser: {} {}", next.method(), shown_path(&url));
        let response =
            request.send().await.map_err(|e| format!("{} {}: {}", next.method(), url.path(), describe(&e)))?;
        cookies.take(&response);
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| format!("{} {}: {status} without a Location", next.method(), url.path()))?;
            let target = url.join(location).map_err(|e| format!("a redirect that is not a URL: {e}"))?;
            if target.as_str().starts_with(&redirect_uri) {
                return Ok(target);
            }
            next = Request::Get(target);
            continue;
        }
        let body = response.text().await.map_err(|e| format!("reading {}: {}", url.path(), describe(&e)))?;
        if !status.is_success() {
            return Err(format!("{} {} answered {status}: {}", next.method(), url.path(), page_summary(&body)));
        }
        let form = Form::first_in(&body)
            .ok_or_else(|| format!("{} shows no form to submit: {}", url.path(), page_summary(&body)))?;
        let action = url.join(&form.action).map_err(|e| format!("a form action that is not a URL: {e}"))?;
        let mut fields = form.fields;
        if let Some(value) = fields.get_mut("login") {
            *value = login.to_owned();
        }
        if let Some(value) = fields.get_mut("password") {
            *value = PASSWORD.to_owned();
        }
        next = Request::Post(action, fields);
    }
    Err(format!("no redirect to {redirect_uri} after {MAX_STEPS} requests"))
}

enum Request {
    Get(Url),
    Post(Url, BTreeMap<String, String>),
}

impl Request {
    fn url(&self) -> &Url {
        match self {
            Request::Get(url) | Request::Post(url, _) => url,
        }
    }

    fn method(&self) -> &'static str {
        match self {
            Request::Get(_) => "GET",
            Request::Post(..) => "POST",
        }
    }
}

/// The cookies set so far, by name (paths and expiry ignored: one authorization server, one
/// short flow).
#[derive(Default)]
struct CookieJar(BTreeMap<String, String>);

impl CookieJar {
    fn take(&mut self, response: &reqwest::Response) {
        for value in response.headers().get_all(SET_COOKIE) {
            let Ok(text) = value.to_str() else { continue };
            let pair = text.split(';').next().unwrap_or_default();
            if let Some((name, value)) = pair.split_once('=') {
                let expired = text.to_ascii_lowercase().contains("expires=thu, 01 jan 1970");
                if expired || value.is_empty() {
                    self.0.remove(name.trim());
                } else {
                    self.0.insert(name.trim().to_owned(), value.trim().to_owned());
                }
            }
        }
    }

    fn header(&self) -> Option<String> {
        (!self.0.is_empty()).then(|| self.0.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; "))
    }
}

/// The first `<form>` of a page: its action and its inputs' names and values.
struct Form {
    action: String,
    fields: BTreeMap<String, String>,
}

impl Form {
    fn first_in(html: &str) -> Option<Form> {
        let start = html.find("<form")?;
        let end = html[start..].find("</form>").map_or(html.len(), |e| start + e);
        let form = &html[start..end];
        let tag_end = form.find('>')?;
        let action = attribute(&form[..tag_end], "action")?;
        let mut fields = BTreeMap::new();
        let mut rest = form;
        while let Some(at) = rest.find("<input") {
            let tag = &rest[at..];
            let close = tag.find('>').unwrap_or(tag.len());
            if let Some(name) = attribute(&tag[..close], "name") {
                fields.insert(name, attribute(&tag[..close], "value").unwrap_or_default());
            }
            rest = &tag[close..];
        }
        Some(Form { action, fields })
    }
}

/// The first segment of a URL's path (`/interaction/…`): the rest may be a session handle.
fn shown_path(url: &Url) -> String {
    let first = url.path_segments().and_then(|mut s| s.next()).unwrap_or_default();
    let more = url.path().len() > first.len() + 1;
    format!("/{first}{}", if more { "/…" } else { "" })
}

/// The value of `name="..."` in a tag, with the common entities decoded.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let needle = format!(" {name}=\"");
    let from = tag.find(&needle)? + needle.len();
    let len = tag[from..].find('"')?;
    let raw = &tag[from..from + len];
    Some(
        raw.replace("&amp;", "&")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">"),
    )
}

/// A page's `<title>` and first heading, for an error message (never its whole body).
fn page_summary(html: &str) -> String {
    let between = |open: &str, close: &str| {
        let from = html.find(open)? + open.len();
        let to = html[from..].find(close)?;
        Some(html[from..from + to].trim().to_owned())
    };
    let parts: Vec<String> = [between("<title>", "</title>"), between("<h1>", "</h1>"), between("<p>", "</p>")]
        .into_iter()
        .flatten()
        .collect();
    if parts.is_empty() { format!("({} bytes, no title)", html.len()) } else { parts.join(" / ") }
}

/// A [`BrowserStep`] that clicks through the authorization over HTTP ([`click_through`]) and
/// counts how many times it ran.
#[derive(Debug)]
pub struct HttpBrowser {
    login: String,
    redirect_uri: String,
    calls: AtomicUsize,
}

impl HttpBrowser {
    /// Sign in as `login`; `redirect_uri` is registered and sent, never listened on (the
    /// redirect is read from the authorization server's answer).
    pub fn new(login: impl Into<String>, redirect_uri: impl Into<String>) -> Self {
        HttpBrowser { login: login.into(), redirect_uri: redirect_uri.into(), calls: AtomicUsize::new(0) }
    }

    /// How many authorizations it has been asked to complete.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl BrowserStep for HttpBrowser {
    fn prepare<'a>(&'a self, _: Option<&'a str>) -> BoxFuture<'a, Result<Box<dyn PendingRedirect>, AuthError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let pending = HttpRedirect { login: self.login.clone(), redirect_uri: self.redirect_uri.clone() };
        Box::pin(async move { Ok(Box::new(pending) as Box<dyn PendingRedirect>) })
    }
}

struct HttpRedirect {
    login: String,
    redirect_uri: String,
}

impl PendingRedirect for HttpRedirect {
    fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    fn complete(self: Box<Self>, url: Url) -> BoxFuture<'static, Result<AuthorizationResponse, AuthError>> {
        Box::pin(async move {
            let redirect = click_through(&url, &self.login, Duration::from_secs(10))
                .await
                .map_err(|e| AuthError::new(AuthStep::Authorization, e))?;
            Ok(AuthorizationResponse::from_query(&redirect))
        })
    }
}

/// An authorization server and the MCP server it protects, both real peers on free loopback
/// ports: `oidc-provider` (`tests/peers/oauth/oidc-as.mjs`) and the Python SDK's
/// `protected_server.py`, which trusts its issuer.
pub struct OidcPeers {
    /// The authorization server.
    pub provider: HttpPeer,
    /// The protected MCP server.
    pub server: HttpPeer,
    /// The authorization server's issuer URL.
    pub issuer: String,
    /// The protected server's MCP endpoint.
    pub resource: String,
}

/// Start [`OidcPeers`]: oidc-provider from `node_modules`, the protected server with `python`.
pub async fn start_oidc_peers(node_modules: &Path, python: &Path) -> OidcPeers {
    let as_port = free_port();
    let rs_port = free_port();
    let issuer = format!("http://127.0.0.1:{as_port}");
    let resource = format!("http://127.0.0.1:{rs_port}/mcp");
    let script = repo_peer_file("oauth/oidc-as.mjs").display().to_string();
    let args = [script, as_port.to_string(), resource.clone(), node_modules.display().to_string()];
    let provider = HttpPeer::start("oidc-provider", Path::new("node"), &args, &[], as_port).await;
    let script = repo_peer_file("oauth/protected_server.py").display().to_string();
    let args = [script, "--port".into(), rs_port.to_string(), "--issuer".into(), issuer.clone()];
    let server = HttpPeer::start("protected-server", python, &args, &[], rs_port).await;
    OidcPeers { provider, server, issuer, resource }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_form_is_read_with_its_inputs() {
        let html = r#"<h1>Sign-in</h1><form autocomplete="off" action="/interaction/a&amp;b/login" method="post">
            <input type="hidden" name="prompt" value="login"/>
            <input required type="text" name="login" placeholder="Enter any login" >
            <input required type="password" name="password" placeholder="and password" >
            <button type="submit">Sign-in</button></form><form action="/other"></form>"#;
        let form = Form::first_in(html).expect("a form");
        assert_eq!(form.action, "/interaction/a&b/login");
        let names: Vec<&str> = form.fields.keys().map(String::as_str).collect();
        assert_eq!(names, ["login", "password", "prompt"]);
        assert_eq!(form.fields["prompt"], "login");
    }
}
