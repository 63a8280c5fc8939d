//! Nodes, Pods and RuntimeClasses read from `kubectl get -o json` / `-o yaml` text, one object at a time:
//! [`read`] hands each object to a sink as soon as it is decoded (the audit's
//! [`begin_reset`](winplace_rules::audit::Audit::begin_reset) … `finish_reset`), so that no typed list of
//! the whole cluster is ever built. Each object is decoded and trimmed by the rules crate's
//! [`cluster_objects`]; what makes a text a cluster (complete, plausible) is checked here ([`Tally`]).
//!
//! JSON is read with serde's streaming visitor over the `items` array: each item is decoded from its own
//! slice of the text. YAML goes through the rules crate's reader (line numbers, limits), which builds the
//! document tree first: a YAML snapshot costs that tree on top of the text, so clusters at the Kubernetes
//! envelope are better read as JSON (`kubectl get … -o json`), see `docs/reference/snapshots.md`.

use std::fmt;

use k8s_openapi::api::core::v1::{Node, Pod};
use serde::de::{
    self, DeserializeSeed, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::value::RawValue;
use winplace_rules::FieldPath;
use winplace_rules::audit::Change;
use winplace_rules::model::cluster_objects::{self, ClusterKind, ClusterObject, DecodeError};
use winplace_rules::model::{Object, RuntimeClassEntry};

/// The largest snapshot read: 1 GiB, more than three times `kubectl get -o json` of the envelope
/// (5,000 nodes and 150,000 pods: 294 MB), and what standard input, a FIFO or a device is cut at.
pub const MAX_SNAPSHOT_BYTES: u64 = 1024 * 1024 * 1024;

/// Why a snapshot is not read as a cluster. Every variant names the file (and, where one is at fault,
/// the line and the item).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// Nothing but white space (what a shell's `>` leaves while `kubectl` has not written yet).
    #[error("{file}: the file is empty, not a cluster")]
    Empty {
        /// The file.
        file: String,
    },
    /// The text is not JSON (or YAML) at all, or is cut short.
    #[error("{file}: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// Where and what (the parser's message, with line and column).
        message: String,
    },
    /// An item that does not decode (a field of the wrong type, an object without `kind`).
    #[error("{file}:{line}: {item}: {error}")]
    Item {
        /// The file.
        file: String,
        /// 1-based line where the item starts.
        line: usize,
        /// `items[3]`, or `document 2` for a YAML document that is not a list.
        item: String,
        /// What is wrong with it, naming the field (boxed: errors stay small on the happy path).
        error: Box<DecodeError>,
    },
    /// An object that decodes but lacks what every object of its kind has in a real cluster: a name, a
    /// Pod's spec. Seen when a file is cut short between two lines.
    #[error("{file}:{line}: {item}: {object} has no {missing}: the file looks cut short")]
    Incomplete {
        /// The file.
        file: String,
        /// 1-based line where the item starts.
        line: usize,
        /// `items[3]`, or `document 2`.
        item: String,
        /// `Kind/name`.
        object: String,
        /// The missing field (`metadata.name`, `spec`).
        missing: &'static str,
    },
    /// A top-level object with `items` but no `kind`: `kubectl` writes `kind: List` after the items,
    /// so it is missing when the file was cut short.
    #[error(
        "{file}: the list has items but no kind (kubectl writes `kind: List` after the items): the file looks cut short"
    )]
    ListWithoutKind {
        /// The file.
        file: String,
    },
    /// Parsed, but not a cluster: no Node at all.
    #[error(
        "{file}: {pods} pods but no nodes: not a cluster snapshot (write it with `kubectl get nodes,pods,runtimeclasses -A -o json`)"
    )]
    NoNodes {
        /// The file.
        file: String,
        /// How many pods it has.
        pods: usize,
    },
}

/// What a snapshot held, counted while it was read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Nodes.
    pub nodes: usize,
    /// Pods.
    pub pods: usize,
    /// RuntimeClasses.
    pub runtime_classes: usize,
    /// Events about pods that an error signature explains (the others are skipped).
    pub events: usize,
    /// Objects of other kinds, skipped.
    pub skipped: usize,
}

