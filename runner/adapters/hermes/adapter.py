#!/usr/bin/env python3
"""skillspec adapter for the real hermes-agent (PyPI ``hermes-agent``, pinned by ``install``).

It owns the translation between the suite's protocol (through the Python adapter kit) and
hermes's own skills functions; it implements no skill behaviour of its own. README.md beside
it says how each operation maps and why; the summary:

- every case gets a fresh HERMES_HOME (a temporary directory outside the case root, removed at
  case end) whose ``config.yaml`` lists the case's skills root under ``skills.external_dirs``;
  the HERMES_HOME's own ``skills/`` stays empty (hermes chmods it to 0700, so it must never be
  the case's fixture);
- ``discover`` -> ``tools.skills_tool.skills_list()`` (and ``skill_view(name)`` for the text
  hermes hands the model when it loads a skill);
- ``tools`` -> the skills tools of hermes's default CLI toolset that the registry offers
  (``skill_view`` is the suite's ``skill_read_reference``; hermes has no ``skill_run_script``);
- ``prompt`` -> ``agent.prompt_builder.build_skills_system_prompt()`` (the baseline: the same
  function on a HERMES_HOME without skills);
- ``call skill_read_reference {skill, path}`` -> the model's tool pipeline
  (``model_tools.handle_function_call("skill_view", {name, file_path})``), with hermes's
  refusals translated by the ErrorMap below;
- ``new_turn`` -> nothing (hermes keeps no per-turn tool memory).

Run it with the interpreter of the venv ``install`` made; ``run`` does.
"""
import json
import os
import resource
import shutil
import signal
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit", "python"))
import skillspec_kit as kit  # noqa: E402  (first: it takes over stdout before hermes talks)

from importlib import metadata  # noqa: E402

# hermes reads a file whole whatever its size (a 4 GiB sparse SKILL.md or reference is read into
# memory). The cap keeps such a case from exhausting a shared machine: the allocation fails with
# MemoryError inside hermes, which hermes itself catches. It is the host's limit, not a behaviour.
MEMORY_CAP = 3 << 30
try:
    _soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    if _hard == resource.RLIM_INFINITY or _hard > MEMORY_CAP:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, _hard))
except (ValueError, OSError) as e:  # pragma: no cover - a platform without RLIMIT_AS
    print("hermes adapter: cannot cap memory: %s" % e, file=sys.stderr)

PIPELINE_TOOL = "skill_view"
"""hermes's tool that reads SKILL.md and references/ files by (skill, path)."""

SUITE_NAME = {"skill_view": "skill_read_reference"}
"""hermes tool name -> the suite's tool name, for the tools the suite knows."""

# hermes answers a refused skill_view with {"success": false, "error": TEXT}. Each rule names
# where the text comes from (tools/skills_tool.py and tools/path_security.py of hermes-agent
# 0.19.0). Texts no rule matches become a protocol error naming the text (kit.Unmapped).
ERRORS = kit.ErrorMap(
    kit.rule(r"^Skill name must be a string\.", "invalid_args",
             "skills_tool._skill_lookup_path_error: `skill` is not a string"),
    kit.rule(r"^expected str, bytes or os\.PathLike object, not ", "invalid_args",
             "skill_view's catch-all (tool_error(str(e))): Path() of a non-string `path`"),
    kit.rule(r"^Skill name must be a relative path within the skills directory\.", "unknown_skill",
             "skills_tool._skill_lookup_path_error: an absolute or drive-letter `skill`; no guide has such an id"),
    kit.rule(r"^Skill name cannot contain '\.\.' path traversal components\.", "unknown_skill",
             "skills_tool._skill_lookup_path_error: `..` in `skill`; no guide has such an id"),
    kit.rule(r"^Invalid namespace '", "unknown_skill",
             "skill_view: a `skill` with `:` whose part before it is not a plugin namespace; no guide has such an id"),
    kit.rule(r"^Skill '.*' not found in plugin '", "unknown_skill",
             "skill_view: `plugin:skill` of a plugin without that skill"),
    kit.rule(r"^Skills directory does not exist yet\.", "unknown_skill",
             "skill_view: neither HERMES_HOME/skills nor an external dir exists, so no guide is loaded"),
    kit.rule(r"^Skill '.*' not found\.", "unknown_skill", "skill_view: no skill directory or name matches"),
    kit.rule(r"^Ambiguous skill name '", "unknown_skill",
             "skill_view refuses a name that several skill directories match; SPEC.md drops same-named skills "
             "(discovery.duplicate), so no guide has the id; the spec has no code of its own for this",
             guess=True),
    kit.rule(r"^Skill '.*' is not supported on this platform\.", "unknown_skill",
             "skill_view: the SKILL.md `platforms` key excludes this OS, so hermes does not offer the skill",
             guess=True),
    kit.rule(r"^Skill '.*' is disabled\.", "unknown_skill",
             "skill_view: `skills.disabled` in config.yaml (the adapter never writes it)", guess=True),
    kit.rule(r"^Failed to read skill '", "unknown_skill",
             "skill_view: the skill's own SKILL.md cannot be read or decoded; SPEC.md loads no such guide",
             guess=True),
    kit.rule(r"^Path traversal \('\.\.'\) is not allowed\.", "invalid_path",
             "skill_view: a `..` segment in `path` (path_security.has_traversal_component)"),
    kit.rule(r"^Path escapes allowed directory: ", "invalid_path",
             "path_security.validate_within_dir: the realpath of <skill dir>/<path> lies outside the skill "
             "(an absolute path, a symlink pointing out, a symlink loop)"),
    kit.rule(r"^File '.*' not found in skill '", "not_found", "skill_view: <skill dir>/<path> does not exist"),
    kit.rule(r"^\[Errno 21\] Is a directory", "invalid_path",
             "skill_view's catch-all: read_text() of a directory (SPEC.md read.regular-file)"),
    kit.rule(r"^\[Errno 20\] Not a directory", "not_found",
             "skill_view's catch-all: a path component is a file (SPEC.md read step 4)"),
    kit.rule(r"^\[Errno 13\] Permission denied", "not_found",
             "skill_view's catch-all: the file cannot be opened (SPEC.md read step 5: unreadable is not_found)"),
    kit.rule(r"^\[Errno 6\] No such device or address", "invalid_path",
             "skill_view's catch-all: open() of a Unix socket (ENXIO); SPEC.md read.regular-file"),
)


