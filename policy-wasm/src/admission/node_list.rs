//! The host's Node list decoded straight into the trimmed nodes the rules read
//! ([`winplace_rules::model::cluster_objects::trim_node`]'s fields), without building the rest of each Node.
//!
//! policy-server prunes a listed object's data (`spec`, `status`) to the asked `field_masks` but sends its
//! `metadata` whole (uid, timestamps, every annotation), and a host that predates masks sends whole Nodes
//! (their images, conditions, capacity): decoded as k8s-openapi Nodes, all of that is built and dropped
//! again. Here only the fields the rules read are built; everything else is skipped as it is read
//! ([`serde::de::IgnoredAny`]), annotations too but for the two naming a winplace node pool.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::core::v1::{Node, NodeSpec, NodeStatus, NodeSystemInfo, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use winplace_rules::model::cluster_objects::{POOL_ANNOTATION, POOL_TAINTS_ANNOTATION};

/// A List of Nodes, each item made a trimmed Node as it is read and pushed onto the vector (no vector of
/// light nodes is built first, nor a second one to join two answers); everything else in the answer is
/// skipped unread. Like a derived `struct { items: Vec<Node> }`: `items` once, and required.
struct NodeListOnto<'v>(&'v mut Vec<Node>);

impl<'de> DeserializeSeed<'de> for NodeListOnto<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for NodeListOnto<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a List of Nodes")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = false;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key != "items" {
                map.next_value::<de::IgnoredAny>()?;
            } else if std::mem::replace(&mut seen, true) {
                return Err(de::Error::duplicate_field("items"));
            } else {
                map.next_value_seed(ItemsOnto(&mut *self.0))?;
            }
        }
        if seen {
            Ok(())
        } else {
            Err(de::Error::missing_field("items"))
        }
    }
}

/// The items, each [`LightNode::into_node`] as it is read, pushed onto the vector; an item of another
/// `apiVersion` or `kind` fails the list.
struct ItemsOnto<'v>(&'v mut Vec<Node>);

impl<'de> DeserializeSeed<'de> for ItemsOnto<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ItemsOnto<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of Nodes")
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element::<LightNode<'de>>()? {
            let node = item
                .into_node()
                .ok_or_else(|| de::Error::custom("an item of another apiVersion or kind"))?;
            self.0.push(node);
        }
        Ok(())
    }
}

/// What the rules read of a Node, and its `apiVersion` and `kind` to check.
#[derive(Deserialize)]
struct LightNode<'a> {
    #[serde(rename = "apiVersion", borrow, default)]
    api_version: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "nullable")]
    metadata: LightMeta,
    #[serde(default)]
    spec: Option<LightSpec>,
    #[serde(default)]
    status: Option<LightStatus>,
}

#[derive(Deserialize, Default)]
struct LightMeta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    labels: Option<BTreeMap<String, String>>,
    #[serde(default, deserialize_with = "pool_annotations")]
    annotations: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize)]
struct LightSpec {
    #[serde(default)]
    taints: Option<Vec<Taint>>,
    #[serde(default)]
    unschedulable: Option<bool>,
}

#[derive(Deserialize)]
struct LightStatus {
    #[serde(rename = "nodeInfo", default)]
    node_info: Option<NodeSystemInfo>,
    #[serde(rename = "declaredFeatures", default)]
    declared_features: Option<Vec<String>>,
}

/// `null` read as the default, as k8s-openapi reads a null `metadata`.
fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Of the annotations, only those naming a winplace node pool, as `trim_node` keeps them (`None` when
/// there are none of them); the others are skipped unbuilt.
fn pool_annotations<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<BTreeMap<String, String>>, D::Error> {
    struct Kept;
    impl<'de> Visitor<'de> for Kept {
        type Value = Option<BTreeMap<String, String>>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map of strings, or null")
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(Kept)
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut kept = BTreeMap::new();
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                if key == POOL_ANNOTATION || key == POOL_TAINTS_ANNOTATION {
                    kept.insert(key.into_owned(), map.next_value::<String>()?);
                } else {
                    // Checked as a string, as k8s-openapi checks every annotation, but not built.
                    map.next_value::<StrOnly>()?;
                }
            }
            Ok((!kept.is_empty()).then_some(kept))
        }
    }
    d.deserialize_option(Kept)
}