impl Tally {
    pub(super) fn count(&mut self, object: &ClusterObject) {
        match object {
            ClusterObject::Node(_) => self.nodes += 1,
            ClusterObject::Pod(_) | ClusterObject::ListedPod(_) => self.pods += 1,
            ClusterObject::RuntimeClass(_) => self.runtime_classes += 1,
            ClusterObject::Event(_) => self.events += 1,
        }
    }

    /// `Ok` when the objects make a cluster: at least one Node (a cluster's pods run on nodes; a file
    /// without any is a `kubectl get pods` by mistake, or was cut short).
    pub fn plausible(&self, file: &str) -> Result<(), SnapshotError> {
        if self.nodes == 0 {
            return Err(SnapshotError::NoNodes {
                file: file.to_string(),
                pods: self.pods,
            });
        }
        Ok(())
    }
}

/// Reads `text` (JSON when it starts with `{`, else YAML), handing every Node, Pod and RuntimeClass to
/// `sink` as soon as it is decoded; returns what was read. Stops at the first error: what the sink got
/// until then is a part of the file only (the caller discards it). Does not check [`Tally::plausible`].
pub fn read(
    file: &str,
    text: &str,
    sink: &mut dyn FnMut(ClusterObject),
) -> Result<Tally, SnapshotError> {
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return Err(SnapshotError::Empty {
            file: file.to_string(),
        });
    }
    let mut reader = Reader {
        file,
        text,
        tally: Tally::default(),
        sink,
        error: None,
    };
    if trimmed.starts_with('{') {
        reader.json()?;
    } else {
        reader.yaml()?;
    }
    Ok(reader.tally)
}

/// The state of one [`read`].
struct Reader<'a, 's> {
    file: &'a str,
    text: &'a str,
    tally: Tally,
    sink: &'s mut dyn FnMut(ClusterObject),
    /// The error that stopped the JSON visitor (serde's own error carries only a message).
    error: Option<SnapshotError>,
}

impl Reader<'_, '_> {
    fn json(&mut self) -> Result<(), SnapshotError> {
        let mut de = serde_json::Deserializer::from_str(self.text);
        let top = (&mut de)
            .deserialize_map(TopVisitor(&mut *self))
            .and_then(|t| {
                de.end()?;
                Ok(t)
            });
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        let top = top.map_err(|e| SnapshotError::Syntax {
            file: self.file.to_string(),
            message: format!("not valid JSON: {e}"),
        })?;
        match top {
            Top {
                items: true,
                kind: false,
            } => Err(SnapshotError::ListWithoutKind {
                file: self.file.to_string(),
            }),
            Top { items: true, .. } => Ok(()),
            // A single object, not a list.
            Top { items: false, .. } => self.item(None, self.text),
        }
    }

    /// Decodes one JSON item (a slice of the text) and hands it on.
    fn item(&mut self, index: Option<usize>, raw: &str) -> Result<(), SnapshotError> {
        // Lines are counted only for an error: counting them for every item would cost the whole text again.
        let text = self.text;
        let object = cluster_objects::decode_json(raw).map_err(|error| SnapshotError::Item {
            file: self.file.to_string(),
            line: line_of(text, raw),
            item: label(index),
            error: Box::new(error),
        })?;
        self.emit(index, &|| line_of(text, raw), object)
    }

    fn emit(
        &mut self,
        index: Option<usize>,
        line: &dyn Fn() -> usize,
        object: Option<ClusterObject>,
    ) -> Result<(), SnapshotError> {
        let Some(object) = object else {
            self.tally.skipped += 1;
            return Ok(());
        };
        if let Some((name, missing)) = incomplete(&object) {
            return Err(SnapshotError::Incomplete {
                file: self.file.to_string(),
                line: line(),
                item: label(index),
                object: name,
                missing,
            });
        }
        self.tally.count(&object);
        (self.sink)(object);
        Ok(())
    }

