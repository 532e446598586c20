//! `mcp login`, `mcp logout`, and the authorization shown by `mcp status`.
//!
//! Registrations and tokens live in the user's file store (`auth.json` in `$MCP_AUTH_DIR`, else
//! the platform's config directory), so later runs reuse them without a new login. A command
//! other than `login` never opens a browser on its own: a server that needs a login fails it
//! with exit 3 and a line naming `mcp login NAME`, except on a terminal (stdin and stderr), where
//! the user is first asked whether to log in now.

use std::sync::Arc;
use std::time::Duration;

use mcp_manager::config::{McpConfig, ServerConfig};
use mcp_manager::manager::oauth_client;
use mcp_transport::auth::browser::{BrowserStep, LoopbackBrowser, open_browser_or_print, print_url};
use mcp_transport::auth::oauth::AuthState;

use super::setup::{options, resolve_config};
use crate::cli::{Cli, LoginArgs, LogoutArgs};
use crate::exit::{CliError, ExitCode};
use crate::output::terminal;

/// The server `name` (or the only one) of the config, which must use OAuth.
fn oauth_server<'a>(config: &'a McpConfig, name: Option<&str>) -> Result<&'a ServerConfig, CliError> {
    let server = match name {
        Some(name) => config.servers.iter().find(|s| s.name == name).ok_or_else(|| {
            let known: Vec<_> = config.servers.iter().map(|s| s.name.as_str()).collect();
            CliError::usage(format!("no server named {name:?} in the config (servers: {})", known.join(", ")))
        })?,
        None => match config.servers.as_slice() {
            [only] => only,
            _ => return Err(CliError::usage("name the server to log in to (mcp login NAME)")),
        },
    };
    if !server.uses_oauth() {
        let why = if server.transport.is_remote() {
            "its config sets a bearer token, an Authorization header or `auth` other than oauth"
        } else {
            "it is a stdio server"
        };
        return Err(CliError::usage(format!("server {:?} does not use OAuth: {why}", server.name)));
    }
    Ok(server)
}

fn auth_error(name: &str, e: mcp_transport::auth::AuthError) -> CliError {
    CliError::new(ExitCode::AuthRequired, format!("logging in to {name:?} failed: {e}"))
}

/// `mcp login [NAME] [--no-browser]`.
pub(crate) async fn login(cli: &Cli, args: &LoginArgs) -> Result<ExitCode, CliError> {
    let name = args.name.as_deref().or(cli.global.server.as_deref());
    run_login(cli, name, args.no_browser, Duration::from_secs(args.wait.clamp(1, 24 * 3600))).await?;
    Ok(ExitCode::Ok)
}

/// On a terminal: ask whether to log in to `name` now, and do it. `Ok(false)`: the user said no.
pub(crate) async fn offer_login(cli: &Cli, name: &str) -> Result<bool, CliError> {
    terminal::err(&format!("mcp: server {name:?} requires a login. Log in now? [Y/n] "));
    let answer = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    })
    .await
    .ok()
    .and_then(Result::ok)
    .unwrap_or_default();
    if !matches!(answer.trim().to_ascii_lowercase().as_str(), "" | "y" | "yes") {
        return Ok(false);
    }
    run_login(cli, Some(name), false, Duration::from_secs(300)).await?;
    Ok(true)
}

async fn run_login(cli: &Cli, name: Option<&str>, no_browser: bool, wait: Duration) -> Result<(), CliError> {
    let config = resolve_config(cli)?;
    let server = oauth_server(&config, name)?;
    let unattended = server.oauth.grant.is_unattended();
    // An unattended grant runs now, at the token endpoint: no browser, no listener.
    let browser: Option<Arc<dyn BrowserStep>> = if unattended {
        None
    } else {
        let opener = if no_browser { print_url() } else { open_browser_or_print() };
        let mut browser = LoopbackBrowser::new(opener);
        browser.port = server.oauth.redirect_port;
        browser.timeout = wait;
        Some(Arc::new(browser))
    };
    let auth = options(browser);
    let client = oauth_client(server, &config.client, &auth)
        .ok_or_else(|| CliError::usage(format!("server {:?} has no url", server.name)))?
        .map_err(|e| auth_error(&server.name, e))?;
    let state = client.login().await.map_err(|e| auth_error(&server.name, e))?;
    let how = if unattended { format!(" with the {} grant", server.oauth.grant.name()) } else { String::new() };
    terminal::errln(&format!("mcp: logged in to {:?}{how}: {}", server.name, state_text(&state, false, unattended)));
    Ok(())
}

