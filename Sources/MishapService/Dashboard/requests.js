"use strict";
// The Requests tab (the journal's rows, filters, a request's detail) and the Unmatched tab
// (near-miss explanations).

// ---- Requests ------------------------------------------------------------------------------

// The filters offer the values the journal holds (and every endpoint of the scenarios).
function updateFilters() {
  const distinct = (field) => [...new Set(model.entries.map((entry) => entry[field]).filter((value) => value !== null))].sort();
  const choices = (values) => values.map((value) => [keyOf(value), value]);
  const endpoints = new Set(distinct("endpoint"));
  for (const endpoint of (model.scenarios ? model.scenarios.endpoints : [])) endpoints.add(endpointName(endpoint));
  const sessions = [...model.sessions].sort();
  fillSelect($("filter-session"), [["", "all"], [NONE, "(no session)"], ...choices(sessions)]);
  fillSelect($("filter-endpoint"), [["", "all"], [NONE, "(none: unmatched)"], ...choices([...endpoints].sort())]);
  fillSelect($("filter-rule"), [["", "all"], [NONE, "(none)"], ...choices(distinct("rule"))]);
  fillSelect($("filter-status"), [["", "all"], ["2xx", "2xx"], ["3xx", "3xx"], ["4xx", "4xx"], ["5xx", "5xx"],
    ["fault", "fault or hang"], ...distinct("status").map((status) => [String(status), String(status)])]);
  fillSelect($("known-sessions"), sessions.map((session) => [session, session]));
}

function passesFilters(entry) {
  const choose = (id, value) => { const key = $(id).value; return key === "" || key === keyOf(value); };
  const status = $("filter-status").value;
  const statusFits = status === "" || (status === "fault" ? entry.status === null
    : status.endsWith("xx") ? entry.status !== null && String(entry.status)[0] === status[0]
      : String(entry.status) === status);
  return statusFits && choose("filter-session", entry.session) && choose("filter-endpoint", entry.endpoint)
    && choose("filter-rule", entry.rule);
}

function requestRow(entry) {
  return el("tr", { dataset: { id: entry.id }, className: entry.id === model.selectedId ? "selected" : "" },
    el("td", { title: entry.time }, clock(entry.time)),
    el("td", {}, entry.method),
    el("td", { className: "path" }, entry.path, el("span", { className: "muted" }, queryText(entry.query))),
    el("td", { className: statusClass(entry) }, statusText(entry),
      streamSummary(entry) && el("span", { className: "stream muted" }, " · " + streamSummary(entry))),
    el("td", {}, entry.rule || ""),
    el("td", {}, entry.endpoint || ""),
    el("td", {}, entry.session || ""),
    el("td", { className: "num" }, entry.delayMs ? ms(entry.delayMs) : ""),
    el("td", { className: "num" }, duration(entry.durationMs)));
}

// A stream's progress in a few words: "3 events", "5 sent, 2 received"; "" for other answers.
function streamSummary(entry) {
  if (entry.eventStream) return `${entry.eventStream.events} event${entry.eventStream.events === 1 ? "" : "s"}`;
  if (entry.webSocket) return `${entry.webSocket.sent} sent, ${entry.webSocket.received} received`;
  return "";
}

// Whether a stream of events or a WebSocket is going on, as the journal says. A socket that has
// passed no message yet has no `webSocket`: its upgrade (101) has no duration while it is open.
function stillLive(entry) {
  if (entry.eventStream) return !entry.eventStream.over;
  if (entry.webSocket) return !entry.webSocket.over;
  return entry.status === 101 && entry.durationMs === null;
}

// Whether the page asks for an entry again: a stream or a socket for as long as it goes on (one
// open for hours keeps showing its events and messages), any other request without a duration
// for OPEN_FOR_MS after it came (a hang the server never ends is let go of), and none the
// journal has let go of (`gone`: it would never change again).
function followed(entry, now) {
  if (entry.gone) return false;
  return stillLive(entry) || (entry.durationMs === null && now - Date.parse(entry.time) < OPEN_FOR_MS);
}

// What of an entry the page shows that changes as it goes on.
const progressKey = (entry) => JSON.stringify([entry.durationMs, entry.eventStream || null, entry.webSocket || null]);

