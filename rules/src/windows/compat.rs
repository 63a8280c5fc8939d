//! Which Windows hosts can run which Windows container images (kubernetes-windows-rules.md §5.3, §5.5, §2.2).
//!
//! Process isolation follows microsoft/hcsshim `osversion.CheckHostAndContainerCompat` exactly (the same
//! function containerd/platforms uses to pick a manifest entry):
//!
//! * major.minor of host and image must be equal;
//! * a host below Windows Server 2022 (build < 20348) runs only images of exactly its build;
//! * any other host runs images from `L` up to its own build, where `L` is the latest LTSC build in
//!   {20348, 26100} strictly lower than the host's build (20348 if there is none).
//!
//! So Windows Server 2025 runs 2022 and 2025 images, 2022 runs only 2022 images, and 2019 runs only 2019 images.
//! The revision (UBR) never matters.
//!
//! Hosts past the newest LTSC (Windows 11 25H2, 26200) are where the runtimes disagree in 2026
//! (§5.5.1): containerd/platforms v1.0.0-rc.5, on containerd's `main` branch only, starts their range at
//! the LTSC before the newest (20348), while every released containerd 2.1–2.3.x and hcsshim start it at
//! the newest (26100). [`compatibility`] names that disagreement ([`Compatibility::Disputed`]); every
//! yes/no answer here ([`host_runs_image`] and what is built on it) takes the released rule: a pod
//! judged to run there would fail to pull on the containerd every current node runs (§5.5.3).

use serde::{Deserialize, Serialize};

use super::builds::WindowsVersion;

/// The first build with the stable container ABI (Windows Server 2022).
pub(crate) const LTSC2022: u32 = 20348;

/// The LTSC builds that start a range of compatible images, ascending (hcsshim `compatLTSCReleases`).
pub(crate) const COMPAT_LTSC_RELEASES: &[u32] = &[20348, 26100];

/// The newest LTSC of [`COMPAT_LTSC_RELEASES`] (Windows Server 2025).
const NEWEST_LTSC: u32 = 26100;

/// What the container runtimes say about a host running an image with process isolation (§5.3, §5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Compatibility {
    /// Every rule agrees that it runs.
    Runs,
    /// Every rule agrees that it does not.
    Refused,
    /// A host past the newest LTSC and an image from Windows Server 2022 up to before the newest LTSC:
    /// containerd/platforms v1.0.0-rc.5 (containerd `main` since 2026-08-20; containerd 1.7.x and 2.0.x,
    /// whose only LTSC was 20348, agree) picks such an image for the host, containerd 2.1–2.3.x and hcsshim
    /// do not (§5.5.1). winplace counts it as not running (§5.5.3).
    Disputed,
}

/// What the runtimes say about `host` running `image` with process isolation.
///
/// ```
/// use winplace_rules::windows::{compatibility, Compatibility, WindowsVersion};
/// let v = WindowsVersion::new;
/// assert_eq!(compatibility(v(26100), v(20348)), Compatibility::Runs);
/// assert_eq!(compatibility(v(20348), v(17763)), Compatibility::Refused);
/// // Windows 11 25H2 and a Windows Server 2022 image: containerd main pulls it, 2.3.x does not.
/// assert_eq!(compatibility(v(26200), v(20348)), Compatibility::Disputed);
/// ```
pub fn compatibility(host: WindowsVersion, image: WindowsVersion) -> Compatibility {
    if host_runs_image(host, image) {
        Compatibility::Runs
    } else if host.major == image.major
        && host.minor == image.minor
        && host.build > NEWEST_LTSC
        && (LTSC2022..NEWEST_LTSC).contains(&image.build)
    {
        Compatibility::Disputed
    } else {
        Compatibility::Refused
    }
}

/// [`compatibility`] for two builds of Windows 10.0.
pub fn compatibility_of_builds(host_build: u32, image_build: u32) -> Compatibility {
    compatibility(
        WindowsVersion::new(host_build),
        WindowsVersion::new(image_build),
    )
}

