"""The harness agent as far as seed 004 needs it: the tool registry and the system prompt, built
from the product's configuration (a dict, as the product's YAML loads)::

    {"skills": {"enabled": True, "dirs": ["/abs/skills"], "script_timeout_ms": 30000},
     "tools": {"allow": ["read_skill", "read_skill_file", "run_skill_script"]},
     "confirm": "high"}

`harness.skills` is imported only when `skills.enabled` is true: the product generates that
module only then, so with skills disabled nothing of it exists (zero trace).
"""
from harness.registry import Registry

BASE_PROMPT = "You are harness, an agent that helps its user with tasks on this machine."


class Agent:
    def __init__(self, config, ask=None):
        tools = config.get("tools") or {}
        self.registry = Registry(allow=tools.get("allow"), confirm=config.get("confirm", "high"), ask=ask)
        self.prompt_sections = []
        skills = config.get("skills") or {}
        if skills.get("enabled") is True:
            from harness import skills as skills_module  # exists only in a product generated with skills

            skills_module.install(self, skills)

    def system_prompt(self):
        parts = [BASE_PROMPT] + [section() for section in self.prompt_sections]
        return "\n\n".join(part for part in parts if part)

    def call(self, name, args):
        return self.registry.call(name, args)
