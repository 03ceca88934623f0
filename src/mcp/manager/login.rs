//! Logging in to one of the session's HTTP servers from a front end (the TUI's `/mcp`): the
//! flow of `harness9 mcp login NAME` (`oauth::login`: PKCE through `$BROWSER`), run off the
//! front end's task, where to go said through `say` rather than on stderr; the server is
//! started again once logged in. Logging out forgets its tokens.

use super::McpManager;
use crate::mcp::config::Transport;
use crate::mcp::oauth::{self, ClientSettings, OAuthError};

/// Why a login or logout from a front end did not happen.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("no MCP server named `{0}` is in this session")]
    NotFound(String),
    #[error("`{0}` is not an HTTP server: only those log in")]
    NotHttp(String),
    #[error("this session keeps no tokens (no harness9 home)")]
    NoHome,
    #[error("cannot log in to `{name}`: {error}")]
    OAuth {
        name: String,
        error: Box<OAuthError>,
    },
    #[error("cannot forget the tokens of `{name}`: {error}")]
    Forget { name: String, error: std::io::Error },
}

impl McpManager {
    /// Server `name`'s URL and client settings, when it is an HTTP server of this session.
    fn http_server(&self, name: &str) -> Result<(String, ClientSettings), LoginError> {
        let entries = self.entries();
        let entry = entries
            .iter()
            .find(|e| e.spec.name == name)
            .ok_or_else(|| LoginError::NotFound(name.to_owned()))?;
        match &entry.spec.transport {
            Ok(Transport::Http { url, oauth, .. }) => Ok((url.clone(), oauth.clone())),
            _ => Err(LoginError::NotHttp(name.to_owned())),
        }
    }

    /// Logs in to server `name` (`say` gets the line that tells the user where to log in), then
    /// starts it again; what to tell the user.
    pub async fn log_in(
        &self,
        name: &str,
        say: &(dyn Fn(String) + Send + Sync),
    ) -> Result<String, LoginError> {
        let (url, client) = self.http_server(name)?;
        let home = self.inner.side.home.clone().ok_or(LoginError::NoHome)?;
        let tell = |authorize: &str| {
            say(format!(
                "log in to `{name}` in your browser; if it did not open, open:\n{authorize}"
            ))
        };
        oauth::login_saying(&home, name, &url, &client, &tell)
            .await
            .map_err(|error| LoginError::OAuth {
                name: name.to_owned(),
                error: Box::new(error),
            })?;
        self.reconnect(name);
        Ok(format!("logged in to `{name}`; connecting again"))
    }

    /// Forgets server `name`'s tokens; what to tell the user.
    pub fn log_out(&self, name: &str) -> Result<String, LoginError> {
        let (url, _) = self.http_server(name)?;
        let home = self.inner.side.home.clone().ok_or(LoginError::NoHome)?;
        match oauth::logout(&home, name, &url) {
            Ok(true) => Ok(format!("forgot the tokens of `{name}`")),
            Ok(false) => Ok(format!("`{name}` had no tokens")),
            Err(error) => Err(LoginError::Forget {
                name: name.to_owned(),
                error,
            }),
        }
    }
}
