//! `skill_read_reference(skill, path)`: returns the text of a skill's SKILL.md or of a file under
//! its `references/` directory.
//!
//! Checks, first failure decides (SPEC.md `read.*`): arguments (`invalid_args`), the skill id
//! (`unknown_skill`), the path text (`invalid_path`), then the race-free walk from the skills root:
//! every directory component is opened with `O_NOFOLLOW` (a symlink is `invalid_path`, a missing
//! one `not_found`), the leaf is opened non-blocking without following links and `fstat`ed (not a
//! regular file: `invalid_path`), read under the 256 KiB cap (`too_large`) and decoded (`not_text`).

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use serde_json::{Map, Value};

use crate::discovery::{Discovery, Guide};
use crate::mutants::{self, active, Mutant};
use crate::safe_fs::{self, DirError, LeafError};
use crate::skill_path::{self, PathScope};
use crate::tools::{ErrorCode, ToolError, ToolResult};

/// The largest reference file that can be read, in bytes (inclusive).
pub const MAX_REFERENCE_BYTES: u64 = 262_144;

/// Checks that `args` is an object whose keys are all in `allowed` (and all present when
/// `required`), returning it.
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

/// Opens the skill directory and walks `segments[..last]` below it, returning the skill
/// directory and the directory that holds the leaf. Symlinks anywhere are `invalid_path`; a
/// missing or non-directory component is `not_found`.
pub fn open_parent(
    root: &OwnedFd,
    guide: &Guide,
    segments: &[&str],
) -> Result<(OwnedFd, OwnedFd), ToolError> {
    let skill_dir =
        safe_fs::open_dir_chain(root.as_fd(), &guide.components).map_err(|e| match e {
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
    let parent = safe_fs::open_dir_chain(skill_dir.as_fd(), parents).map_err(|e| match e {
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
pub fn read_reference(root: &OwnedFd, discovery: &Discovery, args: &Value) -> ToolResult {
    let obj = object_args(args, &["skill", "path"], &["skill", "path"])?;
    let skill = string_arg(obj, "skill")?;
    let path = string_arg(obj, "path")?;
    if active(Mutant::ReadPathBeforeSkill) {
        skill_path::validate(path, PathScope::Reference)
            .map_err(|rule| ToolError::new(ErrorCode::InvalidPath, rule.explain()))?;
    }
    let guide = find_skill(discovery, skill)?;
    let segments = skill_path::validate(path, PathScope::Reference)
        .map_err(|rule| ToolError::new(ErrorCode::InvalidPath, rule.explain()))?;
    let (_, parent) = if active(Mutant::ReadChecksLeafOnly) {
        mutants::open_parent_following(root, guide, &segments)?
    } else {
        open_parent(root, guide, &segments)?
    };
    let leaf = OsStr::from_bytes(segments.last().copied().unwrap_or_default().as_bytes());
    let cap = MAX_REFERENCE_BYTES - u64::from(active(Mutant::ReadCapExclusive));
    let bytes = if active(Mutant::ReadFollowsLeafSymlink) {
        mutants::read_following(parent.as_fd(), leaf, cap)
    } else {
        safe_fs::read_regular(parent.as_fd(), leaf, cap)
    }
    .map_err(|e| leaf_error(e, cap))?;
    if active(Mutant::ReadNotUtf8Lossy) {
        return Ok(mutants::read_result(
            skill,
            path,
            String::from_utf8_lossy(&bytes),
        ));
    }
    let content = String::from_utf8(bytes).map_err(|e| {
        ToolError::new(
            ErrorCode::NotText,
            format!("not valid UTF-8 at byte {}", e.utf8_error().valid_up_to()),
        )
    })?;
    let mut out = Map::new();
    out.insert("skill".into(), Value::from(skill));
    out.insert("path".into(), Value::from(path));
    out.insert("content".into(), Value::from(content));
    Ok(out)
}
