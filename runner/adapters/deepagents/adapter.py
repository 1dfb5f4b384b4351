#!/usr/bin/env python3
"""skillspec adapter for the real ``deepagents`` (PyPI, MIT), driven offline through its own agent.

Each case builds a fresh ``create_deep_agent(...)`` whose model is a scripted fake chat model
(``ScriptedModel`` below: no API key, no network). The fake model records what the agent sends
it (the system prompt, the tools bound to the call) and answers with the tool call a step asks
for; the tool then runs through the agent's real pipeline (LangGraph's tool node, deepagents'
middleware, its ``FilesystemBackend``), and the adapter reads the ``ToolMessage`` the model would
get back. README.md (next to this file) is the mapping of every protocol operation; the install
script puts deepagents into a venv under ~/.cache/skillspec/adapters/deepagents/.

    skillspec run --adapter "$HOME/.cache/skillspec/adapters/deepagents/venv/bin/python \
        runner/adapters/deepagents/adapter.py"

The adapter translates; it adds no behaviour. deepagents offers no skill tool, so ``tools`` is
exactly the names bound to the model call. Its skills are read the way its skills prompt tells
the model to: ``read_file`` on the path the skill list shows. So ``skill_read_reference {skill,
path}`` of a skill deepagents lists becomes ``read_file(file_path=<listed SKILL.md's directory>
joined with <path>)``; any other call of it (no skill listed under that id, arguments not an
object) reaches the agent under its own name, which the agent does not know: ``unknown_tool``
(README.md, "How skill_read_reference is translated"). ``skill_run_script`` is never
translated.

Dialect: the open Agent Skills standard, ``agentskills`` 2026-08 in mode lenient, which deepagents
claims itself (Portable Skills' cases run for information only: ``run --for-information``) (middleware/skills.py:48, :171, :289; lenient: :510-518).
In a case whose ``config.dialect`` is ``agentskills`` (README.md, "Dialect agentskills"): the
``user_skills_root`` is a source before the project's (deepagents' "last one wins" layering,
middleware/skills.py:8-11); ``discover`` reports ``id`` = ``name`` and ``location``, the SKILL.md
path the catalog shows, as the path on disk it names; ``activate_skill {name}`` is deepagents'
user-explicit activation, a turn with ``pinned_skills: [name]`` (:935-951), whose pinned message
the model receives is the ``content``, and whose "Not pinning skill ...: unknown skill" log line
(:826) is ``unknown_skill``. deepagents has no validator (``lacks.validate``).
"""

import logging
import os
import posixpath
import sys
from pathlib import PurePosixPath

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit", "python"))
import skillspec_kit as kit  # noqa: E402  (first: it takes over stdout before the runtime talks)

# Offline: no tracing or telemetry may reach the network. Set before langchain is imported (it
# reads these when a run starts); forced, not defaulted, for the adapter's whole process.
OFFLINE_ENV = {
    "LANGCHAIN_TRACING_V2": "false",
    "LANGCHAIN_TRACING": "false",
    "LANGSMITH_TRACING": "false",
    "LANGSMITH_TRACING_V2": "false",
    "LANGCHAIN_CALLBACKS_BACKGROUND": "false",
}
os.environ.update(OFFLINE_ENV)

# No memory cap and no clock of the adapter's own: deepagents reads whole files into memory (a
# 4 GiB sparse case file takes it gigabytes and tens of seconds), and what it then answers is its
# verdict, not the adapter's (README.md, "No cap of the adapter's own").

from deepagents import __version__ as DEEPAGENTS_VERSION  # noqa: E402
from deepagents import create_deep_agent  # noqa: E402
from deepagents.backends import FilesystemBackend  # noqa: E402
from deepagents.backends.utils import EMPTY_CONTENT_WARNING  # noqa: E402
from deepagents.middleware.skills import _pinned_skill_body  # noqa: E402
from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

THREAD = {"configurable": {"thread_id": "skillspec-case"}}
USER_TEXT = "skillspec step"  # the user message of every turn (never compared)
READ_TOOL = "read_file"  # the generic tool skill_read_reference is translated onto
MAPPED_READ = "skill_read_reference"
ACTIVATE = "activate_skill"  # dialect agentskills: deepagents' pinned_skills (README.md)
AGENTSKILLS = "agentskills"
SKILLS_LOGGER = "deepagents.middleware.skills"  # the logger of middleware/skills.py (`logger`, :159)


