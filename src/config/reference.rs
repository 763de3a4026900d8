//! What the settings' declarations ([`super::sections`]) say, read back from their JSON
//! schema: the range check at load, `config/default.toml` and the table of
//! `docs/configuration.md` (both generated; tests fail when they are stale).

use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::{invalid, ConfigError, Settings};

/// One key: its dotted path, its schema (with `$ref`s followed) and its default.
struct Key {
    path: String,
    schema: Map<String, Value>,
    default: Value,
}

/// A section (`[server]`, `[tools.expose]`): its dotted path and description.
struct Section {
    path: String,
    description: String,
}

enum Entry {
    Key(Key),
    Section(Section),
}

/// The settings' schema, made once.
fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::to_value(schemars::schema_for!(Settings)).expect("a schema is JSON")
    })
}

/// `node` with a `$ref` (to `#/$defs/…`) replaced by what it names, keeping the
/// node's own keywords (its description) over the target's.
fn resolved(node: &Value) -> Map<String, Value> {
    let mut own = node.as_object().cloned().unwrap_or_default();
    if let Some(target) = own
        .remove("$ref")
        .and_then(|r| r.as_str().map(str::to_string))
        .and_then(|r| r.strip_prefix("#/$defs/").map(str::to_string))
        .and_then(|name| schema()["$defs"].get(&name).cloned())
    {
        let mut merged = target.as_object().cloned().unwrap_or_default();
        merged.extend(own);
        return merged;
    }
    own
}

/// Every section and key, in declaration order (a section's keys before its
/// sub-sections, as TOML needs them).
fn entries() -> Vec<Entry> {
    let defaults = serde_json::to_value(Settings::default()).expect("settings are JSON");
    let mut out = Vec::new();
    walk(&resolved(schema()), "", &defaults, &mut out);
    out
}

fn walk(node: &Map<String, Value>, prefix: &str, defaults: &Value, out: &mut Vec<Entry>) {
    let Some(properties) = node.get("properties").and_then(Value::as_object) else {
        return;
    };
    let mut sections = Vec::new();
    for (name, property) in properties {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        let schema = resolved(property);
        let default = defaults.get(name).cloned().unwrap_or(Value::Null);
        if schema.contains_key("properties") {
            sections.push((path, schema, default));
        } else {
            out.push(Entry::Key(Key {
                path,
                schema,
                default,
            }));
        }
    }
    for (path, schema, default) in sections {
        out.push(Entry::Section(Section {
            path: path.clone(),
            description: text_of(&schema),
        }));
        walk(&schema, &path, &default, out);
    }
}

/// A schema's description as one paragraph.
fn text_of(schema: &Map<String, Value>) -> String {
    schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn bound(schema: &Map<String, Value>, name: &str) -> Option<u64> {
    schema.get(name).and_then(Value::as_u64)
}

/// Checks every range the declarations give (`minimum`/`maximum`, string lengths);
/// the error names the first key out of range and its range as the docs say it.
pub(super) fn check_ranges(settings: &Settings) -> Result<(), ConfigError> {
    // Compiled for the check and dropped after it: settings are checked once per load,
    // and a running bridge need not keep the validator.
    let validator = jsonschema::validator_for(schema()).expect("the settings schema compiles");
    let value = serde_json::to_value(settings).expect("settings are JSON");
    let Some(error) = validator.iter_errors(&value).next() else {
        return Ok(());
    };
    let key = error
        .instance_path()
        .to_string()
        .trim_start_matches('/')
        .replace('/', ".");
    let entries = entries();
    let declared = entries.iter().find_map(|e| match e {
        Entry::Key(k) if k.path == key => Some(&k.schema),
        _ => None,
    });
    let allowed = match declared {
        // As the docs say it (`100 ms–10 min`); a range open above by its minimum.
        Some(s) if s.contains_key("minimum") || s.contains_key("maximum") => allowed_for(&key)
            .unwrap_or_else(|| match bound(s, "maximum") {
                Some(max) => format!("{}–{max}", bound(s, "minimum").unwrap_or(0)),
                None => format!("at least {}", bound(s, "minimum").unwrap_or(0)),
            }),
        Some(s) if s.contains_key("maxLength") => format!(
            "{} to {} characters",
            bound(s, "minLength").unwrap_or(0),
            bound(s, "maxLength").unwrap_or(0)
        ),
        _ => error.to_string(),
    };
    Err(invalid(&key, error.instance(), &allowed))
}

/// `n` milliseconds as people write them: `100 ms`, `10 s`, `1 min`, `24 h`, `7 days`.
fn duration(n: u64) -> String {
    const DAY: u64 = 86_400_000;
    match n {
        0 => "0".into(),
        n if n.is_multiple_of(DAY) && n > DAY => format!("{} days", n / DAY),
        n if n.is_multiple_of(3_600_000) => format!("{} h", n / 3_600_000),
        n if n.is_multiple_of(60_000) => format!("{} min", n / 60_000),
        n if n.is_multiple_of(1_000) => format!("{} s", n / 1_000),
        n => format!("{n} ms"),
    }
}

/// `n` bytes as people write them: `16 B`, `64 KiB`, `2 MiB`, `1 GiB`.
fn size(n: u64) -> String {
    for (unit, scale) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if n >= scale && n.is_multiple_of(scale) {
            return format!("{} {unit}", n / scale);
        }
    }
    format!("{n} B")
}

