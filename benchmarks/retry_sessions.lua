-- wrk script: every request carries a session header of its own (X-Mishap-Session: PREFIX<thread>-<n>, PREFIX from SESSION_PREFIX, default t),
-- so each answer with Retry-After opens a new observation in Mishap's Retry-After check. With
-- STOP_AFTER set (requests per thread), each thread stops after that many answers.
local threads = {}
local counter = 0

function setup(thread)
    thread:set("id", #threads + 1)
    table.insert(threads, thread)
end

function init(args)
    stop_after = tonumber(os.getenv("STOP_AFTER") or "0")
    prefix = os.getenv("SESSION_PREFIX") or "t"
    answered = 0
end

function request()
    counter = counter + 1
    return wrk.format(nil, nil, { ["X-Mishap-Session"] = prefix .. id .. "-" .. counter })
end

function response(status, headers, body)
    answered = answered + 1
    if stop_after > 0 and answered >= stop_after then
        wrk.thread:stop()
    end
end
