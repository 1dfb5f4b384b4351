//! `skill_read_reference(skill, path)`: returns the text of a skill's SKILL.md or of a file under
//! its `references/` directory.
//!
//! Checks, first failure decides (SPEC.md `read.*`): arguments (`invalid_args`), the skill id
//! (`unknown_skill`), the path text (`invalid_path`), then the race-free walk from the skills root:
//! every directory component is opened with `O_NOFOLLOW` (a symlink is `invalid_path`, a missing
//! one `not_found`), the leaf is opened non-blocking without following links and `fstat`ed (not a
//! regular file: `invalid_path`), read under the 256 KiB cap (`too_large`) and decoded (`not_text`).
//!
//! A tool (layer 2): it uses `discovery`, `safe_fs`, `skill_path`, `tools` and `rules`; the
//! argument helpers and the walk ([`open_parent`]) serve `run_script` and `hitl` too.

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use serde_json::{Map, Value};

use crate::discovery::{Discovery, Guide};
use crate::rules::{rules, ReadCheck, SPEC};
use crate::safe_fs::{self, DirError, FileAccess, LeafError, Use};
use crate::skill_path::{self, PathScope};
use crate::tools::{ErrorCode, ToolError, ToolResult};

/// The largest reference file that can be read, in bytes (inclusive).
pub const MAX_REFERENCE_BYTES: u64 = SPEC.read.max_bytes;

/// Checks that `args` is an object whose keys are all in `allowed` (and all present when
/// `required`), returning it.
// spec: read.args
// spec: run.input.fields
pub fn object_args<'a>(
    args: &'a Value,
    allowed: &[&str],
    required: &[&str],
) -> Result<&'a Map<String, Value>, ToolError> {
    let obj = args
        .as_object()
        .ok_or_else(|| ToolError::new(ErrorCode::InvalidArgs, "arguments must be a JSON object"))?;
    if let Some(extra) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(ToolError::new(
            ErrorCode::InvalidArgs,
            format!("unexpected argument `{extra}`"),
        ));
    }
    if let Some(missing) = required.iter().find(|k| !obj.contains_key(**k)) {
        return Err(ToolError::new(
            ErrorCode::InvalidArgs,
            format!("missing argument `{missing}`"),
        ));
    }
    Ok(obj)
}

/// The string argument `key`, or `invalid_args`.
pub fn string_arg<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<&'a str, ToolError> {
    obj.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::new(ErrorCode::InvalidArgs, format!("`{key}` must be a string")))
}

/// Looks up a loaded guide by id.
pub fn find_skill<'a>(discovery: &'a Discovery, skill: &str) -> Result<&'a Guide, ToolError> {
    discovery.guide(skill).ok_or_else(|| {
        ToolError::new(
            ErrorCode::UnknownSkill,
            format!("no loaded skill has the id `{skill}`"),
        )
    })
}

/// Opens the skill directory and walks `segments[..last]` below it with `access`, returning the
/// skill directory and the directory that holds the leaf. Symlinks anywhere are `invalid_path`;
/// a missing or non-directory component is `not_found`.
// spec: read.realpath (one component at a time, never through a link)
pub fn open_parent(
    access: &FileAccess,
    root: &OwnedFd,
    guide: &Guide,
    segments: &[&str],
) -> Result<(OwnedFd, OwnedFd), ToolError> {
    let skill_dir = access
        .open_dir_chain(root.as_fd(), &guide.components)
        .map_err(|e| match e {
            DirError::Symlink => ToolError::new(
                ErrorCode::InvalidPath,
                "the skill directory was replaced by a symlink",
            ),
            DirError::Unreadable(m) => ToolError::new(
                ErrorCode::NotFound,
                format!("the skill directory cannot be opened: {m}"),
            ),
            _ => ToolError::new(ErrorCode::NotFound, "the skill directory no longer exists"),
        })?;
    let parents = &segments[..segments.len().saturating_sub(1)];
    let parent = access
        .open_dir_chain(skill_dir.as_fd(), parents)
        .map_err(|e| match e {
            DirError::Symlink => ToolError::new(
                ErrorCode::InvalidPath,
                "a directory on the path is a symlink",
            ),
            DirError::NotFound | DirError::NotDirectory => {
                ToolError::new(ErrorCode::NotFound, "no such file")
            }
            DirError::Unreadable(m) => ToolError::new(
                ErrorCode::NotFound,
                format!("cannot open a directory on the path: {m}"),
            ),
        })?;
    Ok((skill_dir, parent))
}

