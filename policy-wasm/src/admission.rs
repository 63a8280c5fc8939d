//! Admission review as pure functions: what an admission controller (the Kubewarden policy, whose waPC
//! glue is `lib.rs`) answers for one AdmissionRequest, given the settings, the cluster and what image
//! manifests said. No host calls here: the caller fetches the context and the manifests, so every
//! decision can be tested natively.
//!
//! Decisions:
//! * Only `CREATE` and `UPDATE` of the [`EVALUATED_KINDS`] without a subresource are evaluated, and the
//!   `UPDATE` of a Pod's `ephemeralcontainers` (`kubectl debug`: its containers judged when added);
//!   `DELETE`, `CONNECT`, other subresources (`status`, `scale`, …) and other kinds are accepted
//!   untouched. An evaluated request whose object is missing, not an object, or of another kind is
//!   rejected with a message saying so ([`malformed`]).
//! * A `Node` is never rejected nor rewritten: its findings are warnings (a kubelet registering with a
//!   wrong label must still be able to join; the audit and `check` report the same findings as errors).
//! * An `UPDATE` that leaves the pod spec (or template) as it was is accepted untouched. On another
//!   `UPDATE`, an error of a rule the old object already broke does not reject the request: it is returned
//!   as a warning. Controllers edit existing objects (adoption, finalizer removal, scale-down); rejecting
//!   those edits for a problem nobody introduced would wedge the object. The exported admission policies
//!   judge an `UPDATE` the same way (docs/reference/admission-policies.md §2).
//! * `mutate`: the catalogue's fixes are applied in rounds (the rules' repair loop,
//!   [`winplace_rules::fix::repair_value`], the one `winplace check --fix` runs on text) and the
//!   repaired object is returned; what no fix repairs still rejects. A Pod or a Job is never mutated on
//!   `UPDATE` (a Pod's spec and a Job's template are immutable), and an `UPDATE` is only mutated when it
//!   brings a new finding with a fix, and then only for the rules it breaks anew.
//!   Each applied fix is a warning naming the finding and what the patch does ([`patch_warning`]: `…;
//!   winplace proposed a patch, not applied unless the policy is mutating: add nodeSelector …`): true also
//!   under a validate-only ClusterAdmissionPolicy, where policy-server applies no patch and rejects the
//!   request.
//! * The cluster context is only asked for when settings `contextAware` is set ([`asks_for_context`]).
//! * Image manifests ([`manifest_lookups`], read by [`winplace_rules::windows::class_from_manifest`])
//!   refine images whose Windows build the name does not tell, and are only asked for when settings
//!   `registryAware` is set ([`asks_for_manifests`]); an image whose manifest could not be read keeps its
//!   name-based classification (`windows-image-build-unknown`, a warning), so a failed lookup never rejects.
//!
//! One file per job under `admission/`: `payload.rs` decodes what the host sends, `scope.rs` says which
//! requests are reviewed and with what, `context.rs` decodes the host's lists of the cluster (its Nodes
//! through `node_list.rs`, which builds only the fields the rules read),
//! `manifests.rs` names the images worth a manifest look-up and reads the manifests, `review.rs` runs
//! the rules on the object (through [`winplace_rules::Checker`]) and answers in the words of
//! `decision.rs`, `mutation.rs` repairs (the rules' one repair loop), `host.rs` asks the host for the
//! cluster and the manifests (as narrowly as the object allows) and reviews with them;
//! everything public is re-exported here.
//!
//! ```
//! use serde_json::json;
//! use winplace_policy_wasm::admission::{AdmissionRequest, Verdict, review};
//! let request: AdmissionRequest = serde_json::from_value(json!({
//!     "uid": "1", "operation": "CREATE", "namespace": "default",
//!     "kind": {"group": "", "version": "v1", "kind": "Pod"},
//!     "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
//!         "spec": {"containers": [{"name": "app", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}]}}
//! })).unwrap();
//! let decision = review(request, &Default::default(), None, &Default::default());
//! let Verdict::Reject(message) = &decision.verdict else { panic!("{decision:?}") };
//! assert!(message.contains("windows-pod-without-os-selector"));
//! ```

mod context;
mod decision;
mod error;
#[cfg(test)]
mod fixtures;
mod host;
mod manifests;
mod mutation;
mod node_list;
mod payload;
mod review;
mod scope;

pub use context::{
    CONTEXT_RESOURCES, add_nodes_from_answer, context_from_answers, context_from_lists,
};
pub use decision::{Decision, PATCH_PROPOSED, Verdict, finding_line, patch_warning};
pub use error::InputError;
pub use host::{HostCalls, review_with_host};
pub use manifests::{MAX_MANIFEST_LOOKUPS, manifest_lookups};
pub use payload::{
    AdmissionRequest, GroupVersionKind, ValidationPayload, parse_payload, parse_settings,
};
pub use review::{review, review_checked};
pub use scope::{
    EVALUATED_KINDS, asks_for_context, asks_for_manifests, is_evaluated, is_exempt, malformed,
    reads_context,
};
