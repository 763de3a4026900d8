//! File claims: an agent (or the person) says "I am working on these files" and other
//! agents' writes to them are refused with a reason naming the holder, until the claim
//! is released, expires or its agent is gone. This module is the table and its rules;
//! the Claims actor keeps it, persists it and tells the others.
//!
//! Paths and patterns are workspace-relative with `/` separators. A pattern is a glob
//! in the automation policy's syntax (`*` also matches `/`, `**`, `{a,b}`, `[ab]`); a
//! pattern without glob characters also covers everything beneath it, so claiming
//! `src/parser` claims the directory.

use std::path::{Component, Path, PathBuf};

use crate::protocol::id::SessionId;
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

/// Claims held at once, by everyone together.
pub const MAX_CLAIMS: usize = 256;
/// Patterns in one claim.
pub const MAX_PATTERNS: usize = 64;
/// Bytes of one pattern: the longest glob the bridge compiles anywhere.
pub use crate::workspace::tree::MAX_GLOB_BYTES as MAX_PATTERN_BYTES;
/// Characters of a claim's reason.
pub const MAX_REASON_CHARS: usize = 500;

/// Who holds a claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Holder {
    /// An agent, by its bridge session.
    #[serde(rename_all = "camelCase")]
    Agent {
        /// The bridge's session id (8 hex digits).
        session: SessionId,
        /// How people and other agents see it (`claude-code 1a2b3c4d`).
        label: String,
        /// Its client process, when known: a claim whose process is gone does not
        /// survive a restart.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pid: Option<u32>,
    },
    /// The person, from the browser page.
    Person,
}

impl Holder {
    /// How a refusal names the holder.
    pub fn describe(&self) -> String {
        match self {
            Holder::Agent { label, .. } => format!("agent {label}"),
            Holder::Person => "the person".to_string(),
        }
    }

    /// True when `other` is the same holder (the same session, or both the person).
    pub fn same_as(&self, other: &Holder) -> bool {
        match (self, other) {
            (Holder::Agent { session: a, .. }, Holder::Agent { session: b, .. }) => a == b,
            (Holder::Person, Holder::Person) => true,
            _ => false,
        }
    }
}

/// One claim.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Claim {
    /// Unique within a bridge's state (kept across restarts).
    pub id: u64,
    pub holder: Holder,
    /// Workspace-relative globs, as given.
    pub patterns: Vec<String>,
    /// Why, in the holder's words.
    pub reason: String,
    /// Unix ms.
    pub created_ms: u64,
    /// Unix ms: the claim ends then.
    pub expires_ms: u64,
    #[serde(skip)]
    matcher: Option<GlobSet>,
}

/// A claim as the tools, the editor, `/status` and the page show it (the tools'
/// `outputSchema` is derived from it).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClaimView {
    /// The claim's id.
    pub id: u64,
    /// Who holds it: `agent claude-code 1a2b3c4d`, or `the person`.
    pub holder: String,
    /// The holding agent's session; none for the person.
    pub session: Option<SessionId>,
    /// Workspace-relative paths and globs.
    pub patterns: Vec<String>,
    /// Why, in the holder's words.
    pub reason: String,
    /// Seconds until it ends.
    pub expires_in_seconds: u64,
    /// When it ends, Unix ms.
    pub expires_at: u64,
    /// Held by the agent asking (tools only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yours: Option<bool>,
}

impl Claim {
    /// How it is shown at `now_ms`.
    pub fn view(&self, now_ms: u64) -> ClaimView {
        ClaimView {
            id: self.id,
            holder: self.holder.describe(),
            session: match &self.holder {
                Holder::Agent { session, .. } => Some(session.clone()),
                Holder::Person => None,
            },
            patterns: self.patterns.clone(),
            reason: self.reason.clone(),
            expires_in_seconds: self.expires_ms.saturating_sub(now_ms) / 1000,
            expires_at: self.expires_ms,
            yours: None,
        }
    }

    /// True when the claim covers `path` (workspace-relative).
    pub fn covers(&self, path: &str) -> bool {
        self.matcher.as_ref().is_some_and(|m| m.is_match(path))
    }

    /// The refusal text for a write to `path` by someone else, written for a model:
    /// who holds it, why, until when, and what to do instead.
    pub fn refusal(&self, path: &str, now_ms: u64) -> String {
        let left = self.expires_ms.saturating_sub(now_ms).div_ceil(60_000);
        let why = if self.reason.is_empty() {
            String::new()
        } else {
            format!(": \"{}\"", self.reason)
        };
        format!(
            "{path} is claimed by {}{why} (the claim ends in {left} min unless released). \
             Work on other files meanwhile, wait and try again later, or ask its holder; \
             listClaims shows every claim.",
            self.holder.describe()
        )
    }
}

