import type { Command } from "./args.ts";

// Placeholder until its capability lands.
export const accountsCommand: Command = {
  summary: "create or change an account",
  usage: "marquee accounts create|update ...",
  async run() {
    console.error("not implemented yet");
    return 1;
  },
};
