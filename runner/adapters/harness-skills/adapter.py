#!/usr/bin/env python3
"""skillspec adapter for harness-skills: seed 004's `harness/skills.py` (this directory's `harness`
package) behind the adapter protocol, on the Python kit. It declares the `hitl` feature.

It translates and implements nothing: `case_start.config` becomes the product's configuration and
its human, each step one call into `harness.agent.Agent`, and the product's text results and
`ToolError` codes become the protocol's results (README.md has the whole mapping):

- `hitl.enabled` -> `skills.enabled`; `skills_root` -> `skills.dirs` (one directory);
  `hitl.timeout_ms` (else `timeout_ms`) -> `skills.script_timeout_ms`, as written;
  `hitl.script_tool_allowed` -> `tools.allow` gains `run_skill_script`; `confirm: high` always;
- `hitl.session: interactive` -> a human (the product's confirm callback) who gives `hitl.answers`
  in order and denies once they run out; `non-interactive` -> no callback (the product refuses:
  fail closed); the questions the callback received during a call are reported as `asked`;
- `python` -> `sys.executable`, the interpreter the product runs scripts with (the seed's "current
  sys.executable"): the product stands as if that interpreter had started it; `env` -> the
  product's `os.environ` (scripts inherit it, as in the product).

A case without `hitl` (a core-profile case) gets the product's defaults: skills enabled when a root
is set, the script tool not allowed, nobody to ask.
"""
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit", "python"))
import skillspec_kit as kit  # noqa: E402  (first: it takes over stdout before the product talks)

sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness.agent import Agent  # noqa: E402
from harness.registry import ToolError  # noqa: E402

# The product's ToolError codes and the protocol codes they stand for. The product was written with
# the protocol's vocabulary, so each maps to itself; the table says where each comes from.
CODES = {
    "unknown_tool": "registry.call: the tool is not registered (skills disabled) or not in the allowlist",
    "invalid_args": "registry.check_args (arguments against the signature); run_skill_script: NUL in an arg",
    "no_human": "registry.call: a HIGH tool under confirm: high and no human to ask (fail closed)",
    "denied": "registry.call: the human answered anything but yes",
    "unknown_skill": "skills.install.find: no discovered skill has that name",
    "invalid_path": "skills.inside (escapes after .resolve()); not .py; read_skill_file outside references/, assets/",
    "not_found": "skills: the resolved path is not a regular file",
    "too_large": "read_skill_file: the file is over the tool-result limit",
    "not_text": "read_skill_file: the file is not UTF-8",
    "timeout": "run_skill_script: the script ran past the timeout; its process group was killed",
    "spawn_failed": "run_skill_script: the interpreter could not be started",
}
HEADER = re.compile(r"\[exit code (-?\d+)(; output truncated to its first \d+ bytes)?\]\n")
ANSWERS = ("approve", "deny")


class Human:
    """The scripted human behind the product's confirm callback: each question takes the next
    answer, none left means no. `asked` collects the questions (the protocol's form: the tool, the
    skill and script as given, the arguments as they will be passed) until `take_asked()`."""

    def __init__(self, answers):
        self.queue, self.asked = list(answers), []

    def __call__(self, tool, args):
        given = args.get("args")
        self.asked.append({"tool": tool, "skill": args.get("skill"), "script": args.get("script"),
                           "args": list(given) if given is not None else []})
        return bool(self.queue) and self.queue.pop(0) == "approve"

    def take_asked(self):
        asked, self.asked = self.asked, []
        return asked


