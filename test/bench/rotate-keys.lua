-- Rotates bearer keys so every request is a real one for its account (issue 8): trial pages
-- (1,000 rows per trial account) and handoff creations (10 a minute per account) would otherwise
-- turn into 402s and 429s within a second.
--
-- wrk -s rotate-keys.lua URL -- KEYS_FILE THREADS [METHOD] [JSON_BODY]
-- KEYS_FILE holds one key a line. Thread i of THREADS takes every THREADS-th key, so no key is
-- shared between threads; each thread cycles through its own keys round-robin.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "summary.lua")

local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("thread_index", counter)
end

function init(args)
  local path, threads = args[1], tonumber(args[2])
  method = args[3] or "GET"
  body = args[4]
  keys = {}
  local i = 0
  for line in io.lines(path) do
    if line ~= "" then
      if i % threads == thread_index - 1 then keys[#keys + 1] = line end
      i = i + 1
    end
  end
  sent = 0
end

function request()
  sent = sent + 1
  local headers = { ["Authorization"] = "Bearer " .. keys[((sent - 1) % #keys) + 1] }
  if body then headers["Content-Type"] = "application/json" end
  return wrk.format(method, nil, headers, body)
end
