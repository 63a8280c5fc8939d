//! `GET /api/placements`: what `serve --place` placed and how (docs/placement.md, "The dashboard").

use serde::{Deserialize, Serialize};

/// What the controller did with one gated pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementOutcome {
    /// Pinned (OS, builds, toleration) and ungated.
    Placed,
    /// Ungated with nothing else changed; [`PlacementRow::reason`] says why.
    Released,
}

/// One gated pod the controller finished with, newest first in [`PlacementsResponse::placements`].
///
/// ```
/// use winplace_api::{PlacementOutcome, PlacementRow};
/// let row = PlacementRow {
///     pod: "shop/web-0".into(), at: "2026-11-26T09:00:00Z".into(),
///     images: vec!["registry.example/web:1".into()], outcome: PlacementOutcome::Placed,
///     pins: vec!["nodeSelector kubernetes.io/os: windows".into()], reason: None, note: None,
/// };
/// let json = serde_json::to_value(&row).unwrap();
/// assert_eq!(json["outcome"], "placed");
/// assert!(json.get("reason").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlacementRow {
    /// `namespace/name`.
    pub pod: String,
    /// When (RFC 3339, UTC).
    pub at: String,
    /// The images whose registries were read (the ones whose names left OS or build open).
    pub images: Vec<String>,
    /// Placed or released.
    pub outcome: PlacementOutcome,
    /// What was pinned, one phrase each (`nodeSelector kubernetes.io/os: windows`, the build range,
    /// the toleration); empty when released.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pins: Vec<String>,
    /// Why it was released: `deadline`, a registry error's kind (`unauthorized`, `not-found`, …),
    /// `no-platform`, `refused` or `nothing-to-pin` (the `reason` label of
    /// `winplace_place_released_total`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The Event's note: the sentence the pod's Event carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `GET /api/placements`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlacementsResponse {
    /// The server runs with `--place`.
    pub enabled: bool,
    /// This replica holds the placement Lease (only the holder places).
    pub leading: bool,
    /// The most recent ones, newest first (at most [`RECENT_PLACEMENTS`]).
    pub placements: Vec<PlacementRow>,
}

/// How many placements the server keeps for `GET /api/placements`.
pub const RECENT_PLACEMENTS: usize = 200;
