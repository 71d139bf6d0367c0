-- Sends requests that a server has not seen before: every request takes the next path of a list,
-- so within a run no URL repeats (unless the list runs out, which BENCH_WRAPPED reports).
--
-- wrk -s rotate-urls.lua URL -- PATHS_FILE THREADS KEY [START]
-- PATHS_FILE holds one path with its query string a line. Thread i of THREADS takes every
-- THREADS-th line. START is "n1,n2,…": each thread's place after the previous slice (what its
-- BENCH_SENT line printed), so a run measured in slices continues where it stopped.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "summary.lua")

local threads = {}
function setup(thread)
  threads[#threads + 1] = thread
  thread:set("thread_index", #threads)
end

function init(args)
  local file, count = args[1], tonumber(args[2])
  local key = args[3]
  local start = args[4] or "0"
  paths = {}
  local n = 0
  for line in io.lines(file) do
    if line ~= "" then
      n = n + 1
      if (n - 1) % count == thread_index - 1 then paths[#paths + 1] = line end
    end
  end
  headers = { ["Authorization"] = "Bearer " .. key }
  local i = 0
  for place in start:gmatch("[^,]+") do
    i = i + 1
    if i == thread_index then sent = tonumber(place) end
  end
  sent = sent or 0
  wrapped = 0
end

function request()
  sent = sent + 1
  if sent > #paths then wrapped = wrapped + 1 end
  return wrk.format("GET", paths[((sent - 1) % #paths) + 1], headers)
end

local summary_done = done
function done(summary, latency, requests)
  summary_done(summary, latency, requests)
  local places, repeats = {}, 0
  for _, thread in ipairs(threads) do
    places[#places + 1] = string.format("%d", thread:get("sent"))
    repeats = repeats + thread:get("wrapped")
  end
  io.write("BENCH_SENT " .. table.concat(places, ",") .. "\n")
  io.write(string.format("BENCH_WRAPPED %d\n", repeats))
end
