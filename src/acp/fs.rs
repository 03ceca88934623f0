//! The editor's side of the file tools: when the client declared `fs.readTextFile` /
//! `fs.writeTextFile`, the tools' bytes go through `fs/read_text_file` and `fs/write_text_file`
//! (so an unsaved buffer is what the model reads, and the editor shows a write). The path has
//! been judged by then exactly as for harness9's own I/O; only the I/O is the editor's.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use async_trait::async_trait;

use crate::tools::{EditorFileError, EditorFiles};

/// The editor's file methods for one session.
pub struct EditorFs {
    cx: ConnectionTo<Client>,
    /// Known once the session is open (the core names a new session).
    session: Arc<OnceLock<acp::SessionId>>,
    read: bool,
    write: bool,
}

impl EditorFs {
    /// The editor's file methods as `capabilities` declares them; `None` when it offers neither.
    pub fn offered(
        cx: &ConnectionTo<Client>,
        capabilities: &acp::FileSystemCapabilities,
        session: Arc<OnceLock<acp::SessionId>>,
    ) -> Option<Arc<dyn EditorFiles>> {
        let (read, write) = (capabilities.read_text_file, capabilities.write_text_file);
        (read || write).then(|| {
            Arc::new(EditorFs {
                cx: cx.clone(),
                session,
                read,
                write,
            }) as Arc<dyn EditorFiles>
        })
    }

    fn session(&self) -> Result<acp::SessionId, EditorFileError> {
        self.session
            .get()
            .cloned()
            .ok_or(EditorFileError::NotOffered)
    }
}

fn failed(error: agent_client_protocol::Error) -> EditorFileError {
    EditorFileError::Failed(error.to_string())
}

#[async_trait]
impl EditorFiles for EditorFs {
    async fn read_text(&self, path: &Path) -> Result<String, EditorFileError> {
        if !self.read {
            return Err(EditorFileError::NotOffered);
        }
        let request = acp::ReadTextFileRequest::new(self.session()?, path.to_path_buf());
        let answer = self.cx.send_request(request).block_task().await;
        answer.map(|read| read.content).map_err(failed)
    }

    async fn write_text(&self, path: &Path, content: &str) -> Result<(), EditorFileError> {
        if !self.write {
            return Err(EditorFileError::NotOffered);
        }
        let request =
            acp::WriteTextFileRequest::new(self.session()?, path.to_path_buf(), content.to_owned());
        let answer = self.cx.send_request(request).block_task().await;
        answer.map(|_| ()).map_err(failed)
    }
}
