//! What each agent changed, hunk by hunk, since its baseline: the change sets the
//! person reviews after the fact (keep or undo a hunk, a file, an agent), and who last
//! changed each line. Pure bookkeeping: the Changes actor reads the files, writes the
//! undos through the workspace writer, and tells the agents, the editor and the page.
//!
//! A change is recorded from the file's text before an agent's write (snapshotted when
//! the write starts) and after it. Lines changed meanwhile by anyone else are the
//! person's (the ledger catches up with the file before it records or answers).
//! Undoing a hunk reverse-applies it only where the file still holds its lines and
//! their context exactly; otherwise it declines and changes nothing.

use std::collections::{HashMap, VecDeque};

use ide_bridge_protocol::id::SessionId;
use serde::{Deserialize, Serialize};
use similar::{Algorithm, DiffOp, TextDiff};

/// Lines of context kept on each side of a hunk (to find it again for an undo).
const CONTEXT: usize = 3;

/// What the ledger keeps at most; beyond, the oldest changes are dropped (and counted).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Hunks kept, over all agents and files.
    pub max_hunks: usize,
    /// Files followed (their text and line owners).
    pub max_files: usize,
    /// A file larger than this is not followed.
    pub max_file_bytes: usize,
    /// Bytes of changed lines kept (the hunks' text), over all changes.
    pub max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_hunks: 5_000,
            max_files: 500,
            max_file_bytes: 1024 * 1024,
            max_bytes: 64 * 1024 * 1024,
        }
    }
}

/// Who last changed a line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Owner {
    /// Unchanged since the file was first followed.
    Base,
    /// An agent, in change `change`.
    Agent {
        change: u64,
        session: SessionId,
        agent: String,
    },
    /// Anyone but an agent the bridge saw (the person, a formatter, git): lines that
    /// changed between two agent changes, and hunks the person undid.
    Person,
    /// An agent that undid a hunk (`undoChanges`): the lines it put back.
    Undid { session: SessionId, agent: String },
    /// An agent's own shell command (Claude Code's Bash) that named the file: the lines
    /// that changed while it ran (and since they were last seen). Not a change to
    /// review: the command, not the bridge, wrote them.
    Ran { session: SessionId, agent: String },
}

impl Owner {
    /// Who, as an agent or the person is told of it (`None`: nobody since the file was
    /// first followed).
    pub fn who(&self) -> Option<&str> {
        match self {
            Owner::Base => None,
            Owner::Person => Some("the person"),
            Owner::Agent { agent, .. } | Owner::Undid { agent, .. } | Owner::Ran { agent, .. } => {
                Some(agent)
            }
        }
    }
}

/// Where a hunk stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum HunkState {
    /// Waiting for the person.
    Open,
    /// The person kept it.
    Kept,
    /// The person undid it.
    Undone,
}

/// One contiguous change of lines (each line with its newline, as in the file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    /// 1-based line of `old` in the text before.
    pub old_start: usize,
    pub old: Vec<String>,
    /// 1-based line of `new` in the text after.
    pub new_start: usize,
    pub new: Vec<String>,
    /// Up to 3 lines before and after it in the text after.
    pub before: Vec<String>,
    pub after: Vec<String>,
    pub state: HunkState,
}

/// One write of one agent to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub id: u64,
    pub session: SessionId,
    /// How people see the agent (`claude-code 1a2b3c4d`).
    pub agent: String,
    /// Workspace-relative.
    pub file: String,
    /// The tool that wrote (`Edit`, `replaceBlock`, …).
    pub tool: String,
    /// Unix ms.
    pub at_ms: u64,
    /// The file did not exist before (undoing all of it deletes it).
    pub created: bool,
    pub hunks: Vec<Hunk>,
}

/// Bytes of text `c` keeps.
fn bytes_of(c: &Change) -> usize {
    c.hunks
        .iter()
        .flat_map(|h| h.old.iter().chain(&h.new).chain(&h.before).chain(&h.after))
        .map(String::len)
        .sum()
}

/// A change as the tools and the page show it: its hunks with their lines (the
/// tools' `outputSchema` is derived from it).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeView {
    /// The change's id (for keepChanges / undoChanges).
    pub id: u64,
    /// The agent's session.
    pub session: SessionId,
    /// The agent, as people see it.
    pub agent: String,
    /// Workspace-relative.
    pub file: String,
    /// The tool that wrote.
    pub tool: String,
    /// When, Unix ms.
    pub at: u64,
    /// The file did not exist before.
    pub created: bool,
    /// Its hunks, in file order.
    pub hunks: Vec<HunkView>,
}

