//! Watched objects decoded one at a time: an object that does not decode as its type (a field of an
//! unexpected type, say) becomes [`Decoded::Malformed`], with its metadata and the decoder's words,
//! instead of failing what carried it.
//!
//! kube-rs decodes a list page as one value (`ObjectList<K>`), so one malformed item fails the whole page;
//! its watcher then lists again, from the first page, for as long as the object stays malformed
//! (docs/reference/watches.md §2). Watching `Decoded<K>` instead lets the source skip the object with one
//! logged warning and keep the rest of the list.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::de::{Deserialize, DeserializeOwned, Deserializer};
use std::borrow::Cow;

/// An object of kind `K` as the API server sent it: decoded, or not decodable (with why).
///
/// ```
/// use k8s_openapi::api::core::v1::Node;
/// use winplace::source::lenient::Decoded;
/// let good: Decoded<Node> = serde_json::from_str(r#"{"metadata":{"name":"a"}}"#).unwrap();
/// assert!(matches!(good, Decoded::Ok(_)));
/// // `spec.taints` must be a list: the object is kept as malformed, with its name.
/// let bad: Decoded<Node> =
///     serde_json::from_str(r#"{"metadata":{"name":"b"},"spec":{"taints":"x"}}"#).unwrap();
/// let Decoded::Malformed { meta, error } = bad else { panic!() };
/// assert_eq!(meta.name.as_deref(), Some("b"));
/// assert!(error.contains("invalid type"), "{error}");
/// ```
// Clippy sizes the generic `K` at 0 bytes: a decoded Node or Pod is larger than the metadata.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Decoded<K> {
    /// The object, decoded.
    Ok(K),
    /// The object did not decode as `K`.
    Malformed {
        /// Its metadata, when that much decodes (name, namespace, resourceVersion).
        meta: ObjectMeta,
        /// The decoder's words.
        error: String,
    },
}

impl<'de, K: DeserializeOwned> Deserialize<'de> for Decoded<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Buffered first: a failed typed decode leaves a streaming deserializer unusable, and the
        // metadata of the bad object is still wanted. Lists arrive in pages of 500, so this holds one
        // page at most.
        let value = serde_json::Value::deserialize(deserializer)?;
        match K::deserialize(&value) {
            Ok(object) => Ok(Decoded::Ok(object)),
            Err(e) => Ok(Decoded::Malformed {
                meta: value
                    .get("metadata")
                    .and_then(|m| ObjectMeta::deserialize(m).ok())
                    .unwrap_or_default(),
                error: e.to_string(),
            }),
        }
    }
}

impl<K: Resource> Resource for Decoded<K> {
    type DynamicType = K::DynamicType;
    type Scope = K::Scope;

    fn kind(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::kind(dt)
    }
    fn group(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::group(dt)
    }
    fn version(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::version(dt)
    }
    fn plural(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::plural(dt)
    }
    fn meta(&self) -> &ObjectMeta {
        match self {
            Decoded::Ok(object) => object.meta(),
            Decoded::Malformed { meta, .. } => meta,
        }
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        match self {
            Decoded::Ok(object) => object.meta_mut(),
            Decoded::Malformed { meta, .. } => meta,
        }
    }
}
