//! Files made from declarations in the code (docs tables, the default configuration, the
//! policy schema): the check that they are current, which `UPDATE_DOCS=1` turns into a
//! rewrite. Used by tests of the crates that declare them.

use std::path::PathBuf;

/// `rel`, a path from the repository root (this crate lives in `crates/protocol`).
pub fn path_of(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

fn check(rel: &str, current: &str, made: &str, regenerate: &str) {
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(path_of(rel), made).unwrap_or_else(|e| panic!("{rel}: {e}"));
        return;
    }
    assert!(
        current == made,
        "{rel} is stale: run UPDATE_DOCS=1 cargo test --workspace --lib {regenerate}"
    );
}

/// The whole file `rel` (from the crate root) is `made`.
pub fn file(rel: &str, made: &str, regenerate: &str) {
    let current = std::fs::read_to_string(path_of(rel)).unwrap_or_default();
    check(rel, &current, made, regenerate);
}

/// The part of `rel` after the line `start` and before the line `end` is `made`.
pub fn region(rel: &str, start: &str, end: &str, made: &str, regenerate: &str) {
    let current = std::fs::read_to_string(path_of(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let (Some(a), Some(b)) = (current.find(start), current.find(end)) else {
        panic!("{rel} lacks the generated part's markers {start:?} and {end:?}");
    };
    let whole = format!("{}{start}{made}{}", &current[..a], &current[b..]);
    check(rel, &current, &whole, regenerate);
}
