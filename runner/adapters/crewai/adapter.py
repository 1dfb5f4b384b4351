#!/usr/bin/env python3
"""skillspec adapter for PyPI ``crewai`` 1.15.30 (crewAI, the multi-agent framework), pinned by
``install``: its Agent Skills support, ``crewai.skills`` ("Agent Skills standard implementation
for crewAI", skills/__init__.py:1), driven through a real ``crewai.Agent`` offline.

The model is ``ScriptedLLM``, a small ``crewai.llms.base_llm.BaseLLM`` of the adapter's own (the
class crewAI documents for custom LLMs, base_llm.py:163-181): no provider, no key, no network. It
says it supports native function calling, records every call (messages, tool schemas), and answers
with the tool call a step asks for, which then runs through the agent's own executor
(``AgentExecutor``, the skill loader tool ``load_skill``, its argument schema); the adapter reads
the tool message the model receives in its next call. With no tool offered, crewAI's executor
falls back to text tool calling (ReAct), and the scripted model answers in that format instead.

Claims dialect ``agentskills`` 2026-08 in mode ``strict``: crewAI's loader refuses (logs and skips)
every skill whose frontmatter breaks a rule its pydantic model ``SkillFrontmatter`` enforces
(models.py:43-93) or whose name differs from its directory (validation.py:43-56, parser.py:112).
Maps (README.md beside this file gives every mapping with crewAI's file:line):

- ``case_start`` -> ``Agent(role, goal, backstory, llm=ScriptedLLM(), skills=[project, user])``:
  the agent's post-init ``set_skills`` scans through ``load_skills(..., activate=False)``
  (agent/core.py:442, 593-629); ``[skills_root, user_skills_root]`` in that order is the adapter's
  one choice (``load_skills`` keeps the first skill of a name, loader.py:210-242); a baseline
  ``Agent`` with no skills;
- ``discover`` -> ``agent.skills = <the sources>; agent.set_skills()`` (crewAI's own rescan of an
  agent), then the ``Skill`` objects it holds; ``body`` is what crewAI's ``activate_skill`` reads
  (loader.py:120-151), ``location`` ``skill.path / SKILL_FILENAME``;
- ``prompt`` -> one ``kickoff`` each on the agent and the baseline: the system message the model
  received (the catalog is in it, utilities/prompts.py:93-108, 165-209);
- ``tools`` -> one ``kickoff``: the tool schemas the model received (``load_skill`` reported as
  ``activate_skill``);
- ``call activate_skill {name}`` -> the model calls ``load_skill {skill_name}``; ``content`` is the
  tool message the model receives; crewAI's own answers are mapped to codes.
- ``validate``: not mapped (``lacks.validate``): crewAI has no validator.

Run it with the interpreter of the venv ``install`` made; ``run`` does.
"""

import atexit
import json
import logging
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit", "python"))
import skillspec_kit as kit  # noqa: E402  (first: it takes over stdout before crewAI talks)

# Offline, and nothing in the real home (README.md, "Two choices"): crewAI's telemetry is off
# by its own switches (crewai_core/telemetry.py:354-359; console_formatter.py:74 skips the PyPI
# version check), and HOME is a private directory of this process, so crewAI's settings and caches
# (crewai_core/settings.py:26 ~/.config/crewai, appdirs directories) stay out of the user's home
# and two adapter processes share nothing. Set before crewAI is imported.
_PRIVATE_HOME = tempfile.mkdtemp(prefix="skillspec-crewai-home-")
atexit.register(shutil.rmtree, _PRIVATE_HOME, True)
os.environ["HOME"] = _PRIVATE_HOME
for _name, _value in (("CREWAI_DISABLE_TELEMETRY", "true"), ("OTEL_SDK_DISABLED", "true"),
                      ("CREWAI_DISABLE_VERSION_CHECK", "true"), ("CREWAI_TRACING_ENABLED", "false")):
    os.environ[_name] = _value

# crewAI logs its diagnostics (a skill that failed to load, a large body) with `logging` at
# WARNING: they go to stderr, which the runner keeps (the last 8 KiB) for the report.
logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="crewai: %(levelname)s %(name)s: %(message)s")

