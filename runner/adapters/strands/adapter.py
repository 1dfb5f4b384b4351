#!/usr/bin/env python3
"""skillspec adapter for PyPI ``strands-agents`` 1.62.0 (AWS's Strands Agents SDK), pinned by
``install``: its Agent Skills support, the vended plugin ``strands.vended_plugins.skills``
(``AgentSkills``, ``Skill``), driven through a real ``strands.Agent`` offline.

The model is ``ScriptedModel``, a small ``strands.models.model.Model`` of the adapter's own: no
provider, no key, no network. It records what the agent sends it (the system prompt, the tool
specs, the messages) and answers with the tool use a step asks for, which then runs through the
agent's own pipeline (the tool executor, the decorated ``skills`` tool, its input validation); the
adapter reads the ``toolResult`` the model receives back in its next call.

Claims dialect ``agentskills`` 2026-08 in mode ``lenient``: the loader's default (``strict=False``,
agent_skills.py:116, skill.py:117-120 "In lenient mode (default), logs warnings for cosmetic
issues but does not raise"). Maps (README.md beside this file gives every mapping with strands'
file:line):

- ``case_start`` -> ``Agent(model=ScriptedModel(), plugins=[AgentSkills(skills=[user, project])])``
  (the plugin scans in ``init_agent``, at the agent's construction), and a baseline ``Agent`` with
  no plugin; ``[user_skills_root, skills_root]`` in that order is the adapter's one choice (later
  sources overwrite earlier ones of the same name, agent_skills.py:333-335);
- ``discover`` -> ``plugin.set_available_skills(<the same sources>)`` and a turn (the
  before-invocation hook reloads, agent_skills.py:210-211), then
  ``plugin.get_available_skills(agent)``; ``location`` is the ``<location>`` strands writes in its
  catalog (``skill.path / "SKILL.md"``, agent_skills.py:479);
- ``prompt`` -> a turn each on the agent and the baseline: the ``system_prompt`` the model received;
- ``tools`` -> a turn: the names of the tool specs the model received (``skills`` reported as
  ``activate_skill``, declared in ``tool_names``);
- ``call activate_skill {name}`` -> the model calls ``skills {skill_name}``; ``content`` is the
  text of the tool result; strands' own "not found" answers are mapped to ``unknown_skill``;
- ``validate {path}`` -> ``Skill.from_file(<root>/<path>, strict=True)`` (skill.py:254): valid
  when it returns, its ``ValueError``/``FileNotFoundError`` the one problem otherwise.

Run it with the interpreter of the venv ``install`` made; ``run`` does.
"""

import json
import logging
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit", "python"))
import skillspec_kit as kit  # noqa: E402  (first: it takes over stdout before strands talks)

# strands logs its diagnostics (a skill skipped, a name that breaks a rule, a collision) with
# `logging` at WARNING: they go to stderr, which the runner keeps (the last 8 KiB) for the report.
logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="strands-agents: %(levelname)s %(name)s: %(message)s")

try:
    from strands import Agent  # noqa: E402
    from strands.models.model import Model  # noqa: E402
    from strands.vended_plugins.skills import AgentSkills, Skill  # noqa: E402
except ImportError as e:  # pragma: no cover - the venv of ./install has it
    raise SystemExit("strands adapter: strands-agents is not installed in this interpreter (%s): %s; "
                     "run runner/adapters/strands/install" % (sys.executable, e))

VERSION = "1.62.0"
"""The version this adapter maps (README.md cites its code at this version)."""

NATIVE_ACTIVATE = "skills"
"""strands' activation tool: ``AgentSkills.skills(skill_name)``, agent_skills.py:160-185."""

ACTIVATE = kit.MappedTool("activate_skill", NATIVE_ACTIVATE, args={"name": "skill_name"})
TOOLS = kit.ToolMap(ACTIVATE)

ANSWERS = kit.ErrorMap(
    # Answers of the `skills` tool itself: strings it returns, which the pipeline passes on with the
    # status "success" (agent_skills.py:174-181). Matched only on a result of that status.
    kit.rule(r"^Skill '.*' not found\. Available skills: ", "unknown_skill",
             "agent_skills.py:178-181: the skills tool's answer for a name no loaded skill has "
             "(a body that begins with the same words would be read the same way)"),
    kit.rule(r"^Error: skill_name is required\. Available skills: ", "unknown_skill",
             "agent_skills.py:174-176: the skills tool's answer for an empty skill_name; no loaded "
             "skill has the empty name", guess=True),
)

