//! Short, safe summaries of tool arguments for the activity log: scalar values only,
//! truncated; secrets and file contents are never included.

use serde_json::Value;

const MAX_VALUE_CHARS: usize = 60;
const MAX_SUMMARY_CHARS: usize = 200;

/// Key fragments whose values are left out (contents and anything like a secret).
const REDACTED: [&str; 11] = [
    "content",
    "contents",
    "text",
    "code",
    "token",
    "secret",
    "password",
    "key",
    "auth",
    "credential",
    "env",
];

/// True when `key` contains a [`REDACTED`] fragment, ignoring ASCII case.
fn is_redacted(key: &str) -> bool {
    REDACTED.iter().any(|needle| {
        key.as_bytes()
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
    })
}

/// `key=value, …` for the scalar arguments of a call (runs on every tool call, so it
/// writes straight into one string).
pub fn summarize(args: &Value) -> String {
    let Value::Object(map) = args else {
        return String::new();
    };
    if map.is_empty() {
        return String::new();
    }
    let mut out = String::with_capacity(64);
    for (key, value) in map {
        if !out.is_empty() {
            out.push_str(", ");
        }
        out.push_str(key);
        out.push('=');
        push_shown(&mut out, key, value);
        // Bytes bound characters from above: count them only when it can matter.
        if out.len() > MAX_SUMMARY_CHARS && out.chars().count() > MAX_SUMMARY_CHARS {
            let mut cut = String::with_capacity(MAX_SUMMARY_CHARS + 3);
            push_truncated(&mut cut, &out, MAX_SUMMARY_CHARS);
            return cut;
        }
    }
    out
}

/// Appends what the summary shows of one value.
fn push_shown(out: &mut String, key: &str, value: &Value) {
    use std::fmt::Write;
    // Writing into a String cannot fail.
    let _ = match (is_redacted(key), value) {
        (true, Value::String(s)) => write!(out, "<{} chars>", s.chars().count()),
        (true, _) => out.write_str("<redacted>"),
        (false, Value::String(s)) => {
            push_truncated(out, s, MAX_VALUE_CHARS);
            Ok(())
        }
        (false, Value::Number(n)) => write!(out, "{n}"),
        (false, Value::Bool(b)) => write!(out, "{b}"),
        (false, Value::Null) => out.write_str("null"),
        (false, Value::Array(a)) => write!(out, "[{} items]", a.len()),
        (false, Value::Object(o)) => write!(out, "{{{} keys}}", o.len()),
    };
}

/// Appends `s`, cut to `max` characters followed by `…` when longer.
fn push_truncated(out: &mut String, s: &str, max: usize) {
    match s.char_indices().nth(max) {
        None => out.push_str(s),
        Some((cut, _)) => {
            out.push_str(&s[..cut]);
            out.push('…');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn leaves_out_contents_and_secrets() {
        let s = summarize(&json!({
            "filePath": "src/a.rs",
            "new_file_contents": "secret source",
            "authToken": "abc",
            "makeFrontmost": false
        }));
        assert!(s.contains("filePath=src/a.rs"), "{s}");
        assert!(s.contains("makeFrontmost=false"), "{s}");
        assert!(!s.contains("secret source") && !s.contains("abc"), "{s}");
    }

    #[test]
    fn truncates_long_values() {
        let s = summarize(&json!({"p": "x".repeat(500)}));
        assert_eq!(s, format!("p={}…", "x".repeat(MAX_VALUE_CHARS)));
        assert_eq!(
            summarize(&json!({"p": "é".repeat(MAX_VALUE_CHARS)})),
            format!("p={}", "é".repeat(MAX_VALUE_CHARS))
        );
    }

    #[test]
    fn shows_every_kind_of_value() {
        let s = summarize(&json!({
            "a": 1, "b": true, "c": null, "d": [1, 2], "e": {"x": 1},
            "API_KEY": 7, "newText": "héllo"
        }));
        assert_eq!(
            s,
            "a=1, b=true, c=null, d=[2 items], e={1 keys}, API_KEY=<redacted>, newText=<5 chars>"
        );
    }

    #[test]
    fn cuts_the_whole_summary_at_its_limit() {
        let args: serde_json::Map<String, Value> = (0..20)
            .map(|i| (format!("k{i:02}"), json!("ü".repeat(30))))
            .collect();
        let s = summarize(&Value::Object(args));
        assert_eq!(s.chars().count(), MAX_SUMMARY_CHARS + 1, "{s}");
        assert!(s.ends_with('…') && s.starts_with("k00=üü"), "{s}");
    }
}
