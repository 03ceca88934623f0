//! The authorization discovery of the 2025-03-26 MCP specification, which servers of that
//! generation still use: no protected resource metadata, and the authorization server's
//! metadata at the MCP server's own origin (`/.well-known/oauth-authorization-server`). That
//! specification did not bind the metadata's `issuer` to where it was found, and its servers
//! name an issuer with a path (`https://host/oauth`) while serving the metadata at the root,
//! which RFC 8414's check (rmcp's) refuses. Such metadata is taken only when the server has no
//! protected resource metadata at all and the issuer and every endpoint it names are on the
//! MCP server's own origin: the server vouches for nothing beyond itself.

use std::time::Duration;

use rmcp::transport::auth::AuthorizationMetadata;
use url::Url;

/// How long each discovery request may take.
const DISCOVERY_WAIT: Duration = Duration::from_secs(10);

/// The 2025-03-26 metadata of the MCP server at `server_url`, when the server publishes no
/// protected resource metadata and its origin's authorization server metadata names only that
/// origin; `None` otherwise.
pub async fn metadata(server_url: &str) -> Option<AuthorizationMetadata> {
    let server = Url::parse(server_url).ok()?;
    let origin = server.origin().ascii_serialization();
    let client = reqwest::Client::builder()
        .timeout(DISCOVERY_WAIT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .ok()?;
    // A server with protected resource metadata is of a later generation: its metadata and
    // issuer are checked as RFC 8414 says, never relaxed here.
    let path = server.path().trim_end_matches('/');
    for prm in [
        format!("{origin}/.well-known/oauth-protected-resource{path}"),
        format!("{origin}/.well-known/oauth-protected-resource"),
    ] {
        match client.get(&prm).send().await {
            Ok(answer) if answer.status().is_success() => return None,
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    let answer = client
        .get(format!("{origin}/.well-known/oauth-authorization-server"))
        .send()
        .await
        .ok()?;
    if !answer.status().is_success() {
        return None;
    }
    let metadata: AuthorizationMetadata = answer.json().await.ok()?;
    same_origin_only(&metadata, &origin).then_some(metadata)
}

/// Whether the issuer and every endpoint `metadata` names lie on `origin`.
fn same_origin_only(metadata: &AuthorizationMetadata, origin: &str) -> bool {
    let on_origin = |address: &str| {
        Url::parse(address).is_ok_and(|url| url.origin().ascii_serialization() == origin)
    };
    let named = [
        Some(metadata.authorization_endpoint.as_str()),
        Some(metadata.token_endpoint.as_str()),
        metadata.registration_endpoint.as_deref(),
        metadata.issuer.as_deref(),
        metadata.jwks_uri.as_deref(),
    ];
    named.into_iter().flatten().all(on_origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(json: serde_json::Value) -> AuthorizationMetadata {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn only_metadata_naming_the_servers_own_origin_is_taken() {
        let own = metadata(serde_json::json!({
            "issuer": "http://localhost:4000/oauth",
            "authorization_endpoint": "http://localhost:4000/oauth/authorize",
            "token_endpoint": "http://localhost:4000/oauth/token",
            "registration_endpoint": "http://localhost:4000/oauth/register",
        }));
        assert!(same_origin_only(&own, "http://localhost:4000"));
        // An endpoint elsewhere (where the code or the token would go) is not taken.
        let elsewhere = metadata(serde_json::json!({
            "issuer": "http://localhost:4000/oauth",
            "authorization_endpoint": "http://localhost:4000/oauth/authorize",
            "token_endpoint": "https://evil.example/token",
        }));
        assert!(!same_origin_only(&elsewhere, "http://localhost:4000"));
        let other_port = metadata(serde_json::json!({
            "issuer": "http://localhost:4001/oauth",
            "authorization_endpoint": "http://localhost:4000/oauth/authorize",
            "token_endpoint": "http://localhost:4000/oauth/token",
        }));
        assert!(!same_origin_only(&other_port, "http://localhost:4000"));
    }
}