// How a stream of events is going, in a line: "3 events, last id 7, going on".
function eventStreamText(stream) {
  const parts = [`${stream.events} event${stream.events === 1 ? "" : "s"}`];
  if (stream.lastEventId !== null) parts.push(`last id ${stream.lastEventId}`);
  if (stream.retryMs !== null) parts.push(`retry ${ms(stream.retryMs)}`);
  parts.push(!stream.over ? "going on" : stream.ending ? `ended: ${stream.ending}` : "ended cleanly");
  return parts.join(", ");
}

// How a WebSocket is going, in a line: "5 sent, 2 received, closed by the server (4000 bye)".
function webSocketText(socket) {
  const parts = [`${socket.sent} sent`, `${socket.received} received`];
  const ending = socket.ending;
  if (!ending) parts.push("open");
  else if (ending.how === "close") {
    const code = [ending.code, ending.reason].filter((part) => part !== undefined && part !== "").join(" ");
    parts.push(`closed by the ${ending.by}${code ? ` (${code})` : ""}`);
  } else parts.push(`ended: ${ending.how}`);
  return parts.join(", ");
}

// A socket's kept messages, newest first: time, direction, kind, and the start of the payload.
function messageRows(socket) {
  return socket.messages.slice().reverse().map((message) => {
    const payload = message.text !== undefined ? message.text : message.base64 ? "(base64) " + message.base64 : "";
    const code = message.kind === "close" && message.code !== null && message.code !== undefined ? `${message.code} ` : "";
    return [clock(message.time), el("td", { className: "direction " + message.direction }, message.direction), message.kind,
      el("td", { className: "message" }, code + payload + (message.truncated ? ` … (${message.size} bytes in all)` : ""))];
  });
}

// Rebuilds the table, newest first.
function renderRequests() {
  const rows = model.entries.filter(passesFilters).reverse().map(requestRow);
  $("requests-body").replaceChildren(...rows);
  updateRequestCount();
}

// Puts new entries on top, unless paused.
function addRows(fresh) {
  if ($("live-pause").checked) return updateRequestCount();
  const body = $("requests-body");
  for (const entry of fresh) if (passesFilters(entry)) body.prepend(requestRow(entry));
  updateRequestCount();
}

function updateRequestCount() {
  const rows = $("requests-body").rows.length;
  $("requests-empty").hidden = model.entries.length > 0;
  $("requests-count").textContent = `${rows} shown of ${model.entries.length} in the journal`
    + ` (it keeps the last ${model.capacity}; ${model.dropped} dropped)`
    + (model.behind ? ` · catching up: the page reads at most ${PAGE} new requests a second` : "");
  $("journal-window").textContent = `${model.entries.length} requests, of at most ${model.capacity}`;
}

// The detail panel of one request (null closes it). The rows hold no bodies, so the whole
// entry is read first (`after` the one before it); one the journal let go of shows as held.
async function showDetail(id) {
  const held = model.entries.find((candidate) => candidate.id === id);
  model.selectedId = held ? id : null;
  for (const row of $("requests-body").rows) row.classList.toggle("selected", Number(row.dataset.id) === model.selectedId);
  if (!held) {
    $("request-detail").hidden = true;
    return;
  }
  const data = await api("GET", "requests", { after: id - 1, limit: 1 });
  if (model.selectedId !== id) return;   // another was opened meanwhile
  drawDetail(data.requests.find((entry) => entry.id === id) || { ...held, bodyGone: true });
}

// What a network profile did to an answer, in a line: "edge: +840 ms, 30 kB/s".
function networkText(network) {
  const parts = [`+${ms(network.latencyMs)}`];
  const rate = network.downBytesPerSecond;
  if (rate) parts.push(rate >= 1e6 ? `${+(rate / 1e6).toFixed(2)} MB/s` : rate >= 1000 ? `${+(rate / 1000).toFixed(2)} kB/s` : `${rate} B/s`);
  if (network.resetAfterBytes !== undefined) parts.push(`reset after ${network.resetAfterBytes} bytes`);
  if (network.resetAfterFraction !== undefined) parts.push(`reset after ${Math.round(network.resetAfterFraction * 100)} % of the body`);
  if (network.slowCloseMs) parts.push(`closed ${ms(network.slowCloseMs)} late`);
  if (network.reset) parts.push(`reset before any byte (${network.reset})`);
  return `${network.profile}: ${parts.join(", ")}`;
}

