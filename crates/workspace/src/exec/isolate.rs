//! Namespaces for sandboxed commands. The bridge does not set them up in a fork of
//! itself (that copy would hold the bridge's memory, signal handlers and, not being
//! dumpable, could not even write its own uid map): it runs this same binary as a
//! small helper, `ide-bridge __sandbox`, which starts fresh and then
//!
//! 1. enters new **user** (mapping only the bridge's own uid and gid), **mount**,
//!    **PID** and — for commands not allowed the network — **network** namespaces;
//! 2. forks PID 1 of the new PID namespace, an init that mounts the sandbox's view
//!    (below), starts the command as PID 2, reaps every orphan, and when the command
//!    ends, ends too — and with it, by the kernel's hand, every process left in the
//!    namespace, `setsid` and double forks included. The helper outside waits for it
//!    and ends as the command ended (exit code, or the same signal);
//! 3. in the mount namespace makes everything read-only
//!    (`mount_setattr(MOUNT_ATTR_RDONLY, AT_RECURSIVE)`) but the writable directories,
//!    bound back read-write with the writable mounts beneath them, so that `chmod`,
//!    `chown`, `utimensat` and `setxattr` — which Landlock has no rights for — fail with
//!    `EROFS` outside them; mounts a fresh `/proc` (the namespace's processes only);
//!    and hides what would let a command reach past the sandbox: the Claude config
//!    directory (lock files with their tokens, credentials), the bridge's state, the
//!    user's runtime directory (session bus, editor and agent sockets), X11, tmux and
//!    ssh-agent sockets — an empty directory (or `/dev/null`) over each;
//! 4. for the command: a session of its own (no controlling terminal), no capability
//!    left in the bounding set (a bridge running as root gives its commands none),
//!    then Landlock ([`super::sandbox`]), then `execve`.
//!
//! [`available`] says whether the kernel allows this to the bridge's user (probed once
//! by running the helper); the bridge sets the helper's path at start-up
//! ([`set_helper`]) — without one (a library test) there are no namespaces.

use std::ffi::{CString, OsString};
use std::io::{self, Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The helper's subcommand (not shown in `--help`).
pub const SUBCOMMAND: &str = "__sandbox";
/// Exit code of the helper when the sandbox cannot be set up (as `env` and `unshare`).
pub const SETUP_FAILED: i32 = 125;

/// `AT_RECURSIVE` for `mount_setattr` (not in every libc target).
const AT_RECURSIVE: libc::c_uint = 0x8000;
/// `MOUNT_ATTR_RDONLY`.
const MOUNT_ATTR_RDONLY: u64 = 0x1;

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

static HELPER: OnceLock<PathBuf> = OnceLock::new();

/// Names the binary that serves as the helper (this one); called once at start-up.
pub fn set_helper(path: PathBuf) {
    let _ = HELPER.set(path);
}

/// What one sandboxed run asks of the helper.
#[derive(Debug, Clone)]
pub struct Request {
    /// Directories it may write (and change the metadata of).
    pub writable: Vec<PathBuf>,
    /// Paths hidden from it (an empty directory or `/dev/null` over each that exists).
    pub hidden: Vec<PathBuf>,
    /// TCP and UDP allowed (no network namespace, no Landlock TCP rules).
    pub network: bool,
    /// The program, resolved to a path.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
}

impl Request {
    /// The helper's program and arguments for this request; `None` without a helper.
    pub fn command_line(&self) -> Option<(PathBuf, Vec<OsString>)> {
        let helper = HELPER.get()?.clone();
        let mut args: Vec<OsString> = vec![SUBCOMMAND.into()];
        if self.network {
            args.push("--network".into());
        }
        for w in &self.writable {
            args.push("--write".into());
            args.push(w.into());
        }
        for h in &self.hidden {
            args.push("--hide".into());
            args.push(h.into());
        }
        args.push("--".into());
        args.push(self.program.clone().into());
        args.extend(self.args.iter().map(OsString::from));
        Some((helper, args))
    }

    fn parse(mut args: impl Iterator<Item = OsString>) -> Result<Request, String> {
        let mut request = Request {
            writable: Vec::new(),
            hidden: Vec::new(),
            network: false,
            program: PathBuf::new(),
            args: Vec::new(),
        };
        while let Some(arg) = args.next() {
            match arg.to_str() {
                Some("--network") => request.network = true,
                Some("--write") => request
                    .writable
                    .push(args.next().ok_or("--write needs a directory")?.into()),
                Some("--hide") => request
                    .hidden
                    .push(args.next().ok_or("--hide needs a path")?.into()),
                Some("--") => {
                    request.program = args.next().ok_or("no program after --")?.into();
                    request.args = args
                        .map(|a| a.into_string().map_err(|_| "an argument is not UTF-8"))
                        .collect::<Result<_, _>>()?;
                    return Ok(request);
                }
                _ => return Err(format!("unexpected argument {arg:?}")),
            }
        }
        Err("no program".into())
    }
}

/// Whether commands get their namespaces: a helper is set and the kernel lets this
/// user create them (probed once, by running `true` through the helper). False where
/// unprivileged user namespaces are off (`kernel.unprivileged_userns_clone = 0`,
/// AppArmor's `apparmor_restrict_unprivileged_userns`, a container without them).
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(probe)
}

