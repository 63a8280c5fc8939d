//! Reading a registry's answer with a cap, as containerd reads a referrers index
//! (docs/reference/limits.md §1.1): a `Content-Length` over the cap is refused before a byte of the body
//! is read; a body without one, or longer than it said, is read chunk by chunk and refused as soon as
//! it passes the cap. Nothing over the cap is ever held in memory.

use super::error::ResolveError;

/// The body of `response`, at most `cap` bytes; `what` names it in the error ("the manifest").
///
/// The error is [`ResolveError::TooLarge`] and says "too large", the size announced (or that the
/// stream went past the cap) and the cap.
pub(crate) async fn read_capped(
    mut response: reqwest::Response,
    cap: u64,
    what: &str,
    timeout: std::time::Duration,
) -> Result<Vec<u8>, ResolveError> {
    if let Some(announced) = response.content_length()
        && announced > cap
    {
        return Err(too_large(what, Some(announced), cap));
    }
    let expected = response.content_length().unwrap_or(0).min(cap);
    let mut body = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| ResolveError::from_http(&e, timeout))?
    {
        if body.len() as u64 + chunk.len() as u64 > cap {
            return Err(too_large(what, None, cap));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// "the manifest is 5,000,000 bytes (too large: winplace reads at most 4,194,304)".
pub(crate) fn too_large(what: &str, size: Option<u64>, cap: u64) -> ResolveError {
    let size = match size {
        Some(size) => format!("{what} is {} bytes", thousands(size)),
        None => format!("{what} goes on past {} bytes", thousands(cap)),
    };
    ResolveError::TooLarge(format!(
        "{size} (too large: winplace reads at most {} bytes)",
        thousands(cap)
    ))
}

/// `4194304` → `4,194,304`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_by_thousands() {
        for (n, text) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (4_194_304, "4,194,304"),
        ] {
            assert_eq!(thousands(n), text);
        }
    }

    #[test]
    fn too_large_says_so_with_the_size_and_the_cap() {
        let announced = too_large("the manifest", Some(50_000_000), 4_194_304).to_string();
        assert!(announced.contains("too large"), "{announced}");
        assert!(announced.contains("50,000,000 bytes"), "{announced}");
        assert!(announced.contains("4,194,304"), "{announced}");
        let streamed = too_large("the config blob", None, 10).to_string();
        assert!(streamed.contains("goes on past 10 bytes"), "{streamed}");
    }
}
