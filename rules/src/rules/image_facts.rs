//! What a registry client learnt about images, handed into the rules ([`ImageFacts`]), and the rule that
//! reports the images it could not learn about (`image-manifest-unresolved`).
//!
//! The rules never fetch anything (docs/registries.md): the CLI's `--resolve-images` and the server read
//! the manifests and hand in what they found, exactly as the Kubewarden policy hands in what its host's
//! OCI capability read ([`crate::CheckerBuilder::images`], [`crate::CheckerBuilder::image_manifests`]).

use std::collections::BTreeMap;

use super::{Emitter, RuleId};
use crate::finding::Finding;
use crate::model::{self, Object};
use crate::placement::container_images;
use crate::settings::Settings;
use crate::windows::{
    ImageClass, ImageOs, ImageProvenance, ImageSource, Provenance, classify_image,
};

/// What a registry client found out about the images of the input.
///
/// Keys are image references as written in the pods (`contoso.azurecr.io/billing:4.2`).
///
/// ```
/// use winplace_rules::rules::ImageFacts;
/// let mut facts = ImageFacts::default();
/// facts.unresolved.insert("registry.example.com/app:1".into(), "the registry does not know the tag".into());
/// assert!(facts.manifests.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImageFacts {
    /// Images whose manifest was read: what it says (source [`crate::windows::ImageSource::Manifest`]).
    pub manifests: BTreeMap<String, ImageClass>,
    /// Images whose manifest could not be read, with why (a clause: `the registry answered 401
    /// Unauthorized`); they keep the classification their name gives, and get an info finding.
    pub unresolved: BTreeMap<String, String>,
    /// The digest each image of `manifests` resolved to (the index, or the single manifest), when known:
    /// shown beside the image, never read by the rules.
    pub digests: BTreeMap<String, String>,
}

impl ImageFacts {
    /// How the rules judge `image` with these facts and `settings`: the manifest's reading when there is
    /// one, else what the settings' image rules or the name say; with the digest, and why the look-up
    /// failed. The same precedence as the rules' own resolution ([`crate::placement::Resolver`]).
    ///
    /// ```
    /// use winplace_rules::rules::ImageFacts;
    /// use winplace_rules::windows::Provenance;
    /// use winplace_rules::Settings;
    /// let mut facts = ImageFacts::default();
    /// facts.unresolved.insert("registry.example.com/app:1".into(), "timeout".into());
    /// let seen = facts.describe("registry.example.com/app:1", &Settings::default());
    /// assert_eq!((seen.from, seen.unresolved.as_deref()), (Provenance::Name, Some("timeout")));
    /// assert_eq!(facts.describe("nginx:1.27", &Settings::default()).from, Provenance::Name);
    /// ```
    pub fn describe(&self, image: &str, settings: &Settings) -> ImageProvenance {
        let class = match self.manifests.get(image) {
            Some(class) => class.clone(),
            None => classify_image(image, &settings.image_rules),
        };
        let from = Provenance::of(class.source);
        ImageProvenance {
            image: image.to_string(),
            os: class.os,
            from,
            digest: (from == Provenance::Manifest)
                .then(|| self.digests.get(image).cloned())
                .flatten(),
            unresolved: self.unresolved.get(image).cloned(),
            reason: class.reason,
        }
    }

    /// The images whose answer differs between `self` and `other` (a manifest, a digest or a failure
    /// appeared, changed or went): the templates running them must be evaluated again.
    ///
    /// ```
    /// use winplace_rules::rules::ImageFacts;
    /// let before = ImageFacts::default();
    /// let mut after = ImageFacts::default();
    /// after.unresolved.insert("registry.example.com/app:1".into(), "timeout".into());
    /// assert_eq!(after.changed_images(&before).into_iter().collect::<Vec<_>>(), ["registry.example.com/app:1"]);
    /// assert!(after.changed_images(&after).is_empty());
    /// ```
    pub fn changed_images<'a>(
        &'a self,
        other: &'a ImageFacts,
    ) -> std::collections::BTreeSet<&'a str> {
        fn diff<'a, V: PartialEq>(
            a: &'a BTreeMap<String, V>,
            b: &'a BTreeMap<String, V>,
            out: &mut std::collections::BTreeSet<&'a str>,
        ) {
            for (k, v) in a {
                if b.get(k) != Some(v) {
                    out.insert(k);
                }
            }
            for k in b.keys() {
                if !a.contains_key(k) {
                    out.insert(k);
                }
            }
        }
        let mut out = std::collections::BTreeSet::new();
        diff(&self.manifests, &other.manifests, &mut out);
        diff(&self.unresolved, &other.unresolved, &mut out);
        diff(&self.digests, &other.digests, &mut out);
        out
    }
}

/// The images of `objects` worth asking a registry about, distinct, in input order: those whose name
/// tells neither their OS nor their Windows build ([`ImageOs::Unrecognized`], and Windows images of
/// unknown build). Images the settings' image rules describe are not asked about: the operator's rule
/// wins; nor are images of exempt namespaces.
///
/// ```
/// use winplace_rules::input::{parse, Limits};
/// use winplace_rules::{model, Settings};
/// use winplace_rules::rules::images_to_resolve;
/// let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: a, image: contoso.azurecr.io/billing:4.2}\n  - {name: b, image: nginx:1.27}\n";
/// let objects = model::objects(&parse("p.yaml", text, &Limits::default()).documents);
/// assert_eq!(images_to_resolve(&objects, &Settings::default()), vec!["contoso.azurecr.io/billing:4.2"]);
/// ```
pub fn images_to_resolve<'a>(
    objects: impl IntoIterator<Item = &'a Object>,
    settings: &Settings,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, template) in super::checked_templates(objects, settings) {
        add_images_to_resolve(
            container_images(&template.spec, &Default::default())
                .into_iter()
                .map(|(_, image)| image),
            settings,
            &mut out,
        );
    }
    out
}

