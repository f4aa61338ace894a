"use strict";
// The Retries tab: each answer with Retry-After, when the client came back, and the timeline.

// ---- Retries -------------------------------------------------------------------------------

async function renderRetries() {
  const sessionSelect = $("retries-session");
  fillSelect(sessionSelect, [[NONE, "(no session)"], ...[...model.sessions].sort().map((s) => [keyOf(s), s])]);
  if (!sessionSelect.dataset.chosen) sessionSelect.value = latestSession();
  const endpoints = model.scenarios ? model.scenarios.endpoints.map(endpointName) : [];
  fillSelect($("retries-endpoint"), [["", "all endpoints"], ...endpoints.map((e) => [keyOf(e), e])]);
  const session = valueOf(sessionSelect.value || NONE);
  const endpoint = valueOf($("retries-endpoint").value);
  const data = await api("GET", "retries", { session, endpoint });
  // Without ?session= the API answers for every session: keep those without one.
  const observations = data.retries.filter((o) => o.session === session);
  const requests = model.entries.filter((e) => e.session === session && e.endpoint !== null
    && (endpoint === null || e.endpoint === endpoint));
  const violations = observations.filter((o) => o.honoured === false).length;
  $("retries-violations").textContent = `${observations.length} answers with Retry-After, ${violations} retried too early`;
  drawTimeline($("timeline"), observations, requests);
  fillTable($("retries-table"),
    ["answered", "endpoint", "rule", "status", "Retry-After", "allowed from", "next request", "waited / required", "verdict"],
    observations.map((o) => [clock(o.answeredAt), o.endpoint, o.rule || "", o.status, o.retryAfter, clock(o.allowedAt),
      o.nextRequestAt ? clock(o.nextRequestAt) : "not yet", `${waited(o)} / ${o.requiredMs} ms`,
      el("td", { className: verdictClass(o) }, verdictText(o))]),
    "no answer with Retry-After for this choice");
}

const verdictClass = (o) => (o.honoured === true ? "honoured" : o.honoured === false ? "too-early" : "pending");
const verdictText = (o) => (o.honoured === true ? "honoured" : o.honoured === false ? "too early" : "waiting");
const waited = (o) => (o.waitedMs === null ? "–" : o.waitedMs);

// The SVG timeline (drawn in `chart`: the Retries tab's, or the Verdict tab's): a lane per
// endpoint; each request a tick, each Retry-After a shaded window from the answer to allowedAt,
// and each retry a dot labelled honoured or too early.
function drawTimeline(chart, observations, requests) {
  const lanes = [...new Set([...requests.map((r) => r.endpoint), ...observations.map((o) => o.endpoint)])];
  const times = [...requests.map((r) => r.time), ...observations.flatMap((o) => [o.answeredAt, o.allowedAt, o.nextRequestAt])]
    .filter(Boolean).map((t) => Date.parse(t));
  const width = Math.max(800, chart.parentNode.clientWidth - 2);
  const LEFT = 190, RIGHT = 30, TOP = 10, LANE = 90, AXIS = 30;
  const height = TOP + Math.max(1, lanes.length) * LANE + AXIS;
  chart.setAttribute("viewBox", `0 0 ${width} ${height}`);
  chart.setAttribute("width", width);
  chart.setAttribute("height", height);
  chart.replaceChildren();
  if (!times.length) {
    chart.append(svg("text", { x: 20, y: 40, class: "empty" }, "No requests for this session and endpoint yet."));
    return;
  }
  const start = Math.min(...times);
  const span = Math.max(Math.max(...times) - start, 1000) * 1.04;
  const x = (iso) => LEFT + ((Date.parse(iso) - start) / span) * (width - LEFT - RIGHT);

  // The time axis, with a tick every "nice" step.
  const axisY = TOP + lanes.length * LANE + 6;
  chart.append(svg("line", { x1: LEFT, x2: width - RIGHT, y1: axisY, y2: axisY, class: "axis" }));
  const step = [100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 1800000, 3600000]
    .find((s) => span / s <= 8) || 7200000;
  for (let t = Math.ceil(start / step) * step; t <= start + span; t += step) {
    const iso = new Date(t).toISOString();
    chart.append(svg("line", { x1: x(iso), x2: x(iso), y1: TOP, y2: axisY + 4, class: "grid-line" }),
      svg("text", { x: x(iso), y: axisY + 18, class: "tick" }, clock(iso, step < 1000)));
  }

  lanes.forEach((lane, index) => {
    const top = TOP + index * LANE, mid = top + LANE / 2 + 10;
    const group = svg("g", { class: "lane", "data-endpoint": lane });
    group.append(svg("text", { x: 8, y: mid + 4, class: "lane-label" }, lane),
      svg("line", { x1: LEFT, x2: width - RIGHT, y1: mid, y2: mid, class: "lane-line" }));
    const mine = observations.filter((o) => o.endpoint === lane);
    // Windows take three rows in turn, so overlapping ones stay apart.
    mine.forEach((o, n) => {
      const window = svg("rect", { x: x(o.answeredAt), y: mid - 16 + (n % 3) * 11, height: 10, class: "window",
        width: Math.max(1, x(o.allowedAt) - x(o.answeredAt)) });
      window.append(svg("title", {}, `${o.status} ${o.rule || ""}: Retry-After ${o.retryAfter}, allowed from ${clock(o.allowedAt)}`));
      group.append(window);
    });
    for (const r of requests.filter((request) => request.endpoint === lane)) {
      const tick = svg("line", { x1: x(r.time), x2: x(r.time), y1: mid - 12, y2: mid + 12,
        class: "request " + statusClass(r), "data-id": r.id });
      tick.append(svg("title", {}, `#${r.id} ${clock(r.time)} ${statusText(r)} ${r.rule || ""}`));
      group.append(tick);
    }
    // A retry's verdict at the time it came; labels alternate heights so neighbours stay legible.
    mine.forEach((o, n) => {
      const kind = verdictClass(o);
      const at = o.nextRequestAt ? x(o.nextRequestAt) : x(o.allowedAt);
      const mark = svg("g", { class: "verdict " + kind, "data-verdict": kind });
      const anchor = kind === "pending" ? "end" : "start";
      mark.append(svg("circle", { cx: at, cy: mid, r: 6 }),
        svg("text", { x: at, y: top + 14 + (n % 3) * 12, class: "verdict-label", "text-anchor": anchor }, verdictText(o)),
        svg("title", {}, `${verdictText(o)}: waited ${waited(o)} ms of ${o.requiredMs} ms`));
      group.append(mark);
    });
    chart.append(group);
  });
}
