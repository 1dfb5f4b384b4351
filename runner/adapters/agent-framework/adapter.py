#!/usr/bin/env python3
"""skillspec adapter for PyPI ``agent-framework-core`` 1.26.0 (Microsoft Agent Framework), pinned by
``install``: its Agent Skills support, ``agent_framework.SkillsProvider`` (``agent_framework/_skills.py``),
built by ``SkillsProvider.from_paths`` and driven through a real ``agent_framework.Agent`` offline.

The model is ``ScriptedClient``, a small chat client of the adapter's own
(``FunctionInvocationLayer`` over ``BaseChatClient``, the composition the framework's own clients
use): no provider, no key, no network. It records what the agent sends it (the instructions, the
tools, the messages) and answers with the function call a step asks for, which then runs through
the framework's own function-invocation loop (argument validation, the provider's ``load_skill`` /
``read_skill_resource`` tools); the adapter reads the ``function_result`` the model receives back in
its next call.

Claims dialect ``agentskills`` 2026-08 in mode ``strict``: the file source skips a skill whose
name, description or compatibility breaks a rule (_skills.py:3810-3833), whose name differs from its
directory (:4036-4044), or whose recognised field is not a text scalar (:3976-3987), with an error
logged. Maps (README.md beside this file gives every mapping with the
package's file:line):

- ``case_start`` -> ``SkillsProvider.from_paths([skills_root, user_skills_root], disable_caching=True,
  disable_load_skill_approval=True, disable_read_skill_resource_approval=True)`` and
  ``Agent(client=ScriptedClient(), context_providers=[provider])``, and a baseline ``Agent`` with no
  provider; the order of the two scopes is the adapter's one choice (the first found wins,
  _skills.py:3294-3302);
- ``discover`` -> the provider's source pipeline (``DeduplicatingSkillsSource(FileSkillsSource)``, as
  ``from_paths`` built it) asked for its skills, as ``before_run`` asks it on every turn;
- ``prompt`` -> a turn each on the agent and the baseline: the ``instructions`` the client received;
- ``tools`` -> a turn: the names of the tools the client received (``load_skill`` reported as
  ``activate_skill``, ``read_skill_resource`` as ``skill_read_reference``);
- ``call`` -> the model calls the native tool; ``content`` is the function result the model
  receives; the provider's own error strings and the loop's error results are mapped to codes.

Run it with the interpreter of the venv ``install`` made; ``run`` does.
"""

import json
import logging
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit", "python"))
import skillspec_kit as kit  # noqa: E402  (first: it takes over stdout before the runtime talks)

# agent-framework logs its diagnostics (a skill skipped, a name that breaks a rule, a duplicate) with
# `logging` at WARNING and ERROR: they go to stderr, which the runner keeps (the last 8 KiB).
logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                    format="agent-framework: %(levelname)s %(name)s: %(message)s")

try:
    from agent_framework import (  # noqa: E402
        Agent,
        BaseChatClient,
        ChatResponse,
        Content,
        FunctionInvocationLayer,
        Message,
        SkillsProvider,
    )
    from agent_framework._skills import SkillsSourceContext  # noqa: E402  (the provider's own argument type)
except ImportError as e:  # pragma: no cover - the venv of ./install has it
    raise SystemExit("agent-framework adapter: agent-framework-core is not installed in this interpreter (%s): %s; "
                     "run runner/adapters/agent-framework/install" % (sys.executable, e))

VERSION = "1.26.0"
"""The version this adapter maps (README.md cites its code at this version)."""

ACTIVATE = kit.MappedTool("activate_skill", SkillsProvider.LOAD_SKILL_TOOL_NAME, args={"name": "skill_name"})
"""``load_skill(skill_name)``, _skills.py:2804-2817 (the tool), 2911-2944 (what it answers)."""

READ = kit.MappedTool("skill_read_reference", SkillsProvider.READ_SKILL_RESOURCE_TOOL_NAME,
                      args={"skill": "skill_name", "path": "resource_name"})
"""``read_skill_resource(skill_name, resource_name)``, _skills.py:2818-2835 (the tool), 3006-3064."""

TOOLS = kit.ToolMap(ACTIVATE, READ)

