#!/usr/bin/env python3
"""skillspec adapter for PyPI ``nanobot-ai`` 0.3.5 (HKUDS's nanobot, "the ultra-lightweight
OpenClaw"), pinned by ``install``: its skills (``nanobot.agent.skills.SkillsLoader``), driven
through a real ``nanobot.agent.loop.AgentLoop`` offline.

The model is ``ScriptedProvider``, a small ``nanobot.providers.base.LLMProvider`` of the adapter's
own: no provider, no key, no network. It records what the agent sends it (the messages, the
system prompt first among them, and the tool definitions) and answers with the tool call a step
asks for, which then runs through the loop's own pipeline (its runner, ``ToolRegistry.execute``,
the tool's own checks); the adapter reads the tool message the model receives in its next call.

Claims dialect ``agentskills`` 2026-08 in mode ``lenient``: nanobot's workspace scan loads every
child directory holding a ``SKILL.md`` and checks nothing (skills.py:74-88); the one check it has,
``valid_skill_metadata`` ("the Agent Skills identity contract", skills.py:39-48), guards only
Agent Plugin skills (plugins.py:476-481). README.md beside this file gives every mapping with
nanobot's file:line:

- ``case_start`` -> a private directory outside the case root: ``home/`` (``$HOME``: nanobot keeps
  sessions and CLI apps in ``~/.nanobot``) and ``workspace/`` whose ``skills`` is a link to
  ``skills_root`` (nanobot reads skills only from ``<workspace>/skills``, skills.py:61); then
  ``AgentLoop(bus, provider=ScriptedProvider(), workspace=<workspace>)`` with its skills loader
  built by nanobot's own constructor with an empty built-in skills directory (the one choice), and
  a baseline ``AgentLoop`` on the same workspace whose loader sees no skills at all;
- ``discover`` -> ``SkillsLoader.list_skills(filter_unavailable=False)`` (what the catalog lists,
  skills.py:223), with nanobot's description, the body it hands over on activation, and the
  location its catalog gives (the resolved root joined with the relative path, skills.py:245-260);
- ``prompt`` -> a turn each on the agent and the baseline: the system message the model received;
- ``tools`` -> a turn: the names of the tool definitions the model received (``read_file``
  reported as ``skill_read_reference``);
- ``call activate_skill {name}`` -> nanobot's user-explicit activation: the user message
  ``$<name>`` (skills.py:165-202, loop.py:773); ``content`` is the user message the model receives;
- ``call skill_read_reference {skill, path}`` -> the model calls ``read_file`` with the skill's
  directory (of that location) joined to the path, as nanobot's catalog tells it to;
- ``validate {path}`` -> the checks nanobot applies to a plugin skill (plugins.py:472-481):
  ``parse_skill_metadata`` and ``valid_skill_metadata`` (skills.py:26-48).

Run it with the interpreter of the venv ``install`` made; ``run`` does.
"""

import copy
import json
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit", "python"))
import skillspec_kit as kit  # noqa: E402  (first: it takes over stdout before nanobot talks)

from pathlib import Path  # noqa: E402

try:
    from loguru import logger  # noqa: E402
    from nanobot.agent.loop import AgentLoop  # noqa: E402
    from nanobot.agent.plugins import _contained  # noqa: E402
    from nanobot.agent.skills import SkillsLoader, parse_skill_metadata, valid_skill_metadata  # noqa: E402
    from nanobot.bus.queue import MessageBus  # noqa: E402
    from nanobot.providers.base import LLMProvider, LLMResponse, ToolCallRequest  # noqa: E402
except ImportError as e:  # pragma: no cover - the venv of ./install has it
    raise SystemExit("nanobot adapter: nanobot-ai is not installed in this interpreter (%s): %s; "
                     "run runner/adapters/nanobot/install" % (sys.executable, e))

# nanobot logs with loguru (DEBUG and up to stderr by default): its warnings (a tool result
# dropped, a plugin skill ignored) stay on stderr, which the runner keeps; its per-turn DEBUG/INFO
# chatter does not.
logger.remove()
logger.add(sys.stderr, level="WARNING", format="nanobot-ai: {level} {name}:{line}: {message}")

VERSION = "0.3.5"
"""The version this adapter maps (README.md cites its code at this version)."""

NATIVE_READ = "read_file"
"""nanobot's file reader, ``ReadFileTool`` (agent/tools/filesystem.py:270-413): how the model
loads a skill ("join them when using `read_file`", templates/agent/skills_section.md:3)."""

