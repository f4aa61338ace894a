-- wrk script: the soak's "expected clean" traffic. Every request here must be answered: no
-- socket error, no timeout, and every answer must be one the default scenarios give for it.
--
-- Each request is drawn from the catalogue below (GET /isUserNameAvailable with every
-- non-fault input, POST /login with JSON, form and malformed bodies, forced rules, unknown
-- paths, the soak's own reloaded endpoint), 40% of them with a session header. Session
-- ids are new every 4 requests (s<thread>-<n>), so tens of thousands of sessions pass through
-- a run; `wrk ... -- sessions=N` reuses N ids instead.
--
-- Answers cannot be paired with their requests (a thread's connections interleave), so each
-- answer is checked for consistency instead: its body tells which rule wrote it, and its status
-- (and Retry-After, WWW-Authenticate) must be that rule's. The requests sent are also counted
-- by the status they must get, for soak.py to reconcile with the statuses received.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local common = dofile(here .. "common.lua")

local U = "/isUserNameAvailable?userName="
local JSON = { ["Content-Type"] = "application/json" }
local FORM = { ["Content-Type"] = "application/x-www-form-urlencoded" }

local function login(email, password, weight, expect)
   local body = string.format('{"email":"%s","password":"%s"}', email, password)
   return { weight, "POST", "/login", expect, JSON, body }
end

-- { weight, method, path, expected status ("500|200": either), headers, body, flags }
-- "fresh" appends a counter to the path, so query values vary. No HEAD here: wrk reads a body
-- after a HEAD answer's Content-Length and stalls (the checker of soak.py sends HEAD).
local catalogue = {
   { 20, "GET", U .. "someone", "200" },
   { 12, "GET", U .. "user", "200", nil, nil, "fresh" },
   { 2, "GET", "/isUserNameAvailable", "400" },
   { 2, "GET", U, "400" },
   { 2, "GET", U .. "abc", "400" },
   { 1, "GET", U .. "%F0%9F%91%A8%E2%80%8D%F0%9F%91%A9%E2%80%8D%F0%9F%91%A7", "400" },
   { 1, "GET", U .. "admin", "400" },
   { 1, "GET", U .. "superuser", "400" },
   { 2, "GET", U .. "servererror", "500" },
   { 10, "GET", U .. "maintenance", "500|200", nil, nil, "session" },
   { 2, "GET", U .. "maintenance%21", "500" },
   { 2, "GET", U .. "illegalresponse", "200" },
   { 2, "GET", U .. "peterfriese", "200" },
   { 1, "GET", U .. "johndoe", "200" },
   { 1, "GET", U .. "j%C3%B6rg", "200" },
   { 2, "GET", U .. "ratelimited", "429", nil, nil, "session" },
   { 1, "GET", U .. "ratelimiteddate", "429" },
   { 1, "GET", U .. "unavailable", "503" },
   { 1, "GET", U .. "unavailableseconds", "503", nil, nil, "session" },
   { 1, "GET", U .. "unauthorized", "401" },
   { 1, "GET", U .. "requesttimeout", "408" },
   { 1, "GET", U .. "badgateway", "502" },
   { 1, "GET", U .. "gatewaytimeout", "504" },
   { 1, "GET", U .. "wrongtype", "200" },
   { 1, "GET", U .. "truncatedjson", "200" },
   { 1, "GET", U .. "badutf8", "200" },
   { 1, "GET", U .. "captiveportal", "200" },
   { 1, "GET", U .. "notjson", "200" },
   { 1, "GET", U .. "empty", "200" },
   { 4, "GET", U .. "flaky", "500|200" },
   { 1, "GET", "/nothing/here", "404" },
   { 1, "DELETE", "/login", "404" },
   { 1, "GET", U .. "someone", "500", { ["X-Mishap-Rule"] = "serverError" } },
   { 1, "GET", U .. "someone", "429", { ["X-Mishap-Rule"] = "rateLimited" } },
   { 1, "GET", U .. "someone", "400", { ["X-Mishap-Rule"] = "noSuchRule" } },
   { 3, "GET", "/soak/extra", "200" },
   login("john@doe.com", "onlyjohnknowsme", 10, "200"),
   { 4, "POST", "/login", "200", FORM, "email=john%40doe.com&password=onlyjohnknowsme" },
   login("john@doe.com", "wrong-password", 2, "401"),
   { 2, "POST", "/login", "400", JSON, '{"email":"john@doe.com"}' },
   login("", "secret", 1, "400"),
   login("johndoe.com", "secret", 1, "400"),
   login("john@doe.com", "abc", 1, "400"),
   { 2, "POST", "/login", "400", JSON, '{"email": "john@doe.com", "password": ' },
   { 1, "POST", "/login", "400", nil, "not json at all" },
   login("servererror@x.com", "secret", 1, "500"),
   { 6, "POST", "/login", "500|200", JSON, '{"email":"maintenance@x.com","password":"secret"}', "session" },
   login("illegalresponse@x.com", "secret", 1, "200"),
   login("ratelimited@x.com", "secret", 1, "429"),
   login("unavailable@x.com", "secret", 1, "503"),
   login("unauthorized@x.com", "secret", 1, "401"),
   login("badgateway@x.com", "secret", 1, "502"),
   login("wrongtype@x.com", "secret", 1, "200"),
   login("truncatedjson@x.com", "secret", 1, "200"),
   login("badutf8@x.com", "secret", 1, "200"),
   login("captiveportal@x.com", "secret", 1, "200"),
   login("notjson@x.com", "secret", 1, "200"),
   login("empty@x.com", "secret", 1, "200"),
   login("flaky@x.com", "secret", 3, "500|404"),
   login("nobody@x.com", "secret", 2, "404"),
}

-- Which rule wrote an answer, from its body (first match wins), and the status it must have.
local bodies = {
   { "X-Mishap-Rule: no rule 'noSuchRule'", 400 },
   { "Temporarily unavailable for maintenance", 500, "Retry-After", "17" },
   { "The database is corrupted", 500 },
   { "Internal server error", 500 },
   { "Too many requests", 429 },
   { "Too many login attempts.", 429 },
   { "Service unavailable", 503 },
   { '"reason":"Unauthorized"', 401, "WWW-Authenticate", 'Bearer realm="mishap", error="invalid_token"' },
   { '"error_message":"Unauthorized."', 401, "WWW-Authenticate", 'Bearer realm="mishap", error="invalid_token"' },
   { "Request timeout", 408 },
   { "Bad gateway", 502 },
   { "Gateway timeout", 504 },
   { '"reason":"Username', 400 },
   { "Email and password are required.", 400 },
   { "Email is not valid.", 400 },
   { "Password is too short.", 400 },
   { "Malformed request body.", 400 },
   { "Invalid credentials.", 401 },
   { "User doesn't exist.", 404 },
   { '"reason":"Not Found"', 404 },
   { "Welcome to Airport Wi-Fi", 200 },
   { '"soakVersion"', 200 },
   { '"isAvailable":', 200 },
   { '"user_id":', 200 },
}

local pool = {}
for _, entry in ipairs(catalogue) do
   for _ = 1, entry[1] do table.insert(pool, entry) end
end

local counter = 0
session_space = 0     -- globals: done() reads them with thread:get
session_requests = 0

issued = {}    -- expected status -> requests sent
statuses = {}  -- status -> answers received
checks = {}    -- "ok", "anomaly"
samples = {}   -- the first anomalies, for the report
sessions = {}  -- "distinct": session ids used

function setup(thread) common.setup(thread) end

function init(args)
   for _, arg in ipairs(args) do
      local n = arg:match("^sessions=(%d+)$")
      if n then session_space = tonumber(n) end
   end
   math.randomseed(os.time() * 100 + tid)
end

local function session_id()
   session_requests = session_requests + 1
   if session_space > 0 then
      return "s" .. math.random(session_space)
   end
   return "s" .. tid .. "-" .. math.floor(session_requests / 4)
end

function request()
   counter = counter + 1
   local entry = pool[math.random(#pool)]
   local headers = {}
   for k, v in pairs(entry[5] or {}) do headers[k] = v end
   if entry[7] == "session" or math.random() < 0.4 then
      headers["X-Mishap-Session"] = session_id()
   end
   local path = entry[3]
   if entry[7] == "fresh" then path = path .. counter end
   common.bump(issued, entry[4])
   return wrk.format(entry[2], path, headers, entry[6])
end

local function anomaly(text)
   common.bump(checks, "anomaly")
   if #samples < 20 then table.insert(samples, text) end
end

function response(status, headers, body)
   common.bump(statuses, tostring(status))
   if body == "" or body == "OK" then
      -- `empty` and `notjson` answers: 200 with no body, or "OK".
      if status ~= 200 then anomaly(status .. " with body '" .. body .. "'") return end
      common.bump(checks, "ok")
      return
   end
   for _, known in ipairs(bodies) do
      if body:find(known[1], 1, true) then
         if status ~= known[2] then
            anomaly(status .. " (expected " .. known[2] .. ") for " .. body:sub(1, 120))
         elseif known[3] and headers[known[3]] ~= known[4] then
            anomaly(known[3] .. ": " .. tostring(headers[known[3]]) .. " on " .. body:sub(1, 120))
         else
            common.bump(checks, "ok")
         end
         return
      end
   end
   anomaly(status .. " with an unknown body: " .. body:sub(1, 120))
end

function done(summary, latency, requests)
   for _, thread in ipairs(common.threads) do
      local n = thread:get("session_requests") or 0
      local space = thread:get("session_space") or 0
      common.bump(sessions, "requests", n)
      common.bump(sessions, "distinct", space > 0 and 0 or math.floor(n / 4) + 1)
      sessions.space = space
   end
   if sessions.space > 0 then sessions.distinct = sessions.space end
   common.report(summary, { "issued", "statuses", "checks" }, { "samples" })
   io.write("SOAK-SESSIONS " .. sessions.requests .. " " .. sessions.distinct .. "\n")
end
