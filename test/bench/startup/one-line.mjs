// Node's own start, for `npx marquee --help` (test/bench/startup.ts): a script that prints one line.
console.log("one line");