try:
    from pydantic import PrivateAttr  # noqa: E402
    from crewai import Agent  # noqa: E402
    from crewai.constants import DEFAULT_LLM_MODEL  # noqa: E402
    from crewai.llms.base_llm import BaseLLM  # noqa: E402
    from crewai.llms.context_window import DEFAULT_CONTEXT_WINDOW_SIZE, resolve_context_window_size  # noqa: E402
    from crewai.skills.loader import activate_skill  # noqa: E402
    from crewai.skills.models import Skill  # noqa: E402
    from crewai.skills.parser import SKILL_FILENAME  # noqa: E402
    from crewai.skills.tool import LOAD_SKILL_TOOL_NAME  # noqa: E402
except ImportError as e:  # pragma: no cover - the venv of ./install has it
    raise SystemExit("crewai adapter: crewai is not installed in this interpreter (%s): %s; "
                     "run runner/adapters/crewai/install" % (sys.executable, e))

VERSION = "1.15.30"
"""The version this adapter maps (README.md cites its code at this version)."""

ACTIVATE = kit.MappedTool("activate_skill", LOAD_SKILL_TOOL_NAME, args={"name": "skill_name"})
"""crewAI's activation tool: ``LoadSkillTool`` named ``load_skill`` (skills/tool.py:22, 34-69)."""
TOOLS = kit.ToolMap(ACTIVATE)

ANSWERS = kit.ErrorMap(
    # The load_skill tool's own answer: a string it returns, passed to the model as the tool's
    # result (skills/tool.py:48-56, the name as Python's repr writes it). Matched only on a result of load_skill.
    kit.rule(r"^Skill (?:'.*'|\".*\") is not available\. Available skills: ", "unknown_skill",
             "skills/tool.py:48-56: load_skill's answer for a name its catalog does not hold "
             "(a skill whose body began with these words would be read the same way)"),
)

ERRORS = kit.ErrorMap(
    # Answers of the agent's executor, native tool calling (agents/agent_executor.py).
    kit.rule(r"^Tool not found$", "unknown_tool",
             "agents/agent_executor.py:2191: the result of a native tool call whose name no tool "
             "of the agent has"),
    kit.rule(r"^Error executing tool: Tool '[^']*' arguments validation failed: ", "invalid_args",
             "tools/base_tool.py:292-299 (the tool's args_schema, LoadSkillSchema: skill_name a "
             "required string) raised, and agents/agent_executor.py:2263-2264 wrote the error"),
    # Text tool calling (ReAct), the executor's mode when no tool is offered (agent_utils.py:1305-1320).
    kit.rule(r"^I encountered an error: Action '.*' don't exist, these are the only available Actions:", "unknown_tool",
             "tools/tool_usage.py:836 and translations/en.json:50 (tool_usage_error): a text tool "
             "call of an action the agent does not have"),
)

NO_READ = (
    "crewai 1.15.30 gives the model one skill tool, `load_skill(skill_name)` (crewai/skills/tool.py:"
    "34-69), which returns a skill's description and instructions; an agent has no tool that reads "
    "a skill's other files (its RESOURCES level lists them, skills/parser.py:159-194) but the loader tool never "
    "reaches it: it activates to INSTRUCTIONS only, loader.py:120-151)"
)

NO_RUN = (
    "crewai 1.15.30 gives the model one skill tool, `load_skill(skill_name)` (crewai/skills/tool.py:"
    "34-69), and no tool that runs a skill's scripts"
)

NO_NESTED = (
    "crewai 1.15.30's discover_skills looks at the search path's direct children only: each child "
    "directory holding SKILL.md is a skill (crewai/skills/loader.py:74-79, sorted(search_path.iterdir()), child.is_dir(), (child / 'SKILL.md').is_file()); "
    "it never descends further"
)

NO_VALIDATE = (
    "crewai 1.15.30 has no validator: no function or CLI command judges a skill directory and "
    "reports its problems (crewai_cli's skill commands are create, install, publish and "
    "list, crewai_cli/skills/main.py:46-337); its checks run only inside loading (SkillFrontmatter, "
    "crewai/skills/models.py:43-93; validate_directory_name, validation.py:43-56), whose failures "
    "discover_skills logs and skips (loader.py:93-104)"
)

NO_SELECTION = "crewai 1.15.30 has no skill selection: every loaded skill is in the catalog (skills/loader.py:245-278, utilities/prompts.py:165-209)"