def _hermes_version():
    try:
        return metadata.version("hermes-agent")
    except metadata.PackageNotFoundError:
        raise SystemExit("hermes adapter: hermes-agent is not installed in this interpreter (%s); run runner/adapters/hermes/install" % sys.executable)


class Hermes(kit.Runtime):
    name = "hermes-agent"
    version = _hermes_version()
    features = ()
    # skill_read_reference is hermes's skill_view (README.md, "Mapping"): the prompt names it so,
    # and the prompt checks look for that name too (PROTOCOL.md, "Mapping a runtime's own tools").
    tool_names = {"skill_read_reference": "skill_view"}
    # hermes keeps module-level state: skills and prompt caches, the tool registry, config caches,
    # and it reads os.environ (the case's environment) at import and at call time.
    process_per_case = True

    def __init__(self):
        self.tmp = None

    # -- the case ---------------------------------------------------------------------------

    def start_case(self, config, root):
        if "HERMES_HOME" in config.env:
            raise kit.AdapterError("the case's env sets HERMES_HOME, which this adapter must point at a fresh directory")
        self.tmp = tempfile.mkdtemp(prefix="skillspec-hermes-")
        self.home = os.path.join(self.tmp, "home")
        self.baseline_home = os.path.join(self.tmp, "baseline-home")
        os.mkdir(self.home)
        os.mkdir(self.baseline_home)
        if config.skills_root is not None:
            import yaml  # hermes's own dependency (PyYAML), so the root is quoted as YAML needs

            with open(os.path.join(self.home, "config.yaml"), "w", encoding="utf-8") as f:
                yaml.safe_dump({"skills": {"external_dirs": [config.skills_root]}}, f, allow_unicode=True)
        # The runtime's process environment is the case's, plus HERMES_HOME (PROTOCOL.md lets an
        # adapter add what its runtime needs to start). Set before hermes is imported.
        os.environ.clear()
        os.environ.update(config.runtime_env({"HERMES_HOME": self.home}))

        from hermes_cli import config as hermes_config
        from hermes_constants import reset_hermes_home_override, set_hermes_home_override
        from tools import skills_tool
        from agent import prompt_builder

        self.skills_tool = skills_tool
        self.prompt_builder = prompt_builder
        self.set_override, self.reset_override = set_hermes_home_override, reset_hermes_home_override
        self.model_tools = None
        # What the `hermes` CLI does at start-up: the HERMES_HOME skeleton (skills/ included,
        # chmod 0700, a default SOUL.md), then the session's system prompt (its skills index is
        # built once per session and cached: that is hermes's start-up scan).
        hermes_config.ensure_hermes_home()
        token = self.set_override(self.baseline_home)
        try:
            hermes_config.ensure_hermes_home()
        finally:
            self.reset_override(token)
        try:
            self.prompt_builder.build_skills_system_prompt()
        except Exception as e:  # hermes's own session start does not catch this either
            raise kit.AdapterError("hermes could not build its skills index at session start: %s: %s"
                                   % (type(e).__name__, sendable(str(e))))

    def end_case(self):
        cleanup(self)

    # -- the steps --------------------------------------------------------------------------

    def discover(self):
        listing = json.loads(self.skills_tool.skills_list())
        if not listing.get("success"):
            print("hermes adapter: skills_list failed: %s" % listing.get("error"), file=sys.stderr)
            return []
        found = []
        for s in listing.get("skills") or []:
            name = s.get("name")
            desc = s.get("description")
            entry = {"format": "portable", "name": sendable(name if isinstance(name, str) else str(name)),
                     "description": sendable(desc if isinstance(desc, str) else str(desc)),
                     "category": sendable(s.get("category"))}
            # skills_list names a skill by its frontmatter name; skill_view(name) resolves that
            # name to the skill's directory (`skill_dir`), whose name is the suite's id.
            view = json.loads(self.skills_tool.skill_view(name))
            if not (view.get("success") and isinstance(view.get("skill_dir"), str)):
                # hermes lists the name but refuses to load it (several skill directories match
                # it: "Ambiguous skill name ...", or its SKILL.md cannot be read): the model can
                # load no guide by it, so none is reported; hermes's refusal goes to stderr.
                print("hermes adapter: %r listed but not loaded: %s" % (name, view.get("error")), file=sys.stderr)
                continue
            entry["id"] = self._resolvable_id(name, view["skill_dir"])
            entry["body"] = sendable(view.get("content"))
            entry["skill_dir"] = sendable(view["skill_dir"])
            found.append(entry)
        return found

    def _resolvable_id(self, name, skill_dir):
        """The id this skill is loaded under: the name hermes resolves to it. That is its
        directory's name (the suite's id) when skill_view resolves that name to this very
        directory; when hermes refuses the directory name (another skill directory has it too:
        "Ambiguous skill name"), the skill is reachable only by its listed frontmatter name."""
        dir_name = os.path.basename(skill_dir)
        by_dir = json.loads(self.skills_tool.skill_view(dir_name))
        if by_dir.get("success") and by_dir.get("skill_dir") == skill_dir:
            return sendable(dir_name)
        return sendable(name if isinstance(name, str) else str(name))

    def offered(self):
        from toolsets import resolve_toolset
        from tools.registry import registry

        cli = set(resolve_toolset("hermes-cli"))
        defs = registry.get_definitions({n for n in cli if n in SUITE_NAME}, quiet=True)
        return [SUITE_NAME[d["function"]["name"]] for d in defs]

    def tools(self):
        return self.offered()

    def prompt(self):
        text = self.prompt_builder.build_skills_system_prompt()
        token = self.set_override(self.baseline_home)
        try:
            baseline = self.prompt_builder.build_skills_system_prompt()
        finally:
            self.reset_override(token)
        return text, baseline

    def call(self, tool, args):
        if tool not in self.offered():
            return kit.error("unknown_tool", message="hermes offers no tool %s" % json.dumps(tool))
        if isinstance(args, dict):
            hermes_args = {}
            for key, value in args.items():
                key = {"skill": "name", "path": "file_path"}.get(key, key)
                hermes_args.setdefault(key, value)
        else:
            hermes_args = args  # hermes's pipeline turns a non-object into {}
        if self.model_tools is None:
            import model_tools  # heavy (it registers every tool): only for cases that call

            self.model_tools = model_tools
        raw = self.model_tools.handle_function_call(PIPELINE_TOOL, hermes_args)
        try:
            answer = json.loads(raw)
        except (TypeError, ValueError):
            raise kit.AdapterError("hermes's skill_view answered something that is not JSON: %r" % (raw,))
        if not isinstance(answer, dict):
            raise kit.AdapterError("hermes's skill_view answered a JSON value that is not an object: %r" % (raw,))
        if "error" in answer or not answer.get("success"):
            return ERRORS.error(sendable(str(answer.get("error"))))
        if answer.get("is_binary") is True:
            # skill_view's answer to a file that does not decode as UTF-8 (skills_tool.py
            # skill_view, `except UnicodeDecodeError`): a notice instead of the file's content.
            # Its `is_binary` flag is hermes's signal; the notice travels as the message.
            return kit.error("not_text", message=sendable(str(answer.get("content"))))
        value = {
            "skill": answer.get("name"),
            "path": answer["file"] if "file" in answer else (args.get("path") if isinstance(args, dict) else None),
            "content": answer.get("content"),
            "hermes": {k: v for k, v in answer.items() if k != "content"},
        }
        return kit.ok(sendable(value))

    def new_turn(self):
        pass  # hermes keeps no per-turn memory of tool calls (no turn reuse)


def sendable(value):
    """``value`` with every string made sendable as UTF-8 JSON. hermes decodes file names with
    Python's surrogateescape, so a non-UTF-8 directory name comes back as text with lone
    surrogates, which the protocol cannot carry: each such byte is written ``\\xHH`` instead.
    Every other string is unchanged."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            try:
                raw = value.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:  # a surrogate that is not an escaped byte
                return value.encode("utf-8", "backslashreplace").decode("utf-8")
            return raw.decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {sendable(k): sendable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [sendable(v) for v in value]
    return value


def cleanup(runtime):
    tmp, runtime.tmp = runtime.tmp, None
    if tmp:
        # hermes made its directories 0700; as the owner rmtree can still remove them.
        shutil.rmtree(tmp, ignore_errors=True)


RUNTIME = Hermes()


def _on_sigterm(signum, frame):
    # The runner stops a broken adapter (a step that hung in hermes) with SIGTERM: remove the
    # case's HERMES_HOME before going.
    cleanup(RUNTIME)
    os._exit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _on_sigterm)
    kit.serve(RUNTIME)
    cleanup(RUNTIME)
    sys.stderr.flush()
    os._exit(0)  # threads hermes may have left must not delay the next case's process
