//! The session's settings the editor shows as selectors (`configOptions`): the model, from the
//! catalogue's models of the session's provider; `session/set_config_option` switches it from
//! the next run on, as `/model` does in the TUI.

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Error, ErrorCode};

use super::rpc_error;
use super::sessions::Live;
use crate::session::Request;

pub const MODEL: &str = "model";

/// The selectors of `live`'s session.
pub fn config_options(live: &Live) -> Vec<acp::SessionConfigOption> {
    let current = live.model();
    let mut names: Vec<String> = live.facts.models.iter().map(|(m, _)| m.clone()).collect();
    if !names.contains(&current) {
        names.insert(0, current.clone());
    }
    let choices: Vec<acp::SessionConfigSelectOption> = names
        .into_iter()
        .map(|name| acp::SessionConfigSelectOption::new(name.clone(), name))
        .collect();
    vec![
        acp::SessionConfigOption::select(MODEL, "Model", current, choices)
            .category(acp::SessionConfigOptionCategory::Model),
    ]
}

/// `session/set_config_option`.
pub fn set(
    live: &Live,
    request: &acp::SetSessionConfigOptionRequest,
) -> Result<acp::SetSessionConfigOptionResponse, Error> {
    if request.config_id.0.as_ref() != MODEL {
        return Err(rpc_error(
            ErrorCode::INVALID_PARAMS,
            format!(
                "unknown setting {}: harness9 offers model",
                request.config_id.0
            ),
        ));
    }
    let Some(model) = request.value.as_value_id() else {
        return Err(rpc_error(ErrorCode::INVALID_PARAMS, "the model is a name"));
    };
    let model = model.0.to_string();
    live.set_model(model.clone());
    live.handle.send(Request::SetModel(model));
    Ok(acp::SetSessionConfigOptionResponse::new(config_options(
        live,
    )))
}
