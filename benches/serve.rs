//! `harness9 serve`'s event delivery: events per second from a session's feed through the SSE
//! body `serve` sends (axum, HTTP/1.1 on loopback) to one and to ten watchers reading with
//! reqwest, and the latency a paced event adds from `Feed::publish` to a watcher having it.
//! Run with `cargo bench --bench serve`; the numbers are in docs/PERFORMANCE.md.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use harness9::engine::{Event, EventKind};
use harness9::serve::{Feed, sse_body};
use harness9::session::Update;
use tokio::sync::Notify;

/// Events per throughput run.
const EVENTS: u64 = 200_000;
/// Events published before the publisher waits for every watcher to have them (so the bench,
/// not the server's backlog limit, keeps the publisher from running away).
const BURST: u64 = 4_096;
/// Paced events for the latency run, one every `PACE`.
const SAMPLES: usize = 5_000;
const PACE: Duration = Duration::from_micros(200);

fn delta(text: String) -> Update {
    Update::Engine(Event {
        turn: 1,
        kind: EventKind::ActionDelta(text),
    })
}

async fn events(State(feed): State<Arc<Feed>>) -> Response {
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(sse_body(feed.subscribe(None))))
        .expect("a response")
}

async fn start(feed: Arc<Feed>) -> String {
    let app = Router::new().route("/events", get(events)).with_state(feed);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/events")
}

/// A watcher: counts frames (and for the latency run, reads the publish time each carries).
async fn watch(
    url: String,
    received: Arc<AtomicU64>,
    progress: Arc<Notify>,
    latencies: Option<Arc<std::sync::Mutex<Vec<Duration>>>>,
    origin: Instant,
    connected: Arc<tokio::sync::Barrier>,
) {
    let mut response = reqwest::Client::new().get(url).send().await.unwrap();
    connected.wait().await;
    let mut pending = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        pending.extend_from_slice(&chunk);
        let mut start = 0;
        let mut frames = 0;
        while let Some(end) = pending[start..].windows(2).position(|w| w == b"\n\n") {
            let frame = &pending[start..start + end];
            if let Some(latencies) = &latencies {
                let text = String::from_utf8_lossy(frame);
                if let Some(at) = text
                    .split("\"data\":\"")
                    .nth(1)
                    .and_then(|rest| rest.split('"').next())
                    .and_then(|n| n.parse::<u64>().ok())
                {
                    let sent = Duration::from_nanos(at);
                    latencies.lock().unwrap().push(origin.elapsed() - sent);
                }
            }
            frames += 1;
            start += end + 2;
        }
        pending.drain(..start);
        received.fetch_add(frames, Ordering::Relaxed);
        progress.notify_waiters();
    }
}

async fn throughput(watchers: usize) -> f64 {
    let feed = Arc::new(Feed::default());
    let url = start(Arc::clone(&feed)).await;
    let connected = Arc::new(tokio::sync::Barrier::new(watchers + 1));
    let progress = Arc::new(Notify::new());
    let counters: Vec<Arc<AtomicU64>> = (0..watchers).map(|_| Arc::default()).collect();
    for counter in &counters {
        tokio::spawn(watch(
            url.clone(),
            Arc::clone(counter),
            Arc::clone(&progress),
            None,
            Instant::now(),
            Arc::clone(&connected),
        ));
    }
    connected.wait().await;
    let begun = Instant::now();
    let mut published = 0;
    while published < EVENTS {
        for _ in 0..BURST {
            feed.publish(&delta(format!(" word{published}")));
            published += 1;
        }
        // Wait until every watcher is within one burst of the publisher.
        loop {
            let notified = progress.notified();
            let slowest = counters.iter().map(|c| c.load(Ordering::Relaxed)).min();
            if slowest.unwrap_or(0) + BURST >= published {
                break;
            }
            notified.await;
        }
    }
    loop {
        let notified = progress.notified();
        if counters.iter().all(|c| c.load(Ordering::Relaxed) >= EVENTS) {
            break;
        }
        notified.await;
    }
    EVENTS as f64 / begun.elapsed().as_secs_f64()
}

async fn latency() -> (Duration, Duration, Duration) {
    let feed = Arc::new(Feed::default());
    let url = start(Arc::clone(&feed)).await;
    let connected = Arc::new(tokio::sync::Barrier::new(2));
    let latencies = Arc::new(std::sync::Mutex::new(Vec::with_capacity(SAMPLES)));
    let origin = Instant::now();
    tokio::spawn(watch(
        url,
        Arc::default(),
        Arc::new(Notify::new()),
        Some(Arc::clone(&latencies)),
        origin,
        Arc::clone(&connected),
    ));
    connected.wait().await;
    let mut ticker = tokio::time::interval(PACE);
    for _ in 0..SAMPLES {
        ticker.tick().await;
        feed.publish(&delta(origin.elapsed().as_nanos().to_string()));
    }
    while latencies.lock().unwrap().len() < SAMPLES {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut all = latencies.lock().unwrap().clone();
    all.sort();
    let at = |q: f64| all[((all.len() - 1) as f64 * q) as usize];
    (at(0.5), at(0.99), at(1.0))
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        for watchers in [1, 10] {
            let rates: Vec<f64> = (0..3).map(|_| 0.0).collect();
            let mut rates = rates;
            for rate in rates.iter_mut() {
                *rate = throughput(watchers).await;
            }
            rates.sort_by(f64::total_cmp);
            println!(
                "{watchers:>2} watcher(s): {:.0} events/s to each (median of 3; {:.0}..{:.0})",
                rates[1], rates[0], rates[2]
            );
        }
        let (p50, p99, max) = latency().await;
        println!(
            "added latency publish -> watcher, {SAMPLES} events paced {PACE:?}: p50 {p50:?}, p99 {p99:?}, max {max:?}"
        );
    });
}