def product_config(config):
    """(the product's configuration, its human or None) for a case's `config`."""
    hitl = config.raw.get("hitl")
    root = config.skills_root
    dirs = [root] if root else []
    if hitl is None:
        enabled, allowed, interactive, answers, timeout = bool(root), False, False, [], config.timeout_ms
    else:
        if not isinstance(hitl, dict):
            raise kit.AdapterError("config.hitl must be an object, got %r" % (hitl,))
        enabled, allowed = hitl.get("enabled"), hitl.get("script_tool_allowed", False)
        session, answers = hitl.get("session", "non-interactive"), hitl.get("answers") or []
        timeout = hitl["timeout_ms"] if "timeout_ms" in hitl else config.timeout_ms
        if not isinstance(enabled, bool) or not isinstance(allowed, bool):
            raise kit.AdapterError("config.hitl.enabled and script_tool_allowed must be booleans")
        if session not in ("interactive", "non-interactive"):
            raise kit.AdapterError("config.hitl.session must be interactive or non-interactive, got %r" % (session,))
        if not isinstance(answers, list) or any(a not in ANSWERS for a in answers):
            raise kit.AdapterError("config.hitl.answers must be a list of approve/deny, got %r" % (answers,))
        interactive = session == "interactive"
    allow = ["read_skill", "read_skill_file"] + (["run_skill_script"] if allowed else [])
    product = {
        "skills": {"enabled": enabled, "dirs": dirs, "script_timeout_ms": timeout},
        "tools": {"allow": allow},
        "confirm": "high",
    }
    return product, (Human(answers) if interactive else None)


def interpreter(python, env):
    """What `sys.executable` is in a product started by `python`: an absolute path as it is; a bare
    name looked up on the case's PATH, as the shell starting the product would; '' when none is
    found (Python's own value when it cannot tell)."""
    if os.path.isabs(python):
        return python
    if "/" not in python and python:
        # Only absolute PATH entries: a relative one would depend on where the adapter runs.
        path = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep) if os.path.isabs(d))
        return shutil.which(python, path=path) or ""
    return ""


def translate(tool, text):
    """The product's text result as the protocol's value."""
    if tool == "read_skill":
        head, sep, body = text.partition("\n\n")
        lines = head.split("\n")
        if not sep or len(lines) != 2 or not lines[0].startswith("Skill: ") or not lines[1].startswith("Directory: "):
            raise kit.AdapterError("read_skill's result does not start with Skill: / Directory: lines: %r" % text[:200])
        return {"name": lines[0][len("Skill: "):], "body": body, "directory": lines[1][len("Directory: "):]}
    if tool == "read_skill_file":
        return {"content": text}
    if tool == "run_skill_script":
        m = HEADER.match(text)
        if not m:
            raise kit.AdapterError("run_skill_script's result has no [exit code N] header: %r" % text[:200])
        return {"exit_code": int(m[1]), "output": text[m.end():], "truncated": m[2] is not None}
    raise kit.AdapterError("the product answered a tool this adapter does not know: %s" % tool)


class HarnessSkills(kit.Runtime):
    name = "harness-skills"
    version = harness.__version__
    features = ["hitl"]
    process_per_case = True  # a fresh product (and sys.executable, os.environ) for every case

    def start_case(self, config, root):
        product, ask = product_config(config)
        self.saved = (sys.executable, dict(os.environ))
        sys.executable = interpreter(config.python, config.env)
        os.environ.clear()
        os.environ.update(config.env)
        self.product, self.ask = product, ask
        self.agent = Agent(product, ask=ask)

    def discover(self):
        if not self.product["skills"]["enabled"]:
            return []  # harness.skills does not exist in this product: nothing scans
        from harness.skills import discover_skills

        found = discover_skills(self.product["skills"]["dirs"]).values()
        return [kit.loaded(s.dir.name, s.name, s.description, s.body) for s in found]

    def tools(self):
        return self.agent.registry.offered()

    def prompt(self):
        baseline = Agent(dict(self.product, skills={"enabled": False})).system_prompt()
        return self.agent.system_prompt(), baseline

    def call(self, tool, args):
        try:
            text = self.agent.call(tool, args)
        except ToolError as e:
            if e.code not in CODES:
                raise kit.AdapterError("the product raised ToolError %r, not in the adapter's table" % e.code)
            result = kit.error(e.code, message=e.message, **e.fields)
        else:
            result = kit.ok(translate(tool, text))
        return kit.with_asked(result, self.ask.take_asked() if self.ask else [])

    def new_turn(self):
        pass  # the product keeps nothing per turn

    def end_case(self):
        saved = getattr(self, "saved", None)
        if saved is not None:
            sys.executable = saved[0]
            os.environ.clear()
            os.environ.update(saved[1])
            self.saved = None


if __name__ == "__main__":
    kit.serve(HarnessSkills())
