import type { Command } from "./args.ts";

// Placeholder until its capability lands.
export const demoDataCommand: Command = {
  summary: "write a deterministic demo record stream",
  usage: "marquee demo-data [--events N] [--seed S] [--out FILE]",
  async run() {
    console.error("not implemented yet");
    return 1;
  },
};