/// Why a claim could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimError {
    #[error("give at least one path or glob")]
    Empty,
    #[error("at most {MAX_PATTERNS} patterns per claim")]
    TooManyPatterns,
    #[error("pattern {0:?}: {1}")]
    BadPattern(String, String),
    #[error("at most {MAX_CLAIMS} claims may be held at once; release some first")]
    Full,
    /// A path outside the workspace (absolute elsewhere, or climbing out with `..`).
    #[error("{0} is outside the workspace: claim paths or globs in it (relative to its root, or absolute beneath it)")]
    Outside(String),
    /// Another holder already claims some of these files.
    #[error("{pattern} is already claimed by {holder}{why}; choose other files or wait until that claim ends")]
    Taken {
        pattern: String,
        holder: String,
        why: String,
    },
}

/// Compiles `patterns` (a bare path also covers what is beneath it).
fn compile(patterns: &[String]) -> Result<GlobSet, ClaimError> {
    let mut builder = GlobSetBuilder::new();
    for p in patterns {
        let glob = |text: &str| {
            Glob::new(text).map_err(|e| ClaimError::BadPattern(p.clone(), e.kind().to_string()))
        };
        builder.add(glob(p)?);
        if !p.contains(['*', '?', '[', '{']) {
            builder.add(glob(&format!("{}/**", p.trim_end_matches('/')))?);
        }
    }
    builder
        .build()
        .map_err(|e| ClaimError::BadPattern(patterns.join(","), e.to_string()))
}

/// `p` as a claim pattern relative to the workspace `root` (canonical): an absolute
/// path beneath it made relative, as the tools and hooks resolve the paths they check,
/// then [`normalize_pattern`]; a path outside it, or climbing out with `..`, refused.
pub fn in_workspace(root: &Path, p: &str) -> Result<String, ClaimError> {
    let given = p.trim();
    let outside = || ClaimError::Outside(given.to_string());
    let relative = if Path::new(given).is_absolute() {
        let path = lexical(Path::new(given));
        let beneath = |path: &Path| {
            path.strip_prefix(root)
                .ok()
                .map(|r| r.to_string_lossy().into_owned())
        };
        // The same place by another name (a symlink on the way to the root): as the
        // filesystem sees it, for a path that exists or whose directory does.
        let real = || {
            std::fs::canonicalize(&path).ok().or_else(|| {
                let dir = std::fs::canonicalize(path.parent()?).ok()?;
                Some(dir.join(path.file_name()?))
            })
        };
        beneath(&path)
            .or_else(|| real().as_deref().and_then(beneath))
            .ok_or_else(outside)?
    } else {
        given.to_string()
    };
    let pattern = normalize_pattern(&relative);
    if pattern.split('/').any(|part| part == "..") {
        return Err(outside());
    }
    Ok(pattern)
}

/// `path` with `.` and `..` worked out from its components alone.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A pattern as stored: trimmed, `./` and leading `/` removed, `\` as `/`.
pub fn normalize_pattern(p: &str) -> String {
    let p = p.trim().replace('\\', "/");
    let mut p = p.as_str();
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p.trim_start_matches('/').to_string()
}

/// Every claim held now.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimTable {
    claims: Vec<Claim>,
    next_id: u64,
}

impl ClaimTable {
    /// A table read back from disk: each claim's matcher rebuilt; claims that no
    /// longer compile, have expired, or whose holder's process is gone are dropped.
    pub fn restored(mut self, now_ms: u64, alive: impl Fn(u32) -> bool) -> Self {
        self.claims.retain_mut(|c| {
            c.matcher = compile(&c.patterns).ok();
            let holder_alive = match &c.holder {
                Holder::Agent { pid: Some(pid), .. } => alive(*pid),
                _ => true,
            };
            c.matcher.is_some() && c.expires_ms > now_ms && holder_alive
        });
        self.next_id = self
            .next_id
            .max(self.claims.iter().map(|c| c.id + 1).max().unwrap_or(1));
        self
    }

    /// Every claim, oldest first.
    pub fn list(&self) -> &[Claim] {
        &self.claims
    }

    /// Drops expired claims; returns them.
    pub fn expire(&mut self, now_ms: u64) -> Vec<Claim> {
        let (gone, kept) = std::mem::take(&mut self.claims)
            .into_iter()
            .partition(|c| c.expires_ms <= now_ms);
        self.claims = kept;
        gone
    }

