#!/usr/bin/env python3
"""skillspec adapter for PyPI ``skills-ref`` 0.1.1, the open Agent Skills standard's reference
library (its CLI is ``agentskills``), pinned by ``install``.

skills-ref is a validator and a catalog renderer: its whole API is ``validate(dir)``,
``read_properties(dir)``, ``to_prompt([dir, ...])`` and ``find_skill_md(dir)``
(skills_ref/__init__.py:9-18). It has no directory scan, no activation, no tools and no system
prompt of its own. The adapter claims dialect ``agentskills`` 2026-08 in mode ``strict`` (a
validator judges by the specification's rules; it loads nothing leniently) and maps:

- ``validate {path}`` -> ``skills_ref.validate(<root>/<path>)``: ``valid`` is whether it returned
  no error, ``problems`` its errors, ``properties`` ``read_properties(<root>/<path>).to_dict()``
  (what ``agentskills read-properties`` prints) when that does not raise its documented
  ``SkillError``; any other exception of skills-ref is a ``refused`` step with its text;
- ``prompt`` -> ``skills_ref.to_prompt(dirs)`` with the directories a user passes on the command
  line, ``agentskills to-prompt <root>/*/``: the entries of ``skills_root`` (then of
  ``user_skills_root``) that are directories, links to directories included, names starting with
  ``.`` left out, sorted by their bytes, as the shell's glob ``*/`` expands them. That glob is
  the adapter's one choice (skills-ref itself has no scan). ``baseline`` is ``""``: skills-ref
  has no prompt of its own. A ``to_prompt`` that raises (it stops at the first skill whose
  properties it cannot read) is a ``refused`` step with its text;
- ``discover``, ``select``: ``refused`` (no scan, no selection in skills-ref); ``tools``: none;
  any ``call``: ``unknown_tool``; ``new_turn``: nothing.

README.md beside this file gives every mapping with skills-ref's file:line. Run it with the
interpreter of the venv ``install`` made; ``run`` does.
"""

import os
import sys
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit", "python"))
import skillspec_kit as kit  # noqa: E402  (first: it takes over stdout before skills-ref talks)

try:
    import skills_ref  # noqa: E402
    from skills_ref import SkillError  # noqa: E402
except ImportError as e:  # pragma: no cover - the venv of ./install has it
    raise SystemExit("skills-ref adapter: skills-ref is not installed in this interpreter (%s): %s; "
                     "run runner/adapters/skills-ref/install" % (sys.executable, e))

VERSION = "0.1.1"
"""The version this adapter maps (README.md cites its code at this version)."""

NO_SCAN = (
    "skills-ref 0.1.1 has no directory scan: its API takes skill directories one by one "
    "(skills_ref/__init__.py:9-18: __all__ = SkillError, ParseError, ValidationError, "
    "SkillProperties, find_skill_md, validate, read_properties, to_prompt); the CLI "
    "`agentskills` has the commands validate, read-properties and to-prompt (cli.py:27-101), each "
    "on the paths it is given"
)

NO_ACTIVATION = (
    "skills-ref 0.1.1 has no activation: it renders the catalog only (prompt.py:9-58, "
    "to_prompt: the <available_skills> block of name, description and location); it offers no "
    "tool and never returns a skill's body (parser.py:90 reads the frontmatter and drops the body)"
)

NO_TOOLS = (
    "skills-ref 0.1.1 offers the model no tool at all: its API is validate, read_properties, "
    "to_prompt and find_skill_md (skills_ref/__init__.py:9-18); nothing reads a skill's other "
    "files or runs its scripts"
)

NO_SELECTION = "skills-ref 0.1.1 has no skill selection: its API is validate, read_properties and to_prompt (skills_ref/__init__.py:9-18)"



