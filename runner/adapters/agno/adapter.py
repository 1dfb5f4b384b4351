#!/usr/bin/env python3
"""skillspec adapter for PyPI ``agno`` 3.1.10 (the Agno agent framework), pinned by ``install``:
its Agent Skills support, ``agno.skills`` (``Skills``, ``LocalSkills``,
``validate_skill_directory``), driven through a real ``agno.agent.Agent`` offline.

The model is ``ScriptedModel``, a small ``agno.models.base.Model`` of the adapter's own: no
provider, no key, no network. It records what the agent sends it (the messages, the system
message among them, and the tool definitions) and answers with the tool call a step asks for,
which then runs through the agent's own pipeline (``Model.aresponse``: argument decoding, the
function registry, the skill tool's entrypoint); the adapter reads the tool message the model
receives in its next call.

Claims dialect ``agentskills`` 2026-08 in mode ``strict``: ``LocalSkills(path, validate=True)`` is
the default, and "If True (default), invalid skills will raise SkillValidationError"
(skills/loaders/local.py:21-22, 25, 78-84). Maps (README.md beside this file gives every
mapping with agno's file:line; paths below are under ``site-packages/agno/``):

- ``case_start`` -> ``Skills(loaders=[LocalSkills(user), LocalSkills(project)])`` (it loads in
  its constructor, skills/agent_skills.py:29-32; a later loader overwrites a name, :43-46) and
  ``Agent(model=ScriptedModel(), skills=skills, telemetry=False)``, plus a baseline ``Agent``
  with no skills; a ``SkillValidationError`` from the constructor (one invalid skill aborts the
  load) makes every client step ``refused`` with agno's text (the validator still answers);
- ``discover`` -> ``skills.reload()`` (agent_skills.py:54-61), then ``skills.get_all_skills()``;
- ``prompt`` -> a turn each on the agent and the baseline: the system message the model received;
- ``tools`` -> a turn: the names of the tool definitions the model received;
- ``call activate_skill`` / ``skill_read_reference`` / ``skill_run_script`` -> the model calls
  ``get_skill_instructions`` / ``get_skill_reference`` / ``get_skill_script`` (execute=true);
  a path relative to the skill is written relative to the tool's directory (``native_path``);
  the JSON text the tool returns is mapped (``ANSWERS``);
- ``validate {path}`` -> ``validate_skill_directory(<root>/<path>)`` (skills/validator.py:227-277).

Run it with the interpreter of the venv ``install`` made; ``run`` does.
"""

import json
import os
import sys
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit", "python"))
import skillspec_kit as kit  # noqa: E402  (first: it takes over stdout before agno talks)

try:
    from agno.agent import Agent  # noqa: E402
    from agno.models.base import Model  # noqa: E402
    from agno.models.response import ModelResponse  # noqa: E402
    from agno.skills import LocalSkills, Skills, SkillValidationError, validate_skill_directory  # noqa: E402
except ImportError as e:  # pragma: no cover - the venv of ./install has it
    raise SystemExit("agno adapter: agno is not installed in this interpreter (%s): %s; "
                     "run runner/adapters/agno/install" % (sys.executable, e))

VERSION = "3.1.10"
"""The version this adapter maps (README.md cites its code at this version)."""

ACTIVATE = kit.MappedTool("activate_skill", "get_skill_instructions", args={"name": "skill_name"})
"""agno's activation tool, ``Skills._get_skill_instructions(skill_name)`` (agent_skills.py:158-165, 187-214)."""

READ = kit.MappedTool("skill_read_reference", "get_skill_reference",
                      args={"skill": "skill_name", "path": "reference_path"})
"""agno's reading tool, ``Skills._get_skill_reference(skill_name, reference_path)``
(agent_skills.py:167-174, 216-280): ``reference_path`` is a file name inside ``references/``."""

RUN = kit.MappedTool("skill_run_script", "get_skill_script",
                     args={"skill": "skill_name", "script": "script_path"})
