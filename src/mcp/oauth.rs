//! OAuth 2.1 for HTTP servers, through `rmcp`'s `auth` (which does the metadata discovery of
//! RFC 9728 and RFC 8414 with its fallbacks, pre-registered clients, client ID metadata
//! documents and dynamic registration, PKCE, scopes, resource indicators and refresh):
//! `harness9 mcp login NAME` opens the authorization URL with `$BROWSER` (else `xdg-open`) and
//! waits for the redirect on a one-shot listener on 127.0.0.1; the tokens are kept in
//! `$HARNESS9_HOME/mcp-oauth/`, 0600, never logged, shown or passed to a process. A connection
//! to a server with kept tokens sends them (refreshed when they expire).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
    ClientCredentialsConfig, CredentialStore, JwtSigningAlgorithm, OAuthState, StoredCredentials,
};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

mod legacy;

/// How long `mcp login` waits for the browser to come back.
const LOGIN_WAIT: Duration = Duration::from_secs(300);

/// A login that did not complete.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("{0}")]
    Auth(#[from] AuthError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("the browser did not come back to 127.0.0.1 within {}s", .0.as_secs())]
    NoRedirect(Duration),
    #[error("the redirect to 127.0.0.1 carried no authorization: {0}")]
    BadRedirect(String),
    #[error(
        "the client-credentials grant needs `client_id` and `client_secret` (or \
         `private_key_file`) in `oauth`"
    )]
    NoClientSecret,
    #[error("the signing algorithm `{0}` is not one of RS256, RS384, RS512, ES256, ES384")]
    Algorithm(String),
}

/// A server's `oauth` entry: a pre-registered client, the scopes to ask for, the grant.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ClientSettings {
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub scopes: Vec<String>,
    pub grant: Grant,
    /// For the client-credentials grant with a signed JWT (RFC 7523) instead of a secret: the
    /// PEM file of the private key, and its algorithm (`ES256` unless said).
    pub private_key_file: Option<String>,
    pub signing_algorithm: Option<String>,
}

impl std::fmt::Debug for ClientSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The secret is never printed, not even in a log line about the definition.
        f.debug_struct("ClientSettings")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[REDACTED]"),
            )
            .field("scopes", &self.scopes)
            .field("grant", &self.grant)
            .field("private_key_file", &self.private_key_file)
            .field("signing_algorithm", &self.signing_algorithm)
            .finish()
    }
}

/// How harness9 gets its tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Grant {
    /// The user logs in in a browser (`mcp login`).
    #[default]
    AuthorizationCode,
    /// A machine's own credentials (`client_id` and `client_secret`), no browser.
    ClientCredentials,
}

/// Where server `name`'s tokens for `url` are kept (a changed URL does not reuse them).
pub fn token_file(home: &Path, name: &str, url: &str) -> PathBuf {
    let hash: String = Sha256::digest(format!("{name}\n{url}").as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    let safe: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(32)
        .collect();
    home.join("mcp-oauth").join(format!("{safe}-{hash}.json"))
}

/// The tokens of one server in one 0600 file.
struct FileStore {
    path: PathBuf,
}

fn io_error(error: impl std::fmt::Display) -> AuthError {
    AuthError::InternalError(format!("the token file: {error}"))
}

#[async_trait::async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => Ok(serde_json::from_slice(&bytes).ok()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(e)),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let dir = self.path.parent().unwrap_or(Path::new("."));
        crate::private_home::create_dir(dir).map_err(io_error)?;
        let bytes = serde_json::to_vec(&credentials).map_err(io_error)?;
        let fresh = self.path.with_extension("json.new");
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&fresh)
            .map_err(io_error)?;
        file.write_all(&bytes).map_err(io_error)?;
        std::fs::rename(&fresh, &self.path).map_err(io_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_error(e)),
            _ => Ok(()),
        }
    }
}