/// One hunk of a [`ChangeView`].
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HunkView {
    /// 0-based, for keepChanges / undoChanges.
    pub index: usize,
    pub state: HunkState,
    /// 1-based line of `old` in the text before.
    pub old_start: usize,
    /// The lines it replaced.
    pub old: Vec<String>,
    /// 1-based line of `new` in the text after.
    pub new_start: usize,
    /// The lines it wrote.
    pub new: Vec<String>,
}

impl Change {
    /// How it is shown.
    pub fn view(&self) -> ChangeView {
        ChangeView {
            id: self.id,
            session: self.session.clone(),
            agent: self.agent.clone(),
            file: self.file.clone(),
            tool: self.tool.clone(),
            at: self.at_ms,
            created: self.created,
            hunks: self
                .hunks
                .iter()
                .enumerate()
                .map(|(index, h)| HunkView {
                    index,
                    state: h.state,
                    old_start: h.old_start,
                    old: h.old.clone(),
                    new_start: h.new_start,
                    new: h.new.clone(),
                })
                .collect(),
        }
    }
}

impl Change {
    /// Hunks still waiting for the person.
    pub fn open(&self) -> impl Iterator<Item = (usize, &Hunk)> {
        self.hunks
            .iter()
            .enumerate()
            .filter(|(_, h)| h.state == HunkState::Open)
    }
}

/// Which hunks an action is about.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Selection {
    /// One change (with `hunk`: one of its hunks).
    pub change: Option<u64>,
    pub hunk: Option<usize>,
    /// Every open hunk of this file.
    pub file: Option<String>,
    /// Every open hunk of this agent session.
    pub session: Option<SessionId>,
}

impl Selection {
    /// True when it names at least one thing (an empty selection selects nothing).
    pub fn is_given(&self) -> bool {
        self.change.is_some() || self.file.is_some() || self.session.is_some()
    }

    /// What this selection names that does not exist, given the changes its change,
    /// file and session select (`selected`); `None` when it names at least one hunk.
    pub fn unmatched(&self, selected: &[Change]) -> Option<String> {
        if selected.is_empty() {
            let mut named = Vec::new();
            if let Some(id) = self.change {
                named.push(format!("change {id}"));
            }
            if let Some(file) = &self.file {
                named.push(format!("file {file:?} (workspace-relative)"));
            }
            if let Some(session) = &self.session {
                named.push(format!("agent session {session:?}"));
            }
            return Some(format!(
                "No change matches {} (listChanges and the page's Changes name them)",
                named.join(" and ")
            ));
        }
        match (self.change, self.hunk) {
            (Some(id), Some(hunk)) => {
                let count = selected
                    .iter()
                    .find(|c| c.id == id)
                    .map_or(0, |c| c.hunks.len());
                (hunk >= count).then(|| {
                    format!(
                        "Change {id} has {count} hunk{} (0–{}): there is no hunk {hunk}",
                        if count == 1 { "" } else { "s" },
                        count.saturating_sub(1)
                    )
                })
            }
            (None, Some(_)) => Some("hunk needs change: a hunk is one change's".into()),
            _ => None,
        }
    }
}

/// Why one hunk was not undone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Declined {
    pub change: u64,
    pub hunk: usize,
    pub file: String,
    pub why: String,
}

/// What an undo does to one file: its new text (or deletion), the hunks it reverts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileUndo {
    pub file: String,
    /// `None`: delete the file (everything of a file an agent created was undone).
    pub text: Option<String>,
    /// `(change, hunk)` reverted, with the agent's session and label and the lines
    /// (1-based, in the file before the undo) they covered.
    pub reverted: Vec<Reverted>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reverted {
    pub change: u64,
    pub hunk: usize,
    pub session: SessionId,
    pub agent: String,
    pub lines: (usize, usize),
}

/// An agent's write: agent `session` (seen as `agent`) turned `file` from `before`
/// (`None`: it did not exist) into `after` with `tool`, at `at_ms`.
#[derive(Debug, Clone, Copy)]
pub struct AgentWrite<'a> {
    pub session: &'a SessionId,
    pub agent: &'a str,
    pub file: &'a str,
    pub tool: &'a str,
    pub before: Option<&'a str>,
    pub after: &'a str,
    pub at_ms: u64,
}

