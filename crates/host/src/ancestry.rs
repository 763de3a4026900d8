//! The processes above this one: how `ide-bridge mcp` and `ide-bridge hook` tell the
//! bridge which agent (client process) they run for.

/// This process's parent and that one's ancestors, nearest first (at most `depth`,
/// stopping before pid 1): the MCP client that started the relay, and whatever wraps it.
pub fn client_pids(depth: usize) -> Vec<u32> {
    // SAFETY: getppid has no preconditions.
    let mut pid = unsafe { libc::getppid() } as u32;
    let mut chain = Vec::new();
    while pid > 1 && chain.len() < depth {
        chain.push(pid);
        match parent_of(pid) {
            Some(p) => pid = p,
            None => break,
        }
    }
    chain
}

/// The parent of `pid`, from `/proc/<pid>/stat` (the field after the command name).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_chain_starts_at_our_parent() {
        let chain = client_pids(4);
        assert_eq!(
            chain.first().copied(),
            // SAFETY: getppid has no preconditions.
            Some(unsafe { libc::getppid() } as u32)
        );
        assert!(chain.iter().all(|p| *p > 1));
    }
}