/// An HTTP client that sends server `name`'s kept tokens (refreshing them when they expire),
/// or `None` when there are none.
pub async fn authorized_client(
    home: &Path,
    name: &str,
    url: &str,
) -> Option<AuthClient<reqwest::Client>> {
    let path = token_file(home, name, url);
    if !path.exists() {
        return None;
    }
    let mut manager = AuthorizationManager::new(url).await.ok()?;
    manager.set_credential_store(FileStore { path });
    match manager.initialize_from_store().await {
        Ok(true) => Some(AuthClient::new(reqwest::Client::new(), manager)),
        Ok(false) => None,
        Err(e) => {
            tracing::warn!(target: "harness9::mcp", "server `{name}`: the kept tokens cannot be used: {e}");
            None
        }
    }
}

/// Gets tokens for server `name` at `url` without a browser: the client-credentials grant.
pub async fn client_credentials(
    home: &Path,
    name: &str,
    url: &str,
    client: &ClientSettings,
) -> Result<(), OAuthError> {
    // `rmcp`'s signed-JWT exchange holds a value that is not `Send` across an await, so it runs
    // on a thread of its own (blocking on this runtime) rather than inside a spawned task.
    let (home, name, url, client) = (
        home.to_path_buf(),
        name.to_owned(),
        url.to_owned(),
        client.clone(),
    );
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        runtime.block_on(exchange_client_credentials(&home, &name, &url, &client))
    })
    .await
    .map_err(|e| OAuthError::Io(std::io::Error::other(e)))?
}

async fn exchange_client_credentials(
    home: &Path,
    name: &str,
    url: &str,
    client: &ClientSettings,
) -> Result<(), OAuthError> {
    let Some(client_id) = &client.client_id else {
        return Err(OAuthError::NoClientSecret);
    };
    let config = match (&client.private_key_file, &client.client_secret) {
        (Some(key_file), _) => ClientCredentialsConfig::PrivateKeyJwt {
            client_id: client_id.clone(),
            signing_key: std::fs::read(key_file)?,
            signing_algorithm: algorithm(client.signing_algorithm.as_deref())?,
            token_endpoint_audience: None,
            scopes: client.scopes.clone(),
            resource: Some(url.to_owned()),
        },
        (None, Some(client_secret)) => ClientCredentialsConfig::ClientSecret {
            client_id: client_id.clone(),
            client_secret: client_secret.clone(),
            scopes: client.scopes.clone(),
            resource: Some(url.to_owned()),
        },
        (None, None) => return Err(OAuthError::NoClientSecret),
    };
    let mut manager = AuthorizationManager::new(url).await?;
    manager.set_credential_store(FileStore {
        path: token_file(home, name, url),
    });
    let mut state = OAuthState::Unauthorized(manager);
    state.authenticate_client_credentials(config).await?;
    Ok(())
}

/// The JWT signing algorithm named in `oauth` (ES256 unless said).
fn algorithm(name: Option<&str>) -> Result<JwtSigningAlgorithm, OAuthError> {
    Ok(match name.unwrap_or("ES256") {
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        "ES256" => JwtSigningAlgorithm::ES256,
        "ES384" => JwtSigningAlgorithm::ES384,
        other => return Err(OAuthError::Algorithm(other.to_owned())),
    })
}

/// Logs in to server `name` at `url`: authorization code with PKCE through the user's browser
/// (or, for the client-credentials grant, the machine's own credentials).
pub async fn login(
    home: &Path,
    name: &str,
    url: &str,
    client: &ClientSettings,
) -> Result<(), OAuthError> {
    let say = |authorize: &str| {
        eprintln!(
            "harness9: log in to `{name}` in your browser; if it did not open, open:\n{authorize}"
        )
    };
    login_saying(home, name, url, client, &say).await
}