/// Adds the images of `spec` worth asking a registry about ([`images_to_resolve`]) to `out`, each once.
pub(crate) fn add_images_to_resolve<'a>(
    images: impl IntoIterator<Item = &'a str>,
    settings: &Settings,
    out: &mut Vec<String>,
) {
    for image in images {
        let class = classify_image(image, &settings.image_rules);
        let unknown = match &class.os {
            ImageOs::Unrecognized => true,
            ImageOs::Windows { builds } => builds.is_empty(),
            ImageOs::Linux | ImageOs::MultiOs => false,
        };
        let by_rule = matches!(class.source, ImageSource::ImageRule(_));
        if unknown && !by_rule && !out.iter().any(|i| i == image) {
            out.push(image.to_string());
        }
    }
}

/// `image-manifest-unresolved`: one info finding per container whose image is in `unresolved`, at the
/// container's `image` field.
pub(crate) fn check_unresolved(
    objects: &[Object],
    settings: &Settings,
    unresolved: &BTreeMap<String, String>,
    findings: &mut Vec<Finding>,
) {
    for object in objects {
        if settings.exempts(object.namespace.as_deref()) {
            continue;
        }
        check_unresolved_object(object, settings, unresolved, findings);
    }
}

/// [`check_unresolved`] on one object (exempt namespaces are the caller's business): the audit runs it on
/// each pod template, as the CLI does on each object of a file.
pub(crate) fn check_unresolved_object(
    object: &Object,
    settings: &Settings,
    unresolved: &BTreeMap<String, String>,
    findings: &mut Vec<Finding>,
) {
    if unresolved.is_empty() {
        return;
    }
    let Some(Ok(template)) = model::pod_template(object) else {
        return;
    };
    let mut out = Emitter::new(object, settings, findings);
    for (path, image) in container_images(&template.spec, &template.prefix) {
        let Some(why) = unresolved.get(image) else {
            continue;
        };
        let by_name = classify_image(image, &settings.image_rules);
        out.emit(
            RuleId::ImageManifestUnresolved,
            &path,
            format!(
                "The manifest of {image} could not be read: {why}. winplace judges it by its name \
                 instead ({}); check the registry address and credentials (--registry-config), or \
                 describe the image in the settings' imageRules.",
                by_name.reason
            ),
            None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Limits, parse};
    use crate::model;

    const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team}\nspec:\n  containers:\n  - {name: a, image: registry.example.com/app:1}\n  - {name: b, image: nginx:1.27}\n";

    fn findings(text: &str, facts: &ImageFacts, settings: &Settings) -> Vec<Finding> {
        let checker = crate::Checker::builder()
            .settings(settings)
            .images(facts)
            .build();
        checker.report("p.yaml", text).findings
    }

    #[test]
    fn an_unresolved_image_gets_one_info_finding_at_its_container() {
        let mut facts = ImageFacts::default();
        facts.unresolved.insert(
            "registry.example.com/app:1".into(),
            "the registry answered 401 Unauthorized".into(),
        );
        let got: Vec<Finding> = findings(POD, &facts, &Settings::default())
            .into_iter()
            .filter(|f| f.rule == "image-manifest-unresolved")
            .collect();
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].severity, crate::Severity::Info);
        assert_eq!(got[0].path, "spec.containers[0].image");
        assert_eq!(got[0].line, Some(6));
        assert!(
            got[0].message.contains("401 Unauthorized"),
            "{}",
            got[0].message
        );
    }

    #[test]
    fn only_images_whose_name_says_too_little_are_looked_up() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      initContainers:\n      - {name: i, image: registry.example.com/app:1}\n      containers:\n      - {name: a, image: registry.example.com/app:1}\n      - {name: b, image: mcr.microsoft.com/windows/servercore:ltsc2022}\n      - {name: c, image: mcr.microsoft.com/windows/servercore:latest}\n      - {name: d, image: busybox}\n      - {name: e, image: registry.example.com/ruled:2}\n";
        let parsed = parse("d.yaml", text, &Limits::default());
        let objects = model::objects(&parsed.documents);
        let settings = Settings::from_text(
            "s.yaml",
            "imageRules:\n- {pattern: \"registry.example.com/ruled:*\", os: windows}\n",
        )
        .expect("settings");
        assert_eq!(
            images_to_resolve(&objects, &settings),
            vec![
                "registry.example.com/app:1",
                "mcr.microsoft.com/windows/servercore:latest"
            ]
        );
    }

    #[test]
    fn exempt_namespaces_and_resolved_images_get_none() {
        let mut facts = ImageFacts::default();
        facts
            .unresolved
            .insert("registry.example.com/app:1".into(), "timeout".into());
        let settings = Settings {
            exempt_namespaces: vec!["team".into()],
            ..Settings::default()
        };
        assert!(
            findings(POD, &facts, &settings)
                .iter()
                .all(|f| f.rule != "image-manifest-unresolved")
        );
        assert!(
            findings(POD, &ImageFacts::default(), &Settings::default())
                .iter()
                .all(|f| f.rule != "image-manifest-unresolved")
        );
    }
}
