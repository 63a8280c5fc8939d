//! The image classification of [`crate::windows::classify_image`] in CEL: the same tables
//! (`known_images`, the build tags of [`crate::windows::BUILDS`]), read from the same Rust data, so that a
//! new row there reaches the exported policies too.
//!
//! An image's class is a `list(int)`: its Windows builds (empty: Windows of unknown build), or one of the
//! codes [`LINUX`], [`MULTI_OS`], [`UNRECOGNIZED`].

use crate::windows::builds::{BUILDS, Channel};
use crate::windows::known_images::{
    FRAMEWORK_SHARED, Family, KNOWN, LINUX_TOKENS, VARIANT_MARKERS, VARIANT_YEARS,
};
use crate::windows::{ImageRule, Os};

/// The class of a Linux-only image.
pub const LINUX: i64 = -1;
/// The class of a multi-OS image.
pub const MULTI_OS: i64 = -2;
/// The class of an image nothing recognizes.
pub const UNRECOGNIZED: i64 = -3;

/// A CEL string literal (single-quoted, escaped).
pub fn lit(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A CEL list of string literals.
pub fn str_list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let items: Vec<String> = items.into_iter().map(lit).collect();
    format!("[{}]", items.join(", "))
}

/// `regex::escape` for the few characters image names hold.
fn escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if ".+*?()|[]{}^$\\".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The Docker reference grammar as one regular expression (`parse_image_ref`'s checks: registry, path
/// components, tag, digest).
fn reference_regex() -> String {
    let label = "[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?";
    let domain = format!("(?:{label}(?:\\.{label})*|\\[[0-9A-Fa-f:]+\\])(?::[0-9]+)?");
    let comp = "[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*";
    format!(
        "^(?:{domain}/)?{comp}(?:/{comp})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{{32,}})?$"
    )
}

/// The regular expression the name (reference without tag and digest) of a table row's images matches.
fn row_regex(registry: &str, repository: &str) -> String {
    let (repo, below) = match repository.strip_suffix('/') {
        Some(prefix) => (prefix, true),
        None => (repository, false),
    };
    let tail = if below { "/.+" } else { "" };
    if registry == "docker.io" {
        let repo = match repo.strip_prefix("library/") {
            Some(name) => format!("(?:library/)?{}", escape(name)),
            None => escape(repo),
        };
        format!("^(?:(?:docker\\.io|index\\.docker\\.io)/)?{repo}{tail}$")
    } else {
        format!("^(?i:{})/{}{tail}$", escape(registry), escape(repo))
    }
}

/// The build tags of the table (`ltsc2022` → 20348), lowercase; with the LTSC years a variant marker
/// may be followed by (`windows-2019`) when `with_years`: a CEL map literal, the value of the variables
/// `buildTags` and `variantTags`.
pub fn build_tags(with_years: bool) -> String {
    let mut pairs: Vec<String> = BUILDS
        .iter()
        .flat_map(|b| {
            b.tags
                .iter()
                .map(move |t| (t.to_ascii_lowercase(), b.build))
        })
        .map(|(t, b)| format!("{}: {b}", lit(&t)))
        .collect();
    if with_years {
        pairs.extend(
            VARIANT_YEARS
                .iter()
                .map(|(y, b)| format!("{}: {b}", lit(y))),
        );
    }
    format!("{{{}}}", pairs.join(", "))
}

/// `base_token_build(x)` as CEL: the build a tag token names, `0` for none.
fn base_token(x: &str, with_years: bool) -> String {
    let map = if with_years {
        "variables.variantTags"
    } else {
        "variables.buildTags"
    };
    format!(
        "({x}.lowerAscii() in {map} ? {map}[{x}.lowerAscii()] : ({x}.matches('^10\\\\.0\\\\.(0|[1-9][0-9]{{0,8}})(\\\\.(0|[1-9][0-9]*))?$') ? int({x}.split('.')[2]) : 0))"
    )
}

/// The tag's Windows variant marker with the token after it (`nanoserver-ltsc2022`), as found.
fn variant_find(tag: &str) -> String {
    let markers = VARIANT_MARKERS.join("|");
    format!("{tag}.find('(?i)(?:^|-)(?:{markers})(?:-[^-]*)?(?:-|$)')")
}

/// Whether the tag has a Windows variant marker.
fn has_variant(tag: &str) -> String {
    let markers = VARIANT_MARKERS.join("|");
    format!("{tag}.matches('(?i)(?:^|-)(?:{markers})(?:-|$)')")
}

/// The builds of the variant: `[build]`, or `[]` when the token after the marker names none.
fn variant_builds(tag: &str) -> String {
    let parts = format!("{}.split('-').filter(x, x != '')", variant_find(tag));
    format!(
        "({parts}.size() > 1 && {bt} > 0 ? [{bt}] : [])",
        bt = base_token(&format!("{parts}[1]"), true)
    )
}

/// The first tag token that names a build, as a list of at most one build.
fn first_base_token(tag: &str) -> String {
    let tokens = format!("{tag}.split('-')");
    let bt = base_token("x", false);
    format!("({tokens}.exists(x, {bt} > 0) ? [{tokens}.map(x, {bt}).filter(b, b > 0)[0]] : [])")
}

/// Whether a tag token names a Linux distribution.
fn linux_tag(tag: &str) -> String {
    let (exact, prefix) = LINUX_TOKENS;
    format!(
        "{tag}.split('-').exists(x, x.lowerAscii().matches('^(?:{})$|^(?:{})'))",
        exact.join("|"),
        prefix.join("|")
    )
}

/// The class of a known family's image with tag `tag` (`''` for a digest-only reference).
fn family_class(family: Family, tag: &str) -> String {
    let windows_variant = |otherwise: String| {
        format!(
            "({} ? {} : {otherwise})",
            has_variant(tag),
            variant_builds(tag)
        )
    };
    match family {
        Family::WindowsBase => windows_variant(first_base_token(tag)),
        Family::HostProcessBase => "[]".to_string(),
        Family::DotnetFramework => {
            let first = format!("{tag}.split('-')[0]");
            let mut shared = "[]".to_string();
            for (token, builds) in FRAMEWORK_SHARED.iter().rev() {
                let list: Vec<String> = builds.iter().map(u32::to_string).collect();
                shared = format!(
                    "({first} == {} ? [{}] : {shared})",
                    lit(token),
                    list.join(", ")
                );
            }
            windows_variant(shared)
        }
        Family::DotnetFrameworkOther => windows_variant("[]".to_string()),
        Family::SharedTags => {
            windows_variant(format!("({} ? [{LINUX}] : [{MULTI_OS}])", linux_tag(tag)))
        }
        Family::MultiOs => format!("[{MULTI_OS}]"),
        Family::Linux => windows_variant(format!("[{LINUX}]")),
    }
}

/// A glob of the settings' image rules (`*` any run, `?` one character) as a regular expression.
fn glob_regex(pattern: &str) -> String {
    let mut out = String::from("^");
    for c in pattern.chars() {
        match c {
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            c => out.push_str(&escape(&c.to_string())),
        }
    }
    out.push('$');
    out
}

/// The family names of [`Family`] in the exported tables.
fn family_name(family: Family) -> &'static str {
    match family {
        Family::WindowsBase => "windowsBase",
        Family::HostProcessBase => "hostProcessBase",
        Family::DotnetFramework => "dotnetFramework",
        Family::DotnetFrameworkOther => "dotnetFrameworkOther",
        Family::SharedTags => "sharedTags",
        Family::MultiOs => "multiOs",
        Family::Linux => "linux",
    }
}

