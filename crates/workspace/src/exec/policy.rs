//! Whether a command may run: allowlisted bare program names, never a shell or an
//! interpreter, no flags or subcommands that run code or redirect configuration, no
//! shell metacharacters, no paths that leave the workspace, bounded arguments.

use std::path::Path;

use crate::workspace::Workspace;

/// Programs refused even when configured: shells, interpreters, and programs that run
/// other programs (launchers, build tools that run recipes, editors) or reach the
/// network.
pub const NEVER_ALLOWED: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "fish",
    "dash",
    "ksh",
    "mksh",
    "csh",
    "tcsh",
    "ash",
    "busybox",
    "python",
    "python2",
    "python3",
    "pypy",
    "pypy3",
    "node",
    "nodejs",
    "deno",
    "bun",
    "perl",
    "ruby",
    "irb",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "osascript",
    "pwsh",
    "powershell",
    "cmd",
    "env",
    "xargs",
    "sudo",
    "su",
    "doas",
    "nohup",
    "timeout",
    "nice",
    "ionice",
    "setsid",
    "stdbuf",
    "strace",
    "gdb",
    "eval",
    "exec",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "sed",
    "find",
    "expect",
    "script",
    "ssh",
    "scp",
    "rsync",
    "curl",
    "wget",
    "nc",
    "ncat",
    "socat",
    "telnet",
    "npx",
    "watch",
    "parallel",
    "make",
    "docker",
    "kubectl",
    "vim",
    "vi",
    "nvim",
    "emacs",
    "nano",
];

/// Flags that run code or redirect configuration, for every program (exact, or as
/// `--flag=value`; `-e`, `-c` and `-C` also with the value attached).
pub const BLOCKED_FLAGS: &[&str] = &[
    "-e",
    "--eval",
    "-c",
    "--config",
    "--exec",
    "--exec-path",
    "-C",
    "--git-dir",
    "--work-tree",
    "--upload-pack",
    "--receive-pack",
    "--rcfile",
    "--init-file",
    "--require",
    "--loader",
    "--import",
    "--prefix",
    "--globalconfig",
    "--userconfig",
];

/// Flags blocked for one program only (they mean something harmless elsewhere, like
/// pytest's `-x`).
pub const PROGRAM_BLOCKED_FLAGS: &[(&str, &[&str])] = &[(
    "git",
    &[
        "-x",
        "--template",
        "--ext-diff",
        "--textconv",
        "--extcmd",
        "--tool",
        "--run",
    ],
)];

/// Git subcommands `runCommand` may run. Anything else is refused, aliases included:
/// an alias comes from configuration the agent may be able to write and can be
/// `!<shell command>`; git never lets an alias shadow these built-ins.
pub const GIT_SUBCOMMANDS: &[&str] = &[
    "add",
    "am",
    "apply",
    "blame",
    "branch",
    "cat-file",
    "checkout",
    "cherry-pick",
    "clean",
    "clone",
    "commit",
    "describe",
    "diff",
    "fetch",
    "for-each-ref",
    "format-patch",
    "grep",
    "init",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "merge",
    "merge-base",
    "mv",
    "pull",
    "push",
    "rebase",
    "reflog",
    "remote",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "shortlog",
    "show",
    "show-ref",
    "stash",
    "status",
    "switch",
    "tag",
    "version",
    "worktree",
];

/// Global options accepted before a git subcommand; every other one is refused. Git
/// parses its global options itself, and several take a separate value
/// (`--namespace x config …`), which would otherwise hide the real subcommand.
pub const GIT_GLOBAL_FLAGS: &[&str] = &[
    "--no-pager",
    "-P",
    "--no-optional-locks",
    "--literal-pathspecs",
    "--no-replace-objects",
    "--version",
];

/// Git flags refused wherever they appear after the subcommand (exact, `--flag=value`,
/// or for `-O` with the value attached): they name a program to run or a file to write
/// outside the checked arguments.
pub const GIT_BLOCKED_FLAGS: &[&str] = &["--output", "--open-files-in-pager", "-O"];

/// Git subcommands that talk to another repository, and their flags that name a
/// program to run there or here (`clone -u <cmd>` is `--upload-pack`).
pub const GIT_REMOTE_PROGRAM_FLAGS: (&[&str], &[&str]) = (
    &["clone", "fetch", "pull", "ls-remote", "archive", "push"],
    &["-u", "--upload-pack", "--receive-pack", "--exec"],
);

