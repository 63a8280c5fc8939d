//! What a scalar means, as kubectl reads it: go-yaml v2's resolution (YAML 1.1), which sigs.k8s.io/yaml
//! uses to turn YAML into JSON (docs/reference/yaml-kubectl.md, "Scalars").
//!
//! A plain scalar with no tag is resolved by its text: `yes`, `on`, `y` (and their capitalised forms)
//! are `true`, `no`, `off`, `n` are `false`, `~`, `null` and the empty scalar are null, integers may be
//! written with `_`, `0x`, `0o`, `0b` or a leading `0` (octal), floats as YAML 1.1 writes them; anything
//! else, and every quoted or block scalar, is a string. A tag (`!!int "2"`, `!!str 1`) asks for a type;
//! tags go-yaml does not resolve (`!foo`, `!!binary`, `!!set`) leave the text.

use serde_json::{Number, Value};

/// A scalar resolved as go-yaml v2 resolves it, before it becomes JSON.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
}

/// Why a tagged scalar cannot be read: go-yaml's `cannot decode !!str `abc` as a !!int`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TagError(pub String);

/// The core tags go-yaml resolves (`tag:yaml.org,2002:` + suffix).
const RESOLVABLE: [&str; 6] = ["str", "bool", "int", "float", "null", "timestamp"];

/// Resolves a scalar: `plain` for a plain scalar (not quoted, not a block scalar), `tag` the core tag's
/// suffix (`int` of `!!int`) or another tag's text (`!foo`), `None` without a tag.
pub(crate) fn resolve(text: &str, plain: bool, tag: Option<&str>) -> Result<Scalar, TagError> {
    let wanted = match tag {
        None if plain => None,
        // A quoted or block scalar without a tag is a string (go-yaml: not implicit).
        None => return Ok(Scalar::Str(text.to_string())),
        Some(t) if RESOLVABLE.contains(&t) => Some(t),
        // `!foo`, `!!binary`, `!!set`, `!`: the text.
        Some(_) => return Ok(Scalar::Str(text.to_string())),
    };
    if wanted == Some("str") {
        return Ok(Scalar::Str(text.to_string()));
    }
    let implicit = implicit(text);
    let kind = match &implicit {
        Scalar::Null => "null",
        Scalar::Bool(_) => "bool",
        Scalar::Int(_) | Scalar::Uint(_) => "int",
        Scalar::Float(_) => "float",
        Scalar::Str(_) => "str",
    };
    match (wanted, implicit) {
        (None, value) => Ok(value),
        (Some(w), value) if w == kind => Ok(value),
        // `!!float 1` is the float 1.
        (Some("float"), Scalar::Int(i)) => Ok(Scalar::Float(i as f64)),
        (Some("float"), Scalar::Uint(u)) => Ok(Scalar::Float(u as f64)),
        // A date under `!!timestamp` stays its text (go-yaml keeps timestamps as strings in an untyped
        // decode).
        (Some("timestamp"), Scalar::Str(s)) if is_timestamp(&s) => Ok(Scalar::Str(s)),
        (Some(w), _) => Err(TagError(format!(
            "cannot decode !!{kind} `{text}` as a !!{w}"
        ))),
    }
}

/// go-yaml v2's `resolve("", text)`: what a plain scalar's text means. A timestamp is a string in an
/// untyped decode (go-yaml keeps it as its text there), so only `!!timestamp` asks for one.
fn implicit(text: &str) -> Scalar {
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Scalar::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Scalar::Bool(false);
        }
        "" | "~" | "null" | "Null" | "NULL" => return Scalar::Null,
        ".nan" | ".NaN" | ".NAN" => return Scalar::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Scalar::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Scalar::Float(f64::NEG_INFINITY),
        _ => {}
    }
    match text.as_bytes()[0] {
        b'.' => match go_parse_float(text) {
            Some(f) => Scalar::Float(f),
            None => Scalar::Str(text.to_string()),
        },
        b'0'..=b'9' | b'+' | b'-' => number(text),
        _ => Scalar::Str(text.to_string()),
    }
}

/// A scalar that starts with a digit or a sign: an integer (Go's `ParseInt(s, 0, 64)` after every `_`
/// is removed: `0x`, `0o`, `0b`, a leading `0` for octal), else a YAML 1.1 float, else a string.
fn number(text: &str) -> Scalar {
    let plain: String = text.chars().filter(|&c| c != '_').collect();
    if let Some(i) = go_parse_int(&plain) {
        return Scalar::Int(i);
    }
    if let Some(u) = go_parse_uint(&plain) {
        return Scalar::Uint(u);
    }
    if is_yaml_float(&plain)
        && let Some(f) = go_parse_float(&plain)
    {
        return Scalar::Float(f);
    }
    Scalar::Str(text.to_string())
}