ERRORS = kit.ErrorMap(
    # Answers of the agent's tool pipeline: results with the status "error".
    kit.rule(r"^Unknown tool: ", "unknown_tool",
             "tools/executors/_executor.py:645-656: the executor's result for a tool not in the registry"),
    kit.rule(r"^Error: Validation failed for input parameters: ", "invalid_args",
             "tools/decorator.py:395: the decorated tool's pydantic check of the input (a missing "
             "or non-string skill_name, input that is not an object)"),
)

NO_READ = (
    "strands-agents 1.62.0's skills plugin registers one tool, `skills(skill_name)` "
    "(vended_plugins/skills/agent_skills.py:160-185), which returns a skill's instructions and "
    "lists the files under scripts/, references/ and assets/ (agent_skills.py:401-452) but reads "
    "none of them; the plugin has no tool that reads a skill's other files"
)

NO_RUN = (
    "strands-agents 1.62.0's skills plugin registers one tool, `skills(skill_name)` "
    "(vended_plugins/skills/agent_skills.py:160-185), and no tool that runs a skill's scripts"
)

NO_NESTED = (
    "strands-agents 1.62.0 looks at each source and its direct children only: a source holding "
    "SKILL.md (or skill.md) is one skill, otherwise each child directory holding one is "
    "(vended_plugins/skills/agent_skills.py:339-367); it never descends further"
)

NO_SELECTION = "strands-agents 1.62.0's skills plugin has no skill selection: every loaded skill is in the catalog (agent_skills.py:454-483)"



class ScriptedModel(Model):
    """A ``strands`` model with no provider: each call is recorded (messages, tool specs, system
    prompt), and answered with the next planned tool use, or, with none planned, with the text
    ``done`` and ``end_turn``. Stream events in the shape strands' event loop reads (the Bedrock
    ConverseStream events, ``strands.types.streaming``)."""

    def __init__(self):
        self.calls = []
        self.plan = []
        self.ids = 0

    def update_config(self, **model_config):
        pass

    def get_config(self):
        return {}

    async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):
        raise kit.AdapterError("the scripted model gives no structured output (the adapter never asks for it)")
        yield  # pragma: no cover  (an async generator, as the interface wants)

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        self.calls.append({
            "messages": messages,
            "tool_specs": list(tool_specs or []),
            "system_prompt": system_prompt,
            "system_prompt_content": kwargs.get("system_prompt_content"),
        })
        yield {"messageStart": {"role": "assistant"}}
        if self.plan:
            name, input_text = self.plan.pop(0)
            self.ids += 1
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "tooluse-%d" % self.ids, "name": name}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": input_text}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": "done"}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}


def system_text(call):
    """The system prompt the model received in ``call``: the string, else the text of the content
    blocks (strands passes both, agent_skills.py:219-243), else ``""`` (no system prompt)."""
    if call["system_prompt"] is not None:
        return call["system_prompt"]
    blocks = call["system_prompt_content"] or []
    return "".join(b.get("text", "") for b in blocks)


def tool_result_text(result):
    """The text of a ``toolResult`` as the model receives it (its text blocks, in order)."""
    parts = []
    for block in result.get("content", []):
        if "text" not in block:
            raise kit.AdapterError("the tool result holds a block that is not text: %r" % (sorted(block),))
        parts.append(block["text"])
    return "".join(parts)


