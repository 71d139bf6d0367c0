import type { Command } from "./args.ts";

// Placeholder until its capability lands.
export const syncCommand: Command = {
  summary: "pull upstream records into the replica",
  usage: "marquee sync --from SRC [--follow] [--db PATH] [--json]",
  async run() {
    console.error("not implemented yet");
    return 1;
  },
};