/// The digits and base of an integer literal as Go's `strconv.ParseInt(s, 0, …)` reads it (sign
/// removed): `0x`/`0X` hexadecimal, `0o`/`0O` or a leading `0` octal, `0b`/`0B` binary, else decimal.
fn go_base(unsigned: &str) -> (&str, u32) {
    let lower = |i: usize| unsigned.as_bytes().get(i).map(u8::to_ascii_lowercase);
    match (lower(0), lower(1)) {
        (Some(b'0'), Some(b'x')) => (&unsigned[2..], 16),
        (Some(b'0'), Some(b'o')) => (&unsigned[2..], 8),
        (Some(b'0'), Some(b'b')) => (&unsigned[2..], 2),
        (Some(b'0'), Some(_)) => (&unsigned[1..], 8),
        _ => (unsigned, 10),
    }
}

fn go_parse_int(s: &str) -> Option<i64> {
    let (negative, unsigned) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (digits, base) = go_base(unsigned);
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(base)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, base).ok()?;
    if negative {
        if magnitude == 1 << 63 {
            Some(i64::MIN)
        } else {
            i64::try_from(magnitude).ok().map(|m| -m)
        }
    } else {
        i64::try_from(magnitude).ok()
    }
}

fn go_parse_uint(s: &str) -> Option<u64> {
    let unsigned = s.strip_prefix('+').unwrap_or(s);
    let (digits, base) = go_base(unsigned);
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(base)) {
        return None;
    }
    u64::from_str_radix(digits, base).ok()
}