class ScriptedModel(BaseChatModel):
    """A chat model without a provider: it answers from a script and records every request.

    ``queue`` holds the ``AIMessage`` answers still to give (then it answers plain text, which
    ends the agent's run); ``calls`` records, per model call, the messages sent and the names of
    the tools bound to the call (what a real provider would be offered).
    """

    queue: list = []
    calls: list = []
    bound: list = []

    @property
    def _llm_type(self) -> str:
        return "skillspec-scripted"

    def bind_tools(self, tools, **kwargs):
        self.bound = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.calls.append({"messages": list(messages), "tools": list(self.bound)})
        answer = self.queue.pop(0) if self.queue else AIMessage(content="done")
        return ChatResult(generations=[ChatGeneration(message=answer)])


class RecordingBackend(FilesystemBackend):
    """deepagents' own FilesystemBackend, unchanged, remembering its last raw ``read`` result.

    Used only to undo read_file's presentation (README.md, "What a read returns"): the line view
    drops a file's final newline, and only the raw window says whether there was one.
    """

    last_read = None

    def read(self, file_path, offset=0, limit=2000):
        result = super().read(file_path, offset=offset, limit=limit)
        self.last_read = result
        return result


def text_of_system(message) -> str:
    """The system prompt as the provider receives it: its text blocks, in order."""
    if message is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    return "".join(b.get("text", "") for b in message.content if isinstance(b, dict) and b.get("type") == "text")


def protocol_text(text: str) -> str:
    """Text the protocol can carry: names the OS gave with undecodable bytes (surrogate escapes)
    become U+FFFD (README.md: such an id can only be reported lossily)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def virtual_source(skills_root: str, root: str) -> str:
    """The operator's skills root as a path of the agent's backend (rooted at the case root, the
    workspace that holds the skills root: README.md, "Where the backend is rooted").

    An absolute root inside the case root becomes the virtual path below it (``/skills``);
    anything else (relative, outside) is passed verbatim, and deepagents reads it as a virtual
    path of its backend, as it reads every source. The empty text never gets here: it is no
    skills source at all (:func:`skills_sources`).
    """
    if skills_root == root:
        return "/"
    if skills_root.startswith(root.rstrip("/") + "/"):
        return "/" + skills_root[len(root.rstrip("/")) + 1 :]
    return skills_root


def skills_sources(skills_root, root, user_skills_root=None):
    """``create_deep_agent``'s ``skills`` for the operator's roots: ``None`` (no skills configured:
    deepagents installs no SkillsMiddleware, graph.py:948-953) for no root and for the empty text
    (SPEC.md enable.unset: the same as no root; a deepagents user who configures no skills passes
    none), else the sources :func:`virtual_source` names.

    Dialect agentskills: a user-level root comes first and the project's after it. deepagents has
    no scopes of its own; it loads its sources in order, "later sources overriding earlier ones
    when skills have the same name (last one wins). This enables layering: base -> user ->
    project -> team skills" (middleware/skills.py:8-11), so that order is deepagents' own."""
    roots = [r for r in (user_skills_root, skills_root) if r is not None and r != ""]
    if not roots:
        return None
    return [virtual_source(r, root) for r in roots]


def disk_location(backend_root: str, shown: str) -> str:
    """Dialect agentskills: the absolute path on disk of the SKILL.md path deepagents shows the
    model (a path of its backend, ``/skills/pdf/SKILL.md``). FilesystemBackend in virtual mode
    anchors such a path at its ``root_dir`` (backends/filesystem.py:204-208: ``self.cwd /
    vpath.lstrip("/")``); the join is done here without the ``resolve()`` that follows it there,
    so a link on the way is kept as the scan reached it. A path that is not absolute in the
    backend (a relative source) is anchored the same way (``"/" + key``, :204)."""
    return posixpath.join(backend_root, shown.lstrip("/"))


class PinLog(logging.Handler):
    """The records deepagents' skills logger writes while a turn pins skills (its "Not pinning
    skill ..." lines, middleware/skills.py:826, :835, :838, :843, all at DEBUG)."""

    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.texts = []

    def emit(self, record):
        try:
            self.texts.append(record.getMessage())
        except Exception:  # noqa: BLE001  (a record that cannot be formatted is no signal)
            pass


