//! Tests of the server as a whole: the API through the router, kube-rs against a fake API server, the
//! snapshot reader with `kubectl`-shaped files, the deployment manifests.

pub(crate) mod api;
mod deploy;
mod live;
mod snapshot;