/// How a Windows container is isolated from its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Isolation {
    /// Process isolation: the only isolation Kubernetes supports (§5.2).
    Process,
    /// Hyper-V isolation (`runhcs-wcow-hypervisor`): outside Kubernetes' supported matrix.
    HyperV,
    /// A HostProcess container (§2.2): its base image's build need not match the host.
    HostProcess,
}

/// Whether a host runs an image with process isolation (hcsshim `CheckHostAndContainerCompat`, which
/// containerd 2.1–2.3.x apply too): a [`Compatibility::Disputed`] pair does not.
///
/// ```
/// use winplace_rules::windows::{host_runs_image, WindowsVersion};
/// let host_2025 = WindowsVersion::parse("10.0.26100.1742").unwrap();
/// assert!(host_runs_image(host_2025, WindowsVersion::new(20348)));
/// assert!(!host_runs_image(host_2025, WindowsVersion::new(17763)));
/// ```
pub fn host_runs_image(host: WindowsVersion, image: WindowsVersion) -> bool {
    if host.major != image.major || host.minor != image.minor {
        return false;
    }
    if host.build < LTSC2022 {
        return host.build == image.build;
    }
    oldest_image_build(host.build) <= image.build && image.build <= host.build
}

/// [`host_runs_image`] for two builds of Windows 10.0.
pub fn host_runs_image_build(host_build: u32, image_build: u32) -> bool {
    host_runs_image(
        WindowsVersion::new(host_build),
        WindowsVersion::new(image_build),
    )
}

/// The builds of images a host runs with process isolation, as an inclusive range `(oldest, newest)`.
///
/// Below 20348 the range is the host build alone.
pub fn runnable_image_builds(host_build: u32) -> (u32, u32) {
    if host_build < LTSC2022 {
        (host_build, host_build)
    } else {
        (oldest_image_build(host_build), host_build)
    }
}

/// `L` of hcsshim: the latest compat LTSC strictly below the host (20348 when none is).
fn oldest_image_build(host_build: u32) -> u32 {
    COMPAT_LTSC_RELEASES
        .iter()
        .rev()
        .find(|&&ltsc| host_build > ltsc)
        .copied()
        .unwrap_or(LTSC2022)
}

/// Whether a host runs an image under the given isolation.
///
/// * With [`Isolation::Process`], the same as [`host_runs_image`].
/// * With [`Isolation::HyperV`], the same major.minor and image build ≤ host build. Derived: it reproduces every
///   Hyper-V cell of Microsoft's compatibility table (§5.3), for server and client hosts.
/// * With [`Isolation::HostProcess`], always true: HostProcess containers "do not inherit the same compatibility
///   requirements as Windows server containers" (§2.2), so a build-mismatch check must not apply.
pub fn host_runs_container(
    host: WindowsVersion,
    image: WindowsVersion,
    isolation: Isolation,
) -> bool {
    match isolation {
        Isolation::Process => host_runs_image(host, image),
        Isolation::HyperV => {
            host.major == image.major && host.minor == image.minor && image.build <= host.build
        }
        Isolation::HostProcess => true,
    }
}

