//! Input schemas derived from the tools' argument types (`schemars`), made compact for
//! `tools/list`: every subschema inline, no `$schema` or `title`, integers without
//! schemars' `format`, optional arguments not nullable (an explicit `null` is refused,
//! as before), unit enums as `enum` (without their type's doc comment), and descriptions
//! only on the top-level arguments (from their fields' doc comments). A
//! [`WorkspacePath`](super::WorkspacePath) carries [`PATH_MARK`] in the derived schema;
//! [`PathMarks`] finds those places, and the published schema leaves the marker out.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{Map, Value};

/// Keyword a workspace path's schema carries (never published).
pub(crate) const PATH_MARK: &str = "x-workspace-path";

/// The schema of `T` with its path markers, compacted: what a tool accepts as `T`.
pub(crate) fn derive<T: JsonSchema>() -> Value {
    derive_from::<T>(SchemaSettings::draft2020_12())
}

/// The schema of what serialising `T` makes, compacted: a tool's answer. Unlike an
/// argument, a field that serialises as null is required and may be null.
pub(crate) fn derive_output<T: JsonSchema>() -> Value {
    derive_from::<T>(SchemaSettings::draft2020_12().for_serialize())
}

fn derive_from<T: JsonSchema>(settings: SchemaSettings) -> Value {
    let generator = settings
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    compact(&mut schema, Level::Root);
    schema
}

/// `schema` as clients see it: without path markers.
pub(crate) fn published(mut schema: Value) -> Value {
    strip_marks(&mut schema);
    schema
}

/// Where a schema node sits: descriptions are kept on the root's properties only.
#[derive(Clone, Copy, PartialEq)]
enum Level {
    Root,
    Argument,
    Nested,
}

fn compact(node: &mut Value, level: Level) {
    let Value::Object(map) = node else {
        return;
    };
    map.remove("title");
    map.remove("$schema");
    if level != Level::Argument {
        map.remove("description");
    }
    if level == Level::Root {
        // Clients that read `properties` find it even when there are no arguments.
        map.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
    }
    // Any item: say nothing.
    if map.get("items") == Some(&Value::Bool(true)) {
        map.remove("items");
    }
    if is_integer(map) {
        map.remove("format");
    }
    unit_enum(map);
    if map.contains_key("enum") {
        // An enum argument's description would be its type's doc comment.
        map.remove("description");
    }
    let required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            if !required.contains(name) {
                not_nullable(prop);
            }
            compact(
                prop,
                if level == Level::Root {
                    Level::Argument
                } else {
                    Level::Nested
                },
            );
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = map.get_mut(key) {
            compact(sub, Level::Nested);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(subs)) = map.get_mut(key) {
            subs.iter_mut().for_each(|s| compact(s, Level::Nested));
        }
    }
}

fn is_integer(map: &Map<String, Value>) -> bool {
    match map.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
        _ => false,
    }
}

/// `oneOf: [{const: a}, {enum: [b, c]}]` (a unit enum with documented variants) becomes
/// `enum: [a, b, c]`.
fn unit_enum(map: &mut Map<String, Value>) {
    let Some(Value::Array(variants)) = map.get("oneOf") else {
        return;
    };
    let values: Option<Vec<Vec<Value>>> = variants
        .iter()
        .map(|v| match (v.get("const"), v.get("enum")) {
            (Some(one), _) => Some(vec![one.clone()]),
            (None, Some(Value::Array(many))) => Some(many.clone()),
            _ => None,
        })
        .collect();
    if let Some(values) = values.map(|v| v.concat()) {
        map.remove("oneOf");
        map.remove("description");
        if values.iter().all(Value::is_string) {
            map.insert("type".into(), "string".into());
        }
        map.insert("enum".into(), Value::Array(values));
    }
}

/// An `Option<T>` argument is `T`: null stays refused, as an absent argument means
/// the default.
fn not_nullable(prop: &mut Value) {
    let Value::Object(map) = prop else {
        return;
    };
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".into(), only);
        }
    }
    let inner = match map.get_mut("anyOf") {
        Some(Value::Array(subs)) => {
            subs.retain(|s| s.get("type").is_none_or(|t| t != "null"));
            (subs.len() == 1).then(|| subs.remove(0))
        }
        _ => None,
    };
    if let Some(Value::Object(inner)) = inner {
        map.remove("anyOf");
        for (k, v) in inner {
            map.entry(k).or_insert(v);
        }
    }
}

fn strip_marks(node: &mut Value) {
    match node {
        Value::Object(map) => {
            map.remove(PATH_MARK);
            map.values_mut().for_each(strip_marks);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_marks),
        _ => {}
    }
}

/// One step from an arguments object to a path inside it.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// The named property of an object.
    Key(String),
    /// Every element of an array.
    Each,
    /// Every value of a map (`additionalProperties`).
    EachValue,
}

/// The places where a schema holds a workspace path, found once from its markers.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PathMarks(Vec<Vec<Step>>);