/// A string read and dropped: an annotation value that is not a string fails as it does in k8s-openapi.
struct StrOnly;

impl<'de> Deserialize<'de> for StrOnly {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StrOnly;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_str<E: de::Error>(self, _: &str) -> Result<StrOnly, E> {
                Ok(StrOnly)
            }
        }
        d.deserialize_str(V)
    }
}

impl LightNode<'_> {
    /// The trimmed Node, or `None` when the item names another `apiVersion` or `kind` (k8s-openapi refuses
    /// those; the caller then reads the list the slow way, which says what is wrong).
    fn into_node(self) -> Option<Node> {
        let fits = |v: &Option<Cow<'_, str>>, want: &str| v.as_deref().is_none_or(|v| v == want);
        if !fits(&self.api_version, "v1") || !fits(&self.kind, "Node") {
            return None;
        }
        Some(Node {
            metadata: ObjectMeta {
                name: self.metadata.name,
                labels: self.metadata.labels,
                annotations: self.metadata.annotations,
                ..ObjectMeta::default()
            },
            spec: self.spec.map(|s| NodeSpec {
                taints: s.taints,
                unschedulable: s.unschedulable,
                ..NodeSpec::default()
            }),
            status: self.status.map(|s| NodeStatus {
                node_info: s.node_info,
                declared_features: s.declared_features,
                ..NodeStatus::default()
            }),
        })
    }
}

/// The trimmed nodes of the host's answer to listing Nodes (JSON bytes), or `None` when it does not
/// decode so: not JSON, no `items`, an item with a field of the wrong type, another `apiVersion` or
/// `kind`. For every answer it decodes, the nodes equal those k8s-openapi would decode and `trim_node`
/// keep.
pub(super) fn decode_nodes(answer: &[u8]) -> Option<Vec<Node>> {
    let mut nodes = Vec::new();
    decode_nodes_onto(answer, &mut nodes).then_some(nodes)
}