/// Maps a leaf failure to the tool's error codes.
// spec: read.errors (each failure of the walk's leaf has one of the tool's codes)
// spec: run.errors (likewise for the script's path)
pub fn leaf_error(e: LeafError, cap: u64) -> ToolError {
    match e {
        LeafError::NotFound => ToolError::new(ErrorCode::NotFound, "no such file"),
        LeafError::Symlink => ToolError::new(ErrorCode::InvalidPath, "the file is a symlink"),
        LeafError::NotRegular => ToolError::new(ErrorCode::InvalidPath, "not a regular file"),
        LeafError::TooLarge => ToolError::new(
            ErrorCode::TooLarge,
            format!("the file is larger than {cap} bytes"),
        ),
        LeafError::Unreadable(m) => {
            ToolError::new(ErrorCode::NotFound, format!("the file cannot be read: {m}"))
        }
    }
}

/// Runs `skill_read_reference`.
// spec: read.no-approval (nothing here consults the script allowlist)
pub fn read_reference(root: &OwnedFd, discovery: &Discovery, args: &Value) -> ToolResult {
    let obj = object_args(args, &["skill", "path"], &["skill", "path"])?;
    let skill = string_arg(obj, "skill")?;
    let path = string_arg(obj, "path")?;
    let guide = find_skill(discovery, skill);
    let segments = skill_path::validate(path, PathScope::Reference)
        .map_err(|rule| ToolError::new(ErrorCode::InvalidPath, rule.explain()));
    // spec: read.errors (both checks are pure: the first failing one in the order decides)
    for check in rules().read.order {
        let failed = match check {
            ReadCheck::Skill => guide.as_ref().err(),
            ReadCheck::PathText => segments.as_ref().err(),
        };
        if let Some(e) = failed {
            return Err(e.clone());
        }
    }
    let (guide, segments) = (guide?, segments?);
    let access = safe_fs::access(Use::Reference);
    let (_, parent) = open_parent(access, root, guide, &segments)?;
    let leaf = OsStr::from_bytes(segments.last().copied().unwrap_or_default().as_bytes());
    // spec: read.size
    let cap = rules().read.max_bytes;
    let bytes = access
        .read_file(parent.as_fd(), leaf, cap)
        .map_err(|e| leaf_error(e, cap))?;
    let content = (steps().decode)(bytes)?;
    let mut out = Map::new();
    out.insert("skill".into(), Value::from(skill));
    out.insert("path".into(), Value::from(path));
    out.insert("content".into(), Value::from(content));
    Ok(out)
}

/// The text of a reference: its bytes exactly, or `not_text` when they are not UTF-8.
// spec: read.utf8
fn decode_utf8(bytes: Vec<u8>) -> Result<String, ToolError> {
    String::from_utf8(bytes).map_err(|e| {
        ToolError::new(
            ErrorCode::NotText,
            format!("not valid UTF-8 at byte {}", e.utf8_error().valid_up_to()),
        )
    })
}

/// The steps of this module a mutant can replace: SPEC.md's ([`STEPS`]) in every normal build.
struct Steps {
    /// How the bytes of a reference become its text.
    decode: fn(Vec<u8>) -> Result<String, ToolError>,
}

const STEPS: Steps = Steps {
    decode: decode_utf8,
};

steps_in_force!();

/// The defect of this module (see `crate::mutants`); the walk's are `safe_fs`'s, the order's and
/// the cap's `rules`'.
#[cfg(feature = "mutants")]
mod mutated {
    use super::*;
    use crate::mutants::{chosen, Mutant};

    pub(super) fn steps() -> &'static Steps {
        match chosen() {
            Some(Mutant::ReadNotUtf8Lossy) => &LOSSY,
            _ => &STEPS,
        }
    }

    const LOSSY: Steps = Steps {
        decode: decode_lossily,
    };

    /// `read-not-utf8-lossy`.
    fn decode_lossily(bytes: Vec<u8>) -> Result<String, ToolError> {
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}