/// go-yaml v2's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    } else {
        if !digits(&mut i) {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat(s, 64)` for the decimal forms YAML writes (`.5`, `1e3`, `1.`); `None` for
/// what it refuses. Go also reads hexadecimal floats and `inf`/`nan` words, which no YAML float text
/// that reaches here holds.
fn go_parse_float(s: &str) -> Option<f64> {
    if !is_yaml_float(s) {
        return None;
    }
    // Go refuses what overflows (`1e999`: ErrRange), and go-yaml then keeps the text.
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// go-yaml v2's timestamp forms: `2001-12-14`, `2001-12-14T21:59:43.10Z`, `2001-12-14 21:59:43.10` (the
/// quick check: four digits and a dash, then a date Go's `time.Parse` reads).
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 8 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-'
}

/// A resolved scalar as JSON, as sigs.k8s.io/yaml writes it (`json.Marshal`); `Err` for a float JSON
/// cannot hold (NaN, infinities), which kubectl refuses too (`json: unsupported value`).
///
/// ```text
/// 1e3 → 1000    1.5 → 1.5    0777 → 511    yes → true    .nan → Err
/// ```
pub(crate) fn to_json(s: Scalar) -> Result<Value, ()> {
    Ok(match s {
        Scalar::Null => Value::Null,
        Scalar::Bool(b) => Value::Bool(b),
        Scalar::Int(i) => Value::Number(i.into()),
        Scalar::Uint(u) => Value::Number(u.into()),
        // Go's json.Marshal writes a float without a fraction as an integer (`1e3` is `1000`), which
        // the API server then reads into integer fields.
        Scalar::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 =>
        {
            #[allow(clippy::cast_possible_truncation)]
            Value::Number((f as i64).into())
        }
        Scalar::Float(f) => Value::Number(Number::from_f64(f).ok_or(())?),
        Scalar::Str(s) => Value::String(s),
    })
}

/// A resolved mapping key as a JSON object key, as sigs.k8s.io/yaml writes it: integers in decimal,
/// booleans as `true`/`false`, floats as Go's `FormatFloat(f, 'g', -1, 32)`; `None` for a null key,
/// which sigs.k8s.io/yaml refuses (`Unsupported map key of type: <nil>`).
pub(crate) fn key_text(s: Scalar) -> Option<String> {
    Some(match s {
        Scalar::Null => return None,
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Uint(u) => u.to_string(),
        Scalar::Float(f) => go_format_float32(f),
        Scalar::Str(s) => s,
    })
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)`, with go-yaml's names for the infinities and NaN: the
/// shortest digits that read back as the same `float32`, in `%e` form when the exponent is below -4 or
/// at least 6 (Go's `%g` decides with precision 6 when it writes the shortest digits).
fn go_format_float32(f: f64) -> String {
    #[allow(clippy::cast_possible_truncation)]
    let f = f as f32;
    if f.is_nan() {
        return ".nan".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.to_string();
    }
    let e = format!("{f:e}");
    let (mantissa, exponent) = e.split_once('e').unwrap_or((&e, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        format!("{f}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What go-yaml v2 (through sigs.k8s.io/yaml, as kubectl) gives, checked with Debian's
    /// golang-k8s-sigs-yaml-dev (docs/reference/yaml-kubectl.md).
    #[test]
    fn plain_scalars_resolve_as_go_yaml_v2() {
        let rows: &[(&str, Scalar)] = &[
            ("yes", Scalar::Bool(true)),
            ("Yes", Scalar::Bool(true)),
            ("on", Scalar::Bool(true)),
            ("ON", Scalar::Bool(true)),
            ("y", Scalar::Bool(true)),
            ("n", Scalar::Bool(false)),
            ("NO", Scalar::Bool(false)),
            ("Off", Scalar::Bool(false)),
            ("True", Scalar::Bool(true)),
            ("yES", Scalar::Str("yES".into())),
            ("~", Scalar::Null),
            ("Null", Scalar::Null),
            ("0777", Scalar::Int(511)),
            ("1_000", Scalar::Int(1000)),
            ("0o17", Scalar::Int(15)),
            ("0b101", Scalar::Int(5)),
            ("-0b101", Scalar::Int(-5)),
            ("0x1F", Scalar::Int(31)),
            ("+12", Scalar::Int(12)),
            ("-0", Scalar::Int(0)),
            (
                "12345678901234567890",
                Scalar::Uint(12_345_678_901_234_567_890),
            ),
            ("08", Scalar::Float(8.0)),
            ("1e3", Scalar::Float(1000.0)),
            (".5", Scalar::Float(0.5)),
            ("1.", Scalar::Float(1.0)),
            ("2001-12-14", Scalar::Str("2001-12-14".into())),
            ("1:30", Scalar::Str("1:30".into())),
            ("0x", Scalar::Str("0x".into())),
            ("windows", Scalar::Str("windows".into())),
            ("10.0.17763", Scalar::Str("10.0.17763".into())),
            ("1.0", Scalar::Float(1.0)),
            ("1e999", Scalar::Str("1e999".into())),
        ];
        for (text, want) in rows {
            assert_eq!(resolve(text, true, None).as_ref(), Ok(want), "{text}");
        }
        assert!(matches!(resolve(".nan", true, None), Ok(Scalar::Float(f)) if f.is_nan()));
        assert_eq!(
            resolve("-.Inf", true, None),
            Ok(Scalar::Float(f64::NEG_INFINITY))
        );
    }

    #[test]
    fn quoted_and_tagged_scalars() {
        assert_eq!(resolve("yes", false, None), Ok(Scalar::Str("yes".into())));
        assert_eq!(resolve("1", true, Some("str")), Ok(Scalar::Str("1".into())));
        assert_eq!(resolve("2", false, Some("int")), Ok(Scalar::Int(2)));
        assert_eq!(resolve("1", true, Some("float")), Ok(Scalar::Float(1.0)));
        assert_eq!(resolve("yes", false, Some("bool")), Ok(Scalar::Bool(true)));
        assert_eq!(
            resolve("1", true, Some("!foo")),
            Ok(Scalar::Str("1".into()))
        );
        assert_eq!(
            resolve("abc", true, Some("int")),
            Err(TagError("cannot decode !!str `abc` as a !!int".into()))
        );
        assert!(resolve("x", true, Some("null")).is_err());
    }

    #[test]
    fn keys_are_written_as_sigs_k8s_io_yaml_writes_them() {
        let key = |t: &str| key_text(resolve(t, true, None).expect("resolves"));
        assert_eq!(key("on").as_deref(), Some("true"));
        assert_eq!(key("y").as_deref(), Some("true"));
        assert_eq!(key("0x1F").as_deref(), Some("31"));
        assert_eq!(key("1.5").as_deref(), Some("1.5"));
        assert_eq!(key("1e3").as_deref(), Some("1000"));
        assert_eq!(key("0.1").as_deref(), Some("0.1"));
        assert_eq!(key("0.00001").as_deref(), Some("1e-05"));
        assert_eq!(key("1e7").as_deref(), Some("1e+07"));
        assert_eq!(key("1234567.0").as_deref(), Some("1.234567e+06"));
        assert_eq!(key("~"), None);
    }
}
