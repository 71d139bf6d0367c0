// The runtime's own start for a command (test/bench/startup.ts): a script that prints one line.
console.log("one line");
