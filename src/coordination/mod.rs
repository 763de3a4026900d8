//! How agents sharing one bridge keep out of each other's way: file claims
//! ([`claims`]: other agents' writes refused while one works on files), awareness
//! ([`awareness`]: an agent told when another changed a file it read), and each agent's
//! own tool calls between their start and their end ([`native`]). Plain data and rules;
//! the Claims actor and each agent's Session keep them.

pub mod awareness;
pub mod claims;
pub mod native;