class Strands(kit.Runtime):
    name = "strands-agents"
    version = kit.installed_version("strands-agents", "strands")
    language = "python"
    features = ()
    # The open Agent Skills standard, as the suite pins it (SPEC.md "Dialect agentskills"):
    # vended_plugins/skills/__init__.py:1-6 ("AgentSkills.io integration for Strands Agents"),
    # skill.py:118 ("Validate a skill name per the AgentSkills.io specification"). Lenient: the
    # loader's default, strict=False (agent_skills.py:116, skill.py:120).
    dialects = [{"name": "agentskills", "version": "2026-08", "mode": "lenient"}]
    # SKILL.md, or skill.md as a fallback (skill.py:41, agent_skills.py:68); no skill.yml.
    formats = ["skill-md"]
    tool_names = TOOLS.names()
    lacks = {
        "skill_read_reference": NO_READ,
        "skill_run_script": NO_RUN,
        "nested-scan": NO_NESTED,
    }

    def __init__(self):
        self.root = None
        self.sources = []
        self.plugin = None
        self.agent = None
        self.model = None
        self.baseline = None
        self.baseline_model = None

    # -- the case ---------------------------------------------------------------------------

    def start_case(self, config, root):
        self.root = root
        # How a strands user configures the two scopes: both directories in the plugin's
        # `skills` list, the broader one first (strands' docs: AgentSkills(skills=["./team-skills",
        # "./project-skills"])); a later source overwrites an earlier skill of the same name
        # (agent_skills.py:333-335). The adapter's one choice (README.md, "The one choice").
        self.sources = [d for d in (config.user_skills_root, config.skills_root) if d is not None]
        self.model = ScriptedModel()
        self.baseline_model = ScriptedModel()
        try:
            self.plugin = AgentSkills(skills=list(self.sources))
            # The plugin registry runs init_agent here, which scans the sources (agent_skills.py:144-158).
            self.agent = Agent(model=self.model, plugins=[self.plugin], callback_handler=None)
            self.baseline = Agent(model=self.baseline_model, callback_handler=None)
        except Exception as e:  # strands would not start
            raise kit.Refused(e)

    def end_case(self):
        self.plugin = self.agent = self.model = None
        self.baseline = self.baseline_model = None

    async def turn(self, agent, model, tool_use=None):
        """One user turn of ``agent``: the model's calls during it (the first shows the prompt and
        tools; with ``tool_use``, the second carries its result)."""
        first = len(model.calls)
        if tool_use is not None:
            model.plan.append(tool_use)
        await agent.invoke_async("skillspec step")
        model.plan.clear()
        return model.calls[first:]

    # -- the steps --------------------------------------------------------------------------

    async def discover(self):
        # strands' rescan: set_available_skills drops the per-agent cache (agent_skills.py:261-279),
        # and the before-invocation hook of the next turn loads the sources again (:210-211).
        self.plugin.set_available_skills(list(self.sources))
        await self.turn(self.agent, self.model)
        out = []
        for skill in self.plugin.get_available_skills(self.agent):
            location = str(skill.path / "SKILL.md") if skill.path is not None else None
            extra = {"location": sendable(location)} if location is not None else {}
            out.append(kit.loaded(sendable(skill.name), sendable(skill.name), sendable(skill.description),
                                  sendable(skill.instructions), format=None, **extra))
        return out

    async def prompt(self):
        calls = await self.turn(self.agent, self.model)
        base = await self.turn(self.baseline, self.baseline_model)
        return sendable(system_text(calls[0])), sendable(system_text(base[0]))

    async def tools(self):
        calls = await self.turn(self.agent, self.model)
        return TOOLS.spec_names(spec["name"] for spec in calls[0]["tool_specs"])

    async def call(self, tool, args):
        native, native_args = TOOLS.native_call(tool, args)
        calls = await self.turn(self.agent, self.model, (native, json.dumps(native_args, ensure_ascii=False)))
        if len(calls) < 2:
            raise kit.AdapterError("the agent ended its turn without running the tool %r" % (native,))
        message = calls[1]["messages"][-1]
        results = [b["toolResult"] for b in message.get("content", []) if "toolResult" in b]
        if len(results) != 1:
            raise kit.AdapterError("expected one toolResult in the model's next call, got %d" % len(results))
        result = results[0]
        text = sendable(tool_result_text(result))
        if result.get("status") == "error":
            return ERRORS.error(text)
        if native == ACTIVATE.native and ANSWERS.code(text) is not None:
            return ANSWERS.error(text)  # the skills tool's own "no such skill" answers
        return kit.ok({"content": text})

    def new_turn(self):
        pass  # every step is already its own turn of the agent; strands keeps nothing per turn here

    def select(self, message, tools):
        raise kit.Refused(NO_SELECTION)

    def validate(self, path):
        """strands' strict loading of one skill directory (skill.py:254-299, ``strict=True``: "raise
        on any validation issue"): valid when it loads, its error the one problem otherwise."""
        skill_dir = os.path.join(self.root, path)
        try:
            skill = Skill.from_file(skill_dir, strict=True)
        except (ValueError, FileNotFoundError) as e:  # from_file's documented errors (skill.py:268-270)
            return kit.validation(False, [sendable("%s: %s" % (type(e).__name__, e))])
        except Exception as e:  # anything else: strands would not judge the directory
            raise kit.Refused(e)
        properties = {"name": skill.name, "description": skill.description}
        if skill.license is not None:
            properties["license"] = skill.license
        if skill.compatibility is not None:
            properties["compatibility"] = skill.compatibility
        if skill.allowed_tools is not None:
            properties["allowed-tools"] = skill.allowed_tools  # strands keeps a list (skill.py:182-188)
        if skill.metadata:
            properties["metadata"] = skill.metadata
        return kit.validation(True, [], sendable(properties))



# Strings made sendable as UTF-8 JSON (a file name decoded with surrogateescape): the kit's.
sendable = kit.sendable


if __name__ == "__main__":
    kit.serve(Strands())
