//! The CLI's synchronous front to [`ImageResolver`]: a runtime of its own, driven from a scoped thread,
//! so that it works both inside the binary's async `main` and from plain tests.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{ImageResolver, ManifestFacts, RegistryOptions, ResolveError};

/// A resolver for synchronous callers, with one deadline for everything it is asked: the CLI's whole
/// resolution step costs at most one timeout, however many files and registries it meets.
pub struct BlockingResolver {
    runtime: Option<tokio::runtime::Runtime>,
    resolver: ImageResolver,
    deadline: tokio::time::Instant,
}

impl BlockingResolver {
    /// A resolver whose deadline is `options.timeout` from now.
    pub fn new(options: RegistryOptions) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("winplace-registry")
            .enable_all()
            .build()?;
        let timeout: Duration = options.timeout;
        let resolver = ImageResolver::new(options);
        let deadline = tokio::time::Instant::now() + timeout;
        Ok(BlockingResolver {
            runtime: Some(runtime),
            resolver,
            deadline,
        })
    }

    /// Resolves `images` (distinct), finishing by the resolver's deadline.
    pub fn resolve_all(
        &self,
        images: &[String],
    ) -> BTreeMap<String, Result<ManifestFacts, ResolveError>> {
        let Some(runtime) = &self.runtime else {
            return BTreeMap::new();
        };
        std::thread::scope(|scope| {
            scope
                .spawn(|| runtime.block_on(self.resolver.resolve_all_until(images, self.deadline)))
                .join()
                .unwrap_or_default()
        })
    }

    /// The resolver, for its counters.
    pub fn resolver(&self) -> &ImageResolver {
        &self.resolver
    }
}

impl Drop for BlockingResolver {
    fn drop(&mut self) {
        self.resolver.save_cache();
        // Dropping a runtime inside another runtime's context panics; this never blocks.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