class SkillsRef(kit.Runtime):
    name = "skills-ref"
    version = kit.installed_version("skills-ref", "skills-ref")
    language = "python"
    features = ()
    # The open Agent Skills standard, as the suite pins it (SPEC.md "Dialect agentskills"). A
    # validator: it judges by the specification's rules and never loads anything leniently.
    dialects = [{"name": "agentskills", "version": "2026-08", "mode": "strict"}]
    # skills-ref reads SKILL.md (or skill.md) only: parser.py:23 find_skill_md; no skill.yml.
    formats = ["skill-md"]
    lacks = {
        "scan": NO_SCAN,
        "activate_skill": NO_ACTIVATION,
        "skill_read_reference": NO_TOOLS,
        "skill_run_script": NO_TOOLS,
    }

    def __init__(self):
        self.root = None
        self.config = None

    # -- the case ---------------------------------------------------------------------------

    def start_case(self, config, root):
        # skills-ref is a library with no state: nothing starts. The steps call it afresh.
        self.root = root
        self.config = config

    def end_case(self):
        self.root = None
        self.config = None

    # -- the steps --------------------------------------------------------------------------

    def validate(self, path):
        """``agentskills validate`` and ``agentskills read-properties`` on ``<root>/<path>``, as
        the library functions (validator.py:150-177, parser.py:67-112, models.py:28-39)."""
        skill_dir = Path(self.root) / path
        try:
            errors = skills_ref.validate(skill_dir)
        except Exception as e:  # validate() documents no exception: whatever escapes is its refusal
            raise kit.Refused(e)
        try:
            properties = skills_ref.read_properties(skill_dir).to_dict()
        except SkillError as e:  # ParseError, ValidationError: read_properties' documented errors
            print("skills-ref adapter: read_properties(%s): %s: %s" % (skill_dir, type(e).__name__, e), file=sys.stderr)
            properties = None
        except Exception as e:
            raise kit.Refused(e)
        result = {"valid": errors == [], "problems": [sendable(str(p)) for p in errors]}
        if properties is not None:
            result["properties"] = sendable(properties)
        return result

    def prompt(self):
        """``to_prompt`` over the directories ``agentskills to-prompt <root>/*/`` is given."""
        dirs = glob_dirs(self.config.skills_root)
        dirs += glob_dirs(self.config.raw.get("user_skills_root"))
        try:
            text = skills_ref.to_prompt(dirs)
        except Exception as e:  # to_prompt stops at the first skill it cannot read (prompt.py:37-39)
            raise kit.Refused(e)
        return sendable(text), ""  # skills-ref has no prompt of its own: the baseline is empty

    def discover(self):
        raise kit.Refused(NO_SCAN)

    def select(self, message, tools):
        raise kit.Refused(NO_SELECTION)

    def tools(self):
        return []  # skills-ref offers no tool (NO_ACTIVATION)

    def call(self, tool, args):
        return kit.error("unknown_tool", message="skills-ref 0.1.1 offers no tool, so none named %r "
                         "(its API: validate, read_properties, to_prompt)" % (tool,))

    def new_turn(self):
        pass  # skills-ref keeps nothing between calls


def glob_dirs(directory):
    """What the shell's ``<directory>/*/`` expands to, as the paths a user hands
    ``agentskills to-prompt``: each entry of ``directory`` that is a directory or a link to one,
    except names starting with ``.`` (a glob's ``*`` does not match them), sorted by the bytes of
    their names (the C locale's order). ``None`` (no such setting), or a directory that does
    not exist or is not one, gives nothing, as a glob that matches nothing under ``nullglob``.
    This is the adapter's one choice, not skills-ref's: skills-ref has no scan (README.md)."""
    if directory is None:
        return []
    try:
        with os.scandir(directory) as it:
            entries = [(os.fsencode(e.name), e) for e in it if not e.name.startswith(".") and e.is_dir()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as e:
        raise kit.AdapterError("cannot list %r for the glob %r: %s: %s"
                               % (directory, os.path.join(directory, "*/"), type(e).__name__, e))
    entries.sort(key=lambda pair: pair[0])
    return [Path(directory) / e.name for _, e in entries]



# Strings made sendable as UTF-8 JSON (a file name decoded with surrogateescape): the kit's.
sendable = kit.sendable


if __name__ == "__main__":
    kit.serve(SkillsRef())
