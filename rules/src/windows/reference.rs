//! The image reference grammar: [`parse_image_ref`] reads `registry/repository[:tag][@digest]` the way
//! Docker and the kubelet do, and normalizes it ([`ImageRef`]).
//!
//! The tables and the settings' image rules match normalized references, so that `nginx`,
//! `docker.io/nginx` and `index.docker.io/library/nginx` are one image, and a mirror is not.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A parsed image reference, normalized like Docker (`nginx` → `docker.io/library/nginx`).
///
/// ```
/// use winplace_rules::windows::parse_image_ref;
/// let r = parse_image_ref("localhost:5000/team/app:1.2").unwrap();
/// assert_eq!((r.registry.as_str(), r.repository.as_str(), r.tag.as_deref()), ("localhost:5000", "team/app", Some("1.2")));
/// assert_eq!(parse_image_ref("nginx").unwrap().to_string(), "docker.io/library/nginx");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ImageRef {
    /// The registry host (and port), `docker.io` when the reference names none.
    pub registry: String,
    /// The repository path, with `library/` added for Docker Hub official images.
    pub repository: String,
    /// The tag, if written (the kubelet pulls `latest` when neither tag nor digest is given).
    pub tag: Option<String>,
    /// The digest, e.g. `sha256:…`, if written.
    pub digest: Option<String>,
}

impl ImageRef {
    /// The tag the kubelet pulls: the written tag, `latest` when neither tag nor digest is written, or `None`
    /// for a digest-only reference.
    pub fn effective_tag(&self) -> Option<&str> {
        match (&self.tag, &self.digest) {
            (Some(tag), _) => Some(tag),
            (None, None) => Some("latest"),
            (None, Some(_)) => None,
        }
    }

    /// A short name for messages: `nginx` for Docker Hub official images, `registry/repository` otherwise.
    pub fn short_name(&self) -> String {
        match self.repository.strip_prefix("library/") {
            Some(name) if self.registry == DOCKER_HUB => name.to_string(),
            _ => format!("{}/{}", self.registry, self.repository),
        }
    }
}

impl fmt::Display for ImageRef {
    /// The normalized reference `registry/repository[:tag][@digest]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

/// The Docker Hub registry, the one a reference without a registry names.
pub(super) const DOCKER_HUB: &str = "docker.io";

/// Parses an image reference with the Docker reference grammar (distribution/reference
/// `ParseNormalizedNamed`) and normalizes it: no registry → `docker.io`, `index.docker.io` → `docker.io`,
/// a one-part Docker Hub name gets `library/`. The registry keeps its letter case; the repository must be
/// lowercase. Returns `None` for anything the kubelet could not pull by that name.
pub fn parse_image_ref(image: &str) -> Option<ImageRef> {
    if image.len() == 64
        && image
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        // Docker refuses a bare 64-hex name: it looks like an image id.
        return None;
    }
    let (rest, digest) = match image.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (image, None),
    };
    if let Some(digest) = digest
        && !valid_digest(digest)
    {
        return None;
    }
    // The tag is the `:` part after the last `/`; a `:` before it is the registry port.
    let last_component = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[last_component..].find(':') {
        Some(i) => {
            let at = last_component + i;
            (&rest[..at], Some(&rest[at + 1..]))
        }
        None => (rest, None),
    };
    if let Some(tag) = tag
        && !valid_tag(tag)
    {
        return None;
    }
    if name.is_empty() || name.len() > 255 {
        return None;
    }
    let (registry, remainder) = match name.split_once('/') {
        Some((first, remainder))
            if first.contains(['.', ':'])
                || first == "localhost"
                || first.bytes().any(|b| b.is_ascii_uppercase()) =>
        {
            (first, remainder)
        }
        _ => (DOCKER_HUB, name),
    };
    if !valid_registry(registry) || !valid_path(remainder) {
        return None;
    }
    let registry = if registry == "index.docker.io" {
        DOCKER_HUB
    } else {
        registry
    };
    let repository = if registry == DOCKER_HUB && !remainder.contains('/') {
        format!("library/{remainder}")
    } else {
        remainder.to_string()
    };
    Some(ImageRef {
        registry: registry.to_string(),
        repository,
        tag: tag.map(str::to_string),
        digest: digest.map(str::to_string),
    })
}

/// `[\w][\w.-]{0,127}`.
fn valid_tag(tag: &str) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = tag.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && word(bytes[0])
        && bytes.iter().all(|&b| word(b) || b == b'.' || b == b'-')
}

