"""Tests of reports.py (run by `python3 -m unittest discover -s runner/adapters -p 'test_reports.py'`,
and by runner/tests/committed_reports.rs): the table it writes into reports/README.md shows what
an adapter's report holds as text, never as markup, line breaks or table cells of its own."""
import unittest

import reports

HOSTILE = "<img src=x onerror=alert(1)>|\n| forged | row |\r`tick`\x1b[31m https://evil.example"


AREAS = ("discovery", "enable", "tools", "read", "run", "policy", "prompt", "selection", "trust")


def report(name, version, cases=None, claims=None):
    """A minimal report: one passed case in every area, unless `cases` are given; `claims`
    {dialect: label} (default: portable-skills)."""
    if cases is None:
        cases = [{"id": "%s.a" % a, "area": a, "status": "pass"} for a in AREAS]
    claims = {"portable-skills": "portable-skills 1"} if claims is None else claims
    dialects = {d: {"claimed": True, "label": label} for d, label in claims.items()}
    return {"implementation": {"name": name, "version": version},
            "summary": {"known_failures": 0}, "cases": cases,
            "conformance": {"unsafe": 0, "permissive": 0, "different": 0, "areas": {},
                            "dialects": dialects}}


class TableTest(unittest.TestCase):
    def rows(self, name, version):
        text = reports.table([("sportsclaw", report(name, version)),
                              ("hermes", report("hermes", "1.0"))])
        return [l for l in text.splitlines() if l.startswith("|")]

    def test_an_ordinary_name_is_written_as_before(self):
        rows = self.rows("sportsclaw", "0.9.1")
        self.assertIn("| sportsclaw (`sportsclaw`) | 0.9.1 | portable-skills 1 | 9 | 9 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |", rows)

    def test_hostile_names_stay_in_their_cell(self):
        rows = self.rows(HOSTILE, HOSTILE)
        table = "\n".join(rows)
        # Two tables: the dialect's (header, separator, 2 rows) and hardening's (the same).
        self.assertEqual(len(rows), 4 + 4, table)
        cells = lambda row: len(row.replace("\\|", "").split("|"))
        self.assertEqual({cells(r) for r in rows[:4]}, {cells(rows[0])}, table)
        self.assertEqual({cells(r) for r in rows[4:]}, {cells(rows[4])}, table)
        for raw in ("<img", "\r", "\x1b", "\n| forged", "https://"):
            self.assertNotIn(raw, table)
        row = rows[2]
        self.assertIn("&lt;img src=x onerror=alert(1)&gt;", row)
        self.assertIn("\\u{a}", row)

    def test_a_name_that_is_not_plain_is_escaped_text_not_a_code_span(self):
        row = self.rows("a`b``c", "1_0")[2]
        self.assertTrue(row.startswith("| sportsclaw (a\\`b\\`\\`c) | 1\\_0 |"), row)


def failed(case_id, area, kind, mismatches, **extra):
    return dict({"id": case_id, "area": area, "status": "fail", "verdict": "known-failure",
                 "failure_kind": kind, "mismatches": mismatches}, **extra)


