"""Tests of adapter.py: the mapping of the protocol's config onto the product, the scripted human, the
translation of the product's text results, and whole conversations over stdin/stdout."""
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
os.environ["SKILLSPEC_KIT_NO_TAKEOVER"] = "1"
sys.path.insert(0, str(HERE))
import adapter  # noqa: E402
import skillspec_kit as kit  # noqa: E402  (adapter.py put the kit on sys.path)


def config(**fields):
    raw = {"skills_root": "/r/skills", "python": sys.executable, "env": {}, "timeout_ms": None}
    raw.update(fields)
    return kit.Config(raw)


class MappingTest(unittest.TestCase):
    def test_hitl_config(self):
        product, ask = adapter.product_config(config(hitl={
            "enabled": True, "script_tool_allowed": True, "session": "interactive",
            "answers": ["approve", "deny"], "timeout_ms": "500"}))
        self.assertEqual(product, {"skills": {"enabled": True, "dirs": ["/r/skills"], "script_timeout_ms": "500"},
                                   "tools": {"allow": ["read_skill", "read_skill_file", "run_skill_script"]},
                                   "confirm": "high"})
        call = {"skill": "a", "script": "x.py", "args": ["-v"]}
        self.assertEqual([ask("run_skill_script", call) for _ in range(4)], [True, False, False, False])
        question = {"tool": "run_skill_script", "skill": "a", "script": "x.py", "args": ["-v"]}
        self.assertEqual(ask.take_asked(), [question] * 4)
        self.assertEqual(ask.take_asked(), [])
        ask("run_skill_script", {"skill": "a", "script": "x.py", "args": None})
        self.assertEqual(ask.take_asked()[0]["args"], [])  # absent or null: nothing is passed

    def test_not_allowed_and_non_interactive(self):
        product, ask = adapter.product_config(config(timeout_ms="700", hitl={
            "enabled": False, "script_tool_allowed": False, "session": "non-interactive", "answers": ["approve"],
            "timeout_ms": None}))
        self.assertEqual(product["tools"]["allow"], ["read_skill", "read_skill_file"])
        self.assertFalse(product["skills"]["enabled"])
        self.assertIsNone(product["skills"]["script_timeout_ms"])  # hitl's own setting wins, even null
        self.assertIsNone(ask)

    def test_core_case_without_hitl(self):
        product, ask = adapter.product_config(config(timeout_ms="900"))
        self.assertEqual(product["skills"], {"enabled": True, "dirs": ["/r/skills"], "script_timeout_ms": "900"})
        self.assertIsNone(ask)
        for root in (None, ""):
            product, _ = adapter.product_config(config(skills_root=root))
            self.assertEqual(product["skills"]["enabled"], False)
            self.assertEqual(product["skills"]["dirs"], [])

    def test_malformed_hitl_is_an_adapter_error(self):
        good = {"enabled": True, "script_tool_allowed": False, "session": "interactive", "answers": []}
        for bad in ([], dict(good, enabled="yes"), dict(good, session="maybe"), dict(good, answers=["ok"]),
                    dict(good, answers="approve")):
            with self.assertRaises(kit.AdapterError):
                adapter.product_config(config(hitl=bad))

    def test_interpreter(self):
        self.assertEqual(adapter.interpreter("/usr/bin/python3", {}), "/usr/bin/python3")
        with tempfile.TemporaryDirectory() as bin_dir:
            fake = Path(bin_dir) / "pyth"
            fake.write_text("#!/bin/sh\n")
            fake.chmod(0o755)
            self.assertEqual(adapter.interpreter("pyth", {"PATH": bin_dir}), str(fake))
            self.assertEqual(adapter.interpreter("pyth", {"PATH": "/nonexistent"}), "")
            here = os.getcwd()
            try:  # a relative PATH entry is not looked in, even where it would find one
                os.chdir(bin_dir)
                self.assertEqual(adapter.interpreter("pyth", {"PATH": ".:"}), "")
            finally:
                os.chdir(here)
        self.assertEqual(adapter.interpreter("./python3", {"PATH": "/usr/bin"}), "")
        self.assertEqual(adapter.interpreter("", {}), "")

    def test_translate(self):
        self.assertEqual(adapter.translate("read_skill", "Skill: a\nDirectory: /d/a\n\nbody\n\nmore"),
                         {"name": "a", "directory": "/d/a", "body": "body\n\nmore"})
        self.assertEqual(adapter.translate("run_skill_script", "[exit code -9]\nout\n[exit code 0]\n"),
                         {"exit_code": -9, "output": "out\n[exit code 0]\n", "truncated": False})
        self.assertEqual(adapter.translate("run_skill_script", "[exit code 0; output truncated to its first 4 bytes]\nabcd"),
                         {"exit_code": 0, "output": "abcd", "truncated": True})
        self.assertEqual(adapter.translate("read_skill_file", "x"), {"content": "x"})
        for tool, text in (("read_skill", "body"), ("run_skill_script", "exit 0\n"), ("other", "")):
            with self.assertRaises(kit.AdapterError):
                adapter.translate(tool, text)


