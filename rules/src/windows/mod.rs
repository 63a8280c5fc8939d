//! Windows builds, image → OS/build classification, and host/container compatibility.
//!
//! * [`builds`]: [`WindowsVersion`] (node labels, kernelVersion, image `os.version`) and the table of Windows
//!   builds and their base-image tags (kubernetes-windows-rules.md §5.1, §5.4, §6).
//! * [`os`]: the two operating systems, [`Os`], spelt exactly as `spec.os.name` and `kubernetes.io/os` spell
//!   them (kubernetes-windows-rules.md §1.1).
//! * [`reference`](mod@reference): the image reference grammar and its normalization ([`parse_image_ref`], [`ImageRef`]).
//! * [`image_rules`]: the settings' [`ImageRule`]s, an operator's globs for their own images (docs/settings.md).
//! * `known_images` (private): the built-in tables of Microsoft, multi-OS and well-known Linux-only images, and the
//!   tag vocabulary they are read with (kubernetes-windows-rules.md §6).
//! * [`classify`]: what an image reference says about its OS and Windows build ([`classify_image`]): the
//!   image rules first, then the tables.
//! * [`manifest`]: what an image's manifest (index or configuration) says about its OS and build
//!   ([`class_from_manifest`]), read alike by the policy, the CLI and the server.
//! * [`os_features`]: which Windows entries of an image index containerd picks by their `os.features`
//!   (`win32k` ignored since containerd 2.3, kubernetes-windows-rules.md §5.5.2).
//! * [`provenance`]: where an image's OS and build came from (name, manifest, settings), as the dashboard
//!   shows it ([`ImageProvenance`]).
//! * [`compat`]: which host builds run which image builds — hcsshim's `CheckHostAndContainerCompat` exactly
//!   (kubernetes-windows-rules.md §5.3), where containerd's 2026 rule for hosts past the newest LTSC disagrees
//!   (§5.5), and HostProcess containers, which need no build match (kubernetes-windows-rules.md §2.2).
//!
//! ```
//! use winplace_rules::windows::{classify_image, hosts_for_images, LTSC_BUILDS};
//! let image = classify_image("mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022", &[]);
//! assert_eq!(hosts_for_images(image.os.builds(), LTSC_BUILDS), vec![20348, 26100]);
//! ```

pub mod builds;
pub mod classify;
pub mod compat;
pub mod image_rules;
pub(crate) mod known_images;
pub mod manifest;
pub mod os;
pub mod os_features;
pub mod provenance;
pub mod reference;

pub use builds::{
    BUILDS, BuildInfo, Channel, InvalidWindowsVersion, LTSC_BUILDS, WindowsVersion, build_display,
    build_for_tag, build_info,
};
pub use classify::{ImageClass, ImageOs, ImageSource, classify_image};
pub use compat::{
    Compatibility, Isolation, compatibility, compatibility_of_builds, host_runs_container,
    host_runs_image, host_runs_image_build, hosts_for_images, runnable_image_builds,
};
pub use image_rules::{ImageRule, glob_match};
pub use manifest::class_from_manifest;
pub use os::{InvalidOs, Os};
pub use provenance::{ImageProvenance, Provenance};
pub use reference::{ImageRef, parse_image_ref};