fn probe() -> bool {
    #[cfg(feature = "fault-injection")]
    if std::env::var_os("BRIDGE_TEST_NO_NAMESPACES").is_some() {
        return false;
    }
    let dir = std::env::temp_dir();
    let Some(program) = resolve("true") else {
        return false;
    };
    let request = Request {
        writable: vec![dir.clone()],
        hidden: Vec::new(),
        network: false,
        program,
        args: Vec::new(),
    };
    let Some((helper, args)) = request.command_line() else {
        return false;
    };
    let outcome = std::process::Command::new(helper)
        .args(args)
        .current_dir(&dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output();
    match outcome {
        Ok(out) if out.status.success() => true,
        outcome => {
            tracing::debug!(?outcome, "namespaces for commands are not available");
            false
        }
    }
}

/// `program` looked up in `PATH` as `execvp` would (a name with a slash is taken as
/// it is): the first executable regular file.
pub fn resolve(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

/// The helper: sets up the sandbox and runs the command; never returns.
pub fn helper_main(args: impl Iterator<Item = OsString>) -> ! {
    let request = match Request::parse(args) {
        Ok(r) => r,
        Err(e) => fail(&format!("bad request: {e}")),
    };
    match run(&request) {
        Ok(never) => match never {},
        Err(e) => fail(&e),
    }
}

fn fail(what: &str) -> ! {
    let _ = writeln!(io::stderr(), "ide-bridge sandbox: {what}");
    std::process::exit(SETUP_FAILED)
}

/// An error with what was being done.
fn os(what: &str) -> String {
    format!("{what}: {}", io::Error::last_os_error())
}

enum Never {}

fn run(request: &Request) -> Result<Never, String> {
    // Ends with the bridge (the thread that started it lives as long as the bridge),
    // and with it the whole sandbox: nothing outlives a bridge that was killed.
    // SAFETY: getppid and a prctl on this process.
    unsafe {
        let parent = libc::getppid();
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        if libc::getppid() != parent {
            return Err("the bridge is gone".into());
        }
    }
    let cwd = std::env::current_dir().map_err(|e| format!("the working directory: {e}"))?;
    // Opened now, enforced in the command (it needs the directories' handles).
    let ruleset = super::sandbox::ruleset(&super::sandbox::Sandbox {
        writable: request.writable.clone(),
        network: request.network,
    })
    .map_err(|e| format!("the Landlock ruleset: {e}"))?;
    // SAFETY: plain getters.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID;
    if !request.network {
        flags |= libc::CLONE_NEWNET;
    }
    // SAFETY: this process is single-threaded (fresh from exec).
    if unsafe { libc::unshare(flags) } != 0 {
        return Err(os("unshare"));
    }
    write_proc("/proc/self/setgroups", "deny")?;
    write_proc("/proc/self/uid_map", &format!("{uid} {uid} 1\n"))?;
    write_proc("/proc/self/gid_map", &format!("{gid} {gid} 1\n"))?;
    // The init reports a command killed by a signal through this pipe (inside its
    // PID namespace it cannot end by the signal itself).
    let (report_read, report_write) = pipe()?;
    // SAFETY: single-threaded; the child continues with its own copy.
    match unsafe { libc::fork() } {
        -1 => Err(os("fork")),
        0 => {
            drop(report_read);
            init(request, &cwd, ruleset, report_write)
        }
        pid => {
            drop(report_write);
            mirror(pid, report_read)
        }
    }
}

fn write_proc(path: &str, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{path}: {e}"))
}

fn pipe() -> Result<(OwnedFd, OwnedFd), String> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for two descriptors, which we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(os("pipe"));
    }
    // SAFETY: fresh descriptors from pipe2.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Outside the namespace: waits for the init and ends as the command did.
fn mirror(pid: libc::pid_t, report: OwnedFd) -> Result<Never, String> {
    let status = wait_for(pid)?;
    let mut signal = [0u8; 1];
    let signalled = std::fs::File::from(report).read(&mut signal).ok() == Some(1);
    if signalled && signal[0] > 0 {
        raise(i32::from(signal[0]));
    }
    if libc::WIFSIGNALED(status) {
        raise(libc::WTERMSIG(status));
    }
    std::process::exit(libc::WEXITSTATUS(status))
}

/// Ends this process by `sig` (default action), or with 128 + `sig`.
fn raise(sig: i32) -> ! {
    // SAFETY: resetting a disposition, unblocking and sending a signal to ourselves.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
    }
    std::process::exit(128 + sig)
}

