//! `web_fetch`: one http(s) page, bounded in size and time, as Markdown. Before every
//! connection (the first and each redirect) the host is resolved once, every address it
//! resolves to is checked against the refused table (`address`), and the request is pinned to
//! exactly those addresses (`resolve_to_addrs`), so no second lookup can swap them (DNS
//! rebinding). No proxy is used: a proxy would resolve the name itself. Redirects are followed
//! on the same host only (up to five); a redirect to another host is not followed but handed
//! back to the model, so its own `web_fetch` call is approved for that domain.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use url::{Host, Url};

use super::address::refused;
use super::{charset, html};
use crate::schema::{ToolKind, fence_outside};
use crate::tools::{Tool, ToolContext, ToolError, parse_args};

/// Redirects followed before giving up.
const MAX_REDIRECTS: usize = 5;
/// The most of a body read; past it the rest is dropped and the result says so.
pub const MAX_BYTES: usize = 5 * 1024 * 1024;
const DEFAULT_CHARS: usize = 20_000;
const MAX_CHARS: usize = 100_000;

/// Which addresses may be reached.
#[derive(Debug, Clone, Default)]
pub struct AddressPolicy {
    /// Every address passes (the user's `web.allow_private`).
    pub allow_private: bool,
    /// Exact socket addresses that pass although refused (for embedders' and tests' own local
    /// servers; nothing in the settings sets it).
    pub exempt: Vec<SocketAddr>,
}

impl AddressPolicy {
    fn check(&self, address: SocketAddr) -> Result<(), String> {
        if self.allow_private || self.exempt.contains(&address) {
            return Ok(());
        }
        match refused(address.ip()) {
            Some(why) => Err(format!(
                "{} is a {why} address, which `web_fetch` does not reach (a guard against \
                 requests to this machine or its network; the user can set \"web\": \
                 {{\"allow_private\": true}} in their own settings.json)",
                address.ip()
            )),
            None => Ok(()),
        }
    }
}

/// The tool.
pub struct WebFetch {
    policy: AddressPolicy,
    timeout: Duration,
    max_bytes: usize,
}

impl WebFetch {
    pub fn new(policy: AddressPolicy) -> Self {
        WebFetch {
            policy,
            timeout: Duration::from_secs(30),
            max_bytes: MAX_BYTES,
        }
    }

    /// The whole fetch's time bound (30 s by default).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The body's size bound (5 MB by default).
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }
}

#[derive(Deserialize)]
struct Args {
    url: String,
    max_chars: Option<usize>,
}

/// The URL's host as rules name it (`web_fetch(domain:docs.rs)`), for a URL that parses.
pub fn domain_of(arguments: &Value) -> Option<String> {
    let url = Url::parse(arguments.get("url")?.as_str()?).ok()?;
    url.host_str().map(str::to_ascii_lowercase)
}

#[async_trait]
impl Tool for WebFetch {
    fn name(&self) -> &'static str {
        "web_fetch"
    }

    fn description(&self) -> &'static str {
        "Fetch one http(s) URL and return its main content as Markdown (HTML converted, text \
         passed through, other types only named). Follows up to 5 redirects on the same host; \
         a redirect elsewhere is reported so you can fetch it. Pages on this machine or a \
         private network are refused. Use `max_chars` to bound the result (default 20000)."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "an http:// or https:// URL"},
                "max_chars": {"type": "integer", "minimum": 1,
                              "description": "the most characters returned (default 20000)"}
            },
            "required": ["url"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Network
    }

    fn domain(&self, arguments: &Value) -> Option<String> {
        domain_of(arguments)
    }

    fn bounds_own_output(&self) -> bool {
        true
    }

    async fn execute(&self, arguments: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: Args = parse_args(arguments)?;
        let url = Url::parse(&args.url)
            .map_err(|e| ToolError::new(format!("`{}` is not a URL: {e}", args.url)))?;
        let max_chars = args.max_chars.unwrap_or(DEFAULT_CHARS).min(MAX_CHARS);
        let work = self.fetch(url, max_chars);
        tokio::select! {
            _ = ctx.cancel.cancelled() => Err(ToolError::new("the fetch was interrupted")),
            outcome = tokio::time::timeout(self.timeout, work) => outcome.unwrap_or_else(|_| {
                Err(ToolError::new(format!(
                    "the fetch took longer than {} s and was stopped",
                    self.timeout.as_secs_f32()
                )))
            }),
        }
    }
}

impl WebFetch {
    async fn fetch(&self, start: Url, max_chars: usize) -> Result<String, ToolError> {
        let mut url = start;
        for _ in 0..=MAX_REDIRECTS {
            let response = self.request(&url).await?;
            let status = response.status();
            if status.is_redirection() {
                let target = redirect_target(&url, &response)?;
                if target.host_str() != url.host_str() {
                    // An address host needs no lookup: a refused one is said so at once.
                    if let (Some(ip), Some(port)) =
                        (ip_host(&target), target.port_or_known_default())
                    {
                        self.check_all(&target, &[SocketAddr::new(ip, port)])?;
                    }
                    return Ok(format!(
                        "{url} redirects to another host: {target}\nCall `web_fetch` with that \
                         URL to read it (it is checked and approved for its own domain)."
                    ));
                }
                url = target;
                continue;
            }
            return self.read(url, response, max_chars).await;
        }
        Err(ToolError::new(format!(
            "{url}: more than {MAX_REDIRECTS} redirects; not followed further"
        )))
    }

