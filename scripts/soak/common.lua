-- Shared by the soak's wrk scripts (loaded with dofile from the same folder): per-thread
-- counters gathered by done() into one JSON line that scripts/soak/soak.py reads.

local M = {}

M.threads = {}

-- Registers each thread and gives it a number (its random seed and session prefix).
function M.setup(thread)
   table.insert(M.threads, thread)
   thread:set("tid", #M.threads)
end

function M.bump(t, key, n)
   t[key] = (t[key] or 0) + (n or 1)
end

local function encode(value)
   local kind = type(value)
   if kind == "table" then
      local parts = {}
      if #value > 0 then
         for _, v in ipairs(value) do table.insert(parts, encode(v)) end
         return "[" .. table.concat(parts, ",") .. "]"
      end
      for k, v in pairs(value) do table.insert(parts, encode(tostring(k)) .. ":" .. encode(v)) end
      return "{" .. table.concat(parts, ",") .. "}"
   elseif kind == "string" then
      return '"' .. value:gsub('[%c"\\]', function(c) return string.format("\\u%04x", c:byte()) end) .. '"'
   elseif kind == "number" or kind == "boolean" then
      return tostring(value)
   end
   return "null"
end

-- Sums the named counter tables of every thread and prints them, with wrk's own summary,
-- as one line: `SOAK-RESULT {...}`.
function M.report(summary, tables, lists)
   local result = {
      requests = summary.requests, duration_us = summary.duration, bytes = summary.bytes,
      errors = summary.errors,
   }
   for _, name in ipairs(tables) do
      local sum = {}
      for _, thread in ipairs(M.threads) do
         for k, v in pairs(thread:get(name) or {}) do M.bump(sum, k, v) end
      end
      result[name] = sum
   end
   for _, name in ipairs(lists or {}) do
      local all = {}
      for _, thread in ipairs(M.threads) do
         for _, v in ipairs(thread:get(name) or {}) do table.insert(all, v) end
      end
      result[name] = all
   end
   io.write("SOAK-RESULT " .. encode(result) .. "\n")
end

return M
