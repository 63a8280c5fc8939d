//! Reading the fields of an infrastructure document, with errors that name the file, line and field.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;
use serde_json::Value;

use super::{EFFECTS, InfraError, taint};
use crate::input::Document;
use crate::model;
use crate::path::FieldPath;

/// One document being read, and the object it describes (for errors).
pub(crate) struct Reader<'a> {
    /// The document.
    pub doc: &'a Document,
    /// `Kind/name` for errors.
    pub object: String,
}

/// A field that cannot be read: its path and what is wrong.
pub(crate) type FieldError = (FieldPath, String);

impl<'a> Reader<'a> {
    pub fn new(doc: &'a Document, object: String) -> Self {
        Reader { doc, object }
    }

    /// The value at `path`, if present and not `null`.
    pub fn get(&self, path: &FieldPath) -> Option<&'a Value> {
        model::get(&self.doc.value, path).filter(|v| !v.is_null())
    }

    /// Line of `path` (or of its nearest present parent).
    pub fn line(&self, path: &FieldPath) -> u32 {
        self.doc.lines.line_of(path).unwrap_or(self.doc.line)
    }

    /// The error for a field.
    pub fn error(&self, (path, message): FieldError) -> InfraError {
        InfraError {
            file: self.doc.file.clone(),
            line: self.line(&path),
            object: self.object.clone(),
            path: path.to_string(),
            message,
        }
    }

    /// A string field; `Ok(None)` when absent.
    pub fn str(&self, path: &FieldPath) -> Result<Option<&'a str>, FieldError> {
        match self.get(path) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err((
                path.clone(),
                format!("expected a string, found {}", kind(other)),
            )),
        }
    }

    /// A non-negative integer field; `Ok(None)` when absent.
    pub fn count(&self, path: &FieldPath) -> Result<Option<u32>, FieldError> {
        match self.get(path) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(|n| Some(u32::try_from(n).unwrap_or(u32::MAX)))
                .ok_or_else(|| {
                    (
                        path.clone(),
                        format!("expected a non-negative integer, found {}", kind(v)),
                    )
                }),
        }
    }

    /// A map of strings (labels); empty when absent.
    pub fn labels(&self, path: &FieldPath) -> Result<BTreeMap<String, String>, FieldError> {
        let Some(value) = self.get(path) else {
            return Ok(BTreeMap::new());
        };
        let Value::Object(map) = value else {
            return Err((
                path.clone(),
                format!("expected a map of labels, found {}", kind(value)),
            ));
        };
        let mut out = BTreeMap::new();
        for (k, v) in map {
            let text = match v {
                Value::String(s) => s.clone(),
                // YAML writes `costcenter: 9000` without quotes; the label is the text.
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                other => {
                    return Err((
                        path.key(k.to_string()),
                        format!("expected a label value, found {}", kind(other)),
                    ));
                }
            };
            out.insert(k.clone(), text);
        }
        Ok(out)
    }

    /// A list of Kubernetes taints (`[{key, value, effect}]`); `effect_of` maps the file's effect names
    /// to Kubernetes' (identity for most formats, GKE's `NO_SCHEDULE` for GKE).
    pub fn taints(
        &self,
        path: &FieldPath,
        effect_of: fn(&str) -> Option<&'static str>,
    ) -> Result<Vec<Taint>, FieldError> {
        let Some(value) = self.get(path) else {
            return Ok(Vec::new());
        };
        let Value::Array(items) = value else {
            return Err((
                path.clone(),
                format!("expected a list of taints, found {}", kind(value)),
            ));
        };
        let mut out = Vec::new();
        for i in 0..items.len() {
            let at = path.index(i);
            let key = self.str(&at.field("key"))?.unwrap_or("");
            if key.is_empty() {
                return Err((at.field("key"), "a taint needs a key".into()));
            }
            let value = self.str(&at.field("value"))?.unwrap_or("");
            let effect = self.str(&at.field("effect"))?.unwrap_or("");
            let Some(effect) = effect_of(effect) else {
                return Err((
                    at.field("effect"),
                    format!("`{effect}` is not a taint effect this format accepts"),
                ));
            };
            out.push(taint(key, value, effect));
        }
        Ok(out)
    }
}

/// The Kubernetes effect names, unchanged.
pub(crate) fn kubernetes_effect(effect: &str) -> Option<&'static str> {
    EFFECTS.into_iter().find(|e| *e == effect)
}

/// A JSON value's kind, for messages.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}
