//! Registry credentials from a Docker config file (`~/.docker/config.json`, or `--registry-config FILE`),
//! read with the `docker_credential` crate: `auths` entries (`auth` = base64 `user:password`, or
//! `username`/`password`), `credHelpers` and `credsStore` (which run `docker-credential-<name>`).
//!
//! A registry without credentials is accessed anonymously: the client still follows the registry's
//! token challenge (`WWW-Authenticate: Bearer realm=…`), as public registries require. Where the
//! credentials may go is [`super::auth`]'s decision: the registry itself, or its token service over
//! HTTPS (plain HTTP only to a host named with `--insecure-registry`).

use std::path::{Path, PathBuf};

use super::error::SetupError;

/// What the client presents for one registry.
#[derive(Clone, PartialEq, Eq)]
pub enum Auth {
    /// Nothing: anonymous requests and anonymous tokens.
    Anonymous,
    /// A user name and password (or token) from the Docker config.
    Basic {
        /// The user name.
        username: String,
        /// The password; never printed.
        password: String,
    },
}

impl std::fmt::Debug for Auth {
    /// The user name only: a password must not reach a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::Anonymous => f.write_str("Anonymous"),
            Auth::Basic { username, .. } => write!(f, "Basic({username:?}, <hidden>)"),
        }
    }
}

/// The largest Docker config read (real ones are a few KiB).
const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// The Docker config's text, checked to be JSON when loaded; empty when there is none.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    config: Option<Vec<u8>>,
}

/// The key Docker stores Docker Hub's credentials under.
const DOCKER_HUB_KEY: &str = "https://index.docker.io/v1/";

impl Credentials {
    /// No credentials: every registry is accessed anonymously.
    pub fn anonymous() -> Self {
        Credentials::default()
    }

    /// Reads `path`; errors name the file (and the line, for JSON that does not parse).
    pub fn from_file(path: &Path) -> Result<Self, SetupError> {
        let name = path.display().to_string();
        let bytes = crate::bounded_read::read_path(path, MAX_CONFIG_BYTES).map_err(|source| {
            SetupError::ConfigUnreadable {
                path: name.clone(),
                source,
            }
        })?;
        Self::from_bytes(name, bytes)
    }

    /// A Docker config's text (an image pull secret's `.dockerconfigjson`) named `name` in errors.
    pub fn from_bytes(name: String, bytes: Vec<u8>) -> Result<Self, SetupError> {
        if let Err(e) = serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(&bytes)
        {
            return Err(SetupError::ConfigInvalid {
                path: name,
                line: e.line(),
                message: e.to_string(),
            });
        }
        Ok(Credentials {
            config: Some(bytes),
        })
    }

    /// `--registry-config FILE` when given; else Docker's own file (`$DOCKER_CONFIG/config.json`, else
    /// `$HOME/.docker/config.json`) when it exists; else anonymous.
    pub fn load(explicit: Option<&Path>) -> Result<Self, SetupError> {
        if let Some(path) = explicit {
            return Self::from_file(path);
        }
        match default_config_path().filter(|p| p.is_file()) {
            Some(path) => Self::from_file(&path),
            None => Ok(Self::anonymous()),
        }
    }

    /// The credentials for `registry` (a host as in image references: `docker.io`,
    /// `127.0.0.1:5000`); anonymous when the config has none for it.
    pub fn auth_for(&self, registry: &str) -> Auth {
        let Some(config) = &self.config else {
            return Auth::Anonymous;
        };
        let key = if registry == "docker.io" {
            DOCKER_HUB_KEY
        } else {
            registry
        };
        match docker_credential::get_credential_from_reader(config.as_slice(), key) {
            Ok(docker_credential::DockerCredential::UsernamePassword(user, password)) => {
                Auth::Basic {
                    username: user,
                    password,
                }
            }
            Ok(docker_credential::DockerCredential::IdentityToken(_)) => {
                // An OAuth refresh token: winplace does not exchange it, so try anonymously.
                tracing::warn!(
                    registry,
                    "the Docker config holds an identity token for this registry, which winplace cannot use; trying anonymously"
                );
                Auth::Anonymous
            }
            Err(docker_credential::CredentialRetrievalError::NoCredentialConfigured) => {
                Auth::Anonymous
            }
            Err(error) => {
                tracing::warn!(registry, %error, "cannot read the credentials for this registry; trying anonymously");
                Auth::Anonymous
            }
        }
    }
}

/// Where Docker keeps its config: `$DOCKER_CONFIG/config.json`, else `$HOME/.docker/config.json`.
fn default_config_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DOCKER_CONFIG") {
        return Some(PathBuf::from(dir).join("config.json"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".docker").join("config.json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auths_entries_give_basic_credentials_and_others_are_anonymous() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.json");
        // base64("ci:s3cret")
        std::fs::write(
            &path,
            r#"{"auths": {"127.0.0.1:5000": {"auth": "Y2k6czNjcmV0"}, "https://index.docker.io/v1/": {"username": "hub", "password": "pw"}}}"#,
        )
        .expect("write");
        let creds = Credentials::from_file(&path).expect("valid");
        assert_eq!(
            creds.auth_for("127.0.0.1:5000"),
            Auth::Basic {
                username: "ci".into(),
                password: "s3cret".into()
            }
        );
        // Debug output never shows the password.
        assert!(!format!("{:?}", creds.auth_for("127.0.0.1:5000")).contains("s3cret"));
        assert!(
            matches!(creds.auth_for("docker.io"), Auth::Basic { username, .. } if username == "hub")
        );
        assert_eq!(creds.auth_for("ghcr.io"), Auth::Anonymous);
    }

    #[test]
    fn a_bad_config_names_the_file_and_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.json");
        std::fs::write(&path, "{\n  \"auths\": {,}\n}").expect("write");
        let error = Credentials::from_file(&path).expect_err("invalid");
        let text = error.to_string();
        assert!(text.contains("config.json: line 2"), "{text}");
        let missing = Credentials::from_file(&dir.path().join("nope.json")).expect_err("missing");
        assert!(missing.to_string().contains("nope.json"), "{missing}");
    }
}
