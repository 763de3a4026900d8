//! Running external programs safely: the policy that decides whether a command may
//! run ([`policy`]), and the runner that executes it without a shell, with a minimal
//! environment, a timeout and capped output ([`process`]).

pub mod confined;
pub mod git;
pub mod policy;
pub mod process;
pub mod sandbox;

pub use confined::{Confined, ConfinedError};
pub use policy::{check, CommandPolicy, PolicyError};
pub use process::{run, RunOutput, RunSpec};