# The provider's own answers: strings its tools return, which the loop hands the model as the
# function result (no exception). Matched only on a result of the tool named.
LOAD_ANSWERS = kit.ErrorMap(
    kit.rule(r"^Error: Skill '.*' not found\.$", "unknown_skill",
             "_skills.py:2937-2939: load_skill's answer for a name no loaded skill has (a skill whose "
             "file is exactly these words would be read the same way)"),
    kit.rule(r"^Error: Skill name cannot be empty\.$", "unknown_skill",
             "_skills.py:2934-2935: load_skill's answer for an empty or white-space name; no loaded "
             "skill has such a name", guess=True),
)

READ_ANSWERS = kit.ErrorMap(
    kit.rule(r"^Error: Skill name cannot be empty\.$", "unknown_skill",
             "_skills.py:3045-3046: an empty or white-space skill_name; no loaded skill has such a name",
             guess=True),
    kit.rule(r"^Error: Resource name cannot be empty\.$", "invalid_path",
             "_skills.py:3048-3049: an empty or white-space resource_name (an empty path text)", guess=True),
    kit.rule(r"^Error: Skill '.*' not found\.$", "unknown_skill",
             "_skills.py:3051-3053: read_skill_resource's answer for a skill name no loaded skill has"),
    kit.rule(r"^Error: Resource '.*' not found in skill '.*'\.$", "not_found",
             "_skills.py:3055-3057: the name is not among the resources listed at scan time "
             "(_skills.py:1925-1936, a case-insensitive lookup); one text for a missing file and for a "
             "path the scan never lists (`..`, absolute, SKILL.md, another extension, a link, deeper "
             "than two levels)", guess=True),
)

# Results of the function-invocation loop itself, and exceptions a tool raised (the loop answers
# the model "Error: Function failed." and keeps the exception's text on the result, _tools.py:
# 2095-2129); the adapter matches "<result> | exception: <text>".
LOOP_ERRORS = kit.ErrorMap(
    kit.rule(r'^Error: Requested function ".*" not found\.', "unknown_tool",
             "_tools.py:2326-2334: the loop's result for a function the agent was not given"),
    kit.rule(r"^Error: Argument parsing failed\.", "invalid_args",
             "_tools.py:2132-2157: the tool's input check (a missing, extra or non-string argument, "
             "arguments that are not an object)"),
    kit.rule(r"^Error: Function failed\. \| exception: Resource file '.*' references a path outside the skill directory\.$",
             "invalid_path", "_skills.py:3767-3768: the read-time check of a listed resource"),
    kit.rule(r"^Error: Function failed\. \| exception: Resource file '.*' has a symbolic link or reparse point in its path",
             "invalid_path", "_skills.py:3779-3783: a link below the configured root, found at read time"),
    kit.rule(r"^Error: Function failed\. \| exception: Resource file '.*' not found in skill directory ",
             "not_found", "_skills.py:3774-3775: a listed resource that is no longer a regular file at read time"),
    kit.rule(r"^Error: Function failed\. \| exception: '.*' codec can't decode byte",
             "not_text", "_skills.py:369: Path.read_text(encoding='utf-8') raised UnicodeDecodeError"),
    kit.rule(r"^Error: Function failed\. \| exception: \[Errno \d+\] ",
             "not_found", "_skills.py:369: Path.read_text raised an OSError (unreadable, a directory)", guess=True),
)

NO_RUN = (
    "agent-framework-core 1.26.0 ships no way to run a skill's file scripts: its run_skill_script tool "
    "hands a file-based script to a SkillScriptRunner the host must supply (FileSkillScript.run raises "
    "\"Script '...' requires a runner. Provide a script_runner for file-based scripts.\", "
    "agent_framework/_skills.py:797-799), and the package has no runner (SkillScriptRunner is a "
    "Protocol, _skills.py:1973-2019; from_paths' script_runner defaults to None: \"When None, "
    "file-based scripts are not executable\", _skills.py:2478-2479)"
)

NO_VALIDATE = (
    "agent-framework-core 1.26.0 has no validator: the rules are checked inside the file scan "
    "(FileSkillsSource._extract_frontmatter and _validate_skill_metadata, private, "
    "agent_framework/_skills.py:3789-4046), which skips a skill that breaks one and logs why"
)



