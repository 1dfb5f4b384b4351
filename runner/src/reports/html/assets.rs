//! The page's own style sheet and script, inlined (the page loads nothing), and the hash of each
//! that its Content-Security-Policy allows.

use base64::Engine as _;
use sha2::{Digest, Sha256};

pub(super) const CSS: &str = r#"
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--pass:#dafbe1;--pass-fg:#116329;--unsafe:#ffebe9;--unsafe-fg:#a40e26;--perm:#ffe2cc;--perm-fg:#9a3a00;--diff:#fff1d6;--diff-fg:#8a4600;--err:#f3e8ff;--err-fg:#6e3aa7;--grey:#f0f2f4}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);margin:0;padding:0 1.5rem 3rem}
header{padding:1rem 0 .5rem;border-bottom:1px solid var(--line)}
h1{font-size:1.5rem;margin:.2rem 0}h2{font-size:1.25rem;margin:2rem 0 .5rem;border-bottom:1px solid var(--line);padding-bottom:.2rem}
h3{font-size:1.05rem;margin:1.3rem 0 .4rem}h4{margin:.8rem 0 .3rem;font-size:.95rem}
nav a{margin-right:1rem}a{color:#0969da;text-decoration:none}a:hover{text-decoration:underline}
.muted{color:var(--muted)}.statement{font-weight:600;font-size:1.05rem}
table{border-collapse:collapse;margin:.3rem 0}th,td{border:1px solid var(--line);padding:.2rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}
table.matrix td.cell{text-align:center;min-width:7rem}
table.matrix tr.area th{background:#eaeef2}table.matrix tr.area td{font-weight:600}
.c-pass{background:var(--pass);color:var(--pass-fg)}.c-unsafe{background:var(--unsafe);color:var(--unsafe-fg);font-weight:700}
.c-permissive{background:var(--perm);color:var(--perm-fg);font-weight:600}.c-different{background:var(--diff);color:var(--diff-fg)}.c-error,.c-fixed,.c-not-run{background:var(--err);color:var(--err-fg)}
.c-known-failure,.c-not-exercised,.c-unsupported,.c-skipped,.c-none{background:var(--grey);color:var(--muted)}
.badge{display:inline-block;border-radius:.8rem;padding:0 .5rem;margin-right:.3rem;font-size:.8rem;white-space:nowrap}
details.case{border:1px solid var(--line);border-radius:6px;margin:.25rem 0;padding:.2rem .6rem}
details.case>summary{cursor:pointer}details.case[open]{background:#fbfcfd}
code,pre{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f6f8fa;border:1px solid var(--line);padding:.4rem .6rem;white-space:pre-wrap;word-break:break-word;margin:.2rem 0;max-height:30rem;overflow:auto}
table.mm td{max-width:40rem}table.mm pre{margin:0}
.outcome{border-left:4px solid var(--line);padding-left:.6rem;margin:.5rem 0}
.outcome.c-pass,.outcome.c-unsafe,.outcome.c-permissive,.outcome.c-different,.outcome.c-error,.outcome.c-known-failure,.outcome.c-fixed,.outcome.c-not-run,.outcome.c-not-exercised,.outcome.c-unsupported,.outcome.c-skipped{background:none;color:inherit;font-weight:normal}
.outcome.c-unsafe{border-color:#cf222e}.outcome.c-permissive{border-color:#e16f24}.outcome.c-different{border-color:#d4a72c}.outcome.c-error,.outcome.c-not-run,.outcome.c-fixed{border-color:#8250df}.outcome.c-pass{border-color:#2da44e}
form#filters{position:sticky;top:0;background:#fff;padding:.5rem 0;border-bottom:1px solid var(--line);z-index:1}
form#filters label{margin-right:.7rem;white-space:nowrap}
ul.cases li{margin:.3rem 0}
details.case,tr[id],th[id],section{scroll-margin-top:5.5rem}
table.matrix th.impl{max-width:18rem;word-break:break-word}.label{display:block;font-weight:normal;color:var(--muted);font-size:.8rem}
table.overview td.statement{max-width:36rem}
dl.legend{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:.3rem 0}dl.legend dt,dl.legend dd{margin:0}
div.fix{border-left:4px solid var(--line);padding-left:.8rem;margin:.6rem 0}div.fix ol{margin:.2rem 0}
"#;

pub(super) const JS: &str = r#"
(function () {
  "use strict";
  var form = document.getElementById("filters");
  var cases = Array.prototype.slice.call(document.querySelectorAll("details.case"));
  function apply() {
    var wanted = {};
    form.querySelectorAll("input[name=status]").forEach(function (b) { wanted[b.value] = b.checked; });
    var area = form.querySelector("select[name=area]").value;
    var text = form.querySelector("input[name=text]").value.trim().toLowerCase();
    var shown = 0;
    cases.forEach(function (d) {
      var ok = d.getAttribute("data-statuses").split(" ").some(function (s) { return wanted[s]; }) &&
        (area === "" || d.getAttribute("data-area") === area) &&
        (text === "" || d.textContent.toLowerCase().indexOf(text) >= 0);
      d.hidden = !ok;
      if (ok) { shown += 1; }
    });
    document.getElementById("shown").textContent = shown + " of " + cases.length + " cases shown";
  }
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id ? document.getElementById(id) : null;
    if (el && el.tagName === "DETAILS") { el.hidden = false; el.open = true; el.scrollIntoView(); }
  }
  if (form) {
    form.hidden = false;
    form.addEventListener("input", apply);
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    apply();
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
"#;

pub(super) fn csp_hash(text: &str) -> String {
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()))
    )
}
