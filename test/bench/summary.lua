-- Prints one machine-readable line with the figures the benchmark reports:
-- requests, duration, latency percentiles in microseconds and error counts. test/bench/lib/wrk.ts
-- reads the line that starts with BENCH_JSON; the usual wrk text output stays for humans.
-- BENCH_HIST lists wrk's latency histogram (microseconds:count, nonzero entries only), so runs
-- measured in slices combine into exact percentiles.
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"durationUs":%d,"bytes":%d,"meanUs":%.1f,"p50Us":%d,"p90Us":%d,"p99Us":%d,"maxUs":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
    summary.requests, summary.duration, summary.bytes, latency.mean,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
  local parts = {}
  for i = 1, #latency do
    local us, count = latency(i)
    parts[#parts + 1] = string.format("%d:%d", us, count)
  end
  io.write("BENCH_HIST " .. table.concat(parts, ",") .. "\n")
end
