//! `serve`'s connections under load (issue 29 point 11): a client that sends half a request
//! header and holds the connection (slowloris) is closed after the header read timeout, and so
//! is one idle that long between requests; one client address holds at most so many
//! connections, and the server as a whole at most so many, fewer when the process may open few
//! descriptors, so the listener always has descriptors left to accept (and close) with. A
//! connection over the per-client cap is closed at once; at the total cap the oldest connection
//! still sending its first request header is closed to make room for the new one.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::config::ServeArgs;

/// Descriptors kept for everything else the server opens (sessions' stores, logs, commands,
/// MCP servers), on top of a quarter of the limit.
const KEPT_DESCRIPTORS: usize = 64;
/// How long the accept loop waits after the kernel refused a connection (out of descriptors),
/// so it does not spin.
const ACCEPT_PAUSE: Duration = Duration::from_millis(50);
/// How long connections get to end once the server stops.
const CLOSING_PATIENCE: Duration = Duration::from_secs(5);

/// The bounds the connections are held to.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_timeout: Duration,
    pub total: usize,
    pub per_client: usize,
}

impl Limits {
    /// The command line's bounds, the total cut to the descriptors this process may open.
    pub fn from_args(args: &ServeArgs) -> Limits {
        Limits {
            header_timeout: Duration::from_millis(args.header_timeout_ms.max(1)),
            total: args.max_connections.clamp(1, descriptor_budget()),
            per_client: args.max_connections_per_client.max(1),
        }
    }
}

/// The connections the descriptor limit leaves room for: three quarters of the soft limit,
/// less `KEPT_DESCRIPTORS`.
fn descriptor_budget() -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given and reads nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 256;
    }
    let soft = usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX);
    soft.saturating_sub(soft / 4)
        .saturating_sub(KEPT_DESCRIPTORS)
        .max(8)
}

#[derive(Default)]
struct Counts {
    by_client: HashMap<IpAddr, usize>,
    /// The open connections by admission order (oldest first).
    open: BTreeMap<u64, Held>,
    next: u64,
}

/// One open connection, as the caps see it.
struct Held {
    client: IpAddr,
    /// Set once hyper has read a whole request header on it.
    headers_done: Arc<AtomicBool>,
    /// Cancelled to close it to make room (see `Admission::admit`).
    evict: CancellationToken,
}

/// Who holds how many connections; a `Slot` is one of them, given back when dropped.
#[derive(Clone)]
struct Admission {
    counts: Arc<Mutex<Counts>>,
    limits: Limits,
}

struct Slot {
    counts: Arc<Mutex<Counts>>,
    id: u64,
    headers_done: Arc<AtomicBool>,
    evict: CancellationToken,
}

impl Counts {
    /// Forgets the connection `id`, if it is still counted.
    fn release(&mut self, id: u64) {
        let Some(held) = self.open.remove(&id) else {
            return;
        };
        if let Some(count) = self.by_client.get_mut(&held.client) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.by_client.remove(&held.client);
            }
        }
    }

    /// Closes the oldest connection that has not sent a whole request header yet, if any.
    fn evict_oldest_unfinished(&mut self) -> bool {
        let oldest = self
            .open
            .iter()
            .find(|(_, held)| !held.headers_done.load(Ordering::Relaxed))
            .map(|(id, held)| (*id, held.evict.clone()));
        let Some((id, evict)) = oldest else {
            return false;
        };
        evict.cancel();
        self.release(id);
        true
    }
}

impl Admission {
    /// A slot for a new connection from `client`. Over the per-client cap it is refused. At the
    /// total cap the oldest connection still sending its first request header is closed to make
    /// room (issue 29 point 11): half-sent requests from many addresses then cannot fill the
    /// server and keep every new client out until their header timeout; only connections
    /// serving a request, which an attacker must complete requests to hold, count to the full.
    fn admit(&self, client: IpAddr) -> Option<Slot> {
        let mut counts = self.counts.lock().ok()?;
        let held = counts.by_client.get(&client).copied().unwrap_or(0);
        if held >= self.limits.per_client {
            return None;
        }
        if counts.open.len() >= self.limits.total && !counts.evict_oldest_unfinished() {
            return None;
        }
        let id = counts.next;
        counts.next += 1;
        *counts.by_client.entry(client).or_insert(0) += 1;
        let (headers_done, evict) = (Arc::new(AtomicBool::new(false)), CancellationToken::new());
        counts.open.insert(
            id,
            Held {
                client,
                headers_done: Arc::clone(&headers_done),
                evict: evict.clone(),
            },
        );
        Some(Slot {
            counts: Arc::clone(&self.counts),
            id,
            headers_done,
            evict,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut counts) = self.counts.lock() {
            counts.release(self.id);
        }
    }
}

/// Accepts connections on `listener` and serves `app` on each, within `limits`, until
/// `shutdown`; then asks every connection to end and waits a little for them.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: CancellationToken,
) {
    let admission = Admission {
        counts: Arc::default(),
        limits,
    };
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = shutdown.cancelled() => break,
        };
        while connections.try_join_next().is_some() {}
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(error) => {
                tracing::warn!("[serve] a connection could not be accepted: {error}");
                tokio::time::sleep(ACCEPT_PAUSE).await;
                continue;
            }
        };
        let Some(slot) = admission.admit(peer.ip()) else {
            tracing::debug!("[serve] {peer} is over the connection caps; closed");
            continue;
        };
        let inner = hyper_util::service::TowerToHyperService::new(app.clone());
        let headers_done = Arc::clone(&slot.headers_done);
        // hyper calls the service once a whole request header is read.
        let service = hyper::service::service_fn(move |request| {
            headers_done.store(true, Ordering::Relaxed);
            hyper::service::Service::call(&inner, request)
        });
        let stop = shutdown.clone();
        connections.spawn(async move {
            let evicted = slot.evict.clone();
            let _slot = slot;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(limits.header_timeout);
            let connection =
                builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                // Closed to make room: dropping the connection closes its socket.
                _ = evicted.cancelled() => {}
                _ = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    let _ = tokio::time::timeout(CLOSING_PATIENCE, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
}