/// The hosts (from `host_candidates`, in their order, without duplicates) that run every one of
/// `image_builds` with process isolation.
///
/// With no image builds every candidate qualifies. An empty result means no single host build runs all the
/// images (e.g. a 2019 image next to a 2022 image).
///
/// ```
/// use winplace_rules::windows::{hosts_for_images, LTSC_BUILDS};
/// assert_eq!(hosts_for_images(&[20348], LTSC_BUILDS), vec![20348, 26100]);
/// assert!(hosts_for_images(&[17763, 20348], LTSC_BUILDS).is_empty());
/// ```
pub fn hosts_for_images(image_builds: &[u32], host_candidates: &[u32]) -> Vec<u32> {
    let mut hosts: Vec<u32> = Vec::new();
    for &host in host_candidates {
        if hosts.contains(&host) {
            continue;
        }
        if image_builds
            .iter()
            .all(|&image| host_runs_image_build(host, image))
        {
            hosts.push(host);
        }
    }
    hosts
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const WS2016: u32 = 14393;
    const WS2019: u32 = 17763;
    const WS2022: u32 = 20348;
    const WS2025: u32 = 26100;

    #[test]
    fn microsoft_server_table() {
        // §5.3 table: (host, image, hyper-v, process).
        let cases = [
            (WS2025, WS2025, true, true),
            (WS2025, WS2022, true, true),
            (WS2025, WS2019, true, false),
            (WS2025, WS2016, true, false),
            (WS2022, WS2025, false, false),
            (WS2022, WS2022, true, true),
            (WS2022, WS2019, true, false),
            (WS2022, WS2016, true, false),
            (WS2019, WS2022, false, false),
            (WS2019, WS2019, true, true),
            (WS2019, WS2016, true, false),
            (WS2016, WS2022, false, false),
            (WS2016, WS2019, false, false),
            (WS2016, WS2016, true, true),
        ];
        for (host, image, hyperv, process) in cases {
            assert_eq!(
                host_runs_image_build(host, image),
                process,
                "{host} runs {image}"
            );
            let (h, i) = (WindowsVersion::new(host), WindowsVersion::new(image));
            assert_eq!(host_runs_container(h, i, Isolation::Process), process);
            assert_eq!(
                host_runs_container(h, i, Isolation::HyperV),
                hyperv,
                "hyper-v {host} {image}"
            );
            assert!(host_runs_container(h, i, Isolation::HostProcess));
        }
    }

    #[test]
    fn microsoft_client_table() {
        // §5.3 client hosts: (host, image, hyper-v, process). Windows 11 24H2 is 26100, 22H2 is 22621.
        let cases = [
            (26100, WS2025, true, true),
            (22621, WS2022, true, true),
            (22621, WS2019, true, false),
            (22621, WS2016, true, false),
            (19045, WS2022, false, false),
            (19045, WS2019, true, false),
            (19045, WS2016, true, false),
        ];
        for (host, image, hyperv, process) in cases {
            let (h, i) = (WindowsVersion::new(host), WindowsVersion::new(image));
            assert_eq!(
                host_runs_container(h, i, Isolation::Process),
                process,
                "{host} {image}"
            );
            assert_eq!(
                host_runs_container(h, i, Isolation::HyperV),
                hyperv,
                "{host} {image}"
            );
        }
    }

    #[test]
    fn hcsshim_examples() {
        // §5.3: hcsshim test examples and the derived 23H2 range.
        let cases = [
            (WS2025, WS2022, true),
            (WS2025, 22621, true),
            (WS2022, WS2025, false),
            (WS2022, 22621, false),
            (WS2019, WS2022, false),
            (WS2022, WS2019, false),
            (25398, 20347, false),
            (25398, WS2022, true),
            (25398, 22621, true),
            (25398, 25398, true),
            (25398, 25399, false),
            (25398, WS2025, false),
            // A host above 2025 (Windows 11 25H2) starts its range at 26100.
            (26200, WS2022, false),
            (26200, WS2025, true),
            (26200, 26200, true),
            // Below 2022 only the exact build runs, even a newer or older SAC.
            (19042, 19042, true),
            (19042, 19041, false),
            (17134, 16299, false),
        ];
        for (host, image, expected) in cases {
            assert_eq!(
                host_runs_image_build(host, image),
                expected,
                "{host} runs {image}"
            );
        }
    }

    #[test]
    fn major_minor_and_revision() {
        let v = |text: &str| WindowsVersion::parse(text).unwrap_or(WindowsVersion::new(0));
        // Different major or minor never runs (§5.3).
        assert!(!host_runs_image(v("6.3.20348"), v("10.0.20348")));
        assert!(!host_runs_image(v("10.1.20348"), v("10.0.20348")));
        assert!(!host_runs_image(v("10.0.17763"), v("10.1.17763")));
        assert!(!host_runs_container(
            v("10.1.26100"),
            v("10.0.20348"),
            Isolation::HyperV
        ));
        // The revision is ignored.
        assert!(host_runs_image(v("10.0.17763.1879"), v("10.0.17763.437")));
        assert!(host_runs_image(v("10.0.26100.1742"), v("10.0.20348.2762")));
    }

    #[test]
    fn ranges() {
        assert_eq!(runnable_image_builds(WS2019), (WS2019, WS2019));
        assert_eq!(runnable_image_builds(WS2022), (WS2022, WS2022));
        assert_eq!(runnable_image_builds(25398), (WS2022, 25398));
        assert_eq!(runnable_image_builds(WS2025), (WS2022, WS2025));
        assert_eq!(runnable_image_builds(26200), (WS2025, 26200));
    }

    #[test]
    fn hosts_for_image_sets() {
        let hosts = [WS2016, WS2019, WS2022, 25398, WS2025];
        let cases: &[(&[u32], &[u32])] = &[
            (&[], &hosts),
            (&[WS2019], &[WS2019]),
            (&[WS2022], &[WS2022, 25398, WS2025]),
            (&[WS2025], &[WS2025]),
            (&[WS2022, 22621], &[25398, WS2025]),
            (&[WS2019, WS2022], &[]),
            (&[WS2016, WS2016], &[WS2016]),
        ];
        for (images, expected) in cases {
            assert_eq!(
                hosts_for_images(images, &hosts),
                expected.to_vec(),
                "{images:?}"
            );
        }
        assert_eq!(
            hosts_for_images(&[WS2022], &[WS2025, WS2022, WS2025]),
            vec![WS2025, WS2022]
        );
        assert!(hosts_for_images(&[WS2022], &[]).is_empty());
    }

    #[test]
    fn the_runtimes_disagree_only_past_the_newest_ltsc() {
        // §5.5.1's table: (host, image, verdict). containerd main (platforms rc.5) runs 20348…host on a
        // host past 26100; containerd 2.1–2.3.x and hcsshim run 26100…host.
        use Compatibility::{Disputed, Refused, Runs};
        let rows = [
            (26200, WS2022, Disputed),
            (26200, 22621, Disputed),
            (26200, 25398, Disputed),
            (26200, 26099, Disputed),
            (26200, WS2025, Runs),
            (26200, 26200, Runs),
            (26200, 26201, Refused),
            (26200, WS2019, Refused),
            (26200, 20347, Refused),
            // LTSC hosts and those between: all rules agree (hcsshim's matrix).
            (WS2025, WS2022, Runs),
            (WS2025, WS2019, Refused),
            (25398, WS2022, Runs),
            (WS2022, WS2025, Refused),
            (WS2019, WS2019, Runs),
            (WS2019, WS2022, Refused),
        ];
        for (host, image, want) in rows {
            assert_eq!(compatibility_of_builds(host, image), want, "{host} {image}");
            assert_eq!(
                host_runs_image_build(host, image),
                want == Runs,
                "{host} {image}"
            );
        }
        // Other major.minor: refused, never disputed.
        let v = |text: &str| WindowsVersion::parse(text).unwrap_or(WindowsVersion::new(0));
        assert_eq!(compatibility(v("10.1.26200"), v("10.0.20348")), Refused);
    }

    /// The rule restated plainly from Microsoft's prose.
    fn simple_rule(host: u32, image: u32) -> bool {
        if host < 20348 {
            host == image
        } else if host > 26100 {
            (26100..=host).contains(&image)
        } else {
            (20348..=host).contains(&image)
        }
    }

    proptest! {
        #[test]
        fn agrees_with_simple_rule(host in 10000u32..40000, image in 10000u32..40000) {
            prop_assert_eq!(host_runs_image_build(host, image), simple_rule(host, image));
        }

        #[test]
        fn agrees_near_boundaries(
            host in prop::sample::select(vec![14393u32, 17763, 20347, 20348, 20349, 25398, 26099, 26100, 26101, 26200]),
            image in prop::sample::select(vec![14393u32, 17763, 20347, 20348, 20349, 22621, 25398, 26099, 26100, 26101, 26200]),
        ) {
            prop_assert_eq!(host_runs_image_build(host, image), simple_rule(host, image));
        }

        #[test]
        fn hosts_for_images_is_intersection(images in prop::collection::vec(14000u32..27000, 0..4)) {
            let candidates: Vec<u32> = (14000u32..27000).step_by(97).collect();
            let hosts = hosts_for_images(&images, &candidates);
            for host in &candidates {
                let all = images.iter().all(|&i| simple_rule(*host, i));
                prop_assert_eq!(hosts.contains(host), all);
            }
        }
    }
}