    /// One request to `url`, pinned to the addresses checked for its host.
    async fn request(&self, url: &Url) -> Result<reqwest::Response, ToolError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::new(format!(
                "{url}: only http:// and https:// URLs can be fetched"
            )));
        }
        let port = url
            .port_or_known_default()
            .ok_or_else(|| ToolError::new(format!("{url}: no port")))?;
        let mut builder = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!(
                "harness9/",
                env!("CARGO_PKG_VERSION"),
                " (web_fetch)"
            ));
        match url.host() {
            Some(Host::Ipv4(v4)) => {
                self.check_all(url, &[SocketAddr::new(IpAddr::V4(v4), port)])?
            }
            Some(Host::Ipv6(v6)) => {
                self.check_all(url, &[SocketAddr::new(IpAddr::V6(v6), port)])?
            }
            Some(Host::Domain(domain)) => {
                let addresses: Vec<SocketAddr> = tokio::net::lookup_host((domain, port))
                    .await
                    .map_err(|e| ToolError::new(format!("{url}: cannot resolve {domain}: {e}")))?
                    .collect();
                if addresses.is_empty() {
                    return Err(ToolError::new(format!("{url}: {domain} has no address")));
                }
                self.check_all(url, &addresses)?;
                builder = builder.resolve_to_addrs(domain, &addresses);
            }
            None => return Err(ToolError::new(format!("{url}: the URL names no host"))),
        }
        let client = builder
            .build()
            .map_err(|e| ToolError::new(format!("cannot set up the HTTP client: {e}")))?;
        client
            .get(url.clone())
            .send()
            .await
            .map_err(|e| ToolError::new(format!("{url}: the request failed: {e}")))
    }

    /// Every address must pass: one refused address refuses the host (a name that resolves
    /// to both a public and a private address is the shape of a rebinding attack).
    fn check_all(&self, url: &Url, addresses: &[SocketAddr]) -> Result<(), ToolError> {
        for address in addresses {
            self.policy
                .check(*address)
                .map_err(|why| ToolError::new(format!("{url} refused: {why}")))?;
        }
        Ok(())
    }

    async fn read(
        &self,
        url: Url,
        response: reqwest::Response,
        max_chars: usize,
    ) -> Result<String, ToolError> {
        let status = response.status();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let (body, cut) = self.body(response).await?;
        if !status.is_success() {
            let preview: String = String::from_utf8_lossy(&body).chars().take(500).collect();
            return Err(ToolError::new(format!(
                "{url} answered HTTP {status}{}",
                if preview.trim().is_empty() {
                    String::new()
                } else {
                    format!(
                        ":\n{}",
                        fence_outside(&format!("web_fetch {url}"), preview.trim())
                    )
                }
            )));
        }
        let mime = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_owned();
        let textual = mime.starts_with("text/")
            || matches!(
                mime.as_str(),
                "application/json" | "application/xml" | "application/javascript"
            )
            || mime.ends_with("+json")
            || mime.ends_with("+xml");
        let is_html = mime == "text/html" || mime == "application/xhtml+xml";
        if !is_html && !textual && !mime.is_empty() {
            return Ok(format!(
                "{url}: {mime}, {} bytes{}; not text, so not shown",
                body.len(),
                if cut { " or more" } else { "" }
            ));
        }
        let head = String::from_utf8_lossy(&body[..body.len().min(1024)]);
        let is_html = is_html || (mime.is_empty() && looks_like_html(&head));
        // In the page's own encoding (header, BOM, `<meta charset>`), not assumed UTF-8.
        let text = charset::decode(&body, &content_type, is_html);
        let (title, content) = if is_html {
            let page = url.to_string();
            // Parsing a large page is CPU work: off the async threads.
            crate::tools::blocking(move || html::to_markdown(&text, &page)).await?
        } else {
            (None, text)
        };
        let mut out = format!("URL: {url}\n");
        if cut {
            out.push_str(&format!(
                "(only the first {} bytes were downloaded)\n",
                self.max_bytes
            ));
        }
        // The page's words, its title included, are fenced as data (issue 29 point 15).
        let mut page = String::new();
        if let Some(title) = title {
            page.push_str(&format!("Title: {title}\n\n"));
        }
        let total = content.chars().count();
        page.extend(content.chars().take(max_chars));
        out.push_str(&fence_outside(&format!("web_fetch {url}"), &page));
        if total > max_chars {
            out.push_str(&format!(
                "\n\n[cut at {max_chars} of {total} characters; ask with a larger max_chars \
                 for more]"
            ));
        }
        Ok(out)
    }

    /// The body, at most `max_bytes` of it, and whether more was left unread.
    async fn body(&self, response: reqwest::Response) -> Result<(Vec<u8>, bool), ToolError> {
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk =
                chunk.map_err(|e| ToolError::new(format!("reading the body failed: {e}")))?;
            let room = self.max_bytes - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                return Ok((body, true));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((body, false))
    }
}

fn ip_host(url: &Url) -> Option<IpAddr> {
    match url.host()? {
        Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
        Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
        Host::Domain(_) => None,
    }
}

fn looks_like_html(text: &str) -> bool {
    let head: String = text
        .chars()
        .take(512)
        .collect::<String>()
        .to_ascii_lowercase();
    head.contains("<html") || head.contains("<!doctype html")
}

fn redirect_target(url: &Url, response: &reqwest::Response) -> Result<Url, ToolError> {
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| {
            ToolError::new(format!(
                "{url} answered HTTP {} without a Location",
                response.status()
            ))
        })?;
    url.join(location)
        .map_err(|e| ToolError::new(format!("{url} redirects to `{location}`, not a URL: {e}")))
}
