//! Full-text and regex search across the workspace with ripgrep's libraries.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::Duration;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::sinks::UTF8;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use regex_syntax::ast::{self, Ast, RepetitionKind, RepetitionRange};
use serde::Serialize;

use super::tree::{glob_in, walker_showing};
use super::Root;

/// Lines longer than this are cut in results.
const MAX_LINE_CHARS: usize = 300;
/// Files larger than this are skipped.
const MAX_SEARCH_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Most bytes of a compiled pattern (grep-regex's default is 100 MiB).
pub const MAX_REGEX_BYTES: usize = 1024 * 1024;
/// Most bytes of the lazy DFA's cache per pattern (grep-regex's default is 1000 MiB;
/// past it the cache is cleared and rebuilt, or the engine falls back to a slower one).
pub const MAX_DFA_BYTES: usize = 2 * 1024 * 1024;
/// Largest product of nested counted repetitions (`a{1000}`, `(a{10}){100}`).
///
/// The compiled size does not bound the work: `a{10000}` compiles to a few hundred
/// KiB, yet each lazy-DFA state holds thousands of NFA states and searching a 1 MB line
/// takes about a second (optimised build) — seconds in which a cancelled search could
/// not be stopped. At 1000 the same search takes about 10 ms.
pub const MAX_REPETITION: u64 = 1000;
/// The searcher's buffer bound: a file with a longer line is skipped (and counted in
/// `longLineFilesSkipped`) instead of buffered whole.
pub const MAX_LINE_BYTES: usize = 2 * 1024 * 1024;
/// Files up to this size are read whole, in as few reads as the kernel needs (one for
/// most), and searched as one slice; larger ones are streamed through the searcher's
/// buffer. Below [`MAX_LINE_BYTES`], so no line of a file read whole is over that bound.
const WHOLE_READ_BYTES: usize = 1024 * 1024;

/// Why a search did not run or did not finish.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The pattern does not parse, or compiles past [`MAX_REGEX_BYTES`].
    #[error("Invalid pattern: {0}")]
    Pattern(String),
    /// Nested counted repetitions multiply past [`MAX_REPETITION`].
    #[error(
        "Pattern repeats too much: counted repetitions allow {count} (nested ones multiply); \
         at most {MAX_REPETITION} — use a shorter count or `+`/`*`"
    )]
    Repetition {
        /// The product of the nested bounds.
        count: u64,
    },
    /// The compiled pattern is over [`MAX_REGEX_BYTES`].
    #[error(
        "Pattern is too complex: its compiled form exceeds {} KiB; simplify it (large Unicode \
         classes such as \\w repeated many times are big; (?-u) makes them ASCII)",
        MAX_REGEX_BYTES / 1024
    )]
    TooComplex,
    /// The glob does not parse.
    #[error("{0}")]
    Glob(super::tree::GlobError),
    /// The call was cancelled or timed out while searching.
    #[error("Search cancelled")]
    Cancelled,
}

/// One matching line.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// Workspace-relative path.
    pub path: String,
    /// 1-based line.
    pub line: u64,
    /// The line (trimmed of its newline, cut at 300 characters).
    pub text: String,
}

/// Search results.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hits {
    /// Matches in path order.
    pub matches: Vec<Hit>,
    pub files_searched: usize,
    /// True when `maxResults` cut the results.
    pub truncated: bool,
    /// Files not searched (to their end) because a line is longer than 2 MiB
    /// (`MAX_LINE_BYTES`).
    #[serde(skip_serializing_if = "is_zero", default)]
    pub long_line_files_skipped: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What to search for.
pub struct Query<'a> {
    /// Text or regex.
    pub pattern: &'a str,
    /// Treat `pattern` as a regex.
    pub regex: bool,
    /// Case-sensitive matching.
    pub case_sensitive: bool,
    /// Only files matching this glob.
    pub glob: Option<&'a str>,
    /// At most this many matches.
    pub max_results: usize,
    /// Set when the caller gave up (timeout, cancellation): the search stops at the
    /// next file, the next buffer read (at most 64 KiB, or one line up to
    /// [`MAX_LINE_BYTES`]; a file up to 1 MiB is read and searched whole) or the next
    /// match, and returns [`SearchError::Cancelled`].
    pub cancel: Option<&'a AtomicBool>,
    /// When set, each file is opened beneath this root's directory handle
    /// ([`Root::open_beneath`]) rather than by its path, and only a regular file is
    /// read: a symlink swapped in between listing and reading leads nowhere.
    pub beneath: Option<&'a Root>,
    /// Hidden files and directories too (names starting with a dot; `.git` never).
    pub hidden: bool,
}

