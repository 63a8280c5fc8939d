//! How much the client reads from a registry, whatever it answers (docs/reference/limits.md §1; the
//! user's page is docs/limits.md). Every body is read through [`super::body::read_capped`]: a
//! `Content-Length` over the cap is refused before the body is read, and a body without one (or longer
//! than it said) is cut at the cap.

/// The largest manifest or index read: 4 MiB, what the distribution registry accepts on push
/// (`maxManifestBodySize`) and what the OCI distribution-spec says clients should expect to support;
/// containerd's own cap is a little higher (4,393,216 bytes, `4 * 1048 * 1048`). Real manifests are a
/// few KiB.
pub const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;

/// The largest image config blob read: 4 MiB (a Windows config with a long history is tens of KiB;
/// the distribution registry itself refuses to read more than 4 MiB from storage at once).
pub const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// The most entries of an image index read. An index has one entry per platform (plus, from BuildKit,
/// one attestation manifest per platform); Docker's official images list nine architectures, so with a
/// Windows variant per build real indexes have a few dozen entries (limits.md §1.4). 1,000 is far above
/// any real image, while it keeps what one hostile index can cost (platforms held, builds the rules
/// weigh) small. containerd has no such count: its byte cap alone allows about 25,000 entries.
pub const MAX_INDEX_ENTRIES: usize = 1_000;

/// The largest token-service answer read (a JWT and its expiry: a few KiB).
pub const MAX_TOKEN_BYTES: u64 = 1024 * 1024;

/// The largest error body read from a registry or token service (an error envelope is a few hundred
/// bytes); only its start is quoted.
pub const MAX_ERROR_BYTES: u64 = 64 * 1024;

/// The most characters of a registry's own words quoted in an error (and so in a finding).
pub const MAX_QUOTED_CHARS: usize = 300;

/// Redirects followed per request (blob downloads are redirected to storage; the distribution
/// registry's default client follows 10).
pub const MAX_REDIRECTS: usize = 10;

/// `text` cut to [`MAX_QUOTED_CHARS`] characters, with `…` when it was longer.
///
/// ```
/// let long = "x".repeat(1000);
/// assert_eq!(winplace::registry::limits::quoted(&long).chars().count(), 301);
/// assert_eq!(winplace::registry::limits::quoted("short"), "short");
/// ```
pub fn quoted(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}