"""agno's script tool, ``Skills._get_skill_script(skill_name, script_path, execute, args, timeout)``
(agent_skills.py:176-183, 282-401): ``execute=True`` runs ``scripts/<script_path>``."""

TOOLS = kit.ToolMap(ACTIVATE, READ, RUN)

PREFIX = {READ.spec: ("path", "references/"), RUN.spec: ("script", "scripts/")}
"""The directory each native tool takes its path in (agent_skills.py:254, 330)."""


def native_path(path, prefix):
    """The spec's path (relative to the skill's directory) written relative to the directory agno's
    tool takes it in: ``references/x.md`` is agno's ``x.md``, ``SKILL.md`` its ``../SKILL.md``. The
    empty text and an absolute path are passed as they are (``Path(dir) / "/etc/x"`` is
    ``/etc/x`` in agno too). Nothing is checked or refused here: agno's own checks see every path."""
    if path == "" or path.startswith("/"):
        return path
    if path.startswith(prefix):
        return path[len(prefix):]
    return "../" + path

ANSWERS = kit.ErrorMap(
    # The "error" texts the three skill tools return inside their JSON answer (agent_skills.py).
    kit.rule(r"^Skill '.*' not found$", "unknown_skill",
             "agent_skills.py:197-204, 227-234, 303-310: the answer of every skill tool for a name "
             "no loaded skill has"),
    kit.rule(r"^A reference_path is required to read a reference from skill ", "invalid_args",
             "agent_skills.py:236-243: an empty or missing reference_path", guess=True),
    kit.rule(r"^Reference '.*' not found in skill '.*'$", "not_found",
             "agent_skills.py:245-251: reference_path is not one of the file names agno listed in "
             "references/ at load time; one text for a missing file and any other path (`..`, "
             "a subdirectory, a FIFO, a link to a non-file)", guess=True),
    kit.rule(r"^Invalid reference path: ", "invalid_path",
             "agent_skills.py:253-263: safe_join_relative_path refused the path (utils/path_safety.py)"),
    kit.rule(r"^Error reading reference file: .*codec can't decode", "not_text",
             "agent_skills.py:264-280: read_file_safe's UnicodeDecodeError (skills/utils.py:180-195)"),
    kit.rule(r"^Error reading reference file: ", "not_found",
             "agent_skills.py:273-280: any other error of the read (an OSError)", guess=True),
    kit.rule(r"^A script_path is required to read a script from skill ", "invalid_args",
             "agent_skills.py:312-319: an empty or missing script_path", guess=True),
    kit.rule(r"^Script '.*' not found in skill '.*'$", "not_found",
             "agent_skills.py:321-327: script_path is not one of the file names agno listed in "
             "scripts/ at load time; one text for a missing file and any other path", guess=True),
    kit.rule(r"^Invalid script path: ", "invalid_path",
             "agent_skills.py:329-339: safe_join_relative_path refused the path"),
    kit.rule(r"^Script execution timed out after (?P<secs>[0-9]+) seconds$", "timeout",
             "agent_skills.py:378-385: subprocess.TimeoutExpired (skills/utils.py:165-171, the "
             "tool's own `timeout` argument, 30 s by default)",
             fields=lambda m: {"timeout_ms": int(m["secs"]) * 1000}),
    kit.rule(r"^Interpreter or script not found: ", "spawn_failed",
             "agent_skills.py:386-393: FileNotFoundError from subprocess.run (the shebang's "
             "interpreter, or the script, is missing)", guess=True),
    kit.rule(r"^Error executing script: ", "spawn_failed",
             "agent_skills.py:394-401: any other exception of run_script (an OSError such as "
             "ENOEXEC for a script without a shebang)", guess=True),
)

