//! Reviews shown in the bridge's browser page.

pub mod present_review;
