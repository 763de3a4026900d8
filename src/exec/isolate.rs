//! Namespaces for sandboxed commands, set up between fork and exec, before Landlock:
//!
//! - a **user namespace** mapping only the bridge's own uid and gid (no privilege
//!   beyond the bridge's; the capabilities it gives inside are dropped before exec);
//! - a **mount namespace** where everything is read-only except the writable
//!   directories, so `chmod`, `chown`, `utimensat` and `setxattr` — which Landlock has
//!   no rights for — fail with `EROFS` outside them;
//! - a **PID namespace** whose first process is the command: when it ends, the kernel
//!   ends every process left in it, `setsid` and double forks included, and a fresh
//!   `/proc` shows nothing outside it (not the bridge's environment).
//!
//! The PID namespace only applies to children, so the forked process forks once more:
//! the first stays outside as a waiter that mirrors the command's exit, the second is
//! PID 1 inside and execs the command. [`available`] says whether the kernel allows
//! all of this to an unprivileged user (probed once, by running it).

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

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

/// What the child needs, prepared in the parent (nothing is allocated after fork).
#[derive(Debug)]
pub struct Isolation {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Writable directories, bound read-write over the read-only tree.
    writable: Vec<CString>,
    /// Everything stays writable (metadata included): only the PID namespace and the
    /// dropped capabilities apply.
    all_writable: bool,
    /// The working directory, entered again once the mounts are in place.
    cwd: CString,
}

fn c_path(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

impl Isolation {
    /// For a command in `cwd` that may write beneath `writable` (each canonical).
    pub fn new(writable: &[PathBuf], cwd: &Path) -> io::Result<Isolation> {
        // SAFETY: plain getters.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let all_writable = writable.iter().any(|w| w == Path::new("/"));
        Ok(Isolation {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            writable: if all_writable {
                Vec::new()
            } else {
                writable
                    .iter()
                    .map(|w| c_path(w))
                    .collect::<io::Result<_>>()?
            },
            all_writable,
            cwd: c_path(cwd)?,
        })
    }

    /// Enters the namespaces. Runs in the forked child: only system calls.
    ///
    /// # Safety
    /// Call only between fork and exec, in a single-threaded child.
    pub unsafe fn enter(&self) -> io::Result<()> {
        check(libc::unshare(
            libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID,
        ))?;
        write_file(c"/proc/self/setgroups", b"deny")?;
        write_file(c"/proc/self/uid_map", &self.uid_map)?;
        write_file(c"/proc/self/gid_map", &self.gid_map)?;
        match libc::fork() {
            -1 => return Err(io::Error::last_os_error()),
            0 => {}
            pid => wait_and_mirror(pid),
        }
        // PID 1 of the new namespace. It ends with its waiter (killed with the call).
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        check(libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))?;
        if !self.all_writable {
            for w in &self.writable {
                check(libc::mount(
                    w.as_ptr(),
                    w.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ))?;
            }
            set_readonly(c"/", true, AT_RECURSIVE)?;
            for w in &self.writable {
                // Its sub-mounts too where allowed (one that was read-only before stays so).
                if set_readonly(w, false, AT_RECURSIVE).is_err() {
                    set_readonly(w, false, 0)?;
                }
            }
        }
        // A /proc of this namespace only; where the kernel refuses it (a container
        // masking parts of /proc) the bridge, not dumpable, is still unreadable.
        libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        );
        check(libc::chdir(self.cwd.as_ptr()))?;
        // No capability survives exec, even for a bridge running as root.
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
        Ok(())
    }
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

unsafe fn write_file(path: &CStr, data: &[u8]) -> io::Result<()> {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = libc::write(fd, data.as_ptr().cast(), data.len());
    let err = io::Error::last_os_error();
    libc::close(fd);
    if n == data.len() as isize {
        Ok(())
    } else {
        Err(err)
    }
}

unsafe fn set_readonly(path: &CStr, on: bool, flags: libc::c_uint) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: if on { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if on { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let r = libc::syscall(
        libc::SYS_mount_setattr,
        libc::AT_FDCWD,
        path.as_ptr(),
        flags,
        &attr as *const MountAttr,
        std::mem::size_of::<MountAttr>(),
    );
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The waiter: lets go of every descriptor but the standard ones (the parent's
/// spawn must not wait for it), waits for the command and ends as it ended.
unsafe fn wait_and_mirror(pid: libc::pid_t) -> ! {
    libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
    let mut status = 0;
    loop {
        let r = libc::waitpid(pid, &mut status, 0);
        if r == pid {
            break;
        }
        if r < 0 && *libc::__errno_location() != libc::EINTR {
            libc::_exit(127);
        }
    }
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
        libc::_exit(128 + sig);
    }
    libc::_exit(libc::WEXITSTATUS(status))
}

/// Whether this kernel lets the bridge's user create the namespaces (probed once by
/// running `true` inside them, mounts included). False where unprivileged user
/// namespaces are off (`kernel.unprivileged_userns_clone = 0`, AppArmor's
/// `apparmor_restrict_unprivileged_userns`, a container without them).
pub fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(probe)
}

fn probe() -> bool {
    #[cfg(feature = "fault-injection")]
    if std::env::var_os("BRIDGE_TEST_NO_NAMESPACES").is_some() {
        return false;
    }
    let dir = std::env::temp_dir();
    let Ok(isolation) = Isolation::new(std::slice::from_ref(&dir), &dir) else {
        return false;
    };
    let mut cmd = std::process::Command::new("true");
    cmd.current_dir(&dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: `enter` only makes system calls.
    unsafe {
        cmd.pre_exec(move || isolation.enter());
    }
    match cmd.status() {
        Ok(s) if s.success() => true,
        outcome => {
            tracing::debug!(?outcome, "namespaces for commands are not available");
            false
        }
    }
}