    /// When the next claim expires.
    pub fn next_expiry(&self) -> Option<u64> {
        self.claims.iter().map(|c| c.expires_ms).min()
    }

    /// The claim of another holder than `by` covering `path`, or lying beneath it when
    /// `path` is a directory (`by = None`: an agent the bridge cannot name, which holds
    /// nothing). A glob without a literal directory (`**/*.rs`) is not seen beneath one.
    pub fn blocking(&self, path: &str, by: Option<&Holder>) -> Option<&Claim> {
        let inside = format!("{}/", path.trim_end_matches('/'));
        self.claims.iter().find(|c| {
            by.is_none_or(|b| !c.holder.same_as(b))
                && (c.covers(path) || c.patterns.iter().any(|p| p.starts_with(&inside)))
        })
    }

    /// Claims `patterns` for `holder` for `ttl_ms`. The holder's own claims with the
    /// same patterns are renewed rather than doubled; another holder's claim that
    /// covers one of the patterns (or one of whose patterns the new claim covers)
    /// refuses the whole claim.
    pub fn claim(
        &mut self,
        holder: Holder,
        patterns: &[String],
        reason: &str,
        ttl_ms: u64,
        now_ms: u64,
    ) -> Result<Claim, ClaimError> {
        let patterns: Vec<String> = patterns
            .iter()
            .map(|p| normalize_pattern(p))
            .filter(|p| !p.is_empty())
            .collect();
        if patterns.is_empty() {
            return Err(ClaimError::Empty);
        }
        if patterns.len() > MAX_PATTERNS {
            return Err(ClaimError::TooManyPatterns);
        }
        if let Some(p) = patterns.iter().find(|p| p.len() > MAX_PATTERN_BYTES) {
            return Err(ClaimError::BadPattern(
                p.chars().take(40).collect(),
                format!("longer than {MAX_PATTERN_BYTES} bytes"),
            ));
        }
        let matcher = compile(&patterns)?;
        self.expire(now_ms);
        for other in self.claims.iter().filter(|c| !c.holder.same_as(&holder)) {
            let overlap = patterns
                .iter()
                .find(|p| other.covers(p))
                .or_else(|| other.patterns.iter().find(|p| matcher.is_match(p.as_str())));
            if let Some(pattern) = overlap {
                return Err(ClaimError::Taken {
                    pattern: pattern.clone(),
                    holder: other.holder.describe(),
                    why: if other.reason.is_empty() {
                        String::new()
                    } else {
                        format!(" (\"{}\")", other.reason)
                    },
                });
            }
        }
        let reason = crate::hooks::input::clip(reason, MAX_REASON_CHARS);
        if let Some(mine) = self
            .claims
            .iter_mut()
            .find(|c| c.holder.same_as(&holder) && c.patterns == patterns)
        {
            mine.expires_ms = now_ms + ttl_ms;
            mine.reason = reason;
            mine.holder = holder;
            return Ok(mine.clone());
        }
        if self.claims.len() >= MAX_CLAIMS {
            return Err(ClaimError::Full);
        }
        let claim = Claim {
            id: self.next_id.max(1),
            holder,
            patterns,
            reason,
            created_ms: now_ms,
            expires_ms: now_ms + ttl_ms,
            matcher: Some(matcher),
        };
        self.next_id = claim.id + 1;
        self.claims.push(claim.clone());
        Ok(claim)
    }

    /// Releases `holder`'s claims: all of them with `paths = None`, else those with one
    /// of `paths` among their patterns or covering one of them. The person may release
    /// anyone's claim by id ([`ClaimTable::release_id`]).
    pub fn release(&mut self, holder: &Holder, paths: Option<&[String]>) -> Vec<Claim> {
        let wanted: Option<Vec<String>> =
            paths.map(|ps| ps.iter().map(|p| normalize_pattern(p)).collect());
        let (gone, kept) = std::mem::take(&mut self.claims).into_iter().partition(|c| {
            c.holder.same_as(holder)
                && wanted
                    .as_ref()
                    .is_none_or(|ws| ws.iter().any(|w| c.patterns.contains(w) || c.covers(w)))
        });
        self.claims = kept;
        gone
    }

    /// Releases the claim `id`, whoever holds it.
    pub fn release_id(&mut self, id: u64) -> Option<Claim> {
        let at = self.claims.iter().position(|c| c.id == id)?;
        Some(self.claims.remove(at))
    }

