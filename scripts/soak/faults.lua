-- wrk script: the soak's transport faults, every one of them by GET and by POST /login, and
-- forced with X-Mishap-Rule on ordinary inputs. wrk reports these as socket errors (resets,
-- closes, garbage, bodies cut short or overlong): they are expected here and only counted.
-- What soak.py checks around this traffic is that the server survives it and closes every
-- connection it broke (its descriptors return to their count before the load).

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local common = dofile(here .. "common.lua")

local U = "/isUserNameAvailable?userName="
local faults = { "reset", "dropped", "garbage", "truncated", "truncatedchunked", "lengthmismatch" }
local rules = { "reset", "dropped", "garbage", "truncated", "truncatedChunked", "lengthMismatch" }

sent = {}      -- fault -> requests sent
statuses = {}  -- status -> answers wrk could read (lengthmismatch, truncated ones)

function setup(thread) common.setup(thread) end

function init(args)
   math.randomseed(os.time() * 100 + tid + 1000)
end

function request()
   local i = math.random(#faults)
   local how = math.random(3)
   common.bump(sent, faults[i])
   if how == 1 then
      return wrk.format("GET", U .. faults[i])
   elseif how == 2 then
      local body = string.format('{"email":"%s@x.com","password":"secret"}', faults[i])
      return wrk.format("POST", "/login", { ["Content-Type"] = "application/json" }, body)
   end
   return wrk.format("GET", U .. "someone", { ["X-Mishap-Rule"] = rules[i], ["X-Mishap-Session"] = "f" .. tid })
end

function response(status, headers, body)
   common.bump(statuses, tostring(status))
end

function done(summary, latency, requests)
   common.report(summary, { "sent", "statuses" })
end