/// What the docs say a key allows.
fn allowed(key: &Key) -> String {
    let s = &key.schema;
    if let Some(text) = s.get("x-allowed").and_then(Value::as_str) {
        return text.to_string();
    }
    let names = |v: &Value| {
        v.as_array().map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    if let Some(list) = s.get("enum").and_then(names) {
        return list;
    }
    // An enumeration whose values have their own doc comments: one `const` each.
    let consts = s.get("oneOf").and_then(Value::as_array).map(|a| {
        a.iter()
            .map(|v| v.get("const").and_then(Value::as_str))
            .collect::<Option<Vec<_>>>()
    });
    if let Some(Some(list)) = consts {
        return list.join(", ");
    }
    if let Some(list) = s
        .get("items")
        .map(resolved)
        .and_then(|items| items.get("enum").and_then(names))
    {
        return format!("{list} (a list)");
    }
    if s.get("type").and_then(Value::as_str) == Some("boolean") {
        return "bool".into();
    }
    let show = |n: u64| {
        if key.path.ends_with("_ms") {
            duration(n)
        } else if key.path.ends_with("_bytes") {
            size(n)
        } else {
            n.to_string()
        }
    };
    match (bound(s, "minimum"), bound(s, "maximum")) {
        (Some(min), Some(max)) => format!("{}–{}", show(min), show(max)),
        _ => String::new(),
    }
}

/// The keys whose value is a list of names or texts (what the environment and `--set`
/// give comma-separated), from the declarations: a list setting added to a section is
/// one without further ado.
pub(super) fn list_keys() -> Vec<String> {
    entries()
        .into_iter()
        .filter_map(|e| match e {
            Entry::Key(k) if is_list_of_text(&k.schema) => Some(k.path),
            _ => None,
        })
        .collect()
}

/// An array whose items are strings (or an enumeration of them).
fn is_list_of_text(schema: &Map<String, Value>) -> bool {
    if schema.get("type").and_then(Value::as_str) != Some("array") {
        return false;
    }
    let items = schema.get("items").map(resolved).unwrap_or_default();
    let strings = |v: &Value| v.as_array().is_some_and(|a| a.iter().all(Value::is_string));
    items.get("type").and_then(Value::as_str) == Some("string")
        || items.get("enum").is_some_and(strings)
        || items
            .get("oneOf")
            .and_then(Value::as_array)
            .is_some_and(|a| {
                a.iter()
                    .all(|v| v.get("const").is_some_and(Value::is_string))
            })
}

/// What the docs say `path` (a dotted key) allows; `None` for an unknown key or one
/// whose allowed values the docs leave to its description.
pub(super) fn allowed_for(path: &str) -> Option<String> {
    entries().into_iter().find_map(|e| match e {
        Entry::Key(k) if k.path == path => Some(allowed(&k)).filter(|a| !a.is_empty()),
        _ => None,
    })
}

/// The first value in `document` (a configuration file, as parsed) whose JSON type is
/// not what its key declares (`"3"` or `3.7` for an integer, `1` for a boolean): its
/// dotted key and the value. The `config` crate would convert them quietly (`3.7`
/// becomes 4, `true` becomes 1). Keys the schema gives no type (or does not know: those
/// are refused as unknown later) pass.
pub(super) fn mistyped(document: &Value) -> Option<(String, Value)> {
    entries().into_iter().find_map(|e| {
        let Entry::Key(k) = e else {
            return None;
        };
        let value = k
            .path
            .split('.')
            .try_fold(document, |node, part| node.get(part))?;
        let types: Vec<&str> = match k.schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => return None,
        };
        let fits = |t: &str| match t {
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "string" => value.is_string(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            "null" => value.is_null(),
            _ => true,
        };
        (!types.iter().any(|t| fits(t))).then(|| (k.path.clone(), value.clone()))
    })
}

/// How the docs show a key's default.
fn default_shown(key: &Key) -> String {
    if let Some(text) = key.schema.get("x-default").and_then(Value::as_str) {
        return text.to_string();
    }
    match &key.default {
        Value::Null => String::new(),
        Value::String(s) if s.is_empty() => "`\"\"`".into(),
        Value::String(s) => format!("`{s}`"),
        Value::Array(a) if a.is_empty() => "`[]`".into(),
        Value::Array(a) => a
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(", "),
        other => format!("`{other}`"),
    }
}

/// The table of every key for `docs/configuration.md`; `flags` pairs a command-line
/// flag with the key it sets.
pub fn docs_table(flags: &[(&str, &str)]) -> String {
    let mut out =
        String::from("| key | default | allowed | flag | meaning |\n|---|---|---|---|---|\n");
    for entry in entries() {
        let Entry::Key(key) = entry else { continue };
        let flag = flags
            .iter()
            .find(|(_, k)| *k == key.path)
            .map_or(String::new(), |(f, _)| format!("`{f}`"));
        let cell = |s: String| s.replace('|', "\\|");
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            key.path,
            cell(default_shown(&key)),
            cell(allowed(&key)),
            flag,
            cell(text_of(&key.schema)),
        ));
    }
    out
}

