#!/usr/bin/env python3
"""skillspec adapter for PyPI ``google-adk`` 2.13.0 (Google's Agent Development Kit), pinned by
``install``: its Agent Skills support, ``google.adk.skills`` (``list_skills_in_dir``,
``load_skill_from_dir``, ``Frontmatter``) and ``google.adk.tools.skill_toolset.SkillToolset``
(tools ``load_skill`` and ``load_skill_resource``), driven through a real ``LlmAgent`` and
``Runner`` offline.

The model is ``ScriptedModel``, a small ``google.adk.models.base_llm.BaseLlm`` of the adapter's
own: no provider, no key, no network. It records every ``LlmRequest`` the agent's flow builds (the
system instruction, the tools, the contents) and answers with the function call a step asks for,
which then runs through ADK's own tool pipeline (the flow's function-call handling, the toolset's
tools); the adapter reads the ``function_response`` the model receives in its next request.

Claims dialect ``agentskills`` 2026-08 in mode ``strict``: ``list_skills_in_dir`` skips, with a
warning, every skill whose frontmatter ``Frontmatter`` refuses (name rules, description and
compatibility lengths, field types) or whose name does not match its directory
(skills/_utils.py:536-589, skills/models.py:89-132). README.md beside this file gives every mapping
with ADK's file:line:

- ``case_start`` -> for each of ``[user_skills_root, skills_root]`` that is set,
  ``list_skills_in_dir(dir)`` and ``load_skill_from_dir(dir/<id>)`` for each id it lists; one
  ``SkillToolset(skills=..., discovery_mode=SkillDiscoveryMode.EAGER)``; ``LlmAgent(model=
  ScriptedModel(), tools=[toolset])`` run by a ``Runner`` over an ``InMemorySessionService``; and a
  baseline agent with no toolset;
- ``discover`` -> the same scan again, a new toolset and agent on the same session; the toolset's
  ``skills`` in its order;
- ``prompt`` -> a turn each on the agent and the baseline: the ``system_instruction`` the model
  received;
- ``tools`` -> a turn: the names of the tools the model received (``load_skill`` reported as
  ``activate_skill``, ``load_skill_resource`` as ``skill_read_reference``);
- ``call`` -> the model calls the tool; the ``function_response`` it receives back, its
  ``error_code`` mapped to a code;
- ``validate {path}`` -> ``_validate_skill_dir`` (skills/_utils.py:458-510), ADK's validator.

Run it with the interpreter of the venv ``install`` made; ``run`` does.
"""

import json
import logging
import os
import sys
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit", "python"))
import skillspec_kit as kit  # noqa: E402  (first: it takes over stdout before ADK talks)

import base64  # noqa: E402
# ADK logs its diagnostics (a skill skipped, a tool not found) with `logging` at WARNING: they go
# to stderr, which the runner keeps (the last 8 KiB) for the report.
logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="google-adk: %(levelname)s %(name)s: %(message)s")
# One line per model call about token usage the scripted model does not report: noise only.
logging.getLogger("google_adk.google.adk.telemetry._metrics").setLevel(logging.ERROR)

try:
    from google.adk.agents import LlmAgent  # noqa: E402
    from google.adk.models.base_llm import BaseLlm  # noqa: E402
    from google.adk.models.llm_response import LlmResponse  # noqa: E402
    from google.adk.runners import Runner  # noqa: E402
    from google.adk.sessions import InMemorySessionService  # noqa: E402
    from google.adk.skills import list_skills_in_dir, load_skill_from_dir  # noqa: E402
    from google.adk.skills import _utils as skill_utils  # noqa: E402  (the validator, below)
    from google.adk.tools.skill_toolset import SkillDiscoveryMode, SkillToolset  # noqa: E402
    from google.genai import types  # noqa: E402
    from pydantic import PrivateAttr  # noqa: E402
except ImportError as e:  # pragma: no cover - the venv of ./install has it
    raise SystemExit("google-adk adapter: google-adk is not installed in this interpreter (%s): %s; "
                     "run runner/adapters/google-adk/install" % (sys.executable, e))

VERSION = "2.13.0"
"""The version this adapter maps (README.md cites its code at this version)."""

APP = "skillspec"
USER = "skillspec"

ACTIVATE = kit.MappedTool("activate_skill", "load_skill", args={"name": "skill_name"})
"""ADK's activation tool: ``LoadSkillTool``, tools/skill_toolset.py:857-957."""

READ = kit.MappedTool("skill_read_reference", "load_skill_resource",
                      args={"skill": "skill_name", "path": "file_path"},
                      result={"skill_name": "skill", "file_path": "path"})
"""ADK's reading tool: ``LoadSkillResourceTool``, tools/skill_toolset.py:1046-1273."""

