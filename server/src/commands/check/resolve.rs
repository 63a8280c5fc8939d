//! `winplace check --resolve-images`: the registry flags, and checking a file with what the registries
//! say about its images (see [`crate::registry`]). Off by default, so that checks stay offline and
//! deterministic (CI).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use winplace_rules::{Checker, Finding, ParseError};

use crate::registry::{
    self, BlockingResolver, Credentials, DiskCache, RegistryOptions, SetupError,
};

/// The registry flags of `winplace check`.
#[derive(Debug, Clone, Args)]
pub struct ResolveArgs {
    /// Read the manifests of images whose name tells neither their OS nor their Windows build (private
    /// images, floating tags) from their registries, and judge them by what the manifests say.
    #[arg(long)]
    pub resolve_images: bool,
    /// A registry (`HOST:PORT`) reached over plain HTTP with --resolve-images; repeatable.
    #[arg(long, value_name = "HOST:PORT")]
    pub insecure_registry: Vec<String>,
    /// Registry credentials, in the Docker config format (`auths`, `credHelpers`, `credsStore`); default
    /// `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`, else anonymous.
    #[arg(long, value_name = "FILE")]
    pub registry_config: Option<PathBuf>,
    /// Time limit of the whole image resolution, in seconds (each registry request gets no more).
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = crate::inputs::parse_seconds)]
    pub registry_timeout: Duration,
    /// How long registry answers stay in the cache on disk (`$XDG_CACHE_HOME/winplace/images.json`,
    /// else `~/.cache/winplace/images.json`), in seconds; 0 turns the disk cache off.
    #[arg(long, value_name = "SECONDS", default_value_t = 86_400)]
    pub image_cache_ttl: u64,
}

impl Default for ResolveArgs {
    fn default() -> Self {
        ResolveArgs {
            resolve_images: false,
            insecure_registry: Vec::new(),
            registry_config: None,
            registry_timeout: registry::DEFAULT_TIMEOUT,
            image_cache_ttl: 86_400,
        }
    }
}

/// The registry client of one `check` run: one deadline for the whole run.
pub struct ImageLookup {
    resolver: BlockingResolver,
}

impl ImageLookup {
    /// The lookup `args` ask for (`None` without `--resolve-images`); a registry config that cannot be
    /// read is an error naming the file and line.
    pub fn start(args: &ResolveArgs) -> Result<Option<Self>, ParseError> {
        if !args.resolve_images {
            return Ok(None);
        }
        let credentials = Credentials::load(args.registry_config.as_deref()).map_err(|e| {
            let (file, line) = match &e {
                SetupError::ConfigUnreadable { path, .. } => (path.clone(), 1),
                SetupError::ConfigInvalid { path, line, .. } => {
                    (path.clone(), u32::try_from(*line).unwrap_or(u32::MAX))
                }
            };
            ParseError {
                file,
                line,
                column: 1,
                message: e.to_string(),
            }
        })?;
        let disk_cache = (args.image_cache_ttl > 0)
            .then(DiskCache::default_path)
            .flatten()
            .map(|path| DiskCache::open(&path, Duration::from_secs(args.image_cache_ttl)));
        let options = RegistryOptions {
            insecure: args.insecure_registry.clone(),
            credentials,
            timeout: args.registry_timeout,
            disk_cache,
            ..RegistryOptions::default()
        };
        let resolver = BlockingResolver::new(options).map_err(|e| ParseError {
            file: "--resolve-images".into(),
            line: 1,
            column: 1,
            message: format!("cannot start the registry client: {e}"),
        })?;
        Ok(Some(ImageLookup { resolver }))
    }

    /// [`Checker::check_text`] with the images whose name says too little resolved first: the findings
    /// are handed to `sink` document by document, as without `--resolve-images`, and the parse errors
    /// returned. `checker` gives the settings and the cluster.
    pub fn check_text(
        &self,
        checker: &Checker<'_>,
        file: &str,
        text: &str,
        sink: impl FnMut(Finding),
    ) -> Vec<ParseError> {
        let images = checker.images_to_resolve(file, text);
        let facts = registry::image_facts(&self.resolver.resolve_all(&images));
        Checker::builder()
            .settings(checker.settings())
            .cluster(checker.cluster())
            .images(&facts)
            .build()
            .check_text(file, text, sink)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_registry_config_names_file_and_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("auth.json");
        std::fs::write(&path, "{\n\n  \"auths\": [}\n").expect("write");
        let args = ResolveArgs {
            resolve_images: true,
            registry_config: Some(path.clone()),
            ..ResolveArgs::default()
        };
        let error = ImageLookup::start(&args).err().expect("an error");
        assert_eq!(error.file, path.display().to_string());
        assert_eq!(error.line, 3);
    }
}