class ScriptedClient(FunctionInvocationLayer, BaseChatClient):
    """A chat client with no provider: each call is recorded (the messages and the options, which
    hold the instructions and the tools), and answered with the next planned function call, or,
    with none planned, with the text ``done``. ``FunctionInvocationLayer`` runs the planned call
    through the framework's own loop, as it does for OpenAIChatClient and the others."""

    def __init__(self):
        super().__init__()
        self.calls = []
        self.plan = []
        self.ids = 0

    async def _inner_get_response(self, *, messages, stream, options, **kwargs):
        if stream:
            raise kit.AdapterError("the scripted client does not stream (the adapter never asks it to)")
        self.calls.append({"messages": list(messages), "options": dict(options)})
        if self.plan:
            name, arguments = self.plan.pop(0)
            self.ids += 1
            call = Content.from_function_call(call_id="call-%d" % self.ids, name=name, arguments=arguments)
            return ChatResponse(messages=[Message(role="assistant", contents=[call])])
        return ChatResponse(messages=[Message(role="assistant", contents=["done"])])


def instructions_of(call):
    """The instructions the client received in ``call`` (the system prompt; the agent has no
    instructions of its own, so they are the provider's catalog block or nothing)."""
    text = call["options"].get("instructions")
    if text is None:
        return ""
    if not isinstance(text, str):
        raise kit.AdapterError("the instructions the client received are not a string: %r" % (type(text),))
    return text


def tool_names_of(call):
    return [getattr(t, "name", None) or t.get("name") for t in call["options"].get("tools") or []]


