// Benchmark support: the check of a bench's command line before anything starts. Every argument must be
// an option the bench knows, followed by its value; anything else (a typo, `--help`) gets one line naming
// the argument and listing the bench's options, and exit 2 (`--help`: the list, exit 0), instead of a
// bench that ignores it and starts a cluster.

/**
 * Checks process.argv against `valued` (options taking one value, named without `--`) and `flags` (options
 * taking none); exits the process when an argument is not one of them or a value is missing.
 */
export function checkArguments(
  bench: string,
  valued: readonly string[],
  flags: readonly string[] = [],
): void {
  const options = [...valued.map((o) => `--${o} V`), ...flags.map((f) => `--${f}`)].join(", ");
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--help" || a === "-h") {
      console.log(`${bench} options: ${options} (see the bench's header comment)`);
      process.exit(0);
    }
    const name = a.startsWith("--") ? a.slice(2) : undefined;
    if (name !== undefined && flags.includes(name)) continue;
    if (name === undefined || !valued.includes(name)) {
      console.error(`${bench}: unknown argument ${JSON.stringify(a)}; expected one of: ${options}`);
      process.exit(2);
    }
    if (i + 1 >= args.length) {
      console.error(`${bench}: ${a}: expected a value after it`);
      process.exit(2);
    }
    i++;
  }
}
