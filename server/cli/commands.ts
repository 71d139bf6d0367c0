/**
 * The CLI's commands besides `serve`. Each capability adds its own command module here.
 */
import type { Command } from "./args.ts";

export const extraCommands: Record<string, Command> = {};