TOOLS = kit.ToolMap(ACTIVATE, READ)

ERRORS = kit.ErrorMap(
    # The skill tools answer a failure with {"error": text, "error_code": CODE}; the adapter
    # matches "CODE: text". A response with "error" and no code is matched on its text alone.
    kit.rule(r"^SKILL_NOT_FOUND: ", "unknown_skill",
             "tools/skill_toolset.py:909-913 (load_skill), 1117-1121 (load_skill_resource): the "
             "toolset has no skill of that name (and no registry is configured)"),
    kit.rule(r"^INVALID_ARGUMENTS: ", "invalid_args",
             "tools/skill_toolset.py:889-893, 1091-1100: skill_name (or file_path) missing or empty"),
    kit.rule(r"^INVALID_RESOURCE_PATH: ", "invalid_path",
             "tools/skill_toolset.py:1141-1147: the path does not start with references/, assets/ "
             "or scripts/"),
    kit.rule(r"^RESOURCE_NOT_FOUND(_FATAL)?: ", "not_found",
             "tools/skill_toolset.py:1149-1170: no file of that name was loaded into the skill's "
             "resources (missing, or never loaded: load_skill_from_dir keeps only regular files, "
             "skills/_utils.py:86-112); the second miss of an invocation says _FATAL",
             guess=True),
    kit.rule(r"^Invoking `.*\(\)` failed as no tool with that name is available\.", "unknown_tool",
             "flows/llm_flows/tools/_error_handler.py:82-98: the flow's answer to the model for a "
             "tool name the agent does not have"),
)

NO_RUN = (
    "google-adk 2.13.0's SkillToolset offers run_skill_script only when a code executor or an "
    "environment is configured (tools/skill_toolset.py:2271-2305: _offers_script_tool, get_tools "
    "drops the tool otherwise); a default LlmAgent has none (agent.code_executor is None), so the "
    "model is never offered a script tool"
)

NO_NESTED = (
    "google-adk 2.13.0's list_skills_in_dir looks at the base path's direct children only "
    "(skills/_utils.py:565-577: sorted(skills_base_path.iterdir()), each child a skill whose name "
    "must equal the child's name); it never descends further"
)

NO_SELECTION = "google-adk 2.13.0's SkillToolset has no skill selection: every skill it holds is in the catalog (tools/skill_toolset.py:2776-2779)"



class ScriptedModel(BaseLlm):
    """An ADK model with no provider: each ``LlmRequest`` is recorded and answered with the next
    planned function call, or, with none planned, with the text ``done`` (which ends the
    invocation). One non-streaming ``LlmResponse`` per call, as ``generate_content_async``'s
    contract asks (models/base_llm.py:137-160)."""

    model: str = "skillspec-scripted"
    _calls: list = PrivateAttr(default_factory=list)
    _plan: list = PrivateAttr(default_factory=list)
    _ids: int = PrivateAttr(default=0)

    async def generate_content_async(self, llm_request, stream=False):
        self._calls.append(llm_request)
        if self._plan:
            name, args = self._plan.pop(0)
            self._ids += 1
            call = types.FunctionCall(name=name, args=args, id="skillspec-call-%d" % self._ids)
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))
        else:
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part.from_text(text="done")]))


def skill_location(skill):
    """The absolute path of the skill's ``SKILL.md``: the directory ADK recorded in ``_uri``
    (``skill_dir.as_uri()`` of the resolved directory, skills/_utils.py:220, 249) joined with
    ``SKILL.md``; ``None`` when ADK recorded none."""
    uri = getattr(skill, "_uri", None)
    if not uri or not uri.startswith("file://"):
        return None
    directory = urllib.request.url2pathname(urllib.parse.urlparse(uri).path)
    return os.path.join(directory, "SKILL.md")


class Session:
    """One ``LlmAgent`` run by a ``Runner`` over one in-memory session, with its scripted model."""

    def __init__(self, tools):
        self.model = ScriptedModel()
        self.agent = LlmAgent(name="skillspec", model=self.model, tools=list(tools))
        self.service = InMemorySessionService()
        self.runner = Runner(app_name=APP, agent=self.agent, session_service=self.service)
        self.session_id = None

    def replace_tools(self, tools):
        """A new agent with ``tools`` on the same session (ADK's own way to change a toolset's
        skills is a new toolset, ``clone_with_updated_skills``, tools/skill_toolset.py:2711-2732)."""
        self.agent = LlmAgent(name="skillspec", model=self.model, tools=list(tools))
        self.runner = Runner(app_name=APP, agent=self.agent, session_service=self.service)

    async def turn(self, function_call=None):
        """One user turn: the model's requests during it (the first shows the prompt and tools;
        with ``function_call``, the second carries its response)."""
        if self.session_id is None:
            session = await self.service.create_session(app_name=APP, user_id=USER)
            self.session_id = session.id
        first = len(self.model._calls)
        if function_call is not None:
            self.model._plan.append(function_call)
        message = types.Content(role="user", parts=[types.Part.from_text(text="skillspec step")])
        try:
            async for _event in self.runner.run_async(user_id=USER, session_id=self.session_id, new_message=message):
                pass
        finally:
            self.model._plan.clear()
        return self.model._calls[first:]

    async def close(self):
        await self.runner.close()


