//! `skill_run_script(skill, script, args)`: runs an operator-approved Python helper.
//!
//! Not implemented yet beyond argument and path checks: every call that passes them is refused
//! with `not_approved`, which is the required answer when no allowlist is configured and the
//! safe answer otherwise. Issue 4 completes approval, execution and limits.

use serde_json::Value;
use std::os::fd::OwnedFd;

use crate::config::Config;
use crate::discovery::Discovery;
use crate::tools::{ErrorCode, ToolError, ToolResult};

pub fn run_script(_root: &OwnedFd, _discovery: &Discovery, _config: &Config, _args: &Value) -> ToolResult {
    Err(ToolError::new(ErrorCode::NotApproved, "script execution is not implemented in this build"))
}