/// `login`, telling the user where to log in through `say` (a front end that owns the
/// terminal shows it; the command line prints it on stderr).
pub async fn login_saying(
    home: &Path,
    name: &str,
    url: &str,
    client: &ClientSettings,
    say: &(dyn Fn(&str) + Send + Sync),
) -> Result<(), OAuthError> {
    if client.grant == Grant::ClientCredentials {
        return client_credentials(home, name, url, client).await;
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let redirect_uri = format!(
        "http://127.0.0.1:{}/callback",
        listener.local_addr()?.port()
    );
    let mut manager = AuthorizationManager::new(url).await?;
    manager.set_credential_store(FileStore {
        path: token_file(home, name, url),
    });
    let mut request = AuthorizationRequest::new(redirect_uri.clone()).with_client_name("harness9");
    // The server's own 401 says where its metadata is and which scopes it wants.
    let challenge = challenge_of(url).await;
    if let Some(challenge) = &challenge {
        request = request.with_challenge(challenge.clone());
    }
    if let Some(id) = &client.client_id {
        request = request.with_preregistered_client(id.clone());
        if let Some(secret) = &client.client_secret {
            request = request.with_client_secret(secret.clone());
        }
    }
    if !client.scopes.is_empty() {
        request = request.with_scopes(client.scopes.iter().cloned());
    }
    let metadata = match manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
    {
        Ok(resolution) => resolution.metadata,
        // A server of the 2025-03-26 generation (`legacy`): its issuer is not bound to where
        // its metadata is, which is taken only on the server's own origin.
        Err(error @ AuthError::AuthorizationServerMismatch { .. }) => {
            legacy::metadata(url).await.ok_or(error)?
        }
        Err(error) => return Err(error.into()),
    };
    manager.set_metadata(metadata);
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, error)| error)?;
    let mut state = OAuthState::Session(session);
    let authorize = state.get_authorization_url().await?;
    open_browser(&authorize);
    say(&authorize);
    let path = tokio::time::timeout(LOGIN_WAIT, one_redirect(&listener))
        .await
        .map_err(|_| OAuthError::NoRedirect(LOGIN_WAIT))??;
    let base = redirect_uri.trim_end_matches("/callback");
    state.handle_callback_url(&format!("{base}{path}")).await?;
    Ok(())
}

/// The `WWW-Authenticate` header of the server's answer to a request without a token, when it
/// answers 401.
async fn challenge_of(url: &str) -> Option<String> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "harness9", "version": env!("CARGO_PKG_VERSION")}}});
    let answer = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .ok()?;
    if answer.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    answer
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)?
        .to_str()
        .ok()
        .map(str::to_owned)
}

/// Forgets server `name`'s tokens; whether there were any.
pub fn logout(home: &Path, name: &str, url: &str) -> std::io::Result<bool> {
    match std::fs::remove_file(token_file(home, name, url)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Opens `url` in the user's browser: `$BROWSER`, else the platform's opener.
fn open_browser(url: &str) {
    let opener = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| {
            if cfg!(target_os = "macos") {
                "open".into()
            } else {
                "xdg-open".into()
            }
        });
    let mut command = std::process::Command::new(&opener);
    command
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        // The TUI owns the terminal: a browser's complaints must not draw over it.
        .stderr(std::process::Stdio::null());
    crate::detach::drop_ptrace(&mut command);
    if let Err(e) = command.spawn() {
        tracing::warn!(target: "harness9::mcp", "cannot start the browser `{opener}`: {e}");
    }
}

/// Waits for one request on `listener` and answers it; returns its path and query.
async fn one_redirect(listener: &tokio::net::TcpListener) -> Result<String, OAuthError> {
    loop {
        let (stream, _) = listener.accept().await?;
        let mut reader = tokio::io::BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).await?;
        let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
        if !path.starts_with("/callback") {
            // A browser's extra request (a favicon): not the redirect.
            let _ = reader
                .get_mut()
                .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                .await;
            continue;
        }
        let body = "harness9 has the authorization; you can close this page.";
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = reader.get_mut().write_all(answer.as_bytes()).await;
        if !path.contains("code=") {
            return Err(OAuthError::BadRedirect(
                path.split('?').nth(1).unwrap_or("").to_owned(),
            ));
        }
        return Ok(path);
    }
}
