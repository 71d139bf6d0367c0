-- Rotates bearer keys so every request is a real one for its account: trial pages
-- (1,000 rows per trial account) and handoff creations (10 a minute per account) would otherwise
-- turn into 402s and 429s within a second.
--
-- wrk -s rotate-keys.lua URL -- KEYS_FILE THREADS [METHOD] [START] [JSON_BODY]
-- KEYS_FILE holds one key a line. Thread i of THREADS takes every THREADS-th key, so no key is
-- shared between threads; each thread cycles through its own keys round-robin. START is where
-- each thread's rotation begins: "n1,n2,…" (one place per thread, what the previous slice's
-- BENCH_SENT line printed; a thread without a place starts at 0), so a run measured in slices
-- continues every thread's rotation exactly where it stopped.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "summary.lua")

local threads = {}
function setup(thread)
  threads[#threads + 1] = thread
  thread:set("thread_index", #threads)
end

function init(args)
  local path, threads = args[1], tonumber(args[2])
  method = args[3] or "GET"
  local start = args[4] or "0"
  body = args[5]
  local all = {}
  for line in io.lines(path) do
    if line ~= "" then all[#all + 1] = line end
  end
  -- Fewer keys than threads (a mock target needs just one): every thread shares them.
  keys = {}
  for i, key in ipairs(all) do
    if #all < threads or (i - 1) % threads == thread_index - 1 then keys[#keys + 1] = key end
  end
  -- Threads send unequal shares: starting them all at the mean would hand some keys out twice.
  local i = 0
  for place in start:gmatch("[^,]+") do
    i = i + 1
    if i == thread_index then sent = tonumber(place) end
  end
  sent = sent or 0
  statuses = {}
end

function request()
  sent = sent + 1
  local headers = { ["Authorization"] = "Bearer " .. keys[((sent - 1) % #keys) + 1] }
  if body then headers["Content-Type"] = "application/json" end
  return wrk.format(method, nil, headers, body)
end

-- Counts answers by status, so a run that ran out of allowance says which refusal it met.
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

local summary_done = done
function done(summary, latency, requests)
  summary_done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do total[status] = (total[status] or 0) + n end
  end
  local parts = {}
  for status, n in pairs(total) do parts[#parts + 1] = string.format('"%d":%d', status, n) end
  io.write("BENCH_STATUS {" .. table.concat(parts, ",") .. "}\n")
  -- Each thread's place in its rotation: the next slice's START.
  local places = {}
  for _, thread in ipairs(threads) do places[#places + 1] = string.format("%d", thread:get("sent")) end
  io.write("BENCH_SENT " .. table.concat(places, ",") .. "\n")
end