/// Subcommands that run code, change global state or reach credentials.
pub const BLOCKED_SUBCOMMANDS: &[(&str, &[&str])] = &[
    (
        "git",
        &[
            "config",
            "daemon",
            "credential",
            "credential-store",
            "credential-cache",
            "instaweb",
            "submodule",
            "filter-branch",
            "difftool",
            "mergetool",
            "bisect",
            "send-email",
            "hook",
            "archimport",
            "cvsimport",
            "svn",
            "p4",
            "web--browse",
            "help",
        ],
    ),
    (
        "cargo",
        &[
            "install",
            "uninstall",
            "login",
            "logout",
            "owner",
            "publish",
            "yank",
            "search",
            "new",
            "init",
        ],
    ),
    (
        "npm",
        &[
            "exec",
            "x",
            "publish",
            "unpublish",
            "login",
            "logout",
            "adduser",
            "token",
            "config",
            "set",
            "explore",
            "edit",
            "init",
            "create",
            "owner",
            "access",
            "profile",
            "help",
        ],
    ),
    ("go", &["env", "get", "install"]),
];

/// Characters a shell would interpret. Commands run without a shell, so they would
/// not do what the caller expects; they are refused to say so.
const METACHARACTERS: &[&str] = &[";", "|", "&", "`", "$(", "${", ">", "<", "\n", "\r"];

/// The limits and allowlist from `[commands]`.
#[derive(Debug, Clone)]
pub struct CommandPolicy {
    /// Allowed program names.
    pub allow: Vec<String>,
    /// Most arguments.
    pub max_args: usize,
    /// Longest argument in bytes.
    pub max_arg_bytes: usize,
}

/// Why a command was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// Not a bare name.
    #[error("Command must be a bare program name (no path): {0:?}")]
    NotBare(String),
    /// A shell, an interpreter or a launcher ([`NEVER_ALLOWED`]).
    #[error("Command not allowed: {0:?} is never allowed: shells, interpreters and programs that run other programs or reach the network (env, xargs, find, make, ssh, curl, editors, …) are refused whatever commands.allow says")]
    Interpreter(String),
    /// Not in the allowlist.
    #[error("Command not in allowlist: {0:?} (allowed: {1}); add it to commands.allow")]
    NotAllowed(String, String),
    #[error("Flag blocked: {0:?} can run code or redirect configuration")]
    FlagBlocked(String),
    #[error("Subcommand blocked: {program} {sub} is not allowed through the bridge")]
    SubcommandBlocked {
        program: String,
        /// Subcommand.
        sub: String,
    },
    /// Shell syntax in an argument.
    #[error(
        "Shell metacharacters are not allowed in arguments (commands run without a shell): {0:?}"
    )]
    Metacharacter(String),
    /// A path argument outside the workspace.
    #[error("Path escapes workspace: {0}")]
    PathEscapes(String),
    /// Too many arguments.
    #[error("Too many arguments: {0} (max {1})")]
    TooManyArgs(usize, usize),
    /// An argument too long.
    #[error("Argument {index} is {len} bytes (max {max})")]
    ArgTooLong {
        index: usize,
        /// Length.
        len: usize,
        /// Limit.
        max: usize,
    },
    /// A NUL byte.
    #[error("Arguments must not contain null bytes")]
    NullByte,
}

/// Checks `program args…` against the policy.
pub fn check(
    policy: &CommandPolicy,
    workspace: &Workspace,
    program: &str,
    args: &[String],
) -> Result<(), PolicyError> {
    if program.is_empty()
        || program.contains('/')
        || program.contains('\0')
        || program.chars().any(char::is_whitespace)
    {
        return Err(PolicyError::NotBare(program.to_string()));
    }
    if is_interpreter(program) {
        return Err(PolicyError::Interpreter(program.to_string()));
    }
    if !policy.allow.iter().any(|a| a == program) {
        return Err(PolicyError::NotAllowed(
            program.to_string(),
            policy.allow.join(", "),
        ));
    }
    if args.len() > policy.max_args {
        return Err(PolicyError::TooManyArgs(args.len(), policy.max_args));
    }
    if let Some(sub) = args.iter().find(|a| !a.starts_with('-')) {
        let blocked = BLOCKED_SUBCOMMANDS
            .iter()
            .find(|(p, _)| *p == program)
            .is_some_and(|(_, subs)| subs.contains(&sub.as_str()));
        if blocked {
            return Err(PolicyError::SubcommandBlocked {
                program: program.to_string(),
                sub: sub.clone(),
            });
        }
    }
    for (index, arg) in args.iter().enumerate() {
        if arg.len() > policy.max_arg_bytes {
            return Err(PolicyError::ArgTooLong {
                index,
                len: arg.len(),
                max: policy.max_arg_bytes,
            });
        }
        if arg.contains('\0') {
            return Err(PolicyError::NullByte);
        }
        let flag = arg.split('=').next().unwrap_or(arg);
        let program_blocked = PROGRAM_BLOCKED_FLAGS
            .iter()
            .find(|(p, _)| *p == program)
            .is_some_and(|(_, flags)| flags.contains(&flag));
        if BLOCKED_FLAGS.contains(&flag) || program_blocked || is_attached_short_flag(arg) {
            return Err(PolicyError::FlagBlocked(arg.clone()));
        }
        if METACHARACTERS.iter().any(|m| arg.contains(m)) {
            return Err(PolicyError::Metacharacter(arg.clone()));
        }
        let value = arg.split_once('=').map_or(arg.as_str(), |(_, v)| v);
        // `~` is not expanded without a shell, but some programs expand it themselves.
        if value.starts_with('~')
            || (looks_like_escaping_path(value) && workspace.resolve(value).is_err())
        {
            return Err(PolicyError::PathEscapes(value.to_string()));
        }
    }
    if program == "git" {
        check_git(args)?;
    }
    Ok(())
}

