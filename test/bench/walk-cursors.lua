-- Cursor walks as clients page them: each walk is a query of its own, sent first without a
-- cursor, then again with each page's `page.nextCursor` until PAGES pages or `hasMore` false.
-- Many walks are under way at once (one per connection, about); a finished one is replaced by
-- the next query of the list, so no first page repeats within a run.
--
-- wrk -s walk-cursors.lua URL -- WALKS_FILE THREADS KEY PAGES [START]
-- WALKS_FILE: one walk a line, "<fingerprint>\t<path>". A response does not say which request it
-- answers, but a current cursor carries the filter fingerprint (server/cursor.ts): the bench writes
-- each query's fingerprint beside it, so a nextCursor names its walk. START: each thread's place in
-- the list after the previous slice (BENCH_SENT), as in rotate-urls.lua.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "summary.lua")

local threads = {}
function setup(thread)
  threads[#threads + 1] = thread
  thread:set("thread_index", #threads)
end

local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
local value = {}
for i = 1, #alphabet do value[alphabet:byte(i)] = i - 1 end

-- base64url (unpadded) to text.
local function decode(s)
  local out, bits, n = {}, 0, 0
  for i = 1, #s do
    local v = value[s:byte(i)]
    if v == nil then return nil end
    bits = bits * 64 + v
    n = n + 6
    if n >= 8 then
      n = n - 8
      local byte = math.floor(bits / 2 ^ n)
      out[#out + 1] = string.char(byte)
      bits = bits - byte * 2 ^ n
    end
  end
  return table.concat(out)
end

function init(args)
  local file, count = args[1], tonumber(args[2])
  local key = args[3]
  pages = tonumber(args[4])
  local start = args[5] or "0"
  walks = {}
  local n = 0
  for line in io.lines(file) do
    if line ~= "" then
      n = n + 1
      if (n - 1) % count == thread_index - 1 then
        local fp, path = line:match("^([^\t]+)\t(.+)$")
        walks[#walks + 1] = { fp = fp, path = path }
      end
    end
  end
  byFp = {}
  headers = { ["Authorization"] = "Bearer " .. key }
  local i = 0
  for place in start:gmatch("[^,]+") do
    i = i + 1
    if i == thread_index then sent = tonumber(place) end
  end
  sent = sent or 0
  ready = {}
  wrapped = 0
  continued = 0
end

function request()
  local nextPage = table.remove(ready)
  if nextPage then
    continued = continued + 1
    return wrk.format("GET", nextPage, headers)
  end
  sent = sent + 1
  if sent > #walks then wrapped = wrapped + 1 end
  local walk = walks[((sent - 1) % #walks) + 1]
  walk.page = 1
  byFp[walk.fp] = walk
  return wrk.format("GET", walk.path, headers)
end

function response(status, headers, body)
  if status ~= 200 then return end
  -- The page object closes the body: look for the cursor in its last 2 kB only (a scan of the
  -- whole 18 kB body cost this client about a third of its CPU, on the machine the server shares).
  local at = body:find('"nextCursor":"', math.max(1, #body - 2048), true)
  if not at then return end
  local cursor = body:match('^([^"]+)"', at + 14)
  if not cursor then return end
  local text = decode(cursor)
  local fp = text and text:match("^v2:[^:]+:[^:]+:[^:]+:[^:]+:([^:]+):")
  local walk = fp and byFp[fp]
  if not walk or walk.page >= pages then return end
  walk.page = walk.page + 1
  ready[#ready + 1] = walk.path .. "&cursor=" .. cursor
end

local summary_done = done
function done(summary, latency, requests)
  summary_done(summary, latency, requests)
  local places, repeats, pagesAfterFirst = {}, 0, 0
  for _, thread in ipairs(threads) do
    places[#places + 1] = string.format("%d", thread:get("sent"))
    repeats = repeats + thread:get("wrapped")
    pagesAfterFirst = pagesAfterFirst + thread:get("continued")
  end
  io.write("BENCH_SENT " .. table.concat(places, ",") .. "\n")
  io.write(string.format("BENCH_WRAPPED %d\n", repeats))
  io.write(string.format("BENCH_CONTINUED %d\n", pagesAfterFirst))
end