class ConversationTest(unittest.TestCase):
    """The adapter as the runner drives it: JSON lines over stdin/stdout."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name).resolve()
        alpha = self.root / "skills" / "alpha"
        (alpha / "scripts").mkdir(parents=True)
        (alpha / "SKILL.md").write_text("---\nname: alpha\ndescription: A\n---\nAlpha body\n")
        (alpha / "scripts" / "env.py").write_text("import os, sys\nprint(sys.executable, os.environ.get('CASE_VAR'))\n")
        (alpha / "scripts" / "mark.py").write_text("open('RAN', 'w')\n")

    def converse(self, hitl, steps):
        requests = [{"type": "start", "protocol_version": 2},
                    {"type": "case_start", "seq": 1, "root": str(self.root), "config": {
                        "skills_root": str(self.root / "skills"), "python": sys.executable, "timeout_ms": None,
                        "env": {"PATH": os.environ.get("PATH", ""), "CASE_VAR": "from-the-case"}, "hitl": hitl}}]
        requests += [{"type": "step", "seq": 1, "index": i, "step": s} for i, s in enumerate(steps)]
        requests += [{"type": "case_end", "seq": 1}, {"type": "stop"}]
        env = dict(os.environ)
        env.pop("SKILLSPEC_KIT_NO_TAKEOVER", None)
        done = subprocess.run([sys.executable, str(HERE / "adapter.py")], input="".join(json.dumps(r) + "\n" for r in requests),
                              capture_output=True, text=True, timeout=60, env=env)
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        self.assertEqual(len(lines), len(requests) - 1, done.stderr)
        self.assertEqual(lines[0]["implementation"]["features"], ["hitl"])
        self.assertTrue(lines[0]["implementation"]["process_per_case"])
        self.assertEqual([line["type"] for line in lines[1:]], ["case_started"] + ["step_result"] * len(steps) + ["case_ended"],
                         lines)
        return [line["result"] for line in lines[2:-1]]

    def test_interactive_allowed(self):
        run = {"op": "call", "tool": "run_skill_script", "args": {"skill": "alpha", "script": "scripts/env.py"}}
        results = self.converse(
            {"enabled": True, "script_tool_allowed": True, "session": "interactive", "answers": ["approve", "deny"],
             "timeout_ms": None},
            [{"op": "tools"}, {"op": "prompt"}, {"op": "call", "tool": "read_skill", "args": {"name": "alpha"}},
             run, run, run, {"op": "call", "tool": "skill_run_script", "args": {"skill": "alpha", "script": "x.py"}},
             {"op": "discover"}])
        tools, prompt, read, first, second, third, core, found = results
        alpha = str(self.root / "skills" / "alpha")
        self.assertEqual(tools, {"offered": ["read_skill", "read_skill_file", "run_skill_script"]})
        self.assertIn("- `alpha`: A (directory: %s)" % alpha, prompt["text"])
        self.assertNotIn("alpha", prompt["baseline"])
        self.assertEqual(read, {"ok": True, "value": {"name": "alpha", "body": "Alpha body", "directory": alpha}, "asked": []})
        question = {"tool": "run_skill_script", "skill": "alpha", "script": "scripts/env.py", "args": []}
        self.assertEqual(first, {"ok": True, "value": {"exit_code": 0, "output": "%s from-the-case\n" % sys.executable,
                                                       "truncated": False}, "asked": [question]})
        self.assertEqual(second, {"ok": False, "error": {"code": "denied", "message": second["error"]["message"]},
                                  "asked": [question]})
        self.assertEqual(third["error"]["code"], "denied")  # the answers ran out: the human says no
        self.assertEqual(third["asked"], [question])
        self.assertEqual(core["error"]["code"], "unknown_tool")
        self.assertEqual([e["id"] for e in found["loaded"]], ["alpha"])

    def test_non_interactive_and_default_off(self):
        mark = {"op": "call", "tool": "run_skill_script", "args": {"skill": "alpha", "script": "scripts/mark.py"}}
        results = self.converse({"enabled": True, "script_tool_allowed": True, "session": "non-interactive",
                                 "answers": ["approve"], "timeout_ms": "1000"}, [mark])
        self.assertEqual(results[0]["error"]["code"], "no_human")
        results = self.converse({"enabled": True, "script_tool_allowed": False, "session": "interactive",
                                 "answers": ["approve"], "timeout_ms": None}, [{"op": "tools"}, mark])
        self.assertEqual(results[0], {"offered": ["read_skill", "read_skill_file"]})
        self.assertEqual(results[1]["error"]["code"], "unknown_tool")
        self.assertFalse((self.root / "skills" / "alpha" / "RAN").exists())

    def test_disabled_leaves_no_trace(self):
        results = self.converse({"enabled": False, "script_tool_allowed": True, "session": "interactive",
                                 "answers": ["approve"], "timeout_ms": None},
                                [{"op": "tools"}, {"op": "prompt"}, {"op": "discover"},
                                 {"op": "call", "tool": "read_skill", "args": {"name": "alpha"}}])
        self.assertEqual(results[0], {"offered": []})
        self.assertEqual(results[1]["text"], results[1]["baseline"])
        self.assertEqual(results[2], {"loaded": []})
        self.assertEqual(results[3]["error"]["code"], "unknown_tool")


if __name__ == "__main__":
    unittest.main()