/// Git's own rules: only [`GIT_GLOBAL_FLAGS`] before the subcommand, the subcommand
/// from [`GIT_SUBCOMMANDS`], no [`GIT_BLOCKED_FLAGS`] after it, and no
/// program-naming flags for subcommands that reach another repository.
fn check_git(args: &[String]) -> Result<(), PolicyError> {
    let mut rest = args.iter();
    let sub = loop {
        match rest.next() {
            None => return Ok(()),
            Some(arg) if arg.starts_with('-') => {
                if !GIT_GLOBAL_FLAGS.contains(&arg.as_str()) {
                    return Err(PolicyError::FlagBlocked(arg.clone()));
                }
            }
            Some(sub) => break sub,
        }
    };
    if !GIT_SUBCOMMANDS.contains(&sub.as_str()) {
        return Err(PolicyError::SubcommandBlocked {
            program: "git".into(),
            sub: sub.clone(),
        });
    }
    let (remote_subs, remote_flags) = GIT_REMOTE_PROGRAM_FLAGS;
    let remote = remote_subs.contains(&sub.as_str());
    for arg in rest {
        if arg == "--" {
            break;
        }
        let flag = arg.split('=').next().unwrap_or(arg);
        let attached_o = arg.len() > 2 && arg.starts_with("-O");
        if GIT_BLOCKED_FLAGS.contains(&flag)
            || attached_o
            || (remote
                && (remote_flags.contains(&flag) || (arg.len() > 2 && arg.starts_with("-u"))))
        {
            return Err(PolicyError::FlagBlocked(arg.clone()));
        }
    }
    Ok(())
}

/// `-eCODE`, `-cname=value`, `-Cdir`: a blocked short flag with its value attached.
fn is_attached_short_flag(arg: &str) -> bool {
    let b = arg.as_bytes();
    b.len() > 2 && b[0] == b'-' && matches!(b[1], b'e' | b'c' | b'C')
}

/// True for what [`NEVER_ALLOWED`] names (by base name, ignoring version suffixes).
pub fn is_interpreter(program: &str) -> bool {
    let base = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    let stem = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    NEVER_ALLOWED.contains(&base) || NEVER_ALLOWED.contains(&stem)
}

