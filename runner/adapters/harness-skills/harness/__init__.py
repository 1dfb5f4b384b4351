"""harness: the few pieces of the "harness" agent product that seed 004's `harness/skills.py` relies
on, written here so that the module can run and be tested.

- `registry`: the tool registry (risk levels, the tool allowlist, per-call human confirmation under
  `confirm`, the tool-result truncation rule). In the product it exists already; this is a
  stand-in of the size the seed's `@registry.tool(name=..., risk=HIGH)` implies.
- `agent`: builds the registry and the system prompt from the product's configuration, and imports
  `skills` only when `skills.enabled` (the product generates `skills.py` only then).
- `skills`: the seed's module (L1, L2, L3), the one the seed budgets at about 60-130 lines.
"""

__version__ = "0.1.0"
