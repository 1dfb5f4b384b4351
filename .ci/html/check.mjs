// Loads skillspec HTML reports in headless Chromium over the DevTools protocol and checks what a
// person would see. Run by .ci/html-check; needs Node 20 (`--experimental-websocket`) and
// Debian's chromium.
//
//   node --experimental-websocket .ci/html/check.mjs CONFIG.json
//
// CONFIG: {"chromium": PATH, "pages": [{"name", "html", "reports": [report.json...],
//          "screenshots": [PNG, PNG, PNG, PNG]?, "hostile": bool?}]}
//   (the page on load, a case opened, the last report's section, the last dialect's matrix)
//
// Every page must load with no console error, no JavaScript exception, no log entry of level
// error (Content-Security-Policy violations land there) and no request other than the page
// itself. A canary page that does log an error and throw is loaded first: if the check does not
// see both, it is blind and fails. Per report page: the counts shown equal report.json's, the
// matrix has one table per dialect and in each one column per report, every case is listed once, the filters work, a link opens
// its case. A hostile page (a report full of markup) must show that markup as text and run none
// of it.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
let passed = 0;
let failed = 0;
function check(ok, what, detail) {
  if (ok) {
    passed += 1;
    console.log(`ok - ${what}`);
  } else {
    failed += 1;
    console.log(`not ok - ${what}${detail === undefined ? "" : `: ${detail}`}`);
  }
}

const profile = mkdtempSync(join(tmpdir(), "skillspec-html-check-"));
const chrome = spawn(
  config.chromium,
  [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    `--user-data-dir=${profile}`,
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "about:blank",
  ],
  // Its own process group, so teardown can stop the renderers and helpers too: they write into
  // the profile until they are gone.
  { stdio: ["ignore", "ignore", "pipe"], detached: true },
);
const chromeExited = new Promise((done) => chrome.once("exit", done));
let chromeLog = "";
const deadline = setTimeout(() => {
  console.log("not ok - the check finished within 180 s");
  void finish(1);
}, 180_000);

async function finish(code) {
  clearTimeout(deadline);
  try {
    process.kill(-chrome.pid, "SIGKILL");
  } catch {
    // already gone
  }
  if (chrome.exitCode === null && chrome.signalCode === null) {
    await Promise.race([chromeExited, new Promise((done) => setTimeout(done, 5_000))]);
  }
  // A helper the group kill raced may still flush into the profile for a moment: retry, and if a
  // temporary directory still cannot be removed, say so; it is not a check of the page.
  try {
    rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  } catch (e) {
    console.log(`# html-check: could not remove ${profile}: ${e.code ?? e.message}`);
  }
  console.log(`html-check: ${passed} passed, ${failed} failed`);
  process.exit(code);
}

const browserUrl = await new Promise((resolveUrl, reject) => {
  chrome.stderr.setEncoding("utf8");
  chrome.stderr.on("data", (chunk) => {
    chromeLog += chunk;
    const m = chromeLog.match(/DevTools listening on (ws:\/\/\S+)/);
    if (m) resolveUrl(m[1]);
  });
  chrome.on("exit", (code) => reject(new Error(`chromium exited (${code}) before listening:\n${chromeLog}`)));
}).catch(async (e) => {
  console.log(`not ok - chromium starts: ${e.message}`);
  await finish(1);
});

// The DevTools protocol over one WebSocket, sessions flattened.
const ws = new WebSocket(browserUrl);
await new Promise((ok, fail) => {
  ws.addEventListener("open", ok, { once: true });
  ws.addEventListener("error", () => fail(new Error("cannot connect to chromium")), { once: true });
});
let nextId = 1;
const pending = new Map();
const listeners = [];
ws.addEventListener("message", (event) => {
  const msg = JSON.parse(event.data);
  if (msg.id !== undefined && pending.has(msg.id)) {
    const { ok, fail, method } = pending.get(msg.id);
    pending.delete(msg.id);
    if (msg.error) fail(new Error(`${method}: ${msg.error.message}`));
    else ok(msg.result);
  } else if (msg.method) {
    for (const l of listeners) l(msg);
  }
});
function send(method, params = {}, sessionId) {
  const id = nextId++;
  ws.send(JSON.stringify({ id, method, params, sessionId }));
  return new Promise((ok, fail) => pending.set(id, { ok, fail, method }));
}