impl Query<'_> {
    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

/// Refuses patterns whose nested counted repetitions multiply past [`MAX_REPETITION`].
fn check_repetitions(pattern: &str) -> Result<(), SearchError> {
    /// Keeps the product of the counted repetitions enclosing the current node.
    struct Counter {
        stack: Vec<u64>,
        product: u64,
    }
    impl ast::Visitor for Counter {
        type Output = ();
        type Err = SearchError;
        fn finish(self) -> Result<(), SearchError> {
            Ok(())
        }
        fn visit_pre(&mut self, ast: &Ast) -> Result<(), SearchError> {
            if let Ast::Repetition(rep) = ast {
                let n = match &rep.op.kind {
                    RepetitionKind::Range(
                        RepetitionRange::Exactly(n)
                        | RepetitionRange::AtLeast(n)
                        | RepetitionRange::Bounded(_, n),
                    ) => u64::from(*n).max(1),
                    _ => 1,
                };
                self.stack.push(self.product);
                self.product = self.product.saturating_mul(n);
                if self.product > MAX_REPETITION {
                    return Err(SearchError::Repetition {
                        count: self.product,
                    });
                }
            }
            Ok(())
        }
        fn visit_post(&mut self, ast: &Ast) -> Result<(), SearchError> {
            if let Ast::Repetition(_) = ast {
                self.product = self.stack.pop().unwrap_or(1);
            }
            Ok(())
        }
    }
    let ast = ast::parse::Parser::new()
        .parse(pattern)
        .map_err(|e| SearchError::Pattern(e.to_string()))?;
    ast::visit(
        &ast,
        Counter {
            stack: Vec::new(),
            product: 1,
        },
    )
}

/// A file read that fails once the query is cancelled, so that the searcher stops
/// between buffer fills.
struct CancellableRead<'a> {
    file: File,
    query: &'a Query<'a>,
}

impl Read for CancellableRead<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.query.cancelled() {
            return Err(io::Error::other(SearchError::Cancelled));
        }
        self.file.read(buf)
    }
}