impl PathMarks {
    /// Every marked place in `schema`.
    pub(crate) fn of(schema: &Value) -> Self {
        let mut found = Vec::new();
        collect(schema, &mut Vec::new(), &mut found);
        Self(found)
    }

    /// The marks of `A`'s derived schema, derived once per type (forwarding runs on
    /// every editor call).
    pub(crate) fn of_type<A: JsonSchema + 'static>() -> Arc<Self> {
        static KNOWN: LazyLock<RwLock<HashMap<TypeId, Arc<PathMarks>>>> =
            LazyLock::new(RwLock::default);
        let id = TypeId::of::<A>();
        let known = KNOWN.read().unwrap_or_else(PoisonError::into_inner);
        if let Some(marks) = known.get(&id) {
            return Arc::clone(marks);
        }
        drop(known);
        let marks = Arc::new(Self::of(&derive::<A>()));
        let mut known = KNOWN.write().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(known.entry(id).or_insert(marks))
    }

    /// Calls `confine` on every path string `args` holds at a marked place; its
    /// answer replaces the string. Stops at the first refusal.
    pub(crate) fn apply<E>(
        &self,
        args: &mut Value,
        confine: &mut impl FnMut(&str) -> Result<String, E>,
    ) -> Result<(), E> {
        for steps in &self.0 {
            visit(args, steps, confine)?;
        }
        Ok(())
    }
}

fn collect(schema: &Value, at: &mut Vec<Step>, found: &mut Vec<Vec<Step>>) {
    let Value::Object(map) = schema else {
        return;
    };
    if map.get(PATH_MARK) == Some(&Value::Bool(true)) {
        found.push(at.clone());
    }
    if let Some(Value::Object(props)) = map.get("properties") {
        for (name, prop) in props {
            at.push(Step::Key(name.clone()));
            collect(prop, at, found);
            at.pop();
        }
    }
    for (key, step) in [
        ("items", Step::Each),
        ("additionalProperties", Step::EachValue),
    ] {
        if let Some(sub) = map.get(key) {
            at.push(step);
            collect(sub, at, found);
            at.pop();
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for sub in map.get(key).and_then(Value::as_array).into_iter().flatten() {
            collect(sub, at, found);
        }
    }
}

fn visit<E>(
    value: &mut Value,
    steps: &[Step],
    confine: &mut impl FnMut(&str) -> Result<String, E>,
) -> Result<(), E> {
    let Some((step, rest)) = steps.split_first() else {
        if let Value::String(s) = value {
            *s = confine(s)?;
        }
        return Ok(());
    };
    match (step, value) {
        (Step::Key(k), Value::Object(map)) => match map.get_mut(k) {
            Some(v) => visit(v, rest, confine),
            None => Ok(()),
        },
        (Step::Each, Value::Array(items)) => {
            items.iter_mut().try_for_each(|v| visit(v, rest, confine))
        }
        (Step::EachValue, Value::Object(map)) => {
            map.values_mut().try_for_each(|v| visit(v, rest, confine))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::WorkspacePath;
    use serde::Deserialize;
    use serde_json::json;

    /// Not shown: an enum's values speak for it.
    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Mode {
        /// Documented, but not shown.
        Fast,
        /// Documented too (variants keep their order).
        Slow,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Item {
        /// Not shown: nested.
        at: WorkspacePath,
        #[schemars(range(min = 1))]
        line: Option<u32>,
    }

    /// Not shown: the tool's description says it.
    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        /// Shown.
        file_path: WorkspacePath,
        mode: Option<Mode>,
        #[schemars(length(min = 1))]
        name: Option<String>,
        items: Vec<Item>,
        #[serde(default)]
        flag: bool,
    }

    #[test]
    fn derived_schemas_are_compact_and_refuse_null() {
        let schema = derive::<Args>();
        assert_eq!(
            published(schema),
            json!({
                "type": "object",
                "properties": {
                    "filePath": { "description": "Shown.", "type": "string" },
                    "mode": { "type": "string", "enum": ["fast", "slow"] },
                    "name": { "type": "string", "minLength": 1 },
                    "items": { "type": "array", "items": {
                        "type": "object",
                        "properties": {
                            "at": { "type": "string" },
                            "line": { "type": "integer", "minimum": 1 }
                        },
                        "required": ["at"]
                    } },
                    "flag": { "type": "boolean", "default": false }
                },
                "additionalProperties": false,
                "required": ["filePath", "items"]
            })
        );
    }

    #[test]
    fn path_marks_reach_nested_paths() {
        let marks = PathMarks::of(&derive::<Args>());
        let mut args = json!({"filePath": "a", "name": "a", "items": [{"at": "b"}, {"at": "c"}]});
        marks
            .apply(&mut args, &mut |p: &str| Ok::<_, ()>(format!("/ws/{p}")))
            .unwrap();
        assert_eq!(
            args,
            json!({"filePath": "/ws/a", "name": "a", "items": [{"at": "/ws/b"}, {"at": "/ws/c"}]})
        );
    }
}