class KindsTest(unittest.TestCase):
    def test_each_kind_has_its_column(self):
        cases = [
            failed("read.u", "read", "unsafe",
                   [{"kind": "unsafe", "exposure": "outside-content"}]),
            failed("read.p", "read", "permissive", [{"kind": "permissive"}]),
            failed("read.d", "read", "different", [{"kind": "different"}]),
            {"id": "read.ok", "area": "read", "status": "pass"},
        ]
        text = reports.table([("x", report("x", "1", cases))])
        self.assertIn("| passed | not exercised | unsafe | permissive | different |", text)
        self.assertIn("| x (`x`) | 1 | portable-skills 1 | 4 | 1 | 0 | 1 | 1 | 1 | 0 | 0 | 0 | 1 | 3 |", text)

    def test_a_runtime_is_in_the_tables_of_the_dialects_it_claims_and_in_hardening(self):
        cases = [
            dict(failed("read.u", "read", "unsafe",
                        [{"kind": "unsafe", "exposure": "outside-content"},
                         {"kind": "unsafe", "exposure": "unbounded"}]), hardening=True),
            dict(failed("read.d", "read", "different", [{"kind": "different"}]), hardening=True),
            {"id": "read.n", "area": "read", "status": "unsupported", "dialect": "portable-skills"},
            failed("agentskills.catalog.x", "agentskills/catalog", "different", [{"kind": "different"}],
                   dialect="agentskills"),
            {"id": "agentskills.catalog.y", "area": "agentskills/catalog", "status": "pass",
             "dialect": "agentskills"},
        ]
        lenient = report("y", "2", cases, {"agentskills": "agentskills 2026-08 (lenient)"})
        text = reports.table([("x", report("x", "1")), ("y", lenient)])
        self.assertIn("| y (`y`) | 2 | agentskills 2026-08 (lenient) | 2 | 1 | 0 | 0 | 0 | 1 | 0 | 0 | 0 | 0 | 1 |", text)
        self.assertIn("Neither claimed nor run for information by y:", text)
        self.assertIn("Neither claimed nor run for information by x:", text)
        # Hardening: 2 cases, both judged, one without an exposure, one unsafe showing two.
        self.assertIn("| y (`y`) | 2 | 2 | 2 | 1 | 0 | 1 | 0 | 0 | 0 | 1 | outside-content 1, unbounded 1 |", text)
        self.assertIn("| x (`x`) | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | - |", text)

    def test_a_dialect_run_for_information_has_its_row_without_the_hardening_cases(self):
        cases = [
            dict(failed("read.u", "read", "unsafe", [{"kind": "unsafe", "exposure": "unbounded"}]),
                 hardening=True, dialect="portable-skills"),
            failed("read.d", "read", "permissive", [{"kind": "permissive"}], dialect="portable-skills"),
            {"id": "agentskills.a", "area": "agentskills/catalog", "status": "pass", "dialect": "agentskills"},
        ]
        r = report("z", "3", cases, {"agentskills": "agentskills 2026-08 (lenient)"})
        r["conformance"]["dialects"]["portable-skills"] = {
            "claimed": False, "label": "portable-skills 1 (not claimed; for information)"}
        r["for_information"] = ["portable-skills"]
        text = reports.table([("z", r)])
        self.assertIn("| z (`z`) | 3 | portable-skills 1 (not claimed; for information) | 1 | 0 | 0 | 0 | 1 | 0 |", text)
        self.assertNotIn("Neither claimed nor run for information by z", text)

    def test_a_report_of_an_older_runner_is_refused(self):
        old = report("x", "1", [failed("read.u", "read", "unsafe", [{"kind": "safety"}])])
        self.assertIn("mismatch of kind 'safety'", reports.older_runner(old))
        no_exposure = report("x", "1", [failed("read.u", "read", "unsafe", [{"kind": "unsafe"}])])
        self.assertIn("without its exposure", reports.older_runner(no_exposure))
        no_permissive = report("x", "1")
        del no_permissive["conformance"]["permissive"]
        self.assertIn("no `permissive`", reports.older_runner(no_permissive))
        self.assertIsNone(reports.older_runner(report("x", "1")))
        with self.assertRaises(SystemExit):
            reports.table([("x", old)])


class ListTest(unittest.TestCase):
    def test_the_ci_list_is_read_and_a_bad_line_named(self):
        import os, tempfile
        with tempfile.TemporaryDirectory() as d:
            good = os.path.join(d, "ci.txt")
            with open(good, "w") as f:
                f.write("# comment\nalpha 3   # why\n\nbeta 1\n")
            self.assertEqual(reports.ci_adapters(good), ("alpha", "beta"))
            bad = os.path.join(d, "bad.txt")
            with open(bad, "w") as f:
                f.write("alpha 3\nbeta three\n")
            with self.assertRaises(SystemExit):
                reports.ci_adapters(bad)


class DistinctTest(unittest.TestCase):
    def test_a_legacy_twin_is_one_behaviour_with_its_case(self):
        unsafe = {"status": "fail", "failure_kind": "unsafe"}
        cases = [dict(unsafe, id="a"), dict(unsafe, id="a-legacy", twin_of="a"),
                 dict(unsafe, id="b-legacy", twin_of="b"), {"id": "b", "status": "pass"}]
        self.assertEqual(reports.distinct_unsafe(cases), 2)


if __name__ == "__main__":
    unittest.main()