/// A followed file: a hash of each of its lines as last seen (enough to tell which
/// lines changed, at 8 bytes a line) and who last changed each line.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Track {
    hashes: Vec<u64>,
    owners: Vec<Owner>,
}

fn line_hashes(text: &str) -> Vec<u64> {
    use std::hash::{Hash, Hasher};
    lines(text)
        .iter()
        .map(|l| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            l.hash(&mut h);
            h.finish()
        })
        .collect()
}

/// The change sets, and what is needed to follow the files they touch.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ledger {
    changes: VecDeque<Change>,
    tracks: HashMap<String, Track>,
    next_id: u64,
    /// Changes dropped to stay within the limits, since the start.
    pub dropped: u64,
    #[serde(skip)]
    limits: Option<Limits>,
    /// Hunks and bytes of text the changes hold (kept as they come and go).
    #[serde(skip)]
    totals: (usize, usize),
}

/// `text`'s lines, each with its `\n`.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The line diff of `old` and `new` (Myers, given up for a coarser one after 250 ms).
/// Lines end at `\n` only, as everywhere in the bridge (`str::lines`, `editText`,
/// `readFile`): a lone `\r` is part of its line, where `similar`'s own line splitting
/// would end a line there and disagree with [`lines`] about which line is which.
pub fn line_diff(old: &str, new: &str) -> Vec<DiffOp> {
    let (old, new) = (lines(old), lines(new));
    TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(std::time::Duration::from_millis(250))
        .diff_slices(&old, &new)
        .ops()
        .to_vec()
}

/// `owners` (of the lines hashed `old`) carried over to the lines hashed `new`:
/// unchanged lines keep theirs, the others get `by`.
fn carry(owners: &[Owner], old: &[u64], new: &[u64], by: &Owner) -> Vec<Owner> {
    let mut out = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(250);
    for op in similar::capture_diff_slices_deadline(Algorithm::Myers, old, new, Some(deadline)) {
        match op {
            DiffOp::Equal { old_index, len, .. } => {
                for i in old_index..old_index + len {
                    out.push(owners.get(i).cloned().unwrap_or(Owner::Base));
                }
            }
            DiffOp::Delete { .. } => {}
            DiffOp::Insert { new_len, .. } | DiffOp::Replace { new_len, .. } => {
                out.extend(std::iter::repeat_n(by.clone(), new_len));
            }
        }
    }
    out
}

/// The hunks that turn `old` into `new`.
pub fn hunks(old: &str, new: &str) -> Vec<Hunk> {
    let (old_lines, new_lines) = (lines(old), lines(new));
    let mut out: Vec<Hunk> = Vec::new();
    for op in line_diff(old, new) {
        let (o, n) = (op.old_range(), op.new_range());
        if matches!(op, DiffOp::Equal { .. }) {
            continue;
        }
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // Adjacent changes (a delete next to an insert) make one hunk.
        if let Some(last) = out.last_mut() {
            if last.old_start - 1 + last.old.len() == o.start
                && last.new_start - 1 + last.new.len() == n.start
            {
                last.old.extend(owned(&old_lines[o.clone()]));
                last.new.extend(owned(&new_lines[n.clone()]));
                continue;
            }
        }
        out.push(Hunk {
            old_start: o.start + 1,
            old: owned(&old_lines[o]),
            new_start: n.start + 1,
            new: owned(&new_lines[n]),
            before: Vec::new(),
            after: Vec::new(),
            state: HunkState::Open,
        });
    }
    for h in &mut out {
        let start = h.new_start - 1;
        let end = start + h.new.len();
        h.before = new_lines[start.saturating_sub(CONTEXT)..start]
            .iter()
            .map(|s| s.to_string())
            .collect();
        h.after = new_lines[end..(end + CONTEXT).min(new_lines.len())]
            .iter()
            .map(|s| s.to_string())
            .collect();
    }
    out
}