PIPELINE = kit.ErrorMap(
    # Texts of the agent's tool pipeline (models/base.py, utils/functions.py), before a tool runs.
    kit.rule(r"^Error: The requested tool does not exist or is not available\.$", "unknown_tool",
             "models/base.py:2064-2078 (from :3134): the pipeline's answer for a tool not in the agent's functions"),
    kit.rule(r"^Error while decoding function arguments: ", "invalid_args",
             "utils/functions.py:37-43: the arguments are not JSON"),
    kit.rule(r"^Function arguments are not a valid JSON object\.", "invalid_args",
             "utils/functions.py:49-52: the arguments are JSON but not an object"),
    kit.rule(r"^[0-9]+ validation errors? for Skills\._get_skill_(instructions|reference|script)\n", "invalid_args",
             "tools/function.py:1819-1820, 3001-3004: pydantic's validate_call of the skill tool's "
             "arguments (a missing, unknown or mistyped argument); the tool message is str(e)"),
)

NO_SELECTION = "agno 3.1.10's skills have no selection: every loaded skill is in the catalog (agent_skills.py:131-144)"



@dataclass
class ScriptedModel(Model):
    """An ``agno`` model with no provider: each call is recorded (the messages, the tool
    definitions), and answered with the next planned tool call, or, with none planned, with the
    text ``done``. Only ``ainvoke`` is used (the adapter runs ``Agent.arun``)."""

    id: str = "skillspec-scripted"
    name: str = "ScriptedModel"
    provider: str = "skillspec"

    def __post_init__(self):
        self.calls = []
        self.plan = []
        self.ids = 0

    async def ainvoke(self, messages, assistant_message=None, response_format=None, tools=None,
                      tool_choice=None, run_response=None, compress_tool_results=False, **kwargs):
        self.calls.append({
            "messages": [(m.role, m.content, getattr(m, "tool_name", None)) for m in messages],
            "tools": list(tools or []),
        })
        if self.plan:
            name, arguments = self.plan.pop(0)
            self.ids += 1
            return ModelResponse(role="assistant", tool_calls=[{
                "id": "call-%d" % self.ids, "type": "function",
                "function": {"name": name, "arguments": arguments},
            }])
        return ModelResponse(role="assistant", content="done")

    def invoke(self, *args, **kwargs):
        raise kit.AdapterError("the scripted model is only called asynchronously")

    def invoke_stream(self, *args, **kwargs):
        raise kit.AdapterError("the scripted model does not stream")

    def ainvoke_stream(self, *args, **kwargs):
        raise kit.AdapterError("the scripted model does not stream")

    def _parse_provider_response(self, response, **kwargs):
        return response

    def _parse_provider_response_delta(self, response):
        return response


def system_text(call):
    """The system message the model received in ``call`` (``""``: none)."""
    texts = [content for role, content, _ in call["messages"] if role == "system"]
    return "".join(t if isinstance(t, str) else json.dumps(t) for t in texts if t is not None)


def tool_name(spec):
    fn = spec.get("function")
    return fn.get("name") if isinstance(fn, dict) else spec.get("name")