    /// YAML: several documents, `List`s; every document and item must have a `kind`, as in JSON.
    fn yaml(&mut self) -> Result<(), SnapshotError> {
        let limits = winplace_rules::input::Limits {
            max_bytes: MAX_SNAPSHOT_BYTES as usize,
            max_documents: 1_000_000,
            max_depth: 100,
            max_nodes: usize::MAX,
        };
        let mut parsed = winplace_rules::input::parse(self.file, self.text, &limits);
        if let Some(e) = parsed.errors.first() {
            return Err(SnapshotError::Syntax {
                file: self.file.to_string(),
                message: e.to_string(),
            });
        }
        for (d, doc) in std::mem::take(&mut parsed.documents)
            .into_iter()
            .enumerate()
        {
            let has_items = doc.value.get("items").is_some_and(|v| v.is_array());
            let kind = doc.value.get("kind").and_then(|k| k.as_str());
            if !has_items {
                self.yaml_object(None, d, doc.value, doc.lines)?;
                continue;
            }
            if kind.is_none_or(str::is_empty) {
                return Err(SnapshotError::ListWithoutKind {
                    file: self.file.to_string(),
                });
            }
            let serde_json::Value::Object(mut map) = doc.value else {
                continue;
            };
            let Some(serde_json::Value::Array(items)) = map.remove("items") else {
                continue;
            };
            for (i, item) in items.into_iter().enumerate() {
                let lines = doc.lines.rebase(&["items".to_string(), i.to_string()]);
                self.yaml_object(Some(i), d, item, lines)?;
            }
        }
        Ok(())
    }

    /// One YAML object: item `index` of document `doc`, or the document itself.
    fn yaml_object(
        &mut self,
        index: Option<usize>,
        doc: usize,
        value: serde_json::Value,
        lines: winplace_rules::input::LineMap,
    ) -> Result<(), SnapshotError> {
        let line = lines.line_of(&FieldPath::root()).unwrap_or(1) as usize;
        let item_error = |error| SnapshotError::Item {
            file: self.file.to_string(),
            line,
            item: index.map_or_else(|| format!("document {}", doc + 1), |i| label(Some(i))),
            error: Box::new(error),
        };
        let Some(object) = Object::from_value(self.file, doc, value, lines) else {
            return Err(item_error(DecodeError::NoKind));
        };
        if winplace_rules::model::events::is_event(&object.kind, &object.api_version) {
            let event = winplace_rules::model::events::decode_event_value(&object.value)
                .ok()
                .flatten();
            return self.emit(
                index,
                &|| line,
                event.map(|e| ClusterObject::Event(Box::new(e))),
            );
        }
        let decoded = match ClusterKind::of(&object.kind, &object.api_version) {
            Some(kind) => Some(
                cluster_objects::decode_value(kind, &object.value)
                    .map_err(|e| item_error(DecodeError::Field(e)))?,
            ),
            None => None,
        };
        self.emit(index, &|| line, decoded)
    }
}

/// `items[3]`, or `the object` for a file that is one object.
fn label(index: Option<usize>) -> String {
    index.map_or_else(|| "the object".to_string(), |i| format!("items[{i}]"))
}

/// The name and the missing field of an object that no API server would hold that way.
pub(super) fn incomplete(object: &ClusterObject) -> Option<(String, &'static str)> {
    let (kind, meta) = match object {
        ClusterObject::Node(n) => ("Node", &n.metadata),
        ClusterObject::Pod(p) => ("Pod", &p.metadata),
        ClusterObject::ListedPod(p) => ("Pod", &p.pod.metadata),
        ClusterObject::RuntimeClass(r) => ("RuntimeClass", &r.object.metadata),
        // Reduced to what it says about its pod: nothing left to be incomplete.
        ClusterObject::Event(_) => return None,
    };
    let name = meta.name.as_deref().unwrap_or("");
    if name.is_empty() {
        return Some((kind.to_string(), "metadata.name"));
    }
    match object {
        // The API server requires spec.containers: a pod without a spec was cut off.
        ClusterObject::Pod(p) if p.spec.is_none() => Some((format!("Pod/{name}"), "spec")),
        ClusterObject::ListedPod(p) if p.pod.spec.is_none() => {
            Some((format!("Pod/{name}"), "spec"))
        }
        _ => None,
    }
}

