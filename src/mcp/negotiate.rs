//! Version negotiation that works with every server generation. `rmcp`'s automatic lifecycle
//! probes with `server/discover` and falls back to the `initialize` handshake only on an error
//! reply, or after 10 s of silence; servers in the field also answer discover with an empty or
//! otherwise unusable result, or not at all. This transport wrapper turns each of those into the
//! error reply `rmcp` falls back on, within `DISCOVER_WINDOW`, on the same connection (a stdio
//! server is not started twice), and drops the discover answer that comes after the fallback.
//! It also hands each `notifications/progress` to its call's sink as it is read: `rmcp` handles
//! notifications on tasks of their own, so a call's answer could otherwise overtake its progress.

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    ClientRequest, ErrorCode, ErrorData, RequestId, ServerNotification, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::time::Instant;

use super::client::ProgressRoutes;

/// How long a server has to answer `server/discover` before it is taken for one of an older
/// generation. Short: a server that ignores discover must not hold up every `exec`.
pub const DISCOVER_WINDOW: Duration = Duration::from_millis(500);

/// A transport whose `server/discover` always gets a usable answer or an error.
pub struct Negotiating<T> {
    inner: T,
    /// The discover request awaiting its answer, and until when.
    pending: Option<(RequestId, Instant)>,
    /// A discover request answered on the server's behalf; its real answer is dropped.
    abandoned: Option<RequestId>,
    window: Duration,
    progress: Arc<ProgressRoutes>,
}

impl<T> Negotiating<T> {
    pub fn new(inner: T, progress: Arc<ProgressRoutes>) -> Self {
        Negotiating {
            inner,
            pending: None,
            abandoned: None,
            window: DISCOVER_WINDOW,
            progress,
        }
    }
}

/// The error reply `rmcp` reads as "an older server": not one of the codes a modern server uses
/// to reject a request.
fn as_legacy(id: RequestId, why: &str) -> RxJsonRpcMessage<RoleClient> {
    RxJsonRpcMessage::<RoleClient>::error(
        ErrorData::new(ErrorCode::METHOD_NOT_FOUND, why.to_owned(), None),
        Some(id),
    )
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Negotiating<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let TxJsonRpcMessage::<RoleClient>::Request(request) = &item
            && matches!(request.request, ClientRequest::DiscoverRequest(_))
        {
            self.pending = Some((request.id.clone(), Instant::now() + self.window));
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = match self.pending.clone() {
                Some((id, deadline)) => {
                    tokio::select! {
                        message = self.inner.receive() => message,
                        () = tokio::time::sleep_until(deadline) => {
                            self.pending = None;
                            self.abandoned = Some(id.clone());
                            let why = format!(
                                "no answer to server/discover within {} ms",
                                self.window.as_millis()
                            );
                            return Some(as_legacy(id, &why));
                        }
                    }
                }
                None => self.inner.receive().await,
            }?;
            if let RxJsonRpcMessage::<RoleClient>::Notification(notification) = &message
                && let ServerNotification::ProgressNotification(progress) =
                    &notification.notification
            {
                self.progress.deliver(&progress.params);
                continue;
            }
            let answered = match &message {
                RxJsonRpcMessage::<RoleClient>::Response(response) => Some(&response.id),
                RxJsonRpcMessage::<RoleClient>::Error(error) => error.id.as_ref(),
                _ => None,
            };
            if let Some(answered) = answered {
                if self.abandoned.as_ref() == Some(answered) {
                    // The answer to a discover we already gave up on: the handshake moved on.
                    self.abandoned = None;
                    continue;
                }
                if self.pending.as_ref().is_some_and(|(id, _)| id == answered) {
                    self.pending = None;
                    if let RxJsonRpcMessage::<RoleClient>::Response(response) = &message
                        && !matches!(response.result, ServerResult::DiscoverResult(_))
                    {
                        return Some(as_legacy(
                            response.id.clone(),
                            "server/discover answered with something other than a discover result",
                        ));
                    }
                }
            }
            return Some(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
