//! How every git the bridge runs is hardened against the repository it runs in.

use std::path::Path;

/// Configuration forced on every git tool call (`-c` wins over every config file), so
/// that a repository configuration the agent could write (`.git/config` through
/// `createFile`) cannot make a read-only tool run a program: no fsmonitor hook, no
/// hooks, no signing program, no pager. `gitDiff`/`gitShow` add `--no-ext-diff
/// --no-textconv`; filter drivers (`filter.<name>.clean`) are not neutralised.
pub const FORCED_CONFIG: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "core.pager=cat",
];

/// The arguments and environment of a git tool call in `root`: [`FORCED_CONFIG`] before
/// `args`; the system config ignored (`GIT_CONFIG_NOSYSTEM`); repository discovery
/// stopped at the workspace (`GIT_CEILING_DIRECTORIES` = its parent), so a workspace
/// inside a larger repository is "not a git repository" rather than a window on the
/// outer one; and every pathspec literal (`GIT_LITERAL_PATHSPECS`: no `:(top)`, `:/`
/// or glob magic, which git applies even after `--`).
pub fn hardened(root: &Path, args: Vec<String>) -> (Vec<String>, Vec<(String, String)>) {
    let mut argv = Vec::with_capacity(args.len() + 2 * FORCED_CONFIG.len());
    for kv in FORCED_CONFIG {
        argv.push("-c".to_string());
        argv.push((*kv).to_string());
    }
    argv.extend(args);
    let mut env = vec![
        ("GIT_CONFIG_NOSYSTEM".to_string(), "1".to_string()),
        ("GIT_LITERAL_PATHSPECS".to_string(), "1".to_string()),
    ];
    if let Some(parent) = root.parent() {
        env.push((
            "GIT_CEILING_DIRECTORIES".to_string(),
            parent.display().to_string(),
        ));
    }
    (argv, env)
}
