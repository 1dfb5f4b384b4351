"""Agent Skills for harness, generated only when `skills.enabled`: L1 (skills listed in the prompt with their
absolute directory), L2 (`read_skill`), L3 (`read_skill_file`, read-only; `run_skill_script`, HIGH risk: not in
the default tool allowlist, confirmed by the user on every call, refused when nobody can be asked). Its path
fence is input validation, not a security boundary (isolation is Docker's job): local, trusted use only; never
expose an agent that allows run_skill_script to the public internet.
"""
import contextlib
import os
import re
import signal
import subprocess
import sys
from collections import namedtuple
from pathlib import Path

from harness.registry import HIGH, LOW, ToolError

Skill = namedtuple("Skill", "name description dir body")


def parse_frontmatter(text):
    """(meta, body): `key: value` lines between a first line `---` and the next line `---`."""
    m = re.match(r"---\r?\n(.*?)^---\r?$\n?", text, re.S | re.M)
    if not m:
        return {}, text
    meta = {}
    for key, colon, value in (line.rstrip("\r").partition(":") for line in m[1].split("\n")):
        value = value.strip()
        if colon and key and key == key.strip():
            meta[key] = value[1:-1] if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"" else value
    return meta, text[m.end():]


def discover_skills(dirs):
    """{name: Skill} for each `<dir>/<child>/SKILL.md` with a name and a description: dirs in order, children by
    name, first name wins."""
    found = {}
    for root in dirs:
        try:
            children = sorted(Path(root).resolve().iterdir())
        except (OSError, ValueError):
            continue
        for child in children:
            try:
                if not (child / "SKILL.md").is_file():
                    continue
                meta, body = parse_frontmatter((child / "SKILL.md").read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                continue
            skill = Skill(meta.get("name", ""), meta.get("description", ""), child.resolve(), body.strip())
            ok = skill.name and skill.description and f"{skill.name}{skill.description}{skill.dir}".isprintable()
            if ok and skill.name not in found:  # name and description are the standard's required fields
                found[skill.name] = skill
    return found


USE = (("read_skill", "to read a skill's instructions"), ("read_skill_file", "to read its references/ and assets/ files"),
       ("run_skill_script", "to run its Python scripts (the user confirms each run)"))


def timeout_ms(setting):
    """The script timeout: 1 to 86,400,000 ms written in ASCII digits; anything else gives 30 s."""
    text = "" if setting is None or isinstance(setting, bool) else str(setting)
    return int(text) if text.isascii() and text.isdigit() and 0 < int(text) <= 86_400_000 else 30_000


def inside(skill, path):
    """(`path` resolved against the skill directory with `.resolve()`, its parts below it); refused unless inside."""
    try:
        target = (skill.dir / path).resolve()
        return target, target.relative_to(skill.dir).parts
    except (ValueError, OSError, RuntimeError):
        raise ToolError("invalid_path", f"{path!r} is not inside the directory of skill {skill.name}") from None


def install(agent, cfg):
    """Registers the skill tools and the L1 prompt section (called only when skills.enabled)."""
    dirs, limit_ms, reg = list(cfg.get("dirs") or []), timeout_ms(cfg.get("script_timeout_ms")), agent.registry

    def find(name):
        skill = discover_skills(dirs).get(name)
        if skill is None:
            raise ToolError("unknown_skill", f"no skill named {name!r}")
        return skill

    @reg.tool("read_skill", risk=LOW)
    def read_skill(name: str) -> str:
        """A skill's instructions (the body of its SKILL.md) and its directory."""
        return "Skill: {0.name}\nDirectory: {0.dir}\n\n{0.body}".format(find(name))

    @reg.tool("read_skill_file", risk=LOW)
    def read_skill_file(skill: str, path: str) -> str:
        """A UTF-8 file under a skill's references/ or assets/ (path relative to the skill directory)."""
        found = find(skill)
        target, parts = inside(found, path)
        if len(parts) < 2 or parts[0] not in ("references", "assets"):
            raise ToolError("invalid_path", f"{path!r}: only files under references/ and assets/ can be read")
        if not target.is_file():
            raise ToolError("not_found", f"no file {path!r} in skill {skill}")
        with open(target, "rb") as f:
            data = f.read(reg.limit + 1)
        if len(data) > reg.limit:
            raise ToolError("too_large", f"{path!r} is larger than {reg.limit} bytes")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError("not_text", f"{path!r} is not UTF-8 text") from None

    @reg.tool("run_skill_script", risk=HIGH)
    def run_skill_script(skill: str, script: str, args: "list[str] | None" = None) -> str:
        """Runs a skill's .py script (path relative to the skill directory) after the user confirms."""
        found = find(skill)
        target, _ = inside(found, script)
        if target.suffix != ".py":
            raise ToolError("invalid_path", f"{script!r}: only .py scripts can be run")
        if not target.is_file():
            raise ToolError("not_found", f"no script {script!r} in skill {skill}")
        try:
            proc = subprocess.Popen([sys.executable, str(target), *(args or [])], cwd=found.dir, start_new_session=True,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        except (OSError, ValueError) as e:  # ValueError: a NUL or a lone surrogate in an argument
            raise ToolError("spawn_failed" if isinstance(e, OSError) else "invalid_args", str(e)) from None
        with proc:
            try:
                out = proc.communicate(timeout=limit_ms / 1000)[0]
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):  # unless the whole group ended meanwhile
                    os.killpg(proc.pid, signal.SIGKILL)  # the script and all it started; `with` reaps it
                raise ToolError("timeout", f"{script} was stopped after {limit_ms} ms", timeout_ms=limit_ms) from None
        text, cut = reg.truncate(out.decode("utf-8", "replace"))
        note = f"; output truncated to its first {reg.limit} bytes" if cut else ""
        return f"[exit code {proc.returncode}{note}]\n{text}"

    def section():
        lines = [f"- `{s.name}`: {s.description} (directory: {s.dir})" for s in discover_skills(dirs).values()]
        use = "; ".join(f"`{tool}` {what}" for tool, what in USE if reg.allowed(tool))
        head = "Paths in a skill are relative to its directory." + (f" Use {use}." if use else "")
        return "\n".join(["## Skills", head] + lines) if lines else ""

    agent.prompt_sections.append(section)
