//! State shared by the handlers.

use std::sync::Arc;
use winplace_policy::view::ClusterView;

/// What every handler can read; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    cluster: Arc<ClusterView>,
}

impl AppState {
    /// State serving `cluster`.
    pub fn new(cluster: ClusterView) -> Self {
        AppState {
            cluster: Arc::new(cluster),
        }
    }

    /// The current view of the cluster.
    pub fn cluster(&self) -> Arc<ClusterView> {
        self.cluster.clone()
    }
}
