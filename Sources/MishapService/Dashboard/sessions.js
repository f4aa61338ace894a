"use strict";
// The Sessions tab: a session's state values, cycle positions and runtime rules; reset one.

// ---- Sessions ------------------------------------------------------------------------------

// The session of the newest request that had one (the default choice), else NONE.
function latestSession() {
  const entry = model.entries.slice().reverse().find((e) => e.session !== null);
  return keyOf(entry ? entry.session : null);
}

async function renderSessions() {
  if (!model.sessionChosen) model.session = latestSession();
  const counts = countBy(model.entries, (e) => keyOf(e.session));
  const keys = [NONE, ...[...model.sessions].sort().map(keyOf)];
  $("session-list").replaceChildren(...keys.map((key) => el("li", {},
    el("button", { type: "button", className: key === model.session ? "active" : "", dataset: { key, session: valueOf(key) || "" } },
      key === NONE ? "(no session: shared)" : valueOf(key),
      el("span", { className: "muted" }, ` ${counts.get(key) || 0} requests`)))));

  const session = valueOf(model.session);
  $("session-title").textContent = session === null ? "Requests without a session (the shared set)" : "Session " + session;
  $("session-reset").hidden = session === null;   // a reset without a session resets everything
  const [state, rules] = await Promise.all([api("GET", "state", { session }), api("GET", "rules", { session })]);
  fillTable($("session-state"), ["name", "value", "initial", "expires in", "declared"],
    Object.entries(state.state).map(([name, v]) =>
      [name, el("td", { className: "value", dataset: { name } }, shown(v.value)), shown(v.initial), ms(v.expiresInMs), v.declared]),
    "no state declared");
  const cycles = state.cycles || [];
  $("session-cycles-block").hidden = !state.cycles;
  fillTable($("session-cycles"), ["endpoint", "rule", "next step", "it answers"],
    cycles.map((c) => [c.endpoint, c.rule, `${c.position + 1} of ${c.length}`, c.next === undefined ? "" : String(c.next)]));
  fillTable($("session-rules"), ["id", "endpoints", "rules", "answers left"],
    rules.rules.filter((rule) => rule.session === session)
      .map((rule) => [rule.id, rule.endpoints.join(", "), rule.rules.join(", "), answersLeft(rule)]));
}

async function resetSession() {
  const session = valueOf(model.session);
  try {
    const answer = await api("POST", "reset", { session });
    $("session-message").textContent = `Reset: ${answer.reset}`;
    resync();
    await renderSessions();
  } catch (error) {
    $("session-message").textContent = errorText(error);
  }
}