/// `text` as `# ` comment lines of at most 88 columns.
fn comment(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::from("#");
    for word in text.split_whitespace() {
        if line.len() + 1 + word.len() > 88 && line.len() > 1 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(word);
    }
    if line.len() > 1 {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A default as a TOML value (JSON strings, numbers and arrays are TOML too).
fn toml_value(v: &Value) -> String {
    match v {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(toml_value).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

const HEADER: &str = "\
# ide-bridge default configuration: every key with its default. Generated from the
# declarations in src/config/sections.rs (`UPDATE_DOCS=1 cargo test --lib config::`);
# docs/configuration.md has the same keys as a table, with their allowed values.
#
# Layers, later wins: built-in defaults < this file (embedded in the binary)
# < --config FILE < IDE_BRIDGE_* environment variables < command-line flags.
# Environment keys use \"__\" between section and key, for example
#   IDE_BRIDGE_SESSIONS__MAX_SESSIONS=3   IDE_BRIDGE_IDE_NAME=my-bridge
# Unknown keys and out-of-range values stop start-up with a message naming the key.
";

/// `config/default.toml`: every key with its description and default.
pub fn default_toml() -> String {
    let mut out = String::from(HEADER);
    for entry in entries() {
        match entry {
            Entry::Section(section) => {
                out.push_str(&format!("\n[{}]\n", section.path));
                if !section.description.is_empty() {
                    out.push_str(&comment(&section.description));
                }
            }
            Entry::Key(key) => {
                out.push('\n');
                let mut text = text_of(&key.schema);
                match allowed(&key).as_str() {
                    "" | "bool" => {}
                    allowed => text.push_str(&format!(" Allowed: {allowed}.")),
                }
                out.push_str(&comment(&text));
                let leaf = key.path.rsplit('.').next().unwrap_or(&key.path);
                match &key.default {
                    Value::Null => {
                        let example = key.schema.get("x-example").cloned().unwrap_or_default();
                        out.push_str(&format!("# {leaf} = {}\n", toml_value(&example)));
                    }
                    v => out.push_str(&format!("{leaf} = {}\n", toml_value(v))),
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_read_as_people_write_them() {
        assert_eq!(duration(100), "100 ms");
        assert_eq!(duration(60_000), "1 min");
        assert_eq!(duration(86_400_000), "24 h");
        assert_eq!(duration(7 * 86_400_000), "7 days");
        assert_eq!(size(16), "16 B");
        assert_eq!(size(2 << 20), "2 MiB");
        assert_eq!(size(1 << 30), "1 GiB");
    }

    #[test]
    fn every_key_has_a_description_and_a_default_or_a_reason() {
        let keys: Vec<Key> = entries()
            .into_iter()
            .filter_map(|e| match e {
                Entry::Key(k) => Some(k),
                Entry::Section(_) => None,
            })
            .collect();
        assert!(keys.len() > 80, "{}", keys.len());
        for key in &keys {
            assert!(!text_of(&key.schema).is_empty(), "{} has no doc", key.path);
            assert!(
                !default_shown(key).is_empty(),
                "{} has no default to show",
                key.path
            );
        }
    }

    /// `config/default.toml` is what the declarations say; `UPDATE_DOCS=1` rewrites it.
    #[test]
    fn config_default_toml_is_current() {
        crate::generated::file("config/default.toml", &default_toml(), "config");
    }
}
