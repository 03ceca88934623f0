//! A watcher's `text/event-stream` body: the replay first, then live frames, several frames to
//! a chunk when they are waiting (one write for a burst of deltas), a comment line every 15 s so
//! idle connections stay open through proxies. The stream ends after the session's `closed`
//! frame, or as soon as the watcher has fallen `BACKLOG` frames behind (it reconnects with
//! `Last-Event-ID` and is replayed what it missed).

use std::convert::Infallible;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::Stream;
use tokio::sync::broadcast::{self, error::RecvError, error::TryRecvError};

use super::feed::{Frame, Subscription};

/// Frames put together into one chunk at most.
const BATCH: usize = 256;
const KEEP_ALIVE: Duration = Duration::from_secs(15);

struct Watch {
    replay: std::vec::IntoIter<Frame>,
    live: Option<broadcast::Receiver<Frame>>,
    /// The `closed` frame went out: nothing follows.
    done: bool,
}

/// The body of one watcher's stream.
pub fn sse_body(subscription: Subscription) -> impl Stream<Item = Result<Bytes, Infallible>> {
    let watch = Watch {
        replay: subscription.replay.into_iter(),
        live: subscription.live,
        done: false,
    };
    futures_util::stream::unfold(watch, |mut watch| async move {
        if watch.done {
            return None;
        }
        let mut chunk = BytesMut::new();
        for frame in watch.replay.by_ref().take(BATCH) {
            watch.done |= frame.last;
            chunk.extend_from_slice(&frame.bytes);
        }
        if !chunk.is_empty() {
            return Some((Ok(chunk.freeze()), watch));
        }
        let live = watch.live.as_mut()?;
        let first = tokio::select! {
            received = live.recv() => received,
            _ = tokio::time::sleep(KEEP_ALIVE) => {
                return Some((Ok(Bytes::from_static(b": keep-alive\n\n")), watch));
            }
        };
        match first {
            Ok(frame) => {
                watch.done |= frame.last;
                chunk.extend_from_slice(&frame.bytes);
            }
            // Too far behind, or the feed is gone: the watcher reconnects to catch up.
            Err(RecvError::Lagged(_) | RecvError::Closed) => return None,
        }
        while !watch.done && chunk.len() < BATCH * 64 {
            match live.try_recv() {
                Ok(frame) => {
                    watch.done |= frame.last;
                    chunk.extend_from_slice(&frame.bytes);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Lagged(_) | TryRecvError::Closed) => {
                    watch.live = None;
                    watch.done = true;
                    break;
                }
            }
        }
        Some((Ok(chunk.freeze()), watch))
    })
}
