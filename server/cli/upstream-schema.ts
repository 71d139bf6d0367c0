/**
 * `marquee upstream-schema [--schema NAME]`: prints the DDL of the upstream tables a PostgreSQL
 * source needs (docs/upstream-records.md, "PostgreSQL tables"). Running it again changes nothing.
 */
import { DEFAULT_SCHEMA, upstreamDdl } from "../../sync/postgres/schema.ts";
import { type Command, parseFlags, UsageError } from "./args.ts";

export const upstreamSchemaCommand: Command = {
  usage: `marquee upstream-schema [--schema NAME]

  --schema NAME  the schema the tables live in (default ${DEFAULT_SCHEMA})

Then: marquee upstream-schema | psql postgres://owner@host/db`,
  async run(argv) {
    const { values } = parseFlags(argv, { schema: { type: "string" } });
    const schema = values.schema ?? DEFAULT_SCHEMA;
    if (schema === "" || schema.length > 63) throw new UsageError("--schema must be 1 to 63 characters");
    process.stdout.write(upstreamDdl(schema));
    return 0;
  },
};
