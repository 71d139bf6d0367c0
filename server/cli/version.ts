/**
 * `marquee version` and `marquee --version` (docs/operations.md, Version): what this build is.
 */
import { readBuildInfo, versionLine } from "../version.ts";
import { type Command, output, parseFlags, UsageError } from "./args.ts";

export const versionCommand: Command = {
  usage: "marquee version [--json]   (also: marquee --version)",
  async run(argv) {
    const { values, positionals } = parseFlags(argv, {}, true);
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    const info = readBuildInfo();
    output(values.json, info, versionLine(info));
    return 0;
  },
};