const FAMILIES: [Family; 7] = [
    Family::WindowsBase,
    Family::HostProcessBase,
    Family::DotnetFramework,
    Family::DotnetFrameworkOther,
    Family::SharedTags,
    Family::MultiOs,
    Family::Linux,
];

/// The built-in tables as a CEL list of `[regex of the name, family]`, in table order (the variable
/// `knownImages`).
pub fn known_images() -> String {
    let rows: Vec<String> = KNOWN
        .iter()
        .map(|row| {
            format!(
                "[{}, {}]",
                lit(&row_regex(row.registry, row.repository)),
                lit(family_name(row.family))
            )
        })
        .collect();
    format!("[{}]", rows.join(", "))
}

/// Each image as `[image, name, effective tag, family]`, from `parts` (the `[image, name, tag]` of
/// [`reference_parts`]): the family is `rule<i>` for the first settings image rule that matches the image
/// as written, `invalid` for a reference the kubelet could not pull, the first table row's family, else
/// `none`.
pub fn with_family(parts: &str, image_rules: &[ImageRule]) -> String {
    let rules: Vec<String> = image_rules
        .iter()
        .enumerate()
        .map(|(i, rule)| format!("[{}, 'rule{i}']", lit(&glob_regex(&rule.pattern))))
        .collect();
    format!(
        "{parts}.map(r, r + [([{rules}].filter(x, r[0].matches(x[0])).map(x, x[1]) + (!r[0].matches({re}) || r[0].matches('^[0-9a-f]{{64}}$') ? ['invalid'] : []) + variables.knownImages.filter(x, r[1].matches(x[0])).map(x, x[1]) + ['none'])[0]])",
        rules = rules.join(", "),
        re = lit(&reference_regex())
    )
}

