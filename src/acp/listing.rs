//! `session/list`: the stored sessions (of the editor's folder, or all), newest first, read
//! through the session core's `Catalogue` as `harness9 sessions` reads them.

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Error, ErrorCode};

use super::rpc_error;
use crate::session::Catalogue;
use crate::session::text::store_time;

/// Sessions listed at most (the protocol's cursor is not needed below this).
const LIMIT: usize = 500;

pub async fn list(
    catalogue: &Catalogue,
    request: &acp::ListSessionsRequest,
) -> Result<acp::ListSessionsResponse, Error> {
    let cwd = request.cwd.as_ref().map(|p| p.display().to_string());
    let hits = catalogue
        .find_sessions("", cwd.as_deref(), LIMIT)
        .await
        .map_err(|f| rpc_error(ErrorCode::INTERNAL_ERROR, f.message))?;
    let sessions = hits
        .into_iter()
        .map(|hit| {
            let session = hit.session;
            acp::SessionInfo::new(session.id.clone(), session.workdir.clone())
                .title(session.name.clone().unwrap_or(session.title.clone()))
                .updated_at(store_time(session.updated_at))
        })
        .collect();
    Ok(acp::ListSessionsResponse::new(sessions))
}
