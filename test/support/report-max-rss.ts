/**
 * Loaded with `node --import` into a child process whose peak memory a test checks: prints the process's
 * maximum resident set size (KiB, getrusage) as the last line of standard error when it exits.
 */
process.on("exit", () => {
  process.stderr.write(`\nmax-rss-kib ${process.resourceUsage().maxRSS}\n`);
});
