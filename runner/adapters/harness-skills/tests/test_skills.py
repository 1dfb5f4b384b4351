"""Unit tests of seed 004's harness/skills.py and the registry it relies on (unittest, stdlib only).

Each test builds its skills in a fresh temporary directory. The seed's exit gate asks for: path fence
(`../` escape, unknown skill refused), timeout, output truncation; zero trace when disabled; not in
the allowlist by default. The brief adds: absolute and symlink escapes, `.py` only, the limit and one
byte past it, HITL approve/deny/non-interactive, and L1/L2/L3 each on its own.
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from harness.agent import BASE_PROMPT, Agent  # noqa: E402
from harness.registry import HIGH, RESULT_LIMIT, Registry, ToolError  # noqa: E402
from harness.skills import discover_skills, parse_frontmatter, timeout_ms  # noqa: E402

ALL_TOOLS = ["read_skill", "read_skill_file", "run_skill_script"]
SKILL_MD = "---\nname: alpha\ndescription: Does alpha things\n---\n# Alpha\nRun scripts/hello.py.\n"


class Human:
    """A scripted human that records what it was asked."""

    def __init__(self, *answers):
        self.answers, self.asked = list(answers), []

    def __call__(self, tool, args):
        self.asked.append((tool, dict(args)))
        return self.answers.pop(0) if self.answers else False


class SkillsTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name).resolve()
        self.skills = self.root / "skills"
        self.alpha = self.skills / "alpha"
        self.write("skills/alpha/SKILL.md", SKILL_MD)
        self.write("skills/alpha/scripts/hello.py", "import os, sys\nprint('hello', sys.argv[1:], os.getcwd())\n")
        self.write("skills/alpha/references/guide.md", "# Guide\n")
        self.write("skills/alpha/assets/template.txt", "template\n")
        self.write("outside.py", "open('ESCAPED', 'w').write('x')\nprint('escaped')\n")

    def write(self, rel, text):
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def agent(self, allow_script=True, ask=None, enabled=True, timeout=None, dirs=None):
        cfg = {"skills": {"enabled": enabled, "dirs": [str(self.skills)] if dirs is None else dirs}}
        if timeout is not None:
            cfg["skills"]["script_timeout_ms"] = timeout
        if allow_script:
            cfg["tools"] = {"allow": ALL_TOOLS}
        return Agent(cfg, ask=ask)

    def run_script(self, script, args=None, human=None, **kw):
        human = human or Human(True)
        call = {"skill": "alpha", "script": script}
        if args is not None:
            call["args"] = args
        return self.agent(ask=human, **kw).call("run_skill_script", call)

    def refused(self, code, tool, args, agent=None):
        agent = agent or self.agent(ask=Human(True, True))
        with self.assertRaises(ToolError) as caught:
            agent.call(tool, args)
        self.assertEqual(caught.exception.code, code, str(caught.exception))
        return caught.exception


class LevelsTest(SkillsTest):
    def test_l1_lists_each_skill_with_its_absolute_directory(self):
        self.write("skills/beta/SKILL.md", "---\nname: beta\ndescription: 'Quoted: beta'\n---\n")
        prompt = self.agent().system_prompt()
        self.assertTrue(prompt.startswith(BASE_PROMPT + "\n\n## Skills\n"), prompt)
        self.assertIn("- `alpha`: Does alpha things (directory: %s)" % self.alpha, prompt)
        self.assertIn("- `beta`: Quoted: beta (directory: %s)" % (self.skills / "beta"), prompt)
        self.assertTrue(os.path.isabs(str(self.alpha)))
        self.assertNotIn("Run scripts/hello.py", prompt)  # L1 is the listing, not the body

    def test_l1_names_the_skill_tools_offered_and_only_those(self):
        allowed, not_allowed = self.agent().system_prompt(), self.agent(allow_script=False).system_prompt()
        for prompt in (allowed, not_allowed):
            self.assertIn("`read_skill` to read a skill's instructions; `read_skill_file` to read", prompt)
        self.assertIn("`run_skill_script` to run its Python scripts", allowed)
        self.assertNotIn("run_skill_script", not_allowed)
        only = Agent({"skills": {"enabled": True, "dirs": [str(self.skills)]}, "tools": {"allow": []}}).system_prompt()
        self.assertIn("relative to its directory.\n- `alpha`", only)
        self.assertNotIn("read_skill", only)

    def test_l1_section_is_left_out_when_no_skill_is_found(self):
        agent = self.agent(dirs=[str(self.root / "empty")])
        self.assertEqual(agent.system_prompt(), BASE_PROMPT)
        self.assertEqual(agent.registry.offered(), ALL_TOOLS)  # the tools exist once skills are enabled

    def test_l2_read_skill_returns_the_body_and_directory(self):
        text = self.agent().call("read_skill", {"name": "alpha"})
        self.assertEqual(text, "Skill: alpha\nDirectory: %s\n\n# Alpha\nRun scripts/hello.py." % self.alpha)

    def test_l2_unknown_skill_is_refused(self):
        self.refused("unknown_skill", "read_skill", {"name": "gamma"})
        self.refused("unknown_skill", "read_skill", {"name": "../alpha"})

    def test_l3_read_skill_file_reads_references_and_assets(self):
        agent = self.agent()
        self.assertEqual(agent.call("read_skill_file", {"skill": "alpha", "path": "references/guide.md"}), "# Guide\n")
        self.assertEqual(agent.call("read_skill_file", {"skill": "alpha", "path": "assets/template.txt"}), "template\n")

    def test_l3_run_skill_script_runs_and_returns_exit_code_and_output(self):
        out = self.run_script("scripts/hello.py", ["a b", "--x"])
        self.assertEqual(out, "[exit code 0]\nhello ['a b', '--x'] %s\n" % self.alpha)

    def test_each_level_works_without_the_others(self):
        # L3 in a fresh agent, with L2 and the prompt never asked for.
        self.write("skills/beta/SKILL.md", "---\nname: beta\ndescription: b\n---\n")
        self.write("skills/beta/scripts/x.py", "print('x')\n")
        self.write("skills/beta/assets/a.txt", "a")
        agent = self.agent(ask=Human(True))
        self.assertEqual(agent.call("run_skill_script", {"skill": "beta", "script": "scripts/x.py"}), "[exit code 0]\nx\n")
        self.assertEqual(self.agent().call("read_skill_file", {"skill": "beta", "path": "assets/a.txt"}), "a")
        # L1 and L2 while the script tool is not allowed.
        agent = self.agent(allow_script=False)
        self.assertIn("`beta`", agent.system_prompt())
        self.assertTrue(agent.call("read_skill", {"name": "beta"}).startswith("Skill: beta\n"))


class FrontmatterTest(unittest.TestCase):
    def test_what_the_small_parser_accepts(self):
        meta, body = parse_frontmatter("---\r\nname: \"a: b\"\r\n  indented: no\r\n# comment\r\ndescription: d \r\n---\r\nbody\r\n")
        self.assertEqual(meta, {"name": "a: b", "description": "d"})
        self.assertEqual(body, "body\r\n")

    def test_no_frontmatter_is_all_body(self):
        self.assertEqual(parse_frontmatter("name: x\n---\n"), ({}, "name: x\n---\n"))
        self.assertEqual(parse_frontmatter("---\nname: x\n"), ({}, "---\nname: x\n"))  # never closed

    def test_first_closing_line_ends_it(self):
        meta, body = parse_frontmatter("---\nname: x\n---\nname: y\n---\n")
        self.assertEqual((meta, body), ({"name": "x"}, "name: y\n---\n"))


class DiscoveryTest(SkillsTest):
    def test_dirs_in_order_first_name_wins_and_the_rest_is_skipped(self):
        self.write("more/alpha/SKILL.md", "---\nname: alpha\ndescription: second\n---\n")
        self.write("more/delta/SKILL.md", "---\nname: delta\ndescription: tab\there\n---\n")
        self.write("more/eps/SKILL.md", b"---\nname: eps\ndescription: e\n---\n\xff")
        self.write("more/zeta/README.md", "not a skill\n")
        self.write("more/plain/SKILL.md", "no frontmatter\n")
        self.write("more/nameless/SKILL.md", "---\ndescription: no name\n---\n")
        self.write("more/undescribed/SKILL.md", "---\nname: undescribed\ndescription:  \n---\n")
        found = discover_skills([str(self.skills), str(self.root / "more"), str(self.root / "missing")])
        self.assertEqual(list(found), ["alpha"])
        self.assertEqual(found["alpha"].description, "Does alpha things")

    def test_a_fifo_named_skill_md_is_not_opened(self):
        (self.skills / "pipe").mkdir()
        os.mkfifo(self.skills / "pipe" / "SKILL.md")
        self.assertEqual(list(discover_skills([str(self.skills)])), ["alpha"])


class FenceTest(SkillsTest):
    def assert_not_escaped(self):
        self.assertFalse((self.alpha / "ESCAPED").exists())
        self.assertFalse((self.root / "ESCAPED").exists())

    def test_dot_dot_escape_is_refused_after_resolve(self):
        for script in ("../../outside.py", "scripts/../../../outside.py", "../alpha/../../outside.py"):
            self.refused("invalid_path", "run_skill_script", {"skill": "alpha", "script": script})
        self.assert_not_escaped()

    def test_dot_dot_that_stays_inside_is_accepted(self):
        self.assertTrue(self.run_script("references/../scripts/hello.py").startswith("[exit code 0]\n"))

    def test_absolute_path_outside_is_refused_inside_is_accepted(self):
        self.refused("invalid_path", "run_skill_script", {"skill": "alpha", "script": str(self.root / "outside.py")})
        self.assert_not_escaped()
        self.assertTrue(self.run_script(str(self.alpha / "scripts/hello.py")).startswith("[exit code 0]\n"))

    def test_symlink_escape_is_refused(self):
        os.symlink(self.root / "outside.py", self.alpha / "scripts" / "link.py")
        os.symlink(self.root, self.alpha / "scripts" / "up")
        for script in ("scripts/link.py", "scripts/up/outside.py"):
            self.refused("invalid_path", "run_skill_script", {"skill": "alpha", "script": script})
        self.assert_not_escaped()

    def test_symlink_that_stays_inside_runs_its_target(self):
        os.symlink("hello.py", self.alpha / "scripts" / "alias.py")
        self.assertTrue(self.run_script("scripts/alias.py").startswith("[exit code 0]\nhello"))

    def test_unknown_skill_is_refused(self):
        for skill in ("gamma", "../skills/alpha", ""):
            self.refused("unknown_skill", "run_skill_script", {"skill": skill, "script": "scripts/hello.py"})

    def test_nul_in_path_is_refused(self):
        self.refused("invalid_path", "run_skill_script", {"skill": "alpha", "script": "scripts/hello.py\0.sh"})

    def test_read_skill_file_fence(self):
        os.symlink(self.root / "outside.py", self.alpha / "references" / "out.md")
        os.symlink("../SKILL.md", self.alpha / "references" / "skill.md")
        for path in ("SKILL.md", "scripts/hello.py", "../alpha/SKILL.md", "references/../../beta/x.md",
                     "references", "references/out.md", "references/skill.md", "/etc/passwd"):
            self.refused("invalid_path", "read_skill_file", {"skill": "alpha", "path": path})
        self.refused("not_found", "read_skill_file", {"skill": "alpha", "path": "references/missing.md"})
        (self.alpha / "assets" / "sub").mkdir()
        self.refused("not_found", "read_skill_file", {"skill": "alpha", "path": "assets/sub"})
        self.refused("unknown_skill", "read_skill_file", {"skill": "gamma", "path": "references/guide.md"})

    def test_read_skill_file_limits(self):
        agent = self.agent()
        self.write("skills/alpha/assets/exact.txt", "a" * RESULT_LIMIT)
        self.write("skills/alpha/assets/over.txt", "a" * (RESULT_LIMIT + 1))
        self.write("skills/alpha/assets/image.png", b"\x89PNG\r\n\x1a\n\xff")
        self.assertEqual(len(agent.call("read_skill_file", {"skill": "alpha", "path": "assets/exact.txt"})), RESULT_LIMIT)
        self.refused("too_large", "read_skill_file", {"skill": "alpha", "path": "assets/over.txt"}, agent)
        self.refused("not_text", "read_skill_file", {"skill": "alpha", "path": "assets/image.png"}, agent)


class PythonOnlyTest(SkillsTest):
    def test_only_py_runs(self):
        self.write("skills/alpha/scripts/run.sh", "#!/bin/sh\ntouch ESCAPED\n").chmod(0o755)
        self.write("skills/alpha/scripts/upper.PY", "open('ESCAPED','w')\n")
        self.write("skills/alpha/scripts/noext", "open('ESCAPED','w')\n")
        os.symlink("run.sh", self.alpha / "scripts" / "sh.py")  # the name says .py, the file run is .sh
        for script in ("scripts/run.sh", "scripts/upper.PY", "scripts/noext", "scripts/sh.py", "scripts", ""):
            self.refused("invalid_path", "run_skill_script", {"skill": "alpha", "script": script})
        self.assertFalse((self.alpha / "ESCAPED").exists())

    def test_missing_py_is_not_found(self):
        self.refused("not_found", "run_skill_script", {"skill": "alpha", "script": "scripts/missing.py"})
        (self.alpha / "scripts" / "dir.py").mkdir()
        self.refused("not_found", "run_skill_script", {"skill": "alpha", "script": "scripts/dir.py"})

    def test_runs_with_sys_executable_in_the_skill_directory(self):
        self.write("skills/alpha/scripts/where.py", "import os, sys\nprint(sys.executable)\nprint(os.getcwd())\n")
        out = self.run_script("scripts/where.py")
        self.assertEqual(out, "[exit code 0]\n%s\n%s\n" % (sys.executable, self.alpha))

    def test_a_failing_script_is_a_result_with_its_exit_code(self):
        self.write("skills/alpha/scripts/fail.py", "import sys\nsys.stderr.write('bad\\n')\nsys.exit(3)\n")
        self.assertEqual(self.run_script("scripts/fail.py"), "[exit code 3]\nbad\n")

    def test_stdin_is_empty(self):
        # The product's own stdin (the user's terminal) holds text; the script must not read it.
        self.write("skills/alpha/scripts/stdin.py", "import sys\nprint(repr(sys.stdin.read()))\n")
        read, write = os.pipe()
        os.write(write, b"typed by the user")
        os.close(write)
        saved = os.dup(0)
        os.dup2(read, 0)
        try:
            out = self.run_script("scripts/stdin.py")
        finally:
            os.dup2(saved, 0)
            os.close(saved)
            os.close(read)
        self.assertEqual(out, "[exit code 0]\n''\n")

    def test_bad_args(self):
        for args in ("x", [1], ["a", None], {"a": 1}):
            self.refused("invalid_args", "run_skill_script", {"skill": "alpha", "script": "scripts/hello.py", "args": args})
        self.refused("invalid_args", "run_skill_script", {"skill": "alpha", "script": "scripts/hello.py", "args": ["a\0b"]})
        self.refused("invalid_args", "run_skill_script", {"skill": "alpha"})
        self.refused("invalid_args", "run_skill_script", {"skill": "alpha", "script": "scripts/hello.py", "cwd": "/"})
        self.refused("invalid_args", "run_skill_script", ["alpha", "scripts/hello.py"])


class TimeoutTest(SkillsTest):
    def test_the_setting(self):
        self.assertEqual([timeout_ms(v) for v in ("500", 500, "0500", "86400000")], [500, 500, 500, 86_400_000])
        for bad in (None, "", "0", 0, "-5", "+5", " 300", "1.5", "1e3", "abc", "86400001", "٣", True):
            self.assertEqual(timeout_ms(bad), 30_000, bad)

    def test_a_script_past_the_timeout_is_stopped_with_its_children(self):
        self.write("skills/alpha/scripts/slow.py", textwrap.dedent("""\
            import subprocess, sys, time
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30); open('CHILD_ALIVE', 'w')"])
            open("child.pid", "w").write(str(child.pid))
            print("started", flush=True)
            time.sleep(30)
            open("PARENT_ALIVE", "w")
            """))
        started = time.monotonic()
        err = self.refused("timeout", "run_skill_script", {"skill": "alpha", "script": "scripts/slow.py"},
                           self.agent(ask=Human(True), timeout="1000"))
        self.assertLess(time.monotonic() - started, 10)
        self.assertEqual(err.fields, {"timeout_ms": 1000})
        pid = int((self.alpha / "child.pid").read_text())
        for _ in range(50):  # the child was killed with its group; give the kernel a moment
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            self.fail("the script's child %d is still running" % pid)

    def test_a_script_within_the_timeout_finishes(self):
        self.write("skills/alpha/scripts/nap.py", "import time\ntime.sleep(0.2)\nprint('done')\n")
        self.assertEqual(self.run_script("scripts/nap.py", timeout="5000"), "[exit code 0]\ndone\n")


class TruncateTest(SkillsTest):
    def emit(self, code):
        self.write("skills/alpha/scripts/emit.py", "import sys\n" + code)
        return self.run_script("scripts/emit.py")

    def test_output_at_the_limit_is_whole(self):
        out = self.emit("sys.stdout.write('a' * %d)\n" % RESULT_LIMIT)
        self.assertEqual(out, "[exit code 0]\n" + "a" * RESULT_LIMIT)

    def test_one_byte_past_the_limit_is_truncated_not_an_error(self):
        out = self.emit("sys.stdout.write('a' * %d + 'Z')\n" % RESULT_LIMIT)
        self.assertEqual(out, "[exit code 0; output truncated to its first %d bytes]\n" % RESULT_LIMIT + "a" * RESULT_LIMIT)

    def test_stdout_and_stderr_count_together(self):
        out = self.emit("sys.stdout.write('o' * %d); sys.stdout.flush(); sys.stderr.write('ee'); sys.exit(2)\n"
                        % (RESULT_LIMIT - 1))
        self.assertEqual(out, "[exit code 2; output truncated to its first %d bytes]\n" % RESULT_LIMIT
                         + "o" * (RESULT_LIMIT - 1) + "e")

    def test_cut_at_a_character_boundary(self):
        out = self.emit("sys.stdout.write('a' * %d + '\u20ac')\n" % (RESULT_LIMIT - 1))
        self.assertEqual(out.split("\n", 1)[1], "a" * (RESULT_LIMIT - 1))
        self.assertIn("truncated", out.split("\n", 1)[0])

    def test_invalid_utf8_is_replaced(self):
        self.assertEqual(self.emit("sys.stdout.buffer.write(b'ok\\xff')\n"), "[exit code 0]\nok\ufffd")

    def test_the_rule(self):
        reg = Registry(limit=4)
        self.assertEqual(reg.truncate("abcd"), ("abcd", False))
        self.assertEqual(reg.truncate("abcde"), ("abcd", True))
        self.assertEqual(reg.truncate("abc\u20ac"), ("abc", True))


class HitlTest(SkillsTest):
    def test_approve_runs_and_the_human_sees_the_call(self):
        human = Human(True)
        self.assertTrue(self.run_script("scripts/hello.py", ["x"], human=human).startswith("[exit code 0]"))
        self.assertEqual(human.asked, [("run_skill_script", {"skill": "alpha", "script": "scripts/hello.py", "args": ["x"]})])

    def test_every_call_is_confirmed(self):
        human = Human(True, False, True)
        agent = self.agent(ask=human)
        results = []
        for _ in range(3):
            try:
                results.append(agent.call("run_skill_script", {"skill": "alpha", "script": "scripts/hello.py"})[:13])
            except ToolError as e:
                results.append(e.code)
        self.assertEqual(results, ["[exit code 0]", "denied", "[exit code 0]"])
        self.assertEqual(len(human.asked), 3)

    def test_deny_refuses_and_nothing_runs(self):
        self.write("skills/alpha/scripts/mark.py", "open('RAN', 'w')\n")
        self.refused("denied", "run_skill_script", {"skill": "alpha", "script": "scripts/mark.py"},
                     self.agent(ask=Human(False)))
        self.assertFalse((self.alpha / "RAN").exists())

    def test_anything_but_true_or_a_failing_human_is_a_no(self):
        self.write("skills/alpha/scripts/mark.py", "open('RAN', 'w')\n")

        def broken(tool, args):
            raise EOFError("stdin closed")

        for ask in (Human("yes"), Human(1), broken):
            self.refused("denied", "run_skill_script", {"skill": "alpha", "script": "scripts/mark.py"}, self.agent(ask=ask))
        self.assertFalse((self.alpha / "RAN").exists())

    def test_non_interactive_fails_closed(self):
        self.write("skills/alpha/scripts/mark.py", "open('RAN', 'w')\n")
        self.refused("no_human", "run_skill_script", {"skill": "alpha", "script": "scripts/mark.py"}, self.agent(ask=None))
        self.assertFalse((self.alpha / "RAN").exists())

    def test_low_risk_tools_are_not_confirmed(self):
        human = Human()
        agent = self.agent(ask=human)
        agent.call("read_skill", {"name": "alpha"})
        agent.call("read_skill_file", {"skill": "alpha", "path": "references/guide.md"})
        self.assertEqual(human.asked, [])
        agent = self.agent(ask=None)  # non-interactive: reading still works
        self.assertEqual(agent.call("read_skill_file", {"skill": "alpha", "path": "references/guide.md"}), "# Guide\n")

    def test_confirmation_comes_before_the_tools_own_checks(self):
        # The seed's design: the registry confirms (@registry.tool(risk=HIGH)), then the tool validates.
        human = Human(True)
        self.refused("invalid_path", "run_skill_script", {"skill": "alpha", "script": "../../outside.py"},
                     self.agent(ask=human))
        self.assertEqual(len(human.asked), 1)
        self.refused("no_human", "run_skill_script", {"skill": "gamma", "script": "x.py"}, self.agent(ask=None))

    def test_malformed_calls_are_refused_before_asking(self):
        human = Human(True)
        self.refused("invalid_args", "run_skill_script", {"skill": "alpha", "script": 7}, self.agent(ask=human))
        self.assertEqual(human.asked, [])


class DefaultOffTest(SkillsTest):
    def test_not_in_the_allowlist_by_default(self):
        self.write("skills/alpha/scripts/mark.py", "open('RAN', 'w')\n")
        human = Human(True)
        agent = self.agent(allow_script=False, ask=human)
        self.assertEqual(agent.registry.offered(), ["read_skill", "read_skill_file"])
        self.assertEqual(agent.registry.tools["run_skill_script"][1], HIGH)
        self.refused("unknown_tool", "run_skill_script", {"skill": "alpha", "script": "scripts/mark.py"}, agent)
        self.assertEqual(human.asked, [])
        self.assertFalse((self.alpha / "RAN").exists())

    def test_an_explicit_allowlist_can_offer_it_or_leave_others_out(self):
        agent = Agent({"skills": {"enabled": True, "dirs": [str(self.skills)]}, "tools": {"allow": ["run_skill_script"]}})
        self.assertEqual(agent.registry.offered(), ["run_skill_script"])
        self.refused("unknown_tool", "read_skill", {"name": "alpha"}, agent)

    def test_confirm_levels(self):
        self.assertEqual(Registry(confirm="low").confirm, 1)
        with self.assertRaises(ValueError):
            Registry(confirm="never")


class ZeroTraceTest(SkillsTest):
    def test_disabled_leaves_no_tool_no_prompt_text_and_no_module(self):
        probe = textwrap.dedent("""\
            import sys
            sys.path.insert(0, %r)
            from harness.agent import Agent, BASE_PROMPT
            for enabled in (False, None, "true", 1):
                agent = Agent({"skills": {"enabled": enabled, "dirs": [%r]},
                               "tools": {"allow": ["read_skill", "read_skill_file", "run_skill_script"]}})
                assert agent.registry.offered() == [], agent.registry.offered()
                assert agent.registry.tools == {}
                assert agent.system_prompt() == BASE_PROMPT, agent.system_prompt()
                try:
                    agent.call("run_skill_script", {"skill": "alpha", "script": "scripts/hello.py"})
                except Exception as e:
                    assert e.code == "unknown_tool", e
            assert "harness.skills" not in sys.modules, "harness.skills was imported"
            print("zero trace")
            """) % (str(HERE), str(self.skills))
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
        self.assertEqual((done.returncode, done.stdout), (0, "zero trace\n"), done.stderr)

    def test_enabled_does_import_it(self):  # the probe above could not pass vacuously
        done = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r)\nfrom harness.agent import Agent\n"
                               "Agent({'skills': {'enabled': True}})\nprint('harness.skills' in sys.modules)" % str(HERE)],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.stdout, "True\n", done.stderr)


if __name__ == "__main__":
    unittest.main()
