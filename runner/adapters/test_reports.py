"""Tests of reports.py (run by `python3 -m unittest discover -s runner/adapters -p 'test_reports.py'`,
and by runner/tests/committed_reports.rs): the table it writes into reports/README.md shows what
an adapter's report holds as text, never as markup, line breaks or table cells of its own."""
import unittest

import reports

HOSTILE = "<img src=x onerror=alert(1)>|\n| forged | row |\r`tick`\x1b[31m https://evil.example"


def report(name, version):
    """A minimal report of one passed case in every area."""
    cases = [{"id": "%s.a" % a, "area": a, "status": "pass"} for a in reports.AREAS]
    return {"implementation": {"name": name, "version": version},
            "summary": {"known_failures": 0}, "cases": cases}


class TableTest(unittest.TestCase):
    def rows(self, name, version):
        text = reports.table([("sportsclaw", report(name, version)),
                              ("hermes", report("hermes", "1.0"))])
        return [l for l in text.splitlines() if l.startswith("|")]

    def test_an_ordinary_name_is_written_as_before(self):
        rows = self.rows("sportsclaw", "0.9.1")
        self.assertIn("| sportsclaw (`sportsclaw`) | 0.9.1 | 9 | 9 | 0 | 0 | 0 | 0 | 0 | 0 |", rows)

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


if __name__ == "__main__":
    unittest.main()