/// What the top-level object held.
struct Top {
    items: bool,
    kind: bool,
}

struct TopVisitor<'r, 'a, 's>(&'r mut Reader<'a, 's>);

impl<'de: 'a, 'a> Visitor<'de> for TopVisitor<'_, 'a, '_> {
    type Value = Top;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes List or object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut top = Top {
            items: false,
            kind: false,
        };
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "items" => {
                    map.next_value_seed(ItemsSeed(&mut *self.0))?;
                    top.items = true;
                }
                "kind" => {
                    let kind: Option<std::borrow::Cow<'de, str>> = map.next_value()?;
                    top.kind = kind.is_some_and(|k| !k.is_empty());
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(top)
    }
}

struct ItemsSeed<'r, 'a, 's>(&'r mut Reader<'a, 's>);

impl<'de: 'a, 'a> DeserializeSeed<'de> for ItemsSeed<'_, 'a, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for ItemsSeed<'_, 'a, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while let Some(raw) = seq.next_element::<&'de RawValue>()? {
            if let Err(e) = self.0.item(Some(index), raw.get()) {
                self.0.error = Some(e);
                return Err(de::Error::custom("stopped at a bad item"));
            }
            index += 1;
        }
        Ok(())
    }
}

/// The objects of a (small) cluster, collected in lists: the demo cluster, tests. Sources of real
/// clusters stream with [`read`] instead.
#[derive(Debug, Default, Clone)]
pub struct ClusterObjects {
    /// Nodes.
    pub nodes: Vec<Node>,
    /// Pods of every namespace.
    pub pods: Vec<Pod>,
    /// RuntimeClasses (`node.k8s.io/v1` and `v1beta1`).
    pub runtime_classes: Vec<RuntimeClassEntry>,
    /// Events about pods that an error signature explains.
    pub events: Vec<winplace_rules::model::events::PodEvent>,
    /// Objects of other kinds that were skipped.
    pub skipped: usize,
}

impl ClusterObjects {
    /// The objects as one [`Change::Reset`] (the events are not part of it: apply them after it as
    /// [`Change::Event`]s).
    pub fn into_reset(self) -> Change {
        Change::Reset {
            nodes: self.nodes,
            pods: self.pods,
            runtime_classes: self.runtime_classes,
        }
    }

    /// Reads `text` with [`read`] into lists (JSON or YAML); checks neither plausibility nor size.
    pub fn parse(file: &str, text: &str) -> Result<Self, SnapshotError> {
        let mut out = ClusterObjects::default();
        let tally = read(file, text, &mut |object| out.add(object))?;
        out.skipped = tally.skipped;
        Ok(out)
    }

    fn add(&mut self, object: ClusterObject) {
        match object {
            ClusterObject::Node(node) => self.nodes.push(*node),
            ClusterObject::Pod(pod) => self.pods.push(*pod),
            // The whole-text reader decodes pods whole: a listed pod is made whole here for the lists'
            // other makers (its spec decoded when it was read, or then from the same text).
            ClusterObject::ListedPod(pod) => self.pods.extend(pod.into_pod().ok()),
            ClusterObject::RuntimeClass(entry) => self.runtime_classes.push(*entry),
            ClusterObject::Event(event) => self.events.push(*event),
        }
    }
}

/// The 1-based line of `inner` (a slice of `text`) in `text`.
fn line_of(text: &str, inner: &str) -> usize {
    let offset = (inner.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    text.get(..offset)
        .map(|before| before.bytes().filter(|&b| b == b'\n').count() + 1)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_of_counts_newlines_before_the_slice() {
        let text = "a\nb\nc";
        assert_eq!(line_of(text, &text[4..]), 3);
        assert_eq!(line_of(text, text), 1);
    }
}