class AgentFramework(kit.Runtime):
    name = "agent-framework-core"
    version = kit.installed_version("agent-framework-core", "agent-framework")
    language = "python"
    features = ()
    # The open Agent Skills standard, as the suite pins it: "Follows the progressive-disclosure
    # pattern from the Agent Skills specification <https://agentskills.io/>" (_skills.py:2120-2121),
    # "Parses the ---delimited frontmatter block for all agentskills.io specification fields"
    # (_skills.py:3897-3900). Strict: a skill that breaks
    # a rule of the name, description, compatibility or the field types is skipped, not loaded.
    dialects = [{"name": "agentskills", "version": "2026-08", "mode": "strict"}]
    # SKILL.md exactly (SKILL_FILE_NAME, _skills.py:2022, 4026, 4083); no skill.yml.
    formats = ["skill-md"]
    # read_skill_resource returns only files the scan listed inside the skill's own directory
    # (_skills.py:3417-3571, 3754-3786).
    read_scope = "skill"
    tool_names = TOOLS.names()
    lacks = {
        "skill_run_script": NO_RUN,
        "validate": NO_VALIDATE,
    }

    def __init__(self):
        self.sources = []
        self.provider = None
        self.agent = None
        self.client = None
        self.baseline = None
        self.baseline_client = None

    # -- the case ---------------------------------------------------------------------------

    def start_case(self, config, root):
        # The project's directory first, the user's second: the file source keeps the first skill
        # of a name it finds (_skills.py:3294-3302). The adapter's one choice (README.md).
        self.sources = [d for d in (config.skills_root, config.user_skills_root) if d is not None]
        self.client = ScriptedClient()
        self.baseline_client = ScriptedClient()
        try:
            self.provider = SkillsProvider.from_paths(
                list(self.sources),
                # Re-discover on every agent run (_skills.py:2504-2506), so a turn after the case
                # changed the tree sees the change, as `discover` ("scans the root again") needs.
                disable_caching=True,
                # The operator's approval of the two read-only tools (_skills.py:2511-2517); without
                # it every call is an approval request and nothing runs (README.md, "The one choice").
                disable_load_skill_approval=True,
                disable_read_skill_resource_approval=True,
            )
            self.agent = Agent(client=self.client, context_providers=[self.provider])
            self.baseline = Agent(client=self.baseline_client)
        except Exception as e:  # the framework would not start
            raise kit.Refused(e)

    def end_case(self):
        self.provider = self.agent = self.client = None
        self.baseline = self.baseline_client = None

    async def turn(self, agent, client, function_call=None):
        """One run of ``agent``: the client's calls during it (the first shows the instructions and
        tools; with ``function_call``, the second carries its result), and the agent's response."""
        first = len(client.calls)
        if function_call is not None:
            client.plan.append(function_call)
        try:
            response = await agent.run("skillspec step")
        finally:
            client.plan.clear()
        return client.calls[first:], response

    # -- the steps --------------------------------------------------------------------------

    async def discover(self):
        # The provider's source pipeline, as from_paths built it (_skills.py:2551-2555): the same
        # get_skills call its before_run makes on every turn (_skills.py:2703-2704, 2659).
        source = self.provider._source
        skills = await source.get_skills(SkillsSourceContext(agent=self.agent))
        out = []
        for skill in skills:
            fm = skill.frontmatter
            path = getattr(skill, "path", None)
            extra = {"location": sendable(os.path.join(path, "SKILL.md"))} if path is not None else {}
            # body: what the runtime hands the model for the skill, load_skill's text: the whole
            # SKILL.md file with the listing blocks appended (FileSkill.get_content, _skills.py:1901-1923).
            body = await skill.get_content()
            out.append(kit.loaded(sendable(fm.name), sendable(fm.name), sendable(fm.description),
                                  sendable(body), format=None, **extra))
        return out

    async def prompt(self):
        calls, _ = await self.turn(self.agent, self.client)
        base, _ = await self.turn(self.baseline, self.baseline_client)
        return sendable(instructions_of(calls[0])), sendable(instructions_of(base[0]))

    async def tools(self):
        calls, _ = await self.turn(self.agent, self.client)
        return TOOLS.spec_names(tool_names_of(calls[0]))

    async def call(self, tool, args):
        native, native_args = TOOLS.native_call(tool, args)
        # The arguments as a provider hands them to the loop: the JSON text the model wrote.
        calls, response = await self.turn(self.agent, self.client,
                                          (native, json.dumps(native_args, ensure_ascii=False)))
        if len(calls) < 2:
            # With no tool at all (the provider adds none when it loaded no skill, _skills.py:2706-2707)
            # the loop executes nothing and ends the run with the model's call unanswered
            # (_tools.py:2945-2947): the runtime took no call. Its own signal: that response.
            unanswered = [c.name for m in response.messages for c in m.contents if c.type == "function_call"]
            if unanswered == [native] and not calls[0]["options"].get("tools"):
                raise kit.Refused(
                    "agent-framework executed no function: the agent has no tools, and its run ended with the "
                    "model's function_call %r unanswered (agent_framework/_tools.py:2945-2947)" % (native,))
            raise kit.AdapterError("the agent ended its run without running the function %r" % (native,))
        message = calls[1]["messages"][-1]
        results = [c for c in message.contents if c.type == "function_result"]
        if len(results) != 1:
            raise kit.AdapterError("expected one function_result in the client's next call, got %d (%s)"
                                   % (len(results), [c.type for c in message.contents]))
        result = results[0]
        value = result.result
        if result.exception is not None:  # the loop's own answers and a tool's exception
            return LOOP_ERRORS.error(sendable("%s | exception: %s" % (value, result.exception)))
        if not isinstance(value, str):
            raise kit.AdapterError("the function result is not text: %r" % (type(value),))
        if len(value) > kit.MAX_LINE:
            # The runtime answered (it read the file whole); no protocol line can carry the answer
            # (PROTOCOL.md "Transport", 16 MiB), and encoding it would exhaust memory first.
            raise kit.AdapterError(
                "%s answered with a result of %d characters, more than one protocol line can carry "
                "(%d bytes); it is not sent" % (native, len(value), kit.MAX_LINE))
        text = sendable(value)
        if native == ACTIVATE.native:
            if LOAD_ANSWERS.code(text) is not None:
                return LOAD_ANSWERS.error(text)
            return kit.ok({"content": text})
        if native == READ.native:
            if READ_ANSWERS.code(text) is not None:
                return READ_ANSWERS.error(text)
            # The runtime took the call, so `args` was an object of its two keys.
            return kit.ok({"skill": args["skill"], "path": args["path"], "content": text})
        return kit.ok({"content": text})

    def new_turn(self):
        pass  # every step is already its own run of the agent; the provider keeps nothing per turn


# Strings made sendable as UTF-8 JSON (a file name decoded with surrogateescape): the kit's.
sendable = kit.sendable


if __name__ == "__main__":
    kit.serve(AgentFramework())
