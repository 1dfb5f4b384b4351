#!/usr/bin/env python3
"""skillspec adapter for the real hermes-agent (PyPI ``hermes-agent``, pinned by ``install``).

It owns the translation between the suite's protocol (through the Python adapter kit) and
hermes's own skills functions; it implements no skill behaviour of its own. README.md beside
it says how each operation maps and why; the summary:

- every case gets a fresh HERMES_HOME (a temporary directory outside the case root, removed at
  case end) whose ``config.yaml`` lists the case's skills root under ``skills.external_dirs``;
  the HERMES_HOME's own ``skills/`` stays empty (hermes chmods it to 0700, so it must never be
  the case's fixture). No root (``null``) or the empty text: ``config.yaml`` says
  ``agent: {disabled_toolsets: [skills]}``, hermes's own switch that turns skills off;
- ``discover`` -> hermes's own walk (``agent.skill_utils.iter_skill_index_files``) over the
  directories ``skill_view`` searches; each skill is reported under every name of it
  (directory name, frontmatter name, path below the root) that ``skill_view(name)`` resolves to
  that very skill, with the text hermes hands the model when it loads it by that name;
- ``tools`` -> the skills tools of the toolsets the ``hermes`` CLI enables for its session
  (``hermes_cli.tools_config._get_platform_tools(config, "cli")``, which applies
  ``agent.disabled_toolsets``) that the registry offers (``skill_view`` is the suite's
  ``skill_read_reference``; hermes has no ``skill_run_script``);
- ``prompt`` -> ``agent.prompt_builder.build_skills_system_prompt()``, which hermes's session
  prompt includes only while one of its skills tools is offered (the baseline: the same function
  on a HERMES_HOME without skills);
- ``call skill_read_reference {skill, path}`` -> the model's tool pipeline
  (``model_tools.handle_function_call("skill_view", {name, file_path})``), with hermes's
  refusals translated by the ErrorMap below;
- ``new_turn`` -> nothing (hermes keeps no per-turn tool memory).

It claims one dialect, ``agentskills`` 2026-08 in mode ``lenient``; Portable Skills' cases (the
mapping above) run for information only (``run --for-information portable-skills``). Its claim:
hermes's "agentskills.io compatible" SKILL.md format (tools/skills_tool.py:28) and "Compatible with
the agentskills.io open standard" (the package's METADATA:199). A case of
dialect ``agentskills`` (``config.dialect``) is mapped so (README.md, "Dialect agentskills"):

- ``config.user_skills_root`` -> a second ``skills.external_dirs`` entry after the project's
  ``skills_root`` (hermes's own example of an external dir is ``~/.agents/skills``,
  hermes_cli/config.py:2445; its own ``~/.hermes/skills`` stays the adapter's empty one);
- ``discover`` -> hermes's listing of its skills (``skills_tool._find_all_skills``, what the
  ``skills_list`` tool answers), each with the ``content`` and ``skill_dir`` of ``skill_view(name)``,
  hermes's activation by that name, as ``body`` and ``location``;
- ``tools`` -> ``skill_view`` also reported as ``activate_skill``; ``call activate_skill {name}`` ->
  the model's pipeline, ``handle_function_call("skill_view", {name})``, ``content`` being the
  tool result text the model receives;
- ``validate`` -> lacking: hermes has no validator of a skill directory (``lacks``).

Run it with the interpreter of the venv ``install`` made; ``run`` does.
"""
import json
import os
import shutil
import signal
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit", "python"))
import skillspec_kit as kit  # noqa: E402  (first: it takes over stdout before hermes talks)


# No memory cap, no clock: hermes reads a file whole whatever its size (a 4 GiB sparse SKILL.md
# takes it ~35 s and 8.4 GB), and what it then answers is its verdict, not the adapter's.

PIPELINE_TOOL = "skill_view"
"""hermes's tool that reads SKILL.md and references/ files by (skill, path), and loads a skill's
SKILL.md by its name alone (``file_path`` omitted: "Omit to get the main SKILL.md content",
tools/skills_tool.py:1711): hermes's activation."""

SUITE_NAME = {"skill_view": "skill_read_reference"}
"""hermes tool name -> the suite's tool name, for the tools the suite knows (dialect
portable-skills)."""