READ = kit.MappedTool("skill_read_reference", NATIVE_READ)
TOOLS = kit.ToolMap(READ)

LINE_LIMIT = 16 * 1024 * 1024
"""The protocol's longest response line, in bytes (PROTOCOL.md, "Transport")."""

RETRY_HINT = "\n\n[Analyze the error above and try a different approach.]"
"""What ``ToolRegistry.execute`` appends to every error result, and only to those
(agent/tools/registry.py:189-201): the sign that the tool message is an error."""

ACTIVE_SKILLS = "[Active Skills \u2014 instructions for this user turn]"
"""The block nanobot appends to the user message for each ``$name`` it resolves (skills.py:195-201)."""

ACTIVATION = kit.ErrorMap(
    kit.rule(r"^(?![\s\S]*" + re.escape(ACTIVE_SKILLS) + r")", "unknown_skill",
             "skills.py:165-180 get_explicitly_invoked_skills(): a `$name` no available skill has is "
             "left as it is, and the model receives the bare user message with no Active Skills block; "
             "the same happens for a skill whose requirements are unmet (filter_unavailable=True, :171) "
             "and for an always-on skill (:190-191)", guess=True),
)

ERRORS = kit.ErrorMap(
    # Tool messages that end with RETRY_HINT (the registry's error results).
    kit.rule(r"^Error: Tool '.*' not found\.", "unknown_tool",
             "agent/tools/registry.py:116-124 prepare_call(): a tool name the registry does not have"),
    kit.rule(r"^Error: Tool '.*' parameters must be a JSON object", "invalid_args",
             "agent/tools/registry.py:131-139: the arguments are not an object"),
    kit.rule(r"^Error: Invalid parameters for tool '", "invalid_args",
             "agent/tools/registry.py:141-146: the tool's schema refused the arguments"),
    kit.rule(r"^Error: File not found: ", "not_found",
             "agent/tools/filesystem.py:316-317 read_file: the path does not exist"),
    kit.rule(r"^Error: Not a file: ", "not_found",
             "agent/tools/filesystem.py:318-319 read_file: the path is not a regular file (a directory, a FIFO)",
             guess=True),
    kit.rule(r"^Error: Reading .* is blocked \(device path", "invalid_path",
             "agent/tools/filesystem.py:307-315 read_file: the path or its link target is under /dev",
             guess=True),
    kit.rule(r"^Error: File too large to read ", "too_large",
             "agent/tools/filesystem.py:321-328 read_file: over 100 MiB"),
    kit.rule(r"^Error: Cannot read binary file ", "not_text",
             "agent/tools/filesystem.py:353-373 read_file: not UTF-8, and not a text extension"),
    kit.rule(r"^Error: \[Errno 13\] ", "not_found",
             "agent/tools/filesystem.py:410-411 read_file: PermissionError, unreadable"),
)

NO_RUN = (
    "nanobot-ai 0.3.5 has no tool that runs a skill's scripts: its tools (agent/tools/loader.py, "
    "22 registered here) include `exec`, a shell command line the model writes itself "
    "(agent/tools/shell.py), with no skill, script or argument list to map onto"
)

NO_NESTED = (
    "nanobot-ai 0.3.5 looks at the direct children of <workspace>/skills only: each child "
    "directory holding SKILL.md is a skill (agent/skills.py:74-88, base.iterdir()); it never "
    "descends further"
)

NO_SELECTION = "nanobot-ai 0.3.5 has no skill selection: every skill is in the catalog (agent/skills.py:204-263)"



class ScriptedProvider(LLMProvider):
    """A nanobot LLM provider with no model behind it: each ``chat`` call is recorded (a deep copy
    of the messages, and the tool definitions) and answered with the next planned tool call, or,
    with none planned, with the text ``done``."""

    def __init__(self):
        super().__init__(provider_name="skillspec-scripted")
        self.calls = []
        self.plan = []

    def get_default_model(self):
        return "skillspec-scripted"

    async def chat(self, messages, tools=None, model=None, **kwargs):
        self.calls.append({"messages": copy.deepcopy(messages), "tools": list(tools or [])})
        if self.plan:
            name, arguments = self.plan.pop(0)
            call_id = "skillspec_call_%d" % len(self.calls)
            return LLMResponse(content=None, finish_reason="tool_calls",
                               tool_calls=[ToolCallRequest(id=call_id, name=name, arguments=arguments)])
        return LLMResponse(content="done")