function drawDetail(entry) {
  const panel = $("request-detail");
  panel.hidden = false;
  const runtimeRule = el("span", { id: "detail-runtime-rule" }, entry.runtimeRule || "none: the scenario files answered");
  const facts = [["id", entry.id], ["time", entry.time], ["status", statusText(entry)],
    ["endpoint", entry.endpoint || "none (unmatched)"], ["rule", entry.rule || "none"], ["runtime rule", runtimeRule],
    ["session", sessionLabel(entry.session)], ["delay", ms(entry.delayMs)], ["hang", entry.hang ? "yes" : "no"]];
  if (entry.durationMs !== undefined) facts.push(["duration", duration(entry.durationMs)]);
  if (entry.closedEarly !== undefined) facts.push(["closed early", entry.closedEarly ? "yes: the client went away first" : "no"]);
  if (entry.network) facts.push(["network", el("span", { id: "detail-network" }, networkText(entry.network))]);
  if (entry.eventStream) facts.push(["events", el("span", { id: "detail-events" }, eventStreamText(entry.eventStream))]);
  if (entry.webSocket) facts.push(["WebSocket", el("span", { id: "detail-websocket" }, webSocketText(entry.webSocket))]);
  const messages = entry.webSocket && el("table", { id: "detail-messages", className: "grid" });
  if (messages) fillTable(messages, ["time", "direction", "kind", "message"], messageRows(entry.webSocket), "no message yet");
  const changes = el("table", { id: "detail-state-changes", className: "grid" });
  fillTable(changes, ["name", "from", "to", "for"],
    (entry.stateChanges || []).map((c) => [c.name, shown(c.from), shown(c.to), ms(c.forMs)]), "no state changed");
  const query = el("table", { id: "detail-query", className: "grid" });
  fillTable(query, ["name", "value"], entry.query, "no query");
  const headers = el("table", { id: "detail-headers", className: "grid" });
  fillTable(headers, ["name", "value"], entry.headers, "no headers");
  panel.replaceChildren(
    el("div", { className: "detail-head" }, el("h2", {}, `${entry.method} ${entry.path}`),
      el("button", { id: "detail-close", type: "button" }, "Close")),
    el("dl", { className: "facts" }, facts.map(([name, value]) => [el("dt", {}, name), el("dd", {}, value)])),
    ...(messages ? [el("h3", {}, `Messages (the last ${entry.webSocket.messages.length}, newest first)`), messages] : []),
    el("h3", {}, "Query"), query,
    el("h3", {}, "Body"), el("pre", { id: "detail-body", className: "body" }, bodyText(entry)),
    el("h3", {}, "State changes"), changes,
    el("h3", {}, "Headers"), headers);
  $("detail-close").addEventListener("click", () => showDetail(null));
}

function bodyText(entry) {
  if (entry.bodyGone) return entry.bodySize ? `(${entry.bodySize} bytes, no longer in the journal)` : "(empty)";
  if (entry.bodyBase64 !== undefined) return "(not UTF-8; base64)\n" + entry.bodyBase64;
  if (!entry.body) return "(empty)";
  let text = entry.body;
  try { text = JSON.stringify(JSON.parse(text), null, 2); } catch (ignored) { /* not JSON: as sent */ }
  return entry.bodyTruncated ? `${text}\n… cut; ${entry.bodySize} bytes in all` : text;
}

// ---- Unmatched -----------------------------------------------------------------------------

async function renderUnmatched() {
  const data = await api("GET", "unmatched");
  const items = data.unmatched.slice().reverse().map((item) => el("li", { dataset: { id: item.id } },
    el("div", { className: "card-head" },
      el("code", {}, `${item.method} ${item.path}${queryText(item.query)}`),
      el("span", { className: "muted" }, clock(item.time)),
      item.session !== null && el("span", { className: "tag" }, "session " + item.session)),
    el("ul", { className: "near-misses" }, item.nearMisses.length
      ? item.nearMisses.map((miss) => el("li", { className: "near-miss" },
        el("span", { className: "muted" }, [miss.endpoint, miss.rule && "rule " + miss.rule].filter(Boolean).join(", ") + ": "),
        el("span", { className: "reason" }, miss.reason)))
      : el("li", { className: "muted" }, "no endpoint comes near"))));
  const none = el("li", { className: "muted" }, "Every request so far matched a rule.");
  $("unmatched-list").replaceChildren(...(items.length ? items : [none]));
}