AGENTSKILLS_NAMES = {"skill_view": ("skill_read_reference", "activate_skill")}
"""The same for a case of dialect agentskills: skill_view is also the standard's activation."""

AGENTSKILLS = "agentskills"
"""The name of the dialect in ``config.dialect`` (PROTOCOL.md, "Dialects")."""

SKILLS_TOOLS = ("skills_list", "skill_view", "skill_manage")
"""The tools of hermes's ``skills`` toolset (toolsets.py:167-171). hermes's session prompt holds
the skills index only while one of them is offered (agent/system_prompt.py:294-321)."""

SKILLS_OFF = {"agent": {"disabled_toolsets": ["skills"]}}
"""The config.yaml a hermes operator writes to turn skills off: ``agent.disabled_toolsets``,
"globally suppress specific toolsets ... across all platforms" (hermes_cli/tools_config.py:
1979-1987). hermes has no other off state: ``check_skills_requirements`` is always True
("Skills are always available", tools/skills_tool.py:547-549) and its own ``skills/`` directory
is always scanned."""

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


class Hermes(kit.Runtime):
    name = "hermes-agent"
    version = kit.installed_version("hermes-agent", "hermes")
    features = ()
    # The rule set hermes claims (README.md, "Dialect agentskills"): the open Agent Skills
    # standard (Portable Skills' cases run only for information: `run` passes
    # `--for-information portable-skills`, and its hardening cases are judged on their exposures): "SKILL.md Format (YAML Frontmatter, agentskills.io
    # compatible)" (tools/skills_tool.py:28), "Compatible with the agentskills.io open standard"
    # (hermes_agent-0.19.0.dist-info/METADATA:199). Lenient: hermes loads what the format's rules
    # refuse (a fallback parser for malformed YAML, agent/skill_utils.py:157-167; names cut at 64
    # characters and a missing description taken from the body, tools/skills_tool.py:737, 743-749;
    # "err on the side of showing the skill", agent/prompt_builder.py:1431-1432).
    dialects = [
        {"name": "agentskills", "version": "2026-08", "mode": "lenient"},
    ]
    # skill_read_reference is hermes's skill_view (README.md, "Mapping"): the prompt names it so,
    # and the prompt checks look for that name too (PROTOCOL.md, "Mapping a runtime's own tools").
    # So is activate_skill (dialect agentskills): skill_view(name) loads a skill's SKILL.md.
    tool_names = {"skill_read_reference": "skill_view", "activate_skill": "skill_view"}
    # hermes keeps module-level state: skills and prompt caches, the tool registry, config caches,
    # and it reads os.environ (the case's environment) at import and at call time.
    process_per_case = True
    # What hermes reads and lacks (README.md, "Declarations"); sent once the kit sends them.
    read_scope = "skill"
    """skill_view(name, file_path) returns only files whose realpath lies inside the skill's own
    directory: `..` is refused first (tools/skills_tool.py:1297-1305), then
    path_security.validate_within_dir(skill_dir / file_path, skill_dir) (skills_tool.py:
    1307-1319, tools/path_security.py:15-34)."""
    formats = ["skill-md"]
    """hermes reads SKILL.md only: its walk looks for SKILL.md (agent/skill_utils.py:797-819) and
    no code of hermes-agent 0.19.0 names skill.yml."""
    lacks = {
        "skill_run_script": "hermes-agent 0.19.0 has no skill script tool: its skills toolset is "
        "skills_list, skill_view and skill_manage (toolsets.py:167-171); a skill's helpers run only "
        "through its generic terminal tool, approved per command by its own command approval.",
        "validate": "hermes-agent 0.19.0 has no validator of a skill directory: no command or "
        "function judges an existing skill; its one frontmatter check, "
        "skill_manager_tool._validate_frontmatter (tools/skill_manager_tool.py:541-580), checks the "
        "text skill_manage is about to write into its own skills directory (create, edit, patch: "
        ":825, :883, :1019), and its loaders never refuse a skill for its frontmatter.",
    }

    def __init__(self):
        self.tmp = None
        self.agentskills = False

    # -- the case ---------------------------------------------------------------------------

    def start_case(self, config, root):
        if "HERMES_HOME" in config.env:
            raise kit.AdapterError("the case's env sets HERMES_HOME, which this adapter must point at a fresh directory")
        self.tmp = tempfile.mkdtemp(prefix="skillspec-hermes-")
        self.home = os.path.join(self.tmp, "home")
        self.baseline_home = os.path.join(self.tmp, "baseline-home")
        os.mkdir(self.home)
        os.mkdir(self.baseline_home)
        import yaml  # hermes's own dependency (PyYAML), so the root is quoted as YAML needs

        self.agentskills = config.dialect == AGENTSKILLS
        if self.agentskills:
            # Dialect agentskills: the project's skills directory, then the user's, both as
            # external dirs, in that order (README.md, "Dialect agentskills": hermes lists the
            # first of a name it finds, agent/prompt_builder.py:1646-1657, tools/skills_tool.py:
            # 719-738); an unset scope is not listed. No scope at all: skills off, as below.
            roots = [d for d in (config.skills_root, config.user_skills_root) if d is not None and d != ""]
            hermes_config_yaml = {"skills": {"external_dirs": roots}} if roots else SKILLS_OFF
        elif config.skills_root is None or config.skills_root == "":
            # No root, or the empty text (SPEC.md enable.unset: the same as no root): the feature
            # is off, which hermes expresses only by its skills toolset disabled (SKILLS_OFF).
            hermes_config_yaml = SKILLS_OFF
        else:
            hermes_config_yaml = {"skills": {"external_dirs": [config.skills_root]}}
        with open(os.path.join(self.home, "config.yaml"), "w", encoding="utf-8") as f:
            yaml.safe_dump(hermes_config_yaml, f, allow_unicode=True)
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
        # The session's tools are resolved once, at start-up, as the CLI does (cli.py:15710-15711).
        self.session_tools = self._session_tools()
        if not self.skills_on():
            return  # no skills tool: hermes's session builds no skills index (system_prompt.py:294)
        try:
            self.prompt_builder.build_skills_system_prompt()
        except Exception as e:  # hermes's own session start does not catch this either
            raise kit.AdapterError("hermes could not build its skills index at session start: %s: %s"
                                   % (type(e).__name__, sendable(str(e))))

    def _session_tools(self):
        """The native skills tools hermes offers in a CLI session: the tools of the toolsets the
        CLI enables (``_get_platform_tools(config, "cli")``, cli.py:15710-15711, which applies
        ``agent.disabled_toolsets`` last, hermes_cli/tools_config.py:1979-1987), of those the
        skills tools, as the registry offers them (``get_definitions`` drops a tool whose
        ``check_fn`` fails). Only the skills tools are asked for: the others' checks probe
        providers and take seconds, and the suite maps none of them."""
        from hermes_cli.config import load_config
        from hermes_cli.tools_config import _get_platform_tools
        from toolsets import resolve_toolset
        from tools.registry import registry

        names = set()
        for toolset in _get_platform_tools(load_config(), "cli"):
            names.update(resolve_toolset(toolset))
        defs = registry.get_definitions({n for n in names if n in SKILLS_TOOLS}, quiet=True)
        return [d["function"]["name"] for d in defs]

    def skills_on(self):
        """Whether a skills tool is offered: hermes's own test for the skills index
        (``has_skills_tools``, agent/system_prompt.py:294)."""
        return any(n in SKILLS_TOOLS for n in self.session_tools)

    def end_case(self):
        cleanup(self)

    # -- the steps --------------------------------------------------------------------------

    def discover(self):
        """Every skill of hermes's own walk, under every name of it hermes resolves to it
        (README.md, "Which ids discover reports"); in dialect agentskills, hermes's listing."""
        if self.agentskills:
            return self._listed()
        from agent.skill_utils import get_external_skills_dirs, iter_skill_index_files

        # The directories skill_view searches, in its order (tools/skills_tool.py:1083-1087):
        # HERMES_HOME/skills when it exists, then skills.external_dirs.
        dirs = []
        local = self.skills_tool._skills_dir()
        if local.exists():
            dirs.append(local)
        dirs.extend(get_external_skills_dirs())
        skills = []
        for scan_dir in dirs:
            # The walk of the skills index, skills_list and skill_view's own name lookup
            # (agent/skill_utils.py:797-819; skills_tool.py:721, 1160).
            for skill_md in iter_skill_index_files(scan_dir, "SKILL.md"):
                entries = self._named(scan_dir, skill_md)
                if entries:
                    skills.append({"category": self.skills_tool._get_category_from_path(skill_md),
                                   "name": entries[0]["listed_name"], "entries": entries})
        # In hermes's order of its skills: skills_list's sort by category, then name
        # (skills_tool._sort_skills, tools/skills_tool.py:780-782; the index sorts the same way).
        found = []
        for skill in self.skills_tool._sort_skills(skills):
            for entry in skill["entries"]:
                del entry["listed_name"]
                found.append(entry)
        return found

    def _named(self, scan_dir, skill_md):
        """The entries of one skill: one per name hermes itself gives it that ``skill_view``
        resolves to this very directory, in the order directory name, frontmatter name, path
        below the root. A name that resolves elsewhere or is refused ("Ambiguous skill name",
        a SKILL.md it cannot read) loads no guide of this skill: not reported (the refusal goes
        to stderr)."""
        skill_dir = skill_md.parent
        rel = skill_dir.relative_to(scan_dir).as_posix()
        views = {}
        ambiguous = []

        def view(name):
            if not isinstance(name, str) or name in views:
                return
            answer = json.loads(self.skills_tool.skill_view(name))
            ok = bool(answer.get("success")) and answer.get("skill_dir") == str(skill_dir)
            views[name] = answer if ok else None
            if not ok:
                why = answer.get("error") if not answer.get("success") else "loads %s" % answer.get("skill_dir")
                if str(why).startswith("Ambiguous skill name"):
                    ambiguous.append(name)
                print("hermes adapter: %s: %r does not load it: %s" % (skill_dir, name, why), file=sys.stderr)

        # skill_view's strategy 2, "recursive by directory name" (skills_tool.py:1155-1162).
        view(skill_dir.name)
        # Strategy 1, the direct path (skills_tool.py:1123-1135): what hermes's refusal of an
        # ambiguous name tells the model to pass ("load one explicitly by its categorized path",
        # skills_tool.py:1182-1203). "." (a SKILL.md in the root itself) has no such path.
        if rel != ".":
            view(rel)
        # Strategy 2's frontmatter `name:` lookup (skills_tool.py:1163-1170): the name the skills
        # index and skills_list show. Taken from hermes's own answer for this skill; when both
        # names above were refused as ambiguous, from the frontmatter as skill_view's lookup reads
        # it. (A skill no name loads for another reason, a SKILL.md hermes cannot read or answer,
        # loads by its frontmatter name no better: not read again.)
        loaded = [v for v in views.values() if v]
        fm_name = None
        if loaded:
            fm_name = loaded[0].get("name")
        elif ambiguous:
            fm_name = self._frontmatter_name(skill_md)
        view(fm_name)

        entries = []
        for name in (skill_dir.name, fm_name, rel):
            answer = views.pop(name, None) if isinstance(name, str) else None
            if not answer:
                continue
            listed_name, desc = answer.get("name"), answer.get("description")
            listed_name = listed_name if isinstance(listed_name, str) else str(listed_name)
            entries.append({
                "id": sendable(name), "format": "portable", "listed_name": listed_name,
                "name": sendable(listed_name),
                "description": sendable(desc if isinstance(desc, str) else str(desc)),
                "body": sendable(answer.get("content")),
                "skill_dir": sendable(answer["skill_dir"]),
            })
        return entries

    def _listed(self):
        """Dialect agentskills: the skills hermes lists (README.md, "Dialect agentskills").

        The record of each is hermes's listing, ``skills_tool._find_all_skills()`` (the walk of
        ``skills_list``, tools/skills_tool.py:669-776: ``$HERMES_HOME/skills``, then the external
        dirs in order, the first skill of a name kept), in its order (``_sort_skills``, :780-782):
        ``id`` and ``name`` the listed name, ``description`` the listed one. ``body`` and
        ``location`` are what hermes's activation by that name answers, ``skill_view(name)``:
        its ``content`` (the SKILL.md as hermes hands it to the model) and its ``skill_dir``'s
        ``SKILL.md``. A listed name ``skill_view`` refuses (an ambiguous name, a SKILL.md it
        cannot read) is reported without them: hermes lists it and activates nothing by it (its
        refusal goes to stderr)."""
        found = []
        for skill in self.skills_tool._sort_skills(self.skills_tool._find_all_skills()):
            name, desc = skill.get("name"), skill.get("description")
            name = name if isinstance(name, str) else str(name)
            desc = desc if isinstance(desc, str) else str(desc)
            extra = {}
            answer = json.loads(self.skills_tool.skill_view(name))
            if answer.get("success"):
                extra["body"] = sendable(answer.get("content"))
                if answer.get("skill_dir"):
                    # strategies 1 and 2 of skill_view find <dir>/SKILL.md (skills_tool.py:1123-1170)
                    extra["location"] = sendable(os.path.join(answer["skill_dir"], "SKILL.md"))
            else:
                print("hermes adapter: listed skill %r is not activated by its name: %s"
                      % (name, answer.get("error")), file=sys.stderr)
            entry = {"id": sendable(name), "name": sendable(name), "description": sendable(desc)}
            entry.update(extra)
            found.append(entry)
        return found

    @staticmethod
    def _frontmatter_name(skill_md):
        """The frontmatter `name` as skill_view's lookup reads it (``read_text`` and
        ``parse_frontmatter``, skills_tool.py:1164-1168), or None."""
        from agent.skill_utils import parse_frontmatter

        try:
            fm, _ = parse_frontmatter(skill_md.read_text(encoding="utf-8"))
        except Exception:  # skill_view's lookup takes {} then too
            return None
        return fm.get("name")

    def offered(self):
        """The suite's names of the session's tools the suite maps (in dialect agentskills,
        skill_view is also activate_skill)."""
        if self.agentskills:
            return [spec for n in self.session_tools for spec in AGENTSKILLS_NAMES.get(n, ())]
        return [SUITE_NAME[n] for n in self.session_tools if n in SUITE_NAME]

    def tools(self):
        return self.offered()

    def prompt(self):
        # hermes's session prompt holds the skills index only while a skills tool is offered
        # (agent/system_prompt.py:294-321: `skills_prompt = ""` otherwise).
        text = self.prompt_builder.build_skills_system_prompt() if self.skills_on() else ""
        token = self.set_override(self.baseline_home)
        try:
            baseline = self.prompt_builder.build_skills_system_prompt()
        finally:
            self.reset_override(token)
        return text, baseline

    def call(self, tool, args):
        if tool not in self.offered():
            # hermes's agent loop answers a call of a tool the session does not offer with "Tool
            # '<name>' does not exist. Available tools: ..." and runs nothing
            # (agent/conversation_loop.py:509-534, 4718-4790).
            native = {v: k for k, v in SUITE_NAME.items()}.get(tool, tool)
            if self.agentskills and tool == "activate_skill":
                native = PIPELINE_TOOL
            return kit.error("unknown_tool", message="hermes's session offers no tool %s (offered skills tools: %s)"
                             % (json.dumps(native), ", ".join(self.session_tools) or "none"))
        if tool == "activate_skill":
            return self._activate(args)
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

    def _pipeline(self, hermes_args):
        """One call of skill_view through the model's tool pipeline: its answer as text and as
        the object it holds."""
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
        return raw, answer

    def _activate(self, args):
        """Dialect agentskills: ``activate_skill {name}`` is ``skill_view {name}`` (the same
        argument name; every key and a non-object passed as they are), through the model's tool
        pipeline. ``content`` is the tool result text the model receives (hermes's JSON answer:
        the SKILL.md under ``content``, with ``skill_dir`` and the names of ``linked_files``);
        a refusal is translated by ERRORS (``Skill 'x' not found.``: unknown_skill)."""
        raw, answer = self._pipeline(args)
        if "error" in answer or not answer.get("success"):
            return ERRORS.error(sendable(str(answer.get("error"))))
        return kit.ok({"content": sendable(raw)})

    def new_turn(self):
        pass  # hermes keeps no per-turn memory of tool calls (no turn reuse)



# Strings made sendable as UTF-8 JSON (a file name decoded with surrogateescape): the kit's.
sendable = kit.sendable


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
