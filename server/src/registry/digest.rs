//! Content digests (`sha256:<hex>`, `sha512:<hex>`): a manifest read by digest must hash to that digest,
//! and one whose registry announced a `Docker-Content-Digest` must hash to that (OCI image-spec,
//! "Digests"; distribution-spec, "Pulling manifests").

use sha2::Digest as _;

use super::error::ResolveError;

/// The digest of `bytes` with `algorithm` (`sha256` or `sha512`); `None` for another algorithm.
///
/// ```
/// assert_eq!(
///     winplace::registry::digest::of("sha256", b"").as_deref(),
///     Some("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
/// );
/// ```
pub fn of(algorithm: &str, bytes: &[u8]) -> Option<String> {
    let hex = match algorithm {
        "sha256" => hex(&sha2::Sha256::digest(bytes)),
        "sha512" => hex(&sha2::Sha512::digest(bytes)),
        _ => return None,
    };
    Some(format!("{algorithm}:{hex}"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The digest of a manifest read: checked against the digest its reference pins (`pinned`) and the one
/// the registry announced (`announced`); the error says once which did not match.
pub(crate) fn verify(
    body: &[u8],
    pinned: Option<&str>,
    announced: Option<&str>,
) -> Result<String, ResolveError> {
    let mut digest = None;
    for (expected, who) in [
        (pinned, "the reference pins"),
        (announced, "the registry announced"),
    ] {
        let Some(expected) = expected else { continue };
        let algorithm = expected.split_once(':').map_or("", |(a, _)| a);
        let Some(actual) = of(algorithm, body) else {
            return Err(ResolveError::Registry(format!(
                "the digest {} that {who} uses an algorithm winplace cannot check",
                super::limits::quoted(expected)
            )));
        };
        if !actual.eq_ignore_ascii_case(expected) {
            return Err(ResolveError::Registry(format!(
                "digest mismatch: the manifest read hashes to {actual}, not to {} that {who}",
                super::limits::quoted(expected)
            )));
        }
        digest.get_or_insert(actual);
    }
    Ok(digest.unwrap_or_else(|| of("sha256", body).unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_must_hash_to_what_is_pinned_and_announced() {
        let body = b"{}";
        let good = of("sha256", body).expect("sha256");
        let other = of("sha256", b"other").expect("sha256");
        assert_eq!(verify(body, None, None), Ok(good.clone()));
        assert_eq!(verify(body, Some(&good), Some(&good)), Ok(good.clone()));
        let sha512 = of("sha512", body).expect("sha512");
        assert_eq!(verify(body, None, Some(&sha512)), Ok(sha512));
        let pinned = verify(body, Some(&other), None).expect_err("pinned mismatch");
        let text = pinned.to_string();
        assert!(text.contains("the reference pins"), "{text}");
        // Said once: the expected digest appears one time in the message.
        assert_eq!(text.matches(&other).count(), 1, "{text}");
        let announced = verify(body, Some(&good), Some(&other)).expect_err("announced");
        assert!(announced.to_string().contains("the registry announced"));
        assert!(verify(body, Some("md5:abc"), None).is_err());
    }
}
