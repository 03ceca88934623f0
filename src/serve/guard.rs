//! Who may talk to `serve`: every request but `GET /health` carries the bearer token in the
//! `Authorization` header (never a query string or a cookie), compared in constant time. Against
//! browsers on the user's machine: a `Host` that is a name other than `localhost` gets 421 (a
//! DNS-rebinding page reaches us under its own name; an IP literal cannot be rebound), any
//! `Origin` header gets 403 (no browser page may drive the agent, whatever it claims), and no
//! CORS header is ever sent. The token itself is random, or the user's own, and stays out of
//! the environment of every command the agent runs.

use std::path::{Path, PathBuf};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::ServeState;
use super::routes::error_response;
use crate::session::remote::TOKEN_FILE;

/// Makes a random token and writes it where `attach` and the user's scripts read it: a file
/// only its owner can read, replaced (never appended to) on each start.
pub fn new_token_file(home: &Path) -> std::io::Result<(String, PathBuf)> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    std::fs::create_dir_all(home)?;
    let path = home.join(TOKEN_FILE);
    let partial = home.join(format!("{TOKEN_FILE}.partial"));
    let _ = std::fs::remove_file(&partial);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&partial)?;
    std::io::Write::write_all(&mut file, format!("{token}\n").as_bytes())?;
    drop(file);
    std::fs::rename(&partial, &path)?;
    Ok((token, path))
}

/// Whether `host` (a `Host` header's value) may reach us: an IP literal or `localhost`, with
/// any port. Names other than `localhost` are how a rebinding page would arrive.
pub fn host_allowed(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        // [v6]:port
        Some(rest) => match rest.split_once(']') {
            Some((inside, after)) if after.is_empty() || after.starts_with(':') => inside,
            _ => return false,
        },
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok()
}

fn bearer(headers: &HeaderMap) -> Option<&[u8]> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().as_bytes())
}

/// The middleware in front of every route.
pub async fn guard(State(state): State<ServeState>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if !host.is_some_and(host_allowed) {
        return error_response(
            StatusCode::MISDIRECTED_REQUEST,
            "this server answers only to loopback names and IP addresses",
        );
    }
    if headers.contains_key(header::ORIGIN) {
        return error_response(
            StatusCode::FORBIDDEN,
            "requests from web pages (with an Origin header) are refused",
        );
    }
    let open = request.uri().path() == "/health";
    let expected = state.token.as_bytes();
    let authorized = bearer(headers).is_some_and(|given| bool::from(given.ct_eq(expected)));
    if !open && !authorized {
        let mut response = error_response(
            StatusCode::UNAUTHORIZED,
            "a bearer token is needed: Authorization: Bearer <the token in serve.token>",
        );
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
        return response.into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::remote::read_token;

    #[test]
    fn only_ip_literals_and_localhost_pass_the_host_check() {
        for good in [
            "127.0.0.1:7979",
            "127.0.0.1",
            "localhost:7979",
            "LOCALHOST",
            "[::1]:7979",
            "[::1]",
            "10.0.0.5:80",
        ] {
            assert!(host_allowed(good), "{good}");
        }
        for bad in [
            "evil.example:7979",
            "localhost.evil.example",
            "127.0.0.1.nip.io:7979",
            "[::1",
            "[::1]x",
            "",
            "a.localhost:7979",
        ] {
            assert!(!host_allowed(bad), "{bad}");
        }
    }

    #[test]
    fn the_token_file_is_new_random_and_only_the_owners() {
        let home = tempfile::tempdir().unwrap();
        let (first, path) = new_token_file(home.path()).unwrap();
        let (second, _) = new_token_file(home.path()).unwrap();
        assert_ne!(first, second);
        assert_eq!(first.len(), 64);
        assert_eq!(read_token(None, home.path()).unwrap(), second);
        assert_eq!(read_token(Some("mine"), home.path()).unwrap(), "mine");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
