"""Tests of reports.py (run by `python3 -m unittest discover -s runner/adapters -p 'test_reports.py'`,
and by runner/tests/committed_reports.rs): the table it writes into reports/README.md shows what
an adapter's report holds as text, never as markup, line breaks or table cells of its own."""
import unittest

import reports

HOSTILE = "<img src=x onerror=alert(1)>|\n| forged | row |\r`tick`\x1b[31m https://evil.example"


def report(name, version, cases=None):
    """A minimal report: one passed case in every area, unless `cases` are given."""
    if cases is None:
        cases = [{"id": "%s.a" % a, "area": a, "status": "pass"} for a in reports.AREAS]
    return {"implementation": {"name": name, "version": version},
            "summary": {"known_failures": 0}, "cases": cases,
            "conformance": {"unsafe": 0, "permissive": 0, "different": 0, "areas": {}}}


class TableTest(unittest.TestCase):
    def rows(self, name, version):
        text = reports.table([("sportsclaw", report(name, version)),
                              ("hermes", report("hermes", "1.0"))])
        return [l for l in text.splitlines() if l.startswith("|")]

    def test_an_ordinary_name_is_written_as_before(self):
        rows = self.rows("sportsclaw", "0.9.1")
        self.assertIn("| sportsclaw (`sportsclaw`) | 0.9.1 | 9 | 9 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |", rows)

    def test_hostile_names_stay_in_their_cell(self):
        rows = self.rows(HOSTILE, HOSTILE)
        table = "\n".join(rows)
        # Two tables: header, separator and 2 rows; header, separator and 9 areas.
        self.assertEqual(len(rows), 4 + 11, table)
        cells = lambda row: len(row.replace("\\|", "").split("|"))
        self.assertEqual({cells(r) for r in rows[:4]}, {cells(rows[0])}, table)
        for raw in ("<img", "\r", "\x1b", "\n| forged", "https://"):
            self.assertNotIn(raw, table)
        row = rows[2]
        self.assertIn("&lt;img src=x onerror=alert(1)&gt;", row)
        self.assertIn("\\u{a}", row)

    def test_a_name_that_is_not_plain_is_escaped_text_not_a_code_span(self):
        row = self.rows("a`b``c", "1_0")[2]
        self.assertTrue(row.startswith("| sportsclaw (a\\`b\\`\\`c) | 1\\_0 |"), row)


def failed(case_id, area, kind, mismatches):
    return {"id": case_id, "area": area, "status": "fail", "verdict": "known-failure",
            "failure_kind": kind, "mismatches": mismatches}


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
        self.assertIn("| x (`x`) | 1 | 4 | 1 | 0 | 1 | 1 | 1 | 0 | 0 | 0 | 1 | 0 |", text)
        self.assertIn("| read | 1 passed, 1 unsafe, 1 permissive, 1 different |", text)

    def test_an_area_not_judged_says_why(self):
        r = report("x", "1", [
            {"id": "hitl.%d" % i, "area": "hitl", "status": "unsupported",
             "missing_features": ["hitl"]} for i in range(3)] + [
            failed("run.a", "run", "different", [{"kind": "different"}])])
        r["conformance"]["areas"] = {"run": {"statement":
            "run: not implemented (skill_run_script missing in all 1 cases run)"}}
        text = reports.table([("x", r)])
        self.assertIn("| hitl | unsupported (needs hitl) (3 cases) |", text)
        self.assertIn("| run | not implemented: skill\\_run\\_script missing (1 cases) |", text)
        self.assertNotIn("0 passed", text)

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


class DistinctTest(unittest.TestCase):
    def test_a_legacy_twin_is_one_behaviour_with_its_case(self):
        unsafe = {"status": "fail", "failure_kind": "unsafe"}
        cases = [dict(unsafe, id="a"), dict(unsafe, id="a-legacy", twin_of="a"),
                 dict(unsafe, id="b-legacy", twin_of="b"), {"id": "b", "status": "pass"}]
        self.assertEqual(reports.distinct_unsafe(cases), 2)


if __name__ == "__main__":
    unittest.main()