/// `mcp logout [NAME]`.
pub(crate) fn logout(cli: &Cli, args: &LogoutArgs) -> Result<ExitCode, CliError> {
    let config = resolve_config(cli)?;
    let server = oauth_server(&config, args.name.as_deref().or(cli.global.server.as_deref()))?;
    let client = oauth_client(server, &config.client, &options(None))
        .ok_or_else(|| CliError::usage(format!("server {:?} has no url", server.name)))?
        .map_err(|e| auth_error(&server.name, e))?;
    let removed = client.logout().map_err(|e| auth_error(&server.name, e))?;
    let what = if removed == 0 { "nothing was stored" } else { "its registration and tokens are forgotten" };
    terminal::errln(&format!("mcp: logged out of {:?}: {what}", server.name));
    Ok(ExitCode::Ok)
}

/// A point in time (seconds since the epoch) as UTC `YYYY-MM-DD HH:MM`.
fn utc(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Civil from days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02} UTC", rem / 3600, rem % 3600 / 60)
}

/// `state` as a person would say it; `unattended`: the grant runs again by itself, so a missing
/// or expired token needs no login.
fn state_text(state: &AuthState, needs_login: bool, unattended: bool) -> String {
    match state {
        AuthState::None if unattended => "no token yet (obtained when used)".into(),
        AuthState::None if needs_login => "needs login".into(),
        AuthState::None => "not logged in".into(),
        AuthState::Authorized { expires_at, refreshable, .. } => {
            let until = expires_at.map(|t| format!(" until {}", utc(t))).unwrap_or_default();
            let refresh = if *refreshable { ", refreshable" } else { "" };
            if needs_login && !unattended {
                format!("needs login (a token is kept{until})")
            } else {
                format!("authorized{until}{refresh}")
            }
        }
        AuthState::Expired { .. } if unattended => "expired (renewed when used)".into(),
        AuthState::Expired { refreshable: true, .. } if !needs_login => "expired (refreshable)".into(),
        AuthState::Expired { .. } => "expired: needs login".into(),
    }
}

/// The authorization of server `name` for `mcp status`: its grant's name (`authorization_code`,
/// `client_credentials`, ...) and what the AUTH column says (`client credentials
/// (private_key_jwt), DPoP: authorized until ...`); `None` for servers without OAuth, and for a
/// remote server that let `mcp` in (`connected`) without a login it never had: it asked for none.
pub(crate) fn describe(config: &McpConfig, name: &str, needs_login: bool, connected: bool) -> Option<(String, String)> {
    let server = config.servers.iter().find(|s| s.name == name)?;
    let client = oauth_client(server, &config.client, &options(None))?.ok()?;
    let unattended = server.oauth.grant.is_unattended();
    let state = match client.state() {
        Ok(AuthState::None) if connected && !needs_login && !unattended => return None,
        Ok(state) => state_text(&state, needs_login, unattended),
        Err(e) => format!("unknown ({e})"),
    };
    Some((server.oauth.grant.name().to_owned(), format!("{}: {state}", server.oauth.grant_label())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_shown_in_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(1_796_083_200), "2026-12-01 00:00 UTC");
        assert_eq!(utc(951_827_400), "2000-02-29 12:30 UTC");
    }

    #[test]
    fn states_read_as_a_person_would_say_them() {
        let authorized =
            AuthState::Authorized { issuer: "i".into(), expires_at: Some(0), refreshable: true, scopes: vec![] };
        assert_eq!(state_text(&authorized, false, false), "authorized until 1970-01-01 00:00 UTC, refreshable");
        assert_eq!(state_text(&AuthState::None, true, false), "needs login");
        let expired = AuthState::Expired { issuer: "i".into(), refreshable: false };
        assert_eq!(state_text(&expired, false, false), "expired: needs login");
        // An unattended grant runs again by itself: never "needs login".
        assert_eq!(state_text(&AuthState::None, true, true), "no token yet (obtained when used)");
        assert_eq!(state_text(&expired, true, true), "expired (renewed when used)");
        assert_eq!(state_text(&authorized, true, true), "authorized until 1970-01-01 00:00 UTC, refreshable");
    }
}