    /// Hands the claims of session `from`, or of client process `pid`, to `to` (the same
    /// agent in another session). Answers how many moved.
    pub fn move_to(&mut self, from: Option<&str>, pid: Option<u32>, to: Holder) -> usize {
        let mut moved = 0;
        for c in &mut self.claims {
            let same = match &c.holder {
                Holder::Agent {
                    session, pid: p, ..
                } => from.is_some_and(|f| f == session) || (pid.is_some() && *p == pid),
                Holder::Person => false,
            };
            if same && !c.holder.same_as(&to) {
                c.holder = to.clone();
                moved += 1;
            }
        }
        moved
    }

    /// Releases every claim of the agent session `session` (it is gone for good).
    pub fn release_session(&mut self, session: &str) -> Vec<Claim> {
        let (gone, kept) = std::mem::take(&mut self.claims)
            .into_iter()
            .partition(|c| matches!(&c.holder, Holder::Agent { session: s, .. } if s == session));
        self.claims = kept;
        gone
    }
}

/// The words of a shell command that may be paths, workspace-relative.
pub fn command_paths(root: &Path, command: &str) -> Vec<String> {
    command
        .split(|c: char| {
            c.is_whitespace() || matches!(c, ';' | '|' | '&' | '<' | '>' | '(' | ')' | '=')
        })
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"' || c == '`'))
        .filter(|w| !w.is_empty() && !w.starts_with('-'))
        .filter_map(|w| {
            let p = Path::new(w);
            if p.is_absolute() {
                p.strip_prefix(root)
                    .ok()
                    .map(|r| r.to_string_lossy().into_owned())
            } else {
                Some(normalize_pattern(w))
            }
        })
        .filter(|w| !w.is_empty())
        .take(256)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_words_that_are_paths_are_found() {
        let root = Path::new("/w");
        let words = command_paths(
            root,
            "sed -i 's/a/b/' ./src/a.py && cat /w/lib/x.rs > out.txt",
        );
        assert!(words.contains(&"src/a.py".to_string()), "{words:?}");
        assert!(words.contains(&"lib/x.rs".to_string()), "{words:?}");
        assert!(words.contains(&"out.txt".to_string()), "{words:?}");
        assert!(!words.iter().any(|w| w.starts_with('-')));
    }

    #[test]
    fn claims_name_workspace_paths_whatever_way_they_are_given() {
        let root = Path::new("/w/ws");
        let ok = |p: &str| in_workspace(root, p).unwrap();
        assert_eq!(ok("/w/ws/src/a.py"), "src/a.py");
        assert_eq!(ok("/w/ws/./src/../src/*.py"), "src/*.py");
        assert_eq!(ok("./src/a.py"), "src/a.py");
        assert_eq!(ok("**/*.rs"), "**/*.rs");
        for outside in [
            "/etc/hosts",
            "/w/wsx/a",
            "../a",
            "src/../../a",
            "/w/ws/../x",
        ] {
            assert_eq!(
                in_workspace(root, outside),
                Err(ClaimError::Outside(outside.into())),
                "{outside}"
            );
        }
    }

    fn agent(s: &str) -> Holder {
        Holder::Agent {
            session: s.into(),
            label: format!("claude-code {s}"),
            pid: None,
        }
    }

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn another_holders_write_is_blocked_and_the_holders_is_not() {
        let mut t = ClaimTable::default();
        let c = t
            .claim(
                agent("aaaa0001"),
                &v(&["./src/a.py", "lib/**/*.rs"]),
                "refactor",
                60_000,
                0,
            )
            .unwrap();
        assert_eq!(c.patterns, v(&["src/a.py", "lib/**/*.rs"]));
        assert!(t.blocking("src/a.py", Some(&agent("bbbb0002"))).is_some());
        assert!(t.blocking("lib/x/y.rs", None).is_some());
        assert!(t.blocking("src/a.py", Some(&agent("aaaa0001"))).is_none());
        assert!(t.blocking("src/b.py", Some(&agent("bbbb0002"))).is_none());
        let text = c.refusal("src/a.py", 0);
        assert!(text.contains("agent claude-code aaaa0001") && text.contains("\"refactor\""));
        assert!(text.contains("1 min"), "{text}");
    }

    #[test]
    fn a_bare_directory_covers_what_is_beneath_it() {
        let mut t = ClaimTable::default();
        t.claim(Holder::Person, &v(&["src/parser/"]), "", 1000, 0)
            .unwrap();
        assert!(t.blocking("src/parser/mod.rs", None).is_some());
        assert!(t.blocking("src/parserx.rs", None).is_none());
    }

    #[test]
    fn overlapping_claims_of_another_holder_are_refused_and_own_ones_renewed() {
        let mut t = ClaimTable::default();
        t.claim(agent("a"), &v(&["src/*.py"]), "x", 1000, 0)
            .unwrap();
        let taken = t.claim(agent("b"), &v(&["src/a.py"]), "", 1000, 0);
        assert!(matches!(taken, Err(ClaimError::Taken { .. })), "{taken:?}");
        let wider = t.claim(agent("b"), &v(&["src"]), "", 1000, 0);
        assert!(matches!(wider, Err(ClaimError::Taken { .. })), "{wider:?}");
        let renewed = t
            .claim(agent("a"), &v(&["src/*.py"]), "y", 5000, 10)
            .unwrap();
        assert_eq!((t.list().len(), renewed.expires_ms), (1, 5010));
        assert_eq!(
            t.claim(agent("a"), &[], "", 1, 0).unwrap_err(),
            ClaimError::Empty
        );
        assert!(matches!(
            t.claim(agent("a"), &v(&["[z"]), "", 1, 0),
            Err(ClaimError::BadPattern(..))
        ));
    }

    #[test]
    fn claims_expire_release_and_survive_a_restart_only_while_their_process_lives() {
        let mut t = ClaimTable::default();
        t.claim(agent("a"), &v(&["a"]), "", 100, 0).unwrap();
        t.claim(agent("a"), &v(&["b"]), "", 1000, 0).unwrap();
        let c = t.claim(agent("b"), &v(&["c"]), "", 1000, 0).unwrap();
        assert_eq!(t.expire(100).len(), 1);
        assert_eq!(t.release(&agent("a"), Some(&v(&["b/x"]))).len(), 1);
        assert!(t.release_id(c.id).is_some());
        let dead = Holder::Agent {
            session: "d".into(),
            label: "d".into(),
            pid: Some(4),
        };
        t.claim(dead, &v(&["d"]), "", 1000, 0).unwrap();
        t.claim(Holder::Person, &v(&["e"]), "", 1000, 0).unwrap();
        let text = serde_json::to_string(&t).unwrap();
        let back: ClaimTable = serde_json::from_str(&text).unwrap();
        let back = back.restored(10, |_| false);
        assert_eq!(back.list().len(), 1);
        assert!(back.blocking("e", None).is_some(), "matchers are rebuilt");
        let next = back.next_id;
        assert!(next > c.id);
    }

    #[test]
    fn claims_follow_their_agent_into_a_merged_or_new_session() {
        let mut t = ClaimTable::default();
        let old = Holder::Agent {
            session: "old".into(),
            label: "x old".into(),
            pid: Some(77),
        };
        t.claim(old, &v(&["a"]), "", 1000, 0).unwrap();
        let new = Holder::Agent {
            session: "new".into(),
            label: "x new".into(),
            pid: Some(77),
        };
        assert_eq!(t.move_to(None, Some(77), new.clone()), 1);
        assert!(t.blocking("a", Some(&new)).is_none(), "its own claim again");
        assert_eq!(t.move_to(Some("new"), None, agent("merged")), 1);
        assert!(t.blocking("a", Some(&agent("merged"))).is_none());
        assert_eq!(t.move_to(Some("nobody"), Some(1), agent("z")), 0);
    }

    #[test]
    fn limits_are_enforced_at_and_past_the_edge() {
        let mut t = ClaimTable::default();
        let many: Vec<String> = (0..MAX_PATTERNS).map(|i| format!("f{i}")).collect();
        t.claim(agent("a"), &many, "", 1000, 0).unwrap();
        let more: Vec<String> = (0..=MAX_PATTERNS).map(|i| format!("g{i}")).collect();
        assert_eq!(
            t.claim(agent("a"), &more, "", 1000, 0).unwrap_err(),
            ClaimError::TooManyPatterns
        );
        let long = "p".repeat(MAX_PATTERN_BYTES + 1);
        assert!(t.claim(agent("a"), &[long], "", 1000, 0).is_err());
        for i in 1..MAX_CLAIMS {
            t.claim(agent("a"), &[format!("h{i}")], "", 1000, 0)
                .unwrap();
        }
        assert_eq!(
            t.claim(agent("a"), &v(&["last"]), "", 1000, 0).unwrap_err(),
            ClaimError::Full
        );
        let mut fresh = ClaimTable::default();
        let long_reason = "r".repeat(MAX_REASON_CHARS + 10);
        let c = fresh
            .claim(agent("a"), &v(&["f0"]), &long_reason, 1, 0)
            .unwrap();
        assert_eq!(
            c.reason.chars().count(),
            MAX_REASON_CHARS + 1,
            "cut, with an ellipsis"
        );
    }
}
