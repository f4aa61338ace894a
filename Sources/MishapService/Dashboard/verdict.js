"use strict";
// The Verdict tab: for a session, how its client handled the failures it met (GET verdict):
// each check with its mark, name, sentence and the requests it is based on, and the session's
// retry timeline as the Retries tab draws it.

// ---- Verdict -------------------------------------------------------------------------------

const VERDICT_MARKS = { pass: "✓", fail: "✗", none: "–" };
const verdictKind = (passed) => (passed === true ? "pass" : passed === false ? "fail" : "none");

async function renderVerdict() {
  const sessionSelect = $("verdict-session");
  fillSelect(sessionSelect, [[NONE, "(no session)"], ...[...model.sessions].sort().map((s) => [keyOf(s), s])]);
  if (!sessionSelect.dataset.chosen) sessionSelect.value = latestSession();
  const endpoints = model.scenarios ? model.scenarios.endpoints.map(endpointName) : [];
  fillSelect($("verdict-endpoint"), [["", "all endpoints"], ...endpoints.map((e) => [keyOf(e), e])]);
  const session = valueOf(sessionSelect.value || NONE);
  const endpoint = valueOf($("verdict-endpoint").value);
  const query = { session, endpoint, maxAttempts: $("verdict-max-attempts").value.trim(),
    giveUpWithin: $("verdict-give-up").value.trim() };

  let verdict, retries;
  try {
    [verdict, retries] = await Promise.all([api("GET", "verdict", query), api("GET", "retries", { session, endpoint })]);
  } catch (error) {
    if (error.status === 401) throw error;
    showResult($("verdict-error"), errorText(error), true);
    $("verdict-overall").textContent = "";
    $("verdict-overall").className = "badge";
    $("verdict-checks").replaceChildren();
    return;
  }
  $("verdict-error").hidden = true;
  const overall = $("verdict-overall");
  overall.className = "badge " + (verdict.passed ? "pass" : "fail");
  overall.textContent = verdict.passed ? "passed" : "failed";
  const limits = verdict.limits || {};
  $("verdict-grouping").textContent = `${verdict.attempts} requests judged`
    + (limits.maxAttempts ? `; at most ${limits.maxAttempts} attempts` : "")
    + (limits.giveUpWithinMs ? `, give up within ${seconds(limits.giveUpWithinMs)}` : "")
    + (verdict.grouping ? `. Grouping: ${verdict.grouping}` : "");

  // Evidence lists stay open or closed as the reader left them across polls.
  const open = new Set([...document.querySelectorAll("#verdict-checks details[open]")].map((d) => d.dataset.check));
  const drawn = $("verdict-checks").dataset.drawn === keyOf(session) + "|" + keyOf(endpoint);
  $("verdict-checks").dataset.drawn = keyOf(session) + "|" + keyOf(endpoint);
  $("verdict-checks").replaceChildren(...verdict.checks.map((check) => {
    const kind = verdictKind(check.passed);
    const evidence = check.evidence || [];
    const list = el("details", { className: "evidence", dataset: { check: check.name },
      open: drawn ? open.has(check.name) : kind === "fail" },
      el("summary", {}, `${evidence.length} request${evidence.length === 1 ? "" : "s"} as evidence`),
      el("ul", {}, evidence.map(evidenceItem)));
    const details = Object.entries(check.details || {}).map(([name, value]) => `${name} ${value}`).join(" · ");
    return el("li", { className: "check " + kind, dataset: { check: check.name, passed: kind } },
      el("div", { className: "card-head" },
        el("span", { className: "mark " + kind, title: kind === "none" ? "nothing to judge" : kind === "pass" ? "passed" : "failed" },
          VERDICT_MARKS[kind]),
        el("strong", { className: "check-name" }, check.name),
        el("span", { className: "summary" }, check.summary)),
      details ? el("p", { className: "muted numbers" }, details) : null,
      evidence.length ? list : null);
  }));

  // The session's retry timeline, as the Retries tab draws it.
  const observations = retries.retries.filter((o) => o.session === session);
  const requests = model.entries.filter((e) => e.session === session && e.endpoint !== null
    && (endpoint === null || e.endpoint === endpoint));
  drawTimeline($("verdict-timeline"), observations, requests);
}

// 60000 -> "60 s", 1500 -> "1.5 s", 250 -> "250 ms".
const seconds = (milliseconds) => (milliseconds < 1000 ? `${milliseconds} ms` : `${milliseconds / 1000} s`);

// One journal entry a check is based on: `#12 16:00:00.123 GET /path -> 500 (rule) waited 3004 ms: note`.
function evidenceItem(e) {
  return el("li", { dataset: { id: e.id } },
    el("span", { className: "muted" }, `#${e.id} ${clock(e.at)} `),
    el("span", { className: "path" }, e.request),
    " → ", el("span", { className: "answer" }, e.answer),
    e.rule ? el("span", { className: "muted" }, ` (${e.rule})`) : null,
    typeof e.waitedMs === "number" ? ` waited ${e.waitedMs} ms` : null,
    e.note ? el("span", { className: "note" }, ": " + e.note) : null);
}

// From the Sessions tab: the verdict of the session shown there.
async function showVerdictOf(session) {
  const select = $("verdict-session");
  fillSelect(select, [[NONE, "(no session)"], ...[...model.sessions].sort().map((s) => [keyOf(s), s])]);
  select.value = keyOf(session);
  select.dataset.chosen = "1";
  await showTab("verdict");
}
