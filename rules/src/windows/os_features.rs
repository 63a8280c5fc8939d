//! Which Windows entries of an image index a Windows node's containerd can pick, as far as their
//! `os.features` go (kubernetes-windows-rules.md §5.5.2).
//!
//! containerd 2.3.0 and later (containerd/platforms since #31, 2026-03-30) strip `win32k` from an
//! entry's `os.features` and then require every remaining feature to be among the host matcher's
//! features; the matcher a Windows node builds from `platforms.DefaultSpec()` carries none
//! (`defaults_windows.go` at containerd/platforms `09756f59`). containerd 2.2 and earlier did not read
//! `os.features` at all. winplace reads an index as the newest release does: an entry whose features are
//! only `win32k` (as Microsoft's Server Core images carry it) counts, an entry with any other feature does
//! not (it would not be pulled by containerd 2.3+).
//!
//! ```
//! use winplace_rules::windows::os_features::{features_match, unmatched};
//! assert!(features_match(&[]));
//! assert!(features_match(&["win32k"]));
//! assert!(!features_match(&["win32k", "sse4"]));
//! assert_eq!(unmatched(&["win32k", "sse4"]), ["sse4"]);
//! ```

/// The one feature containerd ignores when it matches a Windows entry (platforms#31).
pub const IGNORED: &str = "win32k";

/// The features of an entry that a Windows host's containerd 2.3+ does not offer: all but the first
/// `win32k` (`windowsStripFeaturesMatcher` deletes one occurrence, `slices.Index` + `slices.Delete`).
pub fn unmatched<'a>(features: &[&'a str]) -> Vec<&'a str> {
    let mut out = features.to_vec();
    if let Some(i) = out.iter().position(|f| *f == IGNORED) {
        out.remove(i);
    }
    out
}

/// Whether a Windows node's containerd 2.3+ can pick an index entry with these `os.features`.
pub fn features_match(features: &[&str]) -> bool {
    unmatched(features).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_win32k_is_ignored() {
        // §5.5.2: the entry's list minus win32k must be a subset of the host's (empty) list.
        let rows: [(&[&str], bool); 6] = [
            (&[], true),
            (&["win32k"], true),
            // One occurrence is stripped; a second must be offered by the host, which offers none.
            (&["win32k", "win32k"], false),
            (&["sse4"], false),
            (&["win32k", "sse4"], false),
            (&["Win32k"], false),
        ];
        for (features, want) in rows {
            assert_eq!(features_match(features), want, "{features:?}");
        }
    }
}
