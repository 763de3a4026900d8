//! Landlock for commands that may run workspace code: the child restricts itself
//! between fork and exec. Reads anywhere; writes only beneath the given directories
//! (the workspace with its `.git`, a per-command temp dir) and `/dev/null`; no TCP
//! bind or connect unless the command may use the network (ABI ≥ 4). Best effort on
//! older ABIs (what the kernel cannot restrict stays allowed); where the kernel has
//! no Landlock, [`abi`] says 0.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, Scope, ABI,
};

/// The newest ABI this build asks for.
const TARGET: ABI = ABI::V6;

/// What a sandboxed command may do besides reading.
#[derive(Debug, Clone)]
pub struct Sandbox {
    /// Directories (and their contents) it may write.
    pub writable: Vec<PathBuf>,
    /// TCP bind and connect allowed.
    pub network: bool,
}

/// The kernel's Landlock ABI version; 0 when it has none (not built in or disabled).
/// Asked once.
pub fn abi() -> i32 {
    static ABI_VERSION: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
    *ABI_VERSION.get_or_init(query_abi)
}

/// Whether commands are confined, for `/status`.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxStatus {
    /// The kernel's Landlock ABI (0: none).
    pub landlock_abi: i32,
    /// User, mount and PID namespaces can be created ([`super::isolate`]): metadata
    /// outside the workspace is read-only and every process ends with its call.
    pub namespaces: bool,
    /// Commands run fully confined (Landlock and the namespaces).
    pub enforced: bool,
    /// TCP bind/connect can be refused (ABI ≥ 4).
    pub network_rules: bool,
    /// `commands.run_unsandboxed`: without the full sandbox, commands run anyway,
    /// with what the kernel has.
    pub run_unsandboxed: bool,
}

impl SandboxStatus {
    /// What this kernel lacks for the full sandbox, for messages; `None` when nothing.
    pub fn missing(&self) -> Option<&'static str> {
        match (self.landlock_abi >= 1, self.namespaces) {
            (true, true) => None,
            (false, true) => Some("no Landlock in this kernel"),
            (true, false) => Some("no unprivileged user namespaces in this kernel"),
            (false, false) => {
                Some("no Landlock and no unprivileged user namespaces in this kernel")
            }
        }
    }
}

/// The status for `/status` (the namespace probe runs once, on first use).
pub fn status(run_unsandboxed: bool) -> SandboxStatus {
    let abi = abi();
    let namespaces = super::isolate::available();
    SandboxStatus {
        landlock_abi: abi,
        namespaces,
        enforced: abi >= 1 && namespaces,
        network_rules: abi >= 4,
        run_unsandboxed,
    }
}

fn query_abi() -> i32 {
    // Tests of the no-Landlock path on a kernel that has it.
    #[cfg(feature = "fault-injection")]
    if std::env::var_os("BRIDGE_TEST_NO_LANDLOCK").is_some() {
        return 0;
    }
    // SAFETY: LANDLOCK_CREATE_RULESET_VERSION with a null attribute only queries.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    if v < 0 {
        0
    } else {
        v as i32
    }
}

/// The ruleset for `sandbox`, created in the parent (it opens the directories);
/// [`restrict_in_child`] enforces it after fork.
pub fn ruleset(sandbox: &Sandbox) -> Result<RulesetCreated, landlock::RulesetError> {
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(TARGET))?
        // No signals to processes outside the sandbox (the bridge, the person's
        // programs) and no abstract Unix sockets outside it (ABI ≥ 6).
        .scope(Scope::Signal | Scope::AbstractUnixSocket)?;
    if !sandbox.network {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
    }
    let mut writable: Vec<&Path> = sandbox.writable.iter().map(PathBuf::as_path).collect();
    writable.push(Path::new("/dev/null"));
    ruleset
        .create()?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(TARGET)))?
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(TARGET)))
}

/// A `pre_exec` hook that restricts the child with `ruleset` (no allocation on the
/// success path; a failure makes the spawn fail rather than run unconfined).
pub fn restrict_in_child(
    ruleset: RulesetCreated,
) -> impl FnMut() -> io::Result<()> + Send + Sync + 'static {
    let slot = Mutex::new(Some(ruleset));
    move || {
        let taken = slot.lock().ok().and_then(|mut s| s.take());
        match taken.map(RulesetCreated::restrict_self) {
            Some(Ok(_)) => Ok(()),
            _ => Err(io::Error::from_raw_os_error(libc::EPERM)),
        }
    }
}