/// Where in `text` (the line index of its first `new` line) hunk `h` of change
/// `change` still stands: its lines, unchanged and still owned by that change (a later
/// edit of any of them, by anyone, took them over), nearest to where it was written. A
/// hunk that only removed lines stands where its context (the lines before or after it)
/// still meets.
fn locate(text: &[&str], owners: &[Owner], change: u64, h: &Hunk) -> Option<usize> {
    let expected = h.new_start - 1;
    let same = |at: usize, lines: &[String]| {
        at + lines.len() <= text.len()
            && text[at..at + lines.len()]
                .iter()
                .zip(lines)
                .all(|(a, b)| *a == b.as_str())
    };
    if !h.new.is_empty() {
        let n = h.new.len();
        let ours = |at: usize| {
            owners.get(at..at + n).is_some_and(|o| {
                o.iter()
                    .all(|o| matches!(o, Owner::Agent { change: c, .. } if *c == change))
            })
        };
        return (0..text.len().saturating_sub(n - 1))
            .filter(|&at| same(at, &h.new) && ours(at))
            .min_by_key(|&at| at.abs_diff(expected));
    }
    (0..=text.len())
        .filter(|&p| {
            let before =
                !h.before.is_empty() && p >= h.before.len() && same(p - h.before.len(), &h.before);
            let after = !h.after.is_empty() && same(p, &h.after);
            before || after || (h.before.is_empty() && h.after.is_empty() && text.is_empty())
        })
        .min_by_key(|&p| p.abs_diff(expected))
}

impl Ledger {
    /// An empty ledger keeping within `limits`.
    pub fn new(limits: Limits) -> Self {
        Self {
            limits: Some(limits),
            ..Self::default()
        }
    }