/// [`decode_nodes`] pushed onto `nodes` (those of another answer): whether the answer decodes so; when it
/// does not, `nodes` is left as it was.
pub(super) fn decode_nodes_onto(answer: &[u8], nodes: &mut Vec<Node>) -> bool {
    let held = nodes.len();
    let mut reader = serde_json::Deserializer::from_slice(answer);
    let decoded = NodeListOnto(nodes).deserialize(&mut reader).is_ok() && reader.end().is_ok();
    if !decoded {
        nodes.truncate(held);
    }
    decoded
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use winplace_rules::model::cluster_objects::decode_node;

    /// What k8s-openapi decodes and `trim_node` keeps, item by item; `None` when any item fails.
    fn typed(list: &Value) -> Option<Vec<Node>> {
        list["items"]
            .as_array()?
            .iter()
            .map(|item| {
                serde_json::from_value::<Node>(item.clone())
                    .ok()
                    .map(winplace_rules::model::cluster_objects::into_trimmed_node)
            })
            .collect()
    }

    #[test]
    fn light_nodes_are_the_trimmed_typed_nodes() {
        let info = json!({"architecture": "amd64", "bootID": "", "containerRuntimeVersion": "containerd://1.7",
            "kernelVersion": "10.0.20348.2762", "kubeProxyVersion": "", "kubeletVersion": "v1.33.4",
            "machineID": "m", "operatingSystem": "windows", "osImage": "Windows Server 2022", "systemUUID": "s"});
        let whole = json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "win-1", "uid": "u", "resourceVersion": "7",
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "labels": {"kubernetes.io/os": "windows", "agentpool": "win22"},
                "annotations": {"node.alpha.kubernetes.io/ttl": "0", POOL_ANNOTATION: "win22",
                    "kubectl.kubernetes.io/last-applied-configuration": "{\"a\": \"\\u00e9\"}"},
                "managedFields": [{"manager": "kubelet", "operation": "Update"}]},
            "spec": {"taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}],
                "podCIDR": "10.0.0.0/24", "unschedulable": true},
            "status": {"images": [{"names": ["pause:3.9"], "sizeBytes": 1}], "nodeInfo": info,
                "declaredFeatures": ["A"], "conditions": [{"type": "Ready", "status": "True"}],
                "capacity": {"cpu": "4"}}});
        let mut cases = vec![
            json!({"kind": "NodeList", "metadata": {"resourceVersion": "1"}, "items": [whole.clone()]}),
            json!({"items": []}),
            json!({"items": [{"metadata": {"name": "bare"}}]}),
            json!({"items": [{}]}),
            json!({"items": [{"metadata": null, "spec": null, "status": null}]}),
            json!({"items": [{"metadata": {"name": "n", "labels": null, "annotations": null},
                "spec": {}, "status": {}}]}),
            json!({"items": [{"metadata": {"name": "n", "annotations": {}}}]}),
            json!({"items": [{"metadata": {"name": "n", "annotations": {"a": "b"}}}]}),
            // k8s-openapi reads a missing required string as empty: so does this.
            json!({"items": [{"spec": {"taints": [{"key": "k"}]}}]}),
            json!({"items": [{"status": {"nodeInfo": {"architecture": "amd64"}}}]}),
        ];
        let mut escaped = whole.clone();
        escaped["metadata"]["labels"]["x"] = json!("caf\u{e9} \"quoted\"");
        cases.push(json!({"items": [escaped]}));
        for list in &cases {
            let bytes = serde_json::to_vec(list).unwrap();
            let light = decode_nodes(&bytes);
            assert!(light.is_some(), "{list}");
            assert_eq!(light, typed(list), "{list}");
            for (node, item) in light.unwrap().iter().zip(list["items"].as_array().unwrap()) {
                assert_eq!(Ok(node), decode_node(item).as_ref(), "{item}");
            }
        }
        // What k8s-openapi refuses, this refuses: the slow path then names the field.
        for bad in [
            json!({"items": [{"apiVersion": "v1", "kind": "Nodes", "metadata": {"name": "n"}}]}),
            json!({"items": [{"apiVersion": "v2", "metadata": {"name": "n"}}]}),
            json!({"items": [{"metadata": {"name": 7}}]}),
            json!({"items": [{"metadata": {"annotations": {"a": 1}}}]}),
            json!({"items": [{"metadata": {"labels": {"a": 1}}}]}),
            json!({"items": [{"spec": {"unschedulable": "yes"}}]}),
            json!({"items": {}}),
            json!({"error": "forbidden"}),
        ] {
            let bytes = serde_json::to_vec(&bad).unwrap();
            assert_eq!(decode_nodes(&bytes), None, "{bad}");
            assert_eq!(typed(&bad), None, "{bad}");
        }
        assert_eq!(decode_nodes(b"{\"items\": ["), None);
    }

    #[test]
    fn nodes_onto_held_ones_are_both_answers_decoded() {
        let held = json!({"items": [{"metadata": {"name": "win-1",
            "labels": {"kubernetes.io/os": "windows"}}, "status": {"nodeInfo": {"kernelVersion": "10.0.20348.1"}}}]});
        let more = json!({"kind": "NodeList", "metadata": {}, "items": [
            {"metadata": {"name": "lin-1", "labels": {"kubernetes.io/os": "linux"}}},
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "lin-2"}, "spec": {"unschedulable": true}}]});
        let bytes = |v: &Value| serde_json::to_vec(v).unwrap();
        let mut nodes = decode_nodes(&bytes(&held)).unwrap();
        assert!(decode_nodes_onto(&bytes(&more), &mut nodes));
        let mut both = typed(&held).unwrap();
        both.extend(typed(&more).unwrap());
        assert_eq!(nodes, both);
        // What fails leaves the nodes held as they were, whichever item fails.
        for bad in [
            json!({"items": [{"metadata": {"name": "ok"}}, {"metadata": {"name": 7}}]}),
            json!({"metadata": {}}),
            json!([]),
        ] {
            assert!(!decode_nodes_onto(&bytes(&bad), &mut nodes), "{bad}");
            assert_eq!(nodes, both, "{bad}");
        }
        assert!(!decode_nodes_onto(
            b"{\"items\": [{}]} trailing",
            &mut nodes
        ));
        assert_eq!(nodes, both);
    }
}
