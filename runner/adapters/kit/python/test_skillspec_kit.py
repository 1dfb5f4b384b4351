"""Tests of the Python adapter kit: adapters built on it run as child processes and are spoken
to over pipes exactly as the runner does (one JSON line per request), so the tests see the
bytes the runner would see. Standard library only; run with

    python3 -m unittest discover -s runner/adapters/kit/python -v
"""
import ast
import json
import os
import queue
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ["SKILLSPEC_KIT_NO_TAKEOVER"] = "1"  # this process keeps its own stdout
import skillspec_kit as kit  # noqa: E402

TIMEOUT = 20

PRELUDE = "import sys\nsys.path.insert(0, %r)\nimport skillspec_kit as kit\n" % HERE

CONFIG = {
    "skills_root": None,
    "script_allowlist": None,
    "tool_allowlist": None,
    "allow_trading": False,
    "replay": None,
    "timeout_ms": None,
    "python": "python3",
    "env": {"LANG": "C.UTF-8"},
}


class Process:
    """An adapter process: requests in, response lines out, stderr collected."""

    def __init__(self, argv, cwd=None, env=None):
        env = dict(os.environ, **(env or {}))
        env.pop("SKILLSPEC_KIT_NO_TAKEOVER", None)
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env
        )
        self.lines = queue.Queue()
        self.stderr = b""
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self._err_thread = threading.Thread(target=self._read_stderr, daemon=True)
        self._err_thread.start()

    def _read_stdout(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self):
        self.stderr = self.proc.stderr.read()

    def send(self, message):
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def recv(self):
        line = self.lines.get(timeout=TIMEOUT)
        if line is None:
            self._err_thread.join(TIMEOUT)  # the whole of stderr, to show why
            raise AssertionError("the adapter closed stdout; stderr: %s" % self.stderr.decode(errors="replace"))
        assert line.endswith(b"\n"), line
        return json.loads(line.decode("utf-8"))

    def ask(self, message):
        self.send(message)
        return self.recv()

    def finish(self, stop=True):
        """Stops the adapter; returns (exit code, lines it wrote after its last answer)."""
        if stop:
            self.send({"type": "stop"})
        self.proc.stdin.close()
        code = self.proc.wait(timeout=TIMEOUT)
        self._err_thread.join(TIMEOUT)
        extra = []
        while True:
            line = self.lines.get(timeout=TIMEOUT)
            if line is None:
                self.close()
                return code, extra
            extra.append(line)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                pipe.close()
            except (OSError, ValueError):
                pass


class KitTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def adapter(self, body, env=None, address_space=None):
        """An adapter process running ``body``; ``env`` added to its environment, and
        ``address_space`` (bytes) its RLIMIT_AS, set by the shell (no preexec_fn in a process
        with threads)."""
        path = os.path.join(self.tmp.name, "adapter_%d.py" % len(os.listdir(self.tmp.name)))
        with open(path, "w", encoding="utf-8") as f:
            f.write(PRELUDE + textwrap.dedent(body))
        argv = [sys.executable, path]
        if address_space:
            argv = ["sh", "-c", 'ulimit -v %d && exec "$0" "$1"' % (address_space // 1024)] + argv
        p = Process(argv, cwd=self.tmp.name, env=env)
        self.addCleanup(p.close)
        return p

    def started(self, p):
        r = p.ask({"type": "start", "protocol_version": 2})
        self.assertEqual(r["type"], "started", r)
        return r

    def case(self, p, seq=1, root=None, config=None):
        r = p.ask({"type": "case_start", "seq": seq, "case": "x.y", "root": root or self.tmp.name, "config": config or CONFIG})
        self.assertEqual(r, {"type": "case_started", "seq": seq})

    def step(self, p, op, seq=1, index=0, **fields):
        return p.ask({"type": "step", "seq": seq, "index": index, "step": dict(op=op, **fields)})

    def assert_clean_exit(self, p, stop=True):
        code, extra = p.finish(stop)
        self.assertEqual(extra, [], "lines after the last answer")
        self.assertEqual(code, 0, p.stderr.decode(errors="replace"))


MINIMAL = """
class A(kit.Runtime):
    name, version = "minimal", "1.2"
    features = ["skip-report"]
    def discover(self):
        return [kit.loaded("b", "B", "d", "body"), kit.skipped("c", "symlink"), kit.loaded("a", "A", "", "", format="legacy")]
    def tools(self):
        return ["skill_read_reference"]
    def prompt(self):
        return "text", "base"
    def call(self, tool, args):
        return kit.ok({"tool": tool, "args": args})
    def new_turn(self):
        pass
kit.serve(A())
"""


class Handshake(KitTest):
    def test_started_declares_the_runtime(self):
        p = self.adapter(MINIMAL.replace('"skip-report"', '"skip-report", "tool-allowlist"'))
        r = self.started(p)
        self.assertEqual(r["protocol_version"], 2)
        self.assertEqual(
            r["implementation"],
            {"name": "minimal", "version": "1.2", "language": "python", "features": ["skip-report", "tool-allowlist"], "process_per_case": False},
        )
        self.assert_clean_exit(p)

    def test_process_per_case_is_declared(self):
        p = self.adapter("class A(kit.Runtime):\n    name, version = 'p', '1'\n    process_per_case=True\nkit.serve(A())\n")
        self.assertIs(self.started(p)["implementation"]["process_per_case"], True)
        self.assert_clean_exit(p)

    def test_side_by_side_is_sent_only_when_false(self):
        # The default (True) is not on the wire: an adapter that says nothing sends what it did.
        p = self.adapter("class A(kit.Runtime):\n    name, version = 'p', '1'\n    side_by_side = True\nkit.serve(A())\n")
        self.assertNotIn("side_by_side", self.started(p)["implementation"])
        self.assert_clean_exit(p)
        p = self.adapter("class A(kit.Runtime):\n    name, version = 'p', '1'\n    side_by_side = False\nkit.serve(A())\n")
        self.assertIs(self.started(p)["implementation"]["side_by_side"], False)
        self.assert_clean_exit(p)

    def test_another_version_is_refused_and_the_adapter_stays_usable(self):
        p = self.adapter(MINIMAL)
        for version in (1, 3, "2", None):
            r = p.ask({"type": "start", "protocol_version": version})
            self.assertEqual(r["type"], "error", r)
            self.assertIsNone(r["seq"])
            self.assertIn("version", r["message"])
        self.started(p)
        self.assert_clean_exit(p)

    def test_a_misdeclared_runtime_refuses_the_handshake(self):
        p = self.adapter("class A(kit.Runtime):\n    name=''\n    version=3\n    features='skip-report'\nkit.serve(A())\n")
        r = p.ask({"type": "start", "protocol_version": 2})
        self.assertEqual(r["type"], "error")
        for part in ("`name`", "`version`", "`features`"):
            self.assertIn(part, r["message"])
        self.assert_clean_exit(p)

    # One process for many declarations: each case sets the runtime's attributes from the Python
    # lines in env DECL (the instance's own, dropped first), and the next `start` declares them.
    DECLARING = """
class A(kit.Runtime):
    name, version = "d", "1"
    def start_case(self, config, root):
        space = {}
        exec(config.env["DECL"], {}, space)
        self.__dict__.clear()
        self.__dict__.update(space)
kit.serve(A())
"""

    def declare(self, p, seq, lines):
        self.case(p, seq=seq, config=dict(CONFIG, env={"DECL": "\n".join(lines)}))
        self.assertEqual(p.ask({"type": "case_end", "seq": seq})["type"], "case_ended")
        return p.ask({"type": "start", "protocol_version": 2})

    def test_read_scope_formats_and_lacks_are_sent_only_when_set(self):
        p = self.adapter(self.DECLARING)
        implementation = self.started(p)["implementation"]
        for key in ("read_scope", "formats", "lacks"):
            self.assertNotIn(key, implementation)
        reason = "hermes-agent 0.19.0 has no script tool: tools/skills_tool.py registers skills_list and skill_view only"
        implementation = self.declare(p, 1, [
            "read_scope = 'skills-root'",
            "formats = ('skill-md',)",
            "lacks = {'skill_run_script': %r, 'nested-scan': 'scans the root\\'s children only', 'argument-keys': '\\u00e9' * 2048}" % reason,
        ])["implementation"]
        self.assertEqual(implementation["read_scope"], "skills-root")
        self.assertEqual(implementation["formats"], ["skill-md"])
        self.assertEqual(implementation["lacks"], {"skill_run_script": reason, "nested-scan": "scans the root's children only", "argument-keys": "\u00e9" * 2048})
        implementation = self.declare(p, 2, ["read_scope = 'case-root'", "formats = ['skill-yml', 'skill-md']", "lacks = {}"])["implementation"]
        self.assertEqual((implementation["read_scope"], implementation["formats"]), ("case-root", ["skill-yml", "skill-md"]))
        self.assertNotIn("lacks", implementation)
        implementation = self.declare(p, 3, ["read_scope = 'skill'", "lacks = None"])["implementation"]
        self.assertEqual(implementation["read_scope"], "skill")
        self.assertNotIn("formats", implementation)
        self.assertNotIn("lacks", implementation)
        self.assert_clean_exit(p)

    def test_a_misdeclared_read_scope_formats_or_lacks_refuses_the_handshake(self):
        p = self.adapter(self.DECLARING)
        self.started(p)
        for seq, (line, words) in enumerate((
            ("read_scope = 'workspace'", "`read_scope` must be one of skill, skills-root, case-root"),
            ("read_scope = 5", "`read_scope`"),
            ("read_scope = ['skill']", "`read_scope`"),
            ("formats = []", "`formats` must be a non-empty list of skill-md, skill-yml, each once"),
            ("formats = ['skill-md', 'skill-md']", "`formats`"),
            ("formats = ['SKILL.md']", "`formats`"),
            ("formats = 'skill-md'", "`formats`"),
            ("formats = ['skill-md', 5]", "`formats`"),
            ("lacks = {'depth': 'x'}", "`lacks` names 'depth', not a mechanism"),
            ("lacks = {'nested-scan': ' '}", "`lacks['nested-scan']` must be a reason"),
            ("lacks = {'nested-scan': ''}", "`lacks['nested-scan']`"),
            ("lacks = {'nested-scan': 'x' * 4097}", "at most 4096 bytes"),
            ("lacks = {'nested-scan': '\\u00e9' * 2049}", "at most 4096 bytes"),
            ("lacks = {'nested-scan': '\\ud800 lone'}", "`lacks['nested-scan']`"),
            ("lacks = {'skill_run_script': 5}", "`lacks['skill_run_script']`"),
            ("lacks = ['nested-scan']", "`lacks` must map mechanisms"),
        ), 1):
            r = self.declare(p, seq, [line])
            self.assertEqual((r["type"], r["seq"]), ("error", None), line)
            self.assertIn("misdeclared", r["message"], line)
            self.assertIn(words, r["message"], line)
        self.assertNotIn("read_scope", self.declare(p, 99, ["read_scope = None"])["implementation"])
        self.assert_clean_exit(p)

    def test_dialects_are_checked_and_sent_only_when_set(self):
        p = self.adapter(self.DECLARING)
        self.assertNotIn("dialects", self.started(p)["implementation"])
        # A validator of dialect agentskills: what skills-ref declares, with the lacks only dialects have.
        implementation = self.declare(p, 1, [
            "dialects = [{'name': 'agentskills', 'version': '2026-08', 'mode': 'strict'}]",
            "lacks = {'scan': 'no directory scan', 'activate_skill': 'no activation', 'validate': 'x'}",
        ])["implementation"]
        self.assertEqual(implementation["dialects"], [{"name": "agentskills", "version": "2026-08", "mode": "strict"}])
        self.assertEqual(sorted(implementation["lacks"]), ["activate_skill", "scan", "validate"])
        # Several, as a tuple of any mappings; a dialect the runner does not know is sent as it is.
        implementation = self.declare(p, 2, [
            "import types",
            "dialects = ({'name': 'portable-skills', 'version': '1'},"
            " types.MappingProxyType({'name': 'agentskills', 'version': '2026-08', 'mode': 'lenient'}),"
            " {'name': 'future-skills', 'version': '9', 'mode': 'whatever'})",
        ])["implementation"]
        self.assertEqual(implementation["dialects"], [
            {"name": "portable-skills", "version": "1"},
            {"name": "agentskills", "version": "2026-08", "mode": "lenient"},
            {"name": "future-skills", "version": "9", "mode": "whatever"},
        ])
        self.assertEqual(self.declare(p, 3, ["dialects = [{'name': 'x' * 64, 'version': '\\u00e9' * 32}]"])["implementation"]["dialects"],
                         [{"name": "x" * 64, "version": "\u00e9" * 32}])
        self.assertNotIn("dialects", self.declare(p, 4, ["dialects = None"])["implementation"])
        self.assert_clean_exit(p)

    def test_a_misdeclared_dialects_refuses_the_handshake(self):
        p = self.adapter(self.DECLARING)
        self.started(p)
        agentskills = "{'name': 'agentskills', 'version': '2026-08', 'mode': 'strict'}"
        for seq, (line, words) in enumerate((
            ("dialects = []", '`dialects` must be a non-empty list of {"name": str, "version": str, "mode"?: str}'),
            ("dialects = ()", "`dialects` must be a non-empty list"),
            ("dialects = %s" % agentskills, "`dialects` must be a non-empty list"),
            ("dialects = 'agentskills'", "`dialects` must be a non-empty list"),
            ("dialects = ['agentskills']", "`dialects[0]` must be {\"name\": str, \"version\": str, \"mode\"?: str} with no other key"),
            ("dialects = [None]", "`dialects[0]`"),
            ("dialects = [{'name': 'agentskills', 'mode': 'strict'}]", "`dialects[0]`"),
            ("dialects = [{'version': '1'}]", "`dialects[0]`"),
            ("dialects = [{'name': 'agentskills', 'version': 2026, 'mode': 'strict'}]", "`dialects[0]`"),
            ("dialects = [{'name': '', 'version': '1'}]", "name and version of 1 to 64 bytes"),
            ("dialects = [{'name': 'x', 'version': ''}]", "`dialects[0]`"),
            ("dialects = [{'name': 'x' * 65, 'version': '1'}]", "1 to 64 bytes"),
            ("dialects = [{'name': 'x', 'version': '\\u00e9' * 33}]", "1 to 64 bytes"),
            ("dialects = [{'name': '\\ud800', 'version': '1'}]", "`dialects[0]`"),
            ("dialects = [{'name': 'agentskills', 'version': '2026-08', 'mode': 5}]", "`dialects[0]`"),
            ("dialects = [{'name': 'agentskills', 'version': '2026-08', 'mode': 'strict', 'strict': True}]", "with no other key"),
            ("dialects = [%s, 5]" % agentskills, "`dialects[1]`"),
            ("dialects = [{'name': 'agentskills', 'version': '2026-08'}]",
             "`dialects[0]`: dialect 'agentskills' needs a `mode`, one of strict, lenient"),
            ("dialects = [{'name': 'agentskills', 'version': '2026-08', 'mode': 'loose'}]",
             "`dialects[0]`: dialect 'agentskills' has no mode 'loose' (its modes: strict, lenient)"),
            ("dialects = [{'name': 'portable-skills', 'version': '1', 'mode': 'strict'}]",
             "`dialects[0]`: dialect 'portable-skills' has no modes"),
            ("dialects = [%s, {'name': 'agentskills', 'version': '2026-08', 'mode': 'lenient'}]" % agentskills,
             "`dialects` claims 'agentskills' twice"),
        ), 1):
            r = self.declare(p, seq, [line])
            self.assertEqual((r["type"], r["seq"]), ("error", None), line)
            self.assertIn("misdeclared", r["message"], line)
            self.assertIn(words, r["message"], line)
        # Every problem is named at once.
        r = self.declare(p, 90, ["dialects = [{'name': 'agentskills', 'version': '2026-08'}, {'name': 'portable-skills', 'version': '1', 'mode': 'm'}]"])
        for words in ("`dialects[0]`: dialect 'agentskills' needs a `mode`", "`dialects[1]`: dialect 'portable-skills' has no modes"):
            self.assertIn(words, r["message"])
        self.assertEqual(self.declare(p, 99, ["dialects = [%s]" % agentskills])["type"], "started")
        self.assert_clean_exit(p)


class Conversation(KitTest):
    def test_seq_and_index_are_echoed_and_results_shaped(self):
        p = self.adapter(MINIMAL)
        self.started(p)
        self.case(p, seq=7)
        r = self.step(p, "discover", seq=7, index=3)
        self.assertEqual((r["type"], r["seq"], r["index"]), ("step_result", 7, 3))
        self.assertEqual([e["id"] for e in r["result"]["loaded"]], ["b", "a"])
        self.assertEqual(r["result"]["loaded"][1]["format"], "legacy")
        self.assertEqual(r["result"]["skipped"], [{"path": "c", "reason": "symlink"}])
        self.assertEqual(self.step(p, "tools", seq=7, index=4)["result"], {"offered": ["skill_read_reference"]})
        self.assertEqual(self.step(p, "prompt", seq=7, index=9)["result"], {"text": "text", "baseline": "base"})
        args = {"z": 1, "a": [1.0, None, "\u00e9\U0001f600"], "m": {"k": True}}
        r = self.step(p, "call", seq=7, index=10, tool="t", args=args)
        self.assertEqual((r["index"], r["result"]), (10, {"ok": True, "value": {"tool": "t", "args": args}}))
        self.assertEqual(list(r["result"]["value"]["args"]), ["z", "a", "m"], "key order kept")
        self.assertEqual(self.step(p, "new_turn", seq=7, index=11)["result"], {})
        self.assertEqual(p.ask({"type": "case_end", "seq": 7}), {"type": "case_ended", "seq": 7})
        self.case(p, seq=8)
        self.assertEqual(self.step(p, "tools", seq=8, index=0)["seq"], 8)
        self.assertEqual(p.ask({"type": "case_end", "seq": 8}), {"type": "case_ended", "seq": 8})
        self.assert_clean_exit(p)

    def test_call_args_of_any_json_type_pass_through(self):
        p = self.adapter(MINIMAL)
        self.started(p)
        self.case(p)
        for args in (None, "text", [1, 2], 17, 1.5, {}):
            r = self.step(p, "call", tool="t", args=args)
            self.assertEqual(r["result"]["value"]["args"], args)
        self.assert_clean_exit(p)

    def test_a_long_request_line_is_read_whole(self):
        p = self.adapter(MINIMAL)
        self.started(p)
        self.case(p)
        big = "x" * (5 * 1024 * 1024)
        r = self.step(p, "call", tool="t", args={"path": big})
        self.assertEqual(len(r["result"]["value"]["args"]["path"]), len(big))
        self.assert_clean_exit(p)

    def test_discover_may_return_any_iterable(self):
        p = self.adapter(MINIMAL.replace("return [kit.loaded(\"b\"", "return (e for e in [kit.loaded(\"b\"").replace("format=\"legacy\")]", "format=\"legacy\")])"))
        self.started(p)
        self.case(p)
        self.assertEqual([e["id"] for e in self.step(p, "discover")["result"]["loaded"]], ["b", "a"])
        self.assert_clean_exit(p)

    def test_discover_entries_of_dialect_agentskills_carry_a_location_and_no_format(self):
        p = self.adapter(
            """
            class A(kit.Runtime):
                name, version = "client", "1"
                dialects = [{"name": "agentskills", "version": "2026-08", "mode": "lenient"}]
                def discover(self):
                    return [kit.loaded("pdf", "pdf", "Reads PDFs.", "Body.", format=None, location="/r/.agents/skills/pdf/SKILL.md")]
            kit.serve(A())
            """
        )
        self.started(p)
        self.case(p)
        self.assertEqual(self.step(p, "discover")["result"], {"loaded": [
            {"id": "pdf", "name": "pdf", "description": "Reads PDFs.", "body": "Body.", "location": "/r/.agents/skills/pdf/SKILL.md"},
        ]})
        self.assert_clean_exit(p)

    def test_skipped_entries_are_sent_only_with_skip_report(self):
        p = self.adapter(MINIMAL.replace('features = ["skip-report"]', "features = []"))
        self.started(p)
        self.case(p)
        r = self.step(p, "discover")
        self.assertEqual(r["result"], {"loaded": [
            {"id": "b", "format": "portable", "name": "B", "description": "d", "body": "body"},
            {"id": "a", "format": "legacy", "name": "A", "description": "", "body": ""},
        ]})
        self.assert_clean_exit(p)

    def test_requests_out_of_order_are_refused_with_their_seq(self):
        p = self.adapter(MINIMAL)
        self.started(p)
        r = self.step(p, "tools", seq=4)
        self.assertEqual((r["type"], r["seq"]), ("error", 4))
        self.assertIn("not open", r["message"])
        self.case(p, seq=5)
        r = p.ask({"type": "case_start", "seq": 6, "case": "x", "root": "/", "config": CONFIG})
        self.assertEqual((r["type"], r["seq"]), ("error", 6))
        r = p.ask({"type": "case_end", "seq": 6})
        self.assertEqual((r["type"], r["seq"]), ("error", 6))
        self.assertEqual(p.ask({"type": "case_end", "seq": 5})["type"], "case_ended")
        self.assert_clean_exit(p)

    def test_unknown_requests_and_ops_are_errors(self):
        p = self.adapter(MINIMAL)
        self.started(p)
        self.case(p, seq=3)
        r = self.step(p, "dance", seq=3, index=2)
        self.assertEqual((r["type"], r["seq"]), ("error", 3))
        self.assertIn("unknown op", r["message"])
        r = p.ask({"type": "frobnicate", "seq": 3})
        self.assertEqual((r["type"], r["seq"]), ("error", 3))
        r = p.ask({"type": "step", "seq": 3, "step": {"op": "tools"}})
        self.assertIn("index", r["message"])
        r = p.ask({"type": "step", "seq": 3, "index": 0, "step": {"op": "call", "tool": "t"}})
        self.assertIn("args", r["message"])
        self.assertEqual(self.step(p, "tools", seq=3, index=5)["index"], 5)
        self.assert_clean_exit(p)

    def test_validate_is_dispatched_with_its_path(self):
        p = self.adapter(
            """
            import os
            class A(kit.Runtime):
                name, version = "validator", "1"
                dialects = [{"name": "agentskills", "version": "2026-08", "mode": "strict"}]
                lacks = {"scan": "a validator has no scan"}
                def start_case(self, config, root):
                    self.root = root
                def validate(self, path):
                    if path == "fifo":
                        raise kit.Refused("OSError: SKILL.md is a FIFO")
                    if path == "bad":
                        return kit.validation(False, ("Skill name 'Upper' must be lowercase",))
                    return kit.validation(True, [], {"name": os.path.join(self.root, path), "metadata": {"a": "b"}})
            kit.serve(A())
            """
        )
        self.started(p)
        self.case(p)
        r = self.step(p, "validate", index=2, path="skills/pdf")
        self.assertEqual((r["type"], r["index"]), ("step_result", 2))
        self.assertEqual(r["result"], {"valid": True, "problems": [],
                                       "properties": {"name": os.path.join(self.tmp.name, "skills/pdf"), "metadata": {"a": "b"}}})
        self.assertEqual(self.step(p, "validate", index=3, path="bad")["result"],
                         {"valid": False, "problems": ["Skill name 'Upper' must be lowercase"]})
        self.assertEqual(self.step(p, "validate", index=4, path="fifo")["refused"], {"message": "OSError: SKILL.md is a FIFO"})
        for step in ({"op": "validate"}, {"op": "validate", "path": 5}, {"op": "validate", "path": None}):
            r = p.ask({"type": "step", "seq": 1, "index": 5, "step": step})
            self.assertEqual((r["type"], r["seq"]), ("error", 1), step)
            self.assertIn("`validate` step without a string `path`", r["message"])
        self.assertEqual(p.ask({"type": "case_end", "seq": 1})["type"], "case_ended")
        self.assert_clean_exit(p)


# Records what the runtime was handed: bad configs must never reach it.
RECORDING = """
class A(kit.Runtime):
    name, version = "recording", "0"
    seen = []
    def start_case(self, config, root):
        self.seen.append("start_case %r %r %r %r" % (config.tool_allowlist, config.env, config.allow_trading, config.raw.get("future")))
    def end_case(self):
        self.seen.append("end_case")
    def tools(self):
        return self.seen
kit.serve(A())
"""


class CaseConfig(KitTest):
    # (config or a change to CONFIG, what the error names): every field of PROTOCOL.md's
    # `case_start` table, and of its profiles, with a value of another type.
    BAD = (
        (dict(CONFIG, tool_allowlist=5), "`config.tool_allowlist` must be a list of strings or null, got 5"),
        (dict(CONFIG, tool_allowlist="ab"), "`config.tool_allowlist`"),
        (dict(CONFIG, tool_allowlist=["a", 1]), "`config.tool_allowlist`"),
        (dict(CONFIG, tool_allowlist={"a": "b"}), "`config.tool_allowlist`"),
        (dict(CONFIG, env="ab"), "`config.env` must be an object of strings, got 'ab'"),
        (dict(CONFIG, env=5), "`config.env`"),
        (dict(CONFIG, env=None), "`config.env`"),
        (dict(CONFIG, env=[["A", "b"]]), "`config.env`"),
        (dict(CONFIG, env={"A": 1}), "`config.env`"),
        (dict(CONFIG, skills_root=5), "`config.skills_root` must be a string or null, got 5"),
        (dict(CONFIG, script_allowlist=[]), "`config.script_allowlist` must be a string or null, got []"),
        (dict(CONFIG, allow_trading="yes"), "`config.allow_trading` must be a boolean, got 'yes'"),
        (dict(CONFIG, allow_trading=1), "`config.allow_trading`"),
        (dict(CONFIG, allow_trading=None), "`config.allow_trading`"),
        (dict(CONFIG, python=7), "`config.python` must be a string, got 7"),
        (dict(CONFIG, python=None), "`config.python`"),
        (dict(CONFIG, timeout_ms=5), "`config.timeout_ms` must be a string or null, got 5"),
        (dict(CONFIG, replay={}), "`config.replay` must be a string or null, got {}"),
        (dict(CONFIG, platform=1), "`config.platform`"),
        (dict(CONFIG, skill_dirs="dirs"), "`config.skill_dirs` must be an object"),
        (dict(CONFIG, skill_dirs={"user": 5}), "`config.skill_dirs.user` must be a string or null, got 5"),
        (dict(CONFIG, registry=None), "`config.registry` must be a string"),
        (dict(CONFIG, selection={"max_active": "3"}), "`config.selection.max_active` must be a non-negative integer or null"),
        (dict(CONFIG, selection={"max_context_tokens": True}), "`config.selection.max_context_tokens`"),
        (dict(CONFIG, selection={"max_active": -1}), "`config.selection.max_active`"),
        (dict(CONFIG, hitl=[]), "`config.hitl` must be an object"),
        (dict(CONFIG, hitl={"enabled": "yes"}), "`config.hitl.enabled` must be a boolean"),
        (dict(CONFIG, hitl={"script_tool_allowed": 1}), "`config.hitl.script_tool_allowed`"),
        (dict(CONFIG, hitl={"session": None}), "`config.hitl.session` must be a string"),
        (dict(CONFIG, hitl={"answers": "approve"}), "`config.hitl.answers` must be a list of strings"),
        (dict(CONFIG, hitl={"timeout_ms": 500}), "`config.hitl.timeout_ms` must be a string or null"),
        (dict(CONFIG, dialect=5), "`config.dialect` must be a string, got 5"),
        (dict(CONFIG, dialect=None), "`config.dialect` must be a string"),
        (dict(CONFIG, dialect=["agentskills"]), "`config.dialect`"),
        (dict(CONFIG, user_skills_root=None), "`config.user_skills_root` must be a string, got None"),
        (dict(CONFIG, user_skills_root={}), "`config.user_skills_root`"),
        (5, "`config` must be an object, got 5"),
        ([CONFIG], "`config` must be an object"),
        ("config", "`config` must be an object"),
        (None, "`config` must be an object"),
    )

    def test_a_config_of_the_wrong_type_is_answered_with_error_and_the_session_goes_on(self):
        p = self.adapter(RECORDING)
        self.started(p)
        for seq, (config, words) in enumerate(self.BAD, 1):
            r = p.ask({"type": "case_start", "seq": seq, "case": "x.y", "root": self.tmp.name, "config": config})
            self.assertEqual((r["type"], r["seq"]), ("error", seq), words)
            self.assertIn(words, r["message"])
            self.assertLess(len(r["message"]), 1000)
        # Every problem is named at once, and a bad `root` too.
        r = p.ask({"type": "case_start", "seq": 70, "case": "x.y", "root": 5, "config": dict(CONFIG, python=7, env="ab")})
        for words in ("`root` must be a string, got 5", "`config.python`", "`config.env`"):
            self.assertIn(words, r["message"])
        # The case was never opened: the next case_start is served, and the runtime saw no bad config.
        self.case(p, seq=71, config=dict(CONFIG, tool_allowlist=["skill_read_reference"]))
        self.assertEqual(self.step(p, "tools", seq=71)["result"]["offered"],
                         ["start_case ['skill_read_reference'] {'LANG': 'C.UTF-8'} False None"])
        self.assertEqual(p.ask({"type": "case_end", "seq": 71})["type"], "case_ended")
        self.assert_clean_exit(p)
        self.assertNotIn("Traceback", p.stderr.decode())

    def test_values_of_the_right_types_pass_whatever_they_mean(self):
        p = self.adapter(RECORDING)
        self.started(p)
        good = dict(
            CONFIG, skills_root="", script_allowlist="{not an allowlist", tool_allowlist=[], allow_trading=True, replay="on",
            timeout_ms="abc", python="python3", env={}, platform="no-process-groups", future={"a": 1},
            skill_dirs={"user": "/u", "workspace": None}, registry="/r", selection={"max_active": 0, "max_context_tokens": None},
            hitl={"enabled": False, "script_tool_allowed": True, "session": "maybe", "answers": ["ok"], "timeout_ms": None},
            dialect="agentskills", user_skills_root="/home/u/.agents/skills",
        )
        minimal = {"skills_root": None, "python": "python3", "env": {"A": "b"}}  # absent fields keep Config's defaults
        for seq, config in enumerate((good, minimal), 1):
            self.case(p, seq=seq, config=config)
            self.assertEqual(p.ask({"type": "case_end", "seq": seq})["type"], "case_ended")
        self.case(p, seq=3)
        self.assertEqual(self.step(p, "tools", seq=3)["result"]["offered"][:4], [
            "start_case [] {} True {'a': 1}", "end_case", "start_case None {'A': 'b'} False None", "end_case"])
        self.assert_clean_exit(p)


class Transport(KitTest):
    def test_invalid_requests_are_answered_with_error_and_the_adapter_goes_on(self):
        p = self.adapter(MINIMAL)
        for bad, words in (
            (b"not json\n", "not JSON"),
            (b'{"type": "start", \n', "not JSON"),
            (b"[1, 2]\n", "JSON object"),
            (b'{"type": "st\xffart"}\n', "UTF-8"),
            (b'{"type": "case_start"}\n', "seq"),
        ):
            p.send(bad)
            r = p.recv()
            self.assertEqual(r["type"], "error", bad)
            self.assertIn(words, r["message"], bad)
        p.send(b"\n   \n")  # blank lines are not requests
        self.started(p)
        self.assert_clean_exit(p)

    def test_hostile_request_lines_are_answered_with_error_and_the_adapter_goes_on(self):
        deep_array = b"[" * 100000 + b"]" * 100000
        deep_object = b'{"a":' * 100000 + b"1" + b"}" * 100000
        deep_args = b'{"type": "step", "seq": 1, "index": 0, "step": {"op": "call", "tool": "t", "args": ' + deep_array + b"}}"
        p = self.adapter(MINIMAL)
        for bad, words in (
            (deep_array, "nested too deeply"),
            (deep_object, "nested too deeply"),
            (deep_args, "nested too deeply"),
            (b'"start"', "JSON object"),
            (b"42", "JSON object"),
            (b"null", "JSON object"),
            (b"\xc3\x28 not utf-8", "UTF-8"),
            (b"{\"type\": \"start\"", "not JSON"),
        ):
            p.send(bad + b"\n")
            r = p.recv()
            self.assertEqual(r["type"], "error", bad[:40])
            self.assertIsNone(r["seq"], bad[:40])
            self.assertIn(words, r["message"], bad[:40])
            self.assertLess(len(r["message"]), 1000, bad[:40])
            self.started(p)
        self.assert_clean_exit(p)

    def padded(self, message, size):
        """``message`` as a request line of exactly ``size`` bytes (spaces after the JSON)."""
        data = json.dumps(message).encode()
        return data + b" " * (size - len(data))

    def send_streaming(self, p, size, chunk=1 << 20, tail=b"\n"):
        """A line of ``size`` bytes of ``x`` and then ``tail``, written a chunk at a time (one
        chunk in memory)."""
        block = b"x" * chunk
        for _ in range(size // chunk):
            p.send(block)
        p.send(b"x" * (size % chunk) + tail)

    def test_a_request_line_over_the_limit_is_discarded_and_the_next_line_served(self):
        limit = 100000
        p = self.adapter(MINIMAL, env={"SKILLSPEC_KIT_MAX_REQUEST": str(limit)})
        start = {"type": "start", "protocol_version": 2}
        # At the limit a request is served; one byte more and it is not, however valid it is.
        p.send(self.padded(start, limit) + b"\n")
        self.assertEqual(p.recv()["type"], "started")
        p.send(self.padded(start, limit + 1) + b"\n")
        r = p.recv()
        self.assertEqual((r["type"], r["seq"]), ("error", None), r)
        self.assertIn("request line of %d bytes is over the adapter kit's limit of %d bytes and was discarded" % (limit + 1, limit), r["message"])
        self.started(p)
        # A long line arriving in many pieces, then a request in the same write as its end.
        request = {"type": "case_start", "seq": 4, "root": "/", "config": CONFIG}
        self.send_streaming(p, 37 * limit + 5, chunk=limit // 3, tail=b"\n" + json.dumps(request).encode() + b"\n")
        r = p.recv()
        self.assertEqual((r["type"], r["seq"]), ("error", None), r)
        self.assertIn("of %d bytes" % (37 * limit + 5), r["message"])
        self.assertEqual(p.recv(), {"type": "case_started", "seq": 4})
        self.assertEqual(p.ask({"type": "case_end", "seq": 4})["type"], "case_ended")
        # A line over the limit at the end of input, without its newline, is answered too.
        p.send(self.padded(start, limit + 1))
        p.proc.stdin.close()
        r = p.recv()
        self.assertEqual((r["type"], r["seq"]), ("error", None), r)
        self.assertIn("of %d bytes" % (limit + 1), r["message"])
        self.assert_clean_exit(p, stop=False)

    def test_a_300_mib_request_line_takes_bounded_memory(self):
        # The real limit (64 MiB), under an address-space limit of 512 MiB: a kit that held the
        # line (readline, then a copy without the newline, then the decoded text) peaks above 900
        # MiB and dies with a MemoryError. The kit reports its own peak resident size: Python's
        # own and the up to 64 MiB it keeps before the line is known to be too long.
        p = self.adapter(
            """
            import resource
            class A(kit.Runtime):
                name, version = "peak", "0"
                def tools(self):
                    return [str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)]
            kit.serve(A())
            """,
            address_space=512 << 20,
        )
        size = 300 * 1024 * 1024
        self.send_streaming(p, size)
        r = p.recv()
        self.started(p)
        self.case(p)
        peak_kib = int(self.step(p, "tools")["result"]["offered"][0])
        sys.stderr.write("[a 300 MiB request line: the Python kit's peak RSS was %.1f MiB] " % (peak_kib / 1024))
        self.assertLess(peak_kib, 128 * 1024, "the kit's peak resident size (KiB)")
        self.assertEqual((r["type"], r["seq"]), ("error", None), r)
        self.assertIn("request line of %d bytes is over the adapter kit's limit of %d bytes" % (size, 64 * 1024 * 1024), r["message"])
        self.assertEqual(kit.MAX_REQUEST, 64 * 1024 * 1024, "the limit this test was run with")
        self.assert_clean_exit(p)

    def test_stdout_is_protected_from_the_runtime(self):
        p = self.adapter(
            """
            import os, subprocess, logging
            print("chatter at import")
            sys.stdout.write("no newline at import")
            logging.basicConfig(stream=sys.stdout, level=logging.INFO)
            class A(kit.Runtime):
                name, version = "noisy", "0"
                def start_case(self, config, root):
                    print("starting", root)
                    os.write(1, b"raw bytes on fd 1\\n")
                    logging.info("a log line to stdout")
                def tools(self):
                    sys.__stdout__.write("via __stdout__\\n")
                    subprocess.run(["sh", "-c", "echo from a child; echo child stderr >&2"], check=True)
                    os.system("echo from os.system")
                    return []
                def discover(self):
                    print("x" * 100000, end="")
                    return []
            kit.serve(A())
            """
        )
        self.started(p)
        self.case(p)
        self.assertEqual(self.step(p, "tools")["result"], {"offered": []})
        self.assertEqual(self.step(p, "discover", index=1)["result"], {"loaded": []})
        self.assertEqual(p.ask({"type": "case_end", "seq": 1})["type"], "case_ended")
        self.assert_clean_exit(p)
        err = p.stderr.decode()
        for text in ("chatter at import", "no newline at import", "starting", "raw bytes on fd 1", "a log line to stdout",
                     "via __stdout__", "from a child", "child stderr", "from os.system"):
            self.assertIn(text, err)

    def test_stdin_is_not_the_runtimes(self):
        p = self.adapter(
            """
            import subprocess
            class A(kit.Runtime):
                name, version = "reader", "0"
                def tools(self):
                    child = subprocess.run(["sh", "-c", "cat"], capture_output=True, check=True).stdout
                    return [repr(sys.stdin.read()), repr(child)]
            kit.serve(A())
            """
        )
        self.started(p)
        self.case(p)
        self.assertEqual(self.step(p, "tools")["result"], {"offered": ["''", "b''"]})
        self.assert_clean_exit(p)

    def test_protocol_descriptors_are_not_inherited(self):
        p = self.adapter(
            """
            import os, subprocess
            class A(kit.Runtime):
                name, version = "fds", "0"
                def tools(self):
                    out = subprocess.run(["ls", "/proc/self/fd"], capture_output=True, close_fds=False).stdout
                    return sorted(out.decode().split())
            kit.serve(A())
            """
        )
        self.started(p)
        self.case(p)
        fds = self.step(p, "tools")["result"]["offered"]
        # ls's own 0, 1 (the pipe to capture), 2 and the directory it lists; nothing of the kit's.
        self.assertLessEqual(len(fds), 4, fds)
        self.assert_clean_exit(p)

    def test_answers_that_are_not_utf8_json_become_errors(self):
        p = self.adapter(
            """
            import os
            class A(kit.Runtime):
                name, version = "bad-text", "0"
                def discover(self):
                    name = os.fsdecode(b"caf\\xe9")
                    return [kit.loaded(name, name, "", "")]
                def call(self, tool, args):
                    if tool == "nan":
                        return kit.ok({"v": float("nan")})
                    if tool == "object":
                        return kit.ok({"v": object()})
                    return kit.ok({"content": "y" * (17 * 1024 * 1024)})
            kit.serve(A())
            """
        )
        self.started(p)
        self.case(p, seq=2)
        r = self.step(p, "discover", seq=2)
        self.assertEqual((r["type"], r["seq"]), ("error", 2))
        self.assertIn("result.loaded[0].id", r["message"])
        self.assertIn("surrogate", r["message"])
        r = self.step(p, "call", seq=2, tool="nan", args={})
        self.assertEqual(r["type"], "error")
        self.assertIn("nan", r["message"])
        r = self.step(p, "call", seq=2, tool="object", args={})
        self.assertIn("not JSON serializable", r["message"])
        r = self.step(p, "call", seq=2, tool="big", args={})
        self.assertEqual(r["type"], "error")
        self.assertIn("line limit", r["message"])
        self.assertEqual(p.ask({"type": "case_end", "seq": 2})["type"], "case_ended")
        self.assert_clean_exit(p)

    def test_a_huge_answer_is_refused_before_it_is_encoded(self):
        # A runtime that reads a 4 GiB file whole hands back a 4 GiB text; the kit must answer
        # the error without json.dumps of it (which would need several times its size). Under a
        # 1 GiB address-space limit a 600 MiB text fits, its encoding would not.
        p = self.adapter(
            """
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
            class A(kit.Runtime):
                name, version = "huge", "0"
                def call(self, tool, args):
                    return kit.ok({"content": [{"deep": "z" * (600 * 1024 * 1024)}]})
            kit.serve(A())
            """
        )
        self.started(p)
        self.case(p, seq=2)
        r = self.step(p, "call", seq=2, tool="big", args={})
        self.assertEqual(r["type"], "error", r)
        self.assertIn("more than 16777216 characters", r["message"])
        self.assertEqual(p.ask({"type": "case_end", "seq": 2})["type"], "case_ended")
        self.assert_clean_exit(p)

    def test_text_is_counted_without_encoding(self):
        self.assertEqual(kit._text_at_least({"ab": ["c", {"d": "efg"}], "n": 5}, 100), 8)
        self.assertGreater(kit._text_at_least(["x" * 50] * 10, 100), 100)


class Failures(KitTest):
    def test_exceptions_become_errors_with_the_traceback_on_stderr(self):
        p = self.adapter(
            """
            class A(kit.Runtime):
                name, version = "raises", "0"
                def discover(self):
                    return {}["missing-key-4711"]
                def tools(self):
                    sys.exit(3)
                def prompt(self):
                    raise kit.AdapterError("this runtime has no prompt to show")
                def call(self, tool, args):
                    raise NotImplementedError("deep in the runtime")
                def new_turn(self):
                    pass
            kit.serve(A())
            """
        )
        self.started(p)
        self.case(p, seq=9)
        r = self.step(p, "discover", seq=9, index=1)
        self.assertEqual((r["type"], r["seq"]), ("error", 9))
        self.assertIn("discover() raised KeyError", r["message"])
        r = self.step(p, "tools", seq=9, index=2)
        self.assertIn("sys.exit(3)", r["message"])
        r = self.step(p, "prompt", seq=9, index=3)
        self.assertEqual(r["message"], "this runtime has no prompt to show")
        r = self.step(p, "call", seq=9, index=5, tool="t", args={})
        self.assertIn("call() raised NotImplementedError: deep in the runtime", r["message"])
        self.assertEqual(self.step(p, "new_turn", seq=9, index=4)["result"], {})
        self.assertEqual(p.ask({"type": "case_end", "seq": 9})["type"], "case_ended")
        self.assert_clean_exit(p)
        err = p.stderr.decode()
        self.assertIn("Traceback", err)
        self.assertIn("missing-key-4711", err)
        self.assertNotIn("this runtime has no prompt", err, "AdapterError carries no traceback")

    def test_a_failed_start_case_is_cleaned_up_and_the_next_case_runs(self):
        marker = os.path.join(self.tmp.name, "ended")
        p = self.adapter(
            """
            class A(kit.Runtime):
                name, version = "flaky", "0"
                def start_case(self, config, root):
                    if config.env.get("FAIL"):
                        raise RuntimeError("cannot start")
                def end_case(self):
                    open(%r, "a").write("ended\\n")
            kit.serve(A())
            """ % marker
        )
        self.started(p)
        r = p.ask({"type": "case_start", "seq": 1, "case": "x", "root": "/", "config": dict(CONFIG, env={"FAIL": "1"})})
        self.assertEqual((r["type"], r["seq"]), ("error", 1))
        self.assertIn("RuntimeError: cannot start", r["message"])
        self.case(p, seq=2)
        self.assertEqual(p.ask({"type": "case_end", "seq": 2})["type"], "case_ended")
        self.assert_clean_exit(p)
        with open(marker) as f:
            self.assertEqual(f.read(), "ended\nended\n")

    def test_unimplemented_methods_answer_honestly(self):
        p = self.adapter("class A(kit.Runtime):\n    name, version = 'bare', '0'\nkit.serve(A())\n")
        self.started(p)
        self.case(p)
        for index, op in enumerate(("discover", "tools", "prompt", "new_turn", "validate")):
            r = self.step(p, op, index=index, **({"path": "skills/a"} if op == "validate" else {}))
            self.assertEqual(r["type"], "error", op)
            self.assertIn("%s() is not implemented" % op, r["message"])
        r = self.step(p, "call", index=9, tool="skill_read_reference", args={})
        self.assertEqual(r["result"]["ok"], False)
        self.assertEqual(r["result"]["error"]["code"], "unknown_tool")
        self.assertEqual(p.ask({"type": "case_end", "seq": 1})["type"], "case_ended")
        self.assert_clean_exit(p)

    def test_results_of_the_wrong_shape_are_adapter_bugs(self):
        p = self.adapter(
            """
            class A(kit.Runtime):
                name, version = "sloppy", "0"
                def discover(self):
                    return [{"id": "a", "format": "modern"}] if not self.located else [kit.loaded("a", "a", "", "", None, location=5)]
                located = False
                def tools(self):
                    self.located = True
                    return "skill_read_reference"
                def prompt(self):
                    return "only text"
                def call(self, tool, args):
                    return {"ok": False, "error": "not_found"} if tool == "a" else kit.skipped("x", "nonsense")
            kit.serve(A())
            """
        )
        self.started(p)
        self.case(p)
        for op, fields, words in (
            ("discover", {}, "portable or legacy"),
            ("tools", {}, "list of tool names"),
            ("prompt", {}, "(text, baseline)"),
            ("call", {"tool": "a", "args": {}}, "ok({...}) or error(code"),
            ("call", {"tool": "b", "args": {}}, "ok({...}) or error(code"),
            ("discover", {}, "needs string name/description/body/location"),
        ):
            r = self.step(p, op, **fields)
            self.assertEqual(r["type"], "error", op)
            self.assertIn("adapter bug", r["message"])
            self.assertIn(words, r["message"])
        self.assert_clean_exit(p)

    def test_a_validate_result_of_the_wrong_shape_is_an_adapter_bug(self):
        p = self.adapter(
            """
            import json
            class A(kit.Runtime):
                name, version = "sloppy-validator", "0"
                def validate(self, path):
                    return json.loads(path)  # the test sends each answer as the path
            kit.serve(A())
            """
        )
        self.started(p)
        self.case(p)
        for index, value in enumerate((
            None,
            True,
            [True, []],
            {"valid": True},
            {"problems": []},
            {"valid": "yes", "problems": []},
            {"valid": 1, "problems": []},
            {"valid": False, "problems": "Skill name must be lowercase"},
            {"valid": False, "problems": ["a", 5]},
            {"valid": False, "problems": None},
            {"valid": True, "problems": [], "properties": None},
            {"valid": True, "problems": [], "properties": [["name", "a"]]},
            {"valid": True, "problems": [], "properties": "name: a"},
            {"valid": True, "problems": [], "errors": []},
        )):
            r = self.step(p, "validate", index=index, path=json.dumps(value))
            self.assertEqual((r["type"], r["seq"]), ("error", 1), value)
            self.assertIn('adapter bug: validate() must return validation(...), {"valid": bool, "problems": [str], "properties"?: {...}}',
                          r["message"])
            self.assertIn("with no other key", r["message"])
        # The session goes on: a good answer after the bad ones.
        good = {"valid": True, "problems": [], "properties": {}}
        self.assertEqual(self.step(p, "validate", index=20, path=json.dumps(good))["result"], good)
        self.assert_clean_exit(p)

    def test_asked_rides_along_a_call_result_and_is_checked(self):
        p = self.adapter(
            """
            class A(kit.Runtime):
                name, version = "hitl", "0"
                def call(self, tool, args):
                    q = [{"tool": "run_skill_script", "skill": "a", "script": "x.py", "args": []}]
                    if tool == "ok":
                        return kit.with_asked(kit.ok({"exit_code": 0}), q)
                    if tool == "denied":
                        return kit.with_asked(kit.error("denied"), q)
                    if tool == "none":
                        return kit.with_asked(kit.error("unknown_skill"), [])
                    return dict(kit.ok({}), asked="yes")
            kit.serve(A())
            """
        )
        self.started(p)
        self.case(p)
        q = {"tool": "run_skill_script", "skill": "a", "script": "x.py", "args": []}
        self.assertEqual(self.step(p, "call", tool="ok", args={})["result"], {"ok": True, "value": {"exit_code": 0}, "asked": [q]})
        self.assertEqual(self.step(p, "call", tool="denied", args={})["result"], {"ok": False, "error": {"code": "denied"}, "asked": [q]})
        self.assertEqual(self.step(p, "call", tool="none", args={})["result"], {"ok": False, "error": {"code": "unknown_skill"}, "asked": []})
        r = self.step(p, "call", tool="bad", args={})
        self.assertEqual(r["type"], "error")
        self.assertIn("`asked` must be a list of question objects", r["message"])
        self.assert_clean_exit(p)

    def test_async_methods_run_on_one_loop(self):
        p = self.adapter(
            """
            import asyncio
            class A(kit.Runtime):
                name, version = "async", "0"
                async def start_case(self, config, root):
                    self.loop = asyncio.get_running_loop()
                async def tools(self):
                    await asyncio.sleep(0)
                    return ["same loop" if asyncio.get_running_loop() is self.loop else "another loop"]
            kit.serve(A())
            """
        )
        self.started(p)
        self.case(p)
        self.assertEqual(self.step(p, "tools")["result"], {"offered": ["same loop"]})
        self.assert_clean_exit(p)


class Stop(KitTest):
    def test_stop_ends_the_open_case_and_exits_without_a_word(self):
        marker = os.path.join(self.tmp.name, "ended")
        body = "class A(kit.Runtime):\n    name, version = 's', '0'\n    def end_case(self):\n        open(%r, 'a').write('x')\nkit.serve(A())\n" % marker
        p = self.adapter(body)
        self.started(p)
        self.case(p)
        self.assert_clean_exit(p, stop=True)
        with open(marker) as f:
            self.assertEqual(f.read(), "x")

    def test_end_of_input_is_a_stop(self):
        p = self.adapter(MINIMAL)
        self.started(p)
        self.case(p)
        self.assert_clean_exit(p, stop=False)

    def test_nothing_after_stop_is_read(self):
        p = self.adapter(MINIMAL)
        self.started(p)
        p.send(b'{"type":"stop"}\n{"type":"start","protocol_version":2}\n')
        self.assert_clean_exit(p, stop=False)


REFUSING = """
class Native(Exception):
    pass

READ = kit.MappedTool("skill_read_reference", "read_skill_resource",
                      args={"skill": "skill_name", "path": "resource_name"},
                      result={"skill_name": "skill", "resource_name": "path", "text": "content"})

class A(kit.Runtime):
    name, version = "refusing", "1"
    tool_names = kit.MappedTool.names(READ)
    def start_case(self, config, root):
        if config.skills_root is None:
            raise kit.Refused(FileNotFoundError(2, "no skills directory"))
    def discover(self):
        raise kit.Refused("scan aborted: SKILL.md is a FIFO")
    def tools(self):
        return ["skill_read_reference"]
    def call(self, tool, args):
        native = READ.native_args(args)
        if native.get("resource_name", "").startswith(".."):
            return kit.refusal("invalid_path", Native("resource outside the skill"))
        if native.get("resource_name") == "deny":
            raise kit.Refused(Native("sandbox denied the call"))
        return kit.ok(READ.spec_value(dict(native, text="hi")))
    def end_case(self):
        print("end_case ran")
kit.serve(A())
"""


class Refusals(KitTest):
    def test_tool_names_are_declared(self):
        p = self.adapter(REFUSING)
        self.assertEqual(self.started(p)["implementation"]["tool_names"], {"skill_read_reference": "read_skill_resource"})
        self.assert_clean_exit(p)

    def test_activate_skill_is_a_spec_tool_a_native_name_maps(self):
        self.assertIn("activate_skill", kit.SPEC_TOOLS)
        activate = kit.MappedTool("activate_skill", "Skill", args={"name": "command"})
        self.assertEqual(activate.native_args({"name": "pdf"}), {"command": "pdf"})
        p = self.adapter("class A(kit.Runtime):\n    name, version = 'a', '1'\n    tool_names = {'activate_skill': 'Skill'}\nkit.serve(A())\n")
        self.assertEqual(self.started(p)["implementation"]["tool_names"], {"activate_skill": "Skill"})
        self.assert_clean_exit(p)

    def test_a_misdeclared_tool_name_refuses_the_handshake(self):
        p = self.adapter("class A(kit.Runtime):\n    name, version = 'a', '1'\n    tool_names = {'read_file': 'x'}\nkit.serve(A())\n")
        r = p.ask({"type": "start", "protocol_version": 2})
        self.assertEqual(r["type"], "error")
        self.assertIn("`tool_names`", r["message"])
        self.assert_clean_exit(p)

    def test_a_refused_step_is_answered_with_refused_and_the_runtimes_message(self):
        p = self.adapter(REFUSING)
        self.started(p)
        self.case(p, config=dict(CONFIG, skills_root=self.tmp.name))
        self.assertEqual(self.step(p, "discover"),
                         {"type": "step_result", "seq": 1, "index": 0, "refused": {"message": "scan aborted: SKILL.md is a FIFO"}})
        call = lambda path: self.step(p, "call", index=1, tool="skill_read_reference", args={"skill": "a", "path": path})
        self.assertEqual(call("deny")["refused"], {"message": "Native: sandbox denied the call"})
        self.assertEqual(call("../x.md")["result"],
                         {"ok": False, "error": {"code": "invalid_path", "message": "Native: resource outside the skill"}})
        # Arguments and results renamed both ways.
        self.assertEqual(call("references/a.md")["result"],
                         {"ok": True, "value": {"skill": "a", "path": "references/a.md", "content": "hi"}})
        self.assertEqual(p.ask({"type": "case_end", "seq": 1})["type"], "case_ended")
        self.assert_clean_exit(p)

    def test_a_refused_start_refuses_every_step_and_the_case_still_ends(self):
        p = self.adapter(REFUSING)
        self.started(p)
        r = p.ask({"type": "case_start", "seq": 1, "case": "x.y", "root": self.tmp.name, "config": CONFIG})
        self.assertEqual(r, {"type": "case_started", "seq": 1,
                             "refused": {"message": "FileNotFoundError: [Errno 2] no skills directory"}})
        for index, op in enumerate(["tools", "discover", "new_turn"]):
            self.assertEqual(self.step(p, op, index=index)["refused"]["message"], "FileNotFoundError: [Errno 2] no skills directory")
        self.assertEqual(p.ask({"type": "case_end", "seq": 1})["type"], "case_ended")
        # The next case starts normally.
        self.case(p, seq=2, config=dict(CONFIG, skills_root=self.tmp.name))
        self.assertIn("result", self.step(p, "tools", seq=2))
        self.assert_clean_exit(p)
        self.assertEqual(p.stderr.decode().count("end_case ran"), 2)


class ExampleRuntime(KitTest):
    def test_the_toy_runtime_answers_a_case(self):
        root = self.tmp.name
        os.makedirs(os.path.join(root, "skills", "weather", "references"))
        with open(os.path.join(root, "skills", "weather", "SKILL.md"), "w") as f:
            f.write("---\nname: Weather\ndescription: forecasts\n---\nUse it.\n")
        with open(os.path.join(root, "skills", "weather", "references", "a.md"), "w") as f:
            f.write("alpha\n")
        p = Process([sys.executable, os.path.join(HERE, "example_runtime.py")])
        self.addCleanup(p.close)
        self.assertEqual(self.started(p)["implementation"]["name"], "toy-python-runtime")
        self.case(p, root=root, config=dict(CONFIG, skills_root=os.path.join(root, "skills")))
        self.assertEqual(self.step(p, "discover")["result"]["loaded"],
                         [{"id": "weather", "format": "portable", "name": "Weather", "description": "forecasts", "body": "Use it."}])
        self.assertEqual(self.step(p, "tools", index=1)["result"], {"offered": ["skill_read_reference"]})
        read = lambda path: self.step(p, "call", index=2, tool="skill_read_reference", args={"skill": "weather", "path": path})["result"]
        self.assertEqual(read("references/a.md"), {"ok": True, "value": {"skill": "weather", "path": "references/a.md", "content": "alpha\n"}})
        missing = read("references/b.md")["error"]
        self.assertEqual(missing["code"], "not_found")
        self.assertIn("rule 7", missing["message"])
        self.assertEqual(read("../x.md")["error"]["code"], "invalid_path")
        text = self.step(p, "prompt", index=3)["result"]["text"]
        self.assertIn("`weather`", text)
        self.assertEqual(p.ask({"type": "case_end", "seq": 1})["type"], "case_ended")
        self.assert_clean_exit(p)
        self.assertIn("1 skills loaded", p.stderr.decode())


class Helpers(unittest.TestCase):
    ERRORS = kit.ErrorMap(
        kit.rule(r"^KeyError: .unknown skill", "unknown_skill", "raised by registry.get"),
        kit.rule(r"not allowed", "invalid_path", "the runtime says it for every path rule", guess=True),
        kit.rule(r"exited with (?P<status>\d+)", "script_failed", "runner.py", fields=lambda m: {"exit_code": int(m["status"])}),
        kit.rule(r"allowed", "not_approved", "never reached for 'not allowed': the first rule wins"),
    )

    def test_the_first_matching_rule_decides_and_says_so(self):
        e = self.ERRORS.error("path not allowed: ../x")
        self.assertEqual(e["error"]["code"], "invalid_path")
        self.assertIn("rule 2", e["error"]["message"])
        self.assertIn("GUESS: the runtime says it for every path rule", e["error"]["message"])
        certain = self.ERRORS.error(KeyError("unknown skill x"))["error"]
        self.assertEqual(certain["code"], "unknown_skill")
        self.assertNotIn("GUESS", certain["message"])
        self.assertIn("rule 1", certain["message"])

    def test_fields_come_from_the_rule_and_the_caller(self):
        e = self.ERRORS.error("helper exited with 3", stderr="boom")["error"]
        self.assertEqual((e["code"], e["exit_code"], e["stderr"]), ("script_failed", 3, "boom"))
        self.assertEqual(self.ERRORS.error("x exited with 2", message="mine")["error"]["message"], "mine")

    def test_an_unmapped_error_is_not_guessed(self):
        with self.assertRaises(kit.Unmapped) as raised:
            self.ERRORS.error(ValueError("something new"))
        self.assertEqual(raised.exception.text, "ValueError: something new")
        self.assertIsNone(self.ERRORS.code("something new"))
        fallback = kit.ErrorMap(kit.rule("a", "b"), default="not_found")
        e = fallback.error("zzz")["error"]
        self.assertEqual(e["code"], "not_found")
        self.assertIn("no rule matched", e["message"])

    def test_the_table_shows_every_rule_and_marks_guesses(self):
        table = self.ERRORS.table().splitlines()
        self.assertEqual(len(table), 2 + 4 + 1)
        self.assertIn("| 2 | `not allowed` | `invalid_path` | GUESS |", table[3])
        self.assertIn("| yes |", table[2])
        self.assertIn("protocol `error` (unmapped)", table[-1])

    def test_result_helpers(self):
        self.assertEqual(kit.ok({"a": 1}), {"ok": True, "value": {"a": 1}})
        self.assertEqual(kit.error("not_approved", hint="ask", approved_scripts=[]),
                         {"ok": False, "error": {"code": "not_approved", "hint": "ask", "approved_scripts": []}})
        self.assertEqual(kit.loaded("a", "A", "d", "b", format="legacy")["format"], "legacy")
        self.assertEqual(kit.skipped("x/y", "too_deep"), {"path": "x/y", "reason": "too_deep"})
        self.assertEqual(kit.loaded("a", "A", "d", "b", None, location="/s/a/SKILL.md"),
                         {"id": "a", "name": "A", "description": "d", "body": "b", "location": "/s/a/SKILL.md"})
        self.assertEqual(kit.validation(False, ("too long",)), {"valid": False, "problems": ["too long"]})
        self.assertEqual(kit.validation(True, [], {"name": "a"}), {"valid": True, "problems": [], "properties": {"name": "a"}})
        self.assertEqual(kit.validation(True, [], {}), {"valid": True, "problems": [], "properties": {}})

    def test_a_refusal_carries_the_runtimes_message_and_never_one_of_its_own(self):
        self.assertEqual(kit.refusal("not_found", FileNotFoundError("gone"), path="x"),
                         {"ok": False, "error": {"code": "not_found", "message": "FileNotFoundError: gone", "path": "x"}})
        self.assertEqual(kit.refusal("denied", "user said no")["error"]["message"], "user said no")
        for bad in ("", "  ", None, 3):
            with self.assertRaises(ValueError):
                kit.refusal("invalid_path", bad)
            with self.assertRaises(ValueError):
                kit.Refused(bad)
        with self.assertRaises(ValueError):
            kit.refusal("invalid_path", "m", message="the adapter's own")
        self.assertEqual(kit.Refused(OSError("EMFILE")).message, "OSError: EMFILE")

    def test_mapped_tools_rename_and_pass_the_rest_through(self):
        run = kit.MappedTool("skill_run_script", "run_native", args={"script": "path"},
                             reshape=lambda a: dict(a, args={str(i): v for i, v in enumerate(a.get("args", []))}) if isinstance(a, dict) else a)
        self.assertEqual(run.native_args({"skill": "s", "script": "scripts/x.py", "args": ["a", "b"], "cwd": "/"}),
                         {"skill": "s", "path": "scripts/x.py", "args": {"0": "a", "1": "b"}, "cwd": "/"})
        self.assertEqual(run.native_args([1]), [1])
        self.assertEqual(kit.rename_keys("x", {"a": "b"}), "x")
        self.assertEqual(kit.MappedTool.names(run), {"skill_run_script": "run_native"})
        with self.assertRaises(ValueError):
            kit.MappedTool("read_file", "x")

    def test_a_tool_map_maps_both_ways_and_passes_the_rest_through(self):
        activate = kit.MappedTool("activate_skill", "skills", args={"name": "skill_name"})
        read = kit.MappedTool("skill_read_reference", "read_file")
        tools = kit.ToolMap(activate, read)
        self.assertEqual(tools.names(), {"activate_skill": "skills", "skill_read_reference": "read_file"})
        self.assertEqual(tools.spec_names(["skills", "shell", "read_file"]), ["activate_skill", "shell", "skill_read_reference"])
        self.assertEqual(tools.native_call("activate_skill", {"name": "a"}), ("skills", {"skill_name": "a"}))
        self.assertEqual(tools.native_call("skills", {"name": "a"}), ("skills", {"name": "a"}))
        self.assertEqual(tools.native_call("activate_skill", [1]), ("skills", [1]))
        self.assertIs(tools.get("skill_read_reference"), read)
        self.assertIsNone(tools.get("read_file"))
        self.assertTrue(tools.is_native("read_file"))
        self.assertFalse(tools.is_native("skill_read_reference"))
        with self.assertRaises(ValueError):
            kit.ToolMap(read, kit.MappedTool("skill_read_reference", "other"))
        with self.assertRaises(ValueError):
            kit.ToolMap(read, kit.MappedTool("activate_skill", "read_file"))

    def test_installed_version_names_the_install_script_when_missing(self):
        with tempfile.TemporaryDirectory() as site:
            info = os.path.join(site, "skillspec_fake-1.2.3.dist-info")
            os.mkdir(info)
            with open(os.path.join(info, "METADATA"), "w") as f:
                f.write("Metadata-Version: 2.1\nName: skillspec-fake\nVersion: 1.2.3\n")
            sys.path.insert(0, site)
            try:
                self.assertEqual(kit.installed_version("skillspec-fake", "fake"), "1.2.3")
            finally:
                sys.path.remove(site)
        with self.assertRaises(SystemExit) as raised:
            kit.installed_version("skillspec-no-such-distribution", "nothing")
        message = str(raised.exception)
        self.assertIn("skillspec-no-such-distribution is not installed", message)
        self.assertIn("run runner/adapters/nothing/install", message)

    def test_timeout_ms_reads_the_setting_as_spec_md_run_timeout_does(self):
        for text, ms in [("500", 500), ("0500", 500), ("86400000", 86400000), (None, 30000), ("", 30000), ("0", 30000),
                         ("-5", 30000), ("+5", 30000), (" 300", 30000), ("1.5", 30000), ("1e3", 30000), ("86400001", 30000),
                         ("\u0661", 30000)]:
            self.assertEqual(kit.timeout_ms(text), ms, text)

    def test_runtime_env_adds_only_what_is_unset_and_never_path(self):
        config = kit.Config(dict(CONFIG, env={"HOME": "/h", "LANG": "C"}))
        self.assertEqual(config.runtime_env({"HOME": "/other", "XDG_CACHE_HOME": "/c"}),
                         {"HOME": "/h", "LANG": "C", "XDG_CACHE_HOME": "/c"})
        with self.assertRaises(ValueError):
            config.runtime_env({"PATH": "/usr/bin"})
        self.assertEqual(kit.Config(dict(CONFIG, env={"PATH": "/p"})).runtime_env({"PATH": "/q"})["PATH"], "/p")

    def test_config_fields(self):
        c = kit.Config(dict(CONFIG, skills_root="/s", tool_allowlist=["a"], timeout_ms="-5", platform="no-process-groups", future=1))
        self.assertEqual((c.skills_root, c.tool_allowlist, c.timeout_ms, c.platform, c.python), ("/s", ["a"], "-5", "no-process-groups", "python3"))
        self.assertEqual(c.raw["future"], 1)
        self.assertEqual((c.dialect, c.user_skills_root), (None, None))
        c = kit.Config(dict(CONFIG, dialect="agentskills", user_skills_root="/home/u/.agents/skills"))
        self.assertEqual((c.dialect, c.user_skills_root), ("agentskills", "/home/u/.agents/skills"))

    def test_the_kit_is_python_3_9(self):
        for name in ("skillspec_kit.py", "example_runtime.py"):
            with open(os.path.join(HERE, name), encoding="utf-8") as f:
                ast.parse(f.read(), name, feature_version=(3, 9))


class Sendable(unittest.TestCase):
    def test_lone_surrogates_are_written_as_escaped_bytes_and_the_rest_is_unchanged(self):
        name = b"caf\xe9".decode("utf-8", "surrogateescape")
        got = kit.sendable({"id": name, "list": [name, "ok"], "tuple": ("a",), "n": 3, name: "k"})
        self.assertEqual(got, {"id": "caf\\xe9", "list": ["caf\\xe9", "ok"], "tuple": ["a"], "n": 3,
                               "caf\\xe9": "k"})
        self.assertEqual(kit.sendable("plain é"), "plain é")
        self.assertEqual(kit.sendable("\ud800x"), "\\ud800x")


if __name__ == "__main__":
    unittest.main()