/// The class of the image `r` (`[image, name, tag, family]` of [`with_family`]).
pub fn classify(r: &str, image_rules: &[ImageRule]) -> String {
    let (family, tag) = (format!("{r}[3]"), format!("{r}[2]"));
    let mut out = format!("[{UNRECOGNIZED}]");
    for f in FAMILIES.iter().rev() {
        out = format!(
            "({family} == {} ? {} : {out})",
            lit(family_name(*f)),
            family_class(*f, &tag)
        );
    }
    for (i, rule) in image_rules.iter().enumerate().rev() {
        let class = match rule.os {
            Os::Linux => format!("[{LINUX}]"),
            Os::Windows => {
                let builds: Vec<String> = rule.build_numbers().iter().map(u32::to_string).collect();
                format!("[{}]", builds.join(", "))
            }
        };
        out = format!("({family} == 'rule{i}' ? {class} : {out})");
    }
    out
}

/// Each image as `[image, name, effective tag]`: the name without tag and digest; the tag the kubelet
/// pulls (`latest` when none is written), `''` for a digest-only reference. The image is read as
/// `string(i)`: the API server declares `object` as `dyn`, and a list literal of a `dyn` and strings does
/// not compile there (`ValidateHomogeneousAggregateLiterals` compares the elements' checked types with
/// `IsEquivalentType`, cel-go `cel/validator.go`).
pub fn reference_parts(images: &str) -> String {
    let before_digest = "i.split('@')[0]";
    let tag_part = format!("{before_digest}.find(':[^:/]*$')");
    format!(
        "{images}.map(i, [string(i), {tag_part} != '' ? {before_digest}.substring(0, {before_digest}.size() - {tag_part}.size()) : {before_digest}, {tag_part} != '' ? {tag_part}.substring(1) : (i.contains('@') ? '' : 'latest')])"
    )
}

/// The host builds a pod could run on without cluster context: every Windows Server build of the table
/// and the supported builds ([`crate::placement::host_candidates`] without context), ascending.
pub fn host_candidates(supported: &[u32]) -> Vec<u32> {
    let mut out: Vec<u32> = BUILDS
        .iter()
        .filter(|b| b.channel != Channel::Client)
        .map(|b| b.build)
        .collect();
    out.extend(supported);
    out.sort_unstable();
    out.dedup();
    out
}

/// `host_runs_image_build(h, b)` as CEL over two int expressions (hcsshim's rule, compat.rs).
pub fn host_runs(h: &str, b: &str) -> String {
    use crate::windows::compat::{COMPAT_LTSC_RELEASES, LTSC2022};
    let mut oldest = LTSC2022.to_string();
    for ltsc in COMPAT_LTSC_RELEASES {
        oldest = format!("({h} > {ltsc} ? {ltsc} : {oldest})");
    }
    format!("({h} < {LTSC2022} ? {h} == {b} : ({oldest} <= {b} && {b} <= {h}))")
}
