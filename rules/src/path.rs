//! Field paths in the notation Kubernetes uses in its error messages:
//! `spec.containers[0].image`, with map keys in brackets: `spec.nodeSelector[kubernetes.io/os]`.

use std::borrow::Cow;
use std::fmt;

/// The name in a [`Segment`]: borrowed for the field names and label keys the rules spell out (most of
/// them), owned for names read from the input. Paths are built for every container of every template
/// a request carries, so a step costs no allocation where it can.
pub type Name = Cow<'static, str>;

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    /// A field of an object (`spec`, `nodeSelector`): printed as `.name`.
    Field(Name),
    /// A key of a map (`kubernetes.io/os` in a nodeSelector): printed as `[key]`.
    Key(Name),
    /// An element of a list: printed as `[3]`.
    Index(usize),
}

impl Segment {
    /// The name this step has in the parsed document (a field or key name, or the index as text).
    pub fn as_key(&self) -> String {
        self.key_text().into_owned()
    }

    /// [`Segment::as_key`] without a copy for fields and keys.
    pub fn key_text(&self) -> Cow<'_, str> {
        match self {
            Segment::Field(s) | Segment::Key(s) => Cow::Borrowed(s),
            Segment::Index(i) => Cow::Owned(i.to_string()),
        }
    }
}

/// A path from the root of an object to one of its fields.
///
/// ```
/// use winplace_rules::FieldPath;
/// let p = FieldPath::parse("spec.template.spec").field("nodeSelector").key("kubernetes.io/os");
/// assert_eq!(p.to_string(), "spec.template.spec.nodeSelector[kubernetes.io/os]");
/// assert_eq!(p.to_json_pointer(), "/spec/template/spec/nodeSelector/kubernetes.io~1os");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldPath(pub Vec<Segment>);

impl FieldPath {
    /// The empty path (the object itself).
    pub fn root() -> Self {
        FieldPath(Vec::new())
    }

    /// Parses a dotted path whose steps are all fields or `[n]` indexes (`spec.containers[0].image`).
    /// Bracketed non-numeric steps become map keys.
    pub fn parse(text: &str) -> Self {
        let mut segments = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('[') {
                let end = after.find(']').unwrap_or(after.len());
                let inner = &after[..end];
                segments.push(match inner.parse::<usize>() {
                    Ok(i) => Segment::Index(i),
                    Err(_) => Segment::Key(inner.to_string().into()),
                });
                rest = after.get(end + 1..).unwrap_or("");
            } else {
                let rest2 = rest.strip_prefix('.').unwrap_or(rest);
                let end = rest2.find(['.', '[']).unwrap_or(rest2.len());
                if end > 0 {
                    segments.push(Segment::Field(rest2[..end].to_string().into()));
                }
                rest = &rest2[end..];
            }
        }
        FieldPath(segments)
    }

    /// This path extended by the field `name` (a `&'static str` is kept without a copy).
    pub fn field(&self, name: impl Into<Name>) -> Self {
        self.with(Segment::Field(name.into()))
    }

    /// This path extended by the map key `key` (a `&'static str` is kept without a copy).
    pub fn key(&self, key: impl Into<Name>) -> Self {
        self.with(Segment::Key(key.into()))
    }

    /// This path extended by the list index `index`.
    pub fn index(&self, index: usize) -> Self {
        self.with(Segment::Index(index))
    }

    /// This path extended by all steps of `other`.
    pub fn join(&self, other: &FieldPath) -> Self {
        let mut p = self.clone();
        p.0.extend(other.0.iter().cloned());
        p
    }

    fn with(&self, segment: Segment) -> Self {
        let mut steps = Vec::with_capacity(self.0.len() + 1);
        steps.extend_from_slice(&self.0);
        steps.push(segment);
        FieldPath(steps)
    }

    /// The steps of the path.
    pub fn segments(&self) -> &[Segment] {
        &self.0
    }

    /// The path without its last step (the root stays the root).
    pub fn parent(&self) -> Self {
        let mut p = self.clone();
        p.0.pop();
        p
    }

    /// RFC 6901 JSON pointer, as JSON patches use it.
    pub fn to_json_pointer(&self) -> String {
        let mut out = String::new();
        for s in &self.0 {
            out.push('/');
            for c in s.key_text().chars() {
                match c {
                    '~' => out.push_str("~0"),
                    '/' => out.push_str("~1"),
                    c => out.push(c),
                }
            }
        }
        out
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Segment::Field(name) if i == 0 => write!(f, "{name}")?,
                Segment::Field(name) => write!(f, ".{name}")?,
                Segment::Key(key) => write!(f, "[{key}]")?,
                Segment::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_kubernetes_notation() {
        for text in [
            "spec.containers[0].image",
            "spec.template.spec.nodeSelector[kubernetes.io/os]",
            "spec.jobTemplate.spec.template.spec.tolerations[2].value",
        ] {
            assert_eq!(FieldPath::parse(text).to_string(), text);
        }
        assert_eq!(FieldPath::root().to_string(), "");
    }

    #[test]
    fn json_pointer_escapes_slash_and_tilde() {
        let p = FieldPath::root()
            .field("metadata")
            .field("labels")
            .key("a~b/c");
        assert_eq!(p.to_json_pointer(), "/metadata/labels/a~0b~1c");
    }
}
