import type { Command } from "./args.ts";

// Placeholder until its capability lands.
export const keysCommand: Command = {
  summary: "issue, revoke and list API keys",
  usage: "marquee keys create|revoke|list ...",
  async run() {
    console.error("not implemented yet");
    return 1;
  },
};
