//! One line of pasted or logged text, made readable: at most [`MAX_LINE`] bytes, any bytes (binary junk
//! becomes U+FFFD), terminal colour codes (ANSI escape sequences) and other control characters
//! dropped, a trailing `\r` (CRLF files) removed, and JSON string escapes (`\"`, `\\`, `\u003c`) undone
//! so that `kubectl get events -o json` reads like the message it quotes.

/// The longest line read, in bytes: a longer line is cut there (the messages explained are a few
/// kilobytes at most, with hcsshim's `extra info`), so that a log of one 100 MB line costs no more
/// than a log of many.
pub const MAX_LINE: usize = 64 * 1024;

/// `raw` as text, cleaned into `buf` when it needs cleaning, else borrowed as it is.
pub(crate) fn line<'a>(raw: &'a [u8], buf: &'a mut String) -> &'a str {
    let raw = &raw[..raw.len().min(MAX_LINE)];
    let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let plain = !raw
        .iter()
        .any(|&b| b < 0x20 && b != b'\t' || b == b'\\' || b == 0x7f);
    if plain && let Ok(text) = std::str::from_utf8(raw) {
        return text;
    }
    buf.clear();
    let text = String::from_utf8_lossy(raw);
    clean_into(&text, buf);
    buf
}

/// How many characters `raw` (a line as read, its line end left out) spans as written, escapes and
/// colour codes included: what a console's width counts.
pub(crate) fn width(raw: &[u8]) -> usize {
    let raw = &raw[..raw.len().min(MAX_LINE)];
    let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    raw.iter().filter(|&&b| b & 0xC0 != 0x80).count()
}

/// Copies `text` into `out` without escape sequences and control characters, with JSON escapes undone.
fn clean_into(text: &str, out: &mut String) {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            '\\' => match chars.next() {
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('/') => out.push('/'),
                Some('n' | 't' | 'r') => out.push(' '),
                Some('u') => {
                    let hex: String = (0..4).filter_map(|_| chars.next()).collect();
                    match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                        Some(c) if !c.is_control() => out.push(c),
                        Some(_) => out.push(' '),
                        None => {
                            out.push_str("\\u");
                            out.push_str(&hex);
                        }
                    }
                }
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            },
            '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
}

/// Skips an escape sequence after its ESC: CSI (`ESC [ … final`), OSC (`ESC ] … BEL` or `ESC \`), or
/// one character.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        }
        Some(']') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    chars.next();
                    break;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_lose_colours_crlf_controls_and_json_escapes() {
        let rows: &[(&[u8], &str)] = &[
            (b"plain text\n", "plain text"),
            (b"crlf line\r\n", "crlf line"),
            (
                b"\x1b[31mWarning\x1b[0m  FailedScheduling",
                "Warning  FailedScheduling",
            ),
            (b"\x1b]0;title\x07after", "after"),
            (
                br#""message": "Failed to pull image \"mcr.microsoft.com/a:b\": \u003cnil\u003e""#,
                r#""message": "Failed to pull image "mcr.microsoft.com/a:b": <nil>""#,
            ),
            (b"bin\x00\x01\xff\xfejunk", "bin\u{fffd}\u{fffd}junk"),
            (b"C:\\\\ProgramData\\\\docker", "C:\\ProgramData\\docker"),
        ];
        for (raw, want) in rows {
            let mut buf = String::new();
            assert_eq!(line(raw, &mut buf), *want, "{raw:?}");
        }
    }

    #[test]
    fn a_long_line_is_cut_at_the_cap() {
        let raw = vec![b'a'; MAX_LINE * 3];
        let mut buf = String::new();
        assert_eq!(line(&raw, &mut buf).len(), MAX_LINE);
        // A multi-byte character cut in the middle becomes U+FFFD, never a panic.
        let mut raw = vec![b'a'; MAX_LINE - 1];
        raw.extend("é".as_bytes());
        assert!(line(&raw, &mut buf).ends_with('\u{fffd}'));
    }
}
