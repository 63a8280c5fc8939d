//! The playground's whole state in the URL fragment (`#s=…`): JSON, raw DEFLATE, URL-safe base64.
//!
//! Nothing is stored on a server: the link is the state.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use super::eval::ContextChoice;

/// The fragment key: `#s=<payload>`.
const KEY: &str = "s=";

/// Largest state a link may expand to (a hostile link must not exhaust the tab's memory).
const MAX_EXPANDED: usize = 16 * 1024 * 1024;

/// What a shared link reproduces.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Shared {
    /// Format version, for links made by later versions.
    #[serde(rename = "v", default)]
    pub version: u32,
    /// The manifests.
    #[serde(rename = "i", default)]
    pub input: String,
    /// Which cluster context is used.
    #[serde(rename = "c", default)]
    pub context: ContextChoice,
    /// Pasted Nodes and RuntimeClasses.
    #[serde(rename = "k", default, skip_serializing_if = "String::is_empty")]
    pub cluster: String,
    /// Settings as YAML.
    #[serde(rename = "s", default, skip_serializing_if = "String::is_empty")]
    pub settings: String,
}

/// The current format version.
pub const VERSION: u32 = 1;

/// `json` deflated and base64url-encoded (what follows `s=` in a link); the planner's links use it too.
pub fn pack(json: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(json, 9))
}

/// The JSON [`pack`] packed, refusing more than 16 MiB once expanded.
pub fn unpack(payload: &str) -> Result<Vec<u8>, String> {
    let packed = URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .map_err(|e| format!("the shared link is damaged (base64: {e})"))?;
    miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_EXPANDED)
        .map_err(|e| format!("the shared link is damaged (deflate: {e})"))
}

/// The fragment (with its `#`) that reproduces `state`.
pub fn encode(state: &Shared) -> String {
    let json = serde_json::to_vec(state).unwrap_or_default();
    let packed = miniz_oxide::deflate::compress_to_vec(&json, 9);
    format!("#{KEY}{}", URL_SAFE_NO_PAD.encode(packed))
}

/// The state in `fragment` (`#s=…`, with or without the `#`); `Ok(None)` when the fragment holds none.
pub fn decode(fragment: &str) -> Result<Option<Shared>, String> {
    let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
    let Some(payload) = fragment.split('&').find_map(|part| part.strip_prefix(KEY)) else {
        return Ok(None);
    };
    let packed = URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .map_err(|e| format!("the shared link is damaged (base64: {e})"))?;
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_EXPANDED)
        .map_err(|e| format!("the shared link is damaged (deflate: {e})"))?;
    let state: Shared = serde_json::from_slice(&json)
        .map_err(|e| format!("the shared link is damaged (content: {e})"))?;
    if state.version > VERSION {
        return Err(format!(
            "the shared link was made by a newer playground (format {})",
            state.version
        ));
    }
    Ok(Some(state))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_survive_the_round_trip() {
        let rows = [
            Shared {
                version: VERSION,
                ..Shared::default()
            },
            Shared {
                version: VERSION,
                input: "apiVersion: v1\nkind: Pod\n# ünïcödé ✓\n".into(),
                context: ContextChoice::Pasted,
                cluster: "kind: Node\n".into(),
                settings: "mutate: true\n".into(),
            },
            Shared {
                version: VERSION,
                input: "---\n".repeat(10_000),
                context: ContextChoice::Server,
                ..Shared::default()
            },
        ];
        for state in rows {
            let fragment = encode(&state);
            assert!(fragment.starts_with("#s="));
            assert!(
                fragment[1..]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_=".contains(c)),
                "{fragment}"
            );
            assert_eq!(decode(&fragment), Ok(Some(state.clone())));
        }
    }

    #[test]
    fn bad_fragments_say_why() {
        let newer = encode(&Shared {
            version: 99,
            ..Shared::default()
        });
        let rows: [(&str, Result<bool, &str>); 6] = [
            ("", Ok(false)),
            ("#", Ok(false)),
            ("#other=1", Ok(false)),
            ("#s=!!!", Err("base64")),
            ("#s=AAAA", Err("deflate")),
            (&newer, Err("newer playground")),
        ];
        for (fragment, want) in rows {
            match (decode(fragment), want) {
                (Ok(got), Ok(some)) => assert_eq!(got.is_some(), some, "{fragment}"),
                (Err(e), Err(needle)) => assert!(e.contains(needle), "{fragment}: {e}"),
                (got, want) => panic!("{fragment}: got {got:?}, want {want:?}"),
            }
        }
    }
}