# The agent's fields crewAI requires (agent/core.py); any text does. The same for the baseline.
ROLE, GOAL, BACKSTORY = "skillspec", "run the suite's step", "an agent driven by the skillspec adapter"
REQUEST = "skillspec step"



class ScriptedLLM(BaseLLM):
    """A crewAI LLM with no provider. Each ``call`` is recorded (a copy of the messages, the tool
    schemas) and answered with the next planned tool call, or, with none planned, a final answer.
    With tools offered, the answer is a native tool call in the OpenAI shape crewAI's executor
    takes (agents/agent_executor.py:1743-1747); with none, crewAI runs text tool calling, and the
    answer is the ReAct text its parser reads (``Action:`` / ``Action Input:``), agent_utils.py:1305-1320."""

    _calls: list = PrivateAttr(default_factory=list)
    _plan: list = PrivateAttr(default_factory=list)
    _ids: int = PrivateAttr(default=0)

    def call(self, messages, tools=None, callbacks=None, available_functions=None, from_task=None,
             from_agent=None, response_model=None):
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        self._calls.append({"messages": [dict(m) for m in messages], "tools": list(tools or [])})
        if self._plan:
            name, arguments = self._plan.pop(0)
            self._ids += 1
            if tools:
                return [{"id": "call_%d" % self._ids, "type": "function",
                         "function": {"name": name, "arguments": arguments}}]
            return "Thought: the step asks for this tool\nAction: %s\nAction Input: %s" % (name, arguments)
        if tools:
            return "done"
        return "Thought: done\nFinal Answer: done"

    def supports_function_calling(self):
        return True

    def get_context_window_size(self):
        # The window of crewAI's default model (constants.py:355, gpt-4.1-mini), by crewAI's own
        # lookup (llms/context_window.py:235-258), as crewAI's LLM class does (llm.py:2523-2534).
        # BaseLLM's own default, 4,096 tokens (base_llm.py:86, 645-651), would make the executor
        # replace any tool result over 1,024 tokens with a "temporary artifact" notice
        # (agents/agent_executor.py:296-330, base_llm.py:405-425): a property of the stand-in
        # model, not of crewAI's skills (README.md, "Two choices").
        return resolve_context_window_size(DEFAULT_LLM_MODEL, {}, default=DEFAULT_CONTEXT_WINDOW_SIZE)


def content_text(message):
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    raise kit.AdapterError("a message content of an unexpected type: %r" % type(content).__name__)


def system_text(call):
    """The system message the model received in ``call`` (crewAI puts the role, goal, backstory and
    the skill block there, prompts.py:93-108), or ``""``."""
    return "".join(content_text(m) for m in call["messages"] if m.get("role") == "system")


def tool_names(call):
    names = []
    for spec in call["tools"]:
        function = spec.get("function", spec) if isinstance(spec, dict) else {}
        names.append(function.get("name"))
    return names


OBSERVATION = re.compile(r"\nObservation: ")


