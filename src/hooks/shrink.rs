//! Shrinking a hook's oversized input in one pass: long strings (file contents, command
//! output) become `<N bytes>` as they are read, so the input is never held twice, and
//! an input cut short (it exceeded what the hook reads) keeps every value read before
//! the cut. A Write of a huge file still names its `file_path`, which comes first in
//! the CLI's `tool_input`, so a claim can still be enforced.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// `input` with every string longer than `max` bytes replaced by `<N bytes>`, and
/// whether all of it was JSON (`false`: it was cut short or malformed, and the result
/// holds what came before the fault; `{}` when nothing did).
pub fn shrink(input: &[u8], max: usize) -> (Value, bool) {
    let mut out = Value::Null;
    let mut de = serde_json::Deserializer::from_slice(input);
    let complete = Fill {
        slot: &mut out,
        max,
    }
    .deserialize(&mut de)
    .is_ok()
        && de.end().is_ok();
    if !out.is_object() {
        out = Value::Object(Map::new());
    }
    (out, complete)
}

/// Deserialises a value into `slot`, writing containers before their contents so a
/// fault part-way leaves what was read in place.
struct Fill<'s> {
    slot: &'s mut Value,
    max: usize,
}

impl<'de> DeserializeSeed<'de> for Fill<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Fill<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        *self.slot = Value::Bool(v);
        Ok(())
    }

    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        *self.slot = v.into();
        Ok(())
    }

    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        *self.slot = v.into();
        Ok(())
    }

    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        *self.slot = v.into();
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        *self.slot = Value::Null;
        Ok(())
    }

    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        *self.slot = Value::String(if v.len() > self.max {
            format!("<{} bytes>", v.len())
        } else {
            v.to_string()
        });
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        *self.slot = Value::Array(Vec::new());
        let Value::Array(items) = self.slot else {
            unreachable!("just set")
        };
        loop {
            items.push(Value::Null);
            let last = items.last_mut().expect("just pushed");
            match seq.next_element_seed(Fill {
                slot: last,
                max: self.max,
            }) {
                Ok(Some(())) => {}
                Ok(None) => {
                    items.pop();
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        *self.slot = Value::Object(Map::new());
        let Value::Object(entries) = self.slot else {
            unreachable!("just set")
        };
        while let Some(key) = map.next_key::<String>()? {
            let slot = entries.entry(key).or_insert(Value::Null);
            map.next_value_seed(Fill {
                slot,
                max: self.max,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_strings_become_their_length_and_the_shape_stays() {
        let input = json!({
            "hook_event_name": "PreToolUse", "n": 3, "ok": true, "none": null,
            "tool_input": {"file_path": "/w/a", "content": "x".repeat(11), "list": ["yy", "z".repeat(20)]}
        });
        let (out, complete) = shrink(input.to_string().as_bytes(), 10);
        assert!(complete);
        assert_eq!(
            out,
            json!({
                "hook_event_name": "PreToolUse", "n": 3, "ok": true, "none": null,
                "tool_input": {"file_path": "/w/a", "content": "<11 bytes>", "list": ["yy", "<20 bytes>"]}
            })
        );
    }

    #[test]
    fn an_input_cut_short_keeps_what_came_before_the_cut() {
        let whole = json!({
            "session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": "/w/a", "content": "x".repeat(1000)}
        })
        .to_string();
        let cut = &whole.as_bytes()[..whole.len() - 500];
        let (out, complete) = shrink(cut, 10);
        assert!(!complete);
        assert_eq!(out["hook_event_name"], "PreToolUse");
        assert_eq!(out["tool_input"]["file_path"], "/w/a");
        assert_eq!(out["tool_input"]["content"], Value::Null);
        assert_eq!(shrink(b"not json", 10), (json!({}), false));
        assert_eq!(shrink(b"[1, 2]", 10), (json!({}), true));
    }
}