fn wait_for(pid: libc::pid_t) -> Result<libc::c_int, String> {
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(status);
        }
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(os("waitpid"));
        }
    }
}

/// PID 1 of the new namespace.
fn init(
    request: &Request,
    cwd: &Path,
    ruleset: landlock::RulesetCreated,
    report: OwnedFd,
) -> Result<Never, String> {
    // SAFETY: a prctl on this process; it ends with the helper outside.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    mount_view(request)?;
    let argv = argv(request)?;
    let program = c_path(&request.program)?;
    let cwd = c_path(cwd)?;
    // SAFETY: single-threaded; the child only makes system calls on prepared data
    // until it execs, or exits.
    let command = match unsafe { libc::fork() } {
        -1 => return Err(os("fork")),
        0 => {
            let err = command(&program, &argv, &cwd, ruleset);
            let _ = writeln!(
                io::stderr(),
                "ide-bridge sandbox: cannot run {}: {err}",
                request.program.display()
            );
            // SAFETY: leaving the child without running the parent's exit handlers.
            unsafe { libc::_exit(127) }
        }
        pid => pid,
    };
    drop(ruleset);
    // Reap everything (orphans come to PID 1) until the command itself ends.
    let status = loop {
        let mut status = 0;
        // SAFETY: waiting for any child of ours.
        let r = unsafe { libc::waitpid(-1, &mut status, 0) };
        if r == command {
            break status;
        }
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(os("waitpid"));
        }
    };
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        let _ = std::fs::File::from(report).write_all(&[sig as u8]);
        std::process::exit(128 + sig);
    }
    // Exiting ends every process left in the namespace.
    std::process::exit(libc::WEXITSTATUS(status))
}

/// The command: its own session, no capabilities, Landlock, exec. Returns only on error.
fn command(
    program: &CString,
    argv: &[CString],
    cwd: &CString,
    ruleset: landlock::RulesetCreated,
) -> io::Error {
    // SAFETY: system calls on this single-threaded process.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        // No controlling terminal: nothing typed into the person's shell.
        libc::setsid();
        if libc::chdir(cwd.as_ptr()) != 0 {
            return io::Error::last_os_error();
        }
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
    }
    if let Err(e) = ruleset.restrict_self() {
        return io::Error::other(format!("Landlock: {e}"));
    }
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: NUL-terminated strings and a null-terminated array that outlive the call;
    // the environment is the one the bridge gave the helper.
    unsafe {
        libc::execv(program.as_ptr(), ptrs.as_ptr());
    }
    io::Error::last_os_error()
}

fn argv(request: &Request) -> Result<Vec<CString>, String> {
    std::iter::once(request.program.as_os_str().as_bytes().to_vec())
        .chain(request.args.iter().map(|a| a.as_bytes().to_vec()))
        .map(|a| CString::new(a).map_err(|_| "an argument holds a NUL byte".to_string()))
        .collect()
}

fn c_path(p: &Path) -> Result<CString, String> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| format!("{} holds a NUL byte", p.display()))
}

/// The mount namespace's view: private, read-only but the writable directories,
/// a fresh `/proc`, the hidden paths covered.
fn mount_view(request: &Request) -> Result<(), String> {
    mount(None, "/", None, libc::MS_REC | libc::MS_PRIVATE)?;
    // Mounts that are writable now, to make writable again beneath the writable dirs.
    let writable_now = writable_mounts();
    let all = request.writable.iter().any(|w| w == Path::new("/"));
    if !all {
        for w in &request.writable {
            let w = w.to_string_lossy();
            mount(Some(&w), &w, None, libc::MS_BIND | libc::MS_REC)?;
        }
        set_readonly("/", true, AT_RECURSIVE)?;
        for w in &request.writable {
            set_readonly(&w.to_string_lossy(), false, 0)?;
            for m in writable_now.iter().filter(|m| m.starts_with(w) && *m != w) {
                // A mount that was read-only stays so; one that was writable is again.
                let _ = set_readonly(&m.to_string_lossy(), false, 0);
            }
        }
    }
    // Hidden paths: never one holding (or inside) a writable directory.
    for h in &request.hidden {
        let overlaps = request
            .writable
            .iter()
            .any(|w| w.starts_with(h) || h.starts_with(w));
        let Ok(meta) = std::fs::symlink_metadata(h) else {
            continue;
        };
        if overlaps || meta.file_type().is_symlink() {
            continue;
        }
        let h = h.to_string_lossy();
        if meta.is_dir() {
            mount(
                Some("tmpfs"),
                &h,
                Some("tmpfs"),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            )
            .and_then(|()| set_readonly(&h, true, 0))?;
        } else {
            mount(Some("/dev/null"), &h, None, libc::MS_BIND)?;
        }
    }
    // A /proc of this namespace only. Where the kernel refuses it (a container masking
    // parts of /proc) the old one stays: the bridge, not dumpable, is unreadable there.
    let _ = mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
    );
    Ok(())
}

