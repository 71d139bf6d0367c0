/**
 * Every pointer a reader follows resolves: file paths named in the code and the docs exist, a
 * section cited as `docs/api.md, Listing events` or `README "Use Marquee in your tests"` is a heading
 * of that document, and every relative Markdown link reaches its file and heading. A file moved
 * or a heading renamed fails here instead of leaving a stale pointer behind.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./harness.ts";

const SKIPPED_DIRS = ["dist/", "data/", "test/generated/", "coverage/"];
const TEXT_FILES = /\.(ts|js|mjs|md|yaml|yml|sh|conf|txt|service|toml|jsonc)$/;

/** The project's own files: tracked or new, never what .gitignore leaves out (the bench's builds, data). */
function projectFiles(): string[] {
  const listed = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], { cwd: ROOT })
    .toString()
    .split("\0");
  return listed
    .filter((f) => TEXT_FILES.test(f) && !SKIPPED_DIRS.some((dir) => f.startsWith(dir)))
    .map((f) => join(ROOT, f))
    .filter((f) => existsSync(f));
}

const files = projectFiles().filter((f) => !f.endsWith("references.test.ts"));
const read = (f: string) => readFileSync(f, "utf8");

/** A document's headings, as written (without the leading #s). */
function headingsOf(doc: string): string[] {
  let fenced = false;
  const out: string[] = [];
  for (const line of read(join(ROOT, doc)).split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    else if (!fenced && /^#{1,6} /.test(line)) out.push(line.replace(/^#+ /, "").trim());
  }
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");

/** The documents sections are cited from, by the names the citations use. */
const DOCS: Record<string, string> = {
  README: "README.md",
  "RESULTS.md": "test/bench/RESULTS.md",
  "test/bench/RESULTS.md": "test/bench/RESULTS.md",
  ...Object.fromEntries(
    readdirSync(join(ROOT, "docs")).flatMap((name) => [
      [`docs/${name}`, `docs/${name}`],
      [name, `docs/${name}`],
    ]),
  ),
};

describe("references", () => {
  it("names only files that exist", () => {
    const PATH =
      /(?<![\w/.-])((?:server|db|sync|test|bin|testing|docs|deploy|scripts)\/[\w./-]*[\w-]\.(?:ts|js|mjs|md|json|yaml|conf|sh|txt|service))\b/g;
    // Paths inside the built package (dist/…) or the MCP SDK's own modules are not this repository's.
    const elsewhere = (f: string, p: string) =>
      /testing\/index\.(js|d\.ts)$/.test(p) ||
      (f.includes("server/mcp/") && p.startsWith("server/") && p.endsWith(".js"));
    const missing: string[] = [];
    for (const f of files) {
      for (const [, p] of read(f).matchAll(PATH)) {
        if (elsewhere(f, p)) continue;
        if (!existsSync(join(ROOT, p)) && !existsSync(join(dirname(f), p))) missing.push(`${relative(ROOT, f)}: ${p}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("cites only sections that exist", () => {
    const names = Object.keys(DOCS)
      .sort((a, b) => b.length - a.length)
      .map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    // `docs/api.md, Listing events`, `README "Use Marquee in your tests"`, `docs/perf-history.md, "Round 24"`.
    // The cited title is read ahead without being consumed, so a citation close behind another
    // (the text is joined into one line below) is still matched.
    const CITATION = new RegExp(
      `(?<![\\w/])(${names.join("|")})(?:,| section)? ["“]?(?=([A-Z][a-z][^\\n]{0,120}))`,
      "g",
    );
    const headings = new Map(Object.values(DOCS).map((doc) => [doc, headingsOf(doc)]));
    const broken: string[] = [];
    // The performance history keeps its rounds as they were written, citations included.
    for (const f of files.filter((x) => !x.endsWith("docs/perf-history.md"))) {
      // A citation may wrap onto the next comment or Markdown line.
      const text = read(f).replace(/\n[ \t]*(?:\*(?!\/)|\/\/|#(?![#!]))?[ \t]*/g, " ");
      for (const m of text.matchAll(CITATION)) {
        const [, name, rest] = m;
        const doc = DOCS[name];
        const quoted = /^["“]/.test(m[0].slice(name.length).trimStart().replace(/^,\s*/, ""));
        const known = headings.get(doc)!;
        // Quoted: a heading, or the part of one before its colon. Unquoted: the text starts with a
        // heading and a word does not go on after it.
        const title = rest.split(/["”]/)[0];
        const ok = quoted
          ? known.some((h) => h === title || h.startsWith(`${title}:`))
          : known.some((h) => rest.startsWith(h) && !/^[\w-]/.test(rest.slice(h.length)));
        if (!ok) broken.push(`${relative(ROOT, f)}: ${name}, ${rest.slice(0, 50)}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("links, in Markdown, only to files and headings that exist", () => {
    const LINK = /\]\((?!https?:|mailto:)([^)\s]+)\)/g;
    const broken: string[] = [];
    for (const f of files.filter((x) => x.endsWith(".md"))) {
      for (const [, target] of read(f).matchAll(LINK)) {
        const [path, anchor] = target.split("#");
        const file = path ? join(dirname(f), path) : f;
        if (!existsSync(file)) {
          broken.push(`${relative(ROOT, f)}: ${target}`);
          continue;
        }
        if (anchor && file.endsWith(".md") && !headingsOf(relative(ROOT, file)).some((h) => anchorOf(h) === anchor))
          broken.push(`${relative(ROOT, f)}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
