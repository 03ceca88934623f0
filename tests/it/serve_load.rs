//! Issue 29 point 11: `harness9 serve` under slowloris. Hundreds of connections that send half
//! a request header and hold on do not keep `/health` from answering, and every one of them is
//! closed: those over the per-client cap at once, the others after the header read timeout.

use std::net::SocketAddr;
use std::time::Duration;

use reqwest::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::serve_client::Server;
use crate::support::{MockLlm, PATIENCE};

/// Connections the attacker opens.
const HALF_OPEN: usize = 300;

/// A connection from `source` (another loopback address than the checker's) that sends half
/// a request header.
async fn half_open(server: SocketAddr, source: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket
        .bind(format!("{source}:0").parse().expect("address"))
        .expect("bind");
    let mut stream = socket.connect(server).await.expect("connect");
    // The listener may already have closed it (over the cap): the write may fail, never hang.
    let _ = stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .await;
    stream
}

/// Waits until the server closes `stream` (end of stream or a reset).
async fn closed(mut stream: TcpStream) {
    let mut buf = [0u8; 256];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// `serve` with the header timeout (ms) and the caps given, and its address.
fn start(mock: &MockLlm, timeout_ms: &str, total: &str, per_client: &str) -> (Server, SocketAddr) {
    let server = Server::start(
        mock,
        &[
            "--header-timeout-ms",
            timeout_ms,
            "--max-connections",
            total,
            "--max-connections-per-client",
            per_client,
        ],
        &[],
    );
    let address = server
        .url
        .trim_start_matches("http://")
        .parse()
        .expect("the listen address");
    (server, address)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_headers_neither_block_health_nor_stay_open() {
    let mock = MockLlm::start().await;
    let (server, address) = start(&mock, "1000", "100", "20");
    let mut attackers = Vec::new();
    for _ in 0..HALF_OPEN {
        attackers.push(half_open(address, "127.0.0.2").await);
    }
    // The server still answers another client.
    let health = tokio::time::timeout(PATIENCE, server.request("GET", "/health", None))
        .await
        .expect("/health answers while the half-open connections wait");
    assert_eq!(health.0, StatusCode::OK);
    // Every half-open connection is closed by the server: the test waits for each close, with
    // a bound far above the timeout as a failsafe only.
    let all_closed = futures_util::future::join_all(attackers.into_iter().map(closed));
    tokio::time::timeout(Duration::from_secs(30), all_closed)
        .await
        .expect("the half-open connections are closed after the header read timeout");
}

/// Issue 29 point 11's gap: half-sent requests from many addresses (each under the per-client
/// cap) filled the total cap, and every new client was closed at once until the header read
/// timeout freed slots. At the total cap the oldest connection still sending its header is
/// closed to make room: `/health` from a new client answers at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_headers_from_many_addresses_do_not_lock_out_a_new_client() {
    let mock = MockLlm::start().await;
    // A header timeout far longer than the test: only making room can let the new client in.
    let (server, address) = start(&mock, "600000", "60", "10");
    let mut attackers = Vec::new();
    for client in 2..12 {
        for _ in 0..10 {
            attackers.push(half_open(address, &format!("127.0.0.{client}")).await);
        }
    }
    let health = tokio::time::timeout(PATIENCE, server.request("GET", "/health", None))
        .await
        .expect("/health answers while half-open connections fill the server");
    assert_eq!(health.0, StatusCode::OK);
    // The oldest half-open connection was closed to make room.
    tokio::time::timeout(PATIENCE, closed(attackers.remove(0)))
        .await
        .expect("the oldest half-open connection is closed");
}