class RunRaised(Exception):
    """The agent's run (``invoke``) raised instead of answering: deepagents' own failure.

    Outside a tool call it becomes the step's protocol error (the case is ERROR, naming the
    exception); inside ``call`` its text goes through the error table like any tool error.
    """

    def __init__(self, exc: BaseException, root: str):
        # The case's temporary root is written `{root}`, so that reports compare across runs.
        super().__init__(("the agent's run raised %s: %s" % (type(exc).__name__, exc)).replace(root, "{root}"))


class DeepAgents(kit.Runtime):
    name = "deepagents"
    version = DEEPAGENTS_VERSION
    features = []  # no operator tool allowlist, no skip report, no platform emulation
    # skill_read_reference is deepagents' read_file at a listed skill's path (README.md): the
    # prompt names read_file, and the prompt checks look for that name too (PROTOCOL.md).
    tool_names = {"skill_read_reference": "read_file"}
    process_per_case = False  # every case builds a new agent, backend and checkpointer
    # What deepagents reads and lacks (README.md, "Declarations").
    read_scope = "case-root"
    """read_file reads any file below the backend's root_dir by design: FilesystemBackend
    (virtual_mode=True) anchors every path at root_dir and only checks that the resolved path stays
    inside it (backends/filesystem.py:161-163, 203-215); its docstring: "Agents can read any
    accessible file" (:115). The adapter roots it at the case root, the workspace that holds the
    skills root (graph.py:480-487: skill sources are paths relative to the backend's root)."""
    formats = ["skill-md"]
    """deepagents reads `<source>/<dir>/SKILL.md` only (middleware/skills.py:729-733); no code of
    deepagents 0.7.32 names skill.yml."""
    lacks = {
        "skill_run_script": "deepagents 0.7.32 has no skill script tool: SkillsMiddleware registers no tool "
        "(middleware/skills.py:1083-1086); programs run only through `execute`, offered by sandbox backends "
        "(middleware/filesystem.py:1585) and approved per call by a human (interrupt_on), never with "
        "FilesystemBackend.",
        "nested-scan": "deepagents scans a skills source's direct children only: _list_skills_with_errors lists "
        "the source with backend.ls and takes `<child>/SKILL.md` of each child directory "
        "(middleware/skills.py:711-733); nothing deeper is examined.",
        "validate": "deepagents 0.7.32 has no validator: the Agent Skills rules are checked only inside the scan "
        "(_parse_skill_metadata, middleware/skills.py:462-557, a private function), where a broken name rule or an "
        "over-long description or compatibility is a logged warning and the skill loads (:510-549); no function "
        "judges a skill directory valid or invalid.",
    }

    # Dialect agentskills (README.md, "Dialect agentskills"): deepagents implements the open
    # standard ("Parsed from YAML frontmatter per Agent Skills specification", middleware/skills.py:48;
    # "Agent Skills specification constraints (https://agentskills.io/specification)", :171;
    # SkillMetadata "per Agent Skills specification", :289). Lenient: a name that breaks the
    # specification's rules is logged and the skill loaded ("warn but continue loading for backwards
    # compatibility", :510-518), a description over 1,024 characters is cut and kept (:521-534).
    # It claims no other rule set: Portable Skills' cases run only for information (`run`
    # passes `--for-information portable-skills`), its hardening cases judged on their exposures.
    dialects = [
        {"name": "agentskills", "version": "2026-08", "mode": "lenient"},
    ]

    # Answers of deepagents' user-explicit activation (pinned_skills): what its skills logger says
    # when a name is not pinned (README.md, "Dialect agentskills").
    PIN_ANSWERS = kit.ErrorMap(
        kit.rule(r"^Not pinning skill '.*': unknown skill$", "unknown_skill",
                 "middleware/skills.py:826, _skills_to_pin: the name is not among the loaded skills (skills_metadata)"),
    )

    ERRORS = kit.ErrorMap(
        kit.rule(r"^Error: \S+ is not a valid tool", "unknown_tool",
                 "langchain's tool node, for a tool name the agent does not have"),
        kit.rule(r"^Error invoking tool '[^']*' with kwargs", "invalid_args",
                 "langchain validates the call's arguments against the tool schema (file_path: str)"),
        kit.rule(r"^skillspec: tool call not an object$", "invalid_args",
                 "arguments that are not a JSON object never reach a tool: the agent runs nothing "
                 "(README.md, malformed arguments)", guess=True),
        kit.rule(r"Path traversal (not allowed|detected)", "invalid_path",
                 "validate_path refuses a `..` segment or a leading `~`; FilesystemBackend (virtual mode) refuses `..` anywhere in the text"),
        kit.rule(r"outside root directory", "invalid_path",
                 "FilesystemBackend(virtual_mode=True): the resolved path left the backend root"),
        kit.rule(r"run raised ValueError: embedded null byte", "invalid_path",
                 "os functions refuse a NUL in a path; the exception escapes the tool and ends the run"),
        kit.rule(r"Windows absolute paths are not supported", "invalid_path", "validate_path: `X:` at the start"),
        kit.rule(r"^Error: File '.*' not found$", "not_found",
                 "FilesystemBackend.read: missing, or not a regular file after resolving links "
                 "(directories, FIFOs, sockets too)"),
        kit.rule(r"codec can't decode", "not_text", "the file is decoded as strict UTF-8"),
        kit.rule(r"Too many levels of symbolic links|\[Errno 40\]", "invalid_path",
                 "ELOOP: a symlink loop on the way", guess=True),
        kit.rule(r"\[Errno 13\] Permission denied", "not_found",
                 "an unreadable file; SPEC.md read step 5 says not_found"),
    )

    # ---- case lifecycle ------------------------------------------------------------------

    def start_case(self, config, root):
        self.root = root
        self.dialect = config.dialect
        # Dialect agentskills: the user-level skills directory is a second source, before the
        # project's (skills_sources). Portable Skills cases have none.
        user_root = config.user_skills_root if self.dialect == AGENTSKILLS else None
        sources = skills_sources(config.skills_root, root, user_root)
        self.sources = sources or []
        self.backend = RecordingBackend(root_dir=root, virtual_mode=True)
        self.model = ScriptedModel()
        self.agent = create_deep_agent(
            model=self.model,
            skills=sources,
            backend=self.backend,
            checkpointer=InMemorySaver(),
        )
        # The baseline: the same agent, same backend, without skills.
        self.base_model = ScriptedModel()
        self.base_agent = create_deep_agent(model=self.base_model, backend=self.backend, checkpointer=InMemorySaver())
        # deepagents scans in before_agent on a thread's first run: run that turn now, so the
        # runtime has scanned at start as PROTOCOL.md asks.
        self._turn()

    def end_case(self):
        self.agent = self.base_agent = None

    def new_turn(self):
        # Every step is already a turn of its own (a user message and the agent's run on the
        # case's thread); deepagents keeps no per-turn call memory to forget.
        pass

    # ---- driving the agent ---------------------------------------------------------------

    def _turn(self, answer=None, agent=None, model=None, extra=None):
        """One user turn on the case's thread; ``answer`` is the model's first reply (a tool call)."""
        agent = agent or self.agent
        model = model or self.model
        model.queue = [answer] if answer is not None else []
        model.calls = []
        self.backend.last_read = None
        state = {"messages": [HumanMessage(content=USER_TEXT)]}
        state.update(extra or {})
        try:
            out = agent.invoke(state, THREAD)
        except Exception as e:  # noqa: BLE001  (the runtime's own failure, reported as such)
            raise RunRaised(e, self.root) from e
        if not model.calls:
            raise kit.AdapterError("the agent never called its model")
        return out, model.calls

    def discover(self):
        # SkillsMiddleware caches skills_metadata per thread; None asks it to reload (its
        # documented way to pick up added, edited or removed skills).
        self._turn(extra={"skills_metadata": None})
        if not self.sources:
            return []
        metas = self.agent.get_state(THREAD).values.get("skills_metadata") or []
        paths = [m["path"] for m in metas]
        bodies = self.backend.download_files(paths) if paths else []
        loaded = []
        for meta, response in zip(metas, bodies):
            body = protocol_text(_pinned_skill_body(meta, response) or "")
            name, description = protocol_text(meta["name"]), protocol_text(meta["description"])
            if self.dialect == AGENTSKILLS:
                # The standard's record: id = the name deepagents keys the skill by (and pins it
                # by, _skills_to_pin, middleware/skills.py:819-829); location = the SKILL.md the
                # catalog shows (`-> Read `<path>``, :1114), as the absolute path on disk it names.
                location = protocol_text(disk_location(str(self.backend.cwd), meta["path"]))
                loaded.append(kit.loaded(name, name, description, body, format=None, location=location))
            else:
                skill_id = PurePosixPath(meta["path"]).parent.name
                loaded.append(kit.loaded(protocol_text(skill_id), name, description, body, format="portable"))
        return loaded

    def tools(self):
        # Exactly what the agent binds to the model call: deepagents has no skill tool, and its
        # read_file (offered with or without skills) reaches the whole backend.
        _, calls = self._turn()
        return list(calls[-1]["tools"])

    def listed_skills(self):
        """The skills the thread's skill list holds (what the prompt shows, skills.py
        _format_skills_list): [(id, SKILL.md path as shown)], id = the directory's name."""
        if not self.sources:
            return []
        metas = self.agent.get_state(THREAD).values.get("skills_metadata") or []
        return [(PurePosixPath(m["path"]).parent.name, m["path"]) for m in metas]

    def skill_file_path(self, skill, path):
        """The file_path a model following deepagents' skills prompt passes to read_file for
        (skill, path): the directory of the SKILL.md path the skill list shows, joined with
        ``path`` as POSIX joins paths (an absolute path names itself; nothing is normalised:
        read_file's validate_path and the backend judge the result). None when no listed
        skill has that id (the model has no path for it) or either is not text."""
        if not isinstance(skill, str) or not isinstance(path, str):
            return None
        for skill_id, shown in self.listed_skills():
            if skill_id == skill:
                return posixpath.join(posixpath.dirname(shown), path)
        return None

    def prompt(self):
        _, calls = self._turn()
        _, base_calls = self._turn(agent=self.base_agent, model=self.base_model)
        return self._system(calls[0]), self._system(base_calls[0])

    @staticmethod
    def _system(call):
        first = call["messages"][0] if call["messages"] else None
        return text_of_system(first) if isinstance(first, SystemMessage) else ""

    # ---- tool calls ----------------------------------------------------------------------

    def call(self, tool, args):
        result = self._call(tool, args)
        error = result.get("error") if not result.get("ok") else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            # deepagents' texts may name the case's temporary root: keep reports reproducible.
            error["message"] = error["message"].replace(self.root, "{root}")
        return result

    def _call(self, tool, args):
        if tool == ACTIVATE and self.dialect == AGENTSKILLS:
            return self._activate(args)
        self.calls_made = getattr(self, "calls_made", 0) + 1
        call_id = "call-%d" % self.calls_made
        name, call_args = self._translate(tool, args)
        mapped = name == READ_TOOL and tool == MAPPED_READ
        if isinstance(call_args, dict):
            answer = AIMessage(content="", tool_calls=[{"name": name, "args": call_args, "id": call_id}])
        else:
            # What a provider integration produces for arguments that are not a JSON object.
            import json
            answer = AIMessage(content="", invalid_tool_calls=[{
                "name": name, "args": json.dumps(call_args), "id": call_id, "error": "arguments are not an object",
                "type": "invalid_tool_call"}])
        try:
            out, calls = self._turn(answer)
        except RunRaised as e:  # the tool's exception ended the agent's whole run (README.md)
            return self.ERRORS.error(str(e))
        results = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == call_id]
        if not results:
            # The agent ran no tool. For a name it does not know at all, that is unknown_tool;
            # otherwise the call was malformed (README.md).
            if name not in calls[0]["tools"]:
                return kit.error("unknown_tool", message="the agent has no tool %r and ran nothing" % name)
            return self.ERRORS.error("skillspec: tool call not an object")
        message = results[-1]
        if message.status == "error":
            return self.ERRORS.error(self._content_text(message))
        if mapped:
            return kit.ok({"skill": args.get("skill"), "path": args.get("path"), "content": self._read_content(message)})
        return kit.ok({"content": self._content_text(message)})

    def _activate(self, args):
        """Dialect agentskills: ``activate_skill {name}`` is deepagents' user-explicit activation,
        ``pinned_skills`` ("To guarantee the model gets a skill's instructions, for example when the
        user names it, pass its name in `pinned_skills`", middleware/skills.py:935-951): a turn
        whose input names the skill. Before the model call, SkillsMiddleware.before_model appends
        ``<skill name=".." path="..">\\n<body>\\n</skill>`` as a HumanMessage (:1260-1280,
        _pinned_skill_message :849-857); ``content`` is the text of that message as the model
        received it. A name deepagents does not pin is skipped with a log line (:819-846), and
        that line is mapped (PIN_ANSWERS)."""
        if not (isinstance(args, dict) and set(args) == {"name"} and isinstance(args["name"], str)):
            # pinned_skills holds names (list[str], :357): anything else cannot be expressed.
            raise kit.AdapterError("activate_skill arguments %r cannot be expressed as deepagents' pinned_skills "
                                   "(a list of skill names, middleware/skills.py:357)" % (args,))
        logger = logging.getLogger(SKILLS_LOGGER)
        log = PinLog()
        level = logger.level
        logger.addHandler(log)
        logger.setLevel(logging.DEBUG)
        try:
            _, calls = self._turn(extra={"pinned_skills": [args["name"]]})
        except RunRaised as e:
            raise kit.AdapterError(str(e))
        finally:
            logger.removeHandler(log)
            logger.setLevel(level)
        messages = calls[0]["messages"]
        user = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage) and not _is_pinned(m)), default=-1)
        pinned = [m for m in messages[user + 1 :] if isinstance(m, HumanMessage) and _is_pinned(m)]
        if pinned:
            return kit.ok({"content": protocol_text("\n".join(self._content_text(m) for m in pinned))})
        for text in log.texts:
            if text.startswith("Not pinning skill "):
                return self.PIN_ANSWERS.error(protocol_text(text).replace(self.root, "{root}"))
        raise kit.AdapterError("deepagents neither pinned %r nor said why" % (args["name"],))

    def _translate(self, tool, args):
        """(tool name, arguments) the scripted model sends for the step's call. Only a
        skill_read_reference of a listed skill becomes read_file (README.md); its other keys pass
        on unchanged, a `path` that is not text is passed as file_path as it is (langchain's
        schema check judges it), a missing one stays missing."""
        if tool != MAPPED_READ or not isinstance(args, dict):
            return tool, args
        skill, path = args.get("skill"), args.get("path")
        listed = isinstance(skill, str) and any(i == skill for i, _ in self.listed_skills())
        if not listed:
            return tool, args
        call_args = {k: v for k, v in args.items() if k not in ("skill", "path")}
        if isinstance(path, str):
            call_args["file_path"] = self.skill_file_path(skill, path)
        elif "path" in args:
            call_args["file_path"] = path
        return READ_TOOL, call_args

    @staticmethod
    def _content_text(message) -> str:
        if isinstance(message.content, str):
            return message.content
        parts = []
        for block in message.content:
            if isinstance(block, dict):
                parts.append(block.get("text") or block.get("base64") or block.get("data") or "")
            else:
                parts.append(str(block))
        return "".join(parts)

    def _read_content(self, message) -> str:
        """The file text the model got from read_file, with read_file's presentation undone.

        read_file answers ``[notices]\\n@@ lines A-B of T @@\\n<lines>`` for text, a reminder for
        an empty file, a base64 block for other file types, and a preview when the result is too
        large (it is then offloaded to a file). The header and notices are removed; the final
        newline the line view drops is restored only when the backend's raw window shows that
        this was all the presentation changed. Anything else is reported as the model saw it.
        """
        text = self._content_text(message)
        raw = self.backend.last_read
        raw_text = None
        if raw is not None and raw.file_data is not None and raw.file_data.get("encoding", "utf-8") == "utf-8":
            raw_text = raw.file_data.get("content")
        if raw_text == EMPTY_CONTENT_WARNING and getattr(raw, "start_line", None) is None:
            # FilesystemBackend answers an empty or white-space-only file with this reminder as
            # its content and no line window (a file holding this text gets a window), and
            # read_file shows it like a one-line file: the model is told the file is empty.
            return ""
        lines = text.split("\n")
        header = next((i for i, line in enumerate(lines) if line.startswith("@@ ") and line.endswith(" @@")), None)
        if header is None or header > 0 or " | " in lines[header]:
            # No line view, or one with notices above its header or more than a line range in it
            # (a result cut at read_file's 80,000 characters, a page of a longer file): reported
            # as the model gets it, notices and header included.
            return text
        body = "\n".join(lines[header + 1 :])
        if raw_text is not None and raw_text in (body + "\n", body):
            return raw_text
        return body


def _is_pinned(message) -> bool:
    """A message deepagents appended for a pinned skill (``lc_source`` "pinned_skill",
    middleware/skills.py:849-857)."""
    return (getattr(message, "additional_kwargs", None) or {}).get("lc_source") == "pinned_skill"


if __name__ == "__main__":
    kit.serve(DeepAgents())
