"""Tests of the skills-ref adapter's mapping, against the real skills-ref 0.1.1 (needs `install`).

    ~/.cache/skillspec/adapters/skills-ref/venv/bin/python -m unittest \
        discover -s runner/adapters/skills-ref -p 'test_*.py'

Each test builds a small tree in a temporary directory and drives the adapter's methods directly
(the kit is imported without taking over stdio). What is checked is the mapping: which
directory reaches which skills-ref function, and how its answer and its exceptions come back;
the suite itself judges skills-ref. The last test speaks the protocol to the adapter over a pipe;
it runs once the kit speaks dialects and `validate` (README.md, "What the kit needs").
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

os.environ["SKILLSPEC_KIT_NO_TAKEOVER"] = "1"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import adapter  # noqa: E402
import skillspec_kit as kit  # noqa: E402


def write(root, rel, data):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def skill(name, description="Does one thing. Use when testing.", extra=""):
    return "---\nname: %s\ndescription: %s\n%s---\nBody of the skill.\n" % (name, description, extra)


class Mapping(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = os.path.realpath(self.tmp.name)
        self.rt = adapter.SkillsRef()

    def tearDown(self):
        self.rt.end_case()
        self.tmp.cleanup()

    def start(self, skills_root="skills", **more):
        config = {"skills_root": os.path.join(self.root, skills_root) if isinstance(skills_root, str) else skills_root,
                  "python": "python3", "env": {}, "dialect": "agentskills"}
        for key, value in more.items():
            config[key] = os.path.join(self.root, value) if isinstance(value, str) else value
        self.rt.start_case(kit.Config(config), self.root)

    # -- validate ---------------------------------------------------------------------------

    def test_valid_skill(self):
        write(self.root, "skills/pdf/SKILL.md", skill("pdf", extra="license: Apache-2.0\nallowed-tools: Read Grep\nmetadata:\n  author: me\n"))
        self.start()
        self.assertEqual(self.rt.validate("skills/pdf"), {
            "valid": True, "problems": [],
            "properties": {"name": "pdf", "description": "Does one thing. Use when testing.",
                           "license": "Apache-2.0", "allowed-tools": "Read Grep", "metadata": {"author": "me"}},
        })

    def test_uppercase_name_invalid_in_skills_refs_words(self):
        write(self.root, "skills/Upper/SKILL.md", skill("Upper"))
        self.start()
        result = self.rt.validate("skills/Upper")
        self.assertIs(result["valid"], False)
        self.assertEqual(result["problems"], ["Skill name 'Upper' must be lowercase"])  # validator.py:45-46
        # read_properties does not validate (parser.py:70): the properties are still read.
        self.assertEqual(result["properties"], {"name": "Upper", "description": "Does one thing. Use when testing."})

    def test_dashes_inside_description_cut_it(self):
        # parser.py:45 splits at the first "---" anywhere: the description reads back as "a".
        write(self.root, "skills/dashes/SKILL.md", skill("dashes", description="a---b"))
        self.start()
        result = self.rt.validate("skills/dashes")
        self.assertIs(result["valid"], True)
        self.assertEqual(result["properties"]["description"], "a")

    def test_no_skill_md_invalid_without_properties(self):
        write(self.root, "skills/empty/README.md", "not a skill\n")
        self.start()
        self.assertEqual(self.rt.validate("skills/empty"), {"valid": False, "problems": ["Missing required file: SKILL.md"]})

    def test_missing_description_invalid_without_properties(self):
        # read_properties raises ValidationError (its documented error): properties are omitted.
        write(self.root, "skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nBody\n")
        self.start()
        self.assertEqual(self.rt.validate("skills/nodesc"),
                         {"valid": False, "problems": ["Missing required field in frontmatter: description"]})

    def test_undocumented_exception_is_a_refusal(self):
        # validate() reads a SKILL.md that is a directory and raises IsADirectoryError (validator.py:172).
        write(self.root, "skills/dirmd/SKILL.md/README.md", "x\n")
        # ... and a SKILL.md that is not UTF-8 raises UnicodeDecodeError.
        write(self.root, "skills/latin/SKILL.md", b"---\nname: latin\ndescription: caf\xe9\n---\n")
        self.start()
        with self.assertRaisesRegex(kit.Refused, r"^IsADirectoryError: "):
            self.rt.validate("skills/dirmd")
        with self.assertRaisesRegex(kit.Refused, r"^UnicodeDecodeError: "):
            self.rt.validate("skills/latin")

    def test_path_is_relative_to_the_case_root(self):
        write(self.root, "elsewhere/x/SKILL.md", skill("x"))
        self.start()
        self.assertEqual(self.rt.validate("elsewhere/x")["valid"], True)
        self.assertEqual(self.rt.validate("nowhere")["problems"], ["Path does not exist: %s/nowhere" % self.root])

    # -- prompt -----------------------------------------------------------------------------

    def test_prompt_over_two_skills(self):
        write(self.root, "skills/pdf/SKILL.md", skill("pdf", description="Extract <PDF> text."))
        write(self.root, "skills/csv/SKILL.md", skill("csv", description="Analyze CSV tables."))
        write(self.root, "skills/README.md", "# not a directory\n")
        self.start()
        text, baseline = self.rt.prompt()
        self.assertEqual(baseline, "")
        self.assertEqual(text, "\n".join([
            "<available_skills>",
            "<skill>", "<name>", "csv", "</name>", "<description>", "Analyze CSV tables.", "</description>",
            "<location>", "%s/skills/csv/SKILL.md" % self.root, "</location>", "</skill>",
            "<skill>", "<name>", "pdf", "</name>", "<description>", "Extract &lt;PDF&gt; text.", "</description>",
            "<location>", "%s/skills/pdf/SKILL.md" % self.root, "</location>", "</skill>",
            "</available_skills>",
        ]))

    def test_prompt_of_no_directory_is_the_empty_block(self):
        empty = "<available_skills>\n</available_skills>"  # prompt.py:32-33
        write(self.root, "skills/README.md", "# Nothing here\n")
        for root in (None, "skills", "missing", "skills/README.md"):
            with self.subTest(skills_root=root):
                self.start(root)
                self.assertEqual(self.rt.prompt(), (empty, ""))

    def test_glob_order_links_and_hidden(self):
        # The glob */: names in byte order (B before a), links to directories followed, names
        # starting with "." left out (skills-ref would abort on .hidden: no description).
        for name in ("a", "B", "z"):
            write(self.root, "skills/%s/SKILL.md" % name, skill(name))
        write(self.root, "skills/.hidden/SKILL.md", "---\nname: hidden\n---\n")
        write(self.root, "other/linked/SKILL.md", skill("linked"))
        os.symlink(os.path.join(self.root, "other/linked"), os.path.join(self.root, "skills/l"))
        os.symlink(os.path.join(self.root, "nowhere"), os.path.join(self.root, "skills/dangling"))
        self.start()
        self.assertEqual([p.name for p in adapter.glob_dirs(os.path.join(self.root, "skills"))], ["B", "a", "l", "z"])
        text, _ = self.rt.prompt()
        # to_prompt resolves each directory (prompt.py:38): the link's target is the location.
        self.assertIn("%s/other/linked/SKILL.md" % self.root, text)

    def test_user_scope_follows_project_scope(self):
        write(self.root, "skills/proj/SKILL.md", skill("proj"))
        write(self.root, "user/home-one/SKILL.md", skill("home-one"))
        self.start(user_skills_root="user")
        text, _ = self.rt.prompt()
        self.assertLess(text.index("<name>\nproj\n"), text.index("<name>\nhome-one\n"))

    def test_prompt_refused_when_to_prompt_raises(self):
        write(self.root, "skills/good/SKILL.md", skill("good"))
        write(self.root, "skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nBody\n")
        self.start()
        with self.assertRaisesRegex(kit.Refused, r"^ValidationError: Missing required field in frontmatter: description$"):
            self.rt.prompt()

    def test_non_utf8_directory_name_is_sendable(self):
        os.makedirs(self.root.encode() + b"/skills/caf\xe9")
        with open(self.root.encode() + b"/skills/caf\xe9/SKILL.md", "w") as f:
            f.write(skill("cafe"))
        self.start()
        text, _ = self.rt.prompt()
        self.assertIn("/skills/caf\\xe9/SKILL.md", text)
        text.encode("utf-8")

    # -- the rest ---------------------------------------------------------------------------

    def test_what_skills_ref_lacks(self):
        self.start()
        with self.assertRaisesRegex(kit.Refused, "no directory scan"):
            self.rt.discover()
        self.assertEqual(self.rt.tools(), [])
        result = self.rt.call("activate_skill", {"name": "pdf"})
        self.assertEqual(result["ok"], False)
        self.assertEqual(result["error"]["code"], "unknown_tool")
        self.assertIsNone(self.rt.new_turn())

    def test_declarations(self):
        rt = adapter.SkillsRef
        self.assertEqual((rt.name, rt.version, rt.language), ("skills-ref", "0.1.1", "python"))
        self.assertEqual(list(rt.features), [])
        self.assertEqual(rt.dialects, [{"name": "agentskills", "version": "2026-08", "mode": "strict"}])
        self.assertEqual(sorted(rt.lacks), ["activate_skill", "scan", "skill_read_reference", "skill_run_script"])
        for reason in rt.lacks.values():
            self.assertRegex(reason, r"\.py:\d+")  # each reason cites skills-ref's own code
            self.assertLessEqual(len(reason.encode()), kit.MAX_REASON)


KIT_SPEAKS_DIALECTS = (
    {"scan", "validate", "activate_skill"} <= set(kit.MECHANISMS) and hasattr(kit.Runtime, "validate")
)


@unittest.skipUnless(KIT_SPEAKS_DIALECTS, "the kit does not speak dialects, validate or the new lacks yet (README.md)")
class Protocol(unittest.TestCase):
    """The adapter as the runner starts it: a process speaking JSON lines."""

    def test_session(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = os.path.realpath(tmp)
            write(root, "skills/pdf/SKILL.md", skill("pdf"))
            requests = [
                {"type": "start", "protocol_version": 2},
                {"type": "case_start", "seq": 0, "case": "t", "root": root,
                 "config": {"skills_root": root + "/skills", "python": "python3", "env": {}, "dialect": "agentskills"}},
                {"type": "step", "seq": 0, "index": 0, "step": {"op": "validate", "path": "skills/pdf"}},
                {"type": "step", "seq": 0, "index": 1, "step": {"op": "prompt"}},
                {"type": "step", "seq": 0, "index": 2, "step": {"op": "discover"}},
                {"type": "case_end", "seq": 0},
                {"type": "stop"},
            ]
            env = dict(os.environ)
            env.pop("SKILLSPEC_KIT_NO_TAKEOVER")
            out = subprocess.run([sys.executable, os.path.join(HERE, "adapter.py")], env=env, check=True,
                                 input="".join(json.dumps(r) + "\n" for r in requests),
                                 capture_output=True, text=True, timeout=60).stdout
            started, case_started, validated, prompted, discovered, ended = map(json.loads, out.splitlines())
            self.assertEqual(started["implementation"]["dialects"], adapter.SkillsRef.dialects)
            self.assertEqual(sorted(started["implementation"]["lacks"]),
                             ["activate_skill", "scan", "skill_read_reference", "skill_run_script"])
            self.assertEqual(case_started, {"type": "case_started", "seq": 0})
            self.assertEqual(validated["result"]["valid"], True)
            self.assertIn("<name>\npdf\n</name>", prompted["result"]["text"])
            self.assertIn("no directory scan", discovered["refused"]["message"])
            self.assertEqual(ended, {"type": "case_ended", "seq": 0})


if __name__ == "__main__":
    unittest.main()
