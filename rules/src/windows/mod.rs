//! Windows builds, image → OS/build classification, and host/container compatibility.
//!
//! * [`builds`]: [`WindowsVersion`] (node labels, kernelVersion, image `os.version`) and the table of Windows
//!   builds and their base-image tags (kubernetes-windows-rules.md §5.1, §5.4, §6).
//! * [`images`]: what an image reference says about its OS and Windows build ([`classify_image`]), with the
//!   settings' [`ImageRule`]s first (DESIGN "Images", kubernetes-windows-rules.md §6).
//! * [`compat`]: which host builds run which image builds — hcsshim's `CheckHostAndContainerCompat` exactly
//!   (kubernetes-windows-rules.md §5.3), and HostProcess containers, which need no build match (kubernetes-windows-rules.md §2.2).
//!
//! ```
//! use winplace_rules::windows::{classify_image, hosts_for_images, LTSC_BUILDS};
//! let image = classify_image("mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022", &[]);
//! assert_eq!(hosts_for_images(image.os.builds(), LTSC_BUILDS), vec![20348, 26100]);
//! ```

pub mod builds;
pub mod compat;
pub mod images;

pub use builds::{
    BUILDS, BuildInfo, Channel, InvalidWindowsVersion, LTSC_BUILDS, WindowsVersion, build_display,
    build_for_tag, build_info,
};
pub use compat::{
    Isolation, host_runs_container, host_runs_image, host_runs_image_build, hosts_for_images,
    runnable_image_builds,
};
pub use images::{
    ImageClass, ImageOs, ImageRef, ImageRule, ImageSource, InvalidOs, Os, classify_image,
    glob_match, parse_image_ref,
};