/// Mount points that are read-write now, from `/proc/self/mountinfo`.
fn writable_mounts() -> Vec<PathBuf> {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    info.lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let point = fields.nth(4)?;
            let options = fields.next()?;
            options
                .split(',')
                .any(|o| o == "rw")
                .then(|| PathBuf::from(unescape_mount_path(point)))
        })
        .collect()
}

/// `/proc/self/mountinfo` writes space, tab, newline and backslash as `\ooo`.
fn unescape_mount_path(s: &str) -> OsString {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() + 1 {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..(i + 4).min(s.len())], 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    OsString::from_vec(out)
}

fn mount(
    source: Option<&str>,
    target: &str,
    fstype: Option<&str>,
    flags: libc::c_ulong,
) -> Result<(), String> {
    let c = |s: &str| CString::new(s).map_err(|_| format!("{s} holds a NUL byte"));
    let source = source.map(c).transpose()?;
    let target_c = c(target)?;
    let fstype = fstype.map(c).transpose()?;
    let ptr = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: NUL-terminated strings or null pointers that outlive the call.
    let r = unsafe {
        libc::mount(
            ptr(&source),
            target_c.as_ptr(),
            ptr(&fstype),
            flags,
            std::ptr::null(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(os(&format!("mount {target}")))
    }
}

fn set_readonly(path: &str, on: bool, flags: libc::c_uint) -> Result<(), String> {
    let attr = MountAttr {
        attr_set: if on { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if on { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let c = CString::new(path).map_err(|_| format!("{path} holds a NUL byte"))?;
    // SAFETY: a NUL-terminated path and a `mount_attr` of the size given.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(os(&format!("read-only {path}")))
    }
}

/// What commands must not see of this user's (see the module comment): each path that
/// exists is covered in the sandbox.
pub fn hidden_paths() -> Vec<PathBuf> {
    // SAFETY: a plain getter.
    let uid = unsafe { libc::geteuid() };
    let config = ide_bridge_host::lockfile::config_dir();
    let mut hidden = vec![
        config.clone(),
        PathBuf::from(format!("/run/user/{uid}")),
        PathBuf::from("/tmp/.X11-unix"),
        PathBuf::from("/tmp/.ICE-unix"),
        PathBuf::from(format!("/tmp/tmux-{uid}")),
    ];
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        hidden.push(Path::new(&home).join(".claude.json"));
        hidden.push(Path::new(&home).join(".claude"));
    }
    // ssh-agent and editor sockets in /tmp.
    if let Ok(entries) = std::fs::read_dir("/tmp") {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let owned = std::os::unix::fs::MetadataExt::uid(&match entry.metadata() {
                Ok(m) => m,
                Err(_) => continue,
            }) == uid;
            let socketish = name.starts_with("ssh-")
                || name.starts_with("nvim")
                || name.starts_with("vscode-")
                || name.ends_with(".sock");
            if owned && socketish {
                hidden.push(entry.path());
            }
        }
    }
    hidden
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_through_the_command_line() {
        set_helper(PathBuf::from("/bin/ide-bridge"));
        let r = Request {
            writable: vec!["/w".into(), "/tmp/x".into()],
            hidden: vec!["/run/user/1".into()],
            network: false,
            program: "/usr/bin/npm".into(),
            args: vec!["run".into(), "--".into(), "x y".into()],
        };
        let (helper, args) = r.command_line().unwrap();
        assert_eq!(helper, Path::new("/bin/ide-bridge"));
        assert_eq!(args[0], SUBCOMMAND);
        let back = Request::parse(args.into_iter().skip(1)).unwrap();
        assert_eq!(back.writable, r.writable);
        assert_eq!(back.hidden, r.hidden);
        assert!(!back.network);
        assert_eq!(back.program, r.program);
        assert_eq!(back.args, r.args);
    }

    #[test]
    fn mountinfo_paths_are_unescaped() {
        assert_eq!(
            unescape_mount_path(r"/a\040b\011c"),
            OsString::from("/a b\tc")
        );
        assert_eq!(unescape_mount_path("/plain"), OsString::from("/plain"));
    }

    #[test]
    fn programs_resolve_like_execvp() {
        assert!(resolve("sh").is_some_and(|p| p.is_absolute()));
        assert!(resolve("no-such-program-xyz").is_none());
        assert_eq!(resolve("/bin/sh"), Some(PathBuf::from("/bin/sh")));
    }
}
