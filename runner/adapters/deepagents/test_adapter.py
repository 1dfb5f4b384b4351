"""Tests of the deepagents adapter's translations, against the real deepagents (needs `install`).

    ~/.cache/skillspec/adapters/deepagents/venv/bin/python -m unittest \
        discover -s runner/adapters/deepagents -p 'test_*.py'

Each test builds a small tree in a temporary directory and drives the adapter's methods directly
(the kit is imported without taking over stdio). What is checked is the translation: where the
skills source lands in the backend, how read_file's presentation is undone, which answers become
which codes; the suite itself judges deepagents.
"""

import os
import subprocess
import sys
import tempfile
import unittest

os.environ["SKILLSPEC_KIT_NO_TAKEOVER"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adapter  # noqa: E402
import skillspec_kit as kit  # noqa: E402


def write(root, rel, data):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


class Translation(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = os.path.realpath(self.tmp.name)
        write(self.root, "skills/alpha/SKILL.md", "---\nname: alpha\ndescription: first\n---\n  Body\n\n")
        write(self.root, "skills/alpha/references/nl.md", "two\nlines\n")
        write(self.root, "skills/alpha/references/no-nl.md", "two\nlines")
        write(self.root, "skills/alpha/references/empty.md", "")
        write(self.root, "skills/alpha/references/blank.md", " \n\t\n")
        write(self.root, "skills/alpha/references/reminder.md", adapter.EMPTY_CONTENT_WARNING)
        self.rt = adapter.DeepAgents()

    def tearDown(self):
        self.rt.end_case()
        self.tmp.cleanup()

    def start(self, skills_root):
        self.rt.start_case(kit.Config({"skills_root": skills_root, "python": "python3", "env": {}}), self.root)

    def read(self, path, skill="alpha"):
        return self.rt.call("skill_read_reference", {"skill": skill, "path": path})

    def test_no_address_space_cap(self):
        # No resource cap may decide a verdict: importing the adapter leaves RLIMIT_AS as it was.
        code = ("import os, resource, sys; os.environ['SKILLSPEC_KIT_NO_TAKEOVER'] = '1'; "
                "sys.path.insert(0, %r); before = resource.getrlimit(resource.RLIMIT_AS); "
                "import adapter; print(before == resource.getrlimit(resource.RLIMIT_AS))" % os.path.dirname(os.path.abspath(__file__)))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        self.assertEqual(out.strip().splitlines()[-1], "True")

    def test_declarations(self):
        rt = adapter.DeepAgents
        self.assertEqual(rt.read_scope, "case-root")
        self.assertIn(rt.read_scope, kit.READ_SCOPES)
        self.assertEqual(list(rt.formats), ["skill-md"])
        self.assertEqual(sorted(rt.lacks), ["nested-scan", "skill_run_script", "validate"])
        for mechanism, reason in rt.lacks.items():
            self.assertIn(mechanism, kit.MECHANISMS)
            self.assertRegex(reason, r"\.py:\d+")  # each reason cites deepagents' own code

    def test_dialect_claims(self):
        # The one dialect deepagents claims, in its own mode, lenient (the kit checks the shape as
        # the runner would); Portable Skills runs for information only (`run`'s
        # --for-information), so it is not claimed.
        rt = adapter.DeepAgents
        self.assertEqual(rt.dialects, [
            {"name": "agentskills", "version": "2026-08", "mode": "lenient"},
        ])
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run")) as f:
            self.assertIn("--for-information portable-skills", f.read())
        self.assertEqual(kit._dialects_problems(rt.dialects), [])
        self.assertNotIn("activate_skill", rt.tool_names)  # deepagents has no activation tool

    def test_skills_sources(self):
        # No root and the empty text are both "no skills configured": no SkillsMiddleware at all.
        self.assertIsNone(adapter.skills_sources(None, self.root))
        self.assertIsNone(adapter.skills_sources("", self.root))
        self.assertEqual(adapter.skills_sources(self.root + "/skills", self.root), ["/skills"])
        self.assertEqual(adapter.skills_sources("skills", self.root), ["skills"])
        # agentskills: the user-level root first, the project's last (deepagents: last one wins).
        self.assertEqual(adapter.skills_sources(self.root + "/p", self.root, self.root + "/u"), ["/u", "/p"])
        self.assertEqual(adapter.skills_sources(None, self.root, self.root + "/u"), ["/u"])
        self.assertIsNone(adapter.skills_sources(None, self.root, None))

    def test_disk_location(self):
        self.assertEqual(adapter.disk_location(self.root, "/skills/a/SKILL.md"), self.root + "/skills/a/SKILL.md")
        self.assertEqual(adapter.disk_location(self.root, "skills/a/SKILL.md"), self.root + "/skills/a/SKILL.md")

    def test_empty_root_configures_no_skills(self):
        # A skill planted at the backend root would load if "" were read as a backend path.
        write(self.root, "stray/SKILL.md", "---\nname: stray\ndescription: at the backend root\n---\nStray\n")
        self.start("")
        self.assertEqual(self.rt.discover(), [])
        text, baseline = self.rt.prompt()
        self.assertEqual(text, baseline)
        self.assertNotIn("stray", text)
        self.assertEqual(self.read("SKILL.md", skill="stray")["error"]["code"], "unknown_tool")

    def test_read_scope_is_the_case_root(self):
        # What read_scope "case-root" declares: read_file returns any file below the backend root,
        # which is the case root (the workspace holding the skills root), links not needed.
        write(self.root, "secret.md", "case root file\n")
        self.start(self.root + "/skills")
        self.assertEqual(self.rt.skill_file_path("alpha", "/secret.md"), "/secret.md")
        self.assertEqual(self.read("/secret.md")["value"]["content"], "case root file\n")

    def test_virtual_source(self):
        self.assertEqual(adapter.virtual_source(self.root + "/skills", self.root), "/skills")
        self.assertEqual(adapter.virtual_source(self.root, self.root), "/")
        self.assertEqual(adapter.virtual_source("skills", self.root), "skills")
        self.assertEqual(adapter.virtual_source(self.root + "x/skills", self.root), self.root + "x/skills")

    def test_protocol_text_replaces_undecodable_bytes(self):
        self.assertEqual(adapter.protocol_text(b"caf\xe9".decode("utf-8", "surrogateescape")), "caf\ufffd")

    def test_discover_reports_directory_ids_and_pinned_body(self):
        self.start(self.root + "/skills")
        [entry] = self.rt.discover()
        self.assertEqual((entry["id"], entry["name"], entry["body"]), ("alpha", "alpha", "  Body"))

    def test_read_restores_exactly_the_file_text(self):
        self.start(self.root + "/skills")
        self.assertEqual(self.read("references/nl.md")["value"]["content"], "two\nlines\n")
        self.assertEqual(self.read("references/no-nl.md")["value"]["content"], "two\nlines")
        self.assertEqual(self.read("references/empty.md")["value"]["content"], "")
        self.assertEqual(self.read("references/blank.md")["value"]["content"], "")  # told "empty"
        self.assertEqual(self.read("references/reminder.md")["value"]["content"], adapter.EMPTY_CONTENT_WARNING)

    def test_error_codes_come_from_the_agent(self):
        self.start(self.root + "/skills")
        self.assertEqual(self.read("references/missing.md")["error"]["code"], "not_found")
        self.assertEqual(self.read("../alpha/SKILL.md")["error"]["code"], "invalid_path")
        # A listed skill with a path that is not text, or none: langchain's schema check refuses.
        self.assertEqual(self.read(5)["error"]["code"], "invalid_args")
        missing = self.rt.call("skill_read_reference", {"skill": "alpha"})
        self.assertEqual(missing["error"]["code"], "invalid_args")
        self.assertIn("file_path", missing["error"]["message"])
        # No listed skill to translate for (a skill that is not text, arguments that are not an
        # object): the call reaches the agent as it is, under a name the agent does not know.
        bad = self.rt.call("skill_read_reference", {"skill": 1, "path": "SKILL.md"})
        self.assertEqual(bad["error"]["code"], "unknown_tool")
        self.assertEqual(self.rt.call("skill_read_reference", ["alpha", "SKILL.md"])["error"]["code"], "unknown_tool")
        run = self.rt.call("skill_run_script", {"skill": "alpha", "script": "scripts/x.py", "args": []})
        self.assertEqual(run["error"]["code"], "unknown_tool")
        self.assertEqual(self.rt.call("skill_run_script", "x")["error"]["code"], "unknown_tool")

    def test_no_root_no_mapped_tool_and_prompt_equals_baseline(self):
        self.start(None)
        self.assertNotIn("skill_read_reference", self.rt.tools())
        self.assertIn("read_file", self.rt.tools())
        text, baseline = self.rt.prompt()
        self.assertEqual(text, baseline)
        self.assertEqual(self.read("SKILL.md")["error"]["code"], "unknown_tool")

    def test_tools_are_exactly_what_the_agent_binds(self):
        # deepagents has no skill tool: `tools` is the names bound to the model call, root or not.
        self.start(self.root + "/skills")
        offered = self.rt.tools()
        self.assertEqual(offered, list(self.rt.model.calls[-1]["tools"]))
        self.assertNotIn("skill_read_reference", offered)
        text, baseline = self.rt.prompt()
        self.assertIn("/skills/alpha/SKILL.md", text)
        self.assertNotIn("alpha", baseline)

    def test_empty_or_missing_root_offers_the_same_tools(self):
        for root in (self.root + "/empty", self.root + "/nowhere"):
            os.makedirs(self.root + "/empty", exist_ok=True)
            self.start(root)
            self.assertNotIn("skill_read_reference", self.rt.tools())
            # No skill is listed, so there is no skill path to read: the agent's own answer.
            result = self.read("SKILL.md")
            self.assertEqual(result["error"]["code"], "unknown_tool")
            self.assertIn("not a valid tool", result["error"]["message"])
            self.rt.end_case()

    def test_unlisted_skill_is_not_translated(self):
        write(self.root, "skills/unlisted/notes.md", "no SKILL.md, so deepagents lists no skill here\n")
        self.start(self.root + "/skills")
        result = self.read("notes.md", skill="unlisted")
        self.assertEqual(result["error"]["code"], "unknown_tool")
        self.assertIn("not a valid tool", result["error"]["message"])

    def test_path_joins_the_listed_directory_as_a_path(self):
        # The listed SKILL.md's directory joined with the path as POSIX joins paths: an absolute
        # path names itself (deepagents then looks for /SKILL.md at the backend root).
        self.start(self.root + "/skills")
        self.assertEqual(self.rt.skill_file_path("alpha", "references/nl.md"), "/skills/alpha/references/nl.md")
        self.assertEqual(self.rt.skill_file_path("alpha", "/SKILL.md"), "/SKILL.md")
        self.assertEqual(self.rt.skill_file_path("alpha", "./SKILL.md"), "/skills/alpha/./SKILL.md")
        self.assertIsNone(self.rt.skill_file_path("nobody", "SKILL.md"))
        absolute = self.read("/SKILL.md")
        self.assertEqual(absolute["error"]["code"], "not_found")
        self.assertIn("'/SKILL.md' not found", absolute["error"]["message"])

    def test_truncated_read_is_reported_as_the_model_gets_it(self):
        write(self.root, "skills/alpha/references/big.txt", "a" * 262145)
        self.start(self.root + "/skills")
        content = self.read("references/big.txt")["value"]["content"]
        self.assertTrue(content.startswith("[Output was truncated due to size limits."), content[:80])
        self.assertIn("@@ lines 1-1 of 1 | truncated mid-line |", content)
        self.assertLessEqual(len(content), 80000)

    def test_messages_do_not_name_the_temporary_root(self):
        os.symlink("/dev/zero", os.path.join(self.root, "skills/alpha/references/zero.md"))
        self.start(self.root + "/skills")
        result = self.read("references/zero.md")
        self.assertEqual(result["error"]["code"], "invalid_path")
        self.assertNotIn(self.root, result["error"]["message"])
        self.assertIn("{root}", result["error"]["message"])


class AgentSkillsDialect(unittest.TestCase):
    """The agentskills mapping: the two scopes as two sources, the record's id and location, and
    activation through deepagents' pinned_skills."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = os.path.realpath(self.tmp.name)
        write(self.root, "project/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: project copy\n---\nProject body\n")
        write(self.root, "home/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: user copy\n---\nUser body\n")
        write(self.root, "home/skills/beta/SKILL.md", "---\nname: beta\ndescription: only the user's\n---\nBeta body\n")
        write(self.root, "project/skills/dir-name/SKILL.md", "---\nname: other\ndescription: mismatched\n---\nOther body\n")
        self.rt = adapter.DeepAgents()

    def tearDown(self):
        self.rt.end_case()
        self.tmp.cleanup()

    def start(self, dialect="agentskills"):
        config = {"skills_root": self.root + "/project/skills", "user_skills_root": self.root + "/home/skills",
                  "python": "python3", "env": {}}
        if dialect is not None:
            config["dialect"] = dialect
        self.rt.start_case(kit.Config(config), self.root)

    def test_record_and_project_over_user(self):
        self.start()
        loaded = {e["id"]: e for e in self.rt.discover()}
        self.assertEqual(sorted(loaded), ["beta", "other", "pdf"])  # id = name, not the directory
        self.assertEqual(loaded["pdf"]["description"], "project copy")
        self.assertEqual(loaded["pdf"]["location"], self.root + "/project/skills/pdf/SKILL.md")
        self.assertEqual(loaded["beta"]["location"], self.root + "/home/skills/beta/SKILL.md")
        self.assertEqual(loaded["other"]["location"], self.root + "/project/skills/dir-name/SKILL.md")
        self.assertNotIn("format", loaded["pdf"])

    def test_activation_is_the_pinned_message(self):
        self.start()
        result = self.rt.call("activate_skill", {"name": "pdf"})
        self.assertEqual(result["value"]["content"],
                         '<skill name="pdf" path="/project/skills/pdf/SKILL.md">\nProject body\n</skill>')
        # Only this turn's pinned message, not an earlier activation's.
        self.assertNotIn("Project body", self.rt.call("activate_skill", {"name": "beta"})["value"]["content"])

    def test_unknown_name_is_deepagents_log_line(self):
        self.start()
        for name in ("nothing", "dir-name"):
            result = self.rt.call("activate_skill", {"name": name})
            self.assertEqual(result["error"]["code"], "unknown_skill")
            self.assertIn("Not pinning skill '%s': unknown skill" % name, result["error"]["message"])

    def test_arguments_pinned_skills_cannot_hold(self):
        self.start()
        for args in ({"name": 1}, {"skill": "pdf"}, ["pdf"]):
            with self.assertRaises(kit.AdapterError):
                self.rt.call("activate_skill", args)

    def test_portable_cases_keep_the_portable_mapping(self):
        # No dialect in the config: one source (the user root is an agentskills setting), ids are
        # directory names, no location, and activate_skill is an ordinary unknown tool.
        self.start(dialect=None)
        loaded = self.rt.discover()
        self.assertEqual(sorted(e["id"] for e in loaded), ["dir-name", "pdf"])
        self.assertTrue(all(e["format"] == "portable" and "location" not in e for e in loaded))
        self.assertEqual(self.rt.call("activate_skill", {"name": "pdf"})["error"]["code"], "unknown_tool")


if __name__ == "__main__":
    unittest.main()