/// Absolute paths and anything with a `..` component.
fn looks_like_escaping_path(value: &str) -> bool {
    value.starts_with('/') || value.split('/').any(|c| c == "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Workspace, CommandPolicy) {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("src")).unwrap();
        let ws = Workspace::open(t.path()).unwrap();
        let policy = CommandPolicy {
            allow: ["git", "cargo", "npm", "bash", "python3"]
                .map(String::from)
                .to_vec(),
            max_args: 8,
            max_arg_bytes: 64,
        };
        (t, ws, policy)
    }

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn allows_ordinary_commands() {
        let (_t, ws, p) = setup();
        for (prog, a) in [
            ("git", vec!["status", "--short"]),
            ("git", vec!["log", "-n", "5", "--oneline"]),
            ("cargo", vec!["test", "-r", "--", "--exact", "x"]),
            ("git", vec!["diff", "origin/main", "--", "src/"]),
            ("git", vec!["--no-pager", "log", "-p", "-u"]),
            ("git", vec!["add", "-u"]),
            ("git", vec![]),
            ("cargo", vec!["build", "--manifest-path=src/../Cargo.toml"]),
            ("npm", vec!["test", "-x"]),
        ] {
            assert_eq!(check(&p, &ws, prog, &args(&a)), Ok(()), "{prog} {a:?}");
        }
        let inside = ws.root().join("src").display().to_string();
        assert_eq!(check(&p, &ws, "git", &args(&["add", &inside])), Ok(()));
    }

    #[test]
    fn refuses_what_it_must() {
        let (_t, ws, p) = setup();
        let long = "y".repeat(65);
        let cases: Vec<(&str, Vec<&str>, &str)> = vec![
            ("bash", vec!["-c", "id"], "is never allowed"),
            ("python3", vec![], "is never allowed"),
            ("python3.11", vec![], "is never allowed"),
            ("/bin/sh", vec![], "bare program name"),
            ("./x.sh", vec![], "bare program name"),
            ("git status", vec![], "bare program name"),
            ("rm", vec!["-rf", "/"], "not in allowlist"),
            ("git;rm", vec![], "not in allowlist"),
            ("git", vec!["-c", "core.pager=id", "log"], "Flag blocked"),
            ("git", vec!["-ccore.pager=id", "log"], "Flag blocked"),
            ("git", vec!["--config=x", "log"], "Flag blocked"),
            ("git", vec!["-C", "/", "status"], "Flag blocked"),
            ("git", vec!["--upload-pack=evil", "fetch"], "Flag blocked"),
            ("git", vec!["rebase", "-x", "id", "HEAD~1"], "Flag blocked"),
            ("cargo", vec!["--config", "x=1", "build"], "Flag blocked"),
            ("npm", vec!["--prefix", "/tmp", "test"], "Flag blocked"),
            (
                "git",
                vec!["config", "core.sshCommand", "x"],
                "Subcommand blocked",
            ),
            ("cargo", vec!["install", "x"], "Subcommand blocked"),
            ("npm", vec!["exec", "x"], "Subcommand blocked"),
            ("git", vec!["log", "; rm -rf /"], "metacharacters"),
            ("git", vec!["log", "$(id)"], "metacharacters"),
            ("git", vec!["log", "`id`"], "metacharacters"),
            ("git", vec!["log", "a|b"], "metacharacters"),
            ("git", vec!["log", "a\nb"], "metacharacters"),
            ("git", vec!["log", "x>y"], "metacharacters"),
            ("git", vec!["add", "/etc/passwd"], "escapes workspace"),
            ("git", vec!["add", "../x"], "escapes workspace"),
            ("git", vec!["add", "src/../../x"], "escapes workspace"),
            ("git", vec!["add", "~/.ssh/id_rsa"], "escapes workspace"),
            (
                "cargo",
                vec!["build", "--manifest-path=/tmp/Cargo.toml"],
                "escapes workspace",
            ),
            ("git", vec!["log", "a\0b"], "null bytes"),
            // Git's global options, aliases and program-naming flags.
            (
                "git",
                vec!["--namespace", "x", "config", "core.fsmonitor", "id"],
                "Flag blocked",
            ),
            ("git", vec!["-p", "log"], "Flag blocked"),
            ("git", vec!["--paginate", "log"], "Flag blocked"),
            ("git", vec!["myalias"], "Subcommand blocked"),
            (
                "git",
                vec!["--no-pager", "config", "x", "y"],
                "Subcommand blocked",
            ),
            (
                "git",
                vec!["grep", "--open-files-in-pager=id", "x"],
                "Flag blocked",
            ),
            ("git", vec!["grep", "-Oid", "x"], "Flag blocked"),
            ("git", vec!["grep", "-O", "x"], "Flag blocked"),
            (
                "git",
                vec!["clone", "-u", "id", "src", "dst"],
                "Flag blocked",
            ),
            ("git", vec!["clone", "-uid", "src", "dst"], "Flag blocked"),
            ("git", vec!["fetch", "--upload-pack", "id"], "Flag blocked"),
            ("git", vec!["log", "--output=out.txt"], "Flag blocked"),
            ("git", vec!["log", "--output", "out.txt"], "Flag blocked"),
            ("git", vec!["x"; 9], "Too many arguments"),
            ("git", vec![long.as_str()], "bytes (max 64)"),
        ];
        for (prog, a, needle) in cases {
            let err = check(&p, &ws, prog, &args(&a)).expect_err(&format!("{prog} {a:?}"));
            assert!(err.to_string().contains(needle), "{prog} {a:?}: {err}");
        }
    }
}