/// Searches every non-ignored text file below `start`.
pub fn search(root: &Path, start: &Path, q: &Query<'_>) -> Result<Hits, SearchError> {
    if q.regex {
        check_repetitions(q.pattern)?;
    }
    let matcher = RegexMatcherBuilder::new()
        .fixed_strings(!q.regex)
        .case_insensitive(!q.case_sensitive)
        .line_terminator(Some(b'\n'))
        .size_limit(MAX_REGEX_BYTES)
        .dfa_size_limit(MAX_DFA_BYTES)
        .build(q.pattern)
        .map_err(|e| {
            let e = e.to_string();
            if e.contains("size limit") {
                SearchError::TooComplex
            } else {
                SearchError::Pattern(e)
            }
        })?;
    let filter = match q.glob {
        Some(g) => Some(glob_in(g, !g.contains('/')).map_err(SearchError::Glob)?),
        None => None,
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_WORKERS);
    let merged = Mutex::new(Merge::new(q.max_results));
    // Notified at each merge: the walk waits on it while it is far enough ahead.
    let advanced = Condvar::new();
    let stop = AtomicBool::new(false);
    // Files go out in the walker's (path) order, in batches (a hand-off per file costs
    // more than reading a small one), at most `LOOKAHEAD` batches ahead of the first
    // one not merged yet (so a slow file early on cannot leave the rest of the tree's
    // matches waiting in memory); their matches are merged back in that order, so the
    // answer is the one a single thread would give, and the walk stops once the first
    // files filled it.
    let (jobs, queue) = mpsc::sync_channel::<Batch>(workers);
    std::thread::scope(|scope| {
        // The workers own the receiving end: should they all end (a panic), the walk's
        // next send fails instead of waiting for ever.
        let queue = Arc::new(Mutex::new(queue));
        let workers_alive = Arc::downgrade(&queue);
        for _ in 0..workers {
            let queue = Arc::clone(&queue);
            let (merged, advanced, stop, matcher) = (&merged, &advanced, &stop, &matcher);
            scope.spawn(move || {
                let mut searcher = searcher();
                let mut whole = Vec::new();
                loop {
                    let job = queue.lock().map(|q| q.recv());
                    let Ok(Ok((index, files))) = job else { break };
                    let mut found = Vec::with_capacity(files.len());
                    for (path, rel) in files {
                        if stop.load(Ordering::Relaxed) || q.cancelled() {
                            break;
                        }
                        found.push(search_file(
                            &mut searcher,
                            &mut whole,
                            matcher,
                            &path,
                            rel,
                            q,
                        ));
                    }
                    let full = merged.lock().map(|mut m| m.add(index, found));
                    advanced.notify_all();
                    if full.unwrap_or(true) {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            });
        }
        drop(queue);
        let lookahead = workers * 2;
        // Hands batch `index` out once it is near enough; false when the search is over.
        let send = |index: usize, batch: Vec<(PathBuf, String)>| {
            let Ok(mut m) = merged.lock() else {
                return false;
            };
            while index >= m.next + lookahead {
                if q.cancelled() || m.full || workers_alive.strong_count() == 0 {
                    return false;
                }
                m = match advanced.wait_timeout(m, Duration::from_millis(50)) {
                    Ok((m, _)) => m,
                    Err(_) => return false,
                };
            }
            drop(m);
            jobs.send((index, batch)).is_ok()
        };
        let mut index = 0;
        let mut batch = Vec::with_capacity(BATCH);
        for entry in walker_showing(start, None, q.hidden).flatten() {
            if q.cancelled() || stop.load(Ordering::Relaxed) {
                break;
            }
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let rel = entry
                .path()
                .strip_prefix(root)
                .unwrap_or(entry.path())
                .to_string_lossy()
                .into_owned();
            if filter.as_ref().is_some_and(|f| !f.is_match(&rel)) {
                continue;
            }
            batch.push((entry.into_path(), rel));
            if batch.len() == BATCH {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                if !send(index, full) {
                    break;
                }
                index += 1;
            }
        }
        if !batch.is_empty() {
            send(index, batch);
        }
        // Dropped here, when the walk ends: the workers then finish.
        drop(jobs);
    });
    if q.cancelled() {
        return Err(SearchError::Cancelled);
    }
    Ok(merged
        .into_inner()
        .map_or_else(|poisoned| poisoned.into_inner().hits, |m| m.hits))
}

/// Threads searching files at once, at most (as many as there are cores).
const MAX_WORKERS: usize = 8;
/// Files handed to a worker at once.
const BATCH: usize = 32;

/// The `index`th batch of files in walk order: each path and its relative form.
type Batch = (usize, Vec<(PathBuf, String)>);

fn searcher() -> Searcher {
    SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .heap_limit(Some(MAX_LINE_BYTES))
        .build()
}

/// What searching one file found: at most `max_results + 1` matches (the merge cuts
/// them to what is left), and whether it was searched at all.
#[derive(Default)]
struct FileHits {
    searched: bool,
    long_line: bool,
    matches: Vec<Hit>,
}

fn search_file(
    searcher: &mut Searcher,
    whole: &mut Vec<u8>,
    matcher: &RegexMatcher,
    path: &Path,
    rel: String,
    q: &Query<'_>,
) -> FileHits {
    let opened = match q.beneath {
        Some(dir) => dir
            .open_beneath(path, libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY, 0)
            .map(File::from),
        None => File::open(path),
    };
    let Ok(mut file) = opened else {
        return FileHits::default();
    };
    // What was opened (not what was listed) must be a regular file, and not too big.
    let Some(len) = file
        .metadata()
        .ok()
        .filter(|m| m.is_file() && m.len() <= MAX_SEARCH_FILE_BYTES)
        .map(|m| m.len() as usize)
    else {
        return FileHits::default();
    };
    let most = q.max_results.saturating_add(1);
    let mut found = Vec::new();
    let sink = UTF8(|line, text| {
        if found.len() >= most || q.cancelled() {
            return Ok(false);
        }
        let text = text.trim_end_matches(['\n', '\r']);
        let mut shown: String = text.chars().take(MAX_LINE_CHARS).collect();
        if shown.len() < text.len() {
            shown.push('…');
        }
        found.push(Hit {
            path: rel.clone(),
            line,
            text: shown,
        });
        Ok(true)
    });
    let searched = if len <= WHOLE_READ_BYTES {
        let Some(text) = read_whole(&mut file, len, whole, q) else {
            return FileHits::default();
        };
        searcher.search_slice(matcher, text, sink)
    } else {
        searcher.search_reader(matcher, CancellableRead { file, query: q }, sink)
    };
    FileHits {
        searched: true,
        long_line: searched.is_err_and(|e| e.to_string().contains("allocation limit")),
        matches: found,
    }
}

/// The first `len` bytes of `file` (its size when opened; what it grew by since is
/// not read) in `buf`, reused from file to file: one `read` for most files. `None` when
/// a read fails or the query is cancelled.
fn read_whole<'b>(
    file: &mut File,
    len: usize,
    buf: &'b mut Vec<u8>,
    q: &Query<'_>,
) -> Option<&'b [u8]> {
    if buf.len() < len {
        buf.resize(len, 0);
    }
    let mut filled = 0;
    while filled < len {
        if q.cancelled() {
            return None;
        }
        match file.read(&mut buf[filled..len]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(&buf[..filled])
}

/// Puts the files' hits back in walk order as they come in from the workers.
struct Merge {
    hits: Hits,
    max: usize,
    /// The index of the next batch in walk order.
    next: usize,
    /// Batches searched ahead of `next`.
    waiting: BTreeMap<usize, Vec<FileHits>>,
    full: bool,
}

impl Merge {
    fn new(max: usize) -> Self {
        Self {
            hits: Hits {
                matches: Vec::new(),
                files_searched: 0,
                truncated: false,
                long_line_files_skipped: 0,
            },
            max,
            next: 0,
            waiting: BTreeMap::new(),
            full: false,
        }
    }

    /// Adds batch `index`'s hits, file by file; true once the results are full (no
    /// later file can change them).
    fn add(&mut self, index: usize, found: Vec<FileHits>) -> bool {
        self.waiting.insert(index, found);
        while let Some(batch) = self.waiting.remove(&self.next) {
            self.next += 1;
            for found in batch {
                if self.full {
                    break;
                }
                self.hits.files_searched += usize::from(found.searched);
                self.hits.long_line_files_skipped += usize::from(found.long_line);
                let room = self.max.saturating_sub(self.hits.matches.len());
                let mut matches = found.matches;
                if matches.len() > room {
                    matches.truncate(room);
                    self.hits.truncated = true;
                    self.full = true;
                }
                self.hits.matches.extend(matches);
            }
        }
        self.full
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn q(pattern: &str) -> Query<'_> {
        Query {
            pattern,
            regex: false,
            case_sensitive: true,
            glob: None,
            max_results: 100,
            cancel: None,
            beneath: None,
            hidden: false,
        }
    }

    #[test]
    fn matches_come_in_path_order_and_stop_where_the_first_files_fill_them() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        for i in 0..60 {
            fs::create_dir_all(r.join(format!("d{}", i % 3))).unwrap();
            let body = "needle\nhay\nneedle\nneedle\n";
            fs::write(r.join(format!("d{}/f{i:02}.txt", i % 3)), body).unwrap();
        }
        let mut expected: Vec<(String, u64)> = Vec::new();
        for d in 0..3 {
            for i in (d..60).step_by(3) {
                for line in [1, 3, 4] {
                    expected.push((format!("d{d}/f{i:02}.txt"), line));
                }
            }
        }
        let found = |max_results| {
            let hits = search(
                r,
                r,
                &Query {
                    max_results,
                    ..q("needle")
                },
            )
            .unwrap();
            let got: Vec<(String, u64)> = hits
                .matches
                .iter()
                .map(|h| (h.path.clone(), h.line))
                .collect();
            (got, hits.files_searched, hits.truncated)
        };
        assert_eq!(found(1000), (expected.clone(), 60, false));
        assert_eq!(found(10), (expected[..10].to_vec(), 4, true));
    }

    #[test]
    fn files_up_to_the_size_bound_are_searched_and_larger_ones_skipped() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let sized = |n: u64| {
            let mut text = b"needle\n".to_vec();
            text.resize(n as usize, b'x');
            text
        };
        fs::write(r.join("at.txt"), sized(MAX_SEARCH_FILE_BYTES)).unwrap();
        fs::write(r.join("past.txt"), sized(MAX_SEARCH_FILE_BYTES + 1)).unwrap();
        let hits = search(r, r, &q("needle")).unwrap();
        let paths: Vec<&str> = hits.matches.iter().map(|h| h.path.as_str()).collect();
        assert_eq!((paths, hits.files_searched), (vec!["at.txt"], 1));
    }

    #[test]
    fn finds_literals_and_regexes_and_skips_ignored_and_binary() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::write(r.join(".gitignore"), "skip/\n").unwrap();
        fs::create_dir(r.join("skip")).unwrap();
        fs::write(r.join("skip/a.txt"), "needle\n").unwrap();
        fs::write(r.join("a.rs"), "let needle = 1;\nfn x() {}\nNEEDLE\n").unwrap();
        fs::write(r.join("b.bin"), b"needle\0\x01").unwrap();
        let hits = search(r, r, &q("needle")).unwrap();
        assert_eq!(hits.matches.len(), 1);
        assert_eq!(
            (hits.matches[0].path.as_str(), hits.matches[0].line),
            ("a.rs", 1)
        );
        let ci = search(
            r,
            r,
            &Query {
                case_sensitive: false,
                ..q("needle")
            },
        )
        .unwrap();
        assert_eq!(ci.matches.len(), 2);
        let re = search(
            r,
            r,
            &Query {
                regex: true,
                ..q(r"fn \w+\(")
            },
        )
        .unwrap();
        assert_eq!(re.matches[0].line, 2);
        let lit = search(r, r, &q("fn x(")).unwrap();
        assert_eq!(lit.matches.len(), 1, "literal mode escapes regex syntax");
        let capped = search(
            r,
            r,
            &Query {
                case_sensitive: false,
                max_results: 1,
                ..q("needle")
            },
        )
        .unwrap();
        assert!(capped.truncated && capped.matches.len() == 1);
        let globbed = search(
            r,
            r,
            &Query {
                glob: Some("*.txt"),
                ..q("needle")
            },
        )
        .unwrap();
        assert!(globbed.matches.is_empty());
        assert!(search(
            r,
            r,
            &Query {
                regex: true,
                ..q("(")
            }
        )
        .is_err());
    }

    fn re(pattern: &str) -> Query<'_> {
        Query {
            regex: true,
            ..q(pattern)
        }
    }

    #[test]
    fn patterns_that_repeat_too_much_or_compile_too_big_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::write(r.join("a.txt"), "aaaa\n").unwrap();
        for bad in [
            "a{100000}",
            "(a{1000}){1000}",
            "(a{10}){101}",
            "((a{2}){2}){251}",
            "a{1001,}",
        ] {
            let err = search(r, r, &re(bad)).unwrap_err();
            assert!(
                matches!(err, SearchError::Repetition { .. }),
                "{bad}: {err}"
            );
            assert!(err.to_string().contains("repeats too much"), "{err}");
        }
        let err = search(r, r, &re(r"\w{100}x")).unwrap_err();
        assert!(matches!(err, SearchError::TooComplex), "{err}");
        assert!(err.to_string().contains("too complex"), "{err}");
        // Within the limits, and literal text is never parsed as a regex.
        assert_eq!(search(r, r, &re("a{2}(a{1}){2}")).unwrap().matches.len(), 1);
        assert_eq!(search(r, r, &re("(a{10}){100}")).unwrap().matches.len(), 0);
        assert_eq!(search(r, r, &q("a{100000}")).unwrap().matches.len(), 0);
    }

    #[test]
    fn a_cancelled_search_stops_and_says_so() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::write(r.join("a.txt"), "needle\n").unwrap();
        let cancel = AtomicBool::new(true);
        let err = search(
            r,
            r,
            &Query {
                cancel: Some(&cancel),
                beneath: None,
                hidden: false,
                ..q("needle")
            },
        )
        .unwrap_err();
        assert!(matches!(err, SearchError::Cancelled));
    }

    #[test]
    fn files_with_lines_over_the_buffer_bound_are_skipped_and_counted() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let mut long = "x".repeat(MAX_LINE_BYTES + 1);
        long.push_str("needle\n");
        fs::write(r.join("long.txt"), long).unwrap();
        fs::write(r.join("short.txt"), "needle\n").unwrap();
        let hits = search(r, r, &q("needle")).unwrap();
        assert_eq!(hits.matches.len(), 1);
        assert_eq!(hits.matches[0].path, "short.txt");
        assert_eq!(hits.long_line_files_skipped, 1);
        // A 1 MB line is within the bound and searched.
        fs::write(r.join("long.txt"), "y".repeat(1_000_000) + "needle\n").unwrap();
        let hits = search(r, r, &q("needle")).unwrap();
        assert_eq!(hits.matches.len(), 2);
        assert_eq!(hits.long_line_files_skipped, 0);
    }
}