async function openPage() {
  const { targetId } = await send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
  const page = { sessionId, targetId, problems: [], requests: [], loaded: null };
  listeners.push((msg) => {
    if (msg.sessionId !== sessionId) return;
    const p = msg.params;
    if (msg.method === "Runtime.exceptionThrown") {
      const d = p.exceptionDetails;
      page.problems.push(`exception: ${d.exception?.description ?? d.text}`);
    } else if (msg.method === "Runtime.consoleAPICalled" && (p.type === "error" || p.type === "assert")) {
      page.problems.push(`console.${p.type}: ${p.args.map((a) => a.value ?? a.description).join(" ")}`);
    } else if (msg.method === "Log.entryAdded" && p.entry.level === "error") {
      page.problems.push(`log (${p.entry.source}): ${p.entry.text}`);
    } else if (msg.method === "Network.requestWillBeSent") {
      page.requests.push(p.request.url);
    } else if (msg.method === "Page.loadEventFired" && page.loaded) {
      page.loaded();
    }
  });
  const s = (m, params) => send(m, params, sessionId);
  for (const domain of ["Runtime", "Log", "Page", "Network"]) await s(`${domain}.enable`);
  await s("Emulation.setDeviceMetricsOverride", { width: 1400, height: 1000, deviceScaleFactor: 1, mobile: false });
  page.send = s;
  page.eval = async (expression) => {
    const r = await s("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true });
    if (r.exceptionDetails) throw new Error(`evaluate: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value;
  };
  page.goto = async (url) => {
    const loaded = new Promise((ok) => {
      page.loaded = ok;
    });
    await s("Page.navigate", { url });
    await Promise.race([loaded, new Promise((_, fail) => setTimeout(() => fail(new Error(`${url} did not load in 60 s`)), 60_000))]);
    // Let late errors (a failing timer, a CSP report) arrive.
    await new Promise((ok) => setTimeout(ok, 300));
  };
  page.shot = async (path) => {
    const { data } = await s("Page.captureScreenshot", { format: "png" });
    writeFileSync(path, Buffer.from(data, "base64"));
  };
  return page;
}

// The page's one set of numbers (runner/src/reports/html/counts.rs), from report.json: each case
// counted once, a failure or error listed as known under what it showed; the permissive and
// different failures of a dialect run for information in their own column.
function expectedCounts(report) {
  const s = report.summary ?? {};
  const info = new Set(report.for_information ?? []);
  const cases = report.cases ?? [];
  const kind = (k, infoWanted) => cases.filter((c) => c.failure_kind === k && info.has(c.dialect) === infoWanted).length;
  return {
    passed: s.passed ?? 0,
    not_exercised: s.not_exercised ?? 0,
    unsafe: cases.filter((c) => c.failure_kind === "unsafe").length,
    permissive: kind("permissive", false),
    different: kind("different", false),
    errored: cases.filter((c) => c.status === "error").length,
    not_run: s.not_run ?? 0,
    fixed: s.fixed ?? 0,
    for_information: kind("permissive", true) + kind("different", true),
    unsupported: s.unsupported ?? 0,
    skipped: s.skipped ?? 0,
    total: s.total ?? 0,
  };
}

async function checkCanary() {
  const page = await openPage();
  const html = join(profile, "canary.html");
  writeFileSync(
    html,
    "<!DOCTYPE html><title>canary</title><script>console.error('canary console error'); throw new Error('canary exception');</script>",
  );
  await page.goto(pathToFileURL(html).href);
  const consoleSeen = page.problems.some((p) => p.includes("canary console error"));
  const exceptionSeen = page.problems.some((p) => p.includes("canary exception"));
  check(consoleSeen && exceptionSeen, "the check sees console errors and exceptions (canary page)", page.problems.join("; "));
}

async function checkPage(spec) {
  const page = await openPage();
  const url = pathToFileURL(resolve(spec.html)).href;
  await page.goto(url);
  const name = spec.name;
  check(page.problems.length === 0, `${name}: no console error, exception or error log entry`, page.problems.join("\n    "));
  const foreign = page.requests.filter((u) => u !== url && !u.startsWith("data:"));
  check(foreign.length === 0, `${name}: loads nothing but itself`, foreign.join(", "));

  const reports = spec.reports.map((p) => JSON.parse(readFileSync(p, "utf8")));
  const shown = await page.eval(`(() => {
    const sections = [...document.querySelectorAll("section.report")].map((s) => {
      const counts = {};
      s.querySelectorAll("table.summary td[data-count]").forEach((td) => { counts[td.dataset.count] = Number(td.firstChild.textContent); });
      return { id: s.id, counts };
    });
    const overview = [...document.querySelectorAll("#overview tr[data-report]")].map((tr) => {
      const counts = {};
      tr.querySelectorAll("td[data-count]").forEach((td) => { counts[td.dataset.count] = Number(td.firstChild.textContent); });
      return counts;
    });
    const legend = [...document.querySelectorAll("#legend dl.legend dt .badge")].map((b) => b.className.replace("badge c-", ""));
    const chips = [...new Set([...document.querySelectorAll(".badge")].map((b) => b.className.replace("badge c-", "")))];
    const fixFirst = [...document.querySelectorAll("#fix-first div.fix")].map((d) =>
      [...d.querySelectorAll("ol.unsafe-first li a")].map((a) => a.textContent));
    const tables = [...document.querySelectorAll("#matrix table.matrix")].map((t) =>
      ({ dialect: t.dataset.dialect, impl: t.querySelectorAll("thead th.impl").length }));
    const rows = [...document.querySelectorAll("#matrix tr")].map((tr) =>
      [...tr.children].reduce((n, c) => n + (Number(c.getAttribute("colspan")) || 1), 0));
    const cases = [...document.querySelectorAll("details.case")].map((d) => d.id);
    const form = document.getElementById("filters");
    return { sections, overview, legend, chips, fixFirst, tables, rows, cases, formShown: !!form && !form.hidden,
             shownText: document.getElementById("shown")?.textContent ?? "" };
  })()`);

  if (!spec.hostile) {
    check(shown.sections.length === reports.length, `${name}: one section per report`, `${shown.sections.length} sections`);
    reports.forEach((r, i) => {
      const want = expectedCounts(r);
      const got = shown.sections[i]?.counts ?? {};
      const wrong = Object.keys(want).filter((k) => got[k] !== want[k]).map((k) => `${k}: shows ${got[k]}, report.json ${want[k]}`);
      check(wrong.length === 0, `${name}: report ${i + 1} shows report.json's counts (${want.passed} passed, ${want.unsafe} unsafe, ${want.errored} errored, ${want.total} cases)`, wrong.join("; "));
      const row = shown.overview[i] ?? {};
      const differ = Object.keys(want).filter((k) => row[k] !== got[k]).map((k) => `${k}: overview ${row[k]}, section ${got[k]}`);
      check(differ.length === 0, `${name}: report ${i + 1}'s overview row and section show one set of numbers`, differ.join("; "));
      const parts = Object.entries(got).filter(([k]) => k !== "total").reduce((n, [, v]) => n + v, 0);
      check(parts === got.total, `${name}: report ${i + 1}'s counts add up to its ${got.total} cases`, `${parts}`);
      const unsafeIds = r.cases.filter((c) => c.failure_kind === "unsafe").map((c) => c.id);
      const listedFirst = shown.fixFirst[i] ?? [];
      check(JSON.stringify(listedFirst) === JSON.stringify(unsafeIds), `${name}: report ${i + 1}'s "what to fix first" lists its ${unsafeIds.length} unsafe case(s)`, listedFirst.join(", "));
    });
    const unexplained = shown.chips.filter((c) => !shown.legend.includes(c));
    check(unexplained.length === 0 && shown.legend.length > 0, `${name}: the legend explains every chip colour on the page (${shown.chips.length})`, unexplained.join(", "));
    const dialects = new Set(reports.flatMap((r) => r.cases.map((c) => c.dialect)));
    check(shown.tables.length === dialects.size && shown.tables.every((t) => dialects.has(t.dialect)),
      `${name}: the matrix has one table per dialect (${[...dialects].join(", ")})`, shown.tables.map((t) => t.dialect).join(", "));
    check(shown.tables.every((t) => t.impl === reports.length), `${name}: each dialect's matrix has one column per report (${reports.length})`, shown.tables.map((t) => `${t.dialect}: ${t.impl}`).join(", "));
    const widths = new Set(shown.rows);
    check(widths.size === 1 && widths.has(reports.length + 2), `${name}: every matrix row has clause, level and one cell per report`, [...widths].join(","));
    const ids = new Set(reports.flatMap((r) => r.cases.map((c) => c.id)));
    check(shown.cases.length === ids.size && new Set(shown.cases).size === ids.size, `${name}: every case listed once (${ids.size})`, `${shown.cases.length} listed`);
    check(shown.formShown && shown.shownText === `${ids.size} of ${ids.size} cases shown`, `${name}: the filters are on and show everything at first`, shown.shownText);

    // Only passing cases: the filter must leave exactly the cases some report passed.
    const passing = [...ids].filter((id) => reports.some((r) => r.cases.some((c) => c.id === id && c.verdict === "pass"))).length;
    const afterFilter = await page.eval(`(() => {
      document.querySelectorAll("#filters input[name=status]").forEach((b) => { b.checked = b.value === "pass"; });
      document.getElementById("filters").dispatchEvent(new Event("input"));
      const visible = [...document.querySelectorAll("details.case")].filter((d) => !d.hidden).length;
      document.querySelectorAll("#filters input[name=status]").forEach((b) => { b.checked = true; });
      document.getElementById("filters").dispatchEvent(new Event("input"));
      return visible;
    })()`);
    check(afterFilter === passing, `${name}: the status filter shows only passing cases (${passing})`, `${afterFilter} shown`);

    if (spec.screenshots?.[0]) await page.shot(spec.screenshots[0]);

    // A failure link opens its case.
    const opened = await page.eval(`(async () => {
      const link = document.querySelector("section.report ul.cases a[href^='#case-']") || document.querySelector("a[href^='#case-']");
      if (!link) return "no case link";
      link.click();
      await new Promise((ok) => setTimeout(ok, 200));
      const target = document.getElementById(decodeURIComponent(link.getAttribute("href").slice(1)));
      return target && target.open ? target.id : "not opened";
    })()`);
    check(opened.startsWith("case-"), `${name}: a link to a case opens it (${opened})`, opened);
    if (spec.screenshots?.[1]) await page.shot(spec.screenshots[1]);
    if (spec.screenshots?.[2]) {
      await page.eval(`location.hash = "#r${reports.length}"`);
      await new Promise((ok) => setTimeout(ok, 200));
      await page.shot(spec.screenshots[2]);
    }
    // The matrix of the last dialect (the one furthest down the page).
    if (spec.screenshots?.[3]) {
      const last = shown.tables[shown.tables.length - 1]?.dialect ?? "";
      await page.eval(`location.hash = "#matrix-${last}"`);
      await new Promise((ok) => setTimeout(ok, 200));
      await page.shot(spec.screenshots[3]);
    }
    check(page.problems.length === 0, `${name}: still no error after using the page`, page.problems.join("\n    "));
  } else {
    const r = await page.eval(`(() => ({
      scripts: document.querySelectorAll("script").length,
      injected: document.querySelectorAll("img, iframe, textarea, svg, object, embed, [onerror], [onload]:not(body)").length,
      pwned: window.__pwned === undefined ? null : window.__pwned,
      title: document.title,
      text: document.body.textContent,
    }))()`);
    check(r.scripts === 1 && r.injected === 0 && r.pwned === null, `${name}: the report's markup created no element and ran nothing`, JSON.stringify({ scripts: r.scripts, injected: r.injected, pwned: r.pwned }));
    check(r.title.startsWith("skillspec: "), `${name}: the title is intact`, r.title);
    for (const needle of spec.visible ?? []) {
      check(r.text.includes(needle), `${name}: shows ${JSON.stringify(needle)} as text`);
    }
    if (spec.screenshots?.[0]) await page.shot(spec.screenshots[0]);
  }
  await send("Target.closeTarget", { targetId: page.targetId });
}

try {
  await checkCanary();
  for (const spec of config.pages) await checkPage(spec);
} catch (e) {
  check(false, "the check ran to its end", e.stack ?? String(e));
}
await finish(failed === 0 ? 0 : 1);
