//! The containers of a pod spec as written (raw JSON), for checks that must see what the typed spec drops
//! (unknown fields, `null`s, values of the wrong type) and for callers that have not decoded the spec.

use serde_json::Value;

use crate::path::FieldPath;

/// The container lists of a pod spec, in the order the API server visits them
/// (`podshelper.VisitContainersWithPath`).
pub const CONTAINER_LISTS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

/// One container of a raw pod spec: which list it is in, where, and what it says.
#[derive(Debug, Clone, Copy)]
pub struct RawContainer<'v> {
    /// `initContainers`, `containers` or `ephemeralContainers`.
    list: &'static str,
    /// Its index in the list.
    index: usize,
    /// The container as written.
    pub value: &'v Value,
}

impl RawContainer<'_> {
    /// Its path (`<prefix>.containers[0]`): built only for what is reported, since these checks run for
    /// every container of every template.
    ///
    /// ```
    /// use winplace_rules::model::raw_spec::raw_containers;
    /// use winplace_rules::path::FieldPath;
    /// let spec = serde_json::json!({"containers": [{"name": "a"}, {"name": "b"}]});
    /// let second = raw_containers(&spec).nth(1).unwrap();
    /// assert_eq!(second.path(&FieldPath::root().field("spec")).to_string(), "spec.containers[1]");
    /// ```
    pub fn path(&self, prefix: &FieldPath) -> FieldPath {
        prefix.field(self.list).index(self.index)
    }
}

/// Every container of a raw pod spec, init containers first.
///
/// ```
/// use winplace_rules::model::raw_spec::raw_containers;
/// let spec = serde_json::json!({"containers": [{"image": "web"}], "initContainers": [{"image": "init"}]});
/// let images: Vec<&str> = raw_containers(&spec).filter_map(|c| c.value["image"].as_str()).collect();
/// assert_eq!(images, ["init", "web"]);
/// ```
pub fn raw_containers(raw: &Value) -> impl Iterator<Item = RawContainer<'_>> {
    CONTAINER_LISTS.into_iter().flat_map(move |list| {
        raw.get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .map(move |(index, value)| RawContainer { list, index, value })
    })
}