class GoogleAdk(kit.Runtime):
    name = "google-adk"
    version = kit.installed_version("google-adk", "google-adk")
    language = "python"
    features = ()
    # The open Agent Skills standard, as the suite pins it (SPEC.md "Dialect agentskills"):
    # skills/models.py:47-50 cites "https://agentskills.io/specification#allowed-tools-field" for
    # its Frontmatter; the ADK docs: "based on the Agent Skill specification". Strict: an invalid
    # skill is not listed (skills/_utils.py:578-588), and load_skill_from_dir raises on one
    # (skills/_utils.py:206-232).
    dialects = [{"name": "agentskills", "version": "2026-08", "mode": "strict"}]
    # SKILL.md, or skill.md when SKILL.md is absent (skills/_utils.py:190-195); no skill.yml.
    formats = ["skill-md"]
    tool_names = TOOLS.names()
    # load_skill_resource returns only what load_skill_from_dir loaded from the skill's own
    # references/, assets/ and scripts/ (tools/skill_toolset.py:1129-1147, skills/_utils.py:234-236):
    # the skill's own files (the default scope, not sent).
    lacks = {
        "skill_run_script": NO_RUN,
        "nested-scan": NO_NESTED,
    }

    def __init__(self):
        self.root = None
        self.sources = []
        self.toolset = None
        self.session = None
        self.baseline = None

    # -- the case ---------------------------------------------------------------------------

    def scan(self):
        """The skills of the sources, as an ADK user loads a skills directory: the lenient listing
        (``list_skills_in_dir``: invalid skills are logged and skipped) and the full load of each
        skill it lists (``load_skill_from_dir``), the broader scope first (README.md, "The
        choices"). Exceptions are ADK's own and propagate."""
        skills = []
        for source in self.sources:
            for skill_id in list_skills_in_dir(source):
                skills.append(load_skill_from_dir(os.path.join(source, skill_id)))
        return skills

    def build(self, skills):
        # Raises ValueError on a duplicate name (tools/skill_toolset.py:2185-2190).
        return SkillToolset(skills=skills, discovery_mode=SkillDiscoveryMode.EAGER)

    def start_case(self, config, root):
        self.root = root
        self.sources = [d for d in (config.user_skills_root, config.skills_root) if d is not None]
        try:
            self.toolset = self.build(self.scan())
            self.session = Session([self.toolset])
            self.baseline = Session([])
        except Exception as e:  # ADK would not start: a scan or the toolset raised
            raise kit.Refused(e)

    async def end_case(self):
        for session in (self.session, self.baseline):
            if session is not None:
                try:
                    await session.close()
                except Exception as e:  # pragma: no cover - nothing of the case depends on it
                    kit._log("google-adk adapter: closing a runner raised %s: %s" % (type(e).__name__, e))
        self.session = self.baseline = self.toolset = None

    # -- the steps --------------------------------------------------------------------------

    async def discover(self):
        try:
            skills = self.scan()
            toolset = self.build(skills)
        except Exception as e:  # the rescan raised: ADK would not load the skills
            raise kit.Refused(e)
        self.toolset = toolset
        self.session.replace_tools([toolset])
        out = []
        for skill in toolset.skills:
            location = skill_location(skill)
            extra = {"location": sendable(location)} if location is not None else {}
            out.append(kit.loaded(sendable(skill.name), sendable(skill.name), sendable(skill.description),
                                  sendable(skill.instructions), format=None, **extra))
        return out

    async def prompt(self):
        calls = await self.session.turn()
        base = await self.baseline.turn()
        return sendable(system_text(calls[0])), sendable(system_text(base[0]))

    async def tools(self):
        calls = await self.session.turn()
        names = tool_names_of(calls[0])
        return TOOLS.spec_names(names)

    async def call(self, tool, args):
        native, native_args = TOOLS.native_call(tool, args)
        if not isinstance(native_args, dict):
            # genai's FunctionCall.args is an object (dict[str, Any]): the model cannot send anything else.
            raise kit.AdapterError("the arguments %s cannot be expressed: a google.genai FunctionCall's args is an object"
                                   % kit._describe(args))
        try:
            calls = await self.session.turn((native, native_args))
        except Exception as e:  # the invocation raised out of ADK: no response reached the model
            raise kit.Refused(e)
        call_id = "skillspec-call-%d" % self.session.model._ids
        if len(calls) < 2:
            raise kit.AdapterError("the agent ended its turn without answering the function call %r" % (native,))
        response, injected = function_response(calls[1], call_id)
        longest = longest_string([response, injected])
        if longest > kit.MAX_LINE:
            # The runtime answered (it had read the file whole when it loaded the skill); no
            # protocol line can carry the answer. Transport only: nothing of the runtime's is bounded.
            raise kit.AdapterError(
                "the runtime answered %s with a string of %d characters, longer than a protocol line "
                "(%d bytes); it is not sent" % (native, longest, kit.MAX_LINE))
        if isinstance(response, dict) and response.get("error"):
            text = str(response["error"])
            if response.get("error_code"):
                text = "%s: %s" % (response["error_code"], text)
            return ERRORS.error(sendable(text))
        if native == ACTIVATE.native:
            # What the model receives is the response object; `content` is its JSON text.
            return kit.ok({"content": sendable(json.dumps(response, ensure_ascii=False, default=str))})
        value = dict(response) if isinstance(response, dict) else {"response": response}
        if native == READ.native:
            value = READ.spec_value(value)
        if injected:
            value["injected"] = injected  # binary content ADK adds to the next request (skill_toolset.py:1199-1273)
        return kit.ok(sendable(value))

    def new_turn(self):
        pass  # every step is already its own invocation of the agent

    def select(self, message, tools):
        raise kit.Refused(NO_SELECTION)

    def validate(self, path):
        """ADK's validator, ``_validate_skill_dir`` (skills/_utils.py:458-510: "Validate a skill
        directory without fully loading it ... Returns: List of problem strings. Empty list means
        the skill is valid."): valid when it reports no problem. ``properties`` are the
        ``Frontmatter`` ``_read_skill_properties`` reads (skills/_utils.py:513-533), when it reads
        one."""
        skill_dir = os.path.join(self.root, path)
        try:
            problems = skill_utils._validate_skill_dir(skill_dir)
        except Exception as e:  # anything it does not catch itself: it would not judge the directory
            raise kit.Refused(e)
        properties = None
        try:
            frontmatter = skill_utils._read_skill_properties(skill_dir)
        except Exception:  # it read no properties
            frontmatter = None
        if frontmatter is not None:
            properties = {}
            given = frontmatter.model_fields_set
            for field, key in (("name", "name"), ("description", "description"), ("license", "license"),
                               ("compatibility", "compatibility"), ("allowed_tools", "allowed-tools"),
                               ("metadata", "metadata")):
                if field in given:
                    properties[key] = getattr(frontmatter, field)
            properties = sendable(json_safe(properties))
        return kit.validation(not problems, [sendable(str(p)) for p in problems], properties)


