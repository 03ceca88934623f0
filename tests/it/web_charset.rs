//! `web_fetch` reads a page in the encoding it declares: a Latin-1 page by its `Content-Type`
//! charset, a Shift_JIS page by its `<meta charset>` (and by `http-equiv`), served by an axum
//! server on 127.0.0.1.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::http::header;
use axum::routing::get;
use harness9::planning::{Mode, TodoStore};
use harness9::tools::{Tool, ToolContext};
use harness9::web::{AddressPolicy, WebFetch};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// "Café crème, naïve résumé" in ISO-8859-1.
const LATIN1_TEXT: &[u8] = b"Caf\xe9 cr\xe8me, na\xefve r\xe9sum\xe9";
/// "日本語の文書" in Shift_JIS.
const SJIS_TEXT: &[u8] = b"\x93\xfa\x96{\x8c\xea\x82\xcc\x95\xb6\x8f\x91";

fn page(head: &[u8], text: &[u8]) -> Vec<u8> {
    let mut body = b"<html><head>".to_vec();
    body.extend_from_slice(head);
    body.extend_from_slice(b"<title>T</title></head><body><article><h1>T</h1><p>");
    // Long enough for readability to take it as the main content.
    for _ in 0..6 {
        body.extend_from_slice(text);
        body.extend_from_slice(b" ");
    }
    body.extend_from_slice(b"</p></article></body></html>");
    body
}

async fn serve() -> SocketAddr {
    let router = Router::new()
        .route(
            "/latin1.html",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/html; charset=ISO-8859-1")],
                    page(b"", LATIN1_TEXT),
                )
            }),
        )
        .route(
            "/latin1.txt",
            get(|| async { ([(header::CONTENT_TYPE, "text/plain; charset=latin1")], LATIN1_TEXT) }),
        )
        .route(
            "/sjis-meta.html",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/html")],
                    page(b"<meta charset=\"Shift_JIS\">", SJIS_TEXT),
                )
            }),
        )
        .route(
            "/sjis-equiv.html",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/html")],
                    page(
                        b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=shift_jis\">",
                        SJIS_TEXT,
                    ),
                )
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    address
}

async fn fetch(url: String) -> String {
    let ctx = ToolContext {
        workdir: std::env::temp_dir(),
        cancel: CancellationToken::new(),
        mode: Mode::Default,
        todos: Arc::new(TodoStore::default()),
        read_guard: Default::default(),
        outputs: None,
        editor_files: None,
        editor_terminal: None,
    };
    WebFetch::new(AddressPolicy {
        allow_private: true,
        ..AddressPolicy::default()
    })
    .execute(json!({ "url": url }), &ctx)
    .await
    .expect("fetched")
}

#[tokio::test]
async fn a_latin1_page_is_read_by_its_content_type_charset() {
    let address = serve().await;
    let out = fetch(format!("http://{address}/latin1.html")).await;
    assert!(out.contains("Café crème, naïve résumé"), "{out}");
    assert!(!out.contains('\u{fffd}'), "{out}");
    let out = fetch(format!("http://{address}/latin1.txt")).await;
    assert!(
        out.contains("Café crème, naïve résumé\n[end of data from outside "),
        "{out}"
    );
}

#[tokio::test]
async fn a_shift_jis_page_is_read_by_its_meta_charset() {
    let address = serve().await;
    for path in ["sjis-meta.html", "sjis-equiv.html"] {
        let out = fetch(format!("http://{address}/{path}")).await;
        assert!(out.contains("日本語の文書"), "{path}: {out}");
        assert!(!out.contains('\u{fffd}'), "{path}: {out}");
    }
}