class Agno(kit.Runtime):
    name = "agno"
    version = kit.installed_version("agno", "agno")
    language = "python"
    features = ()
    # The open Agent Skills standard: skills/validator.py:1 ("Skill validation logic following the
    # Agent Skills spec"), :7, :12 ("Constants/Allowed frontmatter fields per Agent Skills Spec");
    # LocalSkills: "validate: Whether to validate skills against the Agent Skills spec. If True
    # (default), invalid skills will raise SkillValidationError" (loaders/local.py:21-23). Strict.
    dialects = [{"name": "agentskills", "version": "2026-08", "mode": "strict"}]
    # SKILL.md only ("only uppercase supported", validator.py:248-251; loaders/local.py:44, 54).
    formats = ["skill-md"]
    tool_names = TOOLS.names()
    lacks = {
        "nested-scan": (
            "agno 3.1.10's LocalSkills looks at its path and the path's direct children only: a "
            "path holding SKILL.md is one skill, otherwise each child directory holding one is "
            "(skills/loaders/local.py:43-58); it never descends further"),
    }

    def __init__(self):
        self.root = None
        self.skills = None
        self.agent = self.model = None
        self.baseline = self.baseline_model = None
        self.saved_env = None
        self.start_error = None

    # -- the case ---------------------------------------------------------------------------

    def start_case(self, config, root):
        self.root = root
        # The runtime's process environment is the case's: agno runs skill scripts with
        # subprocess.run and no env (skills/utils.py:165-171), so they inherit os.environ.
        self.saved_env = dict(os.environ)
        os.environ.clear()
        os.environ.update(config.runtime_env())
        # How an agno user configures the two scopes: one LocalSkills per directory, the broader
        # first; a later loader overwrites an earlier skill of the same name (agent_skills.py:43-46).
        # The adapter's one choice (README.md, "The one choice").
        sources = [d for d in (config.user_skills_root, config.skills_root) if d is not None]
        self.model = ScriptedModel()
        self.baseline_model = ScriptedModel()
        self.start_error = None
        try:
            # Skills loads in its constructor and re-raises SkillValidationError (agent_skills.py:29-50).
            self.skills = Skills(loaders=[LocalSkills(d) for d in sources])
        except Exception as e:  # agno would not start: one invalid skill aborts the whole load
            # The client refused to start; every client step is refused with its words. The
            # validator (validate_skill_directory) is a function of its own and still answers.
            self.start_error = e
            return
        self.agent = Agent(model=self.model, skills=self.skills, telemetry=False)
        self.baseline = Agent(model=self.baseline_model, telemetry=False)

    def client(self):
        """Refuse a client step when agno's Skills refused to start (case_start)."""
        if self.start_error is not None:
            raise kit.Refused(self.start_error)

    def end_case(self):
        self.skills = self.agent = self.model = None
        self.baseline = self.baseline_model = None
        if self.saved_env is not None:
            os.environ.clear()
            os.environ.update(self.saved_env)
            self.saved_env = None

    async def turn(self, agent, model, tool_call=None):
        """One run of ``agent``: the model's calls during it (the first shows the prompt and tools;
        with ``tool_call``, the second carries its result)."""
        first = len(model.calls)
        if tool_call is not None:
            model.plan.append(tool_call)
        await agent.arun("skillspec step")
        model.plan.clear()
        return model.calls[first:]

    # -- the steps --------------------------------------------------------------------------

    async def discover(self):
        self.client()
        try:
            self.skills.reload()  # agno's rescan: clear, then every loader again (agent_skills.py:54-61)
        except Exception as e:  # SkillValidationError: one invalid skill aborts the whole load
            raise kit.Refused(e)
        out = []
        for skill in self.skills.get_all_skills():
            location = os.path.join(skill.source_path, "SKILL.md")
            out.append(kit.loaded(sendable(skill.name), sendable(skill.name), sendable(skill.description),
                                  sendable(skill.instructions), format=None, location=sendable(location)))
        return out

    async def prompt(self):
        self.client()
        calls = await self.turn(self.agent, self.model)
        base = await self.turn(self.baseline, self.baseline_model)
        return sendable(system_text(calls[0])), sendable(system_text(base[0]))

    async def tools(self):
        self.client()
        calls = await self.turn(self.agent, self.model)
        return TOOLS.spec_names(tool_name(t) for t in calls[0]["tools"])

    def native_call(self, tool, args):
        """The native tool and arguments for a call of ``tool`` (``native_path`` for the path)."""
        native, native_args = TOOLS.native_call(tool, args)
        mapped = TOOLS.get(tool)
        if mapped is None:
            return native, native_args
        if tool in PREFIX and isinstance(args, dict):
            key, prefix = PREFIX[tool]
            value = args.get(key)
            if isinstance(value, str):
                native_args[mapped.args[key]] = native_path(value, prefix)
        if tool == RUN.spec and isinstance(native_args, dict):
            native_args["execute"] = True  # get_skill_script's run mode (agent_skills.py:295, 361-377)
        return mapped.native, native_args

    async def call(self, tool, args):
        self.client()
        native, native_args = self.native_call(tool, args)
        calls = await self.turn(self.agent, self.model, (native, json.dumps(native_args, ensure_ascii=False)))
        if len(calls) < 2:
            raise kit.AdapterError("the agent ended its run without running the tool %r" % (native,))
        results = [content for role, content, _ in calls[1]["messages"] if role == "tool"]
        if len(results) != 1:
            raise kit.AdapterError("expected one tool message in the model's next call, got %d" % len(results))
        text = results[0]
        if not isinstance(text, str):
            raise kit.AdapterError("the tool message is not text: %r" % (type(text).__name__,))
        text = sendable(text)
        if not TOOLS.is_native(native) or PIPELINE.code(text) is not None:
            return PIPELINE.error(text)
        if tool == ACTIVATE.spec:
            answer = parse_answer(text)
            if isinstance(answer, dict) and "error" in answer:
                return ANSWERS.error(str(answer["error"]))
            return kit.ok({"content": text})  # exactly what the model receives: the tool's JSON text
        answer = parse_answer(text)
        if not isinstance(answer, dict):
            raise kit.AdapterError("agno's %s answered text that is not its JSON object: %r" % (native, text[:200]))
        if "error" in answer:
            return ANSWERS.error(str(answer["error"]))
        if tool == READ.spec:
            return kit.ok({"skill": args.get("skill"), "path": args.get("path"),
                           "content": sendable(answer.get("content"))})
        # skill_run_script: agno answers stdout, stderr and the returncode of every run (agent_skills.py:369-377)
        code = answer.get("returncode")
        if code == 0:
            return kit.ok({"skill": args.get("skill"), "script": args.get("script"), "exit_code": 0,
                           "stdout": sendable(answer.get("stdout")), "stderr": sendable(answer.get("stderr"))})
        fields = {"exit_code": code, "stderr": sendable(answer.get("stderr"))}
        if isinstance(code, int) and code < 0:  # subprocess: -N is "killed by signal N"
            fields = {"exit_code": None, "signal": -code, "stderr": sendable(answer.get("stderr"))}
        return kit.refusal("script_failed", "agno: returncode %r" % (code,), **fields)

    def new_turn(self):
        pass  # every step is already its own run of the agent; agno keeps nothing per turn here

    def select(self, message, tools):
        raise kit.Refused(NO_SELECTION)

    def validate(self, path):
        """agno's validator, ``validate_skill_directory`` (validator.py:227-277, exported by
        ``agno.skills``): valid when it returns no error. It returns no properties; for a valid
        directory they are the ``Skill`` agno's loader builds from it (``LocalSkills(dir).load()``)."""
        skill_dir = os.path.join(self.root, path)
        errors = validate_skill_directory(skill_dir)
        if errors:
            return kit.validation(False, [sendable(str(e)) for e in errors])
        try:
            skills = LocalSkills(skill_dir).load()
        except SkillValidationError as e:  # pragma: no cover - the same validator just passed
            return kit.validation(False, [sendable(str(e))])
        if len(skills) != 1:
            return kit.validation(True, [])  # the loader logged an error and built nothing: no properties read
        skill = skills[0]
        properties = {"name": skill.name, "description": skill.description}
        if skill.license is not None:
            properties["license"] = skill.license
        if skill.compatibility is not None:
            properties["compatibility"] = skill.compatibility
        if skill.allowed_tools is not None:
            properties["allowed-tools"] = skill.allowed_tools  # agno requires a list (validator.py:128-146)
        if skill.metadata is not None:
            properties["metadata"] = skill.metadata
        return kit.validation(True, [], sendable(properties))


def parse_answer(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


def sendable(value):
    """Values made sendable as UTF-8 JSON: the kit's, with a YAML value JSON has no type for (a
    date) sent as its ``str()``."""
    if isinstance(value, dict):
        return {sendable(k) if isinstance(k, str) else str(k): sendable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [sendable(v) for v in value]
    if value is None or isinstance(value, (str, bool, int, float)):
        return kit.sendable(value)
    return str(value)


if __name__ == "__main__":
    kit.serve(Agno())