class CrewAI(kit.Runtime):
    name = "crewai"
    version = kit.installed_version("crewai", "crewai")
    language = "python"
    features = ()
    # The open Agent Skills standard (skills/__init__.py:1 "Agent Skills standard implementation for
    # crewAI"; validation.py:1-3 "per the Agent Skills standard"). Strict: a skill that breaks a
    # rule of SkillFrontmatter or whose name is not its directory's is not loaded (loader.py:93-104).
    dialects = [{"name": "agentskills", "version": "2026-08", "mode": "strict"}]
    # SKILL.md exactly (parser.py:30 SKILL_FILENAME, loader.py:76-78 is_file()); no skill.yml.
    formats = ["skill-md"]
    tool_names = TOOLS.names()
    lacks = {
        "skill_read_reference": NO_READ,
        "skill_run_script": NO_RUN,
        "nested-scan": NO_NESTED,
        "validate": NO_VALIDATE,
    }

    def __init__(self):
        self.sources = []
        self.agent = self.llm = None
        self.baseline = self.baseline_llm = None

    # -- the case ---------------------------------------------------------------------------

    def start_case(self, config, root):
        # How a crewAI user gives an agent skill directories: Agent(skills=[...]), Path objects or
        # path strings (agent/core.py:597-604). load_skills keeps the first skill of a name
        # (loader.py:210-242, "Preserves first-seen order"), so the project's directory goes
        # first (README.md, "The one choice").
        self.sources = [Path(d) for d in (config.skills_root, config.user_skills_root) if d is not None]
        self.llm = ScriptedLLM(model="skillspec-scripted")
        self.baseline_llm = ScriptedLLM(model="skillspec-scripted")
        try:
            # post_init_setup -> set_skills -> load_skills(..., activate=False) scans here
            # (agent/core.py:442, 593-629).
            self.agent = Agent(role=ROLE, goal=GOAL, backstory=BACKSTORY, llm=self.llm,
                               skills=list(self.sources) or None)
            self.baseline = Agent(role=ROLE, goal=GOAL, backstory=BACKSTORY, llm=self.baseline_llm)
        except Exception as e:  # crewAI would not build the agent (a missing directory, ...)
            raise kit.Refused(e)

    def end_case(self):
        self.agent = self.llm = self.baseline = self.baseline_llm = None

    def turn(self, agent, llm, tool_call=None):
        """One ``kickoff`` of ``agent``: the model's calls during it (the first shows the prompt
        and tools; with ``tool_call``, the second carries its result)."""
        first = len(llm._calls)
        if tool_call is not None:
            llm._plan.append(tool_call)
        try:
            agent.kickoff(REQUEST)
        finally:
            llm._plan.clear()
        return llm._calls[first:]

    # -- the steps --------------------------------------------------------------------------

    def loaded_skills(self):
        return [s for s in (self.agent.skills or []) if isinstance(s, Skill)]

    def discover(self):
        # crewAI's rescan of an agent: the configured sources again through set_skills, the method
        # post_init runs (agent/core.py:593-629).
        self.agent.skills = list(self.sources) or None
        try:
            self.agent.set_skills()
        except Exception as e:
            raise kit.Refused(e)
        out = []
        for skill in self.loaded_skills():
            # The body crewAI hands over at activation: activate_skill reads the file again and
            # keeps the text after the frontmatter, stripped (loader.py:120-151, parser.py:60-61, 129-156).
            body = activate_skill(skill).instructions or ""
            location = str(skill.path / SKILL_FILENAME)
            out.append(kit.loaded(sendable(skill.name), sendable(skill.name), sendable(skill.description),
                                  sendable(body), format=None, location=sendable(location)))
        return out

    def prompt(self):
        calls = self.turn(self.agent, self.llm)
        base = self.turn(self.baseline, self.baseline_llm)
        return sendable(system_text(calls[0])), sendable(system_text(base[0]))

    def tools(self):
        calls = self.turn(self.agent, self.llm)
        return TOOLS.spec_names(tool_names(calls[0]))

    def call(self, tool, args):
        native, native_args = TOOLS.native_call(tool, args)
        try:
            calls = self.turn(self.agent, self.llm, (native, json.dumps(native_args, ensure_ascii=False)))
        except Exception as e:  # the executor raised before answering the call (a non-object input)
            raise kit.Refused(e)
        if len(calls) < 2:
            raise kit.AdapterError("the agent ended its turn without running the tool %r" % (native,))
        messages = calls[1]["messages"]
        call_id = "call_%d" % self.llm._ids
        results = [m for m in messages if m.get("role") == "tool" and m.get("tool_call_id") == call_id]
        if results:  # native tool calling: the tool message
            text = content_text(results[-1])
        else:  # text tool calling: the observation crewAI appends to the model's own message
            assistant = [m for m in messages if m.get("role") == "assistant"]
            parts = OBSERVATION.split(content_text(assistant[-1]), 1) if assistant else []
            if len(parts) != 2:
                raise kit.AdapterError("no tool result or observation in the model's next call")
            text = parts[1]
        text = sendable(text)
        if native == ACTIVATE.native and ANSWERS.code(text) is not None:
            return ANSWERS.error(text)  # load_skill's own "not available" answer
        if ERRORS.code(text) is not None:
            return ERRORS.error(text)
        return kit.ok({"content": text})

    def new_turn(self):
        pass  # every step is already its own kickoff; crewAI keeps nothing per turn that cases see

    def select(self, message, tools):
        raise kit.Refused(NO_SELECTION)


# Strings made sendable as UTF-8 JSON (a file name decoded with surrogateescape): the kit's.
sendable = kit.sendable


if __name__ == "__main__":
    kit.serve(CrewAI())
