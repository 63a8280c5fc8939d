//! The headers every answer of the server carries, from the main listener, the probe listener and a
//! connection refused past the limit alike: one list, below everything that answers.

use axum::Router;
use axum::http::{HeaderName, HeaderValue, header};
use tower_http::set_header::SetResponseHeaderLayer;

/// What the dashboard may load: its own scripts and wasm (`'wasm-unsafe-eval'` lets it compile
/// WebAssembly, nothing else), inline styles (Leptos sets `style` attributes), no framing.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; \
style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; \
base-uri 'none'; form-action 'self'";

/// The headers every answer carries, whoever produced it (a handler, an error layer, the `Host` check,
/// the router's 404 and 405, the probe listener, a connection refused past the limit):
/// the Content-Security-Policy, no MIME sniffing, no framing, no referrer, its own browsing context
/// group, and `Cross-Origin-Resource-Policy: same-origin` so that no other site's page can load an
/// answer (the API's JSON included) as a resource.
pub static SECURITY_HEADERS: [(HeaderName, &str); 6] = [
    (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::X_FRAME_OPTIONS, "DENY"),
    (header::REFERRER_POLICY, "no-referrer"),
    (
        HeaderName::from_static("cross-origin-opener-policy"),
        "same-origin",
    ),
    (
        HeaderName::from_static("cross-origin-resource-policy"),
        "same-origin",
    ),
];

/// `router` with [`SECURITY_HEADERS`] on every answer (a header a handler set is kept).
pub fn with_security_headers<S: Clone + Send + Sync + 'static>(router: Router<S>) -> Router<S> {
    SECURITY_HEADERS
        .iter()
        .fold(router, |router, (name, value)| {
            router.layer(SetResponseHeaderLayer::if_not_present(
                name.clone(),
                HeaderValue::from_static(value),
            ))
        })
}
