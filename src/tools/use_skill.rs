//! `use_skill`: returns a skill's full instructions, on demand (the prompt lists only names).

use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError};
use crate::context::SkillIndex;
use crate::schema::ToolKind;

pub struct UseSkill {
    skills: Arc<SkillIndex>,
}

impl UseSkill {
    pub fn new(skills: Arc<SkillIndex>) -> Self {
        UseSkill { skills }
    }
}

#[derive(Deserialize)]
struct Args {
    name: String,
}

#[async_trait]
impl Tool for UseSkill {
    fn name(&self) -> &'static str {
        "use_skill"
    }

    fn description(&self) -> &'static str {
        "Read the full instructions of a skill listed in the system prompt's Skills section. \
         Call it when the task matches a skill's description, before starting the task, and \
         follow what it says."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"name": {"type": "string", "description": "The skill's name."}},
            "required": ["name"],
            "additionalProperties": false,
        })
    }

    fn bounds_own_output(&self) -> bool {
        true
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    async fn execute(&self, arguments: Value, _ctx: &ToolContext) -> Result<String, ToolError> {
        let args: Args = super::parse_args(arguments)?;
        self.skills
            .body(args.name.trim())
            .map_err(|e| ToolError::new(e.to_string()))
    }
}