def system_text(request):
    """The system instruction of an ``LlmRequest`` as the model receives it (a string,
    models/llm_request.py:149-252), ``""`` when there is none."""
    instruction = request.config.system_instruction if request.config is not None else None
    if instruction is None:
        return ""
    if isinstance(instruction, str):
        return instruction
    raise kit.AdapterError("the system instruction is not a string: %s" % type(instruction).__name__)


def tool_names_of(request):
    """The names of the function declarations the model received, in order."""
    names = []
    for tool in (request.config.tools or []) if request.config is not None else []:
        for declaration in getattr(tool, "function_declarations", None) or []:
            names.append(declaration.name)
    return names


def function_response(request, call_id):
    """The response to the call ``call_id`` in the contents the model receives, and any binary
    content ADK injected after it (as ``{"text", "mime_type", "data_base64"}`` items)."""
    found, injected, after = None, [], False
    for content in request.contents or []:
        for part in content.parts or []:
            fr = part.function_response
            if fr is not None and fr.id == call_id:
                found, after = fr, True
                continue
            if after and part.inline_data is not None:
                injected.append({"mime_type": part.inline_data.mime_type,
                                 "data_base64": base64.b64encode(part.inline_data.data or b"").decode("ascii")})
            elif after and part.text is not None:
                injected.append({"text": part.text})
    if found is None:
        raise kit.AdapterError("no function_response for %s in the model's next request" % call_id)
    return found.response, injected


def longest_string(value):
    """The length of the longest string in ``value`` (keys and items included)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return max([0] + [max(longest_string(k), longest_string(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return max([0] + [longest_string(v) for v in value])
    return 0


def json_safe(value):
    """``value`` with what JSON has no type for (a YAML date in metadata, bytes) as its ``str()``."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


# Strings made sendable as UTF-8 JSON (a file name decoded with surrogateescape): the kit's.
sendable = kit.sendable


if __name__ == "__main__":
    kit.serve(GoogleAdk())
