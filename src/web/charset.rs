//! The text of a fetched page in the encoding it was written in: a byte-order mark first, then
//! the `charset` of the `Content-Type` header, then (HTML only) a `<meta charset>` or
//! `<meta http-equiv="Content-Type" content="…; charset=…">` in the first 1024 bytes, else
//! UTF-8. This is the order the WHATWG encoding sniffing algorithm uses, with `encoding_rs`
//! mapping the labels (so `latin1` and `iso-8859-1` are windows-1252, as browsers read them).
//! Bytes that do not fit the encoding become U+FFFD, never an error.

use encoding_rs::{Encoding, UTF_8};

/// How far into an HTML page a `<meta>` charset is looked for (the WHATWG prescan's limit).
const PRESCAN_BYTES: usize = 1024;

/// `body` decoded; `content_type` is the header as sent (any case), `html` whether the body is
/// HTML (only then is a `<meta>` consulted).
pub fn decode(body: &[u8], content_type: &str, html: bool) -> String {
    let encoding = Encoding::for_bom(body)
        .map(|(encoding, _)| encoding)
        .or_else(|| header_charset(content_type))
        .or_else(|| if html { meta_charset(body) } else { None })
        .unwrap_or(UTF_8);
    // `decode` strips a BOM of the encoding it was given and replaces malformed sequences.
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// The encoding named by a `Content-Type` value's `charset` parameter.
fn header_charset(content_type: &str) -> Option<&'static Encoding> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        label(value.trim().trim_matches(|c| c == '"' || c == '\''))
    })
}

/// A label as the WHATWG encoding standard reads it. A page that claims UTF-16 in a `<meta>` is
/// ASCII-compatible bytes, so the standard reads it as UTF-8; the same is done here.
fn label(value: &str) -> Option<&'static Encoding> {
    let encoding = Encoding::for_label(value.as_bytes())?;
    Some(encoding.output_encoding())
}

/// The charset a `<meta>` tag of the page's first bytes declares.
fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = &body[..body.len().min(PRESCAN_BYTES)];
    let mut at = 0;
    while let Some(start) = find(&head[at..], b"<meta") {
        let tag_start = at + start + b"<meta".len();
        // `<metadata>` is not a meta tag: the name must end here.
        if head
            .get(tag_start)
            .is_some_and(|b| !b.is_ascii_whitespace() && *b != b'/')
        {
            at = tag_start;
            continue;
        }
        let attributes = attributes(&head[tag_start..]);
        let get = |name: &str| {
            attributes
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        };
        if let Some(charset) = get("charset").and_then(label) {
            return Some(charset);
        }
        let is_content_type =
            get("http-equiv").is_some_and(|v| v.trim().eq_ignore_ascii_case("content-type"));
        if is_content_type && let Some(charset) = get("content").and_then(content_charset) {
            return Some(charset);
        }
        at = tag_start;
    }
    None
}

/// The charset of a `content="text/html; charset=…"` value.
fn content_charset(content: &str) -> Option<&'static Encoding> {
    let lower = content.to_ascii_lowercase();
    let after = &content[lower.find("charset")? + "charset".len()..];
    let value = after.trim_start().strip_prefix('=')?.trim_start();
    let value = value.trim_start_matches(['"', '\'']);
    let end = value
        .find(|c: char| c == ';' || c == '"' || c == '\'' || c.is_whitespace())
        .unwrap_or(value.len());
    label(&value[..end])
}

/// The attributes of a tag whose name has been read, up to its `>`: `name=value`,
/// `name="value"`, `name='value'` or a bare `name`. Names are lower-cased.
fn attributes(bytes: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut i = 0;
    let skip_space = |i: &mut usize| {
        while bytes
            .get(*i)
            .is_some_and(|b| b.is_ascii_whitespace() || *b == b'/')
        {
            *i += 1;
        }
    };
    loop {
        skip_space(&mut i);
        match bytes.get(i) {
            None | Some(b'>') => return out,
            _ => {}
        }
        let name_start = i;
        while bytes
            .get(i)
            .is_some_and(|b| !b.is_ascii_whitespace() && !matches!(b, b'=' | b'>' | b'/'))
        {
            i += 1;
        }
        let name = String::from_utf8_lossy(&bytes[name_start..i]).to_ascii_lowercase();
        while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        let mut value = String::new();
        if bytes.get(i) == Some(&b'=') {
            i += 1;
            while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
                i += 1;
            }
            let value_start;
            let value_end;
            match bytes.get(i) {
                Some(quote @ (b'"' | b'\'')) => {
                    value_start = i + 1;
                    let Some(len) = bytes[value_start..].iter().position(|b| b == quote) else {
                        return out;
                    };
                    value_end = value_start + len;
                    i = value_end + 1;
                }
                _ => {
                    value_start = i;
                    while bytes
                        .get(i)
                        .is_some_and(|b| !b.is_ascii_whitespace() && *b != b'>')
                    {
                        i += 1;
                    }
                    value_end = i;
                }
            }
            value = String::from_utf8_lossy(&bytes[value_start..value_end]).into_owned();
        }
        if name.is_empty() {
            // A stray `=` or similar: step over it rather than loop.
            i += 1;
        } else {
            out.push((name, value));
        }
    }
}

/// The first position of `needle` in `haystack`, ignoring ASCII case.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_wins_over_the_meta_and_a_bom_over_both() {
        let latin1 = b"<meta charset=\"shift_jis\"><p>caf\xe9</p>";
        assert!(decode(latin1, "text/html; charset=ISO-8859-1", true).contains("café"));
        let bom = b"\xef\xbb\xbf<p>caf\xc3\xa9</p>";
        assert!(decode(bom, "text/html; charset=iso-8859-1", true).contains("café"));
    }

    #[test]
    fn meta_forms_are_read_and_look_alikes_are_not() {
        let page = |head: &str| {
            let mut bytes = head.as_bytes().to_vec();
            bytes.extend_from_slice(b"<p>caf\xe9</p>");
            decode(&bytes, "text/html", true)
        };
        assert!(page("<META CHARSET=latin1>").contains("café"));
        assert!(page("<meta charset='windows-1252'/>").contains("café"));
        assert!(
            page("<meta http-equiv=\"Content-Type\" content=\"text/html; charset=ISO-8859-1\">")
                .contains("café")
        );
        // Not a meta tag, and a charset in a content without http-equiv: UTF-8, bad byte replaced.
        assert!(page("<metadata charset=latin1>").contains("caf\u{fffd}"));
        assert!(page("<meta content=\"charset=latin1\">").contains("caf\u{fffd}"));
        assert!(page("<meta charset=no-such-encoding>").contains("caf\u{fffd}"));
    }

    #[test]
    fn plain_text_ignores_meta_like_text_and_defaults_to_utf8() {
        let body = "<meta charset=latin1> café".as_bytes();
        assert_eq!(
            decode(body, "text/plain", false),
            "<meta charset=latin1> café"
        );
    }

    #[test]
    fn a_meta_past_the_first_1024_bytes_is_not_read() {
        let mut body = vec![b' '; PRESCAN_BYTES];
        body.extend_from_slice(b"<meta charset=latin1>caf\xe9");
        assert!(decode(&body, "text/html", true).contains("caf\u{fffd}"));
    }
}
