#!/usr/bin/env python3
"""A toy skill runtime plugged into the conformance suite through the Python adapter kit.

``ToyHost`` stands for the runtime under test (in a real adapter it is imported from its
package): it loads portable skills from the root's direct children only, offers
``skill_read_reference`` alone (filtered by the operator's tool allowlist), raises its own
exceptions for refused reads and unknown tools and chats on stdout, as real runtimes do.
``Adapter`` is all an adapter author writes: the calls into the runtime and the table that turns
its exceptions into SPEC.md's codes. It maps, it never decides: every code it returns comes from
an exception of the runtime, whose text travels in ``message``.

    skillspec run --adapter "python3 runner/adapters/kit/python/example_runtime.py" --filter read

It is not meant to pass the suite (no legacy skills, no depth, no skill_run_script, no turn
memory); it speaks the protocol flawlessly, so every case is a PASS or a FAIL, never an ERROR.
"""
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import skillspec_kit as kit  # noqa: E402  (first: it takes over stdout before the runtime talks)

print("toy runtime: module loaded")  # lands on stderr, not in the protocol

CAP = 262144
BASE = "You are a toy assistant."


class ToyError(Exception):
    pass


def read_regular(path):
    """The bytes of a regular file that is not a symlink, at most CAP (+1 to see more)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ToyError("path not allowed: not a regular file")
        with os.fdopen(fd, "rb") as f:
            fd = -1
            return f.read(CAP + 1)
    finally:
        if fd >= 0:
            os.close(fd)


class ToyHost:
    def __init__(self, skills_dir, tool_allowlist=None):
        self.root = skills_dir
        self.allow = tool_allowlist
        self.guides = {}
        self.scan()

    def tools(self):
        offered = ["skill_read_reference"] if self.guides else []
        return [t for t in offered if self.allow is None or t in self.allow]

    def call(self, tool, args):
        if tool not in self.tools():
            raise ToyError("unknown tool " + tool)
        return self.read(args)

    def scan(self):
        self.guides = {}
        if not self.root or not os.path.isabs(self.root) or not os.path.isdir(self.root):
            return
        for name in sorted(os.listdir(self.root)):
            skill_md = os.path.join(self.root, name, "SKILL.md")
            try:
                if os.path.islink(os.path.join(self.root, name)) or not stat.S_ISREG(os.lstat(skill_md).st_mode):
                    continue
                name.encode("utf-8")
                text = read_regular(skill_md).decode("utf-8")
            except (OSError, ToyError, UnicodeError):
                continue
            head, sep, body = text.partition("\n---\n")
            if not text.startswith("---\n") or not sep:
                continue
            meta = dict(line.split(":", 1) for line in head[4:].splitlines() if ":" in line)
            title, about = meta.get("name", "").strip(), meta.get("description", "").strip()
            if title and about:
                self.guides[name] = (title, about, body.strip())
        print("toy runtime: %d skills loaded" % len(self.guides))

    def read(self, args):
        if not isinstance(args, dict) or set(args) != {"skill", "path"} or not all(isinstance(v, str) for v in args.values()):
            raise ToyError("bad arguments")
        skill, path = args["skill"], args["path"]
        if skill not in self.guides:
            raise ToyError("no skill named " + skill)
        parts = path.split("/")
        if (path != "SKILL.md" and parts[0] != "references") or any(p in ("", ".", "..") for p in parts) \
                or any(c in path for c in "\\:") or any(ord(c) < 32 or 127 <= ord(c) < 160 for c in path) \
                or not parts[-1].endswith((".md", ".txt", ".json", ".yaml", ".yml")):
            raise ToyError("path not allowed: " + path)
        here = os.path.join(self.root, skill)
        for part in parts[:-1]:
            here = os.path.join(here, part)
            if os.path.islink(here):
                raise ToyError("path not allowed: symlink " + part)
        data = read_regular(os.path.join(here, parts[-1]))
        if len(data) > CAP:
            raise ToyError("file too large")
        return {"skill": skill, "path": path, "content": data.decode("utf-8")}


class Adapter(kit.Runtime):
    name = "toy-python-runtime"
    version = "0.1"

    ERRORS = kit.ErrorMap(
        kit.rule(r"^ToyError: bad arguments", "invalid_args", "ToyHost.read checks the argument object"),
        kit.rule(r"^ToyError: no skill named", "unknown_skill", "ToyHost.read, for an id it did not load"),
        kit.rule(r"^ToyError: path not allowed", "invalid_path", "ToyHost.read's path rules, symlinks, non-regular files"),
        kit.rule(r"^ToyError: file too large", "too_large", "ToyHost.read's size cap"),
        kit.rule(r"^UnicodeDecodeError", "not_text", "the content is decoded strictly"),
        kit.rule(r"^OSError: \[Errno 40\]", "invalid_path", "ELOOP: O_NOFOLLOW met a symlinked leaf"),
        kit.rule(r"^(FileNotFoundError|NotADirectoryError|PermissionError)", "not_found",
                 "a missing or unreadable file, SPEC.md read step 5"),
        kit.rule(r"^OSError", "not_found", "any other OS error; SPEC.md has no closer code", guess=True),
        kit.rule(r"^ToyError: unknown tool", "unknown_tool", "ToyHost.call, for a tool it does not offer"),
    )

    def start_case(self, config, root):
        self.host = ToyHost(config.skills_root, config.tool_allowlist)

    def discover(self):
        self.host.scan()
        return [kit.loaded(i, t, d, b) for i, (t, d, b) in sorted(self.host.guides.items())]

    def tools(self):
        return self.host.tools()

    def prompt(self):
        legacy = [BASE]
        if self.host.guides:
            legacy.append("## Skill Guides\n\nFollow these guides when they are relevant to the user's request.")
            legacy += ["### %s\n\n%s\n\n%s" % g for g in self.host.guides.values()]
        text = legacy[:1]
        if self.tools():
            text.append("## Skill Guides\n\nRead a guide's files with skill_read_reference(skill, path).")
            text += ["### `%s`: %s\n\n%s\n\n%s" % ((i,) + g) for i, g in self.host.guides.items()]
        return "\n\n".join(text if self.tools() else legacy), "\n\n".join(legacy)

    def call(self, tool, args):
        try:
            return kit.ok(self.host.call(tool, args))
        except (ToyError, OSError, UnicodeDecodeError) as e:
            return self.ERRORS.error(e)

    def new_turn(self):
        pass  # the toy keeps nothing per turn


if __name__ == "__main__":
    kit.serve(Adapter())
