//! Short, safe summaries of tool arguments for the activity log: scalar values only,
//! truncated; secrets and file contents are never included.

use serde_json::Value;

const MAX_VALUE_CHARS: usize = 60;
const MAX_SUMMARY_CHARS: usize = 200;

/// Keys whose values are left out (contents and anything that looks like a secret).
fn is_redacted(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
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
    ]
    .iter()
    .any(|needle| k.contains(needle))
}

/// `key=value, …` for the scalar arguments of a call.
pub fn summarize(args: &Value) -> String {
    let Value::Object(map) = args else {
        return String::new();
    };
    let mut out = String::new();
    for (key, value) in map {
        let shown = if is_redacted(key) {
            match value {
                Value::String(s) => format!("<{} chars>", s.chars().count()),
                _ => "<redacted>".to_string(),
            }
        } else {
            match value {
                Value::String(s) => truncate(s),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Null => "null".to_string(),
                Value::Array(a) => format!("[{} items]", a.len()),
                Value::Object(o) => format!("{{{} keys}}", o.len()),
            }
        };
        if !out.is_empty() {
            out.push_str(", ");
        }
        out.push_str(key);
        out.push('=');
        out.push_str(&shown);
        if out.chars().count() > MAX_SUMMARY_CHARS {
            return truncate_to(&out, MAX_SUMMARY_CHARS);
        }
    }
    out
}

fn truncate(s: &str) -> String {
    truncate_to(s, MAX_VALUE_CHARS)
}

fn truncate_to(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max).collect();
        t.push('…');
        t
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
        assert!(s.chars().count() < 80, "{s}");
    }
}
