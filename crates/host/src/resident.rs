//! What of the bridge's own binary stays resident. The kernel maps a program's code
//! as it runs, and by default maps the pages around each one it needs as well
//! ("fault-around", 64 KiB): a long-running server whose start-up runs code from every
//! part of a 20 MB binary (configuration, every tool's schema, every actor) ends up
//! with nearly all of its code resident although it then runs a small part of it.
//!
//! [`map_only_what_runs`] asks the kernel to map only the pages that run
//! (`MADV_RANDOM` on the binary's read-only mappings: no fault-around, no
//! read-ahead); [`forget_start_up`] unmaps them all once start-up is done, so what is
//! resident after it is what the running bridge uses (pages fault back in from the
//! page cache as they are needed: a minor fault each, once). Neither changes what the
//! program does; both are no-ops where the mappings cannot be read.

use std::path::PathBuf;

/// The address ranges of this program's own file mappings that are not writable and
/// hold only the file's pages (its code and read-only data), from `/proc/self/smaps`.
/// A mapping with private copies (data the loader relocated, then made read-only) is
/// left out: dropping those copies would bring back the file's unrelocated bytes.
fn own_read_only_mappings() -> Vec<(usize, usize)> {
    let Ok(exe) = std::fs::read_link("/proc/self/exe") else {
        return Vec::new();
    };
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    // The mapping being read: its range, and whether it is a candidate so far.
    let mut current: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        if let Some(anonymous) = line.strip_prefix("Anonymous:") {
            let copies = anonymous.trim().trim_end_matches("kB").trim() != "0";
            if let (Some(range), false) = (current.take(), copies) {
                found.push(range);
            }
            continue;
        }
        let mut fields = line.split_whitespace();
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Some((start, end)) = range.split_once('-') else {
            continue; // a field line (`Rss: …`), not a mapping
        };
        let (Ok(start), Ok(end)) = (
            usize::from_str_radix(start, 16),
            usize::from_str_radix(end, 16),
        ) else {
            continue;
        };
        let path = fields.nth(3).map(PathBuf::from);
        current = (path.as_ref() == Some(&exe) && !perms.contains('w')).then_some((start, end));
    }
    found
}

fn advise(advice: libc::c_int) -> usize {
    let mut bytes = 0;
    for (start, end) in own_read_only_mappings() {
        // SAFETY: the range is one of this process's own read-only file mappings, as
        // the kernel listed it; the advice only changes which pages are mapped, not
        // their contents, so no Rust reference into them is invalidated.
        let done = unsafe { libc::madvise(start as *mut libc::c_void, end - start, advice) };
        if done == 0 {
            bytes += end - start;
        }
    }
    bytes
}

/// Map only the pages of this binary that run (see the module). Answers how many
/// bytes of mappings were advised.
pub fn map_only_what_runs() -> usize {
    advise(libc::MADV_RANDOM)
}

/// Unmap every page of this binary's code and read-only data; those still needed fault
/// back in from the page cache. Call once, when start-up is done. Answers how many
/// bytes of mappings were advised.
pub fn forget_start_up() -> usize {
    advise(libc::MADV_DONTNEED)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resident_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    #[test]
    fn the_binary_s_pages_are_given_back_and_the_program_runs_on() {
        assert!(
            !own_read_only_mappings().is_empty(),
            "the test binary's own mappings"
        );
        assert!(map_only_what_runs() > 0);
        let before = resident_kib();
        assert!(forget_start_up() > 0);
        let after = resident_kib();
        assert!(after <= before, "{before} KiB → {after} KiB");
        // Code runs on after its pages went: they fault back in.
        let text = format!("{:?}", (1..5).map(|n| n * n).collect::<Vec<_>>());
        assert_eq!(text, "[1, 4, 9, 16]");
    }
}
