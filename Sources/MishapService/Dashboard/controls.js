"use strict";
// The Controls tab: force a rule, reset, reload.

// ---- Controls ------------------------------------------------------------------------------

function fillForceEndpoints() {
  const endpoints = model.scenarios.endpoints;
  fillSelect($("force-endpoint"), endpoints.map((e) => [endpointName(e), endpointName(e)]));
  fillForceRules();
  updateFilters();
}

function fillForceRules() {
  const endpoint = model.scenarios && model.scenarios.endpoints.find((e) => endpointName(e) === $("force-endpoint").value);
  fillSelect($("force-rule"), endpoint ? endpoint.rules.map((rule) => [rule.name, rule.name]) : []);
}

async function force() {
  const query = { endpoint: $("force-endpoint").value, rule: $("force-rule").value,
    times: $("force-times").value.trim(), session: $("force-session").value.trim() };
  try {
    const answer = await api("POST", "force", query);
    const who = answer.session === null ? "every client" : "session " + answer.session;
    const until = answer.times ? `the next ${answer.times} request(s)` : "until removed";
    showResult($("force-result"), `${answer.endpoints.join(", ")} answers with ${answer.rules.join(", ")} for ${until} of ${who}`
      + ` (runtime rule ${answer.id}).\n${JSON.stringify(answer)}`);
  } catch (error) {
    showResult($("force-result"), errorText(error), true);
  }
}

async function control(path, done) {
  try {
    const answer = await api("POST", path);
    showResult($("controls-result"), JSON.stringify(answer));
    done();
  } catch (error) {
    showResult($("controls-result"), errorText(error), true);
  }
  try { await loadScenarios(); } catch (ignored) { /* shown by the next poll */ }
}