    /// The same ledger (read back from disk) keeping within `limits`.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = Some(limits);
        self.totals = self
            .changes
            .iter()
            .fold((0, 0), |(h, b), c| (h + c.hunks.len(), b + bytes_of(c)));
        self.bound();
        self
    }

    fn limits(&self) -> Limits {
        self.limits.unwrap_or_default()
    }

    /// Brings `file`'s track up to `text`: lines that changed since it was last seen
    /// are the person's. A file seen for the first time starts with every line `Base`.
    fn catch_up(&mut self, file: &str, text: &str) {
        self.catch_up_as(file, text, &Owner::Person);
    }

    /// `file` (workspace-relative) is followed: its lines have owners.
    pub fn follows(&self, file: &str) -> bool {
        self.tracks.contains_key(file)
    }

    /// `file` (followed already) holds `text` as an agent's command that names it
    /// starts: the lines changed since they were last seen are the person's, so that
    /// the command is credited only with what changes while it runs. True when lines
    /// changed.
    pub fn command_starts(&mut self, file: &str, text: &str) -> bool {
        self.tracks.contains_key(file) && self.catch_up_as(file, text, &Owner::Person)
    }

    /// An agent's command that named `file` (followed already) ended with the file
    /// holding `text`: the lines changed since it started ([`Ledger::command_starts`])
    /// are `by`'s ([`Owner::Ran`]). True when lines changed.
    pub fn ran(&mut self, file: &str, text: &str, by: &Owner) -> bool {
        self.tracks.contains_key(file) && self.catch_up_as(file, text, by)
    }

    /// [`Ledger::catch_up`], crediting the lines changed meanwhile to `by`.
    /// True when lines changed.
    fn catch_up_as(&mut self, file: &str, text: &str, by: &Owner) -> bool {
        let hashes = line_hashes(text);
        let track = self
            .tracks
            .entry(file.to_string())
            .or_insert_with(|| Track {
                owners: vec![Owner::Base; hashes.len()],
                hashes: hashes.clone(),
            });
        if track.hashes == hashes {
            return false;
        }
        track.owners = carry(&track.owners, &track.hashes, &hashes, by);
        track.hashes = hashes;
        true
    }

    /// Records a write of an agent. Answers the change, when anything changed and the
    /// file is small enough to follow.
    pub fn record(&mut self, w: AgentWrite<'_>) -> Option<&Change> {
        let AgentWrite {
            session,
            agent,
            file,
            tool,
            before,
            after,
            at_ms,
        } = w;
        let limits = self.limits();
        let old = before.unwrap_or("");
        if old.len() > limits.max_file_bytes || after.len() > limits.max_file_bytes {
            self.tracks.remove(file);
            return None;
        }
        self.catch_up(file, old);
        let found = hunks(old, after);
        if found.is_empty() {
            return None;
        }
        self.next_id += 1;
        let id = self.next_id;
        let by = Owner::Agent {
            change: id,
            session: session.clone(),
            agent: agent.to_string(),
        };
        if let Some(track) = self.tracks.get_mut(file) {
            let hashes = line_hashes(after);
            track.owners = carry(&track.owners, &track.hashes, &hashes, &by);
            track.hashes = hashes;
        }
        let change = Change {
            id,
            session: session.clone(),
            agent: agent.to_string(),
            file: file.to_string(),
            tool: tool.to_string(),
            at_ms,
            created: before.is_none(),
            hunks: found,
        };
        self.totals.0 += change.hunks.len();
        self.totals.1 += bytes_of(&change);
        self.changes.push_back(change);
        self.bound();
        self.changes.back()
    }

    /// Drops the oldest changes (and files no change names) beyond the limits.
    fn bound(&mut self) {
        let limits = self.limits();
        while (self.totals.0 > limits.max_hunks || self.totals.1 > limits.max_bytes)
            && self.changes.len() > 1
        {
            if let Some(c) = self.changes.pop_front() {
                self.totals.0 -= c.hunks.len();
                self.totals.1 -= bytes_of(&c);
                self.dropped += 1;
            }
        }
        if self.tracks.len() > limits.max_files {
            let named: std::collections::HashSet<&str> =
                self.changes.iter().map(|c| c.file.as_str()).collect();
            let unnamed: Vec<String> = self
                .tracks
                .keys()
                .filter(|f| !named.contains(f.as_str()))
                .cloned()
                .collect();
            for f in unnamed {
                if self.tracks.len() <= limits.max_files {
                    break;
                }
                self.tracks.remove(&f);
            }
        }
    }

    /// The changes, oldest first.
    pub fn changes(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter()
    }

    /// Marks the selected open hunks kept: how many, and the files they are in.
    pub fn keep(&mut self, selection: &Selection) -> (usize, Vec<String>) {
        let mut n = 0;
        let mut files = Vec::new();
        for c in &mut self.changes {
            for (i, h) in c.hunks.iter_mut().enumerate() {
                if h.state == HunkState::Open
                    && selection.admits_parts(c.id, i, &c.file, &c.session)
                {
                    h.state = HunkState::Kept;
                    n += 1;
                    if !files.contains(&c.file) {
                        files.push(c.file.clone());
                    }
                }
            }
        }
        (n, files)
    }

    /// The open hunks of `file` that `selection` selects, as (change, hunk).
    fn selected_open(&self, file: &str, selection: &Selection) -> Vec<(u64, usize)> {
        self.changes
            .iter()
            .filter(|c| c.file == file)
            .flat_map(|c| {
                c.open()
                    .filter(|(i, _)| selection.admits_parts(c.id, *i, &c.file, &c.session))
                    .map(|(i, _)| (c.id, i))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The selected open hunks of `file`, declined for `why` (the file could not be
    /// read: nothing is planned).
    pub fn decline_all(&self, file: &str, selection: &Selection, why: &str) -> Vec<Declined> {
        self.selected_open(file, selection)
            .into_iter()
            .map(|(change, hunk)| Declined {
                change,
                hunk,
                file: file.to_string(),
                why: why.to_string(),
            })
            .collect()
    }

    /// Plans undoing the selected open hunks of `file`, whose text is now `text`
    /// (`None`: gone): the new text and what it reverts, and the hunks it cannot undo
    /// with why. Nothing changes until [`Ledger::undone`] is told the write happened.
    pub fn plan_undo(
        &mut self,
        file: &str,
        text: Option<&str>,
        selection: &Selection,
    ) -> (Option<FileUndo>, Vec<Declined>) {
        let mut declined = Vec::new();
        let selected = self.selected_open(file, selection);
        if selected.is_empty() {
            return (None, declined);
        }
        let Some(text) = text else {
            for (change, hunk) in selected {
                declined.push(Declined {
                    change,
                    hunk,
                    file: file.to_string(),
                    why: "the file is gone".into(),
                });
            }
            return (None, declined);
        };
        self.catch_up(file, text);
        let owners = self
            .tracks
            .get(file)
            .map(|t| t.owners.clone())
            .unwrap_or_default();
        let mut current: Vec<String> = lines(text).iter().map(|s| s.to_string()).collect();
        // Where each selected hunk stands now; undone bottom-up so positions hold.
        let mut placed: Vec<(usize, u64, usize)> = Vec::new();
        for &(change_id, index) in &selected {
            let c = self
                .changes
                .iter()
                .find(|c| c.id == change_id)
                .expect("selected");
            let h = &c.hunks[index];
            let view: Vec<&str> = current.iter().map(String::as_str).collect();
            let decline = |why: String| Declined {
                change: change_id,
                hunk: index,
                file: file.to_string(),
                why,
            };
            let Some(at) = locate(&view, &owners, change_id, h) else {
                // Who wrote where the hunk was, when someone did.
                let from = (h.new_start - 1).min(owners.len());
                let to = (from + h.new.len().max(1)).min(owners.len());
                let who = owners[from..to].iter().find_map(|o| match o {
                    Owner::Agent { change, .. } if *change == change_id => None,
                    other => other.who().map(str::to_string),
                });
                declined.push(decline(match who {
                    Some(who) => format!(
                        "{who} changed these lines since (lines {}–{}); nothing was changed",
                        h.new_start,
                        h.new_start + h.new.len().max(1) - 1
                    ),
                    None => format!(
                        "lines {}–{} changed since (a later edit overlaps them); nothing was changed",
                        h.new_start,
                        h.new_start + h.new.len().max(1) - 1
                    ),
                }));
                continue;
            };
            placed.push((at, change_id, index));
        }
        placed.sort_by_key(|p| std::cmp::Reverse(p.0));
        let mut reverted = Vec::new();
        for (at, change_id, index) in placed {
            let c = self
                .changes
                .iter()
                .find(|c| c.id == change_id)
                .expect("selected");
            let h = &c.hunks[index];
            current.splice(at..at + h.new.len(), h.old.iter().cloned());
            reverted.push(Reverted {
                change: change_id,
                hunk: index,
                session: c.session.clone(),
                agent: c.agent.clone(),
                lines: (at + 1, at + h.new.len().max(1)),
            });
        }
        if reverted.is_empty() {
            return (None, declined);
        }
        let new_text: String = current.concat();
        // Everything of a file an agent created, undone: the file goes.
        let created_and_all_undone = new_text.is_empty()
            && self
                .changes
                .iter()
                .filter(|c| c.file == file)
                .any(|c| c.created);
        let undo = FileUndo {
            file: file.to_string(),
            text: (!created_and_all_undone).then_some(new_text),
            reverted,
        };
        (Some(undo), declined)
    }

    /// The undo `undo` was written by `by` (the person, or an agent's [`Owner::Undid`]):
    /// its hunks are undone, the lines it put back `by`'s.
    pub fn undone(&mut self, undo: &FileUndo, by: &Owner) {
        for r in &undo.reverted {
            if let Some(h) = self
                .changes
                .iter_mut()
                .find(|c| c.id == r.change)
                .and_then(|c| c.hunks.get_mut(r.hunk))
            {
                h.state = HunkState::Undone;
            }
        }
        match &undo.text {
            Some(text) => {
                self.catch_up_as(&undo.file, text, by);
            }
            None => {
                self.tracks.remove(&undo.file);
            }
        }
    }

    /// Who last changed each line of `file`, whose text is now `text`: runs of lines
    /// (1-based, inclusive) with their owner.
    pub fn owners(&mut self, file: &str, text: &str) -> Vec<(usize, usize, Owner)> {
        if !self.tracks.contains_key(file) {
            return vec![(1, lines(text).len().max(1), Owner::Base)];
        }
        self.catch_up(file, text);
        let owners = &self.tracks[file].owners;
        let mut out: Vec<(usize, usize, Owner)> = Vec::new();
        for (i, o) in owners.iter().enumerate() {
            match out.last_mut() {
                Some((_, end, last)) if last == o => *end = i + 1,
                _ => out.push((i + 1, i + 1, o.clone())),
            }
        }
        out
    }

    /// Forgets every change of `session` (the person kept all of it: a new baseline).
    pub fn forget_session(&mut self, session: &SessionId) -> usize {
        let before = self.changes.len();
        self.changes.retain(|c| &c.session != session);
        self.totals = self
            .changes
            .iter()
            .fold((0, 0), |(h, b), c| (h + c.hunks.len(), b + bytes_of(c)));
        before - self.changes.len()
    }
}

impl Selection {
    fn admits_parts(&self, change: u64, index: usize, file: &str, session: &SessionId) -> bool {
        self.change.is_none_or(|c| c == change)
            && self.hunk.is_none_or(|h| h == index)
            && self.file.as_deref().is_none_or(|f| f == file)
            && self.session.as_ref().is_none_or(|s| s == session)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::too_many_arguments)]
    fn rec(
        l: &mut Ledger,
        session: &str,
        agent: &str,
        file: &str,
        tool: &str,
        before: Option<&str>,
        after: &str,
        at_ms: u64,
    ) -> Option<Change> {
        l.record(AgentWrite {
            session: &SessionId::from(session),
            agent,
            file,
            tool,
            before,
            after,
            at_ms,
        })
        .cloned()
    }

    const BASE: &str = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n";

    /// A lone `\r` (an edit after a CRLF line's `\r`, or in replacement text) is part
    /// of its line: the hunks say which lines changed, and nothing panics.
    #[test]
    fn a_lone_carriage_return_stays_inside_its_line() {
        let before = "a\r\nb\r\nc\r\n";
        for (after, old, new) in [
            ("a\r\nb\r\nc\r?\n", vec!["c\r\n"], vec!["c\r?\n"]),
            ("a\r#\nb\r\nc\r\n", vec!["a\r\n"], vec!["a\r#\n"]),
            ("a\r\nt\rwo\r\nc\r\n", vec!["b\r\n"], vec!["t\rwo\r\n"]),
        ] {
            let h = hunks(before, after);
            assert_eq!(h.len(), 1, "{after:?}: {h:?}");
            assert!(h[0].old == old && h[0].new == new, "{after:?}: {h:?}");
            let mut l = Ledger::new(Limits::default());
            let c = rec(&mut l, "s", "A", "c.txt", "Edit", Some(before), after, 1);
            assert_eq!(c.expect("recorded").hunks.len(), 1);
        }
    }

    fn with_two_hunks() -> (Ledger, String) {
        let mut l = Ledger::new(Limits::default());
        let after = BASE.replace("b\n", "B\n").replace("k\n", "K1\nK2\n");
        let c = rec(
            &mut l,
            "s-a",
            "agent A",
            "a.py",
            "Edit",
            Some(BASE),
            &after,
            1,
        )
        .expect("a change");
        assert_eq!(c.hunks.len(), 2, "{:?}", c.hunks);
        assert_eq!(c.hunks[1].old, vec!["k\n"]);
        assert_eq!(c.hunks[1].new, vec!["K1\n", "K2\n"]);
        (l, after)
    }

    #[test]
    fn undoing_one_hunk_restores_exactly_its_lines() {
        let (mut l, after) = with_two_hunks();
        let only_second = Selection {
            change: Some(1),
            hunk: Some(1),
            ..Selection::default()
        };
        let (undo, declined) = l.plan_undo("a.py", Some(&after), &only_second);
        assert!(declined.is_empty());
        let undo = undo.unwrap();
        assert_eq!(
            undo.text.as_deref(),
            Some(BASE.replace("b\n", "B\n").as_str())
        );
        assert_eq!(undo.reverted[0].lines, (11, 12));
        l.undone(&undo, &Owner::Person);
        assert_eq!(
            l.changes().next().unwrap().hunks[1].state,
            HunkState::Undone
        );
        let owners = l.owners("a.py", undo.text.as_deref().unwrap());
        assert!(owners.contains(&(
            2,
            2,
            Owner::Agent {
                change: 1,
                session: "s-a".into(),
                agent: "agent A".into()
            }
        )));
        assert!(owners.contains(&(11, 11, Owner::Person)), "{owners:?}");
    }

    #[test]
    fn an_overlapping_later_edit_makes_the_undo_decline_and_change_nothing() {
        let (mut l, after) = with_two_hunks();
        let later = after.replace("K2\n", "K2 and more\n");
        rec(
            &mut l,
            "s-b",
            "agent B",
            "a.py",
            "Edit",
            Some(&after),
            &later,
            2,
        );
        let (undo, declined) = l.plan_undo(
            "a.py",
            Some(&later),
            &Selection {
                change: Some(1),
                hunk: Some(1),
                ..Selection::default()
            },
        );
        assert!(undo.is_none());
        assert_eq!(declined.len(), 1);
        assert!(
            declined[0]
                .why
                .contains("agent B changed these lines since"),
            "{declined:?}"
        );
        // The person's own edit on those lines declines too, naming them.
        let mut l2 = with_two_hunks().0;
        let by_hand = after.replace("K1\n", "K1 by hand\n");
        let (undo, declined) = l2.plan_undo(
            "a.py",
            Some(&by_hand),
            &Selection {
                change: Some(1),
                hunk: Some(1),
                ..Selection::default()
            },
        );
        assert!(undo.is_none() && !declined.is_empty(), "{declined:?}");
    }

    #[test]
    fn a_far_away_later_edit_does_not_stop_the_undo() {
        let (mut l, after) = with_two_hunks();
        let later = after.replace("f\n", "F\n");
        let (undo, declined) = l.plan_undo(
            "a.py",
            Some(&later),
            &Selection {
                change: Some(1),
                hunk: Some(0),
                ..Selection::default()
            },
        );
        assert!(declined.is_empty(), "{declined:?}");
        assert_eq!(undo.unwrap().text.unwrap(), later.replace("B\n", "b\n"));
    }

    #[test]
    fn who_changed_names_each_agent_and_nobody_for_untouched_lines() {
        let (mut l, after) = with_two_hunks();
        let later = after.replace("e\n", "E\n");
        rec(
            &mut l,
            "s-b",
            "agent B",
            "a.py",
            "Write",
            Some(&after),
            &later,
            2,
        );
        let owners = l.owners("a.py", &later);
        let who = |line: usize| {
            owners
                .iter()
                .find(|(a, b, _)| (*a..=*b).contains(&line))
                .map(|(_, _, o)| o.clone())
                .unwrap()
        };
        assert!(matches!(who(2), Owner::Agent { ref agent, .. } if agent == "agent A"));
        assert!(matches!(who(5), Owner::Agent { ref agent, .. } if agent == "agent B"));
        assert_eq!(who(1), Owner::Base);
    }

    #[test]
    fn a_created_file_undone_entirely_goes_and_limits_drop_the_oldest() {
        let mut l = Ledger::new(Limits {
            max_hunks: 2,
            ..Limits::default()
        });
        rec(&mut l, "s", "A", "new.txt", "Write", None, "x\ny\n", 1);
        let (undo, _) = l.plan_undo(
            "new.txt",
            Some("x\ny\n"),
            &Selection {
                file: Some("new.txt".into()),
                ..Selection::default()
            },
        );
        assert_eq!(undo.unwrap().text, None);
        for i in 0..3 {
            rec(
                &mut l,
                "s",
                "A",
                "f.txt",
                "Edit",
                Some(&"a\n".repeat(i)),
                &"a\n".repeat(i + 1),
                2,
            );
        }
        assert_eq!(l.changes().count(), 2);
        assert_eq!(l.dropped, 2);
    }

    #[test]
    fn neighbouring_hunks_undo_one_after_the_other_and_a_nearby_edit_does_not_block() {
        let mut l = Ledger::new(Limits::default());
        let before = "1\n2\n3\n4\n5\n6\n";
        let after = "1\nTWO\n3\n4\nFIVE\n6\n";
        rec(&mut l, "s", "A", "n.txt", "Write", Some(before), after, 1).unwrap();
        let one = |h| Selection {
            change: Some(1),
            hunk: Some(h),
            ..Selection::default()
        };
        let (undo, declined) = l.plan_undo("n.txt", Some(after), &one(0));
        assert!(declined.is_empty(), "{declined:?}");
        let undo = undo.unwrap();
        l.undone(&undo, &Owner::Person);
        let now = undo.text.unwrap();
        assert_eq!(now, "1\n2\n3\n4\nFIVE\n6\n");
        let (undo, declined) = l.plan_undo("n.txt", Some(&now), &one(1));
        assert!(declined.is_empty(), "{declined:?}");
        assert_eq!(undo.unwrap().text.unwrap(), before);

        // Another agent changes a line next to (not in) A's hunk: A's undo still works.
        let mut l = Ledger::new(Limits::default());
        let base = "1\n2\n3\n4\n5\n6\n7\n8\n";
        let a = "1\n2\nthree\nfour\nmore\n5\n6\n7\n8\n";
        rec(&mut l, "s-a", "A", "m.txt", "Edit", Some(base), a, 1).unwrap();
        let b = a.replace("6\n", "SIX\n");
        rec(&mut l, "s-b", "B", "m.txt", "Edit", Some(a), &b, 2).unwrap();
        let (undo, declined) = l.plan_undo("m.txt", Some(&b), &one(0));
        assert!(declined.is_empty(), "{declined:?}");
        assert_eq!(undo.unwrap().text.unwrap(), base.replace("6\n", "SIX\n"));
    }
}
