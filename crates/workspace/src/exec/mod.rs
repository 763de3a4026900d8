//! Running external programs safely: the policy that decides whether a command may
//! run ([`policy`]), and the runner that executes it without a shell, with a minimal
//! environment, a timeout and capped output ([`process`]).

pub mod confined;
pub mod git;
pub mod isolate;
pub mod policy;
pub mod process;
pub mod sandbox;

pub use confined::{CommandRules, Confined, ConfinedError};
pub use policy::{check, CommandPolicy, PolicyError};
pub use process::{run, RunOutput, RunSpec};

/// `program arg…` for display: arguments that are empty or hold whitespace are quoted.
pub fn command_line(program: &str, args: &[String]) -> String {
    std::iter::once(program.to_string())
        .chain(args.iter().map(|a| {
            if a.is_empty() || a.contains(char::is_whitespace) {
                format!("{a:?}")
            } else {
                a.clone()
            }
        }))
        .collect::<Vec<_>>()
        .join(" ")
}
