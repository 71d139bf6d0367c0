// prom-client's standard metrics, one module each, which its package declares no types for: each
// adds its metrics to a registry (server/metrics-text.ts loads the `process_*` ones).
declare module "prom-client/lib/metrics/*.js" {
  const addTo: (registry: import("prom-client").Registry, config: object) => void;
  export default addTo;
}