def system_text(call):
    """The system message the model received in ``call`` (nanobot sends it first, role
    ``system``), else ``""``."""
    messages = call["messages"]
    if messages and messages[0].get("role") == "system":
        return text_of(messages[0].get("content"))
    return ""


def text_of(content):
    """The text of a message's content: a string, or the text parts of a list of blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(block.get("text", ""))
            else:
                raise kit.AdapterError("the message holds a block that is not text: %r" % (
                    block.get("type") if isinstance(block, dict) else type(block).__name__,))
        return "".join(parts)
    raise kit.AdapterError("unexpected message content of type %s" % type(content).__name__)


def tool_name(definition):
    """A tool definition's name, in the OpenAI function shape nanobot sends (registry.py)."""
    if "function" in definition:
        return definition["function"]["name"]
    return definition["name"]


def jsonable(value):
    """A YAML value as JSON can carry it: mappings, lists, strings, numbers, booleans and null as
    they are; anything else (a YAML date) as its ``str()``."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    return str(value)


class Nanobot(kit.Runtime):
    name = "nanobot-ai"
    version = kit.installed_version("nanobot-ai", "nanobot")
    language = "python"
    features = ()
    # The open Agent Skills standard: valid_skill_metadata "Return whether metadata satisfies the
    # Agent Skills identity contract" (skills.py:39-48), the name rule of the standard
    # (skills.py:22). Lenient: the workspace scan loads what it finds and checks nothing
    # (skills.py:74-88); README.md, "Declarations".
    dialects = [{"name": "agentskills", "version": "2026-08", "mode": "lenient"}]
    # SKILL.md exactly (skills.py:81); no skill.yml.
    formats = ["skill-md"]
    # read_file reads any path the process can (restrict_to_workspace is off by default,
    # loop.py:276; filesystem.py:297-319): wider than any scope the protocol names.
    read_scope = "case-root"
    tool_names = TOOLS.names()
    lacks = {
        "skill_run_script": NO_RUN,
        "nested-scan": NO_NESTED,
    }

    def __init__(self):
        self.root = None
        self.private = None
        self.workspace = None
        self.loop = self.provider = None
        self.baseline = self.baseline_provider = None
        self.sessions = 0

    # -- the case ---------------------------------------------------------------------------

    def start_case(self, config, root):
        self.root = root
        self.private = tempfile.mkdtemp(prefix="skillspec-nanobot-")
        home = os.path.join(self.private, "home")
        self.workspace = Path(self.private, "workspace")
        empty = Path(self.private, "no-builtin-skills")
        nothing = Path(self.private, "no-skills")
        for d in (home, self.workspace, empty, nothing):
            os.makedirs(d)
        # nanobot keeps its sessions, media and CLI apps under ~/.nanobot (written on the first
        # turn): a private home per case, so that nothing carries over and no real home is touched.
        os.environ["HOME"] = home
        if config.skills_root is not None:
            # nanobot reads skills from <workspace>/skills only (skills.py:61); PROTOCOL.md's way for
            # a runtime with a fixed place: a link from that place to the case's skills root.
            os.symlink(config.skills_root, self.workspace / "skills")
        self.provider = ScriptedProvider()
        self.baseline_provider = ScriptedProvider()
        try:
            self.loop = AgentLoop(bus=MessageBus(), provider=self.provider, workspace=self.workspace)
            # The one choice (README.md): nanobot's own loader, built by its constructor with an
            # empty built-in skills directory (skills.py:59-63), so that the catalog holds the
            # case's skills and not the twelve nanobot ships.
            self.loop.context.skills = SkillsLoader(self.workspace, builtin_skills_dir=empty)
            # The baseline: the same agent on the same workspace, with a loader that finds no skill.
            self.baseline = AgentLoop(bus=MessageBus(), provider=self.baseline_provider, workspace=self.workspace)
            self.baseline.context.skills = SkillsLoader(nothing, builtin_skills_dir=empty)
        except Exception as e:  # nanobot would not start
            raise kit.Refused(e)

    async def end_case(self):
        for loop in (self.loop, self.baseline):
            if loop is not None:
                try:
                    await loop.aclose()
                except Exception as e:  # pragma: no cover - logged, the case is over
                    print("nanobot adapter: AgentLoop.aclose(): %s: %s" % (type(e).__name__, e), file=sys.stderr)
        self.loop = self.provider = self.baseline = self.baseline_provider = None
        if self.private is not None:
            shutil.rmtree(self.private, ignore_errors=True)
            self.private = None

    @property
    def skills(self):
        return self.loop.context.skills

    async def turn(self, loop, provider, message="skillspec step", tool_call=None):
        """One user turn of ``loop`` in a session of its own: the model's calls during it (the
        first shows the prompt and tools; with ``tool_call``, the second carries its result)."""
        first = len(provider.calls)
        if tool_call is not None:
            provider.plan.append(tool_call)
        self.sessions += 1
        await loop.process_direct(message, session_key="skillspec:%d" % self.sessions)
        provider.plan.clear()
        return provider.calls[first:]

    # -- the steps --------------------------------------------------------------------------

    async def discover(self):
        # What the catalog lists: every skill, available or not (skills.py:223), in nanobot's order.
        try:
            entries = self.skills.list_skills(filter_unavailable=False)
            out = []
            for entry in entries:
                name = entry["name"]  # the directory's name: nanobot's key for a skill (skills.py:84)
                description = self.skills.get_skill_description(name)
                markdown = self.skills.load_skill(name) or ""
                # What the model receives for the skill on activation (skills.py:158-162).
                body = self.skills._strip_frontmatter(markdown)
                del markdown
                if len(body) > LINE_LIMIT:
                    # nanobot read the file whole (skills.py:146) and would hand the model all of it:
                    # an answer the protocol cannot carry (one response line is at most 16 MiB, and
                    # a body of more characters is more bytes). Said, not cut.
                    raise kit.AdapterError(
                        "nanobot hands over a body of %d characters for skill %r (it reads SKILL.md whole, "
                        "agent/skills.py:146, and strips only the frontmatter, :309-316): more than one "
                        "protocol line can carry (16 MiB)" % (len(body), name))
                out.append(kit.loaded(sendable(name), sendable(name), sendable(description), sendable(body),
                                      format=None, location=sendable(self.location(entry))))
        except kit.AdapterError:
            raise
        except Exception as e:  # nanobot's scan raised (a SKILL.md it cannot read)
            raise kit.Refused(e)
        return out

    def location(self, entry):
        """The absolute path of a skill's SKILL.md as nanobot's catalog spells it: the group's
        root as nanobot resolves it for an absolute catalog (``root.expanduser().resolve()``,
        skills.py:245-249) joined with the entry's path relative to that root (skills.py:260), the
        join the catalog asks of the model. For a workspace skill the root is
        ``<workspace>/skills``, the adapter's link, so the location names the file in the case's
        skills root."""
        roots = {"workspace": self.skills.workspace_skills, "plugin": self.skills.workspace / "plugins",
                 "builtin": self.skills.builtin_skills}
        root = Path(roots[entry["source"]])
        return str(root.expanduser().resolve() / Path(entry["path"]).relative_to(root).as_posix())

    async def prompt(self):
        calls = await self.turn(self.loop, self.provider)
        base = await self.turn(self.baseline, self.baseline_provider)
        if not calls or not base:
            raise kit.AdapterError("the agent ended its turn without calling the model")
        return sendable(system_text(calls[0])), sendable(system_text(base[0]))

    async def tools(self):
        calls = await self.turn(self.loop, self.provider)
        if not calls:
            raise kit.AdapterError("the agent ended its turn without calling the model")
        return TOOLS.spec_names(tool_name(d) for d in calls[0]["tools"])

    async def call(self, tool, args):
        if tool == "activate_skill":
            return await self.activate(args)
        if tool == READ.spec:
            native, native_args = READ.native, self.read_args(args)
        else:
            native, native_args = tool, args
        calls = await self.turn(self.loop, self.provider, tool_call=(native, native_args))
        if len(calls) < 2:
            raise kit.AdapterError("the agent ended its turn without running the tool %r" % (native,))
        call_id = "skillspec_call_%d" % (len(self.provider.calls) - len(calls) + 1)
        results = [m for m in calls[1]["messages"] if m.get("role") == "tool" and m.get("tool_call_id") == call_id]
        if len(results) != 1:
            raise kit.AdapterError("expected one tool message for %s in the model's next call, got %d" % (call_id, len(results)))
        text = sendable(text_of(results[0].get("content")))
        if text.endswith(RETRY_HINT):
            return ERRORS.error(text)
        return kit.ok({"content": text} if tool != READ.spec else {"skill": args["skill"], "path": args["path"], "content": text})

    def read_args(self, args):
        """``{"skill", "path"}`` -> read_file's ``{"path": <the skill's directory>/<path>}``: the
        join nanobot's catalog asks of the model (templates/agent/skills_section.md:3). Other keys
        go on as they are. A call that names no skill nanobot loaded, or whose skill or path is not
        a string, cannot be expressed: read_file has no notion of a skill."""
        if not isinstance(args, dict) or not isinstance(args.get("skill"), str) or not isinstance(args.get("path"), str):
            raise kit.AdapterError("skill_read_reference arguments that are not two strings `skill` and `path` "
                                   "cannot be expressed as a read_file path (nanobot's read_file has no notion of a skill)")
        entries = {e["name"]: e for e in self.skills.list_skills(filter_unavailable=False)}
        if args["skill"] not in entries:
            raise kit.AdapterError("skill %r is not one nanobot loaded: no directory to join the path to "
                                   "(nanobot's read_file has no notion of a skill)" % (args["skill"],))
        native = {k: v for k, v in args.items() if k not in ("skill", "path")}
        native["path"] = os.path.join(os.path.dirname(self.location(entries[args["skill"]])), args["path"])
        return native

    async def activate(self, args):
        """nanobot's user-explicit activation: the user message ``$<name>``; nanobot appends an
        Active Skills block with the skill's body for each name it resolves (skills.py:165-202,
        loop.py:773-777). A name its reference pattern does not take whole (skills.py:23) cannot be
        expressed as that message."""
        if not isinstance(args, dict) or set(args) != {"name"} or not isinstance(args["name"], str) \
                or not re.fullmatch(r"[A-Za-z0-9_-]+", args["name"]):
            raise kit.AdapterError("activate_skill %s cannot be expressed as nanobot's `$name` reference, which "
                                   "takes only [A-Za-z0-9_-]+ (skills.py:23)" % (json.dumps(args, ensure_ascii=False)[:200],))
        calls = await self.turn(self.loop, self.provider, message="$" + args["name"])
        if not calls:
            raise kit.AdapterError("the agent ended its turn without calling the model")
        users = [m for m in calls[0]["messages"] if m.get("role") == "user"]
        if not users:
            raise kit.AdapterError("the model received no user message")
        text = sendable(text_of(users[-1].get("content")))
        if ACTIVATION.code(text) is not None:
            return ACTIVATION.error(text)
        return kit.ok({"content": text})

    def new_turn(self):
        pass  # every step is already its own turn, in a session of its own

    def select(self, message, tools):
        raise kit.Refused(NO_SELECTION)

    def validate(self, path):
        """The checks nanobot applies to an Agent Plugin skill (plugins.py:472-481): the skill file
        must be a regular file inside the directory, its frontmatter a YAML mapping
        (parse_skill_metadata, skills.py:26-36), and valid_skill_metadata(metadata, <directory
        name>) true (skills.py:39-48). nanobot's verdict is a bool; the problem text says which
        step said no."""
        skill_dir = Path(os.path.join(self.root, path))
        skill_file = _contained(skill_dir / "SKILL.md", skill_dir.resolve() if skill_dir.exists() else skill_dir)
        if skill_file is None:
            return kit.validation(False, ["plugins.py:472-474: no regular SKILL.md inside the directory"])
        try:
            meta = parse_skill_metadata(skill_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeError) as e:
            return kit.validation(False, [sendable("plugins.py:475-478: %s: %s" % (type(e).__name__, e))])
        if meta is None:
            return kit.validation(False, ["parse_skill_metadata (skills.py:26-36): no frontmatter that is a YAML mapping"])
        properties = {k: jsonable(meta[k]) for k in
                      ("name", "description", "license", "compatibility", "allowed-tools", "metadata") if k in meta}
        if not valid_skill_metadata(meta, skill_dir.name):
            return kit.validation(False, ["valid_skill_metadata (skills.py:39-48) returned False"], sendable(properties))
        return kit.validation(True, [], sendable(properties))


# Strings made sendable as UTF-8 JSON (a file name decoded with surrogateescape): the kit's.
sendable = kit.sendable


if __name__ == "__main__":
    kit.serve(Nanobot())