/// `algorithm:hex` with `algorithm = [A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*` and 32+ hex digits.
fn valid_digest(digest: &str) -> bool {
    let Some((algorithm, hex)) = digest.split_once(':') else {
        return false;
    };
    let algorithm_ok = algorithm.split(['-', '_', '+', '.']).all(|part| {
        let mut bytes = part.bytes();
        bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
            && bytes.all(|b| b.is_ascii_alphanumeric())
    });
    algorithm_ok && hex.len() >= 32 && hex.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `host[:port]` where host is a DNS name (components of letters, digits and inner hyphens), or `[IPv6]`.
fn valid_registry(registry: &str) -> bool {
    let (host, port) = if let Some(rest) = registry.strip_prefix('[') {
        let Some((ip, after)) = rest.split_once(']') else {
            return false;
        };
        if ip.is_empty() || !ip.bytes().all(|b| b.is_ascii_hexdigit() || b == b':') {
            return false;
        }
        match after {
            "" => return true,
            _ => match after.strip_prefix(':') {
                Some(port) => ("", Some(port)),
                None => return false,
            },
        }
    } else {
        match registry.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (registry, None),
        }
    };
    if let Some(port) = port
        && (port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()))
    {
        return false;
    }
    if registry.starts_with('[') {
        return true;
    }
    !host.is_empty()
        && host.split('.').all(|component| {
            let bytes = component.as_bytes();
            !bytes.is_empty()
                && bytes[0].is_ascii_alphanumeric()
                && bytes[bytes.len() - 1].is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// Path components `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*` joined by `/`.
fn valid_path(path: &str) -> bool {
    path.split('/').all(|component| {
        let bytes = component.as_bytes();
        let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        if bytes.is_empty() || !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
            return false;
        }
        let mut i = 0;
        while i < bytes.len() {
            if alnum(bytes[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && !alnum(bytes[i]) {
                i += 1;
            }
            let separator = &component[start..i];
            let ok = matches!(separator, "." | "_" | "__") || separator.bytes().all(|b| b == b'-');
            if !ok {
                return false;
            }
        }
        true
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_references() {
        // Docker reference grammar and normalization.
        type Row = (
            &'static str,
            &'static str,
            &'static str,
            Option<&'static str>,
            Option<&'static str>,
        );
        let digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let cases: Vec<Row> = vec![
            ("nginx", "docker.io", "library/nginx", None, None),
            (
                "nginx:1.27",
                "docker.io",
                "library/nginx",
                Some("1.27"),
                None,
            ),
            ("docker.io/nginx", "docker.io", "library/nginx", None, None),
            (
                "index.docker.io/library/nginx:1",
                "docker.io",
                "library/nginx",
                Some("1"),
                None,
            ),
            (
                "docker.io/library/nginx:1.27",
                "docker.io",
                "library/nginx",
                Some("1.27"),
                None,
            ),
            (
                "fluent/fluent-bit:3.1",
                "docker.io",
                "fluent/fluent-bit",
                Some("3.1"),
                None,
            ),
            ("localhost/app", "localhost", "app", None, None),
            ("localhost:5000/x", "localhost:5000", "x", None, None),
            (
                "localhost:5000/team/x:v1",
                "localhost:5000",
                "team/x",
                Some("v1"),
                None,
            ),
            (
                "localhost:5000",
                "docker.io",
                "library/localhost",
                Some("5000"),
                None,
            ),
            (
                "myregistry.io:443/a/b/c:tag_1.0-rc",
                "myregistry.io:443",
                "a/b/c",
                Some("tag_1.0-rc"),
                None,
            ),
            ("MyRegistry/app", "MyRegistry", "app", None, None),
            ("[::1]:5000/app:1", "[::1]:5000", "app", Some("1"), None),
            (
                "192.168.1.10:5000/app",
                "192.168.1.10:5000",
                "app",
                None,
                None,
            ),
            (
                "mcr.microsoft.com/windows/servercore:ltsc2022",
                "mcr.microsoft.com",
                "windows/servercore",
                Some("ltsc2022"),
                None,
            ),
            (
                "mcr.microsoft.com/windows/nanoserver:20H2",
                "mcr.microsoft.com",
                "windows/nanoserver",
                Some("20H2"),
                None,
            ),
            (
                "a__b/c-----d/e.f_g",
                "docker.io",
                "a__b/c-----d/e.f_g",
                None,
                None,
            ),
        ];
        for (image, registry, repository, tag, dig) in cases {
            let got = parse_image_ref(image);
            let expected = ImageRef {
                registry: registry.into(),
                repository: repository.into(),
                tag: tag.map(Into::into),
                digest: dig.map(Into::into),
            };
            assert_eq!(got, Some(expected), "{image}");
        }
        let with_digest = format!("nginx@{digest}");
        let r = parse_image_ref(&with_digest);
        assert_eq!(
            r.as_ref().and_then(|r| r.digest.clone()).as_deref(),
            Some(digest)
        );
        assert_eq!(r.as_ref().and_then(|r| r.tag.clone()), None);
        assert_eq!(r.as_ref().and_then(|r| r.effective_tag()), None);
        let both = format!("localhost:5000/app:1.0@{digest}");
        let r = parse_image_ref(&both);
        assert_eq!(
            r.as_ref().map(|r| (r.tag.as_deref(), r.registry.as_str())),
            Some((Some("1.0"), "localhost:5000"))
        );
        assert_eq!(r.map(|r| r.to_string()), Some(both.clone()));
    }

    #[test]
    fn parse_rejects_invalid_references() {
        let long_tag = format!("app:{}", "a".repeat(129));
        let long_name = format!("a/{}", "b".repeat(254));
        let bad = [
            "",
            "NGINX",
            "docker.io/Library/nginx",
            "myregistry.io/App:1",
            "nginx:",
            "nginx:-1",
            "nginx:1:2",
            ":1",
            "/nginx",
            "nginx/",
            "a//b",
            "nginx@",
            "nginx@sha256:abc",
            "nginx@sha256:0123456789abcdef0123456789abcdeg",
            "nginx@:0123456789abcdef0123456789abcdef",
            "-nginx",
            "nginx-",
            "ngi..nx",
            "ngi___nx",
            "ngi nx",
            " nginx",
            "localhost:/app",
            "localhost:50a0/app",
            "my_registry.io/app",
            "-registry.io/app",
            "[zz]:5000/app",
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            long_tag.as_str(),
            long_name.as_str(),
        ];
        for image in bad {
            assert_eq!(parse_image_ref(image), None, "{image:?}");
        }
        assert!(parse_image_ref(&format!("app:{}", "a".repeat(128))).is_some());
    }
}
