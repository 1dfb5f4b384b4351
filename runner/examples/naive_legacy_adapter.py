#!/usr/bin/env python3
"""A deliberately naive skill runtime behind the skillspec adapter protocol (PROTOCOL.md).

It models the public "legacy" guide loader of the sportsclaw engine (SPEC.md, discovery.legacy): a skill is a
directory with both skill.yml and SKILL.md, skill.yml is read line by line, the body is the whole
SKILL.md, directories (symlinked ones too) are walked without a size or depth rule, files are
decoded leniently, duplicates are kept and nothing is sorted; it has no skill tools. Its only
safeties are a recursion cap so that a symlink loop ends and a read cap of 1 MiB per file (four
times the spec's limit, so oversized files still load) so that a 4 GiB sparse file cannot
exhaust the memory of the machine running the suite.

Two uses: a worked example of an adapter built on the Python adapter kit
(runner/adapters/kit/python: the kit speaks the protocol, the class at the end only calls the
runtime), and a demonstration that the suite finds the real deviations of such a runtime
(runner/tests/cli.rs runs it). Standard library only.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adapters", "kit", "python"))
import skillspec_kit as kit  # noqa: E402  (first: it takes over stdin and stdout)

RECURSION_CAP = 24
READ_CAP = 1 << 20


def line_parse(text):
    """The legacy line-based skill.yml parser."""
    out = {}
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line.startswith("#") or ":" not in line or line.index(":") == 0:
            continue
        key, value = line.split(":", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[key.strip()] = value
    return out


def load(root):
    guides = []

    def walk(directory, depth):
        if depth > RECURSION_CAP:
            return
        try:
            entries = os.listdir(directory)
        except OSError:
            return
        if "skill.yml" in entries and "SKILL.md" in entries:
            try:
                with open(os.path.join(directory, "skill.yml"), "rb") as f:
                    meta = line_parse(f.read(READ_CAP).decode("utf-8", "replace"))
                with open(os.path.join(directory, "SKILL.md"), "rb") as f:
                    body = f.read(READ_CAP).decode("utf-8", "replace").strip()
            except OSError:
                return
            ident = os.path.basename(directory)
            guides.append(kit.loaded(ident, meta.get("name") or ident, meta.get("description", ""), body, format="legacy"))
        for entry in entries:
            path = os.path.join(directory, entry)
            if os.path.isdir(path):  # follows symlinks, like the original
                walk(path, depth + 1)

    if root:
        walk(root, 0)
    return guides


BASE = "You are a sports data assistant."


def render(guides):
    if not guides:
        return BASE
    blocks = ["## Skill Guides", "Follow these guides when they are relevant to the user's request."]
    for g in guides:
        blocks.append("### " + g["name"])
        if g["description"]:
            blocks.append(g["description"])
        if g["body"]:
            blocks.append(g["body"])
    return BASE + "\n\n" + "\n\n".join(blocks)


class NaiveLegacyLoader(kit.Runtime):
    """The adapter: every method is one call into the naive runtime above."""

    name = "naive-legacy-loader"
    version = "0.1"

    def start_case(self, config, root):
        self.skills_root = config.skills_root
        self.guides = load(self.skills_root)

    def discover(self):
        self.guides = load(self.skills_root)
        return self.guides

    def tools(self):
        return []

    def prompt(self):
        text = render(self.guides)
        return text, text  # it has no skill tools, so its prompt is its own baseline

    def call(self, tool, args):
        return kit.error("unknown_tool", message="this runtime has no skill tools")

    def new_turn(self):
        pass  # no turn memory


if __name__ == "__main__":
    kit.serve(NaiveLegacyLoader())
